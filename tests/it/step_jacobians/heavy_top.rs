//! The step Jacobians of every method that steps the heavy top in rotation-matrix coordinates
//! (`models::HeavyTopMatrix`: nine coordinates, the six rows of `RᵀR = I`, a constant mass
//! matrix) — SPOOK, RATTLE, SHAKE, RK4 and DOPRI5 with post-stabilization — against central
//! differences along the rotation group: the start `R = R₀ exp(ξ̂)`, `Ṙ = R Ω̂` is on the
//! constraints for every `(ξ, Ω)` (RATTLE and SHAKE step only from such states), and the step
//! composed with it is compared with `J E`, `E = ∂(R, Ṙ)/∂(ξ, Ω)` at `ξ = 0`:
//! `δR = R₀ δξ̂`, `δṘ = R₀ δξ̂ Ω̂ + R₀ δΩ̂`. In the parameters (the three moments of inertia,
//! which enter `M`, and `mgl`) the differences are taken at the fixed start.

use mechanism::models::{matrix_state, HeavyTopMatrix};
use mechanism::runtime::integrators::stabilized::{
    AdaptiveRk, Dopri5, PostStabilization, StabilizedRk, DOPRI5, RK4,
};
use mechanism::runtime::{
    DifferentiableInParameters, Rattle, SMatrix, Shake, Spook, State, StepJacobian,
};
use proptest::prelude::*;

use super::{check_parameter_jacobian, compare};

const H: f64 = 0.01;

/// The difference step and the estimate of `κ`: `G M⁻¹ Gᵀ` of the six orthonormality rows is
/// well conditioned (`κ ≲ 10²` for the moments of inertia here).
const TOP: (f64, f64) = (1e-5, 1e3);

/// `exp(ξ̂)` by Rodrigues' formula.
fn exp(xi: [f64; 3]) -> [[f64; 3]; 3] {
    let theta = (xi[0] * xi[0] + xi[1] * xi[1] + xi[2] * xi[2]).sqrt();
    let hat = hat(xi);
    let (a, b) = if theta < 1e-8 {
        (1.0 - theta * theta / 6.0, 0.5 - theta * theta / 24.0)
    } else {
        (theta.sin() / theta, (1.0 - theta.cos()) / (theta * theta))
    };
    let hat2 = product(&hat, &hat);
    std::array::from_fn(|i| {
        std::array::from_fn(|j| f64::from(u8::from(i == j)) + a * hat[i][j] + b * hat2[i][j])
    })
}

/// `ξ̂`, the skew matrix with `ξ̂ y = ξ × y`.
fn hat([a, b, c]: [f64; 3]) -> [[f64; 3]; 3] {
    [[0.0, -c, b], [c, 0.0, -a], [-b, a, 0.0]]
}

fn product(a: &[[f64; 3]; 3], b: &[[f64; 3]; 3]) -> [[f64; 3]; 3] {
    std::array::from_fn(|i| std::array::from_fn(|j| (0..3).map(|k| a[i][k] * b[k][j]).sum()))
}

/// Checks `J E` of one step of `integrator` from `matrix_state(r0, omega)` against central
/// differences of the step composed with `(ξ, Ω) ↦ matrix_state(r0 exp(ξ̂), Ω)`, and the
/// parameter Jacobian at that start.
fn check_on_the_group<I>(label: &str, integrator: &I, r0: [[f64; 3]; 3], omega: [f64; 3])
where
    I: DifferentiableInParameters<HeavyTopMatrix, 9, 4> + Clone,
{
    let model = HeavyTopMatrix::default();
    let start = matrix_state(r0, omega);
    let mut jacobian = StepJacobian::<9>::default();
    let mut stepped = start;
    integrator
        .clone()
        .step_with_jacobian(&model, &mut stepped, &mut jacobian)
        .expect("step with Jacobian");
    // E: columns ξ₀..ξ₂, Ω₀..Ω₂ (matrix_state is linear in R for fixed Ω, and in Ω).
    let mut e_q = SMatrix::<f64, 9, 6>::zeros();
    let mut e_v = SMatrix::<f64, 9, 6>::zeros();
    for i in 0..3 {
        let mut unit = [0.0; 3];
        unit[i] = 1.0;
        let along_xi = matrix_state(product(&r0, &hat(unit)), omega);
        let along_omega = matrix_state(r0, unit);
        for row in 0..9 {
            e_q[(row, i)] = along_xi.q[row];
            e_v[(row, i)] = along_xi.v[row];
            e_v[(row, 3 + i)] = along_omega.v[row];
        }
    }
    let exact_q = jacobian.q_q * e_q + jacobian.q_v * e_v;
    let exact_v = jacobian.v_q * e_q + jacobian.v_v * e_v;
    let map = |z: &[f64]| {
        let r = product(&r0, &exp([z[0], z[1], z[2]]));
        let mut state: State<9> = matrix_state(r, [z[3], z[4], z[5]]);
        integrator
            .clone()
            .step(&model, &mut state)
            .expect("the step from a perturbed start");
        state
            .q
            .iter()
            .chain(state.v.iter())
            .copied()
            .collect::<Vec<f64>>()
    };
    let z = [0.0, 0.0, 0.0, omega[0], omega[1], omega[2]];
    let exact = |row: usize, column: usize| {
        if row < 9 {
            exact_q[(row, column)]
        } else {
            exact_v[(row - 9, column)]
        }
    };
    compare(label, (&map, "(ξ, Ω)"), &z, exact, TOP);
    check_parameter_jacobian::<_, _, 9, 4>(
        &format!("{label}, parameters"),
        integrator,
        &model,
        &start,
        TOP,
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(6))]

    #[test]
    fn the_heavy_tops_jacobians_match_central_differences_along_the_group(
        xi in prop::array::uniform3(-2.0..2.0f64),
        omega in prop::array::uniform3(-5.0..5.0f64),
    ) {
        let r0 = exp(xi);
        check_on_the_group("heavy top: SPOOK", &Spook::<9, 6>::new(H).unwrap(), r0, omega);
        check_on_the_group("heavy top: RATTLE", &Rattle::<9, 6>::new(H).unwrap(), r0, omega);
        check_on_the_group("heavy top: SHAKE", &Shake::<9, 6>::new(H).unwrap(), r0, omega);
        let rk4 = StabilizedRk::<9, 6, 4>::new(RK4, H)
            .unwrap()
            .with_post_stabilization(PostStabilization::Both);
        check_on_the_group("heavy top: RK4, S-both", &rk4, r0, omega);
        let dopri: Dopri5<9, 6> = AdaptiveRk::new(DOPRI5, 1e-3, 1e-3)
            .unwrap()
            .with_initial_step(H)
            .unwrap()
            .with_post_stabilization(PostStabilization::Both);
        check_on_the_group("heavy top: DOPRI5, S-both", &dopri, r0, omega);
    }
}

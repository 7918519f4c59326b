//! SPOOK's step Jacobian (eq. 29 differentiated, `runtime/.../spook/jacobian.rs`) against
//! central differences at random states: the double pendulum and the 10-link chain (holonomic
//! rows, the generated step), the singular mass–spring (the elimination of the multipliers)
//! and a damped, driven skate with a holonomic, a nonholonomic row, dissipation and a force
//! (every term of the derivation). The parameter Jacobians (`DifferentiableInParameters`) of
//! the same steps, against central differences in the parameters: masses, lengths, gravity,
//! stiffnesses and, on the skate, a parameter in every function of the model (`M`, `V`, the
//! dissipation, the force, the holonomic row and its Jacobian, `A(q)` and the drive `w(t)`).

use mechanism::mechanism;
use mechanism::models::{Chain10, DoublePendulum, SingularMassSpring};
use mechanism::runtime::{
    DifferentiableStep, GeneratedSolve, Holonomic, HolonomicHessians, Regularization, Relaxation,
    Spook, SpookCoefficients, State, StepJacobian,
};
use proptest::prelude::*;

use super::{chain_state, check_parameter_jacobian, check_step_jacobian};

mechanism! {
    /// A skate on a saddle: a knife edge (`ẋ sin θ − κ ẏ cos θ = u sin 2t`) whose height `z`
    /// follows the surface `z = s x y`, in a spring well, damped, with a torque from the
    /// skate's motion.
    pub struct DampedSkate {
        coordinates: [x, y, th, z],
        parameters: {
            m = 1.3, j = 0.7, k = 2.0, c = 0.4, b = 0.25, grav = 9.81,
            s = 0.2, kappa = 1.1, u = 0.1, e = 0.3,
        },
        kinetic: 0.5 * m * (dot(x).powi(2) + dot(y).powi(2) + dot(z).powi(2))
            + 0.5 * j * dot(th).powi(2),
        potential: 0.5 * k * (x.powi(2) + 2.0 * y.powi(2)) + m * grav * z,
        holonomic: { surface: z - s * x * y },
        nonholonomic: { blade: dot(x) * th.sin() - kappa * dot(y) * th.cos() - u * (2.0 * t).sin() },
        dissipation: 0.5 * c * (dot(x).powi(2) + dot(y).powi(2)) + 0.5 * b * dot(th).powi(2),
        forces: { th: e * x.cos() * dot(y) * dot(th) },
        integrators: [spook],
        derivatives: [step_jacobians],
    }
}

const H: f64 = 0.01;

/// Checks that `step_with_jacobian` returns, for a model whose SPOOK step `mechanism!`
/// generated, the Jacobian its generated `spook_velocity_jacobian` writes (the specialized
/// path, not the generic fallback, which would agree only to rounding): `Solved`, and the same
/// bits. Its values are checked against central differences by `check_step_jacobian`.
/// `regularizations` are the rows' in `spook` (its overrides, else the model's).
fn check_generated_jacobian_is_taken<Model, const N: usize, const M: usize>(
    label: &str,
    (spook, regularizations): (&Spook<N, M>, [Regularization; M]),
    model: &Model,
    state: &State<N>,
) where
    Model: HolonomicHessians<N, M>,
    Spook<N, M>: DifferentiableStep<Model, N>,
{
    let (mut spook, mut stepped) = (*spook, *state);
    let mut jacobian = StepJacobian::<N>::default();
    spook
        .step_with_jacobian(model, &mut stepped, &mut jacobian)
        .expect("step with Jacobian");
    let coefficients = SpookCoefficients::new(H, &regularizations);
    let (mut v_q, mut v_v) = (
        StepJacobian::<N>::default().v_q,
        StepJacobian::<N>::default().v_v,
    );
    let solved = model.spook_velocity_jacobian(
        &state.q,
        &state.v,
        state.t,
        H,
        &coefficients,
        &stepped.v,
        spook.multipliers(),
        &mut v_q,
        &mut v_v,
    );
    assert_eq!(
        solved,
        GeneratedSolve::Solved,
        "{label}: the generated Jacobian declined"
    );
    assert_eq!(
        (v_q, v_v),
        (jacobian.v_q, jacobian.v_v),
        "{label}: not the generated Jacobian"
    );
}

/// The difference step and the estimate of `κ` for the models with a regular `M`, where SPOOK
/// solves with `S_GG = G M⁻¹ Gᵀ + Σ`: `κ ≈ 10` for the double pendulum, `≲ 4·10²` for the
/// chain (its tridiagonal `G Gᵀ`, `O(links²)`).
const REGULAR: (f64, f64) = (1e-5, 1e3);
proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    #[test]
    fn the_double_pendulums_jacobian_matches_central_differences(
        angles in prop::array::uniform2(-3.0..3.0f64),
        rates in prop::array::uniform2(-2.0..2.0f64),
        ideal in any::<bool>(),
    ) {
        let model = DoublePendulum::default();
        let state = chain_state::<4>(&[1.0, 2.0f64.sqrt()], &angles, &rates);
        let mut spook = Spook::<4, 2>::new(H).unwrap();
        let mut regularizations = std::array::from_fn(|row| model.regularization(row));
        if ideal {
            let row = Regularization { epsilon: 0.0, tau: Relaxation::Steps(2.0) };
            spook = spook.with_regularizations([row; 2]).unwrap();
            regularizations = [row; 2];
        }
        let (largest, _) = check_step_jacobian("double pendulum", &spook, &model, &state, REGULAR);
        prop_assert!(largest > 1.0);
        check_generated_jacobian_is_taken(
            "double pendulum", (&spook, regularizations), &model, &state,
        );
        let (largest, _) = check_parameter_jacobian::<_, _, 4, 5>(
            "double pendulum, parameters", &spook, &model, &state, REGULAR,
        );
        prop_assert!(largest > 1e-3);
    }

    #[test]
    fn the_ten_link_chains_jacobian_matches_central_differences(
        angles in prop::array::uniform10(-1.5..1.5f64),
        rates in prop::array::uniform10(-0.5..0.5f64),
    ) {
        let model = Chain10::default();
        let state = chain_state::<20>(&[5.0f64.sqrt(); 10], &angles, &rates);
        let spook = Spook::<20, 10>::new(H).unwrap();
        check_step_jacobian("10-link chain", &spook, &model, &state, REGULAR);
        let regularizations = std::array::from_fn(|row| model.regularization(row));
        check_generated_jacobian_is_taken("10-link chain", (&spook, regularizations), &model, &state);
    }

    #[test]
    fn the_singular_mass_springs_jacobian_matches_central_differences(
        x1 in -1.0..1.0f64,
        x2 in -1.0..1.0f64,
        rates in prop::array::uniform2(-1.0..1.0f64),
        offset in -1e-3..1e-3f64,
    ) {
        let model = SingularMassSpring::default();
        // q2 = x1 + l10 + w on the constraint, moved off it by `offset`.
        let state = State::new(0.0, [x1, x1 + 1.1 + offset, x2], [rates[0], rates[0], rates[1]]);
        let spook = Spook::<3, 1>::new(H).unwrap();
        // `M` is singular: SPOOK solves `(M + Gᵀ Σ⁻¹ G) v = …` with `Σ⁻¹ = h² (1 + 4τ/h) / 4ε
        // ≈ 2.3·10⁴` and `|G|² ≈ 2.4`, so `κ ≈ 10⁵`.
        check_step_jacobian("singular mass-spring", &spook, &model, &state, (1e-4, 1e5));
        check_parameter_jacobian::<_, _, 3, 6>(
            "singular mass-spring, parameters", &spook, &model, &state, (1e-4, 1e5),
        );
    }

    #[test]
    fn the_damped_skates_jacobian_matches_central_differences(
        q in prop::array::uniform4(-1.0..1.0f64),
        v in prop::array::uniform4(-1.0..1.0f64),
    ) {
        let model = DampedSkate::default();
        let spook = Spook::<4, 1, 1>::new(H).unwrap();
        let state = State::new(0.3, q, v);
        check_step_jacobian("damped skate", &spook, &model, &state, REGULAR);
        check_parameter_jacobian::<_, _, 4, 10>(
            "damped skate, parameters", &spook, &model, &state, REGULAR,
        );
    }
}

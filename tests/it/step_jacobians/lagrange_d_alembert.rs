//! The step Jacobians of the two discrete Lagrange–d'Alembert integrators with a constant mass
//! matrix (`runtime/.../nonholonomic/jacobian.rs`): Cuell's (`DiscreteLagrangeDAlembert`, the
//! reaction and the constraint at `q' = q + h v`) and Cortés–Martínez's (the reaction at `q`,
//! the constraint at `q' = q + h v'`, Newton on the multiplier), in the state and in the eight
//! parameters, against central differences of the step, at random states of a driven skate
//! (a knife edge whose drive `w(t)` and blade ratio `κ` are parameters) in an anharmonic well,
//! damped, with a torque from its motion: every term of the step (the force's Jacobians, the
//! reaction's derivative `∂(Aᵀμ)/∂q`, the row's `∂(A v')/∂q`, `∂A/∂p`, `∂w/∂p`) moves the
//! Jacobian by far more than the bound. And the state and parameter Jacobians of the midpoint
//! discrete Lagrange–d'Alembert integrator (`nonholonomic/midpoint_jacobian.rs`, McLachlan–
//! Perlmutter: Newton on `(q₁, μ)`, then the velocity's projection at `q₁`) on the same skate
//! with a configuration-dependent mass matrix whose shape is a parameter, without forces (the
//! scheme takes none).

use mechanism::mechanism;
use mechanism::runtime::{
    CortesMartinez, DiscreteLagrangeDAlembert, MidpointLagrangeDAlembert, State,
};
use proptest::prelude::*;

use super::{check_parameter_jacobian, check_step_jacobian};

mechanism! {
    /// A skate on a plane (`ẋ sin θ − κ ẏ cos θ + 0.3 x θ̇ = u sin 2t`, whose row's every
    /// entry that `M⁻¹Aᵀ` reaches depends on `q`) in an anharmonic well, damped, with a
    /// torque from its motion.
    pub struct DrivenSkate {
        coordinates: [x, y, th],
        parameters: { m = 1.3, j = 0.7, k = 2.0, c = 0.4, b = 0.25, kappa = 1.1, u = 0.3, e = 0.3 },
        kinetic: 0.5 * m * (dot(x).powi(2) + dot(y).powi(2)) + 0.5 * j * dot(th).powi(2),
        potential: 0.5 * k * (x.powi(2) + 2.0 * y.powi(2)) + 0.2 * k * x.powi(2) * y
            + 0.1 * th.cos() * x,
        nonholonomic: {
            blade: dot(x) * th.sin() - kappa * dot(y) * th.cos() + 0.3 * x * dot(th)
                - u * (2.0 * t).sin(),
        },
        dissipation: 0.5 * c * (dot(x).powi(2) + dot(y).powi(2)) + 0.5 * b * dot(th).powi(2),
        forces: { th: e * x.cos() * dot(y) * dot(th) },
        integrators: [dlda],
        derivatives: [step_jacobians],
    }
}

mechanism! {
    /// The skate of [`DrivenSkate`] with a configuration-dependent inertia (`M₃₃ = j + s x²`,
    /// `M₁₃ = r x`, so that `∂T/∂q` depends on the parameters `s` and `r`) and neither
    /// dissipation nor forces.
    pub struct VaryingSkate {
        coordinates: [x, y, th],
        parameters: { m = 1.3, j = 0.7, k = 2.0, kappa = 1.1, u = 0.3, s = 0.3, r = 0.1 },
        kinetic: 0.5 * m * (dot(x).powi(2) + dot(y).powi(2))
            + 0.5 * (j + s * x.powi(2)) * dot(th).powi(2) + r * x * dot(x) * dot(th),
        potential: 0.5 * k * (x.powi(2) + 2.0 * y.powi(2)) + 0.2 * k * x.powi(2) * y
            + 0.1 * th.cos() * x,
        nonholonomic: {
            blade: dot(x) * th.sin() - kappa * dot(y) * th.cos() + 0.3 * x * dot(th)
                - u * (2.0 * t).sin(),
        },
        integrators: [dlda_midpoint],
        derivatives: [step_jacobians],
    }
}

/// Large enough that each term of the step moves its Jacobian by `≳ 10⁻³`.
const H: f64 = 0.05;

/// The difference step and the estimate of `κ`: `M` is diagonal with entries in `[0.7, 1.3]`,
/// and the one-row `S = (A + θh ∂(Av')/∂q) M⁻¹ Aᵀ ≈ |A|²/m` stays away from zero
/// (`|A|² ≥ sin²θ + κ² cos²θ ≥ 1`, and `h |∂(Av')/∂q| ≲ 0.3`).
const SKATE: (f64, f64) = (1e-5, 1e2);

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    #[test]
    fn cuells_jacobians_match_central_differences_on_a_driven_skate(
        q in prop::array::uniform3(-1.5..1.5f64),
        v in prop::array::uniform3(-2.0..2.0f64),
        t in 0.0..3.0f64,
    ) {
        let (model, state) = (DrivenSkate::default(), State::new(t, q, v));
        let dla = DiscreteLagrangeDAlembert::<3, 1>::new(H).unwrap();
        let (largest, _) = check_step_jacobian("Cuell, skate", &dla, &model, &state, SKATE);
        prop_assert!(largest > 0.5);
        let label = "Cuell, skate, parameters";
        let (largest, _) = check_parameter_jacobian::<_, _, 3, 8>(label, &dla, &model, &state, SKATE);
        prop_assert!(largest > 1e-3);
    }

    #[test]
    fn cortes_martinezs_jacobians_match_central_differences_on_a_driven_skate(
        q in prop::array::uniform3(-1.5..1.5f64),
        v in prop::array::uniform3(-2.0..2.0f64),
        t in 0.0..3.0f64,
    ) {
        let (model, state) = (DrivenSkate::default(), State::new(t, q, v));
        let cm = CortesMartinez::<3, 1>::new(H).unwrap();
        let (largest, _) = check_step_jacobian("Cortés–Martínez, skate", &cm, &model, &state, SKATE);
        prop_assert!(largest > 0.5);
        let label = "Cortés–Martínez, skate, parameters";
        let (largest, _) = check_parameter_jacobian::<_, _, 3, 8>(label, &cm, &model, &state, SKATE);
        prop_assert!(largest > 1e-3);
    }

    #[test]
    fn the_midpoint_dlas_jacobian_matches_central_differences_on_a_skate_of_varying_inertia(
        q in prop::array::uniform3(-1.5..1.5f64),
        v in prop::array::uniform3(-2.0..2.0f64),
        t in 0.0..3.0f64,
    ) {
        let (model, state) = (VaryingSkate::default(), State::new(t, q, v));
        let dla = MidpointLagrangeDAlembert::<3, 1>::new(H).unwrap();
        let label = "midpoint DLA, skate of varying inertia";
        let (largest, _) = check_step_jacobian(label, &dla, &model, &state, SKATE);
        prop_assert!(largest > 0.5);
        let label = "midpoint DLA, skate of varying inertia, parameters";
        let (largest, _) = check_parameter_jacobian::<_, _, 3, 7>(label, &dla, &model, &state, SKATE);
        prop_assert!(largest > 1e-3);
    }
}

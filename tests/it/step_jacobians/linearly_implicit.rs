//! The step Jacobians of the linearly implicit carried schemes against central differences of
//! the step: Z&Ss (`runtime/.../linearly_implicit/zhang_skeel_jacobian.rs`, the carried update's
//! chain rule through `a = −(M + βh² ∇²V)⁻¹ ∇V`, whose derivative holds `V‴` along `a`, and in
//! the parameters `∂(∇²V a)/∂p`) and
//! push-forward Newmark (`push_forward_jacobian.rs`, through the `a` of
//! `M a + ∇V(x + βh² a) = 0`, in the state and in the parameters) and Newmark
//! (`newmark_jacobian.rs`, through `a_k` and the converged `a_{k+1}`, in the state and in the
//! parameters), at random states of a
//! coupled anharmonic well with a full constant mass matrix and of the penalized double
//! pendulum (Tao–Owhadi 2014, §4.1: `W = V + ½ω²|g|²`), at a step size where the `βh²` terms
//! move the Jacobian by far more than the bound.

use mechanism::mechanism;
use mechanism::models::DoublePendulum;
use mechanism::runtime::{
    Newmark, Penalized, PushForwardNewmark, State, ZhangSkeelSimplified, ZhangSkeelStiff,
};
use proptest::prelude::*;

use super::{chain_state, check_parameter_jacobian, check_step_jacobian};

mechanism! {
    /// Two angles in a coupled, anharmonic well, with inertial coupling `μ ẋ ẏ`.
    pub struct CoupledWell {
        coordinates: [x, y],
        parameters: { m = 1.3, j = 0.8, mu = 0.3, k = 2.0, c = 0.5 },
        kinetic: 0.5 * m * dot(x).powi(2) + mu * dot(x) * dot(y) + 0.5 * j * dot(y).powi(2),
        potential: k * (1.0 - x.cos()) + k * (1.0 - y.cos()) + c * (x - y).powi(2) * x.sin()
            + 0.25 * c * y.powi(4),
        integrators: [zss, pf_newmark, newmark],
        derivatives: [step_jacobians],
    }
}

mechanism! {
    /// A bead on a rod of length 1 about the origin in an anharmonic well: penalized, its
    /// potential's `V‴` and the penalty's third derivative are both nonzero, so stiff Z&Ss's
    /// `(ε⁻¹V1)‴ = W‴ − V‴` differs from `W‴`.
    pub struct WellOnRod {
        coordinates: [x, y],
        parameters: { k = 2.0, c = 0.5 },
        kinetic: 0.5 * (dot(x).powi(2) + dot(y).powi(2)),
        potential: k * (1.0 - x.cos()) + c * x.powi(2) * y + 0.25 * c * y.powi(4),
        holonomic: { rod: x.powi(2) + y.powi(2) - 1.0 },
        integrators: [zss_stiff],
        derivatives: [step_jacobians],
    }
}

/// Large enough that `βh² V‴[a]` (β = 0.4, so `βh² = 4·10⁻³`) changes the Jacobian by
/// `≳ 10⁻⁴`, against bounds `≲ 10⁻⁷`.
const H: f64 = 0.1;

/// `M + βh² ∇²V` of the well: `M`'s eigenvalues 0.6 and 1.5, the Hessian's `≲ 10`: `κ ≲ 10`.
const WELL: (f64, f64) = (1e-5, 10.0);

/// The penalized double pendulum at `ω = 20`: `βh² ∇²W ≈ 4·10⁻³ · ω² |G|² ≲ 30` against
/// `M = I`, so `κ ≲ 10²`.
const PENALIZED: (f64, f64) = (1e-5, 1e2);

/// The same for the Newton-solved Newmark steps, whose solve's error is Newton's stopping
/// rule rather than rounding: a stop on the residual leaves `|K δa| ≤ tol · |∇W|` with
/// `tol = 10⁻¹⁰` (the integrators' default), so the step's outputs carry up to
/// `h κ tol (1 + |Φ|)` (`v' = v + ½h (a + a')`) where the bound of the module docs assumes
/// `16 κ ε (1 + |Φ|)`: `κ (1 + h tol / (16 ε)) ≈ 3·10⁵` in its place. The bound (`≲ 10⁻⁴`)
/// stays far below what a missing term moves (`βh² ∇²W` against `M = I`: order one).
const PENALIZED_NEWTON: (f64, f64) = (1e-5, 3e5);

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    #[test]
    fn zsss_jacobian_matches_central_differences_in_a_coupled_well(
        q in prop::array::uniform2(-1.5..1.5f64),
        v in prop::array::uniform2(-2.0..2.0f64),
    ) {
        let (model, state) = (CoupledWell::default(), State::new(0.2, q, v));
        let zss = ZhangSkeelSimplified::<2>::new(H).unwrap();
        let (largest, _) = check_step_jacobian("Z&Ss, coupled well", &zss, &model, &state, WELL);
        prop_assert!(largest > 0.5);
        let label = "Z&Ss, coupled well, parameters";
        let (largest, _) = check_parameter_jacobian::<_, _, 2, 5>(label, &zss, &model, &state, WELL);
        prop_assert!(largest > 1e-4);
    }

    #[test]
    fn zsss_jacobian_matches_central_differences_on_the_penalized_double_pendulum(
        angles in prop::array::uniform2(-3.0..3.0f64),
        rates in prop::array::uniform2(-2.0..2.0f64),
    ) {
        let model = Penalized::new(DoublePendulum::default(), 20.0);
        let state = chain_state::<4>(&[1.0, 2.0f64.sqrt()], &angles, &rates);
        let zss = ZhangSkeelSimplified::<4>::new(H).unwrap();
        let (largest, _) =
            check_step_jacobian("Z&Ss, penalized double pendulum", &zss, &model, &state, PENALIZED);
        prop_assert!(largest >= 1.0);
    }

    #[test]
    fn stiff_zsss_jacobian_matches_central_differences_on_penalized_rods(
        angles in prop::array::uniform2(-3.0..3.0f64),
        rates in prop::array::uniform2(-2.0..2.0f64),
    ) {
        let well = Penalized::new(WellOnRod::default(), 20.0);
        let (s, c) = angles[0].sin_cos();
        let state = State::new(0.0, [s, -c], [c * rates[0], s * rates[0]]);
        let zss = ZhangSkeelStiff::<2>::new(H).unwrap();
        let (largest, _) =
            check_step_jacobian("stiff Z&Ss, penalized well on a rod", &zss, &well, &state, PENALIZED);
        prop_assert!(largest >= 1.0);
        let pendulum = Penalized::new(DoublePendulum::default(), 20.0);
        let state = chain_state::<4>(&[1.0, 2.0f64.sqrt()], &angles, &rates);
        let zss = ZhangSkeelStiff::<4>::new(H).unwrap();
        let label = "stiff Z&Ss, penalized double pendulum";
        let (largest, _) = check_step_jacobian(label, &zss, &pendulum, &state, PENALIZED);
        prop_assert!(largest >= 1.0);
    }

    #[test]
    fn push_forward_newmarks_jacobians_match_central_differences_in_a_coupled_well(
        q in prop::array::uniform2(-1.5..1.5f64),
        v in prop::array::uniform2(-2.0..2.0f64),
    ) {
        let (model, state) = (CoupledWell::default(), State::new(0.2, q, v));
        let newmark = PushForwardNewmark::<2>::new(H).unwrap();
        let label = "push-forward Newmark, coupled well";
        let (largest, _) = check_step_jacobian(label, &newmark, &model, &state, WELL);
        prop_assert!(largest > 0.5);
        let label = "push-forward Newmark, coupled well, parameters";
        let (largest, _) = check_parameter_jacobian::<_, _, 2, 5>(label, &newmark, &model, &state, WELL);
        prop_assert!(largest > 1e-4);
    }

    #[test]
    fn push_forward_newmarks_jacobian_matches_central_differences_on_the_penalized_double_pendulum(
        angles in prop::array::uniform2(-3.0..3.0f64),
        rates in prop::array::uniform2(-2.0..2.0f64),
    ) {
        let model = Penalized::new(DoublePendulum::default(), 20.0);
        let state = chain_state::<4>(&[1.0, 2.0f64.sqrt()], &angles, &rates);
        let newmark = PushForwardNewmark::<4>::new(H).unwrap();
        let label = "push-forward Newmark, penalized double pendulum";
        let (largest, _) = check_step_jacobian(label, &newmark, &model, &state, PENALIZED_NEWTON);
        prop_assert!(largest >= 1.0);
    }

    #[test]
    fn newmarks_jacobians_match_central_differences_in_a_coupled_well(
        q in prop::array::uniform2(-1.5..1.5f64),
        v in prop::array::uniform2(-2.0..2.0f64),
    ) {
        let (model, state) = (CoupledWell::default(), State::new(0.2, q, v));
        let newmark = Newmark::<2>::new(H).unwrap();
        let (largest, _) = check_step_jacobian("Newmark, coupled well", &newmark, &model, &state, WELL);
        prop_assert!(largest > 0.5);
        let label = "Newmark, coupled well, parameters";
        let (largest, _) = check_parameter_jacobian::<_, _, 2, 5>(label, &newmark, &model, &state, WELL);
        prop_assert!(largest > 1e-4);
    }

    #[test]
    fn newmarks_jacobian_matches_central_differences_on_the_penalized_double_pendulum(
        angles in prop::array::uniform2(-3.0..3.0f64),
        rates in prop::array::uniform2(-2.0..2.0f64),
    ) {
        let model = Penalized::new(DoublePendulum::default(), 20.0);
        let state = chain_state::<4>(&[1.0, 2.0f64.sqrt()], &angles, &rates);
        let newmark = Newmark::<4>::new(H).unwrap();
        let label = "Newmark, penalized double pendulum";
        let (largest, _) = check_step_jacobian(label, &newmark, &model, &state, PENALIZED_NEWTON);
        prop_assert!(largest >= 1.0);
    }
}

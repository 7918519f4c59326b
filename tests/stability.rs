//! Linear stability of Z&S and Z&Ss on a stiff harmonic oscillator written with `mechanism!`:
//! unconditionally stable for β ≥ ¼ (Tao–Owhadi 2014, Theorems 1.1 and 2.2), unstable below.

use mechanism::mechanism;
use mechanism::runtime::{observers, Integrator, State, ZhangSkeel, ZhangSkeelSimplified};

mechanism! {
    /// A stiff spring: ω = sqrt(k / m) = 1000.
    pub struct StiffSpring {
        coordinates: [x],
        parameters: { m = 1.0, k = 1e6 },
        kinetic: 0.5 * m * dot(x).powi(2),
        potential: 0.5 * k * x.powi(2),
    }
}

const H_OMEGA: f64 = 100.0;

/// Returns max E / E0 over `steps` steps at h·ω = 100, or infinity once the state is not finite.
fn energy_growth<I: Integrator<StiffSpring, 1>>(mut integrator: I, steps: usize) -> f64 {
    let model = StiffSpring::default();
    let mut state = State::new(0.0, [1.0], [0.0]);
    let e0 = observers::energy(&model, &state);
    let mut growth = 1.0f64;
    for _ in 0..steps {
        if integrator.step(&model, &mut state).is_err() {
            return f64::INFINITY;
        }
        growth = growth.max(observers::energy(&model, &state) / e0);
    }
    growth
}

#[test]
fn bounded_for_beta_at_least_a_quarter_and_unbounded_below() {
    let h = H_OMEGA / (StiffSpring::default().k / StiffSpring::default().m).sqrt();
    for beta in [0.25, 0.4, 1.0] {
        let zs = energy_growth(
            ZhangSkeel::<1>::new(h).unwrap().with_beta(beta).unwrap(),
            10_000,
        );
        let zss = energy_growth(
            ZhangSkeelSimplified::<1>::new(h)
                .unwrap()
                .with_beta(beta)
                .unwrap(),
            10_000,
        );
        println!("β = {beta}: max E/E0 over 10⁴ steps: Z&S {zs:.3}, Z&Ss {zss:.3}");
        assert!(
            zs < 1.5 && zss < 1.5,
            "β = {beta} must be stable at hω = 100"
        );
    }
    for beta in [0.2, 0.24] {
        let zs = energy_growth(
            ZhangSkeel::<1>::new(h).unwrap().with_beta(beta).unwrap(),
            1_000,
        );
        let zss = energy_growth(
            ZhangSkeelSimplified::<1>::new(h)
                .unwrap()
                .with_beta(beta)
                .unwrap(),
            1_000,
        );
        println!("β = {beta}: max E/E0 over 10³ steps: Z&S {zs:.3e}, Z&Ss {zss:.3e}");
        assert!(
            zs > 1e10 && zss > 1e10,
            "β = {beta} < ¼ must blow up at hω = 100"
        );
    }
}

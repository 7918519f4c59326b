//! The linearization against motion: the lowest mode predicts a small motion to second order,
//! and a swinging pendulum linearizes about its motion with its dynamic tension.

use mechanism::mechanism;
use mechanism::runtime::linearization::{
    equilibrium, EquilibriumSettings, Linearization, MotionLinearization,
};
use mechanism::runtime::reference::fit::loglog_slope;
use mechanism::runtime::{Integrator, Rattle, SVector, State};

use super::hanging_chain::{Chain, HangingPair};

/// The linearized motion against the nonlinear one: released from the rest with the velocity
/// `a ω φ` of the lowest mode, the pair moves as `a φ sin(ωt)` to first order in `a`, and
/// RATTLE over 10 periods (at a step whose own error, `O((ωh)² ωt a)`, is below 3 % of the
/// difference) differs from it by `O(a²)`: the bobs rise by `x²/2l`, and the frequency's shift
/// with amplitude adds `O(a³ ωt)`, below 7 % at these amplitudes. The log-log slope of the
/// largest difference over `a` is 2.
#[test]
fn the_lowest_mode_predicts_a_small_motion_to_second_order() {
    let model = HangingPair::default();
    let chain = Chain::of_pair(&model);
    let guess = chain.configuration::<4>(&[0.1, 0.1]);
    let rest = equilibrium::<_, 4, 2>(&model, &guess, &EquilibriumSettings::default()).unwrap();
    let modes = Linearization::at(&model, &rest).unwrap().modes().unwrap();
    let mode = &modes.modes[0];
    let omega = mode.omega().expect("the lowest mode oscillates");
    let steps_per_period = 4000;
    let h = 2.0 * std::f64::consts::PI / omega / f64::from(steps_per_period);
    let amplitudes = [1e-3, 5e-4, 2.5e-4];
    let differences: Vec<f64> = amplitudes
        .iter()
        .map(|&a| {
            let mut state = State {
                t: 0.0,
                q: rest.q,
                v: a * omega * mode.shape,
            };
            let mut rattle = Rattle::<4, 2>::new(h).unwrap();
            let mut largest = 0.0f64;
            for _ in 0..10 * steps_per_period {
                rattle.step(&model, &mut state).unwrap();
                let linear = rest.q + a * (omega * state.t).sin() * mode.shape;
                largest = largest.max((state.q - linear).amax());
            }
            largest
        })
        .collect();
    let order = loglog_slope(&amplitudes, &differences).unwrap();
    eprintln!("linear against RATTLE: amplitudes {amplitudes:?}, differences {differences:?}, order {order:.3}");
    assert!(
        (order - 2.0).abs() <= 0.15,
        "order {order}, differences {differences:?}"
    );
}

mechanism! {
    /// One point mass on a rod of length `l` from the origin, with viscous damping `c`.
    pub struct SwingingPendulum {
        coordinates: [x, y],
        parameters: { m = 1.5, l = 0.8, g = 9.81, c = 0.3 },
        kinetic: 0.5 * m * (dot(x).powi(2) + dot(y).powi(2)),
        potential: m * g * y,
        dissipation: 0.5 * c * (dot(x).powi(2) + dot(y).powi(2)),
        holonomic: { rod: x.powi(2) + y.powi(2) - l.powi(2) },
        integrators: [spook, rk],
        derivatives: [hessians],
    }
}

/// At a point of a swing, `θ` from the downward vertical at the rate `ω`, the rod's tension
/// balances the weight's radial part and the centripetal force: `2 l λ = m (g cos θ + l ω²)`
/// (the row is `|q|² − l²`, so `Gᵀλ = 2λ q`); then `K = 2λ I`, `D = c I`, and the tangential
/// acceleration is `l θ̈ = −g sin θ − (c/m) l ω`.
#[test]
fn a_swinging_pendulum_linearizes_with_its_dynamic_tension() {
    let model = SwingingPendulum::default();
    let (m, l, g, c) = (model.m, model.l, model.g, model.c);
    for (theta, omega) in [(0.4f64, 2.5f64), (-1.2, -0.7), (2.5, 4.0)] {
        let (s, k) = theta.sin_cos();
        let q = [l * s, -l * k];
        let state = State::new(0.3, q, [l * omega * k, l * omega * s]);
        let linear = MotionLinearization::<2, 1>::at(&model, &state).unwrap();
        let lambda = m * (g * k + l * omega * omega) / (2.0 * l);
        assert!((linear.lambda[0] - lambda).abs() <= 1e-12 * lambda.abs().max(1.0));
        let tangential = -g * s - c / m * l * omega;
        let expected_a = [
            -l * omega * omega * s + tangential * k,
            l * omega * omega * k + tangential * s,
        ];
        for (a, e) in linear.acceleration.iter().zip(expected_a) {
            assert!(
                (a - e).abs() <= 1e-12 * (g + l * omega * omega),
                "{a} against {e}"
            );
        }
        let (e, a) = linear.descriptor();
        assert_eq!((e.nrows(), a.ncols()), (5, 5));
        for i in 0..2 {
            assert_eq!(e[(i, i)], 1.0);
            assert_eq!(e[(2 + i, 2 + i)], m);
            assert_eq!(a[(i, 2 + i)], 1.0);
            // −K = −2λ I, −D = −c I, −Gᵀ = −2q, G = 2q.
            assert!((a[(2 + i, i)] + 2.0 * lambda).abs() <= 1e-12 * lambda.abs().max(1.0));
            assert!((a[(2 + i, 2 + i)] + c).abs() <= 1e-14);
            assert!((a[(2 + i, 4)] + 2.0 * q[i]).abs() <= 1e-14);
            assert!((a[(4, i)] - 2.0 * q[i]).abs() <= 1e-14);
        }
        assert_eq!(e[(4, 4)], 0.0);
    }
    // At rest at the bottom it is the equilibrium's linearization.
    let rest = State::new(0.0, [0.0, -l], [0.0, 0.0]);
    let moving = MotionLinearization::<2, 1>::at(&model, &rest).unwrap();
    let found = equilibrium::<_, 2, 1>(
        &model,
        &SVector::<f64, 2>::new(0.1, -0.7),
        &EquilibriumSettings::default(),
    )
    .unwrap();
    let still = Linearization::at(&model, &found).unwrap();
    let ((e1, a1), (e2, a2)) = (moving.descriptor(), still.descriptor());
    assert!((e1 - e2).amax() <= 1e-12 && (a1 - a2).amax() <= 1e-10);
}

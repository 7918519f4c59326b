//! Damped modes: proportional damping's ratios, and the complex shapes of a damping that is not
//! proportional against the pencil `s² M + s D + K` written out by hand.

use mechanism::mechanism;
use mechanism::runtime::linearization::{equilibrium, EquilibriumSettings, Linearization};
use mechanism::runtime::{SMatrix, SVector};

mechanism! {
    /// A point mass `m` between two orthogonal springs `k1`, `k2` with the isotropic viscous
    /// damping `R = ½ c |v|²`, stepped by SPOOK, its Hessians asked for by `derivatives`.
    pub struct DampedOscillator {
        coordinates: [x, y],
        parameters: { m = 2.0, k1 = 3.0, k2 = 50.0, c = 0.0 },
        kinetic: 0.5 * m * (dot(x).powi(2) + dot(y).powi(2)),
        potential: 0.5 * (k1 * x.powi(2) + k2 * y.powi(2)),
        dissipation: 0.5 * c * (dot(x).powi(2) + dot(y).powi(2)),
        integrators: [spook],
        derivatives: [hessians],
    }
}

/// Isotropic damping `D = c I` is proportional, so each mode keeps its natural frequency
/// `ωᵢ = √(kᵢ/m)` and decays with the damping ratio `ζᵢ = c / (2 m ωᵢ)`; at `c = 9` the soft
/// mode is overdamped (`ζ > 1`, two real roots).
#[test]
fn damped_oscillator_has_the_proportional_damping_ratios() {
    for c in [0.0, 0.8, 9.0] {
        let model = DampedOscillator {
            c,
            ..DampedOscillator::default()
        };
        let found = equilibrium::<_, 2, 0>(
            &model,
            &SVector::<f64, 2>::new(0.3, -0.2),
            &EquilibriumSettings::default(),
        )
        .unwrap();
        assert!(found.q.amax() <= 1e-14);
        let linear = Linearization::at(&model, &found).unwrap();
        assert_eq!(linear.damping, SMatrix::<f64, 2, 2>::identity() * c);
        let damped = linear.damped_eigenvalues().unwrap();
        let frequencies = [(model.k1 / model.m).sqrt(), (model.k2 / model.m).sqrt()];
        for (i, omega) in frequencies.into_iter().enumerate() {
            let zeta = c / (2.0 * model.m * omega);
            // An underdamped mode is one pair `s, s̄`; an overdamped one two real roots whose
            // product is ω² (`s² + 2ζω s + ω² = 0`).
            let roots: Vec<_> = damped
                .iter()
                .filter(|e| {
                    if zeta < 1.0 {
                        (e.natural_frequency - omega).abs() <= 1e-9 * omega
                    } else {
                        e.s.im == 0.0 && (e.s.re + zeta * omega).abs() <= zeta * omega
                    }
                })
                .collect();
            if zeta < 1.0 {
                assert_eq!(roots.len(), 1, "mode {i} at c = {c}: {damped:?}");
                assert!((roots[0].damping_ratio - zeta).abs() <= 1e-12, "{damped:?}");
            } else {
                assert_eq!(roots.len(), 2, "mode {i} at c = {c}: {damped:?}");
                let product = roots[0].s.re * roots[1].s.re;
                assert!((product - omega * omega).abs() <= 1e-9 * omega * omega);
            }
        }
    }
}

mechanism! {
    /// Two masses on springs in series (`k1` to the wall, `k2` between them) with one damper
    /// `c` from the second mass to the wall: damping that is not proportional, so the damped
    /// modes' coordinates move out of phase.
    pub struct SeriesDamped {
        coordinates: [x1, x2],
        parameters: { m1 = 1.0, m2 = 2.0, k1 = 5.0, k2 = 3.0, c = 0.7 },
        kinetic: 0.5 * m1 * dot(x1).powi(2) + 0.5 * m2 * dot(x2).powi(2),
        potential: 0.5 * k1 * x1.powi(2) + 0.5 * k2 * (x2 - x1).powi(2),
        dissipation: 0.5 * c * dot(x2).powi(2),
        integrators: [spook],
        derivatives: [hessians],
    }
}

/// The damped modes' complex shapes against the pencil written out by hand: with
/// `P(s) = s² M + s D + K`, the first row of `P(s) φ = 0` gives `φ₂ / φ₁ = −P₁₁ / P₁₂`
/// (`P₁₁ = m₁ s² + k₁ + k₂`, `P₁₂ = −k₂`); the eigenvalue is a root of `det P(s)`. With
/// proportional damping (the [`DampedOscillator`]) the shapes are the undamped ones, real.
#[test]
fn damped_modes_have_the_pencils_complex_shapes() {
    let model = SeriesDamped::default();
    let found = equilibrium::<_, 2, 0>(
        &model,
        &SVector::<f64, 2>::new(0.1, 0.2),
        &EquilibriumSettings::default(),
    )
    .unwrap();
    let modes = Linearization::at(&model, &found)
        .unwrap()
        .damped_modes()
        .unwrap();
    assert_eq!(modes.len(), 2);
    for mode in &modes {
        let s = mode.eigenvalue.s;
        assert!(
            s.re < 0.0 && s.im > 0.0,
            "an underdamped decaying pair: {s}"
        );
        assert!(mode.residual <= 1e-13, "residual {:e}", mode.residual);
        let p11 = s * s * model.m1 + model.k1 + model.k2;
        let p12 = -model.k2;
        let p22 = s * s * model.m2 + s * model.c + model.k2;
        let determinant = p11 * p22 - p12 * p12;
        let size = (s.norm_sqr() * model.m2 + model.k1 + model.k2).powi(2);
        assert!(
            determinant.norm() <= 1e-12 * size,
            "det P(s) = {determinant}"
        );
        let ratio = mode.shape[1] / mode.shape[0];
        let expected = -p11 / p12;
        assert!(
            (ratio - expected).norm() <= 1e-10 * expected.norm(),
            "φ₂/φ₁ = {ratio} against {expected}"
        );
        // Out of phase: the ratio is not real.
        assert!(ratio.im.abs() > 1e-3 * ratio.norm());
    }
    let proportional = DampedOscillator {
        c: 0.8,
        ..DampedOscillator::default()
    };
    let rest = equilibrium::<_, 2, 0>(
        &proportional,
        &SVector::<f64, 2>::new(0.3, -0.2),
        &EquilibriumSettings::default(),
    )
    .unwrap();
    for mode in Linearization::at(&proportional, &rest)
        .unwrap()
        .damped_modes()
        .unwrap()
    {
        // The springs are along the axes: each shape is a unit axis, real.
        let axis = if mode.shape[0].norm() > mode.shape[1].norm() {
            0
        } else {
            1
        };
        assert!((mode.shape[axis] - 1.0).norm() <= 1e-12);
        assert!(mode.shape[1 - axis].norm() <= 1e-12);
        assert!(mode.residual <= 1e-13);
    }
}

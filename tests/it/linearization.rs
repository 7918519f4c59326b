//! Equilibria, linearization and modes (`runtime::linearization`) against references written
//! in other coordinates: the hanging chain of pendula in Cartesian coordinates against the
//! angle-coordinate matrices `Mᵢⱼ = (Σ_{k ≥ max(i,j)} mₖ) lᵢ lⱼ`, `Kᵢᵢ = g lᵢ Σ_{k ≥ i} mₖ`
//! (whose rods' tensions give the multipliers in closed form), and the planar spring
//! pendulum's radial and swinging frequencies `√(k/m)` and `√(g/L)`, `L = l₀ + m g/k`.

use mechanism::mechanism;
use mechanism::models::VariedPendulumChain;
use mechanism::runtime::linearization::{
    equilibrium, sparse_equilibrium, sparse_modes, EquilibriumSettings, Linearization,
    LinearizationError, ModeKind, MotionLinearization, Seek, SparseModeSettings, Stability,
};
use mechanism::runtime::reference::fit::loglog_slope;
use mechanism::runtime::reference::HangingChain;
use mechanism::runtime::{Integrator, Rattle, SMatrix, SVector, State};
use nalgebra::DMatrix;
use proptest::prelude::*;

mechanism! {
    /// Two point masses on rods from a pivot at the origin, gravity along −y.
    pub struct HangingPair {
        coordinates: [x1, y1, x2, y2],
        parameters: { m1 = 1.3, m2 = 0.7, l1 = 0.9, l2 = 1.6, g = 9.81 },
        kinetic: 0.5 * m1 * (dot(x1).powi(2) + dot(y1).powi(2))
            + 0.5 * m2 * (dot(x2).powi(2) + dot(y2).powi(2)),
        potential: g * (m1 * y1 + m2 * y2),
        holonomic: {
            rod1: x1.powi(2) + y1.powi(2) - l1.powi(2),
            rod2: (x2 - x1).powi(2) + (y2 - y1).powi(2) - l2.powi(2),
        },
        integrators: [livens, rattle],
    }
}

mechanism! {
    /// Five point masses on rods, each from the one before (the first from the origin).
    pub struct HangingFive {
        coordinates: [x1, y1, x2, y2, x3, y3, x4, y4, x5, y5],
        parameters: {
            m1 = 1.0, m2 = 1.0, m3 = 1.0, m4 = 1.0, m5 = 1.0,
            l1 = 1.0, l2 = 1.0, l3 = 1.0, l4 = 1.0, l5 = 1.0,
            g = 9.81,
        },
        kinetic: 0.5 * m1 * (dot(x1).powi(2) + dot(y1).powi(2))
            + 0.5 * m2 * (dot(x2).powi(2) + dot(y2).powi(2))
            + 0.5 * m3 * (dot(x3).powi(2) + dot(y3).powi(2))
            + 0.5 * m4 * (dot(x4).powi(2) + dot(y4).powi(2))
            + 0.5 * m5 * (dot(x5).powi(2) + dot(y5).powi(2)),
        potential: g * (m1 * y1 + m2 * y2 + m3 * y3 + m4 * y4 + m5 * y5),
        holonomic: {
            rod1: x1.powi(2) + y1.powi(2) - l1.powi(2),
            rod2: (x2 - x1).powi(2) + (y2 - y1).powi(2) - l2.powi(2),
            rod3: (x3 - x2).powi(2) + (y3 - y2).powi(2) - l3.powi(2),
            rod4: (x4 - x3).powi(2) + (y4 - y3).powi(2) - l4.powi(2),
            rod5: (x5 - x4).powi(2) + (y5 - y4).powi(2) - l5.powi(2),
        },
        integrators: [livens],
    }
}

mechanism! {
    /// A point mass on a linear spring of rest length `l0` from the origin, gravity along −y.
    pub struct PlanarSpringPendulum {
        coordinates: [x, y],
        parameters: { m = 2.0, k = 50.0, l0 = 1.0, g = 9.81 },
        kinetic: 0.5 * m * (dot(x).powi(2) + dot(y).powi(2)),
        potential: 0.5 * k * ((x.powi(2) + y.powi(2)).sqrt() - l0).powi(2) + m * g * y,
        integrators: [livens],
    }
}

/// A chain's masses and lengths, root first: the angle-coordinate reference
/// ([`HangingChain`]) with the checks of a Cartesian model against it.
struct Chain(HangingChain);

impl Chain {
    /// The chain of a [`HangingPair`], with its masses, lengths and gravity.
    fn of_pair(model: &HangingPair) -> Chain {
        Chain::new(vec![model.m1, model.m2], vec![model.l1, model.l2], model.g)
    }

    fn new(masses: Vec<f64>, lengths: Vec<f64>, g: f64) -> Chain {
        Chain(HangingChain::new(masses, lengths, g).expect("a chain"))
    }

    /// A configuration with rod `i` at angle `angles[i]` from the downward vertical.
    fn configuration<const N: usize>(&self, angles: &[f64]) -> SVector<f64, N> {
        SVector::from_column_slice(&self.0.configuration(angles))
    }

    /// Checks the equilibrium, its multipliers, the frequencies and the mode shapes of a
    /// model of this chain found from the guess at `angles`.
    fn check<S, const N: usize, const M: usize>(&self, model: &S, angles: &[f64])
    where
        S: mechanism::runtime::Inertia<N>
            + mechanism::runtime::PotentialHessian<N>
            + mechanism::runtime::HolonomicHessians<N, M>
            + mechanism::runtime::AppliedForces<N>,
    {
        let guess = self.configuration::<N>(angles);
        let found = equilibrium::<S, N, M>(model, &guess, &EquilibriumSettings::default())
            .expect("the hanging chain's equilibrium is found");
        assert_eq!(found.stability, Stability::Minimum);
        assert!(found.residual <= 1e-12, "residual {}", found.residual);
        self.check_rest(found.q.as_slice(), found.lambda.as_slice());

        let linear = Linearization::at(model, &found).expect("linearized");
        assert_eq!(linear.dof(), M);
        let modes = linear.modes().expect("modes");
        let (reference, shapes) = self.0.angle_modes();
        assert_eq!(modes.modes.len(), M);
        for (k, (mode, &omega2)) in modes.modes.iter().zip(&reference).enumerate() {
            let shape = mode.shape.as_slice();
            self.check_mode(
                k,
                (mode.eigenvalue, omega2),
                mode.kind,
                mode.residual,
                shape,
                &shapes,
            );
            let mut jacobian = SMatrix::<f64, M, N>::zeros();
            model.constraint_jacobian(&found.q, 0.0, &mut jacobian);
            assert!((jacobian * mode.shape).amax() <= 1e-10 * jacobian.amax());
            // Mass-normalized.
            let norm = (mode.shape.transpose() * linear.mass * mode.shape)[0];
            assert!((norm - 1.0).abs() <= 1e-12, "φᵀMφ = {norm}");
        }
        let damped = linear.damped_eigenvalues().expect("eigenvalues");
        for (eigenvalue, &omega2) in damped.iter().zip(&reference) {
            assert!((eigenvalue.natural_frequency - omega2.sqrt()).abs() <= 1e-9 * omega2.sqrt());
            assert!(eigenvalue.damping_ratio.abs() <= 1e-9);
        }
    }
}

#[test]
fn hanging_pair_against_angle_coordinates() {
    let model = HangingPair::default();
    let chain = Chain::of_pair(&model);
    chain.check::<_, 4, 2>(&model, &[0.3, -0.2]);
    chain.check_sparse(&[0.3, -0.2]);
}

impl Chain {
    /// The same checks on the sparse tier: `models::VariedPendulumChain` with this chain's
    /// masses and lengths, its rest found from the guess at `angles` by `sparse_equilibrium`,
    /// all its modes by `sparse_modes` (shift-invert Lanczos).
    fn check_sparse(&self, angles: &[f64]) {
        let n = self.0.links();
        let mut model = VariedPendulumChain::new(n).unwrap();
        model.m.copy_from_slice(self.0.masses());
        model.l.copy_from_slice(self.0.lengths());
        model.g = self.0.gravity();
        let found = sparse_equilibrium(
            &model,
            &self.0.configuration(angles),
            &EquilibriumSettings::default(),
        )
        .expect("the hanging chain's equilibrium is found");
        assert_eq!(found.stability, Stability::Minimum);
        assert!(found.residual <= 1e-12, "residual {}", found.residual);
        self.check_rest(&found.q, &found.lambda);
        let settings = SparseModeSettings {
            count: n,
            ..SparseModeSettings::default()
        };
        let modes = sparse_modes(&model, &found, &settings).expect("modes");
        let (reference, shapes) = self.0.angle_modes();
        assert_eq!(modes.modes.len(), n);
        for (k, (mode, &omega2)) in modes.modes.iter().zip(&reference).enumerate() {
            let shape = &mode.shape;
            self.check_mode(
                k,
                (mode.eigenvalue, omega2),
                mode.kind,
                mode.residual,
                shape,
                &shapes,
            );
        }
    }

    /// The rest: every bob straight below the pivot; rod `i` pulls with the weight below it,
    /// `2 lᵢ λᵢ = g Σ_{k ≥ i} mₖ`.
    fn check_rest(&self, q: &[f64], lambda: &[f64]) {
        let rest = self.0.configuration(&[]);
        let scale: f64 = self.0.lengths().iter().sum();
        for (q, expected) in q.iter().zip(&rest) {
            assert!((q - expected).abs() <= 1e-10 * scale, "q = {q:?}");
        }
        for (i, lambda) in lambda.iter().enumerate() {
            let tension = self.0.tension(i) / (2.0 * self.0.lengths()[i]);
            assert!(
                (lambda - tension).abs() <= 1e-10 * tension,
                "λ{i} = {lambda} against {tension}"
            );
        }
    }

    /// Mode `k`'s `ω²` against the reference's, its residual, and its shape, which moves the
    /// bobs sideways only, read as rod angles `(δxᵢ − δxᵢ₋₁)/lᵢ` against the reference's
    /// eigenvector `shapes[k]`.
    fn check_mode(
        &self,
        k: usize,
        (eigenvalue, omega2): (f64, f64),
        kind: ModeKind,
        residual: f64,
        shape: &[f64],
        shapes: &DMatrix<f64>,
    ) {
        assert!(matches!(kind, ModeKind::Oscillation { .. }));
        assert!(
            (eigenvalue - omega2).abs() <= 1e-10 * omega2,
            "mode {k}: ω² = {eigenvalue} against {omega2}"
        );
        assert!(residual <= 1e-12, "mode {k}: residual {residual}");
        let angles = DMatrix::from_fn(self.0.links(), 1, |i, _| {
            let previous = if i == 0 { 0.0 } else { shape[2 * i - 2] };
            (shape[2 * i] - previous) / self.0.lengths()[i]
        })
        .normalize();
        let expected = shapes.column(k);
        let aligned = if angles.dot(&expected) < 0.0 {
            -angles
        } else {
            angles
        };
        assert!(
            (aligned - expected).amax() <= 1e-8,
            "mode {k}: shape in angles differs from the reference"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    /// Ten pendula of arbitrary masses and lengths on the sparse tier, from an arbitrary guess
    /// within 0.4 rad of the rest.
    #[test]
    fn hanging_ten_on_the_sparse_tier_against_angle_coordinates(
        masses in proptest::collection::vec(0.2f64..5.0, 10),
        lengths in proptest::collection::vec(0.3f64..3.0, 10),
        angles in proptest::collection::vec(-0.4f64..0.4, 10),
    ) {
        Chain::new(masses, lengths, 9.81).check_sparse(&angles);
    }

    /// Five pendula of arbitrary masses and lengths, released from an arbitrary guess within
    /// 0.4 rad of the rest.
    #[test]
    fn hanging_five_against_angle_coordinates(
        masses in proptest::collection::vec(0.2f64..5.0, 5),
        lengths in proptest::collection::vec(0.3f64..3.0, 5),
        angles in proptest::collection::vec(-0.4f64..0.4, 5),
    ) {
        let model = HangingFive {
            m1: masses[0], m2: masses[1], m3: masses[2], m4: masses[3], m5: masses[4],
            l1: lengths[0], l2: lengths[1], l3: lengths[2], l4: lengths[3], l5: lengths[4],
            ..HangingFive::default()
        };
        let chain = Chain::new(masses, lengths, model.g);
        chain.check::<_, 10, 5>(&model, &angles);
        chain.check_sparse(&angles);
    }
}

/// Upright, both rods unstable; one up and one down, one of each: found by Newton's method
/// (`Seek::Any`), and from the same guesses the descent (`Seek::Minimum`) finds the rest.
#[test]
fn inverted_pendula_are_unstable_equilibria() {
    let model = HangingPair::default();
    let chain = Chain::of_pair(&model);
    let pi = std::f64::consts::PI;
    for (angles, negative) in [([pi - 0.2, pi + 0.1], 2), ([0.1, pi - 0.2], 1)] {
        let guess = chain.configuration::<4>(&angles);
        let any = EquilibriumSettings {
            seek: Seek::Any,
            ..EquilibriumSettings::default()
        };
        let found = equilibrium::<_, 4, 2>(&model, &guess, &any).expect("found");
        assert_eq!(
            found.stability,
            Stability::Unstable { negative, zero: 0 },
            "from {angles:?}"
        );
        let modes = Linearization::at(&model, &found).unwrap().modes().unwrap();
        let unstable = modes
            .modes
            .iter()
            .filter(|m| matches!(m.kind, ModeKind::Unstable { .. }))
            .count();
        assert_eq!(unstable, negative);
        let rest = equilibrium::<_, 4, 2>(&model, &guess, &EquilibriumSettings::default())
            .expect("the rest is found");
        assert_eq!(rest.stability, Stability::Minimum, "from {angles:?}");
        let down = chain.configuration::<4>(&[0.0, 0.0]);
        assert!(
            (rest.q - down).amax() <= 1e-10,
            "from {angles:?}: {:?}",
            rest.q
        );
    }
}

#[test]
fn spring_pendulum_radial_and_swinging_frequencies() {
    let model = PlanarSpringPendulum::default();
    let guess = SVector::<f64, 2>::new(0.2, -1.0);
    let found =
        equilibrium::<_, 2, 0>(&model, &guess, &EquilibriumSettings::default()).expect("found");
    let stretched = model.l0 + model.m * model.g / model.k;
    assert!((found.q - SVector::<f64, 2>::new(0.0, -stretched)).amax() <= 1e-12 * stretched);
    assert_eq!(found.stability, Stability::Minimum);
    let frequencies = Linearization::at(&model, &found)
        .unwrap()
        .modes()
        .unwrap()
        .frequencies();
    let swing = (model.g / stretched).sqrt();
    let radial = (model.k / model.m).sqrt();
    assert_eq!(frequencies.len(), 2);
    assert!(
        (frequencies[0] - swing).abs() <= 1e-12 * swing,
        "{frequencies:?}"
    );
    assert!(
        (frequencies[1] - radial).abs() <= 1e-12 * radial,
        "{frequencies:?}"
    );
}

#[test]
fn a_point_that_is_not_an_equilibrium_is_refused() {
    let model = HangingPair::default();
    let chain = Chain::of_pair(&model);
    let q = chain.configuration::<4>(&[0.3, 0.0]);
    let error = Linearization::at_point(&model, &q, &SVector::zeros(), 0.0, 1e-8).unwrap_err();
    assert!(
        matches!(error, LinearizationError::NotAnEquilibrium { .. }),
        "{error}"
    );
    let limited = EquilibriumSettings {
        max_iterations: 1,
        ..EquilibriumSettings::default()
    };
    let error = equilibrium::<_, 4, 2>(&model, &q, &limited).unwrap_err();
    assert!(
        matches!(
            error,
            LinearizationError::NotConverged { iterations: 1, .. }
        ),
        "{error}"
    );
}

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

/// A free rigid body's orientation (a quaternion: 4 coordinates, 1 row) has 3 degrees of
/// freedom, all neutral: without a potential every orientation is an equilibrium with three
/// zero modes.
#[test]
fn a_free_rigid_body_has_three_zero_modes() {
    let body = mechanism::models::FreeBody::default();
    let q = SVector::<f64, 4>::new(0.5, 0.5, -0.5, 0.5);
    let found = equilibrium::<_, 4, 1>(&body, &q, &EquilibriumSettings::default()).unwrap();
    assert_eq!(found.stability, Stability::Degenerate { zero: 3 });
    let linear = Linearization::at(&body, &found).unwrap();
    assert_eq!(linear.dof(), 3);
    let modes = linear.modes().unwrap();
    assert_eq!(modes.zero_modes(), 3);
    assert!(modes.frequencies().is_empty());
}

/// A heavy top hanging below its fixed point, not spinning, is a physical pendulum in both
/// horizontal directions, `ω² = m g l / I₁` (`I₁ = I₂` about the fixed point), and neutral
/// about its vertical symmetry axis: the same three modes with the orientation as a quaternion
/// (4 coordinates, 1 row) and as a rotation matrix (9 coordinates, 6 rows).
#[test]
fn a_hanging_heavy_top_is_a_physical_pendulum() {
    let half = 0.5 * (std::f64::consts::PI - 0.3);
    // Tilted 0.3 rad from hanging, and turned about the vertical: a guess off the rest.
    let quaternion = SVector::<f64, 4>::new(half.cos(), half.sin(), 0.05, 0.0).normalize();
    let top = mechanism::models::HeavyTop::default();
    let omega = (top.mgl / top.i1).sqrt();
    let found = equilibrium::<_, 4, 1>(&top, &quaternion, &EquilibriumSettings::default())
        .expect("the quaternion top's rest");
    assert_eq!(found.stability, Stability::Degenerate { zero: 1 });
    let modes = Linearization::at(&top, &found).unwrap().modes().unwrap();
    assert_eq!(modes.zero_modes(), 1);
    for frequency in modes.frequencies() {
        assert!(
            (frequency - omega).abs() <= 1e-10 * omega,
            "{frequency} against {omega}"
        );
    }
    assert_eq!(modes.frequencies().len(), 2);

    let matrix_top = mechanism::models::HeavyTopMatrix::default();
    let (w, x, y, z) = (quaternion[0], quaternion[1], quaternion[2], quaternion[3]);
    let rotation = [
        [
            1.0 - 2.0 * (y * y + z * z),
            2.0 * (x * y - w * z),
            2.0 * (x * z + w * y),
        ],
        [
            2.0 * (x * y + w * z),
            1.0 - 2.0 * (x * x + z * z),
            2.0 * (y * z - w * x),
        ],
        [
            2.0 * (x * z - w * y),
            2.0 * (y * z + w * x),
            1.0 - 2.0 * (x * x + y * y),
        ],
    ];
    let r = SVector::<f64, 9>::from_iterator(rotation.iter().flatten().copied());
    let found = equilibrium::<_, 9, 6>(&matrix_top, &r, &EquilibriumSettings::default())
        .expect("the matrix top's rest");
    assert_eq!(found.stability, Stability::Degenerate { zero: 1 });
    let linear = Linearization::at(&matrix_top, &found).unwrap();
    assert_eq!(linear.dof(), 3);
    let modes = linear.modes().unwrap();
    assert_eq!(modes.zero_modes(), 1);
    assert_eq!(modes.frequencies().len(), 2);
    for frequency in modes.frequencies() {
        assert!(
            (frequency - omega).abs() <= 1e-10 * omega,
            "{frequency} against {omega}"
        );
    }
}

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

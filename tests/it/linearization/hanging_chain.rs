//! The hanging chain of pendula in Cartesian coordinates against the angle-coordinate
//! matrices `Mᵢⱼ = (Σ_{k ≥ max(i,j)} mₖ) lᵢ lⱼ`, `Kᵢᵢ = g lᵢ Σ_{k ≥ i} mₖ` (whose rods' tensions
//! give the multipliers in closed form), on both tiers; its inverted equilibria; and a point
//! that is not an equilibrium.

use mechanism::mechanism;
use mechanism::models::VariedPendulumChain;
use mechanism::runtime::linearization::{
    equilibrium, sparse_equilibrium, sparse_modes, EquilibriumSettings, Linearization,
    LinearizationError, ModeKind, Seek, SparseModeSettings, Stability,
};
use mechanism::runtime::reference::HangingChain;
use mechanism::runtime::{SMatrix, SVector};
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

/// A chain's masses and lengths, root first: the angle-coordinate reference
/// ([`HangingChain`]) with the checks of a Cartesian model against it.
pub(super) struct Chain(HangingChain);

impl Chain {
    /// The chain of a [`HangingPair`], with its masses, lengths and gravity.
    pub(super) fn of_pair(model: &HangingPair) -> Chain {
        Chain::new(vec![model.m1, model.m2], vec![model.l1, model.l2], model.g)
    }

    fn new(masses: Vec<f64>, lengths: Vec<f64>, g: f64) -> Chain {
        Chain(HangingChain::new(masses, lengths, g).expect("a chain"))
    }

    /// A configuration with rod `i` at angle `angles[i]` from the downward vertical.
    pub(super) fn configuration<const N: usize>(&self, angles: &[f64]) -> SVector<f64, N> {
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

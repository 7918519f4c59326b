//! Every model of the test suite steps with every integrator family it is compiled for: the
//! compile-time checks, the default set and the run-time `Unsupported` checks read one table
//! (`mechanism::runtime::capabilities`), so a model that compiles for a family never fails
//! with `Unsupported` (issue 9, item 1). The models of `warning_free` run the same check in their
//! tests.

use mechanism_test_support::ten_steps;

include!("../models/exotic.rs");

use mechanism::mechanism;
use mechanism::models::{
    DoublePendulum, NonholonomicParticle, OscillatorOnCircle, PlanarOscillator, RobotArmParabola,
    RobotArmSine, SingularMassSpring, SpringPendulum, Squeezer,
};
use mechanism::runtime::State;

mechanism! {
    /// Unconstrained, constant mass: the default set is the linearly implicit trio.
    pub struct FreeOscillator {
        coordinates: [x, y],
        parameters: { k = 2.0 },
        kinetic: 0.5 * (dot(x).powi(2) + 2.0 * dot(y).powi(2)),
        potential: 0.5 * k * (x.powi(2) + y.powi(2)) + 0.1 * x.powi(4),
    }
}

mechanism! {
    /// A Cartesian pendulum: the trio again, Z&S through the penalty.
    pub struct CartesianPendulum {
        coordinates: [x, y],
        kinetic: 0.5 * (dot(x).powi(2) + dot(y).powi(2)),
        potential: 9.81 * y,
        holonomic: { rod: x.powi(2) + y.powi(2) - 1.0 },
    }
}

mechanism! {
    /// Polar coordinates: a configuration-dependent mass matrix, which only `rk` and `livens`
    /// step.
    pub struct PolarParticle {
        coordinates: [r, phi],
        kinetic: 0.5 * (dot(r).powi(2) + r.powi(2) * dot(phi).powi(2)),
        potential: 0.5 * (r - 1.0).powi(2),
    }
}

mechanism! {
    /// A mass matrix that is singular (no radial inertia) and depends on the configuration,
    /// with the constraint that fixes the massless direction — a planar "unit quaternion".
    /// SPOOK treats the singular mass but not the varying one: only `livens` steps it.
    pub struct AngleOnCircle {
        coordinates: [x, y],
        kinetic: 0.5 * (x * dot(y) - y * dot(x)).powi(2),
        potential: 1.0 - x,
        holonomic: { unit: x.powi(2) + y.powi(2) - 1.0 },
    }
}

mechanism! {
    /// A knife edge: nonholonomic, so only `spook` of the trio.
    pub struct Skate {
        coordinates: [x, y, theta],
        kinetic: 0.5 * (dot(x).powi(2) + dot(y).powi(2) + dot(theta).powi(2)),
        potential: 0.0,
        nonholonomic: { blade: dot(x) * theta.sin() - dot(y) * theta.cos() },
    }
}

mechanism! {
    /// A damped oscillator: dissipation, so only `spook` of the trio.
    pub struct Damped {
        coordinates: [x],
        kinetic: 0.5 * dot(x).powi(2),
        potential: 0.5 * x.powi(2),
        dissipation: 0.05 * dot(x).powi(2),
    }
}

#[test]
fn default_sets_step() {
    let s = State::new(0.0, [0.3, -0.2], [0.1, 0.4]);
    ten_steps!(FreeOscillator, s, <2, 0, 0>, h: 0.001, penalty: false, [spook, zss, zs]);
    let s = State::new(0.0, [0.6, -0.8], [0.8, 0.6]);
    ten_steps!(CartesianPendulum, s, <2, 1, 0>, h: 0.001, penalty: true, [spook, zss, zs]);
    let s = State::new(0.0, [1.2, 0.0], [0.1, 1.0]);
    ten_steps!(PolarParticle, s, <2, 0, 0>, h: 0.001, penalty: false, [rk, livens]);
    let s = State::new(0.0, [0.6, 0.8], [-0.8, 0.6]);
    ten_steps!(AngleOnCircle, s, <2, 1, 0>, h: 0.001, penalty: false, [livens]);
    let s = State::new(0.0, [0.0, 0.0, 0.0], [1.0, 0.0, 1.0]);
    ten_steps!(Skate, s, <3, 0, 1>, h: 0.001, penalty: false, [spook]);
    let s = State::new(0.0, [1.0], [0.0]);
    ten_steps!(Damped, s, <1, 0, 0>, h: 0.001, penalty: false, [spook]);
}

#[test]
fn library_models_step() {
    ten_steps!(
        DoublePendulum,
        DoublePendulum::initial_state(),
        <4, 2, 0>, h: 0.001,
        penalty: true,
        [spook, zs, zss, zss_stiff, newmark, newmark_1, pf_newmark, livens, shake, rattle,
         symplectic_euler, verlet, rk]
    );
    ten_steps!(PlanarOscillator, PlanarOscillator::initial_state(), <2, 0, 0>, h: 0.001,
        penalty: false, [dlda, spook, verlet, zss]);
    ten_steps!(OscillatorOnCircle, OscillatorOnCircle::initial_state(), <2, 0, 1>, h: 0.001,
        penalty: false, [dlda, spook]);
    ten_steps!(NonholonomicParticle, NonholonomicParticle::initial_state(), <3, 0, 1>, h: 0.001,
        penalty: false, [dlda, spook]);
    ten_steps!(RobotArmParabola, RobotArmParabola::initial_state(), <2, 1, 0>, h: 0.001,
        penalty: false, [rk]);
    ten_steps!(RobotArmSine, RobotArmSine::initial_state(), <2, 1, 0>, h: 0.001, penalty: false, [rk]);
    ten_steps!(SingularMassSpring, SingularMassSpring::initial_state(), <3, 1, 0>, h: 0.001,
        penalty: false, [livens, spook]);
    ten_steps!(SpringPendulum, SpringPendulum::initial_state(), <3, 0, 0>, h: 0.001,
        penalty: false, [livens, rk]);
    ten_steps!(Squeezer, Squeezer::initial_state(), <7, 6, 0>, h: 1e-5, penalty: false, [rk]);
}

#[test]
fn exotic_models_step() {
    let s = State::new(
        0.0,
        [-1.4305311412786772, -0.9274666028085803, 1.0],
        [0.21626310204256943, 0.6628462367244791, -0.7168438722309908],
    );
    ten_steps!(Exotic, s, <3, 2, 0>, h: 0.001, penalty: true, [zs, zss, spook]);
    let s = State::new(
        0.0,
        [1.0, 1.0, 1.0],
        [-2.6693722013447845, -6.008116604034354, 0.0],
    );
    ten_steps!(Driven, s, <3, 1, 0>, h: 0.001, penalty: false, [rk]);
    // `skate` at t = 0 with z = 0: −ẏ + x ż = 1.
    let s = State::new(0.0, [0.5, 0.0, 0.0], [0.3, -1.0, 0.0]);
    ten_steps!(Skating, s, <3, 0, 1>, h: 0.001, penalty: false, [dlda, spook]);
    let s = State::new(
        0.0,
        [1.0, 0.25244129544236893, 1.0],
        [0.0, 0.1620906917604419, 1.0],
    );
    ten_steps!(Curved, s, <3, 1, 0>, h: 0.001, penalty: false, [livens]);
}

/// The language documentation's table of integrators (`src/language.md`, the crate docs of
/// `mechanism`) says what `mechanism::runtime::capabilities` says.
#[test]
fn language_docs_agree_with_the_table() {
    use mechanism::runtime::capabilities::Family;
    let docs = include_str!("../../src/language.md");
    for family in Family::ALL {
        let name = format!("`{}`", family.name());
        let row = docs
            .lines()
            .find(|l| {
                l.starts_with("| `") && l.split('|').nth(1).is_some_and(|c| c.contains(&name))
            })
            .unwrap_or_else(|| panic!("no row for {name} in src/language.md"));
        let row = row.replace("\\|", "");
        let treats = row.split('|').nth(3).unwrap_or_default();
        let can = family.capabilities();
        let says = |words: &str| treats.contains(words);
        assert_eq!(
            says("nonholonomic"),
            can.nonholonomic,
            "{name}: nonholonomic"
        );
        assert_eq!(says("varying `M`"), can.varying_mass, "{name}: varying M");
        assert_eq!(
            says("constant `M`"),
            !can.varying_mass,
            "{name}: constant M"
        );
        assert_eq!(
            says("singular `M`"),
            can.singular_mass,
            "{name}: singular M"
        );
        assert_eq!(
            says("massless coordinates"),
            can.massless_coordinates,
            "{name}: massless coordinates"
        );
        assert_eq!(says("forces"), can.forces, "{name}: forces");
        assert_eq!(says("with `t`"), can.rheonomic, "{name}: t in constraints");
        assert_eq!(
            says("independent"),
            can.full_rank,
            "{name}: independent rows"
        );
    }
}

/// The run-time side of the table, the second line behind the `ConstantMass` bound (which
/// makes stepping `PolarParticle` with these families a compile error, `ui-tests/tests/ui/integrators/
/// varying-mass-stepped-with-spook.rs`): a hand-written model whose two declarations disagree
/// (`ConstantMass` implemented, `CONSTANT_MASS` false) is refused with `Unsupported`, whose
/// text names the families the table says can step a varying mass.
#[test]
fn families_without_varying_mass_refuse_a_varying_mass_at_run_time() {
    use mechanism::runtime::capabilities::Family;
    use mechanism::runtime::{
        ConstantMass, Inertia, Integrator, Potential, SMatrix, SVector, StepError, SymplecticEuler,
        Verlet,
    };
    /// `PolarParticle` that claims `ConstantMass` while its `CONSTANT_MASS` says otherwise.
    struct Contradictory(PolarParticle);
    impl Inertia<2> for Contradictory {
        const CONSTANT_MASS: bool = false;
        fn mass_matrix(&self, q: &SVector<f64, 2>, m: &mut SMatrix<f64, 2, 2>) {
            self.0.mass_matrix(q, m);
        }
    }
    impl ConstantMass<2> for Contradictory {}
    impl Potential<2> for Contradictory {
        fn potential(&self, q: &SVector<f64, 2>) -> f64 {
            self.0.potential(q)
        }
        fn potential_gradient(&self, q: &SVector<f64, 2>, grad: &mut SVector<f64, 2>) {
            self.0.potential_gradient(q, grad);
        }
    }
    let model = Contradictory(PolarParticle::new());
    let start = State::new(0.0, [1.2, 0.0], [0.1, 1.0]);
    let errors = [
        (
            Family::SymplecticEuler,
            SymplecticEuler::<2>::new(0.001)
                .unwrap()
                .step(&model, &mut start.clone()),
        ),
        (
            Family::Verlet,
            Verlet::<2>::new(0.001)
                .unwrap()
                .step(&model, &mut start.clone()),
        ),
    ];
    for (family, outcome) in errors {
        assert!(!family.capabilities().varying_mass);
        match outcome {
            Err(StepError::Unsupported { requirement, .. }) => {
                let steppers = Family::list(Family::those_that(|c| c.varying_mass));
                assert!(requirement.contains(&steppers), "{requirement}");
            }
            other => panic!("{family:?} on a varying mass: {other:?}"),
        }
    }
}

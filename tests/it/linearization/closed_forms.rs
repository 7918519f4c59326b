//! Frequencies in closed form: the planar spring pendulum's radial and swinging `√(k/m)` and
//! `√(g/L)`, `L = l₀ + m g/k`; a free rigid body's three zero modes; a hanging heavy top as a
//! physical pendulum.

use mechanism::mechanism;
use mechanism::runtime::linearization::{
    equilibrium, EquilibriumSettings, Linearization, Stability,
};
use mechanism::runtime::SVector;

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

//! The linearization about a steady motion (`runtime::linearization::SteadyLinearization`):
//! the heavy symmetric top spinning upright (its rotation matrix as coordinates, a constant
//! mass matrix), against the sleeping-top criterion `I₃² Ω² > 4 m g l I₁`, the closed-form
//! eigenvalues of its tilt, and the growth of a small tilt stepped by RATTLE.

use mechanism::models::{matrix_state, HeavyTopMatrix};
use mechanism::runtime::linearization::{
    LinearizationError, SteadyLinearization, SteadyMotion, SteadyStability,
};
use mechanism::runtime::reference::fit::slope;
use mechanism::runtime::{Integrator, Rattle, SMatrix, SVector};
use nalgebra::Complex;

/// The upright top: `R = I`, nine coordinates row by row.
fn upright() -> SVector<f64, 9> {
    SVector::from_column_slice(&[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0])
}

/// The generator of `R ↦ exp(θ â) R` (a rotation about the spatial axis `a`) on the nine
/// entries of `R`, row by row: `(â R)_ij = Σ_k â_ik R_kj`.
fn spatial_rotation(axis: [f64; 3]) -> SMatrix<f64, 9, 9> {
    let [x, y, z] = axis;
    let hat = [[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]];
    let mut s = SMatrix::<f64, 9, 9>::zeros();
    for i in 0..3 {
        for k in 0..3 {
            for j in 0..3 {
                s[(3 * i + j, 3 * k + j)] = hat[i][k];
            }
        }
    }
    s
}

/// The upright top spinning at `rate` about the vertical.
fn sleeping(
    top: &HeavyTopMatrix,
    rate: f64,
) -> Result<SteadyLinearization<9, 6>, LinearizationError> {
    let motion = SteadyMotion {
        generator: spatial_rotation([0.0, 0.0, 1.0]),
        rate,
    };
    SteadyLinearization::at(top, &upright(), &motion, 0.0, 1e-12)
}

/// `Ω_c = 2 √(m g l I₁) / I₃`.
fn threshold(top: &HeavyTopMatrix) -> f64 {
    2.0 * (top.mgl * top.i1).sqrt() / top.i3
}

/// Three symmetric tops: the library's (`I₃ / I₁ = 0.4`), a flat one (`I₃ / I₁ = 1.6`), and
/// a heavier one.
fn tops() -> [HeavyTopMatrix; 3] {
    [
        HeavyTopMatrix::default(),
        HeavyTopMatrix {
            i1: 0.5,
            i2: 0.5,
            i3: 0.8,
            mgl: 1.3,
        },
        HeavyTopMatrix {
            i1: 2.0,
            i2: 2.0,
            i3: 3.5,
            mgl: 10.0,
        },
    ]
}

#[test]
fn the_sleeping_top_is_stable_exactly_above_the_threshold() {
    for top in tops() {
        let critical = threshold(&top);
        let stable = |rate: f64| {
            matches!(
                sleeping(&top, rate).unwrap().stability().unwrap(),
                SteadyStability::Stable
            )
        };
        let (mut low, mut high) = (0.5 * critical, 2.0 * critical);
        assert!(!stable(low) && stable(high));
        for _ in 0..60 {
            let middle = 0.5 * (low + high);
            if stable(middle) {
                high = middle;
            } else {
                low = middle;
            }
        }
        let found = 0.5 * (low + high);
        let error = (found - critical).abs() / critical;
        println!(
            "I₁ = {}, I₃ = {}, mgl = {}: threshold {found:.12} against {critical:.12}, relative {error:.1e}",
            top.i1, top.i3, top.mgl
        );
        assert!(error <= 1e-6, "threshold {found} against {critical}");
    }
}

/// The tilt `ζ = x + i y` of the axis obeys `I₁ ζ̈ − i I₃ Ω ζ̇ − m g l ζ = 0` in the inertial
/// frame, so `s = (i I₃ Ω ± √(4 I₁ m g l − I₃² Ω²)) / (2 I₁)`; in the frame turning at `Ω`
/// the tilt is `ζ e^{−iΩt}`, whose exponents are `s − iΩ`, with their conjugates (the real
/// coordinates). The spin about the vertical adds a double zero. The real parts, which decide
/// stability, are the same in both frames.
#[test]
fn the_eigenvalues_are_the_tilts_closed_form() {
    for top in tops() {
        let critical = threshold(&top);
        for rate in [
            0.0,
            0.4 * critical,
            0.97 * critical,
            1.03 * critical,
            3.0 * critical,
        ] {
            let eigenvalues = sleeping(&top, rate).unwrap().eigenvalues().unwrap();
            assert_eq!(eigenvalues.len(), 6);
            let root = Complex::new(4.0 * top.i1 * top.mgl - (top.i3 * rate).powi(2), 0.0).sqrt();
            let spin = Complex::new(0.0, top.i3 * rate);
            let mut expected: Vec<Complex<f64>> = [spin + root, spin - root]
                .iter()
                .flat_map(|s| {
                    let s = s / (2.0 * top.i1) - Complex::new(0.0, rate);
                    [s, s.conj()]
                })
                .collect();
            expected.extend([Complex::new(0.0, 0.0); 2]);
            let scale = expected.iter().fold(0.0f64, |a, s| a.max(s.norm()));
            // Each expected eigenvalue has a computed one within 1e-9 of the scale (the double
            // zero is a Jordan block: round-off splits it by about √ε).
            for e in &expected {
                let nearest = eigenvalues
                    .iter()
                    .map(|s| (s - e).norm())
                    .fold(f64::INFINITY, f64::min);
                let tolerance = if e.norm() == 0.0 { 1e-7 } else { 1e-9 } * scale;
                assert!(
                    nearest <= tolerance,
                    "Ω = {rate}: {e} has no computed eigenvalue near it in {eigenvalues:?}"
                );
            }
        }
    }
}

/// The largest real part of the eigenvalues, against a RATTLE run: below the threshold a tilt
/// of 1e-7 grows as `e^{rate t}`; above it, it stays of its size.
#[test]
fn a_small_tilt_grows_at_the_predicted_rate() {
    let top = HeavyTopMatrix::default();
    let critical = threshold(&top);
    let tilt_of = |q: &SVector<f64, 9>| q[2].hypot(q[5]);
    for (rate, unstable) in [(0.8 * critical, true), (1.3 * critical, false)] {
        let predicted = match sleeping(&top, rate).unwrap().stability().unwrap() {
            SteadyStability::Unstable { rate } => Some(rate),
            SteadyStability::Stable => None,
        };
        assert_eq!(predicted.is_some(), unstable);
        // Upright, tilted by 1e-7 about x, spinning at Ω about the body axis.
        let a: f64 = 1e-7;
        let r = [
            [1.0, 0.0, 0.0],
            [0.0, a.cos(), -a.sin()],
            [0.0, a.sin(), a.cos()],
        ];
        let mut state = matrix_state(r, [0.0, 0.0, rate]);
        let h = 2e-4;
        let mut rattle = Rattle::<9, 6>::new(h).unwrap();
        let (mut times, mut tilts) = (Vec::new(), Vec::new());
        let steps = (8.0 / h) as usize;
        let mut largest: f64 = 0.0;
        for step in 1..=steps {
            rattle.step(&top, &mut state).unwrap();
            let tilt = tilt_of(&state.q);
            largest = largest.max(tilt);
            if step % 100 == 0 && (1e-6..1e-3).contains(&tilt) {
                times.push(step as f64 * h);
                tilts.push(tilt);
            }
        }
        match predicted {
            Some(predicted) => {
                // tilt = C e^{rate t}: the slope of log(tilt) against t is the rate.
                let logs: Vec<f64> = tilts.iter().map(|x: &f64| x.ln()).collect();
                let measured = slope(&times, &logs).unwrap();
                println!("Ω = {rate:.4}: tilt grows at {measured:.6}, predicted {predicted:.6}");
                assert!(
                    (measured - predicted).abs() <= 0.02 * predicted,
                    "measured {measured} against {predicted}"
                );
            }
            None => assert!(largest <= 10.0 * a, "the tilt grew to {largest:e}"),
        }
    }
}

#[test]
fn a_rotation_that_is_not_a_symmetry_is_refused() {
    let top = HeavyTopMatrix::default();
    // Spinning about the horizontal x axis: gravity is not invariant under it.
    let motion = SteadyMotion {
        generator: spatial_rotation([1.0, 0.0, 0.0]),
        rate: 5.0,
    };
    assert!(matches!(
        SteadyLinearization::<9, 6>::at(&top, &upright(), &motion, 0.0, 1e-12),
        Err(LinearizationError::NotASymmetry { .. })
    ));
    // Tilted by 0.3 rad and spinning about the vertical: a symmetry, but no steady motion at
    // this rate (the centrifugal and gravity torques do not balance).
    let a: f64 = 0.3;
    let tilted = SVector::<f64, 9>::from_column_slice(&[
        1.0,
        0.0,
        0.0,
        0.0,
        a.cos(),
        -a.sin(),
        0.0,
        a.sin(),
        a.cos(),
    ]);
    let motion = SteadyMotion {
        generator: spatial_rotation([0.0, 0.0, 1.0]),
        rate: 5.0,
    };
    assert!(matches!(
        SteadyLinearization::<9, 6>::at(&top, &tilted, &motion, 0.0, 1e-12),
        Err(LinearizationError::NotAnEquilibrium { .. })
    ));
}

//! Equilibria and modes on the sparse tier (`runtime::linearization::{sparse_equilibrium,
//! sparse_modes}`), against the hanging chain's angle-coordinate matrices written here and
//! against the dense path on the same equations.

use mechanism_runtime::linearization::{
    equilibrium, sparse_equilibrium, sparse_modes, EquilibriumSettings, Linearization,
    LinearizationError, ModeKind, Seek, SparseModeSettings, Stability,
};
use mechanism_runtime::model::{SparseHolonomic, SparseInertia};
use mechanism_runtime::reference::hanging_chain::generalized_eigen;
use mechanism_runtime::reference::{HangingChain, HeldLadder, PendulumChain, SpookLadder};
use mechanism_runtime::SVector;
use nalgebra::DMatrix;

use proptest::prelude::*;

use crate::support::as_fixed::AsFixed;

/// The squared frequencies of `n` equal pendula (mass `m`, length `l`) hanging in a chain, in
/// the rods' angles, ascending; `g` negative for the inverted chain.
fn angle_eigenvalues(n: usize, m: f64, l: f64, g: f64) -> Vec<f64> {
    HangingChain::uniform(n, m, l, g)
        .expect("a chain")
        .angle_modes()
        .0
}

/// The chain of equal rods of length `l` hanging at angles `angles` from the vertical.
fn chain_at(angles: &[f64], l: f64) -> Vec<f64> {
    HangingChain::uniform(angles.len(), 1.0, l, 1.0)
        .expect("a chain")
        .configuration(angles)
}

fn relative(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs().max(f64::MIN_POSITIVE)
}

#[test]
fn hanging_chain_of_ten_against_angle_coordinates() {
    let (n, m, l, g) = (10, 1.3, 0.7, 9.81);
    let chain = PendulumChain::new(n, m, l, g);
    // Within 0.3 rad of hanging straight down.
    let angles: Vec<f64> = (0..n).map(|i| 0.3 * (1.7 * i as f64 + 0.4).sin()).collect();
    let rest = sparse_equilibrium(
        &chain,
        &chain_at(&angles, l),
        &EquilibriumSettings::default(),
    )
    .unwrap();
    assert_eq!(rest.stability, Stability::Minimum);
    assert!(rest.residual <= 1e-12, "residual {:e}", rest.residual);
    let straight = chain_at(&vec![0.0; n], l);
    for (q, expected) in rest.q.iter().zip(&straight) {
        assert!((q - expected).abs() <= 1e-10 * l, "{q} against {expected}");
    }
    // Rod i carries the weight below it: g_i = |d|² − l², so 2 l λᵢ · l = tension · l.
    for (i, lambda) in rest.lambda.iter().enumerate() {
        let tension = HangingChain::uniform(n, m, l, g).unwrap().tension(i);
        assert!(
            relative(2.0 * l * lambda, tension) <= 1e-10,
            "rod {i}: {lambda}"
        );
    }
    let settings = SparseModeSettings {
        count: n,
        ..SparseModeSettings::default()
    };
    let modes = sparse_modes(&chain, &rest, &settings).unwrap();
    let reference = angle_eigenvalues(n, m, l, g);
    assert_eq!(modes.modes.len(), n);
    for (mode, expected) in modes.modes.iter().zip(&reference) {
        assert!(
            relative(mode.eigenvalue, *expected) <= 1e-10,
            "ω² = {} against {expected}",
            mode.eigenvalue
        );
        assert!(matches!(mode.kind, ModeKind::Oscillation { .. }));
        assert!(mode.residual <= 1e-12, "residual {:e}", mode.residual);
        check_shape(&chain, &rest.q, &mode.shape);
    }
}

/// `aᵀ M(q) b` of a sparse-tier model.
fn mass_inner<S: SparseInertia>(model: &S, q: &[f64], a: &[f64], b: &[f64]) -> f64 {
    let mut blocks = vec![0.0; model.body_sizes().iter().map(|s| s * s).sum()];
    model.mass_blocks(q, &mut blocks);
    let (mut first, mut offset, mut inner) = (0, 0, 0.0);
    for &s in model.body_sizes() {
        for i in 0..s {
            for j in 0..s {
                inner += a[first + i] * blocks[offset + i * s + j] * b[first + j];
            }
        }
        first += s;
        offset += s * s;
    }
    inner
}

/// `φᵀ M φ = 1` and `G φ = 0` (the rows' Jacobian values at `q`).
fn check_shape<S: SparseInertia + SparseHolonomic>(model: &S, q: &[f64], shape: &[f64]) {
    let mass = mass_inner(model, q, shape, shape);
    assert!((mass - 1.0).abs() <= 1e-12, "φᵀMφ = {mass}");
    let mut g = vec![0.0; model.constraint_count()];
    let mut jac = vec![0.0; model.jacobian_pattern().len()];
    model.constraints_and_jacobian(q, 0.0, &mut g, &mut jac);
    let mut g_phi = vec![0.0; g.len()];
    for (&(row, col), value) in model.jacobian_pattern().iter().zip(&jac) {
        g_phi[row] += value * shape[col];
    }
    let size = shape.iter().fold(0.0f64, |a, x| a.max(x.abs()));
    let largest = jac.iter().fold(0.0f64, |a, x| a.max(x.abs()));
    for row in g_phi {
        assert!(row.abs() <= 1e-12 * largest * size, "Gφ = {row:e}");
    }
}

#[test]
fn long_chain_lowest_modes_against_angle_coordinates() {
    let (n, m, l, g) = (200, 0.5, 0.1, 1.0);
    let chain = PendulumChain::new(n, m, l, g);
    let angles: Vec<f64> = (0..n).map(|i| 0.05 * (0.3 * i as f64).cos()).collect();
    let rest = sparse_equilibrium(
        &chain,
        &chain_at(&angles, l),
        &EquilibriumSettings::default(),
    )
    .unwrap();
    let modes = sparse_modes(&chain, &rest, &SparseModeSettings::default()).unwrap();
    let reference = angle_eigenvalues(n, m, l, g);
    assert_eq!(modes.modes.len(), 10);
    for (mode, expected) in modes.modes.iter().zip(&reference) {
        assert!(
            relative(mode.eigenvalue, *expected) <= 1e-9,
            "ω² = {} against {expected}",
            mode.eigenvalue
        );
        assert!(mode.residual <= 1e-11, "residual {:e}", mode.residual);
    }
}

#[test]
fn inverted_chain_is_unstable_with_the_negated_spectrum() {
    let (n, m, l, g) = (4, 1.0, 1.0, 2.0);
    let chain = PendulumChain::new(n, m, l, g);
    // Near upright: angles near π.
    let angles: Vec<f64> = (0..n)
        .map(|i| std::f64::consts::PI + 0.05 * (i as f64 + 1.0))
        .collect();
    let settings = EquilibriumSettings {
        seek: Seek::Any,
        ..EquilibriumSettings::default()
    };
    let upright = sparse_equilibrium(&chain, &chain_at(&angles, l), &settings).unwrap();
    assert_eq!(
        upright.stability,
        Stability::Unstable {
            negative: n,
            zero: 0
        }
    );
    let modes = sparse_modes(
        &chain,
        &upright,
        &SparseModeSettings {
            count: n,
            ..SparseModeSettings::default()
        },
    )
    .unwrap();
    // Upright, every rod is compressed by the weight above... below it: K → −K in angles.
    let mut reference: Vec<f64> = angle_eigenvalues(n, m, l, -g);
    reference.sort_by(f64::total_cmp);
    for (mode, expected) in modes.modes.iter().zip(&reference) {
        assert!(relative(mode.eigenvalue, *expected) <= 1e-10);
        assert!(matches!(mode.kind, ModeKind::Unstable { .. }));
    }
    // The descent started at the same guess lands on the rest instead.
    let rest = sparse_equilibrium(
        &chain,
        &chain_at(&angles, l),
        &EquilibriumSettings::default(),
    )
    .unwrap();
    assert_eq!(rest.stability, Stability::Minimum);
    let straight = chain_at(&vec![0.0; n], l);
    for (q, expected) in rest.q.iter().zip(&straight) {
        assert!((q - expected).abs() <= 1e-10 * l, "{q} against {expected}");
    }
}

/// The squared frequencies of the held ladder of `links` cells (rods of mass `m`, length `l`,
/// rotational inertia `j`, gravity `g`) in the cells' swing angles `θ_k`, ascending: hanging
/// from the pin with the top rung horizontal, corner `A_k = Σ_{i≤k} l (sin θ_i, −cos θ_i)`,
/// rung `k ≥ 1` translates with `A_k`, the two rails of cell `k` swing about `A_{k−1}` (centre
/// at `l/2`) with rate `θ̇_k`. Linearized: each rod's horizontal centre velocity is a row
/// `c` of coefficients of `θ̇`, `T = ½ Σ m (c·θ̇)² + ½ Σ_rails j θ̇_k²`; its height is
/// `−Σ (its lever) cos θ_i`, `V ≈ ½ Σ m g (lever) θ_i²`.
fn swing_eigenvalues(links: usize, m: f64, l: f64, j: f64, g: f64) -> Vec<f64> {
    let mut mass = DMatrix::<f64>::zeros(links, links);
    let mut stiffness = DMatrix::<f64>::zeros(links, links);
    let mut rod = |lever: &[f64], rotates: Option<usize>| {
        for a in 0..links {
            for b in 0..links {
                mass[(a, b)] += m * lever[a] * lever[b];
            }
            stiffness[(a, a)] += m * g * lever[a];
        }
        if let Some(k) = rotates {
            mass[(k, k)] += j;
        }
    };
    for k in 0..links {
        // Rung k + 1 hangs at A_{k+1}: a lever l on every cell up to k.
        let rung: Vec<f64> = (0..links).map(|i| if i <= k { l } else { 0.0 }).collect();
        rod(&rung, None);
        // Cell k's two rails: l on the cells above, l/2 on their own.
        let rail: Vec<f64> = (0..links)
            .map(|i| match i.cmp(&k) {
                std::cmp::Ordering::Less => l,
                std::cmp::Ordering::Equal => 0.5 * l,
                std::cmp::Ordering::Greater => 0.0,
            })
            .collect();
        rod(&rail, Some(k));
        rod(&rail, Some(k));
    }
    generalized_eigen(&mass, &stiffness)
        .expect("the swing mass matrix is positive definite")
        .0
}

#[test]
fn held_ladder_against_swing_angles_and_the_dense_path() {
    const N: usize = 64;
    const M: usize = 59;
    let ladder = HeldLadder::new(SpookLadder::new(5));
    assert_eq!(
        (ladder.coordinate_count(), ladder.constraint_count()),
        (N, M)
    );
    let rest = ladder.rest();
    // A guess off the rest and off the rows: every coordinate moved.
    let guess: Vec<f64> = rest
        .iter()
        .enumerate()
        .map(|(i, x)| x + 0.03 * (0.7 * i as f64 + 0.2).sin())
        .collect();
    let found = sparse_equilibrium(&ladder, &guess, &EquilibriumSettings::default()).unwrap();
    assert_eq!(found.stability, Stability::Minimum);
    let distance = found
        .q
        .iter()
        .zip(&rest)
        .fold(0.0f64, |a, (x, y)| a.max((x - y).abs()));
    assert!(distance <= 1e-10, "found the rest to {distance:e}");
    let (m, l, j, g) = {
        let s = ladder.ladder();
        (s.mass, s.length, s.inertia, s.gravity)
    };
    let reference = swing_eigenvalues(5, m, l, j, g);
    let dof = N - M;
    let sparse = sparse_modes(
        &ladder,
        &found,
        &SparseModeSettings {
            count: dof,
            ..SparseModeSettings::default()
        },
    )
    .unwrap();
    // The dense path on the same equations, from the same guess.
    let fixed = AsFixed(&ladder);
    let dense_rest = equilibrium::<_, N, M>(
        &fixed,
        &SVector::<f64, N>::from_column_slice(&guess),
        &EquilibriumSettings::default(),
    )
    .unwrap();
    let dense = Linearization::at(&fixed, &dense_rest)
        .unwrap()
        .modes()
        .unwrap();
    assert_eq!((sparse.modes.len(), dense.modes.len()), (dof, dof));
    for ((s, d), expected) in sparse.modes.iter().zip(&dense.modes).zip(&reference) {
        for value in [s.eigenvalue, d.eigenvalue] {
            assert!(
                relative(value, *expected) <= 1e-10,
                "ω² {value} against the swing angles' {expected}"
            );
        }
        assert!(s.residual <= 1e-12, "residual {:e}", s.residual);
        check_shape(&ladder, &found.q, &s.shape);
        // Same normalization and sign convention: the shapes agree entry by entry.
        let difference = s
            .shape
            .iter()
            .zip(d.shape.iter())
            .fold(0.0f64, |a, (x, y)| a.max((x - y).abs()));
        assert!(difference <= 1e-8, "shapes differ by {difference:e}");
        println!(
            "ω = {:.12}: sparse {:.1e}, dense {:.1e} from the swing angles; shapes {difference:.1e} apart; residual {:.1e}",
            expected.sqrt(),
            relative(s.eigenvalue, *expected),
            relative(d.eigenvalue, *expected),
            s.residual
        );
    }
}

/// Without gravity the held ladder rests anywhere on its rows: `K = 0` on `ker G`, every mode
/// a zero mode, and the stability degenerate in all `L` directions.
#[test]
fn a_weightless_ladder_has_only_zero_modes() {
    let links = 4;
    let ladder = HeldLadder::new(SpookLadder::with_parameters(
        links,
        10.0,
        1.0,
        10.0 / 12.0,
        0.0,
    ));
    let rest =
        sparse_equilibrium(&ladder, &ladder.rest(), &EquilibriumSettings::default()).unwrap();
    assert_eq!(rest.stability, Stability::Degenerate { zero: links });
    let modes = sparse_modes(&ladder, &rest, &SparseModeSettings::default()).unwrap();
    assert_eq!(modes.modes.len(), links);
    assert_eq!(modes.zero_modes(), links);
    for (i, mode) in modes.modes.iter().enumerate() {
        check_shape(&ladder, &rest.q, &mode.shape);
        // Distinct: a basis of the zero space, M-orthogonal.
        for other in &modes.modes[..i] {
            let inner = mass_inner(&ladder, &rest.q, &mode.shape, &other.shape);
            assert!(inner.abs() <= 1e-10, "φᵢᵀMφⱼ = {inner:e}");
        }
    }
}

#[test]
fn a_point_that_is_not_an_equilibrium_is_refused() {
    let chain = PendulumChain::new(3, 1.0, 1.0, 1.0);
    let mut rest = sparse_equilibrium(
        &chain,
        &chain_at(&[0.1, 0.2, 0.3], 1.0),
        &EquilibriumSettings::default(),
    )
    .unwrap();
    rest.q = chain_at(&[0.1, 0.0, 0.0], 1.0);
    assert!(matches!(
        sparse_modes(&chain, &rest, &SparseModeSettings::default()),
        Err(LinearizationError::NotAnEquilibrium { .. })
    ));
    assert!(matches!(
        sparse_equilibrium(&chain, &[0.0; 5], &EquilibriumSettings::default()),
        Err(LinearizationError::InvalidModel { .. })
    ));
    assert!(matches!(
        sparse_equilibrium(&chain, &[f64::NAN; 6], &EquilibriumSettings::default()),
        Err(LinearizationError::NonFinite { .. })
    ));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    /// From any guess within 1.2 rad of hanging straight down, the descent finds the rest and
    /// the modes are the angle coordinates' (chains of 2 to 12 equal pendula).
    #[test]
    fn descent_from_random_guesses_finds_the_rest(
        n in 2usize..12,
        m in 0.2f64..5.0,
        l in 0.3f64..3.0,
        angles in proptest::collection::vec(-1.2f64..1.2, 12),
    ) {
        let g = 9.81;
        let chain = PendulumChain::new(n, m, l, g);
        let rest = sparse_equilibrium(&chain, &chain_at(&angles[..n], l), &EquilibriumSettings::default())
            .unwrap();
        prop_assert_eq!(rest.stability, Stability::Minimum);
        let straight = chain_at(&vec![0.0; n], l);
        for (q, expected) in rest.q.iter().zip(&straight) {
            prop_assert!((q - expected).abs() <= 1e-10 * l * n as f64, "{} against {}", q, expected);
        }
        let modes = sparse_modes(&chain, &rest, &SparseModeSettings { count: n, ..SparseModeSettings::default() })
            .unwrap();
        for (mode, expected) in modes.modes.iter().zip(&angle_eigenvalues(n, m, l, g)) {
            prop_assert!(relative(mode.eigenvalue, *expected) <= 1e-10, "ω² {} against {}", mode.eigenvalue, expected);
        }
    }
}

//! Andrews' squeezer (`mechanism::models::Squeezer`, Ascher et al. 1995 Example 3) against the
//! literature: Hairer–Wanner's equations of motion transcribed by hand, their consistent
//! initial values (positions, accelerations and multipliers), and the IVP test set's reference
//! solution at `t = 0.03` (Mazzia–Magherini, `andrews.f`, PSIDE at tolerance 1e-14).

use mechanism::models::Squeezer;
use mechanism::runtime::integrators::stabilized::{
    constrained_acceleration, drift, Baumgarte, Dopri5, PostStabilization, DOPRI5,
};
use mechanism::runtime::{Holonomic, Inertia, SMatrix, SVector, State};

/// Hairer–Wanner's right-hand side `f(q, q̇)` (Solving ODEs II, eq. 7.9), transcribed from
/// `andrews.f`: the driving torque, the quadratic velocity terms and the spring force.
fn hairer_wanner_force(s: &Squeezer, q: &SVector<f64, 7>, v: &SVector<f64, 7>) -> SVector<f64, 7> {
    let [_, theta, gamma, phi, _, omega, _] = [q[0], q[1], q[2], q[3], q[4], q[5], q[6]];
    let [bep, thp, _, php, dep, omp, epp] = [v[0], v[1], v[2], v[3], v[4], v[5], v[6]];
    let (siga, coga) = gamma.sin_cos();
    let xd = s.sd * coga + s.sc * siga + s.xb;
    let yd = s.sd * siga - s.sc * coga + s.yb;
    let length = ((xd - s.xc).powi(2) + (yd - s.yc).powi(2)).sqrt();
    let force = -s.c0 * (length - s.l0) / length;
    let (fx, fy) = (force * (xd - s.xc), force * (yd - s.yc));
    let e_ea = s.e - s.ea;
    let zf_fa = s.zf - s.fa;
    SVector::<f64, 7>::from([
        s.mom - s.m2 * s.da * s.rr * thp * (thp + 2.0 * bep) * theta.sin(),
        s.m2 * s.da * s.rr * bep * bep * theta.sin(),
        fx * (s.sc * coga - s.sd * siga) + fy * (s.sd * coga + s.sc * siga),
        s.m4 * s.zt * e_ea * dep * dep * phi.cos(),
        -s.m4 * s.zt * e_ea * php * (php + 2.0 * dep) * phi.cos(),
        -s.m6 * s.u * zf_fa * epp * epp * omega.cos(),
        s.m6 * s.u * zf_fa * omp * (omp + 2.0 * epp) * omega.cos(),
    ])
}

#[test]
fn initial_values_are_consistent() {
    // The 30-digit values rounded to f64 leave |g| at the rounding of the loop sums (lengths
    // of order 0.05 m, ulp ≈ 7e-18).
    let model = Squeezer::default();
    let d = drift::<_, 7, 6>(&model, &Squeezer::initial_state());
    println!("initial drift: {d:?}");
    assert!(d.position < 1e-16, "{d:?}");
    assert_eq!(d.velocity, 0.0);
}

#[test]
fn initial_accelerations_and_multipliers_are_the_literatures() {
    // `andrews.f` gives q̈(0) = (14222.44…, −10666.83…, 0, …) and λ(0) = (98.566…, −6.1226…,
    // 0, …), with the sign convention M q̈ = f − Gᵀλ of the runtime.
    #[allow(clippy::excessive_precision)]
    let acceleration = [
        14222.4439199541138705911625887,
        -10666.8329399655854029433719415,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
    ];
    #[allow(clippy::excessive_precision)]
    let multipliers = [
        98.5668703962410896057654982170,
        -6.12268834425566265503114393122,
        0.0,
        0.0,
        0.0,
        0.0,
    ];
    let model = Squeezer::default();
    let solved =
        constrained_acceleration::<_, 7, 6>(&model, &Squeezer::initial_state(), Baumgarte::NONE)
            .unwrap();
    println!("q̈(0) = {:?}", solved.acceleration.as_slice());
    println!("λ(0) = {:?}", solved.multipliers.as_slice());
    // The index-1 system is solved with a condition number of about 1e8 (masses 1e-3 kg,
    // lengths 1e-2 m): agreement to ~1e-9 relative to the largest entry is what it allows.
    let error = (solved.acceleration - SVector::from(acceleration)).amax() / 14222.0;
    let lambda_error = (solved.multipliers - SVector::from(multipliers)).amax() / 98.6;
    assert!(error < 1e-9, "q̈(0): relative error {error:e}");
    assert!(lambda_error < 1e-9, "λ(0): relative error {lambda_error:e}");
}

#[test]
fn equations_of_motion_are_hairer_wanners() {
    // M q̈ + Gᵀλ = f of Hairer–Wanner at states with velocities: checks the mass matrix, the
    // velocity terms ∂T/∂q − Ṁ q̇ derived from T, the spring as a potential and the torque
    // as a force.
    let model = Squeezer::default();
    let q0 = Squeezer::INITIAL_POSITIONS;
    for (k, scale) in [(1.0, 0.0), (-0.7, 30.0), (0.4, 500.0)]
        .into_iter()
        .enumerate()
    {
        let (shift, speed) = scale;
        let q: [f64; 7] = std::array::from_fn(|i| q0[i] + shift * (0.1 + 0.05 * i as f64));
        let v: [f64; 7] = std::array::from_fn(|i| speed * (1.0 - 0.3 * i as f64));
        let state = State::new(0.01 * k as f64, q, v);
        let solved = constrained_acceleration::<_, 7, 6>(&model, &state, Baumgarte::NONE).unwrap();
        let mut mass = SMatrix::<f64, 7, 7>::zeros();
        let mut jac = SMatrix::<f64, 6, 7>::zeros();
        model.mass_matrix(&state.q, &mut mass);
        model.constraint_jacobian(&state.q, state.t, &mut jac);
        let f = hairer_wanner_force(&model, &state.q, &state.v);
        let residual = mass * solved.acceleration + jac.transpose() * solved.multipliers - f;
        let relative = residual.amax() / (1e-3 + f.amax());
        println!("state {k}: |M q̈ + Gᵀλ − f_HW| / |f_HW| = {relative:.1e}");
        assert!(relative < 1e-9, "state {k}: {residual}");
    }
}

/// Runs DOPRI5 with S-both² from the initial state to `t = 0.03` at tolerance `tol` (rtol =
/// tol, atol = 0.1 tol) and returns the end state.
fn dopri5_at_0_03(tol: f64) -> State<7> {
    let model = Squeezer::default();
    let mut dopri = Dopri5::<7, 6>::new(DOPRI5, tol, 0.1 * tol)
        .unwrap()
        .with_post_stabilization(PostStabilization::BothTwice);
    let mut state = Squeezer::initial_state();
    let stats = dopri.advance_to(&model, &mut state, 0.03, |_| {}).unwrap();
    println!("TOL = {tol:.0e}: {stats:?}");
    state
}

#[test]
fn dopri5_reaches_the_reference_solution_at_t_0_03() {
    // The reference's largest positions are β, θ ≈ ±16 rad (about 2.5 turns). DOPRI5 with
    // S-both² converges as TOL decreases, to a limit that differs from the reference by
    // 1.4e-9 in β and θ (9e-11 relative) and 2e-11 in the others, the same at TOL = 1e-11,
    // 1e-12 and 1e-13 and without post-stabilization: not our integration error but the
    // reference's own accuracy (PSIDE at tolerance 1e-14 in Cray C90 double precision,
    // 48-bit mantissa). So the bound is 10 TOL relative down to a floor of 2e-10 relative.
    let reference = SVector::<f64, 7>::from(Squeezer::REFERENCE_POSITIONS_AT_0_03);
    let reference_v = SVector::<f64, 7>::from(Squeezer::REFERENCE_VELOCITIES_AT_0_03);
    let scale = reference.amax();
    let mut ends = Vec::new();
    for tol in [1e-6, 1e-8, 1e-10, 1e-12] {
        let end = dopri5_at_0_03(tol);
        assert_eq!(end.t, 0.03);
        let error = (end.q - reference).amax();
        let error_v = (end.v - reference_v).amax() / reference_v.amax();
        println!(
            "TOL = {tol:.0e}: max |q − q_ref| = {error:.2e}, relative |v − v_ref| = {error_v:.2e}"
        );
        assert!(
            error < (10.0 * tol).max(2e-10) * scale,
            "TOL = {tol:e}: {error:e}"
        );
        ends.push(end.q);
    }
    // Our own limit is converged far below the difference to the reference.
    let self_difference = (ends[3] - ends[2]).amax();
    println!("|q(TOL = 1e-12) − q(TOL = 1e-10)| = {self_difference:.1e}");
    assert!(self_difference < 1e-10, "{self_difference:e}");
    assert_eq!(<Squeezer as Holonomic<7, 6>>::CONSTRAINTS.len(), 6);
}

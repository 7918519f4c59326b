//! `ten_steps!`, shared by `tests/it/compiled_integrators.rs` and the models that must compile
//! without warnings (`tests/it/warning_free/`): steps a generated model with every integrator family it is
//! compiled for. The macro names `::mechanism`, so a crate that expands it depends on `mechanism`.

/// Asserts that `$Model::INTEGRATORS` is exactly `[$family, …]` and steps `$state` ten times
/// with the runtime types of every family at the step size `h` (`penalty: true` runs the penalty families through
/// `Penalized`, for models with holonomic constraints). `<N, M, K>` are the numbers of
/// coordinates, holonomic and nonholonomic rows. Every step must return `Ok`: the compile-time
/// checks promised that the model can be stepped.
#[macro_export]
macro_rules! ten_steps {
    ($Model:ty, $state:expr, <$n:literal, $m:literal, $k:literal>, h: $h:expr, penalty: $penalty:tt,
     [$($family:ident),* $(,)?]) => {{
        let expected = [$(
            ::mechanism::runtime::capabilities::Family::from_name(stringify!($family))
                .expect("a family name")
        ),*];
        assert_eq!(<$Model>::INTEGRATORS, &expected[..], "the families {} is compiled for", stringify!($Model));
        $( $crate::ten_steps!(@family $family, $Model, $state, $h, <$n, $m, $k>, $penalty); )*
    }};
    (@run $name:expr, $integrator:expr, $model:expr, $state:expr) => {{
        use ::mechanism::runtime::Integrator as _;
        let mut integrator = $integrator.expect("a valid step size");
        let model = $model;
        let mut state = $state;
        for step in 0..10 {
            if let Err(error) = integrator.step(&model, &mut state) {
                panic!("{}: step {step} of `{}` failed: {error}", stringify!($model), $name);
            }
        }
    }};
    (@penalized true, $name:expr, $integrator:expr, $Model:ty, $state:expr) => {
        $crate::ten_steps!(@run $name, $integrator,
            ::mechanism::runtime::Penalized::new(<$Model>::new(), 30.0), $state)
    };
    (@penalized false, $name:expr, $integrator:expr, $Model:ty, $state:expr) => {
        $crate::ten_steps!(@run $name, $integrator, <$Model>::new(), $state)
    };
    (@family spook, $Model:ty, $state:expr, $h:expr, <$n:literal, $m:literal, $k:literal>, $p:tt) => {
        $crate::ten_steps!(@run "spook", ::mechanism::runtime::Spook::<$n, $m, $k>::new($h), <$Model>::new(), $state)
    };
    (@family zs, $Model:ty, $state:expr, $h:expr, <$n:literal, $m:literal, $k:literal>, $p:tt) => {
        $crate::ten_steps!(@penalized $p, "zs", ::mechanism::runtime::ZhangSkeel::<$n>::new($h), $Model, $state)
    };
    (@family zss, $Model:ty, $state:expr, $h:expr, <$n:literal, $m:literal, $k:literal>, $p:tt) => {
        $crate::ten_steps!(@penalized $p, "zss", ::mechanism::runtime::ZhangSkeelSimplified::<$n>::new($h), $Model, $state)
    };
    (@family zss_stiff, $Model:ty, $state:expr, $h:expr, <$n:literal, $m:literal, $k:literal>, $p:tt) => {
        $crate::ten_steps!(@penalized $p, "zss_stiff", ::mechanism::runtime::ZhangSkeelStiff::<$n>::new($h), $Model, $state)
    };
    (@family newmark, $Model:ty, $state:expr, $h:expr, <$n:literal, $m:literal, $k:literal>, $p:tt) => {
        $crate::ten_steps!(@penalized $p, "newmark", ::mechanism::runtime::Newmark::<$n>::new($h), $Model, $state)
    };
    (@family newmark_1, $Model:ty, $state:expr, $h:expr, <$n:literal, $m:literal, $k:literal>, $p:tt) => {
        $crate::ten_steps!(@penalized $p, "newmark_1", ::mechanism::runtime::NewmarkOneIteration::<$n>::new($h), $Model, $state)
    };
    (@family pf_newmark, $Model:ty, $state:expr, $h:expr, <$n:literal, $m:literal, $k:literal>, $p:tt) => {
        $crate::ten_steps!(@penalized $p, "pf_newmark", ::mechanism::runtime::PushForwardNewmark::<$n>::new($h), $Model, $state)
    };
    (@family symplectic_euler, $Model:ty, $state:expr, $h:expr, <$n:literal, $m:literal, $k:literal>, $p:tt) => {
        $crate::ten_steps!(@penalized $p, "symplectic_euler", ::mechanism::runtime::SymplecticEuler::<$n>::new($h), $Model, $state)
    };
    (@family verlet, $Model:ty, $state:expr, $h:expr, <$n:literal, $m:literal, $k:literal>, $p:tt) => {
        $crate::ten_steps!(@penalized $p, "verlet", ::mechanism::runtime::Verlet::<$n>::new($h), $Model, $state)
    };
    (@family livens, $Model:ty, $state:expr, $h:expr, <$n:literal, $m:literal, $k:literal>, $p:tt) => {
        $crate::ten_steps!(@run "livens", ::mechanism::runtime::Livens::<$n, $m>::new($h), <$Model>::new(), $state)
    };
    (@family shake, $Model:ty, $state:expr, $h:expr, <$n:literal, $m:literal, $k:literal>, $p:tt) => {
        $crate::ten_steps!(@run "shake", ::mechanism::runtime::Shake::<$n, $m>::new($h), <$Model>::new(), $state)
    };
    (@family rattle, $Model:ty, $state:expr, $h:expr, <$n:literal, $m:literal, $k:literal>, $p:tt) => {
        $crate::ten_steps!(@run "rattle", ::mechanism::runtime::Rattle::<$n, $m>::new($h), <$Model>::new(), $state)
    };
    (@family rk, $Model:ty, $state:expr, $h:expr, <$n:literal, $m:literal, $k:literal>, $p:tt) => {
        $crate::ten_steps!(@run "rk", ::mechanism::runtime::StabilizedRk::<$n, $m, 4>::new(
            ::mechanism::runtime::integrators::stabilized::RK4, $h), <$Model>::new(), $state)
    };
    (@family dlda, $Model:ty, $state:expr, $h:expr, <$n:literal, $m:literal, $k:literal>, $p:tt) => {{
        $crate::ten_steps!(@run "dlda", ::mechanism::runtime::DiscreteLagrangeDAlembert::<$n, $k>::new($h), <$Model>::new(), $state);
        $crate::ten_steps!(@run "dlda (Cortés–Martínez)", ::mechanism::runtime::CortesMartinez::<$n, $k>::new($h), <$Model>::new(), $state);
    }};
}

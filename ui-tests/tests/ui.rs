//! Compile-error tests: each file under `tests/ui/` is one mistake with its expected message;
//! each file under `tests/pass/` is a model that must compile (and run) without warnings.
//!
//! The two kinds run as two trybuild projects, one after the other. A project with only
//! compile-fail cases is type-checked (`cargo check`) in one cargo invocation for all of them,
//! in parallel; a project with a pass case is built and linked, case by case, with the
//! dependencies compiled to code (trybuild decides this per project). Mixing the kinds would
//! build and link every one of the compile-fail cases too, one at a time.

#[test]
fn ui() {
    let compile_fail = trybuild::TestCases::new();
    compile_fail.compile_fail("tests/ui/**/*.rs");
    // Runs the compile-fail project now (trybuild runs a project when it is dropped).
    drop(compile_fail);

    let pass = trybuild::TestCases::new();
    pass.pass("tests/pass/*.rs");
}

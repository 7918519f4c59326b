//! Compile-error tests: each file under `tests/ui/` is one mistake with its expected message;
//! each file under `tests/pass/` is a model that must compile (and run) without warnings.

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/**/*.rs");
    cases.pass("tests/pass/*.rs");
}

//! Compile-error tests: each file under `tests/ui/` is one mistake with its expected message.

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/**/*.rs");
}

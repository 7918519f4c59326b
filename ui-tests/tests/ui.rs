//! Compile-error tests: each file under `tests/ui/` is one mistake with its expected message.
//! The models that must compile without warnings and step are modules of the root's test
//! binary (`tests/it/warning_free/`): with no pass case here, trybuild checks every case in one
//! `cargo check --keep-going` instead of building them one at a time.

#[test]
fn ui() {
    trybuild::TestCases::new().compile_fail("tests/ui/**/*.rs");
}

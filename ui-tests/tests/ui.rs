//! Compile-error tests: each file under `tests/ui/` is one mistake with its expected message.
//! The models that must compile without warnings and step are modules of the root's test
//! binary (`tests/it/warning_free/`): with no pass case here, trybuild checks every case in one
//! `cargo check --keep-going` instead of building them one at a time.
//!
//! trybuild compiles the cases as a crate of its own in `target/tests/trybuild/mechanism-ui-tests/`,
//! which is the manifest directory a `urdf: { file: .. }` is relative to: the cases of
//! `tests/ui/urdf/` reach their robots in `tests/urdf/` by `../../../../ui-tests/tests/urdf/`.

#[test]
fn ui() {
    trybuild::TestCases::new().compile_fail("tests/ui/**/*.rs");
}

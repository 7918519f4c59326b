//! Snapshots of the pretty-printed expansion of a few of the library's models, read as data
//! from `src/models/*.rs`: a change to the generated code shows up as a snapshot diff in review
//! (`cargo insta review`, or `INSTA_UPDATE=always` to accept).

use proc_macro2::TokenStream;

use crate::models::families::{family_models, mechanism_bodies};

/// Returns the whole expansion of `body` (the model and its identity), pretty-printed.
fn expanded(body: TokenStream) -> String {
    let tokens = mechanism_dsl::expand(body);
    let file: syn::File = syn::parse2(tokens).expect("the expansion is a Rust file");
    prettyplease::unparse(&file)
}

/// Returns the `index`-th `mechanism!` body of the library's model file `source`.
fn body(source: &str, index: usize) -> TokenStream {
    mechanism_bodies(source)
        .into_iter()
        .nth(index)
        .expect("the model file has this many mechanism! invocations")
}

#[test]
fn double_pendulum() {
    let source = include_str!("../../../../src/models/double_pendulum.rs");
    insta::assert_snapshot!(expanded(body(source, 0)));
}

#[test]
fn chain_family_of_ten_links() {
    let [chain, _] = family_models(10, 10);
    insta::assert_snapshot!(expanded(chain));
}

#[test]
fn ladder_family() {
    let source = include_str!("../../../../src/models/families.rs");
    insta::assert_snapshot!(expanded(body(source, 1)));
}

#[test]
fn water_cluster_with_pair_sums() {
    let source = include_str!("../../../../src/models/water.rs");
    insta::assert_snapshot!(expanded(body(source, 0)));
}

#[test]
fn free_rigid_body_with_an_orientation() {
    let source = include_str!("../../../../src/models/rigid_body.rs");
    insta::assert_snapshot!(expanded(body(source, 0)));
}

#[test]
fn nonholonomic_particle() {
    let source = include_str!("../../../../src/models/nonholonomic_particle.rs");
    insta::assert_snapshot!(expanded(body(source, 0)));
}

#[test]
fn rolling_sphere_with_an_orientation_and_nonholonomic_constraints() {
    let source = include_str!("../../../../src/models/rolling_sphere.rs");
    insta::assert_snapshot!(expanded(body(source, 0)));
}

#[test]
fn chain_family_with_parameter_families_and_hessians() {
    let source = include_str!("../../../../src/models/varied_chain.rs");
    insta::assert_snapshot!(expanded(body(source, 0)));
}

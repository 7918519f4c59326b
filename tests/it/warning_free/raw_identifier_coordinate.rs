//! A coordinate and a parameter named with Rust keywords, written as raw identifiers (`r#type`,
//! `r#in`), compile and step, and the coordinate is named `type` (without `r#`) in the model's
//! coordinate names.
#![deny(warnings)]

use mechanism::mechanism;
use mechanism::runtime::Configuration;

mechanism! {
    /// A harmonic oscillator whose coordinate is called `type`.
    pub struct Keyword {
        coordinates: [r#type],
        parameters: { r#in = 2.0 },
        kinetic: 0.5 * dot(r#type).powi(2),
        potential: 0.5 * r#in * r#type.powi(2),
    }
}

use mechanism_test_support::ten_steps;

#[test]
fn compiles_without_warnings_and_steps() {
    assert_eq!(Keyword::new().r#in, 2.0);
    assert_eq!(<Keyword as Configuration<1>>::COORDINATES, ["type"]);
    ten_steps!(Keyword, mechanism::runtime::State::new(0.0, [0.1], [0.0]),
        <1, 0, 0>, h: 0.01, penalty: false, [spook, zss, zs]);
}

//! Models that must compile without a single warning in the user's code and step: each file is
//! one model (or two) under `#![deny(warnings)]`, so a lint the expansion raises (an unused
//! variable, a non-snake-case name, an unused import it needs) fails the build of this binary.
//! With `ui-tests/` (the compile errors), the language's acceptance cases: every section at
//! least once, a Lagrangian with a varying mass, non-smooth potentials, nonholonomic rows,
//! redundant rows and a singular mass matrix with the schemes that accept them, and a raw
//! identifier as a coordinate. Each also steps ten times with every integrator family it is
//! compiled for (`mechanism_test_support::ten_steps!`).
//!
//! These were trybuild pass cases; trybuild builds a pass case as a binary of its own, one at a
//! time, after building every dependency in its debug profile (about 90 s of the `ui` test),
//! where here they are modules of a binary that is built anyway.

mod every_section;
mod lagrangian_with_varying_mass;
mod non_smooth_with_spook;
mod nonholonomic_with_spook;
mod raw_identifier_coordinate;
mod redundant_constraints_with_spook;
mod singular_mass_with_livens;

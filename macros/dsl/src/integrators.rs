//! The integrators a model can be compiled for: the runtime's capability table
//! ([`mechanism_capabilities`]), which every check, hint and default of the macro reads.

pub use mechanism_capabilities::{Capabilities, Family};
use syn::Ident;

/// Looks a name of `integrators: [..]` up.
pub fn from_ident(ident: &Ident) -> Option<Family> {
    Family::from_name(&ident.to_string())
}

/// Returns the message for a name that is no family: what it is part of when it names a
/// runtime scheme or tableau (`dopri5` → `rk`), otherwise the list of names.
pub fn unknown(ident: &Ident) -> String {
    match Family::containing(&ident.to_string()) {
        Some((family, scheme)) => format!(
            "`{ident}` is not a name of `integrators: [..]`: `{scheme}` is part of `{}`; write `{}` (its runtime types: {})",
            family.name(),
            family.name(),
            family
                .schemes()
                .iter()
                .map(|s| format!("`{s}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        None => format!(
            "unknown integrator `{ident}`; expected one of: {}",
            Family::list(Family::ALL)
        ),
    }
}

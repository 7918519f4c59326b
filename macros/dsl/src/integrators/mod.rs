//! The integrators a model can be compiled for: the runtime's capability table
//! ([`mechanism_capabilities`]), which every check, hint and default of the macro reads.
//! [`requested`] resolves `integrators: [..]` for both kinds of model; [`fit`] measures which
//! families fit a fixed-size model and chooses its default set ([`fit::choose`]), the stage
//! after validation.

pub mod fit;

pub use mechanism_capabilities::{Capabilities, Family, OtherScheme};
use proc_macro2::Span;
use syn::Ident;

use crate::ast::Named;
use crate::errors::Errors;
use crate::sections::{self, ModelKind};

/// Looks a name of `integrators: [..]` up.
pub fn from_ident(ident: &Ident) -> Option<Family> {
    Family::from_name(&ident.to_string())
}

/// Returns the message for a name that is no family: what it is part of when it names a
/// runtime scheme or tableau (`dopri5` → `rk`), what it steps when it names a scheme that is no
/// family's (`langevin`, `lie_group_euler`), otherwise the list of names.
pub fn unknown(ident: &Ident) -> String {
    if let Some(scheme) = OtherScheme::named(&ident.to_string()) {
        return format!(
            "`{ident}` is not a name of `integrators: [..]`: `{}` {}",
            scheme.name, scheme.steps
        );
    }
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

/// Returns the families that can step a model of `kind`: every family for a fixed-size model;
/// for a model with families, those of the runtime table with a sparse tier
/// ([`Family::sparse`]), which are also its default set.
pub fn supported(kind: ModelKind) -> Vec<Family> {
    match kind {
        ModelKind::Fixed => Family::ALL.to_vec(),
        ModelKind::Families => Family::sparse().collect(),
    }
}

/// Resolves `integrators: [..]` (whose value is at `span`) for a model of `kind`, the one
/// resolution of both kinds: reports, at the name, an unknown integrator ([`unknown`]), one
/// listed twice, and one that cannot step a model of this kind ([`supported`]); and an empty
/// list. Returns the families with the names that requested them, or `None` when the section
/// is absent (the caller picks the default set).
pub fn requested(
    names: Option<&[Named<()>]>,
    span: Option<Span>,
    kind: ModelKind,
    errors: &mut Errors,
) -> Option<Vec<(Family, Ident)>> {
    let names = names?;
    let supported = supported(kind);
    let mut requested: Vec<(Family, Ident)> = Vec::new();
    for named in names {
        match from_ident(&named.name) {
            Some(family) if requested.iter().any(|(f, _)| *f == family) => errors.error_spanned(
                &named.name,
                format!("integrator `{}` is listed twice", named.name),
            ),
            Some(family) if !supported.contains(&family) => errors.error_spanned(
                &named.name,
                format!(
                    "`{}` does not step models with families yet; use {}",
                    named.name,
                    Family::list(supported.iter().copied())
                ),
            ),
            Some(family) => requested.push((family, named.name.clone())),
            None => errors.error_spanned(&named.name, unknown(&named.name)),
        }
    }
    if names.is_empty() {
        sections::empty_integrators(span.unwrap_or_else(Span::call_site), errors);
    }
    Some(requested)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ident(name: &str) -> Ident {
        Ident::new(name, Span::call_site())
    }

    /// A scheme that is no family's is explained, not listed among the unknown names.
    #[test]
    fn a_wrapper_or_lie_group_scheme_says_what_it_steps() {
        let langevin = unknown(&ident("langevin"));
        assert!(
            langevin.starts_with("`langevin` is not a name"),
            "{langevin}"
        );
        assert!(langevin.contains("wraps the integrator"), "{langevin}");
        let lie = unknown(&ident("lie_group_euler"));
        assert!(
            lie.contains("`LieGroupEuler` steps a rigid body on SO(3)"),
            "{lie}"
        );
        assert!(lie.contains("orientations: { r: matrix }"), "{lie}");
        let sparse = unknown(&ident("sparse_rattle"));
        assert!(
            sparse.contains("`SparseRattle` is part of `rattle`"),
            "{sparse}"
        );
        assert!(unknown(&ident("banana")).starts_with("unknown integrator `banana`"));
    }

    /// The families a model with families may name are those with a sparse tier.
    #[test]
    fn family_models_take_the_families_with_a_sparse_tier() {
        let sparse = supported(ModelKind::Families);
        assert!(sparse.contains(&Family::Newmark1) && !sparse.contains(&Family::Livens));
        assert_eq!(supported(ModelKind::Fixed).len(), Family::ALL.len());
    }
}

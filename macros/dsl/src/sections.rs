//! The one reader of a model's sections: sorts them by kind, each at most once, reporting
//! unknown, repeated and (in a model with families) not yet available sections at their
//! keywords. Validation and the resolution of a model with families both start from it.

use std::collections::HashMap;

use syn::{Expr, Ident};

use crate::ast::{Mechanism, Named, SectionBody};
use crate::errors::Errors;
use crate::parse::SectionKind;

/// Which kind of model the sections are read for, which decides the sections it takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModelKind {
    /// A fixed-size model: every section (after the orientations are desugared).
    Fixed,
    /// A model with families: the sections [`FAMILY_SECTIONS`] lists.
    Families,
}

impl ModelKind {
    /// Returns the kind of `ast`: with families if it has a `sizes` section or an indexed
    /// declaration (`x[N]`, `m[N] = …`, `rod[i in 1..N]: …`), otherwise fixed-size.
    pub fn of(ast: &Mechanism) -> ModelKind {
        let families = ast.sections.iter().any(|section| {
            section.keyword == SectionKind::Sizes.keyword()
                || match &section.body {
                    SectionBody::Names(names) => names.iter().any(|n| n.index.is_some()),
                    SectionBody::Rows(rows) | SectionBody::Assignments(rows) => {
                        rows.iter().any(|n| n.index.is_some())
                    }
                    _ => false,
                }
        });
        if families {
            ModelKind::Families
        } else {
            ModelKind::Fixed
        }
    }
}

/// The sections a model with families takes.
pub const FAMILY_SECTIONS: [SectionKind; 8] = [
    SectionKind::Sizes,
    SectionKind::Coordinates,
    SectionKind::Parameters,
    SectionKind::Kinetic,
    SectionKind::Potential,
    SectionKind::Holonomic,
    SectionKind::Integrators,
    SectionKind::Derivatives,
];

/// The sections of a model, sorted by kind, each at most once.
#[derive(Default)]
pub struct Sections<'a> {
    /// `sizes: { N = 10, … }`.
    pub sizes: Option<&'a [Named<Expr>]>,
    /// `coordinates: [x, y, …]`.
    pub coordinates: Option<&'a [Named<()>]>,
    /// `parameters: { m = 1.0, … }`.
    pub parameters: Option<&'a [Named<Expr>]>,
    /// `kinetic: …`.
    pub kinetic: Option<&'a Expr>,
    /// `potential: …`.
    pub potential: Option<&'a Expr>,
    /// `lagrangian: …`.
    pub lagrangian: Option<&'a Expr>,
    /// `holonomic: { name: …, … }`.
    pub holonomic: Option<&'a [Named<Expr>]>,
    /// `nonholonomic: { name: …, … }`.
    pub nonholonomic: Option<&'a [Named<Expr>]>,
    /// `dissipation: …`.
    pub dissipation: Option<&'a Expr>,
    /// `forces: { coordinate: …, … }`.
    pub forces: Option<&'a [Named<Expr>]>,
    /// `integrators: [spook, …]`.
    pub integrators: Option<&'a [Named<()>]>,
    /// `derivatives: [hessians]`.
    pub derivatives: Option<&'a [Named<()>]>,
    /// The keyword of each section given.
    pub keywords: HashMap<SectionKind, &'a Ident>,
    /// The span of each section's value (`Section::value_span`).
    pub values: HashMap<SectionKind, proc_macro2::Span>,
}

impl Sections<'_> {
    /// Records `message` at the kinetic energy (or the Lagrangian), else at the model's name.
    pub fn error_at_energy(&self, name: &Ident, errors: &mut Errors, message: String) {
        match self.kinetic.or(self.lagrangian) {
            Some(expr) => errors.error_spanned(expr, message),
            None => errors.error_spanned(name, message),
        }
    }
}

/// Reads the sections of `ast` for a model of kind `kind`, sorted by kind; reports unknown and
/// repeated sections, and sections a model of this kind does not take, at their keywords.
pub fn read<'a>(ast: &'a Mechanism, kind: ModelKind, errors: &mut Errors) -> Sections<'a> {
    let mut sections = Sections::default();
    let model = kind;
    for section in &ast.sections {
        let Some(kind) = SectionKind::from_keyword(&section.keyword) else {
            let known: Vec<&str> = SectionKind::ALL.iter().map(|k| k.keyword()).collect();
            errors.error_spanned(
                &section.keyword,
                format!(
                    "unknown section `{}`; expected one of: {}",
                    section.keyword,
                    known.join(", ")
                ),
            );
            continue;
        };
        if model == ModelKind::Families && !FAMILY_SECTIONS.contains(&kind) {
            // Every section but `sizes`, which made it a model with families.
            let mut taken: Vec<String> = FAMILY_SECTIONS[1..]
                .iter()
                .map(|k| format!("`{}`", k.keyword()))
                .collect();
            let last = taken.pop().unwrap_or_default();
            errors.error_spanned(
                &section.keyword,
                format!(
                    "section `{}` is not available in a model with families yet; a model \
                     with `sizes` takes {} and {last}",
                    section.keyword,
                    taken.join(", ")
                ),
            );
            continue;
        }
        sections.values.entry(kind).or_insert(section.value_span);
        if sections.keywords.insert(kind, &section.keyword).is_some() {
            errors.error_spanned(
                &section.keyword,
                format!(
                    "section `{}` is given twice; merge them into one",
                    section.keyword
                ),
            );
            continue;
        }
        match (kind, &section.body) {
            (SectionKind::Coordinates, SectionBody::Names(names)) => {
                sections.coordinates = Some(names)
            }
            (SectionKind::Integrators, SectionBody::Names(names)) => {
                sections.integrators = Some(names)
            }
            (SectionKind::Derivatives, SectionBody::Names(names)) => {
                sections.derivatives = Some(names)
            }
            (SectionKind::Sizes, SectionBody::Assignments(rows)) => sections.sizes = Some(rows),
            (SectionKind::Parameters, SectionBody::Assignments(rows)) => {
                sections.parameters = Some(rows)
            }
            (SectionKind::Holonomic, SectionBody::Rows(rows)) => sections.holonomic = Some(rows),
            (SectionKind::Nonholonomic, SectionBody::Rows(rows)) => {
                sections.nonholonomic = Some(rows)
            }
            (SectionKind::Forces, SectionBody::Rows(rows)) => sections.forces = Some(rows),
            (SectionKind::Kinetic, SectionBody::Expr(e)) => sections.kinetic = Some(e),
            (SectionKind::Potential, SectionBody::Expr(e)) => sections.potential = Some(e),
            (SectionKind::Lagrangian, SectionBody::Expr(e)) => sections.lagrangian = Some(e),
            (SectionKind::Dissipation, SectionBody::Expr(e)) => sections.dissipation = Some(e),
            _ => errors.error_spanned(
                &section.keyword,
                "internal: section parsed with the wrong shape",
            ),
        }
    }
    sections
}

/// Reports an empty `coordinates: []` at the empty list (`example`: what to write in it).
pub fn empty_coordinates(span: proc_macro2::Span, example: &str, errors: &mut Errors) {
    errors.error_at(
        span,
        format!("`coordinates` lists no coordinate; a mechanism needs at least one, e.g. `coordinates: {example}`"),
    );
}

/// Reports an empty `integrators: []` at the empty list.
pub fn empty_integrators(span: proc_macro2::Span, errors: &mut Errors) {
    errors.error_at(
        span,
        "`integrators: []` lists no integrator; name at least one, or remove the section for the default set",
    );
}

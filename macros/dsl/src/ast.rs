//! The spanned syntax tree of a `mechanism!` invocation, before any semantic check.

use syn::{Attribute, Expr, Ident, Visibility};

/// A whole `mechanism! { /// docs  pub struct Name { sections } }` invocation.
pub struct Mechanism {
    /// Outer attributes, doc comments included; they are copied onto the generated struct.
    pub attrs: Vec<Attribute>,
    /// Visibility of the generated struct.
    pub vis: Visibility,
    /// The `struct` keyword, kept for spans.
    pub struct_token: syn::Token![struct],
    /// The model's type name.
    pub name: Ident,
    /// The sections, in source order.
    pub sections: Vec<Section>,
}

/// One `keyword: value` entry of the model body.
pub struct Section {
    /// The section keyword (`coordinates`, `potential`, …).
    pub keyword: Ident,
    /// What follows the colon.
    pub body: SectionBody,
}

/// The value of a section, by shape.
pub enum SectionBody {
    /// `[a, b, c]`: coordinate names.
    Names(Vec<Named<()>>),
    /// `{ name = value, … }`: parameters with defaults.
    Assignments(Vec<Named<Expr>>),
    /// `{ name: expr, … }`: named rows (constraints).
    Rows(Vec<Named<Expr>>),
    /// A single expression (energies, Lagrangian).
    Expr(Expr),
    /// The value of an unknown section, as written (reported by validation).
    Unknown(proc_macro2::TokenStream),
}

/// A name with its attributes (doc comments) and a payload.
pub struct Named<T> {
    /// Attributes written before the name.
    pub attrs: Vec<Attribute>,
    /// The name.
    pub name: Ident,
    /// What the name stands for.
    pub value: T,
}

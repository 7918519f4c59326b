//! The spanned syntax tree of a `mechanism!` invocation, before any semantic check.

use syn::{Attribute, Expr, Ident, Visibility};

/// A whole `mechanism! { /// docs  pub struct Name { sections } }` invocation.
#[derive(Clone)]
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
#[derive(Clone)]
pub struct Section {
    /// The section keyword (`coordinates`, `potential`, …).
    pub keyword: Ident,
    /// What follows the colon.
    pub body: SectionBody,
    /// The span of what follows the colon (the whole `[…]` of a list), for errors about the
    /// value as a whole, such as an empty list.
    pub value_span: proc_macro2::Span,
}

/// The value of a section, by shape.
#[derive(Clone)]
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
#[derive(Clone)]
pub struct Named<T> {
    /// Attributes written before the name.
    pub attrs: Vec<Attribute>,
    /// The name.
    pub name: Ident,
    /// The bracket after the name, if any: `x[N]` declares a family, `rod[i in 1..N]` a row
    /// family.
    pub index: Option<Index>,
    /// What the name stands for.
    pub value: T,
}

/// What the brackets after a declared name say.
#[derive(Clone)]
pub enum Index {
    /// `x[N]`: a family of `N` members (coordinates or parameters); `N` names a size.
    Size {
        /// The bracket, for spans.
        bracket: syn::token::Bracket,
        /// The size expression.
        size: Expr,
    },
    /// `rod[i in 1..N if (i % 3) == 0, p = i - 2]`: a family of rows, one instance per value
    /// of `i` in the range that passes the filter, with index bindings.
    Rows(Box<RowFamily>),
}

/// The header of a row family: `i in RANGE`, an optional filter `if COND` and bindings
/// `p = EXPR` evaluated per instance.
#[derive(Clone)]
pub struct RowFamily {
    /// The bracket, for spans.
    pub bracket: syn::token::Bracket,
    /// The index variable.
    pub index: Ident,
    /// The range of the index, `a..b` (half-open).
    pub range: Expr,
    /// The filter, if any.
    pub filter: Option<Expr>,
    /// Index bindings `name = expr`, in order; each may use the index and earlier bindings.
    pub bindings: Vec<(Ident, Expr)>,
}

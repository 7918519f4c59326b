//! Parses the tokens of `mechanism!` into the spanned [`ast`](crate::ast). No semantic checks
//! happen here: an unknown section is kept as tokens and reported by validation, so
//! that every mistake of a model shows up in one build.

use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{braced, bracketed, Attribute, Expr, Ident, Token};

use crate::ast::{Index, Mechanism, Named, RowFamily, Section, SectionBody};

/// The shape of value each known section keyword takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SectionKind {
    /// `coordinates: [x, y]`.
    Coordinates,
    /// `parameters: { m = 1.0 }`.
    Parameters,
    /// `kinetic: expr`.
    Kinetic,
    /// `potential: expr`.
    Potential,
    /// `lagrangian: expr`.
    Lagrangian,
    /// `holonomic: { name: expr }`.
    Holonomic,
    /// `nonholonomic: { name: expr }`, each row affine in the velocities.
    Nonholonomic,
    /// `dissipation: expr`, a Rayleigh function.
    Dissipation,
    /// `forces: { coordinate: expr }`.
    Forces,
    /// `integrators: [spook, zss]`.
    Integrators,
    /// `derivatives: [hessians]`: derived quantities generated beyond what the integrators
    /// need ([`crate::derivatives`]).
    Derivatives,
    /// `sizes: { N = 10 }`: the sizes of families, run-time values with defaults.
    Sizes,
    /// `orientations: { q: quaternion, r: matrix }`: rigid-body orientations, desugared by
    /// [`orientation`](crate::orientation) into coordinates and constraints.
    Orientations,
    /// `urdf: { file: "robot.urdf", .. }`: a robot imported from a URDF file by
    /// [`urdf`](crate::urdf) into coordinates, energies, rows and dissipation.
    Urdf,
}

impl SectionKind {
    /// Every known section, in the order the documentation lists them.
    pub const ALL: [SectionKind; 14] = [
        SectionKind::Sizes,
        SectionKind::Urdf,
        SectionKind::Coordinates,
        SectionKind::Orientations,
        SectionKind::Parameters,
        SectionKind::Kinetic,
        SectionKind::Potential,
        SectionKind::Lagrangian,
        SectionKind::Holonomic,
        SectionKind::Nonholonomic,
        SectionKind::Dissipation,
        SectionKind::Forces,
        SectionKind::Integrators,
        SectionKind::Derivatives,
    ];

    /// Returns the keyword that introduces this section.
    pub fn keyword(self) -> &'static str {
        match self {
            SectionKind::Coordinates => "coordinates",
            SectionKind::Parameters => "parameters",
            SectionKind::Kinetic => "kinetic",
            SectionKind::Potential => "potential",
            SectionKind::Lagrangian => "lagrangian",
            SectionKind::Holonomic => "holonomic",
            SectionKind::Nonholonomic => "nonholonomic",
            SectionKind::Dissipation => "dissipation",
            SectionKind::Forces => "forces",
            SectionKind::Integrators => "integrators",
            SectionKind::Derivatives => "derivatives",
            SectionKind::Sizes => "sizes",
            SectionKind::Orientations => "orientations",
            SectionKind::Urdf => "urdf",
        }
    }

    /// Looks a keyword up.
    pub fn from_keyword(keyword: &Ident) -> Option<SectionKind> {
        SectionKind::ALL
            .into_iter()
            .find(|kind| keyword == kind.keyword())
    }
}

impl Parse for Mechanism {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let attrs = input.call(Attribute::parse_outer)?;
        let vis = input.parse()?;
        let struct_token = input.parse()?;
        let name = input.parse()?;
        let content;
        braced!(content in input);
        let sections = Punctuated::<Section, Token![,]>::parse_terminated(&content)?
            .into_iter()
            .collect();
        Ok(Mechanism {
            attrs,
            vis,
            struct_token,
            name,
            sections,
        })
    }
}

impl Parse for Section {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let keyword: Ident = input.call(syn::ext::IdentExt::parse_any)?;
        input.parse::<Token![:]>()?;
        let mut value_span = input.span();
        let body = match SectionKind::from_keyword(&keyword) {
            Some(
                kind @ (SectionKind::Coordinates
                | SectionKind::Integrators
                | SectionKind::Derivatives),
            ) => {
                let content;
                value_span = bracketed!(content in input).span.join();
                let parser: fn(ParseStream) -> syn::Result<Named<()>> = match kind {
                    SectionKind::Coordinates => {
                        |input| parse_listed(input, SectionKind::Coordinates)
                    }
                    SectionKind::Derivatives => {
                        |input| parse_listed(input, SectionKind::Derivatives)
                    }
                    _ => |input| parse_listed(input, SectionKind::Integrators),
                };
                let names =
                    Punctuated::<Named<()>, Token![,]>::parse_terminated_with(&content, parser)?;
                SectionBody::Names(names.into_iter().collect())
            }
            Some(SectionKind::Parameters | SectionKind::Sizes) => {
                SectionBody::Assignments(parse_named_block::<Token![=]>(input)?)
            }
            Some(
                SectionKind::Holonomic
                | SectionKind::Nonholonomic
                | SectionKind::Forces
                | SectionKind::Orientations,
            ) => SectionBody::Rows(parse_named_block::<Token![:]>(input)?),
            Some(SectionKind::Urdf) if input.peek(syn::token::Brace) => {
                SectionBody::Rows(parse_named_block::<Token![:]>(input)?)
            }
            Some(
                SectionKind::Urdf
                | SectionKind::Kinetic
                | SectionKind::Potential
                | SectionKind::Lagrangian
                | SectionKind::Dissipation,
            ) => SectionBody::Expr(input.parse()?),
            None => {
                // Whatever its shape (`{ … }`, `[ … ]`, an expression), the value of an
                // unknown section is kept as tokens up to the next `,`, so that validation
                // reports the section's name rather than a parse error inside its value.
                let mut tokens = proc_macro2::TokenStream::new();
                while !input.is_empty() && !input.peek(Token![,]) {
                    tokens.extend([input.parse::<proc_macro2::TokenTree>()?]);
                }
                SectionBody::Unknown(tokens)
            }
        };
        Ok(Section {
            keyword,
            body,
            value_span,
        })
    }
}

/// Parses one entry of `coordinates: [..]` or `integrators: [..]` (a section of `kind`).
fn parse_listed(input: ParseStream, kind: SectionKind) -> syn::Result<Named<()>> {
    Ok(Named {
        attrs: input.call(Attribute::parse_outer)?,
        name: parse_declared_name(input, kind)?,
        index: parse_index(input)?,
        value: (),
    })
}

/// Parses a name of `coordinates: [..]` or `integrators: [..]`. A Rust keyword naming a
/// coordinate (`type`) is an error that says to write it as a raw identifier (`r#type`), which
/// the whole pipeline accepts (its name in `COORDINATES` and in messages is `type`), or, for
/// the keywords that cannot be raw (`self`, `Self`, `super`, `crate`), to rename it.
fn parse_declared_name(input: ParseStream, kind: SectionKind) -> syn::Result<Ident> {
    use syn::ext::IdentExt;
    if kind != SectionKind::Coordinates || input.peek(Ident) || !input.peek(Ident::peek_any) {
        return input.parse();
    }
    let keyword = input.call(Ident::parse_any)?;
    let message = if ["self", "Self", "super", "crate"].contains(&keyword.to_string().as_str()) {
        format!("`{keyword}` is a Rust keyword and cannot name a coordinate; rename it")
    } else {
        format!(
            "`{keyword}` is a Rust keyword and cannot name a coordinate as written; write the raw identifier `r#{keyword}` here and wherever it is used, or rename it"
        )
    };
    Err(syn::Error::new(keyword.span(), message))
}

/// Parses `{ name SEP expr, … }` where `SEP` is `=` or `:`.
fn parse_named_block<Sep: Parse>(input: ParseStream) -> syn::Result<Vec<Named<Expr>>> {
    let content;
    braced!(content in input);
    let rows = Punctuated::<Named<Expr>, Token![,]>::parse_terminated_with(&content, |input| {
        let attrs = input.call(Attribute::parse_outer)?;
        let name = input.parse()?;
        let index = parse_index(input)?;
        input.parse::<Sep>()?;
        Ok(Named {
            attrs,
            name,
            index,
            value: input.parse()?,
        })
    })?;
    Ok(rows.into_iter().collect())
}

/// Parses the optional bracket after a declared name: `[N]` (a family's size) or
/// `[i in RANGE if COND, p = EXPR, …]` (a row family's header).
fn parse_index(input: ParseStream) -> syn::Result<Option<Index>> {
    if !input.peek(syn::token::Bracket) {
        return Ok(None);
    }
    let content;
    let bracket = bracketed!(content in input);
    if !(content.peek(Ident) && content.peek2(Token![in])) {
        let size = content.parse()?;
        if !content.is_empty() {
            return Err(content.error("a family's size is one expression, e.g. `x[N]`"));
        }
        return Ok(Some(Index::Size { bracket, size }));
    }
    let index = content.parse()?;
    content.parse::<Token![in]>()?;
    let range = Expr::parse_without_eager_brace(&content)?;
    let filter = if content.peek(Token![if]) {
        content.parse::<Token![if]>()?;
        Some(Expr::parse_without_eager_brace(&content)?)
    } else {
        None
    };
    let mut bindings = Vec::new();
    while content.peek(Token![,]) {
        content.parse::<Token![,]>()?;
        if content.is_empty() {
            break;
        }
        let name = content.parse()?;
        content.parse::<Token![=]>()?;
        bindings.push((name, content.parse()?));
    }
    if !content.is_empty() {
        return Err(content.error(
            "expected `, name = expr` or the end of the row family's header \
             `[i in a..b if condition, p = expr]`",
        ));
    }
    Ok(Some(Index::Rows(Box::new(RowFamily {
        bracket,
        index,
        range,
        filter,
        bindings,
    }))))
}

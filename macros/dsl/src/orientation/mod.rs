//! Rigid-body orientations, desugared before validation into the plain language.
//!
//! `orientations: { q: quaternion, r: matrix }` declares orientations; each becomes coordinates
//! (`q_w q_x q_y q_z`, or `r_xx … r_zz` row by row) appended to `coordinates`, and the rows that
//! keep it a rotation (`q_unit`, or `r_c11 … r_c23` for `RᵀR = I`) appended to `holonomic`.
//! A family `r[N]` (one orientation per member, in a model with `sizes`) becomes coordinate
//! families `r_w[N] …` and row families `r_unit[i in 0..N] …`; its built-ins read a member,
//! `omega_x(r[i])`, whose index is copied onto each coordinate (`r_w[i]`).
//! The built-ins of [`BUILTINS`] are replaced by the expressions of [`formulas`], spanned at
//! the user's call, so that lowering, every derivative and every check of the model (inertia,
//! integrators) works on them unchanged and points at the user's tokens. What remains of the
//! orientations is their list, which the integrator checks read to say what to write instead.

pub mod formulas;

use std::collections::HashMap;

use proc_macro2::TokenStream;
use syn::visit_mut::{self, VisitMut};
use syn::{Expr, Ident};

use crate::ast::{Index, Mechanism, Named, RowFamily, Section, SectionBody};
use crate::errors::Errors;
use crate::parse::SectionKind;
pub use formulas::{Kind, Orientation};

/// The rotation built-ins, as listed in messages.
pub const BUILTINS: &str = "omega_x(q), omega_y(q), omega_z(q), rotate_x(q, px, py, pz), \
                            rotate_y(..), rotate_z(..), rigid_kinetic(q, i1, i2, i3), \
                            completion(q, c)";

/// A model with its orientations desugared.
pub struct Desugared {
    /// The model in the plain language: no `orientations` section, no rotation built-in.
    pub ast: Mechanism,
    /// The declared orientations, in source order.
    pub orientations: Vec<Orientation>,
}

/// Desugars the `orientations` section and the rotation built-ins; a model without them comes
/// back unchanged. Reports unknown kinds and misused built-ins at the user's tokens.
pub fn desugar(ast: &Mechanism) -> syn::Result<Desugared> {
    let mut errors = Errors::new();
    let declared: Vec<&Named<Expr>> = ast
        .sections
        .iter()
        .filter(|s| SectionKind::from_keyword(&s.keyword) == Some(SectionKind::Orientations))
        .flat_map(|s| match &s.body {
            SectionBody::Rows(rows) => rows.as_slice(),
            _ => &[],
        })
        .collect();
    let (orientations, misdeclared) = declare(&declared, &mut errors);
    let coordinates: Vec<String> = ast
        .sections
        .iter()
        .filter(|s| s.keyword == SectionKind::Coordinates.keyword())
        .flat_map(|s| match &s.body {
            SectionBody::Names(names) => names.iter().map(|n| n.name.to_string()).collect(),
            _ => Vec::new(),
        })
        .collect();
    let mut rewriter = Rewriter {
        orientations: orientations
            .iter()
            .map(|o| (o.name.to_string(), o.clone()))
            .collect(),
        coordinates,
        misdeclared,
        errors: &mut errors,
    };
    let mut sections = Vec::new();
    let mut holonomic_seen = false;
    let mut coordinates_seen = false;
    for section in &ast.sections {
        let kind = SectionKind::from_keyword(&section.keyword);
        if kind == Some(SectionKind::Orientations) {
            continue;
        }
        let mut section = section.clone();
        rewriter.section(&mut section.body);
        if !coordinates_seen && kind == Some(SectionKind::Coordinates) {
            coordinates_seen = true;
            if let SectionBody::Names(names) = &mut section.body {
                names.extend(coordinates_of(&orientations));
            }
        }
        if !holonomic_seen && kind == Some(SectionKind::Holonomic) {
            holonomic_seen = true;
            if let SectionBody::Rows(rows) = &mut section.body {
                rows.extend(rows_of(&orientations, &declared));
            }
        }
        sections.push(section);
    }
    if let (false, Some(first)) = (coordinates_seen, orientations.first()) {
        sections.insert(
            0,
            Section {
                keyword: Ident::new("coordinates", first.name.span()),
                body: SectionBody::Names(coordinates_of(&orientations)),
                value_span: first.name.span(),
            },
        );
    }
    if let (false, Some(first)) = (holonomic_seen, orientations.first()) {
        sections.push(Section {
            keyword: Ident::new("holonomic", first.name.span()),
            body: SectionBody::Rows(rows_of(&orientations, &declared)),
            value_span: first.name.span(),
        });
    }
    errors.finish()?;
    Ok(Desugared {
        ast: Mechanism {
            sections,
            ..ast.clone()
        },
        orientations,
    })
}

/// Reads the declarations `name: kind`, reporting unknown kinds, families and repeated names;
/// also returns the names whose declaration was reported, so that their uses are not.
fn declare(rows: &[&Named<Expr>], errors: &mut Errors) -> (Vec<Orientation>, Vec<String>) {
    let mut orientations: Vec<Orientation> = Vec::new();
    let mut misdeclared = Vec::new();
    for row in rows {
        let size = match &row.index {
            None => None,
            Some(Index::Size { bracket, size }) => Some((*bracket, size.clone())),
            Some(Index::Rows(family)) => {
                misdeclared.push(row.name.to_string());
                errors.error_spanned(
                    &family.index,
                    format!(
                        "a family of orientations is declared with its size, one orientation per \
                         member: write `{}[N]: quaternion` (or `matrix`) with `N` a declared size",
                        row.name
                    ),
                );
                continue;
            }
        };
        let kind = match &row.value {
            Expr::Path(path) if path.qself.is_none() => path
                .path
                .get_ident()
                .and_then(|i| Kind::ALL.into_iter().find(|k| i == k.keyword())),
            _ => None,
        };
        let Some(kind) = kind else {
            misdeclared.push(row.name.to_string());
            errors.error_spanned(
                &row.value,
                format!(
                    "unknown orientation kind `{}`; write `{}: quaternion` (a unit quaternion, \
                     for livens and rk) or `{}: matrix` (a rotation matrix, which rattle, shake \
                     and spook step too)",
                    quote::ToTokens::to_token_stream(&row.value),
                    row.name,
                    row.name
                ),
            );
            continue;
        };
        if orientations.iter().any(|o| o.name == row.name) {
            errors.error_spanned(
                &row.name,
                format!("orientation `{}` is declared twice; remove one", row.name),
            );
            continue;
        }
        orientations.push(Orientation {
            name: row.name.clone(),
            kind,
            size,
            member: None,
        });
    }
    (orientations, misdeclared)
}

/// Returns the coordinates of every orientation, in declaration order; a family's are
/// families of its size (`r_w[N]`, …), so that member `i`'s coordinates form body `i`.
fn coordinates_of(orientations: &[Orientation]) -> Vec<Named<()>> {
    orientations
        .iter()
        .flat_map(|o| {
            o.coordinates().into_iter().map(|name| Named {
                attrs: Vec::new(),
                name,
                index: o.size.as_ref().map(|(bracket, size)| Index::Size {
                    bracket: *bracket,
                    size: size.clone(),
                }),
                value: (),
            })
        })
        .collect()
}

/// Returns the constraint rows of every orientation, a family's as row families over its
/// members (`r_unit[i in 0..N]`); each carries the attributes written on its declaration (doc
/// comments, `#[spook(..)]` options) after a generated doc line.
fn rows_of(orientations: &[Orientation], declared: &[&Named<Expr>]) -> Vec<Named<Expr>> {
    let mut rows = Vec::new();
    for orientation in orientations {
        let attrs = declared
            .iter()
            .find(|d| d.name == orientation.name)
            .map_or_else(Vec::new, |d| d.attrs.clone());
        let index = Ident::new("i", orientation.name.span());
        for (name, doc, expr) in orientation.rows(&index) {
            let mut row_attrs: Vec<syn::Attribute> = vec![syn::parse_quote!(#[doc = #doc])];
            row_attrs.extend(attrs.iter().cloned());
            rows.push(Named {
                attrs: row_attrs,
                name,
                index: orientation.size.as_ref().map(|(bracket, size)| {
                    let span = orientation.name.span();
                    Index::Rows(Box::new(RowFamily {
                        bracket: *bracket,
                        index: index.clone(),
                        range: parse(quote::quote_spanned!(span=> 0..#size)),
                        filter: None,
                        bindings: Vec::new(),
                    }))
                }),
                value: parse(expr),
            });
        }
    }
    rows
}

/// Parses generated tokens, which are always an expression.
fn parse(tokens: TokenStream) -> Expr {
    syn::parse2(tokens).unwrap_or_else(|e| Expr::Verbatim(e.to_compile_error()))
}

/// Replaces the rotation built-ins of every expression.
struct Rewriter<'a> {
    orientations: HashMap<String, Orientation>,
    coordinates: Vec<String>,
    /// Names declared with an error already reported: their uses are not reported again.
    misdeclared: Vec<String>,
    errors: &'a mut Errors,
}

impl Rewriter<'_> {
    fn section(&mut self, body: &mut SectionBody) {
        match body {
            SectionBody::Expr(expr) => self.visit_expr_mut(expr),
            SectionBody::Rows(rows) | SectionBody::Assignments(rows) => {
                for row in rows {
                    self.visit_expr_mut(&mut row.value);
                }
            }
            SectionBody::Names(_) | SectionBody::Unknown(_) => {}
        }
    }

    /// Returns the desugared call, `None` if `call` is not a built-in, `Some(Err)` after
    /// reporting a misuse.
    fn builtin(&mut self, call: &syn::ExprCall) -> Option<Result<TokenStream, ()>> {
        let Expr::Path(path) = &*call.func else {
            return None;
        };
        let function = path.path.get_ident()?;
        let name = function.to_string();
        let (arity, usage) = match name.as_str() {
            "omega_x" | "omega_y" | "omega_z" => (1, format!("`{name}(q)`")),
            "rotate_x" | "rotate_y" | "rotate_z" => (
                4,
                format!("`{name}(q, px, py, pz)` with the point's body-frame components"),
            ),
            "rigid_kinetic" => (
                4,
                "`rigid_kinetic(q, i1, i2, i3)` with the principal moments of inertia".to_string(),
            ),
            "completion" => (2, "`completion(q, c)` with the coefficient `c`".to_string()),
            _ => return None,
        };
        let span = function.span();
        let args: Vec<&Expr> = call.args.iter().collect();
        let orientation = self.orientation_argument(&name, &usage, args.first().copied(), call);
        if args.len() != arity {
            self.errors.error_spanned(
                call,
                format!(
                    "`{name}` takes {arity} argument(s), found {}; write {usage}",
                    args.len()
                ),
            );
            return Some(Err(()));
        }
        let orientation = match orientation {
            Some(o) => o,
            None => return Some(Err(())),
        };
        let axis = |prefix: &str| {
            formulas::AXES
                .iter()
                .position(|a| name == format!("{prefix}{a}"))
        };
        let tokens = if let Some(k) = axis("omega_") {
            orientation.omega(k, span)
        } else if let Some(i) = axis("rotate_") {
            let terms: Vec<TokenStream> = (0..3)
                .map(|j| {
                    let (entry, p) = (orientation.entry(i, j, span), args[1 + j]);
                    quote::quote_spanned!(span=> #entry * (#p))
                })
                .collect();
            quote::quote_spanned!(span=> (#(#terms)+*))
        } else if name == "rigid_kinetic" {
            let moments = [args[1], args[2], args[3]];
            if orientation.kind == Kind::Matrix {
                if let Some(message) = formulas::flat_matrix_body(&orientation.name, moments) {
                    self.errors.error_spanned(call, message);
                    return Some(Err(()));
                }
            }
            orientation.rigid_kinetic(moments, span)
        } else if orientation.kind == Kind::Quaternion {
            orientation.completion(args[1], span)
        } else {
            self.errors.error_spanned(
                args[0],
                format!(
                    "`completion` completes the kinetic energy of a quaternion, but `{}` is a matrix; write its kinetic energy with `rigid_kinetic`, whose mass matrix is constant and needs no completion",
                    orientation.name
                ),
            );
            return Some(Err(()));
        };
        Some(Ok(tokens))
    }

    /// Resolves the first argument of a built-in to a declared orientation, reporting why not.
    fn orientation_argument(
        &mut self,
        function: &str,
        usage: &str,
        first: Option<&Expr>,
        call: &syn::ExprCall,
    ) -> Option<Orientation> {
        // `r` names an orientation, `r[i]` a member of a family of them.
        let (path, member) = match first {
            Some(Expr::Index(indexed)) => (&*indexed.expr, Some(&*indexed.index)),
            Some(expr) => (expr, None),
            None => (&*call.func, None),
        };
        let ident = match (first, path) {
            (Some(_), Expr::Path(path)) if path.qself.is_none() => path.path.get_ident(),
            _ => None,
        };
        let found = ident.and_then(|i| self.orientations.get(&i.to_string()));
        if let Some(found) = found {
            let message = match (&found.size, member) {
                (Some(_), Some(_)) | (None, None) => {
                    return Some(Orientation {
                        member: member.cloned(),
                        ..found.clone()
                    })
                }
                (Some(_), None) => format!(
                    "`{0}` is a family of orientations; `{function}` reads one member: write `{0}[i]` with the member's index",
                    found.name
                ),
                (None, Some(_)) => format!(
                    "`{0}` is one orientation, not a family; write `{0}` without an index",
                    found.name
                ),
            };
            if let Some(expr) = first {
                self.errors.error_spanned(expr, message);
            }
            return None;
        }
        if ident.is_some_and(|i| self.misdeclared.contains(&i.to_string())) {
            return None;
        }
        let declare = "declare it in `orientations: { q: quaternion }` (or `q: matrix`)";
        let message = match ident {
            Some(i) if self.coordinates.contains(&i.to_string()) => format!(
                "`{i}` is a coordinate, but `{function}` takes an orientation; {declare} and write {usage}"
            ),
            Some(i) => format!(
                "`{function}` takes an orientation, and `{i}` is not one; {declare}"
            ),
            None => format!(
                "the first argument of `{function}` is the name of an orientation; {declare}"
            ),
        };
        match first {
            Some(expr) => self.errors.error_spanned(expr, message),
            None => self.errors.error_spanned(call, message),
        }
        None
    }
}

impl VisitMut for Rewriter<'_> {
    fn visit_expr_mut(&mut self, expr: &mut Expr) {
        match expr {
            Expr::Call(call) => {
                // Arguments after the orientation may use built-ins themselves.
                for arg in call.args.iter_mut().skip(1) {
                    self.visit_expr_mut(arg);
                }
                match self.builtin(call) {
                    Some(Ok(tokens)) => *expr = parse(tokens),
                    Some(Err(())) => {}
                    None => {
                        if let Some(first) = call.args.first_mut() {
                            self.visit_expr_mut(first);
                        }
                    }
                }
            }
            Expr::Path(path) if path.qself.is_none() => {
                if let Some(orientation) = path
                    .path
                    .get_ident()
                    .and_then(|i| self.orientations.get(&i.to_string()))
                {
                    let coordinates: Vec<String> = orientation
                        .coordinates()
                        .iter()
                        .map(|c| format!("`{c}`"))
                        .collect();
                    self.errors.error_spanned(
                        &*path,
                        format!(
                            "`{}` is an orientation, not a number; use its coordinates {} or the rotation built-ins {BUILTINS}",
                            orientation.name,
                            coordinates.join(", ")
                        ),
                    );
                }
            }
            _ => visit_mut::visit_expr_mut(self, expr),
        }
    }
}

#[cfg(test)]
mod tests;

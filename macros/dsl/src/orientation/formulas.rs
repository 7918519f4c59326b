//! The expressions behind each orientation kind: its coordinates, its constraint rows, the
//! entries of its rotation matrix, its body angular velocity and its rigid-body kinetic
//! energy, as Rust-spelled token streams of the model language (so that the lowerer, the CAS
//! and every check treat them like the user's own expressions).
//!
//! Quaternion `q = (w, x, y, z)`, world from body (`q̇ = ½ q ⊗ (0, Ω)`):
//!
//! ```text
//! R(q) = the homogeneous quadratic form of the rotation (equal to it on |q| = 1)
//! Ω    = 2 (w v̇ − ẇ v − v × v̇),  v = (x, y, z)
//! T    = ½ ΩᵀIΩ + ½ c (q·q̇)²,     c = 4 (I₁ + I₂ + I₃)/3
//! ```
//!
//! Matrix `R` (nine coordinates, row by row, world from body) on `RᵀR = I`:
//!
//! ```text
//! Ω = vee(skew(RᵀṘ)),   T = ½ Σ_k J_k |ċ_k|²,  J = ½ tr(I) 1 − I   (c_k the columns of R)
//! ```

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote_spanned};
use syn::{Expr, Ident};

/// The kinds of orientation the language knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A unit quaternion: four coordinates, one holonomic row.
    Quaternion,
    /// A rotation matrix: nine coordinates, the six rows of `RᵀR = I`.
    Matrix,
}

impl Kind {
    /// Every kind, in the order messages list them.
    pub const ALL: [Kind; 2] = [Kind::Quaternion, Kind::Matrix];

    /// Returns the keyword that declares this kind.
    pub fn keyword(self) -> &'static str {
        match self {
            Kind::Quaternion => "quaternion",
            Kind::Matrix => "matrix",
        }
    }

    /// Returns the suffixes of the coordinates, appended to the orientation's name with `_`.
    pub fn suffixes(self) -> &'static [&'static str] {
        match self {
            Kind::Quaternion => &["w", "x", "y", "z"],
            Kind::Matrix => &["xx", "xy", "xz", "yx", "yy", "yz", "zx", "zy", "zz"],
        }
    }
}

/// A declared orientation: its name and kind, and for a family (`r[N]`, one orientation per
/// member) its size and the member a built-in reads.
#[derive(Clone)]
pub struct Orientation {
    /// The name, whose span every generated token carries.
    pub name: Ident,
    /// Quaternion or matrix.
    pub kind: Kind,
    /// The bracket and size of a family of orientations (`r[N]`); `None` for one orientation.
    pub size: Option<(syn::token::Bracket, Expr)>,
    /// The index of the member a built-in reads (`i` of `omega_x(r[i])`); `None` outside a
    /// built-in's call and for one orientation.
    pub member: Option<Expr>,
}

/// The names of the three axes, as in `omega_x` and `rotate_x`.
pub const AXES: [&str; 3] = ["x", "y", "z"];

impl Orientation {
    /// Returns the coordinates the orientation introduces, e.g. `q_w … q_z`.
    pub fn coordinates(&self) -> Vec<Ident> {
        self.kind
            .suffixes()
            .iter()
            .map(|s| format_ident!("{}_{}", self.name, s, span = self.name.span()))
            .collect()
    }

    /// Returns the constraint rows `(name, doc, expression)` that keep it a rotation; for a
    /// family, the body of a row family whose index is `index`.
    pub fn rows(&self, index: &Ident) -> Vec<(Ident, String, TokenStream)> {
        let span = self.name.span();
        let member = self.size.as_ref().map(|_| quote_spanned!(span=> #index));
        let c = self.members(member.as_ref(), span);
        let name = match &self.size {
            Some(_) => format!("{}[{index}]", self.name),
            None => self.name.to_string(),
        };
        let row = |suffix: &str, doc: String, expr: TokenStream| {
            (
                format_ident!("{}_{}", self.name, suffix, span = span),
                doc,
                expr,
            )
        };
        match self.kind {
            Kind::Quaternion => {
                let (w, x, y, z) = (&c[0], &c[1], &c[2], &c[3]);
                vec![row(
                    "unit",
                    format!("The quaternion `{name}` has unit length."),
                    quote_spanned!(span=> #w.powi(2) + #x.powi(2) + #y.powi(2) + #z.powi(2) - 1.0),
                )]
            }
            Kind::Matrix => {
                let column = |k: usize| [&c[k], &c[3 + k], &c[6 + k]];
                let ordinal = ["first", "second", "third"];
                let mut rows = Vec::new();
                for (k, nth) in ordinal.iter().enumerate() {
                    let [a, b, d] = column(k);
                    rows.push(row(
                        &format!("c{0}{0}", k + 1),
                        format!("The {nth} column of `{name}` has unit length."),
                        quote_spanned!(span=> #a.powi(2) + #b.powi(2) + #d.powi(2) - 1.0),
                    ));
                }
                for (j, k) in [(0, 1), (0, 2), (1, 2)] {
                    let ([a1, b1, d1], [a2, b2, d2]) = (column(j), column(k));
                    rows.push(row(
                        &format!("c{}{}", j + 1, k + 1),
                        format!(
                            "The {} and {} columns of `{name}` are orthogonal.",
                            ordinal[j], ordinal[k]
                        ),
                        quote_spanned!(span=> #a1 * #a2 + #b1 * #b2 + #d1 * #d2),
                    ));
                }
                rows
            }
        }
    }

    /// Returns the entry `R_ij` (world from body) of the rotation, at `span`.
    pub fn entry(&self, i: usize, j: usize, span: Span) -> TokenStream {
        let c = self.coordinates_at(span);
        match self.kind {
            Kind::Matrix => {
                let e = &c[3 * i + j];
                quote_spanned!(span=> #e)
            }
            Kind::Quaternion => {
                let (w, v) = (&c[0], [&c[1], &c[2], &c[3]]);
                if i == j {
                    // w² + v_i² − v_j² − v_k²: the homogeneous diagonal.
                    let others = (0..3).filter(|&k| k != i).map(|k| v[k]);
                    let vi = v[i];
                    quote_spanned!(span=> (#w.powi(2) + #vi.powi(2) #(- #others.powi(2))*))
                } else {
                    // 2 (v_i v_j ∓ w v_k), with + when (i, j, k) is an odd permutation.
                    let k = 3 - i - j;
                    let (vi, vj, vk) = (v[i], v[j], v[k]);
                    if (j + 3 - i) % 3 == 1 {
                        quote_spanned!(span=> (2.0 * (#vi * #vj - #w * #vk)))
                    } else {
                        quote_spanned!(span=> (2.0 * (#vi * #vj + #w * #vk)))
                    }
                }
            }
        }
    }

    /// Returns the component `k` of the body angular velocity `Ω`, at `span`.
    pub fn omega(&self, k: usize, span: Span) -> TokenStream {
        let c = self.coordinates_at(span);
        match self.kind {
            Kind::Quaternion => {
                // Ω_k = 2 (w v̇_k − ẇ v_k + v_j v̇_i − v_i v̇_j), (i, j, k) cyclic.
                let (w, v) = (&c[0], [&c[1], &c[2], &c[3]]);
                let (i, j) = ((k + 1) % 3, (k + 2) % 3);
                let (vi, vj, vk) = (v[i], v[j], v[k]);
                quote_spanned!(span=>
                    (2.0 * (#w * dot(#vk) - #vk * dot(#w) + #vj * dot(#vi) - #vi * dot(#vj))))
            }
            Kind::Matrix => {
                // Ω_k = ½ (W_ji − W_ij), W = RᵀṘ, (i, j, k) cyclic: W_ji = Σ_l R_lj Ṙ_li.
                let (i, j) = ((k + 1) % 3, (k + 2) % 3);
                let w = |a: usize, b: usize| {
                    let (ra, rb): (Vec<&TokenStream>, Vec<&TokenStream>) =
                        (0..3).map(|l| (&c[3 * l + a], &c[3 * l + b])).unzip();
                    quote_spanned!(span=> (#(#ra * dot(#rb))+*))
                };
                let (ji, ij) = (w(j, i), w(i, j));
                quote_spanned!(span=> (0.5 * (#ji - #ij)))
            }
        }
    }

    /// Returns the kinetic energy of a rigid body with principal moments `inertia` (body
    /// frame) in this orientation: `½ ΩᵀIΩ` completed by `½ c (q·q̇)²` for a quaternion, the
    /// constant-mass `½ Σ J_k |ċ_k|²` for a matrix.
    pub fn rigid_kinetic(&self, inertia: [&Expr; 3], span: Span) -> TokenStream {
        let c = self.coordinates_at(span);
        let [i1, i2, i3] = inertia;
        match self.kind {
            Kind::Quaternion => {
                let omega: Vec<TokenStream> = (0..3).map(|k| self.omega(k, span)).collect();
                let (o1, o2, o3) = (&omega[0], &omega[1], &omega[2]);
                let rate = self.completion_rate(span);
                quote_spanned!(span=> (
                    0.5 * (#i1) * #o1.powi(2)
                        + 0.5 * (#i2) * #o2.powi(2)
                        + 0.5 * (#i3) * #o3.powi(2)
                        + 0.5 * (4.0 * ((#i1) + (#i2) + (#i3)) / 3.0) * #rate.powi(2)
                ))
            }
            Kind::Matrix => {
                let column = |k: usize| [&c[k], &c[3 + k], &c[6 + k]];
                let ([a1, b1, d1], [a2, b2, d2], [a3, b3, d3]) = (column(0), column(1), column(2));
                quote_spanned!(span=> (
                    0.25 * ((#i2) + (#i3) - (#i1))
                        * (dot(#a1).powi(2) + dot(#b1).powi(2) + dot(#d1).powi(2))
                        + 0.25 * ((#i1) + (#i3) - (#i2))
                            * (dot(#a2).powi(2) + dot(#b2).powi(2) + dot(#d2).powi(2))
                        + 0.25 * ((#i1) + (#i2) - (#i3))
                            * (dot(#a3).powi(2) + dot(#b3).powi(2) + dot(#d3).powi(2))
                ))
            }
        }
    }

    /// Returns the completion `½ c (q·q̇)²` of a quaternion's kinetic energy, at `span`.
    pub fn completion(&self, c: &Expr, span: Span) -> TokenStream {
        let rate = self.completion_rate(span);
        quote_spanned!(span=> (0.5 * (#c) * #rate.powi(2)))
    }

    /// Returns `q·q̇` (a quaternion's) at `span`.
    fn completion_rate(&self, span: Span) -> TokenStream {
        let c = self.coordinates_at(span);
        quote_spanned!(span=> (#(#c * dot(#c))+*))
    }

    /// Returns the coordinates with the span of the built-in that uses them, indexed by the
    /// member it reads for a family (`r_w[i]`).
    fn coordinates_at(&self, span: Span) -> Vec<TokenStream> {
        let member = self.member.as_ref().map(|m| quote_spanned!(span=> #m));
        self.members(member.as_ref(), span)
    }

    /// Returns the coordinates at `span`, each followed by `[index]` when given.
    fn members(&self, index: Option<&TokenStream>, span: Span) -> Vec<TokenStream> {
        self.coordinates()
            .into_iter()
            .map(|c| {
                let c = Ident::new(&c.to_string(), span);
                match index {
                    Some(index) => quote_spanned!(span=> #c[#index]),
                    None => quote_spanned!(span=> #c),
                }
            })
            .collect()
    }
}

/// Returns why a rotation matrix's `rigid_kinetic` with the literal principal moments `moments`
/// has no positive-definite mass matrix, `None` when it has one or a moment is not a literal
/// (a parameter's value is not known at compile time): the matrix form's
/// `½ Σ_k J_k |ċ_k|²` needs `J_k = ½ (i1 + i2 + i3) − i_k > 0`, each moment below the sum of
/// the other two. A lamina (one moment equal to the sum of the others) has `J_k = 0`; the
/// quaternion form, `½ ΩᵀIΩ`, steps it.
pub fn flat_matrix_body(orientation: &Ident, moments: [&Expr; 3]) -> Option<String> {
    let values = moments.map(literal);
    let [Some(i1), Some(i2), Some(i3)] = values else {
        return None;
    };
    let i = [i1, i2, i3];
    if let Some(k) = (0..3).find(|&k| i[k] <= 0.0) {
        return Some(format!(
            "the principal moment i{} = {} of `{orientation}` is not positive; a rigid body's principal moments are positive",
            k + 1,
            i[k]
        ));
    }
    let k = (0..3).find(|&k| i[k] >= i[(k + 1) % 3] + i[(k + 2) % 3])?;
    let (j, l) = ((k + 1) % 3, (k + 2) % 3);
    let (first, second) = (j.min(l), j.max(l));
    Some(format!(
        "the rotation matrix `{orientation}` needs each principal moment below the sum of the other two (its kinetic energy is ½ Σ J_k |ċ_k|² with J_k = ½ (i1 + i2 + i3) − i_k > 0), but i{} = {} ≥ i{} + i{} = {}; check the moments, or declare a flat body (a lamina) as `{orientation}: quaternion`, whose kinetic energy ½ ΩᵀIΩ takes any positive moments",
        k + 1,
        i[k],
        first + 1,
        second + 1,
        i[first] + i[second]
    ))
}

/// Returns the value of a numeric literal, optionally negated or parenthesized.
fn literal(expr: &Expr) -> Option<f64> {
    match expr {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Float(f),
            ..
        }) => f.base10_parse().ok(),
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => i.base10_parse().ok(),
        Expr::Paren(inner) => literal(&inner.expr),
        Expr::Unary(syn::ExprUnary {
            op: syn::UnOp::Neg(_),
            expr,
            ..
        }) => literal(expr).map(|v| -v),
        _ => None,
    }
}

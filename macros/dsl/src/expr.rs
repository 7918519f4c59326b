//! Lowers the user's Rust expressions into the model's symbolic store, resolving names.
//!
//! The accepted language is a small, Rust-spelled subset: `+ - * /`, unary `-`, parentheses,
//! numeric literals, names of coordinates and parameters, `dot(x)` for the velocity of a
//! coordinate, the methods of [`FUNCTIONS`] (`x.powi(n)`, `x.sin()`, `y.atan2(x)`, `x.log(b)`,
//! the non-smooth `abs()`, `signum()`, `min(y)`, `max(y)`, …), and the same functions in call
//! form with the receiver first (`sqrt(x)`, `powi(x, n)`, `atan2(y, x)`, `max(x, y)`).
//! Every unsupported construct is a spanned error saying what to write instead.

use std::collections::HashMap;

use mechanism_cas::{Id, Store};
use syn::spanned::Spanned;
use syn::{BinOp, Expr, Ident, Lit, UnOp};

use crate::errors::Errors;
use crate::symbols::{Name, Symbols};

/// The functions of the language, as listed in messages: methods of `f64` with Rust's meaning.
pub const FUNCTIONS: &str = "powi, powf, sqrt, sin, cos, tan, asin, acos, atan, atan2, sinh, \
                             cosh, tanh, exp, ln, log, abs, signum, min, max";

/// Where an expression stands, which decides what it may mention.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Context {
    /// An expression of coordinates, velocities and parameters (energies, Lagrangian).
    Dynamic,
    /// A parameter default: numbers only.
    Constant,
}

/// Where the last lowered expressions mentioned velocities and time, so that a check can point
/// at the offending `dot(..)` or `t` rather than at the whole expression.
#[derive(Default)]
pub struct Uses {
    /// Spans of `dot(..)` calls.
    pub velocities: Vec<proc_macro2::Span>,
    /// Spans of `t`.
    pub time: Vec<proc_macro2::Span>,
    /// Spans and names of non-smooth functions (`abs`, `signum`, `min`, `max`).
    pub non_smooth: Vec<(proc_macro2::Span, &'static str)>,
}

/// Lowers expressions of one model into its store, reporting errors into a collector.
pub struct Lowerer<'a> {
    /// The model's store.
    pub store: &'a mut Store,
    /// The model's symbols.
    pub symbols: &'a Symbols,
    /// The names in scope.
    pub names: &'a HashMap<String, Name>,
    /// Where errors go.
    pub errors: &'a mut Errors,
    /// Velocity and time uses since the last [`Lowerer::take_uses`].
    pub uses: Uses,
    /// The imported robot's links and joints, for its built-ins
    /// ([`urdf::builtins`](crate::urdf::builtins)); `None` without `urdf`.
    pub robot: Option<&'a crate::urdf::builtins::Builtins>,
}

impl Lowerer<'_> {
    /// Returns the velocity and time uses recorded since the last call, and forgets them.
    pub fn take_uses(&mut self) -> Uses {
        std::mem::take(&mut self.uses)
    }

    /// Lowers `expr`; `None` when an error was recorded.
    pub fn lower(&mut self, expr: &Expr, context: Context) -> Option<Id> {
        match expr {
            Expr::Lit(lit) => self.literal(&lit.lit),
            Expr::Paren(inner) => self.lower(&inner.expr, context),
            Expr::Group(inner) => self.lower(&inner.expr, context),
            Expr::Path(path) => match path.path.get_ident() {
                Some(ident) if path.qself.is_none() => self.name(ident, context),
                _ => {
                    self.errors.error_spanned(
                        path,
                        "paths are not supported in a model; use a coordinate or parameter name",
                    );
                    None
                }
            },
            Expr::Unary(unary) => match unary.op {
                UnOp::Neg(_) => {
                    let a = self.lower(&unary.expr, context)?;
                    Some(self.store.neg(a))
                }
                _ => {
                    self.errors.error_spanned(
                        unary.op,
                        "only unary `-` is supported in a model expression",
                    );
                    None
                }
            },
            Expr::Binary(binary) => {
                let id = self.binary(binary, context)?;
                self.finite(expr, id)
            }
            Expr::MethodCall(call) => {
                let receiver = self.lower(&call.receiver, context);
                let args = self.lower_all(call.args.iter(), context);
                let id = self.function(&call.method, receiver?, &args?, &call.args, context)?;
                self.finite(expr, id)
            }
            Expr::Call(call) => {
                let id = self.call(call, context)?;
                self.finite(expr, id)
            }
            other => {
                self.errors.error_spanned(
                    other,
                    format!(
                        "unsupported expression in a model; use arithmetic (`+ - * /`), numbers, \
                         names, `dot(x)` and the functions {FUNCTIONS}"
                    ),
                );
                None
            }
        }
    }

    /// Returns `id` unless it is a constant that is not a finite number (`ln(0.0)`,
    /// `sqrt(-1.0)`), which is reported at `expr`.
    fn finite(&mut self, expr: &Expr, id: Id) -> Option<Id> {
        if !self.store.symbols(id).is_empty() {
            return Some(id);
        }
        match mechanism_cas::eval(self.store, id, &|_| None) {
            Ok(value) if value.is_finite() => Some(id),
            outcome => {
                let value = outcome.map_or_else(|_| "undefined".to_string(), |v| v.to_string());
                self.errors.error_spanned(
                    expr,
                    format!("this constant is not a finite number (it evaluates to {value}); write a finite value, or check the arguments of `ln`, `sqrt`, `powf` and divisions"),
                );
                None
            }
        }
    }

    /// Reports a divisor that is zero wherever it is defined (a constant `0.0`, or an
    /// expression such as `x - x` that vanishes at every sample point).
    fn check_divisor(&mut self, divisor: &Expr, id: Id) -> bool {
        let zero = self.store.is_zero(id) || {
            let values: Vec<f64> = crate::sample::points(self.symbols, None, 8)
                .iter()
                .filter_map(|p| p.eval(self.store, id))
                .collect();
            !values.is_empty() && values.iter().all(|v| v.abs() <= 1e-12)
        };
        if zero {
            self.errors.error_spanned(
                divisor,
                "division by zero: this divisor is zero for every value of the coordinates and parameters; fix the divisor, or remove the division",
            );
        }
        !zero
    }

    fn lower_all<'e>(
        &mut self,
        exprs: impl Iterator<Item = &'e Expr>,
        context: Context,
    ) -> Option<Vec<Id>> {
        // Lower every argument even after a failure, so that all errors are reported.
        let lowered: Vec<Option<Id>> = exprs.map(|e| self.lower(e, context)).collect();
        lowered.into_iter().collect()
    }

    fn literal(&mut self, lit: &Lit) -> Option<Id> {
        let value = match lit {
            Lit::Int(int) => int.base10_parse::<f64>().ok(),
            Lit::Float(float) => float.base10_parse::<f64>().ok(),
            _ => None,
        };
        match value {
            Some(value) if value.is_finite() => Some(self.store.num(value)),
            _ => {
                self.errors
                    .error_spanned(lit, "expected a finite number literal");
                None
            }
        }
    }

    fn name(&mut self, ident: &Ident, context: Context) -> Option<Id> {
        let found = self.names.get(&ident.to_string()).copied();
        match (found, context) {
            (Some(Name::Coordinate(i)), Context::Dynamic) => {
                Some(self.store.symbol(self.symbols.q[i]))
            }
            (Some(Name::Parameter(i)), Context::Dynamic) => {
                Some(self.store.symbol(self.symbols.p[i]))
            }
            (Some(_), Context::Constant) => {
                self.errors.error_spanned(
                    ident,
                    format!("a parameter default must be a number; `{ident}` is not known at compile time"),
                );
                None
            }
            (None, Context::Dynamic) if ident == "t" => {
                self.uses.time.push(ident.span());
                Some(self.store.symbol(self.symbols.t))
            }
            (None, _) => {
                self.errors.error_spanned(
                    ident,
                    format!(
                        "cannot find `{ident}` in this mechanism; declare it in `coordinates` or `parameters`"
                    ),
                );
                None
            }
        }
    }

    fn binary(&mut self, binary: &syn::ExprBinary, context: Context) -> Option<Id> {
        let op = binary.op;
        if let BinOp::BitXor(_) = op {
            self.errors.error_spanned(
                op,
                "`^` is bitwise XOR in Rust, with lower precedence than `*`; write a power as `x.powi(2)` or `x.powf(y)`",
            );
            return None;
        }
        let left = self.lower(&binary.left, context);
        let right = self.lower(&binary.right, context);
        let (a, b) = (left?, right?);
        match op {
            BinOp::Add(_) => Some(self.store.add(a, b)),
            BinOp::Sub(_) => Some(self.store.sub(a, b)),
            BinOp::Mul(_) => Some(self.store.mul(a, b)),
            BinOp::Div(_) => self
                .check_divisor(&binary.right, b)
                .then(|| self.store.div(a, b)),
            _ => {
                self.errors.error_spanned(
                    op,
                    "unsupported operator in a model; use `+`, `-`, `*` or `/`",
                );
                None
            }
        }
    }

    fn call(&mut self, call: &syn::ExprCall, context: Context) -> Option<Id> {
        let function = match &*call.func {
            Expr::Path(path) if path.qself.is_none() => path.path.get_ident().cloned(),
            _ => None,
        };
        let Some(function) = function else {
            self.errors.error_spanned(
                &call.func,
                "expected a function name such as `sqrt` or `dot`",
            );
            return None;
        };
        if function == "dot" {
            return self.velocity(call, context);
        }
        if let Some(lowered) = self.robot_builtin(&function, call, context) {
            return lowered;
        }
        let mut args = call.args.iter();
        let Some(first) = args.next() else {
            self.errors
                .error_spanned(call, format!("`{function}` needs an argument"));
            return None;
        };
        let receiver = self.lower(first, context);
        let rest: Vec<Expr> = args.cloned().collect();
        let lowered = self.lower_all(rest.iter(), context);
        let rest_punct: syn::punctuated::Punctuated<Expr, syn::Token![,]> =
            rest.into_iter().collect();
        self.function(&function, receiver?, &lowered?, &rest_punct, context)
    }

    fn velocity(&mut self, call: &syn::ExprCall, context: Context) -> Option<Id> {
        if context == Context::Constant {
            self.errors
                .error_spanned(call, "a parameter default must be a number, not a velocity");
            return None;
        }
        let target = match (call.args.len(), call.args.first()) {
            (1, Some(Expr::Path(path))) if path.qself.is_none() => path.path.get_ident(),
            _ => None,
        };
        let Some(target) = target else {
            self.errors.error_spanned(
                &call.args,
                "`dot(..)` takes the name of one coordinate, e.g. `dot(x1)`",
            );
            return None;
        };
        match self.names.get(&target.to_string()) {
            Some(Name::Coordinate(i)) => {
                self.uses.velocities.push(call.span());
                Some(self.store.symbol(self.symbols.v[*i]))
            }
            Some(Name::Parameter(_)) => {
                self.errors.error_spanned(
                    target,
                    format!("`{target}` is a parameter, which has no velocity; `dot(..)` takes a coordinate"),
                );
                None
            }
            None => {
                self.errors.error_spanned(
                    target,
                    format!("cannot find coordinate `{target}` in this mechanism; declare it in `coordinates`"),
                );
                None
            }
        }
    }

    /// Applies the named function to an already lowered receiver and arguments.
    fn function(
        &mut self,
        name: &Ident,
        x: Id,
        args: &[Id],
        arg_exprs: &syn::punctuated::Punctuated<Expr, syn::Token![,]>,
        _context: Context,
    ) -> Option<Id> {
        let unary = |store: &mut Store, f: fn(&mut Store, Id) -> Id| Some(f(store, x));
        let arity = match name.to_string().as_str() {
            "sqrt" | "sin" | "cos" | "tan" | "asin" | "acos" | "atan" | "sinh" | "cosh"
            | "tanh" | "exp" | "ln" | "abs" | "signum" => 0,
            "powi" | "powf" | "atan2" | "log" | "min" | "max" => 1,
            other => {
                let hint = match other {
                    "pow" => "; write `x.powi(n)` for an integer or `x.powf(y)` for a real power",
                    "log10" => "; write `x.log(10.0)`",
                    "log2" => "; write `x.log(2.0)`",
                    "arcsin" | "arccos" | "arctan" => {
                        "; the inverse functions are `asin`, `acos`, `atan` and `y.atan2(x)`"
                    }
                    _ => "",
                };
                self.errors.error_spanned(
                    name,
                    format!(
                        "unsupported function `{other}` in a model; supported: {FUNCTIONS}{hint}"
                    ),
                );
                return None;
            }
        };
        if args.len() != arity {
            self.errors.error_spanned(
                name,
                format!(
                    "`{name}` takes {arity} argument(s) besides its receiver, found {}",
                    args.len()
                ),
            );
            return None;
        }
        match name.to_string().as_str() {
            "sqrt" => unary(self.store, Store::sqrt),
            "sin" => unary(self.store, Store::sin),
            "cos" => unary(self.store, Store::cos),
            "tan" => unary(self.store, Store::tan),
            "exp" => unary(self.store, Store::exp),
            "ln" => unary(self.store, Store::ln),
            "asin" => unary(self.store, Store::asin),
            "acos" => unary(self.store, Store::acos),
            "atan" => unary(self.store, Store::atan),
            "sinh" => unary(self.store, Store::sinh),
            "cosh" => unary(self.store, Store::cosh),
            "tanh" => unary(self.store, Store::tanh),
            "powf" => Some(self.store.pow(x, args[0])),
            // Rust's `y.atan2(x)`: the receiver is the ordinate.
            "atan2" => Some(self.store.atan2(x, args[0])),
            // Rust's `x.log(base)`, computed as `x.ln() / base.ln()` like `f64::log`.
            "log" => Some(self.store.log(x, args[0])),
            "abs" => {
                self.uses.non_smooth.push((name.span(), "abs"));
                Some(self.store.abs(x))
            }
            "signum" => {
                self.uses.non_smooth.push((name.span(), "signum"));
                Some(self.store.signum(x))
            }
            "min" => {
                self.uses.non_smooth.push((name.span(), "min"));
                Some(self.store.min(x, args[0]))
            }
            "max" => {
                self.uses.non_smooth.push((name.span(), "max"));
                Some(self.store.max(x, args[0]))
            }
            _ => {
                // `powi`: the exponent must be an integer known at compile time.
                let exponent = self.store.constant(args[0]);
                match exponent {
                    Some(n) if n.fract() == 0.0 && n.abs() <= 64.0 => {
                        Some(self.store.powi(x, n as i32))
                    }
                    _ => {
                        self.errors.error_at(
                            arg_exprs.first().map_or(name.span(), |e| e.span()),
                            "the exponent of `powi` must be an integer literal between -64 and 64; use `powf` for other powers",
                        );
                        None
                    }
                }
            }
        }
    }
}

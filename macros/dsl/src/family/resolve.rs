//! Name resolution and kernel extraction for models with families: the family pipeline's
//! counterpart of `validate`, split into the stages a newcomer can follow.
//!
//! 1. **Sizes** (`sizes: { N = 10, R = 4 + 3 * (N - 1) }`): base sizes with integer defaults
//!    (arguments of the generated `new`) and derived sizes (integer expressions of earlier
//!    ones).
//! 2. **Coordinates**: scalars (`phi`) and families (`x[N]`). Families of one size share a
//!    body index: `x[i]` and `y[i]` are body `i`'s coordinates, interleaved in `q` body by body
//!    (`x[0], y[0], x[1], y[1], …`) after the scalar coordinates, which form one body.
//! 3. **Kernels**: every energy term (`sum(a..b, |i| body)` or a plain expression) and every
//!    row (`anchor: …` or `rod[i in 1..N]: …`) becomes a [`Kernel`](super::model::Kernel):
//!    its body with each member access `x[e]` replaced by a local *slot* symbol, lowered into a
//!    store of its own (`kernels`). The kernel is differentiated once in its slots, whatever
//!    `N` is; the generated constructor maps each instance's slots to global coordinates.

use std::collections::HashMap;

use mechanism_cas::Store;
use syn::{Expr, Ident};

use crate::ast::{Index, Mechanism, Named};
use crate::errors::Errors;
use crate::expr::{Context, Lowerer};
use crate::family::index;
use crate::family::kernels::{size_name, Scope};
use crate::family::model::{CoordinateFamily, FamilyModel, Group, ParameterFamily, Size};
use crate::integrators;
use crate::model::Parameter;
use crate::names;
use crate::parse::SectionKind;
use crate::sections::{self, ModelKind, Sections};
use crate::symbols::Symbols;

/// Resolves a model with families, reporting every error at the user's tokens.
pub fn resolve(ast: &Mechanism) -> syn::Result<FamilyModel> {
    let mut errors = Errors::new();
    let sections = sections::read(ast, ModelKind::Families, &mut errors);
    errors.barrier()?;

    let sizes = resolve_sizes(sections.sizes, &ast.name, &mut errors);
    let size_index: HashMap<String, usize> = sizes
        .iter()
        .enumerate()
        .map(|(i, s)| (s.name.to_string(), i))
        .collect();
    if let (Some(names), Some(&span)) = (
        sections.coordinates,
        sections.values.get(&SectionKind::Coordinates),
    ) {
        if names.is_empty() {
            sections::empty_coordinates(span, "[x[N], y[N]]", &mut errors);
        }
    }
    let (scalars, families, groups) =
        resolve_coordinates(sections.coordinates, &size_index, &ast.name, &mut errors);
    let (parameters, parameter_families) =
        resolve_parameters(sections.parameters, &size_index, &mut errors);
    let integrators = integrators::requested(
        sections.integrators,
        sections.values.get(&SectionKind::Integrators).copied(),
        ModelKind::Families,
        &mut errors,
    )
    .map_or_else(
        || integrators::supported(ModelKind::Families),
        |requested| requested.into_iter().map(|(family, _)| family).collect(),
    );
    let derivatives = crate::derivatives::requested(
        sections.derivatives,
        sections.values.get(&SectionKind::Derivatives).copied(),
        &mut errors,
    );
    names::unique(&declared(&sections), &mut errors);
    size_arguments(&sizes, &mut errors);
    errors.barrier()?;

    let scope = Scope {
        sizes: &sizes,
        scalars: &scalars,
        families: &families,
        parameters: &parameters,
        parameter_families: &parameter_families,
    };
    let kinetic = match sections.kinetic {
        Some(e) => scope.terms(e, "the kinetic energy", &mut errors),
        None => {
            errors.error_spanned(&ast.name, "a mechanism needs `kinetic: …`");
            Vec::new()
        }
    };
    let potential = match sections.potential {
        Some(e) => scope.terms(e, "the potential", &mut errors),
        None => Vec::new(),
    };
    let rows = match sections.holonomic {
        Some(rows) => rows
            .iter()
            .filter_map(|row| scope.row(row, &mut errors))
            .collect(),
        _ => Vec::new(),
    };
    errors.finish()?;
    Ok(FamilyModel {
        attrs: ast.attrs.clone(),
        vis: ast.vis.clone(),
        name: ast.name.clone(),
        sizes,
        scalars,
        families,
        groups,
        parameters,
        parameter_families,
        kinetic,
        potential,
        rows,
        integrators,
        derivatives: derivatives.into_iter().map(|(d, _)| d).collect(),
    })
}

/// Resolves `sizes: { N = 10, R = 4 + 3 * (N - 1) }`.
fn resolve_sizes(section: Option<&[Named<Expr>]>, model: &Ident, errors: &mut Errors) -> Vec<Size> {
    let Some(rows) = section else {
        errors.error_spanned(
            model,
            "a model with families needs `sizes: { N = 10 }`, the sizes of its families",
        );
        return Vec::new();
    };
    let mut sizes: Vec<Size> = Vec::new();
    let mut env = HashMap::new();
    for row in rows {
        if sizes.iter().any(|s| s.name == row.name) {
            // Reported by `names::unique`.
            continue;
        }
        let base = matches!(&row.value, Expr::Lit(_));
        let known = |name: &str| env.contains_key(name);
        let mut local = Errors::new();
        index::check(&row.value, &known, "a size", &mut local);
        if let Err(error) = local.finish() {
            errors.push(error);
            continue;
        }
        match index::eval(&row.value, &env) {
            Some(index::Value::Int(value)) if value >= 1 => {
                env.insert(row.name.to_string(), value);
                sizes.push(Size {
                    name: row.name.clone(),
                    value: row.value.clone(),
                    base,
                    default: value,
                });
            }
            other => {
                // Declared all the same, so that its uses do not cascade into more errors.
                env.insert(row.name.to_string(), 1);
                sizes.push(Size {
                    name: row.name.clone(),
                    value: row.value.clone(),
                    base,
                    default: 1,
                });
                errors.error_spanned(
                    &row.value,
                    format!(
                        "size `{}` must be a positive integer; with the default sizes it is {}",
                        row.name,
                        match other {
                            Some(index::Value::Int(v)) => v.to_string(),
                            _ => "not an integer".into(),
                        }
                    ),
                )
            }
        }
    }
    sizes
}

/// Resolves `coordinates: [phi, x[N], y[N]]` into scalars, families and groups.
fn resolve_coordinates(
    section: Option<&[Named<()>]>,
    sizes: &HashMap<String, usize>,
    model: &Ident,
    errors: &mut Errors,
) -> (Vec<Ident>, Vec<CoordinateFamily>, Vec<Group>) {
    let (mut scalars, mut families, mut groups) = (
        Vec::new(),
        Vec::<CoordinateFamily>::new(),
        Vec::<Group>::new(),
    );
    let Some(names) = section else {
        errors.error_spanned(
            model,
            "a mechanism needs coordinates; add `coordinates: [x[N], …]`",
        );
        return (scalars, families, groups);
    };
    let mut seen: Vec<String> = Vec::new();
    for named in names {
        let name = named.name.to_string();
        if seen.contains(&name) {
            // Reported by `names::unique`.
            continue;
        }
        seen.push(name.clone());
        match &named.index {
            None => scalars.push(named.name.clone()),
            Some(Index::Size { size, .. }) => {
                let Some(size) = size_name(size).and_then(|s| sizes.get(&s)).copied() else {
                    let message = match size_name(size) {
                        Some(name) => format!("unknown size `{name}`; declare it in `sizes: {{ {name} = … }}`"),
                        None => "a coordinate family's size is the name of a size declared in `sizes`, e.g. `x[N]`".to_string(),
                    };
                    errors.error_spanned(size, message);
                    continue;
                };
                let group = match groups.iter().position(|g| g.size == size) {
                    Some(g) => g,
                    None => {
                        groups.push(Group {
                            size,
                            families: Vec::new(),
                        });
                        groups.len() - 1
                    }
                };
                let position = groups[group].families.len();
                groups[group].families.push(families.len());
                families.push(CoordinateFamily {
                    name: named.name.clone(),
                    size,
                    group,
                    position,
                });
            }
            Some(Index::Rows(family)) => errors.error_spanned(
                &family.index,
                "a coordinate family is declared with its size, e.g. `x[N]`",
            ),
        }
    }
    (scalars, families, groups)
}

/// Returns every name a model with families declares, with what it declares, in source order:
/// sizes, coordinates and parameters share one scope ([`names::unique`]).
fn declared<'a>(sections: &Sections<'a>) -> Vec<(&'a Ident, &'static str)> {
    let kind = |index: &Option<Index>, scalar, family| {
        if index.is_some() {
            family
        } else {
            scalar
        }
    };
    let sizes = sections.sizes.unwrap_or_default().iter();
    let coordinates = sections.coordinates.unwrap_or_default().iter();
    let parameters = sections.parameters.unwrap_or_default().iter();
    sizes
        .map(|s| (&s.name, "size"))
        .chain(coordinates.map(|c| (&c.name, kind(&c.index, "coordinate", "coordinate family"))))
        .chain(parameters.map(|p| (&p.name, kind(&p.index, "parameter", "parameter family"))))
        .collect()
}

/// Reports two base sizes whose constructor arguments (the lower-cased names) would clash.
fn size_arguments(sizes: &[Size], errors: &mut Errors) {
    let mut arguments: HashMap<String, &Ident> = HashMap::new();
    for size in sizes.iter().filter(|s| s.base) {
        let argument = size.name.to_string().to_lowercase();
        if let Some(other) = arguments.insert(argument.clone(), &size.name) {
            errors.error_spanned(
                &size.name,
                format!("sizes `{other}` and `{}` would both be the argument `{argument}` of `new`; rename one", size.name),
            );
        }
    }
}

/// Resolves scalar parameters with constant defaults.
fn resolve_parameters(
    section: Option<&[Named<Expr>]>,
    size_index: &HashMap<String, usize>,
    errors: &mut Errors,
) -> (Vec<Parameter>, Vec<ParameterFamily>) {
    let Some(rows) = section else {
        return (Vec::new(), Vec::new());
    };
    let mut families = Vec::new();
    let mut store = Store::new();
    let symbols = Symbols::new(&[], &[]);
    let names = HashMap::new();
    let mut parameters = Vec::new();
    for row in rows {
        let size = match &row.index {
            None => None,
            Some(Index::Size { size, .. }) => {
                match size_name(size).and_then(|n| size_index.get(&n)) {
                    Some(&k) => Some(k),
                    None => {
                        errors.error_spanned(
                            size,
                            "a parameter family's size is one of the `sizes`, e.g. `m[N] = 1.0`",
                        );
                        continue;
                    }
                }
            }
            Some(Index::Rows(family)) => {
                errors.error_spanned(
                    &family.index,
                    "a parameter family is declared with a size, e.g. `m[N] = 1.0`",
                );
                continue;
            }
        };
        let mut lowerer = Lowerer {
            store: &mut store,
            symbols: &symbols,
            names: &names,
            errors,
            uses: Default::default(),
            robot: None,
        };
        let Some(value) = lowerer.lower(&row.value, Context::Constant) else {
            continue;
        };
        match mechanism_cas::eval(&store, value, &|_| None) {
            Ok(default) if default.is_finite() => match size {
                None => parameters.push(Parameter {
                    attrs: row.attrs.clone(),
                    name: row.name.clone(),
                    default,
                }),
                Some(size) => families.push(ParameterFamily {
                    attrs: row.attrs.clone(),
                    name: row.name.clone(),
                    size,
                    default,
                }),
            },
            _ => errors.error_spanned(
                &row.value,
                format!(
                    "the default of parameter `{}` is not a finite number",
                    row.name
                ),
            ),
        }
    }
    (parameters, families)
}

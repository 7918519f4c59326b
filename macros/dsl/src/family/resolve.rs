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
//!    row (`anchor: …` or `rod[i in 1..N]: …`) becomes a [`Kernel`]: its body with each member
//!    access `x[e]` replaced by a local *slot* symbol, lowered into a store of its own. The
//!    kernel is differentiated once in its slots, whatever `N` is; the generated constructor
//!    maps each instance's slots to global coordinates.

use std::collections::HashMap;

use mechanism_cas::{Id, Store};
use quote::ToTokens;
use syn::{Expr, Ident};

use crate::ast::{Index, Mechanism, Named, RowFamily, SectionBody};
use crate::errors::Errors;
use crate::family::cutoff;
use crate::family::index;
use crate::family::model::{
    member_indices, mentions_index, CoordinateFamily, FamilyModel, Group, Instances, Kernel,
    ParameterFamily, ParameterSlot, Row, Size, Slot, Term,
};
use crate::family::sums::{as_sum, split_sum};
use crate::integrators::{self as families, Family};
use crate::lower::{Context, Lowerer};
use crate::model::Parameter;
use crate::parse::SectionKind;
use crate::symbols::{Name, Symbols};

/// Returns whether `ast` uses families (a `sizes` section or an indexed declaration), i.e.
/// whether the family pipeline compiles it.
pub fn has_families(ast: &Mechanism) -> bool {
    ast.sections.iter().any(|section| {
        section.keyword == SectionKind::Sizes.keyword()
            || match &section.body {
                SectionBody::Names(names) => names.iter().any(|n| n.index.is_some()),
                SectionBody::Rows(rows) | SectionBody::Assignments(rows) => {
                    rows.iter().any(|n| n.index.is_some())
                }
                _ => false,
            }
    })
}

/// The integrators the family pipeline generates for: those of the sparse tier whose model
/// traits it emits.
pub const SUPPORTED: [Family; 8] = [
    Family::Spook,
    Family::Rattle,
    Family::Shake,
    Family::Zs,
    Family::Zss,
    Family::ZssStiff,
    Family::Verlet,
    Family::Rk,
];

/// Resolves a model with families, reporting every error at the user's tokens.
pub fn resolve(ast: &Mechanism) -> syn::Result<FamilyModel> {
    let mut errors = Errors::new();
    let mut sections: HashMap<&str, &SectionBody> = HashMap::new();
    let mut values: HashMap<&str, proc_macro2::Span> = HashMap::new();
    for section in &ast.sections {
        let keyword = section.keyword.to_string();
        match SectionKind::from_keyword(&section.keyword) {
            Some(
                SectionKind::Sizes
                | SectionKind::Coordinates
                | SectionKind::Parameters
                | SectionKind::Kinetic
                | SectionKind::Potential
                | SectionKind::Holonomic
                | SectionKind::Integrators,
            ) => {
                let kind = SectionKind::from_keyword(&section.keyword).map(|k| k.keyword());
                values
                    .entry(kind.unwrap_or(""))
                    .or_insert(section.value_span);
                if sections.insert(kind.unwrap_or(""), &section.body).is_some() {
                    errors.error_spanned(
                        &section.keyword,
                        format!("section `{keyword}` is given twice; merge them into one"),
                    );
                }
            }
            Some(_) => errors.error_spanned(
                &section.keyword,
                format!(
                    "section `{keyword}` is not available in a model with families yet; a model \
                     with `sizes` takes `coordinates`, `parameters`, `kinetic`, `potential`, \
                     `holonomic` and `integrators`"
                ),
            ),
            None => errors.error_spanned(&section.keyword, format!("unknown section `{keyword}`")),
        }
    }
    errors.barrier()?;

    let sizes = resolve_sizes(sections.get("sizes").copied(), &ast.name, &mut errors);
    let size_index: HashMap<String, usize> = sizes
        .iter()
        .enumerate()
        .map(|(i, s)| (s.name.to_string(), i))
        .collect();
    if let (Some(SectionBody::Names(names)), Some(&span)) =
        (sections.get("coordinates"), values.get("coordinates"))
    {
        if names.is_empty() {
            crate::validate::empty_coordinates(span, "[x[N], y[N]]", &mut errors);
        }
    }
    let (scalars, families, groups) = resolve_coordinates(
        sections.get("coordinates").copied(),
        &size_index,
        &ast.name,
        &mut errors,
    );
    let (parameters, parameter_families) = resolve_parameters(
        sections.get("parameters").copied(),
        &size_index,
        &mut errors,
    );
    let integrators = resolve_integrators(sections.get("integrators").copied(), &mut errors);
    if let (Some(SectionBody::Names(names)), Some(&span)) =
        (sections.get("integrators"), values.get("integrators"))
    {
        if names.is_empty() {
            crate::validate::empty_integrators(span, &mut errors);
        }
    }
    unique_names(
        &sizes,
        &scalars,
        &families,
        &parameters,
        &parameter_families,
        &mut errors,
    );
    errors.barrier()?;

    let scope = Scope {
        sizes: &sizes,
        scalars: &scalars,
        families: &families,
        parameters: &parameters,
        parameter_families: &parameter_families,
    };
    let kinetic = match sections.get("kinetic") {
        Some(SectionBody::Expr(e)) => scope.terms(e, "the kinetic energy", &mut errors),
        _ => {
            errors.error_spanned(&ast.name, "a mechanism needs `kinetic: …`");
            Vec::new()
        }
    };
    let potential = match sections.get("potential") {
        Some(SectionBody::Expr(e)) => scope.terms(e, "the potential", &mut errors),
        _ => Vec::new(),
    };
    let rows = match sections.get("holonomic") {
        Some(SectionBody::Rows(rows)) => rows
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
    })
}

/// Resolves `sizes: { N = 10, R = 4 + 3 * (N - 1) }`.
fn resolve_sizes(section: Option<&SectionBody>, model: &Ident, errors: &mut Errors) -> Vec<Size> {
    let Some(SectionBody::Assignments(rows)) = section else {
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
            errors.error_spanned(&row.name, format!("size `{}` is declared twice", row.name));
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
    section: Option<&SectionBody>,
    sizes: &HashMap<String, usize>,
    model: &Ident,
    errors: &mut Errors,
) -> (Vec<Ident>, Vec<CoordinateFamily>, Vec<Group>) {
    let (mut scalars, mut families, mut groups) = (
        Vec::new(),
        Vec::<CoordinateFamily>::new(),
        Vec::<Group>::new(),
    );
    let Some(SectionBody::Names(names)) = section else {
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
            errors.error_spanned(
                &named.name,
                format!("coordinate `{name}` is declared twice; remove one"),
            );
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

/// Returns the name of a size written as a plain identifier.
fn size_name(expr: &Expr) -> Option<String> {
    match expr {
        Expr::Path(path) => path.path.get_ident().map(|i| i.to_string()),
        _ => None,
    }
}

/// Reports a name declared twice across sizes, coordinates and parameters (they share one
/// scope), a reserved name, and two base sizes whose constructor arguments (the lower-cased
/// names) would clash.
fn unique_names(
    sizes: &[Size],
    scalars: &[Ident],
    families: &[CoordinateFamily],
    parameters: &[Parameter],
    parameter_families: &[ParameterFamily],
    errors: &mut Errors,
) {
    let names = sizes
        .iter()
        .map(|s| (&s.name, "size"))
        .chain(scalars.iter().map(|c| (c, "coordinate")))
        .chain(families.iter().map(|f| (&f.name, "coordinate family")))
        .chain(parameters.iter().map(|p| (&p.name, "parameter")))
        .chain(
            parameter_families
                .iter()
                .map(|p| (&p.name, "parameter family")),
        );
    let mut seen: HashMap<String, &str> = HashMap::new();
    for (name, kind) in names {
        let text = name.to_string();
        if matches!(text.as_str(), "dot" | "t" | "sum") || text.starts_with("__") {
            errors.error_spanned(
                name,
                format!("`{text}` is reserved in a mechanism; choose another name"),
            );
        } else if let Some(previous) = seen.insert(text.clone(), kind) {
            if previous != "coordinate" || kind != "coordinate" {
                errors.error_spanned(
                    name,
                    format!("{kind} `{text}` has the name of a {previous}; rename one of them"),
                );
            }
        }
    }
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
    section: Option<&SectionBody>,
    size_index: &HashMap<String, usize>,
    errors: &mut Errors,
) -> (Vec<Parameter>, Vec<ParameterFamily>) {
    let Some(SectionBody::Assignments(rows)) = section else {
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

/// Resolves `integrators: [..]`; the default is every supported one.
fn resolve_integrators(section: Option<&SectionBody>, errors: &mut Errors) -> Vec<Family> {
    let Some(SectionBody::Names(names)) = section else {
        return SUPPORTED.to_vec();
    };
    let mut integrators = Vec::new();
    for named in names {
        match families::from_ident(&named.name) {
            Some(family) if SUPPORTED.contains(&family) => integrators.push(family),
            Some(_) => errors.error_spanned(
                &named.name,
                format!(
                    "`{}` does not step models with families yet; use {}",
                    named.name,
                    Family::list(SUPPORTED)
                ),
            ),
            None => errors.error_spanned(&named.name, families::unknown(&named.name)),
        }
    }
    integrators
}

/// What names mean while kernels are extracted.
struct Scope<'a> {
    sizes: &'a [Size],
    scalars: &'a [Ident],
    families: &'a [CoordinateFamily],
    parameters: &'a [Parameter],
    parameter_families: &'a [ParameterFamily],
}

impl Scope<'_> {
    /// Splits an energy into its terms (`a + sum(0..N, |i| b) + …`) and extracts their kernels.
    fn terms(&self, expr: &Expr, what: &str, errors: &mut Errors) -> Vec<Term> {
        let mut parts = Vec::new();
        split_sum(expr, &mut parts);
        parts
            .into_iter()
            .filter_map(|part| match as_sum(part) {
                Some(Ok((index, pair, range, body, cut))) => {
                    let cut = match cut {
                        None => None,
                        Some(cut) => Some(cutoff::parse(cut, self.parameters, errors)?),
                    };
                    if let (Some(cut), None) = (&cut, pair) {
                        errors.error_spanned(
                            &cut.source,
                            format!("a cutoff switches the pairs of a pair sum; write the sum over pairs, `sum(a..b, |{index}, j| body, cutoff(…))`, or drop the cutoff"),
                        );
                        return None;
                    }
                    let mut instances = self.instances(index, range, None, &[], errors)?;
                    if let Some(pair) = pair {
                        if *pair == *index || self.sizes.iter().any(|s| s.name == *pair) {
                            errors.error_spanned(
                                pair,
                                format!("the second index `{pair}` of a pair sum needs a name of its own (not the first index's, not a size's)"),
                            );
                            return None;
                        }
                        instances.pair = Some(pair.clone());
                    }
                    let mut components = vec![body.clone()];
                    components.extend(cut.iter().map(|c| c.r.clone()));
                    let kernel = self.kernel(&components, &instances.names(), what, errors)?;
                    if let (Some(cut), Some(pair)) = (&cut, pair) {
                        cutoff::check_distance(&kernel, cut, index, pair, errors);
                    }
                    Some(Term {
                        source: part.to_token_stream(),
                        instances: Some(instances),
                        kernel,
                        cutoff: cut,
                    })
                }
                Some(Err(error)) => {
                    errors.push(error);
                    None
                }
                None => {
                    let kernel = self.kernel(std::slice::from_ref(part), &[], what, errors)?;
                    Some(Term {
                        source: part.to_token_stream(),
                        instances: None,
                        kernel,
                        cutoff: None,
                    })
                }
            })
            .collect()
    }

    /// Extracts a holonomic row or row family.
    fn row(&self, row: &Named<Expr>, errors: &mut Errors) -> Option<Row> {
        let (instances, names) = match &row.index {
            None => (None, Vec::new()),
            Some(Index::Rows(family)) => {
                let RowFamily {
                    index,
                    range,
                    filter,
                    bindings,
                    ..
                } = family.as_ref();
                let instances = self.instances(index, range, filter.as_ref(), bindings, errors)?;
                let names = instances.names();
                (Some(instances), names)
            }
            Some(Index::Size { size, .. }) => {
                errors.error_spanned(
                    size,
                    "a row family is written `name[i in a..b]: …`, with its index variable and range",
                );
                return None;
            }
        };
        let components: Vec<Expr> = match &row.value {
            Expr::Array(array) => array.elems.iter().cloned().collect(),
            other => vec![other.clone()],
        };
        let what = format!("constraint `{}`", row.name);
        let kernel = self.kernel(&components, &names, &what, errors)?;
        if let Some(instances) = &instances {
            // Which index names the members read.
            let read = member_indices(kernel.slots.iter());
            let mentions = |name: &Ident| mentions_index(&read, name);
            let depends = mentions(&instances.index)
                || instances.bindings.iter().any(|(name, _)| mentions(name));
            if !depends {
                errors.error_spanned(
                    &row.value,
                    format!(
                        "row family `{}` does not depend on its index `{}`: every instance is the same row; index a member with it (e.g. `x[{}]`) or write a plain row",
                        row.name, instances.index, instances.index
                    ),
                );
                return None;
            }
            for (name, _) in &instances.bindings {
                if !mentions(name) {
                    errors.error_spanned(
                        name,
                        format!("index binding `{name}` of row family `{}` is never used; remove it or index a member with it", row.name),
                    );
                }
            }
        }
        Some(Row {
            docs: row
                .attrs
                .iter()
                .filter(|a| a.path().is_ident("doc"))
                .cloned()
                .collect(),
            name: row.name.clone(),
            instances,
            kernel,
        })
    }

    /// Checks a family's range, filter and bindings.
    fn instances(
        &self,
        index: &Ident,
        range: &Expr,
        filter: Option<&Expr>,
        bindings: &[(Ident, Expr)],
        errors: &mut Errors,
    ) -> Option<Instances> {
        let Some((start, end)) = index::range_ends(range) else {
            errors.error_spanned(
                range,
                "a family's range is half-open with both ends, e.g. `1..N`",
            );
            return None;
        };
        if self.sizes.iter().any(|s| s.name == *index) {
            errors.error_spanned(
                index,
                format!("index `{index}` has the name of a size; rename it"),
            );
            return None;
        }
        let mut names: Vec<String> = self.sizes.iter().map(|s| s.name.to_string()).collect();
        let before = errors.is_empty();
        {
            let known = |n: &str| names.iter().any(|k| k == n);
            index::check(start, &known, "a range", errors);
            index::check(end, &known, "a range", errors);
        }
        names.push(index.to_string());
        if let Some(filter) = filter {
            let known = |n: &str| names.iter().any(|k| k == n);
            index::check(filter, &known, "a filter", errors);
        }
        for (name, value) in bindings {
            let known = |n: &str| names.iter().any(|k| k == n);
            index::check(value, &known, "an index binding", errors);
            names.push(name.to_string());
        }
        if before && !errors.is_empty() {
            return None;
        }
        Some(Instances {
            index: index.clone(),
            pair: None,
            start: start.clone(),
            end: end.clone(),
            filter: filter.cloned(),
            bindings: bindings.to_vec(),
        })
    }

    /// Extracts the kernel of `components`: member accesses become slots, the rest is lowered
    /// as in a fixed model. `indices` are the index names in scope (index and bindings).
    fn kernel(
        &self,
        components: &[Expr],
        indices: &[String],
        what: &str,
        errors: &mut Errors,
    ) -> Option<Kernel> {
        let mut slots: Vec<(Slot, String)> = Vec::new();
        let mut parameter_slots: Vec<(ParameterSlot, String)> = Vec::new();
        let mut rewritten = Vec::new();
        let before = errors.is_empty();
        for component in components {
            rewritten.push(self.rewrite(
                component,
                indices,
                &mut slots,
                &mut parameter_slots,
                what,
                errors,
            ));
        }
        if before && !errors.is_empty() {
            return None;
        }
        let slot_names: Vec<Ident> = (0..slots.len())
            .map(|k| quote::format_ident!("__slot{}", k))
            .collect();
        // The scalar parameters, then the parameter family members the kernel reads.
        let parameter_names: Vec<Ident> = self
            .parameters
            .iter()
            .map(|p| p.name.clone())
            .chain((0..parameter_slots.len()).map(|k| quote::format_ident!("__parameter{}", k)))
            .collect();
        let symbols = Symbols::new(&slot_names, &parameter_names);
        let mut names: HashMap<String, Name> = HashMap::new();
        for (k, name) in slot_names.iter().enumerate() {
            names.insert(name.to_string(), Name::Coordinate(k));
        }
        for (j, name) in parameter_names.iter().enumerate() {
            names.insert(name.to_string(), Name::Parameter(j));
        }
        let mut store = Store::new();
        let mut lowerer = Lowerer {
            store: &mut store,
            symbols: &symbols,
            names: &names,
            errors,
            uses: Default::default(),
        };
        let values: Option<Vec<Id>> = rewritten
            .iter()
            .map(|e| lowerer.lower(e, Context::Dynamic))
            .collect();
        let uses = lowerer.take_uses();
        if let Some(span) = uses.time.first() {
            errors.error_at(
                *span,
                format!("{what} may not depend on time `t` in a model with families yet"),
            );
        }
        Some(Kernel {
            store,
            symbols,
            slots: slots.into_iter().map(|(s, _)| s).collect(),
            values: values?,
            parameter_slots: parameter_slots.into_iter().map(|(s, _)| s).collect(),
        })
    }

    /// Replaces scalar coordinates and member accesses `x[e]` by slot names, recording the
    /// slots; reports unknown families, scalar coordinates indexed and families used bare.
    fn rewrite(
        &self,
        expr: &Expr,
        indices: &[String],
        slots: &mut Vec<(Slot, String)>,
        parameter_slots: &mut Vec<(ParameterSlot, String)>,
        what: &str,
        errors: &mut Errors,
    ) -> Expr {
        use syn::visit_mut::VisitMut;
        struct Rewriter<'s, 'e> {
            scope: &'s Scope<'s>,
            indices: &'s [String],
            slots: &'s mut Vec<(Slot, String)>,
            parameter_slots: &'s mut Vec<(ParameterSlot, String)>,
            what: &'s str,
            errors: &'e mut Errors,
        }
        impl Rewriter<'_, '_> {
            fn slot(&mut self, slot: Slot, key: String) -> Expr {
                let k = match self.slots.iter().position(|(_, existing)| *existing == key) {
                    Some(k) => k,
                    None => {
                        self.slots.push((slot, key));
                        self.slots.len() - 1
                    }
                };
                let name = quote::format_ident!("__slot{}", k);
                syn::parse_quote!(#name)
            }

            /// Checks a member index against the sizes and indices in scope.
            fn index_ok(&mut self, index: &Expr) -> bool {
                let mut names: Vec<String> = self
                    .scope
                    .sizes
                    .iter()
                    .map(|s| s.name.to_string())
                    .collect();
                names.extend(self.indices.iter().cloned());
                let known = |n: &str| names.iter().any(|k| k == n);
                let before = self.errors.is_empty();
                index::check(index, &known, "a member index", self.errors);
                !before || self.errors.is_empty()
            }
        }
        impl VisitMut for Rewriter<'_, '_> {
            fn visit_expr_mut(&mut self, expr: &mut Expr) {
                match expr {
                    Expr::Index(access) => {
                        let Some(name) = size_name(&access.expr) else {
                            if let Expr::Index(inner) = &*access.expr {
                                if size_name(&inner.expr).is_some() {
                                    self.errors.error_spanned(
                                        &*access,
                                        "a family takes one index, and this access has two; for a second dimension, declare one family per column (`x[N], y[N]` share the body index `i`) or flatten the index (`x[3 * i + k]` with `x[3 * N]`)",
                                    );
                                    return;
                                }
                            }
                            self.errors.error_spanned(
                                &access.expr,
                                "only a coordinate family can be indexed, e.g. `x[i]`",
                            );
                            return;
                        };
                        if let Some(family) = self
                            .scope
                            .parameter_families
                            .iter()
                            .position(|p| p.name == name)
                        {
                            if !self.index_ok(&access.index) {
                                return;
                            }
                            let key = format!("{name}[{}]", access.index.to_token_stream());
                            let k = match self.parameter_slots.iter().position(|(_, e)| *e == key) {
                                Some(k) => k,
                                None => {
                                    self.parameter_slots.push((
                                        ParameterSlot {
                                            family,
                                            index: (*access.index).clone(),
                                        },
                                        key,
                                    ));
                                    self.parameter_slots.len() - 1
                                }
                            };
                            let ident = quote::format_ident!("__parameter{}", k);
                            *expr = syn::parse_quote!(#ident);
                            return;
                        }
                        let Some(family) = self.scope.families.iter().position(|f| f.name == name)
                        else {
                            let message = if self.scope.scalars.iter().any(|s| *s == name) {
                                format!("`{name}` is a scalar coordinate, not a family; write `{name}` without an index, or declare `{name}[N]`")
                            } else {
                                format!(
                                    "unknown family `{name}`; the coordinate families are: {}",
                                    self.scope
                                        .families
                                        .iter()
                                        .map(|f| format!("`{}`", f.name))
                                        .collect::<Vec<_>>()
                                        .join(", ")
                                )
                            };
                            self.errors.error_spanned(&access.expr, message);
                            return;
                        };
                        if !self.index_ok(&access.index) {
                            return;
                        }
                        let key = format!("{name}[{}]", access.index.to_token_stream());
                        *expr = self.slot(
                            Slot::Member {
                                family,
                                index: (*access.index).clone(),
                            },
                            key,
                        );
                    }
                    Expr::Path(path) => {
                        let Some(ident) = path.path.get_ident() else {
                            return;
                        };
                        let name = ident.to_string();
                        if let Some(k) = self.scope.scalars.iter().position(|s| *s == name) {
                            *expr = self.slot(Slot::Scalar(k), name);
                        } else if self.scope.parameter_families.iter().any(|p| p.name == name) {
                            self.errors.error_spanned(
                                &*path,
                                format!("`{name}` is a parameter family; name one member, e.g. `{name}[i]`, in {}", self.what),
                            );
                        } else if self.scope.families.iter().any(|f| f.name == name) {
                            self.errors.error_spanned(
                                &*path,
                                format!("`{name}` is a family; name one member, e.g. `{name}[i]`, in {}", self.what),
                            );
                        } else if self.indices.contains(&name)
                            || self.scope.sizes.iter().any(|s| s.name == name)
                        {
                            self.errors.error_spanned(
                                &*path,
                                format!("`{name}` is an index or a size; it may appear only inside `[…]` in {}", self.what),
                            );
                        }
                    }
                    Expr::Call(call) if matches!(&*call.func, Expr::Path(p) if p.path.is_ident("sum")) =>
                    {
                        self.errors.error_spanned(
                            &*call,
                            format!(
                                "`sum(…)` must be a term of its own in {}: `a + sum(0..N, |i| …)`",
                                self.what
                            ),
                        );
                    }
                    _ => syn::visit_mut::visit_expr_mut(self, expr),
                }
            }
        }
        let mut copy = expr.clone();
        let mut rewriter = Rewriter {
            scope: self,
            indices,
            slots,
            parameter_slots,
            what,
            errors,
        };
        rewriter.visit_expr_mut(&mut copy);
        copy
    }
}

//! The one name check of every model: each name of its scope (sizes, coordinates, parameters,
//! and their families) declared once and none reserved; and, for a fixed-size model, the table
//! of what each name means.

use std::collections::HashMap;

use syn::Ident;

use crate::errors::Errors;
use crate::symbols::Name;

/// Whether `name` is reserved in a mechanism: the built-ins `dot`, `t` and `sum`, and every
/// name starting with `__` (the generated code's own locals).
pub fn reserved(name: &str) -> bool {
    matches!(name, "dot" | "t" | "sum") || name.starts_with("__")
}

/// Reports every name of one scope, given as `(name, what it declares)` in source order, that
/// is reserved, or declared before: twice as the same kind of name ("coordinate `x` is
/// declared twice; remove one") or as two kinds ("parameter `x` has the name of a coordinate;
/// rename one of them").
pub fn unique(declared: &[(&Ident, &str)], errors: &mut Errors) {
    let mut seen: HashMap<String, &str> = HashMap::new();
    for &(name, kind) in declared {
        let text = name.to_string();
        if reserved(&text) {
            errors.error_spanned(
                name,
                format!("`{text}` is reserved in a mechanism; choose another name"),
            );
            continue;
        }
        match seen.get(&text) {
            Some(&previous) if previous == kind => errors.error_spanned(
                name,
                format!("{kind} `{text}` is declared twice; remove one"),
            ),
            Some(&previous) => errors.error_spanned(
                name,
                format!("{kind} `{text}` has the name of a {previous}; rename one of them"),
            ),
            None => {
                seen.insert(text, kind);
            }
        }
    }
}

/// Checks the names of a fixed-size model ([`unique`]) and builds its name table.
pub fn name_table(
    coordinates: &[Ident],
    parameters: &[Ident],
    errors: &mut Errors,
) -> HashMap<String, Name> {
    let declared: Vec<(&Ident, &str)> = coordinates
        .iter()
        .map(|c| (c, "coordinate"))
        .chain(parameters.iter().map(|p| (p, "parameter")))
        .collect();
    unique(&declared, errors);
    let mut table = HashMap::new();
    for (i, name) in coordinates.iter().enumerate() {
        table.insert(name.to_string(), Name::Coordinate(i));
    }
    for (i, name) in parameters.iter().enumerate() {
        table.entry(name.to_string()).or_insert(Name::Parameter(i));
    }
    table
}

/// Reports rows whose names repeat.
pub fn unique_rows(names: &[&Ident], what: &str, errors: &mut Errors) {
    let mut seen: Vec<&Ident> = Vec::new();
    for name in names {
        if seen.iter().any(|other| other == name) {
            errors.error_spanned(
                name,
                format!("{what} `{name}` is declared twice; rename or remove one"),
            );
        } else {
            seen.push(name);
        }
    }
}

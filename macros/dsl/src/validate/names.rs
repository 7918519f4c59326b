//! Name checks: every name declared once, and a table of what each name means.

use std::collections::HashMap;

use syn::Ident;

use crate::errors::Errors;
use crate::symbols::Name;

/// Builds the name table, reporting duplicate coordinates and parameters and parameters that
/// shadow coordinates.
pub fn name_table(
    coordinates: &[Ident],
    parameters: &[Ident],
    errors: &mut Errors,
) -> HashMap<String, Name> {
    let mut table = HashMap::new();
    for (i, name) in coordinates.iter().enumerate() {
        if table
            .insert(name.to_string(), Name::Coordinate(i))
            .is_some()
        {
            errors.error_spanned(
                name,
                format!("coordinate `{name}` is declared twice; remove one"),
            );
        }
    }
    for (i, name) in parameters.iter().enumerate() {
        match table.get(&name.to_string()) {
            Some(Name::Coordinate(_)) => errors.error_spanned(
                name,
                format!("parameter `{name}` has the name of a coordinate; rename one of them"),
            ),
            Some(Name::Parameter(_)) => errors.error_spanned(
                name,
                format!("parameter `{name}` is declared twice; remove one"),
            ),
            None => {
                table.insert(name.to_string(), Name::Parameter(i));
            }
        }
        if name == "dot" || name == "t" {
            errors.error_spanned(
                name,
                format!("`{name}` is reserved in a mechanism; choose another name"),
            );
        }
    }
    for name in coordinates {
        if name == "dot" || name == "t" {
            errors.error_spanned(
                name,
                format!("`{name}` is reserved in a mechanism; choose another name"),
            );
        }
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

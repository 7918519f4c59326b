//! The names of the generated struct's fields that hold a term's or a row's instances, shared by
//! [`super::derive`] (a part names the table it loops over) and [`super::emit`].

use quote::format_ident;
use syn::Ident;

/// The field holding potential term `k`'s instance table.
pub fn potential_table(k: usize) -> Ident {
    format_ident!("__potential{}", k)
}

/// The field holding row `k`'s instance table.
pub fn row_table(k: usize) -> Ident {
    format_ident!("__row{}", k)
}

/// The field holding the number of row `k`'s first row.
pub fn row_start(k: usize) -> Ident {
    format_ident!("__row{}_start", k)
}

/// The field holding row `k`'s instances' positions in the Jacobian's pattern.
pub fn row_positions(k: usize) -> Ident {
    format_ident!("__row{}_positions", k)
}

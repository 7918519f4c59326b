//! The columns of a Parquet table from the driver's: the wide layout (one column per CSV
//! column) or the long layout of a family model (one row per member, [`MEMBER_COLUMN`]).

use std::io;
use std::sync::Arc;

use parquet::basic::{Repetition, Type as PhysicalType};
use parquet::schema::types::Type;

use super::{invalid, parquet_error};

/// How the driver's columns are laid out in a Parquet table.
///
/// The CSV is always wide (`q.x[0]`, `q.x[1]`, … as columns, the examples' contract); Parquet
/// is long for a family model unless [`Layout::Wide`] is asked for. See the [module
/// documentation](super#the-long-layout-of-a-family-model) for why.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Layout {
    /// Long when the columns include a family (names `name[i]` with every quantity over the
    /// same members `0..N`, and no column already named like a long column), wide otherwise.
    #[default]
    Auto,
    /// One `DOUBLE` column per driver column, as the CSV.
    Wide,
}

/// The name of the long layout's member column.
pub const MEMBER_COLUMN: &str = "i";

/// Where a `DOUBLE` column of the table takes its values from in a driver row.
#[derive(Debug)]
pub(super) enum Source {
    /// Driver column `j`, the same in each of the driver row's table rows.
    Scalar(usize),
    /// Driver column `columns[k]` in the table row of member `k`.
    Family(Vec<usize>),
}

/// The layout of one table: its columns and where their values come from.
#[derive(Debug)]
pub(super) struct Plan {
    /// The table's column names, in order.
    pub(super) names: Vec<String>,
    /// The driver's columns per row.
    pub(super) width: usize,
    /// The table rows per driver row: the family's `N` in the long layout, 1 in the wide one.
    pub(super) members: usize,
    /// The sources of the `DOUBLE` columns, in table order (the member column skipped).
    pub(super) sources: Vec<Source>,
    /// The position of the `INT64` member column, in the long layout.
    pub(super) member_column: Option<usize>,
}

impl Plan {
    /// Lays `columns` out as `layout` says; fails for no columns.
    pub(super) fn new(columns: &[String], layout: Layout) -> io::Result<Plan> {
        if columns.is_empty() {
            return Err(invalid("a Parquet file needs at least one column"));
        }
        let wide = || Plan {
            names: columns.to_vec(),
            width: columns.len(),
            members: 1,
            sources: (0..columns.len()).map(Source::Scalar).collect(),
            member_column: None,
        };
        if layout == Layout::Wide {
            return Ok(wide());
        }
        Ok(Plan::long(columns).unwrap_or_else(wide))
    }

    /// Returns the long layout of `columns`, or `None` when they have no family, when the
    /// family's quantities do not all have the members `0..N`, or when a long column's name is
    /// taken: the first scalar column (`t`), the member column `i`, one column per family
    /// quantity (`q.x` for `q.x[0]`, `q.x[1]`, …) in order of first appearance, then the other
    /// scalar columns.
    pub(super) fn long(columns: &[String]) -> Option<Plan> {
        let mut scalars = Vec::new();
        let mut quantities: Vec<(&str, Vec<Option<usize>>)> = Vec::new();
        for (j, name) in columns.iter().enumerate() {
            let Some((quantity, member)) = member_of(name) else {
                scalars.push(j);
                continue;
            };
            if member >= columns.len() {
                return None; // some member below it has no column
            }
            let at = match quantities.iter().position(|(q, _)| *q == quantity) {
                Some(at) => at,
                None => {
                    quantities.push((quantity, Vec::new()));
                    quantities.len() - 1
                }
            };
            let members = &mut quantities[at].1;
            if members.len() <= member {
                members.resize(member + 1, None);
            }
            if members[member].replace(j).is_some() {
                return None;
            }
        }
        let members = quantities.first()?.1.len();
        let mut families = Vec::with_capacity(quantities.len());
        for (_, of) in &quantities {
            if of.len() != members {
                return None;
            }
            families.push(of.iter().copied().collect::<Option<Vec<usize>>>()?);
        }
        let (first, rest) = scalars
            .split_first()
            .map_or((None, &[][..]), |(f, r)| (Some(*f), r));
        let mut names: Vec<String> = first.iter().map(|&j| columns[j].clone()).collect();
        let mut sources: Vec<Source> = first.into_iter().map(Source::Scalar).collect();
        let member_column = Some(names.len());
        names.push(MEMBER_COLUMN.into());
        for ((quantity, _), family) in quantities.iter().zip(families) {
            names.push((*quantity).into());
            sources.push(Source::Family(family));
        }
        for &j in rest {
            names.push(columns[j].clone());
            sources.push(Source::Scalar(j));
        }
        let mut sorted: Vec<&String> = names.iter().collect();
        sorted.sort();
        if sorted.windows(2).any(|w| w[0] == w[1]) {
            return None;
        }
        Some(Plan {
            names,
            width: columns.len(),
            members,
            sources,
            member_column,
        })
    }

    /// Returns the values the buffer holds per driver row.
    pub(super) fn values_per_row(&self) -> usize {
        self.names.len() * self.members
    }

    /// Returns the flat schema: `REQUIRED DOUBLE` columns, and the `REQUIRED INT64` member
    /// column of the long layout.
    pub(super) fn schema(&self) -> io::Result<Arc<Type>> {
        let fields = self
            .names
            .iter()
            .enumerate()
            .map(|(c, name)| {
                let physical = if self.member_column == Some(c) {
                    PhysicalType::INT64
                } else {
                    PhysicalType::DOUBLE
                };
                Type::primitive_type_builder(name, physical)
                    .with_repetition(Repetition::REQUIRED)
                    .build()
                    .map(Arc::new)
            })
            .collect::<Result<Vec<_>, _>>()
            .and_then(|fields| {
                Type::group_type_builder("schema")
                    .with_fields(fields)
                    .build()
            })
            .map_err(|e| parquet_error("cannot make the Parquet schema", e))?;
        Ok(Arc::new(fields))
    }
}

/// Returns the quantity and member of a family column's name (`("q.x", 12)` for `q.x[12]`), or
/// `None` for a scalar column.
fn member_of(name: &str) -> Option<(&str, usize)> {
    let (quantity, index) = name.strip_suffix(']')?.rsplit_once('[')?;
    if quantity.is_empty() || index.is_empty() || !index.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((quantity, index.parse().ok()?))
}

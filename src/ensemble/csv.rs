//! The CSV of an ensemble or of one of its shards ([`EnsembleCsv`]), counting the bytes it
//! writes and their CRC-32 for the shard's manifest ([`PartSummary`]).

use std::fmt;
use std::io::{self, Write};

use super::shard::Shard;
use crate::runtime::simulation::{write_number, Table};

/// One cell of an ensemble's CSV row: a number (written in the shortest form that reads back
/// to the same `f64`, as [`write_number`] does) or a text (quoted when it needs to be).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Cell<'a> {
    /// A number.
    Number(f64),
    /// A text, e.g. a method's name or an error message.
    Text(&'a str),
}

impl From<f64> for Cell<'_> {
    fn from(x: f64) -> Self {
        Cell::Number(x)
    }
}

impl<'a> From<&'a str> for Cell<'a> {
    fn from(text: &'a str) -> Self {
        Cell::Text(text)
    }
}

/// The CSV output of an ensemble or of one of its shards: a header `member,<columns>` (written
/// by shard `1/n` only) and rows that start with the member's index.
///
/// With the header in the first shard only, the shards' files concatenated in shard order
/// (`cat out-1.csv out-2.csv …`) are byte for byte the file of the unsharded run.
///
/// ```
/// use mechanism::ensemble::{Cell, EnsembleCsv, Shard};
///
/// let mut csv = EnsembleCsv::new(Vec::new(), Shard::WHOLE, &["method", "h", "error"])?;
/// csv.row(0, &[Cell::Text("rattle"), Cell::Number(0.1), Cell::Number(2.5e-3)])?;
/// assert_eq!(String::from_utf8(csv.into_inner()?).unwrap(), "member,method,h,error\n0,rattle,0.1,0.0025\n");
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug)]
pub struct EnsembleCsv<W: Write> {
    out: Summed<W>,
    columns: usize,
    rows: usize,
}

/// A writer that counts the bytes written through it and their CRC-32.
struct Summed<W> {
    out: W,
    bytes: u64,
    crc: crc32fast::Hasher,
}

impl<W: fmt::Debug> fmt::Debug for Summed<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Summed")
            .field("out", &self.out)
            .field("bytes", &self.bytes)
            .finish()
    }
}

impl<W: Write> Write for Summed<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.out.write(buf)?;
        self.crc.update(&buf[..n]);
        self.bytes += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// What an [`EnsembleCsv`] wrote: its rows (without the header), bytes and their CRC-32.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PartSummary {
    /// The rows written, without the header.
    pub rows: usize,
    /// The bytes written, the header included.
    pub bytes: u64,
    /// The CRC-32 (IEEE, as zlib and the `crc32` tool compute it) of those bytes.
    pub crc32: u32,
}

impl<W: Write> EnsembleCsv<W> {
    /// Starts the output of `shard` with the given columns after `member`; writes the header
    /// if `shard` is the first.
    pub fn new(out: W, shard: Shard, columns: &[&str]) -> io::Result<Self> {
        let mut out = Summed {
            out,
            bytes: 0,
            crc: crc32fast::Hasher::new(),
        };
        if shard.is_first() {
            out.write_all(b"member")?;
            for column in columns {
                out.write_all(b",")?;
                write_text(&mut out, column)?;
            }
            out.write_all(b"\n")?;
        }
        Ok(EnsembleCsv {
            out,
            columns: columns.len(),
            rows: 0,
        })
    }

    /// Writes one row for member `index`; fails with `InvalidInput` unless `cells` has one
    /// cell per column.
    pub fn row(&mut self, index: usize, cells: &[Cell<'_>]) -> io::Result<()> {
        if cells.len() != self.columns {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "ensemble row of member {index} has {} cells for {} columns",
                    cells.len(),
                    self.columns
                ),
            ));
        }
        write!(self.out, "{index}")?;
        for cell in cells {
            self.out.write_all(b",")?;
            match *cell {
                Cell::Number(x) => write_number(&mut self.out, x)?,
                Cell::Text(text) => write_text(&mut self.out, text)?,
            }
        }
        self.out.write_all(b"\n")?;
        self.rows += 1;
        Ok(())
    }

    /// Writes one row per row of `table` for member `index`: `index`, the member's `cells`,
    /// then the table's row (the columns given to [`new`](Self::new) must be the names of
    /// `cells` followed by [`Table::columns`]).
    pub fn table(&mut self, index: usize, cells: &[Cell<'_>], table: &Table) -> io::Result<()> {
        let mut row = Vec::with_capacity(self.columns);
        for values in table.rows() {
            row.clear();
            row.extend_from_slice(cells);
            row.extend(values.iter().map(|&x| Cell::Number(x)));
            self.row(index, &row)?;
        }
        Ok(())
    }

    /// Flushes and returns the writer.
    pub fn into_inner(self) -> io::Result<W> {
        Ok(self.finish()?.0)
    }

    /// Flushes and returns the writer with what was written through it, for the shard's
    /// [`ShardManifest`](super::ShardManifest).
    pub fn finish(mut self) -> io::Result<(W, PartSummary)> {
        self.out.flush()?;
        let summary = PartSummary {
            rows: self.rows,
            bytes: self.out.bytes,
            crc32: self.out.crc.finalize(),
        };
        Ok((self.out.out, summary))
    }
}

/// Writes `text` as a CSV field, quoted (RFC 4180) if it holds a comma, quote or line break.
fn write_text<W: Write>(out: &mut W, text: &str) -> io::Result<()> {
    if text.contains([',', '"', '\n', '\r']) {
        write!(out, "\"{}\"", text.replace('"', "\"\""))
    } else {
        out.write_all(text.as_bytes())
    }
}

//! A run's table as times and frames of a scene: the column `t` and the `q.*` columns.

use crate::pictures::{Bounds, Frame, PictureError, Scene};
use crate::runtime::simulation::Table;

/// The rows of a table as times and configurations: the column `t` and the `q.*` columns.
pub(super) struct Rows<'a> {
    table: &'a Table,
    t: usize,
    q: Vec<usize>,
}

impl<'a> Rows<'a> {
    /// Finds the columns of `table`; fails if `t` or every `q.*` is missing or there is no row.
    pub(super) fn new(table: &'a Table) -> Result<Self, PictureError> {
        let columns = table.columns();
        let t = columns
            .iter()
            .position(|c| c == "t")
            .ok_or_else(|| PictureError::MissingColumn { name: "t".into() })?;
        let q: Vec<usize> = (0..columns.len())
            .filter(|&j| columns[j].starts_with("q."))
            .collect();
        if q.is_empty() {
            return Err(PictureError::NoFrames {
                reason: "the table has no `q.*` column",
            });
        }
        if table.is_empty() {
            return Err(PictureError::NoFrames {
                reason: "the table has no row",
            });
        }
        Ok(Rows { table, t, q })
    }

    /// Returns the times of the rows.
    pub(super) fn times(&self) -> Vec<f64> {
        self.table.rows().map(|row| row[self.t]).collect()
    }

    /// Draws row `i` of `scene` into `frame` (cleared first), with `q` as scratch; checks that
    /// every drawn coordinate is finite and returns the row's time.
    pub(super) fn draw(
        &self,
        scene: &dyn Scene,
        i: usize,
        q: &mut Vec<f64>,
        frame: &mut Frame,
    ) -> Result<f64, PictureError> {
        let row = self.table.row(i).ok_or(PictureError::NoFrames {
            reason: "a frame's row is missing",
        })?;
        q.clear();
        q.extend(self.q.iter().map(|&j| row[j]));
        let t = row[self.t];
        frame.clear();
        scene.draw(t, q, frame);
        frame.check_finite(t)?;
        Ok(t)
    }

    /// Returns the box holding every element of the frames of `rows`.
    pub(super) fn bounds(
        &self,
        scene: &dyn Scene,
        rows: impl Iterator<Item = usize>,
    ) -> Result<Bounds, PictureError> {
        let (mut q, mut frame, mut bounds) = (Vec::new(), Frame::default(), Bounds::empty());
        for i in rows {
            self.draw(scene, i, &mut q, &mut frame)?;
            frame.points().for_each(|p| bounds.include(p));
        }
        if bounds.is_empty() {
            return Err(PictureError::NoFrames {
                reason: "the scene draws nothing",
            });
        }
        Ok(bounds)
    }
}

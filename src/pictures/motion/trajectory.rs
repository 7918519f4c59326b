//! The trajectory plot: the paths of a scene's bodies over every row of a run.

use std::path::Path;

use plotters::prelude::*;

use super::drawing::{chart, check_size, draw_frame, short, title_size, GREY, PATHS};
use super::rows::Rows;
use crate::pictures::{canvas, present, Frame, PictureError, Point, Scene, FONT};
use crate::runtime::simulation::Table;

/// Draws the paths of the bodies of `scene` over every row of `table` (the column `t` and the
/// `q.*` columns), one colour per body, over the first configuration in grey and the last in
/// black, with equal aspect ratio, as a PNG of `size` pixels at `path`.
///
/// Fails with [`PictureError::MissingColumn`] or [`PictureError::NoFrames`] for a table
/// without `t`, `q.*` or rows, and [`PictureError::NonFinite`] for a point the scene draws at
/// NaN or infinity.
///
/// ```
/// use mechanism::pictures::{trajectory_plot, Sketch};
/// use mechanism::runtime::simulation::{Sink, Table};
///
/// let mut table = Table::default();
/// table.begin(&["t".into(), "q.x".into(), "q.y".into()], None)?;
/// for k in 0..=64 {
///     let a = std::f64::consts::TAU * f64::from(k) / 64.0;
///     Sink::row(&mut table, &[a, a.cos(), a.sin()])?; // a particle on the unit circle
/// }
/// let particle = Sketch::new(|_t, q, frame| {
///     frame.body((q[0], q[1]));
/// });
/// let path = std::env::temp_dir().join("mechanism-trajectory-doctest.png");
/// trajectory_plot(&path, "a circle", &table, &particle, (400, 400))?;
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn trajectory_plot(
    path: &Path,
    title: &str,
    table: &Table,
    scene: &dyn Scene,
    size: (u32, u32),
) -> Result<(), PictureError> {
    check_size(size)?;
    let rows = Rows::new(table)?;
    let bounds = rows.bounds(scene, 0..table.len())?;
    let (mut q, mut frame) = (Vec::new(), Frame::default());
    let mut paths: Vec<Vec<Point>> = Vec::new();
    for i in 0..table.len() {
        rows.draw(scene, i, &mut q, &mut frame)?;
        paths.resize(paths.len().max(frame.bodies().len()), Vec::new());
        for (path, &p) in paths.iter_mut().zip(frame.bodies()) {
            path.push(p);
        }
    }
    let root = canvas(path, size)?;
    let t = rows.times();
    let (t0, t1) = (t[0], t[t.len() - 1]);
    let title = format!("{title}: paths, t = {} … {}", short(t0), short(t1));
    let area = root.titled(&title, (FONT, title_size(&title, size.0)))?;
    let mut chart = chart(&area, &bounds)?;
    rows.draw(scene, 0, &mut q, &mut frame)?;
    draw_frame(&mut chart, &frame, GREY, (true, false))?;
    for (k, points) in paths.into_iter().enumerate() {
        let color = PATHS[k % PATHS.len()];
        chart.draw_series(LineSeries::new(points, color.stroke_width(2)))?;
    }
    rows.draw(scene, table.len() - 1, &mut q, &mut frame)?;
    draw_frame(&mut chart, &frame, BLACK, (false, true))?;
    present(&root, path)
}

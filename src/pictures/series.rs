//! Time-series figures: [`Panel`]s of [`Series`] on linear or log axes, stacked by
//! [`draw_panels`]; [`plot_run`] is the examples' energy-and-residuals figure built from them.

use std::ops::Range;
use std::path::Path;

use plotters::coord::ranged1d::{AsRangedCoord, Ranged, ValueFormatter};
use plotters::coord::Shift;
use plotters::prelude::*;

use super::{canvas, present, PictureError, FONT};
use crate::runtime::simulation::Table;

/// Values at or below this are drawn at it on a log axis (exact zeros, e.g. at `t = 0`).
const LOG_FLOOR: f64 = 1e-17;

/// The colours of a panel's series, in order.
const PALETTE: [RGBColor; 6] = [BLUE, RED, GREEN, MAGENTA, CYAN, BLACK];

/// How an axis maps values to pixels.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Scale {
    /// Evenly.
    #[default]
    Linear,
    /// Logarithmically; values at or below `1e-17` are drawn at `1e-17`.
    Log,
}

/// The corner of a panel that holds its legend.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Corner {
    /// The upper left corner.
    UpperLeft,
    /// The upper right corner.
    #[default]
    UpperRight,
    /// The lower left corner.
    LowerLeft,
    /// The lower right corner.
    LowerRight,
}

/// One labelled curve of a panel: points `(x, y)`, joined by lines, optionally with markers.
/// Points with a non-finite coordinate are left out.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    label: String,
    points: Vec<(f64, f64)>,
    markers: bool,
}

impl Series {
    /// Creates the curve `label` through `points`.
    pub fn new(label: impl Into<String>, points: impl IntoIterator<Item = (f64, f64)>) -> Self {
        Series {
            label: label.into(),
            points: points
                .into_iter()
                .filter(|(x, y)| x.is_finite() && y.is_finite())
                .collect(),
            markers: false,
        }
    }

    /// Marks every point with a dot as well.
    pub fn with_markers(mut self) -> Self {
        self.markers = true;
        self
    }

    /// Returns the drawn points.
    pub fn points(&self) -> &[(f64, f64)] {
        &self.points
    }
}

/// One chart: a title, axis labels and scales, a legend corner and its [`Series`].
#[derive(Clone, Debug, PartialEq)]
pub struct Panel {
    title: String,
    x_label: String,
    y_label: String,
    x_scale: Scale,
    y_scale: Scale,
    legend: Corner,
    series: Vec<Series>,
}

impl Panel {
    /// Creates an empty panel with linear axes `x_label` (across) and `y_label` (up).
    pub fn new(
        title: impl Into<String>,
        x_label: impl Into<String>,
        y_label: impl Into<String>,
    ) -> Self {
        Panel {
            title: title.into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            x_scale: Scale::Linear,
            y_scale: Scale::Linear,
            legend: Corner::UpperRight,
            series: Vec::new(),
        }
    }

    /// Sets the scale of the horizontal axis.
    pub fn x_scale(mut self, scale: Scale) -> Self {
        self.x_scale = scale;
        self
    }

    /// Sets the scale of the vertical axis.
    pub fn y_scale(mut self, scale: Scale) -> Self {
        self.y_scale = scale;
        self
    }

    /// Puts the legend in `corner`.
    pub fn legend(mut self, corner: Corner) -> Self {
        self.legend = corner;
        self
    }

    /// Adds a curve.
    pub fn series(mut self, series: Series) -> Self {
        self.series.push(series);
        self
    }

    /// Returns the range an axis shows: the values' span, padded by 5% on a linear vertical
    /// axis and by factors on a log one (whose values are taken at least [`LOG_FLOOR`]).
    fn range(&self, scale: Scale, vertical: bool, pick: fn(&(f64, f64)) -> f64) -> Range<f64> {
        let values = self.series.iter().flat_map(|s| s.points.iter().map(pick));
        match scale {
            Scale::Linear => {
                let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                    (lo.min(v), hi.max(v))
                });
                let (lo, hi) = match (lo.is_finite(), lo < hi) {
                    (false, _) => (0.0, 1.0),
                    (true, false) => (lo - 1.0, hi + 1.0),
                    (true, true) => (lo, hi),
                };
                let pad = if vertical { 0.05 * (hi - lo) } else { 0.0 };
                lo - pad..hi + pad
            }
            Scale::Log => {
                let (lo, hi) = values
                    .filter(|&v| v > LOG_FLOOR)
                    .fold((f64::INFINITY, LOG_FLOOR), |(lo, hi), v| {
                        (lo.min(v), hi.max(v))
                    });
                let factor = if vertical { 3.0 } else { 1.5 };
                (lo.min(hi) / factor).max(LOG_FLOOR)..hi * factor
            }
        }
    }
}

/// Formats a tick of a log axis: plain between 1e-3 and 1e4, else in scientific notation.
fn log_tick(x: &f64) -> String {
    if (1e-3..1e4).contains(&x.abs()) {
        let plain = format!("{x:.3}");
        plain
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string()
    } else {
        format!("{x:.0e}")
    }
}

/// Draws `panels` stacked top to bottom, evenly, in a PNG of `size` pixels at `path`.
///
/// ```
/// use mechanism::pictures::{draw_panels, Panel, Scale, Series};
///
/// let decay = Series::new("e^-t", (0..=50).map(|k| (0.1 * k as f64, (-0.1 * k as f64).exp())));
/// let panel = Panel::new("decay", "t", "y").y_scale(Scale::Log).series(decay);
/// let path = std::env::temp_dir().join("mechanism-panels-doctest.png");
/// draw_panels(&path, (600, 300), &[panel])?;
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn draw_panels(path: &Path, size: (u32, u32), panels: &[Panel]) -> Result<(), PictureError> {
    let root = canvas(path, size)?;
    for (area, panel) in root
        .split_evenly((panels.len().max(1), 1))
        .iter()
        .zip(panels)
    {
        draw_panel(area, panel)?;
    }
    present(&root, path)
}

/// Draws `panel` on `area`, on the axes its scales ask for.
fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    panel: &Panel,
) -> Result<(), PictureError>
where
    DB::ErrorType: 'static,
{
    let x = panel.range(panel.x_scale, false, |p| p.0);
    let y = panel.range(panel.y_scale, true, |p| p.1);
    match (panel.x_scale, panel.y_scale) {
        (Scale::Linear, Scale::Linear) => fill(area, panel, x, y),
        (Scale::Linear, Scale::Log) => fill(area, panel, x, y.log_scale()),
        (Scale::Log, Scale::Linear) => fill(area, panel, x.log_scale(), y),
        (Scale::Log, Scale::Log) => fill(area, panel, x.log_scale(), y.log_scale()),
    }
}

/// Draws the axes, the series and the legend of `panel` on `area` with the coordinates `x`,
/// `y`.
fn fill<DB, X, Y>(
    area: &DrawingArea<DB, Shift>,
    panel: &Panel,
    x: X,
    y: Y,
) -> Result<(), PictureError>
where
    DB: DrawingBackend,
    DB::ErrorType: 'static,
    X: AsRangedCoord<Value = f64>,
    Y: AsRangedCoord<Value = f64>,
    X::CoordDescType: Ranged<ValueType = f64> + ValueFormatter<f64>,
    Y::CoordDescType: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let floor = |scale: Scale, v: f64| match scale {
        Scale::Linear => v,
        Scale::Log => v.max(LOG_FLOOR),
    };
    let (xs, ys) = (panel.x_scale, panel.y_scale);
    let mut chart = ChartBuilder::on(area)
        .caption(panel.title.as_str(), (FONT, 20))
        .margin(10)
        .x_label_area_size(35)
        .y_label_area_size(80)
        .build_cartesian_2d(x, y)?;
    let mut mesh = chart.configure_mesh();
    mesh.x_desc(panel.x_label.as_str())
        .y_desc(panel.y_label.as_str());
    if xs == Scale::Log {
        mesh.x_label_formatter(&log_tick);
    }
    if ys == Scale::Log {
        mesh.y_label_formatter(&log_tick);
    }
    mesh.draw()?;
    for (k, series) in panel.series.iter().enumerate() {
        let color = PALETTE[k % PALETTE.len()];
        let points: Vec<(f64, f64)> = series
            .points
            .iter()
            .map(|&(x, y)| (floor(xs, x), floor(ys, y)))
            .collect();
        if series.markers {
            chart.draw_series(points.iter().map(|&p| Circle::new(p, 4, color.filled())))?;
        }
        chart
            .draw_series(LineSeries::new(points, &color))?
            .label(series.label.as_str())
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], color));
    }
    if panel.series.iter().any(|s| !s.label.is_empty()) {
        chart
            .configure_series_labels()
            .position(match panel.legend {
                Corner::UpperLeft => SeriesLabelPosition::UpperLeft,
                Corner::UpperRight => SeriesLabelPosition::UpperRight,
                Corner::LowerLeft => SeriesLabelPosition::LowerLeft,
                Corner::LowerRight => SeriesLabelPosition::LowerRight,
            })
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()?;
    }
    Ok(())
}

/// Returns the values of the column `name` of `table`.
pub(super) fn column(table: &Table, name: &str) -> Result<Vec<f64>, PictureError> {
    table
        .column(name)
        .map(Iterator::collect)
        .ok_or_else(|| PictureError::MissingColumn { name: name.into() })
}

/// Draws the energy error `|E(t) − E(0)|` (top, with the deviation of every `energy.*` column
/// the method tracks) and the position and velocity constraint residuals (bottom) of `table`
/// against time on log axes, as a 1000 × 800 PNG at `path`: the examples' `--plot`.
///
/// The table needs the columns `t`, `energy`, `residual.position` and `residual.velocity`
/// (the driver's `Mechanics` observer writes them).
pub fn plot_run(path: &Path, title: &str, table: &Table) -> Result<(), PictureError> {
    let times = column(table, "t")?;
    let series =
        |label: &str, values: Vec<f64>| Series::new(label, times.iter().copied().zip(values));
    let deviation = |values: Vec<f64>| {
        let first = values.first().copied().unwrap_or(0.0);
        values.into_iter().map(|x| (x - first).abs()).collect()
    };
    let mut energy = Panel::new(format!("{title}: energy error"), "t", "|E(t) - E(0)|")
        .y_scale(Scale::Log)
        .series(series("energy: T + V", deviation(column(table, "energy")?)));
    // Other energies the method tracks (`energy.generalized`, `energy.penalized`, …).
    for name in table.columns().iter().filter(|c| c.starts_with("energy.")) {
        energy = energy.series(series(name, deviation(column(table, name)?)));
    }
    let (position, velocity) = (
        column(table, "residual.position")?,
        column(table, "residual.velocity")?,
    );
    let all_zero = position.iter().chain(&velocity).all(|&x| x == 0.0);
    let residuals = Panel::new(
        if all_zero {
            "constraint residuals (all zero)"
        } else {
            "constraint residuals"
        },
        "t",
        "max |residual|",
    )
    .y_scale(Scale::Log)
    .series(series("position: max |g_i|", position))
    .series(series("velocity: max |(G v)_i|", velocity));
    draw_panels(path, (1000, 800), &[energy, residuals])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_axis_covers_the_positive_values_and_floors_zeros() {
        let panel = Panel::new("", "t", "y")
            .y_scale(Scale::Log)
            .series(Series::new("a", [(0.0, 0.0), (1.0, 1e-6), (2.0, 1e-2)]));
        let y = panel.range(Scale::Log, true, |p| p.1);
        assert_eq!((y.start, y.end), (1e-6 / 3.0, 3e-2));
        let x = panel.range(Scale::Linear, false, |p| p.0);
        assert_eq!((x.start, x.end), (0.0, 2.0));
    }

    #[test]
    fn non_finite_points_are_left_out_of_a_series() {
        let series = Series::new("a", [(0.0, 1.0), (1.0, f64::NAN), (f64::INFINITY, 2.0)]);
        assert_eq!(series.points(), &[(0.0, 1.0)]);
    }

    #[test]
    fn log_ticks_are_plain_in_the_middle_and_scientific_at_the_ends() {
        assert_eq!(log_tick(&10.0), "10");
        assert_eq!(log_tick(&0.0167), "0.017");
        assert_eq!(log_tick(&1e-8), "1e-8");
    }
}

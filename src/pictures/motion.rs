//! Pictures of the motion of a planar model: the paths of its bodies ([`trajectory_plot`]) and
//! an animated GIF ([`Animation`]), from a run's rows and a [`Scene`].

use std::fmt;
use std::path::Path;

use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::scene::{equal_aspect, Bounds, Frame, Point, Scene};
use super::{canvas, create_parent, io_error, present, register_font, PictureError, FONT};
use crate::runtime::simulation::Table;

/// The margin around the plotting area, in pixels.
const MARGIN: u32 = 10;
/// The height of the area under the plot with the `x` labels, in pixels.
const X_LABELS: u32 = 30;
/// The width of the area left of the plot with the `y` labels, in pixels.
const Y_LABELS: u32 = 50;
/// The fraction of the larger side of the drawing left free around it.
const PAD: f64 = 0.05;
/// The grey of the guides and of the first configuration in the trajectory plot.
const GREY: RGBColor = RGBColor(170, 170, 170);
/// The colours of the bodies' paths, in order.
const PATHS: [RGBColor; 5] = [RED, BLUE, GREEN, MAGENTA, CYAN];

/// The rows of a table as times and configurations: the column `t` and the `q.*` columns.
struct Rows<'a> {
    table: &'a Table,
    t: usize,
    q: Vec<usize>,
}

impl<'a> Rows<'a> {
    /// Finds the columns of `table`; fails if `t` or every `q.*` is missing or there is no row.
    fn new(table: &'a Table) -> Result<Self, PictureError> {
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
    fn times(&self) -> Vec<f64> {
        self.table.rows().map(|row| row[self.t]).collect()
    }

    /// Draws row `i` of `scene` into `frame` (cleared first), with `q` as scratch; checks that
    /// every drawn coordinate is finite and returns the row's time.
    fn draw(
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
    fn bounds(
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

/// Returns the size in pixels of the plotting area of a chart on an area of `size` with the
/// margins and label areas used here.
fn plot_pixels(size: (u32, u32)) -> (u32, u32) {
    (
        size.0.saturating_sub(2 * MARGIN + Y_LABELS),
        size.1.saturating_sub(2 * MARGIN + X_LABELS),
    )
}

type Chart<'a, DB> = ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// Builds the equal-aspect chart showing `bounds` on `area` and draws its axes.
fn chart<'a, DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    bounds: &Bounds,
) -> Result<Chart<'a, DB>, PictureError>
where
    DB::ErrorType: 'static,
{
    let (x, y) = equal_aspect(bounds, plot_pixels(area.dim_in_pixel()), PAD);
    let mut chart = ChartBuilder::on(area)
        .margin(MARGIN)
        .x_label_area_size(X_LABELS)
        .y_label_area_size(Y_LABELS)
        .build_cartesian_2d(x, y)?;
    chart
        .configure_mesh()
        .light_line_style(WHITE.mix(0.0))
        .bold_line_style(BLACK.mix(0.08))
        .label_style((FONT, 14))
        .draw()?;
    Ok(chart)
}

/// Returns how thick to draw the links and how large the markers, from how many there are.
fn sizes(frame: &Frame) -> (u32, u32) {
    let width = match frame.links().len() {
        0..=20 => 3,
        21..=100 => 2,
        _ => 1,
    };
    let radius = if frame.bodies().len() > 50 { 2 } else { 5 };
    (width, radius)
}

/// Draws the links (in `link`) and anchors of `frame` on `chart`, with its guides and bodies if
/// asked (`(guides, bodies)`).
fn draw_frame<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    frame: &Frame,
    link: RGBColor,
    (guides, bodies): (bool, bool),
) -> Result<(), PictureError>
where
    DB::ErrorType: 'static,
{
    let (width, radius) = sizes(frame);
    let guides = if guides { frame.guides() } else { &[] };
    for guide in guides {
        chart.draw_series(LineSeries::new(guide.iter().copied(), GREY.stroke_width(2)))?;
    }
    chart.draw_series(
        frame
            .links()
            .iter()
            .map(|&[a, b]| PathElement::new([a, b], link.stroke_width(width))),
    )?;
    chart.draw_series(
        frame
            .anchors()
            .iter()
            .map(|&p| TriangleMarker::new(p, 8, BLACK.filled())),
    )?;
    if bodies {
        chart.draw_series(
            frame
                .bodies()
                .iter()
                .map(|&p| Circle::new(p, radius, RED.filled())),
        )?;
    }
    Ok(())
}

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

/// Returns the font size (at most 20) at which `title` fits across `width` pixels.
fn title_size(title: &str, width: u32) -> u32 {
    // DejaVu Sans averages a little over half the font size per character.
    let chars = title.chars().count().max(1) as f64;
    (f64::from(width) / (0.56 * chars)).clamp(9.0, 20.0) as u32
}

/// Formats a time with at most six decimals, without trailing zeros.
fn short(x: f64) -> String {
    let text = format!("{x:.6}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    if text == "-0" {
        "0".into()
    } else {
        text.into()
    }
}

/// Fails unless both sides of `size` are at least 100 pixels.
fn check_size(size: (u32, u32)) -> Result<(), PictureError> {
    let side = size.0.min(size.1);
    if side < 100 {
        return Err(PictureError::InvalidSetting {
            name: "picture size",
            value: f64::from(side),
            expected: "at least 100 pixels a side",
        });
    }
    Ok(())
}

/// An animated GIF of a planar model's motion: the links as segments, the bodies as markers,
/// the anchors as triangles, a time stamp, and fixed axes with equal aspect covering every
/// frame. Frames are at a fixed interval of simulated time, picked from the rows on that grid.
///
/// By default the interval is the smallest multiple of the rows' typical spacing that is at
/// least 1/25 of a time unit, there are at most 300 frames (a longer run gets a longer interval,
/// a multiple of the first, and [`AnimationSummary::capped_from`] says so), and each frame is
/// shown for the interval in real time, kept between 20 and 200 ms.
#[derive(Clone, Debug, PartialEq)]
pub struct Animation {
    title: String,
    size: (u32, u32),
    interval: Option<f64>,
    max_frames: usize,
    delay_ms: Option<u32>,
    trails: bool,
}

/// What [`Animation::write`] wrote.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AnimationSummary {
    /// The number of frames.
    pub frames: usize,
    /// The interval of simulated time between frames.
    pub interval: f64,
    /// How long each frame is shown, in milliseconds.
    pub delay_ms: u32,
    /// The number of frames the requested interval would have given, if the frame cap made
    /// the interval longer.
    pub capped_from: Option<usize>,
}

impl fmt::Display for AnimationSummary {
    /// Writes one sentence: the frames, their interval and delay, and the cap if it applied.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} frames, one every {} time units, shown {} ms each",
            self.frames,
            short(self.interval),
            self.delay_ms
        )?;
        if let Some(wanted) = self.capped_from {
            write!(f, " (capped from {wanted} frames)")?;
        }
        Ok(())
    }
}

impl Animation {
    /// Creates the animation titled `title`, 640 × 640 pixels, with the default interval, cap
    /// and delay.
    pub fn new(title: impl Into<String>) -> Self {
        Animation {
            title: title.into(),
            size: (640, 640),
            interval: None,
            max_frames: 300,
            delay_ms: None,
            trails: false,
        }
    }

    /// Sets the size in pixels (at least 100 a side).
    pub fn size(mut self, width: u32, height: u32) -> Self {
        self.size = (width, height);
        self
    }

    /// Sets the interval of simulated time between frames (positive).
    pub fn interval(mut self, dt: f64) -> Self {
        self.interval = Some(dt);
        self
    }

    /// Sets the largest number of frames (at least 1).
    pub fn max_frames(mut self, frames: usize) -> Self {
        self.max_frames = frames;
        self
    }

    /// Sets how long each frame is shown, in milliseconds (10 to 10 000; GIF counts
    /// hundredths of a second, so it is rounded to 10 ms).
    pub fn delay_ms(mut self, delay: u32) -> Self {
        self.delay_ms = Some(delay);
        self
    }

    /// Draws the path of every body up to the frame's time behind it.
    pub fn trails(mut self, trails: bool) -> Self {
        self.trails = trails;
        self
    }

    /// Writes the GIF of `scene` over the rows of `table` (the column `t` and the `q.*`
    /// columns) to `path`, creating its folder, and returns what it wrote.
    ///
    /// Fails before writing anything with [`PictureError::MissingColumn`] or
    /// [`PictureError::NoFrames`] for a table without `t`, `q.*` or rows,
    /// [`PictureError::InvalidSetting`] for a setting out of range, and
    /// [`PictureError::NonFinite`] for a row time that is not finite or a point the scene draws
    /// at NaN or infinity in a frame (rows between frames are not drawn); with
    /// [`PictureError::Io`] if the file cannot be written.
    pub fn write(
        &self,
        path: &Path,
        table: &Table,
        scene: &dyn Scene,
    ) -> Result<AnimationSummary, PictureError> {
        check_size(self.size)?;
        if self.max_frames == 0 {
            return Err(PictureError::InvalidSetting {
                name: "max_frames",
                value: 0.0,
                expected: "at least 1",
            });
        }
        if let Some(dt) = self.interval.filter(|dt| !(dt.is_finite() && *dt > 0.0)) {
            return Err(PictureError::InvalidSetting {
                name: "frame interval",
                value: dt,
                expected: "a positive number",
            });
        }
        if let Some(delay) = self.delay_ms.filter(|d| !(10..=10_000).contains(d)) {
            return Err(PictureError::InvalidSetting {
                name: "frame delay in ms",
                value: f64::from(delay),
                expected: "between 10 and 10000",
            });
        }
        let rows = Rows::new(table)?;
        let times = rows.times();
        if let Some(i) = times.iter().position(|t| !t.is_finite()) {
            return Err(PictureError::NonFinite {
                what: "row time",
                index: i,
                t: times[i],
                value: times[i],
            });
        }
        let interval = self.interval.unwrap_or_else(|| default_interval(&times));
        let plan = frame_rows(&times, interval, self.max_frames);
        let delay_ms = self
            .delay_ms
            .unwrap_or_else(|| (plan.interval * 1000.0).clamp(20.0, 200.0) as u32);
        let delay_ms = (delay_ms + 5) / 10 * 10;
        let bounds = rows.bounds(scene, plan.rows.iter().copied())?;

        create_parent(path)?;
        register_font()?;
        let root = BitMapBackend::gif(path, self.size, delay_ms)
            .map_err(|e| io_error(path, e))?
            .into_drawing_area();
        let decimals = (-plan.interval.log10()).ceil().clamp(0.0, 6.0) as usize;
        let (mut q, mut frame) = (Vec::new(), Frame::default());
        let mut trails: Vec<Vec<Point>> = Vec::new();
        for &i in &plan.rows {
            let t = rows.draw(scene, i, &mut q, &mut frame)?;
            root.fill(&WHITE)?;
            let area = root.titled(&self.title, (FONT, title_size(&self.title, self.size.0)))?;
            let mut chart = chart(&area, &bounds)?;
            let (corner, _) = chart.plotting_area().get_pixel_range();
            root.draw(&Text::new(
                format!("t = {t:.decimals$}"),
                (
                    corner.start + 8,
                    (self.size.1 - area.dim_in_pixel().1) as i32 + 16,
                ),
                (FONT, 20),
            ))?;
            if self.trails {
                trails.resize(trails.len().max(frame.bodies().len()), Vec::new());
                for (trail, &p) in trails.iter_mut().zip(frame.bodies()) {
                    trail.push(p);
                }
                for (k, trail) in trails.iter().enumerate() {
                    let color = PATHS[k % PATHS.len()].mix(0.5);
                    chart.draw_series(LineSeries::new(trail.iter().copied(), color))?;
                }
            }
            draw_frame(&mut chart, &frame, BLACK, (true, true))?;
            root.present().map_err(|e| io_error(path, e))?;
        }
        Ok(AnimationSummary {
            frames: plan.rows.len(),
            interval: plan.interval,
            delay_ms,
            capped_from: plan.capped_from,
        })
    }
}

/// Returns the smallest multiple of the median spacing of `times` that is at least 1/25.
fn default_interval(times: &[f64]) -> f64 {
    let mut gaps: Vec<f64> = times
        .windows(2)
        .map(|w| w[1] - w[0])
        .filter(|g| *g > 0.0)
        .collect();
    if gaps.is_empty() {
        return 1.0 / 25.0;
    }
    gaps.sort_by(f64::total_cmp);
    let spacing = gaps[gaps.len() / 2];
    spacing * (1.0 / 25.0 / spacing).ceil().max(1.0)
}

/// The rows that become frames, and the interval between them.
#[derive(Clone, Debug, PartialEq)]
struct FramePlan {
    rows: Vec<usize>,
    interval: f64,
    capped_from: Option<usize>,
}

/// Picks the frames of rows at `times` (sorted, finite) every `interval` from the first: for
/// each grid time `t₀ + k·interval` the first row at or after it (within rounding), skipping
/// grid times a sparser row has passed. If the grid has more than `max_frames` times, the
/// interval is multiplied by the least integer that brings it under the cap.
fn frame_rows(times: &[f64], interval: f64, max_frames: usize) -> FramePlan {
    let Some((&t0, &t_last)) = times.first().zip(times.last()) else {
        return FramePlan {
            rows: Vec::new(),
            interval,
            capped_from: None,
        };
    };
    // Relative rounding of the grid's times, as the driver's schedule allows.
    let slack = 1e-9;
    let wanted = ((t_last - t0) / interval + slack).floor() as usize + 1;
    let (interval, capped_from) = if wanted > max_frames {
        let stride = if max_frames > 1 {
            (wanted - 1).div_ceil(max_frames - 1)
        } else {
            wanted
        };
        (interval * stride as f64, Some(wanted))
    } else {
        (interval, None)
    };
    let mut rows = Vec::new();
    let mut k = 0usize;
    let mut i = 0;
    while rows.len() < max_frames {
        let target = t0 + k as f64 * interval;
        let tolerance = slack * interval.max(target.abs());
        while i < times.len() && times[i] < target - tolerance {
            i += 1;
        }
        let Some(&t) = times.get(i) else { break };
        rows.push(i);
        i += 1;
        k = (k + 1).max(((t - t0) / interval + slack).floor() as usize + 1);
    }
    FramePlan {
        rows,
        interval,
        capped_from,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pictures::Sketch;

    #[test]
    fn frames_are_the_rows_on_the_grid() {
        let times: Vec<f64> = (0..=600).map(|k| f64::from(k) / 60.0).collect();
        let plan = frame_rows(&times, 0.05, 1000);
        assert_eq!(plan.rows.len(), 201);
        assert!(plan.rows.iter().enumerate().all(|(k, &i)| i == 3 * k));
        assert_eq!(plan.capped_from, None);
    }

    #[test]
    fn sparse_rows_are_each_a_frame() {
        let times = [0.0, 1.0, 2.5, 10.0];
        let plan = frame_rows(&times, 0.1, 300);
        assert_eq!(plan.rows, vec![0, 1, 2, 3]);
    }

    #[test]
    fn the_cap_lengthens_the_interval_by_a_whole_factor() {
        let times: Vec<f64> = (0..=1000).map(|k| f64::from(k) * 0.01).collect();
        let plan = frame_rows(&times, 0.01, 101);
        assert_eq!(plan.capped_from, Some(1001));
        assert!((plan.interval - 0.1).abs() < 1e-15);
        assert_eq!(plan.rows.len(), 101);
        assert!(plan.rows.iter().enumerate().all(|(k, &i)| i == 10 * k));
    }

    #[test]
    fn the_default_interval_is_a_multiple_of_the_row_spacing() {
        let times: Vec<f64> = (0..=60).map(|k| f64::from(k) / 60.0).collect();
        assert!((default_interval(&times) - 3.0 / 60.0).abs() < 1e-15);
        let coarse = [0.0, 1.0, 2.0];
        assert_eq!(default_interval(&coarse), 1.0);
    }

    /// Renders one frame of a known configuration into memory and finds the body's red marker
    /// where the equal-aspect mapping puts its world coordinates, and nowhere else.
    #[test]
    fn a_body_is_drawn_where_its_coordinates_map() {
        let (w, h) = (400u32, 300u32);
        let scene = Sketch::new(|_t, q: &[f64], frame: &mut Frame| {
            frame.anchor((0.0, 0.0)).body((q[0], q[1]));
        });
        let q = [2.0, -1.0];
        let frame = scene.frame(0.0, &q);
        let mut bounds = Bounds::empty();
        frame.points().for_each(|p| bounds.include(p));
        let mut buffer = vec![0u8; (w * h * 3) as usize];
        register_font().unwrap();
        {
            let root = BitMapBackend::with_buffer(&mut buffer, (w, h)).into_drawing_area();
            root.fill(&WHITE).unwrap();
            let mut chart = chart(&root, &bounds).unwrap();
            draw_frame(&mut chart, &frame, BLACK, (true, true)).unwrap();
            root.present().unwrap();
        }
        // The plotting area's pixels, from the layout constants, and the expected position.
        let (pw, ph) = plot_pixels((w, h));
        let (x, y) = equal_aspect(&bounds, (pw, ph), PAD);
        assert!(
            ((x.end - x.start) / f64::from(pw) - (y.end - y.start) / f64::from(ph)).abs() < 1e-12
        );
        let left = f64::from(MARGIN + Y_LABELS);
        let top = f64::from(MARGIN);
        let px = left + (q[0] - x.start) / (x.end - x.start) * f64::from(pw);
        let py = top + (y.end - q[1]) / (y.end - y.start) * f64::from(ph);
        let red = |i: u32, j: u32| {
            let k = ((j * w + i) * 3) as usize;
            buffer[k] > 200 && buffer[k + 1] < 60 && buffer[k + 2] < 60
        };
        let reds: Vec<(u32, u32)> = (0..h)
            .flat_map(|j| (0..w).map(move |i| (i, j)))
            .filter(|&(i, j)| red(i, j))
            .collect();
        assert!(!reds.is_empty(), "the body's marker is drawn");
        let n = reds.len() as f64;
        let cx = reds.iter().map(|p| f64::from(p.0)).sum::<f64>() / n;
        let cy = reds.iter().map(|p| f64::from(p.1)).sum::<f64>() / n;
        assert!(
            (cx - px).abs() <= 1.5 && (cy - py).abs() <= 1.5,
            "marker centred at ({cx}, {cy}), expected ({px}, {py})"
        );
        assert!(reds
            .iter()
            .all(|p| (f64::from(p.0) - px).hypot(f64::from(p.1) - py) <= 7.0));
    }

    #[test]
    fn a_non_finite_point_is_named() {
        let scene = Sketch::new(|_t, q: &[f64], frame: &mut Frame| {
            frame.link((0.0, 0.0), (q[0], q[1]));
        });
        let frame = scene.frame(1.5, &[f64::NAN, 0.0]);
        match frame.check_finite(1.5) {
            Err(PictureError::NonFinite {
                what: "link",
                index: 0,
                t,
                value,
            }) => assert!(t == 1.5 && value.is_nan()),
            other => panic!("expected a non-finite link, got {other:?}"),
        }
    }
}

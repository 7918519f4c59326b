//! The animated GIF of a planar model's motion ([`Animation`]) and what it wrote
//! ([`AnimationSummary`]).

use std::fmt;
use std::path::Path;

use plotters::prelude::*;

use super::drawing::{chart, check_size, draw_frame, short, title_size, PATHS};
use super::frames::{default_interval, frame_rows};
use super::rows::Rows;
use crate::pictures::{
    create_parent, io_error, register_font, Frame, PictureError, Point, Scene, FONT,
};
use crate::runtime::simulation::Table;

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

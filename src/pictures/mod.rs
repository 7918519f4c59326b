//! Pictures of a run: time-series panels of its columns, and for planar models a trajectory
//! plot and an animated GIF of the motion (feature `pictures`, on by default).
//!
//! Everything reads the rows of a run, the runtime's [`Table`] (`t`, `q.*`, `v.*`, `energy`,
//! `residual.position`, `residual.velocity`, then extras):
//!
//! - [`plot_run`] draws the energy error and the constraint residuals against time (the
//!   examples' `--plot`); [`Panel`]s of [`Series`] on linear or log axes, stacked by
//!   [`draw_panels`], are the pieces it is built from, for figures of one's own;
//! - a [`Scene`] says what to draw of a configuration `q`: anchors, links, bodies and guides in
//!   the plane ([`Frame`]); [`Sketch`] makes one of a closure;
//! - [`trajectory_plot`] draws the paths of the scene's bodies over every row, with equal
//!   aspect ratio;
//! - [`Animation`] writes a GIF: the links as segments, the bodies as markers, a time stamp,
//!   fixed axes with equal aspect covering every frame, one frame per fixed interval of
//!   simulated time.
//!
//! ```
//! use mechanism::pictures::{Animation, Sketch};
//! use mechanism::runtime::simulation::{Sink, Table};
//!
//! // A pendulum of length 1 swinging through q = (x, y) = (sin θ, −cos θ), θ = cos t.
//! let mut table = Table::default();
//! table.begin(&["t".into(), "q.x".into(), "q.y".into()], None)?;
//! for k in 0..=100 {
//!     let t = 0.05 * f64::from(k);
//!     Sink::row(&mut table, &[t, t.cos().sin(), -t.cos().cos()])?;
//! }
//! let pendulum = Sketch::new(|_t, q, frame| {
//!     frame.anchor((0.0, 0.0)).link((0.0, 0.0), (q[0], q[1])).body((q[0], q[1]));
//! });
//! let path = std::env::temp_dir().join("mechanism-pictures-doctest.gif");
//! let summary = Animation::new("pendulum").interval(0.1).write(&path, &table, &pendulum)?;
//! assert_eq!(summary.frames, 51); // t = 0, 0.1, …, 5: every other row
//! # std::fs::remove_file(&path)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The text uses the DejaVu Sans font embedded in the binary, so no system font is needed.
//! [`canvas`] hands out the same white drawing area for a figure drawn with [`plotters`]
//! directly.
//!
//! [`Table`]: crate::runtime::simulation::Table

mod motion;
mod scene;
mod series;

use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::prelude::*;

pub use motion::{trajectory_plot, Animation, AnimationSummary};
pub use plotters;
pub use scene::{equal_aspect, Bounds, Frame, Point, Scene, Sketch};
pub use series::{draw_panels, plot_run, Corner, Panel, Scale, Series};

/// Why a picture could not be drawn.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PictureError {
    /// The table has no column of this name.
    #[error("the table has no column `{name}`")]
    MissingColumn {
        /// The missing column.
        name: String,
    },
    /// There is nothing to draw.
    #[error("no frames to draw: {reason}")]
    NoFrames {
        /// Why (no rows, no `q.*` columns, …).
        reason: &'static str,
    },
    /// A scene drew a point with a coordinate that is NaN or infinite.
    #[error("{what} {index} has the non-finite coordinate {value} at t = {t}")]
    NonFinite {
        /// The kind of element: `anchor`, `link`, `body` or `guide`.
        what: &'static str,
        /// Its index among the elements of its kind.
        index: usize,
        /// The time of the row.
        t: f64,
        /// The offending coordinate.
        value: f64,
    },
    /// A setting is out of its range.
    #[error("{name} must be {expected}, got {value}")]
    InvalidSetting {
        /// The setting.
        name: &'static str,
        /// Its value.
        value: f64,
        /// What it must be.
        expected: &'static str,
    },
    /// The file could not be written.
    #[error("cannot write {}: {message}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        message: String,
    },
    /// Plotters could not draw an element.
    #[error("cannot draw: {message}")]
    Draw {
        /// The underlying error.
        message: String,
    },
}

impl<E: std::error::Error + Send + Sync> From<DrawingAreaErrorKind<E>> for PictureError {
    fn from(error: DrawingAreaErrorKind<E>) -> Self {
        PictureError::Draw {
            message: error.to_string(),
        }
    }
}

/// The font every picture uses, registered under this family name.
const FONT: &str = "sans-serif";

/// Registers the embedded DejaVu Sans font as `sans-serif`.
fn register_font() -> Result<(), PictureError> {
    plotters::style::register_font(FONT, FontStyle::Normal, dejavu::sans::regular()).map_err(|_| {
        PictureError::Draw {
            message: "the embedded DejaVu font is invalid".into(),
        }
    })
}

/// Creates the parent folder of `path` if it has one.
fn create_parent(path: &Path) -> Result<(), PictureError> {
    match path.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(dir) => std::fs::create_dir_all(dir).map_err(|e| PictureError::Io {
            path: path.to_path_buf(),
            message: format!("cannot create {}: {e}", dir.display()),
        }),
        None => Ok(()),
    }
}

/// Returns the error of writing `path`.
fn io_error(path: &Path, error: impl std::fmt::Display) -> PictureError {
    PictureError::Io {
        path: path.to_path_buf(),
        message: error.to_string(),
    }
}

/// Returns a white PNG drawing area of `size` pixels at `path` (its folder created), with the
/// embedded font registered as `sans-serif`; call `present()` on it to write the file.
///
/// ```
/// use mechanism::pictures::{canvas, plotters::prelude::*};
///
/// let path = std::env::temp_dir().join("mechanism-canvas-doctest.png");
/// let root = canvas(&path, (200, 100))?;
/// root.draw(&Text::new("hello", (10, 10), ("sans-serif", 20)))?;
/// root.present()?;
/// assert!(std::fs::metadata(&path)?.len() > 0);
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn canvas(
    path: &Path,
    size: (u32, u32),
) -> Result<DrawingArea<BitMapBackend<'_>, Shift>, PictureError> {
    create_parent(path)?;
    register_font()?;
    let root = BitMapBackend::new(path, size).into_drawing_area();
    root.fill(&WHITE)?;
    Ok(root)
}

/// Writes the picture drawn on `root` to its file, naming `path` in the error.
fn present(root: &DrawingArea<BitMapBackend<'_>, Shift>, path: &Path) -> Result<(), PictureError> {
    root.present().map_err(|e| io_error(path, e))
}

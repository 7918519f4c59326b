//! What to draw of a configuration: a [`Scene`] writes anchors, links, bodies and guides into a
//! [`Frame`]; [`Sketch`] makes a scene of a closure. The equal-aspect window onto the plane is
//! [`equal_aspect`].

use std::ops::Range;

use super::PictureError;

/// A point of the plane, `(x, y)` in the model's units.
pub type Point = (f64, f64);

/// The picture of one configuration: fixed anchors (ground, pins), links (segments between
/// points), bodies (markers, whose paths the trajectory plot traces) and guides (fixed curves
/// such as a prescribed path), in world coordinates.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Frame {
    anchors: Vec<Point>,
    links: Vec<[Point; 2]>,
    bodies: Vec<Point>,
    guides: Vec<Vec<Point>>,
}

impl Frame {
    /// Adds a fixed anchor (the ground, a pin) at `p`.
    pub fn anchor(&mut self, p: Point) -> &mut Self {
        self.anchors.push(p);
        self
    }

    /// Adds a link: the segment from `a` to `b`.
    pub fn link(&mut self, a: Point, b: Point) -> &mut Self {
        self.links.push([a, b]);
        self
    }

    /// Adds a body (a marker) at `p`; the trajectory plot traces the bodies' paths.
    pub fn body(&mut self, p: Point) -> &mut Self {
        self.bodies.push(p);
        self
    }

    /// Adds a guide: a fixed polyline through `points`, such as a prescribed path.
    pub fn guide(&mut self, points: impl IntoIterator<Item = Point>) -> &mut Self {
        self.guides.push(points.into_iter().collect());
        self
    }

    /// Returns the anchors.
    pub fn anchors(&self) -> &[Point] {
        &self.anchors
    }

    /// Returns the links.
    pub fn links(&self) -> &[[Point; 2]] {
        &self.links
    }

    /// Returns the bodies.
    pub fn bodies(&self) -> &[Point] {
        &self.bodies
    }

    /// Returns the guides.
    pub fn guides(&self) -> &[Vec<Point>] {
        &self.guides
    }

    /// Removes every element, keeping the memory.
    pub fn clear(&mut self) {
        self.anchors.clear();
        self.links.clear();
        self.bodies.clear();
        self.guides.clear();
    }

    /// Returns every point of every element.
    pub fn points(&self) -> impl Iterator<Item = Point> + '_ {
        self.anchors
            .iter()
            .chain(self.links.iter().flatten())
            .chain(&self.bodies)
            .chain(self.guides.iter().flatten())
            .copied()
    }

    /// Returns an error naming the first non-finite coordinate, drawn at time `t`.
    pub(crate) fn check_finite(&self, t: f64) -> Result<(), PictureError> {
        let bad = |p: &Point| !(p.0.is_finite() && p.1.is_finite());
        let named = |what: &'static str, index: usize, p: &Point| PictureError::NonFinite {
            what,
            index,
            t,
            value: if p.0.is_finite() { p.1 } else { p.0 },
        };
        if let Some((i, p)) = self.anchors.iter().enumerate().find(|(_, p)| bad(p)) {
            return Err(named("anchor", i, p));
        }
        if let Some((i, [a, b])) = self
            .links
            .iter()
            .enumerate()
            .find(|(_, [a, b])| bad(a) || bad(b))
        {
            return Err(named("link", i, if bad(a) { a } else { b }));
        }
        if let Some((i, p)) = self.bodies.iter().enumerate().find(|(_, p)| bad(p)) {
            return Err(named("body", i, p));
        }
        if let Some((i, p)) = self
            .guides
            .iter()
            .enumerate()
            .find_map(|(i, g)| g.iter().find(|p| bad(p)).map(|p| (i, p)))
        {
            return Err(named("guide", i, p));
        }
        Ok(())
    }
}

/// Describes what to draw of a planar model: the [`Frame`] of the configuration `q` at time `t`
/// (`q` in the order of the table's `q.*` columns).
pub trait Scene {
    /// Adds the elements of the configuration `q` at time `t` to `frame` (which is empty).
    fn draw(&self, t: f64, q: &[f64], frame: &mut Frame);
}

/// A [`Scene`] given by a closure, so that a model's description is a few lines:
///
/// ```
/// use mechanism::pictures::Sketch;
///
/// // A double pendulum in Cartesian coordinates q = (x1, y1, x2, y2), pinned at the origin.
/// let pendulum = Sketch::new(|_t, q, frame| {
///     let (p1, p2) = ((q[0], q[1]), (q[2], q[3]));
///     frame.anchor((0.0, 0.0)).link((0.0, 0.0), p1).link(p1, p2);
///     frame.body(p1).body(p2);
/// });
/// let frame = pendulum.frame(0.0, &[1.0, 0.0, 1.0, -1.0]);
/// assert_eq!(frame.bodies(), &[(1.0, 0.0), (1.0, -1.0)]);
/// assert_eq!(frame.links().len(), 2);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Sketch<F> {
    draw: F,
}

impl<F: Fn(f64, &[f64], &mut Frame)> Sketch<F> {
    /// Creates the scene that `draw(t, q, frame)` describes.
    pub fn new(draw: F) -> Self {
        Sketch { draw }
    }

    /// Returns the frame of the configuration `q` at time `t`.
    pub fn frame(&self, t: f64, q: &[f64]) -> Frame {
        let mut frame = Frame::default();
        self.draw(t, q, &mut frame);
        frame
    }
}

impl<F: Fn(f64, &[f64], &mut Frame)> Scene for Sketch<F> {
    fn draw(&self, t: f64, q: &[f64], frame: &mut Frame) {
        (self.draw)(t, q, frame)
    }
}

/// The smallest axis-aligned box holding a set of points.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bounds {
    /// The least `x`.
    pub x_min: f64,
    /// The greatest `x`.
    pub x_max: f64,
    /// The least `y`.
    pub y_min: f64,
    /// The greatest `y`.
    pub y_max: f64,
}

impl Bounds {
    /// Returns the empty box, which [`include`](Self::include) grows.
    pub fn empty() -> Self {
        Bounds {
            x_min: f64::INFINITY,
            x_max: f64::NEG_INFINITY,
            y_min: f64::INFINITY,
            y_max: f64::NEG_INFINITY,
        }
    }

    /// Grows the box to hold `p`.
    pub fn include(&mut self, p: Point) {
        self.x_min = self.x_min.min(p.0);
        self.x_max = self.x_max.max(p.0);
        self.y_min = self.y_min.min(p.1);
        self.y_max = self.y_max.max(p.1);
    }

    /// Returns whether the box holds no point.
    pub fn is_empty(&self) -> bool {
        !(self.x_min <= self.x_max && self.y_min <= self.y_max)
    }
}

/// Returns the axis ranges of a plotting area of `pixels = (width, height)` that show `bounds`
/// with a margin of `pad` (a fraction of the larger side) and one scale for both axes: the
/// ranges' lengths are in the ratio of the pixels, so a circle is drawn round.
///
/// A box of one point or of zero width is widened to a side of 1.
///
/// ```
/// use mechanism::pictures::{equal_aspect, Bounds};
///
/// let bounds = Bounds { x_min: -1.0, x_max: 1.0, y_min: -2.0, y_max: 0.0 };
/// let (x, y) = equal_aspect(&bounds, (400, 200), 0.0);
/// assert_eq!((x.start, x.end), (-2.0, 2.0)); // widened: 4 units over 400 pixels
/// assert_eq!((y.start, y.end), (-2.0, 0.0)); // 2 units over 200 pixels
/// ```
pub fn equal_aspect(bounds: &Bounds, pixels: (u32, u32), pad: f64) -> (Range<f64>, Range<f64>) {
    let (width, height) = (f64::from(pixels.0.max(1)), f64::from(pixels.1.max(1)));
    let (cx, cy) = (
        0.5 * (bounds.x_min + bounds.x_max),
        0.5 * (bounds.y_min + bounds.y_max),
    );
    let side = (bounds.x_max - bounds.x_min).max(bounds.y_max - bounds.y_min);
    let side = if side > 0.0 { side } else { 1.0 };
    let (dx, dy) = (
        (bounds.x_max - bounds.x_min).max(0.0) + 2.0 * pad * side,
        (bounds.y_max - bounds.y_min).max(0.0) + 2.0 * pad * side,
    );
    // Units per pixel: the larger need of the two axes, then both ranges at that scale.
    let scale = (dx / width).max(dy / height);
    let scale = if scale > 0.0 { scale } else { side / width };
    let (hx, hy) = (0.5 * scale * width, 0.5 * scale * height);
    (cx - hx..cx + hx, cy - hy..cy + hy)
}

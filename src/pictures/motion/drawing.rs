//! What the pictures of motion share: the equal-aspect chart with its margins and axes, a
//! frame's guides, links, anchors and bodies drawn on it, the title's size, the time labels and
//! the check of a picture's size.

use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;

use crate::pictures::{equal_aspect, Bounds, Frame, PictureError, FONT};

/// The margin around the plotting area, in pixels.
const MARGIN: u32 = 10;
/// The height of the area under the plot with the `x` labels, in pixels.
const X_LABELS: u32 = 30;
/// The width of the area left of the plot with the `y` labels, in pixels.
const Y_LABELS: u32 = 50;
/// The fraction of the larger side of the drawing left free around it.
const PAD: f64 = 0.05;
/// The grey of the guides and of the first configuration in the trajectory plot.
pub(super) const GREY: RGBColor = RGBColor(170, 170, 170);
/// The colours of the bodies' paths, in order.
pub(super) const PATHS: [RGBColor; 5] = [RED, BLUE, GREEN, MAGENTA, CYAN];

/// Returns the size in pixels of the plotting area of a chart on an area of `size` with the
/// margins and label areas used here.
fn plot_pixels(size: (u32, u32)) -> (u32, u32) {
    (
        size.0.saturating_sub(2 * MARGIN + Y_LABELS),
        size.1.saturating_sub(2 * MARGIN + X_LABELS),
    )
}

pub(super) type Chart<'a, DB> = ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// Builds the equal-aspect chart showing `bounds` on `area` and draws its axes.
pub(super) fn chart<'a, DB: DrawingBackend>(
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
pub(super) fn draw_frame<DB: DrawingBackend>(
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

/// Returns the font size (at most 20) at which `title` fits across `width` pixels.
pub(super) fn title_size(title: &str, width: u32) -> u32 {
    // DejaVu Sans averages a little over half the font size per character.
    let chars = title.chars().count().max(1) as f64;
    (f64::from(width) / (0.56 * chars)).clamp(9.0, 20.0) as u32
}

/// Formats a time with at most six decimals, without trailing zeros.
pub(super) fn short(x: f64) -> String {
    let text = format!("{x:.6}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    if text == "-0" {
        "0".into()
    } else {
        text.into()
    }
}

/// Fails unless both sides of `size` are at least 100 pixels.
pub(super) fn check_size(size: (u32, u32)) -> Result<(), PictureError> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pictures::{register_font, Sketch};

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

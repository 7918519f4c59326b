//! The ladder's pictures: the panels of a run, the whiplash chart and the scene of the rods.

use std::error::Error;
use std::path::Path;

use mechanism::models::Ladder;
use mechanism::pictures::{draw_panels, Frame, Panel, Scale, Series, Sketch};

use crate::Sample;

/// Returns the panel of `series` against time on linear axes.
pub(crate) fn time_panel(
    title: &str,
    y_label: &str,
    series: &[(String, Vec<(f64, f64)>)],
) -> Panel {
    series
        .iter()
        .fold(Panel::new(title, "t", y_label), |panel, (name, points)| {
            panel.series(Series::new(name, points.iter().copied()))
        })
}

/// Returns the panel of one measured series with markers on log-log axes.
pub(crate) fn loglog_panel(
    title: &str,
    (x, y): (&str, &str),
    name: String,
    points: Vec<(f64, f64)>,
) -> Panel {
    Panel::new(title, x, y)
        .x_scale(Scale::Log)
        .y_scale(Scale::Log)
        .series(Series::new(name, points).with_markers())
}

/// Draws the whiplash contrast: the energy change and the largest end speed of each method
/// against time, each clipped to a few times the largest magnitude of the first (SPOOK's)
/// series so that a blow-up shows as a jump to the panel's edge instead of flattening SPOOK's
/// curve.
pub(crate) fn whiplash_chart(
    path: &Path,
    energies: &[(String, Vec<(f64, f64)>)],
    speeds: &[(String, Vec<(f64, f64)>)],
) -> Result<(), Box<dyn Error>> {
    let clip = |series: &[(String, Vec<(f64, f64)>)], factor: f64| {
        let bound = factor * series[0].1.iter().fold(0.0, |m: f64, p| m.max(p.1.abs()));
        series
            .iter()
            .map(|(name, points)| {
                let clipped = points.iter().map(|&(t, y)| (t, y.clamp(-bound, bound)));
                (name.clone(), clipped.collect())
            })
            .collect::<Vec<_>>()
    };
    let panels = [
        time_panel(
            "Whiplash, L = 20, h = 1/60: energy change (clipped at ±2x SPOOK's largest change)",
            "E(t) - E(0)",
            &clip(energies, 2.0),
        ),
        time_panel(
            "largest speed of a rod end (clipped at 3x SPOOK's maximum)",
            "max |v_end|",
            &clip(speeds, 3.0),
        ),
    ];
    Ok(draw_panels(path, (1000, 800), &panels)?)
}

/// Draws the energy, the largest end speed and the RMS violation of one run against time.
pub(crate) fn plot_run(
    path: &Path,
    label: &str,
    ladder: &Ladder,
    h: f64,
    samples: &[Sample],
) -> Result<(), Box<dyn Error>> {
    let series = |name: &str, f: fn(&Sample) -> f64| {
        [(
            name.to_string(),
            samples.iter().map(|s| (s.t, f(s))).collect(),
        )]
    };
    let title = format!("{label}, ladder L = {}, h = {h:.4}", ladder.links());
    let panels = [
        time_panel(
            &format!("{title}: energy"),
            "E = T + V",
            &series("energy", |s| s.energy),
        ),
        time_panel(
            "whiplash: largest speed of a rod end",
            "max |v_end|",
            &series("speed", |s| s.speed),
        ),
        time_panel(
            "constraint violation",
            "RMS g",
            &series("RMS violation", |s| s.rms),
        ),
    ];
    Ok(draw_panels(path, (1000, 900), &panels)?)
}

/// Returns what to draw of the ladder at `q` (per rod its centre and unit direction): every
/// rod as a segment between its ends `c ± (l/2) u`, the pin at the origin, and the centre of
/// the last rod (the far end, whose path shows the whiplash) as a body.
pub(crate) fn scene(ladder: &Ladder) -> Sketch<impl Fn(f64, &[f64], &mut Frame)> {
    let half = 0.5 * ladder.l;
    Sketch::new(move |_t, q, frame| {
        frame.anchor((0.0, 0.0));
        for rod in q.chunks_exact(4) {
            let (x, y, ux, uy) = (rod[0], rod[1], rod[2], rod[3]);
            frame.link(
                (x - half * ux, y - half * uy),
                (x + half * ux, y + half * uy),
            );
        }
        if let Some(tip) = q.chunks_exact(4).last() {
            frame.body((tip[0], tip[1]));
        }
    })
}

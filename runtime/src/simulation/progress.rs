//! A progress bar of the simulated time on stderr (feature `indicatif`).

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Per-mille steps of the bar, so that it is redrawn at most 1000 times per run.
const TICKS: u64 = 1000;

/// A bar of `t − t_0` over `t_end − t_0`, hidden unless stderr is a terminal.
#[derive(Debug)]
pub(super) struct Progress {
    bar: ProgressBar,
}

impl Progress {
    /// Creates the bar labelled `label`.
    pub(super) fn new(label: &str) -> Self {
        let target = if std::io::stderr().is_terminal() {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        };
        let bar = ProgressBar::with_draw_target(Some(TICKS), target);
        if let Ok(style) = ProgressStyle::with_template(
            "{prefix} [{elapsed_precise}] {wide_bar} {percent:>3}% (eta {eta})",
        ) {
            bar.set_style(style);
        }
        bar.set_prefix(label.to_string());
        Progress { bar }
    }

    /// Returns whether the bar is drawn.
    pub(super) fn is_visible(&self) -> bool {
        !self.bar.is_hidden()
    }

    /// Moves the bar to the fraction `done` of the run, when it moved by a tick.
    pub(super) fn update(&self, done: f64) {
        let position = (done.clamp(0.0, 1.0) * TICKS as f64) as u64;
        if position != self.bar.position() {
            self.bar.set_position(position);
        }
    }

    /// Fills the bar and leaves it on screen.
    pub(super) fn finish(&self) {
        self.bar.finish();
    }
}

//! The command line every example shares besides its `--method`: [`RunOptions`], the defaults
//! an example resolves, the refusals of options it does not support, and the run [`Plan`] the
//! options ask for.

use std::error::Error;
use std::path::PathBuf;

use mechanism::pictures::{self, Animation, Scene};
use mechanism::runtime::simulation::{Every, Schedule, Table};

use crate::cli;
use crate::plan::{adaptive_plan, plan, schedule, Plan};

/// The options every example takes besides `--method`: step size, end time and output files.
///
/// The defaults depend on the example (and on the method, for `h`), so they are `Option`s
/// resolved with [`RunOptions::h_or`], [`RunOptions::t_end_or`], [`RunOptions::csv_or`] and
/// [`RunOptions::png_or`]. Every value is checked while the command line is read
/// ([`cli::parse`] with the value parsers of [`cli`]): a zero, negative, NaN or infinite number,
/// `--every 0` and an output path that cannot be written end the example with one line before
/// anything runs.
#[derive(Clone, Debug, clap::Args)]
pub struct RunOptions {
    /// Step size h [default: depends on the example and the method].
    #[arg(long, allow_hyphen_values = true, value_parser = cli::positive)]
    pub h: Option<f64>,
    /// End time of the run, and the bound of every other run the example does (see its
    /// --help for the exceptions) [default: depends on the example].
    #[arg(long, allow_hyphen_values = true, value_parser = cli::positive)]
    pub t_end: Option<f64>,
    /// Output table, one row per step: FILE.csv, or FILE.parquet for Parquet (a directory of
    /// parts); rows are written while the run goes [default: out/<example>.csv].
    #[arg(long, value_name = "FILE", value_parser = cli::output)]
    pub out: Option<PathBuf>,
    /// Output plot of energy error and constraint residuals [default: out/<example>.png].
    #[arg(long, value_name = "FILE.png", value_parser = cli::output)]
    pub plot: Option<PathBuf>,
    /// Write rows at exactly t = 0, DT, 2·DT, … and at the end time instead of after every
    /// step (fixed-step methods: DT must be a multiple of h; DOPRI5: from its dense output).
    /// The summaries are still taken over every step.
    #[arg(long, value_name = "DT", allow_hyphen_values = true, value_parser = cli::positive)]
    pub save_every: Option<f64>,
    /// Write every K-th row only (of the steps, or of the times of --save-every), and the
    /// last; the summaries are still taken over every step [default: 1, or the example's].
    #[arg(long, value_name = "K", allow_negative_numbers = true, value_parser = cli::count)]
    pub every: Option<usize>,
    /// Write an animated GIF of the motion from the rows (planar examples only).
    #[arg(long, value_name = "FILE.gif", value_parser = cli::output)]
    pub animate: Option<PathBuf>,
    /// Write a plot of the bodies' paths in the plane from the rows (planar examples only).
    #[arg(long, value_name = "FILE.png", value_parser = cli::output)]
    pub paths: Option<PathBuf>,
    /// Write a checkpoint of the run to FILE (atomically: FILE.tmp, then renamed) every
    /// --checkpoint-every DT of simulated time, at the end and when interrupted (SIGINT,
    /// SIGTERM), so that --resume FILE continues it bit for bit.
    #[arg(long, value_name = "FILE", value_parser = cli::output)]
    pub checkpoint: Option<PathBuf>,
    /// The simulated time between two checkpoints [default: none, only at the end and when
    /// interrupted]; needs --checkpoint.
    #[arg(long, value_name = "DT", allow_hyphen_values = true, value_parser = cli::positive)]
    pub checkpoint_every: Option<f64>,
    /// Continue the run from the checkpoint FILE: the same example, method, options and
    /// output (a CSV is cut to its length at the checkpoint and appended to; a Parquet
    /// dataset loses its parts written after it), with the end time free to grow; the plot and
    /// the summary cover the resumed part. A checkpoint of another model, method, setting or
    /// version is refused with the part that differs.
    #[arg(long, value_name = "FILE", value_parser = cli::input)]
    pub resume: Option<PathBuf>,
}

impl RunOptions {
    /// Returns `--h`, or `default` if it was not given.
    pub fn h_or(&self, default: f64) -> f64 {
        self.h.unwrap_or(default)
    }

    /// Returns `--t-end`, or `default` if it was not given.
    pub fn t_end_or(&self, default: f64) -> f64 {
        self.t_end.unwrap_or(default)
    }

    /// Returns `--every`, or else `default` for rows after every step and 1 with
    /// `--save-every` (whose times already choose the rows).
    pub fn every_or(&self, default: usize) -> usize {
        match (self.every, self.save_every) {
            (Some(every), _) => every,
            (None, Some(_)) => 1,
            (None, None) => default,
        }
    }

    /// Returns `--out`, or `out/<example>.csv`.
    pub fn csv_or(&self, example: &str) -> PathBuf {
        self.out
            .clone()
            .unwrap_or_else(|| PathBuf::from(format!("out/{example}.csv")))
    }

    /// Returns `--plot`, or `out/<example>.png`.
    pub fn png_or(&self, example: &str) -> PathBuf {
        self.plot
            .clone()
            .unwrap_or_else(|| PathBuf::from(format!("out/{example}.png")))
    }
}

impl RunOptions {
    /// Fails with one line if `--animate` or `--paths` was given to `example`, whose model is
    /// not planar (`why`).
    pub fn refuse_motion(&self, example: &str, why: &str) -> Result<(), Box<dyn Error>> {
        match (&self.animate, &self.paths) {
            (Some(_), _) => Err(format!("--animate is for planar models; {example}: {why}").into()),
            (_, Some(_)) => Err(format!("--paths is for planar models; {example}: {why}").into()),
            (None, None) => Ok(()),
        }
    }

    /// Fails with one line if `--checkpoint`, `--checkpoint-every` or `--resume` was given to
    /// `what`, a run or a table the example does not checkpoint (`why`), so that the options
    /// are never silently ignored.
    pub fn refuse_checkpoints(&self, what: &str, why: &str) -> Result<(), Box<dyn Error>> {
        let given = [
            (self.checkpoint.is_some(), "--checkpoint"),
            (self.checkpoint_every.is_some(), "--checkpoint-every"),
            (self.resume.is_some(), "--resume"),
        ];
        match given.iter().find(|(set, _)| *set) {
            Some((_, option)) => Err(format!("{option} is not supported by {what}: {why}").into()),
            None => Ok(()),
        }
    }

    /// Writes the GIF of `--animate` and the plot of `--paths` of `table` (the rows: `t`,
    /// `q.*`, …) as `scene` draws a configuration, and prints what it wrote.
    pub fn draw_motion(
        &self,
        title: &str,
        table: &Table,
        scene: &dyn Scene,
    ) -> Result<(), Box<dyn Error>> {
        self.draw_motion_with(Animation::new(title), title, table, scene)
    }

    /// Does [`draw_motion`](Self::draw_motion) with the settings of `animation`.
    pub fn draw_motion_with(
        &self,
        animation: Animation,
        title: &str,
        table: &Table,
        scene: &dyn Scene,
    ) -> Result<(), Box<dyn Error>> {
        if let Some(gif) = &self.animate {
            let summary = animation.write(gif, table, scene)?;
            println!("wrote {}: {summary}", gif.display());
        }
        if let Some(png) = &self.paths {
            pictures::trajectory_plot(png, title, table, scene, (800, 800))?;
            println!("wrote {}", png.display());
        }
        Ok(())
    }

    /// Returns the output schedule of `--save-every` ([`schedule`]).
    pub fn schedule(&self) -> Result<Schedule, Box<dyn Error>> {
        schedule(self.save_every)
    }

    /// Returns the [`plan`] of a fixed-step run of step `h` to `t_end` with `--save-every`,
    /// `--every`, `--checkpoint`, `--checkpoint-every` and `--resume`.
    pub fn plan(&self, h: f64, t_end: f64) -> Result<Plan, Box<dyn Error>> {
        let plan = plan(h, t_end, self.save_every)?;
        self.with_run_options(plan)
    }

    /// Returns the [`adaptive_plan`] of `--save-every` with `--every`, `--checkpoint`,
    /// `--checkpoint-every` and `--resume`.
    pub fn adaptive_plan(&self) -> Result<Plan, Box<dyn Error>> {
        self.with_run_options(adaptive_plan(self.save_every)?)
    }

    /// Returns `plan` with `--every`, `--checkpoint`, `--checkpoint-every` and `--resume`.
    fn with_run_options(&self, plan: Plan) -> Result<Plan, Box<dyn Error>> {
        Ok(Plan {
            every: self.every_or(1),
            checkpoint: self.checkpointing()?,
            resume: self.resume.clone(),
            ..plan
        })
    }

    /// Returns the checkpoint file and interval of `--checkpoint` and `--checkpoint-every`
    /// (both already checked by the command line's value parsers), refusing an interval
    /// without a file. Without `--checkpoint-every` a checkpoint is written only at the end
    /// and when the run is interrupted.
    pub fn checkpointing(&self) -> Result<Option<(PathBuf, Every)>, Box<dyn Error>> {
        match (&self.checkpoint, self.checkpoint_every) {
            (None, None) => Ok(None),
            (None, Some(_)) => Err("--checkpoint-every needs --checkpoint FILE".into()),
            (Some(file), Some(dt)) => Ok(Some((file.clone(), Every::Time(dt)))),
            (Some(file), None) => Ok(Some((file.clone(), Every::Steps(usize::MAX)))),
        }
    }
}

//! Pictures of the motion of a planar model: the paths of its bodies ([`trajectory_plot`]) and
//! an animated GIF ([`Animation`]), from a run's rows and a [`Scene`](super::Scene).
//!
//! [`rows`] reads a run's table as the frames of a scene, [`drawing`] lays out an equal-aspect
//! chart and draws a frame on it, [`trajectory`] and [`animation`] are the two pictures, and
//! [`frames`] picks the rows an animation shows.

mod animation;
mod drawing;
mod frames;
mod rows;
mod trajectory;

pub use animation::{Animation, AnimationSummary};
pub use trajectory::trajectory_plot;

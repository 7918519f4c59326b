//! The rows an animation shows: a grid of simulated time at a fixed interval, its default, and
//! the cap on the number of frames.

/// Returns the smallest multiple of the median spacing of `times` that is at least 1/25.
pub(super) fn default_interval(times: &[f64]) -> f64 {
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
pub(super) struct FramePlan {
    pub(super) rows: Vec<usize>,
    pub(super) interval: f64,
    pub(super) capped_from: Option<usize>,
}

/// Picks the frames of rows at `times` (sorted, finite) every `interval` from the first: for
/// each grid time `t₀ + k·interval` the first row at or after it (within rounding), skipping
/// grid times a sparser row has passed. If the grid has more than `max_frames` times, the
/// interval is multiplied by the least integer that brings it under the cap.
pub(super) fn frame_rows(times: &[f64], interval: f64, max_frames: usize) -> FramePlan {
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
}

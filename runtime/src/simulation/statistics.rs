//! Summaries over every step of a run that the rows do not hold: batch means of a correlated
//! series (the standard error of a sampled average, e.g. a Langevin run's moments).

/// A sampled mean with its batch-means standard error.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    /// The sample mean.
    pub mean: f64,
    /// The batch-means standard error of the mean.
    pub error: f64,
}

impl Estimate {
    /// Returns the mean of `values` and its standard error `s/√B`, `s` the sample standard
    /// deviation of the `B = values.len()` values (NaN for fewer than two).
    pub fn of(values: &[f64]) -> Self {
        let b = values.len() as f64;
        let mean = values.iter().sum::<f64>() / b;
        let variance = values.iter().map(|m| (m - mean).powi(2)).sum::<f64>() / (b - 1.0);
        Estimate {
            mean,
            error: (variance / b).sqrt(),
        }
    }
}

/// Batch means of a correlated series (Flyvbjerg–Petersen 1989): split it into `B`
/// consecutive batches of `size` values, much longer than its correlation time, whose means are
/// then nearly independent, so the standard error of the overall mean is the standard
/// deviation of the batch means over `√B`. Values after the last complete batch are left out.
///
/// Fed from an [`on_step`](super::Simulation::on_step) monitor it summarizes every step of a
/// run whatever its output schedule; it allocates only when a batch completes (reserve with
/// [`with_batches`](Self::with_batches) for none).
///
/// ```
/// use mechanism_runtime::simulation::BatchMeans;
///
/// let mut sums = BatchMeans::with_batches(2, 3);
/// for x in [1.0, 3.0, 5.0, 7.0, 9.0, 11.0, 100.0] {
///     sums.push(x);
/// }
/// assert_eq!(sums.means(), [2.0, 6.0, 10.0]); // 100 starts an incomplete batch
/// let estimate = sums.estimate();
/// assert_eq!(estimate.mean, 6.0);
/// assert!((estimate.error - (16.0f64 / 3.0).sqrt()).abs() < 1e-15); // s = 4, B = 3
/// ```
#[derive(Clone, Debug)]
pub struct BatchMeans {
    size: usize,
    count: usize,
    sum: f64,
    means: Vec<f64>,
}

impl BatchMeans {
    /// Creates batch means over batches of `size` values (`size = 0` is taken as 1).
    pub fn new(size: usize) -> Self {
        Self::with_batches(size, 0)
    }

    /// Creates batch means over batches of `size` values with room for `batches` of them.
    pub fn with_batches(size: usize, batches: usize) -> Self {
        BatchMeans {
            size: size.max(1),
            count: 0,
            sum: 0.0,
            means: Vec::with_capacity(batches),
        }
    }

    /// Adds the next value of the series.
    pub fn push(&mut self, x: f64) {
        self.sum += x;
        self.count += 1;
        if self.count == self.size {
            self.means.push(self.sum / self.size as f64);
            self.count = 0;
            self.sum = 0.0;
        }
    }

    /// Returns the means of the completed batches.
    pub fn means(&self) -> &[f64] {
        &self.means
    }

    /// Returns the mean of the completed batches and its standard error.
    pub fn estimate(&self) -> Estimate {
        Estimate::of(&self.means)
    }
}

//! The harness the integration tests of `mechanism` and `mechanism-runtime` share: runs and
//! step counts, convergence tables, finite differences and a per-thread counting allocator.
//!
//! Each package's tests reach it through their one support module (`tests/it/support`), which adds
//! the package's own test models. With the feature `dsl-models`, `bodies` holds the `mechanism!`
//! bodies that the compile pipeline's tests and its `chains` example share (`mechanism-dsl`'s
//! dev-dependency turns it on). It is test code: its helpers panic on misuse (a step size that does
//! not divide the time, a pair listed twice) rather than return errors.
#![warn(missing_docs)]

#[cfg(feature = "dsl-models")]
pub mod bodies;
mod steps;

use mechanism_runtime::reference::fit::loglog_slope;
use mechanism_runtime::{Integrator, State, StepError};

/// Returns the number of steps of size `h` that reach `t_end` exactly (up to rounding).
pub fn steps_to(t_end: f64, h: f64) -> usize {
    let n = (t_end / h).round();
    assert!(
        (n * h - t_end).abs() < 1e-9 * t_end.max(1.0),
        "h = {h} does not divide t = {t_end}"
    );
    n as usize
}

/// Runs `steps` steps and calls `observe` after each; returns the final state.
pub fn run<I, Model, const N: usize>(
    integrator: &mut I,
    model: &Model,
    initial: State<N>,
    steps: usize,
    mut observe: impl FnMut(&State<N>),
) -> Result<State<N>, StepError>
where
    I: Integrator<Model, N>,
{
    let mut state = initial;
    for _ in 0..steps {
        integrator.step(model, &mut state)?;
        observe(&state);
    }
    Ok(state)
}

/// Returns the dense row-major `n × n` symmetric matrix whose entries `values` are listed on
/// `pattern` with each unordered pair once, in either triangle (the sparse tier's Hessian
/// convention); panics if a pair is listed twice.
pub fn dense_symmetric(pattern: &[(usize, usize)], values: &[f64], n: usize) -> Vec<f64> {
    let mut seen = std::collections::HashSet::new();
    let mut m = vec![0.0; n * n];
    for (&(i, j), &x) in pattern.iter().zip(values) {
        assert!(seen.insert((i.min(j), i.max(j))), "({i}, {j}) listed twice");
        m[i * n + j] += x;
        if i != j {
            m[j * n + i] += x;
        }
    }
    m
}

/// Central differences of `f` at `x` along every coordinate, with step `d`: column `j` is
/// `∂f/∂x_j`, with truncation error `O(d²)`.
pub fn central_differences(f: &dyn Fn(&[f64]) -> Vec<f64>, x: &[f64], d: f64) -> Vec<Vec<f64>> {
    (0..x.len())
        .map(|j| {
            let (mut up, mut down) = (x.to_vec(), x.to_vec());
            up[j] += d;
            down[j] -= d;
            f(&up)
                .iter()
                .zip(f(&down))
                .map(|(a, b)| (a - b) / (2.0 * d))
                .collect()
        })
        .collect()
}

/// Prints a convergence table and returns its log-log slope.
pub fn report(label: &str, hs: &[f64], errors: &[f64]) -> f64 {
    let slope = loglog_slope(hs, errors).expect("a positive error per step size");
    println!("{label}");
    for (h, e) in hs.iter().zip(errors) {
        println!("  h = {h:<10.6} error = {e:.3e}");
    }
    println!("  log-log slope = {slope:.3}");
    slope
}

/// A global allocator that counts the allocations (and reallocations) made by the current
/// thread, so that tests running in parallel do not disturb each other's counts. A test binary
/// that checks for heap allocation in a step installs it with
/// `#[global_allocator] static GLOBAL: CountingAllocator = CountingAllocator;` and compares
/// [`allocations`] before and after.
pub struct CountingAllocator;

std::thread_local! {
    static ALLOCATIONS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

unsafe impl std::alloc::GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        ALLOCATIONS.with(|count| count.set(count.get() + 1));
        unsafe { std::alloc::System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        unsafe { std::alloc::System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.with(|count| count.set(count.get() + 1));
        unsafe { std::alloc::System.realloc(ptr, layout, new_size) }
    }
}

/// Returns the number of allocations the current thread has made through [`CountingAllocator`].
pub fn allocations() -> usize {
    ALLOCATIONS.with(std::cell::Cell::get)
}

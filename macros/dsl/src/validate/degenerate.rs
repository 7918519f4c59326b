//! Finds holonomic rows whose gradient vanishes wherever the row holds, such as a squared
//! constraint `(x.powi(2) + y.powi(2) - 1.0).powi(2)`: their constraint force has no
//! direction, so no integrator can enforce them (the linear systems are singular exactly on
//! the constraint set).
//!
//! Sample points are pulled onto each row's zero set by Gauss–Newton steps
//! `q ← q − g ∇g / |∇g|²`; a regular row converges quadratically to a point with a gradient of
//! order one, a squared one linearly to a point where the gradient has vanished with `g`.

use mechanism_cas::{gradient, Id};

use crate::errors::Errors;
use crate::model::Model;
use crate::sample::{points, Point};
use crate::sections::Sections;

/// Iterations of the projection onto a row's zero set at most (a squared row halves its
/// distance per iteration, so about 50 reach round-off).
const ITERATIONS: usize = 80;

/// Reports every holonomic row whose gradient vanishes at every sample point projected onto
/// its zero set (where the projection reaches it), at the row's expression.
pub fn check(model: &mut Model, sections: &Sections, errors: &mut Errors) {
    let defaults: Vec<f64> = model.parameters.iter().map(|p| p.default).collect();
    for k in 0..model.constraints.len() {
        let g = model.constraints[k].expr;
        let grad = gradient(&mut model.store, g, &model.symbols.q);
        let mut reached = 0;
        let mut degenerate = true;
        for mut point in points(&model.symbols, Some(&defaults), 8) {
            let Some((start, end)) = project(model, g, &grad, &mut point) else {
                continue;
            };
            reached += 1;
            degenerate &= end <= 1e-8 * start.max(1.0);
        }
        if reached >= 2 && degenerate {
            let name = &model.constraints[k].name;
            let row = sections
                .holonomic
                .unwrap_or_default()
                .iter()
                .find(|r| &r.name == name);
            let message = format!(
                "the gradient of constraint `{name}` vanishes wherever `{name} = 0` holds (as for a squared constraint `h.powi(2)`), so its constraint force has no direction and no integrator can enforce it; write the constraint `h` itself, not a power or a sum of squares of it"
            );
            match row {
                Some(row) => errors.error_spanned(&row.value, message),
                None => errors.error_spanned(name, message),
            }
        }
    }
}

/// Moves `point`'s coordinates onto `g = 0`; returns `|∇g|` at the start and at the end, or
/// `None` where the projection leaves the domain or does not reach the zero set.
fn project(model: &Model, g: Id, grad: &[Id], point: &mut Point) -> Option<(f64, f64)> {
    let store = &model.store;
    let q = &model.symbols.q;
    // Only the coordinates the row depends on move.
    let (q, grad): (Vec<_>, Vec<Id>) = q
        .iter()
        .zip(grad)
        .filter(|(_, &d)| !store.is_zero(d))
        .map(|(&s, &d)| (s, d))
        .unzip();
    let gradient_at = |point: &Point| -> Option<Vec<f64>> {
        grad.iter().map(|&d| point.eval(store, d)).collect()
    };
    let norm = |x: &[f64]| x.iter().map(|c| c * c).sum::<f64>().sqrt();
    let start = norm(&gradient_at(point)?);
    let mut value = point.eval(store, g)?;
    for _ in 0..ITERATIONS {
        if value == 0.0 {
            break;
        }
        let d = gradient_at(point)?;
        let squared: f64 = d.iter().map(|c| c * c).sum();
        if squared == 0.0 {
            break;
        }
        let mut step = 0.0f64;
        let mut size = 1.0f64;
        for (&s, dc) in q.iter().zip(&d) {
            let delta = value * dc / squared;
            step = step.max(delta.abs());
            size = size.max(point.get(s).abs());
            point.set(s, point.get(s) - delta);
        }
        value = point.eval(store, g)?;
        // Converged to round-off: a regular row after a few steps; a squared one (which
        // halves its distance per step) when the distance, and with it its gradient, is
        // below 1e-14.
        if step <= 1e-14 * size {
            break;
        }
    }
    let scale = start.max(1.0);
    (value.abs() <= 1e-12 * scale).then_some(())?;
    Some((start, norm(&gradient_at(point)?)))
}

//! Index reduction and stabilization over explicit Runge–Kutta (Ascher, Chin, Petzold and
//! Reich 1995): convergence orders against references written here in other coordinates, error
//! control of DOPRI5, drift of every stabilization (Tables 6.1–6.3 of the paper, on the
//! two-link arm of its Example 2, hand-written in `reference::robot_arm`), typed errors and allocation-free steps.

mod allocations;
mod drift;
mod errors;
mod model_checks;
mod models;
mod orders;
mod tableaus;

//! Explicit symplectic baselines for unconstrained (or penalized) models.

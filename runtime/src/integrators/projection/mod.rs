//! Projection methods for holonomic constraints: SHAKE and RATTLE.

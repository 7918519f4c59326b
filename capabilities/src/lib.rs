//! What each integrator family can step: the one table that `mechanism!`'s compile-time checks,
//! its hints, its default integrator set, the run-time `StepError::Unsupported` text and the
//! crate documentation's table are derived from (DESIGN.md, "What each integrator needs").
//!
//! # Why the table is a crate of its own
//!
//! The integrators are `mechanism-runtime`'s: whether SPOOK can step a configuration-dependent
//! mass matrix is a property of `Spook::step`, not of the macro. The runtime re-exports this
//! crate as `mechanism_runtime::capabilities` (its tests check the runtime's documentation
//! against the table), and the macro's pipeline (`mechanism-dsl`) reads
//! [`Family::capabilities`] from here, so a change to an integrator and to what the macro
//! accepts for it is one edit in one file. The table is plain data with no dependency at all,
//! so the proc macro — compiled optimized for the host in every build profile — does not
//! compile the runtime (`nalgebra`, `faer`, `serde`) to read it.

#![warn(missing_docs)]

use std::fmt::Write as _;
use std::sync::LazyLock;

/// An integrator family, as named in `mechanism!`'s `integrators: [..]`: the model code one
/// name asks for, and the runtime types ([`Family::schemes`]) that step a model compiled for
/// it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Family {
    /// SPOOK (Lacoursière 2007).
    Spook,
    /// Zhang–Skeel (Tao–Owhadi 2014, eq. 3).
    Zs,
    /// Simplified Zhang–Skeel (eq. 18).
    Zss,
    /// Simplified Zhang–Skeel for stiff systems (eq. 19).
    ZssStiff,
    /// Newmark with a full nonlinear solve (eq. 12).
    Newmark,
    /// Newmark with one Newton iteration.
    Newmark1,
    /// Push-forward Newmark (eq. 14).
    PfNewmark,
    /// Livens principle with Gonzalez discrete gradients (Kinon–Betsch).
    Livens,
    /// SHAKE.
    Shake,
    /// RATTLE.
    Rattle,
    /// Symplectic Euler.
    SymplecticEuler,
    /// Störmer–Verlet.
    Verlet,
    /// Explicit Runge–Kutta on the index-1 formulation with stabilization (Ascher et al. 1995).
    Rk,
    /// Discrete Lagrange–d'Alembert (Cuell 2005).
    Dlda,
    /// Discrete Lagrange–d'Alembert on the midpoint discrete Lagrangian, with the constraint at
    /// the midpoint (McLachlan–Perlmutter 2006), for a configuration-dependent mass matrix.
    DldaMidpoint,
}

/// What an integrator family requires of the model and what it can treat.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Capabilities {
    /// Treats holonomic rows (as constraints, or as the penalty `½ω²|g|²`).
    pub holonomic: bool,
    /// Treats nonholonomic rows.
    pub nonholonomic: bool,
    /// Treats holonomic constraints that depend on time.
    pub rheonomic: bool,
    /// Uses dissipation and generalized forces.
    pub forces: bool,
    /// Works with a mass matrix that is singular, as long as the constraints fix every
    /// direction without inertia (it never forms `M⁻¹`).
    pub singular_mass: bool,
    /// Works with a mass matrix that is singular in directions only the potential determines
    /// (a coordinate without inertia and without a constraint, Kinon–Betsch §6.1).
    pub massless_coordinates: bool,
    /// Works with a configuration-dependent mass matrix (its step has the velocity terms
    /// `∂T/∂q − Ṁv`); the others fail with `StepError::Unsupported`.
    pub varying_mass: bool,
    /// Needs holonomic constraints with linearly independent rows.
    pub full_rank: bool,
    /// Runs holonomic constraints as the penalty `½ω²|g|²` instead of as constraints.
    pub penalty: bool,
    /// Needs the Hessian of the penalty `½ω²|g|²` alone, as the stiff part of the potential.
    pub stiff_penalty: bool,
    /// Needs `Hess V`.
    pub hessian: bool,
    /// Needs the contraction `a·V'''·a` (so `V` must be three times differentiable).
    pub third_derivative: bool,
    /// Needs discrete gradients and their Newton Jacobians.
    pub discrete_gradients: bool,
    /// Needs the time derivatives of the constraints (index reduction).
    pub kinematics: bool,
    /// Solves a linear system per step that `mechanism!` specializes to the model's structural
    /// nonzeros: `(M + βh² H) a = −∇V` of the Zhang–Skeel family
    /// (`PotentialHessian::implicit_acceleration`),
    /// SPOOK's Schur complement (`Holonomic::spook_solve`).
    pub linear_solve: bool,
}

const BASE: Capabilities = Capabilities {
    holonomic: true,
    nonholonomic: false,
    rheonomic: false,
    forces: false,
    singular_mass: false,
    massless_coordinates: false,
    varying_mass: false,
    full_rank: false,
    penalty: false,
    stiff_penalty: false,
    hessian: false,
    third_derivative: false,
    discrete_gradients: false,
    kinematics: false,
    linear_solve: false,
};

const Z_FAMILY: Capabilities = Capabilities {
    penalty: true,
    hessian: true,
    ..BASE
};

/// One row of the table: a family's name in `integrators: [..]`, the runtime types of each
/// tier that step a model compiled for it, and what it needs and tolerates.
struct Row {
    name: &'static str,
    schemes: &'static [&'static str],
    sparse_schemes: &'static [&'static str],
    capabilities: Capabilities,
}

impl Family {
    /// Every family, in documentation order.
    pub const ALL: [Family; 15] = [
        Family::Spook,
        Family::Zs,
        Family::Zss,
        Family::ZssStiff,
        Family::Newmark,
        Family::Newmark1,
        Family::PfNewmark,
        Family::Livens,
        Family::Shake,
        Family::Rattle,
        Family::SymplecticEuler,
        Family::Verlet,
        Family::Rk,
        Family::Dlda,
        Family::DldaMidpoint,
    ];

    /// The families a model that names none is compiled for: those of the first
    /// [`Family::DEFAULT_COUNT`] that can step it, or, if none can, those of the rest that can
    /// (the linearly implicit ones first, then the ones that treat more kinds of models). A
    /// mass matrix singular in a direction no constraint fixes gets no default: the macro asks
    /// for an explicit `integrators: [livens]`.
    pub const DEFAULT: [Family; 6] = [
        Family::Spook,
        Family::Zss,
        Family::Zs,
        Family::Rk,
        Family::Livens,
        Family::Dlda,
    ];

    /// How many entries of [`Family::DEFAULT`] are tried first (so that a model SPOOK and Z&S
    /// can step is not also compiled for the rest, which keeps the macro's cost bounded).
    pub const DEFAULT_COUNT: usize = 3;

    /// Returns the name used in `integrators: [..]`.
    pub fn name(self) -> &'static str {
        self.row().name
    }

    /// Returns the fixed-size tier's runtime types that step a model compiled for this family.
    pub fn schemes(self) -> &'static [&'static str] {
        self.row().schemes
    }

    /// Returns the sparse tier's runtime types that step a model with families (`sizes`,
    /// `x[N]`) compiled for this family; empty when the family has no sparse tier.
    pub fn sparse_schemes(self) -> &'static [&'static str] {
        self.row().sparse_schemes
    }

    /// Returns what this family needs and tolerates.
    pub fn capabilities(self) -> Capabilities {
        self.row().capabilities
    }

    /// Returns the families that step a model with families: those with a sparse tier
    /// ([`Family::sparse_schemes`]), in documentation order. For such a model `mechanism!`
    /// emits the sparse tier's traits (`SparseInertia`, `SparsePotential`, `SparseHolonomic`,
    /// …) instead of the fixed-size ones; these are also its default set.
    pub fn sparse() -> impl Iterator<Item = Family> {
        Family::ALL
            .into_iter()
            .filter(|f| !f.sparse_schemes().is_empty())
    }

    /// Looks a name of `integrators: [..]` up.
    pub fn from_name(name: &str) -> Option<Family> {
        Family::ALL.into_iter().find(|f| f.name() == name)
    }

    /// Returns the family whose [`schemes`](Family::schemes),
    /// [`sparse_schemes`](Family::sparse_schemes) or tableaus include what `name`
    /// spells (`dopri5`, `rk4`, `stabilized_rk`, `cortes_martinez`, …, compared without case
    /// and underscores), with the runtime type it names.
    pub fn containing(name: &str) -> Option<(Family, &'static str)> {
        let wanted = spelling(name);
        let extra: [(&str, Family); 6] = [
            // Tableaus of the `rk` family (`StabilizedRk::new(RK4, h)`, `AdaptiveRk` with
            // `DOPRI5`), and what a user may call the schemes.
            ("Rk4", Family::Rk),
            ("Heun", Family::Rk),
            ("Midpoint", Family::Rk),
            ("RungeKutta", Family::Rk),
            ("StormerVerlet", Family::Verlet),
            ("Gonzalez", Family::Livens),
        ];
        Family::ALL
            .into_iter()
            .flat_map(|f| {
                let tiers = f.schemes().iter().chain(f.sparse_schemes());
                tiers.map(move |&s| (s, f))
            })
            .chain(extra)
            .find(|(s, _)| spelling(s) == wanted)
            .map(|(s, f)| (f, s))
    }

    /// The table: name, runtime types of both tiers, capabilities.
    fn row(self) -> Row {
        let row = |name, schemes, sparse_schemes, capabilities| Row {
            name,
            schemes,
            sparse_schemes,
            capabilities,
        };
        match self {
            // Nonholonomic rows with γ and w(t), and forces as f⁽⁺⁾ (eq. 24–29). A
            // configuration-dependent M is "future work" in the paper (§4): its step has no
            // velocity terms ∂T/∂q − Ṁv.
            Family::Spook => row(
                "spook",
                &["Spook"],
                &["SparseSpook"],
                Capabilities {
                    linear_solve: true,
                    nonholonomic: true,
                    forces: true,
                    singular_mass: true,
                    ..BASE
                },
            ),
            Family::Zs => row(
                "zs",
                &["ZhangSkeel"],
                &["SparseZhangSkeel"],
                Capabilities {
                    third_derivative: true,
                    linear_solve: true,
                    ..Z_FAMILY
                },
            ),
            Family::Zss => row(
                "zss",
                &["ZhangSkeelSimplified"],
                &["SparseZhangSkeelSimplified"],
                Capabilities {
                    linear_solve: true,
                    ..Z_FAMILY
                },
            ),
            // The sparse one-iteration Newmark on the stiff split factors the Hessian stiff
            // Z&Ss factors (`SparseSplitPotential`), which only this family emits.
            Family::ZssStiff => row(
                "zss_stiff",
                &["ZhangSkeelStiff"],
                &["SparseZhangSkeelStiff", "SparseNewmarkOneIterationStiff"],
                Capabilities {
                    stiff_penalty: true,
                    linear_solve: true,
                    ..Z_FAMILY
                },
            ),
            Family::Newmark => row("newmark", &["Newmark"], &[], Z_FAMILY),
            Family::Newmark1 => row(
                "newmark_1",
                &["NewmarkOneIteration"],
                &["SparseNewmarkOneIteration"],
                Z_FAMILY,
            ),
            Family::PfNewmark => row("pf_newmark", &["PushForwardNewmark"], &[], Z_FAMILY),
            Family::Livens => row(
                "livens",
                &["Livens"],
                &[],
                Capabilities {
                    singular_mass: true,
                    massless_coordinates: true,
                    varying_mass: true,
                    full_rank: true,
                    hessian: true,
                    discrete_gradients: true,
                    ..BASE
                },
            ),
            Family::Shake => row(
                "shake",
                &["Shake"],
                &["SparseShake"],
                Capabilities {
                    full_rank: true,
                    ..BASE
                },
            ),
            Family::Rattle => row(
                "rattle",
                &["Rattle"],
                &["SparseRattle"],
                Capabilities {
                    full_rank: true,
                    ..BASE
                },
            ),
            Family::SymplecticEuler => row(
                "symplectic_euler",
                &["SymplecticEuler"],
                &[],
                Capabilities {
                    penalty: true,
                    ..BASE
                },
            ),
            Family::Verlet => row(
                "verlet",
                &["Verlet"],
                &["SparseVerlet"],
                Capabilities {
                    penalty: true,
                    ..BASE
                },
            ),
            Family::Rk => row(
                "rk",
                &[
                    "StabilizedRk",
                    "AdaptiveRk",
                    "Dopri5",
                    "Baumgarte",
                    "PostStabilization",
                ],
                // The sparse tier has the fixed-step tableaus; the adaptive DOPRI5 is
                // fixed-size only.
                &["SparseStabilizedRk"],
                // The index-1 formulation has holonomic rows only: nonholonomic rows would be
                // ignored, so `rk` refuses them.
                Capabilities {
                    rheonomic: true,
                    forces: true,
                    varying_mass: true,
                    full_rank: true,
                    kinematics: true,
                    ..BASE
                },
            ),
            // Cuell's discrete Lagrange–d'Alembert with symplectic Euler: forces enter the
            // momentum update (constant M).
            Family::Dlda => row(
                "dlda",
                &["DiscreteLagrangeDAlembert", "CortesMartinez"],
                &[],
                Capabilities {
                    holonomic: false,
                    nonholonomic: true,
                    forces: true,
                    ..BASE
                },
            ),
            // The midpoint DLA: Newton on (q_{k+1}, μ) with the exact Jacobian, so it needs
            // ∂T/∂q and its derivatives (a varying M), Hess V and ∂(A v)/∂q; no forces.
            Family::DldaMidpoint => row(
                "dlda_midpoint",
                &["MidpointLagrangeDAlembert"],
                &[],
                Capabilities {
                    holonomic: false,
                    nonholonomic: true,
                    varying_mass: true,
                    hessian: true,
                    ..BASE
                },
            ),
        }
    }

    /// Returns the families among `candidates` as a readable list: "`x`", "`x` or `y`",
    /// "`x`, `y` or `z`"; empty when there are none.
    pub fn list(candidates: impl IntoIterator<Item = Family>) -> String {
        let names: Vec<String> = candidates
            .into_iter()
            .map(|f| format!("`{}`", f.name()))
            .collect();
        match names.split_last() {
            None => String::new(),
            Some((last, [])) => last.clone(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        }
    }

    /// Returns the families that have the capability `has`.
    pub fn those_that(has: impl Fn(Capabilities) -> bool) -> impl Iterator<Item = Family> {
        Family::ALL
            .into_iter()
            .filter(move |f| has(f.capabilities()))
    }
}

/// A runtime scheme that no name of `integrators: [..]` compiles a model for, with what it
/// steps instead: the rows of the table that are not families.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OtherScheme {
    /// The runtime type.
    pub name: &'static str,
    /// What it steps and how a `mechanism!` model reaches it, as the end of a sentence that
    /// starts with the type's name.
    pub steps: &'static str,
}

/// The schemes of the runtime that are not a family's: the Lie-group integrators of a rigid
/// body on `SO(3)` (Tao–Owhadi 2014 §4.5), which step a hand-written `model::RigidBody`, and
/// the Langevin wrappers (§4.3), which wrap the integrator of a model compiled for a family.
pub const OTHER_SCHEMES: [OtherScheme; 4] = [
    OtherScheme {
        name: "LieGroupEuler",
        steps: LIE_GROUP,
    },
    OtherScheme {
        name: "LinearizedSo3",
        steps: LIE_GROUP,
    },
    OtherScheme {
        name: "Langevin",
        steps: LANGEVIN,
    },
    OtherScheme {
        name: "SparseLangevin",
        steps: LANGEVIN,
    },
];

const LIE_GROUP: &str = "steps a rigid body on SO(3) written by hand as a `model::RigidBody`, \
    not a `mechanism!` model; a body of a model is written with `orientations: { r: matrix }` \
    (or `quaternion`) and stepped by the families that treat its rows";

const LANGEVIN: &str = "wraps the integrator of a model compiled for a family (GLA, its \
    thermostat kick between steps); compile the model for the wrapped integrator's family and \
    build the wrapper around that integrator";

impl OtherScheme {
    /// Looks the scheme that `name` spells up (compared without case and underscores).
    pub fn named(name: &str) -> Option<OtherScheme> {
        let wanted = spelling(name);
        OTHER_SCHEMES
            .into_iter()
            .find(|s| spelling(s.name) == wanted)
    }
}

/// Returns how a scheme's name is compared with what a user wrote: without case and
/// underscores, so that `stabilized_rk` finds `StabilizedRk`.
fn spelling(name: &str) -> String {
    name.replace('_', "").to_lowercase()
}

/// Returns the requirement text of `StepError::Unsupported`
/// for a scheme that freezes the mass matrix over a step, naming the families that do not
/// (derived from [`Capabilities::varying_mass`]).
pub fn constant_mass_requirement() -> &'static str {
    static TEXT: LazyLock<String> = LazyLock::new(|| {
        let mut text = String::from(
            "a constant mass matrix (its scheme has no velocity terms ∂T/∂q − Ṁv); step it with ",
        );
        let _ = write!(
            text,
            "{} (`integrators: [..]` of `mechanism!`)",
            Family::list(Family::those_that(|c| c.varying_mass))
        );
        text
    });
    &TEXT
}

#[cfg(test)]
mod tests {
    use super::*;
    /// The crate documentation's table (in `lib.rs`) lists every scheme of every family with
    /// the capability traits it needs; those traits must say what the table says.
    #[test]
    fn the_unsupported_text_names_the_families_that_step_a_varying_mass() {
        assert!(constant_mass_requirement().contains("`livens`, `rk` or `dlda_midpoint`"));
    }

    /// The note of `ConstantMass`'s `on_unimplemented` (attribute text cannot be computed)
    /// names exactly the families that step a varying mass, with their runtime types.
    /// The families of a model with families each treat holonomic rows (the sparse tier's
    /// constraints) and none needs discrete gradients, which the families' emitter does not
    /// emit; a sparse type belongs to one family.
    #[test]
    fn the_sparse_families_step_holonomic_models() {
        let sparse: Vec<Family> = Family::sparse().collect();
        assert!(sparse.contains(&Family::Spook) && !sparse.contains(&Family::Livens));
        for family in sparse {
            let can = family.capabilities();
            assert!(can.holonomic && !can.discrete_gradients, "{family:?}");
        }
        let types: Vec<&str> = Family::ALL
            .into_iter()
            .flat_map(|f| f.sparse_schemes().iter().copied())
            .collect();
        for (i, name) in types.iter().enumerate() {
            assert!(!types[..i].contains(name), "{name} twice");
            assert!(name.starts_with("Sparse"), "{name}");
        }
    }

    #[test]
    fn other_schemes_are_no_family_and_resolve() {
        for scheme in OTHER_SCHEMES {
            assert_eq!(Family::containing(scheme.name), None, "{}", scheme.name);
            assert_eq!(OtherScheme::named(scheme.name), Some(scheme));
        }
        assert_eq!(
            OtherScheme::named("lie_group_euler").map(|s| s.name),
            Some("LieGroupEuler")
        );
        assert_eq!(OtherScheme::named("spook"), None);
    }

    #[test]
    fn names_and_schemes_resolve() {
        for family in Family::ALL {
            assert_eq!(Family::from_name(family.name()), Some(family));
            for scheme in family.schemes().iter().chain(family.sparse_schemes()) {
                assert_eq!(Family::containing(scheme).map(|(f, _)| f), Some(family));
            }
        }
        assert_eq!(Family::containing("dopri5"), Some((Family::Rk, "Dopri5")));
        assert_eq!(Family::containing("rk4"), Some((Family::Rk, "Rk4")));
        assert_eq!(
            Family::containing("sparse_spook"),
            Some((Family::Spook, "SparseSpook"))
        );
        assert_eq!(Family::containing("banana"), None);
    }
}

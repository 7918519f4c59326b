//! The integrators a model can be compiled for, and what each one needs from the model and
//! tolerates in it — DESIGN.md's "what each integrator needs" as data.

use syn::Ident;

/// An integrator of the runtime, as named in `integrators: [..]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Integrator {
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
}

/// What an integrator requires of the model and what it can treat.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Capabilities {
    /// Treats nonholonomic rows.
    pub nonholonomic: bool,
    /// Treats holonomic constraints that depend on time.
    pub rheonomic: bool,
    /// Uses dissipation and generalized forces.
    pub forces: bool,
    /// Works with a singular mass matrix (does not need `M⁻¹`).
    pub singular_mass: bool,
    /// Works with a configuration-dependent mass matrix.
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
}

impl Integrator {
    /// Every integrator, in documentation order.
    pub const ALL: [Integrator; 14] = [
        Integrator::Spook,
        Integrator::Zs,
        Integrator::Zss,
        Integrator::ZssStiff,
        Integrator::Newmark,
        Integrator::Newmark1,
        Integrator::PfNewmark,
        Integrator::Livens,
        Integrator::Shake,
        Integrator::Rattle,
        Integrator::SymplecticEuler,
        Integrator::Verlet,
        Integrator::Rk,
        Integrator::Dlda,
    ];

    /// The integrators a model that names none is compiled for, where the model allows them.
    pub const DEFAULT: [Integrator; 3] = [Integrator::Spook, Integrator::Zss, Integrator::Zs];

    /// Returns the name used in `integrators: [..]`.
    pub fn name(self) -> &'static str {
        match self {
            Integrator::Spook => "spook",
            Integrator::Zs => "zs",
            Integrator::Zss => "zss",
            Integrator::ZssStiff => "zss_stiff",
            Integrator::Newmark => "newmark",
            Integrator::Newmark1 => "newmark_1",
            Integrator::PfNewmark => "pf_newmark",
            Integrator::Livens => "livens",
            Integrator::Shake => "shake",
            Integrator::Rattle => "rattle",
            Integrator::SymplecticEuler => "symplectic_euler",
            Integrator::Verlet => "verlet",
            Integrator::Rk => "rk",
            Integrator::Dlda => "dlda",
        }
    }

    /// Looks a name up.
    pub fn from_ident(ident: &Ident) -> Option<Integrator> {
        Integrator::ALL.into_iter().find(|i| ident == i.name())
    }

    /// Returns the integrators that have the capability `has`, as a readable list.
    pub fn those_that(has: impl Fn(Capabilities) -> bool) -> String {
        let names: Vec<String> = Integrator::ALL
            .into_iter()
            .filter(|i| has(i.capabilities()))
            .map(|i| format!("`{}`", i.name()))
            .collect();
        names.join(", ")
    }

    /// Returns "use `x`" or "use one of `x`, `y`" for the integrators with the capability `has`.
    pub fn use_instead(has: impl Fn(Capabilities) -> bool) -> String {
        let names = Integrator::those_that(has);
        if names.contains(',') {
            format!("use one of {names}")
        } else {
            format!("use {names}")
        }
    }

    /// Returns what this integrator needs and tolerates.
    pub fn capabilities(self) -> Capabilities {
        let base = Capabilities {
            nonholonomic: false,
            rheonomic: false,
            forces: false,
            singular_mass: false,
            varying_mass: false,
            full_rank: false,
            penalty: false,
            stiff_penalty: false,
            hessian: false,
            third_derivative: false,
            discrete_gradients: false,
            kinematics: false,
        };
        let z_family = Capabilities {
            penalty: true,
            hessian: true,
            ..base
        };
        match self {
            // Nonholonomic rows with γ and w(t), and forces as f⁽⁺⁾ (eq. 24–29). A
            // configuration-dependent M is "future work" in the paper (§4): its step has no
            // velocity terms ∂T/∂q − Ṁv.
            Integrator::Spook => Capabilities {
                nonholonomic: true,
                forces: true,
                singular_mass: true,
                ..base
            },
            Integrator::Zs => Capabilities {
                third_derivative: true,
                ..z_family
            },
            Integrator::ZssStiff => Capabilities {
                stiff_penalty: true,
                ..z_family
            },
            Integrator::Zss
            | Integrator::Newmark
            | Integrator::Newmark1
            | Integrator::PfNewmark => z_family,
            Integrator::Livens => Capabilities {
                singular_mass: true,
                varying_mass: true,
                full_rank: true,
                hessian: true,
                discrete_gradients: true,
                ..base
            },
            Integrator::Shake | Integrator::Rattle => Capabilities {
                full_rank: true,
                ..base
            },
            Integrator::SymplecticEuler | Integrator::Verlet => Capabilities {
                penalty: true,
                ..base
            },
            Integrator::Rk => Capabilities {
                nonholonomic: true,
                rheonomic: true,
                forces: true,
                varying_mass: true,
                full_rank: true,
                kinematics: true,
                ..base
            },
            // Cuell's discrete Lagrange–d'Alembert with symplectic Euler: forces enter the
            // momentum update (runtime `DiscreteLagrangeDAlembert`, constant M).
            Integrator::Dlda => Capabilities {
                nonholonomic: true,
                forces: true,
                ..base
            },
        }
    }
}

//! `derivatives: [..]`: derived quantities a model asks for beyond what its integrators need,
//! for the analyses of the runtime. `hessians` generates the potential's Hessian
//! (`PotentialHessian`) and the rows' Hessians (`HolonomicHessians`, with the kinetic energy's
//! derivatives in `q`, `InertiaGradient`), which `mechanism::runtime::linearization` needs to
//! find equilibria and modes of a model stepped, say, by SPOOK alone; for a model with
//! families, their sparse twins (`SparsePotentialHessian`, and `SparseHolonomicHessians`, the
//! rows' weighted sum `Σ_k λ_k Hess g_k`, emitted by `family::emit`). `step_jacobians`
//! generates what the exact step Jacobians of `mechanism::runtime::DifferentiableStep` need:
//! those Hessians, `∂(A(q) v)/∂q` (`NonholonomicDerivative`), every derivative in the
//! parameters, for `rk` the derivatives of the rows' kinematics and of the velocity terms
//! `∂T/∂q − Ṁ v` (`VelocityTermJacobians`), and for `zss`/`zss_stiff` the potential's third
//! derivative along a vector; for a model with families, what `SparseDifferentiableStep` needs
//! (the flat parameter vector, the rows' Hessians and the derivatives in the parameters as
//! visited entries, emitted by `family::emit::step`).

use proc_macro2::Span;
use syn::Ident;

use crate::ast::Named;
use crate::errors::Errors;

/// A derived quantity `derivatives: [..]` can ask for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Derivative {
    /// `hessians`: `∇²V` and every holonomic row's `∇²g`.
    Hessians,
    /// `step_jacobians`: the Hessians and `∂(A v)/∂q`, for the exact Jacobian of a step.
    StepJacobians,
}

impl Derivative {
    /// Every quantity that can be asked for, in the order the messages list them.
    pub const ALL: [Derivative; 2] = [Derivative::Hessians, Derivative::StepJacobians];

    /// The name written in `derivatives: [..]`.
    pub fn name(self) -> &'static str {
        match self {
            Derivative::Hessians => "hessians",
            Derivative::StepJacobians => "step_jacobians",
        }
    }

    /// Whether it needs the Hessians of the potential and of the holonomic rows (and so their
    /// second derivatives must exist: no kinks).
    pub fn needs_hessians(self) -> bool {
        match self {
            Derivative::Hessians | Derivative::StepJacobians => true,
        }
    }

    /// What it generates, and for what.
    pub fn description(self) -> &'static str {
        match self {
            Derivative::Hessians => {
                "the Hessians of the potential and of the holonomic rows, for \
                 `mechanism::runtime::linearization`"
            }
            Derivative::StepJacobians => {
                "the second derivatives the exact step Jacobians of \
                 `mechanism::runtime::DifferentiableStep` need"
            }
        }
    }
}

/// Resolves `derivatives: [..]` (whose value is at `span`): reports an unknown name with the
/// known ones, a name listed twice, and an empty list. Returns the quantities with the names
/// that asked for them (empty when the section is absent).
pub fn requested(
    names: Option<&[Named<()>]>,
    span: Option<Span>,
    errors: &mut Errors,
) -> Vec<(Derivative, Ident)> {
    let Some(names) = names else {
        return Vec::new();
    };
    if names.is_empty() {
        errors.error_at(
            span.unwrap_or_else(Span::call_site),
            "`derivatives: []` asks for nothing; name what to generate, e.g. `derivatives: \
             [hessians]`, or remove the section",
        );
    }
    let mut requested: Vec<(Derivative, Ident)> = Vec::new();
    for named in names {
        match Derivative::ALL.into_iter().find(|d| named.name == d.name()) {
            Some(derivative) if requested.iter().any(|(d, _)| *d == derivative) => errors
                .error_spanned(
                    &named.name,
                    format!("`{}` is listed twice in `derivatives`", named.name),
                ),
            Some(derivative) => requested.push((derivative, named.name.clone())),
            None => {
                let known: Vec<String> = Derivative::ALL
                    .iter()
                    .map(|d| format!("`{}` ({})", d.name(), d.description()))
                    .collect();
                errors.error_spanned(
                    &named.name,
                    format!(
                        "`{}` is not a derivative the macro can generate; `derivatives` takes {}",
                        named.name,
                        known.join(", ")
                    ),
                );
            }
        }
    }
    requested
}

/// Returns the first requested quantity that needs the Hessians, for the messages about
/// functions without second derivatives (`derivatives: [hessians]`).
pub fn hessians_wanted(derivatives: &[Derivative]) -> Option<Derivative> {
    derivatives.iter().copied().find(|d| d.needs_hessians())
}

//! What each integrator family can step: the one table of the crate `mechanism-capabilities`,
//! re-exported here, from which `mechanism!`'s compile-time checks, its hints, its default
//! integrator set, the run-time [`StepError::Unsupported`] text and the crate documentation's
//! table are derived (DESIGN.md, "What each integrator needs").
//!
//! The table is a crate of its own so that the macro's pipeline reads it without compiling the
//! runtime; the tests below hold this crate's documentation (the table in `lib.rs`, the note of
//! `ConstantMass`) to it.
//!
//! [`StepError::Unsupported`]: crate::StepError::Unsupported

pub use mechanism_capabilities::*;

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn crate_docs_agree_with_the_table() {
        let docs = include_str!("lib.rs");
        let rows: Vec<&str> = docs.lines().filter(|l| l.starts_with("//! | [`")).collect();
        for family in Family::ALL {
            let can = family.capabilities();
            for scheme in family.schemes().iter().chain(family.sparse_schemes()) {
                if matches!(*scheme, "Baumgarte" | "PostStabilization") {
                    continue; // stabilizations of `StabilizedRk` and `AdaptiveRk`
                }
                let link = format!("[`{scheme}`]");
                let row = rows
                    .iter()
                    .find(|r| r.split('|').nth(1).is_some_and(|c| c.contains(&link)))
                    .unwrap_or_else(|| panic!("no crate-doc row for {scheme}"));
                let needs = row.split('|').nth(3).unwrap_or_default();
                let says = |t: &str| needs.contains(&format!("[`{t}`]"));
                let name = family.name();
                assert_eq!(
                    says("InertiaGradient"),
                    can.varying_mass,
                    "{scheme} ({name}): InertiaGradient vs varying_mass"
                );
                assert_eq!(
                    says("ConstantMass"),
                    !can.varying_mass,
                    "{scheme} ({name}): ConstantMass vs varying_mass"
                );
                assert_eq!(
                    says("Nonholonomic") || says("NonholonomicDerivative"),
                    can.nonholonomic || *scheme == "CortesMartinez",
                    "{scheme} ({name}): nonholonomic"
                );
                assert_eq!(
                    says("AppliedForces"),
                    can.forces,
                    "{scheme} ({name}): forces"
                );
                assert_eq!(
                    says("HolonomicKinematics"),
                    can.kinematics,
                    "{scheme} ({name}): kinematics"
                );
                assert_eq!(
                    says("PotentialThirdDerivative"),
                    can.third_derivative,
                    "{scheme} ({name}): third derivative"
                );
            }
        }
        for scheme in OTHER_SCHEMES {
            let link = format!("[`{}`]", scheme.name);
            assert!(
                rows.iter()
                    .any(|r| r.split('|').nth(1).is_some_and(|c| c.contains(&link))),
                "no crate-doc row for {}",
                scheme.name
            );
        }
        let prose = docs
            .lines()
            .skip_while(|l| !l.contains("Every"))
            .take(4)
            .collect::<String>();
        let varying: Vec<&str> = Family::those_that(|c| c.varying_mass)
            .map(Family::name)
            .collect();
        assert_eq!(
            varying,
            ["livens", "rk", "dlda_midpoint"],
            "update the crate docs' prose"
        );
        assert!(
            prose.contains("Livens") && prose.contains("Runge–Kutta") && prose.contains("midpoint")
        );
    }

    #[test]
    fn the_constant_mass_note_names_the_families_that_step_a_varying_mass() {
        let source = include_str!("model/inertia.rs");
        let attribute = source
            .split("#[diagnostic::on_unimplemented(")
            .find(|a| a.contains("pub trait ConstantMass"))
            .expect("ConstantMass has an on_unimplemented attribute");
        let note = attribute
            .split("note = \"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .expect("the attribute has a note");
        let varying = Family::list(Family::those_that(|c| c.varying_mass));
        assert!(note.contains(&varying), "{note}");
        for family in Family::ALL {
            let named = note.contains(&format!("`{}`", family.name()));
            assert_eq!(
                named,
                family.capabilities().varying_mass,
                "{family:?} in {note}"
            );
            if family.capabilities().varying_mass {
                let scheme = family.schemes()[0];
                assert!(note.contains(&format!("`{scheme}`")), "{scheme} in {note}");
            }
        }
    }
}

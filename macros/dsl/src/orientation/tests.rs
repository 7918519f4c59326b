//! The desugared built-ins against hand-written expressions, evaluated by the CAS interpreter at
//! random states; the messages of misused orientations.

use std::collections::HashMap;

use mechanism_cas::{eval, Id, Symbol};
use quote::quote;

use crate::model::Model;

/// Validates a model written as tokens.
fn model(tokens: proc_macro2::TokenStream) -> syn::Result<Model> {
    let ast = syn::parse2(tokens)?;
    crate::validate::validate(&ast)
}

/// Returns the error messages of a model that must not validate.
fn errors(tokens: proc_macro2::TokenStream) -> Vec<String> {
    match model(tokens) {
        Ok(_) => panic!("the model validated"),
        Err(error) => error.into_iter().map(|e| e.to_string()).collect(),
    }
}

/// A deterministic stream of numbers in `[-1, 1)` (a 64-bit LCG).
struct Random(u64);

impl Random {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }
}

/// Evaluates `id` with the named values; parameters at their defaults.
fn at(model: &Model, id: Id, values: &HashMap<String, f64>) -> f64 {
    let defaults: HashMap<Symbol, f64> = model
        .symbols
        .p
        .iter()
        .zip(&model.parameters)
        .map(|(&s, p)| (s, p.default))
        .collect();
    eval(&model.store, id, &|s: Symbol| {
        defaults
            .get(&s)
            .copied()
            .or_else(|| values.get(s.as_str()).copied())
    })
    .expect("evaluates")
}

/// Returns a random state of the named coordinates (`q.name`, `v.name`).
fn state(names: &[&str], random: &mut Random) -> HashMap<String, f64> {
    names
        .iter()
        .flat_map(|n| [format!("q.{n}"), format!("v.{n}")])
        .map(|k| (k, random.next()))
        .collect()
}

const QUATERNION: [&str; 4] = ["q_w", "q_x", "q_y", "q_z"];

#[test]
fn quaternion_kinetic_energy_is_the_hand_written_one() {
    let sugared = model(quote! {
        struct Top {
            orientations: { q: quaternion },
            parameters: { i1 = 1.0, i2 = 2.0, i3 = 3.0, mgl = 0.7 },
            kinetic: rigid_kinetic(q, i1, i2, i3),
            potential: mgl * rotate_z(q, 0.0, 0.0, 1.0),
        }
    })
    .unwrap();
    // `models::FreeBody` and `models::HeavyTop` as written before orientations existed.
    let plain = model(quote! {
        struct Top {
            coordinates: [q_w, q_x, q_y, q_z],
            parameters: { i1 = 1.0, i2 = 2.0, i3 = 3.0, mgl = 0.7, c = 8.0 },
            kinetic: 0.5 * i1 * (2.0 * (q_w * dot(q_x) - q_x * dot(q_w) + q_z * dot(q_y) - q_y * dot(q_z))).powi(2)
                + 0.5 * i2 * (2.0 * (q_w * dot(q_y) - q_y * dot(q_w) + q_x * dot(q_z) - q_z * dot(q_x))).powi(2)
                + 0.5 * i3 * (2.0 * (q_w * dot(q_z) - q_z * dot(q_w) + q_y * dot(q_x) - q_x * dot(q_y))).powi(2)
                + 0.5 * c * (q_w * dot(q_w) + q_x * dot(q_x) + q_y * dot(q_y) + q_z * dot(q_z)).powi(2),
            potential: mgl * (q_w.powi(2) - q_x.powi(2) - q_y.powi(2) + q_z.powi(2)),
            holonomic: { unit: q_w.powi(2) + q_x.powi(2) + q_y.powi(2) + q_z.powi(2) - 1.0 },
        }
    })
    .unwrap();
    assert_eq!(sugared.coordinates, plain.coordinates);
    assert_eq!(sugared.constraints.len(), 1);
    assert_eq!(sugared.constraints[0].name, "q_unit");
    let mut random = Random(7);
    for _ in 0..20 {
        let values = state(&QUATERNION, &mut random);
        for (a, b) in [
            (sugared.kinetic, plain.kinetic),
            (sugared.potential, plain.potential),
            (sugared.constraints[0].expr, plain.constraints[0].expr),
        ] {
            let (a, b) = (at(&sugared, a, &values), at(&plain, b, &values));
            assert!((a - b).abs() <= 1e-12 * (1.0 + b.abs()), "{a} != {b}");
        }
    }
}

/// Returns a random unit quaternion and the rate `q̇ = ½ q ⊗ (0, Ω)` of a random `Ω`.
fn rotation(random: &mut Random) -> ([f64; 4], [f64; 3], [f64; 4]) {
    let raw = [random.next(), random.next(), random.next(), random.next()];
    let norm = raw.iter().map(|x| x * x).sum::<f64>().sqrt();
    let [w, x, y, z] = raw.map(|x| x / norm);
    let [a, b, c] = [random.next(), random.next(), random.next()];
    let rate = [
        0.5 * (-x * a - y * b - z * c),
        0.5 * (w * a + y * c - z * b),
        0.5 * (w * b + z * a - x * c),
        0.5 * (w * c + x * b - y * a),
    ];
    ([w, x, y, z], [a, b, c], rate)
}

/// Returns `R(q)` (world from body) and `Ṙ` of a quaternion moving at `q̇`, by the product rule.
fn matrix_of(q: [f64; 4], dq: [f64; 4]) -> ([[f64; 3]; 3], [[f64; 3]; 3]) {
    let r = |[w, x, y, z]: [f64; 4]| {
        [
            [
                w * w + x * x - y * y - z * z,
                2.0 * (x * y - w * z),
                2.0 * (x * z + w * y),
            ],
            [
                2.0 * (x * y + w * z),
                w * w - x * x + y * y - z * z,
                2.0 * (y * z - w * x),
            ],
            [
                2.0 * (x * z - w * y),
                2.0 * (y * z + w * x),
                w * w - x * x - y * y + z * z,
            ],
        ]
    };
    let h = 1e-6;
    let shifted = |s: f64| r([0, 1, 2, 3].map(|k| q[k] + s * dq[k]));
    let (plus, minus) = (shifted(h), shifted(-h));
    let mut rate = [[0.0; 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            // Exact for a quadratic form: the central difference has no truncation error.
            rate[i][j] = (plus[i][j] - minus[i][j]) / (2.0 * h);
        }
    }
    (r(q), rate)
}

#[test]
fn both_kinds_agree_on_the_angular_velocity_the_rotation_and_the_energy() {
    // `omega_k` in a sign-sensitive positive definite form, and the rigid body's energy.
    let tokens = |kind: proc_macro2::TokenStream, kinetic: proc_macro2::TokenStream| {
        quote! {
            struct Body {
                orientations: { q: #kind },
                parameters: { i1 = 1.0, i2 = 1.5, i3 = 2.0 },
                kinetic: #kinetic,
                potential: rotate_x(q, 0.3, -0.2, 0.5) + 2.0 * rotate_y(q, 0.1, 0.4, -0.6)
                    + 3.0 * rotate_z(q, -0.7, 0.2, 0.9),
                integrators: [livens],
            }
        }
    };
    let rigid = quote!(rigid_kinetic(q, i1, i2, i3));
    let form = quote!(
        0.5 * (omega_x(q) + omega_y(q)).powi(2)
            + 0.5 * (omega_y(q) + omega_z(q)).powi(2)
            + 0.5 * (omega_z(q) - omega_x(q)).powi(2)
    );
    let quaternion = model(tokens(quote!(quaternion), rigid.clone())).unwrap();
    let matrix = model(tokens(quote!(matrix), rigid)).unwrap();
    let quaternion_form = model(tokens(
        quote!(quaternion),
        quote!(#form + completion(q, 1.0)),
    ))
    .unwrap();
    let matrix_form = model(tokens(quote!(matrix), form)).unwrap();
    assert_eq!(matrix.coordinates.len(), 9);
    assert_eq!(matrix.constraints.len(), 6);
    let names = ["xx", "xy", "xz", "yx", "yy", "yz", "zx", "zy", "zz"];
    let mut random = Random(11);
    for _ in 0..20 {
        let (q, omega, dq) = rotation(&mut random);
        let (r, dr) = matrix_of(q, dq);
        let mut on_quaternion = HashMap::new();
        for k in 0..4 {
            on_quaternion.insert(format!("q.{}", QUATERNION[k]), q[k]);
            on_quaternion.insert(format!("v.{}", QUATERNION[k]), dq[k]);
        }
        let mut on_matrix = HashMap::new();
        for (k, name) in names.iter().enumerate() {
            on_matrix.insert(format!("q.q_{name}"), r[k / 3][k % 3]);
            on_matrix.insert(format!("v.q_{name}"), dr[k / 3][k % 3]);
        }
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-8 * (1.0 + b.abs());
        let energy = 0.5 * (omega[0].powi(2) + 1.5 * omega[1].powi(2) + 2.0 * omega[2].powi(2));
        assert!(close(
            at(&quaternion, quaternion.kinetic, &on_quaternion),
            energy
        ));
        assert!(close(at(&matrix, matrix.kinetic, &on_matrix), energy));
        let (vq, vm) = (
            at(&quaternion, quaternion.potential, &on_quaternion),
            at(&matrix, matrix.potential, &on_matrix),
        );
        assert!(close(vq, vm), "{vq} != {vm}");
        let [a, b, c] = omega;
        let form = 0.5 * ((a + b).powi(2) + (b + c).powi(2) + (c - a).powi(2));
        let value = at(&quaternion_form, quaternion_form.kinetic, &on_quaternion);
        assert!(close(value, form), "{value} != {form}");
        let value = at(&matrix_form, matrix_form.kinetic, &on_matrix);
        assert!(close(value, form), "{value} != {form}");
        for constraint in &matrix.constraints {
            assert!(at(&matrix, constraint.expr, &on_matrix).abs() < 1e-12);
        }
    }
}

#[test]
fn a_quaternion_refuses_constant_mass_integrators_and_names_the_matrix() {
    let messages = errors(quote! {
        struct Top {
            orientations: { q: quaternion },
            kinetic: rigid_kinetic(q, 1.0, 1.0, 0.4),
            integrators: [rattle],
        }
    });
    assert_eq!(messages.len(), 1, "{messages:?}");
    let message = &messages[0];
    assert!(message.contains("declare `q: matrix`"), "{message}");
    assert!(
        message.contains("`livens`") && message.contains("`rk`"),
        "{message}"
    );
    assert!(!message.contains("`spook`"), "{message}");
}

#[test]
fn a_matrix_compiles_for_every_constant_mass_integrator() {
    let model = model(quote! {
        struct Top {
            orientations: { r: matrix },
            parameters: { mgl = 1.0 },
            kinetic: rigid_kinetic(r, 1.0, 1.0, 0.4),
            potential: mgl * rotate_z(r, 0.0, 0.0, 1.0),
            integrators: [rattle, shake, spook, livens, rk],
        }
    })
    .unwrap();
    assert_eq!(model.integrators.len(), 5);
    assert!(!model.configuration_dependent_mass());
}

#[test]
fn omega_without_completion_points_at_the_completion() {
    let messages = errors(quote! {
        struct Body {
            orientations: { q: quaternion },
            kinetic: 0.5 * omega_x(q).powi(2) + 0.5 * omega_y(q).powi(2) + 0.5 * omega_z(q).powi(2),
            integrators: [rk],
        }
    });
    assert!(
        messages
            .iter()
            .any(|m| m.contains("add `completion(q, c)`")),
        "{messages:?}"
    );
    // With the completion, RK compiles.
    model(quote! {
        struct Body {
            orientations: { q: quaternion },
            kinetic: 0.5 * omega_x(q).powi(2) + 0.5 * omega_y(q).powi(2) + 0.5 * omega_z(q).powi(2)
                + completion(q, 4.0),
            integrators: [rk],
        }
    })
    .unwrap();
}

#[test]
fn misused_orientations_say_what_to_write() {
    let cases = [
        (
            quote! { struct A { orientations: { q: quat }, kinetic: rigid_kinetic(q, 1.0, 1.0, 1.0) } },
            "unknown orientation kind `quat`",
        ),
        (
            quote! { struct A { coordinates: [x], kinetic: omega_x(x).powi(2) } },
            "`x` is a coordinate, but `omega_x` takes an orientation; declare it in `orientations: { q: quaternion }` (or `q: matrix`) and write `omega_x(q)`",
        ),
        (
            quote! { struct A { orientations: { q: quaternion }, kinetic: rigid_kinetic(q, 1.0) } },
            "`rigid_kinetic` takes 4 argument(s), found 2",
        ),
        (
            quote! { struct A { orientations: { q: quaternion }, kinetic: dot(q).powi(2) } },
            "`q` is an orientation, not a number",
        ),
        (
            quote! { struct A { orientations: { r: matrix, r: quaternion }, kinetic: rigid_kinetic(r, 1.0, 1.0, 1.0) } },
            "orientation `r` is declared twice",
        ),
        (
            quote! { struct A { orientations: { r: matrix }, kinetic: rigid_kinetic(r, 1.0, 1.0, 1.0) + completion(r, 1.0) } },
            "`completion` completes the kinetic energy of a quaternion",
        ),
        (
            quote! { struct A { orientations: { r: matrix }, kinetic: rigid_kinetic(r, 1.0, 2.0, 3.0) } },
            "but i3 = 3 ≥ i1 + i2 = 3; check the moments, or declare a flat body (a lamina) as `r: quaternion`",
        ),
        (
            quote! { struct A { orientations: { r: matrix }, kinetic: rigid_kinetic(r, (5.0), 1, 2.5) } },
            "but i1 = 5 ≥ i2 + i3 = 3.5",
        ),
        (
            quote! { struct A { orientations: { r: matrix }, kinetic: rigid_kinetic(r, 1.0, -2.0, 3.0) } },
            "the principal moment i2 = -2 of `r` is not positive",
        ),
    ];
    for (tokens, expected) in cases {
        let messages = errors(tokens);
        // One mistake, one message: a misdeclared orientation's uses are not reported again.
        assert_eq!(messages.len(), 1, "{messages:?}");
        assert!(
            messages.iter().any(|m| m.contains(expected)),
            "expected `{expected}` in {messages:?}"
        );
    }
}

/// Expands a model of either kind through the one pipeline.
fn expanded(tokens: proc_macro2::TokenStream) -> syn::Result<proc_macro2::TokenStream> {
    crate::expand_model(&syn::parse2(tokens)?)
}

#[test]
fn a_model_with_families_desugars_a_named_orientation() {
    let tokens = expanded(quote! {
        pub struct Cluster {
            sizes: { N = 3 },
            coordinates: [x[N]],
            orientations: { r: matrix },
            kinetic: sum(0..N, |i| 0.5 * dot(x[i]).powi(2)) + rigid_kinetic(r, 2.0, 3.0, 4.0),
            potential: sum(0..N, |i| 0.5 * x[i].powi(2)) + r_zz,
            integrators: [spook, rattle],
        }
    })
    .unwrap_or_else(|e| panic!("{e}"))
    .to_string();
    // The sparse tier's traits, with the orientation's rows of `RᵀR = I` and a constant mass.
    assert!(tokens.contains("SparseConstantMass for Cluster"));
    for row in ["r_c11", "r_c22", "r_c33", "r_c12", "r_c13", "r_c23"] {
        assert!(
            tokens.contains(&format!("constraint `{row}`")),
            "no row {row}"
        );
    }
}

/// Asserts two expansions are the same, showing the first statement where they differ.
fn same(a: &str, b: &str) {
    let first = a.split(';').zip(b.split(';')).find(|(x, y)| x != y);
    assert!(a == b, "the expansions differ first at {first:#?}");
}

/// Expands a model, panicking with its errors.
fn expansion(tokens: proc_macro2::TokenStream) -> String {
    expanded(tokens)
        .unwrap_or_else(|e| panic!("{e}"))
        .to_string()
}

#[test]
fn a_quaternion_family_expands_as_its_hand_written_members() {
    // One free top per member, coupled by a spring between body points: the family of
    // orientations against the same model written with quaternion coordinate families.
    let sugared = expansion(quote! {
        pub struct Cluster {
            sizes: { N = 3 },
            orientations: { r[N]: quaternion },
            parameters: { i1 = 1.0, i2 = 2.0, i3 = 3.0, k = 0.5 },
            kinetic: sum(0..N, |i| rigid_kinetic(r[i], i1, i2, i3)),
            potential: sum(1..N, |i| 0.5 * k * (rotate_x(r[i], 1.0, 0.0, 0.0) - rotate_x(r[i - 1], 0.0, 1.0, 0.0)).powi(2)),
            integrators: [rk],
        }
    });
    let plain = expansion(quote! {
        pub struct Cluster {
            sizes: { N = 3 },
            coordinates: [r_w[N], r_x[N], r_y[N], r_z[N]],
            parameters: { i1 = 1.0, i2 = 2.0, i3 = 3.0, k = 0.5 },
            kinetic: sum(0..N, |i|
                0.5 * i1 * (2.0 * (r_w[i] * dot(r_x[i]) - r_x[i] * dot(r_w[i]) + r_z[i] * dot(r_y[i]) - r_y[i] * dot(r_z[i]))).powi(2)
                + 0.5 * i2 * (2.0 * (r_w[i] * dot(r_y[i]) - r_y[i] * dot(r_w[i]) + r_x[i] * dot(r_z[i]) - r_z[i] * dot(r_x[i]))).powi(2)
                + 0.5 * i3 * (2.0 * (r_w[i] * dot(r_z[i]) - r_z[i] * dot(r_w[i]) + r_y[i] * dot(r_x[i]) - r_x[i] * dot(r_y[i]))).powi(2)
                + 0.5 * (4.0 * (i1 + i2 + i3) / 3.0) * (r_w[i] * dot(r_w[i]) + r_x[i] * dot(r_x[i]) + r_y[i] * dot(r_y[i]) + r_z[i] * dot(r_z[i])).powi(2)),
            // R_xx of member i times 1, minus R_xy of member i - 1 times 1.
            potential: sum(1..N, |i| 0.5 * k * ((r_w[i].powi(2) + r_x[i].powi(2) - r_y[i].powi(2) - r_z[i].powi(2)) * 1.0
                + 2.0 * (r_x[i] * r_y[i] - r_w[i] * r_z[i]) * 0.0
                + 2.0 * (r_x[i] * r_z[i] + r_w[i] * r_y[i]) * 0.0
                - ((r_w[i - 1].powi(2) + r_x[i - 1].powi(2) - r_y[i - 1].powi(2) - r_z[i - 1].powi(2)) * 0.0
                    + 2.0 * (r_x[i - 1] * r_y[i - 1] - r_w[i - 1] * r_z[i - 1]) * 1.0
                    + 2.0 * (r_x[i - 1] * r_z[i - 1] + r_w[i - 1] * r_y[i - 1]) * 0.0)).powi(2)),
            holonomic: {
                /// The quaternion `r[i]` has unit length.
                r_unit[i in 0..N]: r_w[i].powi(2) + r_x[i].powi(2) + r_y[i].powi(2) + r_z[i].powi(2) - 1.0,
            },
            integrators: [rk],
        }
    });
    same(&sugared, &plain);
}

#[test]
fn a_matrix_family_expands_as_its_hand_written_members() {
    let sugared = expansion(quote! {
        pub struct Cluster {
            sizes: { N = 2 },
            orientations: { r[N]: matrix },
            kinetic: sum(0..N, |i| rigid_kinetic(r[i], 2.0, 3.0, 4.0)),
            integrators: [rattle],
        }
    });
    let column = |k: usize| {
        let names = [
            ["r_xx", "r_yx", "r_zx"],
            ["r_xy", "r_yy", "r_zy"],
            ["r_xz", "r_yz", "r_zz"],
        ];
        names[k].map(|n| proc_macro2::Ident::new(n, proc_macro2::Span::call_site()))
    };
    let ([a1, b1, d1], [a2, b2, d2], [a3, b3, d3]) = (column(0), column(1), column(2));
    let plain = expansion(quote! {
        pub struct Cluster {
            sizes: { N = 2 },
            coordinates: [r_xx[N], r_xy[N], r_xz[N], r_yx[N], r_yy[N], r_yz[N], r_zx[N], r_zy[N], r_zz[N]],
            // ½ Σ_k J_k |ċ_k|² with J = ½ tr(I) − I = (2.5, 1.5, 0.5).
            kinetic: sum(0..N, |i|
                0.25 * (3.0 + 4.0 - 2.0) * (dot(#a1[i]).powi(2) + dot(#b1[i]).powi(2) + dot(#d1[i]).powi(2))
                + 0.25 * (2.0 + 4.0 - 3.0) * (dot(#a2[i]).powi(2) + dot(#b2[i]).powi(2) + dot(#d2[i]).powi(2))
                + 0.25 * (2.0 + 3.0 - 4.0) * (dot(#a3[i]).powi(2) + dot(#b3[i]).powi(2) + dot(#d3[i]).powi(2))),
            holonomic: {
                /// The first column of `r[i]` has unit length.
                r_c11[i in 0..N]: #a1[i].powi(2) + #b1[i].powi(2) + #d1[i].powi(2) - 1.0,
                /// The second column of `r[i]` has unit length.
                r_c22[i in 0..N]: #a2[i].powi(2) + #b2[i].powi(2) + #d2[i].powi(2) - 1.0,
                /// The third column of `r[i]` has unit length.
                r_c33[i in 0..N]: #a3[i].powi(2) + #b3[i].powi(2) + #d3[i].powi(2) - 1.0,
                /// The first and second columns of `r[i]` are orthogonal.
                r_c12[i in 0..N]: #a1[i] * #a2[i] + #b1[i] * #b2[i] + #d1[i] * #d2[i],
                /// The first and third columns of `r[i]` are orthogonal.
                r_c13[i in 0..N]: #a1[i] * #a3[i] + #b1[i] * #b3[i] + #d1[i] * #d3[i],
                /// The second and third columns of `r[i]` are orthogonal.
                r_c23[i in 0..N]: #a2[i] * #a3[i] + #b2[i] * #b3[i] + #d2[i] * #d3[i],
            },
            integrators: [rattle],
        }
    });
    same(&sugared, &plain);
}

#[test]
fn misused_orientation_families_say_what_to_write() {
    let cases = [
        (
            quote! { pub struct C { sizes: { N = 3 }, orientations: { r[N]: matrix }, kinetic: sum(0..N, |i| rigid_kinetic(r, 2.0, 3.0, 4.0)) } },
            "`r` is a family of orientations; `rigid_kinetic` reads one member: write `r[i]`",
        ),
        (
            quote! { pub struct C { sizes: { N = 3 }, coordinates: [x[N]], orientations: { r: matrix }, kinetic: sum(0..N, |i| 0.5 * dot(x[i]).powi(2)) + rigid_kinetic(r[0], 2.0, 3.0, 4.0) } },
            "`r` is one orientation, not a family; write `r` without an index",
        ),
        (
            quote! { pub struct C { sizes: { N = 3 }, orientations: { r[i in 0..N]: matrix }, kinetic: sum(0..N, |i| 0.5 * dot(r_xx[i]).powi(2)) } },
            "a family of orientations is declared with its size",
        ),
        (
            quote! { pub struct C { sizes: { N = 3 }, orientations: { r[N]: matrix }, kinetic: sum(0..N, |i| rigid_kinetic(r[i], 2.0, 3.0, 4.0) + omega_x(r[i + 1])) } },
            "out of",
        ),
        (
            quote! { pub struct C { sizes: { N = 3 }, orientations: { r[M]: matrix }, kinetic: sum(0..N, |i| rigid_kinetic(r[i], 2.0, 3.0, 4.0)) } },
            "`M`",
        ),
    ];
    for (tokens, expected) in cases {
        let messages: Vec<String> = expanded(tokens)
            .expect_err("a misuse is refused")
            .into_iter()
            .map(|e| e.to_string())
            .collect();
        assert!(
            messages.iter().any(|m| m.contains(expected)),
            "expected `{expected}` in {messages:?}"
        );
    }
}

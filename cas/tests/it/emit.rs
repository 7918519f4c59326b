//! Emitted straight-line code: shared lets, skipped zeros, precedence, FMA.

use mechanism_cas::{emit, gradient, hessian, EmitOptions, Output, Store, Symbol};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

/// Symbols `q0`, `q1`, … become `q[0]`, `q[1]`, …; others become fields of `self`.
fn symbol(s: Symbol) -> TokenStream {
    match s
        .as_str()
        .strip_prefix('q')
        .and_then(|i| i.parse::<usize>().ok())
    {
        Some(i) => {
            let i = proc_macro2::Literal::usize_unsuffixed(i);
            quote!(q[#i])
        }
        None => {
            let f = format_ident!("{}", s.as_str());
            quote!(self.#f)
        }
    }
}

fn pretty(tokens: &TokenStream) -> String {
    let file: syn::File = syn::parse2(quote! { fn f() { #tokens } }).expect("valid Rust");
    prettyplease::unparse(&file)
}

fn assert_block(tokens: &TokenStream) {
    syn::parse2::<syn::Block>(quote! {{ #tokens }}).expect("emitted code is a valid block");
}

#[test]
fn shared_nodes_get_one_let_and_zero_outputs_are_skipped() {
    let mut s = Store::new();
    let f = s
        .parse("(* self_m (+ (sin q0) (powi (sin q0) 2)))")
        .unwrap();
    let g = s.parse("(* 2 (sin q0))").unwrap();
    let zero = s.num(0.0);
    let outputs = [
        Output {
            target: quote!(out[0]),
            value: f,
        },
        Output {
            target: quote!(out[1]),
            value: zero,
        },
        Output {
            target: quote!(out[2]),
            value: g,
        },
    ];
    let code = emit(
        &s,
        &outputs,
        &|s| {
            if s.as_str() == "self_m" {
                quote!(self.m)
            } else {
                symbol(s)
            }
        },
        &EmitOptions::default(),
    );
    assert_block(&code);
    let text = pretty(&code);
    assert_eq!(
        text,
        "fn f() {\n    let t0: f64 = q[0].sin();\n    out[0] = self.m * (t0 + t0.powi(2));\n    out[2] = 2f64 * t0;\n}\n",
        "{text}"
    );
}

#[test]
fn outputs_sharing_a_root_compute_it_once() {
    let mut s = Store::new();
    let f = s.parse("(+ q0 q1)").unwrap();
    let outputs = [
        Output {
            target: quote!(h[(0, 1)]),
            value: f,
        },
        Output {
            target: quote!(h[(1, 0)]),
            value: f,
        },
    ];
    let code = emit(&s, &outputs, &symbol, &EmitOptions::default());
    let text = pretty(&code);
    assert!(text.contains("let t0: f64 = q[0] + q[1];"), "{text}");
    assert!(
        text.contains("h[(0, 1)] = t0;") && text.contains("h[(1, 0)] = t0;"),
        "{text}"
    );
}

#[test]
fn precedence_is_preserved_with_minimal_parentheses() {
    let mut s = Store::new();
    let f = s
        .parse("(- (* (neg q0) (- q1 q2)) (/ q0 (* q1 q2)))")
        .unwrap();
    let g = s.parse("(sqrt (neg (+ q0 -2)))").unwrap();
    let h = s.parse("(+ (pow q0 (+ q1 1)) (powi (neg q1) -3))").unwrap();
    let k = s.parse("(- (pow -2 q0) (- q1 (sin q2)))").unwrap();
    let outputs: Vec<Output> = [f, g, h, k]
        .iter()
        .enumerate()
        .map(|(i, &value)| {
            let i = proc_macro2::Literal::usize_unsuffixed(i);
            Output {
                target: quote!(out[#i]),
                value,
            }
        })
        .collect();
    let code = emit(&s, &outputs, &symbol, &EmitOptions::default());
    assert_block(&code);
    let text = pretty(&code);
    // Products of a negation become the negation of a product; a sum subtracted is parenthesized.
    assert!(
        text.contains("out[0] = -(q[0] * (q[1] - q[2])) - q[0] / (q[1] * q[2]);"),
        "{text}"
    );
    assert!(
        text.contains("out[1] = (-(-2f64 + q[0])).sqrt();"),
        "{text}"
    );
    assert!(
        text.contains("q[0].powf(1f64 + q[1]) + (-q[1]).powi(-3)"),
        "{text}"
    );
    assert!(
        text.contains("out[3] = (-2f64).powf(q[0]) - (q[1] - q[2].sin());"),
        "{text}"
    );
}

#[test]
fn fma_wraps_inlined_products_only() {
    let mut s = Store::new();
    let f = s.parse("(+ (* q0 q1) (sin q2))").unwrap();
    let shared = s.parse("(* q0 q2)").unwrap();
    let g = s.parse("(+ (* q0 q2) q1)").unwrap();
    let outputs = [
        Output {
            target: quote!(out[0]),
            value: f,
        },
        Output {
            target: quote!(out[1]),
            value: g,
        },
        Output {
            target: quote!(out[2]),
            value: shared,
        },
    ];
    let fma = EmitOptions {
        fma: Some(quote!(::mechanism::runtime::mul_add)),
    };
    let text = pretty(&emit(&s, &outputs, &symbol, &fma));
    assert!(
        text.contains("out[0] = ::mechanism::runtime::mul_add(q[0], q[1], q[2].sin());"),
        "{text}"
    );
    // q0 * q2 is shared with out[2]: it is computed once and not fused.
    assert!(text.contains("let t0: f64 = q[0] * q[2];"), "{text}");
    assert!(
        text.contains("out[1] = q[1] + t0;") || text.contains("out[1] = t0 + q[1];"),
        "{text}"
    );
    let plain = pretty(&emit(&s, &outputs, &symbol, &EmitOptions::default()));
    assert!(
        plain.contains("out[0] = q[0] * q[1] + q[2].sin();"),
        "{plain}"
    );
}

#[test]
fn hessian_of_pendulum_potential_emits_valid_sparse_code() {
    let mut s = Store::new();
    let v = s
        .parse("(+ (* m1 (cos q0)) (* m2 (+ (cos q0) (cos q1))))")
        .unwrap();
    let q = [Symbol::from("q0"), Symbol::from("q1"), Symbol::from("q2")];
    let g = gradient(&mut s, v, &q);
    let h = hessian(&mut s, v, &q);
    let mut outputs = Vec::new();
    for (i, row) in h.iter().enumerate() {
        for (j, &value) in row.iter().enumerate() {
            outputs.push(Output {
                target: quote!(hess[(#i, #j)]),
                value,
            });
        }
    }
    outputs.push(Output {
        target: quote!(grad[2]),
        value: g[2],
    });
    let code = emit(&s, &outputs, &symbol, &EmitOptions::default());
    assert_block(&code);
    let text = pretty(&code);
    // Only the two diagonal entries of the coupled coordinates are written.
    assert_eq!(
        text.matches(" = ").count() - text.matches("let ").count(),
        2,
        "{text}"
    );
    assert!(!text.contains("grad"), "{text}");
    assert!(
        text.contains("hess[(0usize, 0usize)]") && text.contains("hess[(1usize, 1usize)]"),
        "{text}"
    );
}

#[test]
fn empty_output_list_emits_nothing() {
    let s = Store::new();
    assert!(emit(&s, &[], &symbol, &EmitOptions::default()).is_empty());
}

/// The emitted form of `signum(t0)`, copied from the assertion below, to check its semantics.
fn emitted_signum(t0: f64) -> f64 {
    if t0 > 0.0 {
        1.0
    } else if t0 < 0.0 {
        -1.0
    } else {
        t0
    }
}

#[test]
fn non_smooth_functions_emit_methods_and_an_inline_signum() {
    let mut s = Store::new();
    let f = s.parse("(* (signum (+ q0 q1)) q2)").unwrap();
    let g = s.parse("(signum q0)").unwrap();
    let h = s
        .parse("(+ (abs (- q0 q1)) (* (min q0 q2) (max q1 (sin q2))))")
        .unwrap();
    let outputs: Vec<Output> = [f, g, h]
        .iter()
        .enumerate()
        .map(|(i, &value)| {
            let i = proc_macro2::Literal::usize_unsuffixed(i);
            Output {
                target: quote!(out[#i]),
                value,
            }
        })
        .collect();
    let code = emit(&s, &outputs, &symbol, &EmitOptions::default());
    assert_block(&code);
    let text = pretty(&code);
    // The operand of the inline signum is bound once, even though it is used once.
    assert!(text.contains("let t0: f64 = q[0] + q[1];"), "{text}");
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains(
            "out[0] = (if t0 > 0.0 { 1.0 } else if t0 < 0.0 { -1.0 } else { t0 }) * q[2];"
        ),
        "{text}"
    );
    assert!(
        flat.contains("out[1] = if q[0] > 0.0 { 1.0 } else if q[0] < 0.0 { -1.0 } else { q[0] };"),
        "{text}"
    );
    assert!(!text.contains("signum"), "{text}");
    assert!(
        text.contains("out[2] = (q[0] - q[1]).abs() + q[0].min(q[2]) * q[1].max(q[2].sin());"),
        "{text}"
    );
    // Same semantics as `eval`: 0 at zero, NaN for NaN (unlike `f64::signum`).
    for x in [2.5, -1e-300, 0.0, -0.0, f64::NAN, f64::INFINITY] {
        let e = mechanism_cas::eval(&s, g, &|_| Some(x)).unwrap();
        let got = emitted_signum(x);
        assert!(
            got == e || (got.is_nan() && e.is_nan()),
            "{x}: {got} vs {e}"
        );
    }
    assert_eq!(emitted_signum(0.0), 0.0);
    assert_ne!(0.0f64.signum(), 0.0);
}

/// The emitted form of the outputs of the test below, copied from its assertion, to check it
/// against the interpreter.
fn emitted_functions(q: [f64; 3]) -> [f64; 3] {
    let mut out = [0.0; 3];
    let t0: f64 = q[0].tanh();
    out[0] = q[1].atan2(q[0]) + q[2].asin() * q[2].acos() + q[0].atan();
    out[1] = t0 + q[0].sinh() / q[1].cosh();
    out[2] = (1f64 - t0) * (1f64 + t0) + q[0].ln() / 1.0986122886681098f64;
    out
}

#[test]
fn elementary_functions_emit_f64_methods() {
    let mut s = Store::new();
    let f = s
        .parse("(+ (+ (atan2 q1 q0) (* (asin q2) (acos q2))) (atan q0))")
        .unwrap();
    let tanh = s.parse("(tanh q0)").unwrap();
    let g = s.parse("(+ (/ (sinh q0) (cosh q1)) (tanh q0))").unwrap();
    // d tanh = (1 − tanh)(1 + tanh) shares the tanh of `g`; log to the base 3 is ln q0 / ln 3,
    // with ln 3 folded.
    let sech2 = mechanism_cas::derivative(&mut s, tanh, Symbol::from("q0"));
    let (q0, three) = (s.var("q0"), s.num(3.0));
    let log = s.log(q0, three);
    let h = s.add(sech2, log);
    let outputs: Vec<Output> = [f, g, h]
        .iter()
        .enumerate()
        .map(|(i, &value)| {
            let i = proc_macro2::Literal::usize_unsuffixed(i);
            Output {
                target: quote!(out[#i]),
                value,
            }
        })
        .collect();
    let code = emit(&s, &outputs, &symbol, &EmitOptions::default());
    assert_block(&code);
    assert_eq!(
        pretty(&code),
        "fn f() {\n    let t0: f64 = q[0].tanh();\n    out[0] = q[1].atan2(q[0]) + q[2].asin() * q[2].acos() + q[0].atan();\n    out[1] = t0 + q[0].sinh() / q[1].cosh();\n    out[2] = (1f64 - t0) * (1f64 + t0) + q[0].ln() / 1.0986122886681098f64;\n}\n"
    );
    for q in [[0.3, -1.2, 0.5], [2.0, 0.7, -0.9], [0.01, -3.0, 1.0]] {
        let env = |sym: Symbol| {
            ["q0", "q1", "q2"]
                .iter()
                .position(|n| *n == sym.as_str())
                .map(|i| q[i])
        };
        let want = mechanism_cas::Evaluator::new(&s)
            .eval_many(&[f, g, h], &env)
            .unwrap();
        assert_eq!(
            emitted_functions(q),
            [want[0], want[1], want[2]],
            "at {q:?}"
        );
    }
}

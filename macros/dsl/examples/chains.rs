//! Measures the expansion time of `mechanism!` for the double pendulum and for unrolled chains
//! of pendula (Tao–Owhadi 2014, §4.2), stage by stage.
//!
//! ```sh
//! cargo run -p mechanism-dsl --release --example chains            # n = 1, 2, 10, 30
//! cargo run -p mechanism-dsl --release --example chains -- 5 50    # other chain lengths
//! ```
//!
//! Every time is the best of three runs. "expand" times `expand_model` (everything after
//! parsing); the stage columns time the same pipeline called stage by stage. "code" is the
//! length of the generated token stream's `to_string()`. The last columns summarize the
//! e-graph simplification reports: groups kept / groups run, the stop reasons, and the summed
//! DAG cost before → after.
//!
//! The last table is the chain and the ladder written with families (`sizes`, run-time `N`,
//! the library's `src/models/families.rs`): their expansion time and code, in characters
//! and in tokens, at default sizes 10 and 10 000.

use std::collections::BTreeMap;
use std::error::Error;
use std::time::{Duration, Instant};

use mechanism_dsl::ast::Mechanism;
use mechanism_test_support::bodies::{chain, families};
use proc_macro2::{TokenStream, TokenTree};

const RUNS: usize = 3;

/// The double pendulum model, if `src/models/double_pendulum.rs` cannot be read.
const DOUBLE_PENDULUM_FALLBACK: &str = r#"
    pub struct DoublePendulum {
        coordinates: [x1, y1, x2, y2],
        parameters: { m1 = 1.0, m2 = 1.0, l1 = 1.0, l2 = 1.4142135623730951, g = 1.0 },
        kinetic: 0.5 * m1 * (dot(x1).powi(2) + dot(y1).powi(2))
            + 0.5 * m2 * (dot(x2).powi(2) + dot(y2).powi(2)),
        potential: m1 * g * y1 + m2 * g * y2,
        holonomic: {
            rod1: x1.powi(2) + y1.powi(2) - l1.powi(2),
            rod2: (x2 - x1).powi(2) + (y2 - y1).powi(2) - l2.powi(2),
        },
    }
"#;

/// Reads the body of the first `mechanism!` invocation of the double pendulum's source file.
fn double_pendulum() -> Result<(String, TokenStream), Box<dyn Error>> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../src/models/double_pendulum.rs"
    );
    if let Ok(source) = std::fs::read_to_string(path) {
        let file = syn::parse_file(&source)?;
        for item in file.items {
            if let syn::Item::Macro(item) = item {
                if item
                    .mac
                    .path
                    .segments
                    .last()
                    .is_some_and(|s| s.ident == "mechanism")
                {
                    return Ok(("double pendulum (src/models)".into(), item.mac.tokens));
                }
            }
        }
    }
    Ok((
        "double pendulum (fallback copy)".into(),
        DOUBLE_PENDULUM_FALLBACK.parse()?,
    ))
}

#[derive(Default, Clone, Copy)]
struct Times {
    parse: Duration,
    validate: Duration,
    plan: Duration,
    derive: Duration,
    simplify: Duration,
    generate: Duration,
    expand: Duration,
}

impl Times {
    fn min(self, other: Times) -> Times {
        Times {
            parse: self.parse.min(other.parse),
            validate: self.validate.min(other.validate),
            plan: self.plan.min(other.plan),
            derive: self.derive.min(other.derive),
            simplify: self.simplify.min(other.simplify),
            generate: self.generate.min(other.generate),
            expand: self.expand.min(other.expand),
        }
    }
}

struct Row {
    label: String,
    coordinates: usize,
    constraints: usize,
    times: Times,
    code_chars: usize,
    reports: String,
}

fn ms(d: Duration) -> String {
    format!("{:.1}", d.as_secs_f64() * 1e3)
}

fn measure(label: String, tokens: &TokenStream) -> Result<Row, Box<dyn Error>> {
    let mut best: Option<Times> = None;
    let mut code_chars = 0;
    let mut shape = (0, 0);
    let mut reports = String::new();
    let mut differs = false;
    for _ in 0..RUNS {
        let mut t = Times::default();

        // The whole pipeline after parsing, as the macro runs it.
        let start = Instant::now();
        let ast: Mechanism = syn::parse2(tokens.clone())?;
        t.parse = start.elapsed();
        let start = Instant::now();
        let expanded = mechanism_dsl::expand_model(&ast)?;
        t.expand = start.elapsed();
        code_chars = expanded.to_string().len();

        // The same pipeline, stage by stage.
        let start = Instant::now();
        let mut model = mechanism_dsl::validate::validate(&ast)?;
        t.validate = start.elapsed();
        let start = Instant::now();
        let plan = mechanism_dsl::plan::Plan::for_model(&model);
        t.plan = start.elapsed();
        let start = Instant::now();
        let mut derived = mechanism_dsl::derive::derive(&mut model, &plan);
        t.derive = start.elapsed();
        let start = Instant::now();
        let simplify_reports = mechanism_dsl::simplify::simplify_outputs(
            &mut model.store,
            &mut derived,
            &mechanism_dsl::simplify::limits(),
        );
        t.simplify = start.elapsed();
        let start = Instant::now();
        let generated = mechanism_dsl::generate::fixed(&model, &derived);
        t.generate = start.elapsed();
        // The e-graph runs have a wall-clock limit, so when one hits it (debug builds) the
        // staged run may simplify differently; mark the row instead of failing.
        if generated.to_string().len() != code_chars {
            differs = true;
        }
        shape = (model.dof(), model.constraints.len());

        let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
        let (mut before, mut after, mut kept) = (0.0, 0.0, 0);
        for report in &simplify_reports {
            *reasons
                .entry(format!("{:?}", report.stop_reason))
                .or_default() += 1;
            before += report.cost_before;
            after += report.cost_after;
            kept += usize::from(report.kept);
        }
        let reasons: Vec<String> = reasons.iter().map(|(r, c)| format!("{r}×{c}")).collect();
        reports = format!(
            "{kept}/{} kept; {}; cost {before:.0} → {after:.0}",
            simplify_reports.len(),
            reasons.join(" ")
        );
        best = Some(best.map_or(t, |b| b.min(t)));
    }
    let times = best.expect("at least one run");
    if differs {
        reports.push_str(" (staged run generated different code: a time limit was hit)");
    }
    Ok(Row {
        label,
        coordinates: shape.0,
        constraints: shape.1,
        times,
        code_chars,
        reports,
    })
}

fn main() -> Result<(), Box<dyn Error>> {
    let mut sizes: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse())
        .collect::<Result<_, _>>()?;
    if sizes.is_empty() {
        sizes = vec![1, 2, 10, 30];
    }
    let profile = if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    };
    println!("mechanism-dsl expansion times ({profile} build, best of {RUNS} runs, ms)\n");

    let mut rows = Vec::new();
    let (label, tokens) = double_pendulum()?;
    rows.push(measure(label, &tokens)?);
    for n in sizes {
        let row = measure(format!("chain n = {n}"), &chain::chain(n))?;
        rows.push(row);
    }

    println!(
        "| model | coords | constraints | expand (ms) | parse | validate | plan | derive | simplify | generate | code (chars) | simplification |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|");
    for row in &rows {
        let t = row.times;
        println!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            row.label,
            row.coordinates,
            row.constraints,
            ms(t.expand),
            ms(t.parse),
            ms(t.validate),
            ms(t.plan),
            ms(t.derive),
            ms(t.simplify),
            ms(t.generate),
            row.code_chars,
            row.reports,
        );
    }
    families()
}

/// The chain and the ladder written with families (the library's `src/models/families.rs`),
/// at default sizes 10 and 10 000: the size is a run-time value, so the expansion time and the
/// code do not depend on it.
fn families() -> Result<(), Box<dyn Error>> {
    println!(
        "\n| model with families | default size | expand (ms) | code (chars) | code (tokens) |"
    );
    println!("|---|---:|---:|---:|---:|");
    for size in [10, 10_000] {
        let labels = ["chain of N pendula", "ladder of L links"];
        for (label, tokens) in labels.into_iter().zip(families::family_models(size, size)) {
            let ast: Mechanism = syn::parse2(tokens)?;
            let mut best = Duration::MAX;
            let mut code = TokenStream::new();
            for _ in 0..RUNS {
                let start = Instant::now();
                code = mechanism_dsl::expand_model(&ast)?;
                best = best.min(start.elapsed());
            }
            println!(
                "| {label} | {size} | {} | {} | {} |",
                ms(best),
                code.to_string().len(),
                token_count(&code)
            );
        }
    }
    Ok(())
}

/// Returns the number of tokens in `stream`: identifiers, punctuation and literals, and each
/// delimited group as one token plus its contents.
fn token_count(stream: &TokenStream) -> usize {
    stream
        .clone()
        .into_iter()
        .map(|tree| match tree {
            TokenTree::Group(group) => 1 + token_count(&group.stream()),
            _ => 1,
        })
        .sum()
}

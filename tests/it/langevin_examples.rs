//! The `langevin_oscillator` example's sampling code (`examples/common/sampling.rs`,
//! `mechanism_examples::sampling`, called here rather than run as a process) is reproducible: the same seed writes the same
//! CSV bytes and the same statistics bits, another seed a different path.

use crate::support::sampling::{self, Inner, Settings};
use mechanism::runtime::simulation::CsvSink;

/// A short run of the example's defaults, one CSV row per step.
fn settings(seed: u64, inner: Inner, h: f64) -> Settings {
    Settings {
        m: 1.0,
        k: 1.0,
        kt: 1.0,
        gamma: 1.0,
        h,
        steps: 20_000,
        burn_in: 2_000,
        batches: 10,
        every: 1,
        save_every: None,
        seed,
        inner,
        omega: 20.0,
        length: 1.0,
        gravity: 1.0,
        interrupt: None,
    }
}

#[test]
fn oscillator_same_seed_same_csv_bytes() {
    for inner in [Inner::Verlet, Inner::Zss] {
        let run = |seed| {
            let mut csv = Vec::new();
            let report =
                sampling::run_oscillator(&settings(seed, inner, 0.05), CsvSink::new(&mut csv))
                    .unwrap();
            (csv, report)
        };
        let (first, report) = run(42);
        let (second, again) = run(42);
        assert_eq!(first.len(), second.len());
        assert!(first == second, "{inner:?}: the CSV bytes differ");
        assert_eq!(
            report.last.q.map(f64::to_bits),
            again.last.q.map(f64::to_bits)
        );
        assert_eq!(report.q2[0].mean.to_bits(), again.q2[0].mean.to_bits());
        // 20 001 rows after the header.
        assert_eq!(first.iter().filter(|&&b| b == b'\n').count(), 20_002);
        let (other, _) = run(43);
        assert!(first != other, "{inner:?}: another seed gave the same path");
    }
}

#[test]
fn penalized_pendulum_same_seed_same_csv_bytes() {
    for inner in [Inner::Verlet, Inner::Zss] {
        let run = |seed| {
            let mut csv = Vec::new();
            let report =
                sampling::run_pendulum(&settings(seed, inner, 0.005), CsvSink::new(&mut csv))
                    .unwrap();
            (csv, report)
        };
        let (first, report) = run(7);
        let (second, again) = run(7);
        assert!(first == second, "{inner:?}: the CSV bytes differ");
        assert_eq!(
            report.variance.mean.to_bits(),
            again.variance.mean.to_bits()
        );
        assert_eq!(report.histogram, again.histogram);
        let header = first.split(|&b| b == b'\n').next().unwrap();
        assert_eq!(
            std::str::from_utf8(header).unwrap(),
            "t,q.x,q.y,v.x,v.y,energy,residual.position,residual.velocity,constraint.rod,\
             distance,energy.penalized"
        );
        let (other, _) = run(8);
        assert!(first != other, "{inner:?}: another seed gave the same path");
    }
}

#[test]
fn bad_settings_are_errors_not_panics() {
    let good = settings(1, Inner::Verlet, 0.05);
    let bad = [
        Settings { kt: -1.0, ..good },
        Settings {
            h: f64::NAN,
            ..good
        },
        Settings { batches: 1, ..good },
        Settings { every: 0, ..good },
        Settings {
            burn_in: 20_000,
            ..good
        },
        Settings {
            gravity: f64::INFINITY,
            ..good
        },
    ];
    for settings in bad {
        assert!(
            sampling::run_oscillator(&settings, CsvSink::new(Vec::new())).is_err(),
            "{settings:?}"
        );
        assert!(
            sampling::run_pendulum(&settings, CsvSink::new(Vec::new())).is_err(),
            "{settings:?}"
        );
    }
}

//! Ensembles of Langevin double pendula (Tao–Owhadi §4.1 under the GLA thermostat, SPOOK inside)
//! run through the driver: bit-for-bit identical whatever the thread count, each member equal to
//! a sequential run with its own seed, and shards whose CSV files concatenate into the
//! single-machine file byte for byte.

use mechanism::ensemble::{
    member_seed, verify_shard, Cell, Ensemble, EnsembleCsv, ManifestError, Member, Shard,
    ShardManifest,
};
use mechanism::models::DoublePendulum;
use mechanism::runtime::simulation::{Mechanics, Schedule, Simulation, Table};
use mechanism::runtime::{Langevin, Spook, State};

/// What a member fails with.
type Error = Box<dyn std::error::Error + Send + Sync>;

/// SPOOK's step inside the thermostat.
const H: f64 = 0.01;
/// Friction γ and temperature kT of the thermostat: hot enough that the noise moves the bobs
/// visibly within a second.
const FRICTION: f64 = 1.0;
const TEMPERATURE: f64 = 0.5;

/// A member: the angle of both rods from the downward vertical at the start.
fn start(model: &DoublePendulum, theta: f64) -> State<4> {
    let (s, c) = theta.sin_cos();
    let r = model.l1 + model.l2;
    State::new(0.0, [model.l1 * s, -model.l1 * c, r * s, -r * c], [0.0; 4])
}

/// Runs one member for two seconds and returns its table (every fifth step).
fn run(model: &DoublePendulum, theta: f64, seed: u64) -> Result<Table, Error> {
    let spook = Spook::new(H)?;
    let langevin = Langevin::new(spook, H, FRICTION, TEMPERATURE, seed)?;
    let mut simulation = Simulation::fixed(
        model,
        langevin,
        start(model, theta),
        2.0,
        Schedule::EveryNthStep(5),
    )?
    .observe(Mechanics::<_, 4, 2>::new(model))
    .coordinates(["x1", "y1", "x2", "y2"])?;
    simulation.run()?;
    Ok(simulation.into_output())
}

fn member(model: &DoublePendulum, m: Member<'_, f64>) -> Result<Table, Error> {
    run(model, *m.parameters, m.seed)
}

/// The bits of every value of every table, in order.
fn bits(tables: &[Table]) -> Vec<u64> {
    tables
        .iter()
        .flat_map(|t| t.rows().flat_map(|r| r.iter().map(|x| x.to_bits())))
        .collect()
}

/// Thirteen starting angles (13 is not a multiple of the shard counts used).
fn angles() -> Vec<f64> {
    (0..13).map(|i| 0.1 + 0.1 * i as f64).collect()
}

#[test]
fn results_are_identical_bit_for_bit_whatever_the_thread_count() {
    let model = DoublePendulum::default();
    let ensemble = Ensemble::new(angles()).seed(2024);
    let reference = ensemble
        .clone()
        .threads(1)
        .try_map(|m| member(&model, m))
        .unwrap();
    assert_eq!(reference.len(), 13);
    for threads in [2, 3, 8] {
        let tables = ensemble
            .clone()
            .threads(threads)
            .try_map(|m| member(&model, m))
            .unwrap();
        assert!(
            bits(&tables) == bits(&reference),
            "{threads} threads changed the bits"
        );
    }
}

#[test]
fn each_member_is_a_sequential_run_with_its_own_seed() {
    let model = DoublePendulum::default();
    let base = 77;
    let tables = Ensemble::new(angles())
        .seed(base)
        .threads(2)
        .try_map(|m| member(&model, m))
        .unwrap();
    for (i, table) in tables.iter().enumerate() {
        let alone = run(&model, angles()[i], member_seed(base, i)).unwrap();
        assert!(
            bits(std::slice::from_ref(table)) == bits(&[alone]),
            "member {i}"
        );
    }
    // The noise matters: the same start with another member's seed is another path, and the
    // paths of one start under two seeds separate by more than rounding within two seconds.
    let same_start = |seed| run(&model, 0.5, seed).unwrap();
    let (a, b) = (
        same_start(member_seed(base, 0)),
        same_start(member_seed(base, 1)),
    );
    let last = |t: &Table| t.row(t.len() - 1).unwrap().to_vec();
    let gap = last(&a)
        .iter()
        .zip(last(&b))
        .skip(1)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max);
    assert!(gap > 1e-3, "two seeds, final states {gap:e} apart");
}

#[test]
fn shards_concatenate_into_the_single_machine_csv_byte_for_byte() {
    let model = DoublePendulum::default();
    let write = |shard: Shard, threads: usize| {
        let ensemble = Ensemble::new(angles())
            .seed(9)
            .threads(threads)
            .shard(shard);
        let tables = ensemble.try_map(|m| member(&model, m)).unwrap();
        let mut columns = vec!["theta".to_owned()];
        columns.extend(tables[0].columns().iter().cloned());
        let columns: Vec<&str> = columns.iter().map(String::as_str).collect();
        let mut csv = EnsembleCsv::new(Vec::new(), shard, &columns).unwrap();
        for (index, table) in ensemble.indices().zip(&tables) {
            let theta = ensemble.all_members()[index];
            csv.table(index, &[Cell::Number(theta)], table).unwrap();
        }
        csv.into_inner().unwrap()
    };
    let whole = write(Shard::WHOLE, 2);
    let header = "member,theta,t,q.x1,q.y1,q.x2,q.y2,v.x1,v.y1,v.x2,v.y2,energy,\
                  residual.position,residual.velocity\n";
    assert!(whole.starts_with(header.as_bytes()));
    // 13 members × 41 rows (t = 0, 0.05, …, 2) after the header.
    assert_eq!(whole.iter().filter(|&&b| b == b'\n').count(), 1 + 13 * 41);
    for count in [2, 3, 5] {
        let mut joined = Vec::new();
        for k in 1..=count {
            // Each shard on another thread count, as different machines would be.
            joined.extend(write(Shard::new(k, count).unwrap(), k));
        }
        assert!(joined == whole, "shards of {count} do not concatenate");
    }
}

/// Each shard writes its part and a manifest (rows, bytes, CRC-32) beside it: the parts join
/// into the single-machine file byte for byte, each verifies, and a truncated, changed or
/// missing part, or a missing manifest, is an error that names the file.
#[test]
fn shard_manifests_find_a_missing_or_truncated_part() {
    let dir = std::env::temp_dir().join(format!("mechanism-shards-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let members: Vec<f64> = angles();
    let write = |shard: Shard, path: &std::path::Path| {
        let file = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
        let mut csv = EnsembleCsv::new(file, shard, &["theta", "square"]).unwrap();
        for index in shard.members(members.len()) {
            let theta = members[index];
            csv.row(index, &[Cell::Number(theta), Cell::Number(theta * theta)])
                .unwrap();
        }
        let (_, summary) = csv.finish().unwrap();
        let manifest = ShardManifest::new(path, shard, members.len(), summary);
        manifest.write(&ShardManifest::path_for(path)).unwrap();
        manifest
    };
    let whole = dir.join("whole.csv");
    write(Shard::WHOLE, &whole);
    let mut joined = Vec::new();
    let parts: Vec<_> = (1..=3).map(|k| dir.join(format!("part-{k}.csv"))).collect();
    for (k, part) in (1..=3).zip(&parts) {
        let written = write(Shard::new(k, 3).unwrap(), part);
        let verified = verify_shard(&ShardManifest::path_for(part)).unwrap();
        assert_eq!(verified, written);
        assert_eq!(verified.summary.rows, verified.members.len());
        joined.extend(std::fs::read(part).unwrap());
    }
    assert!(
        joined == std::fs::read(&whole).unwrap(),
        "the parts do not join"
    );

    // Shard 2 killed while writing its part: the part is cut short.
    let part = &parts[1];
    let manifest = ShardManifest::path_for(part);
    let full = std::fs::read(part).unwrap();
    std::fs::write(part, &full[..full.len() - 7]).unwrap();
    match verify_shard(&manifest) {
        Err(ManifestError::Size {
            path,
            expected,
            found,
        }) => {
            assert_eq!(
                (path, expected, found),
                (part.clone(), full.len() as u64, full.len() as u64 - 7)
            );
        }
        other => panic!("a truncated part passed: {other:?}"),
    }
    // Changed in place (same size): the checksum differs.
    let mut changed = full.clone();
    changed[full.len() - 3] ^= 1;
    std::fs::write(part, &changed).unwrap();
    assert!(matches!(
        verify_shard(&manifest),
        Err(ManifestError::Checksum { .. })
    ));
    // Missing part, missing manifest.
    std::fs::remove_file(part).unwrap();
    assert!(
        matches!(verify_shard(&manifest), Err(ManifestError::Part { path, .. }) if &path == part)
    );
    std::fs::remove_file(&manifest).unwrap();
    let error = verify_shard(&manifest).unwrap_err();
    assert!(matches!(&error, ManifestError::Io { path, .. } if path == &manifest));
    assert!(error.to_string().contains("part-2.csv.manifest"), "{error}");
    std::fs::remove_dir_all(&dir).unwrap();
}

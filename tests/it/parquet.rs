//! `mechanism::parquet`: the driver's rows written as Parquet read back with the `parquet`
//! crate's own reader — the column names and order of the CSV header, the row count, every
//! value bit for bit (NaN payloads, infinities, −0 included) across several row groups — and the
//! sink's contract: rows of the wrong width and rows outside `begin`…`finish` are errors, a
//! dropped sink does not panic, `into_inner` completes the file of a run that stopped early,
//! and a row allocates nothing between row groups; a family model's table is long (one row per
//! member and time) and holds exactly the values of the wide CSV.

use std::io;

use bytes::Bytes;
use mechanism::models::{DoublePendulum, PendulumChain};
use mechanism::parquet::{write_table, Layout, ParquetDataset, ParquetSink};
use mechanism::runtime::simulation::{
    family, CsvSink, Mechanics, Schedule, Simulation, Sink, SparseMechanics, Table,
};
use mechanism::runtime::{Configuration, SparseSpook, Spook};
use parquet::column::reader::ColumnReader;
use parquet::file::reader::{FileReader, SerializedFileReader};

/// A Parquet file read back: column names, values column by column (an `INT64` column's
/// converted, and kept in `integers`), row-group count.
struct Read {
    columns: Vec<String>,
    values: Vec<Vec<f64>>,
    integers: Vec<Vec<i64>>,
    row_groups: usize,
}

impl Read {
    /// Returns the number of rows, after checking every column has it.
    fn rows(&self) -> usize {
        let rows = self.values.first().map_or(0, Vec::len);
        assert!(
            self.values.iter().all(|c| c.len() == rows),
            "ragged columns"
        );
        rows
    }
}

/// Reads `bytes` with the `parquet` crate's column readers, which return the stored `f64`s
/// without conversion.
fn read(bytes: Vec<u8>) -> Read {
    let file = SerializedFileReader::new(Bytes::from(bytes)).expect("a readable Parquet file");
    let schema = file.metadata().file_metadata().schema_descr();
    let columns: Vec<String> = schema.columns().iter().map(|c| c.name().into()).collect();
    let mut values = vec![Vec::new(); columns.len()];
    let mut integers = vec![Vec::new(); columns.len()];
    for g in 0..file.num_row_groups() {
        let group = file.get_row_group(g).unwrap();
        let rows = group.metadata().num_rows() as usize;
        for (j, (column, ints)) in values.iter_mut().zip(&mut integers).enumerate() {
            let records = match group.get_column_reader(j).unwrap() {
                ColumnReader::DoubleColumnReader(mut reader) => {
                    let mut chunk = Vec::new();
                    let (records, _, _) =
                        reader.read_records(rows, None, None, &mut chunk).unwrap();
                    column.extend(chunk);
                    records
                }
                ColumnReader::Int64ColumnReader(mut reader) => {
                    let mut chunk = Vec::new();
                    let (records, _, _) =
                        reader.read_records(rows, None, None, &mut chunk).unwrap();
                    column.extend(chunk.iter().map(|&k| k as f64));
                    ints.extend(chunk);
                    records
                }
                _ => panic!("column {j} is neither DOUBLE nor INT64"),
            };
            assert_eq!(records, rows, "row group {g}, column {j}");
        }
    }
    Read {
        columns,
        values,
        integers,
        row_groups: file.num_row_groups(),
    }
}

/// Asserts that `read` holds `table`'s columns, in order, and its values bit for bit.
fn assert_same(read: &Read, table: &Table) {
    assert_eq!(read.columns, table.columns());
    assert_eq!(read.rows(), table.len());
    for (i, row) in table.rows().enumerate() {
        for (j, x) in row.iter().enumerate() {
            assert_eq!(
                read.values[j][i].to_bits(),
                x.to_bits(),
                "row {i}, column {}",
                table.columns()[j]
            );
        }
    }
}

/// Returns the driver's run of the double pendulum (Tao–Owhadi §4.1, SPOOK at h = 0.01) for
/// two seconds, every step, with its energy and residuals, into `sink`.
fn run_into<K: Sink>(sink: K) -> K {
    let model = DoublePendulum::default();
    let mut run = Simulation::fixed(
        &model,
        Spook::new(0.01).unwrap(),
        DoublePendulum::initial_state(),
        2.0,
        Schedule::EveryStep,
    )
    .unwrap()
    .coordinates(DoublePendulum::COORDINATES)
    .unwrap()
    .observe(Mechanics::<_, 4, 2>::new(&model))
    .write_to(sink);
    run.run().unwrap();
    run.into_output()
}

#[test]
fn a_run_reads_back_with_the_tables_columns_and_bits() {
    let table = run_into(Table::default());
    assert_eq!(table.len(), 201);
    assert_eq!(
        &table.columns()[..3],
        ["t".to_string(), "q.x1".into(), "q.y1".into()]
    );
    let bytes = run_into(ParquetSink::new(Vec::new())).into_inner().unwrap();
    let read = read(bytes);
    assert_eq!(read.row_groups, 1, "201 rows announced: one row group");
    assert_same(&read, &table);
}

#[test]
fn more_rows_than_one_row_group_round_trip() {
    let table = run_into(Table::default());
    let bytes = run_into(ParquetSink::with_row_group(Vec::new(), 64))
        .into_inner()
        .unwrap();
    let read = read(bytes);
    assert_eq!(read.row_groups, 4, "201 rows in groups of 64");
    assert_same(&read, &table);
    assert_same(
        &self::read(write_table(Vec::new(), &table).unwrap()),
        &table,
    );
}

#[test]
fn non_finite_and_extreme_values_round_trip_bit_for_bit() {
    let specials = [
        f64::NAN,
        -f64::NAN,
        f64::from_bits(0x7ff8_0000_0000_0001), // a NaN with a payload
        f64::INFINITY,
        f64::NEG_INFINITY,
        -0.0,
        0.0,
        f64::MIN_POSITIVE / 2.0, // subnormal
        f64::MAX,
        f64::EPSILON,
    ];
    let mut table = Table::default();
    table
        .begin(&["t".into(), "x".into(), "y".into()], None)
        .unwrap();
    for (i, &x) in specials.iter().enumerate() {
        let y = specials[(i + 3) % specials.len()];
        Sink::row(&mut table, &[i as f64, x, y]).unwrap();
    }
    for rows in [1, 3, 64] {
        let mut sink = ParquetSink::with_row_group(Vec::new(), rows);
        sink.begin(table.columns(), None).unwrap();
        table.rows().for_each(|row| sink.row(row).unwrap());
        assert_same(&read(sink.into_inner().unwrap()), &table);
    }
}

#[test]
fn a_row_of_the_wrong_width_is_an_error_and_the_file_goes_on() {
    let columns = ["t".to_string(), "q.x".into(), "v.x".into()];
    let mut sink = ParquetSink::new(Vec::new());
    let before = sink.row(&[0.0; 3]).unwrap_err();
    assert_eq!(before.kind(), io::ErrorKind::InvalidInput);
    sink.begin(&columns, Some(2)).unwrap();
    assert_eq!(
        sink.begin(&columns, None).unwrap_err().kind(),
        io::ErrorKind::InvalidInput,
        "begin twice"
    );
    sink.row(&[0.0, 1.0, 2.0]).unwrap();
    for wrong in [&[0.0, 1.0][..], &[0.0; 4], &[]] {
        let error = sink.row(wrong).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::InvalidInput);
        assert!(
            error.to_string().contains("3 columns given to begin"),
            "{error}"
        );
    }
    sink.row(&[0.5, 1.5, 2.5]).unwrap();
    sink.finish().unwrap();
    sink.finish().unwrap(); // finishing twice changes nothing
    assert_eq!(
        sink.row(&[1.0, 2.0, 3.0]).unwrap_err().kind(),
        io::ErrorKind::InvalidInput,
        "a row after finish"
    );
    let read = read(sink.into_inner().unwrap());
    assert_eq!(read.columns, columns);
    assert_eq!(
        read.values,
        [vec![0.0, 0.5], vec![1.0, 1.5], vec![2.0, 2.5]]
    );

    let mut empty = ParquetSink::new(Vec::new());
    assert_eq!(
        empty.begin(&[], None).unwrap_err().kind(),
        io::ErrorKind::InvalidInput
    );
}

#[test]
fn a_file_without_rows_keeps_its_columns() {
    let mut sink = ParquetSink::new(Vec::new());
    sink.begin(&["t".into(), "energy".into()], None).unwrap();
    let read = read(sink.into_inner().unwrap());
    assert_eq!(read.columns, ["t", "energy"]);
    assert_eq!((read.rows(), read.row_groups), (0, 0));
}

#[test]
fn a_sink_dropped_before_finish_does_not_panic_and_into_inner_completes_it() {
    let mut dropped = ParquetSink::with_row_group(Vec::new(), 2);
    dropped.begin(&["t".into()], None).unwrap();
    for t in 0..5 {
        dropped.row(&[t as f64]).unwrap();
    }
    drop(dropped);

    // A run that stops early does not reach the driver's `finish`: `into_inner` writes the
    // footer after the rows written so far.
    let mut sink = ParquetSink::with_row_group(Vec::new(), 2);
    sink.begin(&["t".into()], None).unwrap();
    for t in 0..5 {
        sink.row(&[t as f64]).unwrap();
    }
    let read = read(sink.into_inner().unwrap());
    assert_eq!(read.values, [vec![0.0, 1.0, 2.0, 3.0, 4.0]]);
    assert_eq!(read.row_groups, 3);
}

#[test]
fn rows_allocate_nothing_between_row_groups() {
    const GROUP: usize = 1000;
    let columns: Vec<String> = (0..12).map(|j| format!("c{j}")).collect();
    let row: Vec<f64> = (0..12).map(|j| j as f64 * 0.25).collect();
    let mut sink = ParquetSink::with_row_group(Vec::with_capacity(1 << 20), GROUP);
    sink.begin(&columns, None).unwrap();
    for group in 0..3 {
        let before = crate::support::allocations();
        for _ in 0..GROUP - 1 {
            sink.row(&row).unwrap();
        }
        assert_eq!(
            crate::support::allocations() - before,
            0,
            "rows of row group {group} allocated"
        );
        let before = crate::support::allocations();
        sink.row(&row).unwrap(); // fills the buffer: the encoder writes the row group
        assert!(
            crate::support::allocations() > before,
            "the counter sees the encoder's allocations"
        );
    }
    let read = read(sink.into_inner().unwrap());
    assert_eq!((read.rows(), read.row_groups), (3 * GROUP, 3));
}

/// Reads every closed part of a dataset directory, in name order, and returns the tables.
fn read_dataset(dir: &std::path::Path) -> Vec<Read> {
    let mut names: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|name| name.ends_with(".parquet") && !name.starts_with('.'))
        .collect();
    names.sort();
    names
        .iter()
        .map(|name| read(std::fs::read(dir.join(name)).unwrap()))
        .collect()
}

/// A dataset killed mid-part (the sink forgotten: no destructor, no footer, as after a SIGKILL)
/// leaves every closed part readable and the open one hidden from the readers; a finished one
/// holds every row, and an earlier run's parts are replaced.
#[test]
fn a_killed_dataset_leaves_every_closed_part_readable() {
    let dir =
        std::env::temp_dir().join(format!("mechanism-dataset-{}.parquet", std::process::id()));
    let columns = ["t".to_string(), "q.x".to_string()];
    let write = |rows: usize, finish: bool| {
        let mut sink = ParquetDataset::create(&dir).unwrap().rows_per_part(10);
        sink.begin(&columns, None).unwrap();
        for i in 0..rows {
            sink.row(&[i as f64, -(i as f64)]).unwrap();
        }
        assert_eq!(sink.parts(), rows / 10);
        if finish {
            sink.finish().unwrap();
        } else {
            std::mem::forget(sink); // what a SIGKILL does: nothing more is written
        }
    };
    write(35, false);
    let parts = read_dataset(&dir);
    assert_eq!(parts.len(), 3);
    let t: Vec<f64> = parts.iter().flat_map(|p| p.values[0].clone()).collect();
    assert_eq!(t, (0..30).map(f64::from).collect::<Vec<_>>());
    assert!(dir.join(".part-000003.parquet.inprogress").exists());

    write(35, true);
    let parts = read_dataset(&dir);
    assert_eq!(parts.len(), 4, "the earlier run's parts were replaced");
    assert_eq!(parts.iter().map(Read::rows).sum::<usize>(), 35);
    assert!(parts
        .iter()
        .all(|p| p.columns == columns && p.row_groups == 1));
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        4,
        "no part in progress is left"
    );

    write(0, true);
    let parts = read_dataset(&dir);
    assert_eq!(
        (parts.len(), parts[0].rows(), &parts[0].columns),
        (1, 0, &columns.to_vec())
    );
    std::fs::remove_dir_all(&dir).unwrap();

    // A file where the directory should be is refused, naming it.
    std::fs::write(&dir, b"not a directory").unwrap();
    let error = ParquetDataset::create(&dir).unwrap_err();
    assert!(
        error.to_string().contains(&dir.display().to_string()),
        "{error}"
    );
    std::fs::remove_file(&dir).unwrap();
}

/// Runs the generated chain of `n` pendula (SPOOK, h = 0.01) for `steps` steps, every step,
/// with its energy and residuals, into `sink`: the columns `t`, `q.x[0]`, `q.y[0]`, …, `v.x[0]`,
/// …, `energy`, `residual.*`.
fn chain_into<K: Sink>(n: usize, steps: usize, sink: K) -> K {
    let chain = PendulumChain::new(n).unwrap();
    let start = mechanism::runtime::reference::PendulumChain::tao_owhadi(n).tao_owhadi_state();
    let h = 0.01;
    let mut run = Simulation::sparse(
        &chain,
        SparseSpook::new(&chain, h).unwrap(),
        start,
        steps as f64 * h,
        Schedule::EveryStep,
    )
    .unwrap()
    .coordinates(family(&["x", "y"], n))
    .unwrap()
    .observe(SparseMechanics::new(&chain))
    .write_to(sink);
    run.run().unwrap();
    let mut sink = run.into_output();
    sink.finish().unwrap();
    sink
}

/// Parses the CSV's header and rows with the standard library's `f64` parser (the CSV holds
/// the shortest decimal that reads back to the driver's value).
fn parse_csv(bytes: &[u8]) -> (Vec<String>, Vec<Vec<f64>>) {
    let text = std::str::from_utf8(bytes).unwrap();
    let mut lines = text.lines();
    let header = lines.next().unwrap().split(',').map(String::from).collect();
    let rows = lines
        .map(|line| line.split(',').map(|x| x.parse().unwrap()).collect())
        .collect();
    (header, rows)
}

/// A family model's dataset is long — `t`, `i`, one column per quantity, then the scalar
/// columns — and, read back part by part with the `parquet` crate, holds for every time and
/// member exactly the wide CSV's values (`q.x` of member `i` is the CSV's `q.x[i]`), across
/// parts that split the run.
#[test]
fn a_family_dataset_is_long_and_holds_the_wide_csvs_values() {
    let (n, steps) = (3, 25);
    let csv = chain_into(n, steps, CsvSink::new(Vec::new())).into_inner();
    let (header, rows) = parse_csv(&csv);
    assert_eq!(rows.len(), steps + 1);
    assert_eq!(header[1], "q.x[0]", "the CSV stays wide");

    let dir = std::env::temp_dir().join(format!("mechanism-long-{}.parquet", std::process::id()));
    chain_into(
        n,
        steps,
        ParquetDataset::create(&dir).unwrap().rows_per_part(4),
    );
    let parts = read_dataset(&dir);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(parts.len(), (steps + 1).div_ceil(4));
    let columns = &parts[0].columns;
    assert!(parts.iter().all(|p| &p.columns == columns));
    let scalars: Vec<&String> = header.iter().filter(|c| !c.ends_with(']')).collect();
    let mut expected = vec!["t", "i", "q.x", "q.y", "v.x", "v.y"];
    expected.extend(scalars[1..].iter().map(|c| c.as_str()));
    assert_eq!(
        columns, &expected,
        "t, i, the quantities, then the other scalars"
    );
    assert!(
        scalars.len() > 2,
        "energy and residuals are scalar columns: {scalars:?}"
    );

    let table_rows: usize = parts.iter().map(Read::rows).sum();
    assert_eq!(table_rows, rows.len() * n, "one row per time and member");
    let at = |name: &str| header.iter().position(|c| c == name).unwrap();
    let mut long = 0;
    for part in &parts {
        let i = columns.iter().position(|c| c == "i").unwrap();
        for r in 0..part.rows() {
            let (time, member) = (long / n, long % n);
            assert_eq!(part.integers[i][r], member as i64, "row {long}");
            for (c, name) in columns.iter().enumerate().filter(|&(c, _)| c != i) {
                let wide = if ["q.x", "q.y", "v.x", "v.y"].contains(&name.as_str()) {
                    at(&format!("{name}[{member}]"))
                } else {
                    at(name)
                };
                assert_eq!(
                    part.values[c][r].to_bits(),
                    rows[time][wide].to_bits(),
                    "time {time}, member {member}, {name}"
                );
            }
            long += 1;
        }
    }
}

/// The layout is long exactly for a family model: a fixed-size model's table keeps the CSV's
/// columns, [`Layout::Wide`] keeps a family's, and family columns whose quantities have
/// different members stay wide.
#[test]
fn the_layout_is_long_for_families_and_wide_otherwise() {
    let fixed = read(run_into(ParquetSink::new(Vec::new())).into_inner().unwrap());
    assert_eq!(fixed.columns, run_into(Table::default()).columns());

    let long = read(
        chain_into(2, 3, ParquetSink::new(Vec::new()))
            .into_inner()
            .unwrap(),
    );
    assert_eq!(&long.columns[..6], ["t", "i", "q.x", "q.y", "v.x", "v.y"]);
    assert_eq!(long.integers[1], [0, 1, 0, 1, 0, 1, 0, 1]);

    let wide = chain_into(2, 3, ParquetSink::new(Vec::new()).with_layout(Layout::Wide));
    let wide = read(wide.into_inner().unwrap());
    let (header, _) = parse_csv(&chain_into(2, 3, CsvSink::new(Vec::new())).into_inner());
    assert_eq!(wide.columns, header);

    let ragged: Vec<String> = ["t", "a[0]", "a[1]", "b[0]"].map(String::from).to_vec();
    let mut sink = ParquetSink::new(Vec::new());
    sink.begin(&ragged, None).unwrap();
    sink.row(&[0.0, 1.0, 2.0, 3.0]).unwrap();
    assert_eq!(read(sink.into_inner().unwrap()).columns, ragged);
}

/// A run checkpointed into a dataset, killed mid-part (its sink forgotten) and resumed from the
/// checkpoint: the parts after the checkpoint and the one in progress are removed, the run
/// writes on from the next part, and the dataset read in name order is the uninterrupted
/// run's table, bit for bit.
#[test]
fn a_resumed_dataset_holds_the_uninterrupted_rows() {
    use mechanism::runtime::checkpoint::Checkpoint;
    use mechanism::runtime::simulation::Every;
    let dir = std::env::temp_dir().join(format!(
        "mechanism-resumed-dataset-{}.parquet",
        std::process::id()
    ));
    let checkpoint = dir.with_extension("ckpt");
    let model = DoublePendulum::default();
    let build = || {
        Simulation::fixed(
            &model,
            Spook::new(0.01).unwrap(),
            DoublePendulum::initial_state(),
            2.0,
            Schedule::EveryStep,
        )
        .unwrap()
        .coordinates(DoublePendulum::COORDINATES)
        .unwrap()
        .observe(Mechanics::<_, 4, 2>::new(&model))
        .checkpoint_every(Every::Steps(40), &checkpoint)
        .unwrap()
    };
    let whole = run_into(Table::default());
    let mut run = build().write_to(ParquetDataset::create(&dir).unwrap().rows_per_part(15));
    for _ in 0..107 {
        run.step().unwrap();
    }
    std::mem::forget(run); // killed: the open part stays in progress
    let position = Checkpoint::read(&checkpoint).unwrap().output;
    assert_eq!(
        position.rows, 81,
        "the checkpoint after step 80 (and t = 0)"
    );
    let mut resumed = build()
        .resume_from(&checkpoint)
        .unwrap()
        .write_to(ParquetDataset::open(&dir).unwrap().rows_per_part(15));
    resumed.run().unwrap();
    drop(resumed);
    let parts = read_dataset(&dir);
    let merged = Read {
        columns: parts[0].columns.clone(),
        values: (0..parts[0].columns.len())
            .map(|j| parts.iter().flat_map(|p| p.values[j].clone()).collect())
            .collect(),
        integers: (0..parts[0].integers.len())
            .map(|j| parts.iter().flat_map(|p| p.integers[j].clone()).collect())
            .collect(),
        row_groups: parts.len(),
    };
    assert_same(&merged, &whole);
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::remove_file(&checkpoint).unwrap();
}

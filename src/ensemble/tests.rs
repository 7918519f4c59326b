use super::*;
use std::io;

#[test]
fn shards_cover_every_member_once_in_order() {
    for total in [0, 1, 2, 7, 64, 1001] {
        for count in 1..=9 {
            let mut next = 0;
            for k in 1..=count {
                let block = Shard::new(k, count).unwrap().members(total);
                assert_eq!(block.start, next, "shard {k}/{count} of {total}");
                assert!(block.len() <= total / count + 1);
                assert!(block.len() >= total / count);
                next = block.end;
            }
            assert_eq!(next, total);
        }
    }
}

#[test]
fn shard_text_is_parsed_or_rejected_with_the_reason() {
    assert_eq!("3/8".parse(), Shard::new(3, 8));
    assert_eq!(" 1 / 1 ".parse(), Ok(Shard::WHOLE));
    for bad in ["", "3", "3/", "/8", "a/8", "3/8/9", "-1/8", "3.0/8"] {
        assert!(
            matches!(bad.parse::<Shard>(), Err(ShardError::Malformed { .. })),
            "{bad:?}"
        );
    }
    for (index, count) in [(0, 8), (9, 8), (1, 0)] {
        assert_eq!(
            format!("{index}/{count}").parse::<Shard>(),
            Err(ShardError::OutOfRange { index, count })
        );
    }
}

#[test]
fn member_seeds_follow_splitmix64_and_are_distinct() {
    // The first three outputs of SplitMix64 seeded with 1234567 (Vigna's reference code).
    let expected = [
        6_457_827_717_110_365_317_u64,
        3_203_168_211_198_807_973,
        9_817_491_932_198_370_423,
    ];
    for (index, &seed) in expected.iter().enumerate() {
        assert_eq!(member_seed(1_234_567, index), seed);
    }
    let mut seeds: Vec<u64> = (0..100_000).map(|i| member_seed(42, i)).collect();
    seeds.sort_unstable();
    seeds.dedup();
    assert_eq!(seeds.len(), 100_000);
}

#[test]
fn zero_threads_is_an_error_not_a_default() {
    let ensemble = Ensemble::new(vec![1, 2]).threads(0);
    assert!(matches!(
        ensemble.map(|m| *m.parameters),
        Err(EnsembleError::Threads { requested: 0, .. })
    ));
}

#[test]
fn the_failure_reported_is_the_lowest_failing_member() {
    let ensemble = Ensemble::new((0..40).collect::<Vec<usize>>()).seed(5);
    for threads in [1, 2, 3] {
        let outcome = ensemble.clone().threads(threads).try_map(|m| {
            if m.parameters % 7 == 3 {
                Err(format!("member {} refuses", m.parameters))
            } else {
                Ok(*m.parameters)
            }
        });
        match outcome {
            Err(EnsembleError::Member { index, seed, error }) => {
                assert_eq!(index, 3);
                assert_eq!(seed, member_seed(5, 3));
                assert_eq!(error, "member 3 refuses");
            }
            other => panic!("expected member 3's error, got {other:?}"),
        }
    }
}

#[test]
fn text_cells_are_quoted_when_needed_and_rows_are_checked() {
    let mut csv = EnsembleCsv::new(Vec::new(), Shard::new(2, 2).unwrap(), &["a", "b"]).unwrap();
    csv.row(7, &["x,y".into(), "say \"hi\"".into()]).unwrap();
    assert_eq!(
        csv.row(8, &[Cell::Number(1.0)]).unwrap_err().kind(),
        io::ErrorKind::InvalidInput
    );
    let text = String::from_utf8(csv.into_inner().unwrap()).unwrap();
    assert_eq!(
        text, "7,\"x,y\",\"say \"\"hi\"\"\"\n",
        "no header in shard 2/2"
    );
}

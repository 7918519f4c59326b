//! The pictures of the motion, read back: a GIF of a short double-pendulum run decoded frame by
//! frame, and the typed errors for bad input.
use std::fs::File;
use std::path::PathBuf;

use mechanism::models::DoublePendulum;
use mechanism::pictures::{trajectory_plot, Animation, Frame, PictureError, Sketch};
use mechanism::runtime::simulation::{Schedule, Simulation, Sink, Table};
use mechanism::runtime::{Configuration, Spook};

/// Returns a path in the temporary folder unique to this test process and `name`.
fn temporary(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("mechanism-pictures-{}-{name}", std::process::id()))
}

/// Returns the rows of one second of the double pendulum under SPOOK at `h = 1/100`.
fn pendulum_rows() -> Table {
    let model = DoublePendulum::default();
    let spook = Spook::new(0.01).expect("a positive step");
    let start = DoublePendulum::initial_state();
    let mut run = Simulation::fixed(&model, spook, start, 1.0, Schedule::EveryStep)
        .expect("a valid run")
        .coordinates(DoublePendulum::COORDINATES)
        .expect("four names");
    run.run().expect("SPOOK steps the pendulum");
    run.into_output()
}

/// The double pendulum's rods and masses, pinned at the origin.
fn pendulum() -> Sketch<impl Fn(f64, &[f64], &mut Frame)> {
    Sketch::new(|_t, q, frame| {
        let (p1, p2) = ((q[0], q[1]), (q[2], q[3]));
        frame.anchor((0.0, 0.0)).link((0.0, 0.0), p1).link(p1, p2);
        frame.body(p1).body(p2);
    })
}

/// Decodes the GIF at `path` into its frames composited to RGBA, with its size and delays.
fn decode(path: &PathBuf) -> ((u16, u16), Vec<Vec<u8>>, Vec<u16>) {
    let mut options = gif::DecodeOptions::new();
    options.set_color_output(gif::ColorOutput::RGBA);
    let mut decoder = options
        .read_info(File::open(path).expect("the GIF exists"))
        .expect("a GIF header");
    let (width, height) = (decoder.width(), decoder.height());
    let mut canvas = vec![255u8; usize::from(width) * usize::from(height) * 4];
    let (mut frames, mut delays) = (Vec::new(), Vec::new());
    while let Some(frame) = decoder.read_next_frame().expect("a GIF frame") {
        let (w, left, top) = (
            usize::from(frame.width),
            usize::from(frame.left),
            usize::from(frame.top),
        );
        for (k, pixel) in frame.buffer.chunks_exact(4).enumerate() {
            if pixel[3] != 0 {
                let (x, y) = (left + k % w, top + k / w);
                let at = (y * usize::from(width) + x) * 4;
                canvas[at..at + 4].copy_from_slice(pixel);
            }
        }
        frames.push(canvas.clone());
        delays.push(frame.delay);
    }
    ((width, height), frames, delays)
}

#[test]
fn a_gif_of_the_double_pendulum_has_a_frame_per_interval_and_shows_the_motion() {
    let table = pendulum_rows();
    assert_eq!(table.len(), 101);
    let path = temporary("pendulum.gif");
    let summary = Animation::new("double pendulum")
        .size(320, 240)
        .interval(0.1)
        .delay_ms(100)
        .write(&path, &table, &pendulum())
        .expect("the GIF is written");
    assert_eq!(summary.frames, 11, "t = 0, 0.1, …, 1");
    assert_eq!(summary.capped_from, None);
    let ((width, height), frames, delays) = decode(&path);
    std::fs::remove_file(&path).ok();
    assert_eq!((width, height), (320, 240));
    assert_eq!(frames.len(), 11);
    assert!(delays.iter().all(|&d| d == 10), "100 ms is 10 hundredths");
    for pair in frames.windows(2) {
        assert_ne!(pair[0], pair[1], "the pendulum moves from frame to frame");
    }
    // Each frame shows the two masses: red pixels, in every frame.
    let red = |frame: &[u8]| {
        frame
            .chunks_exact(4)
            .filter(|p| p[0] > 200 && p[1] < 60 && p[2] < 60)
            .count()
    };
    assert!(frames.iter().all(|f| red(f) > 20));
}

#[test]
fn the_frame_cap_lengthens_the_interval_and_says_so() {
    let table = pendulum_rows();
    let path = temporary("capped.gif");
    let summary = Animation::new("capped")
        .size(160, 160)
        .interval(0.01)
        .max_frames(5)
        .write(&path, &table, &pendulum())
        .expect("the GIF is written");
    let (_, frames, _) = decode(&path);
    std::fs::remove_file(&path).ok();
    assert_eq!(summary.capped_from, Some(101));
    assert!(summary.frames <= 5 && summary.frames == frames.len());
    assert!(
        (summary.interval - 0.25).abs() < 1e-12,
        "{}",
        summary.interval
    );
    assert!(summary.to_string().contains("capped from 101 frames"));
}

#[test]
fn bad_input_is_a_typed_error_naming_the_culprit() {
    let path = temporary("never-written.gif");
    let scene = pendulum();

    let empty = Table::default();
    let error = Animation::new("x")
        .write(&path, &empty, &scene)
        .unwrap_err();
    assert!(matches!(error, PictureError::MissingColumn { ref name } if name == "t"));

    let mut no_rows = Table::default();
    no_rows
        .begin(&["t".into(), "q.x1".into()], None)
        .expect("a table takes a header");
    let error = Animation::new("x")
        .write(&path, &no_rows, &scene)
        .unwrap_err();
    assert!(matches!(error, PictureError::NoFrames { .. }), "{error}");

    let mut table = pendulum_rows();
    assert_eq!(table.columns()[3], "q.x2");
    let mut row = table.row(table.len() - 1).expect("a last row").to_vec();
    row[0] += 0.01;
    row[3] = f64::NAN;
    Sink::row(&mut table, &row).expect("a table grows");
    // Frames every 0.01: the bad row at t = 1.01 is one of them.
    let animation = Animation::new("x").interval(0.01);
    let error = animation.write(&path, &table, &scene).unwrap_err();
    match error {
        PictureError::NonFinite {
            what,
            index,
            t,
            value,
        } => {
            assert_eq!((what, index), ("link", 1));
            assert!((t - 1.01).abs() < 1e-12 && value.is_nan());
        }
        other => panic!("expected a non-finite link, got {other}"),
    }
    let error = trajectory_plot(&temporary("never.png"), "x", &table, &scene, (400, 400));
    assert!(matches!(error, Err(PictureError::NonFinite { .. })));

    let table = pendulum_rows();
    for (animation, name) in [
        (Animation::new("x").interval(-1.0), "frame interval"),
        (Animation::new("x").interval(f64::NAN), "frame interval"),
        (Animation::new("x").max_frames(0), "max_frames"),
        (Animation::new("x").delay_ms(5), "frame delay in ms"),
        (Animation::new("x").size(50, 400), "picture size"),
    ] {
        match animation.write(&path, &table, &scene) {
            Err(PictureError::InvalidSetting { name: got, .. }) => assert_eq!(got, name),
            other => panic!("expected an invalid {name}, got {other:?}"),
        }
    }
    assert!(!path.exists(), "nothing is written on bad input");

    // A folder that cannot be created: below a file.
    let file = temporary("a-file");
    std::fs::write(&file, b"").expect("the temporary folder is writable");
    let error = Animation::new("x")
        .write(&file.join("out.gif"), &table, &scene)
        .unwrap_err();
    std::fs::remove_file(&file).ok();
    assert!(matches!(error, PictureError::Io { .. }), "{error}");
}

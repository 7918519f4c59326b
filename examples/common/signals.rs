//! SIGINT and SIGTERM: the flag every run of the harness reads once per step, the messages of
//! an interrupted run, and the exit status of an example (`128 +` the signal).

use std::error::Error;
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use mechanism::runtime::simulation::SimulationError;

use crate::interrupted;

/// The flag set by the first SIGINT or SIGTERM, once [`interrupt_flag`] installed the handlers.
static INTERRUPT: OnceLock<(Arc<AtomicBool>, Arc<AtomicUsize>)> = OnceLock::new();

/// Returns the flag that SIGINT and SIGTERM set, installing their handlers on the first call
/// (`signal_hook::flag`: the handler only stores into atomics, which is all a handler may safely
/// do); every run of the harness passes it to
/// [`Simulation::interrupt_on`](mechanism::runtime::Simulation::interrupt_on). A second signal
/// while the flag is set ends the process at once with 128 + the signal. Without Unix signals (or
/// if a handler cannot be installed, which is reported on stderr) the flag is never set.
pub fn interrupt_flag() -> &'static AtomicBool {
    &INTERRUPT.get_or_init(install_handlers).0
}

/// Registers the SIGINT and SIGTERM handlers of [`interrupt_flag`].
fn install_handlers() -> (Arc<AtomicBool>, Arc<AtomicUsize>) {
    let (flag, signal) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicUsize::new(0)),
    );
    #[cfg(unix)]
    for number in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        // The first registration exits if the flag is already set (the second signal); the
        // others then record the signal and set the flag.
        let installed = signal_hook::flag::register_conditional_shutdown(
            number,
            128 + number,
            Arc::clone(&flag),
        )
        .and_then(|_| {
            signal_hook::flag::register_usize(number, Arc::clone(&signal), number as usize)
        })
        .and_then(|_| signal_hook::flag::register(number, Arc::clone(&flag)));
        if let Err(error) = installed {
            eprintln!("warning: cannot handle signal {number} (it will kill the run): {error}");
        }
    }
    (flag, signal)
}

/// Returns `error`, with the message of [`interrupted`] if it is a run's interrupt (the
/// driver's error boxed by `?`), for an example whose run returns a boxed error.
pub fn in_file(error: Box<dyn Error>, path: &Path) -> Box<dyn Error> {
    match error.downcast::<SimulationError>() {
        Ok(error) => interrupted(&error, path).into(),
        Err(error) => error,
    }
}

/// Turns the result of an example's `run` into its exit code, printing an error as one
/// readable line (`main` returning `Err` would print its `Debug` form); a run stopped by
/// SIGINT or SIGTERM ([`interrupt_flag`]) exits with 128 + the signal, 130 or 143.
pub fn exit_code(result: Result<(), Box<dyn Error>>) -> ExitCode {
    ExitCode::from(exit_status(result))
}

/// Returns the exit status of [`exit_code`] (0, 1, or 128 + the signal that interrupted the
/// run), printing an error as one line.
pub fn exit_status(result: Result<(), Box<dyn Error>>) -> u8 {
    let Err(error) = result else {
        return 0;
    };
    eprintln!("error: {error}");
    match INTERRUPT.get() {
        Some((flag, signal)) if flag.load(Ordering::Relaxed) => {
            u8::try_from(128 + signal.load(Ordering::Relaxed)).unwrap_or(1)
        }
        _ => 1,
    }
}

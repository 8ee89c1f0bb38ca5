//! Writing to stdout and stderr without panicking.
//!
//! `print!` panics when stdout is a pipe whose reader has gone
//! (`mcp-witness plan … | head`). Here a closed pipe ends the output
//! quietly: nothing more is written, and the command still ends with the
//! status it earned. Other write errors are reported once on stderr.
//!
//! This module is where the binary touches the two streams (clippy.toml
//! forbids it everywhere else; a progress bar is `indicatif`'s).
#![allow(
    clippy::disallowed_methods,
    reason = "the one place the streams are written"
)]

use std::fmt::Arguments;
use std::io::{ErrorKind, Write};
use std::sync::atomic::{AtomicBool, Ordering};

static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);

/// Writes to stdout; a reader that went away is not an error.
pub fn stdout(args: Arguments<'_>) {
    if STDOUT_CLOSED.load(Ordering::Relaxed) {
        return;
    }
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_fmt(args).and_then(|()| out.flush()) {
        STDOUT_CLOSED.store(true, Ordering::Relaxed);
        if e.kind() != ErrorKind::BrokenPipe {
            stderr(format_args!("mcp-witness: cannot write to stdout: {e}\n"));
        }
    }
}

/// Writes to stderr, ignoring failure: there is nowhere left to say it.
pub fn stderr(args: Arguments<'_>) {
    let _ = std::io::stderr().lock().write_fmt(args);
}

/// Whether stderr is a terminal (a person watching, who gets a bar).
pub fn stderr_is_terminal() -> bool {
    std::io::IsTerminal::is_terminal(&std::io::stderr())
}

/// `print!` that never panics (see the module).
macro_rules! out {
    ($($arg:tt)*) => { $crate::output::stdout(format_args!($($arg)*)) };
}

/// `println!` that never panics.
macro_rules! outln {
    () => { $crate::output::stdout(format_args!("\n")) };
    ($($arg:tt)*) => {
        $crate::output::stdout(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `eprintln!` that never panics.
macro_rules! errln {
    ($($arg:tt)*) => {
        $crate::output::stderr(format_args!("{}\n", format_args!($($arg)*)))
    };
}

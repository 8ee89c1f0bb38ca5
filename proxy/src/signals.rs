//! The proxy's own signal handling, kept to one thing: SIGTERM, SIGINT and
//! SIGHUP (what a host sends a server it is done with, or a terminal its
//! foreground job) are noted, and the main loop stops in order — the
//! server's process group stopped, the jail removed, the trace ended.
//! Nothing else is done in the handler.

use std::sync::atomic::{AtomicI32, Ordering};

static CAUGHT: AtomicI32 = AtomicI32::new(0);

extern "C" fn note(signal: libc::c_int) {
    CAUGHT.store(signal, Ordering::SeqCst);
}

/// Installs the handler for SIGTERM, SIGINT and SIGHUP.
pub fn install() {
    for signal in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
        let handler: extern "C" fn(libc::c_int) = note;
        // SAFETY: the handler only stores into an atomic, which is
        // async-signal-safe.
        unsafe {
            libc::signal(signal, handler as libc::sighandler_t);
        }
    }
}

/// The signal caught, if any.
pub fn caught() -> Option<i32> {
    match CAUGHT.load(Ordering::SeqCst) {
        0 => None,
        signal => Some(signal),
    }
}

/// `SIGTERM`, for the trace's end line.
pub fn name(signal: i32) -> &'static str {
    match signal {
        libc::SIGTERM => "SIGTERM",
        libc::SIGINT => "SIGINT",
        libc::SIGHUP => "SIGHUP",
        _ => "a signal",
    }
}

//! SIGTERM, SIGINT and SIGHUP end an audit cleanly; a second one at once.
//!
//! The three signals are blocked in the main thread before any other thread
//! exists, so every thread inherits the mask and none is ever interrupted
//! by them; one thread waits for them with `sigwait(3)` and acts in ordinary
//! code (no async-signal-safety puzzles). Launched servers start with an
//! empty mask again: the standard library resets it in every child.
//!
//! The first signal kills every live server with its whole tree (the one
//! registry of live children, `witness_process`); the audit then writes its
//! report as `incomplete` (`witness_jail::interrupt`), removes the jail and
//! exits 3.
//!
//! The same signal again within [`SAME_REQUEST`] of the first is the same
//! request, not a second one: GNU `timeout`, told to stop, signals its
//! child and then the child's whole process group, and systemd signals the
//! main process and then its control group, so one request to stop
//! arrives twice within microseconds. A later signal, or a different one,
//! is a request to exit at once: every server is killed again, every live
//! jail and temporary directory of the process is removed
//! (`interrupt::remove_everything`), and the process exits 3 without
//! unwinding.

use std::mem::MaybeUninit;
use std::time::{Duration, Instant};

use witness_jail::interrupt;
use witness_model::exit::ExitStatus;

const HANDLED: [i32; 3] = [libc::SIGTERM, libc::SIGINT, libc::SIGHUP];

/// How long after the first signal the same signal is taken for the same
/// request. Long enough for any relay of one request (a loaded machine
/// included), short enough that a person who means "now" is heard: a
/// second Ctrl-C a second later exits at once.
const SAME_REQUEST: Duration = Duration::from_secs(1);

/// What a signal asks for, given the first one received (`None` for the
/// first itself).
#[derive(Debug, PartialEq, Eq)]
enum Request {
    /// Stop and write what was observed.
    Stop,
    /// The first request, relayed again: nothing more to do.
    Same,
    /// Exit at once.
    Exit,
}

fn request(signal: i32, first: Option<(i32, Instant)>, now: Instant) -> Request {
    match first {
        None => Request::Stop,
        Some((first, at)) if first == signal && now.duration_since(at) < SAME_REQUEST => {
            Request::Same
        }
        Some(_) => Request::Exit,
    }
}

/// Blocks the signals here and starts the thread that waits for them.
/// Call it before any other thread is started.
pub fn install() -> std::io::Result<()> {
    let set = signal_set()?;
    // SAFETY: a valid, initialized set; the old mask is not wanted.
    let rc = unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) };
    if rc != 0 {
        return Err(std::io::Error::from_raw_os_error(rc));
    }
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || wait_for_signals(set))?;
    Ok(())
}

fn signal_set() -> std::io::Result<libc::sigset_t> {
    let mut set = MaybeUninit::<libc::sigset_t>::uninit();
    // SAFETY: sigemptyset initializes the set; sigaddset adds valid signals.
    unsafe {
        if libc::sigemptyset(set.as_mut_ptr()) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        for signal in HANDLED {
            if libc::sigaddset(set.as_mut_ptr(), signal) != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        Ok(set.assume_init())
    }
}

fn wait_for_signals(set: libc::sigset_t) {
    let mut first: Option<(i32, Instant)> = None;
    loop {
        let mut signal = 0;
        // SAFETY: the set is initialized and blocked in every thread.
        if unsafe { libc::sigwait(&set, &mut signal) } != 0 {
            continue;
        }
        let name = interrupt::signal_name(signal);
        let now = Instant::now();
        match request(signal, first, now) {
            Request::Stop => {
                first = Some((signal, now));
                interrupt::raise(signal);
                errln!(
                    "mcp-witness: {name}: stopping the server and writing what was observed (again, a second later, to exit at once)"
                );
                witness_process::kill_everything();
            }
            Request::Same => {}
            Request::Exit => {
                errln!(
                    "mcp-witness: {name}: a second request to stop: removing the jails and exiting at once"
                );
                witness_process::kill_everything();
                interrupt::remove_everything();
                std::process::exit(i32::from(ExitStatus::Incomplete.code()));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_relayed_signal_is_the_same_request_and_a_later_one_exits() {
        let t0 = Instant::now();
        let term = libc::SIGTERM;
        assert_eq!(request(term, None, t0), Request::Stop);
        let first = Some((term, t0));
        // timeout's second delivery, to the process group.
        assert_eq!(
            request(term, first, t0 + Duration::from_millis(1)),
            Request::Same
        );
        assert_eq!(
            request(term, first, t0 + Duration::from_millis(999)),
            Request::Same
        );
        assert_eq!(request(term, first, t0 + SAME_REQUEST), Request::Exit);
        // Another signal is another request, however soon.
        assert_eq!(
            request(libc::SIGINT, first, t0 + Duration::from_millis(1)),
            Request::Exit
        );
    }
}

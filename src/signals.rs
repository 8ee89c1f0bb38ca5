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
//! exits 3. A second signal kills them again, removes every live jail and
//! exits 3 at once.

use std::mem::MaybeUninit;

use witness_jail::interrupt;
use witness_model::exit::ExitStatus;

const HANDLED: [i32; 3] = [libc::SIGTERM, libc::SIGINT, libc::SIGHUP];

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
    loop {
        let mut signal = 0;
        // SAFETY: the set is initialized and blocked in every thread.
        if unsafe { libc::sigwait(&set, &mut signal) } != 0 {
            continue;
        }
        let name = interrupt::signal_name(signal);
        if interrupt::raise(signal) {
            errln!(
                "mcp-witness: {name}: stopping the server and writing what was observed (again to exit at once)"
            );
            witness_process::kill_everything();
        } else {
            errln!("mcp-witness: {name} again: exiting at once");
            witness_process::kill_everything();
            interrupt::remove_jails();
            std::process::exit(i32::from(ExitStatus::Incomplete.code()));
        }
    }
}

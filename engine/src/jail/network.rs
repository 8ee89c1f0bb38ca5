//! The network observer's part of a launch: between bubblewrap making the
//! sandbox and the server's first instruction (bubblewrap waits on
//! `--block-fd`), the binary's `net-sink-setup` helper makes the sink in
//! the sandbox's network namespace and hands its sockets back; the jail
//! starts the recorder on them ([`witness_netsink::Sink`]) and only then
//! lets the server run. Whatever fails, the server runs: the network stays
//! unreachable (the namespace holds), it is just not observed, and the
//! report says why.

use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use witness_netsink::Sink;

/// The helper's subcommand and the descriptor its channel arrives on.
pub const SETUP_COMMAND: &str = "net-sink-setup";
pub const SETUP_CHANNEL_FD: i32 = 3;

/// How long the helper may take (it runs `ip` twice and `nft` once).
const SETUP_WAIT: Duration = Duration::from_secs(10);

/// Makes the sink in the network namespace of `init` (the sandbox's init)
/// with `helper` (this binary), or says why it could not.
pub(crate) fn start_sink(helper: &Path, init: i32) -> Result<Sink, String> {
    let (ours, theirs) = UnixStream::pair().map_err(|e| format!("a channel: {e}"))?;
    let theirs = OwnedFd::from(theirs);
    let raw = theirs.as_raw_fd();
    let mut cmd = Command::new(helper);
    cmd.args([SETUP_COMMAND, "--pid", &init.to_string()])
        .env_clear()
        .envs(std::env::var_os("PATH").map(|p| ("PATH", p)))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // SAFETY: dup2 and fcntl are async-signal-safe; they put the channel
    // on the descriptor the helper reads, inheritable.
    unsafe {
        cmd.pre_exec(move || {
            if raw == SETUP_CHANNEL_FD {
                if libc::fcntl(raw, libc::F_SETFD, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            } else if libc::dup2(raw, SETUP_CHANNEL_FD) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot run the setup helper: {e}"))?;
    drop(theirs);
    let sockets = witness_netsink::setup::receive(ours.as_fd(), SETUP_WAIT);
    // The helper ends right after answering; never leave it behind.
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        match child.try_wait() {
            Ok(Some(_)) | Err(_) => break,
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                break;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
        }
    }
    let sockets = sockets.map_err(|e| e.to_string())?;
    Sink::start(sockets).map_err(|e| format!("cannot start the recorder: {e}"))
}

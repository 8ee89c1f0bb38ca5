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
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use witness_netsink::Sink;
use witness_process::Launch;

/// The helper's subcommand, and its flag for the descriptor its channel
/// arrives on.
pub const SETUP_COMMAND: &str = "net-sink-setup";
pub const SETUP_CHANNEL_FLAG: &str = "--channel-fd";

/// How long the helper may take (it runs `ip` twice and `nft` once).
const SETUP_WAIT: Duration = Duration::from_secs(10);

/// Makes the sink in the network namespace of `init` (the sandbox's init)
/// with `helper` (this binary), or says why it could not. Gives the sink
/// and the inodes of its listening sockets, which are not the server's.
pub(crate) fn start_sink(helper: &Path, init: i32) -> Result<(Sink, Vec<u64>), String> {
    let (ours, theirs) = UnixStream::pair().map_err(|e| format!("a channel: {e}"))?;
    let theirs = OwnedFd::from(theirs);
    let mut cmd = Command::new(helper);
    cmd.args([SETUP_COMMAND, "--pid", &init.to_string()])
        .arg(SETUP_CHANNEL_FLAG)
        .arg(theirs.as_raw_fd().to_string())
        .env_clear()
        .envs(std::env::var_os("PATH").map(|p| ("PATH", p)))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut child = Launch::new()
        .inherit_fd(theirs.as_fd())
        .spawn(&mut cmd)
        .map_err(|e| format!("cannot run the setup helper: {e}"))?;
    drop(theirs);
    let sockets = witness_netsink::setup::receive(ours.as_fd(), SETUP_WAIT);
    // The helper ends right after answering; never leave it behind.
    let _ = child.run_until(Instant::now() + Duration::from_secs(2));
    let sockets = sockets.map_err(|e| e.to_string())?;
    let inodes = sockets
        .tcp
        .iter()
        .filter_map(|fd| rustix::fs::fstat(fd).ok())
        .map(|stat| stat.st_ino)
        .collect();
    let sink = Sink::start(sockets).map_err(|e| format!("cannot start the recorder: {e}"))?;
    Ok((sink, inodes))
}

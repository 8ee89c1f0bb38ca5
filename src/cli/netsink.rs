//! `mcp-witness net-sink-setup` (hidden): the network observer's setup, run
//! by the jail between bubblewrap making the sandbox and the server's first
//! instruction.
//!
//! `net-sink-setup --pid PID --channel-fd FD`: joins the network namespace
//! of the sandbox whose init is PID (through the user namespace that owns
//! it), makes the sink there (`witness_netsink::setup`) and hands its
//! sockets to the auditor over descriptor FD, a unix socket the jail passes
//! in. It must run single-threaded (a thread may not change user
//! namespaces), so it runs before anything that starts a thread. Exit 0
//! when the sockets were handed over, 1 otherwise (the reason went over the
//! channel too).

use std::os::fd::BorrowedFd;
use std::path::Path;

use anyhow::Result;
use clap::Args;
use witness_model::exit::ExitStatus;

#[derive(Args)]
pub struct NetSinkSetupArgs {
    /// The sandbox's init, as bubblewrap reported it.
    #[arg(long)]
    pid: i32,
    /// The descriptor the jail handed this helper its end of the channel on.
    #[arg(long)]
    channel_fd: i32,
}

pub fn run(args: NetSinkSetupArgs) -> Result<ExitStatus> {
    let fd = args.channel_fd;
    if fd < 0 || !Path::new(&format!("/proc/self/fd/{fd}")).exists() {
        errln!(
            "mcp-witness net-sink-setup: descriptor {fd} is not open (the jail starts this helper)"
        );
        return Ok(ExitStatus::Failed);
    }
    // SAFETY: the descriptor is open (checked above), nothing in this
    // process closes it, and it lives until the process ends.
    let channel = unsafe { BorrowedFd::borrow_raw(fd) };
    match witness_netsink::setup::prepare_and_send(args.pid, channel) {
        Ok(()) => Ok(ExitStatus::Passed),
        Err(e) => {
            errln!("mcp-witness net-sink-setup: {e}");
            Ok(ExitStatus::Failed)
        }
    }
}

//! `mcp-witness net-sink-setup` (hidden): the network observer's setup, run
//! by the jail between bubblewrap making the sandbox and the server's first
//! instruction.
//!
//! `net-sink-setup --pid PID`: joins the network namespace of the sandbox
//! whose init is PID (through the user namespace that owns it), makes the
//! sink there (`witness_netsink::setup`) and hands its sockets to the
//! auditor over descriptor 3, a unix socket the jail passes in. It must run
//! single-threaded (a thread may not change user namespaces), so it runs
//! before anything that starts a thread. Exit 0 when the sockets were
//! handed over, 1 otherwise (the reason went over descriptor 3 too).

use std::os::fd::BorrowedFd;

use anyhow::Result;
use clap::Args;
use witness_model::exit::ExitStatus;

/// The descriptor the jail hands the helper its end of the channel on.
pub const CHANNEL_FD: i32 = 3;

#[derive(Args)]
pub struct NetSinkSetupArgs {
    /// The sandbox's init, as bubblewrap reported it.
    #[arg(long)]
    pid: i32,
}

pub fn run(args: NetSinkSetupArgs) -> Result<ExitStatus> {
    // SAFETY: descriptor 3 is the channel the jail passed in and lives
    // until this process ends.
    let channel = unsafe { BorrowedFd::borrow_raw(CHANNEL_FD) };
    match witness_netsink::setup::prepare_and_send(args.pid, channel) {
        Ok(()) => Ok(ExitStatus::Passed),
        Err(e) => {
            errln!("mcp-witness net-sink-setup: {e}");
            Ok(ExitStatus::Failed)
        }
    }
}

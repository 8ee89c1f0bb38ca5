//! `mcp-witness sandbox-exec` (hidden): the last step of the jail's launch.
//!
//! The jail runs it, inside bubblewrap where that works, as
//! `sandbox-exec [--write DIR]... [--fs] [--net-bind] [--net-connect] [--scope]
//! [--limit KIND=N]... -- PROGRAM ARGS`: it sets the resource limits on
//! itself, applies the Landlock rules, every one a hard requirement, and
//! then becomes PROGRAM (exec, same process). If a limit or a rule cannot be
//! enforced, PROGRAM never runs: the message goes to stderr, where the
//! audit's transcript keeps it, and the exit code is 126.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::Command;

use anyhow::{Result, anyhow};
use clap::Args;
use witness_jail::bounds::{self, Limit};
use witness_jail::sandbox::{self, LandlockRequest};
use witness_model::exit::ExitStatus;

#[derive(Args)]
pub struct SandboxExecArgs {
    /// A directory beneath which writes stay allowed (repeatable).
    #[arg(long = "write", value_name = "DIR")]
    write: Vec<PathBuf>,
    /// Refuse writes outside the --write directories.
    #[arg(long)]
    fs: bool,
    /// Refuse every TCP bind.
    #[arg(long)]
    net_bind: bool,
    /// Refuse every TCP connect.
    #[arg(long)]
    net_connect: bool,
    /// Refuse signals and abstract unix sockets that leave the sandbox.
    #[arg(long)]
    scope: bool,
    /// A resource limit to set, soft and hard: data, nproc, fsize, cpu or
    /// nofile, as KIND=N (bytes, processes, seconds, files; repeatable).
    #[arg(long = "limit", value_name = "KIND=N", value_parser = bounds::parse_limit)]
    limit: Vec<(Limit, u64)>,
    /// The program and its arguments.
    #[arg(last = true, required = true, value_name = "PROGRAM")]
    command: Vec<OsString>,
}

/// Exit code when the sandbox could not be made: the program never ran.
const CANNOT_SANDBOX: u8 = 126;

pub fn run(args: SandboxExecArgs) -> Result<ExitStatus> {
    let request = LandlockRequest {
        writable: args.write,
        fs: args.fs,
        net_bind: args.net_bind,
        net_connect: args.net_connect,
        scope: args.scope,
    };
    if let Err(why) = bounds::apply_limits(&args.limit).and_then(|()| {
        if request.any() {
            sandbox::enforce(&request)
        } else {
            Ok(())
        }
    }) {
        errln!("mcp-witness sandbox-exec: {why}; the server was not started");
        std::process::exit(i32::from(CANNOT_SANDBOX));
    }
    let Some((program, rest)) = args.command.split_first() else {
        return Err(anyhow!("no program given"));
    };
    let error = Command::new(program).args(rest).exec();
    errln!(
        "mcp-witness sandbox-exec: cannot run {}: {error}",
        PathBuf::from(program).display()
    );
    std::process::exit(127);
}

//! The jail's bounds and view, on every command that launches servers:
//! how much of the machine a server may take, and what more it may see.

use std::path::PathBuf;

use clap::Args;
use witness_jail::bounds::{self, Bounds};

#[derive(Args, Clone, Debug)]
pub struct JailArgs {
    /// Memory for a server's processes together (a memory cgroup where one
    /// can be made, else per process): 2G by default.
    #[arg(long, global = true, value_name = "SIZE", value_parser = bounds::parse_bytes)]
    memory: Option<u64>,
    /// Processes and threads a server may run: 256 by default.
    #[arg(long, global = true, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    processes: Option<u64>,
    /// The largest file a server may write, and the size of the sandbox's
    /// scratch tmpfs: 1G by default.
    #[arg(long, global = true, value_name = "SIZE", value_parser = bounds::parse_bytes)]
    disk: Option<u64>,
    /// CPU seconds for each server process: 600 by default.
    #[arg(long, global = true, value_name = "S", value_parser = clap::value_parser!(u64).range(1..))]
    cpu_seconds: Option<u64>,
    /// Open files for each server process: 1024 by default.
    #[arg(long, global = true, value_name = "N", value_parser = clap::value_parser!(u64).range(16..))]
    open_files: Option<u64>,
    /// A path the server may also see, read-only, beyond the system's
    /// runtime, its own install directory and the jail (repeatable).
    #[arg(long = "ro-bind", global = true, value_name = "PATH")]
    ro_bind: Vec<PathBuf>,
}

impl JailArgs {
    pub fn bounds(&self) -> Bounds {
        let default = Bounds::default();
        Bounds {
            memory: self.memory.unwrap_or(default.memory),
            processes: self.processes.unwrap_or(default.processes),
            disk: self.disk.unwrap_or(default.disk),
            cpu_seconds: self.cpu_seconds.unwrap_or(default.cpu_seconds),
            open_files: self.open_files.unwrap_or(default.open_files),
        }
    }

    pub fn ro_bind(&self) -> &[PathBuf] {
        &self.ro_bind
    }
}

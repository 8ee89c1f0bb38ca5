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

    /// The `--ro-bind` paths, each made absolute against the working
    /// directory, or the first that names nothing (one line, for exit 2:
    /// checked before anything is launched, since bubblewrap would refuse
    /// every server otherwise).
    pub fn ro_bind(&self) -> Result<Vec<PathBuf>, String> {
        self.ro_bind
            .iter()
            .map(|path| match std::fs::metadata(path) {
                Ok(_) => std::path::absolute(path)
                    .map_err(|e| format!("--ro-bind {}: {e}", path.display())),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(format!(
                    "--ro-bind {}: no such file or directory, so nothing to show the server",
                    path.display()
                )),
                Err(e) => Err(format!("--ro-bind {}: {e}", path.display())),
            })
            .collect()
    }

    /// The same bounds and view as flags for a process this one starts (a
    /// sweep's worker), every bound spelt out so the worker cannot fall
    /// back on other defaults.
    pub fn forward(&self) -> Result<Vec<std::ffi::OsString>, String> {
        let bounds = self.bounds();
        let mut args: Vec<std::ffi::OsString> = [
            ("--memory", bounds.memory),
            ("--processes", bounds.processes),
            ("--disk", bounds.disk),
            ("--cpu-seconds", bounds.cpu_seconds),
            ("--open-files", bounds.open_files),
        ]
        .iter()
        .flat_map(|(flag, value)| [(*flag).into(), value.to_string().into()])
        .collect();
        for path in self.ro_bind()? {
            args.push("--ro-bind".into());
            args.push(path.into_os_string());
        }
        Ok(args)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        jail: JailArgs,
    }

    #[test]
    fn a_worker_gets_every_bound_spelt_out_and_reads_them_back_the_same() {
        let given = Cli::parse_from([
            "x",
            "--memory",
            "300M",
            "--processes",
            "77",
            "--ro-bind",
            "/usr",
        ]);
        let forwarded = given.jail.forward().expect("forward");
        let again = Cli::parse_from(std::iter::once("x".into()).chain(forwarded));
        assert_eq!(again.jail.bounds(), given.jail.bounds());
        assert_eq!(again.jail.bounds().memory, 300 << 20);
        assert_eq!(again.jail.ro_bind(), Ok(vec![PathBuf::from("/usr")]));
    }

    #[test]
    fn a_ro_bind_of_nothing_is_refused_in_one_line() {
        let given = Cli::parse_from(["x", "--ro-bind", "/nonexistent/witness-ro-bind"]);
        let error = given.jail.ro_bind().expect_err("refused");
        assert!(
            error.starts_with("--ro-bind /nonexistent/witness-ro-bind: no such file"),
            "{error}"
        );
        assert!(!error.contains('\n'));
    }
}

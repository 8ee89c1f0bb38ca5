//! Installs: each package in its own pinned, content-addressed directory,
//! with the ordinary package clients.
//!
//! | target | install directory holds | command |
//! |---|---|---|
//! | `npm:NAME@VERSION` | `package.json` naming the package | `npm install` |
//! | the same with `lock` | the lock's `package.json` and `package-lock.json` | `npm ci` |
//! | `pypi:NAME==VERSION` | `venv/` | `python3 -m venv`, then its `pip install NAME==VERSION` |
//! | the same with `lock` | `venv/` | the same, `pip install -r LOCK` |
//!
//! The directory's name is derived from the lock's content when there is a
//! lock (it decides the whole tree, so every target it pins shares one
//! install), else from the package's coordinate; a different lock never
//! reuses a directory. Whether the directory holds the target's package at
//! its pinned version is checked for every target that uses it. A lock file beside it keeps two
//! processes from installing one directory at once; the marker
//! `.mcp-witness-install.json`, written after the installed version was
//! checked, is what makes a directory count as installed. A killed install
//! leaves no marker and is redone. `MCP_WITNESS_NPM` and
//! `MCP_WITNESS_PYTHON` name other clients than `npm` and `python3`.
//! Each directory's client output goes to `<name>.log` beside it.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use witness_model::sweep::{Ecosystem, Package, Pinned};

use crate::layout::lock as lock_file;
use crate::process::{self, Ended};
use crate::spec::Target;

/// pip's report of what it installed (`pip install --report`), in the
/// install directory.
pub const PIP_REPORT: &str = "pip-report.json";

/// The marker of a finished install.
pub const MARKER: &str = ".mcp-witness-install.json";

/// Where installs live (`--installs`, else `OUT/installs`).
#[derive(Clone, Debug)]
pub struct Installs {
    pub root: PathBuf,
}

/// One install to make: what, from which lock, by when.
struct Job<'a> {
    package: &'a Package,
    lock: Option<&'a Path>,
    dir: PathBuf,
    log: PathBuf,
    deadline: Instant,
    timeout: Duration,
}

impl Installs {
    /// The install directory of `target` (`None` for a command target): for
    /// a lock, named by the lock's content alone (the lock decides the whole
    /// tree, so every target it pins shares one install); else by the
    /// package's coordinate.
    pub fn dir_for(&self, target: &Target) -> Option<PathBuf> {
        let package = target.definition.package.as_ref()?;
        let ecosystem = package.ecosystem.as_str();
        if let Some(lock) = &target.definition.lock {
            let hex = blake3::hash(lock.digest.as_bytes()).to_hex();
            return Some(self.root.join(format!("{ecosystem}-lock-{}", &hex[..12])));
        }
        Some(self.dir_for_package(package))
    }

    /// The install directory of a package pinned by its coordinate alone
    /// (no lock): what `audit npm:NAME@VERSION` shares with a sweep.
    pub fn dir_for_package(&self, package: &Package) -> PathBuf {
        let ecosystem = package.ecosystem.as_str();
        let hex = blake3::hash(package.coordinate().as_bytes()).to_hex();
        let name: String = package
            .name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        self.root.join(format!(
            "{ecosystem}-{}-{}-{}",
            name.trim_start_matches('_'),
            package.version,
            &hex[..12]
        ))
    }

    /// Installs `target`'s package unless it already is, checks that the
    /// pinned version is what is installed, and returns the directory.
    /// `Err` is the reason, one line, for the target's row.
    pub fn ensure(&self, target: &Target, timeout: Duration) -> Result<PathBuf, String> {
        let (Some(package), Some(dir)) = (&target.definition.package, self.dir_for(target)) else {
            return Err("a command target has nothing to install".into());
        };
        let lock = target.lock.as_deref().zip(target.definition.lock.as_ref());
        self.ensure_in(package, lock, dir, timeout)
    }

    /// [`Installs::ensure`] for a package pinned by its coordinate alone,
    /// in [`Installs::dir_for_package`]: the same install a sweep target
    /// with no lock gets.
    pub fn ensure_package(&self, package: &Package, timeout: Duration) -> Result<PathBuf, String> {
        self.ensure_in(package, None, self.dir_for_package(package), timeout)
    }

    fn ensure_in(
        &self,
        package: &Package,
        lock: Option<(&Path, &Pinned)>,
        dir: PathBuf,
        timeout: Duration,
    ) -> Result<PathBuf, String> {
        std::fs::create_dir_all(&self.root)
            .map_err(|e| format!("cannot create {}: {e}", self.root.display()))?;
        let held = lock_file(&beside(&dir, "lock"), true)
            .map_err(|e| format!("cannot lock the install directory: {e}"))?;
        let job = Job {
            package,
            lock: lock.map(|(path, _)| path),
            log: beside(&dir, "log"),
            dir,
            deadline: Instant::now() + timeout,
            timeout,
        };
        if !job.dir.join(MARKER).is_file() {
            install(&job, lock.map(|(_, pinned)| pinned))?;
        }
        drop(held);
        let found = match package.ecosystem {
            Ecosystem::Npm => npm_version(&job),
            _ => pip_version(&job),
        };
        check_version(package, found)?;
        Ok(job.dir)
    }
}

/// Installs into `job.dir` from nothing, and marks it finished.
fn install(job: &Job<'_>, pinned: Option<&Pinned>) -> Result<(), String> {
    if job.dir.exists() {
        std::fs::remove_dir_all(&job.dir)
            .map_err(|e| format!("cannot clear a partial install: {e}"))?;
    }
    std::fs::create_dir_all(&job.dir)
        .map_err(|e| format!("cannot create {}: {e}", job.dir.display()))?;
    let _ = std::fs::remove_file(&job.log);
    match job.package.ecosystem {
        Ecosystem::Npm => install_npm(job)?,
        _ => install_pypi(job)?,
    }
    let marker = match pinned {
        Some(lock) => serde_json::json!({ "lock": lock }),
        None => serde_json::json!({ "package": job.package.coordinate() }),
    };
    crate::layout::write_json(&job.dir.join(MARKER), &marker)
        .map_err(|e| format!("cannot mark the install finished: {e}"))
}

/// `DIR.ext` beside `DIR` (the name holds dots of its own: a version).
fn beside(dir: &Path, ext: &str) -> PathBuf {
    let mut name = dir.file_name().unwrap_or_default().to_os_string();
    name.push(".");
    name.push(ext);
    dir.with_file_name(name)
}

fn program(variable: &str, default: &str) -> String {
    std::env::var(variable)
        .ok()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| default.to_owned())
}

fn install_npm(job: &Job<'_>) -> Result<(), String> {
    let npm = program("MCP_WITNESS_NPM", "npm");
    let verb = match job.lock {
        Some(lock) => {
            for name in ["package.json", "package-lock.json"] {
                std::fs::copy(lock.with_file_name(name), job.dir.join(name))
                    .map_err(|e| format!("cannot copy the lock's {name}: {e}"))?;
            }
            "ci"
        }
        None => {
            let manifest = serde_json::json!({
                "name": "mcp-witness-install",
                "private": true,
                "dependencies": { &job.package.name: &job.package.version },
            });
            crate::layout::write_json(&job.dir.join("package.json"), &manifest)
                .map_err(|e| format!("cannot write package.json: {e}"))?;
            "install"
        }
    };
    let mut command = Command::new(&npm);
    command
        .args([verb, "--no-audit", "--no-fund", "--no-update-notifier"])
        .current_dir(&job.dir);
    run_step(job, command, &format!("npm {verb}"))
}

/// The version of the package that the install holds.
fn npm_version(job: &Job<'_>) -> Option<String> {
    let manifest = job
        .dir
        .join("node_modules")
        .join(&job.package.name)
        .join("package.json");
    let text = std::fs::read_to_string(manifest).ok()?;
    let value: serde_json::Value = serde_json::from_str(&text).ok()?;
    value["version"].as_str().map(str::to_owned)
}

fn install_pypi(job: &Job<'_>) -> Result<(), String> {
    let python = program("MCP_WITNESS_PYTHON", "python3");
    let venv = job.dir.join("venv");
    let mut command = Command::new(&python);
    command.args(["-m", "venv"]).arg(&venv);
    run_step(job, command, "python3 -m venv")?;
    let venv_python = venv.join("bin/python");
    let mut command = Command::new(&venv_python);
    command.args([
        "-m",
        "pip",
        "install",
        "--no-input",
        "--disable-pip-version-check",
    ]);
    // What pip installed, with each archive's hash: the integrity an
    // audit of the package pins (crate::package).
    command.arg("--report").arg(job.dir.join(PIP_REPORT));
    // A lock pins the whole environment, the package included (checked
    // when the sweep was read); without one, the package alone is pinned.
    match job.lock {
        Some(lock) => command.arg("-r").arg(lock),
        None => command.arg(format!("{}=={}", job.package.name, job.package.version)),
    };
    run_step(job, command, "pip install")
}

/// The version of the package that the install's venv holds.
fn pip_version(job: &Job<'_>) -> Option<String> {
    let mut command = Command::new(job.dir.join("venv/bin/python"));
    command
        .args([
            "-c",
            "import importlib.metadata as m, sys; print(m.version(sys.argv[1]))",
            &job.package.name,
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    // Through the controller, like every process the sweep starts: a child
    // it did not know would be taken for an orphan and ended.
    let mut child = process::spawn(command).ok()?;
    let mut stdout = child.child_mut().stdout.take()?;
    let deadline = Instant::now() + Duration::from_secs(60);
    let ended = process::wait(&mut child, deadline).ok()?;
    let mut text = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut text).ok()?;
    match ended {
        Ended::Exited(status) if status.success() => Some(text.trim().to_owned()),
        _ => None,
    }
}

fn check_version(package: &Package, found: Option<String>) -> Result<(), String> {
    match found {
        Some(version) if version == package.version => Ok(()),
        Some(version) => Err(format!(
            "the install holds {} {version}, not the pinned {}",
            package.name, package.version
        )),
        None => Err(format!("{} is not in the install", package.name)),
    }
}

/// Runs one install step, its output appended to the log, within the
/// install's deadline.
fn run_step(job: &Job<'_>, mut command: Command, what: &str) -> Result<(), String> {
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&job.log)
        .map_err(|e| format!("cannot write {}: {e}", job.log.display()))?;
    let err = log
        .try_clone()
        .map_err(|e| format!("cannot write {}: {e}", job.log.display()))?;
    command.stdin(Stdio::null()).stdout(log).stderr(err);
    let mut child = process::spawn(command).map_err(|e| format!("cannot run {what}: {e}"))?;
    match process::wait(&mut child, job.deadline) {
        Ok(Ended::Exited(status)) if status.success() => Ok(()),
        Ok(Ended::Exited(status)) => Err(format!(
            "{what} failed ({status}){}",
            client_error(&job.log).map_or(String::new(), |e| format!(": {e}"))
        )),
        Ok(Ended::TimedOut) => Err(format!(
            "the install did not finish within {} s",
            job.timeout.as_secs()
        )),
        Err(e) => Err(format!("{what}: {e}")),
    }
}

/// The client's own words for what went wrong: npm's first `npm error`
/// lines, pip's `ERROR:` line. Lines carrying an address are left out, so
/// a registry's location never lands in a dataset.
fn client_error(log: &Path) -> Option<String> {
    let text = std::fs::read_to_string(log).ok()?;
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| {
            l.starts_with("npm error") || l.starts_with("npm ERR!") || l.starts_with("ERROR:")
        })
        .filter(|l| !l.contains("://") && !l.contains(" at ") && l.len() > 10)
        .take(2)
        .collect();
    (!lines.is_empty()).then(|| witness_text::clip(&lines.join("; "), 300))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_errors_keep_the_words_and_drop_addresses() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let log = dir.path().join("x.log");
        std::fs::write(
            &log,
            "added 0\nnpm error code ETARGET\nnpm error 404 GET https://registry.invalid/x\n\
             npm error notarget No matching version found for x@9.9.9.\nnpm error later\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            client_error(&log).as_deref(),
            Some(
                "npm error code ETARGET; npm error notarget No matching version found for x@9.9.9."
            )
        );
        std::fs::write(
            &log,
            "Collecting x\nERROR: No matching distribution found for x==9\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            client_error(&log).as_deref(),
            Some("ERROR: No matching distribution found for x==9")
        );
    }
}

//! One published package, installed and ready to launch: what `audit
//! npm:NAME@VERSION` (and `plan`, `guidance`, `manifest pin`) runs.
//!
//! The install is the sweep's own ([`Installs::ensure_package`]: the same
//! pinned, content-addressed directory a sweep target with no lock gets);
//! this module adds what a launch needs and a report pins: the program the
//! package declares (npm's `bin`, a Python distribution's
//! `console_scripts`) and the integrity hash the registry gave for what
//! was installed (npm's lock `integrity`, pip's report of the archive's
//! hash).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use witness_model::sweep::{Ecosystem, Package};

use crate::install::{Installs, PIP_REPORT};
use crate::process::{self, Ended};

/// Why a package cannot be audited.
#[derive(Debug, thiserror::Error)]
pub enum PackageError {
    /// The install did not finish (the package or version may not exist,
    /// or the registry could not be reached): nothing was launched.
    #[error("cannot install {coordinate}: {why}")]
    Install { coordinate: String, why: String },
    /// The package installed but declares nothing to run, or several
    /// programs and none named for the package.
    #[error("{coordinate}: {why}")]
    NoEntry { coordinate: String, why: String },
}

impl PackageError {
    /// Whether the fault is in the invocation (exit 2) rather than in
    /// reaching the registry (exit 3).
    pub fn is_invalid(&self) -> bool {
        matches!(self, PackageError::NoEntry { .. })
    }
}

/// An installed package and how to launch it.
#[derive(Clone, Debug)]
pub struct Installed {
    pub package: Package,
    /// The install directory.
    pub dir: PathBuf,
    /// The program to run, absolute (inside `dir`).
    pub program: PathBuf,
    /// The program's name as the package declares it.
    pub entry: String,
    /// The registry's integrity hash of the installed archive
    /// (`sha512-…` from npm, `sha256=…` from pip), when the client
    /// recorded one.
    pub integrity: Option<String>,
}

/// Installs `package` unless it already is, and finds what to run.
/// `entry` chooses among several programs (npx's `-p PKG ENTRY`, uvx's
/// `--from PKG ENTRY`).
pub fn prepare(
    installs: &Installs,
    package: &Package,
    entry: Option<&str>,
    timeout: Duration,
) -> Result<Installed, PackageError> {
    let coordinate = package.coordinate();
    let dir = installs
        .ensure_package(package, timeout)
        .map_err(|why| PackageError::Install {
            coordinate: coordinate.clone(),
            why,
        })?;
    let no_entry = |why: String| PackageError::NoEntry {
        coordinate: coordinate.clone(),
        why,
    };
    let (entries, integrity) = match package.ecosystem {
        Ecosystem::Npm => (
            npm_bins(&dir, package).map_err(no_entry)?,
            npm_integrity(&dir, package),
        ),
        _ => (
            python_scripts(&dir, package).map_err(no_entry)?,
            pip_integrity(&dir, package),
        ),
    };
    let chosen = choose(package, &entries, entry).map_err(no_entry)?;
    let program = match package.ecosystem {
        Ecosystem::Npm => dir.join("node_modules/.bin").join(&chosen),
        _ => dir.join("venv/bin").join(&chosen),
    };
    if !program.exists() {
        return Err(no_entry(format!(
            "the install has no program {chosen} ({} is missing)",
            program.display()
        )));
    }
    Ok(Installed {
        package: package.clone(),
        dir,
        program,
        entry: chosen,
        integrity,
    })
}

/// The one program to run: the one asked for, else the only one, else
/// the one named as the package (its bare name, without a scope).
fn choose(package: &Package, entries: &[String], wanted: Option<&str>) -> Result<String, String> {
    let kind = match package.ecosystem {
        Ecosystem::Npm => "bin",
        _ => "console script",
    };
    if entries.is_empty() {
        return Err(format!(
            "the package declares no {kind}, so there is nothing to launch; \
             give the command yourself after --"
        ));
    }
    if let Some(wanted) = wanted {
        return entries
            .iter()
            .find(|e| e.as_str() == wanted)
            .cloned()
            .ok_or_else(|| {
                format!(
                    "the package has no {kind} {wanted:?} (it has: {})",
                    entries.join(", ")
                )
            });
    }
    if let [only] = entries {
        return Ok(only.clone());
    }
    let bare = package.name.rsplit('/').next().unwrap_or(&package.name);
    let normal = |s: &str| s.to_ascii_lowercase().replace('_', "-");
    entries
        .iter()
        .find(|e| normal(e) == normal(bare))
        .cloned()
        .ok_or_else(|| {
            format!(
                "the package declares several {kind}s ({}); name one: npx -p PKG NAME or uvx --from PKG NAME",
                entries.join(", ")
            )
        })
}

/// npm's `bin`: a string (the program is named as the package) or a map.
fn npm_bins(dir: &Path, package: &Package) -> Result<Vec<String>, String> {
    let manifest = dir
        .join("node_modules")
        .join(&package.name)
        .join("package.json");
    let text = std::fs::read_to_string(&manifest)
        .map_err(|e| format!("cannot read its package.json: {e}"))?;
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("its package.json: {e}"))?;
    let bare = package.name.rsplit('/').next().unwrap_or(&package.name);
    Ok(match &value["bin"] {
        serde_json::Value::String(_) => vec![bare.to_owned()],
        serde_json::Value::Object(map) => map.keys().cloned().collect(),
        _ => Vec::new(),
    })
}

/// The integrity npm recorded for the package in the install's lock.
fn npm_integrity(dir: &Path, package: &Package) -> Option<String> {
    let text = std::fs::read_to_string(dir.join("package-lock.json")).ok()?;
    let lock: serde_json::Value = serde_json::from_str(&text).ok()?;
    lock["packages"][format!("node_modules/{}", package.name)]["integrity"]
        .as_str()
        .map(str::to_owned)
}

/// The distribution's `console_scripts`, read by the venv's own Python.
fn python_scripts(dir: &Path, package: &Package) -> Result<Vec<String>, String> {
    let script = "import importlib.metadata as m, sys\n\
                  d = m.distribution(sys.argv[1])\n\
                  print('\\n'.join(sorted(e.name for e in d.entry_points if e.group == 'console_scripts')))";
    let mut command = Command::new(dir.join("venv/bin/python"));
    command
        .args(["-c", script, &package.name])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child =
        process::spawn(command).map_err(|e| format!("cannot run the venv's python: {e}"))?;
    let mut stdout = child
        .child_mut()
        .stdout
        .take()
        .ok_or("the venv's python gave no output")?;
    let ended = process::wait(&mut child, Instant::now() + Duration::from_secs(60))
        .map_err(|e| e.to_string())?;
    let mut text = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut text).map_err(|e| e.to_string())?;
    match ended {
        Ended::Exited(status) if status.success() => Ok(text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(str::to_owned)
            .collect()),
        _ => Err("cannot read the distribution's entry points".into()),
    }
}

/// The archive hash pip's report gives for the package.
fn pip_integrity(dir: &Path, package: &Package) -> Option<String> {
    let text = std::fs::read_to_string(dir.join(PIP_REPORT)).ok()?;
    let report: serde_json::Value = serde_json::from_str(&text).ok()?;
    let normal = |s: &str| s.to_ascii_lowercase().replace(['_', '.'], "-");
    let item = report["install"].as_array()?.iter().find(|item| {
        item["metadata"]["name"]
            .as_str()
            .is_some_and(|n| normal(n) == normal(&package.name))
    })?;
    let archive = &item["download_info"]["archive_info"];
    if let Some(sha) = archive["hashes"]["sha256"].as_str() {
        return Some(format!("sha256={sha}"));
    }
    archive["hash"].as_str().map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn npm(name: &str) -> Package {
        Package {
            ecosystem: Ecosystem::Npm,
            name: name.into(),
            version: "1.0.0".into(),
        }
    }

    #[test]
    fn one_program_is_chosen_or_the_choice_is_refused() {
        let p = npm("@scope/server-notes");
        assert!(choose(&p, &[], None).is_err_and(|e| e.contains("declares no bin")));
        assert_eq!(
            choose(&p, &["notes".into()], None).ok().as_deref(),
            Some("notes")
        );
        let two = ["a".to_owned(), "server-notes".to_owned()];
        assert_eq!(choose(&p, &two, None).ok().as_deref(), Some("server-notes"));
        assert_eq!(choose(&p, &two, Some("a")).ok().as_deref(), Some("a"));
        assert!(choose(&p, &two, Some("b")).is_err());
        let other = ["a".to_owned(), "b".to_owned()];
        assert!(choose(&p, &other, None).is_err_and(|e| e.contains("several")));
    }

    #[test]
    fn npm_bin_and_integrity_are_read_from_the_install() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let pkg = dir.path().join("node_modules/@scope/server-notes");
        std::fs::create_dir_all(&pkg).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(pkg.join("package.json"), r#"{"bin":"dist/index.js"}"#)
            .unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(
            dir.path().join("package-lock.json"),
            r#"{"packages":{"node_modules/@scope/server-notes":{"integrity":"sha512-abc"}}}"#,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let p = npm("@scope/server-notes");
        assert_eq!(
            npm_bins(dir.path(), &p).ok(),
            Some(vec!["server-notes".to_owned()])
        );
        assert_eq!(npm_integrity(dir.path(), &p).as_deref(), Some("sha512-abc"));
        std::fs::write(pkg.join("package.json"), r#"{"main":"x.js"}"#)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(npm_bins(dir.path(), &p).ok(), Some(Vec::new()));
    }
}

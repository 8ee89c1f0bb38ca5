//! Whether the coverage experiment's servers are installed: the npm ones in
//! the cases directory's `node_modules`, the pip ones in its `venv`, each at
//! its pinned version.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use super::table::{Installer, SERVERS, ServerSpec};
use crate::cases::{CasesError, install_command};

/// The command a server is started with, placeholders unexpanded.
pub fn command(dir: &Path, server: &ServerSpec) -> Vec<String> {
    let mut command = match server.installer {
        Installer::Npm { bin } => vec![
            "node".to_owned(),
            dir.join("node_modules/.bin")
                .join(bin)
                .to_string_lossy()
                .into_owned(),
        ],
        Installer::Pip { module } => vec![
            python(dir).to_string_lossy().into_owned(),
            "-m".to_owned(),
            module.to_owned(),
        ],
    };
    command.extend(server.args.iter().map(|a| (*a).to_owned()));
    command
}

/// The virtual environment's interpreter.
pub fn python(dir: &Path) -> PathBuf {
    dir.join("venv/bin/python")
}

/// Every server at its pinned version, or what is missing and how to
/// install it (exit 2, like the case studies).
pub fn check_installed(dir: &Path) -> Result<(), CasesError> {
    for server in SERVERS {
        let found = match server.installer {
            Installer::Npm { bin } => {
                if !dir.join("node_modules/.bin").join(bin).exists() {
                    None
                } else {
                    npm_version(dir, server.package)
                }
            }
            Installer::Pip { .. } => pip_version(dir, server.package),
        };
        if found.as_deref() != Some(server.version) {
            return Err(CasesError::NotInstalled {
                dir: dir.to_path_buf(),
                command: install_command(dir),
                problem: format!(
                    "{} ({}) is {} but the experiment pins {}",
                    server.package,
                    server.installer.name(),
                    found.as_deref().unwrap_or("not installed"),
                    server.version
                ),
            });
        }
    }
    Ok(())
}

/// The version of `package` in `dir`'s `node_modules`, from its package.json.
pub(crate) fn npm_version(dir: &Path, package: &str) -> Option<String> {
    let text = std::fs::read_to_string(dir.join("node_modules").join(package).join("package.json"))
        .ok()?;
    let value: Value = serde_json::from_str(&text).ok()?;
    value.get("version")?.as_str().map(str::to_owned)
}

/// The version the venv's own metadata gives, asked of its interpreter.
pub(crate) fn pip_version(dir: &Path, package: &str) -> Option<String> {
    let python = python(dir);
    if !python.exists() {
        return None;
    }
    let output = Command::new(python)
        .args([
            "-c",
            "import importlib.metadata, sys; print(importlib.metadata.version(sys.argv[1]))",
            package,
        ])
        .env_clear()
        .output()
        .ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).trim().to_owned())
}

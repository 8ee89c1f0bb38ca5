//! Where the field study's servers are installed, installing one on first
//! use, and the command each starts with.
//!
//! The cache is the selection's (`experiments/field/install.sh`): one
//! directory per `<registry>-<name>-<version>` (a scope's `/` as `+`), an
//! npm project or a venv, marked done by `.installed`. Nothing is installed
//! until `lab field` needs a server that is not there yet.

use std::path::{Path, PathBuf};
use std::process::Command;

use witness_sweep::server_json::RegistryPackage;

use super::FIELD_DIR_ENV;
use super::entry::Witness;

/// The cache: `$MCP_WITNESS_FIELD_DIR`, else `$XDG_CACHE_HOME/mcp-witness/field`,
/// else `~/.cache/mcp-witness/field` (as install.sh has it).
pub fn field_cache() -> PathBuf {
    if let Some(dir) = std::env::var_os(FIELD_DIR_ENV) {
        return crate::cases::absolute_dir(Path::new(&dir));
    }
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    cache.join("mcp-witness/field")
}

/// `experiments/field` in the source tree this binary was built from.
pub fn source_dir() -> PathBuf {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    crate_dir
        .parent()
        .unwrap_or(crate_dir)
        .join("experiments/field")
}

/// The package's directory in the cache.
pub fn package_dir(cache: &Path, package: &RegistryPackage) -> PathBuf {
    cache.join(format!(
        "{}-{}-{}",
        package.registry_type,
        package.identifier.replace('/', "+"),
        package.version.as_deref().unwrap_or("")
    ))
}

/// The lock that pins a server's dependencies as well as its package, when
/// it has one beside its `server.json`: `package-lock.json` for npm,
/// `requirements.lock` (a `pip freeze`) for PyPI. The servers whose audits
/// are held to committed bytes (the CI slice) have one, so that a fresh
/// install resolves the dependencies the committed results were made with.
pub fn lock_file(field: &Path, id: &str, package: &RegistryPackage) -> Option<PathBuf> {
    let name = match package.registry_type.as_str() {
        "npm" => "package-lock.json",
        "pypi" => "requirements.lock",
        _ => return None,
    };
    let path = field.join("servers").join(id).join(name);
    path.is_file().then_some(path)
}

/// Installs the package into the cache unless it is there already
/// (`install.sh` does nothing then), with witness.toml's constraints and
/// the server's lock, if it has one.
pub fn ensure_installed(
    cache: &Path,
    field: &Path,
    package: &RegistryPackage,
    witness: &Witness,
) -> Result<PathBuf, String> {
    let dir = package_dir(cache, package);
    if dir.join(".installed").is_file() {
        return Ok(dir);
    }
    let version = package
        .version
        .as_deref()
        .ok_or_else(|| format!("{} has no version", package.identifier))?;
    let mut command = Command::new("bash");
    command.arg(field.join("install.sh"));
    if let Some(lock) = lock_file(field, &witness.id, package) {
        command.arg("--lock").arg(lock);
    }
    let output = command
        .arg(&package.registry_type)
        .arg(&package.identifier)
        .arg(version)
        .arg(cache)
        .args(&witness.install.constraints)
        .output()
        .map_err(|e| format!("cannot run install.sh: {e}"))?;
    let said = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    if dir.join(".installed").is_file() {
        Ok(dir)
    } else {
        Err(format!(
            "install of {}@{version} failed: {}",
            package.identifier,
            said.chars().take(300).collect::<String>()
        ))
    }
}

/// The program (and its interpreter) a server starts with: an npm
/// package's `bin` (the one named after it, or witness.toml's, or its only
/// one) run by `node`; a PyPI package's console script in its venv.
pub fn program(
    dir: &Path,
    package: &RegistryPackage,
    witness: &Witness,
) -> Result<Vec<String>, String> {
    let text = |p: &Path| p.to_string_lossy().into_owned();
    let wanted = witness.run.command.as_deref();
    match package.registry_type.as_str() {
        "npm" => {
            let root = dir.join("node_modules").join(&package.identifier);
            let manifest: serde_json::Value = std::fs::read_to_string(root.join("package.json"))
                .ok()
                .and_then(|t| serde_json::from_str(&t).ok())
                .ok_or_else(|| format!("{} has no readable package.json", root.display()))?;
            let base = package
                .identifier
                .rsplit('/')
                .next()
                .unwrap_or(&package.identifier);
            let script = match manifest.get("bin") {
                Some(serde_json::Value::String(s)) => s.clone(),
                Some(serde_json::Value::Object(bins)) => {
                    let pick = wanted
                        .map(str::to_owned)
                        .or_else(|| bins.contains_key(base).then(|| base.to_owned()))
                        .or_else(|| (bins.len() == 1).then(|| bins.keys().next().cloned())?)
                        .ok_or_else(|| {
                            format!(
                                "{} has {} executables; witness.toml must name one",
                                package.identifier,
                                bins.len()
                            )
                        })?;
                    bins.get(&pick)
                        .and_then(|v| v.as_str())
                        .map(str::to_owned)
                        .ok_or_else(|| format!("{} has no executable {pick}", package.identifier))?
                }
                _ => return Err(format!("{} has no executable", package.identifier)),
            };
            Ok(vec!["node".to_owned(), text(&root.join(script))])
        }
        "pypi" => {
            let exe = dir
                .join("venv/bin")
                .join(wanted.unwrap_or(&package.identifier));
            if exe.is_file() {
                Ok(vec![text(&exe)])
            } else {
                Err(format!(
                    "no executable {} in the venv; witness.toml must name one",
                    exe.display()
                ))
            }
        }
        other => Err(format!("registryType {other:?} cannot be installed here")),
    }
}

/// The relay that plants the lies, written into the cache from this
/// build's copy so that an old copy never plants old lies.
pub fn relay(cache: &Path) -> Result<PathBuf, String> {
    let path = cache.join("relay.py");
    let text: &[u8] = include_bytes!("../../../experiments/wild/relay.py");
    if std::fs::read(&path).ok().as_deref() != Some(text) {
        std::fs::create_dir_all(cache)
            .and_then(|()| std::fs::write(&path, text))
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok(path)
}

/// The interpreter the relay runs on: the first `python3` on PATH.
pub fn python3() -> Result<PathBuf, String> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join("python3"))
        .find(|p| p.is_file())
        .ok_or_else(|| "no python3 on PATH: the relay needs one".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn package(json: &str) -> RegistryPackage {
        serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn a_scoped_package_is_cached_as_install_sh_names_it() {
        let p =
            package(r#"{"registryType":"npm","identifier":"@scope/server-x","version":"1.2.3"}"#);
        assert_eq!(
            package_dir(Path::new("/c"), &p),
            Path::new("/c/npm-@scope+server-x-1.2.3")
        );
    }

    #[test]
    fn a_lock_beside_the_entry_is_the_registrys_own_kind() {
        let field = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let dir = field.path().join("servers/x");
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(dir.join("requirements.lock"), "mcp==1.9.0\n")
            .unwrap_or_else(|e| panic!("{e}"));
        let pypi = package(r#"{"registryType":"pypi","identifier":"x-mcp","version":"1.0.0"}"#);
        let npm = package(r#"{"registryType":"npm","identifier":"x-mcp","version":"1.0.0"}"#);
        assert_eq!(
            lock_file(field.path(), "x", &pypi),
            Some(dir.join("requirements.lock"))
        );
        assert_eq!(
            lock_file(field.path(), "x", &npm),
            None,
            "a pip lock does not pin an npm package"
        );
        assert_eq!(lock_file(field.path(), "y", &pypi), None);
    }

    #[test]
    fn a_pypi_server_runs_its_named_console_script() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        std::fs::create_dir_all(dir.path().join("venv/bin")).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(dir.path().join("venv/bin/tasker"), "").unwrap_or_else(|e| panic!("{e}"));
        let p = package(r#"{"registryType":"pypi","identifier":"mcp-tasker","version":"1.8.1"}"#);
        let mut w = Witness::default();
        assert!(program(dir.path(), &p, &w).is_err(), "no mcp-tasker script");
        w.run.command = Some("tasker".into());
        let command = program(dir.path(), &p, &w).unwrap_or_else(|e| panic!("{e}"));
        assert!(command[0].ends_with("venv/bin/tasker"), "{command:?}");
    }
}

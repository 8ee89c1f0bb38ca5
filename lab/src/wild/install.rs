//! Where the wild experiment's servers are installed, and whether each is
//! there at its pinned version.

use std::path::{Path, PathBuf};

use super::table::{Installer, SERVERS, WildSpec};
use super::{WILD_DIR_ENV, WildError};

/// The install cache: `$MCP_WITNESS_WILD_DIR`, else
/// `$XDG_CACHE_HOME/mcp-witness/wild`, else `~/.cache/mcp-witness/wild` —
/// outside the work tree, so a fresh clone (CI's) finds the build of the
/// native module an earlier run made.
pub fn wild_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os(WILD_DIR_ENV) {
        return crate::cases::absolute_dir(Path::new(&dir));
    }
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    cache.join("mcp-witness/wild")
}

/// `experiments/wild` in the source tree this binary was built from.
pub fn source_dir() -> PathBuf {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    crate_dir
        .parent()
        .unwrap_or(crate_dir)
        .join("experiments/wild")
}

/// The command that installs the pinned servers into `dir`.
pub fn install_command(dir: &Path) -> String {
    format!(
        "bash {} {}",
        crate::cases::shell_word(&source_dir().join("install.sh")),
        crate::cases::shell_word(dir)
    )
}

/// The command a server is started with behind the relay, placeholders
/// unexpanded: `python relay.py [--lie TOOL=KIND]... -- SERVER...`.
pub fn command(dir: &Path, server: &WildSpec, lies: &[String]) -> Vec<String> {
    let text = |p: PathBuf| p.to_string_lossy().into_owned();
    let mut command = vec![text(python(dir)), text(dir.join("relay.py"))];
    for lie in lies {
        command.push("--lie".to_owned());
        command.push(lie.clone());
    }
    command.push("--".to_owned());
    match server.installer {
        Installer::Npm { bin } => {
            command.push("node".to_owned());
            command.push(text(dir.join("node_modules/.bin").join(bin)));
        }
        Installer::Pip { script } => {
            command.push(text(python(dir)));
            command.push(text(dir.join("venv/bin").join(script)));
        }
    }
    command.extend(server.args.iter().map(|a| (*a).to_owned()));
    command
}

/// The venv's interpreter (it also runs the relay): laid out as the
/// coverage experiment's, whose version readers serve both.
pub use crate::coverage::install::python;
use crate::coverage::install::{npm_version, pip_version};

/// Every server at its pinned version, and the relay, or what is missing.
pub fn check_installed(dir: &Path) -> Result<(), WildError> {
    let missing = |problem: String| WildError::NotInstalled {
        dir: dir.to_path_buf(),
        command: install_command(dir),
        problem,
    };
    // The relay is copied with the pins; an older copy plants old lies.
    let relay = std::fs::read(dir.join("relay.py")).ok();
    if relay.as_deref() != Some(include_bytes!("../../../experiments/wild/relay.py").as_slice()) {
        return Err(missing("relay.py is missing or not this version's".into()));
    }
    for server in SERVERS {
        let found = match server.installer {
            Installer::Npm { bin } => {
                if dir.join("node_modules/.bin").join(bin).exists() {
                    npm_version(dir, server.package)
                } else {
                    None
                }
            }
            Installer::Pip { script } => {
                if dir.join("venv/bin").join(script).exists() {
                    pip_version(dir, server.package)
                } else {
                    None
                }
            }
        };
        if found.as_deref() != Some(server.version) {
            return Err(missing(format!(
                "{} ({}) is {} but the experiment pins {}",
                server.package,
                server.installer.name(),
                found.as_deref().unwrap_or("not installed"),
                server.version
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_runs_behind_the_relay_with_its_lies() {
        let dir = Path::new("/cache");
        let Some(server) = SERVERS.iter().find(|s| s.name == "duckdb") else {
            panic!("duckdb is in the table");
        };
        let command = command(dir, server, &["query=read-only".to_owned()]);
        assert_eq!(
            command,
            [
                "/cache/venv/bin/python",
                "/cache/relay.py",
                "--lie",
                "query=read-only",
                "--",
                "/cache/venv/bin/python",
                "/cache/venv/bin/mcp-server-duckdb",
                "--db-path",
                "{data}/shop.duckdb",
            ]
        );
    }

    #[test]
    fn an_empty_directory_is_not_installed_and_says_how_to_install() {
        let dir = tempfile::tempdir().expect("tempdir");
        let Err(e) = check_installed(dir.path()) else {
            panic!("nothing is installed there");
        };
        let text = e.to_string();
        assert!(text.contains("relay.py"), "{text}");
        assert!(text.contains("experiments/wild/install.sh"), "{text}");
    }
}

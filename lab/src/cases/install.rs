//! Where the pinned packages are, and whether they are installed there.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{CASES, CasesError};

/// Where the pinned packages live, relative to the repository.
pub const CASES_DIR: &str = "experiments/cases";

/// The environment variable that points at another cases directory.
pub const CASES_DIR_ENV: &str = "MCP_WITNESS_CASES_DIR";

/// The cases directory: `$MCP_WITNESS_CASES_DIR`, else `experiments/cases`
/// under the working directory, else the one in the source tree this binary
/// was built from.
pub fn cases_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os(CASES_DIR_ENV) {
        return absolute_dir(Path::new(&dir));
    }
    let here = PathBuf::from(CASES_DIR);
    if here.join("package.json").is_file() {
        return std::env::current_dir().map_or(here.clone(), |cwd| cwd.join(here));
    }
    source_cases_dir()
}

/// `experiments/cases` in the source tree this binary was built from.
fn source_cases_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(CASES_DIR)
}

/// `dir` made absolute against the working directory. A case's server script
/// is an argument resolved inside the jail, whose working directory is not
/// ours, so a relative `--cases-dir` would name nothing there.
pub fn absolute_dir(dir: &Path) -> PathBuf {
    std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf())
}

/// Whether every case's package is installed at its pinned version.
pub fn check_installed(dir: &Path) -> Result<(), CasesError> {
    let missing = |problem: String| CasesError::NotInstalled {
        dir: dir.to_path_buf(),
        script: dir.join("install.sh"),
        problem,
    };
    for case in CASES {
        let bin = dir.join("node_modules/.bin").join(case.bin);
        if !bin.exists() {
            return Err(missing(format!(
                "{} has no {}",
                case.package,
                bin.display()
            )));
        }
        let found = installed_package(dir, case.package)
            .and_then(|p| p.get("version").and_then(Value::as_str).map(str::to_owned));
        if found.as_deref() != Some(case.version) {
            return Err(missing(format!(
                "{} is {} but the case pins {}",
                case.package,
                found.as_deref().unwrap_or("unreadable"),
                case.version
            )));
        }
    }
    Ok(())
}

/// Whether the case studies can run here (for `lab all`).
pub fn installed() -> bool {
    check_installed(&cases_dir()).is_ok()
}

/// The installed `package.json` of `package`, when it is there and readable.
pub(crate) fn installed_package(dir: &Path, package: &str) -> Option<Value> {
    let text = std::fs::read_to_string(dir.join("node_modules").join(package).join("package.json"))
        .ok()?;
    serde_json::from_str(&text).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_relative_cases_dir_is_made_absolute_against_the_working_directory() {
        let cwd = std::env::current_dir().unwrap_or_default();
        let dir = absolute_dir(Path::new("experiments/cases"));
        assert!(dir.is_absolute(), "{}", dir.display());
        assert_eq!(dir, cwd.join("experiments/cases"));
        let dir = absolute_dir(Path::new("./some/cases"));
        assert!(dir.is_absolute());
        assert!(dir.starts_with(&cwd));
        assert!(dir.ends_with("some/cases"));
        assert_eq!(
            absolute_dir(Path::new("/abs/cases")),
            Path::new("/abs/cases")
        );
    }

    #[test]
    fn a_missing_install_says_how_to_install() {
        let dir = tempfile::tempdir().map_err(|e| e.to_string());
        let Ok(dir) = dir else {
            panic!("tempdir");
        };
        let err = check_installed(dir.path()).err().map(|e| e.to_string());
        let text = err.unwrap_or_default();
        assert!(text.contains("install.sh"), "{text}");
        assert!(text.contains("not installed"), "{text}");
    }
}

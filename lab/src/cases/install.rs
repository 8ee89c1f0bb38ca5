//! Where the pinned packages are, and whether they are installed there.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::table::{CaseSpec, Runtime};
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

/// `experiments/cases` in the source tree this binary was built from. This
/// crate sits one level below the repository root, so the root is its
/// manifest directory's parent.
pub fn source_cases_dir() -> PathBuf {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    crate_dir.parent().unwrap_or(crate_dir).join(CASES_DIR)
}

/// One shell command that installs the pinned packages into `dir`, so that
/// `--cases-dir dir` then works: `dir`'s own `install.sh` when it has one
/// (it is a copy of `experiments/cases`), else the source tree's script
/// told to install into `dir`, else npm directly with the pinned versions.
pub fn install_command(dir: &Path) -> String {
    install_command_with(dir, &source_cases_dir().join("install.sh"))
}

fn install_command_with(dir: &Path, source_script: &Path) -> String {
    let own = dir.join("install.sh");
    if own.is_file() {
        return format!("bash {}", shell_word(&own));
    }
    if source_script.is_file() {
        return format!("bash {} {}", shell_word(source_script), shell_word(dir));
    }
    // No lock file at hand: the pins hold for the packages the cases run,
    // their dependencies follow the registry.
    let mut command = format!(
        "npm install --prefix {} --no-audit --no-fund",
        shell_word(dir)
    );
    for case in CASES.iter().filter(|c| c.runtime == Runtime::Node) {
        command.push_str(&format!(" {}@{}", case.package, case.version));
    }
    let python: Vec<String> = CASES
        .iter()
        .filter(|c| c.runtime == Runtime::Python)
        .map(|c| format!("{}=={}", c.package, c.version))
        .collect();
    if !python.is_empty() {
        let venv = shell_word(&dir.join("venv"));
        command.push_str(&format!(
            " && python3 -m venv {venv} && {venv}/bin/pip install {}",
            python.join(" ")
        ));
    }
    command
}

/// `path` as one shell word: as is when it holds nothing a shell treats
/// specially, else single-quoted.
pub fn shell_word(path: &Path) -> String {
    let text = path.to_string_lossy();
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+:@=,%".contains(c));
    if plain {
        text.into_owned()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
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
        command: install_command(dir),
        problem,
    };
    for case in CASES {
        let (entry, found) = match case.runtime {
            Runtime::Node => (
                dir.join("node_modules/.bin").join(case.bin),
                installed_package(dir, case.package)
                    .and_then(|p| p.get("version").and_then(Value::as_str).map(str::to_owned)),
            ),
            Runtime::Python => (
                dir.join("venv/bin/python"),
                python_dist_info(dir, &case).map(|_| case.version.to_owned()),
            ),
        };
        if !entry.exists() {
            return Err(missing(format!(
                "{} has no {}",
                case.package,
                entry.display()
            )));
        }
        if found.as_deref() != Some(case.version) {
            return Err(missing(format!(
                "{} is {} but the case pins {}",
                case.package,
                found.as_deref().unwrap_or("not installed at that version"),
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

/// The `dist-info` directory of a Python case's package at its pinned
/// version, in the cases directory's venv.
pub(crate) fn python_dist_info(dir: &Path, case: &CaseSpec) -> Option<std::path::PathBuf> {
    let wanted = format!(
        "{}-{}.dist-info",
        case.package.replace('-', "_"),
        case.version
    );
    let lib = dir.join("venv/lib");
    std::fs::read_dir(&lib)
        .ok()?
        .flatten()
        .map(|python| python.path().join("site-packages").join(&wanted))
        .find(|info| info.is_dir())
}

/// The package's own one-line summary, as its registry shows it.
pub(crate) fn package_description(dir: &Path, case: &CaseSpec) -> String {
    match case.runtime {
        Runtime::Node => installed_package(dir, case.package)
            .and_then(|p| {
                p.get("description")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            })
            .unwrap_or_default(),
        Runtime::Python => python_dist_info(dir, case)
            .and_then(|info| std::fs::read_to_string(info.join("METADATA")).ok())
            .and_then(|meta| {
                meta.lines()
                    .take_while(|l| !l.is_empty())
                    .find_map(|l| l.strip_prefix("Summary: ").map(str::to_owned))
            })
            .unwrap_or_default(),
    }
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

    fn tempdir() -> tempfile::TempDir {
        match tempfile::tempdir() {
            Ok(dir) => dir,
            Err(e) => panic!("tempdir: {e}"),
        }
    }

    #[test]
    fn a_missing_install_names_a_script_that_exists_and_the_directory() {
        let dir = tempdir();
        let err = check_installed(dir.path()).err().map(|e| e.to_string());
        let text = err.unwrap_or_default();
        assert!(text.contains("not installed"), "{text}");
        let script = source_cases_dir().join("install.sh");
        assert!(script.is_file(), "{}", script.display());
        let command = format!("bash {} {}", script.display(), dir.path().display());
        assert!(text.contains(&command), "{text}");
    }

    #[test]
    fn the_install_command_fits_what_the_directory_holds() {
        let dir = tempdir();
        let elsewhere = tempdir();
        let script = elsewhere.path().join("install.sh");
        // Neither script exists: npm with the pins, into dir.
        let npm = install_command_with(dir.path(), &script);
        assert!(
            npm.starts_with(&format!("npm install --prefix {} ", dir.path().display())),
            "{npm}"
        );
        for case in CASES {
            let pin = match case.runtime {
                Runtime::Node => format!(" {}@{}", case.package, case.version),
                Runtime::Python => format!(" {}=={}", case.package, case.version),
            };
            assert!(npm.contains(&pin), "{npm}");
        }
        // The source tree's script, told where to install.
        std::fs::write(&script, "").unwrap_or_default();
        assert_eq!(
            install_command_with(dir.path(), &script),
            format!("bash {} {}", script.display(), dir.path().display())
        );
        // A copy of experiments/cases installs into itself.
        std::fs::write(dir.path().join("install.sh"), "").unwrap_or_default();
        assert_eq!(
            install_command_with(dir.path(), &script),
            format!("bash {}", dir.path().join("install.sh").display())
        );
    }

    #[test]
    fn paths_with_spaces_or_quotes_stay_one_shell_word() {
        assert_eq!(shell_word(Path::new("/a/b-c_d.e")), "/a/b-c_d.e");
        assert_eq!(shell_word(Path::new("/my cases")), "'/my cases'");
        assert_eq!(shell_word(Path::new("/it's")), "'/it'\\''s'");
    }

    #[test]
    fn the_source_tree_cases_dir_is_the_repositorys() {
        let dir = source_cases_dir();
        assert!(dir.join("package.json").is_file(), "{}", dir.display());
        assert!(dir.join("install.sh").is_file(), "{}", dir.display());
    }
}

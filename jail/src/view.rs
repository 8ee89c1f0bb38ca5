//! What of the host file system a sandboxed server sees: the system's
//! read-only runtime, its own install directories, the jail, and what the
//! user added with `--ro-bind`. Everything else — temporary directories
//! (other audits' jails, agents' sockets), home directories, `/run`, `/srv`,
//! `/mnt`, the auditor's working trees — is absent: bubblewrap's root is an
//! empty tmpfs, and only these are bound into it.

use std::path::{Component, Path, PathBuf};
use std::sync::OnceLock;

/// The system's runtime, bound read-only where it exists.
pub const SYSTEM: [&str; 9] = [
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt",
];

static EXTRA: OnceLock<Vec<PathBuf>> = OnceLock::new();

/// Paths every server launched by this process may also see, read-only
/// (the binary's `--ro-bind`).
pub fn set_visible(paths: Vec<PathBuf>) {
    let _ = EXTRA.set(paths);
}

/// The `--ro-bind` paths, as given.
pub fn extra() -> &'static [PathBuf] {
    EXTRA.get().map(Vec::as_slice).unwrap_or_default()
}

/// Whether `path` is beneath the system's runtime, so already visible.
fn in_system(path: &Path) -> bool {
    SYSTEM.iter().any(|dir| path.starts_with(dir))
}

/// The directory a program or script at `path` was installed into: the
/// parent of its outermost `node_modules` (a Node package and all it
/// requires), else the prefix its directory belongs to (`PREFIX/bin/x`,
/// `PREFIX/lib/x.py`: the parent of the directory holding it), so that an
/// interpreter finds its libraries beside it.
fn install_root(path: &Path) -> Option<PathBuf> {
    let mut outermost = None;
    let mut at = PathBuf::new();
    for component in path.components() {
        if component == Component::Normal("node_modules".as_ref()) {
            outermost.get_or_insert_with(|| at.clone());
        }
        at.push(component);
    }
    if let Some(root) = outermost {
        return Some(root);
    }
    let dir = if path.is_dir() { path } else { path.parent()? };
    let prefix = dir.parent().unwrap_or(dir);
    // Never the whole file system, nor a top-level directory as a whole.
    (prefix.components().count() > 2)
        .then(|| prefix.to_path_buf())
        .or_else(|| Some(dir.to_path_buf()))
        .filter(|p| p.components().count() > 2)
}

/// Whether the file at `path` is a program: executable by someone, or
/// inside a `node_modules` tree (a package's entry point).
fn is_program(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let in_package = path
        .components()
        .any(|c| c == Component::Normal("node_modules".as_ref()));
    in_package || std::fs::metadata(path).is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
}

/// The interpreter a script's `#!` line names, when it is an absolute path.
fn interpreter(path: &Path) -> Option<PathBuf> {
    use std::io::Read;
    let mut head = [0u8; 256];
    let n = std::fs::File::open(path).ok()?.read(&mut head).ok()?;
    let line = head[..n].strip_prefix(b"#!")?;
    let line = line.split(|b| *b == b'\n').next()?;
    let program = std::str::from_utf8(line).ok()?.split_whitespace().next()?;
    let program = PathBuf::from(program);
    program.is_absolute().then_some(program)
}

/// A bare program name as the sandbox's `PATH` will find it.
fn on_path(program: &Path, path_var: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    if program.components().count() != 1 {
        return Some(program.to_path_buf());
    }
    std::env::split_paths(path_var?)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
}

/// The install directories to bind for a server launched as `program
/// args` (with the sandbox's `PATH`): the install root of the program and
/// of the script it is given (its first argument that is an existing
/// regular file outside the jail), and of any later argument that is a
/// program (a wrapped server), each as named and where its links lead.
/// Data the command names (a store, a socket, a directory) is never bound:
/// the store is in the jail, and the rest is out of the server's sight.
/// Sorted, without one inside another, and without what the system's
/// runtime already shows.
pub fn install_dirs(
    program: &Path,
    args: &[String],
    path_var: Option<&std::ffi::OsStr>,
    jail: &Path,
) -> Vec<PathBuf> {
    let mut named: Vec<PathBuf> = on_path(program, path_var).into_iter().collect();
    let files: Vec<PathBuf> = args
        .iter()
        .map(PathBuf::from)
        .filter(|p| p.is_absolute() && p.is_file() && !p.starts_with(jail))
        .collect();
    // The script is the first file; a wrapper's command line names the
    // program it wraps further on (`wrapper.py ... node /x/node_modules/.bin/srv`),
    // so later files count too when they are programs: executable, or part
    // of a Node package. A data file the command names (a config, a key)
    // is never a reason to show its directory.
    named.extend(files.first().cloned());
    named.extend(files.iter().skip(1).filter(|p| is_program(p)).cloned());
    // A script's interpreter may live outside the system's runtime too (a
    // venv's python is a link to the python it was made from).
    let interpreters: Vec<PathBuf> = named.iter().filter_map(|p| interpreter(p)).collect();
    named.extend(interpreters);
    let mut roots = Vec::new();
    for path in named {
        let real = path.canonicalize().ok();
        for candidate in std::iter::once(path).chain(real) {
            if let Some(root) = install_root(&candidate)
                && !in_system(&root)
                && !root.starts_with(jail)
                && !jail.starts_with(&root)
                && root.exists()
            {
                roots.push(root);
            }
        }
    }
    roots.sort();
    roots.dedup();
    let kept: Vec<PathBuf> = roots
        .iter()
        .filter(|r| !roots.iter().any(|o| o != *r && r.starts_with(o)))
        .cloned()
        .collect();
    kept
}

/// One line for the report: what the server could see.
pub fn describe(install: usize, extra: &[PathBuf]) -> String {
    let system: Vec<&str> = SYSTEM
        .iter()
        .copied()
        .filter(|d| Path::new(d).exists())
        .collect();
    let mut text = format!(
        "the server sees only the system's runtime ({}, read-only), {} install director{} named by its command line (read-only), and the jail (writable)",
        system.join(", "),
        install,
        if install == 1 { "y" } else { "ies" }
    );
    if !extra.is_empty() {
        let shown: Vec<String> = extra.iter().map(|p| p.display().to_string()).collect();
        text.push_str(&format!(", and {} (--ro-bind)", shown.join(", ")));
    }
    text.push_str("; temporary and home directories, /run and other audits' jails are absent, so no socket outside can be reached; the stores' original files are hidden. A write or connect the sandbox refused is not reported: no layer here reports attempts");
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_package_is_bound_from_its_node_modules_and_a_program_from_its_prefix() {
        assert_eq!(
            install_root(Path::new("/srv/cases/node_modules/.bin/x")),
            Some(PathBuf::from("/srv/cases"))
        );
        assert_eq!(
            install_root(Path::new("/srv/a/node_modules/p/node_modules/q/i.js")),
            Some(PathBuf::from("/srv/a"))
        );
        assert_eq!(
            install_root(Path::new("/home/u/.venv/bin/python")),
            Some(PathBuf::from("/home/u/.venv"))
        );
        // A top-level directory is never bound whole.
        assert_eq!(install_root(Path::new("/srv/x")), None);
        assert_eq!(
            install_root(Path::new("/srv/tools/x")),
            Some(PathBuf::from("/srv/tools"))
        );
    }

    #[test]
    fn a_scripts_interpreter_outside_the_runtime_is_bound() {
        let host = tempfile::tempdir().expect("tempdir");
        let python = host.path().join("pythons/3.11/bin/python3");
        let script = host.path().join("venvs/srv/bin/srv");
        for file in [&python, &script] {
            std::fs::create_dir_all(file.parent().expect("parent")).expect("dirs");
        }
        std::fs::write(&python, "").expect("python");
        std::fs::write(&script, format!("#!{} -u\nimport srv\n", python.display()))
            .expect("script");
        let dirs = install_dirs(&script, &[], None, &host.path().join("jail"));
        assert!(dirs.contains(&host.path().join("venvs/srv")), "{dirs:?}");
        assert!(dirs.contains(&host.path().join("pythons/3.11")), "{dirs:?}");
    }

    #[test]
    fn a_wrapped_servers_package_is_bound_and_a_data_file_is_not() {
        use std::os::unix::fs::PermissionsExt;
        let host = tempfile::tempdir().expect("tempdir");
        let jail = host.path().join("jail");
        let wrapper = host.path().join("tools/bin/wrap.py");
        let entry = host.path().join("cases/node_modules/srv/index.js");
        let data = host.path().join("secrets/keys/config.json");
        for file in [&wrapper, &entry, &data] {
            std::fs::create_dir_all(file.parent().expect("parent")).expect("dirs");
            std::fs::write(file, "x").expect("write");
        }
        std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o600)).expect("chmod");
        let args: Vec<String> = [&wrapper, &data, &entry]
            .iter()
            .map(|p| p.display().to_string())
            .chain(["node".to_string()])
            .collect();
        let dirs = install_dirs(Path::new("/usr/bin/python3"), &args, None, &jail);
        assert!(dirs.contains(&host.path().join("tools")), "{dirs:?}");
        assert!(dirs.contains(&host.path().join("cases")), "{dirs:?}");
        assert!(
            !dirs
                .iter()
                .any(|d| d.starts_with(host.path().join("secrets"))),
            "{dirs:?}"
        );
    }
}

//! What of the host file system a sandboxed server sees: the system's
//! read-only runtime, its own install directories, the jail, and what the
//! user added with `--ro-bind`. Everything else — temporary directories
//! (other audits' jails, agents' sockets), home directories, `/run`, `/srv`,
//! `/mnt`, the auditor's working trees — is absent: bubblewrap's root is an
//! empty tmpfs, and only these are bound into it.

use std::path::{Component, Path, PathBuf};
use std::sync::OnceLock;

/// The system's runtime, bound read-only where it exists.
pub const SYSTEM: [&str; 8] = [
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt",
];

/// Of `/etc`, what programs read to run, bound read-only where it exists:
/// name resolution (resolv.conf, hosts, nsswitch.conf, gai.conf, services,
/// protocols, networks), users and groups by name (passwd and group, never
/// shadow nor gshadow), the dynamic loader (ld.so.*), certificates
/// (ssl, ca-certificates, pki, crypto-policies), the Debian alternatives
/// that commands in /usr/bin lead through, time and locale, the system's
/// name and version, and the interpreters' own configuration. Whatever
/// else /etc holds (keys, credentials in system configs such as gitconfig,
/// npmrc or pip.conf, other services' settings) is absent.
pub const ETC: [&str; 31] = [
    "resolv.conf",
    "hosts",
    "host.conf",
    "nsswitch.conf",
    "gai.conf",
    "services",
    "protocols",
    "networks",
    "passwd",
    "group",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "ld.so.preload",
    "ssl",
    "ca-certificates",
    "ca-certificates.conf",
    "pki",
    "crypto-policies",
    "alternatives",
    "localtime",
    "timezone",
    "locale.alias",
    "locale.conf",
    "os-release",
    "lsb-release",
    "debian_version",
    "mime.types",
    "python3",
    "nodejs",
    "terminfo",
];

/// How one entry of `/etc` appears in the sandbox.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EtcEntry {
    /// Bound read-only (a link out of the runtime, such as a resolv.conf
    /// under /run, is bound as what it names).
    Bind(PathBuf),
    /// A link that stays a link: its target is in the sandbox already.
    Link { path: PathBuf, target: PathBuf },
}

/// The entries of `etc` (the host's `/etc`) the sandbox shows, as
/// `/etc/NAME`: those of [`ETC`] that exist, and the version directories
/// of the interpreters (`python3.11`).
pub fn etc_entries(etc: &Path) -> Vec<EtcEntry> {
    let mut names: Vec<String> = ETC.iter().map(|n| (*n).to_owned()).collect();
    if let Ok(entries) = std::fs::read_dir(etc) {
        names.extend(
            entries
                .flatten()
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|n| {
                    n.strip_prefix("python3.")
                        .is_some_and(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
                }),
        );
    }
    names.sort();
    names.dedup();
    let mut shown = Vec::new();
    for name in names {
        let host = etc.join(&name);
        let path = Path::new("/etc").join(&name);
        match std::fs::read_link(&host) {
            Ok(target) => {
                // A link into the runtime stays a link; one elsewhere
                // (/run/systemd/resolve/...) is bound as what it names.
                let resolved = if target.is_absolute() {
                    target.clone()
                } else {
                    etc.join(&target)
                };
                if in_system(&resolved) && !resolved.starts_with("/etc") {
                    shown.push(EtcEntry::Link { path, target });
                } else if host.exists() {
                    shown.push(EtcEntry::Bind(path));
                }
            }
            Err(_) if host.exists() => shown.push(EtcEntry::Bind(path)),
            Err(_) => {}
        }
    }
    shown
}

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

/// Whether `path` is beneath the system's runtime, so already visible (or,
/// under /etc, never to be bound whole for a server's install).
fn in_system(path: &Path) -> bool {
    SYSTEM.iter().any(|dir| path.starts_with(dir)) || path.starts_with("/etc")
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

/// What the Landlock layer says of refused writes where no decoy can be
/// placed (no bubblewrap, so no mount namespace to place one in).
pub const UNREPORTED_WITHOUT_DECOYS: &str = "a write it refuses is not reported: without bubblewrap's mount namespace no decoy can stand in for the stores' originals, and no layer here reports attempts";

/// One line for the report: what the server could see, and which refused
/// attempts are reported (`decoys` stand in for originals; `hidden` are
/// behind `/dev/null` because their decoy could not be made).
pub fn describe(install: usize, extra: &[PathBuf], decoys: usize, hidden: usize) -> String {
    let system: Vec<&str> = SYSTEM
        .iter()
        .copied()
        .filter(|d| Path::new(d).exists())
        .collect();
    let mut text = format!(
        "the server sees only the system's runtime ({}, and of /etc only what programs read to run: resolver, passwd and group, the loader, certificates, alternatives, time and locale; read-only), {} install director{} named by its command line (read-only), and the jail (writable)",
        system.join(", "),
        install,
        if install == 1 { "y" } else { "ies" }
    );
    if !extra.is_empty() {
        let shown: Vec<String> = extra.iter().map(|p| p.display().to_string()).collect();
        text.push_str(&format!(", and {} (--ro-bind)", shown.join(", ")));
    }
    text.push_str("; temporary and home directories, /run and other audits' jails are absent, so no socket outside can be reached. ");
    if decoys > 0 {
        text.push_str(&format!(
            "A write to a store's original is reported: {decoys} decoy{} (an empty file or directory, writable) stand{} in the originals' places, the originals themselves out of reach, and what lands in a decoy is an original-store-write-attempt finding",
            if decoys == 1 { "" } else { "s" },
            if decoys == 1 { "s" } else { "" },
        ));
    } else {
        text.push_str("No store has an original a decoy could stand in for");
    }
    if hidden > 0 {
        text.push_str(&format!(
            "; {hidden} original file{} without a decoy {} hidden behind /dev/null, where a write is refused and not reported",
            if hidden == 1 { "" } else { "s" },
            if hidden == 1 { "is" } else { "are" },
        ));
    }
    text.push_str(". Any other write or connect the sandbox refuses (read-only or absent paths) is not reported");
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
    fn of_etc_only_what_programs_need_is_shown_and_links_are_kept_or_followed() {
        let host = tempfile::tempdir().expect("tempdir");
        let etc = host.path();
        for name in [
            "passwd",
            "group",
            "shadow",
            "gitconfig",
            "python3.11",
            "python3.x",
        ] {
            std::fs::write(etc.join(name), "x").expect("write");
        }
        std::fs::create_dir(etc.join("ssl")).expect("ssl");
        std::os::unix::fs::symlink("/usr/share/zoneinfo/UTC", etc.join("localtime")).expect("link");
        let elsewhere = etc.join("elsewhere-resolv.conf");
        std::fs::write(&elsewhere, "nameserver 10.0.0.1\n").expect("write");
        std::os::unix::fs::symlink(&elsewhere, etc.join("resolv.conf")).expect("link");
        std::os::unix::fs::symlink("/nonexistent/hosts", etc.join("hosts")).expect("link");
        let shown = etc_entries(etc);
        let bind = |name: &str| EtcEntry::Bind(Path::new("/etc").join(name));
        assert_eq!(
            shown,
            [
                bind("group"),
                EtcEntry::Link {
                    path: "/etc/localtime".into(),
                    target: "/usr/share/zoneinfo/UTC".into()
                },
                bind("passwd"),
                bind("python3.11"),
                bind("resolv.conf"),
                bind("ssl"),
            ]
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

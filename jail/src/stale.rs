//! Jails left behind by an auditor that could not clean up (killed by
//! SIGKILL, or by the machine going down), found and removed by the next
//! audit.
//!
//! A live auditor holds an advisory lock (`flock`) on its jail directory for
//! as long as the jail lives. The kernel drops that lock when the process
//! ends, however it ends, so an unlocked jail directory has no owner. The
//! lock is taken on a close-on-exec descriptor: no server inherits it and
//! none can keep a dead auditor's jail alive. Jails kept on purpose
//! (`--keep-jail`) carry another prefix and are never touched.

use std::fs::File;
use std::path::Path;
use std::time::{Duration, SystemTime};

/// The prefix of every jail directory the sweep may remove.
pub(super) const PREFIX: &str = "mcp-witness-jail-";

/// The prefix of a jail the user asked to keep.
pub(super) const KEPT_PREFIX: &str = "mcp-witness-kept-";

/// A jail younger than this is left alone even when unlocked: between
/// creating its directory and locking it, a starting auditor holds no lock.
const GRACE: Duration = Duration::from_secs(60);

/// Locks `dir` for the life of the returned file; `None` when the file
/// system does not support locks (the jail then simply is never swept).
pub(super) fn hold(dir: &Path) -> Option<File> {
    let file = File::open(dir).ok()?;
    try_lock(&file).then_some(file)
}

fn try_lock(file: &File) -> bool {
    rustix::fs::flock(file, rustix::fs::FlockOperation::NonBlockingLockExclusive).is_ok()
}

/// Removes every unlocked jail older than the grace period in `tmp`;
/// returns how many were removed. Errors are skipped: a sweep never stops
/// an audit.
pub(super) fn sweep(tmp: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(tmp) else {
        return 0;
    };
    let now = SystemTime::now();
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        if !name.to_string_lossy().starts_with(PREFIX) {
            continue;
        }
        // Never follow a link someone planted under a jail's name.
        let Ok(meta) = entry.path().symlink_metadata() else {
            continue;
        };
        let old_enough = meta
            .modified()
            .ok()
            .and_then(|m| now.duration_since(m).ok())
            .is_some_and(|age| age >= GRACE);
        if !meta.is_dir() || !old_enough {
            continue;
        }
        let Ok(dir) = File::open(entry.path()) else {
            continue;
        };
        // Held while removing, so a second sweep running at once skips it.
        if try_lock(&dir) && std::fs::remove_dir_all(entry.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn age(path: &Path, by: Duration) {
        let then = SystemTime::now() - by;
        let times = std::fs::FileTimes::new().set_modified(then);
        File::open(path)
            .and_then(|f| f.set_times(times))
            .unwrap_or_else(|e| panic!("set the time of {}: {e}", path.display()));
    }

    fn jail_in(tmp: &Path, name: &str, old: bool) -> std::path::PathBuf {
        let dir = tmp.join(name);
        std::fs::create_dir_all(dir.join("stores")).unwrap();
        std::fs::write(dir.join("stores/copy.db"), b"copy").unwrap();
        if old {
            age(&dir, GRACE * 2);
        }
        dir
    }

    #[test]
    fn only_old_unlocked_jails_are_removed() {
        let tmp = tempfile::tempdir().unwrap();
        let orphan = jail_in(tmp.path(), "mcp-witness-jail-orphan", true);
        let live = jail_in(tmp.path(), "mcp-witness-jail-live", true);
        let young = jail_in(tmp.path(), "mcp-witness-jail-young", false);
        let kept = jail_in(tmp.path(), "mcp-witness-kept-mine", true);
        let other = jail_in(tmp.path(), "someone-else", true);
        let lock = hold(&live).expect("this file system supports flock");

        assert_eq!(sweep(tmp.path()), 1);
        assert!(!orphan.exists(), "an unowned jail is removed");
        for stays in [&live, &young, &kept, &other] {
            assert!(stays.join("stores/copy.db").exists(), "{}", stays.display());
        }
        drop(lock);
        assert_eq!(sweep(tmp.path()), 1, "once its auditor is gone, it goes");
        assert!(!live.exists());
    }

    #[test]
    fn a_link_under_a_jails_name_is_not_followed() {
        let tmp = tempfile::tempdir().unwrap();
        let target = jail_in(tmp.path(), "precious", true);
        std::os::unix::fs::symlink(&target, tmp.path().join("mcp-witness-jail-link")).unwrap();
        assert_eq!(sweep(tmp.path()), 0);
        assert!(target.join("stores/copy.db").exists());
    }
}

//! The temporary directories this process made, known while they live.
//!
//! An ordinary end removes each one when its owner drops it. An abrupt end
//! does not drop anything: the binary's signal thread exits from wherever
//! the other threads are. So every directory that must not outlive the
//! process (an observer's private images of a database, a seeded store, a
//! remote target's scratch) is made through [`tempdir`], which enters it in
//! one process-wide registry, and [`remove_all`] removes what is still
//! there just before such an exit.
//!
//! A directory is made and entered under the same lock, and [`remove_all`]
//! closes the registry for good: a directory cannot exist unregistered, nor
//! be made after the removal, however the threads interleave.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

static LIVE: Mutex<Live> = Mutex::new(Live {
    next: 0,
    closed: false,
    dirs: BTreeMap::new(),
});

struct Live {
    next: u64,
    /// Set by [`remove_all`]: the process is exiting, nothing new is made.
    closed: bool,
    dirs: BTreeMap<u64, PathBuf>,
}

fn live() -> MutexGuard<'static, Live> {
    // Every change is one insert or remove: a panic elsewhere cannot leave
    // the registry half-changed.
    LIVE.lock().unwrap_or_else(|e| e.into_inner())
}

/// A temporary directory removed when dropped, or by [`remove_all`] if the
/// process exits first.
#[derive(Debug)]
pub struct ScratchDir {
    // Declared first: the directory is removed before it leaves the
    // registry, so it is never on disk unregistered.
    dir: tempfile::TempDir,
    _entry: Entry,
}

#[derive(Debug)]
struct Entry(u64);

impl Drop for Entry {
    fn drop(&mut self) {
        live().dirs.remove(&self.0);
    }
}

impl ScratchDir {
    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// Makes a directory named `prefix` and random characters under the
/// temporary directory, and registers it. Refused once the process has
/// begun to exit ([`remove_all`]).
pub fn tempdir(prefix: &str) -> io::Result<ScratchDir> {
    let mut live = live();
    if live.closed {
        return Err(io::Error::other(
            "the process is exiting: no temporary directory is made",
        ));
    }
    let dir = tempfile::Builder::new().prefix(prefix).tempdir()?;
    live.next += 1;
    let id = live.next;
    live.dirs.insert(id, dir.path().to_path_buf());
    Ok(ScratchDir {
        dir,
        _entry: Entry(id),
    })
}

/// Removes every registered directory still on disk and refuses new ones:
/// what the binary does just before it exits without unwinding.
pub fn remove_all() {
    let mut live = live();
    live.closed = true;
    for dir in live.dirs.values() {
        // Gone already, or not ours to remove any more: nothing to do.
        let _ = std::fs::remove_dir_all(dir);
    }
    live.dirs.clear();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_is_registered_while_it_lives() {
        // remove_all() is not called here: it would close the registry
        // for every other test of this process.
        let dir = tempdir("witness-scratch-test-").expect("tempdir");
        let path = dir.path().to_path_buf();
        assert!(path.is_dir());
        assert!(live().dirs.values().any(|p| *p == path));
        drop(dir);
        assert!(!path.exists());
        assert!(!live().dirs.values().any(|p| *p == path));
    }
}

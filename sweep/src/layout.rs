//! Where a sweep writes, and how it writes so that a kill never leaves a
//! half-written file that looks finished.
//!
//! ```text
//! OUT/
//!   sweep.json                   mcp-witness.sweep/v1
//!   dataset.jsonl, dataset.csv   one row per target × tool × check
//!   index.html                   the prevalence page (rendered by the binary)
//!   targets/<key>/result.json    mcp-witness.sweep-target/v1, written last
//!   targets/<key>/audit.json     mcp-witness.audit/v1
//!   targets/<key>/report.html    its evidence page (rendered by the binary)
//!   installs/                    the default install cache (--installs)
//!   .work/                       notes naming running attempts' scratch; removed at start
//!   .lock                        held while a sweep writes OUT
//!   .gitignore                   keeps the three above out of version control
//! ```
//!
//! Every file is written to a temporary name beside it and renamed into
//! place, and a target's `result.json` only after its audit: a target with a
//! `result.json` is exactly a target that finished an attempt.

use std::fs::File;
use std::path::{Path, PathBuf};

use rustix::fs::FlockOperation;
use rustix::io::Errno;
use serde::Serialize;
use witness_model::sweep::TargetResult;

use crate::SweepError;

pub const SWEEP_JSON: &str = "sweep.json";
pub const DATASET_JSONL: &str = "dataset.jsonl";
pub const DATASET_CSV: &str = "dataset.csv";
pub const INDEX_HTML: &str = "index.html";
pub const RESULT_JSON: &str = "result.json";
pub const AUDIT_JSON: &str = "audit.json";
pub const REPORT_HTML: &str = "report.html";

/// What a sweep directory keeps out of version control.
const GITIGNORE: &str = "# Written by mcp-witness sweep: its lock, scratch and default install cache.\n.lock\n.work/\ninstalls/\n";

/// The output directory of one sweep (or one shard, or a merge).
#[derive(Clone, Debug)]
pub struct Layout {
    pub out: PathBuf,
}

impl Layout {
    pub fn new(out: &Path) -> Self {
        Self {
            out: out.to_path_buf(),
        }
    }

    pub fn target_dir(&self, key: &str) -> PathBuf {
        self.out.join("targets").join(key)
    }

    pub fn result(&self, key: &str) -> PathBuf {
        self.target_dir(key).join(RESULT_JSON)
    }

    pub fn work(&self) -> PathBuf {
        self.out.join(".work")
    }

    /// The finished attempt's result of `key`, when there is a readable one.
    pub fn read_result(&self, key: &str) -> Option<TargetResult> {
        let text = std::fs::read_to_string(self.result(key)).ok()?;
        serde_json::from_str(&text).ok()
    }

    /// Takes the directory for this process: creates it, refuses it when
    /// another sweep holds it, and clears the scratch a killed run left.
    pub fn claim(&self) -> Result<DirLock, SweepError> {
        if self.out.exists() && !self.out.is_dir() {
            return Err(SweepError::Output {
                path: self.out.clone(),
                message: "not a directory".into(),
            });
        }
        std::fs::create_dir_all(&self.out).map_err(|e| SweepError::Output {
            path: self.out.clone(),
            message: format!("cannot create it: {e}"),
        })?;
        let lock = lock(&self.out.join(".lock"), false).map_err(|e| SweepError::Output {
            path: self.out.clone(),
            message: format!("cannot lock it: {e}"),
        })?;
        let lock = lock.ok_or_else(|| SweepError::Busy(self.out.clone()))?;
        let work = self.work();
        if work.exists() {
            remove_left_scratch(&work);
            std::fs::remove_dir_all(&work).map_err(SweepError::io(&work))?;
        }
        // Results are made to be committed; the lock, the scratch and the
        // default install cache are not.
        let ignore = self.out.join(".gitignore");
        if !ignore.exists() {
            write_atomic(&ignore, GITIGNORE.as_bytes()).map_err(SweepError::io(&ignore))?;
        }
        Ok(DirLock { _file: lock })
    }
}

/// The prefix of every scratch directory.
const SCRATCH_PREFIX: &str = "mcp-witness-sweep-";

/// One attempt's scratch: a directory in the system's temporary directory,
/// like every audit's jail, so that the jail's path — and so what a server
/// prints about it, and how many bytes that is — does not depend on where
/// OUT is. A note under `OUT/.work` names it, so that a rerun after a kill
/// can remove what the killed run left; dropping it removes both.
pub struct Scratch {
    note: PathBuf,
    dir: tempfile::TempDir,
}

impl Scratch {
    pub fn new(layout: &Layout, key: &str) -> std::io::Result<Self> {
        let work = layout.work();
        std::fs::create_dir_all(&work)?;
        let dir = tempfile::Builder::new().prefix(SCRATCH_PREFIX).tempdir()?;
        let note = tempfile::Builder::new()
            .prefix(&format!("{key}-"))
            .suffix(".scratch")
            .tempfile_in(&work)?;
        std::fs::write(note.path(), dir.path().as_os_str().as_encoded_bytes())?;
        let (_, note) = note.keep().map_err(|e| e.error)?;
        Ok(Self { note, dir })
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.note);
    }
}

/// Removes the scratch directories that the notes in `work` name (a killed
/// run's), and only directories that are scratch by their name.
fn remove_left_scratch(work: &Path) {
    for entry in std::fs::read_dir(work).into_iter().flatten().flatten() {
        let Ok(bytes) = std::fs::read(entry.path()) else {
            continue;
        };
        let dir = PathBuf::from(String::from_utf8_lossy(&bytes).into_owned());
        let ours = dir
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with(SCRATCH_PREFIX));
        if ours && dir.is_dir() {
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
}

/// A held `flock`; released when dropped (or when the process dies).
pub struct DirLock {
    _file: File,
}

/// Locks `path` (created if missing). `wait`: block until it is free;
/// otherwise `None` when another holder has it.
pub fn lock(path: &Path, wait: bool) -> std::io::Result<Option<File>> {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)?;
    let operation = if wait {
        FlockOperation::LockExclusive
    } else {
        FlockOperation::NonBlockingLockExclusive
    };
    loop {
        match rustix::fs::flock(&file, operation) {
            Ok(()) => return Ok(Some(file)),
            Err(Errno::INTR) => continue,
            Err(Errno::WOULDBLOCK) => return Ok(None),
            Err(error) => return Err(error.into()),
        }
    }
}

/// Writes `bytes` to `path` through a temporary file beside it, so the path
/// holds the old content or the new, never a part.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut temp = tempfile::Builder::new()
        .prefix(".partial-")
        .tempfile_in(dir)?;
    std::io::Write::write_all(&mut temp, bytes)?;
    temp.as_file().sync_all()?;
    temp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Pretty JSON and a final newline, written atomically.
pub fn write_json(path: &Path, value: &impl Serialize) -> std::io::Result<()> {
    let text = serde_json::to_string_pretty(value).map_err(std::io::Error::other)? + "\n";
    write_atomic(path, text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_claim_on_one_directory_is_refused_until_the_first_ends() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let layout = Layout::new(&dir.path().join("out"));
        let first = layout.claim();
        assert!(first.is_ok());
        assert!(matches!(layout.claim(), Err(SweepError::Busy(_))));
        drop(first);
        assert!(layout.claim().is_ok());
    }

    #[test]
    fn a_claim_clears_the_scratch_a_killed_run_left() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let layout = Layout::new(dir.path());
        let leftover = layout.work().join("attempt/tmp/file");
        std::fs::create_dir_all(leftover.parent().unwrap_or(dir.path()))
            .unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(&leftover, "x").unwrap_or_else(|e| panic!("{e}"));
        let _lock = layout.claim().unwrap_or_else(|e| panic!("{e}"));
        assert!(!layout.work().exists());
    }

    #[test]
    fn atomic_writes_leave_no_temporary_files() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("a/b.json");
        write_json(&path, &serde_json::json!({"x": 1})).unwrap_or_else(|e| panic!("{e}"));
        write_json(&path, &serde_json::json!({"x": 2})).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            std::fs::read_to_string(&path).unwrap_or_default(),
            "{\n  \"x\": 2\n}\n"
        );
        let names: Vec<_> = std::fs::read_dir(dir.path().join("a"))
            .unwrap_or_else(|e| panic!("{e}"))
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }
}

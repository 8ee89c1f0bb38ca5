//! The git observer: a repository as git sees it, read out of band.
//!
//! A repository observed as a plain directory misleads twice: `git status`
//! rewrites `.git/index` to refresh its stat cache (no content changed), and
//! a commit rewrites `refs/heads/main` whole (nothing was lost). This
//! observer reads the repository through libgit2 instead, never through the
//! server, and never changes it (no index refresh, no lock file, no object
//! written, no gc). Its objects:
//!
//! | id | state | a change |
//! |---|---|---|
//! | `HEAD` | the branch it names, or the commit when detached | switching branches destroys nothing by itself |
//! | `ref/<name>` (`ref/refs/heads/main`) | the commit or object it points to | created; deleted; fast-forward (additive); non-fast-forward (overwrite) |
//! | `commit/<id>` | only in a delta: a commit reachable before and from no ref, HEAD or stash after | delete: it may be lost |
//! | `stash/<commit>` | one stash entry | pushed (create), dropped or popped (delete) |
//! | `state/<NAME>` | `MERGE_HEAD`, `ORIG_HEAD`, … and rebase in progress | whole-file |
//! | `index/<path>` (`index/<path>#<stage>` in a conflict) | blob id and mode (`<blob> 100644`), not the stat cache | staging and unstaging keep the content in the object database |
//! | `worktree/<path>` | mode and blob id of the file's bytes, untracked included | an overwrite or delete is destructive unless the object database keeps the old content |
//! | `ignored/<path>` | same, for files the ignore rules exclude | same |
//! | `gitdir/<path>` | `config`, `description`, `shallow`, `hooks/*`, `info/*` | whole-file |
//! | `odb/objects` | counts of loose and packed objects | more is additive, fewer is an overwrite |
//!
//! What it cannot see is said in each snapshot's warnings: what active hooks
//! do outside the repository, the inside of submodules and nested
//! repositories (never followed). Reflogs (other than the stash's), the
//! stat cache and the index's extensions are not objects: they change with
//! every honest operation and hold no content of their own.
//!
//! On Linux the observer watches the repository's directories with inotify;
//! when no event arrived since its last snapshot, nothing was written, and
//! it answers that snapshot again without reading a file. Content still
//! decides change: an event only makes the next snapshot read everything.
//! Writes made only through a shared memory mapping raise no event; use
//! [`GitObserver::with_events`]`(false)` where that matters.

mod classify;
mod read;
mod watch;

use std::path::{Path, PathBuf};

use witness_observers::{Delta, Observation, ObserveError, Observer, Snapshot};

pub use read::read_repository;

/// Observes one git repository (its working directory or its `.git`).
pub struct GitObserver {
    path: PathBuf,
    events: bool,
    watch: Option<watch::Watch>,
    /// The last snapshot read, answered again while nothing was written.
    last: Option<Snapshot>,
    /// What the previous [`Observer::observe`] saw: the reference the next
    /// one's changes are classified against.
    reference: Option<Snapshot>,
}

impl GitObserver {
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self {
            path: path.into(),
            events: true,
            watch: None,
            last: None,
            reference: None,
        }
    }

    /// Whether file-system events may spare re-reading an untouched
    /// repository (the default). Off, every snapshot reads everything.
    pub fn with_events(mut self, events: bool) -> Self {
        self.events = events;
        self
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Reads everything, watching each directory before reading it, so a
    /// write during the read raises an event for the next snapshot.
    fn read_all(&mut self) -> Result<Snapshot, ObserveError> {
        let watch = if self.events {
            if self.watch.is_none() {
                self.watch = watch::Watch::start();
            }
            self.watch.as_mut()
        } else {
            None
        };
        read::read_watched(&self.path, watch)
    }
}

impl GitObserver {
    /// Reads the repository as it is now, without changing it. While the
    /// watch saw no write since the last read, that read is answered again.
    pub fn snapshot(&mut self) -> Result<Snapshot, ObserveError> {
        if let (Some(watch), Some(last)) = (self.watch.as_mut(), self.last.as_ref())
            && watch.quiet()
        {
            return Ok(last.clone());
        }
        // Whatever happens next, the previous snapshot no longer stands in.
        self.last = None;
        let snapshot = self.read_all()?;
        if self.watch.as_ref().is_some_and(watch::Watch::complete) {
            self.last = Some(snapshot.clone());
        }
        Ok(snapshot)
    }

    /// The changes from `before` to `after`, classed by the repository's
    /// history: a branch moved forward loses nothing, one moved back may.
    pub fn diff(&self, before: &Snapshot, after: &Snapshot) -> Delta {
        classify::classify(&self.path, before, after)
    }
}

impl Observer for GitObserver {
    fn kind(&self) -> &'static str {
        "git"
    }

    // Activity stays `Unknown` (the trait's default): the watch's events
    // are consumed by `snapshot` to decide whether a read can be spared,
    // and asking them twice would let one caller hide a write from the other.

    fn observe(&mut self, changes: bool) -> Result<Observation, ObserveError> {
        let now = self.snapshot()?;
        let delta = match (&self.reference, changes) {
            (_, false) => Delta::default(),
            (Some(before), true) => self.diff(before, &now),
            (None, true) => self.diff(&Snapshot::default(), &now),
        };
        let warnings = now.warnings.clone();
        self.reference = Some(now);
        Ok(Observation {
            delta,
            warnings,
            rows: Vec::new(),
        })
    }

    fn present(&mut self, visit: &mut dyn FnMut(&str)) -> Result<(), ObserveError> {
        if let Some(reference) = &self.reference {
            reference.objects.keys().for_each(|id| visit(id));
        }
        Ok(())
    }
}

/// Why the repository could not be read, as the observers' error.
pub(crate) fn unusable(path: &Path, reason: impl std::fmt::Display) -> ObserveError {
    ObserveError::Unusable {
        path: path.to_path_buf(),
        reason: reason.to_string(),
    }
}

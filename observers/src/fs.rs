//! Filesystem observer.
//!
//! Watches a directory tree (typically the jail a filesystem server may write
//! in) and reports one object per entry:
//!
//! - `file/<path>`: blake3 of the content, no field breakdown (a file changes
//!   as a whole, so any change to it is an overwrite).
//! - `dir/<path>`: the directory's existence; its children are objects of their
//!   own, so a directory never "changes", it appears or disappears.
//! - `link/<path>`: blake3 of the link's target text. Links are never followed,
//!   so a link that points outside the root does not drag the outside in.
//! - `special/<path>`: a FIFO, socket or device node, digested by its kind.
//!   Such a node is never opened: opening a FIFO blocks until someone writes.
//!
//! `<path>` is relative to the root, with `/` between components. The root
//! itself is not an object. A move shows up as a delete of every object under
//! the source and a create of every object under the destination, which is
//! exactly what a tool that moved something did to the store.
//!
//! Names that are not valid UTF-8 are rendered so that distinct names always
//! give distinct ids and the same name always gives the same id: each byte of
//! an invalid sequence becomes `\xNN`, a control character becomes `\u{NN}`,
//! and a literal backslash becomes `\\` (otherwise a file really named `a\xff`
//! would collide with the byte 0xff).
//!
//! # What an observation costs
//!
//! The first observation lists the tree and hashes every file (on two
//! threads when there are many). After that, a file is hashed again only
//! when something says it may have changed:
//!
//! - **Events.** Every directory and every singly-linked file carries an
//!   inotify watch ([`crate::watch`]), added *before* the entry is read, so
//!   any later write, rename, delete or attribute change names it. While the
//!   watcher is healthy an observation reads only what events named, plus
//!   the stamp of every directory (a cross-check that catches an entry come
//!   or gone without an event) and of every file that could not be watched
//!   (a file with several hard links is one: a write through its other name
//!   would not reach this tree's watches).
//! - **Stamps**, when events are not available or may have been lost (a full
//!   queue): every entry is `stat`ed and a file is hashed again unless its
//!   device, inode, size, mtime and ctime are exactly as cached *and* its
//!   times lie clearly before the moment the digest was taken
//!   ([`crate::stamp`]). That rule (git's) catches a same-size rewrite in the
//!   same clock tick.
//!
//! What neither catches is a write through a shared writable memory mapping
//! to a page already dirty, which moves no time and raises no event; only
//! re-reading every byte would see it. No server we audit writes its store
//! that way.
//!
//! A file larger than the budget's `max_bytes` is not hashed: it is recorded
//! as `too-large:<size>` with a warning, so a server cannot make one
//! observation read a 32 GiB sparse file. The budget's time limit ends an
//! observation that runs over with [`ObserveError::OutOfTime`].
//!
//! Two readings see past the bytes to what they mean:
//!
//! - a file that grew since the last observation, and whose first bytes are
//!   the old content, was appended to: the digest of its first old-length
//!   bytes is taken in the same pass as the whole, so an appended log is an
//!   additive update, not an overwrite;
//! - a git index (`.git/index`) is digested by what it stages, not by its
//!   stat cache ([`crate::git_index`]): the refresh git makes on first touch
//!   of a copied repository is not a change.
//!
//! Reading is not perfectly invisible: files are opened read-only, so bytes,
//! inodes and mtimes never move, but the kernel may update access times
//! (`relatime`). Avoiding that needs `O_NOATIME`, which only the file's owner
//! may use and which std does not expose.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ffi::OsStr;
use std::fs::{self, FileType};
use std::io::{self, Read};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use crate::content::{self, Kind, View};
use crate::sqlite::SqliteObserver;
use crate::stamp::{Stamp, now_ns};
use crate::watch::{Fired, Watcher};
use crate::{
    Activity, Budget, Change, Delta, Digest, ObjectState, Observation, ObserveError, Observer, Op,
    Snapshot,
};

/// The digest recorded for an entry that exists but could not be read. Not a
/// hex string, so it can never equal the digest of any content, and a report
/// reader sees at once what it means.
pub const UNREADABLE_DIGEST: &str = "unreadable";

/// Read buffer for hashing: big enough that blake3 sees whole chunks.
const HASH_BUFFER: usize = 64 * 1024;

/// Below this many files to hash, a second thread costs more than it saves.
const PARALLEL_FROM: usize = 64;

/// What one entry was seen to hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Seen {
    Hash(Digest),
    Unreadable,
    /// A file over the byte budget, known by its size only.
    TooLarge,
}

#[derive(Clone, Debug)]
struct Entry {
    /// Relative to the root.
    rel: PathBuf,
    seen: Seen,
    size: u64,
    /// For files and directories: what the stamp was when last read.
    stamp: Option<Stamp>,
    /// Wall clock (ns) before that stamp was taken.
    taken_at: i128,
    /// The watch on this entry, when it has one.
    key: Option<u32>,
    /// Whether this content begins with the content the entry had before
    /// it was last hashed (an append), when that was checked.
    extends_previous: bool,
    /// The objects inside the file, when content views are on and it holds
    /// content read as objects ([`crate::content`]).
    view: Option<Arc<View>>,
}

impl Entry {
    fn digest_text(&self) -> String {
        match self.seen {
            Seen::Hash(d) => d.hex(),
            Seen::Unreadable => UNREADABLE_DIGEST.to_owned(),
            Seen::TooLarge => format!("too-large:{}", self.size),
        }
    }

    fn same_content(&self, other: &Entry) -> bool {
        self.seen == other.seen && (self.seen != Seen::TooLarge || self.size == other.size)
    }
}

/// Observes a directory tree entry by entry, content-addressed.
pub struct FsObserver {
    root: PathBuf,
    excluded: Vec<PathBuf>,
    budget: Budget,
    entries: BTreeMap<String, Entry>,
    /// Warnings that hold now, by the id (or directory) they are about.
    warnings: BTreeMap<String, String>,
    watcher: Option<Watcher>,
    use_events: bool,
    keys: HashMap<u32, PathBuf>,
    next_key: u32,
    root_key: Option<u32>,
    /// Files read by stamp on every observation (no watch could hold them).
    unwatched: BTreeSet<String>,
    /// Whether a full reading stands as the reference.
    established: bool,
    /// Events drained while asking for [`Observer::activity`], kept for the
    /// next observation.
    pending: Vec<Fired>,
    /// Files actually hashed by the last observation (the rest came from the
    /// cache); lets tests prove the cache works without timing anything.
    hashed: usize,
    /// Whether files are read for what they hold ([`Self::with_content_views`]).
    views: bool,
    /// The observer of each database file in the tree, by its `file/` id.
    databases: BTreeMap<String, SqliteObserver>,
}

impl std::fmt::Debug for FsObserver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FsObserver")
            .field("root", &self.root)
            .field("excluded", &self.excluded)
            .field("entries", &self.entries.len())
            .field("watcher", &self.watcher)
            .finish()
    }
}

impl FsObserver {
    /// The root is remembered, not opened: it may not exist yet, and a missing
    /// root is simply an empty store. A root that is itself a symlink is
    /// followed (naming it was the caller's choice); no link below it is.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self {
            root: root.into(),
            excluded: Vec::new(),
            budget: Budget::DEFAULT,
            entries: BTreeMap::new(),
            warnings: BTreeMap::new(),
            watcher: None,
            use_events: true,
            keys: HashMap::new(),
            next_key: 0,
            root_key: None,
            unwatched: BTreeSet::new(),
            established: false,
            pending: Vec::new(),
            hashed: 0,
            views: false,
            databases: BTreeMap::new(),
        }
    }

    /// Reads each file for what it holds ([`crate::content`]): a JSON
    /// document, JSON lines, a SQLite database, a spreadsheet or a markdown
    /// file is observed as the objects inside it, so a server that rewrites
    /// its one file whole is seen to change only the records it changed. What a directory store needs; the
    /// jail-wide observer, which charges any change at all, goes without.
    pub fn with_content_views(mut self) -> Self {
        self.views = true;
        self
    }

    /// Leaves a sub-tree (or a single entry) out of every snapshot, because
    /// another observer watches it more finely (a SQLite database or a JSONL
    /// store inside the jail) and counting its changes twice would blur which
    /// object a tool touched.
    ///
    /// The path is relative to the root; an absolute path under the root is
    /// accepted too. `.` components are ignored. The excluded entry itself is
    /// absent from snapshots, as is everything below it. A path that leaves the
    /// root (`..`, absolute elsewhere) excludes nothing.
    pub fn exclude(mut self, path: impl AsRef<Path>) -> Self {
        let path = path.as_ref();
        let relative = path.strip_prefix(&self.root).unwrap_or(path);
        let normalized: PathBuf = relative
            .components()
            .filter(|c| !matches!(c, Component::CurDir))
            .collect();
        self.excluded.push(normalized);
        self
    }

    /// Sets how much one observation may read and how long it may take.
    pub fn with_budget(mut self, budget: Budget) -> Self {
        self.budget = budget;
        self
    }

    /// Reads every stamp on every observation instead of following events
    /// (for measuring, and for tests of the stamp rule).
    pub fn without_events(mut self) -> Self {
        self.use_events = false;
        self
    }

    /// The observed root, for reports and error messages.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The excluded sub-trees, relative to the root, as normalized.
    pub fn excluded(&self) -> &[PathBuf] {
        &self.excluded
    }

    /// Whether the last observation followed events rather than reading
    /// every stamp.
    pub fn watching(&self) -> bool {
        self.watcher.as_ref().is_some_and(Watcher::healthy)
    }

    /// Observes and returns the whole tree as a [`Snapshot`] (for tests and
    /// small stores; an audit diffs with [`Observer::observe`]).
    pub fn snapshot(&mut self) -> Result<Snapshot, ObserveError> {
        let observation = self.observe(false)?;
        let objects = self
            .entries
            .iter()
            .flat_map(|(id, e)| {
                let state = ObjectState {
                    digest: e.digest_text(),
                    size: e.size,
                    fields: BTreeMap::new(),
                    head: None,
                };
                let inner = e.view.iter().flat_map(move |v| {
                    let prefix = inner_prefix(v.kind, id);
                    v.objects
                        .iter()
                        .map(move |(i, s)| (format!("{prefix}{i}"), s.clone()))
                });
                std::iter::once((id.clone(), state)).chain(inner)
            })
            .collect();
        Ok(Snapshot {
            objects,
            warnings: observation.warnings,
        })
    }

    fn is_excluded(&self, rel: &Path) -> bool {
        self.excluded.iter().any(|x| rel.starts_with(x))
    }

    /// Everything read again from the root: the first observation, and any
    /// after events may have been lost.
    fn full(&mut self, deadline: Instant) -> Result<BTreeMap<String, Entry>, ObserveError> {
        let old = std::mem::take(&mut self.entries);
        self.warnings.clear();
        self.unwatched.clear();
        // A fresh watcher: every watch below is added before its entry is
        // read, so a write after the read is an event.
        self.watcher = if self.use_events {
            Watcher::new()
        } else {
            None
        };
        self.keys.clear();
        self.root_key = None;
        self.pending.clear();
        let mut jobs = Vec::new();
        if self.root_is_dir()? {
            self.watch_dir(Path::new(""));
            self.list_into(Path::new(""), &old, &mut jobs, deadline)?;
        }
        self.run_jobs(jobs, deadline)?;
        self.established = true;
        Ok(old)
    }

    fn root_is_dir(&self) -> Result<bool, ObserveError> {
        match fs::metadata(&self.root) {
            Ok(meta) if meta.is_dir() => Ok(true),
            Ok(_) => Err(ObserveError::Unusable {
                path: self.root.clone(),
                reason: "not a directory".into(),
            }),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(source) => Err(ObserveError::Io {
                path: self.root.clone(),
                source,
            }),
        }
    }

    /// Lists `dir` (relative) and everything below it into the entries,
    /// queueing the files whose cached digest cannot be reused.
    fn list_into(
        &mut self,
        dir: &Path,
        old: &BTreeMap<String, Entry>,
        jobs: &mut Vec<Job>,
        deadline: Instant,
    ) -> Result<(), ObserveError> {
        if Instant::now() > deadline {
            return Err(self.out_of_time());
        }
        let names = match self.list(dir) {
            Ok(names) => names,
            Err(e) => {
                let what = dir_label(dir);
                self.warnings
                    .insert(what.clone(), format!("{what}: cannot list: {e}"));
                return Ok(());
            }
        };
        for (name, file_type) in names {
            let rel = dir.join(&name);
            if self.is_excluded(&rel) {
                continue;
            }
            if file_type.is_dir() {
                let key = self.watch_dir(&rel);
                self.add_dir(&rel, key);
                self.list_into(&rel, old, jobs, deadline)?;
            } else {
                self.read_entry(&rel, file_type, old, jobs);
            }
        }
        Ok(())
    }

    /// The entries of `dir`, sorted by name (byte order), with their types.
    fn list(&self, dir: &Path) -> io::Result<Vec<(std::ffi::OsString, FileType)>> {
        let mut names = Vec::new();
        for item in fs::read_dir(self.root.join(dir))? {
            let item = item?;
            names.push((item.file_name(), item.file_type()?));
        }
        names.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(names)
    }

    fn add_dir(&mut self, rel: &Path, key: Option<u32>) {
        let stamp = Stamp::read(&self.root.join(rel)).ok().flatten();
        self.entries.insert(
            format!("dir/{}", render_path(rel)),
            Entry {
                rel: rel.to_path_buf(),
                seen: Seen::Hash(Digest::of(b"dir")),
                size: 3,
                stamp,
                taken_at: now_ns(),
                key,
                extends_previous: false,
                view: None,
            },
        );
    }

    /// A link, special node or file found by listing: links and nodes are
    /// read at once, files queued unless the cache can answer.
    fn read_entry(
        &mut self,
        rel: &Path,
        file_type: FileType,
        old: &BTreeMap<String, Entry>,
        jobs: &mut Vec<Job>,
    ) {
        let name = render_path(rel);
        if file_type.is_symlink() {
            self.read_link(rel, format!("link/{name}"));
        } else if file_type.is_file() {
            if self.views && self.is_database_companion(rel) {
                // Part of the database beside it, which its observer reads.
                return;
            }
            let id = format!("file/{name}");
            let path = self.root.join(rel);
            let taken_at = now_ns();
            let listed = match fs::symlink_metadata(&path) {
                Ok(meta) => Stamp::of(&meta),
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    self.warnings
                        .insert(id.clone(), format!("{id}: vanished while being read"));
                    return;
                }
                Err(_) => None,
            };
            let key = self.watch_file(rel, &id, listed);
            let before = old.get(&id).and_then(|e| match e.seen {
                Seen::Hash(digest) => Some((e.size, digest)),
                _ => None,
            });
            let previous = old.get(&id).and_then(|e| e.view.clone());
            if let (Some(cached), Some(stamp)) = (old.get(&id), listed)
                && cached.stamp == Some(stamp)
                && stamp.settled_at(cached.taken_at)
            {
                let mut entry = cached.clone();
                entry.key = key;
                self.entries.insert(id, entry);
                return;
            }
            jobs.push(Job {
                id,
                rel: rel.to_path_buf(),
                key,
                taken_at,
                listed,
                before,
                previous,
            });
        } else {
            self.entries.insert(
                format!("special/{name}"),
                Entry {
                    rel: rel.to_path_buf(),
                    seen: Seen::Hash(Digest::of(special_kind(&file_type).as_bytes())),
                    size: special_kind(&file_type).len() as u64,
                    stamp: None,
                    taken_at: 0,
                    key: None,
                    extends_previous: false,
                    view: None,
                },
            );
        }
    }

    fn read_link(&mut self, rel: &Path, id: String) {
        match fs::read_link(self.root.join(rel)) {
            Ok(target) => {
                let bytes = os_bytes(target.as_os_str());
                self.entries.insert(
                    id,
                    Entry {
                        rel: rel.to_path_buf(),
                        seen: Seen::Hash(Digest::of(&bytes)),
                        size: bytes.len() as u64,
                        stamp: None,
                        taken_at: 0,
                        key: None,
                        extends_previous: false,
                        view: None,
                    },
                );
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                self.warnings
                    .insert(id.clone(), format!("{id}: vanished while being read"));
            }
            Err(e) => {
                self.warnings
                    .insert(id.clone(), format!("{id}: unreadable: {e}"));
                self.entries.insert(id, unreadable(rel));
            }
        }
    }

    fn watch_dir(&mut self, rel: &Path) -> Option<u32> {
        if let Some(key) = self.key_of_watched(rel) {
            return Some(key);
        }
        let key = self.next_key;
        let path = self.root.join(rel);
        let watcher = self.watcher.as_mut()?;
        if watcher.add(&path, key).is_ok() {
            self.keys.insert(key, rel.to_path_buf());
            self.next_key = self.next_key.wrapping_add(1);
            if rel.as_os_str().is_empty() {
                self.root_key = Some(key);
            }
            Some(key)
        } else {
            // A directory without a watch would hide its entries' changes.
            watcher.mark_unhealthy();
            None
        }
    }

    fn key_of_watched(&self, rel: &Path) -> Option<u32> {
        if rel.as_os_str().is_empty() {
            return self.root_key;
        }
        self.entries
            .get(&format!("dir/{}", render_path(rel)))
            .and_then(|e| e.key)
    }

    /// Watches a singly-linked file; anything else is read by stamp.
    fn watch_file(&mut self, rel: &Path, id: &str, stamp: Option<Stamp>) -> Option<u32> {
        let single = stamp.is_some_and(|s| s.nlink == 1);
        let key = self.next_key;
        let watched = single
            && self
                .watcher
                .as_mut()
                .is_some_and(|w| w.add(&self.root.join(rel), key).is_ok());
        if watched {
            self.keys.insert(key, rel.to_path_buf());
            self.next_key = self.next_key.wrapping_add(1);
            Some(key)
        } else {
            self.unwatched.insert(id.to_owned());
            None
        }
    }

    /// Hashes the queued files, on two threads when there are many.
    fn run_jobs(&mut self, jobs: Vec<Job>, deadline: Instant) -> Result<(), ObserveError> {
        let max_bytes = self.budget.max_bytes;
        let root = self.root.clone();
        let views = self.views;
        let hash = |job: &Job| {
            let path = root.join(&job.rel);
            let relative = job.id.strip_prefix("file/").unwrap_or(&job.id);
            if crate::git_index::is_index_path(relative) {
                return (hash_index(&path, job.listed, max_bytes, deadline), None);
            }
            let prefix = job.before.map(|(size, _)| size);
            if views {
                let previous = job.previous.as_deref();
                return hash_and_read(&path, job.listed, prefix, max_bytes, deadline, previous);
            }
            (
                hash_file(&path, job.listed, prefix, max_bytes, deadline),
                None,
            )
        };
        let outcomes: Vec<(FileOutcome, Option<Viewed>)> = if jobs.len() >= PARALLEL_FROM {
            let half = jobs.len() / 2;
            let (a, b) = jobs.split_at(half);
            std::thread::scope(|scope| {
                let other = scope.spawn(|| b.iter().map(hash).collect::<Vec<_>>());
                let mut first: Vec<_> = a.iter().map(hash).collect();
                match other.join() {
                    Ok(rest) => first.extend(rest),
                    Err(_) => first.extend(b.iter().map(hash)),
                }
                first
            })
        } else {
            jobs.iter().map(hash).collect()
        };
        for (job, (outcome, viewed)) in jobs.into_iter().zip(outcomes) {
            let id = job.id.clone();
            self.apply(job, outcome)?;
            match viewed {
                Some(Viewed::View(view)) => {
                    if let Some(e) = self.entries.get_mut(&id) {
                        if !view.warnings.is_empty() {
                            let listed = view.warnings.join("; ");
                            self.warnings.insert(id.clone(), format!("{id}: {listed}"));
                        }
                        e.view = Some(Arc::new(view));
                    }
                }
                Some(Viewed::Fallback(why)) => {
                    self.warnings
                        .insert(id.clone(), format!("{id}: {why}; observed as a file"));
                }
                None => {}
            }
        }
        Ok(())
    }

    /// Whether `rel` is a `-wal`, `-shm` or `-journal` file beside a SQLite
    /// database: read by the database's observer as part of it, never a
    /// change of its own (a plain read makes them appear). Decided by the
    /// database's header, read without following a link or blocking.
    fn is_database_companion(&self, rel: &Path) -> bool {
        let Some(name) = rel.file_name().and_then(OsStr::to_str) else {
            return false;
        };
        let Some(base) = content::SQLITE_COMPANIONS
            .iter()
            .find_map(|suffix| name.strip_suffix(suffix))
        else {
            return false;
        };
        let Ok((file, _, _)) = open_listed(&self.root.join(rel.with_file_name(base)), None) else {
            return false;
        };
        let mut head = Vec::with_capacity(content::SQLITE_MAGIC.len());
        file.take(content::SQLITE_MAGIC.len() as u64)
            .read_to_end(&mut head)
            .is_ok()
            && content::is_sqlite(&head)
    }

    /// Observes every database file the tree holds, through its own
    /// observer, and adds its changes as `sqlite/<path>#<row id>`. A file
    /// that stopped being a database (or went away) takes its objects with it.
    fn observe_databases(
        &mut self,
        changes: bool,
        out: &mut Vec<Change>,
    ) -> Result<(), ObserveError> {
        let mut live: BTreeMap<String, PathBuf> = BTreeMap::new();
        for (id, e) in self.entries.range("file/".to_owned().."file0".to_owned()) {
            if e.view.as_ref().is_some_and(|v| v.kind == Kind::Sqlite) {
                live.insert(id.clone(), e.rel.clone());
            }
        }
        for (id, rel) in &live {
            if !self.databases.contains_key(id) {
                let observer = SqliteObserver::new(self.root.join(rel)).with_budget(self.budget);
                self.databases.insert(id.clone(), observer);
            }
        }
        let ids: Vec<String> = self.databases.keys().cloned().collect();
        for id in ids {
            if !live.contains_key(&id) {
                if let Some(mut gone) = self.databases.remove(&id)
                    && changes
                {
                    let prefix = inner_prefix(Kind::Sqlite, &id);
                    gone.present(&mut |object| {
                        out.push(Change {
                            object: format!("{prefix}{object}"),
                            op: Op::Delete,
                            overwrite: None,
                            before: None,
                            after: None,
                        })
                    })?;
                }
                continue;
            }
            let prefix = inner_prefix(Kind::Sqlite, &id);
            let Some(observer) = self.databases.get_mut(&id) else {
                continue;
            };
            match observer.observe(changes) {
                Ok(seen) => {
                    for mut change in seen.delta.changes {
                        change.object = format!("{prefix}{}", change.object);
                        out.push(change);
                    }
                    let key = prefix.clone();
                    if seen.warnings.is_empty() {
                        self.warnings.remove(&key);
                    } else {
                        let listed = seen.warnings.join("; ");
                        self.warnings.insert(key, format!("{id}: {listed}"));
                    }
                }
                Err(e) => {
                    // A file that begins like a database but does not read as
                    // one is seen as the file it is; its rows are not.
                    self.databases.remove(&id);
                    if let Some(entry) = self.entries.get_mut(&id) {
                        entry.view = None;
                    }
                    self.warnings.insert(
                        prefix,
                        format!(
                            "{id}: not readable as a SQLite database ({e}); observed as a file"
                        ),
                    );
                }
            }
        }
        Ok(())
    }

    fn apply(&mut self, job: Job, outcome: FileOutcome) -> Result<(), ObserveError> {
        let Job {
            id,
            rel,
            key,
            taken_at,
            before,
            ..
        } = job;
        self.warnings.remove(&id);
        let entry = |seen, size, stamp| Entry {
            rel: rel.clone(),
            seen,
            size,
            stamp,
            taken_at,
            key,
            extends_previous: false,
            view: None,
        };
        match outcome {
            FileOutcome::Hashed {
                digest,
                size,
                stamp,
                prefix,
            } => {
                self.hashed += 1;
                let mut hashed = entry(Seen::Hash(digest), size, stamp);
                hashed.extends_previous =
                    prefix.is_some() && prefix == before.map(|(_, digest)| digest);
                self.entries.insert(id, hashed);
            }
            FileOutcome::TooLarge { size, stamp } => {
                self.warnings.insert(
                    id.clone(),
                    format!(
                        "{id}: {size} bytes, more than the observation budget of {} bytes (--max-observe-bytes): not hashed, so only a change of its size is seen",
                        self.budget.max_bytes
                    ),
                );
                self.entries.insert(id, entry(Seen::TooLarge, size, stamp));
            }
            FileOutcome::Vanished => {
                self.entries.remove(&id);
                self.warnings
                    .insert(id.clone(), format!("{id}: vanished while being read"));
            }
            FileOutcome::Unreadable(reason) => {
                self.warnings
                    .insert(id.clone(), format!("{id}: unreadable: {reason}"));
                self.entries.insert(id, entry(Seen::Unreadable, 0, None));
            }
            FileOutcome::OutOfTime => return Err(self.out_of_time()),
        }
        Ok(())
    }

    fn out_of_time(&self) -> ObserveError {
        ObserveError::OutOfTime {
            path: self.root.clone(),
            budget: self.budget.max_time,
        }
    }

    /// Reads only what events named (and what no watch covers), once a full
    /// reading stands and the watcher has lost nothing. `None` when that
    /// cannot be done and a full reading is needed.
    fn follow_events(&mut self, deadline: Instant) -> Option<Result<Vec<Change>, ObserveError>> {
        let watcher = self.watcher.as_mut()?;
        let mut fired = std::mem::take(&mut self.pending);
        watcher.drain(&mut fired);
        if !self.established || !watcher.healthy() {
            return None;
        }
        let mut dirty: BTreeSet<PathBuf> = BTreeSet::new();
        for f in fired {
            let Some(base) = self.keys.get(&f.key) else {
                continue;
            };
            match f.name {
                Some(name) => dirty.insert(base.join(name)),
                None => dirty.insert(base.clone()),
            };
        }
        for id in &self.unwatched {
            if let Some(e) = self.entries.get(id) {
                dirty.insert(e.rel.clone());
            }
        }
        if !self.directories_agree(&dirty) {
            return None;
        }
        Some(self.reread(dirty, deadline))
    }

    /// The cross-check of events against metadata: every directory whose
    /// stamp moved must have had an entry, or itself, named by an event.
    /// Stamps that moved for a reason are taken as the new reference.
    fn directories_agree(&mut self, dirty: &BTreeSet<PathBuf>) -> bool {
        let mut moved = Vec::new();
        for (id, e) in self.entries.range("dir/".to_owned().."dir0".to_owned()) {
            let now = Stamp::read(&self.root.join(&e.rel)).ok().flatten();
            if now == e.stamp {
                continue;
            }
            let explained =
                dirty.contains(&e.rel) || dirty.iter().any(|d| d.parent() == Some(e.rel.as_path()));
            if !explained {
                return false;
            }
            moved.push((id.clone(), now));
        }
        for (id, stamp) in moved {
            if let Some(e) = self.entries.get_mut(&id) {
                e.stamp = stamp;
            }
        }
        true
    }

    /// Re-reads each dirty path (a directory with everything below it),
    /// giving the changes in id order.
    fn reread(
        &mut self,
        dirty: BTreeSet<PathBuf>,
        deadline: Instant,
    ) -> Result<Vec<Change>, ObserveError> {
        // A path below a dirty path is re-read with it.
        let mut roots: Vec<PathBuf> = Vec::new();
        for rel in dirty {
            if rel.as_os_str().is_empty() || self.is_excluded(&rel) {
                continue;
            }
            if roots.last().is_some_and(|r| rel.starts_with(r)) {
                continue;
            }
            roots.push(rel);
        }
        let mut before: BTreeMap<String, Entry> = BTreeMap::new();
        let mut jobs = Vec::new();
        for rel in &roots {
            // Whatever stood at this path, and below it, may be replaced; it
            // stays the cache for what turns out unchanged.
            for id in self.ids_at(rel) {
                if let Some(old) = self.entries.remove(&id) {
                    if let Some(key) = old.key {
                        self.keys.remove(&key);
                        if let Some(w) = &mut self.watcher {
                            w.remove(key);
                        }
                    }
                    before.insert(id.clone(), old);
                }
                self.warnings.remove(&id);
                self.unwatched.remove(&id);
            }
        }
        for rel in &roots {
            let path = self.root.join(rel);
            match fs::symlink_metadata(&path) {
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => {
                    let id = format!("file/{}", render_path(rel));
                    self.warnings
                        .insert(id.clone(), format!("{id}: unreadable: {e}"));
                }
                Ok(meta) if meta.is_dir() => {
                    let key = self.watch_dir(rel);
                    self.add_dir(rel, key);
                    self.list_into(rel, &before, &mut jobs, deadline)?;
                }
                Ok(meta) => self.read_entry(rel, meta.file_type(), &before, &mut jobs),
            }
        }
        self.run_jobs(jobs, deadline)?;
        let mut touched: BTreeSet<String> = before.keys().cloned().collect();
        for rel in &roots {
            touched.extend(self.ids_at(rel));
        }
        let mut changes = Vec::new();
        for id in touched {
            changes_of(&id, before.get(&id), self.entries.get(&id), &mut changes);
        }
        Ok(changes)
    }

    /// Ids at `rel` or below it, of every kind.
    fn ids_at(&self, rel: &Path) -> Vec<String> {
        let name = render_path(rel);
        let mut ids = Vec::new();
        for kind in ["dir", "file", "link", "special"] {
            let exact = format!("{kind}/{name}");
            if self.entries.contains_key(&exact) {
                ids.push(exact.clone());
            }
            let below = format!("{exact}/");
            let end = format!("{exact}0");
            ids.extend(self.entries.range(below..end).map(|(id, _)| id.clone()));
        }
        ids
    }
}

/// One file to hash.
struct Job {
    id: String,
    rel: PathBuf,
    key: Option<u32>,
    taken_at: i128,
    /// The stamp when listed: what is opened must be this very file.
    listed: Option<Stamp>,
    /// Size and digest of what the file held before, to tell whether the
    /// new content begins with it.
    before: Option<(u64, Digest)>,
    /// The objects it held before, so JSON lines keep their keys.
    previous: Option<Arc<View>>,
}

impl Observer for FsObserver {
    fn kind(&self) -> &'static str {
        "fs"
    }

    fn observe(&mut self, changes: bool) -> Result<Observation, ObserveError> {
        let deadline = self.budget.deadline();
        self.hashed = 0;
        let mut delta = match self.follow_events(deadline) {
            Some(Ok(found)) => Delta { changes: found },
            Some(Err(e)) => {
                self.established = false;
                return Err(e);
            }
            None => {
                let old = match self.full(deadline) {
                    Ok(old) => old,
                    Err(e) => {
                        self.established = false;
                        return Err(e);
                    }
                };
                if changes {
                    merge_diff(&old, &self.entries)
                } else {
                    Delta::default()
                }
            }
        };
        if self.views {
            self.observe_databases(changes, &mut delta.changes)?;
            // Objects inside files sort among the files' own ids.
            delta.changes.sort_by(|a, b| a.object.cmp(&b.object));
        }
        Ok(Observation {
            delta: if changes { delta } else { Delta::default() },
            warnings: self.warnings.values().cloned().collect(),
            rows: Vec::new(),
        })
    }

    fn activity(&mut self) -> Activity {
        let Some(watcher) = &mut self.watcher else {
            return Activity::Unknown;
        };
        let before = self.pending.len();
        watcher.drain(&mut self.pending);
        if !watcher.healthy() || !self.unwatched.is_empty() {
            Activity::Unknown
        } else if self.pending.len() > before {
            Activity::Busy
        } else {
            Activity::Quiet
        }
    }

    fn present(&mut self, visit: &mut dyn FnMut(&str)) -> Result<(), ObserveError> {
        if !self.views {
            for id in self.entries.keys() {
                visit(id);
            }
            return Ok(());
        }
        // Objects inside files have groups of their own (`json`, `sqlite`):
        // gathered and sorted, so every group is visited in one run.
        let mut ids: Vec<String> = Vec::with_capacity(self.entries.len());
        for (id, e) in &self.entries {
            ids.push(id.clone());
            if let Some(view) = &e.view {
                let prefix = inner_prefix(view.kind, id);
                ids.extend(view.objects.keys().map(|inner| format!("{prefix}{inner}")));
            }
        }
        for (id, db) in &mut self.databases {
            let prefix = inner_prefix(Kind::Sqlite, id);
            db.present(&mut |inner| ids.push(format!("{prefix}{inner}")))?;
        }
        ids.sort_unstable();
        for id in &ids {
            visit(id);
        }
        Ok(())
    }
}

/// How the objects inside the file `file_id` (`file/<path>`) begin:
/// `<group>/<path>#`, the path's `#` written `\x23` so the first `#` ends it.
fn inner_prefix(kind: Kind, file_id: &str) -> String {
    let path = file_id.strip_prefix("file/").unwrap_or(file_id);
    format!("{}/{}#", kind.group(), path.replace('#', "\\x23"))
}

/// Every change to the file `id` and to the objects inside it, from `old`
/// to `new`. A file read as objects both times (of the same kind) changes
/// only where its objects do.
fn changes_of(id: &str, old: Option<&Entry>, new: Option<&Entry>, out: &mut Vec<Change>) {
    let view = |e: Option<&Entry>| e.and_then(|e| e.view.clone());
    let (before, after) = (view(old), view(new));
    let same_kind = matches!((&before, &after), (Some(a), Some(b)) if a.kind == b.kind);
    if !same_kind || old.is_none() || new.is_none() {
        out.extend(change_of(id, old, new));
    }
    let none = BTreeMap::new();
    fn inner<'a>(
        v: &'a Option<Arc<View>>,
        none: &'a BTreeMap<String, ObjectState>,
    ) -> &'a BTreeMap<String, ObjectState> {
        v.as_ref().map_or(none, |v| &v.objects)
    }
    if before.is_none() && after.is_none() {
        return;
    }
    if let (Some(a), Some(b)) = (&before, &after)
        && Arc::ptr_eq(a, b)
    {
        return;
    }
    // Markdown whose old bytes all still begin the file lost nothing, yet
    // a reading may see an object changed or gone: a last line the append
    // continued, a paragraph an appended `===` made a heading. Its content
    // is still in the file, so no such change is destructive.
    let appended = same_kind
        && before.as_ref().is_some_and(|v| v.kind == Kind::Markdown)
        && matches!((old, new), (Some(o), Some(n)) if !overwrites(o, n));
    let found = crate::delta::diff_objects(inner(&before, &none), inner(&after, &none));
    for mut change in found.changes {
        if appended && change.op != Op::Create {
            change.overwrite = Some(false);
        }
        // Which view the object was in: the one it is in now, or was.
        let kind = if change.op == Op::Delete {
            before.as_ref().map(|v| v.kind)
        } else {
            after.as_ref().map(|v| v.kind)
        };
        let Some(kind) = kind else { continue };
        change.object = format!("{}{}", inner_prefix(kind, id), change.object);
        out.push(change);
    }
}

/// The change to `id` from `old` to `new`, if any.
fn change_of(id: &str, old: Option<&Entry>, new: Option<&Entry>) -> Option<Change> {
    match (old, new) {
        (None, None) => None,
        (None, Some(n)) => Some(Change {
            object: id.to_owned(),
            op: Op::Create,
            overwrite: None,
            before: None,
            after: Some(n.digest_text()),
        }),
        (Some(o), None) => Some(Change {
            object: id.to_owned(),
            op: Op::Delete,
            overwrite: None,
            before: Some(o.digest_text()),
            after: None,
        }),
        (Some(o), Some(n)) if o.same_content(n) => None,
        (Some(o), Some(n)) => Some(Change {
            object: id.to_owned(),
            op: Op::Update,
            overwrite: Some(overwrites(o, n)),
            before: Some(o.digest_text()),
            after: Some(n.digest_text()),
        }),
    }
}

/// Whether an update of a file destroyed content. A file has no fields, so
/// every change is an overwrite except an append: content that grew and
/// begins with what the file held before (checked while hashing, against
/// the old size and digest) only added bytes, an additive update.
fn overwrites(old: &Entry, new: &Entry) -> bool {
    !(new.extends_previous && new.size > old.size)
}

/// The changes between two full readings, in id order.
fn merge_diff(old: &BTreeMap<String, Entry>, new: &BTreeMap<String, Entry>) -> Delta {
    let mut changes = Vec::new();
    let mut a = old.iter().peekable();
    let mut b = new.iter().peekable();
    loop {
        match (a.peek().copied(), b.peek().copied()) {
            (None, None) => break,
            (Some((id, e)), None) => {
                a.next();
                changes_of(id, Some(e), None, &mut changes);
            }
            (None, Some((id, e))) => {
                b.next();
                changes_of(id, None, Some(e), &mut changes);
            }
            (Some((ia, ea)), Some((ib, eb))) => match ia.cmp(ib) {
                std::cmp::Ordering::Less => {
                    a.next();
                    changes_of(ia, Some(ea), None, &mut changes);
                }
                std::cmp::Ordering::Greater => {
                    b.next();
                    changes_of(ib, None, Some(eb), &mut changes);
                }
                std::cmp::Ordering::Equal => {
                    a.next();
                    b.next();
                    changes_of(ia, Some(ea), Some(eb), &mut changes);
                }
            },
        }
    }
    Delta { changes }
}

fn unreadable(rel: &Path) -> Entry {
    Entry {
        rel: rel.to_path_buf(),
        seen: Seen::Unreadable,
        size: 0,
        stamp: None,
        taken_at: 0,
        key: None,
        extends_previous: false,
        view: None,
    }
}

enum FileOutcome {
    Hashed {
        digest: Digest,
        size: u64,
        stamp: Option<Stamp>,
        /// The digest of the first `prefix` bytes asked for, when the file
        /// holds that many.
        prefix: Option<Digest>,
    },
    TooLarge {
        size: u64,
        stamp: Option<Stamp>,
    },
    /// Deleted between listing and reading: it is not part of this snapshot.
    Vanished,
    Unreadable(String),
    OutOfTime,
}

/// Hashes one regular file.
///
/// The stamp stored with the digest comes from the open handle, taken
/// before the first byte is read, so any later write moves it (or, within one
/// clock tick, trips the stamp rule) and forces a re-hash. What is opened
/// must be the regular file that was listed: a swap for a link, a directory
/// or a FIFO between listing and opening is refused, not followed.
fn hash_file(
    path: &Path,
    listed: Option<Stamp>,
    prefix: Option<u64>,
    max_bytes: u64,
    deadline: Instant,
) -> FileOutcome {
    let (file, opened, stamp) = match open_listed(path, listed) {
        Ok(opened) => opened,
        Err(Stopped::Failed(reason)) => return FileOutcome::Unreadable(reason),
        Err(_) => return FileOutcome::Vanished,
    };
    hash_open(file, opened.len(), stamp, &[], prefix, max_bytes, deadline)
}

/// Hashes an opened file whose first bytes, `head`, were already read from
/// it (so a file sniffed for its content is not opened twice).
fn hash_open(
    file: fs::File,
    len: u64,
    stamp: Option<Stamp>,
    head: &[u8],
    prefix: Option<u64>,
    max_bytes: u64,
    deadline: Instant,
) -> FileOutcome {
    if len > max_bytes {
        return FileOutcome::TooLarge { size: len, stamp };
    }
    // Never more than the budget, even if the file grows while being read.
    let rest = max_bytes
        .saturating_add(1)
        .saturating_sub(head.len() as u64);
    let mut reader = file.take(rest);
    let mut hasher = blake3::Hasher::new();
    let mut size = 0u64;
    // One buffer per thread: zeroing 64 KiB for each of 10^5 small files
    // would cost more than hashing them.
    thread_local! {
        static BUFFER: std::cell::RefCell<Vec<u8>> = std::cell::RefCell::new(vec![0u8; HASH_BUFFER]);
    }
    let mut at_prefix = None;
    BUFFER
        .with_borrow_mut(|buffer| {
            let mut sink = Sink {
                hasher: &mut hasher,
                size: &mut size,
                prefix,
                at_prefix: &mut at_prefix,
            };
            sink.take(head);
            sink.feed(&mut reader, buffer, deadline)
        })
        .map_or_else(
            |stopped| match stopped {
                Stopped::Gone => FileOutcome::Vanished,
                Stopped::Late => FileOutcome::OutOfTime,
                Stopped::Failed(reason) => FileOutcome::Unreadable(reason),
            },
            |()| {
                if size > max_bytes {
                    FileOutcome::TooLarge { size, stamp }
                } else {
                    FileOutcome::Hashed {
                        digest: hasher.finalize().into(),
                        size,
                        stamp,
                        prefix: at_prefix,
                    }
                }
            },
        )
}

/// What reading a file as content gave, besides its digest.
enum Viewed {
    View(View),
    /// Content that could not be read as objects within the budget.
    Fallback(String),
}

/// Hashes one regular file and, when it may hold content read as objects
/// ([`crate::content`]) and fits [`content::MAX_PARSE_BYTES`] and the byte
/// budget, reads it as such from the same bytes (one read, one version). A
/// larger one is hashed as a file, and said to be too large when its first
/// bytes are those of content.
fn hash_and_read(
    path: &Path,
    listed: Option<Stamp>,
    prefix: Option<u64>,
    max_bytes: u64,
    deadline: Instant,
    previous: Option<&View>,
) -> (FileOutcome, Option<Viewed>) {
    let limit = max_bytes.min(content::MAX_PARSE_BYTES);
    let (mut file, opened, stamp) = match open_listed(path, listed) {
        Ok(opened) => opened,
        Err(Stopped::Failed(reason)) => return (FileOutcome::Unreadable(reason), None),
        Err(_) => return (FileOutcome::Vanished, None),
    };
    let mut head = Vec::with_capacity(content::SQLITE_MAGIC.len());
    if let Err(e) = (&mut file)
        .take(content::SQLITE_MAGIC.len() as u64)
        .read_to_end(&mut head)
    {
        return (FileOutcome::Unreadable(e.to_string()), None);
    }
    let hints = content::Hints {
        previous,
        csv_name: path.file_name().is_some_and(content::Hints::is_csv_name),
        markdown_name: path
            .file_name()
            .is_some_and(crate::markdown::is_markdown_name),
        lines_name: path.file_name().is_some_and(content::Hints::is_lines_name),
        max_unpacked: max_bytes,
        deadline,
    };
    let structured = content::may_be_content(&head, &hints);
    if !structured || opened.len() > limit {
        // A zip too large to read is said to be so only if it looks like a
        // workbook (by its first entry, read where it lies).
        let zip = (structured && crate::sheet::is_zip(&head)).then(|| {
            let mut first = [0u8; 128];
            let n = std::os::unix::fs::FileExt::read_at(&file, &mut first, 0).unwrap_or(0);
            crate::sheet::looks_like_book(&first[..n])
        });
        let outcome = hash_open(
            file,
            opened.len(),
            stamp,
            &head,
            prefix,
            max_bytes,
            deadline,
        );
        let content = structured && zip.unwrap_or(true);
        let fallback = (content && matches!(outcome, FileOutcome::Hashed { .. })).then(|| {
            Viewed::Fallback(format!(
                "{} bytes, more than the {limit} bytes read as content (--max-observe-bytes, at most {})",
                opened.len(),
                content::MAX_PARSE_BYTES
            ))
        });
        return (outcome, fallback);
    }
    let mut bytes = head;
    let rest = limit.saturating_add(1).saturating_sub(bytes.len() as u64);
    if let Err(e) = file.take(rest).read_to_end(&mut bytes) {
        return (FileOutcome::Unreadable(e.to_string()), None);
    }
    let size = bytes.len() as u64;
    if size > limit {
        // Grew past the limit while being read: a file, read again as one.
        return (hash_file(path, listed, prefix, max_bytes, deadline), None);
    }
    if Instant::now() > deadline {
        return (FileOutcome::OutOfTime, None);
    }
    let digest = Digest::of(&bytes);
    let at_prefix = prefix
        .and_then(|p| usize::try_from(p).ok())
        .filter(|p| *p <= bytes.len())
        .map(|p| Digest::of(&bytes[..p]));
    let viewed = match content::read(&bytes, &hints) {
        content::Read::Opaque => None,
        content::Read::View(view) => Some(Viewed::View(view)),
        content::Read::Fallback(why) => Some(Viewed::Fallback(why)),
    };
    let outcome = FileOutcome::Hashed {
        digest,
        size,
        stamp,
        prefix: at_prefix,
    };
    (outcome, viewed)
}

/// Digests a git index by what it stages ([`crate::git_index`]), so the
/// stat-cache refresh git makes in a copied repository is no change; bytes
/// that do not read as an index are digested as they are. An index is never
/// taken for an append.
fn hash_index(
    path: &Path,
    listed: Option<Stamp>,
    max_bytes: u64,
    deadline: Instant,
) -> FileOutcome {
    let (file, opened, stamp) = match open_listed(path, listed) {
        Ok(opened) => opened,
        Err(Stopped::Failed(reason)) => return FileOutcome::Unreadable(reason),
        Err(_) => return FileOutcome::Vanished,
    };
    let limit = max_bytes.min(crate::git_index::MAX_INDEX_BYTES as u64);
    if opened.len() > limit {
        // Too large to hold in memory and read as an index: hashed as bytes,
        // or recorded by size past the budget.
        return hash_file(path, listed, None, max_bytes, deadline);
    }
    let mut bytes = Vec::new();
    // Never more than the limit, even if the file grows while being read.
    if let Err(e) = file.take(limit.saturating_add(1)).read_to_end(&mut bytes) {
        return FileOutcome::Unreadable(e.to_string());
    }
    let size = bytes.len() as u64;
    if size > limit {
        return FileOutcome::TooLarge { size, stamp };
    }
    let digest = crate::git_index::content_digest(&bytes)
        .and_then(|hex| blake3::Hash::from_hex(hex).ok())
        .map_or_else(|| Digest::of(&bytes), Digest::from);
    FileOutcome::Hashed {
        digest,
        size,
        stamp,
        prefix: None,
    }
}

/// Why a file could not be hashed to its end.
enum Stopped {
    /// Deleted before it could be opened.
    Gone,
    Late,
    Failed(String),
}

/// Opens the regular file that was listed at `path`: never through a link,
/// never blocking on a FIFO swapped in since the listing, and refusing
/// whatever is not the very file (device and inode) that was listed.
fn open_listed(
    path: &Path,
    listed: Option<Stamp>,
) -> Result<(fs::File, fs::Metadata, Option<Stamp>), Stopped> {
    let mut options = fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    let file = match options.open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(Stopped::Gone),
        #[cfg(unix)]
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Err(Stopped::Failed("replaced while being read".into()));
        }
        Err(e) => return Err(Stopped::Failed(e.to_string())),
    };
    let opened = file
        .metadata()
        .map_err(|e| Stopped::Failed(e.to_string()))?;
    let stamp = Stamp::of(&opened);
    let same_object = match (listed, stamp) {
        (Some(a), Some(b)) => a.dev == b.dev && a.ino == b.ino,
        _ => true,
    };
    if !opened.is_file() || !same_object {
        return Err(Stopped::Failed("replaced while being read".into()));
    }
    Ok((file, opened, stamp))
}

/// Where hashed bytes go: the hasher, a count, and the digest of the first
/// `prefix` bytes taken on the way (a clone of the hasher at that point).
struct Sink<'a> {
    hasher: &'a mut blake3::Hasher,
    size: &'a mut u64,
    prefix: Option<u64>,
    at_prefix: &'a mut Option<Digest>,
}

impl Sink<'_> {
    fn take(&mut self, bytes: &[u8]) {
        let start = *self.size;
        let end = start + bytes.len() as u64;
        match self.prefix {
            Some(p) if p >= start && p <= end && self.at_prefix.is_none() => {
                let cut = (p - start) as usize;
                self.hasher.update(&bytes[..cut]);
                *self.at_prefix = Some(self.hasher.clone().finalize().into());
                self.hasher.update(&bytes[cut..]);
            }
            _ => {
                self.hasher.update(bytes);
            }
        }
        *self.size = end;
    }

    /// Feeds `reader` through, until the end, an error or the deadline.
    fn feed(
        &mut self,
        reader: &mut impl Read,
        buffer: &mut [u8],
        deadline: Instant,
    ) -> Result<(), Stopped> {
        if self.prefix == Some(0) {
            self.take(&[]);
        }
        loop {
            match reader.read(buffer) {
                Ok(0) => return Ok(()),
                Ok(n) => {
                    self.take(&buffer[..n]);
                    if Instant::now() > deadline {
                        return Err(Stopped::Late);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(Stopped::Failed(e.to_string())),
            }
        }
    }
}

/// `root` or `dir/<path>`: how a listing warning names a directory, the same
/// in every copy of the store.
fn dir_label(dir: &Path) -> String {
    if dir.as_os_str().is_empty() {
        "root".to_owned()
    } else {
        format!("dir/{}", render_path(dir))
    }
}

fn special_kind(file_type: &FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return "fifo";
        }
        if file_type.is_socket() {
            return "socket";
        }
        if file_type.is_block_device() {
            return "block-device";
        }
        if file_type.is_char_device() {
            return "char-device";
        }
    }
    #[cfg(not(unix))]
    let _ = file_type;
    "other"
}

/// Renders a relative path as an object id suffix (see the module docs for the
/// escaping rules).
fn render_path(relative: &Path) -> String {
    let mut out = String::new();
    for (i, component) in relative.components().enumerate() {
        if i > 0 {
            out.push('/');
        }
        push_escaped(&mut out, component.as_os_str());
    }
    out
}

fn push_escaped(out: &mut String, name: &OsStr) {
    let bytes = os_bytes(name);
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '\\' => out.push_str("\\\\"),
                c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
                c => out.push(c),
            }
        }
        for byte in chunk.invalid() {
            out.push_str(&format!("\\x{byte:02x}"));
        }
    }
}

#[cfg(unix)]
fn os_bytes(s: &OsStr) -> std::borrow::Cow<'_, [u8]> {
    use std::os::unix::ffi::OsStrExt;
    std::borrow::Cow::Borrowed(s.as_bytes())
}

#[cfg(not(unix))]
fn os_bytes(s: &OsStr) -> std::borrow::Cow<'_, [u8]> {
    match s.to_string_lossy() {
        std::borrow::Cow::Borrowed(s) => std::borrow::Cow::Borrowed(s.as_bytes()),
        std::borrow::Cow::Owned(s) => std::borrow::Cow::Owned(s.into_bytes()),
    }
}

#[cfg(all(test, unix))]
mod tests {
    use std::collections::BTreeMap;
    use std::io::Write;
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};
    use std::time::{Duration, SystemTime};

    use pretty_assertions::assert_eq;
    use walkdir::WalkDir;

    use super::*;
    use crate::{Op, diff, digest_hex};

    fn write(path: &Path, bytes: &[u8]) {
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).unwrap();
        }
        fs::write(path, bytes).unwrap();
    }

    /// Rewrites `path` the way the filesystem and memory servers do.
    fn rewrite_via_rename(path: &Path, bytes: &[u8]) {
        let tmp = path.with_extension("tmp-rewrite");
        fs::write(&tmp, bytes).unwrap();
        fs::rename(&tmp, path).unwrap();
    }

    fn ops(before: &Snapshot, after: &Snapshot) -> Vec<(String, Op)> {
        diff(before, after)
            .changes
            .into_iter()
            .map(|c| (c.object, c.op))
            .collect()
    }

    /// Pretends every cached digest was taken long after its file last
    /// changed, so only the stamp comparison (not the racy rule) decides reuse.
    fn age_cache(observer: &mut FsObserver) {
        for entry in observer.entries.values_mut() {
            entry.taken_at += 3_600 * 1_000_000_000;
        }
    }

    #[test]
    fn objects_are_files_dirs_and_links_with_slash_ids() {
        let dir = tempfile::tempdir().unwrap();
        write(&dir.path().join("docs/a.txt"), b"hello");
        write(&dir.path().join("top.txt"), b"");
        symlink("docs/a.txt", dir.path().join("alias")).unwrap();
        let snap = FsObserver::new(dir.path()).snapshot().unwrap();
        let ids: Vec<&str> = snap.objects.keys().map(String::as_str).collect();
        assert_eq!(
            ids,
            vec!["dir/docs", "file/docs/a.txt", "file/top.txt", "link/alias"]
        );
        assert_eq!(
            snap.objects["file/docs/a.txt"],
            ObjectState::whole(b"hello")
        );
        assert_eq!(snap.objects["dir/docs"].digest, digest_hex(b"dir"));
        assert_eq!(
            snap.objects["link/alias"],
            ObjectState::whole(b"docs/a.txt")
        );
        assert!(snap.warnings.is_empty());
    }

    #[test]
    fn missing_root_is_an_empty_store() {
        let dir = tempfile::tempdir().unwrap();
        let snap = FsObserver::new(dir.path().join("not-yet"))
            .snapshot()
            .unwrap();
        assert!(snap.is_empty());
        assert!(snap.warnings.is_empty());
    }

    #[test]
    fn root_that_is_a_file_is_unusable() {
        let dir = tempfile::tempdir().unwrap();
        write(&dir.path().join("f"), b"x");
        let err = FsObserver::new(dir.path().join("f"))
            .snapshot()
            .unwrap_err();
        assert!(matches!(err, ObserveError::Unusable { .. }), "{err}");
    }

    #[test]
    fn rename_rewrite_with_identical_content_is_no_change() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notes.md");
        write(&path, b"same bytes\n");
        let mut observer = FsObserver::new(dir.path());
        let before = observer.snapshot().unwrap();
        let old_ino = fs::metadata(&path).unwrap().ino();
        rewrite_via_rename(&path, b"same bytes\n");
        assert_ne!(fs::metadata(&path).unwrap().ino(), old_ino);
        age_cache(&mut observer);
        let after = observer.snapshot().unwrap();
        assert_eq!(observer.hashed, 1, "a new inode must be hashed again");
        assert!(diff(&before, &after).is_empty());
    }

    #[test]
    fn same_size_rewrite_in_the_same_tick_is_detected() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        write(&path, b"aaaa");
        let mut observer = FsObserver::new(dir.path());
        let before = observer.snapshot().unwrap();
        let mtime = fs::metadata(&path).unwrap().modified().unwrap();
        // Same inode, same size, and the mtime put back exactly.
        let mut file = fs::OpenOptions::new().write(true).open(&path).unwrap();
        file.write_all(b"bbbb").unwrap();
        file.set_modified(mtime).unwrap();
        drop(file);
        let after = observer.snapshot().unwrap();
        assert_eq!(
            ops(&before, &after),
            vec![("file/f".to_string(), Op::Update)]
        );
        assert_eq!(after.objects["file/f"], ObjectState::whole(b"bbbb"));
    }

    #[test]
    fn unchanged_files_are_not_rehashed_once_settled() {
        let dir = tempfile::tempdir().unwrap();
        write(&dir.path().join("a"), b"one");
        write(&dir.path().join("b/c"), b"two");
        let mut observer = FsObserver::new(dir.path()).without_events();
        let first = observer.snapshot().unwrap();
        assert_eq!(observer.hashed, 2);
        // Within the racy window everything is hashed again.
        let second = observer.snapshot().unwrap();
        assert_eq!(observer.hashed, 2);
        age_cache(&mut observer);
        let third = observer.snapshot().unwrap();
        assert_eq!(observer.hashed, 0);
        assert_eq!(first, second);
        assert_eq!(first, third);
        // A deleted file leaves with its object.
        fs::remove_file(dir.path().join("a")).unwrap();
        observer.snapshot().unwrap();
        assert_eq!(
            observer
                .entries
                .keys()
                .filter(|k| k.starts_with("file/"))
                .count(),
            1
        );
    }

    #[test]
    fn with_events_an_untouched_tree_is_not_read_again() {
        let dir = tempfile::tempdir().unwrap();
        write(&dir.path().join("a"), b"one");
        write(&dir.path().join("b/c"), b"two");
        let mut observer = FsObserver::new(dir.path());
        let first = observer.snapshot().unwrap();
        if !observer.watching() {
            return; // No inotify here: the stamp rule alone is tested above.
        }
        // Fresh files, and still nothing is hashed: no event named them.
        let second = observer.snapshot().unwrap();
        assert_eq!(observer.hashed, 0);
        assert_eq!(first, second);
        write(&dir.path().join("b/c"), b"TWO");
        write(&dir.path().join("b/new/d"), b"three");
        let d = observer.observe(true).unwrap().delta;
        assert_eq!(observer.hashed, 2, "only what events named");
        let ops: Vec<(&str, Op)> = d
            .changes
            .iter()
            .map(|c| (c.object.as_str(), c.op))
            .collect();
        assert_eq!(
            ops,
            [
                ("dir/b/new", Op::Create),
                ("file/b/c", Op::Update),
                ("file/b/new/d", Op::Create)
            ]
        );
        assert!(observer.watching());
    }

    #[test]
    fn cache_is_not_fooled_by_a_restored_mtime() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        write(&path, b"old!");
        let long_ago = SystemTime::now() - Duration::from_secs(3_600);
        fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(long_ago)
            .unwrap();
        let mut observer = FsObserver::new(dir.path());
        let before = observer.snapshot().unwrap();
        age_cache(&mut observer);
        // Past the kernel's coarse timestamp tick, so the ctime really moves
        // (within one tick it is the racy rule's job, disabled here by aging).
        std::thread::sleep(Duration::from_millis(50));
        let mut file = fs::OpenOptions::new().write(true).open(&path).unwrap();
        file.write_all(b"new!").unwrap();
        file.set_modified(long_ago).unwrap();
        drop(file);
        let after = observer.snapshot().unwrap();
        assert_eq!(observer.hashed, 1, "ctime moved, so the file is re-hashed");
        assert_eq!(
            ops(&before, &after),
            vec![("file/f".to_string(), Op::Update)]
        );
    }

    #[test]
    fn moving_a_directory_is_create_and_delete_of_everything_under_it() {
        let dir = tempfile::tempdir().unwrap();
        write(&dir.path().join("src/a.txt"), b"a");
        write(&dir.path().join("src/sub/b.txt"), b"b");
        write(&dir.path().join("keep.txt"), b"k");
        let mut observer = FsObserver::new(dir.path());
        let before = observer.snapshot().unwrap();
        fs::rename(dir.path().join("src"), dir.path().join("dst")).unwrap();
        let after = observer.snapshot().unwrap();
        let changes = ops(&before, &after);
        let expected: Vec<(String, Op)> = [
            ("dir/dst", Op::Create),
            ("dir/dst/sub", Op::Create),
            ("dir/src", Op::Delete),
            ("dir/src/sub", Op::Delete),
            ("file/dst/a.txt", Op::Create),
            ("file/dst/sub/b.txt", Op::Create),
            ("file/src/a.txt", Op::Delete),
            ("file/src/sub/b.txt", Op::Delete),
        ]
        .into_iter()
        .map(|(id, op)| (id.to_string(), op))
        .collect();
        assert_eq!(changes, expected);
        // Content travels with the move.
        assert_eq!(
            before.objects["file/src/sub/b.txt"],
            after.objects["file/dst/sub/b.txt"]
        );
    }

    #[test]
    fn moving_a_file_is_create_plus_delete() {
        let dir = tempfile::tempdir().unwrap();
        write(&dir.path().join("a.txt"), b"payload");
        let mut observer = FsObserver::new(dir.path());
        let before = observer.snapshot().unwrap();
        fs::rename(dir.path().join("a.txt"), dir.path().join("b.txt")).unwrap();
        let after = observer.snapshot().unwrap();
        assert_eq!(
            ops(&before, &after),
            vec![
                ("file/a.txt".to_string(), Op::Delete),
                ("file/b.txt".to_string(), Op::Create)
            ]
        );
    }

    #[test]
    fn symlink_out_of_the_root_is_recorded_and_not_followed() {
        let outside = tempfile::tempdir().unwrap();
        write(&outside.path().join("secret/key"), b"do not read");
        let jail = tempfile::tempdir().unwrap();
        let target = outside.path().join("secret");
        symlink(&target, jail.path().join("escape")).unwrap();
        symlink(outside.path().join("secret/key"), jail.path().join("key")).unwrap();
        let snap = FsObserver::new(jail.path()).snapshot().unwrap();
        let ids: Vec<&str> = snap.objects.keys().map(String::as_str).collect();
        assert_eq!(ids, vec!["link/escape", "link/key"]);
        assert_eq!(
            snap.objects["link/escape"],
            ObjectState::whole(target.as_os_str().as_bytes())
        );
    }

    #[test]
    fn opening_for_a_hash_never_blocks_on_a_fifo_nor_follows_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        rustix::fs::mkfifoat(rustix::fs::CWD, &fifo, rustix::fs::Mode::from(0o600)).unwrap();
        // Would block forever with File::open: nobody writes. Opened
        // without blocking, then refused as not a regular file.
        assert!(matches!(open_listed(&fifo, None), Err(Stopped::Failed(_))));
        symlink(&fifo, dir.path().join("link")).unwrap();
        assert!(matches!(
            open_listed(&dir.path().join("link"), None),
            Err(Stopped::Failed(_))
        ));
    }

    #[test]
    fn retargeting_a_link_is_an_update() {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("current");
        symlink("v1", &link).unwrap();
        let mut observer = FsObserver::new(dir.path());
        let before = observer.snapshot().unwrap();
        fs::remove_file(&link).unwrap();
        symlink("v2", &link).unwrap();
        let after = observer.snapshot().unwrap();
        assert_eq!(
            ops(&before, &after),
            vec![("link/current".to_string(), Op::Update)]
        );
    }

    #[test]
    fn excluded_subtree_is_absent() {
        let dir = tempfile::tempdir().unwrap();
        write(&dir.path().join("store/memory.jsonl"), b"{}");
        write(&dir.path().join("store/deep/x"), b"x");
        write(&dir.path().join("storefront.txt"), b"not excluded");
        write(&dir.path().join("other/db.sqlite"), b"db");
        write(&dir.path().join("other/keep"), b"keep");
        let mut observer = FsObserver::new(dir.path())
            .exclude("./store")
            .exclude(dir.path().join("other/db.sqlite"))
            .exclude("../elsewhere");
        let snap = observer.snapshot().unwrap();
        let ids: Vec<&str> = snap.objects.keys().map(String::as_str).collect();
        assert_eq!(
            ids,
            vec!["dir/other", "file/other/keep", "file/storefront.txt"]
        );
        // Changes inside an excluded sub-tree are invisible.
        write(&dir.path().join("store/memory.jsonl"), b"{\"changed\":1}");
        write(&dir.path().join("store/new"), b"n");
        assert!(diff(&snap, &observer.snapshot().unwrap()).is_empty());
    }

    #[derive(Debug, PartialEq)]
    struct Physical {
        bytes: Option<Vec<u8>>,
        ino: u64,
        mtime: (i64, i64),
        ctime: (i64, i64),
        mode: u32,
    }

    /// Everything an observer must not move, for every entry under `root`
    /// (the root included).
    fn physical_state(root: &Path) -> BTreeMap<PathBuf, Physical> {
        WalkDir::new(root)
            .follow_links(false)
            .into_iter()
            .map(|e| {
                let e = e.unwrap();
                let meta = e.path().symlink_metadata().unwrap();
                let bytes = meta.is_file().then(|| fs::read(e.path()).unwrap());
                (
                    e.path().to_path_buf(),
                    Physical {
                        bytes,
                        ino: meta.ino(),
                        mtime: (meta.mtime(), meta.mtime_nsec()),
                        ctime: (meta.ctime(), meta.ctime_nsec()),
                        mode: meta.mode(),
                    },
                )
            })
            .collect()
    }

    #[test]
    fn snapshot_leaves_bytes_inodes_and_times_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        write(&dir.path().join("a.txt"), b"alpha");
        write(&dir.path().join("d/b.bin"), &[0u8, 1, 2, 255]);
        write(&dir.path().join("d/e/empty"), b"");
        symlink("../a.txt", dir.path().join("d/link")).unwrap();
        let before = physical_state(dir.path());
        let mut observer = FsObserver::new(dir.path());
        observer.snapshot().unwrap();
        observer.snapshot().unwrap();
        age_cache(&mut observer);
        observer.snapshot().unwrap();
        assert_eq!(physical_state(dir.path()), before);
    }

    #[test]
    fn special_files_and_dangling_links_neither_block_nor_panic() {
        let dir = tempfile::tempdir().unwrap();
        let _socket = std::os::unix::net::UnixListener::bind(dir.path().join("sock")).unwrap();
        symlink("nowhere/at/all", dir.path().join("dangling")).unwrap();
        // A FIFO would block a reader that opened it; make one when the tool
        // for it exists (tests may run external commands, the observer never does).
        let fifo = std::process::Command::new("mkfifo")
            .arg(dir.path().join("pipe"))
            .status()
            .is_ok_and(|s| s.success());
        let snap = FsObserver::new(dir.path()).snapshot().unwrap();
        assert_eq!(snap.objects["special/sock"], ObjectState::whole(b"socket"));
        assert_eq!(
            snap.objects["link/dangling"],
            ObjectState::whole(b"nowhere/at/all")
        );
        if fifo {
            assert_eq!(snap.objects["special/pipe"], ObjectState::whole(b"fifo"));
        }
        assert!(snap.warnings.is_empty(), "{:?}", snap.warnings);
    }

    #[test]
    fn unreadable_file_is_a_warning_and_a_marked_object() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("locked");
        write(&path, b"secret");
        fs::set_permissions(&path, fs::Permissions::from_mode(0o000)).unwrap();
        // Root (and CAP_DAC_OVERRIDE) reads it anyway; ask the kernel which
        // case this is rather than guessing from the environment.
        let privileged = fs::File::open(&path).is_ok();
        let snap = FsObserver::new(dir.path()).snapshot().unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
        if privileged {
            assert_eq!(snap.objects["file/locked"], ObjectState::whole(b"secret"));
            assert!(snap.warnings.is_empty());
        } else {
            assert_eq!(snap.objects["file/locked"].digest, UNREADABLE_DIGEST);
            assert_eq!(snap.warnings.len(), 1);
            assert!(snap.warnings[0].starts_with("file/locked: unreadable"));
        }
    }

    #[test]
    fn non_utf8_and_backslash_names_get_distinct_stable_ids() {
        let dir = tempfile::tempdir().unwrap();
        let raw = OsStr::from_bytes(b"caf\xe9");
        if fs::write(dir.path().join(raw), b"latin-1").is_err() {
            // Some filesystems refuse non-UTF-8 names; nothing to observe then.
            return;
        }
        write(&dir.path().join("caf\\xe9"), b"backslash");
        write(&dir.path().join("tab\there"), b"tab");
        let snap = FsObserver::new(dir.path()).snapshot().unwrap();
        let ids: Vec<&str> = snap.objects.keys().map(String::as_str).collect();
        assert_eq!(
            ids,
            vec!["file/caf\\\\xe9", "file/caf\\xe9", "file/tab\\u{9}here"]
        );
        assert_eq!(
            snap.objects["file/caf\\xe9"],
            ObjectState::whole(b"latin-1")
        );
        let again = FsObserver::new(dir.path()).snapshot().unwrap();
        assert_eq!(snap, again);
    }

    #[test]
    fn large_file_is_streamed_to_the_right_digest() {
        let dir = tempfile::tempdir().unwrap();
        let content: Vec<u8> = (0..3 * HASH_BUFFER + 17).map(|i| (i % 251) as u8).collect();
        write(&dir.path().join("big"), &content);
        let snap = FsObserver::new(dir.path()).snapshot().unwrap();
        assert_eq!(snap.objects["file/big"], ObjectState::whole(&content));
    }

    /// Whether the one change the next observation reports is an overwrite.
    fn overwrite_of_next(observer: &mut FsObserver) -> Option<bool> {
        let changes = observer.observe(true).unwrap().delta.changes;
        assert_eq!(changes.len(), 1, "{changes:?}");
        assert_eq!(changes[0].op, Op::Update, "{changes:?}");
        changes[0].overwrite
    }

    #[test]
    fn an_append_is_an_additive_update_and_a_rewrite_an_overwrite() {
        for events in [true, false] {
            let dir = tempfile::tempdir().unwrap();
            let log = dir.path().join("logs/HEAD");
            write(&log, b"0000 1111 first\n");
            let mut observer = FsObserver::new(dir.path());
            if !events {
                observer = observer.without_events();
            }
            observer.observe(false).unwrap();
            let mut file = fs::OpenOptions::new().append(true).open(&log).unwrap();
            file.write_all(b"1111 2222 second\n").unwrap();
            drop(file);
            assert_eq!(overwrite_of_next(&mut observer), Some(false), "{events}");
            // Grown, but with a different beginning: an overwrite.
            write(&log, b"xxxx 1111 first\n1111 2222 second\nmore\n");
            assert_eq!(overwrite_of_next(&mut observer), Some(true), "{events}");
            // Shorter: an overwrite, whatever its first bytes.
            write(&log, b"xxxx");
            assert_eq!(overwrite_of_next(&mut observer), Some(true), "{events}");
            // An append through a temp file and a rename (a new inode) still
            // begins with the old content: additive.
            rewrite_via_rename(&log, b"xxxx and more");
            assert_eq!(overwrite_of_next(&mut observer), Some(false), "{events}");
        }
    }

    #[test]
    fn a_git_index_refreshed_in_a_copied_repository_is_no_change() {
        let git = crate::testing::git;
        let dir = tempfile::tempdir().unwrap();
        let Some(copy) = crate::testing::copied_repository(dir.path()) else {
            return;
        };
        let mut observer = FsObserver::new(&copy);
        let before = observer.snapshot().unwrap();
        std::thread::sleep(Duration::from_millis(1_100));
        let index_bytes = fs::read(copy.join(".git/index")).unwrap();
        assert!(git(&copy, &["status", "--porcelain"]));
        assert_ne!(fs::read(copy.join(".git/index")).unwrap(), index_bytes);
        let after = observer.snapshot().unwrap();
        assert!(
            diff(&before, &after).is_empty(),
            "{:?}",
            diff(&before, &after)
        );
        // Staging a change is seen.
        write(&copy.join("a.txt"), b"two\n");
        assert!(git(&copy, &["add", "a.txt"]));
        let staged = observer.snapshot().unwrap();
        assert!(ops(&after, &staged).contains(&("file/.git/index".to_string(), Op::Update)));
    }
}

#[cfg(test)]
mod content_tests {
    use std::os::unix::fs::MetadataExt;
    use std::time::Duration;

    use pretty_assertions::assert_eq;

    use super::*;

    fn rewrite(path: &Path, bytes: &[u8]) {
        // As servers do: a temporary file renamed over the old one.
        let tmp = path.with_extension("tmp-write");
        fs::write(&tmp, bytes).unwrap();
        fs::rename(&tmp, path).unwrap();
    }

    /// The next observation's changes as (object, op, destructive).
    fn next(observer: &mut FsObserver) -> Vec<(String, Op, bool)> {
        observer
            .observe(true)
            .unwrap()
            .delta
            .changes
            .into_iter()
            .map(|c| (c.object.clone(), c.op, c.is_destructive()))
            .collect()
    }

    fn tasks(list: &[(&str, &str)]) -> Vec<u8> {
        let tasks: Vec<serde_json::Value> = list
            .iter()
            .map(|(id, title)| serde_json::json!({"id": id, "title": title, "done": false}))
            .collect();
        serde_json::to_vec_pretty(&serde_json::json!({
            "requests": [{"requestId": "req-1", "originalRequest": "plan", "tasks": tasks}]
        }))
        .unwrap()
    }

    #[test]
    fn a_document_rewritten_whole_changes_only_the_records_that_changed() {
        for events in [true, false] {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("tasks.json");
            fs::write(&path, tasks(&[("task-1", "a")])).unwrap();
            let mut observer = FsObserver::new(dir.path()).with_content_views();
            if !events {
                observer = observer.without_events();
            }
            observer.observe(false).unwrap();
            rewrite(&path, &tasks(&[("task-1", "a"), ("task-2", "b")]));
            assert_eq!(
                next(&mut observer),
                [(
                    "json/tasks.json#/requests/[requestId=req-1]/tasks/[id=task-2]".into(),
                    Op::Create,
                    false
                )],
                "{events}"
            );
            // The same records, rewritten: nothing.
            rewrite(&path, &tasks(&[("task-1", "a"), ("task-2", "b")]));
            assert_eq!(next(&mut observer), [], "{events}");
            rewrite(&path, &tasks(&[("task-2", "b")]));
            assert_eq!(
                next(&mut observer),
                [(
                    "json/tasks.json#/requests/[requestId=req-1]/tasks/[id=task-1]".into(),
                    Op::Delete,
                    true
                )],
                "{events}"
            );
            // No longer JSON: the file is overwritten and its objects gone.
            rewrite(&path, b"not json");
            let found = next(&mut observer);
            assert!(
                found.contains(&("file/tasks.json".into(), Op::Update, true)),
                "{found:?}"
            );
            assert!(
                found.iter().filter(|c| c.1 == Op::Delete).count() >= 3,
                "{found:?}"
            );
        }
    }

    #[test]
    fn json_lines_rewritten_sorted_are_one_create() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.jsonl");
        fs::write(&path, b"{\"id\":\"b\",\"v\":2}\n{\"id\":\"a\",\"v\":1}\n").unwrap();
        let mut observer = FsObserver::new(dir.path()).with_content_views();
        observer.observe(false).unwrap();
        rewrite(
            &path,
            b"{\"id\":\"a\",\"v\":1}\n{\"id\":\"b\",\"v\":2}\n{\"id\":\"c\",\"v\":3}\n",
        );
        assert_eq!(
            next(&mut observer),
            [("jsonl/log.jsonl#record/c".into(), Op::Create, false)]
        );
        rewrite(&path, b"{\"id\":\"a\",\"v\":1}\n{\"id\":\"c\",\"v\":3}\n");
        assert_eq!(
            next(&mut observer),
            [("jsonl/log.jsonl#record/b".into(), Op::Delete, true)]
        );
    }

    /// An append-only log named `.jsonl` that held one line: its second
    /// line is a create, never the first line read as a JSON document and
    /// then deleted (a false destructive finding on a logging server).
    #[test]
    fn a_one_line_log_named_jsonl_gains_a_line_as_one_create() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        fs::write(&path, b"{\"ts\":\"t1\",\"tool\":\"list_tasks\"}\n").unwrap();
        let mut observer = FsObserver::new(dir.path()).with_content_views();
        observer.observe(false).unwrap();
        fs::write(
            &path,
            b"{\"ts\":\"t1\",\"tool\":\"list_tasks\"}\n{\"ts\":\"t2\",\"tool\":\"list_tasks\"}\n",
        )
        .unwrap();
        let found = next(&mut observer);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!((found[0].1, found[0].2), (Op::Create, false), "{found:?}");
        assert!(found[0].0.starts_with("jsonl/audit.jsonl#"), "{found:?}");
        // A first line with an id field, and a second without one: the
        // first line keeps its id all the same.
        let keyed = dir.path().join("events.ndjson");
        fs::write(&keyed, b"{\"id\":\"e1\",\"kind\":\"open\"}\n").unwrap();
        next(&mut observer);
        fs::write(
            &keyed,
            b"{\"id\":\"e1\",\"kind\":\"open\"}\n{\"kind\":\"tick\"}\n",
        )
        .unwrap();
        let found = next(&mut observer);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!((found[0].1, found[0].2), (Op::Create, false), "{found:?}");
        // The same line in a file not named for lines is a JSON document.
        let other = dir.path().join("state.json");
        fs::write(&other, b"{\"ts\":\"t1\"}\n").unwrap();
        let found = next(&mut observer);
        assert!(
            found.contains(&("json/state.json#".into(), Op::Create, false)),
            "{found:?}"
        );
        assert!(
            found.iter().all(|c| !c.0.starts_with("jsonl/")),
            "{found:?}"
        );
    }

    fn database(path: &Path) -> rusqlite::Connection {
        let conn = rusqlite::Connection::open(path).unwrap();
        conn.pragma_update(None, "journal_mode", "wal").unwrap();
        conn
    }

    #[test]
    fn a_database_in_the_tree_is_read_as_rows_and_a_plain_read_is_no_change() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data/app.db");
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        {
            let conn = database(&path);
            conn.execute_batch(
                "CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes VALUES (1, 'a');",
            )
            .unwrap();
        }
        let mut observer = FsObserver::new(dir.path()).with_content_views();
        observer.observe(false).unwrap();
        // A reader in WAL mode makes -wal and -shm appear, and may leave them.
        let reader = database(&path);
        let n: i64 = reader
            .query_row("SELECT count(*) FROM notes", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 1);
        assert!(path.with_file_name("app.db-shm").exists());
        assert_eq!(next(&mut observer), []);
        reader
            .execute("INSERT INTO notes VALUES (2, 'b')", [])
            .unwrap();
        assert_eq!(
            next(&mut observer),
            [("sqlite/data/app.db#notes/2".into(), Op::Create, false)]
        );
        reader
            .execute("DELETE FROM notes WHERE id = 1", [])
            .unwrap();
        drop(reader);
        assert_eq!(
            next(&mut observer),
            [("sqlite/data/app.db#notes/1".into(), Op::Delete, true)]
        );
        let mut seen = Vec::new();
        observer
            .present(&mut |id| seen.push(id.to_owned()))
            .unwrap();
        assert!(
            seen.contains(&"sqlite/data/app.db#notes/2".to_owned()),
            "{seen:?}"
        );
        assert!(
            !seen
                .iter()
                .any(|id| id.contains("-wal") || id.contains("-shm")),
            "{seen:?}"
        );
        fs::remove_file(&path).unwrap();
        let gone = next(&mut observer);
        assert!(
            gone.contains(&("file/data/app.db".into(), Op::Delete, true)),
            "{gone:?}"
        );
        assert!(
            gone.contains(&("sqlite/data/app.db#notes/2".into(), Op::Delete, true)),
            "{gone:?}"
        );
    }

    #[test]
    fn a_document_over_the_budget_is_a_file_with_a_warning() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.json");
        fs::write(&path, tasks(&[("task-1", "a")])).unwrap();
        let size = fs::metadata(&path).unwrap().len();
        let budget = Budget {
            max_bytes: size - 1,
            max_time: Duration::from_secs(60),
        };
        let mut observer = FsObserver::new(dir.path())
            .with_content_views()
            .with_budget(budget);
        let seen = observer.observe(false).unwrap();
        assert_eq!(seen.warnings.len(), 1, "{:?}", seen.warnings);
        assert!(
            seen.warnings[0].starts_with("file/big.json: "),
            "{:?}",
            seen.warnings
        );
        // Within the budget but above what is read as content, the file is
        // hashed whole and the warning says why it has no objects.
        let budget = Budget {
            max_bytes: size + 1,
            max_time: Duration::from_secs(60),
        };
        let mut observer = FsObserver::new(dir.path())
            .with_content_views()
            .with_budget(budget);
        let snapshot = observer.snapshot().unwrap();
        assert!(
            snapshot
                .objects
                .keys()
                .any(|id| id.starts_with("json/big.json#"))
        );
    }

    #[test]
    fn a_workbook_resaved_with_the_same_cells_is_no_change_and_a_cleared_cell_a_delete() {
        use crate::sheet::tests::{PLAIN, Packing, xlsx};
        let resaved = Packing {
            deflate: false,
            year: 2026,
            shared: false,
        };
        for events in [true, false] {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("plan #1.xlsx");
            let rows: &[&[&str]] = &[&["id", "title"], &["1", "write"], &["2", "test"]];
            fs::write(&path, xlsx(rows, PLAIN)).unwrap();
            let mut observer = FsObserver::new(dir.path()).with_content_views();
            if !events {
                observer = observer.without_events();
            }
            observer.observe(false).unwrap();
            // Other bytes, another compression, inline strings: no cell changed.
            rewrite(&path, &xlsx(rows, resaved));
            assert_eq!(next(&mut observer), [], "{events}");
            let cleared: &[&[&str]] = &[&["id", "title"], &["1", ""], &["2", "test"]];
            rewrite(&path, &xlsx(cleared, PLAIN));
            assert_eq!(
                next(&mut observer),
                [("xlsx/plan \\x231.xlsx#Tasks!B2".into(), Op::Delete, true)],
                "{events}"
            );
            let added: &[&[&str]] = &[&["id", "title"], &["1", ""], &["2", "test"], &["3", "x"]];
            rewrite(&path, &xlsx(added, resaved));
            assert_eq!(
                next(&mut observer),
                [
                    ("xlsx/plan \\x231.xlsx#Tasks!A4".into(), Op::Create, false),
                    ("xlsx/plan \\x231.xlsx#Tasks!B4".into(), Op::Create, false),
                ],
                "{events}"
            );
            let edited: &[&[&str]] = &[&["id", "title"], &["1", ""], &["2", "tested"], &["3", "x"]];
            rewrite(&path, &xlsx(edited, PLAIN));
            assert_eq!(
                next(&mut observer),
                [("xlsx/plan \\x231.xlsx#Tasks!B3".into(), Op::Update, true)],
                "{events}"
            );
        }
    }

    #[test]
    fn a_corrupt_workbook_is_a_file_with_a_warning() {
        use crate::sheet::tests::{PLAIN, xlsx};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("book.xlsx");
        let good = xlsx(&[&["a", "b"]], PLAIN);
        fs::write(&path, &good).unwrap();
        let mut observer = FsObserver::new(dir.path()).with_content_views();
        let first = observer.observe(true).unwrap();
        assert!(first.warnings.is_empty(), "{:?}", first.warnings);
        // The sheet's part cut short, the content types still declaring a
        // workbook: the file changed, as a file, and its cells are gone.
        let text = String::from_utf8_lossy(&good).into_owned();
        assert!(text.contains("[Content_Types].xml"));
        let mut broken = zip::ZipWriter::new(io::Cursor::new(Vec::new()));
        let mut source = zip::ZipArchive::new(io::Cursor::new(&good)).unwrap();
        for i in 0..source.len() {
            let mut entry = source.by_index(i).unwrap();
            let name = entry.name().unwrap().into_owned();
            let mut bytes = Vec::new();
            entry.read_to_end(&mut bytes).unwrap();
            if name.ends_with("sheet1.xml") {
                bytes.truncate(bytes.len() / 2);
            }
            broken
                .start_file(name, zip::write::SimpleFileOptions::default())
                .unwrap();
            io::Write::write_all(&mut broken, &bytes).unwrap();
        }
        rewrite(&path, &broken.finish().unwrap().into_inner());
        let seen = observer.observe(true).unwrap();
        let changes: Vec<(String, Op)> = seen
            .delta
            .changes
            .iter()
            .map(|c| (c.object.clone(), c.op))
            .collect();
        assert_eq!(
            changes,
            [
                ("file/book.xlsx".into(), Op::Update),
                ("xlsx/book.xlsx#Tasks!".into(), Op::Delete),
                ("xlsx/book.xlsx#Tasks!A1".into(), Op::Delete),
                ("xlsx/book.xlsx#Tasks!B1".into(), Op::Delete),
            ]
        );
        assert_eq!(
            seen.warnings,
            ["file/book.xlsx: not readable as an xlsx workbook; observed as a file"]
        );
        // A zip that is no workbook is a file, with nothing to say.
        fs::write(dir.path().join("book.xlsx"), b"PK\x03\x04 not a zip").unwrap();
        let seen = observer.observe(true).unwrap();
        assert!(seen.warnings.is_empty(), "{:?}", seen.warnings);
    }

    #[test]
    fn a_workbook_over_the_budget_is_a_file_with_a_warning() {
        use crate::sheet::tests::{PLAIN, xlsx};
        let dir = tempfile::tempdir().unwrap();
        let long = "x".repeat(4_000);
        let book = xlsx(&[&[long.as_str(), long.as_str()]], PLAIN);
        fs::write(dir.path().join("book.xlsx"), &book).unwrap();
        // Its bytes fit, what they unpack to does not.
        let budget = Budget {
            max_bytes: book.len() as u64 + 100,
            max_time: Duration::from_secs(60),
        };
        let mut observer = FsObserver::new(dir.path())
            .with_content_views()
            .with_budget(budget);
        let snapshot = observer.snapshot().unwrap();
        assert_eq!(
            snapshot.objects.keys().collect::<Vec<_>>(),
            ["file/book.xlsx"]
        );
        let seen = observer.observe(false).unwrap();
        assert_eq!(seen.warnings.len(), 1, "{:?}", seen.warnings);
        assert!(
            seen.warnings[0].starts_with("file/book.xlsx: unpacks to more than"),
            "{:?}",
            seen.warnings
        );
    }

    #[test]
    fn a_csv_file_is_read_as_cells_and_one_that_does_not_parse_as_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("export.CSV");
        fs::write(&path, b"id,body\n1,a\n2,\"b, c\"\n").unwrap();
        // Not named .csv: a file, whatever it holds.
        fs::write(dir.path().join("export.txt"), b"id,body\n").unwrap();
        let mut observer = FsObserver::new(dir.path()).with_content_views();
        let mut ids = Vec::new();
        observer.observe(false).unwrap();
        observer.present(&mut |id| ids.push(id.to_owned())).unwrap();
        assert_eq!(
            ids,
            [
                "csv/export.CSV#A1",
                "csv/export.CSV#A2",
                "csv/export.CSV#A3",
                "csv/export.CSV#B1",
                "csv/export.CSV#B2",
                "csv/export.CSV#B3",
                "file/export.CSV",
                "file/export.txt"
            ]
        );
        // Quoted otherwise, CRLF line ends: the same cells.
        rewrite(&path, b"\"id\",\"body\"\r\n1,\"a\"\r\n2,\"b, c\"\r\n");
        assert_eq!(next(&mut observer), []);
        rewrite(&path, b"id,body\n1,a\n2,\n");
        assert_eq!(
            next(&mut observer),
            [("csv/export.CSV#B3".into(), Op::Delete, true)]
        );
        // A stray quote: no longer CSV, so a file overwritten.
        rewrite(&path, b"id,body\n1,a\"\n");
        let found = next(&mut observer);
        assert!(
            found.contains(&("file/export.CSV".into(), Op::Update, true)),
            "{found:?}"
        );
    }

    #[test]
    fn a_markdown_board_rewritten_whole_changes_only_the_cards_that_changed() {
        let card = |section: &str, text: &str| {
            format!(
                "md/boards/team \\x231.md#{section}/[#{}]",
                &crate::digest_hex(text.as_bytes())[..16]
            )
        };
        let board = |cards: &str| {
            format!("---\nkanban-plugin: basic\n---\n\n## Todo\n\n{cards}\n## Done\n")
        };
        for events in [true, false] {
            let dir = tempfile::tempdir().unwrap();
            fs::create_dir(dir.path().join("boards")).unwrap();
            let path = dir.path().join("boards/team #1.md");
            let mut observer = FsObserver::new(dir.path()).with_content_views();
            if !events {
                observer = observer.without_events();
            }
            observer.observe(false).unwrap();
            // The file made: the file and every object in it are created.
            fs::write(&path, board("- [ ] write\n")).unwrap();
            let made = next(&mut observer);
            assert!(
                made.contains(&("file/boards/team #1.md".into(), Op::Create, false)),
                "{made:?}"
            );
            assert!(
                made.contains(&(card("/Todo", "write"), Op::Create, false)),
                "{made:?}"
            );
            rewrite(&path, board("- [ ] write\n- [ ] test\n").as_bytes());
            assert_eq!(
                next(&mut observer),
                [(card("/Todo", "test"), Op::Create, false)],
                "{events}"
            );
            // The same bytes again: nothing.
            rewrite(&path, board("- [ ] write\n- [ ] test\n").as_bytes());
            assert_eq!(next(&mut observer), [], "{events}");
            rewrite(&path, board("- [ ] test\n").as_bytes());
            assert_eq!(
                next(&mut observer),
                [(card("/Todo", "write"), Op::Delete, true)],
                "{events}"
            );
            // No longer UTF-8: a file, overwritten, its objects gone.
            rewrite(&path, b"## Todo\n\xff\n");
            let found = next(&mut observer);
            assert!(
                found.contains(&("file/boards/team #1.md".into(), Op::Update, true)),
                "{found:?}"
            );
            assert!(
                found.contains(&(card("/Todo", "test"), Op::Delete, true)),
                "{found:?}"
            );
            rewrite(&path, board("- [ ] test\n").as_bytes());
            next(&mut observer);
            fs::remove_file(&path).unwrap();
            let gone = next(&mut observer);
            assert!(
                gone.contains(&("file/boards/team #1.md".into(), Op::Delete, true)),
                "{gone:?}"
            );
            assert!(
                gone.contains(&("md/boards/team \\x231.md#/Done".into(), Op::Delete, true)),
                "{gone:?}"
            );
        }
    }

    #[test]
    fn markdown_appended_to_in_place_destroys_nothing_however_it_reads() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.md");
        // No line end at the end: the append continues the last card.
        fs::write(&path, "# Log\n\n- fed the cat").unwrap();
        let mut observer = FsObserver::new(dir.path()).with_content_views();
        observer.observe(false).unwrap();
        let mut file = fs::OpenOptions::new().append(true).open(&path).unwrap();
        io::Write::write_all(&mut file, b" and the dog\n- watered the beans\n").unwrap();
        drop(file);
        let found = next(&mut observer);
        let card = |text: &str| {
            format!(
                "md/log.md#/Log/[#{}]",
                &crate::digest_hex(text.as_bytes())[..16]
            )
        };
        let mut expected = [
            (card("fed the cat"), Op::Delete, false),
            (card("fed the cat and the dog"), Op::Create, false),
            (card("watered the beans"), Op::Create, false),
        ];
        expected.sort();
        assert_eq!(found, expected);
        // The same change written whole over it is no append: the old card
        // is deleted.
        rewrite(&path, b"# Log\n\n- fed the fish\n- watered the beans\n");
        let found = next(&mut observer);
        assert!(
            found.contains(&(card("fed the cat and the dog"), Op::Delete, true)),
            "{found:?}"
        );
    }

    #[test]
    fn reading_content_leaves_every_byte_inode_and_time_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("tasks.json"), tasks(&[("task-1", "a")])).unwrap();
        fs::write(dir.path().join("log.jsonl"), b"{\"id\":1}\n{\"id\":2}\n").unwrap();
        {
            let conn = database(&dir.path().join("app.db"));
            conn.execute_batch("CREATE TABLE t(x); INSERT INTO t VALUES (1);")
                .unwrap();
            // Left open: the -wal and -shm files stay while the observer reads.
            let state = |root: &Path| -> BTreeMap<PathBuf, (Vec<u8>, u64, i64, i64)> {
                walkdir::WalkDir::new(root)
                    .into_iter()
                    .map(|e| e.unwrap())
                    .filter(|e| e.file_type().is_file())
                    .map(|e| {
                        let m = e.metadata().unwrap();
                        (
                            e.path().to_path_buf(),
                            (
                                fs::read(e.path()).unwrap(),
                                m.ino(),
                                m.mtime_nsec(),
                                m.ctime_nsec(),
                            ),
                        )
                    })
                    .collect()
            };
            let before = state(dir.path());
            assert!(before.keys().any(|p| p.ends_with("app.db-wal")));
            let mut observer = FsObserver::new(dir.path()).with_content_views();
            observer.observe(false).unwrap();
            observer.observe(true).unwrap();
            let mut ids = Vec::new();
            observer.present(&mut |id| ids.push(id.to_owned())).unwrap();
            assert!(
                ids.iter().any(|id| id.starts_with("sqlite/app.db#t/")),
                "{ids:?}"
            );
            assert_eq!(state(dir.path()), before);
            drop(conn);
        }
    }
}

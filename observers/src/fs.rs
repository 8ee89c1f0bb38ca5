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
//! Two readings see past the bytes to what they mean, each in its own
//! function so that another file observer can carry it:
//!
//! - a file that grew since the last snapshot, and whose first bytes are the
//!   old content, was appended to ([`crate::appended`]): its state carries
//!   the digest of its first old-length bytes ([`crate::Head`]), so an
//!   appended log is an additive update, not an overwrite;
//! - a git index (`.git/index`) is digested by what it stages, not by its
//!   stat cache ([`crate::git_index`]): the refresh git makes on first touch
//!   of a copied repository is not a change.
//!
//! Hashing a large tree on every tool call is the cost of this observer, so
//! digests are cached per path and reused only when device, inode, size,
//! mtime and ctime all match *and* the file's timestamps are not "racy": a
//! file touched within [`RACY_WINDOW_NS`] of the moment its digest was taken
//! may have been rewritten in the same coarse clock tick, with the same size,
//! and is hashed again (the rule git applies to its index). The cache only ever
//! saves work; content alone decides what is reported.
//!
//! Reading is not perfectly invisible: files are opened read-only, so bytes,
//! inodes and mtimes never move, but the kernel may update access times
//! (`relatime`). Avoiding that needs `O_NOATIME`, which only the file's owner
//! may use and which std does not expose.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::fs::{self, File, FileType, Metadata};
use std::io::{self, BufReader, Read};
use std::path::{Component, Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use walkdir::WalkDir;

use crate::{ObjectState, ObserveError, Observer, Snapshot};

/// How close (in nanoseconds) a file's mtime or ctime may be to the moment its
/// digest was cached before the cached digest is distrusted. Two seconds covers
/// the coarsest timestamps in common use (FAT) and the 4 ms ticks seen on the
/// servers we audit, with room for a little clock skew.
pub const RACY_WINDOW_NS: i128 = 2_000_000_000;

/// The digest recorded for an entry that exists but could not be read. Not a
/// hex string, so it can never equal the digest of any content, and a report
/// reader sees at once what it means.
pub const UNREADABLE_DIGEST: &str = "unreadable";

/// Read buffer for hashing: big enough that blake3 sees whole chunks.
const HASH_BUFFER: usize = 64 * 1024;

/// Observes a directory tree entry by entry, content-addressed.
#[derive(Debug)]
pub struct FsObserver {
    root: PathBuf,
    excluded: Vec<PathBuf>,
    cache: HashMap<String, CacheEntry>,
    /// Files actually hashed by the last snapshot (the rest came from the
    /// cache); lets tests prove the cache works without timing anything.
    hashed: usize,
}

impl FsObserver {
    /// The root is remembered, not opened: it may not exist yet, and a missing
    /// root is simply an empty store. A root that is itself a symlink is
    /// followed (naming it was the caller's choice); no link below it is.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self {
            root: root.into(),
            excluded: Vec::new(),
            cache: HashMap::new(),
            hashed: 0,
        }
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

    /// The observed root, for reports and error messages.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The excluded sub-trees, relative to the root, as normalized.
    pub fn excluded(&self) -> &[PathBuf] {
        &self.excluded
    }
}

impl Observer for FsObserver {
    fn kind(&self) -> &'static str {
        "fs"
    }

    fn snapshot(&mut self) -> Result<Snapshot, ObserveError> {
        // Taken once, before anything is read: earlier than every stat below,
        // which only makes the racy rule more cautious.
        let now = now_ns();
        let mut old_cache = std::mem::take(&mut self.cache);
        let mut new_cache = HashMap::new();
        self.hashed = 0;
        let mut snapshot = Snapshot::default();

        match fs::metadata(&self.root) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => {
                return Err(ObserveError::Unusable {
                    path: self.root.clone(),
                    reason: "not a directory".into(),
                });
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(snapshot),
            Err(source) => {
                return Err(ObserveError::Io {
                    path: self.root.clone(),
                    source,
                });
            }
        }

        let root = &self.root;
        let excluded = &self.excluded;
        let walker = WalkDir::new(root)
            .follow_links(false)
            .min_depth(1)
            .sort_by_file_name()
            .into_iter()
            .filter_entry(|entry| !is_excluded(root, excluded, entry.path()));

        for item in walker {
            let entry = match item {
                Ok(entry) => entry,
                Err(err) => {
                    snapshot.warnings.push(walk_warning(root, &err));
                    continue;
                }
            };
            let Ok(relative) = entry.path().strip_prefix(root) else {
                // walkdir joins every path onto the root; this cannot happen.
                continue;
            };
            let name = render_path(relative);
            let file_type = entry.file_type();
            if file_type.is_dir() {
                snapshot
                    .objects
                    .insert(format!("dir/{name}"), ObjectState::whole(b"dir"));
            } else if file_type.is_symlink() {
                let id = format!("link/{name}");
                match fs::read_link(entry.path()) {
                    Ok(target) => {
                        snapshot
                            .objects
                            .insert(id, ObjectState::whole(&os_bytes(target.as_os_str())));
                    }
                    Err(e) if e.kind() == io::ErrorKind::NotFound => {
                        snapshot
                            .warnings
                            .push(format!("{id}: vanished while being read"));
                    }
                    Err(e) => {
                        snapshot.warnings.push(format!("{id}: unreadable: {e}"));
                        snapshot.objects.insert(id, unreadable());
                    }
                }
            } else if file_type.is_file() {
                let id = format!("file/{name}");
                let cached = old_cache.remove(&id);
                match observe_file(entry.path(), &name, cached, now) {
                    FileOutcome::Cached(cache_entry) => {
                        snapshot
                            .objects
                            .insert(id.clone(), cache_entry.state.clone());
                        new_cache.insert(id, cache_entry);
                    }
                    FileOutcome::Hashed(cache_entry) => {
                        self.hashed += 1;
                        snapshot
                            .objects
                            .insert(id.clone(), cache_entry.state.clone());
                        if let Some(cache_entry) = cache_entry.into_cacheable() {
                            new_cache.insert(id, cache_entry);
                        }
                    }
                    FileOutcome::Vanished => {
                        snapshot
                            .warnings
                            .push(format!("{id}: vanished while being read"));
                    }
                    FileOutcome::Unreadable(reason) => {
                        snapshot
                            .warnings
                            .push(format!("{id}: unreadable: {reason}"));
                        snapshot.objects.insert(id, unreadable());
                    }
                }
            } else {
                snapshot.objects.insert(
                    format!("special/{name}"),
                    ObjectState::whole(special_kind(&file_type).as_bytes()),
                );
            }
        }

        self.cache = new_cache;
        Ok(snapshot)
    }
}

/// What the filesystem said about a file, reduced to what tells whether its
/// content may have changed since the digest was taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stamp {
    dev: u64,
    ino: u64,
    size: u64,
    mtime_ns: i128,
    ctime_ns: i128,
}

impl Stamp {
    #[cfg(unix)]
    fn of(meta: &Metadata) -> Option<Self> {
        use std::os::unix::fs::MetadataExt;
        let ns = |secs: i64, nanos: i64| i128::from(secs) * 1_000_000_000 + i128::from(nanos);
        Some(Self {
            dev: meta.dev(),
            ino: meta.ino(),
            size: meta.size(),
            mtime_ns: ns(meta.mtime(), meta.mtime_nsec()),
            ctime_ns: ns(meta.ctime(), meta.ctime_nsec()),
        })
    }

    /// Without inode numbers and ctimes the cache would be guessing, so
    /// every file is hashed every time.
    #[cfg(not(unix))]
    fn of(_meta: &Metadata) -> Option<Self> {
        None
    }
}

#[derive(Clone, Debug)]
struct CacheEntry {
    /// `None` when the platform gives no stamp: such an entry is never reused.
    stamp: Option<Stamp>,
    /// Wall-clock time (ns since the epoch) before the stamp was taken.
    taken_at_ns: i128,
    state: ObjectState,
}

impl CacheEntry {
    /// A cached digest is trusted only for the very same file, unchanged by
    /// every measure the filesystem keeps, and only once its timestamps are
    /// clearly older than the moment it was cached: a same-size rewrite in the
    /// same clock tick would otherwise leave every measure unchanged.
    fn reusable_for(&self, stamp: &Stamp) -> bool {
        let Some(cached) = &self.stamp else {
            return false;
        };
        cached == stamp && stamp.mtime_ns.max(stamp.ctime_ns) < self.taken_at_ns - RACY_WINDOW_NS
    }

    fn into_cacheable(self) -> Option<Self> {
        self.stamp.is_some().then_some(self)
    }
}

enum FileOutcome {
    Cached(CacheEntry),
    Hashed(CacheEntry),
    /// Deleted between listing and reading: it is not part of this snapshot.
    Vanished,
    Unreadable(String),
}

/// Reads one regular file's digest, from the cache when it can be trusted.
///
/// The stamp stored with a fresh digest comes from the open handle, taken
/// before the first byte is read, so any later write moves it (or, within one
/// clock tick, trips the racy rule) and forces a re-hash. `relative` is the
/// file's name in the store (to know a git index when it sees one).
fn observe_file(path: &Path, relative: &str, cached: Option<CacheEntry>, now: i128) -> FileOutcome {
    let listed = match fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return FileOutcome::Vanished,
        Err(e) => return FileOutcome::Unreadable(e.to_string()),
    };
    let listed_stamp = Stamp::of(&listed);
    if let (Some(entry), Some(stamp)) = (cached.as_ref(), listed_stamp)
        && entry.reusable_for(&stamp)
    {
        return FileOutcome::Cached(entry.clone());
    }
    let previous = cached.map(|entry| entry.state);
    if !listed.is_file() {
        // Replaced by a link, directory or FIFO since it was listed; opening it
        // now could follow a link out of the root or block on a FIFO.
        return FileOutcome::Unreadable("replaced while being read".into());
    }
    let file = match open_regular(path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return FileOutcome::Vanished,
        Err(e) => return FileOutcome::Unreadable(e.to_string()),
    };
    let opened = match file.metadata() {
        Ok(meta) => meta,
        Err(e) => return FileOutcome::Unreadable(e.to_string()),
    };
    let stamp = Stamp::of(&opened);
    let same_object = match (listed_stamp, stamp) {
        (Some(a), Some(b)) => a.dev == b.dev && a.ino == b.ino,
        _ => true,
    };
    if !opened.is_file() || !same_object {
        // Swapped between stat and open (perhaps for a link pointing out of
        // the root): whatever was opened is not the entry that was listed.
        return FileOutcome::Unreadable("replaced while being read".into());
    }
    let reader = BufReader::with_capacity(HASH_BUFFER, file);
    let state = if crate::git_index::is_index_path(relative)
        && opened.len() <= crate::git_index::MAX_INDEX_BYTES as u64
    {
        index_state(reader)
    } else {
        content_state(reader, previous.as_ref())
    };
    match state {
        Ok(state) => FileOutcome::Hashed(CacheEntry {
            stamp,
            taken_at_ns: now,
            state,
        }),
        Err(e) => FileOutcome::Unreadable(e.to_string()),
    }
}

/// Opens a listed file for hashing without ever blocking or following a
/// link: a FIFO a server swapped in after the listing opens at once (and is
/// then refused as not a regular file) instead of waiting for a writer
/// forever, and a link swapped in fails to open.
fn open_regular(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW)
        .open(path)
}

/// A file's state: the blake3 of its content, and, when it is longer than
/// it was in the `previous` snapshot, the digest of its first
/// `previous.size` bytes, taken in the same pass, so the diff can tell an
/// append from an overwrite.
fn content_state(
    mut reader: impl io::Read,
    previous: Option<&ObjectState>,
) -> io::Result<ObjectState> {
    let mut hasher = blake3::Hasher::new();
    let mut head = None;
    let mut size = 0u64;
    if let Some(previous) = previous {
        size = io::copy(&mut (&mut reader).take(previous.size), &mut hasher)?;
        if size == previous.size {
            head = Some(crate::Head {
                len: size,
                digest: hasher.clone().finalize().to_hex().to_string(),
            });
        }
    }
    size += io::copy(&mut reader, &mut hasher)?;
    // No longer than before: nothing was appended.
    let head = head.filter(|h| size > h.len);
    Ok(ObjectState {
        digest: hasher.finalize().to_hex().to_string(),
        size,
        fields: Default::default(),
        head,
    })
}

/// A git index's state: the digest of what it stages, when it reads as an
/// index; else, like any file, of its bytes.
fn index_state(mut reader: impl io::Read) -> io::Result<ObjectState> {
    let mut bytes = Vec::new();
    reader.read_to_end(&mut bytes)?;
    let digest =
        crate::git_index::content_digest(&bytes).unwrap_or_else(|| crate::digest_hex(&bytes));
    Ok(ObjectState {
        digest,
        size: bytes.len() as u64,
        fields: Default::default(),
        head: None,
    })
}

fn unreadable() -> ObjectState {
    ObjectState {
        digest: UNREADABLE_DIGEST.to_owned(),
        size: 0,
        fields: Default::default(),
        head: None,
    }
}

fn now_ns() -> i128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i128::try_from(d.as_nanos()).unwrap_or(i128::MAX))
        .unwrap_or(0)
}

fn is_excluded(root: &Path, excluded: &[PathBuf], path: &Path) -> bool {
    match path.strip_prefix(root) {
        Ok(relative) => excluded.iter().any(|x| relative.starts_with(x)),
        Err(_) => false,
    }
}

/// A walk error as a warning that names the entry relative to the root, so
/// the same problem reads the same in every copy of the store.
fn walk_warning(root: &Path, err: &walkdir::Error) -> String {
    let name = err
        .path()
        .and_then(|p| p.strip_prefix(root).ok())
        .map(render_path)
        .unwrap_or_default();
    let what = if name.is_empty() {
        "root".to_owned()
    } else {
        format!("dir/{name}")
    };
    match err.io_error() {
        Some(io) => format!("{what}: cannot list: {io}"),
        None => format!("{what}: cannot list: {err}"),
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
    use std::time::Duration;

    use pretty_assertions::assert_eq;

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
        for entry in observer.cache.values_mut() {
            entry.taken_at_ns += 3_600 * 1_000_000_000;
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
    fn racy_rule_distrusts_recently_touched_files() {
        let second = 1_000_000_000;
        let stamp = Stamp {
            dev: 1,
            ino: 2,
            size: 3,
            mtime_ns: 100 * second,
            ctime_ns: 100 * second,
        };
        let entry = |taken_at_ns| CacheEntry {
            stamp: Some(stamp),
            taken_at_ns,
            state: ObjectState::whole(b"abc"),
        };
        // Cached in the same tick as the write, or within the window: re-hash.
        assert!(!entry(100 * second).reusable_for(&stamp));
        assert!(!entry(101 * second).reusable_for(&stamp));
        assert!(!entry(102 * second).reusable_for(&stamp));
        // Cached well after the last write: trusted.
        assert!(entry(102 * second + 1).reusable_for(&stamp));
        // A recent ctime (say, mtime set back with utimensat) is racy too.
        let touched = Stamp {
            ctime_ns: 105 * second,
            ..stamp
        };
        let entry_touched = CacheEntry {
            stamp: Some(touched),
            ..entry(106 * second)
        };
        assert!(!entry_touched.reusable_for(&touched));
        // Any measure that moved: re-hash.
        for changed in [
            Stamp { ino: 9, ..stamp },
            Stamp { dev: 9, ..stamp },
            Stamp { size: 9, ..stamp },
            Stamp {
                mtime_ns: 99 * second,
                ..stamp
            },
            Stamp {
                ctime_ns: 99 * second,
                ..stamp
            },
        ] {
            assert!(!entry(200 * second).reusable_for(&changed));
        }
    }

    #[test]
    fn unchanged_files_are_not_rehashed_once_settled() {
        let dir = tempfile::tempdir().unwrap();
        write(&dir.path().join("a"), b"one");
        write(&dir.path().join("b/c"), b"two");
        let mut observer = FsObserver::new(dir.path());
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
        // A deleted file leaves the cache with its object.
        fs::remove_file(dir.path().join("a")).unwrap();
        observer.snapshot().unwrap();
        assert_eq!(observer.cache.len(), 1);
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
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid C string; mkfifo only creates a node.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        // Would block forever with File::open: nobody writes.
        let opened = open_regular(&fifo).unwrap();
        assert!(!opened.metadata().unwrap().is_file());
        symlink(&fifo, dir.path().join("link")).unwrap();
        assert!(open_regular(&dir.path().join("link")).is_err());
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
        let privileged = File::open(&path).is_ok();
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

    fn overwrite_of(before: &Snapshot, after: &Snapshot, id: &str) -> Option<bool> {
        diff(before, after)
            .changes
            .into_iter()
            .find(|c| c.object == id)
            .and_then(|c| c.overwrite)
    }

    #[test]
    fn an_append_is_an_additive_update_and_a_rewrite_an_overwrite() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("logs/HEAD");
        write(&log, b"0000 1111 first\n");
        let mut observer = FsObserver::new(dir.path());
        let first = observer.snapshot().unwrap();
        let mut file = fs::OpenOptions::new().append(true).open(&log).unwrap();
        file.write_all(b"1111 2222 second\n").unwrap();
        drop(file);
        let appended = observer.snapshot().unwrap();
        assert_eq!(
            overwrite_of(&first, &appended, "file/logs/HEAD"),
            Some(false)
        );
        // Same length grown, different beginning: an overwrite.
        write(&log, b"xxxx 1111 first\n1111 2222 second\nmore\n");
        let rewritten = observer.snapshot().unwrap();
        assert_eq!(
            overwrite_of(&appended, &rewritten, "file/logs/HEAD"),
            Some(true)
        );
        // Shorter: an overwrite, whatever its first bytes.
        write(&log, b"xxxx");
        let cut = observer.snapshot().unwrap();
        assert_eq!(overwrite_of(&rewritten, &cut, "file/logs/HEAD"), Some(true));
        // An append through temp file and rename (a new inode) still begins
        // with the old content: additive.
        rewrite_via_rename(&log, b"xxxx and more");
        let renamed = observer.snapshot().unwrap();
        assert_eq!(overwrite_of(&cut, &renamed, "file/logs/HEAD"), Some(false));
        // A fresh observer knows no earlier length: it claims nothing.
        let mut fresh = FsObserver::new(dir.path());
        let seen = fresh.snapshot().unwrap();
        assert!(seen.objects["file/logs/HEAD"].head.is_none());
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

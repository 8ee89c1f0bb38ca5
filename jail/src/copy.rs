//! Copying a store into the jail so that the copy cannot lead out.
//!
//! A store is the user's data; the copy is what a hostile server gets. So:
//!
//! - a file is copied with the cheapest faithful method the file system
//!   offers: a reflink (`FICLONE`), else `copy_file_range` over the data
//!   ranges only (`SEEK_DATA`/`SEEK_HOLE`), so a sparse file stays sparse,
//!   else plain reads and writes. Never a hard link: a write to a hard link
//!   is a write to the original;
//! - a symbolic link is copied only when it leads to a place inside the
//!   store, and an absolute one is rewritten relative so it leads into the
//!   copy, not back to the original. A link that leaves the store is copied
//!   as a dangling link to `<name>.mcp-witness-outside` beside it: a write
//!   through it lands in the jail, where it is observed, and the report
//!   says which link it was;
//! - a FIFO, socket or device is never opened (opening a FIFO blocks until
//!   someone writes): it is skipped, and the report says so.

use std::ffi::{CStr, OsStr, OsString};
use std::fs::{self, File};
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::{FileTypeExt, PermissionsExt, symlink};
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, RawDir, SeekFrom};
use rustix::io::Errno;

/// Suffix of the dangling target a link that left the store is given.
pub const OUTSIDE_SUFFIX: &str = ".mcp-witness-outside";

/// Copies one store file (a SQLite database or a JSON-lines file). The
/// source may be a link the user named (their choice), but what it names
/// must be a regular file: a FIFO would block the copy forever.
pub fn copy_store_file(source: &Path, target: &Path) -> io::Result<()> {
    let meta = fs::metadata(source)?;
    if !meta.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("not a regular file (a {})", kind_name(&meta.file_type())),
        ));
    }
    copy_regular(source, target)
}

/// Copies the tree at `from` to `to`. Returns one warning per entry that was
/// not copied as it is (a link that left the store, a special file).
pub fn copy_tree(from: &Path, to: &Path) -> io::Result<Vec<String>> {
    let root = from.canonicalize()?;
    let mut warnings = Vec::new();
    copy_dir(&root, &root, to, &mut warnings)?;
    Ok(warnings)
}

fn copy_dir(root: &Path, dir: &Path, to: &Path, warnings: &mut Vec<String>) -> io::Result<()> {
    fs::create_dir_all(to)?;
    let mut entries: Vec<fs::DirEntry> = fs::read_dir(dir)?.collect::<Result<_, _>>()?;
    // Sorted, so warnings come in the same order on every run.
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let kind = entry.file_type()?;
        let path = entry.path();
        let target = to.join(entry.file_name());
        let shown = path
            .strip_prefix(root)
            .unwrap_or(&path)
            .display()
            .to_string();
        if kind.is_dir() {
            copy_dir(root, &path, &target, warnings)?;
        } else if kind.is_symlink() {
            copy_link(root, &path, &target, &shown, warnings)?;
        } else if kind.is_file() {
            copy_regular(&path, &target)?;
        } else {
            warnings.push(format!(
                "{shown}: a {} is never opened; it was not copied into the jail",
                kind_name(&kind)
            ));
        }
    }
    Ok(())
}

/// Makes a copy-on-write view of the tree at `from`, mounted at `view`,
/// hold what [`copy_tree`] would have copied: the same links rewritten or
/// made dangling (in the view, which writes them to its upper layer) and
/// the same special files left out (a whiteout in the view hides a socket
/// that a live process of the user may still listen on). Regular files and
/// directories are not opened: the walk reads directories only, so its cost
/// follows the number of entries, never their bytes. Returns the same
/// warnings as the copy, in the same order.
///
/// The walk reads each directory of the original with `getdents` into one
/// buffer and judges every entry by its type there (`d_type`): a regular
/// file costs no system call, no allocation and no sort. Only the entries
/// that may need work (directories, links, special files, and those whose
/// type the file system did not give, which are `lstat`ed) are kept, by
/// name, and only they are sorted, so the warnings and the order of the
/// changes are the copy's. Subdirectories are opened relative to their
/// parent's descriptor, never following a link. Two walkers share the
/// directories (the kernel's listing is most of the cost, and runs on two
/// cores where they are free); the warnings are put in the copy's order
/// when both are done.
pub fn adjust_view(from: &Path, view: &Path) -> io::Result<Vec<String>> {
    let root = from.canonicalize()?;
    let top = open_dir(rustix::fs::CWD, &root)?;
    let walk = ViewWalk {
        root: &root,
        state: Mutex::new(WalkState {
            waiting: vec![DirJob {
                id: 0,
                at: DirAt::Open(top),
                dir: root.clone(),
                view: view.to_path_buf(),
            }],
            running: 0,
            walked: vec![None],
            failed: None,
        }),
        changed: Condvar::new(),
    };
    std::thread::scope(|scope| {
        // Two walkers where a thread can be had (the kernel's listing of
        // the directories is most of the work), else this one alone. The
        // helper shares this thread's mount namespace and so sees the view.
        let helper = std::thread::Builder::new()
            .name("view-walk".into())
            .spawn_scoped(scope, || walk.work());
        walk.work();
        if let Ok(helper) = helper
            && let Err(panic) = helper.join()
        {
            std::panic::resume_unwind(panic);
        }
    });
    walk.warnings()
}

/// Bytes of directory entries one `getdents` reads: a directory of a
/// thousand short names in one or two calls. Grown when one entry does not
/// fit (a file system with names longer than Linux's usual 255 bytes).
const DIR_BUFFER: usize = 32 * 1024;

/// The most the buffer grows to before an entry is taken as unreadable.
const DIR_BUFFER_MAX: usize = 1 << 20;

/// One walk of an original for its view, shared by its walkers.
struct ViewWalk<'a> {
    /// The original, canonical.
    root: &'a Path,
    state: Mutex<WalkState>,
    /// Signalled when a directory is walked or the walk failed.
    changed: Condvar,
}

struct WalkState {
    /// Directories to walk.
    waiting: Vec<DirJob>,
    /// How many directories are being walked.
    running: usize,
    /// What each directory held that the warnings need, by its id (the
    /// original's own directory is 0); `None` until it is walked.
    walked: Vec<Option<Walked>>,
    /// The first error; the walk stops at it.
    failed: Option<io::Error>,
}

/// One directory of the original to walk, and its place in the view.
struct DirJob {
    id: usize,
    at: DirAt,
    /// Its path in the original (for links' judgement and the warnings).
    dir: PathBuf,
    view: PathBuf,
}

/// How a directory to walk is reached.
enum DirAt {
    /// Open already (the original's own directory).
    Open(OwnedFd),
    /// By name in its parent, opened when it is walked (so only the
    /// directories being walked and the parents of those waiting are open).
    Child(Arc<OwnedFd>, OsString),
}

/// A directory walked: its warnings and subdirectories, in name order.
struct Walked {
    items: Vec<Item>,
    /// The id of its first subdirectory; the others follow it.
    first_child: usize,
}

enum Item {
    Warning(String),
    /// Its `k`-th subdirectory walked.
    Child(usize),
}

impl ViewWalk<'_> {
    fn lock(&self) -> MutexGuard<'_, WalkState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Walks waiting directories until none is left or the walk failed.
    fn work(&self) {
        let mut buffer = Vec::with_capacity(DIR_BUFFER);
        let mut state = self.lock();
        while state.failed.is_none() {
            let Some(job) = state.waiting.pop() else {
                if state.running == 0 {
                    break;
                }
                state = self
                    .changed
                    .wait(state)
                    .unwrap_or_else(PoisonError::into_inner);
                continue;
            };
            state.running += 1;
            drop(state);
            let id = job.id;
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                self.adjust_dir(job, &mut buffer)
            }));
            state = self.lock();
            state.running -= 1;
            let outcome = match outcome {
                Ok(outcome) => outcome,
                Err(panic) => {
                    // The other walker must not wait for this one: it stops,
                    // and the panic goes on to the scope that joins them.
                    state
                        .failed
                        .get_or_insert_with(|| io::Error::other("a walker of the view panicked"));
                    drop(state);
                    self.changed.notify_all();
                    std::panic::resume_unwind(panic);
                }
            };
            match outcome {
                Ok((items, children)) => {
                    let first_child = state.walked.len();
                    state
                        .walked
                        .resize_with(first_child + children.len(), || None);
                    for (k, mut child) in children.into_iter().enumerate() {
                        child.id = first_child + k;
                        state.waiting.push(child);
                    }
                    if let Some(slot) = state.walked.get_mut(id) {
                        *slot = Some(Walked { items, first_child });
                    }
                }
                Err(e) => {
                    state.failed.get_or_insert(e);
                }
            }
            self.changed.notify_all();
        }
        drop(state);
        self.changed.notify_all();
    }

    /// Adjusts the view's directory `job.view` to what the copy of the
    /// original's directory `job.dir` would hold. Returns its warnings and
    /// subdirectories in name order, and the subdirectories to walk.
    fn adjust_dir(
        &self,
        job: DirJob,
        buffer: &mut Vec<u8>,
    ) -> io::Result<(Vec<Item>, Vec<DirJob>)> {
        let fd = match job.at {
            DirAt::Open(fd) => fd,
            DirAt::Child(parent, name) => open_dir(&*parent, &name)?,
        };
        let fd = Arc::new(fd);
        let mut notable = notable_entries(&fd, buffer)?;
        // By name, as the copy goes, so warnings come in its order (names
        // are unique within a directory: unstable sorting is the same).
        notable.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let (mut items, mut children) = (Vec::new(), Vec::new());
        for (name, kind) in notable {
            let path = job.dir.join(&name);
            let target = job.view.join(&name);
            match kind {
                FileType::Directory => {
                    // Not in the view: a file system mounted there (not crossed).
                    if target.is_dir() {
                        items.push(Item::Child(children.len()));
                        children.push(DirJob {
                            id: 0,
                            at: DirAt::Child(Arc::clone(&fd), name),
                            dir: path,
                            view: target,
                        });
                    }
                }
                FileType::Symlink => {
                    let text = read_link_at(&fd, &name)?;
                    let inside = inside_target(self.root, &path, &text);
                    if inside.as_deref() == Some(text.as_path()) {
                        continue;
                    }
                    // Rewritten or made dangling, as the copy would have it.
                    remove_from_view(&target)?;
                    let shown = shown(self.root, &path);
                    if let Some(warning) = make_link(inside, &text, &target, &shown)? {
                        items.push(Item::Warning(warning));
                    }
                }
                special => {
                    remove_from_view(&target)?;
                    items.push(Item::Warning(format!(
                        "{}: a {} is never opened; it was left out of the jail",
                        shown(self.root, &path),
                        special_name(special)
                    )));
                }
            }
        }
        Ok((items, children))
    }

    /// The warnings of the whole walk, depth first and by name within each
    /// directory, as the copy gives them; or the walk's error.
    fn warnings(self) -> io::Result<Vec<String>> {
        let mut state = self
            .state
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(error) = state.failed {
            return Err(error);
        }
        let mut warnings = Vec::new();
        // (directory id, its next item)
        let mut stack = vec![(0, 0)];
        while let Some((id, at)) = stack.pop() {
            let Some(Some(walked)) = state.walked.get_mut(id) else {
                continue;
            };
            let first_child = walked.first_child;
            match walked.items.get_mut(at) {
                None => {}
                Some(Item::Warning(warning)) => {
                    warnings.push(std::mem::take(warning));
                    stack.push((id, at + 1));
                }
                Some(Item::Child(k)) => {
                    stack.push((id, at + 1));
                    stack.push((first_child + *k, 0));
                }
            }
        }
        Ok(warnings)
    }
}

/// The entries of the directory open as `fd` that a view may need changed,
/// with their types: everything but `.`, `..` and regular files.
fn notable_entries(fd: &OwnedFd, buffer: &mut Vec<u8>) -> io::Result<Vec<(OsString, FileType)>> {
    let mut notable = Vec::new();
    // Cut short when the next entry does not fit in the whole buffer: grow
    // it and read on from where this left off (the descriptor's offset; a
    // failed read moves nothing).
    while !read_notable(fd, buffer, &mut notable)? {
        if buffer.capacity() >= DIR_BUFFER_MAX {
            return Err(Errno::INVAL.into());
        }
        buffer.reserve(buffer.capacity().max(DIR_BUFFER) * 2);
    }
    Ok(notable)
}

/// Reads the rest of the directory `fd` into `notable` (see
/// [`notable_entries`]) with `buffer`: `false` when the next entry does not
/// fit in it.
fn read_notable(
    fd: &OwnedFd,
    buffer: &mut Vec<u8>,
    notable: &mut Vec<(OsString, FileType)>,
) -> io::Result<bool> {
    let mut entries = RawDir::new(fd.as_fd(), buffer.spare_capacity_mut());
    while let Some(entry) = entries.next() {
        let entry = match entry {
            Ok(entry) => entry,
            Err(Errno::INVAL) => return Ok(false),
            Err(e) => return Err(e.into()),
        };
        let name = entry.file_name();
        if matches!(name.to_bytes(), b"." | b"..") {
            continue;
        }
        if let Some(kind) = notable_kind(fd, name, entry.file_type())? {
            notable.push((OsStr::from_bytes(name.to_bytes()).to_os_string(), kind));
        }
    }
    Ok(true)
}

/// The type of the entry `name` of the directory `fd` when a view may need
/// it changed, `None` for a regular file. `listed` is the type `getdents`
/// gave; where the file system gave none, the entry is `lstat`ed (never
/// followed).
fn notable_kind(fd: &OwnedFd, name: &CStr, listed: FileType) -> io::Result<Option<FileType>> {
    let kind = match listed {
        FileType::Unknown => {
            let stat = rustix::fs::statat(fd, name, AtFlags::SYMLINK_NOFOLLOW)?;
            FileType::from_raw_mode(stat.st_mode)
        }
        kind => kind,
    };
    Ok((kind != FileType::RegularFile).then_some(kind))
}

/// Opens the directory `name` of `at` for reading its entries; a link there
/// is refused, not followed.
fn open_dir<P: rustix::path::Arg>(at: impl AsFd, name: P) -> io::Result<OwnedFd> {
    Ok(rustix::fs::openat(
        at,
        name,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )?)
}

/// The text of the link `name` in the directory `fd`.
fn read_link_at(fd: &OwnedFd, name: &OsStr) -> io::Result<PathBuf> {
    let text = rustix::fs::readlinkat(fd, name, Vec::new())?;
    Ok(PathBuf::from(OsString::from_vec(text.into_bytes())))
}

/// `path` as the warnings show it: relative to the store.
fn shown(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// The name of a file type the copy never opens, as [`kind_name`] gives it.
fn special_name(kind: FileType) -> &'static str {
    match kind {
        FileType::Fifo => "FIFO",
        FileType::Socket => "socket",
        FileType::BlockDevice => "block device",
        FileType::CharacterDevice => "character device",
        FileType::Directory => "directory",
        _ => "special file",
    }
}

/// Removes an entry from a view. One that is not there is what was wanted:
/// beneath a file system mounted inside the store, which the view does not
/// cross, there is nothing to remove.
fn remove_from_view(path: &Path) -> io::Result<()> {
    match fs::remove_file(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        done => done,
    }
}

/// A link is kept when it leads inside the store, and made dangling when it
/// leaves it.
fn copy_link(
    root: &Path,
    link: &Path,
    target: &Path,
    shown: &str,
    warnings: &mut Vec<String>,
) -> io::Result<()> {
    let text = fs::read_link(link)?;
    warnings.extend(make_link(
        inside_target(root, link, &text),
        &text,
        target,
        shown,
    )?);
    Ok(())
}

/// Makes at `target` the link a link with text `text` is copied as: `kept`
/// (what [`inside_target`] gave) when it leads inside the store, else a
/// dangling link, and returns that one's warning.
fn make_link(
    kept: Option<PathBuf>,
    text: &Path,
    target: &Path,
    shown: &str,
) -> io::Result<Option<String>> {
    match kept {
        Some(kept) => symlink(kept, target).map(|()| None),
        None => {
            let mut dangling = target.file_name().unwrap_or_default().to_os_string();
            dangling.push(OUTSIDE_SUFFIX);
            let warning = format!(
                "{shown}: a link that leaves the store (to {}); copied as a dangling link to {}",
                text.display(),
                Path::new(&dangling).display()
            );
            symlink(dangling, target).map(|()| Some(warning))
        }
    }
}

/// The text the copied link gets when `link` (with target `text`) leads to
/// a place inside `root`, or `None` when it leaves it.
///
/// A link that resolves is judged by where the whole chain really ends
/// (`canonicalize` on the original), which no lexical reading of `..` can
/// fool. A dangling one cannot be resolved; creating a file through it would
/// create its target, so it is kept only when its text can only go down
/// from the link's directory (relative, no `..`).
fn inside_target(root: &Path, link: &Path, text: &Path) -> Option<PathBuf> {
    match link.canonicalize() {
        Ok(real) => {
            let inside = real.strip_prefix(root).ok()?;
            if text.is_relative() {
                return Some(text.to_path_buf());
            }
            // Absolute but inside: relative, so it leads into the copy.
            let from = link.parent()?.strip_prefix(root).ok()?;
            let mut relative = PathBuf::new();
            for _ in from.components() {
                relative.push("..");
            }
            relative.push(inside);
            if relative.as_os_str().is_empty() {
                relative.push(".");
            }
            Some(relative)
        }
        Err(_) => {
            let downward = text.is_relative()
                && text
                    .components()
                    .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
            downward.then(|| text.to_path_buf())
        }
    }
}

fn kind_name(kind: &fs::FileType) -> &'static str {
    if kind.is_fifo() {
        "FIFO"
    } else if kind.is_socket() {
        "socket"
    } else if kind.is_block_device() {
        "block device"
    } else if kind.is_char_device() {
        "character device"
    } else if kind.is_dir() {
        "directory"
    } else {
        "special file"
    }
}

/// Copies a regular file with its permission bits: reflink, else the data
/// ranges, else a plain copy.
fn copy_regular(source: &Path, target: &Path) -> io::Result<()> {
    let from = File::open(source)?;
    let meta = from.metadata()?;
    if !meta.is_file() {
        // Swapped for something else between listing and opening.
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "no longer a regular file",
        ));
    }
    let to = File::create(target)?;
    if !reflink(&from, &to) {
        copy_data_ranges(&from, &to, meta.len())?;
    }
    to.set_permissions(fs::Permissions::from_mode(meta.permissions().mode()))?;
    Ok(())
}

/// A copy-on-write clone of the whole file, where the file system has them.
fn reflink(from: &File, to: &File) -> bool {
    rustix::fs::ioctl_ficlone(to, from).is_ok()
}

/// Copies the data ranges of `from` into `to` and leaves the holes as holes.
fn copy_data_ranges(from: &File, to: &File, len: u64) -> io::Result<()> {
    to.set_len(len)?;
    let mut at: u64 = 0;
    while at < len {
        let data = match rustix::fs::seek(from, SeekFrom::Data(at)) {
            Ok(data) => data,
            // No data after `at`: the rest is a hole.
            Err(Errno::NXIO) => return Ok(()),
            // The file system cannot tell holes: copy everything.
            Err(_) => return copy_range(from, to, at, len),
        };
        let hole = rustix::fs::seek(from, SeekFrom::Hole(data)).map_or(len, |hole| hole.min(len));
        copy_range(from, to, data, hole)?;
        at = hole;
    }
    Ok(())
}

/// Copies bytes `[start, end)` at the same offsets: `copy_file_range`, or
/// reads and writes where the kernel will not.
fn copy_range(from: &File, to: &File, start: u64, end: u64) -> io::Result<()> {
    let mut off_in = start;
    let mut off_out = start;
    while off_in < end {
        let want = usize::try_from(end - off_in)
            .unwrap_or(usize::MAX)
            .min(1 << 30);
        match rustix::fs::copy_file_range(from, Some(&mut off_in), to, Some(&mut off_out), want) {
            Ok(0) => {
                // The source ended early (it shrank while being copied).
                return Ok(());
            }
            Ok(_) | Err(Errno::INTR) => continue,
            Err(_) => return copy_by_hand(from, to, off_in, end),
        }
    }
    Ok(())
}

fn copy_by_hand(from: &File, to: &File, start: u64, end: u64) -> io::Result<()> {
    use std::os::unix::fs::FileExt;
    let mut buf = vec![0u8; 256 * 1024];
    let mut at = start;
    while at < end {
        let want = usize::try_from(end - at)
            .unwrap_or(buf.len())
            .min(buf.len());
        let n = from.read_at(&mut buf[..want], at)?;
        if n == 0 {
            break;
        }
        to.write_all_at(&buf[..n], at)?;
        at += n as u64;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::os::unix::fs::MetadataExt;

    use super::*;

    fn tempdir() -> tempfile::TempDir {
        match tempfile::tempdir() {
            Ok(dir) => dir,
            Err(e) => panic!("no temporary directory: {e}"),
        }
    }

    fn mkfifo(path: &Path) {
        let made = rustix::fs::mkfifoat(rustix::fs::CWD, path, rustix::fs::Mode::from(0o600));
        assert!(made.is_ok(), "mkfifo {}: {made:?}", path.display());
    }

    #[test]
    fn links_that_leave_the_store_dangle_and_links_inside_lead_into_the_copy() {
        let outside = tempdir();
        let secret = outside.path().join("real.txt");
        assert!(fs::write(&secret, b"the original").is_ok());
        let store = tempdir();
        let root = store.path();
        assert!(fs::create_dir_all(root.join("d/e")).is_ok());
        assert!(fs::write(root.join("d/a.txt"), b"a").is_ok());
        assert!(symlink(&secret, root.join("abs-out")).is_ok());
        assert!(symlink("../../x", root.join("d/rel-out")).is_ok());
        assert!(symlink(root.join("d/a.txt"), root.join("d/e/abs-in")).is_ok());
        assert!(symlink("a.txt", root.join("d/rel-in")).is_ok());
        // Lexically inside, really outside: `here` is the root itself.
        assert!(symlink(".", root.join("here")).is_ok());
        assert!(symlink("here/../escape", root.join("sneaky")).is_ok());
        assert!(symlink("missing/file", root.join("dangling-down")).is_ok());
        let jail = tempdir();
        let copy = jail.path().join("tree");
        let warnings = match copy_tree(root, &copy) {
            Ok(w) => w,
            Err(e) => panic!("copy: {e}"),
        };
        let link = |p: &str| fs::read_link(copy.join(p)).ok();
        assert_eq!(
            link("abs-out"),
            Some(PathBuf::from("abs-out.mcp-witness-outside"))
        );
        assert_eq!(
            link("d/rel-out"),
            Some(PathBuf::from("rel-out.mcp-witness-outside"))
        );
        assert_eq!(link("d/e/abs-in"), Some(PathBuf::from("../../d/a.txt")));
        assert_eq!(link("d/rel-in"), Some(PathBuf::from("a.txt")));
        assert_eq!(
            link("sneaky"),
            Some(PathBuf::from("sneaky.mcp-witness-outside"))
        );
        assert_eq!(link("dangling-down"), Some(PathBuf::from("missing/file")));
        assert_eq!(fs::read(copy.join("d/e/abs-in")).ok(), Some(b"a".to_vec()));
        // Writing through the made-dangling link stays in the jail.
        assert!(fs::write(copy.join("abs-out"), b"hostile").is_ok());
        assert_eq!(fs::read(&secret).ok(), Some(b"the original".to_vec()));
        assert!(copy.join("abs-out.mcp-witness-outside").exists());
        assert_eq!(warnings.len(), 3, "{warnings:?}");
        assert!(warnings[0].starts_with("abs-out: a link that leaves the store"));
    }

    #[test]
    fn fifos_are_skipped_with_a_warning_and_refused_as_store_files() {
        let store = tempdir();
        assert!(fs::write(store.path().join("a.txt"), b"a").is_ok());
        mkfifo(&store.path().join("pipe"));
        let jail = tempdir();
        let copy = jail.path().join("tree");
        let warnings = copy_tree(store.path(), &copy).unwrap_or_default();
        assert_eq!(
            warnings,
            ["pipe: a FIFO is never opened; it was not copied into the jail"]
        );
        assert!(!copy.join("pipe").exists());
        let error = copy_store_file(&store.path().join("pipe"), &jail.path().join("db"));
        assert_eq!(
            error.map_err(|e| e.to_string()).err().as_deref(),
            Some("not a regular file (a FIFO)")
        );
    }

    #[test]
    fn a_sparse_file_stays_sparse_and_keeps_its_bytes_and_mode() {
        let store = tempdir();
        let source = store.path().join("sparse.bin");
        let file = File::create(&source);
        let Ok(mut file) = file else {
            panic!("create");
        };
        assert!(file.write_all(b"head").is_ok());
        assert!(file.set_len(1 << 30).is_ok());
        use std::os::unix::fs::FileExt;
        assert!(file.write_all_at(b"tail", (1 << 30) - 4).is_ok());
        assert!(fs::set_permissions(&source, fs::Permissions::from_mode(0o640)).is_ok());
        let jail = tempdir();
        let target = jail.path().join("copy.bin");
        assert!(copy_store_file(&source, &target).is_ok());
        let Ok(meta) = fs::metadata(&target) else {
            panic!("no copy");
        };
        assert_eq!(meta.len(), 1 << 30);
        assert_eq!(meta.mode() & 0o777, 0o640);
        // A GiB of apparent size in a few blocks.
        assert!(meta.blocks() * 512 < 1 << 20, "{} blocks", meta.blocks());
        let Ok(copy) = File::open(&target) else {
            panic!("open");
        };
        let mut tail = [0u8; 4];
        assert!(copy.read_exact_at(&mut tail, (1 << 30) - 4).is_ok());
        assert_eq!(&tail, b"tail");
        // Never a hard link to the original.
        assert_ne!(
            fs::metadata(&source).map(|m| m.ino()).ok(),
            Some(meta.ino())
        );
    }

    /// What a view shows before it is adjusted: the tree as it is, every
    /// link and special file verbatim (overlayfs shows the lower layer so).
    fn verbatim(from: &Path, to: &Path) {
        assert!(fs::create_dir_all(to).is_ok());
        let Ok(entries) = fs::read_dir(from) else {
            panic!("read_dir {}", from.display());
        };
        for entry in entries.filter_map(Result::ok) {
            let (path, target) = (entry.path(), to.join(entry.file_name()));
            let Ok(kind) = entry.file_type() else {
                panic!("file type");
            };
            if kind.is_dir() {
                verbatim(&path, &target);
            } else if kind.is_symlink() {
                let text = fs::read_link(&path).unwrap_or_default();
                assert!(symlink(text, &target).is_ok());
            } else if kind.is_fifo() {
                mkfifo(&target);
            } else if kind.is_socket() {
                // The socket's file stays when its listener is closed.
                bind_socket(&target);
            } else {
                assert!(fs::copy(&path, &target).is_ok());
            }
        }
    }

    /// Every entry of a tree: its path and, for a link, its text.
    fn listing(root: &Path) -> Vec<(PathBuf, Option<PathBuf>)> {
        let mut out = Vec::new();
        let mut dirs = vec![root.to_path_buf()];
        while let Some(dir) = dirs.pop() {
            for entry in fs::read_dir(&dir)
                .into_iter()
                .flatten()
                .filter_map(Result::ok)
            {
                let path = entry.path();
                let relative = path.strip_prefix(root).unwrap_or(&path).to_path_buf();
                let link = fs::read_link(&path).ok();
                if entry.file_type().is_ok_and(|k| k.is_dir()) {
                    dirs.push(path);
                }
                out.push((relative, link));
            }
        }
        out.sort();
        out
    }

    #[test]
    fn a_view_adjusted_holds_what_a_copy_holds() {
        let outside = tempdir();
        let secret = outside.path().join("real.txt");
        assert!(fs::write(&secret, b"the original").is_ok());
        let store = tempdir();
        let root = store.path();
        assert!(fs::create_dir_all(root.join("d/e")).is_ok());
        assert!(fs::write(root.join("d/a.txt"), b"a").is_ok());
        assert!(symlink(&secret, root.join("abs-out")).is_ok());
        assert!(symlink("../../x", root.join("d/rel-out")).is_ok());
        assert!(symlink(root.join("d/a.txt"), root.join("d/e/abs-in")).is_ok());
        assert!(symlink("a.txt", root.join("d/rel-in")).is_ok());
        assert!(symlink("missing/file", root.join("dangling-down")).is_ok());
        mkfifo(&root.join("d/pipe"));
        let jail = tempdir();
        let copy = jail.path().join("copy");
        let copied = copy_tree(root, &copy).unwrap_or_default();
        let view = jail.path().join("view");
        verbatim(root, &view);
        let viewed = match adjust_view(root, &view) {
            Ok(warnings) => warnings,
            Err(e) => panic!("adjust: {e}"),
        };
        assert_eq!(listing(&view), listing(&copy));
        assert_eq!(
            viewed,
            [
                "abs-out: a link that leaves the store (to REAL); copied as a dangling link to abs-out.mcp-witness-outside"
                    .replace("REAL", &secret.display().to_string()),
                "d/pipe: a FIFO is never opened; it was left out of the jail".into(),
                "d/rel-out: a link that leaves the store (to ../../x); copied as a dangling link to rel-out.mcp-witness-outside"
                    .into(),
            ]
        );
        assert_eq!(copied.len(), viewed.len(), "{copied:?}");
        assert_eq!(fs::read(&secret).ok(), Some(b"the original".to_vec()));
    }

    /// A tree `depth` directories deep with `files` regular files in each,
    /// and, at the bottom, a link that leaves the store (absolute), one that
    /// climbs out of it (relative), one that stays inside, a FIFO and a
    /// socket. Returns the bottom directory, relative to the root, and the
    /// socket's listener (the socket is live, as a user's may be).
    fn deep_tree(
        root: &Path,
        secret: &Path,
        depth: usize,
        files: usize,
    ) -> (PathBuf, std::os::unix::net::UnixListener) {
        let mut bottom = PathBuf::new();
        for level in 0..depth {
            bottom.push(format!("level-{level:02}"));
            let dir = root.join(&bottom);
            assert!(fs::create_dir_all(&dir).is_ok());
            for n in 0..files {
                assert!(fs::write(dir.join(format!("f{n:03}.txt")), b"x").is_ok());
            }
        }
        let dir = root.join(&bottom);
        assert!(symlink(secret, dir.join("escape-abs")).is_ok());
        let up: PathBuf = std::iter::repeat_n("..", depth + 1).collect();
        assert!(symlink(up.join("outside.txt"), dir.join("escape-rel")).is_ok());
        assert!(symlink("f000.txt", dir.join("stays")).is_ok());
        mkfifo(&dir.join("pipe"));
        (bottom, bind_socket(&dir.join("sock")))
    }

    /// A listening socket at `path`, bound through its directory's
    /// descriptor: a deep path is longer than a socket address may be.
    fn bind_socket(path: &Path) -> std::os::unix::net::UnixListener {
        let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
            panic!("no directory in {}", path.display());
        };
        let Ok(held) = open_dir(rustix::fs::CWD, dir) else {
            panic!("open {}", dir.display());
        };
        let at = Path::new("/proc/self/fd")
            .join(std::os::fd::AsRawFd::as_raw_fd(&held).to_string())
            .join(name);
        match std::os::unix::net::UnixListener::bind(&at) {
            Ok(listener) => listener,
            Err(e) => panic!("socket {}: {e}", path.display()),
        }
    }

    #[test]
    fn a_link_leaving_the_store_and_a_fifo_deep_in_a_tree_are_neutralised_in_its_view() {
        let outside = tempdir();
        let secret = outside.path().join("real.txt");
        assert!(fs::write(&secret, b"the original").is_ok());
        let store = tempdir();
        let root = store.path();
        let (bottom, _listener) = deep_tree(root, &secret, 24, 40);
        let jail = tempdir();
        let copy = jail.path().join("copy");
        let copied = copy_tree(root, &copy).unwrap_or_default();
        let view = jail.path().join("view");
        verbatim(root, &view);
        let viewed = match adjust_view(root, &view) {
            Ok(warnings) => warnings,
            Err(e) => panic!("adjust: {e}"),
        };
        let deep = view.join(&bottom);
        let link = |name: &str| fs::read_link(deep.join(name)).ok();
        assert_eq!(
            link("escape-abs"),
            Some(PathBuf::from("escape-abs.mcp-witness-outside"))
        );
        assert_eq!(
            link("escape-rel"),
            Some(PathBuf::from("escape-rel.mcp-witness-outside"))
        );
        assert_eq!(link("stays"), Some(PathBuf::from("f000.txt")));
        assert!(fs::symlink_metadata(deep.join("pipe")).is_err());
        assert!(fs::symlink_metadata(deep.join("sock")).is_err());
        // The same tree as the copy, the same warnings in the same order.
        assert_eq!(listing(&view), listing(&copy));
        let shown = bottom.display().to_string();
        assert_eq!(
            viewed,
            [
                format!(
                    "{shown}/escape-abs: a link that leaves the store (to {}); copied as a dangling link to escape-abs.mcp-witness-outside",
                    secret.display()
                ),
                format!(
                    "{shown}/escape-rel: a link that leaves the store (to {}); copied as a dangling link to escape-rel.mcp-witness-outside",
                    fs::read_link(root.join(&bottom).join("escape-rel"))
                        .unwrap_or_default()
                        .display()
                ),
                format!("{shown}/pipe: a FIFO is never opened; it was left out of the jail"),
                format!("{shown}/sock: a socket is never opened; it was left out of the jail"),
            ]
        );
        assert_eq!(copied.len(), viewed.len(), "{copied:?}");
        // A write through the neutralised link lands in the view.
        assert!(fs::write(deep.join("escape-abs"), b"hostile").is_ok());
        assert_eq!(fs::read(&secret).ok(), Some(b"the original".to_vec()));
        assert!(deep.join("escape-abs.mcp-witness-outside").exists());
    }

    #[test]
    fn an_entry_whose_type_the_listing_did_not_give_is_looked_at_not_followed() {
        let outside = tempdir();
        let secret = outside.path().join("real.txt");
        assert!(fs::write(&secret, b"the original").is_ok());
        let store = tempdir();
        let root = store.path();
        assert!(fs::write(root.join("file"), b"f").is_ok());
        assert!(fs::create_dir(root.join("dir")).is_ok());
        assert!(symlink(&secret, root.join("link")).is_ok());
        mkfifo(&root.join("pipe"));
        let Ok(fd) = open_dir(rustix::fs::CWD, root) else {
            panic!("open");
        };
        // As a file system without d_type lists every entry.
        let kind = |name: &CStr| notable_kind(&fd, name, FileType::Unknown).ok();
        assert_eq!(kind(c"file"), Some(None));
        assert_eq!(kind(c"dir"), Some(Some(FileType::Directory)));
        // The link itself, not the regular file it names.
        assert_eq!(kind(c"link"), Some(Some(FileType::Symlink)));
        assert_eq!(kind(c"pipe"), Some(Some(FileType::Fifo)));
        assert!(notable_kind(&fd, c"gone", FileType::Unknown).is_err());
        // A type the listing gave is taken as given: no look at the entry.
        assert_eq!(
            notable_kind(&fd, c"gone", FileType::RegularFile).ok(),
            Some(None)
        );
    }

    #[test]
    fn a_name_too_long_for_the_buffer_grows_it_and_the_listing_goes_on() {
        let store = tempdir();
        let root = store.path();
        let long = "l".repeat(200);
        assert!(fs::create_dir(root.join(&long)).is_ok());
        for n in 0..50 {
            assert!(fs::write(root.join(format!("f{n}")), b"x").is_ok());
        }
        mkfifo(&root.join("pipe"));
        let Ok(fd) = open_dir(rustix::fs::CWD, root) else {
            panic!("open");
        };
        // Room for a short entry or two, not for the long one.
        let mut buffer = Vec::with_capacity(64);
        let mut notable = match notable_entries(&fd, &mut buffer) {
            Ok(notable) => notable,
            Err(e) => panic!("list: {e}"),
        };
        notable.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(
            notable,
            [
                (OsString::from(long), FileType::Directory),
                (OsString::from("pipe"), FileType::Fifo),
            ]
        );
        assert!(buffer.capacity() > 64);
    }

    #[test]
    fn two_walkers_give_the_copys_warnings_in_the_copys_order() {
        let outside = tempdir();
        let secret = outside.path().join("real.txt");
        assert!(fs::write(&secret, b"the original").is_ok());
        let store = tempdir();
        let root = store.path();
        // Wide and deep enough for both walkers to take directories.
        for top in 0..30 {
            for sub in 0..4 {
                let dir = root.join(format!("t{top:02}/s{sub}"));
                assert!(fs::create_dir_all(&dir).is_ok());
                for n in 0..20 {
                    assert!(fs::write(dir.join(format!("f{n:02}")), b"x").is_ok());
                }
                if (top + sub) % 3 == 0 {
                    assert!(symlink(&secret, dir.join("out")).is_ok());
                }
                if (top + sub) % 4 == 0 {
                    mkfifo(&dir.join("pipe"));
                }
            }
            assert!(symlink("../..", root.join(format!("t{top:02}/up"))).is_ok());
        }
        let jail = tempdir();
        let copy = jail.path().join("copy");
        let copied = copy_tree(root, &copy).unwrap_or_default();
        let view = jail.path().join("view");
        verbatim(root, &view);
        let viewed = match adjust_view(root, &view) {
            Ok(warnings) => warnings,
            Err(e) => panic!("adjust: {e}"),
        };
        assert_eq!(listing(&view), listing(&copy));
        let entry = |w: &String| w.split(':').next().unwrap_or_default().to_owned();
        let (copied, viewed): (Vec<String>, Vec<String>) = (
            copied.iter().map(entry).collect(),
            viewed.iter().map(entry).collect(),
        );
        assert_eq!(viewed, copied);
        assert!(viewed.len() > 60, "{viewed:?}");
        assert_eq!(fs::read(&secret).ok(), Some(b"the original".to_vec()));
    }

    #[test]
    fn a_walk_that_fails_in_one_directory_fails_whole_and_does_not_hang() {
        let store = tempdir();
        let root = store.path();
        for top in 0..40 {
            let dir = root.join(format!("t{top:02}"));
            assert!(fs::create_dir_all(&dir).is_ok());
            assert!(fs::write(dir.join("f"), b"x").is_ok());
        }
        mkfifo(&root.join("t17/pipe"));
        let jail = tempdir();
        let view = jail.path().join("view");
        verbatim(root, &view);
        // Where the FIFO is to be taken out, the view holds a directory
        // that cannot be removed as a file.
        assert!(fs::remove_file(view.join("t17/pipe")).is_ok());
        assert!(fs::create_dir_all(view.join("t17/pipe/x")).is_ok());
        assert!(adjust_view(root, &view).is_err());
    }
}

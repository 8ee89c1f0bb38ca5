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

use std::fs::{self, File};
use std::io;
use std::os::unix::fs::{FileTypeExt, PermissionsExt, symlink};
use std::path::{Component, Path, PathBuf};

use rustix::fs::SeekFrom;
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
/// warnings as the copy.
pub fn adjust_view(from: &Path, view: &Path) -> io::Result<Vec<String>> {
    let root = from.canonicalize()?;
    let mut warnings = Vec::new();
    adjust_dir(&root, &root, view, &mut warnings)?;
    Ok(warnings)
}

fn adjust_dir(root: &Path, dir: &Path, view: &Path, warnings: &mut Vec<String>) -> io::Result<()> {
    let mut entries: Vec<fs::DirEntry> = fs::read_dir(dir)?.collect::<Result<_, _>>()?;
    // Sorted, so warnings come in the same order as the copy's.
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        // The directory entry's own type (d_type): no stat, no open.
        let kind = entry.file_type()?;
        if kind.is_file() {
            continue;
        }
        let path = entry.path();
        let target = view.join(entry.file_name());
        let shown = path
            .strip_prefix(root)
            .unwrap_or(&path)
            .display()
            .to_string();
        if kind.is_dir() {
            // Not in the view: a file system mounted there (not crossed).
            if target.is_dir() {
                adjust_dir(root, &path, &target, warnings)?;
            }
        } else if kind.is_symlink() {
            let text = fs::read_link(&path)?;
            if inside_target(root, &path, &text).as_deref() == Some(text.as_path()) {
                continue;
            }
            // Rewritten or made dangling, as the copy would have it.
            remove_from_view(&target)?;
            copy_link(root, &path, &target, &shown, warnings)?;
        } else {
            remove_from_view(&target)?;
            warnings.push(format!(
                "{shown}: a {} is never opened; it was left out of the jail",
                kind_name(&kind)
            ));
        }
    }
    Ok(())
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
    match inside_target(root, link, &text) {
        Some(kept) => symlink(kept, target),
        None => {
            let mut dangling = target.file_name().unwrap_or_default().to_os_string();
            dangling.push(OUTSIDE_SUFFIX);
            warnings.push(format!(
                "{shown}: a link that leaves the store (to {}); copied as a dangling link to {}",
                text.display(),
                Path::new(&dangling).display()
            ));
            symlink(dangling, target)
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
}

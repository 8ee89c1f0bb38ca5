//! A store's jailed copy as a copy-on-write view of its original.
//!
//! A byte copy of a store costs as much as reading it, whatever the server
//! then does with it. A view costs what the server changes: the original is
//! the lower layer of an overlayfs, the server's writes land in an upper
//! layer of the jail's own, and a file is copied there whole the first time
//! it is opened for writing (overlayfs copies up a file, never a part of
//! one). The original is never written: overlayfs opens its lower layers
//! read-only, whatever happens in the view.
//!
//! The view is mounted in the auditor's own mount namespace (the one
//! [`crate::disk::private_mounts`] takes for the jail's tmpfs), at the very
//! path a copy would have had. So the observers, which run in this process,
//! read it as they read a copy, and bubblewrap, this process's child, binds
//! the jail with the view inside it; no process has to be joined or read
//! through `/proc/PID/root`. The layers themselves are kept beneath the
//! jail's tmpfs ([`crate::disk::JailMount::hidden_dir`]), where no path the
//! server or the observers are given leads, and go with the jail.
//!
//! A file store (SQLite, JSON lines) is one file in a directory of the
//! user's: its view's lower layer is a directory of the jail's own holding
//! a hard link to it (and its journal or WAL), so that nothing else of the
//! user's directory is in the view, and the link itself is out of reach.
//!
//! Where a view cannot be had, the store is copied as before ([`crate::copy`])
//! and the report's isolation detail says why: this process may not mount
//! (not root), the jail is kept (`--keep-jail`: read after the process and
//! its mount namespace are gone), a file store on another file system than
//! the jail (no hard link across), the kernel refused the overlay, or
//! `MCP_WITNESS_JAIL_COPY=1` asked for the copy.

use std::ffi::CString;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};

use rustix::fs::{Mode, OFlags};
use rustix::mount::MountFlags;

/// Set (to anything but `0` or empty) to have every store copied into the
/// jail rather than viewed: a store that someone else writes during the
/// audit then stays as it was when the audit began (the view shows such
/// changes where the server has not written), and the tests force the
/// fallback with it.
pub const FORCE_COPY_ENV: &str = "MCP_WITNESS_JAIL_COPY";

/// How each store came into the jail, as the report's isolation detail
/// says it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Method {
    /// The stores viewed, by name.
    viewed: Vec<String>,
    /// The stores copied, by name, and why no view.
    copied: Vec<(String, String)>,
}

impl Method {
    pub(crate) fn viewed(&mut self, name: &str) {
        self.viewed.push(name.to_owned());
    }

    pub(crate) fn is_viewed(&self, name: &str) -> bool {
        self.viewed.iter().any(|n| n == name)
    }

    pub(crate) fn copied(&mut self, name: &str, why: String) {
        self.copied.push((name.to_owned(), why));
    }

    /// The sentence the isolation detail ends with (`None` when no store
    /// was viewed or copied: none declared, or none that existed).
    pub(crate) fn sentence(&self) -> Option<String> {
        let mut parts = Vec::new();
        if !self.viewed.is_empty() {
            let views = if self.viewed.len() == 1 {
                "a copy-on-write view of its original"
            } else {
                "copy-on-write views of the originals"
            };
            parts.push(format!(
                "{} jailed as {views} (overlayfs in the auditor's own mount namespace; a file is copied when the server first opens it for writing, and the originals are never written)",
                names(&self.viewed)
            ));
        }
        if !self.copied.is_empty() {
            let each: Vec<String> = self
                .copied
                .iter()
                .map(|(name, why)| format!("{name} ({why})"))
                .collect();
            parts.push(format!(
                "{} copied into the jail whole: {}",
                if self.copied.len() == 1 {
                    "store"
                } else {
                    "stores"
                },
                each.join("; ")
            ));
        }
        (!parts.is_empty()).then(|| parts.join("; "))
    }
}

fn names(names: &[String]) -> String {
    let word = if names.len() == 1 { "store" } else { "stores" };
    format!("{word} {}", names.join(", "))
}

/// Where the layers of this jail's views are kept, or why there are no
/// views in this jail (every store is then copied).
pub(crate) fn layers_dir(
    keep: bool,
    mount: Option<&crate::disk::JailMount>,
    unmounted: Option<&str>,
) -> Result<PathBuf, String> {
    if std::env::var_os(FORCE_COPY_ENV).is_some_and(|v| !v.is_empty() && v != "0") {
        return Err(format!("the copy was asked for with {FORCE_COPY_ENV}"));
    }
    if keep {
        return Err(
            "a kept jail is read after the audit, when no mount namespace holds a view".into(),
        );
    }
    let Some(mount) = mount else {
        return Err(format!(
            "no view can be mounted here: {}",
            unmounted.unwrap_or("the jail has no mount namespace of its own")
        ));
    };
    let dir = mount.hidden_dir();
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot make the views' layers ({e})"))?;
    Ok(dir)
}

/// One store's layers: `lower` (a file store's links), `upper`, `work`.
struct Layers {
    dir: PathBuf,
}

impl Layers {
    fn make(layers: &Path, store: &str) -> Result<Self, String> {
        let dir = layers.join(store);
        for sub in ["upper", "work"] {
            std::fs::create_dir_all(dir.join(sub))
                .map_err(|e| format!("cannot make the view's layers ({e})"))?;
        }
        Ok(Self { dir })
    }

    /// Mounts the view of `lower` at `target`.
    fn mount(&self, lower: &Path, target: &Path) -> Result<(), String> {
        let open = |path: &Path| -> Result<OwnedFd, String> {
            rustix::fs::open(
                path,
                OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .map_err(|e| format!("cannot open {} for the view ({e})", path.display()))
        };
        // Each layer by a descriptor: a path of the user's may hold the
        // commas and colons the option string gives meanings to.
        let lower = open(lower)?;
        let upper = open(&self.dir.join("upper"))?;
        let work = open(&self.dir.join("work"))?;
        // redirect_dir: a directory of the original renamed in the view is
        // renamed, as in a copy, not refused with EXDEV.
        let data = CString::new(format!(
            "lowerdir=/proc/self/fd/{},upperdir=/proc/self/fd/{},workdir=/proc/self/fd/{},redirect_dir=on",
            lower.as_raw_fd(),
            upper.as_raw_fd(),
            work.as_raw_fd()
        ))
        .map_err(|e| format!("cannot mount the view ({e})"))?;
        rustix::mount::mount(
            "mcp-witness-view",
            target,
            "overlay",
            MountFlags::NOSUID | MountFlags::NODEV,
            data.as_c_str(),
        )
        .map_err(|e| format!("the kernel refused the overlay ({e})"))
    }
}

/// Mounts a view of the tree `source` at `target` (an empty directory of
/// the jail) and makes it hold what a copy would ([`crate::copy::adjust_view`]).
/// `Err(Fallback)` when no view could be had (nothing is left mounted);
/// `Err(Failed)` when the tree itself cannot be read, as a copy would fail.
pub(crate) fn view_tree(
    layers: &Path,
    store: &str,
    source: &Path,
    target: &Path,
) -> Result<Vec<String>, ViewError> {
    let layers = Layers::make(layers, store).map_err(ViewError::Fallback)?;
    let real = source
        .canonicalize()
        .map_err(|e| ViewError::Fallback(format!("cannot resolve the store ({e})")))?;
    std::fs::create_dir_all(target).map_err(ViewError::Failed)?;
    layers.mount(&real, target).map_err(ViewError::Fallback)?;
    crate::copy::adjust_view(&real, target).map_err(|e| {
        unmount(target);
        ViewError::Failed(e)
    })
}

/// Mounts a view of the store file `source` (with its `companions`, those
/// that exist) in `holder`, the jail's directory for the store, where the
/// file keeps its name.
pub(crate) fn view_file(
    layers: &Path,
    store: &str,
    source: &Path,
    companions: &[&str],
    holder: &Path,
) -> Result<(), ViewError> {
    // A FIFO or device named as a store is refused by the copy, with the
    // reason the user needs.
    if !std::fs::metadata(source).is_ok_and(|m| m.is_file()) {
        return Err(ViewError::Fallback("not a regular file".into()));
    }
    let layers = Layers::make(layers, store).map_err(ViewError::Fallback)?;
    let lower = layers.dir.join("lower");
    std::fs::create_dir_all(&lower)
        .map_err(|e| ViewError::Fallback(format!("cannot make the view's layers ({e})")))?;
    // A link the user named counts by what it names, and so does its file's
    // name in the view, as in the copy.
    let real = source
        .canonicalize()
        .map_err(|e| ViewError::Fallback(format!("cannot resolve the store ({e})")))?;
    let name = source
        .file_name()
        .map(|n| n.to_owned())
        .unwrap_or_else(|| "store".into());
    for suffix in companions {
        let from = crate::jail::with_suffix(&real, suffix);
        if !suffix.is_empty() && !from.exists() {
            continue;
        }
        let mut linked = name.clone();
        linked.push(suffix);
        std::fs::hard_link(&from, lower.join(&linked)).map_err(|e| {
            ViewError::Fallback(if e.raw_os_error() == Some(rustix::io::Errno::XDEV.raw_os_error()) {
                "its file is on another file system than the jail, and a view of one file needs a link to it there".to_owned()
            } else {
                format!("cannot link its file into the view's lower layer ({e})")
            })
        })?;
    }
    layers.mount(&lower, holder).map_err(ViewError::Fallback)
}

/// Why a store has no view.
#[derive(Debug)]
pub(crate) enum ViewError {
    /// No view here: copy the store instead, and say why.
    Fallback(String),
    /// The store cannot be read: a copy would fail the same way.
    Failed(std::io::Error),
}

fn unmount(target: &Path) {
    let _ = rustix::mount::unmount(target, rustix::mount::UnmountFlags::DETACH);
}

/// The bytes `path` takes on disk (its blocks, holes not counted), with
/// everything beneath it; links are not followed.
pub(crate) fn disk_use(path: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return 0;
    };
    let mut total = meta.blocks() * 512;
    if meta.is_dir()
        && let Ok(entries) = std::fs::read_dir(path)
    {
        total += entries
            .filter_map(Result::ok)
            .map(|e| disk_use(&e.path()))
            .sum::<u64>();
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_detail_names_the_viewed_and_the_copied_stores_and_why() {
        let mut method = Method::default();
        assert_eq!(method.sentence(), None);
        method.viewed("db");
        assert!(
            method.sentence().is_some_and(|s| s
                .starts_with("store db jailed as a copy-on-write view of its original (overlayfs")),
            "{method:?}"
        );
        method.viewed("files");
        method.copied("notes", "the copy was asked for".into());
        let sentence = method.sentence().unwrap_or_default();
        assert!(
            sentence.starts_with("stores db, files jailed as copy-on-write views of the originals"),
            "{sentence}"
        );
        assert!(
            sentence
                .ends_with("; store copied into the jail whole: notes (the copy was asked for)"),
            "{sentence}"
        );
        assert!(method.is_viewed("files") && !method.is_viewed("notes"));
    }

    #[test]
    fn a_kept_jail_or_one_without_a_mount_has_no_views_and_says_why() {
        let kept = layers_dir(true, None, None).err().unwrap_or_default();
        let unmounted = layers_dir(false, None, Some("not root"))
            .err()
            .unwrap_or_default();
        // The variable, where the tests run with it, wins over both.
        if std::env::var_os(FORCE_COPY_ENV).is_none() {
            assert!(kept.starts_with("a kept jail"), "{kept}");
            assert_eq!(unmounted, "no view can be mounted here: not root");
        }
    }

    #[test]
    fn disk_use_counts_blocks_not_apparent_sizes() {
        let Ok(dir) = tempfile::tempdir() else {
            panic!("tempdir");
        };
        let sparse = dir.path().join("sparse");
        let Ok(file) = std::fs::File::create(&sparse) else {
            panic!("create");
        };
        assert!(file.set_len(1 << 30).is_ok());
        assert!(std::fs::write(dir.path().join("small"), [7u8; 10_000]).is_ok());
        let used = disk_use(dir.path());
        assert!((10_000..1 << 20).contains(&used), "{used}");
    }

    /// The view itself, where this process may mount (root): a tree with a
    /// link that leaves the store and a FIFO deep inside, viewed in a mount
    /// namespace of the test thread's own. The link is dangling in the view
    /// and the FIFO gone from it; the original keeps both.
    #[test]
    fn a_mounted_view_of_a_tree_neutralises_a_deep_escaping_link_and_fifo() {
        let handle = std::thread::spawn(|| {
            // SAFETY: only this thread's mount namespace (and with it its
            // file-system context, CLONE_FS) is unshared, never the
            // descriptor table, so no descriptor of another thread is
            // touched.
            let unshared =
                unsafe { rustix::thread::unshare_unsafe(rustix::thread::UnshareFlags::NEWNS) };
            if let Err(e) = unshared {
                println!("skipped: no mount namespace of the test's own ({e})");
                return;
            }
            // Nothing mounted here reaches the host's namespace.
            let private = rustix::mount::mount_change(
                "/",
                rustix::mount::MountPropagationFlags::PRIVATE
                    | rustix::mount::MountPropagationFlags::REC,
            );
            assert!(private.is_ok(), "{private:?}");
            let Ok(dir) = tempfile::tempdir() else {
                panic!("tempdir");
            };
            let secret = dir.path().join("secret.txt");
            assert!(std::fs::write(&secret, b"the original").is_ok());
            let source = dir.path().join("store");
            let deep = Path::new("a/b/c/d/e/f/g/h");
            assert!(std::fs::create_dir_all(source.join(deep)).is_ok());
            for n in 0..200 {
                assert!(std::fs::write(source.join(deep).join(format!("f{n}")), b"x").is_ok());
            }
            assert!(std::os::unix::fs::symlink(&secret, source.join(deep).join("escape")).is_ok());
            let fifo = rustix::fs::mkfifoat(
                rustix::fs::CWD,
                source.join(deep).join("pipe"),
                Mode::from(0o600),
            );
            assert!(fifo.is_ok(), "{fifo:?}");
            let (layers, target) = (dir.path().join("layers"), dir.path().join("view"));
            let warnings = match view_tree(&layers, "s", &source, &target) {
                Ok(warnings) => warnings,
                Err(ViewError::Fallback(why)) => {
                    println!("skipped: no view here ({why})");
                    return;
                }
                Err(ViewError::Failed(e)) => panic!("the walk failed: {e}"),
            };
            let viewed = target.join(deep);
            let link = std::fs::read_link(viewed.join("escape")).ok();
            let pipe = std::fs::symlink_metadata(viewed.join("pipe")).is_err();
            let file = std::fs::read(viewed.join("f7")).ok();
            let written = std::fs::write(viewed.join("escape"), b"hostile").is_ok();
            unmount(&target);
            assert_eq!(link, Some(PathBuf::from("escape.mcp-witness-outside")));
            assert!(pipe, "the FIFO is in the view");
            assert_eq!(file, Some(b"x".to_vec()));
            assert!(
                written,
                "a write through the dangling link lands in the view"
            );
            assert_eq!(warnings.len(), 2, "{warnings:?}");
            // The original as it was.
            assert_eq!(std::fs::read(&secret).ok(), Some(b"the original".to_vec()));
            assert_eq!(
                std::fs::read_link(source.join(deep).join("escape")).ok(),
                Some(secret.clone())
            );
            assert!(
                std::fs::symlink_metadata(source.join(deep).join("pipe"))
                    .is_ok_and(|m| std::os::unix::fs::FileTypeExt::is_fifo(&m.file_type()))
            );
        });
        if let Err(panic) = handle.join() {
            std::panic::resume_unwind(panic);
        }
    }
}

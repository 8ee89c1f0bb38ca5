//! The jail's whole writable part on one file system of bounded size.
//!
//! `RLIMIT_FSIZE` bounds each file a server writes, not how many: without
//! more, a server could fill the auditor's disk with files just under the
//! bound in its HOME, TMPDIR or working directory, all of which are in the
//! jail, on the auditor's disk, where the observers read them.
//!
//! Where this process may mount (root, or CAP_SYS_ADMIN), it takes a mount
//! namespace of its own at start ([`private_mounts`], before any thread
//! exists) and mounts a tmpfs of `--disk` bytes on each jail it makes
//! ([`JailMount`]): HOME, TMPDIR, the working directory and anything else
//! the server makes in the jail share it, and the kernel refuses a write
//! past it with `ENOSPC`, whatever file it is in. The stores are the
//! exception: their directory, on the auditor's disk, is bound back over
//! the tmpfs, so that a store is written at a disk's pace (on a tmpfs a
//! busy SQLite writer, its fsyncs free, outruns every consistent read of
//! its WAL); their files are bounded one by one (`RLIMIT_FSIZE`), their
//! total is not. The observers, the PostgreSQL clusters and bubblewrap are
//! this process's children and see the tmpfs; nobody outside does, and the
//! kernel frees it with the namespace, however this process ends (the
//! directory beneath is what a later audit's sweep removes).
//!
//! A tmpfs is memory: what the server writes in the jail outside its
//! stores is taken from RAM (or swap), as in a bubblewrap `/tmp`. A jail kept on purpose
//! (`--keep-jail`) stays on disk, so that it can be read afterwards, and its
//! total is not bounded; nor is it where this process may not mount.

use std::ffi::CString;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use rustix::mount::{MountFlags, MountPropagationFlags, UnmountFlags};

static PRIVATE: OnceLock<Result<(), String>> = OnceLock::new();

/// Gives this process a mount namespace of its own, whose mounts do not
/// reach the host's (host mounts still reach it). Call it before any thread
/// is started: a namespace taken later would be the calling thread's alone.
/// Where the kernel refuses, jails stay on the auditor's disk and the disk
/// layer says why.
pub fn private_mounts() {
    let outcome = take_namespace();
    let _ = PRIVATE.set(outcome);
}

fn take_namespace() -> Result<(), String> {
    // SAFETY: only the mount namespace (and with it the file-system
    // context, CLONE_FS) is unshared, never the descriptor table, so no
    // thread can be left with descriptors another table holds; the caller
    // runs this before any other thread exists.
    unsafe { rustix::thread::unshare_unsafe(rustix::thread::UnshareFlags::NEWNS) }.map_err(
        |e| format!("this process may not have a mount namespace of its own to mount the jail's tmpfs in ({e}; it needs CAP_SYS_ADMIN, as root has)"),
    )?;
    rustix::mount::mount_change(
        "/",
        MountPropagationFlags::DOWNSTREAM | MountPropagationFlags::REC,
    )
    .map_err(|e| format!("cannot keep the jail's mounts from the host's ({e})"))
}

/// Whether jails made by this process get a bounded tmpfs, or why not.
pub fn available() -> Result<(), String> {
    PRIVATE.get().cloned().unwrap_or_else(|| {
        Err("this command did not prepare a mount namespace for the jail's tmpfs".into())
    })
}

/// A tmpfs of `--disk` bytes mounted on a jail's directory, with the
/// jail's `stores` (on the auditor's disk, beneath) bound back over it.
/// Dropping it unmounts both, and what the tmpfs held is gone.
#[derive(Debug)]
pub(crate) struct JailMount {
    root: PathBuf,
    /// The jail's directory beneath the tmpfs, opened before it was
    /// covered: where the stores' copy-on-write layers are kept, out of
    /// every path the server or the observers are given ([`crate::cow`]).
    beneath: std::os::fd::OwnedFd,
}

impl JailMount {
    /// Mounts a tmpfs of `size` bytes on `root`, a directory of this
    /// process's own holding an empty `stores`, and binds that `stores`
    /// back at `root/stores`: the stores stay on disk, where their copies
    /// are read and written at the disk's own pace (an SQLite commit waits
    /// for its fsync there, as the server's would in use), and every other
    /// path of the jail is in the tmpfs.
    pub(crate) fn mount(root: &Path, size: u64) -> Result<Self, String> {
        available()?;
        let beneath = rustix::fs::open(
            root,
            rustix::fs::OFlags::PATH | rustix::fs::OFlags::DIRECTORY | rustix::fs::OFlags::CLOEXEC,
            rustix::fs::Mode::empty(),
        )
        .map_err(|e| format!("cannot open the jail's directory ({e})"))?;
        let stores = rustix::fs::open(
            root.join("stores"),
            rustix::fs::OFlags::PATH | rustix::fs::OFlags::DIRECTORY | rustix::fs::OFlags::CLOEXEC,
            rustix::fs::Mode::empty(),
        )
        .map_err(|e| format!("cannot open the jail's stores directory ({e})"))?;
        let data = CString::new(format!("size={size},mode=0700"))
            .map_err(|e| format!("cannot mount a tmpfs on the jail ({e})"))?;
        rustix::mount::mount(
            "mcp-witness-jail",
            root,
            "tmpfs",
            MountFlags::NOSUID | MountFlags::NODEV,
            data.as_c_str(),
        )
        .map_err(|e| format!("cannot mount a tmpfs on the jail ({e})"))?;
        let mounted = Self {
            root: root.to_path_buf(),
            beneath,
        };
        let target = root.join("stores");
        std::fs::create_dir(&target)
            .map_err(|e| format!("cannot make the stores' place in the jail's tmpfs ({e})"))?;
        // The directory beneath the tmpfs, by the descriptor opened before
        // it was covered.
        let beneath = format!("/proc/self/fd/{}", stores.as_raw_fd());
        rustix::mount::mount_bind(beneath.as_str(), &target)
            .map_err(|e| format!("cannot bind the stores into the jail's tmpfs ({e})"))?;
        Ok(mounted)
    }
}

impl JailMount {
    /// A directory on the auditor's disk beneath the tmpfs, named through
    /// this process's descriptor: no path of the jail leads there, so what
    /// is kept in it (a store's layers, a link to its original file) is out
    /// of the server's reach and the jail-wide observer's sight.
    pub(crate) fn hidden_dir(&self) -> PathBuf {
        PathBuf::from(format!("/proc/self/fd/{}/layers", self.beneath.as_raw_fd()))
    }

    /// Whether the tmpfs is full: less than a page free, so the server's
    /// last writes were refused.
    pub(crate) fn full(&self) -> bool {
        rustix::fs::statvfs(&self.root)
            .is_ok_and(|stat| stat.f_bavail.saturating_mul(stat.f_frsize) < 4096)
    }
}

impl Drop for JailMount {
    fn drop(&mut self) {
        unmount(&self.root);
    }
}

/// Unmounts a jail's tmpfs, if it has one (a lazy unmount: a server still
/// leaving cannot keep it).
pub(crate) fn unmount(root: &Path) {
    if available().is_ok() {
        let _ = rustix::mount::unmount(root, UnmountFlags::DETACH);
    }
}

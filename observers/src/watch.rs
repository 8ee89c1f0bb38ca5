//! File-system events, read at a moment of our choosing.
//!
//! On Linux this is inotify, through the `inotify` crate (the one `notify`
//! itself is built on). `notify` delivers events from a thread of its own,
//! so it cannot say "every event of a write that finished before now has
//! been seen"; reading the inotify descriptor ourselves, without blocking,
//! can: the kernel queues an event inside the write call, so an empty read
//! after a write returned means the write was not one we watch.
//!
//! Events never decide *what* changed: an observer still reads the stamps
//! and the content of whatever an event names. They decide where to look
//! and, for the audit's settle, whether a store has gone quiet. A lost event
//! (a full queue, a watch that could not be added) makes the watcher
//! [`Watcher::healthy`] no more, and observers then fall back to reading
//! every stamp.
//!
//! Elsewhere (not Linux) there is no watcher, and observers always fall back.

use std::ffi::OsString;
use std::path::Path;

/// One event: which watch fired (the key given to [`Watcher::add`]), the
/// name inside a watched directory if any, and whether it was only metadata.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fired {
    pub key: u32,
    pub name: Option<OsString>,
    /// Created, deleted or moved (an entry of a directory, or the watched
    /// object itself), as opposed to written or touched.
    pub structural: bool,
}

#[cfg(target_os = "linux")]
mod imp {
    use std::collections::HashMap;
    use std::io;
    use std::path::Path;

    use inotify::{EventMask, Inotify, WatchDescriptor, WatchMask};

    use super::Fired;

    /// Big enough for a few hundred events per read.
    const BUFFER: usize = 64 * 1024;

    pub struct Watcher {
        inotify: Inotify,
        keys: HashMap<i32, u32>,
        descriptors: HashMap<u32, WatchDescriptor>,
        buffer: Vec<u8>,
        healthy: bool,
    }

    /// What a watch reports: writes, metadata, entries coming and going.
    /// Reads (open, access, close-nowrite) are left out: the observers' own
    /// reads would otherwise look like activity.
    fn mask() -> WatchMask {
        WatchMask::MODIFY
            | WatchMask::ATTRIB
            | WatchMask::CLOSE_WRITE
            | WatchMask::CREATE
            | WatchMask::DELETE
            | WatchMask::DELETE_SELF
            | WatchMask::MOVE_SELF
            | WatchMask::MOVED_FROM
            | WatchMask::MOVED_TO
            | WatchMask::DONT_FOLLOW
    }

    impl Watcher {
        pub fn new() -> Option<Self> {
            let inotify = Inotify::init().ok()?;
            Some(Self {
                inotify,
                keys: HashMap::new(),
                descriptors: HashMap::new(),
                buffer: vec![0; BUFFER],
                healthy: true,
            })
        }

        pub fn add(&mut self, path: &Path, key: u32) -> io::Result<()> {
            match self.inotify.watches().add(path, mask()) {
                Ok(wd) => {
                    self.keys.insert(wd.get_watch_descriptor_id(), key);
                    self.descriptors.insert(key, wd);
                    Ok(())
                }
                Err(e) => Err(e),
            }
        }

        pub fn remove(&mut self, key: u32) {
            if let Some(wd) = self.descriptors.remove(&key) {
                self.keys.remove(&wd.get_watch_descriptor_id());
                // Gone already when the object was deleted; nothing to undo.
                let _ = self.inotify.watches().remove(wd);
            }
        }

        pub fn healthy(&self) -> bool {
            self.healthy
        }

        pub fn mark_unhealthy(&mut self) {
            self.healthy = false;
        }

        pub fn reset_health(&mut self) {
            self.healthy = true;
        }

        pub fn watched(&self) -> usize {
            self.descriptors.len()
        }

        /// Every event queued now, without waiting.
        pub fn drain(&mut self, out: &mut Vec<Fired>) {
            loop {
                let events = match self.inotify.read_events(&mut self.buffer) {
                    Ok(events) => events,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(_) => {
                        self.healthy = false;
                        return;
                    }
                };
                let mut any = false;
                for event in events {
                    any = true;
                    if event.mask.contains(EventMask::Q_OVERFLOW) {
                        self.healthy = false;
                        continue;
                    }
                    if event.mask.contains(EventMask::IGNORED) {
                        // The watched object is gone (deleted, or its file
                        // system unmounted); its parent's watch said so.
                        if let Some(key) = self.keys.remove(&event.wd.get_watch_descriptor_id()) {
                            self.descriptors.remove(&key);
                        }
                        continue;
                    }
                    let Some(&key) = self.keys.get(&event.wd.get_watch_descriptor_id()) else {
                        continue;
                    };
                    let structural = event.mask.intersects(
                        EventMask::CREATE
                            | EventMask::DELETE
                            | EventMask::DELETE_SELF
                            | EventMask::MOVE_SELF
                            | EventMask::MOVED_FROM
                            | EventMask::MOVED_TO,
                    );
                    out.push(Fired {
                        key,
                        name: event.name.map(|n| n.to_os_string()),
                        structural,
                    });
                }
                if !any {
                    return;
                }
            }
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use std::io;
    use std::path::Path;

    use super::Fired;

    /// No event source on this platform: never constructed.
    pub struct Watcher(());

    impl Watcher {
        pub fn new() -> Option<Self> {
            None
        }
        pub fn add(&mut self, _path: &Path, _key: u32) -> io::Result<()> {
            Err(io::Error::other("no file-system events on this platform"))
        }
        pub fn remove(&mut self, _key: u32) {}
        pub fn healthy(&self) -> bool {
            false
        }
        pub fn mark_unhealthy(&mut self) {}
        pub fn reset_health(&mut self) {}
        pub fn watched(&self) -> usize {
            0
        }
        pub fn drain(&mut self, _out: &mut Vec<Fired>) {}
    }
}

/// A set of watches on one inotify descriptor; see the module documentation.
pub struct Watcher(imp::Watcher);

impl Watcher {
    /// `None` where no event source exists, or the kernel refused one (too
    /// many inotify instances): callers then read every stamp.
    pub fn new() -> Option<Self> {
        imp::Watcher::new().map(Self)
    }

    /// Watches `path` (a file, or a directory and its entries' events) under
    /// `key`. A failure (the watch limit, a file that vanished) is the
    /// caller's to weigh: the watcher itself stays as healthy as it was.
    pub fn add(&mut self, path: &Path, key: u32) -> std::io::Result<()> {
        self.0.add(path, key)
    }

    pub fn remove(&mut self, key: u32) {
        self.0.remove(key)
    }

    /// False once an event may have been lost (queue overflow, a read
    /// error, or [`Self::mark_unhealthy`]).
    pub fn healthy(&self) -> bool {
        self.0.healthy()
    }

    pub fn mark_unhealthy(&mut self) {
        self.0.mark_unhealthy()
    }

    /// After a full re-read has made the reference whole again.
    pub fn reset_health(&mut self) {
        self.0.reset_health()
    }

    /// How many watches are in place.
    pub fn watched(&self) -> usize {
        self.0.watched()
    }

    /// Appends every event queued now to `out`, without waiting.
    pub fn drain(&mut self, out: &mut Vec<Fired>) {
        self.0.drain(out)
    }
}

impl std::fmt::Debug for Watcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watcher")
            .field("healthy", &self.healthy())
            .field("watched", &self.watched())
            .finish()
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use std::io::Write;

    use super::*;

    #[test]
    fn writes_are_seen_at_once_and_reads_are_not_events() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, b"one").unwrap();
        let mut watcher = Watcher::new().unwrap();
        watcher.add(dir.path(), 7).unwrap();
        let mut fired = Vec::new();
        watcher.drain(&mut fired);
        assert!(fired.is_empty());
        let _ = std::fs::read(&file).unwrap();
        watcher.drain(&mut fired);
        assert!(fired.is_empty(), "a read is not activity: {fired:?}");
        let mut handle = std::fs::OpenOptions::new()
            .append(true)
            .open(&file)
            .unwrap();
        handle.write_all(b"two").unwrap();
        // No waiting: the event was queued inside the write.
        watcher.drain(&mut fired);
        assert!(fired.iter().any(|f| f.key == 7 && !f.structural));
        assert_eq!(fired[0].name.as_deref(), Some(std::ffi::OsStr::new("f")));
        fired.clear();
        std::fs::remove_file(&file).unwrap();
        watcher.drain(&mut fired);
        assert!(fired.iter().any(|f| f.structural));
        assert!(watcher.healthy());
    }
}

/// Events for a few files of one directory (a database and its journals, a
/// JSON-lines file): the directory is watched, since such files are
/// created, replaced by rename and deleted, and events for other names in
/// it are ignored.
#[derive(Debug)]
pub struct FileSetWatch {
    watcher: Option<Watcher>,
    names: Vec<std::ffi::OsString>,
    /// The directory could not be watched (it did not exist yet, or the
    /// watch was refused): tried again at each ask.
    dir: std::path::PathBuf,
    armed: bool,
    /// Whether one of the files was touched since [`Self::take_touched`].
    touched: bool,
}

impl FileSetWatch {
    /// Watches `files`, which all live in one directory.
    pub fn new(files: &[std::path::PathBuf]) -> Self {
        let dir = files
            .first()
            .and_then(|f| f.parent())
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let names = files
            .iter()
            .filter_map(|f| f.file_name().map(|n| n.to_os_string()))
            .collect();
        let mut watch = Self {
            watcher: None,
            names,
            dir,
            armed: false,
            touched: false,
        };
        watch.arm();
        watch
    }

    /// [`Self::activity`] in an observer's terms, for an observer that may
    /// not have armed its watch yet.
    pub fn activity_of(watch: Option<&mut Self>) -> crate::Activity {
        match watch.and_then(Self::activity) {
            Some(true) => crate::Activity::Busy,
            Some(false) => crate::Activity::Quiet,
            None => crate::Activity::Unknown,
        }
    }

    /// Whether one of the files was touched since the last
    /// [`Self::take_touched`], without starting a new count: `None` when no
    /// events can say.
    pub fn touched(&mut self) -> Option<bool> {
        let now = self.activity()?;
        Some(self.touched || now)
    }

    /// Whether one of the files was touched since the last call (or since
    /// the watch was armed): `None` when no events can say (not armed, or
    /// events lost), which a caller must take as "maybe".
    pub fn take_touched(&mut self) -> Option<bool> {
        let now = self.activity()?;
        Some(std::mem::take(&mut self.touched) || now)
    }

    /// Whether one of the files was written, created, removed or renamed
    /// since the last ask; `None` when no events cover them.
    pub fn activity(&mut self) -> Option<bool> {
        if !self.armed {
            self.arm();
            // Not watched before now: what happened before is unknown.
            return None;
        }
        let watcher = self.watcher.as_mut()?;
        let mut fired = Vec::new();
        watcher.drain(&mut fired);
        if !watcher.healthy() {
            return None;
        }
        let busy = fired.iter().any(|f| match &f.name {
            Some(name) => self.names.iter().any(|n| n == name),
            // The directory itself moved or went away.
            None => f.structural,
        });
        self.touched |= busy;
        Some(busy)
    }

    fn arm(&mut self) {
        let dir = if self.dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            self.dir.as_path()
        };
        let Some(mut watcher) = Watcher::new() else {
            return;
        };
        if watcher.add(dir, 0).is_ok() {
            self.watcher = Some(watcher);
            self.armed = true;
        }
    }
}

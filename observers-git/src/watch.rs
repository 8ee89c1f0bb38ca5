//! File-system events: whether anything was written since the last read.
//!
//! Only what a write raises is asked for (modify, attribute change, close
//! after writing, create, delete, move); the observer's own reads raise
//! none of these, so reading never makes the next snapshot read again.

use std::path::Path;

use inotify::{Inotify, WatchMask};

pub(crate) struct Watch {
    inotify: Inotify,
    /// False once a directory could not be watched (the watch limit, a
    /// race with a delete): the events no longer cover the repository.
    complete: bool,
    buffer: Vec<u8>,
}

fn mask() -> WatchMask {
    WatchMask::MODIFY
        | WatchMask::ATTRIB
        | WatchMask::CLOSE_WRITE
        | WatchMask::CREATE
        | WatchMask::DELETE
        | WatchMask::DELETE_SELF
        | WatchMask::MOVED_FROM
        | WatchMask::MOVED_TO
        | WatchMask::MOVE_SELF
}

impl Watch {
    /// A new event queue, or `None` where the kernel gives none (then every
    /// snapshot reads everything).
    pub(crate) fn start() -> Option<Self> {
        Inotify::init().ok().map(|inotify| Self {
            inotify,
            complete: true,
            buffer: vec![0; 64 * 1024],
        })
    }

    /// Starts a new read: every directory is watched again as it is read.
    pub(crate) fn begin(&mut self) {
        self.complete = true;
    }

    /// Watches one directory (adding a watch twice is harmless).
    pub(crate) fn directory(&mut self, dir: &Path) {
        if self.inotify.watches().add(dir, mask()).is_err() {
            self.complete = false;
        }
    }

    /// Whether every directory of the last read is watched.
    pub(crate) fn complete(&self) -> bool {
        self.complete
    }

    /// Drains the queue; true when it held nothing (no write since the last
    /// drain) and the watches cover the repository. An overflowed queue
    /// holds an overflow event, so it is never quiet.
    pub(crate) fn quiet(&mut self) -> bool {
        let mut quiet = self.complete;
        loop {
            match self.inotify.read_events(&mut self.buffer) {
                Ok(events) => {
                    if events.count() == 0 {
                        return quiet;
                    }
                    quiet = false;
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return quiet,
                Err(_) => return false,
            }
        }
    }
}

//! What the file system says about a file, reduced to what tells whether its
//! content may have changed since it was last read.
//!
//! Equal stamps prove nothing by themselves: a write lands with the kernel's
//! coarse clock, so a write in the same clock tick as the previous one, of
//! the same size, leaves every field as it was. A stamp is therefore trusted
//! only when its newest time lies clearly before the moment it was taken
//! (the rule git applies to its index): any later write then gets a later
//! time. How clearly depends on the file system's timestamp granularity,
//! which the stamp itself betrays: nanosecond parts that are all whole
//! milliseconds mean a coarse file system (FAT, ext3, some network ones),
//! and those get [`COARSE_WINDOW_NS`] instead of [`FINE_WINDOW_NS`].

use std::fs::Metadata;
use std::time::{SystemTime, UNIX_EPOCH};

/// Window for file systems with nanosecond timestamps: twice the longest
/// kernel clock tick in use (10 ms at HZ=100).
pub const FINE_WINDOW_NS: i128 = 20_000_000;

/// Window for file systems whose timestamps are whole milliseconds or
/// coarser: two seconds covers FAT, with room for a little clock skew.
pub const COARSE_WINDOW_NS: i128 = 2_000_000_000;

/// Identity, size and times of one file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Stamp {
    pub dev: u64,
    pub ino: u64,
    pub size: u64,
    pub mtime_ns: i128,
    pub ctime_ns: i128,
    pub nlink: u64,
}

impl Stamp {
    #[cfg(unix)]
    pub fn of(meta: &Metadata) -> Option<Self> {
        use std::os::unix::fs::MetadataExt;
        let ns = |secs: i64, nanos: i64| i128::from(secs) * 1_000_000_000 + i128::from(nanos);
        Some(Self {
            dev: meta.dev(),
            ino: meta.ino(),
            size: meta.size(),
            mtime_ns: ns(meta.mtime(), meta.mtime_nsec()),
            ctime_ns: ns(meta.ctime(), meta.ctime_nsec()),
            nlink: meta.nlink(),
        })
    }

    /// Without inode numbers and ctimes every read would be a guess, so no
    /// stamp is given and every file is read every time.
    #[cfg(not(unix))]
    pub fn of(_meta: &Metadata) -> Option<Self> {
        None
    }

    /// The stamp of `path` without following a final link; `None` when it
    /// does not exist, `Err` when it cannot be asked.
    pub fn read(path: &std::path::Path) -> std::io::Result<Option<Self>> {
        match std::fs::symlink_metadata(path) {
            Ok(meta) => Ok(Self::of(&meta)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// How far before the reading moment the newest time must lie.
    pub fn window_ns(&self) -> i128 {
        let whole_ms = |t: i128| t.rem_euclid(1_000_000) == 0;
        if whole_ms(self.mtime_ns) && whole_ms(self.ctime_ns) {
            COARSE_WINDOW_NS
        } else {
            FINE_WINDOW_NS
        }
    }

    /// Whether a read that began at `taken_at_ns` (wall clock, taken before
    /// this stamp was) is certain to see any later write move the stamp.
    pub fn settled_at(&self, taken_at_ns: i128) -> bool {
        self.mtime_ns.max(self.ctime_ns) < taken_at_ns - self.window_ns()
    }
}

/// Wall-clock time in nanoseconds since the epoch: the clock file times are
/// written in.
pub fn now_ns() -> i128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i128::try_from(d.as_nanos()).unwrap_or(i128::MAX))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECOND: i128 = 1_000_000_000;

    fn stamp(mtime_ns: i128, ctime_ns: i128) -> Stamp {
        Stamp {
            dev: 1,
            ino: 2,
            size: 3,
            mtime_ns,
            ctime_ns,
            nlink: 1,
        }
    }

    #[test]
    fn fine_timestamps_settle_after_twenty_milliseconds() {
        let s = stamp(100 * SECOND + 123_456_789, 100 * SECOND + 123_456_789);
        assert_eq!(s.window_ns(), FINE_WINDOW_NS);
        assert!(!s.settled_at(100 * SECOND + 123_456_789));
        assert!(!s.settled_at(100 * SECOND + 143_456_789));
        assert!(s.settled_at(100 * SECOND + 143_456_790));
    }

    #[test]
    fn whole_millisecond_timestamps_are_taken_for_a_coarse_file_system() {
        let s = stamp(100 * SECOND, 100 * SECOND + 5_000_000);
        assert_eq!(s.window_ns(), COARSE_WINDOW_NS);
        assert!(!s.settled_at(101 * SECOND));
        assert!(s.settled_at(102 * SECOND + 5_000_001));
    }

    #[test]
    fn a_recent_ctime_is_enough_to_distrust() {
        // mtime put back long ago with utimes: ctime still says "just now".
        let s = stamp(10 * SECOND + 1, 100 * SECOND + 1);
        assert!(!s.settled_at(100 * SECOND + 2));
    }
}

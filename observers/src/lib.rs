//! Out-of-band observers of an MCP server's store.
//!
//! An observer reads a store (a SQLite database, a directory tree, a JSON-lines
//! file) *beside* the server, never through the MCP surface being audited.
//! Each [`Observer::observe`] reads the store as it is now, makes that the
//! reference for the next one, and gives the per-object [`Delta`] since the
//! previous reference: the changes the audit charges to a tool call. Object
//! ids are stable and readable (`notes/welcome`, `sqlite_master/table:notes`,
//! `file/docs/a.txt`).
//!
//! Three rules hold for every observer here:
//! - **It never perturbs what it observes.** Reading leaves every byte and inode
//!   of the store as it was (no `-wal`/`-shm` files appear, no index is rewritten).
//! - **Content decides change.** Never mtime or inode alone: servers rewrite
//!   whole files with identical content, and mtimes move in coarse ticks.
//!   Metadata only ever *saves* work: an object whose identity, size and times
//!   (in nanoseconds) are exactly as they were, clearly after its last write,
//!   is not read again ([`stamp`]); everything else is.
//! - **Cost follows what changed, not the store, and is bounded.** A store
//!   that did not change costs a few `stat` calls; a changed one is re-read
//!   where it changed. Every observation has a [`Budget`] of bytes and time
//!   whose overrun is an error or a warning, never a hang.
//!
//! [`Snapshot`] and [`diff`] are the plain model of a store at one moment:
//! every object with its digest. The observers build one only where a store
//! is small or cannot be read incrementally; the tests use them as the
//! reference an incremental observation must agree with.

pub mod content;
mod delta;
#[cfg(feature = "fake")]
pub mod fake;
pub mod fs;
pub mod git_index;
pub mod jsonl;
mod markdown;
pub mod sheet;
mod snapshot;
pub mod sqlite;
pub mod stamp;
#[cfg(test)]
mod testing;
pub mod watch;

pub use delta::{Change, Delta, Op, appended, diff};
pub use snapshot::{Head, ObjectState, Snapshot};

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// A source of observations of one store.
pub trait Observer: Send {
    /// Short name of the store kind: `"sqlite"`, `"fs"`, `"jsonl"`.
    fn kind(&self) -> &'static str;

    /// Reads the store as it is now, without changing it, and makes that the
    /// reference of the next observation. With `changes`, the result holds
    /// every change since the previous reference (the first observation
    /// compares with an empty store); without, only the warnings, which
    /// spares enumerating a large store nobody will diff against nothing.
    fn observe(&mut self, changes: bool) -> Result<Observation, ObserveError>;

    /// Whether the store saw writes since the last time this was asked (or
    /// since the last observation), as far as file-system events can tell.
    /// Used only to decide when a store has gone quiet, never to decide what
    /// changed.
    fn activity(&mut self) -> Activity {
        Activity::Unknown
    }

    /// Visits the id of every object the last observation saw, in id order.
    fn present(&mut self, visit: &mut dyn FnMut(&str)) -> Result<(), ObserveError>;

    /// Visits, in id order, the ids of the last observation's objects, at
    /// most `per_group` of each group (an id's part before its first `/`: a
    /// table, an object kind). A group of no more than `per_group` objects
    /// is visited whole, as [`Observer::present`] visits it; of a larger
    /// one, some `per_group` of them. What a planner offers as real values
    /// needs a few per table, not a million rows held in memory at once.
    fn sample(
        &mut self,
        per_group: usize,
        visit: &mut dyn FnMut(&str),
    ) -> Result<(), ObserveError> {
        let mut capped = PerGroup::new(per_group);
        self.present(&mut |id| {
            if capped.admit(id) {
                visit(id);
            }
        })
    }

    /// The shape of every observed table of the last observation, as its
    /// schema declares it: what a planner needs to write a row the table
    /// accepts (its required columns and its key). Only a store of tables
    /// has any; the others list none.
    fn tables(&mut self) -> Result<Vec<TableShape>, ObserveError> {
        Ok(Vec::new())
    }
}

/// One table's declared columns, in declaration order. Schema only: no
/// value of any row is in it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TableShape {
    pub table: String,
    pub columns: Vec<ColumnShape>,
}

/// One declared column of a table.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ColumnShape {
    pub name: String,
    /// The type as declared (`INTEGER`, `varchar(20)`, or empty).
    pub declared_type: String,
    /// `NOT NULL` with no default: an insert must name it.
    pub required: bool,
    /// Part of the declared primary key.
    pub key: bool,
    /// The table's `INTEGER PRIMARY KEY`: an alias of the rowid, which
    /// SQLite assigns itself.
    pub rowid: bool,
}

/// Counts ids per group (the part before the first `/`) as they arrive in
/// id order, where every group's ids are contiguous.
pub(crate) struct PerGroup {
    limit: usize,
    group: String,
    seen: usize,
}

impl PerGroup {
    pub(crate) fn new(limit: usize) -> Self {
        Self {
            limit,
            group: String::new(),
            seen: 0,
        }
    }

    /// Whether `id` is still within its group's limit.
    pub(crate) fn admit(&mut self, id: &str) -> bool {
        let group = id.split('/').next().unwrap_or_default();
        if group != self.group || self.seen == 0 {
            self.group.clear();
            self.group.push_str(group);
            self.seen = 0;
        }
        self.seen += 1;
        self.seen <= self.limit
    }
}

/// What one observation found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Observation {
    /// The changes since the previous reference, ordered by object id.
    pub delta: Delta,
    /// Things the observer could read around but wants a reader to know (a
    /// malformed JSONL line, an unreadable file, a file too large to hash).
    /// All that hold now, not only new ones. Never fatal.
    pub warnings: Vec<String>,
    /// The declared columns of the changed rows, read from the same images
    /// the changes were seen in (only a SQLite observer given row facts to
    /// read has any; see [`sqlite::SqliteObserver::with_facts`]), in the
    /// order of the changes.
    pub rows: Vec<ChangedRow>,
}

/// The declared columns of one changed row, named as its change names it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChangedRow {
    pub object: String,
    /// As the row was before the change (absent for a created row).
    pub before: Option<BTreeMap<String, serde_json::Value>>,
    /// As the change left it (absent for a deleted row).
    pub after: Option<BTreeMap<String, serde_json::Value>>,
}

/// What file-system events say about a store since they were last asked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Activity {
    /// Events are being delivered and none named the store.
    Quiet,
    /// Something in the store was written, created, removed or renamed.
    Busy,
    /// No event source covers the store (or it lost events).
    Unknown,
}

/// How much one observation may read and how long it may take. A store
/// whose size a server chooses (a 32 GiB sparse file in HOME) must not
/// choose the auditor's cost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// Most bytes of content one observation reads or hashes.
    pub max_bytes: u64,
    /// Longest one observation may take.
    pub max_time: Duration,
}

impl Budget {
    /// 4 GiB and 120 s: a few seconds of hashing at disk speed on a large
    /// store, far beyond any store an MCP server should need to be audited on.
    pub const DEFAULT: Self = Self {
        max_bytes: 4 << 30,
        max_time: Duration::from_secs(120),
    };

    /// The moment an observation starting now must end.
    pub fn deadline(&self) -> Instant {
        let now = Instant::now();
        now.checked_add(self.max_time).unwrap_or(now)
    }
}

impl Default for Budget {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Why an observation could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ObserveError {
    #[error("cannot read {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot read SQLite store {path}: {source}")]
    Sqlite {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
    #[error("store {path} is not usable: {reason}")]
    Unusable { path: PathBuf, reason: String },
    #[error(
        "store {path} holds {size} bytes, more than the observation budget of {budget} bytes (--max-observe-bytes)"
    )]
    OverBudget {
        path: PathBuf,
        size: u64,
        budget: u64,
    },
    #[error(
        "observing {path} took longer than the observation time budget of {} ms (--max-observe-ms)",
        .budget.as_millis()
    )]
    OutOfTime { path: PathBuf, budget: Duration },
}

/// blake3 of `bytes`, as lowercase hex. The one digest every observer reports.
pub fn digest_hex(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex().to_string()
}

/// A blake3 digest kept as its 32 bytes (a quarter of its hex text, and no
/// allocation); written as hex only where a change is reported.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Digest(pub [u8; 32]);

impl Digest {
    pub fn of(bytes: &[u8]) -> Self {
        Self(*blake3::hash(bytes).as_bytes())
    }

    pub fn hex(&self) -> String {
        blake3::Hash::from_bytes(self.0).to_hex().to_string()
    }
}

impl From<blake3::Hash> for Digest {
    fn from(hash: blake3::Hash) -> Self {
        Self(*hash.as_bytes())
    }
}

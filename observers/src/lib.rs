//! Out-of-band observers of an MCP server's store.
//!
//! An observer reads a store (a SQLite database, a directory tree, a JSON-lines
//! file) *beside* the server, never through the MCP surface being audited, and
//! turns it into a [`Snapshot`]: an ordered map from a stable, readable object id
//! (`notes/welcome`, `sqlite_master/table:notes`, `file/docs/a.txt`) to a digest
//! of that object's content. [`diff`] between two snapshots gives the per-object
//! [`Delta`] that the audit charges to a tool call.
//!
//! Two rules hold for every observer here:
//! - **It never perturbs what it observes.** Reading leaves every byte and inode
//!   of the store as it was (no `-wal`/`-shm` files appear, no index is rewritten).
//! - **Content decides change.** Never mtime or inode: servers rewrite whole files
//!   with identical content, and mtimes move in coarse ticks.

mod delta;
pub mod fs;
pub mod git_index;
pub mod jsonl;
mod snapshot;
pub mod sqlite;
#[cfg(test)]
mod testing;

pub use delta::{Change, Delta, Op, appended, diff};
pub use snapshot::{Head, ObjectState, Snapshot};

use std::path::PathBuf;

/// A source of snapshots of one store.
pub trait Observer: Send {
    /// Short name of the store kind: `"sqlite"`, `"fs"`, `"jsonl"`.
    fn kind(&self) -> &'static str;
    /// Reads the store as it is now, without changing it.
    fn snapshot(&mut self) -> Result<Snapshot, ObserveError>;
    /// The changes from `before` to `after`, two snapshots this observer
    /// took. Most stores need nothing beyond their digests and fields
    /// ([`diff`]); a store whose history decides whether a change destroys
    /// anything (a git branch moved forward or back) classifies here.
    fn diff(&mut self, before: &Snapshot, after: &Snapshot) -> Delta {
        diff(before, after)
    }

    /// Brings `last` (what this observer gave the previous time, empty the
    /// first time) up to now and gives the changes between, ordered by
    /// object id; `last.warnings` become the warnings of now. The default
    /// takes a whole snapshot and diffs it ([`Observer::diff`]); an observer
    /// that is told what changed (a replication slot) overrides this to
    /// work in proportion to the changes rather than to the store.
    fn advance(&mut self, last: &mut Snapshot) -> Result<Vec<Change>, ObserveError> {
        let now = self.snapshot()?;
        let changes = self.diff(last, &now).changes;
        *last = now;
        Ok(changes)
    }
}

/// Why a snapshot could not be taken.
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
}

/// blake3 of `bytes`, as lowercase hex. The one digest every observer uses.
pub fn digest_hex(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex().to_string()
}

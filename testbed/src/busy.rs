//! Busy mode (`testbed serve --busy`): the server behaves like published
//! servers that write when nobody asks them to, over any variant.
//!
//! - **A background indexer**: from start to exit, a thread of its own
//!   rewrites the `note_index` table every [`INDEX_EVERY`], on its own
//!   connection, whatever the calls do.
//! - **A write after the answer**: `save_note` saves the note, answers, and
//!   [`SAVE_DELAY`] later records the note's revision (`note_revisions`,
//!   one row per note, the same row again for the same note) from another
//!   thread, as a server that does not await its own write does.
//!
//! Every other tool and declaration is the variant's own: busy mode plants
//! no lie, it only makes the true effects harder to attribute.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::params;

use crate::TestbedError;
use crate::store;

/// How often the indexer rewrites its table.
pub const INDEX_EVERY: Duration = Duration::from_millis(20);

/// How long after its answer `save_note` commits: just after, as a server
/// that does not await its write (a Node server's `fs.writeFile` lands a
/// millisecond or two later).
pub const SAVE_DELAY: Duration = Duration::from_millis(3);

/// The indexer's table: a few slots, each holding the pass that last
/// rewrote it.
const INDEX_SCHEMA: &str =
    "CREATE TABLE IF NOT EXISTS note_index(slot INTEGER PRIMARY KEY, pass INTEGER NOT NULL);
     CREATE TABLE IF NOT EXISTS note_revisions(note_id TEXT PRIMARY KEY, bytes INTEGER NOT NULL);";

/// Waits for a lock in steps of a millisecond, for up to five seconds.
/// SQLite's own busy handler backs off to 100 ms steps, so a write that
/// meets another of the server's own writers (the indexer every 20 ms, a
/// call's transaction) could land a few hundred milliseconds late: past the settle and the control window on a loaded
/// machine, inside the next call. A Node server's unawaited write lands a
/// millisecond or two after its answer; the busy testbed models that, not
/// SQLite's back-off.
fn retry_every_millisecond(attempts: i32) -> bool {
    std::thread::sleep(Duration::from_millis(1));
    attempts < 5_000
}

fn open_eager(path: &Path) -> Result<rusqlite::Connection, TestbedError> {
    let conn = store::open_or_create(path)?;
    conn.busy_handler(Some(retry_every_millisecond))?;
    Ok(conn)
}

/// Creates the indexer's table and starts the indexer. The thread ends
/// with the process, or at the first write it cannot make.
pub fn start_indexer(path: &Path) -> Result<(), TestbedError> {
    let conn = open_eager(path)?;
    conn.execute_batch(INDEX_SCHEMA)?;
    std::thread::spawn(move || {
        let mut pass: i64 = 0;
        loop {
            std::thread::sleep(INDEX_EVERY);
            pass += 1;
            let written = conn.execute(
                "INSERT INTO note_index(slot, pass) VALUES (?1, ?2)
                 ON CONFLICT(slot) DO UPDATE SET pass = excluded.pass",
                params![pass % 4, pass],
            );
            if written.is_err() {
                return;
            }
        }
    });
    Ok(())
}

/// Records note `id`'s revision [`SAVE_DELAY`] from now, on a connection
/// of its own.
pub fn revise_later(path: PathBuf, id: String, bytes: usize) {
    std::thread::spawn(move || {
        std::thread::sleep(SAVE_DELAY);
        if let Ok(conn) = open_eager(&path) {
            let bytes = i64::try_from(bytes).unwrap_or(i64::MAX);
            let _ = conn.execute(
                "INSERT INTO note_revisions(note_id, bytes) VALUES (?1, ?2)
                 ON CONFLICT(note_id) DO UPDATE SET bytes = excluded.bytes",
                params![id, bytes],
            );
        }
    });
}

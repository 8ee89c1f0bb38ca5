//! SQLite observer.
//!
//! Reading a live database in place is not neutral: opening a WAL database even
//! with `mode=ro` creates `-wal`/`-shm` files, and a reader can hold locks the
//! server then trips over. So every read here goes through a [`PrivateCopy`]:
//! the file set (database, `-wal`, `-journal`) is copied byte for byte into a
//! private temporary directory and SQLite opens the copy. The original's bytes
//! and inodes are never touched.

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags};

use crate::ObserveError;

/// Suffixes of the files SQLite keeps beside a database.
const COMPANIONS: [&str; 2] = ["-wal", "-journal"];

/// A private, disposable copy of a database's file set, opened read-write so
/// SQLite may replay a WAL or roll back a hot journal *in the copy*.
pub struct PrivateCopy {
    _dir: tempfile::TempDir,
    conn: Connection,
}

impl PrivateCopy {
    /// Copies `path` (and its `-wal`/`-journal` companions when present) and
    /// opens the copy. Returns `Ok(None)` when the database does not exist yet.
    pub fn open(path: &Path) -> Result<Option<Self>, ObserveError> {
        if !path.exists() {
            return Ok(None);
        }
        let io = |source| ObserveError::Io {
            path: path.to_path_buf(),
            source,
        };
        let dir = tempfile::Builder::new()
            .prefix("witness-sqlite-")
            .tempdir()
            .map_err(io)?;
        let copy = dir.path().join("store.db");
        std::fs::copy(path, &copy).map_err(io)?;
        for suffix in COMPANIONS {
            let companion = with_suffix(path, suffix);
            match std::fs::copy(&companion, with_suffix(&copy, suffix)) {
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(source) => {
                    return Err(ObserveError::Io {
                        path: companion,
                        source,
                    });
                }
            }
        }
        let conn = Connection::open_with_flags(
            &copy,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|source| ObserveError::Sqlite {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(Some(Self { _dir: dir, conn }))
    }

    /// The connection to the copy. Writes through it reach only the copy.
    pub fn conn(&self) -> &Connection {
        &self.conn
    }
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

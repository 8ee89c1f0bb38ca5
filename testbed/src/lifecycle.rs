//! Out-of-band lifecycle events for E3.
//!
//! E3 asks whether a key is still effective after something happened to it or
//! to its grant. The event must reach the store *without* going through the
//! audited tools — otherwise a lying `revoke_api_key` would decide the
//! experiment's ground truth — so [`apply`] writes the store directly, and
//! [`inspect_key`] reads it the way an observer does, through a private copy.

use std::path::Path;

use rusqlite::{OptionalExtension, params};
use witness_observers::sqlite::PrivateCopy;

use crate::{TestbedError, store};

/// One out-of-band event.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Event {
    /// Sets the grant's status to `revoked`; its keys are not touched.
    RevokeGrant(String),
    /// Sets the key's status to `revoked`.
    RevokeKey(String),
    /// Deletes the key's row.
    DeleteKey(String),
}

/// Applies `event` to the store at `store` in one transaction. Fails with
/// [`TestbedError::NotFound`] when the targeted row is absent, so a scenario
/// typo cannot pass as "the event happened".
pub fn apply(store: &Path, event: &Event) -> Result<(), TestbedError> {
    let mut conn = store::open_existing(store)?;
    let tx = conn.transaction()?;
    let (kind, id, changed) = match event {
        Event::RevokeGrant(id) => (
            "grant",
            id,
            tx.execute(
                "UPDATE grants SET status = 'revoked' WHERE id = ?1",
                params![id],
            )?,
        ),
        // `revoked_at` stays as it is: the event carries no clock, and the
        // status alone is what the auth rule reads.
        Event::RevokeKey(id) => (
            "api key",
            id,
            tx.execute(
                "UPDATE api_keys SET status = 'revoked' WHERE id = ?1",
                params![id],
            )?,
        ),
        Event::DeleteKey(id) => (
            "api key",
            id,
            tx.execute("DELETE FROM api_keys WHERE id = ?1", params![id])?,
        ),
    };
    if changed == 0 {
        // Dropping the transaction rolls it back; nothing was written anyway.
        return Err(TestbedError::NotFound {
            kind,
            id: id.clone(),
        });
    }
    tx.commit()?;
    Ok(())
}

/// What the store says about one key, as the existence and delegation
/// baselines read it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyState {
    /// Whether the key's row exists.
    pub listed: bool,
    /// The key's grant id; `None` when the key is absent or has no grant.
    pub grant: Option<String>,
    /// `"active"` / `"revoked"`; `None` when there is no grant row to read.
    pub grant_status: Option<String>,
}

/// Reads the key's row and its grant's status from a private copy of the
/// store, leaving the store's bytes and companions exactly as they were.
pub fn inspect_key(store: &Path, key_id: &str) -> Result<KeyState, TestbedError> {
    let copy =
        PrivateCopy::open(store)?.ok_or_else(|| TestbedError::MissingStore(store.to_path_buf()))?;
    let conn = copy.conn();
    let row: Option<Option<String>> = conn
        .query_row(
            "SELECT grant_id FROM api_keys WHERE id = ?1",
            params![key_id],
            |r| r.get(0),
        )
        .optional()?;
    let Some(grant) = row else {
        return Ok(KeyState {
            listed: false,
            grant: None,
            grant_status: None,
        });
    };
    let grant_status = match &grant {
        Some(grant_id) => conn
            .query_row(
                "SELECT status FROM grants WHERE id = ?1",
                params![grant_id],
                |r| r.get(0),
            )
            .optional()?,
        None => None,
    };
    Ok(KeyState {
        listed: true,
        grant,
        grant_status,
    })
}

/// The status of grant `grant_id` (`None` when there is no such row), read
/// through a private copy. [`KeyState`] cannot report the grant of a key whose
/// row is gone, so a caller that needs it after `DeleteKey` asks here with the
/// grant id it read before the event.
pub fn grant_status(store: &Path, grant_id: &str) -> Result<Option<String>, TestbedError> {
    let copy =
        PrivateCopy::open(store)?.ok_or_else(|| TestbedError::MissingStore(store.to_path_buf()))?;
    Ok(copy
        .conn()
        .query_row(
            "SELECT status FROM grants WHERE id = ?1",
            params![grant_id],
            |r| r.get(0),
        )
        .optional()?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::Connection;
    use std::path::PathBuf;

    /// A seeded store holding `key_0001` under `grant_0001` and a grantless
    /// `key_0002`.
    fn store() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("store.db");
        store::seed_fixtures(&path).unwrap();
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(
            "INSERT INTO api_keys(id, secret, grant_id, status, created_at)
                 VALUES ('key_0001', 'wk_one', 'grant_0001', 'active', 5),
                        ('key_0002', 'wk_two', NULL, 'active', 5);",
        )
        .unwrap();
        (dir, path)
    }

    /// Every row of every table, rendered, so a test can say which changed.
    fn dump(path: &Path) -> Vec<String> {
        let conn = Connection::open(path).unwrap();
        let mut rows = Vec::new();
        for table in [
            "notes",
            "grants",
            "api_keys",
            "webhooks",
            "share_links",
            "telemetry",
        ] {
            let mut stmt = conn
                .prepare(&format!("SELECT * FROM {table} ORDER BY 1"))
                .unwrap();
            let width = stmt.column_count();
            let mut q = stmt.query([]).unwrap();
            while let Some(row) = q.next().unwrap() {
                let cells: Vec<String> = (0..width)
                    .map(|i| format!("{:?}", row.get::<_, rusqlite::types::Value>(i).unwrap()))
                    .collect();
                rows.push(format!("{table}: {}", cells.join(" | ")));
            }
        }
        rows
    }

    /// Asserts that the rows only in `before` are exactly `gone` and the rows
    /// only in `after` are exactly `new`, each matched by prefix.
    fn assert_changed(before: &[String], after: &[String], gone: &[&str], new: &[&str]) {
        let removed: Vec<&String> = before.iter().filter(|r| !after.contains(r)).collect();
        let added: Vec<&String> = after.iter().filter(|r| !before.contains(r)).collect();
        assert_eq!(removed.len(), gone.len(), "removed: {removed:?}");
        assert_eq!(added.len(), new.len(), "added: {added:?}");
        for (row, prefix) in removed.iter().zip(gone) {
            assert!(row.starts_with(prefix), "{row} vs {prefix}");
        }
        for (row, prefix) in added.iter().zip(new) {
            assert!(row.starts_with(prefix), "{row} vs {prefix}");
        }
    }

    fn companions(path: &Path) -> Vec<String> {
        let dir = path.parent().unwrap();
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n != "store.db")
            .collect()
    }

    #[test]
    fn revoke_grant_changes_only_the_grant_status() {
        let (_dir, path) = store();
        let before = dump(&path);
        apply(&path, &Event::RevokeGrant("grant_0001".into())).unwrap();
        let after = dump(&path);
        assert_changed(
            &before,
            &after,
            &["grants: Text(\"grant_0001\")"],
            &["grants: Text(\"grant_0001\") | Text(\"notes:write\") | Text(\"revoked\")"],
        );
        let state = inspect_key(&path, "key_0001").unwrap();
        assert_eq!(
            state,
            KeyState {
                listed: true,
                grant: Some("grant_0001".into()),
                grant_status: Some("revoked".into()),
            }
        );
    }

    #[test]
    fn revoke_key_changes_only_the_key_status() {
        let (_dir, path) = store();
        let before = dump(&path);
        apply(&path, &Event::RevokeKey("key_0001".into())).unwrap();
        let after = dump(&path);
        assert_changed(
            &before,
            &after,
            &["api_keys: Text(\"key_0001\")"],
            &[
                "api_keys: Text(\"key_0001\") | Text(\"wk_one\") | Text(\"grant_0001\") | Text(\"revoked\") | Null | Null | Integer(5)",
            ],
        );
        let state = inspect_key(&path, "key_0001").unwrap();
        assert!(state.listed);
        assert_eq!(state.grant_status.as_deref(), Some("active"));
    }

    #[test]
    fn delete_key_removes_only_the_key_row() {
        let (_dir, path) = store();
        let before = dump(&path);
        apply(&path, &Event::DeleteKey("key_0001".into())).unwrap();
        let after = dump(&path);
        assert_changed(&before, &after, &["api_keys: Text(\"key_0001\")"], &[]);
        assert_eq!(
            grant_status(&path, "grant_0001").unwrap().as_deref(),
            Some("active")
        );
        assert_eq!(grant_status(&path, "grant_0404").unwrap(), None);
        assert_eq!(
            inspect_key(&path, "key_0001").unwrap(),
            KeyState {
                listed: false,
                grant: None,
                grant_status: None
            }
        );
    }

    #[test]
    fn inspect_reports_grantless_and_dangling_grants() {
        let (_dir, path) = store();
        assert_eq!(
            inspect_key(&path, "key_0002").unwrap(),
            KeyState {
                listed: true,
                grant: None,
                grant_status: None
            }
        );
        Connection::open(&path)
            .unwrap()
            .execute("DELETE FROM grants WHERE id = 'grant_0001'", [])
            .unwrap();
        assert_eq!(
            inspect_key(&path, "key_0001").unwrap(),
            KeyState {
                listed: true,
                grant: Some("grant_0001".into()),
                grant_status: None
            }
        );
    }

    #[test]
    fn events_on_missing_rows_or_stores_fail_and_write_nothing() {
        let (dir, path) = store();
        let before = std::fs::read(&path).unwrap();
        for event in [
            Event::RevokeGrant("grant_0099".into()),
            Event::RevokeKey("key_0099".into()),
            Event::DeleteKey("key_0099".into()),
        ] {
            let err = apply(&path, &event).unwrap_err();
            assert!(matches!(err, TestbedError::NotFound { .. }), "{err}");
        }
        assert_eq!(before, std::fs::read(&path).unwrap());

        let absent = dir.path().join("absent.db");
        assert!(matches!(
            apply(&absent, &Event::DeleteKey("key_0001".into())),
            Err(TestbedError::MissingStore(_))
        ));
        assert!(matches!(
            inspect_key(&absent, "key_0001"),
            Err(TestbedError::MissingStore(_))
        ));
        assert!(!absent.exists(), "a failed event must not create a store");
    }

    #[test]
    fn apply_and_inspect_leave_no_companion_files_and_inspect_changes_no_byte() {
        let (_dir, path) = store();
        apply(&path, &Event::RevokeGrant("grant_0001".into())).unwrap();
        apply(&path, &Event::RevokeKey("key_0002".into())).unwrap();
        apply(&path, &Event::DeleteKey("key_0001".into())).unwrap();
        assert_eq!(companions(&path), Vec::<String>::new());

        let bytes = std::fs::read(&path).unwrap();
        let mtime = std::fs::metadata(&path).unwrap().modified().unwrap();
        inspect_key(&path, "key_0002").unwrap();
        inspect_key(&path, "key_0001").unwrap();
        assert_eq!(bytes, std::fs::read(&path).unwrap());
        assert_eq!(mtime, std::fs::metadata(&path).unwrap().modified().unwrap());
        assert_eq!(companions(&path), Vec::<String>::new());
    }
}

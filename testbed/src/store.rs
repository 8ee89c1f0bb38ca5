//! The testbed's SQLite store: schema, fixtures, and the deterministic ids and
//! secrets every row gets.
//!
//! Determinism is the point: the lab's results are regenerated in CI and
//! diffed, so an id depends only on the rows already present and a secret only
//! on its id. Nothing here reads the wall clock or a random source.

use std::path::Path;

use rusqlite::{Connection, OpenFlags, params};

use crate::{DEFAULT_NOW, TestbedError};

/// Every table of the store. `IF NOT EXISTS` so that starting a server on a
/// seeded store changes nothing (no schema write shows up as an effect).
const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS notes(
    id TEXT PRIMARY KEY,
    body TEXT NOT NULL,
    updated_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS grants(
    id TEXT PRIMARY KEY,
    scope TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'active',
    created_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS api_keys(
    id TEXT PRIMARY KEY,
    secret TEXT NOT NULL UNIQUE,
    grant_id TEXT,
    status TEXT NOT NULL DEFAULT 'active',
    expires_at INTEGER,
    revoked_at INTEGER,
    created_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS webhooks(
    id TEXT PRIMARY KEY,
    url TEXT NOT NULL,
    secret TEXT NOT NULL UNIQUE,
    status TEXT NOT NULL DEFAULT 'active',
    created_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS share_links(
    id TEXT PRIMARY KEY,
    note_id TEXT NOT NULL,
    token TEXT NOT NULL UNIQUE,
    status TEXT NOT NULL DEFAULT 'active',
    expires_at INTEGER,
    created_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS telemetry(
    id INTEGER PRIMARY KEY,
    event TEXT NOT NULL,
    at INTEGER NOT NULL
);
";

/// The fixture note whose *name* looks like a credential but which carries no
/// authority: E2's decoy for name-based and persistence-based classifiers.
pub const DECOY_NOTE_ID: &str = "api_key_backup";
/// The decoy's body: ordinary text, not a secret.
pub const DECOY_NOTE_BODY: &str = "Reminder: rotate keys every quarter.";
/// The fixture grant experiments mint keys under.
pub const FIXTURE_GRANT_ID: &str = "grant_0001";

/// Creates every table that does not exist yet.
/// Writes note `id` (created, or its body replaced), stamped `now`.
pub fn upsert_note(conn: &Connection, id: &str, body: &str, now: i64) -> Result<(), TestbedError> {
    conn.execute(
        "INSERT INTO notes(id, body, updated_at) VALUES (?1, ?2, ?3)
         ON CONFLICT(id) DO UPDATE SET body = excluded.body, updated_at = excluded.updated_at",
        rusqlite::params![id, body, now],
    )?;
    Ok(())
}

pub fn init_schema(conn: &Connection) -> Result<(), TestbedError> {
    conn.execute_batch(SCHEMA)?;
    Ok(())
}

/// Creates the store at `path` (if needed) with the schema and the fixtures
/// every experiment starts from: note `welcome`, the decoy note
/// `api_key_backup`, and grant `grant_0001` (scope `notes:write`, active).
/// Rows already present are left as they are.
pub fn seed_fixtures(path: &Path) -> Result<(), TestbedError> {
    let mut conn = open_or_create(path)?;
    init_schema(&conn)?;
    let tx = conn.transaction()?;
    // Fixtures predate any run, so they carry the default clock rather than a
    // run's `now`: the seeded store is the same file whatever clock a run uses.
    tx.execute(
        "INSERT OR IGNORE INTO notes(id, body, updated_at) VALUES (?1, ?2, ?3)",
        params!["welcome", "Welcome to the notes server.", DEFAULT_NOW],
    )?;
    tx.execute(
        "INSERT OR IGNORE INTO notes(id, body, updated_at) VALUES (?1, ?2, ?3)",
        params![DECOY_NOTE_ID, DECOY_NOTE_BODY, DEFAULT_NOW],
    )?;
    tx.execute(
        "INSERT OR IGNORE INTO grants(id, scope, status, created_at) VALUES (?1, ?2, 'active', ?3)",
        params![FIXTURE_GRANT_ID, "notes:write", DEFAULT_NOW],
    )?;
    tx.commit()?;
    Ok(())
}

/// Opens (creating if absent) a store for the server. Rollback-journal mode is
/// SQLite's default and is left alone: a WAL store would leave `-wal`/`-shm`
/// companions that outlive each call.
pub(crate) fn open_or_create(path: &Path) -> Result<Connection, TestbedError> {
    let conn = Connection::open(path).map_err(|source| TestbedError::Open {
        path: path.to_path_buf(),
        source,
    })?;
    configure(&conn, path)?;
    Ok(conn)
}

/// Opens an existing store for an out-of-band write; never creates one, since
/// an event applied to a store that is not there is a harness mistake.
pub(crate) fn open_existing(path: &Path) -> Result<Connection, TestbedError> {
    if !path.exists() {
        return Err(TestbedError::MissingStore(path.to_path_buf()));
    }
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|source| TestbedError::Open {
        path: path.to_path_buf(),
        source,
    })?;
    configure(&conn, path)?;
    Ok(conn)
}

fn configure(conn: &Connection, path: &Path) -> Result<(), TestbedError> {
    // The auditor copies the store between calls and lifecycle events write it
    // from another process; waiting briefly beats failing on a transient lock.
    conn.busy_timeout(std::time::Duration::from_secs(5))
        .map_err(|source| TestbedError::Open {
            path: path.to_path_buf(),
            source,
        })
}

/// The kinds of row that get a generated id, with their id prefix, table, and
/// (for credential-bearing kinds) secret prefix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Grant,
    ApiKey,
    Webhook,
    ShareLink,
}

impl Kind {
    fn table(self) -> &'static str {
        match self {
            Kind::Grant => "grants",
            Kind::ApiKey => "api_keys",
            Kind::Webhook => "webhooks",
            Kind::ShareLink => "share_links",
        }
    }

    fn id_prefix(self) -> &'static str {
        match self {
            Kind::Grant => "grant_",
            Kind::ApiKey => "key_",
            Kind::Webhook => "wh_",
            Kind::ShareLink => "share_",
        }
    }

    /// The name mixed into the secret derivation, so that two kinds never
    /// share a secret even if their ids collided. Grants carry no secret; their
    /// arms only keep the match total.
    fn secret_domain(self) -> &'static str {
        match self {
            Kind::Grant => "grant",
            Kind::ApiKey => "api_key",
            Kind::Webhook => "webhook",
            Kind::ShareLink => "share_link",
        }
    }

    fn secret_prefix(self) -> &'static str {
        match self {
            Kind::Grant => "gr_",
            Kind::ApiKey => "wk_",
            Kind::Webhook => "whsec_",
            Kind::ShareLink => "shr_",
        }
    }
}

/// The next id of `kind`: its prefix and one more than the largest numeric
/// suffix present, zero-padded to four digits. Ids that do not follow the
/// pattern are ignored rather than rejected, so a hand-edited store still works.
pub(crate) fn next_id(conn: &Connection, kind: Kind) -> Result<String, TestbedError> {
    let prefix = kind.id_prefix();
    let mut stmt = conn.prepare(&format!("SELECT id FROM {}", kind.table()))?;
    let ids = stmt.query_map([], |row| row.get::<_, String>(0))?;
    let mut max: u64 = 0;
    for id in ids {
        let id = id?;
        let Some(suffix) = id.strip_prefix(prefix) else {
            continue;
        };
        if suffix.is_empty() || !suffix.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        if let Ok(n) = suffix.parse::<u64>() {
            max = max.max(n);
        }
    }
    Ok(format!("{prefix}{:04}", max.saturating_add(1)))
}

/// The secret of row `id` of `kind`: a fixed function of the two, so reruns
/// mint byte-identical credentials.
pub(crate) fn secret_for(kind: Kind, id: &str) -> String {
    let input = format!("mcp-witness-testbed/{}/{id}", kind.secret_domain());
    let hex = blake3::hash(input.as_bytes()).to_hex();
    format!("{}{}", kind.secret_prefix(), &hex.as_str()[..32])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeding_twice_is_a_no_op_and_creates_the_fixtures() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("store.db");
        seed_fixtures(&path).unwrap();
        let first = std::fs::read(&path).unwrap();
        seed_fixtures(&path).unwrap();
        assert_eq!(
            first,
            std::fs::read(&path).unwrap(),
            "reseeding rewrote the store"
        );

        let conn = Connection::open(&path).unwrap();
        let notes: Vec<(String, String)> = conn
            .prepare("SELECT id, body FROM notes ORDER BY id")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(
            notes,
            vec![
                (DECOY_NOTE_ID.to_owned(), DECOY_NOTE_BODY.to_owned()),
                (
                    "welcome".to_owned(),
                    "Welcome to the notes server.".to_owned()
                ),
            ]
        );
        let grant: (String, String) = conn
            .query_row(
                "SELECT scope, status FROM grants WHERE id = 'grant_0001'",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        assert_eq!(grant, ("notes:write".to_owned(), "active".to_owned()));
        let journal: String = conn
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        assert_eq!(journal, "delete");
    }

    #[test]
    fn seeded_stores_are_byte_identical_across_runs() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.db");
        let b = dir.path().join("b.db");
        seed_fixtures(&a).unwrap();
        seed_fixtures(&b).unwrap();
        assert_eq!(std::fs::read(a).unwrap(), std::fs::read(b).unwrap());
    }

    #[test]
    fn ids_follow_the_largest_suffix_and_ignore_foreign_ids() {
        let conn = Connection::open_in_memory().unwrap();
        init_schema(&conn).unwrap();
        assert_eq!(next_id(&conn, Kind::ApiKey).unwrap(), "key_0001");
        for id in ["key_0001", "key_0007", "key_x", "legacy", "key_"] {
            conn.execute(
                "INSERT INTO api_keys(id, secret, created_at) VALUES (?1, ?2, 0)",
                params![id, format!("s-{id}")],
            )
            .unwrap();
        }
        assert_eq!(next_id(&conn, Kind::ApiKey).unwrap(), "key_0008");
        assert_eq!(next_id(&conn, Kind::Webhook).unwrap(), "wh_0001");
        assert_eq!(next_id(&conn, Kind::ShareLink).unwrap(), "share_0001");
        assert_eq!(next_id(&conn, Kind::Grant).unwrap(), "grant_0001");
    }

    #[test]
    fn secrets_are_deterministic_prefixed_and_distinct_per_kind() {
        let key = secret_for(Kind::ApiKey, "key_0001");
        assert_eq!(key, secret_for(Kind::ApiKey, "key_0001"));
        assert!(key.starts_with("wk_") && key.len() == 3 + 32, "{key}");
        assert!(secret_for(Kind::Webhook, "wh_0001").starts_with("whsec_"));
        assert!(secret_for(Kind::ShareLink, "share_0001").starts_with("shr_"));
        assert_ne!(key, secret_for(Kind::ApiKey, "key_0002"));
        // Same id under another kind must not yield the same hex.
        assert_ne!(
            key.trim_start_matches("wk_"),
            secret_for(Kind::Webhook, "key_0001").trim_start_matches("whsec_")
        );
    }
}

//! The testbed's credential probe: exercises an observed row against the
//! server's own authorization rule.
//!
//! Credential rows (API keys, webhooks, share links) are exercised by their
//! secret column. Every other row of the testbed's tables is exercised too, by
//! trying each of its text values as a credential: the probe classifies by
//! *use*, so a note named `api_key_backup` is judged by whether anything in it
//! opens a door, not by its name.
//!
//! The probe reads a private copy of the store (never the store itself, so
//! probing perturbs nothing the audit observes) and hands the row's secret to
//! [`crate::auth::authorize`], the same function the server runs.

use rusqlite::OptionalExtension;
use witness_observers::sqlite::PrivateCopy;
use witness_probes::{ObservedObject, Probe, ProbeResult, ProbeStatus, StoreView};

use crate::auth::{self, AuthRule};

/// Exercises credential-bearing rows at a fixed clock under a fixed rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CredentialProbe {
    /// The clock the rule is evaluated at (E3's TTL scenario moves it past a
    /// key's expiry).
    pub now: i64,
    pub rule: AuthRule,
}

/// `(table, secret column)` of every kind of object this probe covers.
const COVERED: [(&str, &str); 3] = [
    ("api_keys", "secret"),
    ("webhooks", "secret"),
    ("share_links", "token"),
];

/// Tables without a secret column whose rows are still exercised, value by value.
const OTHER_TABLES: [&str; 3] = ["notes", "grants", "telemetry"];

fn plain_row(id: &str) -> Option<(&'static str, &str)> {
    let (table, row) = id.split_once('/')?;
    let table = OTHER_TABLES.into_iter().find(|t| *t == table)?;
    (!row.is_empty()).then_some((table, row))
}

fn split(id: &str) -> Option<(&'static str, &'static str, &str)> {
    let (table, row) = id.split_once('/')?;
    let (table, column) = COVERED.into_iter().find(|(t, _)| *t == table)?;
    (!row.is_empty()).then_some((table, column, row))
}

impl Probe for CredentialProbe {
    fn name(&self) -> &'static str {
        "testbed-credential"
    }

    fn covers(&self, object: &ObservedObject<'_>) -> bool {
        split(object.id).is_some() || plain_row(object.id).is_some()
    }

    fn exercise(&self, object: &ObservedObject<'_>, store: &dyn StoreView) -> ProbeResult {
        if let Some((table, row)) = plain_row(object.id) {
            return self.exercise_values(table, row, store);
        }
        let Some((table, column, row)) = split(object.id) else {
            return ProbeResult::unknown(format!(
                "{} is not a row of the testbed's tables",
                object.id
            ));
        };
        if store.kind() != "sqlite" {
            return ProbeResult::unknown(format!(
                "store '{}' is a {} store; this probe reads only SQLite",
                object.store,
                store.kind()
            ));
        }
        let copy = match PrivateCopy::open(store.path()) {
            Ok(Some(copy)) => copy,
            Ok(None) => return ProbeResult::unknown("store does not exist; nothing to read"),
            Err(e) => return ProbeResult::unknown(format!("cannot copy the store: {e}")),
        };
        // `table` and `column` come from COVERED, never from the object id.
        let sql = format!("SELECT {column} FROM {table} WHERE id = ?1");
        let secret: Option<String> =
            match copy.conn().query_row(&sql, [row], |r| r.get(0)).optional() {
                Ok(secret) => secret,
                Err(e) => {
                    return ProbeResult::unknown(format!("cannot read {table}.{column}: {e}"));
                }
            };
        let Some(secret) = secret else {
            return ProbeResult {
                status: ProbeStatus::Ineffective,
                basis: "object not listed; nothing to exercise".to_owned(),
                credential_digest: None,
                subject: None,
            };
        };
        let digest = blake3::hash(secret.as_bytes()).to_hex().as_str()[..16].to_owned();
        let decision = match auth::authorize(copy.conn(), &secret, self.now, self.rule) {
            Ok(decision) => decision,
            Err(e) => {
                return ProbeResult {
                    status: ProbeStatus::Unknown,
                    basis: format!("server auth rule could not run: {e}"),
                    credential_digest: Some(digest),
                    subject: None,
                };
            }
        };
        // Secrets are unique per table and prefixed per kind, so the rule
        // should land on the very row we read; if it does not, the evidence
        // would be about another object.
        if decision.object.as_deref() != Some(object.id) {
            return ProbeResult {
                status: ProbeStatus::Unknown,
                basis: format!(
                    "the secret of {} matched {} under the server auth rule",
                    object.id,
                    decision.object.as_deref().unwrap_or("nothing")
                ),
                credential_digest: Some(digest),
                subject: None,
            };
        }
        ProbeResult {
            status: if decision.accepted {
                ProbeStatus::Effective
            } else {
                ProbeStatus::Ineffective
            },
            basis: decision.basis,
            credential_digest: Some(digest),
            subject: None,
        }
    }
}

impl CredentialProbe {
    /// Tries every text value of a non-credential row as a credential.
    fn exercise_values(&self, table: &str, row: &str, store: &dyn StoreView) -> ProbeResult {
        if store.kind() != "sqlite" {
            return ProbeResult::unknown("this probe reads only SQLite stores");
        }
        let copy = match PrivateCopy::open(store.path()) {
            Ok(Some(copy)) => copy,
            Ok(None) => return ProbeResult::unknown("store does not exist; nothing to read"),
            Err(e) => return ProbeResult::unknown(format!("cannot copy the store: {e}")),
        };
        // `table` comes from OTHER_TABLES, never from the object id.
        let sql = format!("SELECT * FROM {table} WHERE id = ?1");
        let values: Option<Vec<(String, String)>> =
            match copy.conn().prepare(&sql).and_then(|mut stmt| {
                let names: Vec<String> =
                    stmt.column_names().iter().map(|n| n.to_string()).collect();
                stmt.query_row([row], |r| {
                    let mut out = Vec::new();
                    for (i, name) in names.iter().enumerate() {
                        if let Ok(Some(text)) = r.get::<_, Option<String>>(i) {
                            out.push((name.clone(), text));
                        }
                    }
                    Ok(out)
                })
                .optional()
            }) {
                Ok(values) => values,
                Err(e) => return ProbeResult::unknown(format!("cannot read {table}: {e}")),
            };
        let Some(values) = values else {
            return ProbeResult {
                status: ProbeStatus::Ineffective,
                basis: "object not listed; nothing to exercise".to_owned(),
                credential_digest: None,
                subject: None,
            };
        };
        let columns: Vec<String> = values.iter().map(|(c, _)| format!("{table}.{c}")).collect();
        for (column, value) in &values {
            match auth::authorize(copy.conn(), value, self.now, self.rule) {
                Ok(decision) if decision.accepted => {
                    let digest = blake3::hash(value.as_bytes()).to_hex().as_str()[..16].to_owned();
                    return ProbeResult {
                        status: ProbeStatus::Effective,
                        basis: format!(
                            "exercised {table}.{column}: server auth rule accepts it as {}",
                            decision.object.as_deref().unwrap_or("a credential")
                        ),
                        credential_digest: Some(digest),
                        subject: None,
                    };
                }
                Ok(_) => {}
                Err(e) => {
                    return ProbeResult::unknown(format!("server auth rule could not run: {e}"));
                }
            }
        }
        ProbeResult {
            status: ProbeStatus::Ineffective,
            basis: format!(
                "exercised {}: server auth rule accepts none of them",
                columns.join(", ")
            ),
            credential_digest: None,
            subject: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{lifecycle, store};
    use rusqlite::Connection;
    use std::path::{Path, PathBuf};
    use witness_probes::StorePath;

    const NOW: i64 = 2_000;

    fn store_with_credentials() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("store.db");
        store::seed_fixtures(&path).unwrap();
        Connection::open(&path)
            .unwrap()
            .execute_batch(
                "INSERT INTO api_keys(id, secret, grant_id, status, expires_at, created_at) VALUES
                     ('key_0001', 'wk_one', 'grant_0001', 'active', NULL, 1),
                     ('key_0002', 'wk_ttl', 'grant_0001', 'active', 2500, 1);
                 INSERT INTO webhooks(id, url, secret, status, created_at)
                     VALUES ('wh_0001', 'https://hooks.invalid/x', 'whsec_one', 'active', 1);
                 INSERT INTO share_links(id, note_id, token, status, expires_at, created_at)
                     VALUES ('share_0001', 'welcome', 'shr_one', 'active', NULL, 1);",
            )
            .unwrap();
        (dir, path)
    }

    fn probe(path: &Path, id: &str, now: i64, rule: AuthRule) -> ProbeResult {
        let object = ObservedObject { store: "db", id };
        let view = StorePath {
            kind: "sqlite",
            path,
        };
        let result = CredentialProbe { now, rule }.exercise(&object, &view);
        for secret in ["wk_one", "wk_ttl", "whsec_one", "shr_one"] {
            assert!(
                !result.basis.contains(secret),
                "basis leaks: {}",
                result.basis
            );
        }
        result
    }

    #[test]
    fn covers_the_testbed_tables_rows_only() {
        let p = CredentialProbe {
            now: NOW,
            rule: AuthRule::Plain,
        };
        let covers = |id| p.covers(&ObservedObject { store: "db", id });
        assert!(covers("api_keys/key_0001"));
        assert!(covers("webhooks/wh_0001"));
        assert!(covers("share_links/share_0001"));
        assert!(covers("notes/api_key_backup"));
        assert!(covers("grants/grant_0001"));
        assert!(!covers("notes/"));
        assert!(!covers("other/1"));
        assert!(!covers("api_keys/"));
        assert!(!covers("sqlite_master/table:api_keys"));
        assert_eq!(p.name(), "testbed-credential");
    }

    #[test]
    fn the_decoy_note_is_exercised_by_use_and_rejected() {
        let (_dir, path) = store_with_credentials();
        let decoy = probe(&path, "notes/api_key_backup", NOW, AuthRule::Plain);
        assert_eq!(decoy.status, ProbeStatus::Ineffective);
        assert!(decoy.basis.contains("notes.body"), "{}", decoy.basis);
        // A note whose body holds a live secret is authority, whatever its name.
        Connection::open(&path)
            .unwrap()
            .execute(
                "INSERT INTO notes(id, body, updated_at) VALUES ('todo', 'wk_one', 1)",
                [],
            )
            .unwrap();
        let leaky = probe(&path, "notes/todo", NOW, AuthRule::Plain);
        assert_eq!(leaky.status, ProbeStatus::Effective);
        assert!(!leaky.basis.contains("wk_one"));
        assert_eq!(
            probe(&path, "notes/gone", NOW, AuthRule::Plain).status,
            ProbeStatus::Ineffective
        );
    }

    #[test]
    fn the_e3_scenarios_read_as_the_seed_reports_them() {
        let (_dir, path) = store_with_credentials();
        let live = probe(&path, "api_keys/key_0001", NOW, AuthRule::Plain);
        assert_eq!(live.status, ProbeStatus::Effective);
        assert_eq!(
            live.basis,
            "exercised api_keys.secret: server auth rule accepts it (status/expiry checked)"
        );
        assert_eq!(
            live.credential_digest.as_deref(),
            Some(&blake3::hash(b"wk_one").to_hex().as_str()[..16])
        );

        // ttl_expired: the same key store, a clock past the key's expiry.
        assert_eq!(
            probe(&path, "api_keys/key_0002", NOW, AuthRule::Plain).status,
            ProbeStatus::Effective
        );
        assert_eq!(
            probe(&path, "api_keys/key_0002", 2_500, AuthRule::Plain).status,
            ProbeStatus::Ineffective
        );

        // grant_revoked: residual authority under Plain, dead under Cascade.
        lifecycle::apply(&path, &lifecycle::Event::RevokeGrant("grant_0001".into())).unwrap();
        assert_eq!(
            probe(&path, "api_keys/key_0001", NOW, AuthRule::Plain).status,
            ProbeStatus::Effective
        );
        let cascade = probe(&path, "api_keys/key_0001", NOW, AuthRule::Cascade);
        assert_eq!(cascade.status, ProbeStatus::Ineffective);
        assert_eq!(
            cascade.basis,
            "exercised api_keys.secret: server auth rule rejects it (status/expiry/grant checked)"
        );

        // key_revoked, then key_unlisted.
        lifecycle::apply(&path, &lifecycle::Event::RevokeKey("key_0001".into())).unwrap();
        let revoked = probe(&path, "api_keys/key_0001", NOW, AuthRule::Plain);
        assert_eq!(revoked.status, ProbeStatus::Ineffective);
        assert!(revoked.basis.contains("rejects it"), "{}", revoked.basis);
        lifecycle::apply(&path, &lifecycle::Event::DeleteKey("key_0001".into())).unwrap();
        let gone = probe(&path, "api_keys/key_0001", NOW, AuthRule::Plain);
        assert_eq!(gone.status, ProbeStatus::Ineffective);
        assert_eq!(gone.basis, "object not listed; nothing to exercise");
        assert_eq!(gone.credential_digest, None);
    }

    #[test]
    fn webhooks_and_share_links_are_effective() {
        let (_dir, path) = store_with_credentials();
        let wh = probe(&path, "webhooks/wh_0001", NOW, AuthRule::Plain);
        assert_eq!(wh.status, ProbeStatus::Effective);
        assert!(
            wh.basis.starts_with("exercised webhooks.secret"),
            "{}",
            wh.basis
        );
        let share = probe(&path, "share_links/share_0001", NOW, AuthRule::Cascade);
        assert_eq!(share.status, ProbeStatus::Effective);
        assert!(
            share.basis.starts_with("exercised share_links.token"),
            "{}",
            share.basis
        );
    }

    #[test]
    fn probing_leaves_the_store_untouched() {
        let (_dir, path) = store_with_credentials();
        let before = std::fs::read(&path).unwrap();
        probe(&path, "api_keys/key_0001", NOW, AuthRule::Cascade);
        probe(&path, "share_links/share_0001", NOW, AuthRule::Plain);
        assert_eq!(before, std::fs::read(&path).unwrap());
        let names: Vec<_> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("store.db")]);
    }

    #[test]
    fn unusable_stores_answer_unknown() {
        let dir = tempfile::tempdir().unwrap();
        let absent = dir.path().join("absent.db");
        assert_eq!(
            probe(&absent, "api_keys/key_0001", NOW, AuthRule::Plain).status,
            ProbeStatus::Unknown
        );
        // A SQLite file without the testbed's tables.
        let foreign = dir.path().join("foreign.db");
        Connection::open(&foreign)
            .unwrap()
            .execute_batch("CREATE TABLE t(x);")
            .unwrap();
        let r = probe(&foreign, "api_keys/key_0001", NOW, AuthRule::Plain);
        assert_eq!(r.status, ProbeStatus::Unknown);
        assert!(r.basis.contains("api_keys.secret"), "{}", r.basis);

        let object = ObservedObject {
            store: "db",
            id: "api_keys/key_0001",
        };
        let fs = StorePath {
            kind: "fs",
            path: dir.path(),
        };
        let p = CredentialProbe {
            now: NOW,
            rule: AuthRule::Plain,
        };
        assert_eq!(p.exercise(&object, &fs).status, ProbeStatus::Unknown);
    }
}

//! The PostgreSQL probe: roles and grants classified by use, in the audit's
//! own throwaway cluster, out of band.
//!
//! - A role (`catalog/role:alice`) is authority when a session can be had
//!   as it: the probe logs in over the cluster's socket with each password
//!   a call carried or returned (SCRAM-SHA-256, which the cluster demands of
//!   every role but the server's). `SET ROLE` would not do: it ignores
//!   `NOLOGIN` and `VALID UNTIL`, which only a login tests.
//! - A relation's grants (`catalog/table:public.orders`) are authority when
//!   a role holding them can use them: as the superuser, `SET LOCAL ROLE`
//!   to the role, then the action itself (`SELECT … LIMIT 0`; `EXPLAIN` of
//!   an `INSERT`, `UPDATE` and `DELETE`, which checks the privilege as
//!   execution would and runs nothing), in a transaction that is rolled
//!   back. A privilege held through a membership is exercised as such: the
//!   role is used, not its catalog rows. The roles exercised are the ones
//!   the call named (so a `REVOKE … FROM alice` is judged on alice), else
//!   every role the relation's ACL names.
//!
//! Nothing the probe does persists: a failed or a successful login writes
//! no catalog row, and the transactions it opens assign no transaction id
//! and end in `ROLLBACK`. Passwords stay in this process's memory; a
//! result names one only by digest.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::{Mutex, MutexGuard};

use witness_probes::{ObservedObject, Probe, ProbeResult, ProbeStatus, StoreView};

use crate::cluster::{self, DATABASE, OWNER, PORT, SERVER_ROLE};
use crate::protocol::{Client, ProtocolError};

const ROLE: &str = "catalog/role:";
/// Relations whose grants are exercised, and whether they take writes.
const RELATIONS: [(&str, bool); 4] = [
    ("catalog/table:", true),
    ("catalog/view:", true),
    ("catalog/materialized-view:", false),
    ("catalog/foreign-table:", true),
];
/// A foreign table's scan may reach another server as it starts: its
/// `SELECT` is only explained, which checks the privilege and starts no
/// scan.
const FOREIGN: &str = "catalog/foreign-table:";
/// Passwords tried for one role, at most: a call that returned a long list
/// must not turn the probe into a password sprayer.
const MAX_TRIES: usize = 64;
/// Values taken from one call's texts as candidate passwords, at most.
const MAX_VALUES_PER_CALL: usize = 32;

/// What one call carried and returned, as the probe keeps it.
struct Heard {
    call: u32,
    /// `PASSWORD '…'` literals: passwords by construction.
    passwords: Vec<String>,
    /// Other values the call carried or returned (a password a tool
    /// generated and answered with): tried after the literals.
    values: Vec<String>,
    /// The words of its texts, for the roles it named.
    words: BTreeSet<String>,
}

/// Exercises roles and grants in the audit's PostgreSQL cluster.
#[derive(Default)]
pub struct PostgresProbe {
    heard: Mutex<Vec<Heard>>,
    /// Passwords that opened a session (for the report's redaction).
    worked: Mutex<BTreeSet<String>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    match m.lock() {
        Ok(guard) => guard,
        Err(poisoned) => poisoned.into_inner(),
    }
}

impl PostgresProbe {
    pub fn new() -> Self {
        Self::default()
    }

    /// Every candidate password heard so far, with the call it came from:
    /// the literals of every call first, then the other values, the latest
    /// call's first (the bound must not keep a password just returned from
    /// being tried); each once.
    fn candidates(&self) -> Vec<(u32, String)> {
        let heard = lock(&self.heard);
        let mut seen = BTreeSet::new();
        let literals = heard
            .iter()
            .flat_map(|h| h.passwords.iter().map(move |p| (h.call, p)));
        let values = heard
            .iter()
            .rev()
            .flat_map(|h| h.values.iter().map(move |v| (h.call, v)));
        literals
            .chain(values)
            .filter(|(_, p)| seen.insert((*p).clone()))
            .map(|(c, p)| (c, p.clone()))
            .take(MAX_TRIES)
            .collect()
    }

    /// The words of the last call heard (none before any call).
    fn last_words(&self) -> BTreeSet<String> {
        lock(&self.heard)
            .last()
            .map(|h| h.words.clone())
            .unwrap_or_default()
    }
}

impl PostgresProbe {
    /// [`Probe::exercise`], with a relation's grants exercised for
    /// `holder` (a role's name as the catalog spells it) rather than for
    /// the roles the last call named: what a caller who asks "can bob read
    /// orders" wants, whatever was said last.
    pub fn exercise_for(
        &self,
        object: &ObservedObject<'_>,
        store: &dyn StoreView,
        holder: &str,
    ) -> ProbeResult {
        self.exercise_named(object, store, Some(holder))
    }

    fn exercise_named(
        &self,
        object: &ObservedObject<'_>,
        store: &dyn StoreView,
        holder: Option<&str>,
    ) -> ProbeResult {
        if store.kind() != "postgres" {
            return ProbeResult::unknown(format!(
                "store '{}' is a {} store; this probe exercises PostgreSQL roles and grants",
                object.store,
                store.kind()
            ));
        }
        let socket_dir = cluster::socket_dir_of(store.path());
        let Some(password) = cluster::password_for(&socket_dir) else {
            return ProbeResult::unknown(
                "not a cluster this audit made: the probe exercises only its own throwaway cluster",
            );
        };
        let mut admin = match Client::connect(&socket_dir, PORT, OWNER, DATABASE, Some(&password)) {
            Ok(client) => client,
            Err(e) => return ProbeResult::unknown(format!("cannot reach the cluster: {e}")),
        };
        if let Some(name) = object.id.strip_prefix(ROLE) {
            return self.login(&mut admin, &socket_dir, name);
        }
        match RELATIONS
            .iter()
            .find_map(|(p, w)| object.id.strip_prefix(p).map(|rel| (rel, *w)))
        {
            Some((relation, writable)) => {
                let foreign = object.id.starts_with(FOREIGN);
                let words = match holder {
                    Some(holder) => BTreeSet::from([holder.to_owned()]),
                    None => self.last_words(),
                };
                self.grants(&mut admin, relation, writable, foreign, &words, holder)
            }
            None => match row_id(object.id) {
                Some((table, key)) => self.row(&mut admin, &socket_dir, table, key),
                None => ProbeResult::unknown(format!("{} is not a role or a relation", object.id)),
            },
        }
    }
}

impl Probe for PostgresProbe {
    fn name(&self) -> &'static str {
        "postgres"
    }

    fn covers(&self, object: &ObservedObject<'_>) -> bool {
        object.id.starts_with(ROLE)
            || RELATIONS.iter().any(|(p, _)| object.id.starts_with(p))
            || row_id(object.id).is_some()
    }

    fn exercise(&self, object: &ObservedObject<'_>, store: &dyn StoreView) -> ProbeResult {
        self.exercise_named(object, store, None)
    }

    fn hear(&self, call: u32, texts: &[&str]) {
        let mut passwords = Vec::new();
        let mut values = Vec::new();
        let mut words = BTreeSet::new();
        for text in texts {
            passwords.extend(password_literals(text));
            for token in tokens(text) {
                if values.len() < MAX_VALUES_PER_CALL && !values.contains(&token) {
                    values.push(token);
                }
            }
            words.extend(identifiers(text));
        }
        lock(&self.heard).push(Heard {
            call,
            passwords,
            values,
            words,
        });
    }

    fn secrets(&self) -> Vec<String> {
        let mut out: BTreeSet<String> = lock(&self.heard)
            .iter()
            .flat_map(|h| h.passwords.iter().cloned())
            .collect();
        out.extend(lock(&self.worked).iter().cloned());
        out.into_iter().collect()
    }
}

/// The first 16 hex digits of a password's blake3 digest.
fn digest(secret: &str) -> String {
    blake3::hash(secret.as_bytes()).to_hex().as_str()[..16].to_owned()
}

/// `text` as a SQL string literal (standard conforming strings, which the
/// cluster keeps on).
fn literal(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

/// The SQLSTATE in an error line `SEVERITY CODE: message`.
fn sqlstate(error: &ProtocolError) -> Option<&str> {
    match error {
        ProtocolError::Server(text) => text.split(' ').nth(1).map(|c| c.trim_end_matches(':')),
        _ => None,
    }
}

/// The message of an error line, without its severity and code.
fn message(error: &ProtocolError) -> String {
    match error {
        ProtocolError::Server(text) => text
            .split_once(": ")
            .map_or(text.as_str(), |(_, m)| m)
            .to_owned(),
        other => other.to_string(),
    }
}

impl PostgresProbe {
    /// A role: a login with every password heard.
    fn login(&self, admin: &mut Client, socket_dir: &Path, quoted: &str) -> ProbeResult {
        let sql = format!(
            "SELECT rolname, rolcanlogin::text FROM pg_roles WHERE quote_ident(rolname) = {}",
            literal(quoted)
        );
        let row = match admin.query(&sql) {
            Ok(rows) => rows.into_iter().next(),
            Err(e) => return ProbeResult::unknown(format!("cannot read pg_roles: {e}")),
        };
        let subject = Some(quoted.to_owned());
        let answer = |status, basis: String, credential_digest| ProbeResult {
            status,
            basis,
            credential_digest,
            subject: subject.clone(),
        };
        let Some([Some(name), Some(can_login)]) = row.as_deref() else {
            return answer(
                ProbeStatus::Ineffective,
                format!("no role {quoted}: nothing to log in as"),
                None,
            );
        };
        if name == OWNER || name == SERVER_ROLE {
            return ProbeResult::unknown(format!(
                "{quoted} is the auditor's or the server's own role: not exercised"
            ));
        }
        let candidates = self.candidates();
        if candidates.is_empty() {
            return if can_login == "false" {
                answer(
                    ProbeStatus::Ineffective,
                    format!(
                        "{quoted} may not log in (NOLOGIN) and no call carried a password for it"
                    ),
                    None,
                )
            } else {
                ProbeResult::unknown(format!(
                    "no call carried or returned a password to try as {quoted}"
                ))
            };
        }
        let mut tried_calls = BTreeSet::new();
        for (call, password) in &candidates {
            tried_calls.insert(*call);
            match Client::connect(socket_dir, PORT, name, DATABASE, Some(password)) {
                Ok(_) => {
                    lock(&self.worked).insert(password.clone());
                    return answer(
                        ProbeStatus::Effective,
                        format!("connected as {quoted} with the password of call {call}"),
                        Some(digest(password)),
                    );
                }
                Err(e) if sqlstate(&e) == Some("28P01") => {}
                // Any other refusal comes after the password was proven:
                // the credential is the role's, the session still refused.
                Err(e @ ProtocolError::Server(_)) => {
                    return answer(
                        ProbeStatus::Ineffective,
                        format!(
                            "the password of call {call} is {quoted}'s, but the cluster refuses a session: {}",
                            message(&e)
                        ),
                        Some(digest(password)),
                    );
                }
                Err(e) => {
                    return ProbeResult::unknown(format!("cannot try a login as {quoted}: {e}"));
                }
            }
        }
        let calls: Vec<String> = tried_calls.iter().map(u32::to_string).collect();
        answer(
            ProbeStatus::Ineffective,
            format!(
                "tried {} password(s) from call(s) {} as {quoted}: password authentication failed for each",
                candidates.len(),
                calls.join(", ")
            ),
            None,
        )
    }

    /// A relation: `SET ROLE` and each action, for the roles the last call
    /// named, else for every role its ACL names.
    fn grants(
        &self,
        admin: &mut Client,
        quoted: &str,
        writable: bool,
        foreign: bool,
        words: &BTreeSet<String>,
        holder: Option<&str>,
    ) -> ProbeResult {
        let sql = format!(
            "SELECT c.oid::regclass::text, c.relowner::text, \
             (SELECT quote_ident(a.attname) FROM pg_attribute a WHERE a.attrelid = c.oid \
              AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum LIMIT 1) \
             FROM pg_class c WHERE c.oid = to_regclass({})",
            literal(quoted)
        );
        let row = match admin.query(&sql) {
            Ok(rows) => rows.into_iter().next(),
            Err(e) => return ProbeResult::unknown(format!("cannot read pg_class: {e}")),
        };
        let Some([Some(relation), Some(owner), column]) = row.as_deref() else {
            return ProbeResult {
                status: ProbeStatus::Ineffective,
                basis: format!("no relation {quoted}: nothing to exercise"),
                credential_digest: None,
                subject: None,
            };
        };
        let roles_sql = format!(
            "SELECT r.rolname, quote_ident(r.rolname), \
             (r.oid IN (SELECT (aclexplode(c.relacl)).grantee FROM pg_class c WHERE c.oid = {rel}::regclass))::text \
             FROM pg_roles r WHERE NOT r.rolsuper AND r.rolname !~ '^pg_' AND r.oid <> {owner} \
             ORDER BY r.rolname",
            rel = literal(relation),
        );
        let roles = match admin.query(&roles_sql) {
            Ok(rows) => rows,
            Err(e) => return ProbeResult::unknown(format!("cannot read pg_roles: {e}")),
        };
        let mut named = Vec::new();
        let mut grantees = Vec::new();
        for row in roles {
            if let [Some(name), Some(ident), Some(granted)] = row.as_slice() {
                if words.contains(name) {
                    named.push(ident.clone());
                }
                if granted == "true" {
                    grantees.push(ident.clone());
                }
            }
        }
        if let Some(holder) = holder
            && named.is_empty()
        {
            // Asked about one holder: another's grants say nothing of it.
            return ProbeResult {
                status: ProbeStatus::Ineffective,
                basis: format!("no role {holder}: nothing to exercise on {relation}"),
                credential_digest: None,
                subject: Some(holder.to_owned()),
            };
        }
        let subject = (!named.is_empty()).then(|| named.join(","));
        let roles = if named.is_empty() { grantees } else { named };
        if roles.is_empty() {
            return ProbeResult {
                status: ProbeStatus::Ineffective,
                basis: format!(
                    "no role but its owner holds a privilege on {relation}: nothing to exercise"
                ),
                credential_digest: None,
                subject,
            };
        }
        let read = if foreign { "EXPLAIN SELECT" } else { "SELECT" };
        let mut actions = vec![("SELECT", format!("{read} FROM {relation} LIMIT 0"))];
        if writable {
            actions.push((
                "INSERT",
                format!("EXPLAIN INSERT INTO {relation} DEFAULT VALUES"),
            ));
            if let Some(column) = column {
                actions.push((
                    "UPDATE",
                    format!("EXPLAIN UPDATE {relation} SET {column} = {column} WHERE false"),
                ));
            }
            actions.push((
                "DELETE",
                format!("EXPLAIN DELETE FROM {relation} WHERE false"),
            ));
        }
        let mut permitted = Vec::new();
        let mut denied = Vec::new();
        let mut other = None;
        for role in &roles {
            for (action, statement) in &actions {
                let attempt = admin.query(&format!("BEGIN; SET LOCAL ROLE {role}; {statement}"));
                let rolled_back = admin.query("ROLLBACK");
                if let Err(e) = rolled_back {
                    return ProbeResult::unknown(format!("cannot roll the probe back: {e}"));
                }
                match attempt {
                    Ok(_) => permitted.push((role, *action)),
                    Err(e) if sqlstate(&e) == Some("42501") => denied.push((role, *action)),
                    Err(e) => {
                        other.get_or_insert_with(|| {
                            format!("SET ROLE {role}; {action} on {relation}: {}", message(&e))
                        });
                    }
                }
            }
        }
        let answer = |status, basis| ProbeResult {
            status,
            basis,
            credential_digest: None,
            subject: subject.clone(),
        };
        if let Some((role, action)) = permitted.first() {
            let more = match permitted.len() {
                1 => String::new(),
                n => format!(" (and {} more)", n - 1),
            };
            return answer(
                ProbeStatus::Effective,
                format!("SET ROLE {role}; {action} on {relation}: permitted{more}"),
            );
        }
        if denied.is_empty() {
            return ProbeResult::unknown(other.unwrap_or_else(|| "nothing was exercised".into()));
        }
        let who: Vec<&str> = roles.iter().map(String::as_str).collect();
        let what: Vec<&str> = actions
            .iter()
            .map(|(a, _)| *a)
            .filter(|a| denied.iter().any(|(_, d)| d == a))
            .collect();
        answer(
            ProbeStatus::Ineffective,
            format!(
                "SET ROLE {}; {} on {relation}: permission denied",
                who.join(", "),
                what.join(", ")
            ),
        )
    }
}

/// A row's table and key (`public.orders/1` → `public.orders`, `1`):
/// anything the observer names outside `catalog/`.
fn row_id(id: &str) -> Option<(&str, &str)> {
    if id.starts_with("catalog/") {
        return None;
    }
    id.split_once('/')
        .filter(|(table, key)| !table.is_empty() && !key.is_empty())
}

impl PostgresProbe {
    /// A row: authority when it holds a credential of the cluster, a value
    /// that is a role's name and another value of the row that opens a
    /// session as that role. A row of "keys" the cluster never consults
    /// names no role and is no authority here, whatever its table is
    /// called; a row recording a login's password is, while the password
    /// works, wherever the row has gone since.
    fn row(&self, admin: &mut Client, socket_dir: &Path, table: &str, key: &str) -> ProbeResult {
        if key.starts_with('#') {
            return ProbeResult::unknown(format!(
                "a row of {table} without a primary key: it cannot be found again to exercise"
            ));
        }
        // The key as the observer spells it: the primary key's columns as
        // text, NULL as `NULL`, joined by commas.
        let key_sql = format!(
            "SELECT c.oid::regclass::text, \
             (SELECT string_agg(format('coalesce(t.%I::text, ''NULL'')', a.attname), ', ' \
               ORDER BY array_position(i.indkey::int2[], a.attnum)) \
              FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid \
              AND a.attnum = ANY(i.indkey::int2[]) WHERE i.indrelid = c.oid AND i.indisprimary) \
             FROM pg_class c WHERE c.oid = to_regclass({})",
            literal(table)
        );
        let row = match admin.query(&key_sql) {
            Ok(rows) => rows.into_iter().next(),
            Err(e) => return ProbeResult::unknown(format!("cannot read pg_class: {e}")),
        };
        let ineffective = |basis: String| ProbeResult {
            status: ProbeStatus::Ineffective,
            basis,
            credential_digest: None,
            subject: None,
        };
        let Some([Some(relation), columns]) = row.as_deref() else {
            return ineffective(format!("no table {table}: no row to exercise"));
        };
        let Some(columns) = columns else {
            return ProbeResult::unknown(format!(
                "{relation} has no primary key: its row cannot be found again to exercise"
            ));
        };
        let values_sql = format!(
            "SELECT v.key, v.value FROM {relation} t, jsonb_each_text(to_jsonb(t)) v \
             WHERE concat_ws(',', {columns}) = {} AND v.value IS NOT NULL ORDER BY v.key",
            literal(key)
        );
        let values: Vec<(String, String)> = match admin.query(&values_sql) {
            Ok(rows) => rows
                .into_iter()
                .filter_map(|r| match r.as_slice() {
                    [Some(k), Some(v)] => Some((k.clone(), v.clone())),
                    _ => None,
                })
                .take(MAX_VALUES_PER_CALL)
                .collect(),
            Err(e) => return ProbeResult::unknown(format!("cannot read {relation}: {e}")),
        };
        if values.is_empty() {
            return ineffective(format!("no row {table}/{key}: nothing to exercise"));
        }
        let roles = match admin.query(&format!(
            "SELECT rolname FROM pg_roles WHERE NOT rolsuper AND rolname !~ '^pg_' \
             AND rolname NOT IN ({}, {}) ORDER BY rolname",
            literal(OWNER),
            literal(SERVER_ROLE)
        )) {
            Ok(rows) => rows
                .into_iter()
                .filter_map(|r| r.into_iter().next().flatten())
                .collect::<BTreeSet<String>>(),
            Err(e) => return ProbeResult::unknown(format!("cannot read pg_roles: {e}")),
        };
        let named: Vec<&(String, String)> =
            values.iter().filter(|(_, v)| roles.contains(v)).collect();
        if named.is_empty() {
            return ineffective(format!(
                "{table}/{key} names no role of the cluster: no credential in it to try"
            ));
        }
        let mut tries = 0;
        let mut refused = None;
        for (_, role) in &named {
            for (column, password) in &values {
                if password == role || tries >= MAX_TRIES {
                    continue;
                }
                tries += 1;
                match Client::connect(socket_dir, PORT, role, DATABASE, Some(password)) {
                    Ok(_) => {
                        lock(&self.worked).insert(password.clone());
                        return ProbeResult {
                            status: ProbeStatus::Effective,
                            basis: format!(
                                "{table}/{key} holds a credential: connected as {role} with its {column}"
                            ),
                            credential_digest: Some(digest(password)),
                            subject: Some(role.clone()),
                        };
                    }
                    Err(e) if sqlstate(&e) == Some("28P01") => {}
                    Err(e @ ProtocolError::Server(_)) => {
                        refused.get_or_insert_with(|| {
                            format!(
                                "the {column} of {table}/{key} is {role}'s, but the cluster refuses a session: {}",
                                message(&e)
                            )
                        });
                    }
                    Err(e) => {
                        return ProbeResult::unknown(format!("cannot try a login as {role}: {e}"));
                    }
                }
            }
        }
        let who: Vec<&str> = named.iter().map(|(_, r)| r.as_str()).collect();
        ineffective(refused.unwrap_or_else(|| {
            format!(
                "{table}/{key} names {}, but no value of it opens a session as {}",
                who.join(", "),
                if who.len() == 1 { "it" } else { "them" }
            )
        }))
    }
}

/// Every `PASSWORD '…'` literal in `text` (any case; `''` read as `'`).
fn password_literals(text: &str) -> Vec<String> {
    let lower = text.to_ascii_lowercase();
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(at) = lower[from..].find("password") {
        let start = from + at + "password".len();
        from = start;
        let rest = &text[start..];
        let trimmed = rest.trim_start();
        if trimmed.len() == rest.len() || !trimmed.starts_with('\'') {
            continue;
        }
        let mut value = String::new();
        let mut chars = trimmed[1..].chars().peekable();
        let mut closed = false;
        while let Some(c) = chars.next() {
            if c == '\'' {
                if chars.peek() == Some(&'\'') {
                    chars.next();
                    value.push('\'');
                } else {
                    closed = true;
                    break;
                }
            } else {
                value.push(c);
            }
        }
        if closed && !value.is_empty() && !out.contains(&value) {
            out.push(value);
        }
    }
    out
}

/// Candidate secrets in `text`: the pieces between quotes, spaces and JSON
/// punctuation, of a length a password has (the whole text too, when it
/// is one).
fn tokens(text: &str) -> Vec<String> {
    let plausible = |t: &str| (4..=128).contains(&t.len()) && !t.chars().any(char::is_control);
    let mut out = Vec::new();
    if plausible(text) && !text.contains(char::is_whitespace) {
        out.push(text.to_owned());
    }
    for piece in text.split(|c: char| {
        c.is_whitespace()
            || matches!(
                c,
                '"' | '\'' | ',' | ':' | '{' | '}' | '[' | ']' | '=' | ';' | '(' | ')'
            )
    }) {
        if plausible(piece) && !out.iter().any(|o| o == piece) {
            out.push(piece.to_owned());
        }
    }
    out
}

/// The identifiers `text` may name a role by: unquoted words folded to
/// lower case, as PostgreSQL folds them, and `"quoted"` ones as written.
fn identifiers(text: &str) -> BTreeSet<String> {
    let mut out: BTreeSet<String> = text
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let mut parts = text.split('"');
    parts.next();
    while let Some(inside) = parts.next() {
        if !inside.is_empty() {
            out.insert(inside.to_owned());
        }
        parts.next();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn password_literals_are_read_as_sql_reads_them() {
        assert_eq!(
            password_literals(
                "CREATE ROLE alice LOGIN PASSWORD 'it''s-4-me'; ALTER ROLE b password  'two'"
            ),
            ["it's-4-me", "two"]
        );
        assert!(password_literals("SELECT password FROM users").is_empty());
        assert!(password_literals("ALTER ROLE x PASSWORD 'unclosed").is_empty());
        assert!(password_literals("PASSWORD NULL").is_empty());
    }

    #[test]
    fn the_roles_a_text_names_are_folded_as_postgres_folds_them() {
        let words = identifiers("REVOKE SELECT ON orders FROM Alice, \"Bob\"");
        assert!(words.contains("alice"));
        assert!(words.contains("Bob"));
        assert!(words.contains("orders"));
        assert!(!words.contains("Alice"));
    }

    #[test]
    fn a_returned_password_is_a_candidate_and_literals_come_first() {
        let probe = PostgresProbe::new();
        probe.hear(1, &["{\"user\":\"carol\",\"password\":\"Xk93-ppq\"}"]);
        probe.hear(2, &["CREATE ROLE alice LOGIN PASSWORD 's3cret-a'"]);
        let candidates = probe.candidates();
        assert_eq!(candidates.first(), Some(&(2, "s3cret-a".to_owned())));
        assert!(candidates.contains(&(1, "Xk93-ppq".to_owned())));
        assert_eq!(probe.secrets(), ["s3cret-a"]);
        assert!(probe.last_words().contains("alice"));
    }

    #[test]
    fn sqlstates_are_read_from_error_lines() {
        let e = ProtocolError::Server(
            "FATAL 28P01: password authentication failed for user \"a\"".into(),
        );
        assert_eq!(sqlstate(&e), Some("28P01"));
        assert_eq!(message(&e), "password authentication failed for user \"a\"");
    }
}

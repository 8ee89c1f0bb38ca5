//! Row facts: the declared columns of every changed row, read out of band.
//!
//! The observers keep digests, never content (a table of keys must be safe
//! to put in a report). Scope, accountability and side-effect conditions
//! need a few values — a row's tenant, an audit row's tool — so a case
//! names the columns it needs, and only those are read, from a private copy
//! of the store, at the same moments the observed set snapshots it. A
//! created or updated row's facts are read after the change; a deleted
//! row's are the ones read at the moment before.
//!
//! A row's object id is rendered the way the SQLite observer renders it
//! (`table/key`, key columns joined with `,`, or the rowid), so facts and
//! effects name the same object.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

use rusqlite::types::ValueRef;
use serde_json::Value;
use witness_model::agent::case::FactsSpec;
use witness_model::agent::trace::RowFacts;
use witness_model::audit::Effect;
use witness_model::vocab::Op;
use witness_observers::sqlite::{PrivateCopy, render_key};

type Row = BTreeMap<String, Value>;
/// `(store, object)` → the row's declared facts.
type Facts = BTreeMap<(String, String), Row>;

/// Reads the declared facts, remembering the last reading.
pub struct FactsReader {
    specs: Vec<(FactsSpec, PathBuf)>,
    last: Facts,
    pub warnings: Vec<String>,
}

impl FactsReader {
    /// `specs` with each store's (jailed) path.
    pub fn new(specs: Vec<(FactsSpec, PathBuf)>) -> Self {
        Self {
            specs,
            last: Facts::new(),
            warnings: Vec::new(),
        }
    }

    /// Reads the facts now, and gives those of the rows `changes` touched:
    /// before (the last reading) and after (this one).
    pub fn moment(&mut self, changes: &[Effect]) -> Result<Vec<RowFacts>, String> {
        let now = self.read()?;
        let rows = changes
            .iter()
            .filter_map(|effect| {
                let key = (effect.store.clone(), effect.object.clone());
                let before = (effect.op != Op::Create).then(|| self.last.get(&key).cloned());
                let after = (effect.op != Op::Delete).then(|| now.get(&key).cloned());
                let (before, after) = (before.flatten(), after.flatten());
                (before.is_some() || after.is_some()).then(|| RowFacts {
                    store: effect.store.clone(),
                    object: effect.object.clone(),
                    before,
                    after,
                })
            })
            .collect();
        self.last = now;
        Ok(rows)
    }

    /// Every declared table, each store read from one private copy.
    fn read(&mut self) -> Result<Facts, String> {
        let mut facts = Facts::new();
        let mut stores: BTreeMap<&PathBuf, Vec<&FactsSpec>> = BTreeMap::new();
        for (spec, path) in &self.specs {
            stores.entry(path).or_default().push(spec);
        }
        for (path, specs) in stores {
            let store = specs.first().map_or("", |s| s.store.as_str());
            let copy = PrivateCopy::open(path).map_err(|e| format!("store {store}: {e}"))?;
            let Some(copy) = copy else { continue };
            for spec in specs {
                match read_table(copy.conn(), spec) {
                    Ok(rows) => {
                        for (object, row) in rows {
                            facts.insert((spec.store.clone(), object), row);
                        }
                    }
                    Err(e) => {
                        let warning =
                            format!("facts of {}.{} not read: {e}", spec.store, spec.table);
                        if !self.warnings.contains(&warning) {
                            self.warnings.push(warning);
                        }
                    }
                }
            }
        }
        Ok(facts)
    }
}

/// `(object id, facts)` for every row of one table.
fn read_table(
    conn: &rusqlite::Connection,
    spec: &FactsSpec,
) -> rusqlite::Result<Vec<(String, Row)>> {
    let mut key: Vec<(i64, String)> = Vec::new();
    let mut present = Vec::new();
    {
        let mut stmt = conn.prepare("SELECT name, pk FROM pragma_table_info(?1, 'main')")?;
        let mut rows = stmt.query([&spec.table])?;
        while let Some(row) = rows.next()? {
            let name: String = row.get(0)?;
            let rank: i64 = row.get(1)?;
            if rank > 0 {
                key.push((rank, name.clone()));
            }
            present.push(name);
        }
    }
    key.sort();
    let mut key: Vec<String> = key.into_iter().map(|(_, name)| name).collect();
    if key.is_empty() {
        key.push("rowid".into());
    }
    let columns: Vec<&String> = spec
        .columns
        .iter()
        .filter(|c| present.iter().any(|p| p.eq_ignore_ascii_case(c)))
        .collect();
    let mut select = String::from("SELECT ");
    for (i, column) in key.iter().chain(columns.iter().copied()).enumerate() {
        if i > 0 {
            select.push_str(", ");
        }
        let _ = write!(select, "\"{}\"", column.replace('"', "\"\""));
    }
    let _ = write!(select, " FROM \"{}\"", spec.table.replace('"', "\"\""));
    let mut stmt = conn.prepare(&select)?;
    let mut rows = stmt.query([])?;
    let mut out = Vec::new();
    while let Some(row) = rows.next()? {
        let mut id = spec.table.clone();
        id.push('/');
        for i in 0..key.len() {
            if i > 0 {
                id.push(',');
            }
            id.push_str(&render_key(row.get_ref(i)?));
        }
        let mut facts = Row::new();
        for (j, column) in columns.iter().enumerate() {
            facts.insert((*column).clone(), json_of(row.get_ref(key.len() + j)?));
        }
        out.push((id, facts));
    }
    Ok(out)
}

fn json_of(value: ValueRef<'_>) -> Value {
    match value {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::from(i),
        ValueRef::Real(r) => Value::from(r),
        ValueRef::Text(bytes) => Value::String(String::from_utf8_lossy(bytes).into_owned()),
        ValueRef::Blob(_) => Value::String(render_key(value)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use witness_observers::{diff, sqlite::SqliteObserver};

    /// The observer's changes as effects of store `db`.
    fn effects_between(
        before: &witness_observers::Snapshot,
        after: &witness_observers::Snapshot,
    ) -> Vec<Effect> {
        diff(before, after)
            .changes
            .iter()
            .map(|c| Effect {
                store: "db".into(),
                object: c.object.clone(),
                op: c.op,
                overwrite: c.overwrite,
                before: None,
                after: None,
            })
            .collect()
    }

    #[test]
    fn facts_name_rows_as_the_observer_does_and_follow_each_change() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("db.sqlite");
        let conn = rusqlite::Connection::open(&path).expect("db");
        conn.execute_batch(
            "CREATE TABLE contacts(id TEXT PRIMARY KEY, tenant_id TEXT, secret TEXT);
             CREATE TABLE log(n INTEGER PRIMARY KEY, tool TEXT);
             CREATE TABLE pairs(a TEXT, b INTEGER, v TEXT, PRIMARY KEY (a, b));
             INSERT INTO contacts VALUES ('c_1', 'acme', 's1'), ('c_2', 'globex', 's2');
             INSERT INTO pairs VALUES ('x', 1, 'v');",
        )
        .expect("seed");
        let spec = |table: &str, columns: &[&str]| FactsSpec {
            store: "db".into(),
            table: table.into(),
            columns: columns.iter().map(|c| (*c).to_owned()).collect(),
        };
        let mut reader = FactsReader::new(vec![
            (spec("contacts", &["tenant_id", "nope"]), path.clone()),
            (spec("log", &["tool"]), path.clone()),
            (spec("pairs", &["v"]), path.clone()),
            (spec("missing", &["x"]), path.clone()),
        ]);
        let mut observer = SqliteObserver::new(&path);
        let before = observer.snapshot().expect("snapshot");
        assert!(reader.moment(&[]).is_ok());
        conn.execute_batch(
            "DELETE FROM contacts WHERE id = 'c_1';
             UPDATE contacts SET tenant_id = 'acme' WHERE id = 'c_2';
             INSERT INTO log(tool) VALUES ('delete_contact');
             UPDATE pairs SET v = 'w';",
        )
        .expect("change");
        let after = observer.snapshot().expect("snapshot");
        let effects = effects_between(&before, &after);
        let objects: Vec<&str> = effects.iter().map(|e| e.object.as_str()).collect();
        assert_eq!(
            objects,
            ["contacts/c_1", "contacts/c_2", "log/1", "pairs/x,1"]
        );
        let Ok(rows) = reader.moment(&effects) else {
            panic!("facts read");
        };
        assert_eq!(rows.len(), 4);
        let deleted = &rows[0];
        let tenant = |row: &Option<Row>| row.as_ref().map(|r| r["tenant_id"].clone());
        assert_eq!(tenant(&deleted.before), Some("acme".into()));
        assert!(deleted.after.is_none());
        let moved = &rows[1];
        assert_eq!(tenant(&moved.before), Some("globex".into()));
        assert_eq!(tenant(&moved.after), Some("acme".into()));
        assert!(
            moved
                .after
                .as_ref()
                .is_some_and(|r| !r.contains_key("secret")),
            "only declared columns"
        );
        assert_eq!(
            rows[2].after.as_ref().map(|r| r["tool"].clone()),
            Some("delete_contact".into())
        );
        assert!(rows[2].before.is_none());
        assert_eq!(
            rows[3].after.as_ref().map(|r| r["v"].clone()),
            Some("w".into())
        );
        assert_eq!(reader.warnings.len(), 1, "{:?}", reader.warnings);
        assert!(reader.warnings[0].starts_with("facts of db.missing not read"));
    }
}

//! Row facts: the declared columns of the rows an observation saw change.
//!
//! Digests say *that* a row changed, never what it holds (a table of keys
//! must be safe to put in a report). Some checks need a few values of a
//! changed row all the same — its tenant, an audit row's tool — so a store
//! may declare, per table, the columns to read ([`FactsSpec`]). They are
//! read from the very images the change was seen between: a created or
//! updated row's facts from the current image, a deleted or updated row's
//! from the previous one. Rows are named exactly as the observation names
//! them (the same table plan, key rendering and `#n` suffixes), so a fact
//! and its effect always name the same object.
//!
//! Only tables with a changed row are read, and only the declared columns
//! of them are kept. A table that cannot be read is a warning, never a
//! failed observation: the facts are evidence beside the changes, not the
//! changes themselves.

use std::collections::{BTreeMap, BTreeSet};

use rusqlite::Connection;
use rusqlite::types::ValueRef;
use serde_json::Value;
use witness_model::agent::case::FactsSpec;

use super::rows::{insert_unique, plan_table, render_key, row_id};
use crate::{Change, ChangedRow, Op};

type Facts = BTreeMap<String, Value>;

/// The facts of every change in `changes` that is a row of a declared
/// table, in the order of the changes: `before` from `old` (the previous
/// image; `None` when there was none), `after` from `new` (the current
/// one; `None` when the store went away). A change whose row has no facts
/// on either side is left out. What could not be read is added to
/// `warnings`.
pub(super) fn changed_rows(
    specs: &[FactsSpec],
    changes: &[Change],
    old: Option<&Connection>,
    new: Option<&Connection>,
    warnings: &mut Vec<String>,
) -> Vec<ChangedRow> {
    let mut before = BTreeMap::new();
    let mut after = BTreeMap::new();
    for spec in specs {
        let prefix = format!("{}/", spec.table);
        let of_table = || changes.iter().filter(|c| c.object.starts_with(&prefix));
        let had: BTreeSet<&str> = of_table()
            .filter(|c| c.op != Op::Create)
            .map(|c| c.object.as_str())
            .collect();
        let has: BTreeSet<&str> = of_table()
            .filter(|c| c.op != Op::Delete)
            .map(|c| c.object.as_str())
            .collect();
        for (conn, wanted, into) in [(old, &had, &mut before), (new, &has, &mut after)] {
            let Some(conn) = conn.filter(|_| !wanted.is_empty()) else {
                continue;
            };
            match read(conn, spec, wanted) {
                // Two declarations of one table: the later one's facts, as
                // a reader going through them in order would keep.
                Ok(rows) => into.extend(rows),
                Err(reason) => {
                    let warning = not_read(&spec.table, &reason);
                    if !warnings.contains(&warning) {
                        warnings.push(warning);
                    }
                }
            }
        }
    }
    changes
        .iter()
        .filter_map(|change| {
            let before = match change.op {
                Op::Create => None,
                _ => before.get(&change.object).cloned(),
            };
            let after = match change.op {
                Op::Delete => None,
                _ => after.get(&change.object).cloned(),
            };
            (before.is_some() || after.is_some()).then(|| ChangedRow {
                object: change.object.clone(),
                before,
                after,
            })
        })
        .collect()
}

/// A warning for every declared table the image does not hold: a
/// declaration that can never be read (a misspelt table) is said, not
/// silently empty. `holds` is whether the image has a table of that name.
pub(super) fn missing_tables(
    specs: &[FactsSpec],
    holds: impl Fn(&str) -> bool,
    warnings: &mut Vec<String>,
) {
    for spec in specs {
        let warning = not_read(&spec.table, "no such table");
        if !holds(&spec.table) && !warnings.contains(&warning) {
            warnings.push(warning);
        }
    }
}

fn not_read(table: &str, reason: &str) -> String {
    format!("facts of table {table:?} not read: {reason}")
}

/// `(object id, facts)` of the rows of `spec.table` named in `wanted`.
fn read(
    conn: &Connection,
    spec: &FactsSpec,
    wanted: &BTreeSet<&str>,
) -> Result<BTreeMap<String, Facts>, String> {
    let mut plan = plan_table(conn, &spec.table, &[])?;
    // Rows are named by the declared table name, as the change names them.
    plan.name.clone_from(&spec.table);
    // Declared columns the table has (SQLite compares names without regard
    // to ASCII case), each kept under the name the declaration gives it.
    let columns: Vec<(&String, usize)> = spec
        .columns
        .iter()
        .filter_map(|c| {
            let index = plan
                .columns
                .iter()
                .position(|p| p.eq_ignore_ascii_case(c))?;
            Some((c, index))
        })
        .collect();
    let text = |e: rusqlite::Error| e.to_string();
    let mut stmt = conn.prepare(&plan.select).map_err(text)?;
    let mut rows = stmt.query([]).map_err(text)?;
    // Every id of the table, so that one rendering like an earlier row gets
    // the suffix the observation gave it.
    let mut named: BTreeMap<String, Option<Facts>> = BTreeMap::new();
    while let Some(row) = rows.next().map_err(text)? {
        let id = row_id(&plan, row).map_err(text)?;
        let facts = if wanted.contains(id.as_str()) || named.contains_key(&id) {
            let mut facts = Facts::new();
            for &(column, index) in &columns {
                facts.insert(column.clone(), json_of(row.get_ref(index).map_err(text)?));
            }
            Some(facts)
        } else {
            None
        };
        insert_unique(&mut named, id, facts);
    }
    Ok(named
        .into_iter()
        .filter(|(id, _)| wanted.contains(id.as_str()))
        .filter_map(|(id, facts)| Some((id, facts?)))
        .collect())
}

/// A value as JSON: numbers and text as themselves, a blob in hex (as a
/// key renders), NULL as null.
fn json_of(value: ValueRef<'_>) -> Value {
    match value {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::from(i),
        ValueRef::Real(r) => Value::from(r),
        ValueRef::Text(bytes) => Value::String(String::from_utf8_lossy(bytes).into_owned()),
        ValueRef::Blob(_) => Value::String(render_key(value)),
    }
}

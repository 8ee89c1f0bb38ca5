//! Row-shaped arguments: a free-form object of column values (`data`,
//! `values`, `record`) or of conditions naming rows (`conditions`, `where`,
//! `filter`) of a tool that works on a table of a declared store.
//!
//! A schema that says only `"type": "object"` leaves the planner an empty
//! object, which a CRUD tool turns into `INSERT INTO t () VALUES ()` and an
//! error: the tool is never exercised and a lie in its declaration never
//! shows. A user would fill in the table's columns, and so does the planner,
//! from the columns the store's schema declares (never a row's value): the
//! columns a row must give for a write, one plain column for an update, the
//! key of a row the store held for conditions.

use serde_json::{Map, Value};
use witness_observers::{ColumnShape, TableShape};

use super::cues::{ToolCues, words};
use super::harvest::Pool;
use super::sql::value_for;

/// Parameter names (lowercased, `_` and `-` removed) that carry a row's
/// column values.
const VALUE_PARAMS: [&str; 10] = [
    "data", "values", "record", "row", "fields", "item", "document", "updates", "changes", "set",
];

/// Parameter names that carry the conditions naming the rows to act on.
const CONDITION_PARAMS: [&str; 7] = [
    "conditions",
    "condition",
    "where",
    "filter",
    "filters",
    "criteria",
    "match",
];

/// Parameter names that name the table.
const TABLE_PARAMS: [&str; 4] = ["table", "tablename", "tbl", "collection"];

/// Words of a tool name that say it changes rows that exist.
const UPDATE_WORDS: [&str; 6] = ["update", "modify", "edit", "patch", "change", "set"];

fn flat(key: &str) -> String {
    key.chars()
        .filter(|c| *c != '_' && *c != '-')
        .collect::<String>()
        .to_ascii_lowercase()
}

/// Whether a parameter names the table a tool works on.
pub fn is_table_param(key: &str) -> bool {
    TABLE_PARAMS.contains(&flat(key).as_str())
}

/// The table a step's arguments name, when a declared store holds it.
pub fn table_named<'p>(arguments: &Map<String, Value>, pool: &'p Pool) -> Option<&'p TableShape> {
    arguments.iter().find_map(|(key, value)| {
        let table = value.as_str()?;
        is_table_param(key).then(|| pool.shape_of(table)).flatten()
    })
}

/// The object to send for parameter `key` of the tool `cues` describes, on
/// `table`; `None` when the parameter is not row-shaped or the table gives
/// nothing to put in it.
pub fn row_object(cues: &ToolCues, key: &str, table: &TableShape, pool: &Pool) -> Option<Value> {
    let flat = flat(key);
    let updates = words(&cues.tool)
        .iter()
        .any(|w| UPDATE_WORDS.contains(&w.as_str()));
    let mut object = Map::new();
    if VALUE_PARAMS.contains(&flat.as_str()) {
        let plain = |c: &&ColumnShape| !c.key && !c.rowid;
        let chosen: Vec<&ColumnShape> = if updates {
            // One column, text first: a change every reader can see.
            let text = table
                .columns
                .iter()
                .filter(plain)
                .find(|c| value_for(c, &cues.tool).is_string());
            text.or_else(|| table.columns.iter().find(plain))
                .into_iter()
                .collect()
        } else {
            let required: Vec<&ColumnShape> = table.columns.iter().filter(|c| c.required).collect();
            if required.is_empty() {
                table.columns.iter().find(plain).into_iter().collect()
            } else {
                required
            }
        };
        for column in chosen {
            object.insert(column.name.clone(), value_for(column, &cues.tool));
        }
    } else if CONDITION_PARAMS.contains(&flat.as_str()) {
        let key_column = table.columns.iter().find(|c| c.key)?;
        let number = value_for(key_column, &cues.tool).is_number();
        let row = pool
            .row_key_of(&table.table, number)
            .or_else(|| pool.row_key_of(&table.table, !number))?;
        object.insert(key_column.name.clone(), row.value.clone());
    } else {
        return None;
    }
    (!object.is_empty()).then_some(Value::Object(object))
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;
    use witness_model::audit::StoreObject;

    use super::*;
    use crate::plan::harvest::Harvested;

    fn shop() -> (Pool, TableShape) {
        let column = |name: &str, ty: &str, required, key| ColumnShape {
            name: name.into(),
            declared_type: ty.into(),
            required,
            key,
            rowid: key,
        };
        let orders = TableShape {
            table: "orders".into(),
            columns: vec![
                column("id", "INTEGER", false, true),
                column("customer_id", "INTEGER", true, false),
                column("status", "TEXT", false, false),
            ],
        };
        let mut pool = Pool::default();
        let at = |object: &str| StoreObject {
            store: "db".into(),
            object: object.into(),
        };
        pool.seed(
            vec![
                Harvested::seeded("id", json!(1), at("orders/1"), Some("orders")),
                Harvested::seeded("id", json!(3), at("orders/3"), Some("orders")),
            ],
            Vec::new(),
        );
        pool.seed_tables(vec![orders.clone()]);
        (pool, orders)
    }

    fn cues(tool: &str) -> ToolCues {
        ToolCues {
            tool: tool.into(),
            ..ToolCues::default()
        }
    }

    #[test]
    fn a_write_gives_the_required_columns_an_update_one_column_conditions_a_real_key() {
        let (pool, orders) = shop();
        let arguments = json!({"table": "orders", "data": {}});
        let table = table_named(arguments.as_object().expect("object"), &pool);
        assert_eq!(table, Some(&orders));
        assert_eq!(
            row_object(&cues("create_record"), "data", &orders, &pool),
            Some(json!({"customer_id": 1}))
        );
        assert_eq!(
            row_object(&cues("update_records"), "data", &orders, &pool),
            Some(json!({"status": "witness-update_records"}))
        );
        assert_eq!(
            row_object(&cues("delete_records"), "conditions", &orders, &pool),
            Some(json!({"id": 3}))
        );
        assert_eq!(
            row_object(&cues("delete_records"), "reason", &orders, &pool),
            None
        );
        let unknown = json!({"table": "ghosts"});
        assert_eq!(
            table_named(unknown.as_object().expect("object"), &pool),
            None
        );
    }
}

//! SQL for a tool that takes a statement: the plainest statement of the
//! kind the tool runs, on a table that exists.
//!
//! A statement is invented (its provenance is `synthesized`), but the table
//! it names is real: one the plan itself created when there is one, so the
//! store's own tables keep their rows for the reads, else one the store held.

use super::cues::SqlKind;
use super::harvest::{Harvested, Pool, Source};
use super::synth::fresh_name;
use serde_json::Value;
use witness_observers::ColumnShape;

/// The table a fresh `CREATE TABLE` of tool `tool` makes.
pub fn fresh_table(tool: &str) -> String {
    fresh_name(tool)
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

/// What a statement makes if it succeeds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Made {
    /// A table (`CREATE TABLE`), offered to later statements as the plan's.
    Table(String),
    /// A row in this table (`INSERT`), the one a later delete form removes.
    Row(String),
}

/// The key under which the plan remembers the table its insert went into.
pub const INSERTED_INTO: &str = "inserted_into_table";

/// The key under which the plan remembers the row its insert made, as the
/// store's observer named it (`orders/4` → `4`).
pub const INSERTED_ROW: &str = "inserted_row";

/// The statement for `kind`, written for tool `tool` against the tables in
/// `pool`; and what it makes.
pub fn statement(kind: SqlKind, tool: &str, pool: &Pool) -> (String, Option<Made>) {
    let made = pool.newest_table(|h| h.source == Source::Plan);
    let held = pool.newest_table(|h| matches!(h.source, Source::Store(_)));
    match kind {
        SqlKind::CreateTable => {
            let table = fresh_table(tool);
            (
                format!(
                    "CREATE TABLE {} (id INTEGER PRIMARY KEY, note TEXT)",
                    quote(&table)
                ),
                Some(Made::Table(table)),
            )
        }
        SqlKind::Select => match held.or(made) {
            Some(table) => (format!("SELECT * FROM {} LIMIT 5", quote(&table)), None),
            None => ("SELECT 1".to_owned(), None),
        },
        SqlKind::Insert => match made.or(held) {
            Some(table) => (insert_into(&table, tool, pool), Some(Made::Row(table))),
            // No table is known (a database no observer lists, such as
            // DuckDB's): the write form makes one of the plan's own.
            // One row in it, so the delete form has the plan's own to remove.
            None => {
                let table = fresh_table(tool);
                (
                    format!("CREATE TABLE {} AS SELECT 1 AS id", quote(&table)),
                    Some(Made::Table(table)),
                )
            }
        },
        // Only ever the row the plan's own insert made (the newest one of
        // the table it went into), never a row the store held; with no
        // such row but a table the plan made, that table's rows (the table
        // stays: a confirmation writes into it again).
        SqlKind::Delete => match (pool.newest_of(INSERTED_INTO), made) {
            // The very row the insert was seen to make: a second delete
            // (a confirmation) then removes nothing, never the store's own.
            (Some(table), _) => match pool.inserted_row() {
                Some(row) => (
                    format!(
                        "DELETE FROM {} WHERE {}",
                        quote(&table),
                        row_condition(&table, &row, pool)
                    ),
                    None,
                ),
                None => {
                    // The newest row by the table's own key where it has
                    // one (a PostgreSQL table has no rowid), else SQLite's.
                    let key =
                        sole_key(&table, pool).map_or_else(|| "rowid".to_owned(), |k| quote(&k));
                    (
                        format!(
                            "DELETE FROM {0} WHERE {1} IN (SELECT max({1}) FROM {0})",
                            quote(&table),
                            key
                        ),
                        None,
                    )
                }
            },
            (None, Some(table)) => (format!("DELETE FROM {}", quote(&table)), None),
            (None, None) => ("SELECT 1".to_owned(), None),
        },
        SqlKind::AlterTable => match made.or(held) {
            Some(table) => (
                format!(
                    "ALTER TABLE {} ADD COLUMN {} TEXT",
                    quote(&table),
                    quote(&fresh_table(tool))
                ),
                None,
            ),
            None => ("SELECT 1".to_owned(), None),
        },
        // Only ever a table the plan made: dropping the store's own would
        // take away what every later read was to read.
        SqlKind::DropTable => match made {
            Some(table) => (format!("DROP TABLE {}", quote(&table)), None),
            None => ("SELECT 1".to_owned(), None),
        },
    }
}

/// An insert of one row into `table`: every column its schema says a row
/// must give (`NOT NULL` with no default) gets a plain value of its declared
/// type; a table that needs none gets `DEFAULT VALUES`.
fn insert_into(table: &str, tool: &str, pool: &Pool) -> String {
    let required: Vec<&ColumnShape> = pool
        .shape_of(table)
        .map(|t| t.columns.iter().filter(|c| c.required).collect())
        .unwrap_or_default();
    if required.is_empty() {
        return format!("INSERT INTO {} DEFAULT VALUES", quote(table));
    }
    let names: Vec<String> = required.iter().map(|c| quote(&c.name)).collect();
    let values: Vec<String> = required
        .iter()
        .map(|c| match value_for(c, tool) {
            Value::String(text) => format!("'{}'", text.replace('\'', "''")),
            other => other.to_string(),
        })
        .collect();
    format!(
        "INSERT INTO {} ({}) VALUES ({})",
        quote(table),
        names.join(", "),
        values.join(", ")
    )
}

/// A plain value a column of this declared type takes, by SQLite's affinity
/// rules: a number for an integer, real or numeric column, the tool's own
/// fresh name for text (and for a column of no type).
pub fn value_for(column: &ColumnShape, tool: &str) -> Value {
    let declared = column.declared_type.to_ascii_uppercase();
    let has = |w: &str| declared.contains(w);
    if has("BOOL") {
        Value::Bool(true)
    } else if has("DATE") || has("TIME") {
        Value::String("2026-01-01".into())
    } else if has("UUID") {
        Value::String("00000000-0000-4000-8000-000000000001".into())
    } else if has("INT") && column.key {
        // A new row's own key, which the store assigns no value for: one
        // its rows are unlikely to hold.
        Value::from(9001)
    } else if has("INT") {
        Value::from(1)
    } else if has("CHAR") || has("CLOB") || has("TEXT") || has("BLOB") || declared.is_empty() {
        Value::String(fresh_name(tool))
    } else if has("REAL") || has("FLOA") || has("DOUB") {
        Value::from(1.5)
    } else {
        Value::from(1)
    }
}

/// The condition that names one row by the key its observer gave it: the
/// table's declared key column (the rowid when it has none, or its key is
/// the rowid).
fn row_condition(table: &str, key: &str, pool: &Pool) -> String {
    let column = sole_key(table, pool).map(|name| quote(&name));
    let numeric = !key.is_empty() && key.chars().all(|c| c.is_ascii_digit());
    let literal = if numeric {
        key.to_owned()
    } else {
        format!("'{}'", key.replace('\'', "''"))
    };
    format!(
        "{} = {literal}",
        column.unwrap_or_else(|| "rowid".to_owned())
    )
}

/// The table's one declared key column, when it has exactly one and it is
/// not SQLite's rowid under another name.
fn sole_key(table: &str, pool: &Pool) -> Option<String> {
    pool.shape_of(table).and_then(|t| {
        let keys: Vec<&ColumnShape> = t.columns.iter().filter(|c| c.key).collect();
        match keys[..] {
            [only] if !only.rowid => Some(only.name.clone()),
            _ => None,
        }
    })
}

impl Pool {
    /// The row the newest insert of the plan made, when the same call's
    /// effects named it.
    fn inserted_row(&self) -> Option<String> {
        let into = self
            .items()
            .rev()
            .find(|h| h.key == INSERTED_INTO && h.source == Source::Plan)?;
        self.items()
            .rev()
            .find(|h| h.key == INSERTED_ROW && h.source == Source::Plan && h.step == into.step)
            .and_then(|h| h.value.as_str())
            .map(str::to_owned)
    }

    /// The newest value the plan made under `key`.
    fn newest_of(&self, key: &str) -> Option<String> {
        self.items()
            .rev()
            .find(|h| h.key == key && h.source == Source::Plan)
            .and_then(|h| h.value.as_str())
            .map(str::to_owned)
    }

    /// The newest table name among the values `keep` accepts.
    fn newest_table(&self, keep: impl Fn(&Harvested) -> bool) -> Option<String> {
        self.items()
            .rev()
            .find(|h| h.key == "table_name" && keep(h))
            .and_then(|h| h.value.as_str())
            .map(str::to_owned)
    }
}

/// A SQL identifier in double quotes, inner quotes doubled.
fn quote(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// What a statement asks, by its first keyword: a read (`SELECT`, `WITH`,
/// `PRAGMA`, `EXPLAIN`, `SHOW`, `DESCRIBE`), a creation (`INSERT`,
/// `CREATE`), or a change of what exists (`UPDATE`, `DELETE`, `ALTER`,
/// `DROP`, `REPLACE`, `TRUNCATE`, and anything else, which a reader would
/// not send).
pub fn form_of(statement: &str) -> witness_model::audit::CallForm {
    use witness_model::audit::CallForm;
    let first: String = statement
        .trim_start()
        .chars()
        .take_while(char::is_ascii_alphabetic)
        .collect::<String>()
        .to_ascii_uppercase();
    match first.as_str() {
        "" | "SELECT" | "WITH" | "PRAGMA" | "EXPLAIN" | "SHOW" | "DESCRIBE" | "VALUES" => {
            CallForm::Read
        }
        "INSERT" | "CREATE" => CallForm::Create,
        _ => CallForm::Change,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use witness_model::audit::StoreObject;

    use super::*;

    #[test]
    fn a_column_gets_a_value_of_its_declared_type() {
        let column = |ty: &str, key: bool| ColumnShape {
            name: "c".into(),
            declared_type: ty.into(),
            required: true,
            key,
            rowid: false,
        };
        assert_eq!(value_for(&column("integer", false), "t"), json!(1));
        assert_eq!(
            value_for(&column("integer", true), "t"),
            json!(9001),
            "a new key"
        );
        assert_eq!(value_for(&column("boolean", false), "t"), json!(true));
        assert_eq!(
            value_for(&column("timestamp with time zone", false), "t"),
            json!("2026-01-01")
        );
        assert_eq!(
            value_for(&column("character varying(40)", false), "t"),
            json!("witness-t")
        );
        assert_eq!(value_for(&column("numeric(10,2)", false), "t"), json!(1));
    }

    #[test]
    fn a_statements_form_is_its_first_keyword() {
        use witness_model::audit::CallForm;
        for (statement, form) in [
            ("SELECT 1", CallForm::Read),
            ("  with t as (select 1) select * from t", CallForm::Read),
            ("INSERT INTO \"orders\" DEFAULT VALUES", CallForm::Create),
            ("CREATE TABLE t (id INTEGER)", CallForm::Create),
            ("DELETE FROM t WHERE rowid = 4", CallForm::Change),
            ("update t set a = 1", CallForm::Change),
            ("DROP TABLE t", CallForm::Change),
            ("", CallForm::Read),
        ] {
            assert_eq!(form_of(statement), form, "{statement}");
        }
    }

    fn held(table: &str) -> Harvested {
        Harvested::seeded(
            "table_name",
            json!(table),
            StoreObject {
                store: "db".into(),
                object: format!("sqlite_master/table:{table}"),
            },
            Some("tables"),
        )
    }

    #[test]
    fn with_no_known_table_the_write_form_makes_one_and_the_delete_form_empties_it() {
        let mut pool = Pool::default();
        let (insert, made) = statement(SqlKind::Insert, "query", &pool);
        assert_eq!(insert, "CREATE TABLE \"witness_query\" AS SELECT 1 AS id");
        assert_eq!(made, Some(Made::Table("witness_query".into())));
        assert_eq!(statement(SqlKind::Delete, "query", &pool).0, "SELECT 1");
        pool.created("query", 2, "table_name", &json!("witness_query"), None);
        assert_eq!(
            statement(SqlKind::Delete, "query", &pool).0,
            "DELETE FROM \"witness_query\""
        );
    }

    #[test]
    fn an_insert_names_every_column_a_row_must_give_with_a_value_of_its_type() {
        let mut pool = Pool::default();
        pool.seed(vec![held("orders")], Vec::new());
        let column = |name: &str, ty: &str, required, rowid| ColumnShape {
            name: name.into(),
            declared_type: ty.into(),
            required,
            key: rowid,
            rowid,
        };
        pool.seed_tables(vec![witness_observers::TableShape {
            table: "orders".into(),
            columns: vec![
                column("id", "INTEGER", false, true),
                column("customer_id", "INTEGER", true, false),
                column("total", "REAL", true, false),
                column("status", "varchar(10)", true, false),
                column("note", "TEXT", false, false),
            ],
        }]);
        assert_eq!(
            statement(SqlKind::Insert, "write_query", &pool).0,
            "INSERT INTO \"orders\" (\"customer_id\", \"total\", \"status\") \
             VALUES (1, 1.5, 'witness-write_query')"
        );
    }

    #[test]
    fn a_delete_removes_the_very_row_the_plans_insert_was_seen_to_make() {
        let mut pool = Pool::default();
        pool.seed(vec![held("orders")], Vec::new());
        pool.created("write_query", 3, INSERTED_INTO, &json!("orders"), None);
        // Before the row is known (no effect named it): the newest row.
        assert_eq!(
            statement(SqlKind::Delete, "write_query", &pool).0,
            "DELETE FROM \"orders\" WHERE rowid IN (SELECT max(rowid) FROM \"orders\")"
        );
        // A row an older insert made is not this insert's.
        pool.created("write_query", 2, INSERTED_ROW, &json!("3"), None);
        assert!(
            statement(SqlKind::Delete, "write_query", &pool)
                .0
                .contains("max(rowid)")
        );
        pool.created("write_query", 3, INSERTED_ROW, &json!("4"), None);
        assert_eq!(
            statement(SqlKind::Delete, "write_query", &pool).0,
            "DELETE FROM \"orders\" WHERE rowid = 4"
        );
        // A table keyed by a text column is named by it.
        pool.seed_tables(vec![witness_observers::TableShape {
            table: "orders".into(),
            columns: vec![ColumnShape {
                name: "code".into(),
                declared_type: "TEXT".into(),
                required: true,
                key: true,
                rowid: false,
            }],
        }]);
        pool.created("write_query", 3, INSERTED_ROW, &json!("o'4"), None);
        assert_eq!(
            statement(SqlKind::Delete, "write_query", &pool).0,
            "DELETE FROM \"orders\" WHERE \"code\" = 'o''4'"
        );
        // Before that row is known, the newest row by that key: a
        // PostgreSQL table has no rowid.
        pool.created("write_query", 4, INSERTED_INTO, &json!("orders"), None);
        assert_eq!(
            statement(SqlKind::Delete, "write_query", &pool).0,
            "DELETE FROM \"orders\" WHERE \"code\" IN (SELECT max(\"code\") FROM \"orders\")"
        );
    }

    #[test]
    fn reads_use_the_stores_tables_and_writes_the_plans_own() {
        let mut pool = Pool::default();
        assert_eq!(
            statement(SqlKind::Select, "read_query", &pool).0,
            "SELECT 1"
        );
        pool.seed(vec![held("customers")], Vec::new());
        let (create, made) = statement(SqlKind::CreateTable, "create_table", &pool);
        assert_eq!(
            create,
            "CREATE TABLE \"witness_create_table\" (id INTEGER PRIMARY KEY, note TEXT)"
        );
        assert_eq!(made, Some(Made::Table("witness_create_table".into())));
        assert_eq!(
            statement(SqlKind::Insert, "write_query", &pool).0,
            "INSERT INTO \"customers\" DEFAULT VALUES",
            "no table of the plan's yet"
        );
        assert_eq!(
            statement(SqlKind::DropTable, "run", &pool).0,
            "SELECT 1",
            "never the store's own"
        );
        pool.created(
            "create_table",
            3,
            "table_name",
            &json!("witness_create_table"),
            None,
        );
        assert_eq!(
            statement(SqlKind::Select, "read_query", &pool).0,
            "SELECT * FROM \"customers\" LIMIT 5"
        );
        assert_eq!(
            statement(SqlKind::Insert, "write_query", &pool).0,
            "INSERT INTO \"witness_create_table\" DEFAULT VALUES"
        );
        assert_eq!(
            statement(SqlKind::AlterTable, "alter_table", &pool).0,
            "ALTER TABLE \"witness_create_table\" ADD COLUMN \"witness_alter_table\" TEXT"
        );
        assert_eq!(
            statement(SqlKind::DropTable, "run", &pool).0,
            "DROP TABLE \"witness_create_table\""
        );
    }
}

//! Rows as the observer digests them: the canonical value encoding, table
//! plans (which columns, which key), and reading rows through SQLite, whole
//! tables or rowid ranges, always with the same code, so an incremental
//! observation reports exactly the digests a full read would.

use std::collections::BTreeMap;
use std::collections::btree_map::Entry;
use std::fmt::Write as _;

use rusqlite::Connection;
use rusqlite::types::ValueRef;

use crate::{ObjectState, Snapshot};

/// A column the server fills from the clock, named as `table.column`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClockColumn {
    pub table: String,
    pub column: String,
}

impl ClockColumn {
    /// Parses `table.column` (split at the last `.`, so a table name may hold
    /// one; a column name may not).
    pub fn parse(text: &str) -> Option<Self> {
        let (table, column) = text.rsplit_once('.')?;
        (!table.is_empty() && !column.is_empty()).then(|| Self {
            table: table.to_owned(),
            column: column.to_owned(),
        })
    }

    /// SQLite compares identifiers without regard to ASCII case.
    pub(super) fn names(&self, table: &str, column: &str) -> bool {
        self.table.eq_ignore_ascii_case(table) && self.column.eq_ignore_ascii_case(column)
    }
}

impl std::fmt::Display for ClockColumn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.table, self.column)
    }
}

/// The length of the date or time text at the start of `bytes`, in the forms
/// SQLite's date and time functions write: `YYYY-MM-DD` (`CURRENT_DATE`),
/// `HH:MM` or `HH:MM:SS` (`CURRENT_TIME`), the two joined by a space
/// (`CURRENT_TIMESTAMP`, `datetime('now')`) or a `T`, with optional
/// fractional seconds and a trailing `Z` (as ISO 8601 writers add).
pub fn clock_text_len(bytes: &[u8]) -> Option<usize> {
    let date = digits(bytes, 0, 4)
        && bytes.get(4) == Some(&b'-')
        && digits(bytes, 5, 2)
        && bytes.get(7) == Some(&b'-')
        && digits(bytes, 8, 2);
    let mut end = if date {
        match bytes.get(10) {
            Some(b' ' | b'T') => time_end(bytes, 11).unwrap_or(10),
            _ => 10,
        }
    } else {
        time_end(bytes, 0)?
    };
    if end > 10 && bytes.get(end) == Some(&b'Z') {
        end += 1;
    }
    Some(end)
}

/// Where `HH:MM`, `HH:MM:SS` or `HH:MM:SS.f...` starting at `at` ends.
pub(super) fn time_end(bytes: &[u8], at: usize) -> Option<usize> {
    if !(digits(bytes, at, 2) && bytes.get(at + 2) == Some(&b':') && digits(bytes, at + 3, 2)) {
        return None;
    }
    let mut end = at + 5;
    if bytes.get(end) == Some(&b':') && digits(bytes, end + 1, 2) {
        end += 3;
        if bytes.get(end) == Some(&b'.') && digits(bytes, end + 1, 1) {
            end += 1;
            while bytes.get(end).is_some_and(u8::is_ascii_digit) {
                end += 1;
            }
        }
    }
    Some(end)
}

pub(super) fn digits(bytes: &[u8], at: usize, n: usize) -> bool {
    bytes
        .get(at..at + n)
        .is_some_and(|d| d.iter().all(u8::is_ascii_digit))
}

/// Whether `value` is, as a whole, a clock value in a declared clock column.
pub(super) fn is_clock_value(value: ValueRef<'_>) -> bool {
    match value {
        ValueRef::Text(text) => clock_text_len(text) == Some(text.len()),
        _ => false,
    }
}

/// Storage-class tags of the canonical value encoding.
pub(super) const TAG_NULL: u8 = 0;
pub(super) const TAG_INTEGER: u8 = 1;
pub(super) const TAG_REAL: u8 = 2;
pub(super) const TAG_TEXT: u8 = 3;
pub(super) const TAG_BLOB: u8 = 4;
/// The stand-in for a clock value in a declared clock column: no payload,
/// so every such value encodes alike.
pub(super) const TAG_CLOCK: u8 = 5;

/// Hex characters kept of a per-field digest: enough to tell values apart in a
/// diff, short enough that a wide table's snapshot stays small.
pub(super) const FIELD_DIGEST_CHARS: usize = 16;

/// Names under which SQLite exposes the rowid, in the order it resolves them.
pub(super) const ROWID_ALIASES: [&str; 3] = ["rowid", "_rowid_", "oid"];

/// One schema entry that is a table, as the observer reads tables.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct TableEntry {
    pub(super) name: String,
    pub(super) rootpage: i64,
}

/// The schema's objects (in `ORDER BY type, name` order, ids suffixed as
/// a snapshot would) and its observed tables in the same order.
pub(super) fn read_schema(
    conn: &Connection,
) -> rusqlite::Result<(BTreeMap<String, ObjectState>, Vec<TableEntry>)> {
    let mut objects = BTreeMap::new();
    let mut tables = Vec::new();
    let mut stmt = conn
        .prepare("SELECT type, name, sql, rootpage FROM main.sqlite_master ORDER BY type, name")?;
    let mut rows = stmt.query([])?;
    while let Some(row) = rows.next()? {
        let kind = text_lossy(row.get_ref(0)?);
        let name = text_lossy(row.get_ref(1)?);
        let state = match row.get_ref(2)? {
            ValueRef::Null => ObjectState::whole(format!("{kind}\0{name}").as_bytes()),
            ValueRef::Text(sql) | ValueRef::Blob(sql) => ObjectState::whole(sql),
            other => ObjectState::whole(render_key(other).as_bytes()),
        };
        insert_unique(&mut objects, format!("sqlite_master/{kind}:{name}"), state);
        if kind == "table" && is_observed_table(&name) {
            let rootpage = match row.get_ref(3)? {
                ValueRef::Integer(i) => i,
                _ => 0,
            };
            tables.push(TableEntry { name, rootpage });
        }
    }
    Ok((objects, tables))
}

/// One table's declared columns (`PRAGMA table_info`): names, declared
/// types, which must be given on insert, which form the key.
pub(super) fn read_shape(conn: &Connection, table: &str) -> rusqlite::Result<crate::TableShape> {
    let mut stmt = conn.prepare(
        "SELECT name, type, \"notnull\", dflt_value IS NOT NULL, pk \
         FROM pragma_table_info(?1) ORDER BY cid",
    )?;
    let mut columns = stmt
        .query_map([table], |row| {
            let not_null: i64 = row.get(2)?;
            let has_default: bool = row.get(3)?;
            let pk: i64 = row.get(4)?;
            Ok(crate::ColumnShape {
                name: text_lossy(row.get_ref(0)?),
                declared_type: text_lossy(row.get_ref(1)?),
                required: not_null != 0 && !has_default,
                key: pk > 0,
                rowid: false,
            })
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    // A lone `INTEGER PRIMARY KEY` is the rowid: SQLite fills it itself,
    // even when it is declared NOT NULL.
    let keys: Vec<usize> = (0..columns.len()).filter(|&i| columns[i].key).collect();
    if let [only] = keys[..]
        && columns[only].declared_type.eq_ignore_ascii_case("integer")
    {
        columns[only].rowid = true;
        columns[only].required = false;
    }
    Ok(crate::TableShape {
        table: table.to_owned(),
        columns,
    })
}

/// Reads a whole table into `objects` (suffixing ids that render like one
/// already there), or says why it cannot be: the warning a snapshot carries.
pub(super) fn read_table(
    conn: &Connection,
    table: &str,
    clock_columns: &[ClockColumn],
    objects: &mut BTreeMap<String, ObjectState>,
) -> Option<String> {
    let mut rows = Vec::new();
    let outcome = plan_table(conn, table, clock_columns)
        .and_then(|plan| read_rows(conn, &plan, None, &mut rows).map_err(|e| e.to_string()));
    match outcome {
        Ok(()) => {
            let mut collisions = 0usize;
            for (id, state) in rows {
                if !insert_unique(objects, id, state) {
                    collisions += 1;
                }
            }
            (collisions > 0).then(|| {
                format!(
                    "table {table:?}: {collisions} row id(s) rendered like an earlier \
                     object and were suffixed with #n"
                )
            })
        }
        Err(reason) => Some(format!("table {table:?} not observed: {reason}")),
    }
}

/// Reads the schema (fatal on failure: this is where a non-database fails) and
/// then every table (a table that cannot be read becomes a warning).
pub(super) fn read_snapshot(
    conn: &Connection,
    clock_columns: &[ClockColumn],
) -> rusqlite::Result<Snapshot> {
    let (mut objects, tables) = read_schema(conn)?;
    let mut warnings = Vec::new();
    for table in tables {
        warnings.extend(read_table(conn, &table.name, clock_columns, &mut objects));
    }
    Ok(Snapshot { objects, warnings })
}

/// The schema's objects and each table's rows, as [`read_snapshot`] names
/// them, except that of a table with more than `per_group` rows only the
/// first `per_group` it reads are kept (a table that cannot be read keeps
/// none). A table of `per_group` rows or fewer is read exactly as a
/// snapshot reads it, suffixes included.
pub(super) fn read_sample(
    conn: &Connection,
    clock_columns: &[ClockColumn],
    per_group: usize,
) -> rusqlite::Result<BTreeMap<String, ObjectState>> {
    let (mut objects, tables) = read_schema(conn)?;
    for table in tables {
        let Ok(mut plan) = plan_table(conn, &table.name, clock_columns) else {
            continue;
        };
        plan.select
            .push_str(&format!(" LIMIT {}", per_group.saturating_add(1)));
        let mut rows = Vec::new();
        if read_rows(conn, &plan, None, &mut rows).is_err() {
            continue;
        }
        rows.truncate(per_group);
        for (id, state) in rows {
            insert_unique(&mut objects, id, state);
        }
    }
    Ok(objects)
}

/// SQLite's own bookkeeping tables (`sqlite_stat1`, ...) are skipped, except
/// `sqlite_sequence`, whose counters a server changes through AUTOINCREMENT.
pub(super) fn is_observed_table(name: &str) -> bool {
    let internal = name
        .get(..7)
        .is_some_and(|p| p.eq_ignore_ascii_case("sqlite_"));
    !internal || name.eq_ignore_ascii_case("sqlite_sequence")
}

/// How to read one table: the SELECT, the content columns it returns first,
/// and which result columns make up the row key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct TablePlan {
    pub(super) name: String,
    pub(super) columns: Vec<String>,
    /// Per content column: whether it is a declared clock column.
    pub(super) clock: Vec<bool>,
    pub(super) key: Vec<usize>,
    pub(super) select: String,
    /// A name that reaches the rowid (no column shadows it), for reading a
    /// range of rows; `None` for a WITHOUT ROWID table or when every alias
    /// is a column name.
    pub(super) rowid: Option<&'static str>,
    /// Whether ids are rowids (no declared key, or an INTEGER PRIMARY KEY):
    /// then two rows can never render alike.
    pub(super) unique_ids: bool,
}

pub(super) fn plan_table(
    conn: &Connection,
    table: &str,
    clock_columns: &[ClockColumn],
) -> Result<TablePlan, String> {
    let mut columns = Vec::new();
    let mut types = Vec::new();
    let mut pk: Vec<(i64, usize)> = Vec::new();
    {
        let mut stmt = conn
            .prepare("SELECT name, pk, type FROM pragma_table_info(?1, 'main') ORDER BY cid")
            .map_err(|e| e.to_string())?;
        let mut rows = stmt.query([table]).map_err(|e| e.to_string())?;
        while let Some(row) = rows.next().map_err(|e| e.to_string())? {
            let name = text_lossy(row.get_ref(0).map_err(|e| e.to_string())?);
            let rank: i64 = row.get(1).map_err(|e| e.to_string())?;
            if rank > 0 {
                pk.push((rank, columns.len()));
            }
            types.push(text_lossy(row.get_ref(2).map_err(|e| e.to_string())?));
            columns.push(name);
        }
    }
    if columns.is_empty() {
        return Err("no columns visible (table_info is empty)".into());
    }
    pk.sort_unstable();
    let mut key: Vec<usize> = pk.into_iter().map(|(_, index)| index).collect();
    if table.eq_ignore_ascii_case("sqlite_sequence")
        && let Some(index) = columns.iter().position(|c| c.eq_ignore_ascii_case("name"))
    {
        key = vec![index];
    }
    let free_alias = ROWID_ALIASES
        .iter()
        .copied()
        .find(|alias| !columns.iter().any(|c| c.eq_ignore_ascii_case(alias)));
    let with_rowid = has_rowid(conn, table);
    let mut select = String::from("SELECT ");
    for (i, column) in columns.iter().enumerate() {
        if i > 0 {
            select.push_str(", ");
        }
        push_quoted(&mut select, column);
    }
    let declared_key = !key.is_empty();
    if key.is_empty() {
        let alias = free_alias.ok_or("no primary key, and every rowid alias is a column name")?;
        select.push_str(", ");
        select.push_str(alias);
        key.push(columns.len());
    }
    select.push_str(" FROM main.");
    push_quoted(&mut select, table);
    let clock = columns
        .iter()
        .map(|column| clock_columns.iter().any(|c| c.names(table, column)))
        .collect();
    let integer_key = key.len() == 1
        && types
            .get(key[0])
            .is_some_and(|t| t.eq_ignore_ascii_case("INTEGER"))
        && !declared_desc_key(conn, table);
    Ok(TablePlan {
        name: table.to_owned(),
        columns,
        clock,
        key,
        select,
        rowid: if with_rowid { free_alias } else { None },
        unique_ids: with_rowid && (!declared_key || integer_key),
    })
}

/// Whether `table` is an ordinary rowid table (not WITHOUT ROWID, not
/// virtual), as `PRAGMA table_list` says.
fn has_rowid(conn: &Connection, table: &str) -> bool {
    conn.query_row(
        "SELECT type = 'table' AND wr = 0 FROM pragma_table_list WHERE schema = 'main' AND name = ?1",
        [table],
        |r| r.get::<_, bool>(0),
    )
    .unwrap_or(false)
}

/// `INTEGER PRIMARY KEY DESC` does not make the column the rowid (an old
/// quirk SQLite keeps): such a key is an ordinary unique column.
fn declared_desc_key(conn: &Connection, table: &str) -> bool {
    let sql: String = conn
        .query_row(
            "SELECT coalesce(sql, '') FROM main.sqlite_master WHERE type = 'table' AND name = ?1",
            [table],
            |r| r.get(0),
        )
        .unwrap_or_default();
    let squeezed: String = sql
        .to_ascii_uppercase()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    squeezed.contains("PRIMARY KEY DESC")
}

/// Streams a table's rows, keeping only each row's digests.
pub(super) fn read_rows(
    conn: &Connection,
    plan: &TablePlan,
    range: Option<(i64, i64)>,
    out: &mut Vec<(String, ObjectState)>,
) -> rusqlite::Result<()> {
    let (mut stmt, params) = match (range, plan.rowid) {
        (Some((low, high)), Some(alias)) => (
            conn.prepare_cached(&format!("{} WHERE {alias} BETWEEN ?1 AND ?2", plan.select))?,
            vec![low, high],
        ),
        _ => (conn.prepare_cached(&plan.select)?, Vec::new()),
    };
    let mut rows = stmt.query(rusqlite::params_from_iter(params))?;
    let mut encoding = Vec::new();
    while let Some(row) = rows.next()? {
        encoding.clear();
        let mut fields = BTreeMap::new();
        for (i, column) in plan.columns.iter().enumerate() {
            push_len(&mut encoding, column.len());
            encoding.extend_from_slice(column.as_bytes());
            let start = encoding.len();
            let value = row.get_ref(i)?;
            if plan.clock.get(i).copied().unwrap_or(false) && is_clock_value(value) {
                encoding.push(TAG_CLOCK);
            } else {
                push_tagged(&mut encoding, value);
            }
            // An AUTOINCREMENT counter moving on is bookkeeping, not content
            // destroyed: leaving `seq` out of the fields makes its change an
            // additive update, so an insert-only tool is not charged with an
            // overwrite (EFF-02) for it.
            let counter = plan.name.eq_ignore_ascii_case("sqlite_sequence")
                && column.eq_ignore_ascii_case("seq");
            if value != ValueRef::Null && !counter {
                let mut digest = crate::digest_hex(&encoding[start..]);
                digest.truncate(FIELD_DIGEST_CHARS);
                fields.insert(column.clone(), digest);
            }
        }
        out.push((
            row_id(plan, row)?,
            ObjectState {
                digest: crate::digest_hex(&encoding),
                size: encoding.len() as u64,
                fields,
                head: None,
            },
        ));
    }
    Ok(())
}

/// A row's object id: `table/key`, the key values rendered and joined with
/// `,` in key order (before any `#n` suffix).
pub(super) fn row_id(plan: &TablePlan, row: &rusqlite::Row<'_>) -> rusqlite::Result<String> {
    let mut id = plan.name.clone();
    id.push('/');
    for (n, &index) in plan.key.iter().enumerate() {
        if n > 0 {
            id.push(',');
        }
        id.push_str(&render_key(row.get_ref(index)?));
    }
    Ok(id)
}

/// Inserts under `id`, or under the first free `id#2`, `id#3`, ... when `id` is
/// taken. Returns whether `id` itself was free.
pub(super) fn insert_unique<V>(objects: &mut BTreeMap<String, V>, id: String, state: V) -> bool {
    let taken = match objects.entry(id) {
        Entry::Vacant(slot) => {
            slot.insert(state);
            return true;
        }
        Entry::Occupied(slot) => slot.key().clone(),
    };
    let mut n = 2u64;
    loop {
        if let Entry::Vacant(slot) = objects.entry(format!("{taken}#{n}")) {
            slot.insert(state);
            return false;
        }
        n += 1;
    }
}

/// Appends `value` as a storage-class tag followed by a self-delimiting payload.
pub(super) fn push_tagged(buf: &mut Vec<u8>, value: ValueRef<'_>) {
    match value {
        ValueRef::Null => buf.push(TAG_NULL),
        ValueRef::Integer(i) => {
            buf.push(TAG_INTEGER);
            buf.extend_from_slice(&i.to_le_bytes());
        }
        ValueRef::Real(r) => {
            buf.push(TAG_REAL);
            buf.extend_from_slice(&r.to_bits().to_le_bytes());
        }
        ValueRef::Text(bytes) => {
            buf.push(TAG_TEXT);
            push_len(buf, bytes.len());
            buf.extend_from_slice(bytes);
        }
        ValueRef::Blob(bytes) => {
            buf.push(TAG_BLOB);
            push_len(buf, bytes.len());
            buf.extend_from_slice(bytes);
        }
    }
}

pub(super) fn push_len(buf: &mut Vec<u8>, len: usize) {
    buf.extend_from_slice(&(len as u64).to_le_bytes());
}

/// A key value as it appears in row ids (`table/key`): integers and reals in
/// decimal, text as itself, a blob in hex, NULL as `NULL`.
pub(super) fn render_key(value: ValueRef<'_>) -> String {
    match value {
        ValueRef::Null => "NULL".to_owned(),
        ValueRef::Integer(i) => i.to_string(),
        ValueRef::Real(r) => format!("{r}"),
        ValueRef::Text(bytes) => String::from_utf8_lossy(bytes).into_owned(),
        ValueRef::Blob(bytes) => {
            let mut hex = String::with_capacity(bytes.len() * 2);
            for b in bytes {
                let _ = write!(hex, "{b:02x}");
            }
            hex
        }
    }
}

pub(super) fn text_lossy(value: ValueRef<'_>) -> String {
    match value {
        ValueRef::Text(bytes) | ValueRef::Blob(bytes) => {
            String::from_utf8_lossy(bytes).into_owned()
        }
        other => render_key(other),
    }
}

/// Appends `name` as a double-quoted SQL identifier.
pub(super) fn push_quoted(sql: &mut String, name: &str) {
    sql.push('"');
    sql.push_str(&name.replace('"', "\"\""));
    sql.push('"');
}

//! The observer of a jailed cluster: row changes from the logical
//! replication slot, everything else from the catalogs.
//!
//! Rows are never scanned. Each look drains the slot of every transaction
//! that committed since the last look, so a row change is charged to the
//! window its transaction committed in, and the work is in proportion to
//! the rows changed, not to the database. The catalogs (tables and their
//! columns, views, indexes, sequences and their values, functions,
//! triggers, policies, schemas, roles, grants, extensions) are small and
//! read whole at each look.
//!
//! Object ids: `<schema>.<table>/<key>` for a row, the key being its
//! primary-key values in text form joined with `,` (a table without a
//! primary key: `#` and the first 16 hex digits of the row's digest, so an
//! update there reads as a delete and a create); `<schema>.<table>/*` for
//! a TRUNCATE (its rows are not enumerated); `catalog/<kind>:<name>` for
//! everything else. Names are as PostgreSQL quotes them.
//!
//! A row's digest covers every column in table order, each as its name and
//! the digest of its text form (or NULL); its fields are the non-NULL
//! columns, so filling a NULL column is an additive update and changing a
//! value an overwrite, as for SQLite rows. The snapshot this observer keeps
//! holds the catalogs and every row changed so far: the rows the server
//! never touched are not listed.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use witness_observers::{
    Activity, Change, Delta, ObjectState, Observation, ObserveError, Observer, Snapshot, diff,
};

use crate::cluster::{DATABASE, OWNER, PORT, SLOT};
use crate::decode::{Column, Line, Value, parse_line};
use crate::protocol::{Client, ProtocolError};

const CATALOG_PREFIX: &str = "catalog/";

/// Every catalog object as `(id, content)`; the content is hashed, never kept.
const CATALOG_SQL: &str = r#"
WITH ns AS (
  SELECT oid, nspname FROM pg_namespace
  WHERE nspname NOT IN ('pg_catalog', 'information_schema')
    AND nspname NOT LIKE 'pg\_toast%' AND nspname NOT LIKE 'pg\_temp\_%'
)
SELECT 'catalog/schema:' || quote_ident(nspname),
       concat_ws('|', pg_get_userbyid(n.nspowner), n.nspacl::text)
  FROM pg_namespace n WHERE n.oid IN (SELECT oid FROM ns)
UNION ALL
SELECT 'catalog/' || CASE c.relkind WHEN 'r' THEN 'table' WHEN 'p' THEN 'table'
         WHEN 'v' THEN 'view' WHEN 'm' THEN 'materialized-view' WHEN 'S' THEN 'sequence'
         WHEN 'i' THEN 'index' WHEN 'I' THEN 'index' WHEN 'f' THEN 'foreign-table'
         ELSE 'relation' END
       || ':' || quote_ident(ns.nspname) || '.' || quote_ident(c.relname),
       concat_ws('|', pg_get_userbyid(c.relowner), c.relacl::text, c.relrowsecurity,
         c.relforcerowsecurity, c.relreplident,
         (SELECT string_agg(quote_ident(a.attname) || ' ' || format_type(a.atttypid, a.atttypmod)
                 || CASE WHEN a.attnotnull THEN ' not null' ELSE '' END
                 || coalesce(' default ' || pg_get_expr(d.adbin, d.adrelid), '')
                 || coalesce(' ' || a.attacl::text, ''), ', ' ORDER BY a.attnum)
            FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
           WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped),
         CASE WHEN c.relkind IN ('v', 'm') THEN pg_get_viewdef(c.oid) END,
         CASE WHEN c.relkind IN ('i', 'I') THEN pg_get_indexdef(c.oid) END
       )
  FROM pg_class c JOIN ns ON ns.oid = c.relnamespace
 WHERE c.relkind IN ('r', 'p', 'v', 'm', 'S', 'i', 'I', 'f')
UNION ALL
SELECT 'catalog/sequence-value:' || quote_ident(ns.nspname) || '.' || quote_ident(c.relname),
       coalesce(pg_sequence_last_value(c.oid)::text, '')
  FROM pg_class c JOIN ns ON ns.oid = c.relnamespace WHERE c.relkind = 'S'
UNION ALL
SELECT 'catalog/constraint:' || quote_ident(ns.nspname) || '.' || quote_ident(co.conname)
       || '@' || coalesce(co.conrelid::regclass::text, ''),
       pg_get_constraintdef(co.oid)
  FROM pg_constraint co JOIN ns ON ns.oid = co.connamespace
UNION ALL
SELECT 'catalog/function:' || quote_ident(ns.nspname) || '.' || quote_ident(p.proname)
       || '(' || pg_get_function_identity_arguments(p.oid) || ')',
       concat_ws('|', pg_get_userbyid(p.proowner), p.proacl::text, p.prokind, p.provolatile,
         p.prosecdef, p.prosrc, pg_get_function_result(p.oid))
  FROM pg_proc p JOIN ns ON ns.oid = p.pronamespace
UNION ALL
SELECT 'catalog/trigger:' || t.tgrelid::regclass::text || '/' || quote_ident(t.tgname),
       concat_ws('|', pg_get_triggerdef(t.oid), t.tgenabled)
  FROM pg_trigger t WHERE NOT t.tgisinternal
UNION ALL
SELECT 'catalog/policy:' || quote_ident(schemaname) || '.' || quote_ident(tablename)
       || '/' || quote_ident(policyname),
       concat_ws('|', permissive, roles::text, cmd, qual, with_check)
  FROM pg_policies
UNION ALL
SELECT 'catalog/role:' || quote_ident(r.rolname),
       concat_ws('|', r.rolsuper, r.rolinherit, r.rolcreaterole, r.rolcreatedb, r.rolcanlogin,
         r.rolreplication, r.rolbypassrls, r.rolconnlimit, r.rolvaliduntil, md5(coalesce(r.rolpassword, '')),
         (SELECT string_agg(m.roleid::regrole::text || ':' || m.admin_option, ',' ORDER BY m.roleid::regrole::text)
            FROM pg_auth_members m WHERE m.member = r.oid))
  FROM pg_authid r WHERE r.rolname NOT LIKE 'pg\_%'
UNION ALL
SELECT 'catalog/database:' || quote_ident(datname), concat_ws('|', pg_get_userbyid(datdba), datacl::text)
  FROM pg_database WHERE datname = current_database()
UNION ALL
SELECT 'catalog/extension:' || quote_ident(extname), extversion FROM pg_extension
"#;

/// The cluster's transaction snapshot (`xmin:xmax:in-progress`) and every
/// sequence's value: what each look reads even when nothing happened.
const GATE_SQL: &str = r#"
SELECT 'snapshot', pg_current_snapshot()::text
UNION ALL
SELECT 'catalog/sequence-value:' || quote_ident(n.nspname) || '.' || quote_ident(c.relname),
       coalesce(pg_sequence_last_value(c.oid)::text, '')
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE c.relkind = 'S' AND n.nspname NOT LIKE 'pg\_temp\_%'
"#;

/// [`GATE_SQL`], then how many other sessions hold a transaction that has
/// written (the newest one never shows in the snapshot: its horizon moves
/// only once it commits).
const ACTIVITY_SQL: &str = r#"
SELECT 'snapshot', pg_current_snapshot()::text
UNION ALL
SELECT 'catalog/sequence-value:' || quote_ident(n.nspname) || '.' || quote_ident(c.relname),
       coalesce(pg_sequence_last_value(c.oid)::text, '')
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE c.relkind = 'S' AND n.nspname NOT LIKE 'pg\_temp\_%'
UNION ALL
SELECT 'writing', count(*)::text
  FROM pg_stat_activity
 WHERE backend_xid IS NOT NULL AND pid <> pg_backend_pid()
"#;

/// Whether a snapshot (`xmin:xmax:xip,...`) had no transaction in progress.
fn idle(snapshot: &str) -> bool {
    let mut parts = snapshot.split(':');
    match (parts.next(), parts.next(), parts.next()) {
        (Some(xmin), Some(xmax), Some(xip)) => xmin == xmax && xip.is_empty(),
        _ => false,
    }
}

/// Every primary key's columns, in key order, by table as PostgreSQL
/// quotes it (`schema.table`).
const KEYS_SQL: &str = r#"
SELECT quote_ident(n.nspname) || '.' || quote_ident(c.relname), a.attname
  FROM pg_index i
  JOIN pg_class c ON c.oid = i.indrelid
  JOIN pg_namespace n ON n.oid = c.relnamespace
  JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord) ON true
  JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum
 WHERE i.indisprimary
 ORDER BY 1, k.ord
"#;

/// Every user table's declared columns, in order: `schema.table`, the
/// column, its type as declared, and whether an insert must name it
/// (`NOT NULL` with no default, no identity, not generated).
const COLUMNS_SQL: &str = r#"
SELECT quote_ident(n.nspname) || '.' || quote_ident(c.relname), n.nspname, c.relname,
       a.attname, format_type(a.atttypid, a.atttypmod),
       CASE WHEN a.attnotnull AND NOT a.atthasdef AND a.attidentity = ''
                 AND a.attgenerated = '' THEN 't' ELSE 'f' END
  FROM pg_attribute a
  JOIN pg_class c ON c.oid = a.attrelid
  JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE c.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped
   AND n.nspname NOT IN ('pg_catalog', 'information_schema')
   AND n.nspname NOT LIKE 'pg\_%'
 ORDER BY 1, a.attnum
"#;

/// Observes the cluster whose socket is in `socket_dir`.
pub struct PostgresObserver {
    socket_dir: PathBuf,
    client: Option<Client>,
    /// Primary-key columns by table; re-read when the catalogs change or a
    /// table is met that is not known yet.
    keys: BTreeMap<String, Vec<String>>,
    keys_read: bool,
    /// The transaction snapshot at the last look, when no transaction was
    /// in progress then: if it is the same now, nothing committed since,
    /// anywhere in the cluster, and the catalogs need no reading.
    quiet_since: Option<String>,
    /// What `snapshot` reports (the same state `advance` keeps for callers).
    own: Snapshot,
    /// The gate as the last look saw it (an observation's, or an
    /// [`Observer::activity`]'s): a different one now means something
    /// committed or a sequence moved.
    signal: Option<Vec<crate::protocol::Row>>,
}

impl PostgresObserver {
    pub fn new(socket_dir: &Path) -> Self {
        Self {
            socket_dir: socket_dir.to_path_buf(),
            client: None,
            keys: BTreeMap::new(),
            keys_read: false,
            quiet_since: None,
            own: Snapshot::default(),
            signal: None,
        }
    }

    fn error(&self, source: ProtocolError) -> ObserveError {
        ObserveError::Unusable {
            path: self.socket_dir.clone(),
            reason: format!("PostgreSQL: {source}"),
        }
    }

    fn query(&mut self, sql: &str) -> Result<Vec<crate::protocol::Row>, ObserveError> {
        if self.client.is_none() {
            let password = crate::cluster::password_for(&self.socket_dir);
            let client =
                Client::connect(&self.socket_dir, PORT, OWNER, DATABASE, password.as_deref())
                    .map_err(|e| self.error(e))?;
            self.client = Some(client);
        }
        let result = match self.client.as_mut() {
            Some(client) => client.query(sql),
            None => return Err(self.error(ProtocolError::Unexpected('?'))),
        };
        result.map_err(|e| {
            // A broken session is not reused.
            if matches!(e, ProtocolError::Io(_)) {
                self.client = None;
            }
            self.error(e)
        })
    }

    fn read_keys(&mut self) -> Result<(), ObserveError> {
        let rows = self.query(KEYS_SQL)?;
        self.keys.clear();
        for row in rows {
            if let [Some(table), Some(column)] = row.as_slice() {
                self.keys
                    .entry(table.clone())
                    .or_default()
                    .push(column.clone());
            }
        }
        self.keys_read = true;
        Ok(())
    }

    fn key_of(&mut self, table: &str) -> Result<Option<Vec<String>>, ObserveError> {
        if !self.keys_read || !self.keys.contains_key(table) {
            self.read_keys()?;
        }
        Ok(self.keys.get(table).cloned())
    }
}

impl Observer for PostgresObserver {
    fn kind(&self) -> &'static str {
        "postgres"
    }

    /// Brings this observer's own reference up to now: the work is in
    /// proportion to what committed (see [`PostgresObserver::advance`]).
    fn observe(&mut self, changes: bool) -> Result<Observation, ObserveError> {
        let mut own = std::mem::take(&mut self.own);
        let result = self.advance(&mut own);
        self.own = own;
        let found = result?;
        Ok(Observation {
            delta: if changes {
                Delta { changes: found }
            } else {
                Delta::default()
            },
            warnings: self.own.warnings.clone(),
            rows: Vec::new(),
        })
    }

    /// The cluster's change signal: a write that commits moves the
    /// transaction snapshot's horizon, and `nextval()` a sequence, with no
    /// need to read the slot (logical decoding lists the changes when the
    /// observation reads them). Busy as well while another session holds a
    /// transaction that has written (`pg_stat_activity`), whose writes show
    /// only once it commits; unknown when the cluster cannot be asked.
    fn activity(&mut self) -> Activity {
        let Ok(mut gate) = self.query(ACTIVITY_SQL) else {
            return Activity::Unknown;
        };
        let writing = gate
            .iter()
            .position(|r| r.first().and_then(|c| c.as_deref()) == Some("writing"))
            .map(|at| gate.remove(at))
            .is_none_or(|r| r.get(1).cloned().flatten().as_deref() != Some("0"));
        let idle_now = snapshot_of(&gate).is_some_and(|s| idle(&s));
        let moved = self.signal.as_ref() != Some(&gate);
        self.signal = Some(gate);
        if moved || writing || !idle_now {
            Activity::Busy
        } else {
            Activity::Quiet
        }
    }

    fn present(&mut self, visit: &mut dyn FnMut(&str)) -> Result<(), ObserveError> {
        self.own.objects.keys().for_each(|id| visit(id));
        Ok(())
    }

    /// The tables' declared columns (schema only, no row), each table named
    /// `schema.table` as its rows are, and by its bare name too when it is
    /// in `public`, where a statement names it so.
    fn tables(&mut self) -> Result<Vec<witness_observers::TableShape>, ObserveError> {
        let rows = self.query(COLUMNS_SQL)?;
        self.read_keys()?;
        let mut out: Vec<witness_observers::TableShape> = Vec::new();
        for row in rows {
            let [
                Some(qualified),
                Some(schema),
                Some(table),
                Some(column),
                Some(ty),
                Some(required),
            ] = row.as_slice()
            else {
                continue;
            };
            let key = self
                .keys
                .get(qualified)
                .is_some_and(|columns| columns.contains(column));
            let shape = witness_observers::ColumnShape {
                name: column.clone(),
                declared_type: ty.clone(),
                required: required == "t",
                key,
                rowid: false,
            };
            let mut names = vec![qualified.clone()];
            if schema == "public" {
                names.push(table.clone());
            }
            for name in names {
                match out.iter_mut().find(|t| t.table == name) {
                    Some(t) => t.columns.push(shape.clone()),
                    None => out.push(witness_observers::TableShape {
                        table: name,
                        columns: vec![shape.clone()],
                    }),
                }
            }
        }
        Ok(out)
    }
}

/// The transaction snapshot a gate read.
fn snapshot_of(gate: &[crate::protocol::Row]) -> Option<String> {
    gate.iter()
        .find(|r| r.first().and_then(|c| c.as_deref()) == Some("snapshot"))
        .and_then(|r| r.get(1).cloned().flatten())
}

impl PostgresObserver {
    /// Reads the store as it is now, as a whole snapshot (for tests).
    pub fn snapshot(&mut self) -> Result<Snapshot, ObserveError> {
        let mut own = std::mem::take(&mut self.own);
        let result = self.advance(&mut own);
        self.own = own;
        result.map(|_| self.own.clone())
    }

    /// Brings `last` (what this observer gave the previous time, empty the
    /// first time) up to now and gives the changes between, ordered by
    /// object id; `last.warnings` become the warnings of now.
    pub fn advance(&mut self, last: &mut Snapshot) -> Result<Vec<Change>, ObserveError> {
        // The gate first: the catalogs (a hundred times the work of
        // anything else here) are read only when a transaction may have
        // committed since the last look; sequence values always, since
        // nextval() needs no transaction. Catalogs before rows: a table
        // created in this window is then known when its rows are decoded.
        let gate = self.query(GATE_SQL)?;
        let snapshot = snapshot_of(&gate);
        self.signal = Some(gate.clone());
        let quiet = snapshot.is_some() && snapshot == self.quiet_since;
        self.quiet_since = snapshot.filter(|s| idle(s));
        let mut catalog = Snapshot::default();
        let rows = if quiet {
            // Nothing committed: every catalog object is as it was.
            catalog.objects.extend(
                last.objects
                    .range(CATALOG_PREFIX.to_owned()..)
                    .take_while(|(id, _)| id.starts_with(CATALOG_PREFIX))
                    .filter(|(id, _)| !id.starts_with(SEQUENCE_VALUE))
                    .map(|(id, state)| (id.clone(), state.clone())),
            );
            gate.into_iter()
                .filter(|r| {
                    r.first()
                        .and_then(|c| c.as_deref())
                        .is_some_and(|id| id.starts_with(SEQUENCE_VALUE))
                })
                .collect()
        } else {
            self.query(CATALOG_SQL)?
        };
        for row in rows {
            if let [Some(id), content] = row.as_slice() {
                let content = content.as_deref().unwrap_or("");
                let state = if id.starts_with(SEQUENCE_VALUE) {
                    counter(content, last.objects.get(id))
                } else {
                    ObjectState::whole(content.as_bytes())
                };
                catalog.objects.insert(id.clone(), state);
            }
        }
        let previous = Snapshot {
            objects: last
                .objects
                .range(CATALOG_PREFIX.to_owned()..)
                .take_while(|(id, _)| id.starts_with(CATALOG_PREFIX))
                .map(|(id, state)| (id.clone(), state.clone()))
                .collect(),
            warnings: Vec::new(),
        };
        let mut changes = diff(&previous, &catalog).changes;
        if !changes.is_empty() {
            self.keys_read = false;
        }

        let lines = self.query(&format!(
            "SELECT data FROM pg_logical_slot_get_changes('{SLOT}', NULL, NULL, \
             'include-xids', '0', 'skip-empty-xacts', '1')"
        ))?;
        let mut window = Window::default();
        let mut warnings = BTreeSet::new();
        for row in lines {
            let Some(Some(text)) = row.into_iter().next() else {
                continue;
            };
            match parse_line(&text) {
                Ok(line) => self.apply(line, last, &mut window, &mut warnings)?,
                Err(why) => {
                    warnings.insert(format!("a change could not be read ({why})"));
                }
            }
        }
        for (id, touch) in window.rows {
            let one = |state: &Option<ObjectState>| Snapshot {
                objects: state.iter().map(|s| (id.clone(), s.clone())).collect(),
                warnings: Vec::new(),
            };
            changes.extend(diff(&one(&touch.before), &one(&touch.now)).changes);
            match touch.now {
                Some(state) => last.objects.insert(id, state),
                None => last.objects.remove(&id),
            };
        }
        for table in window.truncated {
            changes.push(Change {
                object: format!("{table}/*"),
                op: witness_observers::Op::Delete,
                overwrite: None,
                before: None,
                after: None,
            });
            warnings.insert(format!(
                "{table} was truncated: its rows are not enumerated"
            ));
        }
        changes.sort_by(|a, b| a.object.cmp(&b.object));
        last.objects.retain(|id, _| !id.starts_with(CATALOG_PREFIX));
        last.objects.extend(catalog.objects);
        last.warnings = warnings.into_iter().collect();
        Ok(changes)
    }
}

const SEQUENCE_VALUE: &str = "catalog/sequence-value:";

/// A sequence's value as an object. A sequence that only moved forward
/// handed out numbers and took nothing back: like a log that grew, that is
/// an additive change, not an overwrite. So its size is the value reached,
/// and when that grew the state carries the earlier state as its head
/// (see `witness_observers::appended`); a sequence set back or cycled has
/// none and reads as an overwrite.
fn counter(text: &str, before: Option<&ObjectState>) -> ObjectState {
    let mut state = ObjectState::whole(text.as_bytes());
    state.size = text.parse::<i64>().map_or(0, |v| v.max(0) as u64);
    state.head = before
        .filter(|b| b.size < state.size)
        .map(|b| witness_observers::Head {
            len: b.size,
            digest: b.digest.clone(),
        });
    state
}

/// The rows touched in one window: their state when it opened and now.
#[derive(Default)]
struct Window {
    rows: BTreeMap<String, Touch>,
    truncated: BTreeSet<String>,
}

struct Touch {
    before: Option<ObjectState>,
    now: Option<ObjectState>,
}

impl Window {
    /// The row `id`, opened with `before` when first touched in this window
    /// (what the last look kept of it wins: it is what was reported).
    fn touch(&mut self, id: &str, last: &Snapshot, before: Option<ObjectState>) -> &mut Touch {
        self.rows.entry(id.to_owned()).or_insert_with(|| {
            let before = last.objects.get(id).cloned().or(before);
            Touch {
                now: before.clone(),
                before,
            }
        })
    }
}

impl PostgresObserver {
    fn apply(
        &mut self,
        line: Line,
        last: &Snapshot,
        window: &mut Window,
        warnings: &mut BTreeSet<String>,
    ) -> Result<(), ObserveError> {
        match line {
            Line::Insert { table, new } => {
                let state = encode(&new, None, &table, warnings);
                let id = self.row_id(&table, &new, &state)?;
                window.touch(&id, last, None).now = Some(state);
            }
            Line::Update { table, old, new } => {
                let old_state = old.as_ref().map(|o| encode(o, None, &table, warnings));
                let prior_id = match (&old, &old_state) {
                    (Some(o), Some(s)) => Some(self.row_id(&table, o, s)?),
                    _ => None,
                };
                // Without old values an unchanged TOASTed column can only
                // be taken from the row as the observer last knew it.
                let new_id_guess = match &prior_id {
                    Some(id) => id.clone(),
                    None => {
                        let probe = encode(&new, None, &table, &mut BTreeSet::new());
                        self.row_id(&table, &new, &probe)?
                    }
                };
                let known = old_state
                    .clone()
                    .or_else(|| window.rows.get(&new_id_guess).and_then(|t| t.now.clone()))
                    .or_else(|| last.objects.get(&new_id_guess).cloned());
                let state = encode(&new, known.as_ref(), &table, warnings);
                let new_id = self.row_id(&table, &new, &state)?;
                match prior_id {
                    Some(prior) if prior != new_id => {
                        window.touch(&prior, last, old_state).now = None;
                        window.touch(&new_id, last, None).now = Some(state);
                    }
                    Some(prior) => {
                        window.touch(&prior, last, old_state).now = Some(state);
                    }
                    None => {
                        if known.is_none() {
                            warnings.insert(format!(
                                "{table}: an update came without old values (replica identity not FULL); \
                                 its earlier state is unknown"
                            ));
                        }
                        window.touch(&new_id, last, known).now = Some(state);
                    }
                }
            }
            Line::Delete { table, old } => match old {
                Some(old) => {
                    let state = encode(&old, None, &table, warnings);
                    let id = self.row_id(&table, &old, &state)?;
                    window.touch(&id, last, Some(state)).now = None;
                }
                None => {
                    warnings.insert(format!(
                        "{table}: a row was deleted without old values (no primary key, replica identity not FULL)"
                    ));
                    window.truncated.insert(table);
                }
            },
            Line::Truncate { table } => {
                window.truncated.insert(table);
            }
            Line::Begin | Line::Commit | Line::Other => {}
        }
        Ok(())
    }

    fn row_id(
        &mut self,
        table: &str,
        columns: &[Column],
        state: &ObjectState,
    ) -> Result<String, ObserveError> {
        let key = self.key_of(table)?;
        Ok(match key {
            Some(key) => {
                let parts: Vec<String> = key
                    .iter()
                    .map(
                        |k| match columns.iter().find(|c| &c.name == k).map(|c| &c.value) {
                            Some(Value::Text(t)) => t.clone(),
                            Some(Value::Null) | None => "NULL".into(),
                            Some(Value::Unchanged) => "?".into(),
                        },
                    )
                    .collect();
                format!("{table}/{}", parts.join(","))
            }
            None => format!("{table}/#{}", &state.digest[..16]),
        })
    }
}

/// A row's state: every column in order as its name and the digest of its
/// text (or NULL). An unchanged TOASTed value takes its digest from
/// `previous`, the row as it was.
fn encode(
    columns: &[Column],
    previous: Option<&ObjectState>,
    table: &str,
    warnings: &mut BTreeSet<String>,
) -> ObjectState {
    let mut encoding = String::new();
    let mut fields = BTreeMap::new();
    for column in columns {
        let digest = match &column.value {
            Value::Null => None,
            Value::Text(text) => Some(witness_observers::digest_hex(text.as_bytes())),
            Value::Unchanged => match previous.and_then(|p| p.fields.get(&column.name)) {
                Some(d) => Some(d.clone()),
                None => {
                    warnings.insert(format!(
                        "{table}.{}: an unchanged large value could not be recovered",
                        column.name
                    ));
                    Some("unknown".into())
                }
            },
        };
        encoding.push_str(&column.name.replace('\\', "\\\\").replace('\n', "\\n"));
        encoding.push('\t');
        encoding.push_str(digest.as_deref().unwrap_or("NULL"));
        encoding.push('\n');
        if let Some(d) = digest {
            fields.insert(column.name.clone(), d);
        }
    }
    let mut state = ObjectState::whole(encoding.as_bytes());
    state.fields = fields;
    state
}

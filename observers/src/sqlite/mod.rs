//! SQLite observer.
//!
//! Reading a live database in place is not neutral: opening a WAL database even
//! with `mode=ro` creates `-wal`/`-shm` files, and a reader can hold locks the
//! server then trips over. So the live files are only ever read as bytes:
//! [`image`] rebuilds, in a private temporary directory, the page image SQLite
//! would read (the main file overlaid with the WAL's committed frames, or a
//! hot journal rolled back in a copy), consistently and without locks, and
//! SQLite opens the image. The original's bytes and inodes are never touched.
//!
//! Between observations only what changed is read ([`incremental`]): a store
//! whose files kept their stamps costs three `stat` calls; a changed one is
//! compared page by page with the previous image (or, in WAL mode, only its
//! new frames are read), and only the rows on changed pages are read again,
//! from both images, through the same code as a full read.
//!
//! Object ids:
//! - `sqlite_master/<type>:<name>` for every schema entry (tables, indexes,
//!   views, triggers), so a table created empty is still a visible effect;
//! - `<table>/<key>` for every row, the key being the primary key values joined
//!   with `,` in primary-key order, or the rowid when no key is declared;
//! - `sqlite_sequence/<table>` for AUTOINCREMENT counters.
//!
//! Two rows whose keys render alike (a TEXT `'1'` and an INTEGER `1`, two NULL
//! keys in a rowid table, a `,` inside a composite key) get a `#2`, `#3`, ...
//! suffix in scan order, and the snapshot carries a warning saying so.
//!
//! Row facts: a store may also declare columns to read of every changed row
//! ([`SqliteObserver::with_facts`]); they come with the changes, read from
//! the images the changes were seen between ([`facts`]).
//!
//! Clock columns: a store may declare columns the server fills from the clock
//! (`created_at TEXT DEFAULT CURRENT_TIMESTAMP`). In those columns, and only
//! there, a value in one of the text forms SQLite's date and time functions
//! write ([`clock_text_len`]) is encoded as one stand-in instead of its text,
//! so a row's digest says *that* the server stamped it, not *when*: two runs
//! of the same calls give the same digests. The price, which the declaration
//! accepts, is that a change from one clock value to another in such a column
//! is not seen. Any other value there (NULL, a number, other text) is encoded
//! as itself, so writing something that is not a time is still a change.

mod btree;
mod facts;
pub(crate) mod image;
mod incremental;
mod rows;

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags};
use witness_model::agent::case::FactsSpec;

use crate::watch::FileSetWatch;
use crate::{
    Activity, Budget, ChangedRow, Delta, Observation, ObserveError, Observer, Snapshot, diff,
};
use image::{Images, JOURNAL, Refreshed, WAL, with_suffix};
use incremental::{Incremental, open_image};
#[cfg(test)]
use rows::*;
pub use rows::{ClockColumn, clock_text_len};

/// A private, disposable image of a database, consistent as of one moment,
/// opened read-write so a probe may query it as it likes; nothing it does
/// reaches the store.
pub struct PrivateCopy {
    // Declared before `_images` so the connection closes before the
    // directory holding the image is removed.
    conn: Connection,
    _images: Images,
}

impl PrivateCopy {
    /// Reads `path` (with its WAL or hot journal) into a private image and
    /// opens it. Returns `Ok(None)` when the database does not exist yet.
    pub fn open(path: &Path) -> Result<Option<Self>, ObserveError> {
        let budget = Budget::DEFAULT;
        let Some(images) = Images::first(path, &budget, budget.deadline())? else {
            return Ok(None);
        };
        let conn = Connection::open_with_flags(
            images.current(),
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|source| ObserveError::Sqlite {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(Some(Self {
            conn,
            _images: images,
        }))
    }

    /// The connection to the copy. Writes through it reach only the copy.
    pub fn conn(&self) -> &Connection {
        &self.conn
    }
}

/// Observes a SQLite database row by row, so an audit can charge each created,
/// updated or deleted row (and each schema change) to the tool call that made it.
///
/// It only ever reads private images, so observing cannot perturb the server.
#[derive(Debug)]
pub struct SqliteObserver {
    path: PathBuf,
    clock_columns: Vec<ClockColumn>,
    facts: Vec<FactsSpec>,
    budget: Budget,
    events: Option<FileSetWatch>,
    state: Option<Incremental>,
}

impl SqliteObserver {
    /// The path is remembered, not opened: the server may create the database
    /// only on its first write, after the observer exists.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self {
            path: path.into(),
            clock_columns: Vec::new(),
            facts: Vec::new(),
            budget: Budget::DEFAULT,
            events: None,
            state: None,
        }
    }

    /// Declares columns the server fills from the clock (see the module
    /// documentation for what that changes, and what it costs).
    pub fn with_clock_columns(mut self, columns: Vec<ClockColumn>) -> Self {
        self.clock_columns = columns;
        self
    }

    /// Declares the columns to read of every changed row of a table (a
    /// golden case's row facts; each spec's store is the caller's business):
    /// every observation that lists changes then gives, in
    /// [`Observation::rows`], those columns of each changed row, read from
    /// the images the change was seen between (see [`facts`]).
    pub fn with_facts(mut self, facts: Vec<FactsSpec>) -> Self {
        self.facts = facts;
        self
    }

    /// Sets how much one observation may read and how long it may take.
    pub fn with_budget(mut self, budget: Budget) -> Self {
        self.budget = budget;
        self
    }

    /// The database this observer watches, for reports and error messages.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The whole database as one [`Snapshot`], read from a private image.
    pub fn snapshot(&mut self) -> Result<Snapshot, ObserveError> {
        let Some(copy) = PrivateCopy::open(&self.path)? else {
            return Ok(Snapshot::default());
        };
        rows::read_snapshot(copy.conn(), &self.clock_columns).map_err(|source| {
            ObserveError::Sqlite {
                path: self.path.clone(),
                source,
            }
        })
    }

    /// Whether observations read only changed pages' rows (not the whole
    /// store, as after a b-tree it could not parse).
    #[cfg(test)]
    fn reads_incrementally(&self) -> bool {
        self.state.as_ref().is_some_and(Incremental::incremental)
    }

    /// The first observation: images, schema, page map.
    fn first(&mut self, changes: bool) -> Result<Observation, ObserveError> {
        let deadline = self.budget.deadline();
        let Some(images) = Images::first(&self.path, &self.budget, deadline)? else {
            return Ok(Observation::default());
        };
        let state = Incremental::build(images, &self.path, &self.clock_columns)?;
        let delta = if changes {
            let now = state.snapshot(&self.path, &self.clock_columns)?;
            diff(&Snapshot::default(), &now)
        } else {
            Delta::default()
        };
        let mut warnings = state.warnings();
        facts::missing_tables(&self.facts, |t| state.has_table(t), &mut warnings);
        let current = Some(state.images.current());
        let rows = read_rows(
            &self.facts,
            &self.path,
            &delta,
            None,
            current,
            &mut warnings,
        )?;
        self.state = Some(state);
        Ok(Observation {
            delta,
            warnings,
            rows,
        })
    }
}

/// The declared facts of the rows `delta` changed, read from the image
/// before the changes (`old`) and the one after (`new`), each where there
/// is one.
fn read_rows(
    facts: &[FactsSpec],
    store: &Path,
    delta: &Delta,
    old: Option<PathBuf>,
    new: Option<PathBuf>,
    warnings: &mut Vec<String>,
) -> Result<Vec<ChangedRow>, ObserveError> {
    if facts.is_empty() || delta.is_empty() {
        return Ok(Vec::new());
    }
    let open = |image: Option<PathBuf>| image.map(|i| open_image(&i, store)).transpose();
    let (old, new) = (open(old)?, open(new)?);
    Ok(facts::changed_rows(
        facts,
        &delta.changes,
        old.as_ref(),
        new.as_ref(),
        warnings,
    ))
}

impl Observer for SqliteObserver {
    fn kind(&self) -> &'static str {
        "sqlite"
    }

    fn observe(&mut self, changes: bool) -> Result<Observation, ObserveError> {
        if self.events.is_none() {
            let files = [
                self.path.clone(),
                with_suffix(&self.path, WAL),
                with_suffix(&self.path, JOURNAL),
            ];
            self.events = Some(FileSetWatch::new(&files));
        }
        let quiet = self
            .events
            .as_mut()
            .and_then(FileSetWatch::take_touched)
            .map(|touched| !touched);
        let Some(state) = &mut self.state else {
            return self.first(changes);
        };
        let deadline = self.budget.deadline();
        let delta = match state.images.refresh(
            &self.path,
            &self.budget,
            deadline,
            quiet,
            self.events.as_mut(),
        )? {
            Refreshed::Missing => {
                // The database went away: everything it held is deleted,
                // as the last image (still the current one) held it.
                let before = state.snapshot(&self.path, &self.clock_columns)?;
                let delta = diff(&before, &Snapshot::default());
                let mut warnings = Vec::new();
                let last = Some(state.images.current());
                let rows = read_rows(&self.facts, &self.path, &delta, last, None, &mut warnings)?;
                self.state = None;
                return Ok(Observation {
                    delta,
                    warnings,
                    rows,
                });
            }
            Refreshed::Unchanged => Delta::default(),
            Refreshed::Changed(behind) => state.delta(&behind, &self.path, &self.clock_columns)?,
        };
        let delta = if changes { delta } else { Delta::default() };
        let mut warnings = state.warnings();
        facts::missing_tables(&self.facts, |t| state.has_table(t), &mut warnings);
        let (old, new) = (state.images.previous(), state.images.current());
        let rows = read_rows(
            &self.facts,
            &self.path,
            &delta,
            Some(old),
            Some(new),
            &mut warnings,
        )?;
        Ok(Observation {
            delta,
            warnings,
            rows,
        })
    }

    fn activity(&mut self) -> Activity {
        FileSetWatch::activity_of(self.events.as_mut())
    }

    fn present(&mut self, visit: &mut dyn FnMut(&str)) -> Result<(), ObserveError> {
        let Some(state) = &self.state else {
            return Ok(());
        };
        for id in state
            .snapshot(&self.path, &self.clock_columns)?
            .objects
            .keys()
        {
            visit(id);
        }
        Ok(())
    }

    /// Reads no more than `per_group` rows of each table (one more, to know
    /// whether that is all of it), so a planner's sample of a 10^6-row
    /// store costs a few thousand rows, not a full read.
    fn sample(
        &mut self,
        per_group: usize,
        visit: &mut dyn FnMut(&str),
    ) -> Result<(), ObserveError> {
        let Some(state) = &self.state else {
            return Ok(());
        };
        let mut capped = crate::PerGroup::new(per_group);
        for id in state
            .sample(&self.path, &self.clock_columns, per_group)?
            .keys()
        {
            if capped.admit(id) {
                visit(id);
            }
        }
        Ok(())
    }

    fn tables(&mut self) -> Result<Vec<crate::TableShape>, ObserveError> {
        match &self.state {
            Some(state) => state.shapes(&self.path),
            None => Ok(Vec::new()),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::os::unix::fs::MetadataExt;
    use std::time::SystemTime;

    use pretty_assertions::assert_eq;

    use super::*;
    use crate::{ObjectState, Op, diff};

    fn listed(observer: &mut SqliteObserver, per_group: Option<usize>) -> Vec<String> {
        let mut out = Vec::new();
        let mut visit = |id: &str| out.push(id.to_owned());
        let visited = match per_group {
            Some(n) => observer.sample(n, &mut visit),
            None => observer.present(&mut visit),
        };
        assert!(visited.is_ok());
        out
    }

    #[test]
    fn a_sample_is_every_row_of_a_small_table_and_a_few_of_a_large_one() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("db.sqlite");
        let conn = rusqlite::Connection::open(&path).expect("db");
        conn.execute_batch(
            "CREATE TABLE big(id INTEGER PRIMARY KEY, v TEXT);
             CREATE TABLE small(k TEXT PRIMARY KEY);
             INSERT INTO small VALUES ('a'), ('b');
             WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 50)
             INSERT INTO big SELECT i, 'x' FROM n;",
        )
        .expect("seed");
        let mut observer = SqliteObserver::new(&path);
        assert!(observer.observe(false).is_ok());
        let all = listed(&mut observer, None);
        // No group over the limit: exactly what `present` lists, in order.
        assert_eq!(listed(&mut observer, Some(50)), all);
        let sampled = listed(&mut observer, Some(3));
        let of = |table: &str| sampled.iter().filter(|id| id.starts_with(table)).count();
        assert_eq!(of("big/"), 3, "{sampled:?}");
        assert_eq!(of("small/"), 2, "{sampled:?}");
        assert_eq!(of("sqlite_master/"), 3, "{sampled:?}");
        assert!(sampled.iter().all(|id| all.contains(id)), "{sampled:?}");
        assert!(sampled.windows(2).all(|w| w[0] < w[1]), "in id order");
    }

    /// Everything about a file that an observer must not change.
    #[derive(Debug, PartialEq)]
    struct FileFacts {
        ino: u64,
        size: u64,
        modified: SystemTime,
        bytes: Vec<u8>,
    }

    fn file_set(dir: &Path) -> BTreeMap<String, FileFacts> {
        std::fs::read_dir(dir)
            .expect("read_dir")
            .map(|entry| {
                let entry = entry.expect("dir entry");
                let meta = entry.metadata().expect("metadata");
                let facts = FileFacts {
                    ino: meta.ino(),
                    size: meta.size(),
                    modified: meta.modified().expect("mtime"),
                    bytes: std::fs::read(entry.path()).expect("read"),
                };
                (entry.file_name().to_string_lossy().into_owned(), facts)
            })
            .collect()
    }

    #[test]
    fn a_tables_shape_names_what_an_insert_must_give_and_leaves_the_store_alone() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("shop.db");
        let conn = Connection::open(&path).expect("open");
        conn.execute_batch(
            "CREATE TABLE orders(id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL,
                 status TEXT NOT NULL DEFAULT 'open', note TEXT);
             CREATE TABLE tags(name TEXT NOT NULL PRIMARY KEY, weight REAL);
             INSERT INTO orders(customer_id) VALUES (1);",
        )
        .expect("schema");
        drop(conn);
        let before = file_set(dir.path());
        let mut observer = SqliteObserver::new(&path);
        observer.observe(false).expect("observe");
        let shapes = observer.tables().expect("shapes");
        // (name, required, key, rowid) of each column, by table.
        type Shown = (String, bool, bool, bool);
        let shown: Vec<(String, Vec<Shown>)> = shapes
            .iter()
            .map(|t| {
                let columns = t
                    .columns
                    .iter()
                    .map(|c| (c.name.clone(), c.required, c.key, c.rowid))
                    .collect();
                (t.table.clone(), columns)
            })
            .collect();
        let col = |n: &str, required, key, rowid| (n.to_owned(), required, key, rowid);
        assert_eq!(
            shown,
            vec![
                (
                    "orders".to_owned(),
                    vec![
                        col("id", false, true, true),
                        col("customer_id", true, false, false),
                        col("status", false, false, false),
                        col("note", false, false, false),
                    ]
                ),
                (
                    "tags".to_owned(),
                    vec![
                        col("name", true, true, false),
                        col("weight", false, false, false)
                    ]
                ),
            ]
        );
        assert_eq!(shapes[1].columns[1].declared_type, "REAL");
        assert_eq!(file_set(dir.path()), before, "reading shapes wrote nothing");
    }

    fn snap(path: &Path) -> Snapshot {
        SqliteObserver::new(path).snapshot().expect("snapshot")
    }

    fn ids(snapshot: &Snapshot) -> Vec<&str> {
        snapshot.objects.keys().map(String::as_str).collect()
    }

    fn row_ids<'a>(snapshot: &'a Snapshot, table: &str) -> Vec<&'a str> {
        let prefix = format!("{table}/");
        snapshot
            .objects
            .keys()
            .filter(|id| id.starts_with(&prefix))
            .map(String::as_str)
            .collect()
    }

    fn changes(before: &Snapshot, after: &Snapshot) -> Vec<(String, Op, Option<bool>)> {
        diff(before, after)
            .changes
            .into_iter()
            .map(|c| (c.object, c.op, c.overwrite))
            .collect()
    }

    fn db(sql: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("store.db");
        Connection::open(&path)
            .expect("open")
            .execute_batch(sql)
            .expect("setup sql");
        (dir, path)
    }

    fn exec(path: &Path, sql: &str) {
        Connection::open(path)
            .expect("open")
            .execute_batch(sql)
            .expect("sql");
    }

    #[test]
    fn kind_is_sqlite() {
        assert_eq!(SqliteObserver::new("x.db").kind(), "sqlite");
    }

    #[test]
    fn rollback_journal_database_is_left_byte_and_inode_identical() {
        let (dir, path) = db("PRAGMA journal_mode=DELETE;
             CREATE TABLE notes(slug TEXT PRIMARY KEY, body TEXT);
             INSERT INTO notes VALUES ('welcome', 'hello'), ('second', 'more');");
        let before = file_set(dir.path());
        assert_eq!(before.keys().collect::<Vec<_>>(), vec!["store.db"]);
        for _ in 0..3 {
            let s = snap(&path);
            assert_eq!(row_ids(&s, "notes"), vec!["notes/second", "notes/welcome"]);
        }
        assert_eq!(file_set(dir.path()), before);
    }

    #[test]
    fn uncommitted_spilled_write_is_rolled_back_in_the_copy_only() {
        let (dir, path) = db("PRAGMA journal_mode=DELETE;
             CREATE TABLE notes(slug TEXT PRIMARY KEY, body BLOB);
             INSERT INTO notes VALUES ('welcome', X'00');");
        let committed = std::fs::read(&path).expect("read");
        let writer = Connection::open(&path).expect("open");
        writer
            .execute_batch(
                "PRAGMA cache_size=10;
                 BEGIN;
                 WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000)
                 INSERT INTO notes SELECT 'row' || i, zeroblob(1000) FROM n;",
            )
            .expect("open write transaction");
        let before = file_set(dir.path());
        assert!(before.contains_key("store.db-journal"));
        assert_ne!(
            before["store.db"].bytes, committed,
            "pages must have spilled"
        );
        let s = snap(&path);
        assert_eq!(row_ids(&s, "notes"), vec!["notes/welcome"]);
        assert_eq!(file_set(dir.path()), before);
        writer.execute_batch("COMMIT;").expect("writer commits");
        assert_eq!(row_ids(&snap(&path), "notes").len(), 2001);
    }

    #[test]
    fn wal_database_with_open_writer_is_left_untouched_and_wal_rows_are_seen() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("store.db");
        let writer = Connection::open(&path).expect("open");
        let mode: String = writer
            .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
            .expect("wal");
        assert_eq!(mode, "wal");
        writer
            .execute_batch(
                "PRAGMA wal_autocheckpoint=0;
                 CREATE TABLE notes(slug TEXT PRIMARY KEY, body TEXT);
                 INSERT INTO notes VALUES ('welcome', 'hello'), ('second', 'more');",
            )
            .expect("writes");

        let before = file_set(dir.path());
        assert_eq!(
            before.keys().collect::<Vec<_>>(),
            vec!["store.db", "store.db-shm", "store.db-wal"]
        );
        assert!(before["store.db-wal"].size > 0, "frames must be in the WAL");

        // The main file alone does not hold the rows: they live only in the WAL.
        let main_only = tempfile::tempdir().expect("tempdir");
        let main_only_path = main_only.path().join("store.db");
        std::fs::copy(&path, &main_only_path).expect("copy main file");
        assert!(row_ids(&snap(&main_only_path), "notes").is_empty());

        for _ in 0..3 {
            let s = snap(&path);
            assert_eq!(row_ids(&s, "notes"), vec!["notes/second", "notes/welcome"]);
            assert!(s.objects.contains_key("sqlite_master/table:notes"));
        }
        assert_eq!(file_set(dir.path()), before);

        // The writer still works after being observed, and its rows stay in the WAL.
        writer
            .execute("INSERT INTO notes VALUES ('third', 'x')", [])
            .expect("writer still writes");
        assert_eq!(row_ids(&snap(&path), "notes").len(), 3);
        drop(writer);
    }

    #[test]
    fn wal_database_without_wal_file_gets_none_created() {
        let (dir, path) = db("PRAGMA journal_mode=WAL;
             CREATE TABLE notes(slug TEXT PRIMARY KEY, body TEXT);
             INSERT INTO notes VALUES ('welcome', 'hello');");
        // Closing the last connection checkpointed and removed -wal and -shm,
        // but the header still says WAL.
        let before = file_set(dir.path());
        assert_eq!(before.keys().collect::<Vec<_>>(), vec!["store.db"]);
        assert_eq!(before["store.db"].bytes[18..20], [2, 2]);
        let s = snap(&path);
        assert_eq!(row_ids(&s, "notes"), vec!["notes/welcome"]);
        assert_eq!(file_set(dir.path()), before);
    }

    #[test]
    fn table_created_empty_is_observed_as_a_schema_create() {
        let (_dir, path) = db("CREATE TABLE notes(slug TEXT PRIMARY KEY);");
        let before = snap(&path);
        exec(&path, "CREATE TABLE x(a INTEGER);");
        let after = snap(&path);
        assert_eq!(
            changes(&before, &after),
            vec![("sqlite_master/table:x".to_string(), Op::Create, None)]
        );
    }

    #[test]
    fn schema_entries_cover_indexes_autoindexes_views_and_triggers() {
        let (_dir, path) = db("CREATE TABLE notes(slug TEXT PRIMARY KEY, body TEXT);
             CREATE INDEX idx_body ON notes(body);
             CREATE VIEW v AS SELECT slug FROM notes;
             CREATE TRIGGER t AFTER INSERT ON notes BEGIN SELECT 1; END;");
        let s = snap(&path);
        assert_eq!(
            ids(&s),
            vec![
                "sqlite_master/index:idx_body",
                "sqlite_master/index:sqlite_autoindex_notes_1",
                "sqlite_master/table:notes",
                "sqlite_master/trigger:t",
                "sqlite_master/view:v",
            ]
        );
        let table = &s.objects["sqlite_master/table:notes"];
        let sql = "CREATE TABLE notes(slug TEXT PRIMARY KEY, body TEXT)";
        assert_eq!(table, &ObjectState::whole(sql.as_bytes()));
        let before = s;
        exec(
            &path,
            "DROP INDEX idx_body; CREATE INDEX idx_body ON notes(slug);",
        );
        assert_eq!(
            changes(&before, &snap(&path)),
            vec![(
                "sqlite_master/index:idx_body".to_string(),
                Op::Update,
                Some(true)
            )]
        );
    }

    #[test]
    fn row_create_update_delete_are_told_apart() {
        let (_dir, path) = db(
            "CREATE TABLE notes(slug TEXT PRIMARY KEY, body TEXT, tag TEXT);
             INSERT INTO notes VALUES ('welcome', 'hi', NULL), ('old', 'bye', NULL);",
        );
        let s0 = snap(&path);
        exec(
            &path,
            "INSERT INTO notes VALUES ('fresh', 'new', NULL);
             DELETE FROM notes WHERE slug = 'old';
             UPDATE notes SET tag = 'x' WHERE slug = 'welcome';",
        );
        let s1 = snap(&path);
        assert_eq!(
            changes(&s0, &s1),
            vec![
                ("notes/fresh".to_string(), Op::Create, None),
                ("notes/old".to_string(), Op::Delete, None),
                ("notes/welcome".to_string(), Op::Update, Some(false)),
            ]
        );
        exec(
            &path,
            "UPDATE notes SET body = 'changed' WHERE slug = 'welcome';",
        );
        let s2 = snap(&path);
        assert_eq!(
            changes(&s1, &s2),
            vec![("notes/welcome".to_string(), Op::Update, Some(true))]
        );
        exec(&path, "UPDATE notes SET tag = NULL WHERE slug = 'welcome';");
        assert_eq!(
            changes(&s2, &snap(&path)),
            vec![("notes/welcome".to_string(), Op::Update, Some(true))]
        );
    }

    #[test]
    fn row_state_has_field_digests_for_non_null_columns_only() {
        let (_dir, path) = db(
            "CREATE TABLE notes(slug TEXT PRIMARY KEY, body TEXT, tag TEXT);
             INSERT INTO notes VALUES ('welcome', 'hi', NULL);",
        );
        let s = snap(&path);
        let row = &s.objects["notes/welcome"];
        assert_eq!(row.fields.keys().collect::<Vec<_>>(), vec!["body", "slug"]);

        // The canonical encoding, spelled out: per column in declared order,
        // u64-LE name length, name, storage-class tag, payload.
        fn text(buf: &mut Vec<u8>, s: &str) {
            buf.push(TAG_TEXT);
            buf.extend_from_slice(&(s.len() as u64).to_le_bytes());
            buf.extend_from_slice(s.as_bytes());
        }
        fn name(buf: &mut Vec<u8>, s: &str) {
            buf.extend_from_slice(&(s.len() as u64).to_le_bytes());
            buf.extend_from_slice(s.as_bytes());
        }
        let mut expected = Vec::new();
        name(&mut expected, "slug");
        text(&mut expected, "welcome");
        name(&mut expected, "body");
        text(&mut expected, "hi");
        name(&mut expected, "tag");
        expected.push(TAG_NULL);
        assert_eq!(row.digest, crate::digest_hex(&expected));
        assert_eq!(row.size, expected.len() as u64);
        let mut tagged = Vec::new();
        text(&mut tagged, "welcome");
        assert_eq!(
            row.fields["slug"],
            crate::digest_hex(&tagged)[..FIELD_DIGEST_CHARS]
        );
    }

    #[test]
    fn storage_class_change_is_an_update_even_when_values_print_alike() {
        let (_dir, path) = db("CREATE TABLE t(k TEXT PRIMARY KEY, v);
             INSERT INTO t VALUES ('a', 1);");
        let before = snap(&path);
        exec(&path, "UPDATE t SET v = 1.0 WHERE k = 'a';");
        let after = snap(&path);
        assert_eq!(
            changes(&before, &after),
            vec![("t/a".to_string(), Op::Update, Some(true))]
        );
        exec(&path, "UPDATE t SET v = '1' WHERE k = 'a';");
        assert_eq!(
            changes(&after, &snap(&path)),
            vec![("t/a".to_string(), Op::Update, Some(true))]
        );
    }

    #[test]
    fn composite_primary_key_is_joined_in_pk_order() {
        let (_dir, path) = db(
            "CREATE TABLE edges(src TEXT, dst TEXT, w REAL, PRIMARY KEY (dst, src));
             INSERT INTO edges VALUES ('a', 'b', 1.5), ('c', 'b', NULL);",
        );
        assert_eq!(
            row_ids(&snap(&path), "edges"),
            vec!["edges/b,a", "edges/b,c"]
        );
    }

    #[test]
    fn table_without_primary_key_is_keyed_by_rowid() {
        let (_dir, path) = db("CREATE TABLE log(msg TEXT);
             INSERT INTO log VALUES ('one'), ('two'), ('two');
             CREATE TABLE shadow(rowid TEXT, x);
             INSERT INTO shadow VALUES ('not a key', 1);");
        let s = snap(&path);
        assert_eq!(row_ids(&s, "log"), vec!["log/1", "log/2", "log/3"]);
        // A column named `rowid` hides the real rowid; `_rowid_` still reaches it.
        assert_eq!(row_ids(&s, "shadow"), vec!["shadow/1"]);
        assert_eq!(s.objects["log/2"].digest, s.objects["log/3"].digest);
        assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    }

    #[test]
    fn without_rowid_and_integer_primary_key_tables_use_their_key() {
        let (_dir, path) = db(
            "CREATE TABLE w(a INTEGER, b TEXT, PRIMARY KEY (b)) WITHOUT ROWID;
             INSERT INTO w VALUES (1, 'x');
             CREATE TABLE items(id INTEGER PRIMARY KEY, name TEXT);
             INSERT INTO items VALUES (42, 'answer');",
        );
        let s = snap(&path);
        assert_eq!(row_ids(&s, "w"), vec!["w/x"]);
        assert_eq!(row_ids(&s, "items"), vec!["items/42"]);
    }

    #[test]
    fn sqlite_sequence_rows_are_keyed_by_table_name() {
        let (_dir, path) = db(
            "CREATE TABLE items(id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT);
             INSERT INTO items(name) VALUES ('a'), ('b');",
        );
        let before = snap(&path);
        assert_eq!(row_ids(&before, "items"), vec!["items/1", "items/2"]);
        assert_eq!(
            row_ids(&before, "sqlite_sequence"),
            vec!["sqlite_sequence/items"]
        );
        assert!(
            before
                .objects
                .contains_key("sqlite_master/table:sqlite_sequence")
        );
        exec(
            &path,
            "DELETE FROM items WHERE id = 2; INSERT INTO items(name) VALUES ('c');",
        );
        assert_eq!(
            changes(&before, &snap(&path)),
            vec![
                ("items/2".to_string(), Op::Delete, None),
                ("items/3".to_string(), Op::Create, None),
                ("sqlite_sequence/items".to_string(), Op::Update, Some(false)),
            ]
        );
    }

    #[test]
    fn internal_stat_tables_are_schema_only() {
        let (_dir, path) = db("CREATE TABLE t(a TEXT PRIMARY KEY);
             INSERT INTO t VALUES ('x');
             ANALYZE;");
        let s = snap(&path);
        assert!(s.objects.contains_key("sqlite_master/table:sqlite_stat1"));
        assert!(row_ids(&s, "sqlite_stat1").is_empty());
    }

    #[test]
    fn awkward_table_and_column_names_are_quoted() {
        let (_dir, path) = db(
            r#"CREATE TABLE "my ""odd"" table"("select" TEXT PRIMARY KEY, "a b" INTEGER);
             INSERT INTO "my ""odd"" table" VALUES ('k1', 7);
             CREATE INDEX "idx ""q""" ON "my ""odd"" table"("a b");
             CREATE TABLE "order"(x);
             INSERT INTO "order" VALUES (1);"#,
        );
        let s = snap(&path);
        assert_eq!(
            row_ids(&s, r#"my "odd" table"#),
            vec![r#"my "odd" table/k1"#]
        );
        assert_eq!(row_ids(&s, "order"), vec!["order/1"]);
        assert!(s.objects.contains_key(r#"sqlite_master/index:idx "q""#));
        assert_eq!(
            s.objects[r#"my "odd" table/k1"#]
                .fields
                .keys()
                .collect::<Vec<_>>(),
            vec!["a b", "select"]
        );
        assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    }

    #[test]
    fn generated_columns_are_derived_so_not_encoded() {
        let (_dir, path) = db("CREATE TABLE g(k TEXT PRIMARY KEY, a INTEGER,
               b INTEGER GENERATED ALWAYS AS (a * 2) STORED,
               c INTEGER GENERATED ALWAYS AS (a * 3) VIRTUAL);
             INSERT INTO g(k, a) VALUES ('x', 1);");
        let s = snap(&path);
        assert!(s.warnings.is_empty(), "{:?}", s.warnings);
        assert_eq!(
            s.objects["g/x"].fields.keys().collect::<Vec<_>>(),
            vec!["a", "k"]
        );
    }

    #[test]
    fn key_values_render_by_storage_class() {
        let (_dir, path) = db(
            "CREATE TABLE r(k REAL PRIMARY KEY); INSERT INTO r VALUES (2.5), (3.0);
             CREATE TABLE b(k BLOB PRIMARY KEY); INSERT INTO b VALUES (X'00FF1a');
             CREATE TABLE n(k TEXT PRIMARY KEY, v); INSERT INTO n VALUES (NULL, 1);
             CREATE TABLE i(k INTEGER, PRIMARY KEY (k)) WITHOUT ROWID; INSERT INTO i VALUES (-7);",
        );
        let s = snap(&path);
        assert_eq!(row_ids(&s, "r"), vec!["r/2.5", "r/3"]);
        assert_eq!(row_ids(&s, "b"), vec!["b/00ff1a"]);
        assert_eq!(row_ids(&s, "n"), vec!["n/NULL"]);
        assert_eq!(row_ids(&s, "i"), vec!["i/-7"]);
    }

    #[test]
    fn ids_that_render_alike_are_suffixed_with_a_warning() {
        let (_dir, path) = db("CREATE TABLE n(k PRIMARY KEY, v);
             INSERT INTO n VALUES (NULL, 'a'), (NULL, 'b'), ('1', 'c'), (1, 'd');");
        let s = snap(&path);
        assert_eq!(row_ids(&s, "n"), vec!["n/1", "n/1#2", "n/NULL", "n/NULL#2"]);
        assert_eq!(s.warnings.len(), 1, "{:?}", s.warnings);
        assert!(s.warnings[0].contains("\"n\""), "{:?}", s.warnings);
        assert_eq!(s, snap(&path));
    }

    #[test]
    fn fts5_virtual_table_and_its_shadow_tables_are_read() {
        let (_dir, path) = db("CREATE VIRTUAL TABLE docs USING fts5(body);
             INSERT INTO docs(rowid, body) VALUES (5, 'hello world');");
        let s = snap(&path);
        assert!(s.warnings.is_empty(), "{:?}", s.warnings);
        assert_eq!(row_ids(&s, "docs"), vec!["docs/5"]);
        assert_eq!(row_ids(&s, "docs_content"), vec!["docs_content/5"]);
        assert!(s.objects.contains_key("sqlite_master/table:docs"));
    }

    #[test]
    fn unreadable_table_becomes_a_warning_and_the_rest_is_observed() {
        let (_dir, path) = db("CREATE TABLE notes(slug TEXT PRIMARY KEY);
             INSERT INTO notes VALUES ('welcome');
             PRAGMA writable_schema = ON;
             INSERT INTO sqlite_master(type, name, tbl_name, rootpage, sql)
               VALUES ('table', 'ghost', 'ghost', 0, 'CREATE VIRTUAL TABLE ghost USING nosuchmodule(a)');
             PRAGMA writable_schema = OFF;");
        let s = snap(&path);
        assert_eq!(row_ids(&s, "notes"), vec!["notes/welcome"]);
        assert!(s.objects.contains_key("sqlite_master/table:ghost"));
        assert!(row_ids(&s, "ghost").is_empty());
        assert_eq!(s.warnings.len(), 1, "{:?}", s.warnings);
        assert!(s.warnings[0].contains("ghost"), "{:?}", s.warnings);
        assert!(s.warnings[0].contains("nosuchmodule"), "{:?}", s.warnings);
    }

    #[test]
    fn snapshots_taken_while_a_writer_commits_are_consistent() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("busy.db");
        let writer = Connection::open(&path).unwrap();
        writer
            .execute_batch(
                "PRAGMA journal_mode=WAL; CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);",
            )
            .unwrap();
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = done.clone();
        let handle = std::thread::spawn(move || {
            for i in 1..=300 {
                writer
                    .execute("INSERT INTO t(id, v) VALUES (?1, 'x')", [i])
                    .unwrap();
                std::thread::sleep(std::time::Duration::from_micros(300));
            }
            flag.store(true, std::sync::atomic::Ordering::SeqCst);
        });
        let mut observer = SqliteObserver::new(&path);
        let mut last = 0;
        while !done.load(std::sync::atomic::Ordering::SeqCst) {
            let snapshot = observer.snapshot().unwrap();
            let rows: Vec<i64> = snapshot
                .objects
                .keys()
                .filter_map(|k| k.strip_prefix("t/"))
                .filter_map(|k| k.parse().ok())
                .collect();
            // Committed rows form a prefix 1..=n, and n never goes back.
            let n = rows.len() as i64;
            assert!(rows.iter().all(|r| *r >= 1 && *r <= n), "torn snapshot");
            assert!(n >= last);
            last = n;
        }
        handle.join().unwrap();
    }

    #[test]
    fn a_rollback_store_written_more_often_than_the_clock_settles_is_still_read() {
        // A busy indexer: a commit every 5 ms in rollback mode, so the file
        // is never 20 ms clear of its last write and only events can vouch
        // for a read. Each read attempt must be judged by the writes during
        // it, not by one that hit an earlier attempt.
        let (_dir, path) = db("PRAGMA journal_mode=DELETE;
             CREATE TABLE ticks(slot INTEGER PRIMARY KEY, pass INTEGER);");
        // The baseline comes before the writer starts, as an audit's does
        // before the server starts: a first read has no earlier events to
        // vouch for it.
        let mut observer = SqliteObserver::new(&path);
        let baseline = observer.observe(false);
        let writer = Connection::open(&path).expect("open");
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = done.clone();
        let handle = std::thread::spawn(move || {
            let mut pass = 0i64;
            while !flag.load(std::sync::atomic::Ordering::SeqCst) {
                pass += 1;
                writer
                    .execute(
                        "INSERT INTO ticks VALUES (?1 % 4, ?1)
                         ON CONFLICT(slot) DO UPDATE SET pass = excluded.pass",
                        [pass],
                    )
                    .expect("tick");
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
        });
        let mut failures = Vec::new();
        for _ in 0..30 {
            if let Err(e) = observer.observe(true) {
                failures.push(e.to_string());
            }
            std::thread::sleep(std::time::Duration::from_millis(3));
        }
        done.store(true, std::sync::atomic::Ordering::SeqCst);
        handle.join().expect("writer");
        assert!(baseline.is_ok(), "{baseline:?}");
        assert!(failures.is_empty(), "{failures:#?}");
    }

    #[test]
    fn snapshots_are_deterministic() {
        let (_dir, path) = db(
            "CREATE TABLE notes(slug TEXT PRIMARY KEY, body TEXT, n REAL, b BLOB);
             INSERT INTO notes VALUES ('welcome', 'hi', 0.1, X'01'), ('z', NULL, NULL, NULL);
             CREATE TABLE log(msg); INSERT INTO log VALUES ('a'), ('b');
             CREATE TABLE items(id INTEGER PRIMARY KEY AUTOINCREMENT);
             INSERT INTO items DEFAULT VALUES;",
        );
        let a = snap(&path);
        let b = snap(&path);
        assert_eq!(a, b);
        assert_eq!(
            serde_json::to_string(&a).expect("json"),
            serde_json::to_string(&b).expect("json")
        );
        // A separately built copy of the same content gives the same snapshot.
        let copy_dir = tempfile::tempdir().expect("tempdir");
        let copy = copy_dir.path().join("other.db");
        std::fs::copy(&path, &copy).expect("copy");
        assert_eq!(snap(&copy), a);
    }

    fn clock_snap(path: &Path, columns: &[&str]) -> Snapshot {
        let columns = columns
            .iter()
            .map(|c| ClockColumn::parse(c).expect("table.column"))
            .collect();
        SqliteObserver::new(path)
            .with_clock_columns(columns)
            .snapshot()
            .expect("snapshot")
    }

    const INSIGHTS: &str = "CREATE TABLE mcp_insights(id INTEGER PRIMARY KEY AUTOINCREMENT,
         insight TEXT NOT NULL, created_at TEXT DEFAULT CURRENT_TIMESTAMP);";

    #[test]
    fn a_declared_clock_column_does_not_make_digests_depend_on_the_time() {
        let (_a, early) = db(&format!(
            "{INSIGHTS} INSERT INTO mcp_insights(insight, created_at) VALUES ('low', '2026-01-01 10:00:00');"
        ));
        let (_b, late) = db(&format!(
            "{INSIGHTS} INSERT INTO mcp_insights(insight, created_at) VALUES ('low', '2026-11-30 19:21:47');"
        ));
        let before = file_set(early.parent().expect("dir"));
        // Undeclared, the two stamps are two different rows.
        assert_ne!(
            snap(&early).objects["mcp_insights/1"],
            snap(&late).objects["mcp_insights/1"]
        );
        // Declared (any ASCII case, as SQLite names compare), they are one.
        let declared = ["MCP_Insights.Created_At"];
        let a = clock_snap(&early, &declared);
        let b = clock_snap(&late, &declared);
        assert_eq!(a, b);
        assert!(
            a.objects["mcp_insights/1"]
                .fields
                .contains_key("created_at")
        );
        // The rest of the row still decides its digest.
        let (_c, other) = db(&format!(
            "{INSIGHTS} INSERT INTO mcp_insights(insight, created_at) VALUES ('high', '2026-01-01 10:00:00');"
        ));
        assert_ne!(
            clock_snap(&other, &declared).objects["mcp_insights/1"],
            a.objects["mcp_insights/1"]
        );
        // Observing with a declaration leaves the store as it was.
        assert_eq!(file_set(early.parent().expect("dir")), before);
    }

    #[test]
    fn a_value_that_is_not_a_time_in_a_clock_column_is_still_a_change() {
        let (_dir, path) = db(&format!(
            "{INSIGHTS} INSERT INTO mcp_insights(insight) VALUES ('low');"
        ));
        let declared = ["mcp_insights.created_at"];
        let stamped = clock_snap(&path, &declared);
        exec(
            &path,
            "UPDATE mcp_insights SET created_at = '2001-02-03T04:05:06.789Z'",
        );
        assert_eq!(changes(&stamped, &clock_snap(&path, &declared)), vec![]);
        for (sql, overwrite) in [
            ("UPDATE mcp_insights SET created_at = 'yesterday'", true),
            ("UPDATE mcp_insights SET created_at = 1700000000", true),
            ("UPDATE mcp_insights SET created_at = NULL", true),
        ] {
            let before = clock_snap(&path, &declared);
            exec(&path, sql);
            assert_eq!(
                changes(&before, &clock_snap(&path, &declared)),
                vec![("mcp_insights/1".to_string(), Op::Update, Some(overwrite))],
                "{sql}"
            );
        }
    }

    #[test]
    fn clock_text_covers_what_sqlite_date_functions_write_and_nothing_looser() {
        for (text, len) in [
            ("2026-11-30 19:21:47", Some(19)),
            ("2026-11-30", Some(10)),
            ("19:21:47", Some(8)),
            ("19:21", Some(5)),
            ("2026-11-30 19:21:47.123", Some(23)),
            ("2026-11-30T19:21:47.123Z", Some(24)),
            ("2026-11-30 19:21:47 and more", Some(19)),
            ("2026-11-30Z", Some(10)),
            ("2026-1-30", None),
            ("19h21", None),
            ("1700000000", None),
            ("", None),
        ] {
            assert_eq!(clock_text_len(text.as_bytes()), len, "{text:?}");
        }
    }

    #[test]
    fn clock_columns_parse_as_table_dot_column() {
        let column = ClockColumn::parse("main.t.created_at").expect("parses");
        assert_eq!(column.table, "main.t");
        assert_eq!(column.column, "created_at");
        assert_eq!(column.to_string(), "main.t.created_at");
        for bad in ["created_at", ".created_at", "t.", ""] {
            assert_eq!(ClockColumn::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn missing_database_is_an_empty_snapshot() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("not-yet.db");
        assert_eq!(snap(&path), Snapshot::default());
        assert!(!path.exists());
        assert_eq!(file_set(dir.path()), BTreeMap::new());
    }

    #[test]
    fn garbage_file_is_an_error_not_a_panic() {
        let dir = tempfile::tempdir().expect("tempdir");
        for (name, bytes) in [
            ("short.db", b"not a database".to_vec()),
            ("long.db", b"this is plainly not sqlite. ".repeat(200)),
        ] {
            let path = dir.path().join(name);
            std::fs::write(&path, &bytes).expect("write");
            let err = SqliteObserver::new(&path)
                .snapshot()
                .expect_err("garbage must not snapshot");
            match err {
                ObserveError::Sqlite { path: p, .. } => assert_eq!(p, path),
                other => panic!("unexpected error {other:?}"),
            }
            assert_eq!(std::fs::read(&path).expect("read"), bytes);
        }
    }

    fn facts_spec(table: &str, columns: &[&str]) -> FactsSpec {
        FactsSpec {
            store: "db".into(),
            table: table.into(),
            columns: columns.iter().map(|c| (*c).to_owned()).collect(),
        }
    }

    type Row = BTreeMap<String, serde_json::Value>;

    fn column(row: &Option<Row>, name: &str) -> Option<serde_json::Value> {
        row.as_ref().and_then(|r| r.get(name).cloned())
    }

    #[test]
    fn row_facts_name_rows_as_the_changes_do_and_follow_each_change() {
        let (dir, path) = db("PRAGMA journal_mode=WAL;
             CREATE TABLE contacts(id TEXT PRIMARY KEY, tenant_id TEXT, secret TEXT);
             CREATE TABLE log(n INTEGER PRIMARY KEY, tool TEXT);
             CREATE TABLE pairs(a TEXT, b INTEGER, v TEXT, PRIMARY KEY (a, b));
             CREATE TABLE other(k TEXT PRIMARY KEY);
             INSERT INTO contacts VALUES ('c_1', 'acme', 's1'), ('c_2', 'globex', 's2');
             INSERT INTO pairs VALUES ('x', 1, 'v');");
        let mut observer = SqliteObserver::new(&path).with_facts(vec![
            facts_spec("contacts", &["TENANT_ID", "nope"]),
            facts_spec("log", &["tool"]),
            facts_spec("pairs", &["v"]),
            facts_spec("missing", &["x"]),
        ]);
        let baseline = observer.observe(false).expect("baseline");
        assert!(baseline.rows.is_empty(), "a baseline lists no changes");
        assert_eq!(
            baseline.warnings,
            ["facts of table \"missing\" not read: no such table"]
        );
        exec(
            &path,
            "DELETE FROM contacts WHERE id = 'c_1';
             UPDATE contacts SET tenant_id = 'acme' WHERE id = 'c_2';
             INSERT INTO log(tool) VALUES ('delete_contact');
             UPDATE pairs SET v = 'w';
             INSERT INTO other VALUES ('no facts declared');",
        );
        let before = file_set(dir.path());
        let seen = observer.observe(true).expect("observed");
        let objects: Vec<&str> = seen.rows.iter().map(|r| r.object.as_str()).collect();
        assert_eq!(
            objects,
            ["contacts/c_1", "contacts/c_2", "log/1", "pairs/x,1"],
            "every changed row of a declared table, named as its change: {:?}",
            seen.delta
        );
        let changed: Vec<&str> = seen
            .delta
            .changes
            .iter()
            .map(|c| c.object.as_str())
            .collect();
        assert!(objects.iter().all(|o| changed.contains(o)));
        let [deleted, moved, logged, pair] = &seen.rows[..] else {
            panic!("four rows: {:?}", seen.rows);
        };
        // Declared in any case, kept under the declaration's name.
        assert_eq!(column(&deleted.before, "TENANT_ID"), Some("acme".into()));
        assert!(deleted.after.is_none(), "a deleted row has no after");
        assert_eq!(column(&moved.before, "TENANT_ID"), Some("globex".into()));
        assert_eq!(column(&moved.after, "TENANT_ID"), Some("acme".into()));
        assert!(
            moved.after.as_ref().is_some_and(|r| r.len() == 1),
            "only declared columns the table has: {:?}",
            moved.after
        );
        assert!(logged.before.is_none(), "a created row has no before");
        assert_eq!(column(&logged.after, "tool"), Some("delete_contact".into()));
        assert_eq!(column(&pair.before, "v"), Some("v".into()));
        assert_eq!(column(&pair.after, "v"), Some("w".into()));
        assert_eq!(seen.warnings.len(), 1, "{:?}", seen.warnings);
        // Reading the facts left the store as it was.
        assert_eq!(file_set(dir.path()), before);
        let again = observer.observe(true).expect("observed");
        assert!(again.delta.is_empty() && again.rows.is_empty());
    }

    #[test]
    fn row_facts_of_rows_whose_ids_collide_carry_the_changes_suffix() {
        let (_dir, path) = db("CREATE TABLE n(k PRIMARY KEY, v);
             INSERT INTO n VALUES ('1', 'text');");
        let mut observer = SqliteObserver::new(&path).with_facts(vec![facts_spec("n", &["v"])]);
        assert!(observer.observe(false).is_ok());
        exec(&path, "INSERT INTO n VALUES (1, 'integer');");
        let seen = observer.observe(true).expect("observed");
        let created: Vec<&str> = seen
            .delta
            .changes
            .iter()
            .filter(|c| c.op == Op::Create)
            .map(|c| c.object.as_str())
            .collect();
        assert_eq!(created, ["n/1#2"]);
        assert_eq!(seen.rows.len(), 1, "{:?}", seen.rows);
        assert_eq!(seen.rows[0].object, "n/1#2");
        assert_eq!(column(&seen.rows[0].after, "v"), Some("integer".into()));
    }

    #[test]
    fn row_facts_come_with_the_first_look_and_with_a_store_that_went_away() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("later.db");
        let mut observer =
            SqliteObserver::new(&path).with_facts(vec![facts_spec("notes", &["body", "n"])]);
        assert!(observer.observe(true).is_ok_and(|o| o.rows.is_empty()));
        exec(
            &path,
            "CREATE TABLE notes(slug TEXT PRIMARY KEY, body BLOB, n REAL);
             INSERT INTO notes VALUES ('a', X'00ff', 2.5);",
        );
        let created = observer.observe(true).expect("observed");
        assert_eq!(created.rows.len(), 1);
        assert_eq!(column(&created.rows[0].after, "body"), Some("00ff".into()));
        assert_eq!(column(&created.rows[0].after, "n"), Some(2.5.into()));
        std::fs::remove_file(&path).expect("remove");
        let gone = observer.observe(true).expect("observed");
        assert_eq!(gone.rows.len(), 1, "{:?}", gone.rows);
        assert_eq!(gone.rows[0].object, "notes/a");
        assert_eq!(column(&gone.rows[0].before, "body"), Some("00ff".into()));
        assert!(gone.rows[0].after.is_none());
    }
}
#[cfg(test)]
mod prop_tests;

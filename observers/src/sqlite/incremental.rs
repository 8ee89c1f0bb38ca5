//! The changes between two page images, read where the pages changed.
//!
//! The reference of an observation is not a list of rows but the previous
//! page image itself ([`Images`]): when pages change, the rows on them are
//! read from both images through SQLite, with the same plans and encoding as
//! a full read, and compared by id. Which rows: every table b-tree is walked
//! through its interior pages (about one page in a hundred), giving each leaf
//! its table; a changed leaf gives the rowid range it held before and holds
//! now; a changed overflow page gives the row it continues. Memory is a few
//! bytes per page, plus, for a table whose ids are not its rowids, an 8-byte
//! hash per row, which is how two rows rendering to one id (and the `#n`
//! suffix a full read would give them) are noticed.
//!
//! Whatever does not fit that scheme is read whole, from both images: a
//! table whose plan or root page changed, one that appeared or went away, a
//! WITHOUT ROWID or virtual table, one whose ids collide. A table name with a
//! `/` in it (whose ids could collide with another table's), or a b-tree that
//! does not parse, makes the whole store be read that way.

use std::collections::hash_map::DefaultHasher;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::{Hash, Hasher};
use std::path::Path;

use rusqlite::{Connection, OpenFlags};

use super::btree::{self, Malformed, OverflowMap, PageMap};
use super::image::Images;
use super::rows::{
    ClockColumn, TableEntry, TablePlan, insert_unique, plan_table, read_rows, read_sample,
    read_schema, read_snapshot, read_table,
};
use crate::{Change, Delta, ObjectState, ObserveError, Snapshot, diff};

/// What the observer knows of one table between observations.
#[derive(Debug)]
struct Table {
    entry: TableEntry,
    plan: Result<TablePlan, String>,
    /// How many rows render to each id (by hash), for tables whose ids are
    /// not rowids; `None` when the table is read whole anyway.
    ids: Option<HashMap<u64, u32>>,
    /// Read whole on every change (see the module documentation).
    whole: bool,
    warning: Option<String>,
}

/// The incremental state of a SQLite observer.
#[derive(Debug)]
pub(crate) struct Incremental {
    pub(crate) images: Images,
    tables: BTreeMap<String, Table>,
    schema: BTreeMap<String, ObjectState>,
    map: PageMap,
    overflow: OverflowMap,
    /// A stable number per table name (page maps and overflow chains name
    /// tables by it), never reused.
    registry: HashMap<String, u32>,
    names: Vec<String>,
    /// Everything is read whole, on both images (see the module docs).
    legacy: bool,
}

fn id_hash(id: &str) -> u64 {
    let mut h = DefaultHasher::new();
    id.hash(&mut h);
    h.finish()
}

/// Opens an image read-only and immutable: nothing else writes it, so
/// SQLite needs no lock and no journal.
pub(crate) fn open_image(image: &Path, store: &Path) -> Result<Connection, ObserveError> {
    let uri = format!("file:{}?immutable=1", image.display());
    Connection::open_with_flags(
        uri,
        OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|source| ObserveError::Sqlite {
        path: store.to_path_buf(),
        source,
    })
}

fn sql_err(store: &Path) -> impl Fn(rusqlite::Error) -> ObserveError + '_ {
    move |source| ObserveError::Sqlite {
        path: store.to_path_buf(),
        source,
    }
}

impl Incremental {
    /// The state after a first read: schema, plans, the page map.
    pub(crate) fn build(
        images: Images,
        store: &Path,
        clock: &[ClockColumn],
    ) -> Result<Self, ObserveError> {
        let conn = open_image(&images.current(), store)?;
        let (schema, entries) = read_schema(&conn).map_err(sql_err(store))?;
        let mut state = Self {
            images,
            tables: BTreeMap::new(),
            schema,
            map: PageMap::default(),
            overflow: OverflowMap::new(),
            registry: HashMap::new(),
            names: Vec::new(),
            legacy: entries.iter().any(|t| t.name.contains('/')),
        };
        for entry in entries {
            let mut table = plan_only(&conn, entry, clock);
            inspect(&conn, &mut table, clock);
            state.tables.insert(table.entry.name.clone(), table);
        }
        if state.walk(true).is_err() {
            state.legacy = true;
        }
        Ok(state)
    }

    #[cfg(test)]
    pub(crate) fn incremental(&self) -> bool {
        !self.legacy
    }

    /// Whether the current image has an observed table of this name (as
    /// SQLite compares names: without regard to ASCII case).
    pub(crate) fn has_table(&self, name: &str) -> bool {
        self.tables.keys().any(|t| t.eq_ignore_ascii_case(name))
    }

    /// Every warning that holds now, in table order.
    pub(crate) fn warnings(&self) -> Vec<String> {
        self.tables
            .values()
            .filter_map(|t| t.warning.clone())
            .collect()
    }

    /// The whole current image as a snapshot (for listing, and for a first
    /// observation asked to diff against nothing).
    pub(crate) fn snapshot(
        &self,
        store: &Path,
        clock: &[ClockColumn],
    ) -> Result<Snapshot, ObserveError> {
        let conn = open_image(&self.images.current(), store)?;
        read_snapshot(&conn, clock).map_err(sql_err(store))
    }

    /// The schema's objects and, of each table, its rows when it has no
    /// more than `per_group`, else `per_group` of them: ids as a snapshot
    /// names them (see [`super::rows::read_sample`]).
    pub(crate) fn sample(
        &self,
        store: &Path,
        clock: &[ClockColumn],
        per_group: usize,
    ) -> Result<BTreeMap<String, ObjectState>, ObserveError> {
        let conn = open_image(&self.images.current(), store)?;
        read_sample(&conn, clock, per_group).map_err(sql_err(store))
    }

    /// Every observed table's declared columns, read from the current image.
    pub(crate) fn shapes(&self, store: &Path) -> Result<Vec<crate::TableShape>, ObserveError> {
        let conn = open_image(&self.images.current(), store)?;
        let mut out = Vec::new();
        for name in self.tables.keys() {
            out.push(super::rows::read_shape(&conn, name).map_err(sql_err(store))?);
        }
        Ok(out)
    }

    fn usable(&self) -> u64 {
        let mut page = Vec::new();
        let reserved = match self.images.page(true, 1, &mut page) {
            Ok(true) => u64::from(page.get(20).copied().unwrap_or(0)),
            _ => 0,
        };
        u64::from(self.images.page_size).saturating_sub(reserved)
    }

    /// Walks every observed rowid table of the current image into the page
    /// map (and, with `chains`, reads the leaves for overflow chains).
    fn walk(&mut self, chains: bool) -> Result<(), Malformed> {
        let usable = self.usable();
        if usable < 480 {
            return Err(Malformed);
        }
        let mut map = PageMap::default();
        let roots: Vec<(String, i64)> = self
            .tables
            .values()
            .filter(|t| t.entry.rootpage > 0 && t.plan.is_ok())
            .map(|t| (t.entry.name.clone(), t.entry.rootpage))
            .collect();
        for (name, root) in roots {
            let slot = self.slot_of(&name);
            let root = u32::try_from(root).map_err(|_| Malformed)?;
            let overflow = if chains {
                Some(&mut self.overflow)
            } else {
                None
            };
            btree::walk(&self.images, true, root, slot, usable, &mut map, overflow)?;
        }
        self.map = map;
        Ok(())
    }

    fn slot_of(&mut self, name: &str) -> u32 {
        if let Some(&slot) = self.registry.get(name) {
            return slot;
        }
        let slot = self.names.len() as u32;
        self.registry.insert(name.to_owned(), slot);
        self.names.push(name.to_owned());
        slot
    }

    /// The changes since the previous image, given the pages that differ.
    pub(crate) fn delta(
        &mut self,
        behind: &BTreeSet<u32>,
        store: &Path,
        clock: &[ClockColumn],
    ) -> Result<Delta, ObserveError> {
        let old = open_image(&self.images.previous(), store)?;
        let new = open_image(&self.images.current(), store)?;
        let (schema, entries) = read_schema(&new).map_err(sql_err(store))?;
        if self.legacy || entries.iter().any(|t| t.name.contains('/')) {
            return self.whole_store(&old, &new, store, clock);
        }
        let mut changes = diff(&snapshot_of(&self.schema), &snapshot_of(&schema)).changes;
        self.schema = schema;
        let old_map = std::mem::take(&mut self.map);
        let mut old_tables = std::mem::take(&mut self.tables);
        for entry in entries {
            let table = plan_only(&new, entry, clock);
            self.tables.insert(table.entry.name.clone(), table);
        }
        if self.walk(false).is_err() {
            self.tables = old_tables;
            return self.whole_store(&old, &new, store, clock);
        }
        let touched = match self.touched(behind, &old_map) {
            Ok(t) => t,
            Err(Malformed) => return self.whole_store(&old, &new, store, clock),
        };
        let names: BTreeSet<String> = old_tables
            .keys()
            .chain(self.tables.keys())
            .cloned()
            .collect();
        for name in names {
            let was = old_tables.remove(&name);
            let ranges = touched.get(&name);
            changes.extend(self.table_changes(
                &name,
                was,
                ranges,
                !behind.is_empty(),
                &old,
                &new,
                clock,
            ));
        }
        changes.sort_by(|a, b| a.object.cmp(&b.object));
        Ok(Delta { changes })
    }

    /// Per table name: the rowid ranges whose rows may have changed (an
    /// inverted range: the table must be read whole).
    fn touched(
        &mut self,
        behind: &BTreeSet<u32>,
        old_map: &PageMap,
    ) -> Result<BTreeMap<String, Vec<(i64, i64)>>, Malformed> {
        let usable = self.usable();
        let mut pages: BTreeSet<u32> = behind.clone();
        let top = old_map.owners.len().max(self.map.owners.len());
        for p in 1..top as u32 {
            if old_map.get(p) != self.map.get(p) {
                pages.insert(p);
            }
        }
        let mut out: BTreeMap<String, Vec<(i64, i64)>> = BTreeMap::new();
        let mut buffer = Vec::new();
        for &page in &pages {
            for (current, owner) in [(false, old_map.get(page)), (true, self.map.get(page))] {
                if owner.slot == 0 || !owner.leaf {
                    continue;
                }
                let slot = owner.slot - 1;
                let name = self.names.get(slot as usize).ok_or(Malformed)?.clone();
                if !self
                    .images
                    .page(current, page, &mut buffer)
                    .map_err(|_| Malformed)?
                {
                    continue;
                }
                let node = btree::parse(&buffer, page)?;
                let ranges = out.entry(name).or_default();
                if !node.table {
                    ranges.push((i64::MAX, i64::MIN));
                    continue;
                }
                if let Some(range) = btree::leaf_range(&buffer, page, usable)? {
                    ranges.push(range);
                }
                if current {
                    btree::record_chains(
                        &self.images,
                        true,
                        &node,
                        &buffer,
                        usable,
                        slot,
                        &mut self.overflow,
                    )?;
                }
            }
            if let Some(&(slot, rowid)) = self.overflow.get(&page)
                && let Some(name) = self.names.get(slot as usize)
            {
                let range = if rowid == i64::MIN {
                    (i64::MAX, i64::MIN)
                } else {
                    (rowid, rowid)
                };
                out.entry(name.clone()).or_default().push(range);
            }
        }
        Ok(out)
    }

    /// The changes to one table: none, those in its touched ranges, or a
    /// whole read of both images.
    #[allow(clippy::too_many_arguments)]
    fn table_changes(
        &mut self,
        name: &str,
        was: Option<Table>,
        ranges: Option<&Vec<(i64, i64)>>,
        any_page: bool,
        old: &Connection,
        new: &Connection,
        clock: &[ClockColumn],
    ) -> Vec<Change> {
        let Some(table) = self.tables.get_mut(name) else {
            // Dropped: every row it had is gone.
            return whole_diff(name, was.is_some(), old, new, clock, None);
        };
        let Some(was) = was else {
            return whole_diff(name, false, old, new, clock, Some(table));
        };
        let virtual_table = table.entry.rootpage <= 0;
        let same = was.entry == table.entry && was.plan == table.plan;
        if !same || was.whole && (ranges.is_some() || virtual_table && any_page) {
            return whole_diff(name, true, old, new, clock, Some(table));
        }
        table.ids = was.ids;
        table.whole = was.whole;
        table.warning = was.warning;
        let (Some(ranges), Ok(plan)) = (ranges, &table.plan) else {
            return Vec::new();
        };
        let spans = merge(ranges);
        if spans.is_empty() || plan.rowid.is_none() {
            return whole_diff(name, true, old, new, clock, Some(table));
        }
        match range_diff(plan, &spans, old, new, table.ids.as_mut()) {
            Some(changes) => changes,
            None => whole_diff(name, true, old, new, clock, Some(table)),
        }
    }

    /// Reads every table of both images and diffs them: the fallback that
    /// is always right.
    fn whole_store(
        &mut self,
        old: &Connection,
        new: &Connection,
        store: &Path,
        clock: &[ClockColumn],
    ) -> Result<Delta, ObserveError> {
        let before = read_snapshot(old, clock).map_err(sql_err(store))?;
        let after = read_snapshot(new, clock).map_err(sql_err(store))?;
        let (schema, entries) = read_schema(new).map_err(sql_err(store))?;
        self.schema = schema;
        self.tables.clear();
        for entry in entries {
            let mut table = plan_only(new, entry, clock);
            table.whole = true;
            self.tables.insert(table.entry.name.clone(), table);
        }
        for warning in &after.warnings {
            for (name, table) in self.tables.iter_mut() {
                if warning.starts_with(&format!("table {name:?}")) {
                    table.warning = Some(warning.clone());
                }
            }
        }
        self.legacy = true;
        Ok(diff(&before, &after))
    }
}

/// A table's plan, and whether it must be read whole (no plan, no usable
/// rowid, no b-tree of its own); nothing is read.
fn plan_only(conn: &Connection, entry: TableEntry, clock: &[ClockColumn]) -> Table {
    let plan = plan_table(conn, &entry.name, clock);
    let whole = match &plan {
        Ok(plan) => plan.rowid.is_none() || entry.rootpage <= 0,
        Err(_) => true,
    };
    let warning = plan
        .as_ref()
        .err()
        .map(|reason| format!("table {:?} not observed: {reason}", entry.name));
    Table {
        entry,
        plan,
        ids: None,
        whole,
        warning,
    }
}

/// On a first read: whether the table can be read at all (the warning a
/// full read would give), and for tables whose ids are not rowids, how
/// many rows render to each id.
fn inspect(conn: &Connection, table: &mut Table, clock: &[ClockColumn]) {
    let Ok(plan) = table.plan.clone() else {
        return;
    };
    if table.whole {
        let mut objects = BTreeMap::new();
        table.warning = read_table(conn, &table.entry.name, clock, &mut objects);
        return;
    }
    if plan.unique_ids {
        if let Err(e) = conn.prepare(&plan.select) {
            table.warning = Some(format!("table {:?} not observed: {e}", table.entry.name));
            table.whole = true;
        }
        return;
    }
    let mut objects = BTreeMap::new();
    table.warning = read_table(conn, &table.entry.name, clock, &mut objects);
    count_ids(table, &objects);
}

/// Sets the id counts of a table read whole into `objects` (whose ids a
/// collision would have suffixed, and `warning` then says so).
fn count_ids(table: &mut Table, objects: &BTreeMap<String, ObjectState>) {
    let rangeable = table
        .plan
        .as_ref()
        .is_ok_and(|p| p.rowid.is_some() && table.entry.rootpage > 0);
    table.whole = !rangeable || table.warning.is_some();
    table.ids = None;
    if table.whole || table.plan.as_ref().is_ok_and(|p| p.unique_ids) {
        return;
    }
    let mut ids = HashMap::with_capacity(objects.len());
    for id in objects.keys() {
        *ids.entry(id_hash(id)).or_insert(0u32) += 1;
    }
    table.ids = Some(ids);
}

/// Both images' rows of a table, read whole and diffed by id; the table's
/// state is set from the new side.
fn whole_diff(
    name: &str,
    in_old: bool,
    old: &Connection,
    new: &Connection,
    clock: &[ClockColumn],
    table: Option<&mut Table>,
) -> Vec<Change> {
    let mut before = BTreeMap::new();
    let mut after = BTreeMap::new();
    if in_old {
        let _ = read_table(old, name, clock, &mut before);
    }
    if let Some(table) = table {
        table.warning = read_table(new, name, clock, &mut after);
        count_ids(table, &after);
    }
    diff(
        &Snapshot {
            objects: before,
            warnings: Vec::new(),
        },
        &Snapshot {
            objects: after,
            warnings: Vec::new(),
        },
    )
    .changes
}

/// Sorted, merged rowid ranges; empty when some range stands for "the
/// whole table" (an inverted one).
fn merge(ranges: &[(i64, i64)]) -> Vec<(i64, i64)> {
    if ranges.iter().any(|(a, b)| a > b) {
        return Vec::new();
    }
    let mut sorted = ranges.to_vec();
    sorted.sort_unstable();
    let mut out: Vec<(i64, i64)> = Vec::new();
    for (a, b) in sorted {
        match out.last_mut() {
            Some(last) if a <= last.1.saturating_add(1) => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

/// The rows of `spans` read from both images and diffed by id. `None` when
/// the table cannot be read this way now (two rows rendering alike, a read
/// error): the caller reads it whole.
fn range_diff(
    plan: &TablePlan,
    spans: &[(i64, i64)],
    old: &Connection,
    new: &Connection,
    ids: Option<&mut HashMap<u64, u32>>,
) -> Option<Vec<Change>> {
    let side = |conn: &Connection| -> Option<BTreeMap<String, ObjectState>> {
        let mut rows = Vec::new();
        for &span in spans {
            read_rows(conn, plan, Some(span), &mut rows).ok()?;
        }
        let mut objects = BTreeMap::new();
        for (id, state) in rows {
            if !insert_unique(&mut objects, id, state) {
                return None;
            }
        }
        Some(objects)
    };
    let before = side(old)?;
    let after = side(new)?;
    let changes = diff(&snapshot_of(&before), &snapshot_of(&after)).changes;
    if let Some(ids) = ids {
        for change in &changes {
            let key = id_hash(&change.object);
            match change.op {
                crate::Op::Create => {
                    let count = ids.entry(key).or_insert(0);
                    *count += 1;
                    if *count > 1 {
                        return None;
                    }
                }
                crate::Op::Delete => {
                    if let Some(count) = ids.get_mut(&key) {
                        *count = count.saturating_sub(1);
                        if *count == 0 {
                            ids.remove(&key);
                        }
                    }
                }
                crate::Op::Update => {}
            }
        }
    }
    Some(changes)
}

fn snapshot_of(objects: &BTreeMap<String, ObjectState>) -> Snapshot {
    Snapshot {
        objects: objects.clone(),
        warnings: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_merge_and_an_inverted_one_means_whole() {
        assert_eq!(
            merge(&[(5, 9), (1, 3), (4, 4), (20, 30)]),
            vec![(1, 9), (20, 30)]
        );
        assert!(merge(&[(1, 2), (i64::MAX, i64::MIN)]).is_empty());
    }
}

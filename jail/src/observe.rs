//! Observe: the stores as every command sees them, out of band.
//!
//! Takes one [`Observer`] per declared store plus the jail-wide one, and
//! gives, at each moment a command asks, the changes since the moment
//! before as ledger [`Effect`]s, with the declared row facts of the rows
//! among them ([`Changes`]). It also keeps what observers warn about (a
//! malformed line is seen by every snapshot until it is fixed) so each
//! warning becomes a finding once, and it probes the objects a call touched
//! or the stores held to begin with.
//!
//! How a call is observed — the moment before it, the settle after its
//! answer, the moment after — is [`around`]'s, the same for the audit,
//! agent runs and the proxy; what the server changes with no call in flight
//! (its background, learnt in idle controls) is [`background`]'s.

mod around;
mod background;

use std::collections::BTreeSet;
use std::time::Duration;

use witness_model::agent::case::FactsSpec;
use witness_model::agent::trace::RowFacts;
use witness_model::audit::{Effect, Finding, FindingKind, JAIL_STORE, ProbeRecord};
use witness_observers::{Budget, Observer};
use witness_probes::{ObservedObject, Probe, StorePath};

use crate::{Jail, JailedStore, StoreKind};

pub use around::{Changes, Settle};
pub use background::{MAX_IDLE_WINDOW, Previous, Window, idle_window};

/// Why the stores could not be observed: the store whose snapshot failed,
/// and the observer's reason. Reports say `cannot observe the stores: {this}`.
#[derive(Debug, thiserror::Error)]
#[error("{store}: {source}")]
pub struct ObserveError {
    pub store: String,
    #[source]
    pub source: witness_observers::ObserveError,
}

/// How the stores are observed: the quiet window that ends a settle early,
/// and what one observation may cost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ObserveOptions {
    /// A settle ends once every store has seen no write for this long after
    /// the response (as file-system events tell), or at `settle`, whichever
    /// comes first (see [`Settle`]).
    pub quiet: Duration,
    pub budget: witness_observers::Budget,
}

impl ObserveOptions {
    /// The default quiet window ([`Settle::QUIET`]).
    pub const QUIET: Duration = Settle::QUIET;
}

impl Default for ObserveOptions {
    fn default() -> Self {
        Self {
            quiet: Self::QUIET,
            budget: witness_observers::Budget::DEFAULT,
        }
    }
}

/// One observed store and what the audit last saw of it.
struct Observed {
    name: String,
    observer: Box<dyn Observer>,
    /// Warnings already seen, reported or about to be.
    warned: BTreeSet<String>,
    /// Warnings not yet reported.
    fresh: Vec<String>,
}

/// Every store a command watches, in the order their changes are listed.
/// The audit, agent runs and the proxy all observe through one, the same
/// way ([`around`]).
pub struct ObservedSet {
    stores: Vec<Observed>,
    /// What the idle controls learnt ([`background`]).
    background: background::Background,
    /// The decoys of the jail this set was made for (`for_jail`): writes
    /// the server attempted on the stores' originals.
    originals: Option<crate::decoy::OriginalWrites>,
}

/// The most objects of one table (or object kind) of one store offered to
/// the planner as real values.
pub const SAMPLE_PER_GROUP: usize = 1_000;

impl ObservedSet {
    /// Observers in the given order, each starting from an empty store.
    pub fn new(observers: Vec<(String, Box<dyn Observer>)>) -> Self {
        let stores = observers
            .into_iter()
            .map(|(name, observer)| Observed {
                name,
                observer,
                warned: BTreeSet::new(),
                fresh: Vec::new(),
            })
            .collect();
        Self {
            stores,
            background: background::Background::default(),
            originals: None,
        }
    }

    /// The paths of the stores' originals the server wrote since this was
    /// last asked (the jail's one comparison of its decoys,
    /// `Jail::original_writes`): empty for a set not made for a jail, and
    /// where no decoy could be placed. The proxy and agent runs ask here,
    /// right after a call's settled moment, as the audit asks its jail.
    pub fn original_writes(&mut self) -> Vec<String> {
        self.originals
            .as_ref()
            .map(crate::decoy::OriginalWrites::take)
            .unwrap_or_default()
    }

    /// An observer for every jailed store, then the jail-wide one over the
    /// rest of the jail (HOME, TMPDIR, the working directory): a change there
    /// is an effect outside every declared store (EFF-05). `excluded` are the
    /// jail's directories the stores' own observers already cover. `facts`
    /// are the row facts to read of every changed row, each of the SQLite
    /// store it names (a spec for a store that is not one reads nothing).
    pub fn for_jail(jail: &Jail, excluded: &[String], budget: Budget, facts: &[FactsSpec]) -> Self {
        let mut observers: Vec<(String, Box<dyn Observer>)> = jail
            .stores
            .iter()
            .map(|s| {
                let facts = facts
                    .iter()
                    .filter(|f| f.store == s.spec.name)
                    .cloned()
                    .collect();
                (s.spec.name.clone(), observer_for(s, budget, facts))
            })
            .collect();
        // The decoys are the originals' stand-ins, compared on their own
        // (`Jail::original_writes`): a write there is an attempt on the
        // user's data, never an effect inside the jail.
        let mut jail_observer = witness_observers::fs::FsObserver::new(jail.root())
            .with_budget(budget)
            .exclude(crate::decoy::DIR);
        for path in excluded {
            jail_observer = jail_observer.exclude(path);
        }
        observers.push((JAIL_STORE.to_owned(), Box::new(jail_observer)));
        let mut set = Self::new(observers);
        set.originals = Some(jail.original_writes_handle());
        set
    }

    /// The first look at every store: the reference later changes are
    /// measured from. Nothing is listed as changed (the stores were not
    /// empty before, they were unknown).
    pub fn baseline(&mut self) -> Result<(), ObserveError> {
        self.observe(false, &mut Changes::default())
    }

    /// A moment: observes every store, appends the changes since the last
    /// moment to `changes`, and makes what was seen the reference. Stops at
    /// the first store that cannot be read: the changes of the stores read
    /// before it stay appended, as a call's record shows them.
    pub fn moment(&mut self, changes: &mut Changes) -> Result<(), ObserveError> {
        self.observe(true, changes)
    }

    fn observe(&mut self, diff: bool, changes: &mut Changes) -> Result<(), ObserveError> {
        for o in &mut self.stores {
            let seen = o.observer.observe(diff).map_err(|source| ObserveError {
                store: o.name.clone(),
                source,
            })?;
            let effects = seen.delta.changes.iter().map(|c| effect_of(&o.name, c));
            changes.effects.extend(effects);
            changes
                .rows
                .extend(seen.rows.into_iter().map(|row| RowFacts {
                    store: o.name.clone(),
                    object: row.object,
                    before: row.before,
                    after: row.after,
                }));
            for warning in seen.warnings {
                if o.warned.insert(warning.clone()) {
                    o.fresh.push(warning);
                }
            }
        }
        Ok(())
    }

    /// Reports each warning not reported yet, as a finding with the call it
    /// first appeared after (`None`: before any call, or at shutdown).
    pub fn report_warnings(&mut self, findings: &mut Vec<Finding>, call: Option<u32>) {
        for o in &mut self.stores {
            for warning in o.fresh.drain(..) {
                findings.push(Finding {
                    kind: FindingKind::ObserverWarning,
                    detail: format!("store {}: {warning}", o.name),
                    call,
                });
            }
        }
    }

    /// Of each store named in `stores`, the objects the last observation
    /// saw, as `(store, object)`: every one of a table (or object kind) of
    /// no more than [`SAMPLE_PER_GROUP`], and that many of a larger one.
    /// The planner's real values; a store of a million rows offers a few
    /// thousand, read without holding the million.
    pub fn sample(&mut self, stores: &[&str]) -> Result<Vec<(String, String)>, ObserveError> {
        let mut out = Vec::new();
        for o in self
            .stores
            .iter_mut()
            .filter(|o| stores.contains(&o.name.as_str()))
        {
            let name = o.name.clone();
            o.observer
                .sample(SAMPLE_PER_GROUP, &mut |id| {
                    out.push((name.clone(), id.to_owned()))
                })
                .map_err(|source| ObserveError {
                    store: o.name.clone(),
                    source,
                })?;
        }
        Ok(out)
    }

    /// Of each store named in `stores`, the declared shape of every table
    /// it observes (see [`witness_observers::Observer::tables`]): schema,
    /// never a row's value.
    pub fn tables(
        &mut self,
        stores: &[&str],
    ) -> Result<Vec<witness_observers::TableShape>, ObserveError> {
        let mut out = Vec::new();
        for o in self
            .stores
            .iter_mut()
            .filter(|o| stores.contains(&o.name.as_str()))
        {
            out.extend(o.observer.tables().map_err(|source| ObserveError {
                store: o.name.clone(),
                source,
            })?);
        }
        Ok(out)
    }

    /// Every object the last observations saw that `probe` covers, as
    /// `(store, object)`; nothing is listed for a probe that covers nothing.
    pub fn present(&mut self, probe: &dyn Probe) -> Result<Vec<(String, String)>, ObserveError> {
        let mut out = Vec::new();
        if !probe.covers_any() {
            return Ok(out);
        }
        for o in &mut self.stores {
            let name = o.name.clone();
            let mut visit = |id: &str| {
                let object = ObservedObject { store: &name, id };
                if probe.covers(&object) {
                    out.push((name.clone(), id.to_owned()));
                }
            };
            o.observer
                .present(&mut visit)
                .map_err(|source| ObserveError {
                    store: o.name.clone(),
                    source,
                })?;
        }
        Ok(out)
    }
}

/// What of the jail the stores' own observers cover, relative to the jail
/// and sorted: what the jail-wide observer leaves out. Only the store
/// itself: a file store's file (and a database's `-wal`, `-shm` and
/// `-journal`, which its observer reads as part of it), a tree store's tree,
/// a PostgreSQL store's cluster directory. What a server writes beside its
/// store, in the folder the jail made for it, is the jail-wide observer's
/// to see: no folder is blind.
pub fn store_paths(stores: &[JailedStore]) -> Vec<String> {
    let mut paths = Vec::new();
    for s in stores {
        let holder = format!("stores/{}", s.spec.name);
        let name = s.path.file_name().map(|n| n.to_string_lossy().into_owned());
        match (s.spec.kind, name) {
            (StoreKind::Postgres, _) | (_, None) => paths.push(holder),
            (StoreKind::Sqlite, Some(name)) => {
                paths.push(format!("{holder}/{name}"));
                for suffix in ["-journal", "-shm", "-wal"] {
                    paths.push(format!("{holder}/{name}{suffix}"));
                }
            }
            (_, Some(name)) => paths.push(format!("{holder}/{name}")),
        }
    }
    paths.sort();
    paths
}

fn observer_for(store: &JailedStore, budget: Budget, facts: Vec<FactsSpec>) -> Box<dyn Observer> {
    match store.spec.kind {
        StoreKind::Sqlite => Box::new(
            witness_observers::sqlite::SqliteObserver::new(&store.path)
                .with_clock_columns(store.spec.clock_columns.clone())
                .with_facts(facts)
                .with_budget(budget),
        ),
        StoreKind::Jsonl => {
            Box::new(witness_observers::jsonl::JsonlObserver::new(&store.path).with_budget(budget))
        }
        StoreKind::Fs => Box::new(
            witness_observers::fs::FsObserver::new(&store.path)
                .with_content_views()
                .with_budget(budget),
        ),
        StoreKind::Git => Box::new(witness_observers_git::GitObserver::new(&store.path)),
        StoreKind::Postgres => Box::new(witness_postgres::PostgresObserver::new(
            &crate::postgres_socket_dir(&store.path),
        )),
    }
}

/// One observed change as the ledger records it.
fn effect_of(store: &str, change: &witness_observers::Change) -> Effect {
    Effect {
        store: store.to_owned(),
        object: change.object.clone(),
        op: change.op,
        overwrite: change.overwrite,
        before: change.before.clone(),
        after: change.after.clone(),
    }
}

/// Exercises every object a call created, updated or deleted that the probe covers.
pub fn probe_effects(
    probe: &dyn Probe,
    stores: &[JailedStore],
    effects: &[Effect],
) -> Vec<ProbeRecord> {
    let objects = effects
        .iter()
        .map(|e| (e.store.as_str(), e.object.as_str()));
    probe_objects(probe, stores, objects)
}

/// Exercises each `(store, object)` the probe covers, in order; objects of a
/// store not declared (the jail-wide observer's) are never probed.
pub fn probe_objects<'a>(
    probe: &dyn Probe,
    stores: &[JailedStore],
    objects: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Vec<ProbeRecord> {
    let mut out = Vec::new();
    for (store_name, id) in objects {
        let object = ObservedObject {
            store: store_name,
            id,
        };
        if !probe.covers(&object) {
            continue;
        }
        let Some(store) = stores.iter().find(|s| s.spec.name == store_name) else {
            continue;
        };
        let view = StorePath {
            kind: store.spec.kind.as_str(),
            path: &store.path,
        };
        let result = probe.exercise(&object, &view);
        out.push(ProbeRecord {
            store: store_name.to_owned(),
            object: id.to_owned(),
            status: result.status,
            basis: result.basis,
            credential_digest: result.credential_digest,
            subject: result.subject,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use witness_model::audit::Op;
    use witness_probes::{ProbeResult, ProbeStatus, StoreView};

    use super::*;
    use crate::StoreSpec;
    use witness_model::audit::Effect;
    use witness_observers::fake::{Scripted, ScriptedObserver};

    fn set(scripts: Vec<(&str, Vec<Scripted>)>) -> ObservedSet {
        ObservedSet::new(
            scripts
                .into_iter()
                .map(|(name, script)| {
                    let observer: Box<dyn Observer> = Box::new(ScriptedObserver::new(script));
                    (name.to_owned(), observer)
                })
                .collect(),
        )
    }

    fn ops(changes: &[Effect]) -> Vec<(String, Op)> {
        changes.iter().map(|e| (e.qualified(), e.op)).collect()
    }

    #[test]
    fn changes_are_diffed_against_the_last_snapshot_store_by_store() {
        let mut observed = set(vec![
            (
                "a",
                vec![
                    Scripted::Objects(&[("x", "1")], &[]),
                    Scripted::Objects(&[("x", "2"), ("y", "1")], &[]),
                ],
            ),
            (
                "b",
                vec![
                    Scripted::Objects(&[("gone", "1")], &[]),
                    Scripted::Objects(&[("z", "1")], &[]),
                ],
            ),
        ]);
        let mut pristine = Changes::default();
        assert!(observed.moment(&mut pristine).is_ok());
        assert_eq!(
            pristine.effects.len(),
            2,
            "everything is new to an empty reference"
        );
        // A baseline lists nothing: it is the reference, not a change.
        let mut fresh = set(vec![("a", vec![Scripted::Objects(&[("x", "1")], &[])])]);
        assert!(fresh.baseline().is_ok());
        let mut none = Changes::default();
        assert!(fresh.moment(&mut none).is_ok());
        assert_eq!(none, Changes::default());
        let mut changes = Changes::default();
        assert!(observed.moment(&mut changes).is_ok());
        assert_eq!(
            ops(&changes.effects),
            [
                ("a:x".to_owned(), Op::Update),
                ("a:y".to_owned(), Op::Create),
                ("b:gone".to_owned(), Op::Delete),
                ("b:z".to_owned(), Op::Create),
            ]
        );
        let mut again = Changes::default();
        assert!(observed.moment(&mut again).is_ok());
        assert_eq!(again, Changes::default());
        let listed = observed.present(&Everything).unwrap_or_default();
        let listed: Vec<(&str, &str)> = listed
            .iter()
            .map(|(s, o)| (s.as_str(), o.as_str()))
            .collect();
        assert_eq!(listed, [("a", "x"), ("a", "y"), ("b", "z")]);
        let none = observed.present(&witness_probes::NullProbe);
        assert!(
            none.is_ok_and(|v| v.is_empty()),
            "a probe that covers nothing lists nothing"
        );
    }

    #[test]
    fn a_warning_is_reported_once_with_the_call_it_first_appeared_after() {
        let mut observed = set(vec![(
            "notes",
            vec![
                Scripted::Objects(&[], &["line 3 is not JSON"]),
                Scripted::Objects(&[], &["line 3 is not JSON"]),
                Scripted::Objects(&[], &["line 3 is not JSON", "line 9 is not JSON"]),
            ],
        )]);
        let mut findings = Vec::new();
        for call in [None, Some(1), Some(2)] {
            assert!(observed.moment(&mut Changes::default()).is_ok());
            observed.report_warnings(&mut findings, call);
        }
        let seen: Vec<(&str, Option<u32>)> = findings
            .iter()
            .map(|f| (f.detail.as_str(), f.call))
            .collect();
        assert_eq!(
            seen,
            [
                ("store notes: line 3 is not JSON", None),
                ("store notes: line 9 is not JSON", Some(2)),
            ]
        );
        assert!(
            findings
                .iter()
                .all(|f| f.kind == FindingKind::ObserverWarning)
        );
    }

    #[test]
    fn a_store_that_cannot_be_read_is_named_and_earlier_stores_keep_their_changes() {
        let mut observed = set(vec![
            ("a", vec![Scripted::Objects(&[("x", "1")], &[])]),
            ("b", vec![Scripted::Fails("it vanished")]),
        ]);
        let mut changes = Changes::default();
        let Err(error) = observed.moment(&mut changes) else {
            panic!("a failing observer must fail the snapshot");
        };
        assert_eq!(error.store, "b");
        assert_eq!(
            error.to_string(),
            "b: store /fake/store is not usable: it vanished"
        );
        assert_eq!(ops(&changes.effects), [("a:x".into(), Op::Create)]);

        let mut observed = set(vec![(
            "b",
            vec![Scripted::Objects(&[], &["w"]), Scripted::Fails("gone")],
        )]);
        let mut findings = Vec::new();
        assert!(observed.moment(&mut Changes::default()).is_ok());
        assert!(observed.catch_up(&mut findings, None).is_err());
        assert!(findings.is_empty(), "nothing is reported on failure");
    }

    fn created(store: &str, object: &str) -> Effect {
        Effect {
            store: store.into(),
            object: object.into(),
            op: Op::Create,
            overwrite: None,
            before: None,
            after: None,
        }
    }

    /// Covers everything, exercises nothing.
    struct Everything;

    impl Probe for Everything {
        fn name(&self) -> &'static str {
            "everything"
        }
        fn covers(&self, _object: &ObservedObject<'_>) -> bool {
            true
        }
        fn exercise(&self, _object: &ObservedObject<'_>, _store: &dyn StoreView) -> ProbeResult {
            ProbeResult::unknown("test")
        }
    }

    /// Covers `keys/...` objects and says where it looked.
    struct KeyProbe;

    impl Probe for KeyProbe {
        fn name(&self) -> &'static str {
            "keys"
        }
        fn covers(&self, object: &ObservedObject<'_>) -> bool {
            object.id.starts_with("keys/")
        }
        fn exercise(&self, object: &ObservedObject<'_>, store: &dyn StoreView) -> ProbeResult {
            ProbeResult {
                status: ProbeStatus::Effective,
                basis: format!(
                    "{} {} in {}",
                    store.kind(),
                    object.id,
                    store.path().display()
                ),
                credential_digest: None,
                subject: None,
            }
        }
    }

    #[test]
    fn only_covered_objects_of_declared_stores_are_probed() {
        let stores = [JailedStore {
            spec: StoreSpec {
                name: "db".into(),
                kind: StoreKind::Sqlite,
                source: "/src/db.sqlite".into(),
                shown: None,
                clock_columns: Vec::new(),
            },
            path: Path::new("/jail/stores/db/db.sqlite").to_path_buf(),
            existed: true,
        }];
        let effects = [
            created("db", "keys/k1"),
            created("db", "notes/n1"),
            created(JAIL_STORE, "keys/k2"),
        ];
        let probes = probe_effects(&KeyProbe, &stores, &effects);
        assert_eq!(probes.len(), 1, "{probes:?}");
        assert_eq!(
            (probes[0].store.as_str(), probes[0].object.as_str()),
            ("db", "keys/k1")
        );
        assert_eq!(
            probes[0].basis,
            "sqlite keys/k1 in /jail/stores/db/db.sqlite"
        );
    }

    fn jailed(name: &str, kind: StoreKind, path: &str) -> JailedStore {
        JailedStore {
            spec: StoreSpec {
                name: name.into(),
                kind,
                source: "/src/x".into(),
                shown: None,
                clock_columns: Vec::new(),
            },
            path: Path::new(path).to_path_buf(),
            existed: true,
        }
    }

    #[test]
    fn the_jail_observer_leaves_out_each_store_itself_not_its_folder() {
        let stores = [
            jailed("mk", StoreKind::Sqlite, "/jail/stores/mk/context.db"),
            jailed("mem", StoreKind::Jsonl, "/jail/stores/mem/memory.jsonl"),
            jailed("fs", StoreKind::Fs, "/jail/stores/fs/tree"),
            jailed("pg", StoreKind::Postgres, "/jail/stores/pg"),
        ];
        assert_eq!(
            store_paths(&stores),
            [
                "stores/fs/tree",
                "stores/mem/memory.jsonl",
                "stores/mk/context.db",
                "stores/mk/context.db-journal",
                "stores/mk/context.db-shm",
                "stores/mk/context.db-wal",
                "stores/pg",
            ]
        );
        // An export written beside the database is the jail observer's.
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let holder = dir.path().join("stores/mk");
        std::fs::create_dir_all(&holder).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(holder.join("context.db"), b"db").unwrap_or_else(|e| panic!("{e}"));
        let mut observer = witness_observers::fs::FsObserver::new(dir.path());
        for path in store_paths(&stores[..1]) {
            observer = observer.exclude(path);
        }
        observer.observe(false).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(holder.join("context.db-wal"), b"wal").unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(holder.join("export.csv"), b"a,b").unwrap_or_else(|e| panic!("{e}"));
        let seen = observer.observe(true).unwrap_or_else(|e| panic!("{e}"));
        let ids: Vec<&str> = seen
            .delta
            .changes
            .iter()
            .map(|c| c.object.as_str())
            .collect();
        assert_eq!(ids, ["file/stores/mk/export.csv"]);
    }
}

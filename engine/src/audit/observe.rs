//! Observe: the stores as the audit sees them, out of band.
//!
//! Takes one [`Observer`] per declared store plus the jail-wide one, and
//! gives, at each moment the audit asks, the changes since the moment
//! before as ledger [`Effect`]s. It also keeps what observers warn about
//! (a malformed line is seen by every snapshot until it is fixed) so each
//! warning becomes a finding once, and it probes the objects a call touched
//! or the stores held to begin with.

use std::collections::BTreeSet;

use witness_model::audit::{AuditReport, Effect, Finding, FindingKind, JAIL_STORE, ProbeRecord};
use witness_observers::{Observer, Snapshot, diff};
use witness_probes::{ObservedObject, Probe, StorePath};

use crate::jail::{Jail, JailedStore, StoreKind};

/// Why the stores could not be observed: the store whose snapshot failed,
/// and the observer's reason. Reports say `cannot observe the stores: {this}`.
#[derive(Debug, thiserror::Error)]
#[error("{store}: {source}")]
pub(super) struct ObserveError {
    pub(super) store: String,
    #[source]
    pub(super) source: witness_observers::ObserveError,
}

/// One observed store and what the audit last saw of it.
struct Observed {
    name: String,
    observer: Box<dyn Observer>,
    last: Snapshot,
    /// Warnings already seen, reported or about to be.
    warned: BTreeSet<String>,
    /// Warnings not yet reported.
    fresh: Vec<String>,
}

/// Every store the audit watches, in the order their changes are listed.
pub(super) struct ObservedSet {
    stores: Vec<Observed>,
}

impl ObservedSet {
    /// Observers in the given order, each starting from an empty snapshot.
    pub(super) fn new(observers: Vec<(String, Box<dyn Observer>)>) -> Self {
        let stores = observers
            .into_iter()
            .map(|(name, observer)| Observed {
                name,
                observer,
                last: Snapshot::default(),
                warned: BTreeSet::new(),
                fresh: Vec::new(),
            })
            .collect();
        Self { stores }
    }

    /// An observer for every jailed store, then the jail-wide one over the
    /// rest of the jail (HOME, TMPDIR, the working directory): a change there
    /// is an effect outside every declared store (EFF-05). `excluded` are the
    /// jail's directories the stores' own observers already cover.
    pub(super) fn for_jail(jail: &Jail, excluded: &[String]) -> Self {
        let mut observers: Vec<(String, Box<dyn Observer>)> = jail
            .stores
            .iter()
            .map(|s| (s.spec.name.clone(), observer_for(s)))
            .collect();
        let mut jail_observer = witness_observers::fs::FsObserver::new(jail.root());
        for path in excluded {
            jail_observer = jail_observer.exclude(path);
        }
        observers.push((JAIL_STORE.to_owned(), Box::new(jail_observer)));
        Self::new(observers)
    }

    /// Snapshots every store, appends the changes since the last snapshot to
    /// `changes`, and makes the new snapshots the reference. Stops at the
    /// first store that cannot be read: the changes of the stores read before
    /// it stay appended, as a call's record shows them.
    pub(super) fn snapshot(&mut self, changes: &mut Vec<Effect>) -> Result<(), ObserveError> {
        for o in &mut self.stores {
            let now = o.observer.snapshot().map_err(|source| ObserveError {
                store: o.name.clone(),
                source,
            })?;
            changes.extend(
                diff(&o.last, &now)
                    .changes
                    .iter()
                    .map(|c| effect_of(&o.name, c)),
            );
            for warning in &now.warnings {
                if o.warned.insert(warning.clone()) {
                    o.fresh.push(warning.clone());
                }
            }
            o.last = now;
        }
        Ok(())
    }

    /// Reports each warning not reported yet, as a finding with the call it
    /// first appeared after (`None`: before any call, or at shutdown).
    pub(super) fn report_warnings(&mut self, findings: &mut Vec<Finding>, call: Option<u32>) {
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

    /// The snapshot before a call: whatever changed since the previous
    /// call's post-snapshot is a late effect of that call, charged to nobody
    /// (before any call, a startup effect). Warnings that came with it are
    /// reported against that previous call.
    pub(super) fn catch_up(&mut self, report: &mut AuditReport) -> Result<(), ObserveError> {
        let mut late = Vec::new();
        self.snapshot(&mut late)?;
        let previous = report.calls.last().map(|c| c.id);
        self.report_warnings(&mut report.findings, previous);
        match report.calls.last_mut() {
            Some(previous) => previous.late_effects.extend(late),
            None => report.startup_effects.extend(late),
        }
        Ok(())
    }

    /// Every object the last snapshots hold, as `(store, object)`.
    pub(super) fn present(&self) -> Vec<(&str, &str)> {
        self.stores
            .iter()
            .flat_map(|o| {
                o.last
                    .objects
                    .keys()
                    .map(|id| (o.name.as_str(), id.as_str()))
            })
            .collect()
    }
}

fn observer_for(store: &JailedStore) -> Box<dyn Observer> {
    match store.spec.kind {
        StoreKind::Sqlite => Box::new(witness_observers::sqlite::SqliteObserver::new(&store.path)),
        StoreKind::Jsonl => Box::new(witness_observers::jsonl::JsonlObserver::new(&store.path)),
        StoreKind::Fs => Box::new(witness_observers::fs::FsObserver::new(&store.path)),
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
pub(super) fn probe_effects(
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
pub(super) fn probe_objects<'a>(
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
        });
    }
    out
}

//! Observers whose snapshots a test writes, for the unit tests of the
//! crates above (the observed set, the audit's stages). Built only with the
//! `fake` feature, which only dev-dependencies turn on.

use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;
use std::time::Instant;

use crate::{Activity, ObjectState, Observation, ObserveError, Observer, Snapshot, diff};

/// One scripted snapshot: objects (`id`, content) and warnings, or a failure.
pub enum Scripted {
    Objects(
        &'static [(&'static str, &'static str)],
        &'static [&'static str],
    ),
    Fails(&'static str),
}

/// Gives the scripted snapshots in order, then the last one forever.
pub struct ScriptedObserver {
    script: VecDeque<Scripted>,
    last: Snapshot,
}

impl ScriptedObserver {
    pub fn new(script: Vec<Scripted>) -> Self {
        Self {
            script: script.into(),
            last: Snapshot::default(),
        }
    }
}

impl Observer for ScriptedObserver {
    fn kind(&self) -> &'static str {
        "fake"
    }

    fn observe(&mut self, changes: bool) -> Result<Observation, ObserveError> {
        let now = match self.script.pop_front() {
            Some(Scripted::Objects(objects, warnings)) => {
                let map = objects
                    .iter()
                    .map(|(id, content)| (id.to_string(), content.to_string()))
                    .collect();
                let mut now = snapshot_of(&map);
                now.warnings = warnings.iter().map(|w| w.to_string()).collect();
                now
            }
            Some(Scripted::Fails(reason)) => {
                return Err(ObserveError::Unusable {
                    path: PathBuf::from("/fake/store"),
                    reason: reason.into(),
                });
            }
            None => self.last.clone(),
        };
        Ok(advance(&mut self.last, now, changes))
    }

    fn present(&mut self, visit: &mut dyn FnMut(&str)) -> Result<(), ObserveError> {
        self.last.objects.keys().for_each(|id| visit(id));
        Ok(())
    }
}

/// A store whose writes land at set moments, as a server's late write
/// would: each `(at, id, content)` is in every observation made from `at`
/// on, and the store is busy (as file-system events would say) when asked
/// after a write landed that it was not asked about yet.
pub struct TimedObserver {
    writes: Vec<(Instant, &'static str, &'static str)>,
    last: Snapshot,
    asked: Option<Instant>,
}

impl TimedObserver {
    pub fn new(writes: Vec<(Instant, &'static str, &'static str)>) -> Self {
        Self {
            writes,
            last: Snapshot::default(),
            asked: None,
        }
    }

    /// Whether a write landed after the last question, up to `now`.
    fn landed_since_asked(&mut self, now: Instant) -> bool {
        let since = self.asked.replace(now);
        self.writes
            .iter()
            .any(|(at, _, _)| *at <= now && since.is_none_or(|s| *at > s))
    }
}

impl Observer for TimedObserver {
    fn kind(&self) -> &'static str {
        "fake"
    }

    fn observe(&mut self, changes: bool) -> Result<Observation, ObserveError> {
        let now = Instant::now();
        self.landed_since_asked(now);
        let map = self
            .writes
            .iter()
            .filter(|(at, _, _)| *at <= now)
            .map(|(_, id, content)| (id.to_string(), content.to_string()))
            .collect();
        Ok(advance(&mut self.last, snapshot_of(&map), changes))
    }

    fn activity(&mut self) -> Activity {
        if self.landed_since_asked(Instant::now()) {
            Activity::Busy
        } else {
            Activity::Quiet
        }
    }

    fn present(&mut self, visit: &mut dyn FnMut(&str)) -> Result<(), ObserveError> {
        self.last.objects.keys().for_each(|id| visit(id));
        Ok(())
    }
}

/// Makes `now` the reference, giving the changes since the old one.
pub fn advance(last: &mut Snapshot, now: Snapshot, changes: bool) -> Observation {
    let delta = if changes {
        diff(last, &now)
    } else {
        Default::default()
    };
    let warnings = now.warnings.clone();
    *last = now;
    Observation {
        delta,
        warnings,
        rows: Vec::new(),
    }
}

/// A snapshot holding `objects` as `id → content`.
pub fn snapshot_of(objects: &BTreeMap<String, String>) -> Snapshot {
    Snapshot {
        objects: objects
            .iter()
            .map(|(id, content)| (id.clone(), ObjectState::whole(content.as_bytes())))
            .collect(),
        warnings: Vec::new(),
    }
}

//! Idle controls: what a server changes when nobody asks it to.
//!
//! Real servers write on their own: an indexer that keeps filling its
//! database for seconds after start, a watcher, a log flushed on a timer.
//! Seen only around calls, those writes land in whichever call happens to
//! be running, and a read-only tool "writes". So before each call, with no
//! call in flight, the stores are observed for a control window
//! ([`ObservedSet::idle`]): every object that changes then is the server's
//! *background*, learnt by its [`background_key`] (a row by its table, a
//! record by its file). From then on a change to a background object during
//! a call is split off the call's effects ([`ObservedSet::split_background`])
//! and charged to no call.
//!
//! A change in a control window to an object the previous call itself
//! changed is that call's follow-up (a write it finished after answering),
//! not background: it is kept as the call's late effect, so a tool that
//! writes after answering never teaches the audit to ignore its own writes.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use witness_model::audit::{BackgroundRate, Effect, StoreBackground, background_key};

use super::{Changes, ObserveError, ObservedSet};

/// What one store did with no call in flight.
#[derive(Debug, Default)]
pub(super) struct StoreIdle {
    /// Background keys, learnt.
    keys: BTreeSet<String>,
    /// Keys seen changing while idle, with the tools whose calls preceded
    /// those changes (`None`: before any call).
    seen_after: BTreeMap<String, BTreeSet<Option<String>>>,
    /// Changes seen in control windows.
    changes: u64,
}

/// The background of every store, and how long it was watched.
#[derive(Debug, Default)]
pub(super) struct Background {
    stores: BTreeMap<String, StoreIdle>,
    idle: Duration,
}

/// The call before a control window: its tool (`None` before any call)
/// and what it changed.
#[derive(Clone, Copy, Debug, Default)]
pub struct Previous<'a> {
    pub tool: Option<&'a str>,
    pub effects: &'a [Effect],
}

/// The most a control window lasts, however long the call before it took.
pub const MAX_IDLE_WINDOW: Duration = Duration::from_secs(1);

/// The control window before a call: as long as the call before it took
/// from request to settled moment (`previous`), or `first` before any call;
/// never shorter than `floor` (the quiet window), never longer than
/// [`MAX_IDLE_WINDOW`].
pub fn idle_window(previous: Option<Duration>, first: Duration, floor: Duration) -> Duration {
    previous.unwrap_or(first).max(floor).min(MAX_IDLE_WINDOW)
}

impl ObservedSet {
    /// A control window: with no call in flight, two moments, one after
    /// each half of `window`. An object that changed in both halves keeps
    /// changing with nothing in flight: background at once, whatever came
    /// before. The rest is sorted by [`Self::learn_idle`]. Gives the
    /// background changes; the others are appended to `late`.
    pub fn idle(
        &mut self,
        window: Duration,
        previous: Previous<'_>,
        late: &mut Changes,
    ) -> Result<Changes, ObserveError> {
        let started = Instant::now();
        let half = window / 2;
        let mut seen = Changes::default();
        std::thread::sleep(half);
        let first = self.moment(&mut seen);
        let split = seen.effects.len();
        std::thread::sleep(window.saturating_sub(half));
        let second = first.and_then(|()| self.moment(&mut seen));
        self.background.idle += started.elapsed();
        let halves = |effects: &[Effect]| -> BTreeSet<(String, String)> {
            effects
                .iter()
                .map(|e| (e.store.clone(), self.key_of(e).to_owned()))
                .collect()
        };
        let (early, later) = seen.effects.split_at(split);
        let (early, later) = (halves(early), halves(later));
        for (store, key) in early.intersection(&later) {
            let idle = self.background.stores.entry(store.clone()).or_default();
            idle.keys.insert(key.clone());
        }
        let idle = self.learn_idle(seen, previous, late);
        second.map(|()| idle)
    }

    /// What changed with no call in flight (`seen`), sorted. An object is
    /// background once it has changed while idle after calls of two
    /// different tools (or before any call and after one): activity that
    /// does not depend on which call came before. Until then, and always
    /// for an object the call before changed itself, a change while idle
    /// is that call's follow-up: appended to `late`, as a write it finished
    /// after its answer. Gives the background changes. A driver that cannot
    /// hold a call back for a control window (the proxy) passes its gaps
    /// between calls here.
    pub fn learn_idle(
        &mut self,
        seen: Changes,
        previous: Previous<'_>,
        late: &mut Changes,
    ) -> Changes {
        let own: BTreeSet<(String, String)> = previous
            .effects
            .iter()
            .map(|e| (e.store.clone(), self.key_of(e).to_owned()))
            .collect();
        let mut idle = Changes::default();
        for effect in seen.effects {
            let key = self.key_of(&effect).to_owned();
            if own.contains(&(effect.store.clone(), key.clone())) && !self.is_background(&effect) {
                late.effects.push(effect);
                continue;
            }
            let store = self
                .background
                .stores
                .entry(effect.store.clone())
                .or_default();
            store.changes += 1;
            let after = store.seen_after.entry(key.clone()).or_default();
            after.insert(previous.tool.map(str::to_owned));
            if after.len() >= 2 {
                store.keys.insert(key.clone());
            }
            if store.keys.contains(&key) {
                idle.effects.push(effect);
            } else {
                late.effects.push(effect);
            }
        }
        for row in seen.rows {
            let into = if late
                .effects
                .iter()
                .any(|e| e.store == row.store && e.object == row.object)
            {
                &mut late.rows
            } else {
                &mut idle.rows
            };
            into.push(row);
        }
        idle
    }

    /// Whether `effect` is to an object already learnt as background.
    pub fn is_background(&self, effect: &Effect) -> bool {
        self.background
            .stores
            .get(&effect.store)
            .is_some_and(|s| s.keys.contains(self.key_of(effect)))
    }

    /// Moves the effects to background objects out of `changes` (and their
    /// row facts), and gives them.
    pub fn split_background(&self, changes: &mut Changes) -> Vec<Effect> {
        let (background, own): (Vec<Effect>, Vec<Effect>) = std::mem::take(&mut changes.effects)
            .into_iter()
            .partition(|e| self.is_background(e));
        changes.effects = own;
        changes.rows.retain(|r| {
            !background
                .iter()
                .any(|e| e.store == r.store && e.object == r.object)
        });
        background
    }

    /// Each store's background objects, for the report (stores in the
    /// order they are observed; stores that never changed while idle are
    /// left out).
    pub fn background(&self) -> Vec<StoreBackground> {
        self.stores
            .iter()
            .filter_map(|o| {
                let idle = self.background.stores.get(&o.name)?;
                Some(StoreBackground {
                    store: o.name.clone(),
                    objects: idle.keys.iter().cloned().collect(),
                })
            })
            .collect()
    }

    /// Each background store's rate: changes seen over the controls' time.
    pub fn background_rates(&self) -> Vec<BackgroundRate> {
        let idle_ms = u64::try_from(self.background.idle.as_millis()).unwrap_or(u64::MAX);
        self.stores
            .iter()
            .filter_map(|o| {
                let idle = self.background.stores.get(&o.name)?;
                Some(BackgroundRate {
                    store: o.name.clone(),
                    changes: idle.changes,
                    idle_ms,
                })
            })
            .collect()
    }

    /// The background key of `effect`, by its store's kind.
    fn key_of<'e>(&self, effect: &'e Effect) -> &'e str {
        let kind = self
            .stores
            .iter()
            .find(|o| o.name == effect.store)
            .map_or("fs", |o| o.observer.kind());
        background_key(kind, &effect.object)
    }
}

#[cfg(test)]
mod tests {
    use witness_model::audit::Op;
    use witness_observers::Observer;
    use witness_observers::fake::ScriptedObserver;

    use super::*;

    fn effect(store: &str, object: &str) -> Effect {
        Effect {
            store: store.into(),
            object: object.into(),
            op: Op::Update,
            overwrite: None,
            before: None,
            after: None,
        }
    }

    fn set(kind_store: &str) -> ObservedSet {
        let observer: Box<dyn Observer> = Box::new(ScriptedObserver::new(Vec::new()));
        ObservedSet::new(vec![(kind_store.to_owned(), observer)])
    }

    fn seen(objects: &[&str]) -> Changes {
        Changes {
            effects: objects.iter().map(|o| effect("db", o)).collect(),
            rows: Vec::new(),
        }
    }

    fn after<'a>(tool: Option<&'a str>, effects: &'a [Effect]) -> Previous<'a> {
        Previous { tool, effects }
    }

    #[test]
    fn an_object_is_background_once_it_changed_idle_after_two_different_calls() {
        let mut observed = set("db");
        let mut late = Changes::default();
        let first = observed.learn_idle(seen(&["index/1"]), after(Some("save"), &[]), &mut late);
        assert!(
            first.effects.is_empty(),
            "once, after one tool: a follow-up"
        );
        assert_eq!(late.effects.len(), 1);
        let again = observed.learn_idle(seen(&["index/1"]), after(Some("save"), &[]), &mut late);
        assert!(again.effects.is_empty(), "again after the same tool");
        let other = observed.learn_idle(seen(&["index/1"]), after(Some("list"), &[]), &mut late);
        assert_eq!(other.effects, vec![effect("db", "index/1")]);
        let mut changes = seen(&["index/1", "notes/1"]);
        let background = observed.split_background(&mut changes);
        assert_eq!(background, vec![effect("db", "index/1")]);
        assert_eq!(changes.effects, vec![effect("db", "notes/1")]);
        assert_eq!(observed.background()[0].objects, ["index/1"]);
        assert_eq!(observed.background_rates()[0].changes, 3);
    }

    #[test]
    fn what_the_call_before_changed_is_its_follow_up_however_often() {
        let mut observed = set("db");
        let mut late = Changes::default();
        let own = [effect("db", "log/1")];
        for tool in [None, Some("a"), Some("b")] {
            let idle = observed.learn_idle(seen(&["log/1"]), after(tool, &own), &mut late);
            assert!(idle.effects.is_empty());
        }
        assert_eq!(late.effects.len(), 3);
        assert!(!observed.is_background(&effect("db", "log/1")));
    }

    #[test]
    fn a_control_window_observes_with_nothing_in_flight() {
        use witness_observers::fake::Scripted;
        let observer: Box<dyn Observer> = Box::new(ScriptedObserver::new(vec![
            Scripted::Objects(&[("index/1", "a")], &[]),
            Scripted::Objects(&[("index/1", "b")], &[]),
            Scripted::Objects(&[("index/1", "c")], &[]),
        ]));
        let mut observed = ObservedSet::new(vec![("db".to_owned(), observer)]);
        assert!(observed.baseline().is_ok());
        let mut late = Changes::default();
        let window = Duration::from_millis(2);
        // The object changes in both halves of the first window (b, then
        // c): background at once, with no call before it to blame.
        let first = observed.idle(window, after(None, &[]), &mut late);
        assert_eq!(first.map(|c| c.effects.len()).ok(), Some(2));
        assert!(observed.is_background(&effect("db", "index/1")));
        assert!(late.effects.is_empty(), "nothing charged as late");
        // Then it stays at c: a quiet window, counted in the idle time.
        let second = observed.idle(window, after(Some("t"), &[]), &mut late);
        assert_eq!(second.map(|c| c.effects.len()).ok(), Some(0));
        assert!(observed.background_rates()[0].idle_ms >= 4);
    }

    #[test]
    fn the_control_window_follows_the_call_before_within_its_bounds() {
        let floor = Duration::from_millis(5);
        let first = Duration::from_millis(50);
        assert_eq!(idle_window(None, first, floor), first);
        assert_eq!(
            idle_window(Some(Duration::from_millis(1)), first, floor),
            floor
        );
        assert_eq!(
            idle_window(Some(Duration::from_secs(9)), first, floor),
            MAX_IDLE_WINDOW
        );
    }

    #[test]
    fn keys_follow_the_store_kind() {
        assert_eq!(background_key("sqlite", "ticks/7"), "ticks");
        assert_eq!(
            background_key("fs", "json/notes.json#/a"),
            "json/notes.json"
        );
        assert_eq!(background_key("fs", "file/log.txt"), "file/log.txt");
    }
}

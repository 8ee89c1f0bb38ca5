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
//!
//! A control window costs time only where something moved. The change
//! signals (inotify on a store's files, which also sees a WAL's frames
//! land) say whether a store was written; a window may end as soon as they
//! say every store has been quiet for the quiet window since the last
//! answer (or the last write after it), when
//!
//! - every store has a signal (a store none covers, such as PostgreSQL's,
//!   is watched for the whole window),
//! - no store has ever moved with no call in flight: an event or a change
//!   in any control window makes the store *stirred*, and every later
//!   window is whole,
//! - the call before wrote nothing after its answer (the settle's signals
//!   say: a write seen after the first look at the stores), and
//! - the driver allows it (not before the first call, after a restart, or
//!   before a confirmation, which always get the whole window).
//!
//! A signal proves what happened, never what will: a write the server
//! makes after a silence longer than the quiet window, on a store that never
//! moved idle, after a call that showed nothing after its answer, lands in
//! the next call (docs/effect-aware-conformance.md, Controls, says so).

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use witness_model::audit::{BackgroundRate, Effect, StoreBackground, background_key};

use witness_observers::Activity;

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
    /// Stores that moved in a control window (an event, or a change): every
    /// later window is whole.
    stirred: BTreeSet<String>,
    /// What the signals said after the last answer, until the next window
    /// takes it (`None`: nothing answered since, or a store could not tell).
    answered: Option<Answered>,
    /// Control windows the signals ended early.
    cut: u64,
}

/// What the change signals said in the settle after an answer.
#[derive(Clone, Copy, Debug)]
pub(super) struct Answered {
    /// A store was written after the answer: the call goes on writing
    /// after it answers, and its follow-up may come later still.
    pub(super) after_answer: bool,
    /// When a store was last seen written, or else when the settle began.
    pub(super) last_write: Instant,
}

/// One control window: how long it lasts where a store moved, and whether
/// the change signals may end it sooner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    /// The whole window ([`idle_window`]).
    pub full: Duration,
    /// `Some(quiet)`: it may end once the signals say every store has been
    /// quiet this long since the last answer or the last write after it
    /// (see the module documentation for when); `None`: it is whole.
    pub until_quiet: Option<Duration>,
}

impl Window {
    /// A window that is always whole.
    pub fn whole(full: Duration) -> Self {
        Self {
            full,
            until_quiet: None,
        }
    }
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
    ///
    /// Where the signals may end it (see the module documentation), the
    /// window ends with one moment as soon as they say every store has been
    /// quiet for `window.until_quiet`; the first write they report makes it
    /// whole again, timed from its start.
    pub fn idle(
        &mut self,
        window: Window,
        previous: Previous<'_>,
        late: &mut Changes,
    ) -> Result<Changes, ObserveError> {
        let started = Instant::now();
        let answered = self.background.answered.take();
        let full = window.full;
        if let (Some(quiet), Some(answered)) = (window.until_quiet, answered)
            && !answered.after_answer
            && self.background.stirred.is_empty()
            && self.quiet_for(quiet, answered.last_write.min(started), started + full)
        {
            let mut seen = Changes::default();
            let moment = self.moment(&mut seen);
            self.background.idle += started.elapsed();
            self.background.cut += 1;
            self.stir(&seen.effects);
            let idle = self.learn_idle(seen, previous, late);
            return moment.map(|()| idle);
        }
        let half = full / 2;
        let mut seen = Changes::default();
        std::thread::sleep((started + half).saturating_duration_since(Instant::now()));
        let first = self.moment(&mut seen);
        let split = seen.effects.len();
        std::thread::sleep((started + full).saturating_duration_since(Instant::now()));
        let second = first.and_then(|()| self.moment(&mut seen));
        self.background.idle += started.elapsed();
        self.stir(&seen.effects);
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

    /// Whether every store's signal says it has not been written since
    /// `since` until `quiet` after it (or until `deadline`, should that
    /// come first). False at once when a store has no signal, or when one
    /// reports a write: that store is stirred.
    fn quiet_for(&mut self, quiet: Duration, since: Instant, deadline: Instant) -> bool {
        let until = since.checked_add(quiet).unwrap_or(since).min(deadline);
        loop {
            for o in &mut self.stores {
                match o.observer.activity() {
                    Activity::Quiet => {}
                    Activity::Busy => {
                        self.background.stirred.insert(o.name.clone());
                        return false;
                    }
                    Activity::Unknown => return false,
                }
            }
            let now = Instant::now();
            if now >= until {
                return true;
            }
            std::thread::sleep(super::around::SETTLE_POLL.min(until - now));
        }
    }

    /// Marks the stores of `effects`, seen with no call in flight, stirred.
    fn stir(&mut self, effects: &[Effect]) {
        for e in effects {
            if !self.background.stirred.contains(&e.store) {
                self.background.stirred.insert(e.store.clone());
            }
        }
    }

    /// Keeps what the signals said in the settle after an answer (`None`:
    /// a store could not tell), for the next control window.
    pub(super) fn answered(&mut self, answered: Option<Answered>) {
        self.background.answered = answered;
    }

    /// How many control windows the signals ended early.
    pub fn controls_cut(&self) -> u64 {
        self.background.cut
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
        let first = observed.idle(Window::whole(window), after(None, &[]), &mut late);
        assert_eq!(first.map(|c| c.effects.len()).ok(), Some(2));
        assert!(observed.is_background(&effect("db", "index/1")));
        assert!(late.effects.is_empty(), "nothing charged as late");
        // Then it stays at c: a quiet window, counted in the idle time.
        let second = observed.idle(Window::whole(window), after(Some("t"), &[]), &mut late);
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

    use witness_observers::fake::TimedObserver;

    use crate::observe::Settle;

    fn timed(writes: Vec<(Instant, &'static str, &'static str)>) -> ObservedSet {
        let observer: Box<dyn Observer> = Box::new(TimedObserver::new(writes));
        ObservedSet::new(vec![("db".to_owned(), observer)])
    }

    const SETTLE: Settle = Settle {
        bound: Duration::from_millis(50),
        quiet: Duration::from_millis(5),
    };

    /// A call's answer and its settle, then its control window: how long
    /// the window took, and what it charged as the call's late effects.
    fn answer_then_control(
        observed: &mut ObservedSet,
        full: Duration,
        until_quiet: Option<Duration>,
    ) -> (Duration, Changes) {
        let settled = observed.after_answer(SETTLE, || {}, &mut Changes::default());
        assert!(settled.is_ok());
        let mut late = Changes::default();
        let started = Instant::now();
        let window = Window { full, until_quiet };
        let idle = observed.idle(window, after(Some("t"), &[]), &mut late);
        assert!(idle.is_ok());
        (started.elapsed(), late)
    }

    #[test]
    fn a_quiet_stores_control_window_ends_once_the_signals_say_nothing_moved() {
        let mut observed = timed(Vec::new());
        assert!(observed.baseline().is_ok());
        let full = Duration::from_millis(400);
        let (took, late) = answer_then_control(&mut observed, full, Some(SETTLE.quiet));
        assert!(took < Duration::from_millis(200), "{took:?}");
        assert_eq!(late, Changes::default());
        assert_eq!(observed.controls_cut(), 1);
        // Asked for a whole window (before a first call, a confirmation),
        // it is whole.
        let (took, _) = answer_then_control(&mut observed, full, None);
        assert!(took >= full, "{took:?}");
        assert_eq!(observed.controls_cut(), 1);
    }

    #[test]
    fn a_store_that_moves_in_a_window_gets_the_whole_window_and_every_later_one() {
        // The write lands 20 ms after the answer: after the settle's quiet
        // 5 ms, inside a 40 ms quiet stretch the window waits for.
        let lands = Instant::now() + Duration::from_millis(20);
        let mut observed = timed(vec![(lands, "log/1", "v")]);
        assert!(observed.baseline().is_ok());
        let full = Duration::from_millis(300);
        let quiet = Some(Duration::from_millis(40));
        let (took, late) = answer_then_control(&mut observed, full, quiet);
        assert!(took >= full, "the write made the window whole: {took:?}");
        let objects: Vec<String> = late.effects.iter().map(Effect::qualified).collect();
        assert_eq!(objects, ["db:log/1"], "the call before's late effect");
        // Nothing moves any more, but the store has moved with no call in
        // flight: its windows stay whole.
        let (took, _) = answer_then_control(&mut observed, full, quiet);
        assert!(took >= full, "{took:?}");
        assert_eq!(observed.controls_cut(), 0);
    }

    #[test]
    fn a_call_that_writes_after_its_answer_gets_the_whole_window() {
        // 2 ms after the answer: inside the settle, after its first look.
        let lands = Instant::now() + Duration::from_millis(2);
        let mut observed = timed(vec![(lands, "notes/n1", "v")]);
        assert!(observed.baseline().is_ok());
        let full = Duration::from_millis(200);
        let (took, late) = answer_then_control(&mut observed, full, Some(SETTLE.quiet));
        assert!(took >= full, "{took:?}");
        assert_eq!(late, Changes::default(), "the write was the call's own");
        assert_eq!(observed.controls_cut(), 0);
    }

    #[test]
    fn a_store_no_signal_covers_gets_the_whole_window() {
        use witness_observers::fake::Scripted;
        let observer: Box<dyn Observer> =
            Box::new(ScriptedObserver::new(vec![Scripted::Objects(&[], &[])]));
        let mut observed = ObservedSet::new(vec![("pg".to_owned(), observer)]);
        assert!(observed.baseline().is_ok());
        let full = Duration::from_millis(120);
        let (took, _) = answer_then_control(&mut observed, full, Some(SETTLE.quiet));
        assert!(took >= full, "{took:?}");
        assert_eq!(observed.controls_cut(), 0);
    }

    #[test]
    fn a_write_after_a_longer_silence_than_the_quiet_window_is_the_next_moments_never_lost() {
        // What a signal cannot prove: 150 ms of silence after the answer,
        // then a write. The window ended once the stores had been quiet
        // for 5 ms; the write is seen by the next moment (the next call's
        // settled one), not lost.
        let answered = Instant::now();
        let lands = answered + Duration::from_millis(150);
        let mut observed = timed(vec![(lands, "notes/n1", "v")]);
        assert!(observed.baseline().is_ok());
        let (took, late) = answer_then_control(
            &mut observed,
            Duration::from_millis(400),
            Some(SETTLE.quiet),
        );
        assert!(took < Duration::from_millis(100), "{took:?}");
        assert_eq!(late, Changes::default());
        std::thread::sleep(lands.saturating_duration_since(Instant::now()));
        let mut next = Changes::default();
        assert!(observed.after_answer(SETTLE, || {}, &mut next).is_ok());
        let objects: Vec<String> = next.effects.iter().map(Effect::qualified).collect();
        assert_eq!(objects, ["db:notes/n1"]);
        // A whole window of the old length would have seen it, as the call
        // before's late effect: the first window of a session is one.
        let lands = Instant::now() + Duration::from_millis(150);
        let mut observed = timed(vec![(lands, "notes/n1", "v")]);
        assert!(observed.baseline().is_ok());
        let (_, late) = answer_then_control(&mut observed, Duration::from_millis(400), None);
        let objects: Vec<String> = late.effects.iter().map(Effect::qualified).collect();
        assert_eq!(objects, ["db:notes/n1"]);
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

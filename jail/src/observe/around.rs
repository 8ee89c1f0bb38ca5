//! One observation around a call, the same for every command.
//!
//! A *moment* ([`ObservedSet::moment`]) observes every store and gives what
//! changed since the moment before: the effects, with the declared row
//! facts of the rows among them. A call is observed between two moments:
//!
//! 1. the moment before it: what changed since the last moment is not the
//!    call's. It is the previous call's *late effects* (a write that landed
//!    after that call had settled), or, before any call, the server's
//!    startup; either way it is kept apart from what the call does;
//! 2. the call, to its answer;
//! 3. the settle ([`Settle`]): until every store has been quiet for
//!    `quiet` (`--quiet-ms`), as file-system events tell, and never longer
//!    than `bound` (`--settle-ms`) after the answer;
//! 4. the moment after it ([`ObservedSet::after_answer`]): the call's own
//!    effects.
//!
//! A driver that makes one call at a time (the audit, agent runs) takes
//! the moment before as the end of an idle control ([`ObservedSet::idle`],
//! which also learns the server's background; after a restart, with
//! [`ObservedSet::catch_up`]) and the one after with
//! [`ObservedSet::after_answer`]. Where calls overlap (the proxy, between a
//! host and its server) the moments are the same: one as each request
//! arrives, before it is forwarded, and one as each answer arrives, after
//! the same settle, before the answer goes on; what changed between two
//! moments is charged by the proxy to every call in flight between them.
//! So a write that lands 30 ms after its answer is charged to the same call
//! by every command given the same `--settle-ms` and `--quiet-ms`.

use std::time::{Duration, Instant};

use witness_model::agent::trace::RowFacts;
use witness_model::audit::{Effect, Finding};
use witness_observers::Activity;

use super::background::Answered;
use super::{ObserveError, ObservedSet};

/// How long a call's effects are given to land after its answer: until
/// every store has seen no write for `quiet`, never longer than `bound`.
/// Where no event source covers a store that cannot be told, and the
/// settle is the whole `bound`. Either way a later write is not lost: the
/// next moment sees it, as a late effect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settle {
    /// `--settle-ms`.
    pub bound: Duration,
    /// `--quiet-ms`.
    pub quiet: Duration,
}

impl Settle {
    /// The default bound, in milliseconds: a few times what a server's
    /// unawaited follow-up write takes, and small beside a call.
    pub const BOUND_MS: u64 = 50;
    /// The default quiet window, in milliseconds: long enough for a
    /// server's own follow-up write (a Node server finishing an
    /// `fs.writeFile` it did not await lands within a millisecond or two),
    /// short enough that a call on an idle store costs a few milliseconds.
    pub const QUIET_MS: u64 = 5;
    /// The most either may be, in milliseconds.
    pub const MAX_MS: u64 = 60_000;
    /// [`Self::QUIET_MS`] as a duration.
    pub const QUIET: Duration = Duration::from_millis(Self::QUIET_MS);
    /// No settle: the moment right after the answer.
    pub const NONE: Self = Self {
        bound: Duration::ZERO,
        quiet: Duration::ZERO,
    };

    pub fn from_millis(bound: u64, quiet: u64) -> Self {
        Self {
            bound: Duration::from_millis(bound),
            quiet: Duration::from_millis(quiet),
        }
    }
}

impl Default for Settle {
    fn default() -> Self {
        Self::from_millis(Self::BOUND_MS, Self::QUIET_MS)
    }
}

/// What changed between two moments.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Changes {
    /// Store by store, in the order the stores are observed.
    pub effects: Vec<Effect>,
    /// The declared row facts of the changed rows among `effects`, named
    /// as their effects name them.
    pub rows: Vec<RowFacts>,
}

/// How often a settle asks the stores whether they are still busy.
pub(super) const SETTLE_POLL: Duration = Duration::from_millis(1);

impl ObservedSet {
    /// The moment before a call, when calls are made one at a time: what
    /// changed since the last moment, the late effects of the previous call
    /// (`previous`) or, before any call, the server's startup. Warnings that
    /// came with it are reported against that previous call.
    pub fn catch_up(
        &mut self,
        findings: &mut Vec<Finding>,
        previous: Option<u32>,
    ) -> Result<Changes, ObserveError> {
        let mut late = Changes::default();
        self.moment(&mut late)?;
        self.report_warnings(findings, previous);
        Ok(late)
    }

    /// The moment after an answer: the settle, then `settled` (what must be
    /// read from the server before the stores are: whatever it sent during
    /// the settle), then the moment, appended to `changes` as
    /// [`ObservedSet::moment`] appends.
    pub fn after_answer(
        &mut self,
        settle: Settle,
        settled: impl FnOnce(),
        changes: &mut Changes,
    ) -> Result<(), ObserveError> {
        self.settle(settle);
        settled();
        self.moment(changes)
    }

    /// Waits until every store has seen no write for `settle.quiet`, never
    /// longer than `settle.bound` in all, or the whole bound where a store
    /// cannot tell (see [`Settle`]). What the signals said on the way is
    /// kept for the next control window ([`super::background`]).
    fn settle(&mut self, settle: Settle) {
        let start = Instant::now();
        let deadline = start.checked_add(settle.bound).unwrap_or(start);
        let mut last_write = start;
        // The first look drains what the call wrote before its answer;
        // activity at any later look came after the answer.
        let mut first = true;
        let mut after_answer = false;
        loop {
            let mut busy = false;
            for o in &mut self.stores {
                match o.observer.activity() {
                    Activity::Quiet => {}
                    Activity::Busy => busy = true,
                    Activity::Unknown => {
                        std::thread::sleep(deadline.saturating_duration_since(Instant::now()));
                        self.answered(None);
                        return;
                    }
                }
            }
            let now = Instant::now();
            if busy {
                last_write = now;
                after_answer |= !first;
            }
            first = false;
            if now >= deadline || now.duration_since(last_write) >= settle.quiet {
                self.answered(Some(Answered {
                    after_answer,
                    last_write,
                }));
                return;
            }
            let left = deadline.saturating_duration_since(now);
            std::thread::sleep(SETTLE_POLL.min(left));
        }
    }
}

#[cfg(test)]
mod tests {
    use witness_model::audit::Op;
    use witness_observers::Observer;
    use witness_observers::fake::{Scripted, ScriptedObserver, TimedObserver};

    use super::*;

    fn one(name: &str, observer: impl Observer + 'static) -> ObservedSet {
        let observer: Box<dyn Observer> = Box::new(observer);
        ObservedSet::new(vec![(name.to_owned(), observer)])
    }

    fn objects(changes: &Changes) -> Vec<String> {
        changes.effects.iter().map(Effect::qualified).collect()
    }

    const LONG: Duration = Duration::from_secs(2);

    #[test]
    fn a_write_landing_30ms_after_the_answer_is_the_calls_own_with_a_100ms_quiet_window() {
        let answered = Instant::now();
        let mut observed = one(
            "db",
            TimedObserver::new(vec![(answered + Duration::from_millis(30), "row/1", "v")]),
        );
        let mut late = Changes::default();
        assert!(observed.moment(&mut late).is_ok());
        assert!(late.effects.is_empty(), "nothing had landed yet");
        let mut settled_at = None;
        let mut own = Changes::default();
        let settle = Settle {
            bound: LONG,
            quiet: Duration::from_millis(100),
        };
        let after = observed.after_answer(settle, || settled_at = Some(Instant::now()), &mut own);
        assert!(after.is_ok());
        assert_eq!(objects(&own), ["db:row/1"]);
        let settled = settled_at.map(|t| t.duration_since(answered));
        // The write, then a whole quiet window, and the settle was over:
        // long before its bound.
        assert!(
            settled.is_some_and(|s| s >= Duration::from_millis(130) && s < LONG),
            "{settled:?}"
        );
        let mut next = Changes::default();
        assert!(observed.moment(&mut next).is_ok());
        assert_eq!(next, Changes::default(), "it is not late as well");
    }

    #[test]
    fn a_write_after_the_stores_went_quiet_is_the_next_moments_late_effect() {
        let answered = Instant::now();
        let lands = answered + Duration::from_millis(300);
        let mut observed = one("db", TimedObserver::new(vec![(lands, "row/1", "v")]));
        assert!(observed.moment(&mut Changes::default()).is_ok());
        let mut own = Changes::default();
        let settle = Settle {
            bound: LONG,
            quiet: Duration::from_millis(5),
        };
        assert!(observed.after_answer(settle, || {}, &mut own).is_ok());
        assert!(
            answered.elapsed() < Duration::from_millis(300),
            "the settle ended once quiet, not at its bound"
        );
        assert_eq!(own, Changes::default());
        std::thread::sleep(lands.saturating_duration_since(Instant::now()));
        let mut findings = Vec::new();
        let late = observed.catch_up(&mut findings, Some(1));
        assert!(late.is_ok_and(|late| objects(&late) == ["db:row/1"]));
    }

    #[test]
    fn a_store_that_never_goes_quiet_is_given_the_bound_and_no_more() {
        let start = Instant::now();
        // A write every 2 ms for a second.
        let writes = (0..500)
            .map(|i| (start + Duration::from_millis(2 * i), "log/1", "busy"))
            .collect();
        let mut observed = one("db", TimedObserver::new(writes));
        let settle = Settle {
            bound: Duration::from_millis(60),
            quiet: Duration::from_millis(20),
        };
        assert!(
            observed
                .after_answer(settle, || {}, &mut Changes::default())
                .is_ok()
        );
        let took = start.elapsed();
        assert!(
            took >= Duration::from_millis(60) && took < Duration::from_millis(900),
            "{took:?}"
        );
    }

    #[test]
    fn a_settle_ends_at_its_bound_when_no_event_source_covers_a_store() {
        let mut observed = one(
            "a",
            ScriptedObserver::new(vec![Scripted::Objects(&[], &[])]),
        );
        let start = Instant::now();
        let fixed = Settle {
            bound: Duration::from_millis(30),
            quiet: Duration::from_millis(1),
        };
        assert!(
            observed
                .after_answer(fixed, || {}, &mut Changes::default())
                .is_ok()
        );
        assert!(start.elapsed() >= Duration::from_millis(30));
        let start = Instant::now();
        assert!(
            observed
                .after_answer(Settle::NONE, || {}, &mut Changes::default())
                .is_ok()
        );
        assert!(start.elapsed() < Duration::from_millis(30));
    }

    #[test]
    fn the_moment_before_a_call_reports_its_warnings_against_the_previous_call() {
        let mut observed = one(
            "notes",
            ScriptedObserver::new(vec![
                Scripted::Objects(&[], &[]),
                Scripted::Objects(&[("late", "1")], &["line 2 is not JSON"]),
            ]),
        );
        assert!(observed.baseline().is_ok());
        let mut findings = Vec::new();
        let Ok(late) = observed.catch_up(&mut findings, Some(4)) else {
            panic!("the moment is taken");
        };
        assert_eq!(
            late.effects.iter().map(|e| e.op).collect::<Vec<_>>(),
            [Op::Create]
        );
        assert_eq!(findings.len(), 1);
        assert_eq!(findings[0].call, Some(4));
    }

    #[test]
    fn row_facts_come_with_the_moment_named_by_their_store() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("crm.db");
        let conn = rusqlite::Connection::open(&path).expect("db");
        conn.execute_batch(
            "CREATE TABLE contacts(id TEXT PRIMARY KEY, tenant_id TEXT);
             INSERT INTO contacts VALUES ('c_1', 'acme');",
        )
        .expect("seed");
        let facts = witness_model::agent::case::FactsSpec {
            store: "crm".into(),
            table: "contacts".into(),
            columns: vec!["tenant_id".into()],
        };
        let observer =
            witness_observers::sqlite::SqliteObserver::new(&path).with_facts(vec![facts]);
        let mut observed = one("crm", observer);
        assert!(observed.baseline().is_ok());
        conn.execute("UPDATE contacts SET tenant_id = 'globex'", [])
            .expect("update");
        let mut changes = Changes::default();
        assert!(
            observed
                .after_answer(Settle::NONE, || {}, &mut changes)
                .is_ok()
        );
        assert_eq!(objects(&changes), ["crm:contacts/c_1"]);
        let tenant = |side: &Option<std::collections::BTreeMap<String, serde_json::Value>>| {
            side.as_ref().and_then(|r| r.get("tenant_id").cloned())
        };
        let [row] = &changes.rows[..] else {
            panic!("one row: {:?}", changes.rows);
        };
        assert_eq!(
            (row.store.as_str(), row.object.as_str()),
            ("crm", "contacts/c_1")
        );
        assert_eq!(tenant(&row.before), Some("acme".into()));
        assert_eq!(tenant(&row.after), Some("globex".into()));
    }
}

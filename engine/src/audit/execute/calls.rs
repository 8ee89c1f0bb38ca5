//! One plan step at a time: resolve its arguments, call, settle, observe.
//!
//! Each call is bracketed by snapshots: the one before it charges whatever
//! changed since the previous call's post-snapshot to that call as late
//! effects; the one after it gives the call's own effects, which are then
//! probed. A tool declared idempotent, or whose plan attaches `idempotent`,
//! is called a second time with the same arguments; a returned cursor is
//! followed page by page (read-only tools, or where a plan asks); an
//! experiment's events run after the step. Every call's latency is measured
//! for the response lane. A call that loses the transport (a timeout, an
//! oversized answer, a dead server) is recorded with its finding and the
//! server restarted ([`super::restart`]); so is every call's server, with a
//! fresh session per call.

use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::time::{Duration, Instant};

use serde_json::Value;
use witness_model::audit::*;
use witness_probes::Probe;
use witness_wire::connection::Connection;
use witness_wire::session::{CallOutcome, Session};

use super::super::Event;
use super::super::draft::Draft;
use super::restart::{MAX_FAILURE_RESTARTS, Relaunch};
use crate::checks::paging::{Paging, next_cursor};
use crate::plan::harvest::Pool;
use crate::plan::{ArgSpec, PlanStep, Resolved, resolve};
use witness_jail::JailedStore;
use witness_jail::observe::{
    Changes, ObservedSet, Previous, Settle, Window, idle_window, probe_effects,
};

/// What the calls read besides the session, the stores and the draft.
pub(super) struct Context<'a> {
    /// How long a call's effects are given to land before the post-snapshot.
    pub(super) settle: Settle,
    pub(super) probe: &'a dyn Probe,
    pub(super) stores: Vec<JailedStore>,
    /// Events to apply after a plan step, by step.
    pub(super) events: &'a mut BTreeMap<u32, Vec<Event>>,
    /// Every call on a freshly started server.
    pub(super) session_per_call: bool,
    /// Confirm every effect-lane failure before the audit ends.
    pub(super) confirm: bool,
    pub(super) progress: &'a crate::progress::Progress,
}

/// The state of the call loop.
pub(super) struct Runner<'a> {
    pub(super) session: Session,
    /// Sessions a restart ended, in order.
    pub(super) ended: Vec<Connection>,
    pub(super) relaunch: &'a mut dyn Relaunch,
    pub(super) observed: &'a mut ObservedSet,
    pub(super) draft: &'a mut Draft,
    /// Results by plan step (what `call N` in a plan refers to).
    pub(super) results: BTreeMap<u32, Value>,
    pub(super) pool: Pool,
    next_id: u32,
    /// Plan steps carried out so far; the next one is `call steps_done + 1`.
    steps_done: u32,
    /// The checks the plan attaches, by step.
    pub(super) expect: BTreeMap<u32, Vec<Expectation>>,
    /// Steps in the plan, for progress.
    pub(super) planned: usize,
    /// Calls made on the current session.
    pub(super) on_session: u32,
    /// Restarts made because a call lost the transport.
    failure_restarts: u32,
    /// While earlier failures are retried after a setup call: its id.
    pub(super) retry_after: Option<u32>,
    /// For the next call: the failed call whose error it answers.
    pub(super) answers: Option<ErrorAnswer>,
    /// While the last looks run ([`crate::plan::strategy::late_look`]):
    /// the store has changed since the values were harvested, so a
    /// value refused then is no evidence that the server refused one it
    /// holds (a note a delete took away since).
    pub(super) looking: bool,
    /// Tools an error named to call first, each called once.
    called_first: Vec<String>,
    /// What errors taught each tool's calls, by tool: values a retry that
    /// did its job was given for a parameter the audit had invented.
    learned: BTreeMap<String, Vec<(String, Value)>>,
    /// What a retry taught about the server's roots, for every tool: the
    /// root it refused for a parameter and the one it took
    /// ([`crate::plan::strategy::root_lesson`]).
    roots_taught: Vec<crate::plan::strategy::root_lesson::RootLesson>,
    /// What idle retries taught each tool: the object a call did nothing
    /// on and the one its retry did its job on
    /// ([`crate::plan::strategy::idle_lesson`]).
    idle_taught: Vec<crate::plan::strategy::idle_lesson::IdleLesson>,
    /// Tools a second thing was made for
    /// ([`crate::plan::strategy::second_object`]), each once.
    seconds_made: Vec<String>,
    /// Tools made a second time because their first call created files
    /// under names of its own ([`crate::plan::strategy::second_make`]).
    made_again: Vec<String>,
    /// How long the last call took, from its request to its settled moment:
    /// the next idle control's window.
    last_window: Option<Duration>,
    /// Every step carried out, by step number: what a confirmation repeats.
    pub(super) steps: BTreeMap<u32, PlanStep>,
    /// The calls an output was asked for again after a change the audit
    /// made ([`crate::plan::strategy::stale_output`]), each with the call
    /// whose step that change asked again: its confirmation makes the
    /// change again first.
    pub(super) refreshed: BTreeMap<u32, u32>,
    /// For the next call: the change the audit made just before it, when
    /// the call asks an output again after it.
    pub(super) after_change: Option<u32>,
    pub(super) context: Context<'a>,
}

/// Whether a value a retry was given for `name` may be sent by the tool's
/// later forms: a flag thrown to the side its name says writes (`force`,
/// `confirm`: never a rehearsal switch such as `dry_run`, which would stop
/// the later forms from writing at all, nor a flag whose name says
/// neither), or a word chosen for a parameter that names no path and no
/// object (an operation, a mode, a kind: never an id, a name or a file,
/// which the store fills and which may be gone by then).
fn teachable(cues: &crate::plan::cues::ToolCues, name: &str, value: &Value) -> bool {
    match value {
        Value::Bool(b) => crate::plan::strategy::switches::writing_side(name) == Some(*b),
        Value::String(_) => {
            cues.path_kind(name).is_none() && !crate::plan::harvest::names_an_object(name)
        }
        _ => false,
    }
}

/// The control window before an identical repeat: twice the longer of the
/// original's duration and `--settle-ms`, within
/// [`witness_jail::observe::MAX_IDLE_WINDOW`]. Repeats are one per tool
/// declared idempotent, so the extra wait is small beside the audit, and it
/// gives an after-answer write of the original (the shape of an unawaited
/// flush) room to land where it is charged to the original.
fn repeat_window(original: Option<Duration>, settle: Settle) -> Duration {
    let longest = original.unwrap_or(settle.bound).max(settle.bound);
    idle_window(Some(longest.saturating_mul(2)), settle.bound, settle.quiet)
}

/// One call of a step: the first, the identical repeat of `repeat_of`, or
/// a page that follows the cursor of `page_of`.
#[derive(Clone, Copy)]
pub(super) struct Call<'s> {
    pub(super) step: &'s PlanStep,
    pub(super) step_no: u32,
    pub(super) resolved: &'s Resolved,
    pub(super) repeat_of: Option<u32>,
    pub(super) page_of: Option<u32>,
    /// Set on a call that confirms the failure of call `confirms`.
    pub(super) confirms: Option<u32>,
    /// The plan's checks, recorded on the step's first call only.
    pub(super) expect: &'s [Expectation],
}

impl<'a> Runner<'a> {
    pub(super) fn new(
        session: Session,
        relaunch: &'a mut dyn Relaunch,
        observed: &'a mut ObservedSet,
        draft: &'a mut Draft,
        context: Context<'a>,
    ) -> Self {
        Self {
            session,
            ended: Vec::new(),
            relaunch,
            observed,
            draft,
            results: BTreeMap::new(),
            pool: Pool::default(),
            next_id: 1,
            steps_done: 0,
            expect: BTreeMap::new(),
            planned: 0,
            on_session: 0,
            failure_restarts: 0,
            retry_after: None,
            answers: None,
            looking: false,
            called_first: Vec::new(),
            learned: BTreeMap::new(),
            roots_taught: Vec::new(),
            idle_taught: Vec::new(),
            seconds_made: Vec::new(),
            made_again: Vec::new(),
            last_window: None,
            steps: BTreeMap::new(),
            refreshed: BTreeMap::new(),
            after_change: None,
            context,
        }
    }

    /// The session the calls ended on, and the ones restarts ended before it.
    pub(super) fn into_sessions(self) -> (Session, Vec<Connection>) {
        (self.session, self.ended)
    }

    /// Offers what the declared stores held at the baseline as real values.
    pub(super) fn seed(&mut self) {
        let declared: Vec<&str> = self
            .context
            .stores
            .iter()
            .map(|s| s.spec.name.as_str())
            .collect();
        // The baseline was just read; should this second look fail, the
        // planner goes without store values and coverage says what it missed.
        let present = self.observed.sample(&declared).unwrap_or_default();
        let present: Vec<(&str, &str)> = present
            .iter()
            .map(|(s, o)| (s.as_str(), o.as_str()))
            .collect();
        let (mut seeds, roots) = crate::plan::seeds::seeds(&self.context.stores, &present);
        // The notes' titles, for tools that name a note by its title.
        let titles = crate::plan::strategy::store_objects::note_titles(&seeds);
        seeds.extend(titles);
        self.pool.seed(seeds, roots);
        // Likewise the tables' declared columns, which let a planned insert
        // name the ones a row must have.
        self.pool
            .seed_tables(self.observed.tables(&declared).unwrap_or_default());
    }

    /// Carries out a harvest-pass step and records its calls as harvest calls.
    pub(super) fn harvest(&mut self, step: &PlanStep) -> ControlFlow<()> {
        let first = self.next_id;
        self.step(step)?;
        self.draft
            .report
            .planner
            .harvest_calls
            .extend(first..self.next_id);
        ControlFlow::Continue(())
    }

    /// Carries out one plan step: the call, the pages after it when it
    /// returned a cursor to follow, its identical repeat when the tool is
    /// declared idempotent or the plan asks, and the experiment's events
    /// after it. Breaks when the audit cannot go on.
    pub(super) fn step(&mut self, step: &PlanStep) -> ControlFlow<()> {
        if let Some(signal) = witness_jail::interrupt::signal() {
            // Told to stop: no further call.
            self.draft.interrupted(signal);
            return ControlFlow::Break(());
        }
        let taught = self.taught(step);
        let step = taught.as_ref().unwrap_or(step);
        self.steps_done += 1;
        let step_no = self.steps_done;
        let expect = self.expect.get(&step_no).cloned().unwrap_or_default();
        // Kept whether or not it resolves: a later look may ask it again,
        // once what it lacked exists.
        self.steps.insert(step_no, step.clone());
        let resolved = match resolve(step, &self.results, &self.pool) {
            Ok(mut resolved) => {
                crate::plan::strategy::file_text::fill(&mut resolved, &step.cues, &self.pool);
                resolved
            }
            Err(reason) => {
                self.not_sent(step, step_no, reason, &expect);
                return ControlFlow::Continue(());
            }
        };
        let call = Call {
            step,
            step_no,
            resolved: &resolved,
            repeat_of: None,
            page_of: None,
            confirms: None,
            expect: &expect,
        };
        let (first, status) = self.call(&call)?;
        if status == CallStatus::Ok {
            // What it made is there now: later calls may refer to it.
            for made in &resolved.creates {
                self.pool
                    .created(&step.tool, step_no, &made.key, &made.value, made.shape);
                if made.key == crate::plan::sql::INSERTED_INTO
                    && let Some(row) = self.row_made(first, &made.value)
                {
                    self.pool.created(
                        &step.tool,
                        step_no,
                        crate::plan::sql::INSERTED_ROW,
                        &serde_json::Value::String(row),
                        None,
                    );
                }
            }
            // A rename leaves the old name naming nothing.
            if let Some((key, old, new)) =
                crate::plan::strategy::store_objects::renamed_by(&step.tool, &resolved.arguments)
            {
                self.pool.renamed(&step.tool, step_no, &key, &old, &new);
            }
            self.follow_pages(&call, first)?;
        }
        let repeated = self.repeats(step, &expect, status);
        if repeated {
            if self.wrote_files(first) {
                wait_for_the_next_second();
            }
            let repeat = Call {
                repeat_of: Some(first),
                expect: &[],
                ..call
            };
            self.call(&repeat)?;
        }
        self.events_after(step_no)?;
        if status == CallStatus::Ok && !repeated && self.makes_again(step, first) {
            // It made files under names of its own: the same call again
            // replaces them, the overwrite a second ask meets.
            self.made_again.push(step.tool.clone());
            self.answers = Some(ErrorAnswer {
                call: first,
                reading: "the same call again: it made files under names of its own, which a \
                          second call replaces"
                    .into(),
            });
            wait_for_the_next_even_second();
            self.step(step)?;
            return ControlFlow::Continue(());
        }
        if status == CallStatus::Ok
            && let Some(retry) = self.idle_retry(step, first)
        {
            // It did nothing on what it was given: the next real object.
            self.answers = Some(ErrorAnswer {
                call: first,
                reading: retry.reading,
            });
            let before = self.draft.report.calls.len();
            self.step(&retry.step)?;
            self.learn_idle(first, step, &retry.step, before);
            return ControlFlow::Continue(());
        }
        if status.is_refusal()
            && let Some(setup) = self.named_first(step, first)
        {
            // The error said which tool to call first: it is, then this
            // step again, within its budget.
            self.called_first.push(setup.tool.clone());
            self.answers = Some(ErrorAnswer {
                call: first,
                reading: format!("the tool it named to call first: {}", setup.tool),
            });
            self.step(&setup)?;
            if self.calls_of(&step.tool) < super::passes::MAX_CALLS_PER_TOOL {
                self.step(step)?;
            }
            return ControlFlow::Continue(());
        }
        if status.is_refusal()
            && let Some(retry) = self.error_retry(step, first)
        {
            let answer = ErrorAnswer {
                call: first,
                reading: retry.reading,
            };
            self.answers = Some(answer.clone());
            let relative = answer.reading.contains("relative to the store");
            let before = self.draft.report.calls.len();
            self.step(&retry.step)?;
            // The retry's own call, not a retry of it, did its job.
            if self
                .draft
                .report
                .calls
                .get(before..)
                .and_then(|made| made.iter().find(|c| c.tool == step.tool))
                .is_some_and(|c| c.outcome.status == CallStatus::Ok)
            {
                self.learn(step, &retry.step);
            }
            self.learn_root(first, before);
            // A store path refused absolute and taken relative: the server
            // keeps one form, so every later path goes relative.
            if relative
                && self
                    .draft
                    .report
                    .calls
                    .last()
                    .is_some_and(|c| c.tool == step.tool && c.outcome.status == CallStatus::Ok)
            {
                self.pool.prefer_relative();
            }
            // Every other operation the error listed, within the budget.
            for (form, reading) in retry.then {
                if self.calls_of(&step.tool) >= super::passes::MAX_CALLS_PER_TOOL {
                    break;
                }
                self.answers = Some(ErrorAnswer {
                    reading,
                    ..answer.clone()
                });
                self.step(&form)?;
            }
            return ControlFlow::Continue(());
        }
        if status.is_refusal() {
            self.with_a_second(step, first)?;
        }
        ControlFlow::Continue(())
    }

    /// Whether call `id` of `step` is to be made again
    /// ([`crate::plan::strategy::second_make`]): it created files only,
    /// under names no argument sent, and its tool was not made again
    /// before and has calls left. A plan file's steps are never repeated
    /// unasked.
    fn makes_again(&self, step: &PlanStep, id: u32) -> bool {
        !step.cues.tool.is_empty()
            && !self.made_again.contains(&step.tool)
            && self.calls_of(&step.tool) < super::passes::MAX_CALLS_PER_TOOL
            && self
                .draft
                .report
                .calls
                .iter()
                .find(|c| c.id == id)
                .is_some_and(crate::plan::strategy::second_make::named_its_own)
    }

    /// When failed call `failed` of `step` needed a second thing of a kind
    /// the plan made one of ([`crate::plan::strategy::second_object`]):
    /// the maker is called again, and `step` sent the new thing, each
    /// within its tool's budget. A plan file's steps are never retried.
    fn with_a_second(&mut self, step: &PlanStep, failed: u32) -> ControlFlow<()> {
        use crate::plan::strategy::second_object;
        // Once a tool: a second that did not help is not made a third time.
        if step.cues.tool.is_empty()
            || self.seconds_made.contains(&step.tool)
            || self.calls_of(&step.tool) >= super::passes::MAX_CALLS_PER_TOOL
        {
            return ControlFlow::Continue(());
        }
        let calls = &self.draft.report.calls;
        let Some(record) = calls.iter().find(|c| c.id == failed) else {
            return ControlFlow::Continue(());
        };
        let text = crate::plan::strategy::read_error::error_text(record);
        // A step whose call did its job and changed the store made what
        // its answer gave.
        let made = |no: u32| {
            calls.iter().any(|c| {
                c.step == no && c.repeat_of.is_none() && c.succeeded() && !c.effects.is_empty()
            })
        };
        let Some(needed) = second_object::needed(step, &record.arguments, &text, &self.pool, &made)
        else {
            return ControlFlow::Continue(());
        };
        let record = record.clone();
        let Some(maker) = self.steps.get(&needed.maker.step) else {
            return ControlFlow::Continue(());
        };
        if self.calls_of(&maker.tool) >= super::passes::MAX_CALLS_PER_TOOL {
            return ControlFlow::Continue(());
        }
        let again = second_object::again(maker);
        self.seconds_made.push(step.tool.clone());
        let made_at = self.steps_done + 1;
        self.answers = Some(ErrorAnswer {
            call: failed,
            reading: format!(
                "a second {} made by {} for {}: the call needs two",
                needed.maker.key, needed.maker.tool, needed.param
            ),
        });
        self.step(&again)?;
        let Some(second) = second_object::second(&self.pool, &needed, made_at) else {
            return ControlFlow::Continue(());
        };
        if self.calls_of(&step.tool) >= super::passes::MAX_CALLS_PER_TOOL {
            return ControlFlow::Continue(());
        }
        let mut retry = step.clone();
        // The first thing stays where it was sent: filled from the pool,
        // it would now be the newest, the second itself.
        for argument in &record.arguments {
            if argument.name != needed.param && argument.value == needed.maker.value {
                retry.set(
                    &argument.name,
                    ArgSpec::Chosen(Box::new(needed.maker.clone())),
                );
            }
        }
        retry.set(&needed.param, ArgSpec::Chosen(Box::new(second.clone())));
        self.answers = Some(ErrorAnswer {
            call: failed,
            reading: format!("the second {} for {}", needed.maker.key, needed.param),
        });
        self.step(&retry)
    }

    /// Keeps what the retry `retry` of `step`, which did its job, was given
    /// that the audit had invented for `step`: a value read from the error
    /// (a flag, a choice, a listed value; [`ArgSpec::Pinned`]) that
    /// [`teachable`] allows. The tool's later forms
    /// (its overwrite form, its switched form) are built from the planned
    /// step, and would otherwise send the invented value the error had
    /// already refused (an operation `witness` where the error listed
    /// `merge`), so that a claim about the form went untested.
    fn learn(&mut self, step: &PlanStep, retry: &PlanStep) {
        let learned = self.learned.entry(step.tool.clone()).or_default();
        for (name, spec) in &retry.args {
            let ArgSpec::Pinned(value) = spec else {
                continue;
            };
            let planned = step.args.iter().find(|(n, _)| n == name).map(|(_, s)| s);
            if planned == Some(spec) || !teachable(&step.cues, name, value) {
                continue;
            }
            learned.retain(|(n, _)| n != name);
            learned.push((name.clone(), value.clone()));
        }
    }

    /// Keeps what the retry made after call `failed` (the first call of
    /// its tool in the ledger from index `from`) taught about the server's
    /// roots, replacing an earlier lesson about the same refused root.
    fn learn_root(&mut self, failed: u32, from: usize) {
        let calls = &self.draft.report.calls;
        let Some(refused) = calls.iter().find(|c| c.id == failed) else {
            return;
        };
        let Some(retry) = calls
            .get(from..)
            .and_then(|made| made.iter().find(|c| c.tool == refused.tool))
        else {
            return;
        };
        let error = (retry.outcome.status != CallStatus::Ok)
            .then(|| crate::plan::strategy::read_error::error_text(retry));
        let refusal = crate::plan::strategy::read_error::error_text(refused);
        if let Some(lesson) = crate::plan::strategy::root_lesson::learnt(
            &refused.arguments,
            &refusal,
            &retry.arguments,
            error.as_deref(),
            &self.pool,
        ) {
            // One lesson a root refused: a later refusal of the root once
            // taken adds its own, and the two stand side by side.
            self.roots_taught
                .retain(|l| l.param != lesson.param || l.refused != lesson.refused);
            self.roots_taught.push(lesson);
        }
    }

    /// Keeps what idle retry `retry` of call `idle` (made from the ledger's
    /// index `from`) taught its tool, when the retry's own call did its
    /// job: answered without saying it changed nothing, or changed the
    /// store where the idle call had only changed nothing observed.
    fn learn_idle(&mut self, idle: u32, planned: &PlanStep, retry: &PlanStep, from: usize) {
        let calls = &self.draft.report.calls;
        let Some(record) = calls.iter().find(|c| c.id == idle) else {
            return;
        };
        let said = crate::checks::said_nothing_done(record).is_some();
        let done = calls.get(from..).and_then(|made| {
            made.iter()
                .find(|c| c.tool == record.tool && c.asked_for_itself())
        });
        if !done.is_some_and(|c| crate::checks::did_its_job(c) && (said || !c.effects.is_empty())) {
            return;
        }
        if let Some(lesson) =
            crate::plan::strategy::idle_lesson::learnt(&record.arguments, planned, retry)
        {
            self.idle_taught.retain(|l| {
                l.tool != lesson.tool || l.param != lesson.param || l.idle != lesson.idle
            });
            self.idle_taught.push(lesson);
        }
    }

    /// Whether `value` names a thing taken away since it was harvested: a
    /// call of a tool named to take things away did its job on it.
    pub(super) fn taken_away(&self, value: &Value) -> bool {
        self.draft.report.calls.iter().any(|c| {
            crate::plan::takes_away(&c.tool)
                && crate::checks::did_its_job(c)
                && c.arguments.iter().any(|a| a.value == *value)
        })
    }

    /// `step` with what errors taught its tool ([`Self::learn`]), where
    /// the step still sends a value the audit invented (or leaves the
    /// parameter out): a form's own choice (a pinned operation, a fresh
    /// name, an object chosen) is kept. `None` when nothing applies. A
    /// plan file's steps are its author's and are never changed.
    fn taught(&self, step: &PlanStep) -> Option<PlanStep> {
        if step.cues.tool.is_empty() {
            return None;
        }
        let mut taught = step.clone();
        let mut changed = self.undo_as_done(&mut taught);
        if !self.roots_taught.is_empty()
            && let Ok(resolved) = resolve(&taught, &self.results, &self.pool)
        {
            changed |= crate::plan::strategy::root_lesson::apply(
                &mut taught,
                &resolved.arguments,
                &self.roots_taught,
            );
        }
        if self.idle_taught.iter().any(|l| l.tool == step.tool)
            && let Ok(resolved) = resolve(&taught, &self.results, &self.pool)
        {
            changed |= crate::plan::strategy::idle_lesson::apply(
                &mut taught,
                &resolved.arguments,
                &self.idle_taught,
                &|value| self.taken_away(value),
            );
        }
        let Some(learned) = self.learned.get(&step.tool) else {
            return changed.then_some(taught);
        };
        for (name, value) in learned {
            // An `Auto` value that the pool fills at call time is real,
            // and stays.
            let invented = match step.args.iter().find(|(n, _)| n == name) {
                None | Some((_, ArgSpec::Synthesized(_))) => true,
                Some((_, ArgSpec::Auto(fallback))) => {
                    !crate::plan::fills_real(&step.cues, name, fallback, &self.pool)
                }
                Some(_) => false,
            };
            if invented {
                taught.set(name, ArgSpec::Pinned(value.clone()));
                changed = true;
            }
        }
        changed.then_some(taught)
    }

    /// Gives an undo (`unmerge_cells`) the values its counterpart's last
    /// call that did its job sent (`merge_cells`'s range), for each
    /// parameter both have ([`crate::plan::strategy::undo_pairs`]). Whether
    /// it changed `step`.
    fn undo_as_done(&self, step: &mut PlanStep) -> bool {
        // Only the undo's first call: its retries answer what its errors
        // said, and must not be put back to the same values.
        if self.calls_of(&step.tool) > 0 {
            return false;
        }
        let report = &self.draft.report;
        let Some(done) = crate::plan::strategy::undo_pairs::counterpart(
            &step.tool,
            report.tools.iter().map(|t| t.name.as_str()),
        ) else {
            return false;
        };
        let Some(call) = report.calls.iter().rev().find(|c| {
            c.tool == done
                && c.repeat_of.is_none()
                && c.page_of.is_none()
                && c.succeeded()
                && !c.effects.is_empty()
        }) else {
            return false;
        };
        let mut changed = false;
        for argument in &call.arguments {
            let Some((_, spec)) = step.args.iter().find(|(n, _)| *n == argument.name) else {
                continue;
            };
            // Only a value the planner would invent or fill from the pool:
            // a fresh name (an output of its own), SQL, a value the schema
            // pins and one chosen already keep theirs.
            if !matches!(spec, ArgSpec::Auto(_) | ArgSpec::Synthesized(_)) {
                continue;
            }
            // Recorded as the counterpart had it: a value it invented
            // stays invented, a real one names the call it came from.
            let spec = if argument.source.is_real() {
                ArgSpec::Chosen(Box::new(crate::plan::harvest::Harvested::sent_by(
                    &call.tool,
                    call.step,
                    &argument.name,
                    argument.value.clone(),
                    None,
                )))
            } else {
                ArgSpec::Synthesized(argument.value.clone())
            };
            step.set(&argument.name, spec);
            changed = true;
        }
        changed
    }

    /// The planned step of the tool failed call `failed` of `step` named to
    /// call first ([`crate::plan::strategy::named_first`]), when it was
    /// not called first before. A plan file's steps are never retried.
    fn named_first(&self, step: &PlanStep, failed: u32) -> Option<PlanStep> {
        if step.cues.tool.is_empty() {
            return None;
        }
        let record = self.draft.report.calls.iter().find(|c| c.id == failed)?;
        let text = crate::plan::strategy::read_error::error_text(record);
        let tool = crate::plan::strategy::named_first::named_first(
            &text,
            &step.tool,
            &self.draft.report.tools,
        )?;
        if self.called_first.contains(&tool.name) {
            return None;
        }
        Some(crate::plan::planned_step_for(tool))
    }

    /// How many calls `tool` has had, its repeats, pages and confirmations
    /// not counted: what its budget counts.
    pub(super) fn calls_of(&self, tool: &str) -> usize {
        self.draft
            .report
            .calls
            .iter()
            .filter(|c| c.tool == tool && c.asked_for_itself())
            .count()
    }

    /// The retry what call `failed` of `step` answered asks for
    /// ([`crate::plan::strategy::read_error`]), when the tool has calls left
    /// in its budget and the retry would send something not sent before. A
    /// plan file's steps are its author's and are never retried.
    fn error_retry(
        &self,
        step: &PlanStep,
        failed: u32,
    ) -> Option<crate::plan::strategy::read_error::Retry> {
        if step.cues.tool.is_empty() {
            return None;
        }
        let calls = &self.draft.report.calls;
        let mine: Vec<&CallRecord> = calls
            .iter()
            .filter(|c| {
                c.tool == step.tool
                    && c.repeat_of.is_none()
                    && c.page_of.is_none()
                    && c.confirms.is_none()
            })
            .collect();
        if self.calls_of(&step.tool) >= super::passes::MAX_CALLS_PER_TOOL {
            return None;
        }
        let record = calls.iter().find(|c| c.id == failed)?;
        let tried: Vec<Value> = mine.iter().map(|c| sent_object(&c.arguments)).collect();
        let entry = self.draft.report.tools.iter().find(|t| t.name == step.tool);
        // The schema as the plan read it: a parameter a retry adds gets the
        // example the tool's text gives it, as a planned one does.
        let documented = entry.and_then(|t| crate::plan::documented_schema(t, &step.cues));
        let schema = documented
            .as_ref()
            .or_else(|| entry.and_then(|t| t.input_schema.as_ref()));
        let text = crate::plan::strategy::read_error::error_text(record);
        // A retry must send something not sent before; a rule whose retry
        // would not gives way to the next.
        // As it will be sent: with what errors taught the server's tools.
        let new = |retry: &PlanStep| {
            let taught = self.taught(retry);
            resolve(taught.as_ref().unwrap_or(retry), &self.results, &self.pool)
                .is_ok_and(|now| !tried.contains(&now.arguments))
        };
        crate::plan::strategy::read_error::answer_anew(
            step,
            &record.arguments,
            &text,
            schema,
            &self.pool,
            &tried,
            &new,
        )
    }

    /// The retry of call `id` of `step`, which succeeded, changed nothing
    /// observed and answered that it changed nothing, or was the planner's
    /// change form and changed nothing observed whatever it answered (a
    /// section moved to the place it had): the next real object
    /// ([`crate::plan::strategy::read_error::idle`]), within the tool's
    /// budget and sending something not sent before. A plan file's steps
    /// are never retried.
    fn idle_retry(
        &self,
        step: &PlanStep,
        id: u32,
    ) -> Option<crate::plan::strategy::read_error::Retry> {
        if step.cues.tool.is_empty()
            || self.calls_of(&step.tool) >= super::passes::MAX_CALLS_PER_TOOL
        {
            return None;
        }
        let calls = &self.draft.report.calls;
        let record = calls.iter().find(|c| c.id == id)?;
        // Any form: a reader-shaped call of a tool that converts or
        // indexes (`"files_changed": 0` over an empty folder) is as idle
        // as a writer's, and the next object costs one call of its budget.
        let said = crate::checks::said_nothing_done(record).is_some();
        let silent = record.form == Some(CallForm::Change)
            && record.succeeded()
            && record.effects.is_empty()
            && crate::checks::named_a_thing(record);
        if !said && !silent {
            return None;
        }
        let tried: Vec<Value> = calls
            .iter()
            .filter(|c| c.tool == step.tool && c.repeat_of.is_none() && c.page_of.is_none())
            .map(|c| sent_object(&c.arguments))
            .collect();
        let retry = crate::plan::strategy::read_error::idle(
            step,
            &record.arguments,
            &self.pool,
            &tried,
            said,
        )?;
        let now = resolve(&retry.step, &self.results, &self.pool).ok()?;
        (!tried.contains(&now.arguments)).then_some(retry)
    }

    /// The key of the one row call `id` was seen to create in `table`
    /// (`orders/4` → `4`), when it made exactly one there.
    fn row_made(&self, id: u32, table: &serde_json::Value) -> Option<String> {
        let table = table.as_str()?;
        let call = self.draft.report.calls.iter().find(|c| c.id == id)?;
        let rows: Vec<&str> = call
            .effects
            .iter()
            .filter(|e| e.op == witness_model::audit::Op::Create)
            .filter_map(|e| e.object.strip_prefix(table)?.strip_prefix('/'))
            .collect();
        match rows[..] {
            // A key the observer had to suffix, or one of several columns,
            // does not spell the row.
            [only] if !only.contains(['#', ',']) => Some(only.to_owned()),
            _ => None,
        }
    }

    /// Whether call `id` changed anything outside a database store: a file,
    /// a repository, the jail's own files.
    fn wrote_files(&self, id: u32) -> bool {
        let report = &self.draft.report;
        let Some(call) = report.calls.iter().find(|c| c.id == id) else {
            return false;
        };
        call.effects.iter().any(|e| {
            !report
                .stores
                .iter()
                .any(|s| s.name == e.store && matches!(s.kind.as_str(), "sqlite" | "postgres"))
        })
    }

    /// Whether a step's first call is repeated identically: after a success
    /// when the tool is declared idempotent (EFF-03), and after any answer
    /// when the plan attaches `idempotent` (RSP-08: an error twice is the
    /// same result too).
    fn repeats(&self, step: &PlanStep, expect: &[Expectation], status: CallStatus) -> bool {
        let declared = self
            .draft
            .report
            .tool(&step.tool)
            .is_some_and(|t| t.hints.idempotent == Some(true));
        let asked = expect.iter().any(|e| matches!(e, Expectation::Idempotent));
        (declared && status == CallStatus::Ok) || asked
    }

    /// Follows the cursor the first call returned, page by page, with the
    /// same arguments and the cursor: until a result returns none, a cursor
    /// comes back a second time, a page fails, or the page bound is reached.
    /// RSP-07 judges the pages from the ledger.
    fn follow_pages(&mut self, call: &Call<'_>, first: u32) -> ControlFlow<()> {
        let paging = Paging::of(call.expect);
        let follows = self
            .draft
            .report
            .tool(&call.step.tool)
            .is_some_and(|t| paging.follows(t));
        if !follows {
            return ControlFlow::Continue(());
        }
        let mut cursors = Vec::new();
        let mut last = self.response_of(first);
        for page in 2..=paging.max_pages {
            let Some((cursor, at)) = last
                .as_ref()
                .and_then(|r| next_cursor(r, paging.next.as_deref()))
            else {
                break;
            };
            if cursors.contains(&cursor) {
                break;
            }
            cursors.push(cursor.clone());
            let resolved = with_cursor(call, &paging.param, cursor, &at, page - 1);
            let next = Call {
                resolved: &resolved,
                page_of: Some(first),
                expect: &[],
                ..*call
            };
            let (id, status) = self.call(&next)?;
            if status != CallStatus::Ok {
                break;
            }
            last = self.response_of(id);
        }
        ControlFlow::Continue(())
    }

    fn response_of(&self, id: u32) -> Option<Value> {
        self.draft
            .report
            .calls
            .iter()
            .rev()
            .find(|c| c.id == id)
            .and_then(|c| c.response.clone())
    }

    /// Records a step whose arguments could not be resolved: not sent.
    fn not_sent(&mut self, step: &PlanStep, step_no: u32, reason: String, expect: &[Expectation]) {
        let outcome = Outcome {
            status: CallStatus::NotSent,
            code: None,
            detail: Some(reason),
        };
        let mut record = record(self.next_id, step_no, &step.tool, outcome);
        record.expect = expect.to_vec();
        // Why it was asked stays with it, not with the next call sent.
        record.answers = self.answers.take();
        // Unresolved, its form is what the step asked: a SQL statement
        // that was never written reads as nothing.
        let unresolved = Resolved {
            arguments: Value::Null,
            recorded: Vec::new(),
            creates: Vec::new(),
        };
        record.form = crate::plan::form_of(step, &unresolved);
        self.draft.report.calls.push(record);
        self.next_id += 1;
    }

    /// Snapshot, call, settle, snapshot: one call recorded with its effects
    /// and probes. Gives its id and how it ended.
    pub(super) fn call(&mut self, call: &Call<'_>) -> ControlFlow<(), (u32, CallStatus)> {
        if self.context.session_per_call && self.on_session > 0 {
            self.restart("a fresh session for every call (--session-per-call)".into())?;
        }
        self.context.progress.report(crate::progress::Event::Call {
            started: self.steps_done as usize,
            planned: self.planned.max(self.steps_done as usize),
            tool: &call.step.tool,
        });
        if let Err(e) = self.idle_control(call) {
            self.draft
                .incomplete(format!("cannot observe the stores: {e}"));
            return ControlFlow::Break(());
        }
        let before = self.relaunch.network_window();
        super::record_outside(&mut self.draft.report, before);
        let written_before = self.relaunch.original_writes();
        super::record_original_writes(&mut self.draft.report, &written_before, None);
        self.on_session += 1;
        let frame_start = next_frame(&self.session);
        let sent = Instant::now();
        // A tool that must run as a task is called as one, and the call
        // lasts until the task ends: its effects are the whole task's.
        let as_task = self
            .draft
            .report
            .tools
            .iter()
            .find(|t| t.name == call.step.tool)
            .and_then(|t| t.execution.as_ref())
            .is_some_and(witness_wire::task::task_required);
        let (outcome, task) = if as_task {
            let (outcome, end) = self
                .session
                .call_tool_as_task(&call.step.tool, &call.resolved.arguments);
            (outcome, Some(end.as_str().to_owned()))
        } else {
            let outcome = self
                .session
                .call_tool(&call.step.tool, &call.resolved.arguments);
            (outcome, None)
        };
        let took = u64::try_from(sent.elapsed().as_millis()).unwrap_or(u64::MAX);
        let mut changes = Changes::default();
        let session = &mut self.session;
        let observed = self.observed.after_answer(
            self.context.settle,
            || session.server.rpc.drain(),
            &mut changes,
        );
        self.last_window = Some(sent.elapsed());
        let frame_end = next_frame(&self.session).saturating_sub(1);
        let background = self.observed.split_background(&mut changes);
        let effects = changes.effects;
        let network = self.relaunch.network_window();
        let bounds_hit = self.relaunch.bounds_hit();
        let original_writes = self.relaunch.original_writes();
        let (outcome, response) = ledger_outcome(outcome, &call.resolved.arguments);
        let status = outcome.status;
        if call.repeat_of.is_none()
            && call.page_of.is_none()
            && call.confirms.is_none()
            && let Some(result) = &response
        {
            self.results.insert(call.step_no, result.clone());
            if status == CallStatus::Ok {
                // What the audit invented and the server only echoed back
                // is no value of the server's.
                let (made, echoed) = invented_scalars(&call.step.cues, &call.resolved.recorded);
                // What an answer lists belongs to what the call named:
                // the chunks of the project it asked about.
                let asked: Vec<(String, Value)> = call
                    .resolved
                    .recorded
                    .iter()
                    .filter(|a| a.source.is_real() && (a.value.is_string() || a.value.is_number()))
                    .map(|a| (a.name.clone(), a.value.clone()))
                    .collect();
                self.pool.absorb_answer(
                    &call.step.tool,
                    call.step_no,
                    result,
                    &echoed,
                    &made,
                    &asked,
                );
            }
        }
        let id = self.next_id;
        self.next_id += 1;
        let mut record = record(id, call.step_no, &call.step.tool, outcome);
        record.session = self.sessions();
        record.repeat_of = call.repeat_of;
        record.page_of = call.page_of;
        record.retry_after = self.retry_after;
        record.after_change = self.after_change.take();
        if call.repeat_of.is_none() && call.page_of.is_none() && call.confirms.is_none() {
            record.answers = self.answers.take();
        }
        record.expect = call.expect.to_vec();
        record.arguments = call.resolved.recorded.clone();
        record.form = crate::plan::form_of(call.step, call.resolved);
        self.draft.latency.insert(id, took);
        record.response = response;
        record.task = task;
        record.frames = (frame_end >= frame_start).then_some([frame_start, frame_end]);
        if self.context.probe.covers_any() {
            // A credential the call handed over (a password in its SQL, a
            // key in its answer) can only be tried by a probe that heard it.
            let mut texts = Vec::new();
            witness_model::answer::string_leaves(&call.resolved.arguments, &mut texts);
            if let Some(response) = &record.response {
                witness_model::answer::string_leaves(response, &mut texts);
            }
            if let Some(detail) = &record.outcome.detail {
                texts.push(detail.as_str());
            }
            self.context.probe.hear(id, &texts);
        }
        record.probes = probe_effects(self.context.probe, &self.context.stores, &effects);
        // What this call removed is offered to no later call.
        crate::plan::strategy::store_objects::forget_deleted(&mut self.pool, &effects);
        record.effects = effects;
        record.background = background;
        record.confirms = call.confirms;
        record.network = network.attempts;
        super::record_dropped(&mut self.draft.report, network.dropped, Some(id));
        super::record_original_writes(
            &mut self.draft.report,
            &original_writes,
            Some((id, &call.step.tool)),
        );
        record.original_writes = original_writes;
        record.confirmations = self.session.server.rpc.take_elicitations();
        if !self.looking {
            self.draft.report.findings.extend(rejected_values(&record));
        }
        self.draft.report.calls.push(record);
        self.observed
            .report_warnings(&mut self.draft.report.findings, Some(id));
        if let Err(e) = observed {
            self.draft
                .incomplete(format!("cannot observe the stores: {e}"));
            return ControlFlow::Break(());
        }
        super::record_bounds(&mut self.draft.report, &bounds_hit, Some(id));
        if status == CallStatus::TransportError {
            self.after_lost_transport(id, &call.step.tool)?;
        } else if let Some(hit) = bounds_hit.first() {
            // A server held at a bound may be left half-broken (a process
            // killed, a fork refused): the rest of the plan gets a fresh one.
            let reason = format!(
                "the server reached its {hit} bound during call {id} ({})",
                call.step.tool
            );
            self.after_failure(reason)?;
        }
        ControlFlow::Continue((id, status))
    }

    /// The moment before a call and its idle control in one: with nothing
    /// in flight, the stores watched for as long as the call before took
    /// (see [`witness_jail::observe::idle_window`]). What changes there is
    /// the server's background, or else the call before's late effect (a
    /// write it finished after its answer; before any call, the startup's):
    /// never the next call's, which is not sent before the control ends.
    ///
    /// Before an identical repeat the window is longer (see
    /// [`repeat_window`]): EFF-03 judges exactly what lands between the
    /// original and its repeat, so an after-answer write of the original
    /// that a loaded machine delayed past the usual window would become a
    /// false idempotency failure.
    ///
    /// Either window ends early where the change signals say nothing moved
    /// ([`Window::until_quiet`]; the rules are
    /// `witness_jail::observe::background`'s), except before the first call
    /// of a session (a server starting is when background is likeliest) and
    /// before a confirmation (a failure stands or falls on a whole control).
    fn idle_control(&mut self, call: &Call<'_>) -> Result<(), witness_jail::observe::ObserveError> {
        let settle = self.context.settle;
        let full = if call.repeat_of.is_some() {
            repeat_window(self.last_window, settle)
        } else {
            idle_window(self.last_window, settle.bound, settle.quiet)
        };
        let window = Window {
            full,
            until_quiet: (self.on_session > 0 && call.confirms.is_none()).then_some(settle.quiet),
        };
        let last = self.draft.report.calls.last();
        let tool = last.map(|c| c.tool.clone());
        let effects = last.map(|c| c.effects.clone()).unwrap_or_default();
        let previous = Previous {
            tool: tool.as_deref(),
            effects: &effects,
        };
        let mut late = Changes::default();
        let idle = self.observed.idle(window, previous, &mut late).map(|_| ());
        let previous_id = self.draft.report.calls.last().map(|c| c.id);
        self.observed
            .report_warnings(&mut self.draft.report.findings, previous_id);
        match self.draft.report.calls.last_mut() {
            Some(last) => last.late_effects.extend(late.effects),
            None => self.draft.report.startup_effects.extend(late.effects),
        }
        idle
    }

    /// A call lost the transport: the server is started again for the rest
    /// of the plan, unless it has already been restarted too often.
    fn after_lost_transport(&mut self, id: u32, tool: &str) -> ControlFlow<()> {
        self.after_failure(format!("the transport failed during call {id} ({tool})"))
    }

    /// The server is started again after a failure, unless it has already
    /// been restarted too often.
    fn after_failure(&mut self, reason: String) -> ControlFlow<()> {
        if self.failure_restarts >= MAX_FAILURE_RESTARTS {
            self.draft.incomplete(format!(
                "{reason} after {MAX_FAILURE_RESTARTS} restarts; later calls were not made"
            ));
            return ControlFlow::Break(());
        }
        self.failure_restarts += 1;
        self.restart(reason)
    }

    /// Applies the experiment's events after step `step_no`. Their changes
    /// are the experiment's, not the server's: recorded beside the step's
    /// last call, charged to nobody.
    fn events_after(&mut self, step_no: u32) -> ControlFlow<()> {
        let Some(events) = self.context.events.get_mut(&step_no) else {
            return ControlFlow::Continue(());
        };
        for event in events.iter_mut() {
            let described = match event(&self.context.stores) {
                Ok(text) => text,
                Err(e) => {
                    self.draft.incomplete(format!(
                        "out-of-band event after call {step_no} failed: {e}"
                    ));
                    return ControlFlow::Break(());
                }
            };
            if let Some(last) = self.draft.report.calls.last_mut() {
                last.events_after.push(described);
            }
        }
        let mut changed = Changes::default();
        if let Err(e) = self.observed.moment(&mut changed) {
            self.draft
                .incomplete(format!("cannot observe the stores: {e}"));
            return ControlFlow::Break(());
        }
        if let Some(last) = self.draft.report.calls.last_mut() {
            last.event_effects = changed.effects;
        }
        ControlFlow::Continue(())
    }
}

/// A page's arguments: the first call's, with the cursor in `param`,
/// recorded as harvested from the page that returned it.
fn with_cursor(call: &Call<'_>, param: &str, cursor: Value, at: &str, from_page: u32) -> Resolved {
    let mut arguments = call.resolved.arguments.clone();
    if let Value::Object(map) = &mut arguments {
        map.insert(param.to_owned(), cursor.clone());
    }
    let mut recorded: Vec<Argument> = call
        .resolved
        .recorded
        .iter()
        .filter(|a| a.name != param)
        .cloned()
        .collect();
    recorded.push(Argument {
        name: param.to_owned(),
        value: cursor,
        source: Provenance::Harvested,
        from: Some(Origin {
            call: format!("call {}", call.step_no),
            path: format!("{at} (page {from_page})"),
        }),
        parts: Vec::new(),
        object: None,
    });
    Resolved {
        arguments,
        recorded,
        creates: Vec::new(),
    }
}

/// Every string or number inside the arguments the audit invented for a
/// call (their provenance `synthesized`), however deep: those that name
/// the thing the call makes (under a key the cues call new), and the rest.
fn invented_scalars(
    cues: &crate::plan::cues::ToolCues,
    arguments: &[witness_model::audit::Argument],
) -> (Vec<Value>, Vec<Value>) {
    fn walk(
        cues: &crate::plan::cues::ToolCues,
        key: &str,
        value: &Value,
        made: &mut Vec<Value>,
        other: &mut Vec<Value>,
    ) {
        match value {
            Value::Object(map) => map.iter().for_each(|(k, v)| walk(cues, k, v, made, other)),
            Value::Array(items) => items.iter().for_each(|v| walk(cues, key, v, made, other)),
            Value::String(_) | Value::Number(_) if cues.new_name(key) => made.push(value.clone()),
            Value::String(_) | Value::Number(_) => other.push(value.clone()),
            _ => {}
        }
    }
    let (mut made, mut other) = (Vec::new(), Vec::new());
    for argument in arguments
        .iter()
        .filter(|a| a.source == witness_model::audit::Provenance::Synthesized)
    {
        walk(cues, &argument.name, &argument.value, &mut made, &mut other);
    }
    (made, other)
}

/// The object of arguments a call sent, as recorded.
pub(super) fn sent_object(arguments: &[Argument]) -> Value {
    Value::Object(
        arguments
            .iter()
            .map(|a| (a.name.clone(), a.value.clone()))
            .collect(),
    )
}

/// A call record with nothing observed yet.
fn record(id: u32, step: u32, tool: &str, outcome: Outcome) -> CallRecord {
    CallRecord {
        id,
        step,
        session: 0,
        tool: tool.to_owned(),
        repeat_of: None,
        page_of: None,
        retry_after: None,
        after_change: None,
        answers: None,
        confirms: None,
        expect: Vec::new(),
        form: None,
        arguments: Vec::new(),
        outcome,
        task: None,
        response: None,
        frames: None,
        effects: Vec::new(),
        late_effects: Vec::new(),
        background: Vec::new(),
        network: Vec::new(),
        original_writes: Vec::new(),
        confirmations: Vec::new(),
        probes: Vec::new(),
        events_after: Vec::new(),
        event_effects: Vec::new(),
    }
}

/// How a call ended in the ledger's terms, and the result when one came.
/// An RPC error's message is the server's text: it is clipped.
/// A result without `isError` whose content says the call failed is an
/// in-band error, its text the detail ([`CallStatus::of_answer`]).
fn ledger_outcome(outcome: CallOutcome, sent: &Value) -> (Outcome, Option<Value>) {
    let (status, code, detail, response) = match outcome {
        CallOutcome::Result(result) => {
            let (status, said) = CallStatus::of_answer(&result, sent);
            (status, None, said, Some(result))
        }
        CallOutcome::RpcError { code, message } => (
            CallStatus::RpcError,
            Some(code),
            Some(witness_text::clip(&message, 300)),
            None,
        ),
        CallOutcome::Transport(detail) => (CallStatus::TransportError, None, Some(detail), None),
        CallOutcome::InputRequired { result, detail } => {
            (CallStatus::InputRequired, None, Some(detail), Some(result))
        }
    };
    let outcome = Outcome {
        status,
        code,
        detail,
    };
    (outcome, response)
}

/// A failure on values that exist — the server's own, or the store's — is
/// evidence, not noise. Only when nothing in the call was invented: a
/// failure beside an invented value may be the invented value's.
fn rejected_values(record: &CallRecord) -> Option<Finding> {
    let failed = record.outcome.status.is_refusal();
    if !failed || record.used_synthesized() {
        return None;
    }
    let (kind, what, why) = if record.used_harvested() {
        (
            FindingKind::HarvestedValueRejected,
            "harvested values",
            "the value exists by the server's own account",
        )
    } else if record.used_store() {
        (
            FindingKind::StoreValueRejected,
            "store values",
            "the store held it when the audit began",
        )
    } else {
        return None;
    };
    Some(Finding {
        kind,
        detail: format!(
            "call {} ({}) failed on {what} ({}): {why}, so the failure is evidence, not noise",
            record.id,
            record.tool,
            value_origins(record)
        ),
        call: Some(record.id),
    })
}

/// `entityName from call 2 at structured.entities[0].name; path from store fs:file/a.txt`.
fn value_origins(call: &CallRecord) -> String {
    let shown = |from: Option<&Origin>, object: Option<&StoreObject>| match (from, object) {
        (Some(from), _) => Some(format!("from {} at {}", from.call, from.path)),
        (None, Some(o)) if o.object.is_empty() => {
            Some(format!("from store {} (its root)", o.store))
        }
        (None, Some(o)) => Some(format!("from store {}:{}", o.store, o.object)),
        (None, None) => None,
    };
    let mut origins = Vec::new();
    for arg in &call.arguments {
        if let Some(origin) = shown(arg.from.as_ref(), arg.object.as_ref()) {
            origins.push(format!("{} {origin}", arg.name));
        }
        for part in &arg.parts {
            if let Some(origin) = shown(part.from.as_ref(), part.object.as_ref()) {
                origins.push(format!("{}{} {origin}", arg.name, part.at));
            }
        }
    }
    origins.join("; ")
}

/// The sequence number the session's next frame will get.
fn next_frame(session: &Session) -> u64 {
    session
        .server
        .rpc
        .transcript()
        .frames
        .last()
        .map_or(1, |f| f.seq + 1)
}

/// Waits until the wall clock is past the next whole second. File formats
/// and version control stamp a write's time to the second (a document's
/// modified time, a backup named for the second, a commit's date), so an
/// identical repeat within the same second as its original writes the
/// same bytes, and a tool that adds or replaces something on every call
/// passes for idempotent. Only a repeat after an original that wrote
/// files waits, so an audit of a database store pays nothing for it.
fn wait_for_the_next_second() {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let rest = Duration::from_secs(1)
        .saturating_sub(Duration::from_nanos(u64::from(since.subsec_nanos())));
    // A margin past the boundary: a server's clock read is not ours.
    std::thread::sleep(rest + Duration::from_millis(20));
}

/// Waits until the wall clock is past the next whole even second: a zip
/// archive (`.docx`, `.xlsx`, `.pptx`, `.odt`) stamps each member with a
/// DOS time, which counts seconds in twos, so a document saved again one
/// second later may keep every byte, and whether a second call of a
/// generator shows its replace would hang on the clock.
fn wait_for_the_next_even_second() {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    std::thread::sleep(until_even_second(since) + Duration::from_millis(20));
}

/// How long from `since` (time since the epoch) to the next whole even
/// second.
fn until_even_second(since: Duration) -> Duration {
    let next = (since.as_secs() / 2 + 1) * 2;
    Duration::from_secs(next).saturating_sub(since)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::audit::fakes;

    #[test]
    fn the_even_second_wait_ends_where_a_dos_time_changes() {
        let at = |secs: u64, millis: u64| Duration::from_millis(secs * 1000 + millis);
        // From inside an even second: to the next even one, not the odd one.
        assert_eq!(until_even_second(at(100, 300)), Duration::from_millis(1700));
        // From inside an odd second: to the next even one.
        assert_eq!(until_even_second(at(101, 300)), Duration::from_millis(700));
        // On an even boundary: a whole two seconds, since that second's
        // DOS time is the one just written.
        assert_eq!(until_even_second(at(100, 0)), Duration::from_secs(2));
    }

    #[test]
    fn only_writing_flags_and_words_for_no_object_are_taught() {
        let tool: ToolEntry = serde_json::from_value(json!({
            "name": "pdf_tool", "description": "", "hints": {}, "class": "unknown",
            "has_output_schema": false, "input_schema": {"type": "object", "properties": {
                "input_path": {"type": "string"}}},
        }))
        .expect("a tool entry");
        let cues = crate::plan::cues::ToolCues::of(&tool);
        assert!(teachable(&cues, "operation", &json!("merge")));
        assert!(teachable(&cues, "force", &json!(true)));
        assert!(!teachable(&cues, "force", &json!(false)));
        assert!(
            !teachable(&cues, "dry_run", &json!(true)),
            "a rehearsal would stop the later forms writing"
        );
        assert!(
            !teachable(&cues, "verbose", &json!(true)),
            "a flag of no side"
        );
        assert!(!teachable(&cues, "project_id", &json!("garden")));
        assert!(!teachable(&cues, "input_path", &json!("a.pdf")));
        assert!(!teachable(&cues, "count", &json!(3)));
    }

    #[test]
    fn outcomes_are_told_apart_and_a_servers_message_is_clipped() {
        let (outcome, response) =
            ledger_outcome(CallOutcome::Result(json!({"isError": true})), &json!({}));
        assert_eq!(outcome.status, CallStatus::ToolError);
        assert_eq!(response, Some(json!({"isError": true})));
        let (outcome, response) =
            ledger_outcome(CallOutcome::Result(json!({"isError": "yes"})), &json!({}));
        assert_eq!(outcome.status, CallStatus::Ok, "only `true` is an error");
        assert!(response.is_some());
        let (outcome, response) = ledger_outcome(
            CallOutcome::RpcError {
                code: -32602,
                message: "x".repeat(400),
            },
            &json!({}),
        );
        assert_eq!(
            (outcome.status, outcome.code),
            (CallStatus::RpcError, Some(-32602))
        );
        assert_eq!(outcome.detail.map(|d| d.chars().count()), Some(301));
        assert!(response.is_none());
        let (outcome, _) = ledger_outcome(CallOutcome::Transport("gone".into()), &json!({}));
        assert_eq!(outcome.status, CallStatus::TransportError);
        assert_eq!(outcome.detail.as_deref(), Some("gone"));
        let not_found = json!({"content": [{"type": "text", "text": "File not found: a.md"}]});
        let (outcome, response) =
            ledger_outcome(CallOutcome::Result(not_found.clone()), &json!({}));
        assert_eq!(outcome.status, CallStatus::InBandError);
        assert_eq!(outcome.detail.as_deref(), Some("File not found: a.md"));
        assert_eq!(response, Some(not_found), "the answer is kept as served");
    }

    #[test]
    fn a_failure_on_harvested_values_is_a_finding_and_on_invented_ones_is_not() {
        let mut call = fakes::call(
            4,
            "get_note",
            CallStatus::ToolError,
            Provenance::Harvested,
            vec![],
        );
        call.arguments[0].name = "note_id".into();
        call.arguments[0].from = Some(Origin {
            call: "call 2".into(),
            path: "structured.notes[0].id".into(),
        });
        let finding = rejected_values(&call).map(|f| (f.kind, f.detail, f.call));
        assert_eq!(
            finding,
            Some((
                FindingKind::HarvestedValueRejected,
                "call 4 (get_note) failed on harvested values (note_id from call 2 at structured.notes[0].id): the value exists by the server's own account, so the failure is evidence, not noise".into(),
                Some(4)
            ))
        );
        call.outcome.status = CallStatus::Ok;
        assert!(rejected_values(&call).is_none(), "it did not fail");
        let invented = fakes::call(
            5,
            "get_note",
            CallStatus::RpcError,
            Provenance::Synthesized,
            vec![],
        );
        assert!(rejected_values(&invented).is_none());
    }

    #[test]
    fn a_repeat_waits_twice_the_longer_of_the_original_and_the_settle_bound() {
        use std::time::Duration;
        let settle = Settle::from_millis(50, 5);
        let ms = Duration::from_millis;
        // A quick original still gets twice the settle bound.
        assert_eq!(repeat_window(Some(ms(12)), settle), ms(100));
        assert_eq!(repeat_window(None, settle), ms(100));
        // A slow original gets twice its own duration, within the cap.
        assert_eq!(repeat_window(Some(ms(300)), settle), ms(600));
        assert_eq!(
            repeat_window(Some(ms(5_000)), settle),
            witness_jail::observe::MAX_IDLE_WINDOW
        );
        // Never shorter than an ordinary control.
        assert!(
            repeat_window(Some(ms(12)), settle)
                >= idle_window(Some(ms(12)), settle.bound, settle.quiet)
        );
    }
}

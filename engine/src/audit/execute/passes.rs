//! The order of the calls: the harvest pass, the plan's other steps, one
//! retry pass for tools that failed on invented arguments, and a last look
//! at tools that did nothing before others changed the store.
//!
//! The decisions are plain functions of the ledger so far ([`retries`],
//! [`failed_on_invention`], [`reharvest_sources`]); [`Runner::run_plan`]
//! only carries them out.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::ControlFlow;

use serde_json::Value;
use witness_model::audit::{CallRecord, ErrorAnswer, Op};

use super::calls::Runner;
use super::confirm::MORE;
use crate::plan::harvest::Pool;
use crate::plan::{ArgSpec, Plan, PlanStep, resolve, satisfiable};

impl Runner<'_> {
    /// Every step of `plan`, in order. Breaks when the audit cannot go on.
    pub(super) fn run_plan(&mut self, plan: &Plan) -> ControlFlow<()> {
        self.expect = plan.expect.clone();
        self.planned = plan.steps.len();
        let harvested = self.harvest_pass(&plan.steps[..plan.harvest])?;
        let mut steps: Vec<PlanStep> = plan.steps[plan.harvest..].to_vec();
        let mut retry_at = plan.retry_at.map(|r| r.saturating_sub(plan.harvest));
        let mut index = 0usize;
        let mut retries_end = 0usize;
        // Where the failures so far are confirmed: after the retries, before
        // the first remover or ender takes away what a confirmation has to
        // act on again (the task a control completes once more).
        let mut confirm_at = None;
        while index < steps.len() || retry_at.is_some() {
            if retry_at == Some(index) {
                retry_at = None;
                let again = self.retry_pass(plan, &harvested)?;
                retries_end = index + again.len();
                confirm_at = Some(retries_end);
                steps.splice(index..index, again);
                continue;
            }
            if confirm_at == Some(index) {
                confirm_at = None;
                // A move of a thing by its path takes it away from its
                // place as a remover does.
                let takes_away = steps[index..].iter().any(|s| {
                    crate::plan::takes_away(&s.tool)
                        || crate::plan::moves_by_path(
                            &s.cues,
                            s.args.iter().map(|(name, _)| name.as_str()),
                        )
                });
                if self.context.confirm && takes_away {
                    self.confirm_failures()?;
                }
            }
            let step = steps[index].clone();
            index += 1;
            let retried = index <= retries_end;
            let asked_alike = !step.writer_shaped() || plan.steps[..plan.harvest].contains(&step);
            if !retried && harvested.contains(&step.tool) && asked_alike {
                // Already called in the harvest pass, and asked the same way.
                continue;
            }
            self.step(&step)?;
            self.after_setup(plan, &step)?;
        }
        // The failures so far are confirmed before the last looks, whose
        // calls make things a confirmation on fresh values would otherwise
        // take (a goal just made is no goal to reopen); the looks' own
        // failures after them.
        if self.context.confirm {
            self.confirm_failures()?;
        }
        let looked = self.late_pass()?;
        if self.context.confirm && looked {
            self.confirm_failures()?;
        }
        let refreshed = self.refresh_pass()?;
        if self.context.confirm && refreshed {
            self.confirm_failures()?;
        }
        ControlFlow::Continue(())
    }

    /// Each output asked for again after a change the audit makes to what
    /// it is made from ([`crate::plan::strategy::stale_output`]); one
    /// change for every output that chose it. Gives whether any output
    /// was asked for.
    fn refresh_pass(&mut self) -> ControlFlow<(), bool> {
        let steps = &self.steps;
        let names_its_own = |call: &CallRecord| {
            steps
                .get(&call.step)
                .is_some_and(crate::plan::strategy::stale_output::names_its_own)
        };
        let refreshes = crate::plan::strategy::stale_output::stale_outputs(
            &self.draft.report.calls,
            &crate::plan::takes_away,
            &names_its_own,
        );
        // The change each refresh chose, once made: its call, when it did
        // its job and changed a store.
        let mut changes: BTreeMap<u32, Option<u32>> = BTreeMap::new();
        let mut refreshed = false;
        for refresh in refreshes {
            let made = match changes.get(&refresh.change) {
                Some(made) => *made,
                None => {
                    let made = self.make_change(refresh.change, &refresh.tool, MORE)?;
                    changes.insert(refresh.change, made);
                    made
                }
            };
            let Some(made) = made else {
                continue;
            };
            let Some(output) = self
                .draft
                .report
                .calls
                .iter()
                .find(|c| c.id == refresh.after)
                .map(super::confirm::as_sent)
            else {
                continue;
            };
            let Some(step) = self.steps.get(&refresh.step).cloned() else {
                continue;
            };
            self.answers = Some(ErrorAnswer {
                call: refresh.after,
                reading: format!(
                    "its output again, on the values it was sent, after the audit changed what it is made from (call {} of {} asked again)",
                    refresh.change, refresh.change_tool
                ),
            });
            self.looking = true;
            self.after_change = Some(made);
            let call = super::calls::Call {
                step: &step,
                step_no: refresh.step,
                resolved: &output,
                repeat_of: None,
                page_of: None,
                confirms: None,
                expect: &[],
            };
            let flow = self.call(&call);
            self.looking = false;
            let (id, _) = flow?;
            self.refreshed.insert(id, refresh.change);
            refreshed = true;
        }
        ControlFlow::Continue(refreshed)
    }

    /// Asks call `change` (of another tool than `output`'s) again, its
    /// fresh names made anew with `suffix`, as a change to what `output`
    /// is made from. Gives the call made, when it did its job and changed
    /// a store. A value refused now is no evidence against the harvest:
    /// the store has changed since, as for a last look.
    pub(super) fn make_change(
        &mut self,
        change: u32,
        output: &str,
        suffix: &str,
    ) -> ControlFlow<(), Option<u32>> {
        let Some(made) = self.draft.report.calls.iter().find(|c| c.id == change) else {
            return ControlFlow::Continue(None);
        };
        let tool = made.tool.clone();
        let Some(step) = self
            .steps
            .get(&made.step)
            .map(|s| super::confirm::afresh(s, made, suffix))
        else {
            return ControlFlow::Continue(None);
        };
        self.answers = Some(ErrorAnswer {
            call: change,
            reading: format!(
                "a change to what the output of {output} is made from, before it is asked again"
            ),
        });
        let before = self.draft.report.calls.len();
        self.looking = true;
        let flow = self.step(&step);
        self.looking = false;
        flow?;
        let made = self
            .draft
            .report
            .calls
            .get(before..)
            .and_then(|made| made.iter().find(|c| c.tool == tool))
            .filter(|c| crate::checks::did_its_job(c) && !c.effects.is_empty())
            .map(|c| c.id);
        ControlFlow::Continue(made)
    }

    /// One last look at each tool that did nothing, or destroyed nothing,
    /// before another tool changed the store
    /// ([`crate::plan::strategy::late_look`]).
    /// Gives whether any call was made.
    fn late_pass(&mut self) -> ControlFlow<(), bool> {
        let looks = crate::plan::strategy::late_look::late_looks(
            &self.draft.report.calls,
            MAX_CALLS_PER_TOOL,
            &crate::plan::takes_away,
        );
        let mut looked = false;
        let mut confirmed = false;
        for look in looks {
            // A look before it may have spent this tool's budget.
            if self.calls_of(&look.tool) >= MAX_CALLS_PER_TOOL {
                continue;
            }
            // The other looks' failures are confirmed before a remover
            // takes away what they changed, as the plan's are.
            if looked && !confirmed && self.context.confirm && crate::plan::takes_away(&look.tool) {
                confirmed = true;
                self.confirm_failures()?;
            }
            let Some(step) = self.steps.get(&look.step).cloned() else {
                continue;
            };
            self.answers = Some(ErrorAnswer {
                call: look.after,
                reading: look.reading,
            });
            self.looking = true;
            let flow = self.step(&step);
            self.looking = false;
            flow?;
            looked = true;
        }
        ControlFlow::Continue(looked)
    }

    /// When `step` was a setup call that succeeded (its name says it sets
    /// the session up: `set_working_dir`, `use_vault`), every tool whose
    /// calls so far all failed is tried again at once, each within its
    /// budget of [`MAX_CALLS_PER_TOOL`], its calls marked `retry_after`.
    fn after_setup(&mut self, plan: &Plan, step: &PlanStep) -> ControlFlow<()> {
        let calls = &self.draft.report.calls;
        let Some(setup) = calls
            .last()
            .filter(|c| c.tool == step.tool && c.succeeded())
        else {
            return ControlFlow::Continue(());
        };
        if !sets_up_session(&step.tool) {
            return ControlFlow::Continue(());
        }
        let setup = setup.id;
        let again = setup_retries(calls, &plan.steps, &step.tool);
        self.retry_after = Some(setup);
        for retry in &again {
            let flow = self.step(retry);
            if flow.is_break() {
                self.retry_after = None;
                return flow;
            }
        }
        self.retry_after = None;
        ControlFlow::Continue(())
    }

    /// Read-only tools, each once every required argument can be filled
    /// without inventing anything, until none can. Gives the tools called.
    fn harvest_pass(&mut self, steps: &[PlanStep]) -> ControlFlow<(), Vec<String>> {
        let mut pending = steps.to_vec();
        let mut harvested = Vec::new();
        while let Some(i) = pending
            .iter()
            .position(|step| satisfiable(step, &self.pool))
        {
            let step = pending.remove(i);
            self.harvest(&step)?;
            harvested.push(step.tool);
        }
        ControlFlow::Continue(harvested)
    }

    /// One more chance for tools that failed on invented arguments, now that
    /// the harvest may hold real ones: the steps to run again.
    fn retry_pass(&mut self, plan: &Plan, harvested: &[String]) -> ControlFlow<(), Vec<PlanStep>> {
        if failed_on_invention(&self.draft.report.calls) {
            // Harvest again first: the writes since the first pass may have
            // made the real values those tools need.
            let sources = reharvest_sources(
                &plan.steps[..plan.harvest],
                harvested,
                &self.draft.report.calls,
            );
            for step in sources {
                self.harvest(step)?;
            }
        }
        ControlFlow::Continue(retries(
            &self.draft.report.calls,
            &plan.steps,
            &self.results,
            &self.pool,
        ))
    }
}

/// The most calls one tool gets, retries included (its pages and
/// identical repeats not counted): enough for a harvested value, a setup
/// step and a relative path to each have their turn, few enough that a
/// tool that always fails costs little.
pub(super) const MAX_CALLS_PER_TOOL: usize = 4;

/// Words of a tool's name that say it sets the session up for the calls
/// after it: a working directory, a vault, a database, a login. Only ever
/// used to decide when to retry earlier failures, never a class.
const SETUP_WORDS: [&str; 14] = [
    "set",
    "use",
    "select",
    "switch",
    "connect",
    "init",
    "initialize",
    "configure",
    "login",
    "authenticate",
    "activate",
    "chdir",
    "cd",
    "mount",
];

/// Whether a tool's name says it sets up the session.
pub(super) fn sets_up_session(tool: &str) -> bool {
    crate::plan::cues::words(tool)
        .iter()
        .any(|w| SETUP_WORDS.contains(&w.as_str()))
}

/// The steps to try again after a setup call of `setup`: the first
/// planned step of each other tool that was called, none of whose calls
/// succeeded, whose failures were the server's answers (a tool error, a
/// JSON-RPC error or an error in the answer; a lost transport is the
/// restart's business), and which
/// has calls left in its budget.
pub(super) fn setup_retries(
    calls: &[CallRecord],
    steps: &[PlanStep],
    setup: &str,
) -> Vec<PlanStep> {
    let mut out: Vec<PlanStep> = Vec::new();
    for step in steps {
        if step.tool == setup || out.iter().any(|s| s.tool == step.tool) {
            continue;
        }
        let mine: Vec<&CallRecord> = calls
            .iter()
            .filter(|c| c.tool == step.tool && c.repeat_of.is_none() && c.page_of.is_none())
            .collect();
        let answered_failures =
            !mine.is_empty() && mine.iter().all(|c| c.outcome.status.is_refusal());
        if answered_failures && mine.len() < MAX_CALLS_PER_TOOL {
            out.push(step.clone());
        }
    }
    out
}

/// The harvest steps asked again before a retry: the sources, listing tools
/// (by name: a name only ever chooses what to ask, never a safety class)
/// that need no harvested value themselves, and only those the first pass
/// called with success (one that failed, or timed out, gave no values the
/// first time and would cost as much again).
pub(super) fn reharvest_sources<'p>(
    harvest: &'p [PlanStep],
    harvested: &[String],
    calls: &[CallRecord],
) -> Vec<&'p PlanStep> {
    harvest
        .iter()
        .filter(|step| {
            let source = step
                .args
                .iter()
                .all(|(_, spec)| matches!(spec, ArgSpec::Pinned(_) | ArgSpec::Literal(_)));
            let answered = calls.iter().any(|c| c.tool == step.tool && c.succeeded());
            source
                && answered
                && crate::plan::lists_by_name(&step.tool)
                && harvested.contains(&step.tool)
        })
        .collect()
}

/// Whether every call of `calls` failed on synthesized arguments.
fn all_failed_on_invention<'c>(mut calls: impl Iterator<Item = &'c CallRecord>) -> bool {
    calls.all(|c| c.outcome.status.is_refusal() && c.used_synthesized())
}

/// Whether some tool has been called and every call of it failed on
/// synthesized arguments.
pub(super) fn failed_on_invention(calls: &[CallRecord]) -> bool {
    let tools: BTreeSet<&str> = calls.iter().map(|c| c.tool.as_str()).collect();
    tools
        .into_iter()
        .any(|tool| all_failed_on_invention(calls.iter().filter(|c| c.tool == tool)))
}

/// Steps to try again: tools none of whose calls succeeded, that failed on
/// synthesized arguments, and for which the harvest now offers other
/// values, or whose last call's values a later call has since made
/// ([`made_since`]: then asked the same again).
pub(super) fn retries(
    calls: &[CallRecord],
    steps: &[PlanStep],
    results: &BTreeMap<u32, Value>,
    pool: &Pool,
) -> Vec<PlanStep> {
    let mut out = Vec::new();
    for step in steps {
        if out.iter().any(|s: &PlanStep| s.tool == step.tool) {
            continue;
        }
        let mine: Vec<&CallRecord> = calls.iter().filter(|c| c.tool == step.tool).collect();
        if mine.is_empty() || !all_failed_on_invention(mine.iter().copied()) {
            continue;
        }
        // The step as planned, then with the schema's suggestions given up
        // for what the answers since offered (`'default'` from a
        // description, when a list answered `["notes"]`).
        let unpinned = unpinned(step);
        let fresh = [step, &unpinned].into_iter().find(|candidate| {
            resolve(candidate, results, pool)
                .is_ok_and(|now| !mine.iter().any(|c| c.arguments == now.recorded))
        });
        if let Some(candidate) = fresh {
            out.push(candidate.clone());
        } else if mine.len() < MAX_CALLS_PER_TOOL
            && resolve(step, results, pool).is_ok()
            && mine.last().is_some_and(|last| made_since(last, calls))
        {
            out.push(step.clone());
        }
    }
    out
}

/// Whether a value `failed` was sent has since been made: a later call of
/// another tool succeeded, created something in a store, and was given the
/// same value as a name of the same kind of thing: under the same
/// parameter, or as the `name`, `id`, `slug`, `key` or `title` of a tool
/// about that thing (`get_project(project: "witness")` answered `Unknown
/// project`, then `register_project(slug: "witness")` registered it). The
/// same arguments then ask about something that exists. Content (a note's
/// text) names nothing.
fn made_since(failed: &CallRecord, calls: &[CallRecord]) -> bool {
    let sent: Vec<(&str, &Value)> = failed
        .arguments
        .iter()
        .filter(|a| !crate::plan::synth::is_content(&a.name.to_ascii_lowercase()))
        .filter(|a| a.value.as_str().is_some_and(|s| !s.is_empty()))
        .map(|a| (a.name.as_str(), &a.value))
        .collect();
    calls.iter().any(|c| {
        c.id > failed.id
            && c.tool != failed.tool
            && c.succeeded()
            && c.effects.iter().any(|e| e.op == Op::Create)
            && c.arguments.iter().any(|a| {
                sent.iter().any(|(name, value)| {
                    **value == a.value && names_one_kind(name, &a.name, &c.tool)
                })
            })
    })
}

/// Whether parameter `made` of the creator `tool` names the kind of thing
/// parameter `asked` names: the same parameter, or a generic name of a
/// tool whose noun is the thing (`slug` of `register_project` for
/// `project` or `project_id`).
fn names_one_kind(asked: &str, made: &str, tool: &str) -> bool {
    use crate::plan::{cues::words, harvest::singular};
    if asked == made {
        return true;
    }
    const GENERIC: [&str; 5] = ["name", "id", "slug", "key", "title"];
    let mut thing = words(asked);
    if thing.len() > 1 && thing.last().is_some_and(|w| GENERIC.contains(&w.as_str())) {
        thing.pop();
    }
    let noun = words(tool).pop();
    GENERIC.contains(&made.to_ascii_lowercase().as_str())
        && thing
            .last()
            .zip(noun)
            .is_some_and(|(thing, noun)| singular(thing) == singular(&noun))
}

/// `step` with every value the schema suggested (`Pinned`) open to what
/// the harvest offers, the suggestion kept as the fallback.
fn unpinned(step: &PlanStep) -> PlanStep {
    let mut step = step.clone();
    for (_, spec) in &mut step.args {
        if let ArgSpec::Pinned(v) = spec {
            *spec = ArgSpec::Auto(v.clone());
        }
    }
    step
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use witness_model::audit::{CallStatus, Op, Provenance};

    use super::*;
    use crate::audit::fakes;

    fn auto(tool: &str, param: &str) -> PlanStep {
        PlanStep {
            tool: tool.into(),
            args: vec![(param.into(), ArgSpec::Auto(json!("witness")))],
            ..Default::default()
        }
    }

    /// A call of `step` as it was made before anything was harvested.
    fn made(id: u32, step: &PlanStep, status: CallStatus) -> CallRecord {
        let mut call = fakes::call(id, &step.tool, status, Provenance::Synthesized, vec![]);
        if let Ok(resolved) = resolve(step, &BTreeMap::new(), &Pool::default()) {
            call.arguments = resolved.recorded;
        }
        call
    }

    #[test]
    fn retried_are_tools_that_only_failed_on_invention_and_now_resolve_otherwise() {
        let open = auto("open_note", "note_id");
        let stuck = auto("open_thing", "widget_id");
        let fine = auto("show_note", "note_id");
        let uncalled = auto("close_note", "note_id");
        let literal = PlanStep {
            tool: "pin_note".into(),
            args: vec![("note_id".into(), ArgSpec::Literal(json!("x")))],
            ..Default::default()
        };
        let calls = [
            made(1, &open, CallStatus::ToolError),
            made(2, &open, CallStatus::RpcError),
            // No harvested value fits a widget: it would fail the same way.
            made(3, &stuck, CallStatus::ToolError),
            made(4, &fine, CallStatus::ToolError),
            made(5, &fine, CallStatus::Ok),
            // A failure on a person's value is not the planner's to retry.
            made(6, &literal, CallStatus::ToolError),
        ];
        let mut pool = Pool::default();
        pool.absorb(
            "list_notes",
            7,
            &json!({"structuredContent": {"notes": [{"id": "note_0001"}]}}),
        );
        let steps = [open.clone(), stuck, fine, uncalled, literal, open.clone()];
        let again = retries(&calls, &steps, &BTreeMap::new(), &pool);
        assert_eq!(again, [open], "once, though planned twice");
        assert!(retries(&calls, &steps, &BTreeMap::new(), &Pool::default()).is_empty());
    }

    #[test]
    fn a_tool_that_failed_on_a_value_made_since_is_asked_the_same_again() {
        let get = auto("get_project", "project");
        let other = auto("get_report", "project");
        let mut register = made(3, &auto("register_project", "name"), CallStatus::Ok);
        register.effects = vec![fakes::effect("fs", "projects/witness", Op::Create)];
        // A creator that changed nothing makes nothing.
        let mut idle = made(4, &auto("register_report", "name"), CallStatus::Ok);
        idle.arguments[0].value = json!("other");
        let calls = [
            made(1, &get, CallStatus::ToolError),
            made(2, &other, CallStatus::ToolError),
            register.clone(),
            idle,
        ];
        let steps = [get.clone(), other.clone()];
        let pool = Pool::default();
        // Both asked about `witness`; it exists now.
        assert_eq!(
            retries(&calls, &steps, &BTreeMap::new(), &pool),
            [get.clone(), other]
        );
        // Made before the failure, it was not what was missing.
        let mut early = register;
        early.id = 1;
        let before = [early, made(2, &get, CallStatus::ToolError)];
        assert!(retries(&before, std::slice::from_ref(&get), &BTreeMap::new(), &pool).is_empty());
        // Nothing made since: nothing to ask again.
        let alone = [made(1, &get, CallStatus::ToolError)];
        assert!(retries(&alone, std::slice::from_ref(&get), &BTreeMap::new(), &pool).is_empty());
        // The same value made as another kind of thing, as content, or
        // only updated: not what was missing.
        let creator = |tool: &str, param: &str, op: Op| {
            let mut call = made(3, &auto(tool, param), CallStatus::Ok);
            call.effects = vec![fakes::effect("fs", "x/witness", op)];
            call
        };
        for other in [
            creator("add_note", "title", Op::Create),
            creator("add_project", "text", Op::Create),
            creator("ignore_project", "slug", Op::Update),
        ] {
            let calls = [made(1, &get, CallStatus::ToolError), other.clone()];
            assert!(
                retries(&calls, std::slice::from_ref(&get), &BTreeMap::new(), &pool).is_empty(),
                "{} {:?}",
                other.tool,
                other.arguments
            );
        }
        // Content on both sides names nothing: a note's text is no project.
        let write = auto("write_note", "content");
        let mut wrote = made(3, &auto("save_note", "content"), CallStatus::Ok);
        wrote.effects = vec![fakes::effect("fs", "notes/witness.md", Op::Create)];
        let calls = [made(1, &write, CallStatus::ToolError), wrote];
        assert!(
            retries(
                &calls,
                std::slice::from_ref(&write),
                &BTreeMap::new(),
                &pool
            )
            .is_empty()
        );
        // A tool whose budget is spent is not asked again.
        let mut spent: Vec<CallRecord> = (1..=4)
            .map(|id| made(id, &get, CallStatus::ToolError))
            .collect();
        spent.push(creator("register_project", "slug", Op::Create));
        spent[4].id = 5;
        assert!(retries(&spent, &[get], &BTreeMap::new(), &pool).is_empty());
    }

    #[test]
    fn after_a_setup_call_the_tools_that_only_failed_are_retried_within_budget() {
        let status = auto("status", "x");
        let log = auto("log", "x");
        let fine = auto("show", "x");
        let lost = auto("slow", "x");
        let setup = auto("set_workspace", "directory");
        assert!(sets_up_session("set_workspace"));
        assert!(sets_up_session("useVault"));
        assert!(!sets_up_session("list_settings"), "a word, not a substring");
        let mut calls = vec![
            made(1, &status, CallStatus::ToolError),
            made(2, &log, CallStatus::RpcError),
            made(3, &fine, CallStatus::Ok),
            made(4, &lost, CallStatus::TransportError),
            made(5, &setup, CallStatus::Ok),
        ];
        let steps = [status.clone(), log.clone(), fine, lost, setup];
        let tools =
            |again: Vec<PlanStep>| -> Vec<String> { again.into_iter().map(|s| s.tool).collect() };
        assert_eq!(
            tools(setup_retries(&calls, &steps, "set_workspace")),
            ["status", "log"]
        );
        // A tool that has had its budget is left alone.
        for id in 6..=8 {
            calls.push(made(id, &status, CallStatus::ToolError));
        }
        assert_eq!(
            tools(setup_retries(&calls, &steps, "set_workspace")),
            ["log"]
        );
    }

    #[test]
    fn a_retry_gives_up_a_schema_suggestion_for_a_value_an_answer_offered() {
        let step = PlanStep {
            tool: "read_vault".into(),
            args: vec![("vault".into(), ArgSpec::Pinned(json!("default")))],
            ..Default::default()
        };
        let calls = [made(1, &step, CallStatus::ToolError)];
        let mut pool = Pool::default();
        assert!(retries(&calls, std::slice::from_ref(&step), &BTreeMap::new(), &pool).is_empty());
        pool.absorb(
            "list_vaults",
            2,
            &json!({"structuredContent": {"vaults": ["notes"]}}),
        );
        let again = retries(&calls, std::slice::from_ref(&step), &BTreeMap::new(), &pool);
        assert_eq!(again.len(), 1);
        assert!(matches!(again[0].args[0].1, ArgSpec::Auto(_)));
    }

    #[test]
    fn failed_on_invention_needs_every_call_of_some_tool_to_fail_on_invented_values() {
        let open = auto("open_note", "note_id");
        let fine = auto("show_note", "note_id");
        assert!(!failed_on_invention(&[]));
        assert!(failed_on_invention(&[
            made(1, &fine, CallStatus::Ok),
            made(2, &open, CallStatus::ToolError),
        ]));
        assert!(!failed_on_invention(&[
            made(1, &open, CallStatus::ToolError),
            made(2, &open, CallStatus::Ok),
        ]));
        assert!(!failed_on_invention(&[made(
            1,
            &open,
            CallStatus::TransportError
        )]));
        let mut person = made(1, &open, CallStatus::ToolError);
        person.arguments[0].source = Provenance::Literal;
        assert!(!failed_on_invention(&[person]));
    }

    #[test]
    fn reharvested_are_the_sources_the_first_pass_called() {
        let list = PlanStep {
            tool: "list_notes".into(),
            args: vec![("limit".into(), ArgSpec::Pinned(json!(10)))],
            ..Default::default()
        };
        let search = PlanStep {
            tool: "search_notes".into(),
            args: vec![("q".into(), ArgSpec::Literal(json!("a")))],
            ..Default::default()
        };
        let never = PlanStep {
            tool: "list_tags".into(),
            args: Vec::new(),
            ..Default::default()
        };
        let stats = PlanStep {
            tool: "stats".into(),
            args: Vec::new(),
            ..Default::default()
        };
        let get = auto("get_note", "note_id");
        let slow = PlanStep {
            tool: "list_slowly".into(),
            args: Vec::new(),
            ..Default::default()
        };
        let harvest = [
            list.clone(),
            get,
            never,
            search.clone(),
            slow.clone(),
            stats.clone(),
        ];
        let harvested = [
            "get_note".to_owned(),
            "search_notes".to_owned(),
            "list_notes".to_owned(),
            "list_slowly".to_owned(),
            "stats".to_owned(),
        ];
        let calls = [
            made(1, &list, CallStatus::Ok),
            made(2, &search, CallStatus::Ok),
            made(3, &slow, CallStatus::TransportError),
            made(4, &stats, CallStatus::Ok),
        ];
        let sources: Vec<&str> = reharvest_sources(&harvest, &harvested, &calls)
            .into_iter()
            .map(|s| s.tool.as_str())
            .collect();
        assert_eq!(
            sources,
            ["list_notes", "search_notes"],
            "in plan order; not the one that never answered, nor one that lists nothing"
        );
    }
}

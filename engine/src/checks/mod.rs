//! The two lanes of checks: the effect lane (declarations held to observed
//! effects, `EFF-xx`) and the response lane (answers held to the protocol,
//! the tool's own outputSchema and the checks a plan attached, `RSP-xx`).
//!
//! Every check is one entry of [`REGISTRY`]: its id (whose one-sentence
//! text, lane and annotations are the model's check catalog,
//! `witness_model::vocab::CheckId`) and its evaluator. [`evaluate_lane`]
//! runs the registry; nothing else decides which checks exist. A check the
//! catalog lists but audits do not evaluate would have no entry, and a unit
//! test keeps the registry and the catalog in step.
//!
//! Verdicts rest only on the ledger. A call that failed on synthesized
//! arguments and changed nothing makes a check `untestable`: such a failure
//! proves nothing about the server. An observed effect is evidence whatever
//! the call's outcome, so a read-only tool that writes and then errors still
//! fails. A response check that would fail on calls whose arguments were all
//! synthesized is `untestable` too ([`response`]).

mod authority;
mod confirm;
mod effects;
mod network;
pub mod paging;
mod response;
pub mod schema;
mod scope;

use std::collections::BTreeMap;

use witness_model::audit::{
    CallRecord, CallStatus, CheckId, CheckResult, Effect, Evidence, EvidenceEffect, Lane,
    NOTHING_OBSERVED, ProbeRecord, SkippedTool, ToolEntry, Verdict,
};

/// What an evaluator reads: one tool, its calls, and the ledger around them.
pub struct Subject<'a> {
    pub tool: &'a ToolEntry,
    /// This tool's calls, in execution order.
    pub calls: Vec<&'a CallRecord>,
    /// Every call of the audit (authority is judged across calls).
    pub all: &'a [CallRecord],
    /// Probes of what the stores held before any call.
    pub baseline: &'a [ProbeRecord],
    /// Whether a probe that can tell authority apart was used.
    pub probe_active: bool,
    /// How long each call took to be answered, in milliseconds, by call id.
    pub latency: &'a BTreeMap<u32, u64>,
    /// Why the network was not observed (`None`: it was, for every call).
    pub network_unobserved: Option<&'a str>,
}

/// A verdict, the sentence behind it, and its evidence.
pub type Outcome = (Verdict, String, Evidence);

/// How one check reads a [`Subject`].
pub type Evaluator = fn(&Subject<'_>) -> Outcome;

pub use confirm::{CONFIRMED, Controls};

/// One check: its catalog id, its evaluator, and whether it reads calls
/// (a check that reads only the catalog, RSP-10, is judged for a tool the
/// planner left out too).
pub struct Check {
    pub id: CheckId,
    pub evaluate: Evaluator,
    pub reads_calls: bool,
}

const fn check(id: CheckId, evaluate: Evaluator) -> Check {
    Check {
        id,
        evaluate,
        reads_calls: true,
    }
}

/// Every check audits evaluate, in catalog order.
pub const REGISTRY: [Check; 17] = [
    check(CheckId::Eff01, effects::read_only),
    check(CheckId::Eff02, effects::destructive),
    check(CheckId::Eff03, effects::idempotent),
    check(CheckId::Eff04, network::closed_world),
    check(CheckId::Eff05, scope::inside_stores),
    check(CheckId::Eff06, authority::accounted),
    check(CheckId::Rsp01, response::outcome::succeeds),
    check(CheckId::Rsp02, response::outcome::is_error),
    check(CheckId::Rsp03, response::outcome::error_code),
    check(CheckId::Rsp04, response::structured::validates),
    check(CheckId::Rsp05, response::limits::max_items),
    check(CheckId::Rsp06, response::limits::latency_under),
    check(CheckId::Rsp07, response::pages::terminates),
    check(CheckId::Rsp08, response::repeat::same_result),
    check(CheckId::Rsp09, response::repeat::no_mutation),
    Check {
        id: CheckId::Rsp10,
        evaluate: response::structured::compiles,
        reads_calls: false,
    },
    check(CheckId::Rsp11, response::outcome::one_channel),
];

/// Everything the checks read: the catalog, the ledger and what the audit
/// measured beside it.
pub struct Ledger<'a> {
    pub tools: &'a [ToolEntry],
    pub calls: &'a [CallRecord],
    pub baseline: &'a [ProbeRecord],
    pub probe_active: bool,
    pub skipped: &'a [SkippedTool],
    pub latency: &'a BTreeMap<u32, u64>,
    /// Why the network was not observed (`None`: it was, for every call).
    pub network_unobserved: Option<&'a str>,
    /// What the idle controls learnt: a failure resting only on background
    /// objects is untestable, and one its confirmation did not reproduce.
    pub controls: Controls<'a>,
}

/// The effect lane for every tool, ordered by check id then tool name. A
/// tool the planner left out gets `skip` with the planner's reason on every
/// check.
pub fn evaluate(
    tools: &[ToolEntry],
    calls: &[CallRecord],
    baseline: &[ProbeRecord],
    probe_active: bool,
    skipped: &[SkippedTool],
    network_unobserved: Option<&str>,
    controls: Controls<'_>,
) -> Vec<CheckResult> {
    let latency = BTreeMap::new();
    let ledger = Ledger {
        tools,
        calls,
        baseline,
        probe_active,
        skipped,
        latency: &latency,
        network_unobserved,
        controls,
    };
    evaluate_lane(Lane::Effect, &ledger)
}

/// Every registered check of `lane` for every tool it applies to, ordered
/// by check id then tool name. A check every audit runs applies to every
/// tool; a check only a plan attaches applies to the tools whose calls a
/// plan attached it to.
pub fn evaluate_lane(lane: Lane, ledger: &Ledger<'_>) -> Vec<CheckResult> {
    let mut sorted: Vec<&ToolEntry> = ledger.tools.iter().collect();
    sorted.sort_by(|a, b| a.name.cmp(&b.name));
    let mut out = Vec::new();
    for check in REGISTRY.iter().filter(|c| c.id.lane() == lane) {
        for tool in &sorted {
            let subject = Subject {
                tool,
                // A confirmation judges only the failure it confirms.
                calls: ledger
                    .calls
                    .iter()
                    .filter(|c| c.tool == tool.name && c.confirms.is_none())
                    .collect(),
                all: ledger.calls,
                baseline: ledger.baseline,
                probe_active: ledger.probe_active,
                latency: ledger.latency,
                network_unobserved: ledger.network_unobserved,
            };
            if !check.id.runs_without_plan() && !attached_anywhere(&subject, check.id) {
                continue;
            }
            let left_out = ledger.skipped.iter().find(|s| s.tool == tool.name);
            let (verdict, reason, evidence) = match left_out {
                Some(left_out) if subject.calls.is_empty() && check.reads_calls => (
                    Verdict::Skip,
                    format!("not called: {}", left_out.reason),
                    evidence_of(&subject.calls, vec![]),
                ),
                _ => confirm::confirmed(check, &subject, &ledger.controls),
            };
            out.push(CheckResult {
                id: check.id,
                tool: tool.name.clone(),
                verdict,
                reason,
                evidence,
            });
        }
    }
    out
}

/// Whether a plan attached `id` to any call of the subject's tool.
fn attached_anywhere(subject: &Subject<'_>, id: CheckId) -> bool {
    subject
        .calls
        .iter()
        .any(|c| c.expect.iter().any(|e| e.check() == id))
}

/// With no channel to observe anything, no check passes: a pass becomes
/// `untestable` with the reason (`nothing was observed: <why>`). Nothing
/// observed cannot have failed, so a failure stays what it is.
/// EFF-04 is the exception: its pass rests on the network observer, never
/// on the stores.
pub fn without_observation(checks: &mut [CheckResult], why: &str) {
    for check in checks
        .iter_mut()
        .filter(|c| c.verdict == Verdict::Pass && c.id != CheckId::Eff04)
    {
        check.verdict = Verdict::Untestable;
        check.reason = format!("{NOTHING_OBSERVED}: {why}");
    }
}

pub(crate) fn evidence_of(calls: &[&CallRecord], effects: Vec<EvidenceEffect>) -> Evidence {
    Evidence {
        calls: calls.iter().map(|c| c.id).collect(),
        effects,
        probes: Vec::new(),
        network: Vec::new(),
        original_writes: Vec::new(),
    }
}

pub(crate) fn effects_where(
    calls: &[&CallRecord],
    keep: impl Fn(&Effect) -> bool,
) -> Vec<EvidenceEffect> {
    calls
        .iter()
        .flat_map(|c| {
            c.effects
                .iter()
                .filter(|e| keep(e))
                .map(|e| EvidenceEffect {
                    call: c.id,
                    object: e.qualified(),
                    op: e.op,
                })
        })
        .collect()
}

/// When nothing was observed: was the tool exercised well enough to say so?
pub(crate) fn unexercised(calls: &[&CallRecord]) -> Option<(Verdict, String)> {
    if calls.is_empty() {
        return Some((Verdict::Skip, "the tool was not called".into()));
    }
    if calls.iter().any(|c| c.succeeded()) {
        return None;
    }
    if calls
        .iter()
        .all(|c| c.outcome.status == CallStatus::InputRequired)
    {
        return Some((
            Verdict::Untestable,
            "no call finished: the server asked for input the client did not give".into(),
        ));
    }
    if calls.iter().all(|c| {
        matches!(
            c.outcome.status,
            CallStatus::TransportError | CallStatus::NotSent | CallStatus::InputRequired
        )
    }) {
        return Some((
            Verdict::Untestable,
            "no call reached the tool: the transport failed or an argument could not be resolved"
                .into(),
        ));
    }
    let in_band: Vec<&&CallRecord> = calls
        .iter()
        .filter(|c| c.outcome.status == CallStatus::InBandError)
        .collect();
    if let Some(last) = in_band.last()
        && calls.iter().all(|c| c.outcome.status != CallStatus::Ok)
    {
        return Some((
            Verdict::Untestable,
            format!(
                "no call did its job: {} answer(s) said the call failed without isError (call {}: {})",
                in_band.len(),
                last.id,
                last.outcome.detail.as_deref().unwrap_or("")
            ),
        ));
    }
    if calls.iter().any(|c| c.used_synthesized()) {
        return Some((
            Verdict::Untestable,
            "every call failed on synthesized arguments, which proves nothing about the tool"
                .into(),
        ));
    }
    Some((
        Verdict::Untestable,
        "every call failed on the arguments given, so the tool's effects were not exercised".into(),
    ))
}

/// Whether a pass on a claim may rest on `calls`: when the planner shaped
/// some of them as the form the claim is about (`shaped`), one such call
/// must have done its job (`did`); else the reason the claim went untested,
/// naming how the last such call ended. Calls a person planned carry no
/// form, and their author decides what they exercise.
pub(crate) fn form_unmet(
    calls: &[&CallRecord],
    shaped: impl Fn(&CallRecord) -> bool,
    did: impl Fn(&CallRecord) -> bool,
    what: &str,
) -> Option<String> {
    let asked: Vec<&&CallRecord> = calls.iter().filter(|c| shaped(c)).collect();
    let last = asked.last()?;
    if asked.iter().any(|c| did(c)) {
        return None;
    }
    let said = last
        .outcome
        .detail
        .as_deref()
        .filter(|d| !d.is_empty())
        .map(|d| format!(": {}", witness_text::clip(d, 200)))
        .unwrap_or_default();
    Some(format!(
        "{what} never did its job (call {}, {}{said})",
        last.id,
        if let Some(text) = said_nothing_done(last) {
            format!("answered that it changed nothing: {text}")
        } else if last.succeeded() && !acted_on_existing(last) {
            "answered ok but acted on nothing that existed".to_owned()
        } else if last.succeeded() {
            "answered ok but changed nothing that was observed".to_owned()
        } else {
            last.outcome.status.phrase().to_owned()
        }
    ))
}

/// What a call's answer says when it succeeded, changed nothing that was
/// observed, and said it changed nothing (`{"updated": 0}`): such a call
/// did not do a change's job.
pub(crate) fn said_nothing_done(call: &CallRecord) -> Option<String> {
    if !call.succeeded() || !call.effects.is_empty() {
        return None;
    }
    witness_model::answer::nothing_done(call.response.as_ref()?)
}

/// Whether `call` did its job: answered ok and did not say it changed
/// nothing.
pub(crate) fn did_its_job(call: &CallRecord) -> bool {
    call.succeeded() && said_nothing_done(call).is_none()
}

/// Why a claim about what a tool writes cannot rest on `calls`, when every
/// one that answered ok said it changed nothing (`{"converted": 0}`) and
/// none was seen to change anything: the tool had nothing to do, whatever
/// form the planner gave its calls, so nothing of what it writes was
/// exercised.
pub(crate) fn all_said_idle(calls: &[&CallRecord]) -> Option<String> {
    let answered: Vec<&&CallRecord> = calls.iter().filter(|c| c.succeeded()).collect();
    let last = answered.last()?;
    if !answered.iter().all(|c| said_nothing_done(c).is_some()) {
        return None;
    }
    let text = said_nothing_done(last)?;
    Some(format!(
        "every call that answered ok said it changed nothing (call {}: {text})",
        last.id
    ))
}

/// Whether `call` named a thing a store holds, not only a store's root:
/// a real argument (or part) that is no root (a harvested id, a note's
/// path, a row). A store's root is where a call acts, not what it acts
/// on: a tool handed only the root (`set_workspace {path}`) may keep what
/// it was told in memory, and no store shows it.
pub(crate) fn named_a_thing(call: &CallRecord) -> bool {
    let thing = |object: Option<&witness_model::audit::StoreObject>| {
        object.is_none_or(|o| !o.object.is_empty())
    };
    call.arguments.iter().any(|a| {
        (a.source.is_real() && thing(a.object.as_ref()))
            || a.parts.iter().any(|p| {
                p.from.is_some() || p.object.as_ref().is_some_and(|o| !o.object.is_empty())
            })
    })
}

/// Whether `call` acted on something that existed: an argument (or part
/// of one) that is real (a person's, the server's own, the store's), or an
/// observed change to an object that was there before it.
pub(crate) fn acted_on_existing(call: &CallRecord) -> bool {
    let real_argument = call.arguments.iter().any(|a| {
        a.source.is_real()
            || a.parts
                .iter()
                .any(|p| p.from.is_some() || p.object.is_some())
    });
    let changed_existing = call.effects.iter().any(|e| {
        matches!(
            e.op,
            witness_model::audit::Op::Update | witness_model::audit::Op::Delete
        )
    });
    real_argument || changed_existing
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use witness_model::audit::{
        Argument, CallForm, Hints, Op, Outcome as CallOutcome, ProbeStatus, Provenance,
        StoreBackground, StoreEntry, ToolClass,
    };

    use super::*;

    #[test]
    fn the_registry_evaluates_exactly_the_catalog_checks_marked_evaluated() {
        let registered: Vec<CheckId> = REGISTRY.iter().map(|c| c.id).collect();
        assert_eq!(registered, CheckId::evaluated_ids());
        for lane in Lane::ALL {
            let of_lane: Vec<CheckId> = REGISTRY
                .iter()
                .map(|c| c.id)
                .filter(|id| id.lane() == lane)
                .collect();
            assert_eq!(of_lane, CheckId::evaluated_in(lane), "{lane:?}");
        }
    }

    fn tool(name: &str, annotations: serde_json::Value) -> ToolEntry {
        let hints = Hints::from_annotations(Some(&annotations));
        ToolEntry {
            name: name.into(),
            title: None,
            description: None,
            class: hints.class(),
            hints,
            annotations: Some(annotations),
            input_schema: None,
            execution: None,
            has_output_schema: false,
            output_schema: None,
        }
    }

    fn call(
        id: u32,
        tool: &str,
        status: CallStatus,
        source: Provenance,
        effects: &[(&str, &str)],
    ) -> CallRecord {
        CallRecord {
            id,
            step: id,
            session: 0,
            tool: tool.into(),
            repeat_of: None,
            page_of: None,
            retry_after: None,
            after_change: None,
            answers: None,
            confirms: None,
            expect: Vec::new(),
            form: None,
            arguments: vec![Argument {
                name: "id".into(),
                value: json!("x"),
                source,
                from: None,
                object: None,
                parts: vec![],
            }],
            outcome: CallOutcome {
                status,
                code: None,
                detail: None,
            },
            task: None,
            response: None,
            frames: None,
            effects: effects
                .iter()
                .map(|(object, op)| Effect {
                    store: "db".into(),
                    object: (*object).into(),
                    op: op_named(op),
                    overwrite: (*op == "update").then_some(true),
                    before: None,
                    after: None,
                })
                .collect(),
            late_effects: vec![],
            background: vec![],
            probes: vec![],
            events_after: vec![],
            event_effects: vec![],
            network: vec![],
            original_writes: vec![],
            confirmations: Vec::new(),
        }
    }

    fn op_named(op: &str) -> Op {
        match op {
            "create" => Op::Create,
            "update" => Op::Update,
            _ => Op::Delete,
        }
    }

    fn status_named(status: &str) -> ProbeStatus {
        match status {
            "effective" => ProbeStatus::Effective,
            "ineffective" => ProbeStatus::Ineffective,
            _ => ProbeStatus::Unknown,
        }
    }

    fn verdict(checks: &[CheckResult], id: &str, tool: &str) -> Verdict {
        checks
            .iter()
            .find(|c| c.id == id && c.tool == tool)
            .map(|c| c.verdict)
            .unwrap_or(Verdict::Skip)
    }

    /// The checks of `calls`, with controls that learnt no background, on
    /// the SQLite store.
    fn evaluate_quiet(tools: &[ToolEntry], calls: &[CallRecord]) -> Vec<CheckResult> {
        let stores = [sqlite_store()];
        let quiet = Controls {
            background: &[],
            stores: &stores,
        };
        evaluate(tools, calls, &[], false, &[], None, quiet)
    }

    fn sqlite_store() -> StoreEntry {
        StoreEntry {
            name: "db".into(),
            kind: "sqlite".into(),
            path: "notes.db".into(),
            existed: true,
            observer: "sqlite".into(),
            clock_columns: vec![],
        }
    }

    /// `get` (declared read-only) wrote `written`; `confirmation`, when
    /// given, is call 2 confirming call 1 with `fresh` arguments or not.
    fn confirmed_eff01(
        written: &str,
        background: &[&str],
        confirmation: Option<(&[(&str, &str)], bool)>,
    ) -> CheckResult {
        let tools = [tool("get", json!({"readOnlyHint": true}))];
        let mut calls = vec![call(
            1,
            "get",
            CallStatus::Ok,
            Provenance::Literal,
            &[(written, "create")],
        )];
        if let Some((effects, fresh)) = confirmation {
            let mut again = call(2, "get", CallStatus::Ok, Provenance::Literal, effects);
            again.confirms = Some(1);
            if fresh {
                again.arguments[0].value = json!("x-again");
            }
            calls.push(again);
        }
        let stores = [sqlite_store()];
        let learnt = [StoreBackground {
            store: "db".into(),
            objects: background.iter().map(|o| (*o).to_owned()).collect(),
        }];
        let controls = Controls {
            background: &learnt,
            stores: &stores,
        };
        evaluate(&tools, &calls, &[], false, &[], None, controls)
            .into_iter()
            .find(|c| c.id == CheckId::Eff01)
            .expect("EFF-01 is judged")
    }

    #[test]
    fn a_failure_resting_only_on_background_objects_is_untestable() {
        let check = confirmed_eff01("note_index/3", &["note_index"], None);
        assert_eq!(check.verdict, Verdict::Untestable);
        assert!(
            check.reason.contains("background activity"),
            "{}",
            check.reason
        );
        let own = confirmed_eff01("notes/n1", &["note_index"], None);
        assert_eq!(own.verdict, Verdict::Fail, "another table is the call's");
    }

    #[test]
    fn an_attempt_on_an_original_is_never_explained_away_as_background() {
        let tools = [tool("get", json!({"readOnlyHint": true}))];
        let mut call = call(
            1,
            "get",
            CallStatus::Ok,
            Provenance::Literal,
            &[("note_index/3", "update")],
        );
        call.original_writes = vec!["/data/app.db".into()];
        let stores = [sqlite_store()];
        let learnt = [StoreBackground {
            store: "db".into(),
            objects: vec!["note_index".into()],
        }];
        let controls = Controls {
            background: &learnt,
            stores: &stores,
        };
        let checks = evaluate(&tools, &[call], &[], false, &[], None, controls);
        assert_eq!(verdict(&checks, "EFF-01", "get"), Verdict::Fail);
    }

    #[test]
    fn a_confirmation_that_reproduces_the_failure_keeps_it() {
        let check = confirmed_eff01(
            "telemetry/1",
            &[],
            Some((&[("telemetry/2", "create")], false)),
        );
        assert_eq!(check.verdict, Verdict::Fail);
        assert!(
            check.reason.contains("confirmed by call 2"),
            "{}",
            check.reason
        );
        assert_eq!(check.evidence.calls, [1, 2]);
    }

    #[test]
    fn a_fresh_confirmation_that_changes_nothing_makes_the_failure_untestable() {
        let check = confirmed_eff01("notes/n1", &[], Some((&[], true)));
        assert_eq!(check.verdict, Verdict::Untestable);
        assert!(
            check
                .reason
                .starts_with("effect not reproduced: background activity"),
            "{}",
            check.reason
        );
    }

    #[test]
    fn a_fresh_confirmation_the_server_refused_leaves_the_failure_to_the_controls() {
        let tools = [tool("get", json!({"readOnlyHint": true}))];
        let first = call(
            1,
            "get",
            CallStatus::Ok,
            Provenance::Store,
            &[("notes/n1", "delete")],
        );
        let mut again = call(
            2,
            "get",
            CallStatus::InBandError,
            Provenance::Synthesized,
            &[],
        );
        again.confirms = Some(1);
        again.arguments[0].value = json!("witness-get");
        let stores = [sqlite_store()];
        let quiet = Controls {
            background: &[],
            stores: &stores,
        };
        let checks = evaluate(
            &tools,
            &[first.clone(), again.clone()],
            &[],
            false,
            &[],
            None,
            quiet,
        );
        let check = checks
            .iter()
            .find(|c| c.id == CheckId::Eff01)
            .expect("EFF-01 is judged");
        assert_eq!(check.verdict, Verdict::Fail, "{}", check.reason);
        assert!(
            check.reason.contains("the server refused it"),
            "{}",
            check.reason
        );
        // The same fresh confirmation answered ok and changed nothing: the
        // effect was not reproduced.
        again.outcome.status = CallStatus::Ok;
        let checks = evaluate(&tools, &[first, again], &[], false, &[], None, quiet);
        assert_eq!(verdict(&checks, "EFF-01", "get"), Verdict::Untestable);
    }

    #[test]
    fn a_confirmation_judges_only_a_failure_resting_on_the_call_it_repeats() {
        // `save` created a file (call 1), then its overwrite form deleted a
        // section (call 2). Only call 1 was confirmed, by a create on a
        // fresh name: that says nothing of call 2's delete.
        let tools = [tool("save", json!({"readOnlyHint": true}))];
        let create = call(
            1,
            "save",
            CallStatus::Ok,
            Provenance::Synthesized,
            &[("notes/new", "create")],
        );
        let overwrite = call(
            2,
            "save",
            CallStatus::Ok,
            Provenance::Store,
            &[("notes/n1", "delete")],
        );
        let mut again = call(
            3,
            "save",
            CallStatus::Ok,
            Provenance::Synthesized,
            &[("notes/new-again", "create")],
        );
        again.confirms = Some(1);
        again.arguments[0].value = json!("witness-again");
        let checks = evaluate_quiet(&tools, &[create, overwrite, again]);
        assert_eq!(verdict(&checks, "EFF-01", "save"), Verdict::Fail);
        let eff02 = checks
            .iter()
            .find(|c| c.id == CheckId::Eff02)
            .expect("EFF-02 is judged");
        assert_eq!(eff02.verdict, Verdict::Fail, "{}", eff02.reason);
        assert!(!eff02.reason.contains("confirmed by"), "{}", eff02.reason);
    }

    #[test]
    fn a_repeat_of_the_same_values_read_from_another_answer_is_still_identical() {
        // The update's id was read in call 0's answer the first time and in
        // a later listing's the second: the server was asked the same.
        let tools = [tool("update", json!({"readOnlyHint": true}))];
        let mut first = call(
            1,
            "update",
            CallStatus::Ok,
            Provenance::Harvested,
            &[("notes/n1", "update")],
        );
        first.arguments[0].from = Some(witness_model::audit::Origin {
            call: "call 0".into(),
            path: "json.id".into(),
        });
        let mut again = call(2, "update", CallStatus::Ok, Provenance::Harvested, &[]);
        again.arguments[0].from = Some(witness_model::audit::Origin {
            call: "call 1".into(),
            path: "json.notes[0].id".into(),
        });
        again.confirms = Some(1);
        let checks = evaluate_quiet(&tools, &[first, again]);
        let check = checks
            .iter()
            .find(|c| c.id == CheckId::Eff01)
            .expect("EFF-01 is judged");
        assert_eq!(check.verdict, Verdict::Fail, "{}", check.reason);
        assert!(
            check.reason.contains("a repeat cannot redo what is done"),
            "{}",
            check.reason
        );
    }

    #[test]
    fn an_identical_repeat_that_cannot_redo_the_effect_confirms_it_on_the_controls() {
        let check = confirmed_eff01("notes/n1", &[], Some((&[], false)));
        assert_eq!(check.verdict, Verdict::Fail);
        assert!(
            check.reason.contains("confirmed by the controls"),
            "{}",
            check.reason
        );
        // Unless its object proved to be background after all.
        let learnt = confirmed_eff01("notes/n1", &["notes"], Some((&[], false)));
        assert_eq!(learnt.verdict, Verdict::Untestable);
    }

    #[test]
    fn an_unreproduced_write_to_what_another_tool_writes_is_not_confirmed_by_the_controls() {
        // `save` records a note's revision just after answering; on a
        // loaded machine it lands in `get`'s window. `get`'s identical
        // repeat changes nothing: the write was not shown to be `get`'s.
        let judge = |saved: &str| {
            let tools = [
                tool("get", json!({"readOnlyHint": true})),
                tool("save", json!({"readOnlyHint": false})),
            ];
            let mut save = call(
                1,
                "save",
                CallStatus::Ok,
                Provenance::Literal,
                &[("notes/n1", "create"), ("revisions/n0", "create")],
            );
            save.arguments[0].value = json!(saved);
            let get = call(
                2,
                "get",
                CallStatus::Ok,
                Provenance::Literal,
                &[("revisions/n1", "create")],
            );
            let mut again = call(3, "get", CallStatus::Ok, Provenance::Literal, &[]);
            again.confirms = Some(2);
            let stores = [sqlite_store()];
            let controls = Controls {
                background: &[],
                stores: &stores,
            };
            evaluate(&tools, &[save, get, again], &[], false, &[], None, controls)
                .into_iter()
                .find(|c| c.id == CheckId::Eff01 && c.tool == "get")
                .expect("EFF-01 on get")
        };
        let check = judge("n1");
        assert_eq!(check.verdict, Verdict::Untestable, "{}", check.reason);
        assert!(
            check.reason.contains("of save, which writes such objects"),
            "{}",
            check.reason
        );
        // Handed another name, `save` cannot have written n1's revision:
        // the failure stands on the controls.
        let check = judge("n2");
        assert_eq!(check.verdict, Verdict::Fail, "{}", check.reason);
        assert!(check.reason.contains("confirmed by the controls"));
    }

    #[test]
    fn an_output_asked_again_after_a_change_is_confirmed_only_by_showing_it_again() {
        // `export` replaced its file after the audit's change (call 2);
        // its confirmation, after the change made again (call 4), sends
        // the same values.
        let judge = |shown: &[(&str, &str)], remade: Option<u32>| {
            let tools = [
                tool("export", json!({"destructiveHint": false})),
                tool("add", json!({"readOnlyHint": false})),
            ];
            let add = call(
                2,
                "add",
                CallStatus::Ok,
                Provenance::Literal,
                &[("items/b", "create")],
            );
            let mut export = call(
                3,
                "export",
                CallStatus::Ok,
                Provenance::Literal,
                &[("export.txt", "update")],
            );
            export.after_change = Some(2);
            let remake = call(
                4,
                "add",
                CallStatus::Ok,
                Provenance::Literal,
                &[("items/c", "create")],
            );
            let mut again = call(5, "export", CallStatus::Ok, Provenance::Literal, shown);
            again.confirms = Some(3);
            again.after_change = remade;
            evaluate(
                &tools,
                &[add, export, remake, again],
                &[],
                false,
                &[],
                None,
                Controls::default(),
            )
            .into_iter()
            .find(|c| c.id == CheckId::Eff02 && c.tool == "export")
            .expect("EFF-02 on export")
        };
        let shown = judge(&[("export.txt", "update")], Some(4));
        assert_eq!(shown.verdict, Verdict::Fail, "{}", shown.reason);
        assert!(
            shown.reason.contains("confirmed by call 5"),
            "{}",
            shown.reason
        );
        // The same values changing nothing is no control here: once the
        // change is made again, the repeat can redo what was done.
        let nothing = judge(&[], Some(4));
        assert_eq!(nothing.verdict, Verdict::Untestable, "{}", nothing.reason);
        assert!(
            nothing
                .reason
                .contains("after call 4 made the change again"),
            "{}",
            nothing.reason
        );
        let unmade = judge(&[], Some(2));
        assert_eq!(unmade.verdict, Verdict::Untestable);
        assert!(
            unmade.reason.contains("could not be made again"),
            "{}",
            unmade.reason
        );
    }

    #[test]
    fn a_confirmation_call_counts_for_no_verdict_of_its_own() {
        let tools = [tool("get", json!({"readOnlyHint": true}))];
        let mut again = call(
            1,
            "get",
            CallStatus::Ok,
            Provenance::Literal,
            &[("notes/n1", "create")],
        );
        again.confirms = Some(9);
        let checks = evaluate(&tools, &[again], &[], false, &[], None, Controls::default());
        assert_ne!(verdict(&checks, "EFF-01", "get"), Verdict::Fail);
    }

    fn shaped(mut call: CallRecord, form: CallForm) -> CallRecord {
        call.form = Some(form);
        call
    }

    fn reason(checks: &[CheckResult], id: &str, tool: &str) -> String {
        checks
            .iter()
            .find(|c| c.id == id && c.tool == tool)
            .map(|c| c.reason.clone())
            .unwrap_or_default()
    }

    #[test]
    fn a_delete_that_answered_an_error_in_its_content_leaves_a_non_destructive_claim_untested() {
        let tools = [tool(
            "delete_note",
            json!({"readOnlyHint": false, "destructiveHint": false}),
        )];
        let mut missing = shaped(
            call(
                1,
                "delete_note",
                CallStatus::InBandError,
                Provenance::Store,
                &[],
            ),
            CallForm::Change,
        );
        missing.outcome.detail = Some("File not found: notes/a.md".into());
        let checks = evaluate(
            &tools,
            &[missing.clone()],
            &[],
            false,
            &[],
            None,
            Controls::default(),
        );
        assert_eq!(
            verdict(&checks, "EFF-02", "delete_note"),
            Verdict::Untestable
        );
        assert!(
            reason(&checks, "EFF-02", "delete_note").contains("File not found"),
            "{}",
            reason(&checks, "EFF-02", "delete_note")
        );
        // On an invented name the answer may be ok, and still nothing existed to delete.
        let invented = shaped(
            call(
                2,
                "delete_note",
                CallStatus::Ok,
                Provenance::Synthesized,
                &[],
            ),
            CallForm::Change,
        );
        let checks = evaluate(
            &tools,
            &[missing.clone(), invented],
            &[],
            false,
            &[],
            None,
            Controls::default(),
        );
        assert_eq!(
            verdict(&checks, "EFF-02", "delete_note"),
            Verdict::Untestable
        );
        // A change of a real note that answered it changed nothing, and
        // changed nothing observed, did not do its job.
        let mut idle = shaped(
            call(3, "delete_note", CallStatus::Ok, Provenance::Store, &[]),
            CallForm::Change,
        );
        idle.response = Some(json!({"content": [{"type": "text", "text": "{\"deleted\": 0}"}]}));
        let checks = evaluate(
            &tools,
            &[missing.clone(), idle],
            &[],
            false,
            &[],
            None,
            Controls::default(),
        );
        assert_eq!(
            verdict(&checks, "EFF-02", "delete_note"),
            Verdict::Untestable
        );
        assert!(
            reason(&checks, "EFF-02", "delete_note")
                .contains("answered that it changed nothing: {\"deleted\":0}"),
            "{}",
            reason(&checks, "EFF-02", "delete_note")
        );
        // One that answered ok and changed nothing the observers saw did
        // not do a change's job either: a delete that deleted nothing shows
        // nothing of what a delete destroys. One that only marked the note
        // deleted (an update that lost nothing) did, and passes.
        let quiet = shaped(
            call(5, "delete_note", CallStatus::Ok, Provenance::Store, &[]),
            CallForm::Change,
        );
        let checks = evaluate(
            &tools,
            &[missing.clone(), quiet],
            &[],
            false,
            &[],
            None,
            Controls::default(),
        );
        assert_eq!(
            verdict(&checks, "EFF-02", "delete_note"),
            Verdict::Untestable
        );
        assert!(
            reason(&checks, "EFF-02", "delete_note")
                .contains("answered ok but changed nothing that was observed"),
            "{}",
            reason(&checks, "EFF-02", "delete_note")
        );
        // The same holds for a claim to write nothing: the quiet delete
        // showed nothing of what the tool writes.
        let readonly = [tool("delete_note", json!({"readOnlyHint": true}))];
        let quiet = shaped(
            call(5, "delete_note", CallStatus::Ok, Provenance::Store, &[]),
            CallForm::Change,
        );
        let checks = evaluate(
            &readonly,
            &[quiet],
            &[],
            false,
            &[],
            None,
            Controls::default(),
        );
        assert_eq!(
            verdict(&checks, "EFF-01", "delete_note"),
            Verdict::Untestable
        );
        assert!(
            reason(&checks, "EFF-01", "delete_note")
                .contains("answered ok but changed nothing that was observed"),
            "{}",
            reason(&checks, "EFF-01", "delete_note")
        );
        // Handed only a store's root, a change may keep what it was told
        // in memory (`set_workspace`): its answer stands, and it passes.
        let workspace = [tool(
            "set_workspace",
            json!({"readOnlyHint": false, "destructiveHint": false}),
        )];
        let mut root = shaped(
            call(6, "set_workspace", CallStatus::Ok, Provenance::Store, &[]),
            CallForm::Change,
        );
        root.arguments[0].object = Some(witness_model::audit::StoreObject {
            store: "files".into(),
            object: String::new(),
        });
        let checks = evaluate(
            &workspace,
            &[root.clone()],
            &[],
            false,
            &[],
            None,
            Controls::default(),
        );
        assert_eq!(verdict(&checks, "EFF-02", "set_workspace"), Verdict::Pass);
        let read_only_workspace = [tool("set_workspace", json!({"readOnlyHint": true}))];
        let checks = evaluate(
            &read_only_workspace,
            &[root.clone()],
            &[],
            false,
            &[],
            None,
            Controls::default(),
        );
        assert_eq!(verdict(&checks, "EFF-01", "set_workspace"), Verdict::Pass);
        let mut real = shaped(
            call(
                4,
                "delete_note",
                CallStatus::Ok,
                Provenance::Store,
                &[("notes/n1", "update")],
            ),
            CallForm::Change,
        );
        real.effects[0].overwrite = Some(false);
        let checks = evaluate(
            &tools,
            &[missing, real],
            &[],
            false,
            &[],
            None,
            Controls::default(),
        );
        assert_eq!(verdict(&checks, "EFF-02", "delete_note"), Verdict::Pass);
    }

    #[test]
    fn a_reader_named_to_write_passes_only_after_its_writer_shaped_call_did_its_job() {
        let tools = [tool("create_folder", json!({"readOnlyHint": true}))];
        let read = shaped(
            call(1, "create_folder", CallStatus::Ok, Provenance::Store, &[]),
            CallForm::Read,
        );
        let refused = shaped(
            call(
                2,
                "create_folder",
                CallStatus::ToolError,
                Provenance::Synthesized,
                &[],
            ),
            CallForm::Create,
        );
        let checks = evaluate(
            &tools,
            &[read.clone(), refused.clone()],
            &[],
            false,
            &[],
            None,
            Controls::default(),
        );
        assert_eq!(
            verdict(&checks, "EFF-01", "create_folder"),
            Verdict::Untestable
        );
        let made_nothing = shaped(
            call(
                3,
                "create_folder",
                CallStatus::Ok,
                Provenance::Synthesized,
                &[],
            ),
            CallForm::Create,
        );
        let checks = evaluate(
            &tools,
            &[read.clone(), refused, made_nothing],
            &[],
            false,
            &[],
            None,
            Controls::default(),
        );
        assert_eq!(verdict(&checks, "EFF-01", "create_folder"), Verdict::Pass);
        // A person's plan carries no form: its calls are judged as they ran.
        let mut planned = read;
        planned.form = None;
        let checks = evaluate(
            &tools,
            &[planned],
            &[],
            false,
            &[],
            None,
            Controls::default(),
        );
        assert_eq!(verdict(&checks, "EFF-01", "create_folder"), Verdict::Pass);
    }

    #[test]
    fn an_answer_that_says_it_failed_exercises_nothing() {
        let tools = [tool("get", json!({"readOnlyHint": true}))];
        let mut said = call(1, "get", CallStatus::InBandError, Provenance::Store, &[]);
        said.outcome.detail = Some("{\"success\":false}".into());
        let checks = evaluate(&tools, &[said], &[], false, &[], None, Controls::default());
        assert_eq!(verdict(&checks, "EFF-01", "get"), Verdict::Untestable);
        assert!(reason(&checks, "EFF-01", "get").contains("success"));
    }

    #[test]
    fn read_only_tool_that_writes_fails_eff01_even_on_synthesized_arguments() {
        let tools = [tool("get", json!({"readOnlyHint": true}))];
        let calls = [call(
            1,
            "get",
            CallStatus::ToolError,
            Provenance::Synthesized,
            &[("keys/k1", "create")],
        )];
        let checks = evaluate(&tools, &calls, &[], false, &[], None, Controls::default());
        assert_eq!(verdict(&checks, "EFF-01", "get"), Verdict::Fail);
        assert_eq!(tools[0].class, ToolClass::ReadOnly);
    }

    #[test]
    fn a_read_only_tool_that_tried_to_write_an_original_fails_eff01_with_its_path() {
        let tools = [
            tool("peek", json!({"readOnlyHint": true})),
            tool("save", json!({"readOnlyHint": false})),
        ];
        let mut peek = call(1, "peek", CallStatus::Ok, Provenance::Literal, &[]);
        peek.original_writes = vec!["/data/app.db".into(), "/data/app.db-journal".into()];
        let mut save = call(2, "save", CallStatus::Ok, Provenance::Literal, &[]);
        save.original_writes = vec!["/data/app.db".into()];
        let checks = evaluate(
            &tools,
            &[peek, save],
            &[],
            false,
            &[],
            None,
            Controls::default(),
        );
        let eff01 = checks
            .iter()
            .find(|c| c.id == CheckId::Eff01 && c.tool == "peek")
            .expect("EFF-01 is judged");
        assert_eq!(eff01.verdict, Verdict::Fail, "{}", eff01.reason);
        assert!(
            eff01.reason.contains("store's original"),
            "{}",
            eff01.reason
        );
        let paths: Vec<(u32, &str)> = eff01
            .evidence
            .original_writes
            .iter()
            .map(|w| (w.call, w.path.as_str()))
            .collect();
        assert_eq!(paths, [(1, "/data/app.db"), (1, "/data/app.db-journal")]);
        // A tool that may write is not judged by EFF-01 at all.
        assert_eq!(verdict(&checks, "EFF-01", "save"), Verdict::Skip);
    }

    #[test]
    fn failure_on_synthesized_arguments_without_effect_is_untestable_never_fail() {
        let tools = [tool(
            "get",
            json!({"readOnlyHint": true, "idempotentHint": true}),
        )];
        let calls = [call(
            1,
            "get",
            CallStatus::ToolError,
            Provenance::Synthesized,
            &[],
        )];
        let checks = evaluate(&tools, &calls, &[], false, &[], None, Controls::default());
        for id in ["EFF-01", "EFF-02", "EFF-03"] {
            assert_eq!(verdict(&checks, id, "get"), Verdict::Untestable, "{id}");
        }
    }

    #[test]
    fn eff02_reads_per_target_ops_so_a_create_cannot_mask_a_delete() {
        let tools = [tool(
            "mv",
            json!({"readOnlyHint": false, "destructiveHint": false}),
        )];
        let calls = [call(
            1,
            "mv",
            CallStatus::Ok,
            Provenance::Literal,
            &[("file/b", "create"), ("file/a", "delete")],
        )];
        let checks = evaluate(&tools, &calls, &[], false, &[], None, Controls::default());
        assert_eq!(verdict(&checks, "EFF-02", "mv"), Verdict::Fail);
        let evidence = &checks
            .iter()
            .find(|c| c.id == "EFF-02")
            .map(|c| c.evidence.clone());
        assert_eq!(
            evidence.as_ref().map(|e| e.effects[0].object.clone()),
            Some("db:file/a".to_string())
        );
    }

    #[test]
    fn unset_destructive_hint_defaults_to_true_and_covers_deletes() {
        let tools = [tool("write_query", json!({}))];
        let calls = [call(
            1,
            "write_query",
            CallStatus::Ok,
            Provenance::Literal,
            &[("items/3", "delete")],
        )];
        let checks = evaluate(&tools, &calls, &[], false, &[], None, Controls::default());
        assert_eq!(verdict(&checks, "EFF-02", "write_query"), Verdict::Pass);
        assert_eq!(verdict(&checks, "EFF-01", "write_query"), Verdict::Skip);
        assert_eq!(tools[0].class, ToolClass::Unknown);
    }

    #[test]
    fn idempotence_is_judged_on_the_repeat_only() {
        let tools = [tool(
            "save",
            json!({"readOnlyHint": false, "idempotentHint": true}),
        )];
        let first = call(
            1,
            "save",
            CallStatus::Ok,
            Provenance::Literal,
            &[("notes/a", "create")],
        );
        let mut repeat = call(2, "save", CallStatus::Ok, Provenance::Literal, &[]);
        repeat.repeat_of = Some(1);
        let checks = evaluate(
            &tools,
            &[first.clone(), repeat.clone()],
            &[],
            false,
            &[],
            None,
            Controls::default(),
        );
        assert_eq!(verdict(&checks, "EFF-03", "save"), Verdict::Pass);
        repeat.effects = first.effects.clone();
        let checks = evaluate(
            &tools,
            &[first, repeat],
            &[],
            false,
            &[],
            None,
            Controls::default(),
        );
        assert_eq!(verdict(&checks, "EFF-03", "save"), Verdict::Fail);
    }

    #[test]
    fn a_call_that_answered_it_changed_nothing_supports_no_pass_of_a_claim_about_change() {
        let said = |mut c: CallRecord, body: &str| {
            c.response = Some(json!({"content": [{"type": "text", "text": body}]}));
            c
        };
        // EFF-03: the repeat of a call that changed nothing repeats nothing.
        let tools = [tool(
            "save",
            json!({"readOnlyHint": false, "idempotentHint": true}),
        )];
        let first = said(
            shaped(
                call(1, "save", CallStatus::Ok, Provenance::Literal, &[]),
                CallForm::Change,
            ),
            r#"{"ok": true, "updated": 0}"#,
        );
        let mut repeat = call(2, "save", CallStatus::Ok, Provenance::Literal, &[]);
        repeat.repeat_of = Some(1);
        let run = |calls: &[CallRecord]| {
            evaluate(&tools, calls, &[], false, &[], None, Controls::default())
        };
        let checks = run(&[first.clone(), repeat.clone()]);
        assert_eq!(verdict(&checks, "EFF-03", "save"), Verdict::Untestable);
        assert!(reason(&checks, "EFF-03", "save").contains("updated"));
        // A read that found nothing did what it was asked: its repeat counts.
        let mut read = first.clone();
        read.form = Some(CallForm::Read);
        assert_eq!(
            verdict(&run(&[read, repeat.clone()]), "EFF-03", "save"),
            Verdict::Pass
        );
        // Once the first call says nothing of the kind, the repeat counts.
        let plain = said(first, r#"{"saved": true}"#);
        assert_eq!(
            verdict(&run(&[plain, repeat]), "EFF-03", "save"),
            Verdict::Pass
        );
        // EFF-01: a writer-shaped call that said it wrote nothing.
        let tools = [tool("write_index", json!({"readOnlyHint": true}))];
        let idle = shaped(
            said(
                call(3, "write_index", CallStatus::Ok, Provenance::Store, &[]),
                "Nothing to write: the index is current.",
            ),
            CallForm::Create,
        );
        let checks = evaluate(&tools, &[idle], &[], false, &[], None, Controls::default());
        assert_eq!(
            verdict(&checks, "EFF-01", "write_index"),
            Verdict::Untestable
        );
        // EFF-01 and EFF-02, whatever the form: every call that answered ok
        // counted nothing done, so nothing the tool writes was exercised.
        let tools = [tool(
            "compress",
            json!({"readOnlyHint": true, "destructiveHint": false}),
        )];
        let zero = shaped(
            said(
                call(4, "compress", CallStatus::Ok, Provenance::Store, &[]),
                r#"{"converted": 0, "bytes_freed": 0}"#,
            ),
            CallForm::Read,
        );
        let checks = evaluate(
            &tools,
            std::slice::from_ref(&zero),
            &[],
            false,
            &[],
            None,
            Controls::default(),
        );
        for id in ["EFF-01", "EFF-02"] {
            assert_eq!(
                verdict(&checks, id, "compress"),
                Verdict::Untestable,
                "{id}"
            );
            assert!(reason(&checks, id, "compress").contains("said it changed nothing"));
        }
        // One call that answered otherwise carries the pass.
        let mut other = said(
            call(5, "compress", CallStatus::Ok, Provenance::Store, &[]),
            r#"{"steps": 3}"#,
        );
        other.form = Some(CallForm::Read);
        let checks = evaluate(
            &tools,
            &[zero, other],
            &[],
            false,
            &[],
            None,
            Controls::default(),
        );
        for id in ["EFF-01", "EFF-02"] {
            assert_eq!(verdict(&checks, id, "compress"), Verdict::Pass, "{id}");
        }
    }

    #[test]
    fn eff06_skips_without_probe_and_catches_residual_authority() {
        let tools = [
            tool(
                "mint_api_key",
                json!({"readOnlyHint": false, "destructiveHint": false}),
            ),
            tool(
                "revoke_api_key",
                json!({"readOnlyHint": false, "destructiveHint": true}),
            ),
            tool(
                "delete_note",
                json!({"readOnlyHint": false, "destructiveHint": true}),
            ),
        ];
        let probe = |status: &str, object: &str| witness_model::audit::ProbeRecord {
            store: "db".into(),
            object: object.into(),
            status: status_named(status),
            basis: "rule".into(),
            credential_digest: None,
            subject: None,
        };
        let mut mint = call(
            1,
            "mint_api_key",
            CallStatus::Ok,
            Provenance::Literal,
            &[("api_keys/key_0001", "create")],
        );
        mint.probes.push(probe("effective", "api_keys/key_0001"));
        let mut revoke = call(
            2,
            "revoke_api_key",
            CallStatus::Ok,
            Provenance::Literal,
            &[("api_keys/key_0001", "update")],
        );
        revoke.probes.push(probe("effective", "api_keys/key_0001"));
        let mut note = call(
            3,
            "delete_note",
            CallStatus::Ok,
            Provenance::Literal,
            &[("notes/a", "delete")],
        );
        note.probes.push(probe("ineffective", "notes/a"));
        let all = [mint.clone(), revoke.clone(), note.clone()];
        assert_eq!(
            verdict(
                &evaluate(&tools, &all, &[], false, &[], None, Controls::default()),
                "EFF-06",
                "revoke_api_key"
            ),
            Verdict::Skip
        );
        let checks = evaluate(&tools, &all, &[], true, &[], None, Controls::default());
        assert_eq!(verdict(&checks, "EFF-06", "revoke_api_key"), Verdict::Fail);
        assert_eq!(verdict(&checks, "EFF-06", "mint_api_key"), Verdict::Pass);
        // Deleting something that never was authority neutralizes nothing.
        assert_eq!(verdict(&checks, "EFF-06", "delete_note"), Verdict::Skip);
        revoke.probes[0].status = ProbeStatus::Ineffective;
        let checks = evaluate(
            &tools,
            &[mint, revoke, note],
            &[],
            true,
            &[],
            None,
            Controls::default(),
        );
        assert_eq!(verdict(&checks, "EFF-06", "revoke_api_key"), Verdict::Pass);
    }

    /// A SQL tool's statement, as the call recorded it.
    fn sql_call(id: u32, tool: &str, sql: &str, effect: (&str, &str)) -> CallRecord {
        let mut record = call(id, tool, CallStatus::Ok, Provenance::Literal, &[effect]);
        record.arguments[0].name = "sql".into();
        record.arguments[0].value = json!(sql);
        record
    }

    fn held(
        status: &str,
        object: &str,
        subject: Option<&str>,
    ) -> witness_model::audit::ProbeRecord {
        witness_model::audit::ProbeRecord {
            store: "db".into(),
            object: object.into(),
            status: status_named(status),
            basis: "use".into(),
            credential_digest: None,
            subject: subject.map(str::to_owned),
        }
    }

    #[test]
    fn eff06_on_sql_a_read_only_mint_fails_and_a_residual_grant_is_effective() {
        let tools = [
            tool("query", json!({"readOnlyHint": true})),
            tool(
                "execute_sql",
                json!({"readOnlyHint": false, "destructiveHint": true}),
            ),
        ];
        // A login role minted by a tool declared read-only.
        let mut login = sql_call(
            1,
            "query",
            "CREATE ROLE alice LOGIN PASSWORD '2f1c…'",
            ("catalog/role:alice", "create"),
        );
        login
            .probes
            .push(held("effective", "catalog/role:alice", Some("alice")));
        let checks = evaluate(
            &tools,
            &[login.clone()],
            &[],
            true,
            &[],
            None,
            Controls::default(),
        );
        assert_eq!(verdict(&checks, "EFF-06", "query"), Verdict::Fail);
        let reason = checks
            .iter()
            .find(|c| c.id == "EFF-06" && c.tool == "query")
            .map(|c| c.reason.clone())
            .unwrap_or_default();
        assert!(reason.contains("minted authority"), "{reason}");
        // A grant added to a table that was already someone's is a mint too.
        let mut grant = sql_call(
            1,
            "query",
            "GRANT SELECT ON orders TO bob",
            ("catalog/table:public.orders", "update"),
        );
        grant.probes.push(held(
            "effective",
            "catalog/table:public.orders",
            Some("bob"),
        ));
        let baseline = [held("effective", "catalog/table:public.orders", None)];
        let checks = evaluate(
            &tools,
            &[grant],
            &baseline,
            true,
            &[],
            None,
            Controls::default(),
        );
        assert_eq!(verdict(&checks, "EFF-06", "query"), Verdict::Fail);

        // REVOKE from alice, who still reads through a membership.
        let mut revoke = sql_call(
            2,
            "execute_sql",
            "REVOKE SELECT ON orders FROM alice",
            ("catalog/table:public.orders", "update"),
        );
        revoke.probes.push(held(
            "effective",
            "catalog/table:public.orders",
            Some("alice"),
        ));
        let checks = evaluate(
            &tools,
            &[login.clone(), revoke.clone()],
            &baseline,
            true,
            &[],
            None,
            Controls::default(),
        );
        assert_eq!(verdict(&checks, "EFF-06", "execute_sql"), Verdict::Fail);
        let evidence = checks
            .iter()
            .find(|c| c.id == "EFF-06" && c.tool == "execute_sql")
            .map(|c| c.evidence.probes.clone())
            .unwrap_or_default();
        assert_eq!(
            evidence,
            ["call 2 db:catalog/table:public.orders: effective — use"]
        );
        // The same revoke with no other path neutralizes the grant.
        revoke.probes[0].status = ProbeStatus::Ineffective;
        let checks = evaluate(
            &tools,
            &[login, revoke],
            &baseline,
            true,
            &[],
            None,
            Controls::default(),
        );
        assert_eq!(verdict(&checks, "EFF-06", "execute_sql"), Verdict::Pass);
    }

    fn jail_effect(mut record: CallRecord, object: &str) -> CallRecord {
        record.effects.push(Effect {
            store: witness_model::audit::JAIL_STORE.into(),
            object: object.into(),
            op: Op::Create,
            overwrite: None,
            before: None,
            after: None,
        });
        record
    }

    #[test]
    fn eff05_fails_on_effects_outside_the_stores_with_them_as_evidence() {
        let tools = [
            tool("save", json!({"readOnlyHint": false})),
            tool("cache", json!({"readOnlyHint": false})),
            tool("idle", json!({"readOnlyHint": false})),
        ];
        let save = call(
            1,
            "save",
            CallStatus::Ok,
            Provenance::Literal,
            &[("notes/a", "create")],
        );
        let cache = jail_effect(
            call(2, "cache", CallStatus::Ok, Provenance::Literal, &[]),
            "file/home/.cache/x",
        );
        let idle = call(3, "idle", CallStatus::Ok, Provenance::Literal, &[]);
        let checks = evaluate(
            &tools,
            &[save, cache, idle],
            &[],
            false,
            &[],
            None,
            Controls::default(),
        );
        assert_eq!(verdict(&checks, "EFF-05", "save"), Verdict::Pass);
        assert_eq!(verdict(&checks, "EFF-05", "cache"), Verdict::Fail);
        assert_eq!(verdict(&checks, "EFF-05", "idle"), Verdict::Skip);
        let evidence = checks
            .iter()
            .find(|c| c.id == "EFF-05" && c.tool == "cache")
            .map(|c| c.evidence.effects.clone())
            .unwrap_or_default();
        assert_eq!(evidence.len(), 1);
        assert_eq!(evidence[0].object, "jail:file/home/.cache/x");
    }

    #[test]
    fn a_tool_left_out_by_the_planner_skips_every_check_with_the_reason() {
        let tools = [tool("wipe", json!({"destructiveHint": true}))];
        let skipped = [SkippedTool {
            tool: "wipe".into(),
            reason: "destructive, and the jail has no network isolation".into(),
        }];
        let checks = evaluate(&tools, &[], &[], false, &skipped, None, Controls::default());
        assert_eq!(checks.len(), CheckId::evaluated_in(Lane::Effect).len());
        for check in &checks {
            assert_eq!(check.verdict, Verdict::Skip);
            assert!(check.reason.contains("no network isolation"), "{check:?}");
        }
    }

    fn respond(tools: &[ToolEntry], calls: &[CallRecord]) -> Vec<CheckResult> {
        let latency = BTreeMap::new();
        let ledger = Ledger {
            tools,
            calls,
            baseline: &[],
            probe_active: false,
            skipped: &[],
            latency: &latency,
            network_unobserved: None,
            controls: Controls::default(),
        };
        evaluate_lane(Lane::Response, &ledger)
    }

    #[test]
    fn rsp10_and_rsp11_fail_on_a_broken_schema_and_an_ambiguous_error() {
        let mut broken = tool("count", json!({"readOnlyHint": true}));
        broken.output_schema = Some(json!({"type": "integr"}));
        let mut call = call(1, "count", CallStatus::Ok, Provenance::Literal, &[]);
        call.response = Some(json!({"isError": "true", "content": []}));
        let checks = respond(&[broken], &[call.clone()]);
        assert_eq!(verdict(&checks, "RSP-10", "count"), Verdict::Fail);
        assert_eq!(verdict(&checks, "RSP-04", "count"), Verdict::Untestable);
        assert_eq!(verdict(&checks, "RSP-11", "count"), Verdict::Fail);
        // The same answer to invented arguments proves nothing.
        call.arguments[0].source = Provenance::Synthesized;
        let mut fine = tool("count", json!({"readOnlyHint": true}));
        fine.output_schema = Some(json!({"type": "object"}));
        let checks = respond(&[fine], &[call]);
        assert_eq!(verdict(&checks, "RSP-11", "count"), Verdict::Untestable);
        assert_eq!(verdict(&checks, "RSP-10", "count"), Verdict::Pass);
    }
}

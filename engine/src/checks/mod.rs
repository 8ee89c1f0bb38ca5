//! The effect lane: declarations held to observed effects.
//!
//! | id | holds when |
//! |---|---|
//! | EFF-01 | a tool declared `readOnlyHint: true` caused no observed create, update or delete |
//! | EFF-02 | every observed delete or overwrite comes from a tool not declared `destructiveHint: false` (nor read-only); read per target, so a create cannot mask a delete |
//! | EFF-03 | a tool declared `idempotentHint: true`, repeated with identical arguments, caused no further effect |
//! | EFF-05 | a tool's effects stayed inside the declared stores: nothing landed elsewhere in the jail (HOME, TMPDIR, working directory) |
//! | EFF-06 | a read-only tool mints no effective credential, and a call that claims to revoke or delete a credential leaves it ineffective |
//!
//! Verdicts rest only on the ledger. A call that failed on synthesized
//! arguments and changed nothing makes a check `untestable`: such a failure
//! proves nothing about the server. An observed effect is evidence whatever
//! the call's outcome, so a read-only tool that writes and then errors still fails.

use witness_model::audit::{
    CallRecord, CallStatus, CheckResult, Evidence, EvidenceEffect, ProbeRecord, SkippedTool,
    ToolEntry, Verdict,
};

/// Words by which a tool or its answer claims to take authority away. Used
/// only to read what a call *claims* (EFF-06), never to classify a tool.
const REVOKE_WORDS: [&str; 7] = [
    "revoke",
    "revoked",
    "delete",
    "deleted",
    "disable",
    "deactivate",
    "invalidate",
];

pub const CHECK_IDS: [&str; 5] = ["EFF-01", "EFF-02", "EFF-03", "EFF-05", "EFF-06"];

/// Every check for every tool, ordered by check id then tool name. A tool the
/// planner left out gets `skip` with the planner's reason on every check.
pub fn evaluate(
    tools: &[ToolEntry],
    calls: &[CallRecord],
    baseline: &[ProbeRecord],
    probe_active: bool,
    skipped: &[SkippedTool],
) -> Vec<CheckResult> {
    let mut sorted: Vec<&ToolEntry> = tools.iter().collect();
    sorted.sort_by(|a, b| a.name.cmp(&b.name));
    let mut out = Vec::new();
    for id in CHECK_IDS {
        for tool in &sorted {
            let mine: Vec<&CallRecord> = calls.iter().filter(|c| c.tool == tool.name).collect();
            let left_out = skipped.iter().find(|s| s.tool == tool.name);
            let (verdict, reason, evidence) = match (id, left_out) {
                (_, Some(left_out)) if mine.is_empty() => (
                    Verdict::Skip,
                    format!("not called: {}", left_out.reason),
                    evidence_of(&mine, vec![]),
                ),
                ("EFF-01", _) => eff01(tool, &mine),
                ("EFF-02", _) => eff02(tool, &mine),
                ("EFF-03", _) => eff03(tool, &mine),
                ("EFF-05", _) => eff05(&mine),
                _ => eff06(tool, &mine, calls, baseline, probe_active),
            };
            out.push(CheckResult {
                id: id.to_owned(),
                tool: tool.name.clone(),
                verdict,
                reason,
                evidence,
            });
        }
    }
    out
}

type Outcome = (Verdict, String, Evidence);

fn evidence_of(calls: &[&CallRecord], effects: Vec<EvidenceEffect>) -> Evidence {
    Evidence {
        calls: calls.iter().map(|c| c.id).collect(),
        effects,
        probes: Vec::new(),
    }
}

fn effects_where(
    calls: &[&CallRecord],
    keep: impl Fn(&witness_model::audit::Effect) -> bool,
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
                    op: e.op.clone(),
                })
        })
        .collect()
}

/// When nothing was observed: was the tool exercised well enough to say so?
fn unexercised(calls: &[&CallRecord]) -> Option<(Verdict, String)> {
    if calls.is_empty() {
        return Some((Verdict::Skip, "the tool was not called".into()));
    }
    if calls.iter().any(|c| c.succeeded()) {
        return None;
    }
    if calls.iter().all(|c| {
        matches!(
            c.outcome.status,
            CallStatus::TransportError | CallStatus::NotSent
        )
    }) {
        return Some((
            Verdict::Untestable,
            "no call reached the tool: the transport failed or an argument could not be resolved"
                .into(),
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

fn eff01(tool: &ToolEntry, calls: &[&CallRecord]) -> Outcome {
    if tool.hints.read_only != Some(true) {
        return (
            Verdict::Skip,
            "not declared readOnlyHint: true; nothing to verify".into(),
            evidence_of(calls, vec![]),
        );
    }
    let writes = effects_where(calls, |_| true);
    if !writes.is_empty() {
        let reason = format!(
            "declared read-only, but {} observed change(s) followed its calls",
            writes.len()
        );
        return (Verdict::Fail, reason, evidence_of(calls, writes));
    }
    if let Some((verdict, reason)) = unexercised(calls) {
        return (verdict, reason, evidence_of(calls, vec![]));
    }
    (
        Verdict::Pass,
        format!(
            "declared read-only and no change was observed over {} call(s)",
            calls.len()
        ),
        evidence_of(calls, vec![]),
    )
}

fn eff02(tool: &ToolEntry, calls: &[&CallRecord]) -> Outcome {
    let destructive = effects_where(calls, |e| e.is_destructive());
    let denies = tool.hints.read_only == Some(true) || tool.hints.destructive == Some(false);
    if !destructive.is_empty() {
        if denies {
            let claim = if tool.hints.read_only == Some(true) {
                "readOnlyHint: true"
            } else {
                "destructiveHint: false"
            };
            return (
                Verdict::Fail,
                format!(
                    "declared {claim}, but {} delete(s) or overwrite(s) were observed",
                    destructive.len()
                ),
                evidence_of(calls, destructive),
            );
        }
        let basis = if tool.hints.destructive == Some(true) {
            "destructiveHint: true"
        } else {
            "the specification's default for an unset destructiveHint (true)"
        };
        return (
            Verdict::Pass,
            format!(
                "{} delete(s) or overwrite(s) observed, covered by {basis}",
                destructive.len()
            ),
            evidence_of(calls, destructive),
        );
    }
    if let Some((verdict, reason)) = unexercised(calls) {
        return (verdict, reason, evidence_of(calls, vec![]));
    }
    (
        Verdict::Pass,
        "no delete or overwrite was observed".into(),
        evidence_of(calls, vec![]),
    )
}

fn eff03(tool: &ToolEntry, calls: &[&CallRecord]) -> Outcome {
    if tool.hints.idempotent != Some(true) {
        return (
            Verdict::Skip,
            "not declared idempotentHint: true; nothing to verify".into(),
            evidence_of(calls, vec![]),
        );
    }
    let repeats: Vec<&CallRecord> = calls
        .iter()
        .copied()
        .filter(|c| c.repeat_of.is_some())
        .collect();
    let further = effects_where(&repeats, |_| true);
    if !further.is_empty() {
        return (
            Verdict::Fail,
            format!(
                "declared idempotent, but the identical repeat caused {} further change(s)",
                further.len()
            ),
            evidence_of(calls, further),
        );
    }
    if repeats.iter().any(|c| c.succeeded()) {
        return (
            Verdict::Pass,
            "the identical repeat caused no further change".into(),
            evidence_of(calls, vec![]),
        );
    }
    if let Some((verdict, reason)) = unexercised(calls) {
        return (verdict, reason, evidence_of(calls, vec![]));
    }
    (
        Verdict::Untestable,
        "no identical repeat completed, so the claim could not be exercised".into(),
        evidence_of(calls, vec![]),
    )
}

/// Scope: whatever a tool changed must be inside the stores the auditor
/// declared. The jail-wide observer sees the rest of the jail (HOME, TMPDIR,
/// the working directory); a change there is an undeclared effect. There is
/// no annotation for this: the claim checked is the audit's own declaration
/// of where the server keeps its state.
fn eff05(calls: &[&CallRecord]) -> Outcome {
    let outside = effects_where(calls, |e| e.outside_stores());
    if !outside.is_empty() {
        return (
            Verdict::Fail,
            format!(
                "{} change(s) landed in the jail outside the declared stores",
                outside.len()
            ),
            evidence_of(calls, outside),
        );
    }
    let inside = effects_where(calls, |_| true);
    if !inside.is_empty() {
        return (
            Verdict::Pass,
            format!(
                "{} observed change(s), all inside the declared stores",
                inside.len()
            ),
            evidence_of(calls, inside),
        );
    }
    if let Some((verdict, reason)) = unexercised(calls) {
        return (verdict, reason, evidence_of(calls, vec![]));
    }
    (
        Verdict::Skip,
        "the jail observer saw nothing from this tool, and it changed no store: nothing to place"
            .into(),
        evidence_of(calls, vec![]),
    )
}

/// Objects whose most recent probe before call `before` found them effective.
fn effective_before(
    all: &[CallRecord],
    baseline: &[ProbeRecord],
    before: u32,
) -> std::collections::BTreeSet<(String, String)> {
    let mut live = std::collections::BTreeSet::new();
    let earlier = all
        .iter()
        .filter(|c| c.id < before)
        .map(|c| c.probes.as_slice());
    for probes in std::iter::once(baseline).chain(earlier) {
        for probe in probes {
            let key = (probe.store.clone(), probe.object.clone());
            if probe.status == "effective" {
                live.insert(key);
            } else if probe.status == "ineffective" {
                live.remove(&key);
            }
        }
    }
    live
}

fn eff06(
    tool: &ToolEntry,
    calls: &[&CallRecord],
    all: &[CallRecord],
    baseline: &[ProbeRecord],
    probe_active: bool,
) -> Outcome {
    if !probe_active {
        return (
            Verdict::Skip,
            "no probe can exercise this server's credentials (NullProbe): authority is unknown"
                .into(),
            evidence_of(calls, vec![]),
        );
    }
    let mut effective_mints = Vec::new();
    let mut residual = Vec::new();
    let mut neutralized = Vec::new();
    let mut probes = Vec::new();
    for call in calls {
        let claims_revoke = claims_revocation(tool, call);
        let live_before = effective_before(all, baseline, call.id);
        for probe in &call.probes {
            let Some(effect) = call
                .effects
                .iter()
                .find(|e| e.store == probe.store && e.object == probe.object)
            else {
                continue;
            };
            let item = EvidenceEffect {
                call: call.id,
                object: effect.qualified(),
                op: effect.op.clone(),
            };
            let line = format!(
                "call {} {}: {} — {}",
                call.id,
                effect.qualified(),
                probe.status,
                probe.basis
            );
            // Only what was authority before the call can have been taken away.
            let was_live = live_before.contains(&(probe.store.clone(), probe.object.clone()));
            match (effect.op.as_str(), probe.status.as_str()) {
                ("create", "effective") => {
                    probes.push(line);
                    effective_mints.push(item);
                }
                ("update" | "delete", "effective") if claims_revoke && was_live => {
                    probes.push(line);
                    residual.push(item);
                }
                ("update" | "delete", "ineffective") if claims_revoke && was_live => {
                    probes.push(line);
                    neutralized.push(item);
                }
                _ => {}
            }
        }
    }
    let with_probes = |effects: Vec<EvidenceEffect>, probes: Vec<String>| {
        let mut e = evidence_of(calls, effects);
        e.probes = probes;
        e
    };
    if tool.hints.read_only == Some(true) && !effective_mints.is_empty() {
        return (
            Verdict::Fail,
            format!(
                "declared read-only, but it created {} credential(s) the server's rule accepts",
                effective_mints.len()
            ),
            with_probes(effective_mints, probes),
        );
    }
    if !residual.is_empty() {
        return (
            Verdict::Fail,
            "claims to revoke or delete a credential, but the probe finds it still effective (residual authority)".into(),
            with_probes(residual, probes),
        );
    }
    if !neutralized.is_empty() {
        return (
            Verdict::Pass,
            "the credential it revoked or deleted is no longer accepted".into(),
            with_probes(neutralized, probes),
        );
    }
    if !effective_mints.is_empty() {
        return (
            Verdict::Pass,
            "the credentials it minted are accounted for: the tool is not declared read-only"
                .into(),
            with_probes(effective_mints, probes),
        );
    }
    (
        Verdict::Skip,
        "no call created or revoked a credential the probe covers".into(),
        evidence_of(calls, vec![]),
    )
}

/// A call claims to take authority away when the tool is declared destructive
/// and its name, description or answer says so.
fn claims_revocation(tool: &ToolEntry, call: &CallRecord) -> bool {
    if tool.hints.read_only == Some(true) || tool.hints.destructive == Some(false) {
        return false;
    }
    let mut text = tool.name.to_ascii_lowercase();
    if let Some(d) = &tool.description {
        text.push(' ');
        text.push_str(&d.to_ascii_lowercase());
    }
    if let Some(r) = &call.response {
        text.push(' ');
        text.push_str(&r.to_string().to_ascii_lowercase());
    }
    REVOKE_WORDS.iter().any(|w| text.contains(w))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use witness_model::audit::{
        Argument, Effect, Hints, Outcome as CallOutcome, Provenance, ToolClass,
    };

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
            has_output_schema: false,
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
            tool: tool.into(),
            repeat_of: None,
            arguments: vec![Argument {
                name: "id".into(),
                value: json!("x"),
                source,
                from: None,
                parts: vec![],
            }],
            outcome: CallOutcome {
                status,
                code: None,
                detail: None,
            },
            response: None,
            frames: None,
            effects: effects
                .iter()
                .map(|(object, op)| Effect {
                    store: "db".into(),
                    object: (*object).into(),
                    op: (*op).into(),
                    overwrite: (*op == "update").then_some(true),
                    before: None,
                    after: None,
                })
                .collect(),
            late_effects: vec![],
            probes: vec![],
            events_after: vec![],
            event_effects: vec![],
        }
    }

    fn verdict(checks: &[CheckResult], id: &str, tool: &str) -> Verdict {
        checks
            .iter()
            .find(|c| c.id == id && c.tool == tool)
            .map(|c| c.verdict)
            .unwrap_or(Verdict::Skip)
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
        let checks = evaluate(&tools, &calls, &[], false, &[]);
        assert_eq!(verdict(&checks, "EFF-01", "get"), Verdict::Fail);
        assert_eq!(tools[0].class, ToolClass::ReadOnly);
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
        let checks = evaluate(&tools, &calls, &[], false, &[]);
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
        let checks = evaluate(&tools, &calls, &[], false, &[]);
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
        let checks = evaluate(&tools, &calls, &[], false, &[]);
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
        let checks = evaluate(&tools, &[first.clone(), repeat.clone()], &[], false, &[]);
        assert_eq!(verdict(&checks, "EFF-03", "save"), Verdict::Pass);
        repeat.effects = first.effects.clone();
        let checks = evaluate(&tools, &[first, repeat], &[], false, &[]);
        assert_eq!(verdict(&checks, "EFF-03", "save"), Verdict::Fail);
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
            status: status.into(),
            basis: "rule".into(),
            credential_digest: None,
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
                &evaluate(&tools, &all, &[], false, &[]),
                "EFF-06",
                "revoke_api_key"
            ),
            Verdict::Skip
        );
        let checks = evaluate(&tools, &all, &[], true, &[]);
        assert_eq!(verdict(&checks, "EFF-06", "revoke_api_key"), Verdict::Fail);
        assert_eq!(verdict(&checks, "EFF-06", "mint_api_key"), Verdict::Pass);
        // Deleting something that never was authority neutralizes nothing.
        assert_eq!(verdict(&checks, "EFF-06", "delete_note"), Verdict::Skip);
        revoke.probes[0].status = "ineffective".into();
        let checks = evaluate(&tools, &[mint, revoke, note], &[], true, &[]);
        assert_eq!(verdict(&checks, "EFF-06", "revoke_api_key"), Verdict::Pass);
    }

    fn jail_effect(mut record: CallRecord, object: &str) -> CallRecord {
        record.effects.push(Effect {
            store: witness_model::audit::JAIL_STORE.into(),
            object: object.into(),
            op: "create".into(),
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
        let checks = evaluate(&tools, &[save, cache, idle], &[], false, &[]);
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
        let checks = evaluate(&tools, &[], &[], false, &skipped);
        assert_eq!(checks.len(), CHECK_IDS.len());
        for check in &checks {
            assert_eq!(check.verdict, Verdict::Skip);
            assert!(check.reason.contains("no network isolation"), "{check:?}");
        }
    }
}

//! The effect-evidence report of one audit: what the page shows, computed
//! from the `AuditReport` alone.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::Value;

use witness_model::audit::IsolationEntry;
use witness_model::audit::{
    Argument, AuditReport, CallRecord, CheckResult, Effect, Lane, MetadataFinding, Origin,
    ProbeRecord, StoreObject, ToolClass, ToolEntry, VerdictTally,
};
use witness_model::vocab::{CheckId, IsolationLayer, IsolationLevel, ProbeStatus, Provenance};
use witness_text::clip_raw;

use crate::{anchor_part, check_anchor, verdict_counts};

/// Bounds that keep a page readable; the JSON keeps everything.
const MAX_DESCRIPTION: usize = 2_000;
const MAX_VALUE: usize = 1_000;
const MAX_RESPONSE: usize = 12_000;
const MAX_FRAME: usize = 2_000;
const MAX_FRAMES: usize = 400;
const MAX_STDERR: usize = 4_000;

/// Where the page links to, relative to the page itself.
#[derive(Clone, Debug, Default)]
pub struct AuditLinks {
    /// The audit JSON the page was rendered from.
    pub raw_json: Option<String>,
    /// The evaluation page, when the audit belongs to one.
    pub index: Option<String>,
}

#[derive(Serialize)]
pub struct View {
    title: String,
    schema: String,
    generator: String,
    links: LinksView,
    outcome: OutcomeView,
    target: TargetView,
    era: EraView,
    isolation: witness_model::audit::IsolationEntry,
    stores: Vec<witness_model::audit::StoreEntry>,
    probe: String,
    catalog: witness_model::audit::CatalogEntry,
    summary: witness_model::audit::Summary,
    /// What was exercised; absent for a plan file carried out in full.
    coverage: Option<crate::coverage::CoverageView>,
    /// Whether the planner chose the arguments (the ledger then says what
    /// a store value, and a value named by the plan's own call, are).
    store_values: bool,
    /// Every check with a verdict: id, anchor, lane (effect first).
    check_ids: Vec<(String, String, String)>,
    tools: Vec<ToolView>,
    calls: Vec<CallView>,
    startup_effects: Vec<EffectView>,
    shutdown_effects: Vec<EffectView>,
    /// Outbound attempts outside every call's window.
    network_outside_calls: Vec<witness_model::audit::NetworkAttempt>,
    baseline_probes: Vec<ProbeView>,
    check_groups: Vec<CheckGroup>,
    metadata: Vec<MetadataView>,
    findings: Vec<FindingView>,
    scope: Vec<String>,
    transcripts: Vec<TranscriptView>,
    volatile: Vec<(String, String)>,
    /// Server clock values replaced by a token: what, how many, where.
    clock: Vec<ClockView>,
}

#[derive(Serialize)]
struct ClockView {
    kind: String,
    token: String,
    count: usize,
    at: Vec<String>,
    /// Places beyond those shown.
    more: usize,
}

/// Places shown per kind of clock value; the JSON has them all.
const MAX_CLOCK_PLACES: usize = 50;

#[derive(Serialize)]
struct LinksView {
    raw_json: Option<String>,
    index: Option<String>,
    /// What the index link says: the evaluation page, or a sweep's page.
    index_label: String,
}

#[derive(Serialize)]
struct OutcomeView {
    /// `passed`, `failed`, `incomplete` or `inconclusive`.
    word: String,
    /// The style it is shown in (an inconclusive audit looks like an
    /// incomplete one: neither is evidence against the server).
    class: String,
    sentence: String,
    exit_code: i32,
}

#[derive(Serialize)]
struct TargetView {
    command: String,
    env: Vec<String>,
    label: Option<String>,
    pinned_version: Option<String>,
    /// The official MCP registry entry the target was read from.
    server_json: Option<String>,
}

#[derive(Serialize)]
struct EraView {
    requested: String,
    era: Option<String>,
    protocol_version: Option<String>,
    discover: Option<String>,
    server_info: Option<String>,
    instructions_present: bool,
}

struct HintView {
    key: &'static str,
    declared: bool,
}

#[derive(Serialize)]
struct CellView {
    verdict: String,
    anchor: String,
}

#[derive(Serialize)]
struct ToolView {
    name: String,
    anchor: String,
    title: Option<String>,
    description: Option<String>,
    annotations: Option<String>,
    /// Hints the tool leaves unset (or sets to a non-boolean).
    undeclared: Vec<&'static str>,
    class: String,
    class_basis: String,
    calls: Vec<u32>,
    cells: Vec<Option<CellView>>,
}

#[derive(Serialize)]
struct ArgumentView {
    name: String,
    value: String,
    source: String,
    /// The badge's style: real values (harvested, store) share one.
    badge: String,
    from: Option<OriginView>,
    /// For a store value: `store fs · file/docs/a.txt`.
    object: Option<String>,
    /// The real values inside a structured argument, one line each.
    parts: Vec<String>,
}

/// Where a harvested value came from. The document names a plan step
/// (`call 7`); the page says `step 7` and links the call that carried it out,
/// because `#call-N` anchors are call ids, and repeats and harvest calls
/// make the two numbers differ.
#[derive(Serialize)]
struct OriginView {
    /// `step 7`, or the origin as recorded when it names no step.
    step: String,
    /// The call id that carried out the step, and its anchor.
    call: Option<(u32, String)>,
    path: String,
}

#[derive(Serialize)]
struct EffectView {
    store: String,
    object: String,
    op: String,
    overwrite: Option<bool>,
    before: Option<String>,
    after: Option<String>,
}

#[derive(Serialize)]
struct ProbeView {
    store: String,
    object: String,
    status: String,
    basis: String,
    credential_digest: Option<String>,
}

#[derive(Serialize)]
struct CallView {
    id: u32,
    anchor: String,
    step: u32,
    tool: String,
    tool_anchor: String,
    repeat_of: Option<u32>,
    page_of: Option<u32>,
    /// The plan's checks on this call, as `max_items (limit 5)`.
    expect: Vec<String>,
    arguments: Vec<ArgumentView>,
    status: String,
    ok: bool,
    code: Option<i64>,
    detail: Option<String>,
    response: Option<String>,
    frames: Option<(u64, u64)>,
    frame_anchor: Option<String>,
    effects: Vec<EffectView>,
    late_effects: Vec<EffectView>,
    /// Outbound attempts the network observer charged to this call.
    network: Vec<witness_model::audit::NetworkAttempt>,
    /// Paths of stores' originals it tried to write (caught by decoys).
    original_writes: Vec<String>,
    probes: Vec<ProbeView>,
    events_after: Vec<String>,
    event_effects: Vec<EffectView>,
    /// The session it went to, after a restart (0 is the first).
    session: u32,
    /// The restart that followed it, when one did.
    restart: Option<RestartView>,
}

/// A restart, shown after the call it followed.
#[derive(Serialize)]
struct RestartView {
    reason: String,
    session: u32,
    effects: Vec<EffectView>,
}

#[derive(Serialize)]
struct EvidenceEffectView {
    call: u32,
    call_anchor: String,
    object: String,
    op: String,
}

#[derive(Serialize)]
struct CheckView {
    id: String,
    tool: String,
    anchor: String,
    tool_anchor: String,
    verdict: String,
    reason: String,
    calls: Vec<(u32, String)>,
    effects: Vec<EvidenceEffectView>,
    probes: Vec<String>,
    /// Outbound attempts the verdict rests on: call, its anchor, where.
    network: Vec<(u32, String, String)>,
    /// Writes attempted on stores' originals it rests on: call, its anchor, path.
    original_writes: Vec<(u32, String, String)>,
}

#[derive(Serialize)]
struct MetadataView {
    kind: String,
    meaning: String,
    tool: String,
    tool_anchor: String,
    field: String,
    span: String,
    at: usize,
    detail: String,
}

#[derive(Serialize)]
struct CheckGroup {
    lane: String,
    id: String,
    anchor: String,
    holds_when: String,
    counts: String,
    checks: Vec<CheckView>,
}

#[derive(Serialize)]
struct FindingView {
    kind: String,
    detail: String,
    call: Option<(u32, String)>,
}

#[derive(Serialize)]
struct FrameView {
    seq: u64,
    anchor: String,
    dir: String,
    bytes: u64,
    text: String,
    truncated: bool,
    clipped: bool,
}

#[derive(Serialize)]
struct TranscriptView {
    role: String,
    anchor: String,
    exit: Option<String>,
    frames: Vec<FrameView>,
    total_frames: usize,
    dropped_frames: u64,
    stderr_bytes: u64,
    stderr: String,
}

fn json_text(value: &Value, pretty: bool, max: usize) -> String {
    let text = if pretty {
        serde_json::to_string_pretty(value)
    } else {
        serde_json::to_string(value)
    }
    .unwrap_or_default();
    clip_raw(&text, max)
}

fn effect(e: &Effect) -> EffectView {
    let short = |d: &Option<String>| d.as_deref().map(|d| clip_raw(d, 12));
    EffectView {
        store: e.store.clone(),
        object: e.object.clone(),
        op: e.op.as_str().into(),
        overwrite: e.overwrite,
        before: short(&e.before),
        after: short(&e.after),
    }
}

fn effects(list: &[Effect]) -> Vec<EffectView> {
    list.iter().map(effect).collect()
}

fn probe(p: &ProbeRecord) -> ProbeView {
    ProbeView {
        store: p.store.clone(),
        object: p.object.clone(),
        status: p.status.as_str().into(),
        basis: p.basis.clone(),
        credential_digest: p.credential_digest.clone(),
    }
}

fn argument(report: &AuditReport, a: &Argument) -> ArgumentView {
    let badge = match a.source {
        Provenance::Store => Provenance::Harvested,
        other => other,
    };
    ArgumentView {
        name: a.name.clone(),
        value: json_text(&a.value, false, MAX_VALUE),
        source: a.source.as_str().into(),
        badge: badge.as_str().into(),
        from: a.from.as_ref().map(|o| origin(report, o)),
        object: a.object.as_ref().map(store_object),
        parts: a
            .parts
            .iter()
            .map(|p| {
                let whence = match (&p.from, &p.object) {
                    (Some(from), _) => {
                        let o = origin(report, from);
                        format!("{} · {}", o.step, o.path)
                    }
                    (None, Some(object)) => store_object(object),
                    (None, None) => "—".into(),
                };
                format!("{}: {whence}", p.at)
            })
            .collect(),
    }
}

/// `store fs · file/docs/a.txt`, or `store fs (its root)`.
fn store_object(object: &StoreObject) -> String {
    if object.object.is_empty() {
        format!("store {} (its root)", object.store)
    } else {
        format!("store {} · {}", object.store, object.object)
    }
}

fn origin(report: &AuditReport, origin: &Origin) -> OriginView {
    let step = origin.step();
    OriginView {
        step: step.map_or_else(|| origin.call.clone(), |n| format!("step {n}")),
        call: step
            .and_then(|n| report.call_for_step(n))
            .map(|c| (c.id, call_anchor(c.id))),
        path: origin.path.clone(),
    }
}

fn call_anchor(id: u32) -> String {
    format!("call-{id}")
}

fn tool_anchor(name: &str) -> String {
    format!("tool-{}", anchor_part(name))
}

/// Why a tool is in its class, in the terms of its own declarations.
fn class_basis(tool: &ToolEntry) -> String {
    match tool.class {
        ToolClass::ReadOnly => "declares readOnlyHint: true".into(),
        ToolClass::Additive => "declares destructiveHint: false and is not read-only".into(),
        ToolClass::Destructive if tool.hints.destructive == Some(true) => {
            "declares destructiveHint: true".into()
        }
        ToolClass::Destructive => {
            "leaves destructiveHint unset while not read-only: the specification's default is destructive"
                .into()
        }
        ToolClass::Unknown => {
            "declares no annotation: it may or may not write (never guessed from its name)".into()
        }
    }
}

fn hints(tool: &ToolEntry) -> Vec<HintView> {
    let h = &tool.hints;
    [
        ("readOnlyHint", h.read_only),
        ("destructiveHint", h.destructive),
        ("idempotentHint", h.idempotent),
        ("openWorldHint", h.open_world),
    ]
    .into_iter()
    .map(|(key, v)| HintView {
        key,
        declared: v.is_some(),
    })
    .collect()
}

fn call_view(report: &AuditReport, call: &CallRecord, sessions: &[usize]) -> CallView {
    let session = usize::try_from(call.session)
        .ok()
        .and_then(|n| sessions.get(n))
        .copied();
    let restart = report
        .restarts
        .iter()
        .find(|r| r.after_call == call.id)
        .map(|r| RestartView {
            reason: clip_raw(&r.reason, MAX_VALUE),
            session: r.session,
            effects: effects(&r.effects),
        });
    CallView {
        id: call.id,
        anchor: call_anchor(call.id),
        step: call.step,
        tool: call.tool.clone(),
        tool_anchor: tool_anchor(&call.tool),
        repeat_of: call.repeat_of,
        page_of: call.page_of,
        expect: call.expect.iter().map(expectation_text).collect(),
        arguments: call.arguments.iter().map(|a| argument(report, a)).collect(),
        status: call.outcome.status.phrase().into(),
        ok: call.succeeded(),
        code: call.outcome.code,
        detail: call
            .outcome
            .detail
            .as_deref()
            .map(|d| clip_raw(d, MAX_VALUE)),
        response: call
            .response
            .as_ref()
            .map(|r| json_text(r, true, MAX_RESPONSE)),
        frames: call.frames.map(|[a, b]| (a, b)),
        frame_anchor: match (call.frames, session) {
            (Some([a, _]), Some(p)) => Some(frame_anchor(p, a)),
            _ => None,
        },
        effects: effects(&call.effects),
        late_effects: effects(&call.late_effects),
        network: call.network.clone(),
        original_writes: call.original_writes.clone(),
        probes: call.probes.iter().map(probe).collect(),
        events_after: call.events_after.clone(),
        event_effects: effects(&call.event_effects),
        session: call.session,
        restart,
    }
}

/// How the audit ended, in a word and a sentence.
fn outcome(report: &AuditReport) -> OutcomeView {
    let view = |word: &str, class: &str, sentence: String| OutcomeView {
        word: word.into(),
        class: class.into(),
        sentence,
        exit_code: report.exit_code,
    };
    match (report.complete, report.exit_code) {
        (false, _) => view(
            "incomplete",
            "incomplete",
            "The audit could not conclude; this is not evidence against the server.".into(),
        ),
        (true, 1) if report.summary.fail == 0 => view(
            "failed",
            "failed",
            "A response check failed: an answer broke what the protocol, the tool's own outputSchema or the plan expected.".into(),
        ),
        (true, 1) => view(
            "failed",
            "failed",
            "At least one declaration is contradicted by what was observed.".into(),
        ),
        (true, 0) => view(
            "passed",
            "passed",
            "No declaration was contradicted by what was observed, and no answer broke what was expected of it.".into(),
        ),
        (true, _) => view(
            "inconclusive",
            "incomplete",
            format!(
                "Nothing could be concluded ({}); this is not evidence against the server, nor for it.",
                report
                    .coverage
                    .as_ref()
                    .and_then(|c| c.not_concluded.as_deref())
                    .unwrap_or("no reason recorded")
            ),
        ),
    }
}

/// A plan check as the page names it: its plan name and its parameters.
fn expectation_text(e: &witness_model::audit::Expectation) -> String {
    let name = e.check().plan_name().unwrap_or_default();
    let params = serde_json::to_value(e)
        .ok()
        .and_then(|v| v.as_object().cloned())
        .map(|m| {
            m.into_iter()
                .filter(|(k, _)| k != "type")
                .map(|(k, v)| format!("{k} {v}"))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    if params.is_empty() {
        format!("{name} ({})", e.check())
    } else {
        format!("{name} ({}; {})", e.check(), params.join(", "))
    }
}

fn frame_anchor(process: usize, seq: u64) -> String {
    format!("p{process}-frame-{seq}")
}

fn check_view(check: &CheckResult) -> CheckView {
    CheckView {
        id: check.id.as_str().into(),
        tool: check.tool.clone(),
        anchor: check_anchor(check.id.as_str(), &check.tool),
        tool_anchor: tool_anchor(&check.tool),
        verdict: check.verdict.as_str().into(),
        reason: check.reason.clone(),
        calls: check
            .evidence
            .calls
            .iter()
            .map(|c| (*c, call_anchor(*c)))
            .collect(),
        effects: check
            .evidence
            .effects
            .iter()
            .map(|e| EvidenceEffectView {
                call: e.call,
                call_anchor: call_anchor(e.call),
                object: e.object.clone(),
                op: e.op.as_str().into(),
            })
            .collect(),
        probes: check.evidence.probes.clone(),
        network: check
            .evidence
            .network
            .iter()
            .map(|n| (n.call, call_anchor(n.call), n.destination.clone()))
            .collect(),
        original_writes: check
            .evidence
            .original_writes
            .iter()
            .map(|w| (w.call, call_anchor(w.call), w.path.clone()))
            .collect(),
    }
}

/// What this audit could not see, from what it recorded.
fn scope(report: &AuditReport, check_ids: &[CheckId]) -> Vec<String> {
    let mut out = Vec::new();
    if !report.complete {
        out.push(format!(
            "The audit did not complete ({}); verdicts cover only what ran before that, and the missing part is not evidence against the server.",
            report.incomplete_reason.as_deref().unwrap_or("no reason recorded")
        ));
    }
    if !report.catalog.complete {
        out.push(format!(
            "The tool catalog is incomplete{}: tools beyond it were neither called nor checked.",
            report
                .catalog
                .problem
                .as_deref()
                .map(|p| format!(" ({p})"))
                .unwrap_or_default()
        ));
    }
    let stores: Vec<String> = report
        .stores
        .iter()
        .map(|s| format!("{} ({} observer)", s.name, s.observer))
        .collect();
    if stores.is_empty() {
        out.push("No store was declared, so no effect could be observed: every effect check rests on nothing seen.".into());
    } else {
        out.push(format!(
            "Only the declared stores were observed: {}. Changes anywhere else — other files, other processes, remote services — are invisible to this audit.",
            stores.join(", ")
        ));
    }
    out.push("Each call is bracketed by two snapshots: a change made and undone within one call's window, or below an observer's object granularity (e.g. an empty table's schema change in a row-level view), leaves no trace.".into());
    out.extend(isolation_limits(&report.isolation));
    if report.probe == "null" {
        out.push("No probe was used: whether created objects carry authority is unknown, and EFF-06 skips.".into());
    } else {
        let unknown = report
            .calls
            .iter()
            .flat_map(|c| &c.probes)
            .chain(&report.baseline_probes)
            .filter(|p| p.status == ProbeStatus::Unknown)
            .count();
        out.push(format!(
            "Probe {}: it exercises only objects it knows how to use{}.",
            report.probe,
            if unknown > 0 {
                format!("; {unknown} probe answer(s) were unknown and count as no evidence")
            } else {
                String::new()
            }
        ));
    }
    let missing: Vec<&str> = CheckId::ALL
        .into_iter()
        .filter(|id| id.lane() == Lane::Effect && !check_ids.contains(id))
        .map(CheckId::as_str)
        .collect();
    if !missing.is_empty() {
        out.push(format!(
            "Not checked by this audit: {}.",
            missing.join(", ")
        ));
    }
    let called: BTreeSet<&str> = report.calls.iter().map(|c| c.tool.as_str()).collect();
    let uncalled: Vec<&str> = report
        .tools
        .iter()
        .map(|t| t.name.as_str())
        .filter(|t| !called.contains(t))
        .collect();
    if !uncalled.is_empty() {
        out.push(format!(
            "{} tool(s) were never called, so nothing was observed about them: {}.",
            uncalled.len(),
            uncalled.join(", ")
        ));
    }
    let failed_synth = report
        .calls
        .iter()
        .filter(|c| !c.succeeded() && c.used_synthesized())
        .count();
    if failed_synth > 0 {
        out.push(format!(
            "{failed_synth} call(s) failed on arguments mcp-witness synthesized: what those tools do on valid input was not seen (their checks are untestable, never fail)."
        ));
    }
    let late: usize = report.calls.iter().map(|c| c.late_effects.len()).sum();
    if late > 0 {
        out.push(format!(
            "{late} change(s) appeared between calls and are charged to no call: a late effect cannot be pinned to the tool that caused it."
        ));
    }
    out
}

impl View {
    /// The page as part of another index than the evaluation page (a
    /// sweep's prevalence page), which its index link then names.
    pub fn with_index_label(mut self, label: &str) -> Self {
        self.links.index_label = label.to_owned();
        self
    }
}

fn metadata_view(f: &MetadataFinding) -> MetadataView {
    MetadataView {
        kind: f.kind.as_str().into(),
        meaning: f.kind.meaning().into(),
        tool: f.tool.clone(),
        tool_anchor: tool_anchor(&f.tool),
        field: clip_raw(&f.field, MAX_VALUE),
        span: clip_raw(&f.span, MAX_VALUE),
        at: f.at,
        detail: clip_raw(&f.detail, MAX_VALUE),
    }
}

pub fn view(report: &AuditReport, links: &AuditLinks) -> View {
    // Effect lane first, then the response lane: catalog order.
    let check_ids: Vec<CheckId> = report
        .checks
        .iter()
        .chain(&report.response)
        .map(|c| c.id)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let mut calls_by_tool: BTreeMap<&str, Vec<u32>> = BTreeMap::new();
    for call in &report.calls {
        calls_by_tool.entry(&call.tool).or_default().push(call.id);
    }
    let tools = report
        .tools
        .iter()
        .map(|tool| ToolView {
            name: tool.name.clone(),
            anchor: tool_anchor(&tool.name),
            title: tool.title.clone(),
            description: tool
                .description
                .as_deref()
                .map(|d| clip_raw(d, MAX_DESCRIPTION)),
            annotations: tool
                .annotations
                .as_ref()
                .map(|a| json_text(a, false, MAX_DESCRIPTION)),
            undeclared: hints(tool)
                .into_iter()
                .filter(|h| !h.declared)
                .map(|h| h.key)
                .collect(),
            class: tool.class.as_str().into(),
            class_basis: class_basis(tool),
            calls: calls_by_tool
                .get(tool.name.as_str())
                .cloned()
                .unwrap_or_default(),
            cells: check_ids
                .iter()
                .map(|id| {
                    report.check(*id, &tool.name).map(|c| CellView {
                        verdict: c.verdict.as_str().into(),
                        anchor: check_anchor(id.as_str(), &tool.name),
                    })
                })
                .collect(),
        })
        .collect();
    // The n-th session transcript holds the frames of the calls of session n.
    let sessions: Vec<usize> = report
        .transcripts
        .iter()
        .enumerate()
        .filter(|(_, t)| t.role == "session")
        .map(|(p, _)| p)
        .collect();
    let calls = report
        .calls
        .iter()
        .map(|c| call_view(report, c, &sessions))
        .collect();
    let check_groups = check_ids
        .iter()
        .map(|id| {
            let group: Vec<&CheckResult> = report
                .lane(id.lane())
                .iter()
                .filter(|c| c.id == *id)
                .collect();
            CheckGroup {
                lane: id.lane().as_str().into(),
                id: id.as_str().into(),
                anchor: anchor_part(id.as_str()),
                holds_when: id.holds_when().into(),
                counts: verdict_counts(&VerdictTally::of(group.iter().map(|c| c.verdict))),
                checks: group.into_iter().map(check_view).collect(),
            }
        })
        .collect();
    let findings = report
        .findings
        .iter()
        .map(|f| FindingView {
            kind: f.kind.as_str().into(),
            detail: clip_raw(&f.detail, MAX_VALUE),
            call: f.call.map(|c| (c, call_anchor(c))),
        })
        .collect();
    let transcripts = report
        .transcripts
        .iter()
        .enumerate()
        .map(|(p, t)| TranscriptView {
            role: t.role.clone(),
            anchor: format!("process-{p}"),
            exit: t.exit.clone(),
            frames: t
                .frames
                .iter()
                .take(MAX_FRAMES)
                .map(|f| FrameView {
                    seq: f.seq,
                    anchor: frame_anchor(p, f.seq),
                    dir: if f.dir == "out" {
                        "→ server"
                    } else {
                        "← server"
                    }
                    .into(),
                    bytes: f.bytes,
                    text: clip_raw(&f.text, MAX_FRAME),
                    truncated: f.truncated,
                    clipped: f.text.chars().count() > MAX_FRAME,
                })
                .collect(),
            total_frames: t.frames.len(),
            dropped_frames: t.dropped_frames,
            stderr_bytes: t.stderr_bytes,
            stderr: clip_raw(&t.stderr, MAX_STDERR),
        })
        .collect();
    let mut volatile = Vec::new();
    if let Some(jail) = &report.volatile.jail {
        volatile.push(("jail".to_string(), jail.clone()));
    }
    if let Some(ms) = report.volatile.elapsed_ms {
        volatile.push(("elapsed".to_string(), format!("{ms} ms")));
    }
    let clock = report
        .volatile
        .clock
        .iter()
        .map(|c| ClockView {
            kind: clip_raw(&c.kind, MAX_VALUE),
            token: clip_raw(&c.token, MAX_VALUE),
            count: c.count,
            at: c
                .at
                .iter()
                .take(MAX_CLOCK_PLACES)
                .map(|at| clip_raw(at, MAX_VALUE))
                .collect(),
            more: c.at.len().saturating_sub(MAX_CLOCK_PLACES),
        })
        .collect();
    let outcome = outcome(report);
    let command = report.target.command.join(" ");
    View {
        title: report
            .target
            .label
            .clone()
            .unwrap_or_else(|| clip_raw(&command, 80)),
        schema: report.schema.clone(),
        generator: report.generator.clone(),
        links: LinksView {
            raw_json: links.raw_json.clone(),
            index: links.index.clone(),
            index_label: "evaluation page".into(),
        },
        outcome,
        target: TargetView {
            command: clip_raw(&command, MAX_VALUE),
            env: report.target.env.clone(),
            label: report.target.label.clone(),
            pinned_version: report.target.pinned_version.clone(),
            server_json: report
                .target
                .server_json
                .as_ref()
                .map(crate::text::entry_text),
        },
        era: EraView {
            requested: report.era.requested.as_str().to_owned(),
            era: report.era.era.clone(),
            protocol_version: report.era.protocol_version.clone(),
            discover: report.era.discover.clone(),
            server_info: report
                .era
                .server_info
                .as_ref()
                .map(|v| json_text(v, false, MAX_VALUE)),
            instructions_present: report.era.instructions_present,
        },
        isolation: report.isolation.clone(),
        stores: report.stores.clone(),
        probe: report.probe.clone(),
        catalog: report.catalog.clone(),
        summary: report.summary.clone(),
        coverage: crate::coverage::view(report),
        store_values: report.planner.origin != "file",
        scope: scope(report, &check_ids),
        check_ids: check_ids
            .iter()
            .map(|id| {
                (
                    id.as_str().to_owned(),
                    anchor_part(id.as_str()),
                    id.lane().as_str().to_owned(),
                )
            })
            .collect(),
        tools,
        calls,
        startup_effects: effects(&report.startup_effects),
        shutdown_effects: effects(&report.shutdown_effects),
        network_outside_calls: report.network_outside_calls.clone(),
        baseline_probes: report.baseline_probes.iter().map(probe).collect(),
        check_groups,
        metadata: report.metadata.iter().map(metadata_view).collect(),
        findings,
        transcripts,
        volatile,
        clock,
    }
}

/// What the isolation means for what the audit could see: writes outside
/// the jail and the network are either out of the server's reach (and so
/// neither caused nor observed) or within it (and then invisible here).
fn isolation_limits(isolation: &IsolationEntry) -> Vec<String> {
    let held = |layer: IsolationLayer| isolation.layers.iter().any(|l| l.layer == layer && l.held);
    let writes_confined = isolation
        .layers
        .iter()
        .any(|l| l.held && l.layer.confines_writes());
    let network_cut = held(IsolationLayer::NetworkNamespace)
        || isolation.level == IsolationLevel::NetworkNamespace;
    let mut out = Vec::new();
    if writes_confined {
        out.push("Writes outside the jail were refused by the sandbox (the host read-only, or Landlock): a tool could not change anything beyond the jail, so nothing there went unobserved.".to_owned());
        if held(IsolationLayer::MountNamespace) {
            out.push("A write to a store's original was reported, not lost as a refusal: a decoy stood in each original's place, and what landed there is an original-store-write-attempt finding (a read-only tool fails EFF-01). Any other write the sandbox refused is not reported.".to_owned());
        } else {
            out.push("A write the sandbox refused was not reported: without bubblewrap's mount namespace no decoy stood in for the stores' originals, so a tool that tried to write one and was refused passes EFF-01 all the same.".to_owned());
        }
    } else {
        out.push(format!(
            "Writes outside the jail were not prevented ({}): a tool that wrote an absolute path elsewhere changed it unobserved, and passes EFF-01 all the same.",
            isolation.detail
        ));
    }
    let observer = isolation.network_observer.as_ref();
    if network_cut && observer.is_some_and(|o| o.observed) {
        out.push("The server ran without a network: every outbound attempt landed on the network observer's sink inside its namespace, which recorded it (destination, host name, first bytes by digest) and relayed nothing. Not seen: raw sockets and other protocols than TCP and UDP, traffic through a descriptor opened before the sandbox, and sends after a call's window (charged to no call, or to the next).".into());
    } else if network_cut {
        let why = observer.map_or("no network observer", |o| o.detail.as_str());
        out.push(format!("The server ran without a network (an empty network namespace): effects it would have had on remote services could not happen here, so they were neither caused nor observed; what it reached for was not recorded ({why}), and EFF-04 is untestable."));
    } else {
        out.push(format!(
            "The server was not network-isolated ({}): anything it reached over the network is invisible to the store observers.",
            isolation.detail
        ));
    }
    out
}

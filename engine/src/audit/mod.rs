//! The audit loop: jail, session, plan, and for every call
//! snapshot → call → settle → snapshot → delta.
//!
//! The next call's pre-snapshot is compared with this call's post-snapshot:
//! whatever changed in between is a late effect, recorded on this call as
//! unattributed and charged to nobody. Tools declared idempotent are called a
//! second time with identical arguments.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::ControlFlow;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use witness_observers::{Observer, Snapshot, diff};
use witness_probes::{ObservedObject, Probe, StorePath};

use witness_model::audit::*;
use witness_model::plan::PlanPreview;
use witness_wire::clock::{Clock, MonotonicClock, StepClock};
use witness_wire::http::Endpoint;
pub use witness_wire::session::EraChoice;
use witness_wire::session::{CallOutcome, Session};

use crate::checks;
use crate::jail::{Jail, JailSpec, JailedStore, StoreKind};
use crate::plan::harvest::Pool;
use crate::plan::{ArgSpec, Plan, PlanStep, resolve};
use crate::redact::Redactor;

/// An out-of-band event an experiment applies between two calls. It gets the
/// jailed stores and returns a description for the ledger.
pub type Event = Box<dyn FnMut(&[JailedStore]) -> Result<String, String>>;

/// Everything an audit needs to know before it starts.
pub struct AuditOptions {
    pub jail: JailSpec,
    pub era: EraChoice,
    pub plan: Option<Plan>,
    pub timeout: Duration,
    pub settle: Duration,
    /// Injected clock and no wall-clock values: reruns write identical JSON.
    pub deterministic: bool,
    pub probe: Box<dyn Probe>,
    pub label: Option<String>,
    pub pinned_version: Option<String>,
    /// Events to apply after a plan step's call (and its repeat), by step.
    pub events: BTreeMap<u32, Vec<Event>>,
    /// Let the planner call destructive and unknown tools even when the jail
    /// has no network isolation.
    pub include_destructive: bool,
}

/// The audit, plus the kept jail's path when `--keep-jail` was given.
pub struct AuditRun {
    pub report: AuditReport,
    pub kept_jail: Option<std::path::PathBuf>,
}

struct Observed {
    name: String,
    observer: Box<dyn Observer>,
    last: Snapshot,
    /// Warnings already reported (a malformed line is seen by every snapshot
    /// until it is fixed; it is reported once).
    warned: BTreeSet<String>,
    /// Warnings not yet reported.
    fresh: Vec<String>,
}

/// Runs one audit to the end. Never panics on anything the server does; every
/// failure ends in a report with `complete: false`.
pub fn run(options: AuditOptions) -> Result<AuditRun, crate::jail::JailError> {
    run_on(options, None)
}

/// Audits a server that is already running behind a Streamable HTTP endpoint.
/// Nothing is launched or jailed: `options.jail.command` is ignored, and the
/// stores in `options.jail.stores` are observed in place (read-only, never
/// copied) while the server writes them. The report's isolation says so.
pub fn run_remote(
    options: AuditOptions,
    endpoint: Endpoint,
) -> Result<AuditRun, crate::jail::JailError> {
    run_on(options, Some(endpoint))
}

fn run_on(
    mut options: AuditOptions,
    remote: Option<Endpoint>,
) -> Result<AuditRun, crate::jail::JailError> {
    let started = Instant::now();
    let mut jail = match &remote {
        None => Jail::create(options.jail.clone())?,
        Some(_) => Jail::in_place(options.jail.clone())?,
    };
    let clock: Arc<dyn Clock> = if options.deterministic {
        Arc::new(StepClock::default())
    } else {
        Arc::new(MonotonicClock::start())
    };
    let mut builder = ReportBuilder::new(&options, &jail);
    if remote.is_some() {
        builder.report.target.command = Vec::new();
        builder.report.target.transport = Some("http".into());
    }
    let mut observed: Vec<Observed> = jail
        .stores
        .iter()
        .map(|s| Observed {
            name: s.spec.name.clone(),
            observer: observer_for(s),
            last: Snapshot::default(),
            warned: BTreeSet::new(),
            fresh: Vec::new(),
        })
        .collect();
    // The rest of the jail (HOME, TMPDIR, the working directory) is watched
    // too: a change there is an effect outside every declared store (EFF-05).
    let mut jail_observer = witness_observers::fs::FsObserver::new(jail.root());
    for excluded in &builder.report.jail_scope.excluded {
        jail_observer = jail_observer.exclude(excluded);
    }
    observed.push(Observed {
        name: JAIL_STORE.to_owned(),
        observer: Box::new(jail_observer),
        last: Snapshot::default(),
        warned: BTreeSet::new(),
        fresh: Vec::new(),
    });

    // The pristine copies, before the server ever runs.
    if let Err(reason) = snapshot_all(&mut observed, &mut Vec::new()) {
        builder.incomplete(format!("cannot observe the stores: {reason}"));
        return Ok(builder.finish(jail, None, Vec::new(), started, &options));
    }

    let launch_clock = clock.clone();
    let opened = {
        let timeout = options.timeout;
        let mut launch = || match &remote {
            None => jail.launch(launch_clock.clone()),
            Some(endpoint) => Ok(crate::jail::connect(
                endpoint,
                launch_clock.clone(),
                timeout,
            )),
        };
        Session::open(&mut launch, options.era, options.timeout)
    };
    builder.isolation(jail.isolation());
    let (mut session, handshake) = match opened {
        Ok(pair) => pair,
        Err((error, discarded)) => {
            builder.incomplete(format!("no session: {error}"));
            return Ok(builder.finish(jail, None, discarded, started, &options));
        }
    };
    builder.handshake(&handshake);

    let mut startup = Vec::new();
    if let Err(reason) = snapshot_all(&mut observed, &mut startup) {
        builder.incomplete(format!("cannot observe the stores: {reason}"));
        let discarded = std::mem::take(&mut session.discarded);
        return Ok(builder.finish(jail, Some(session), discarded, started, &options));
    }
    builder.report.startup_effects = startup;
    // Objects present before any call: probed once, so a later revocation can
    // be judged against what was authority to begin with.
    let baseline: Vec<Effect> = observed
        .iter()
        .flat_map(|o| {
            o.last.objects.iter().map(|(id, state)| Effect {
                store: o.name.clone(),
                object: id.clone(),
                op: "present".into(),
                overwrite: None,
                before: None,
                after: Some(state.digest.clone()),
            })
        })
        .collect();
    builder.report.baseline_probes = probe_effects(options.probe.as_ref(), &jail.stores, &baseline);

    let catalog = match session.list_tools() {
        Ok(catalog) => catalog,
        Err(e) => {
            builder.incomplete(format!("tools/list failed: {e}"));
            let discarded = std::mem::take(&mut session.discarded);
            return Ok(builder.finish(jail, Some(session), discarded, started, &options));
        }
    };
    builder.catalog(&catalog);
    if !catalog.complete {
        let problem = catalog.problem.clone().unwrap_or_default();
        builder.incomplete(format!("the catalog is incomplete: {problem}"));
        let discarded = std::mem::take(&mut session.discarded);
        return Ok(builder.finish(jail, Some(session), discarded, started, &options));
    }

    let (plan, skipped) = match options.plan.take() {
        Some(plan) => (plan, Vec::new()),
        None => planned(
            &builder.report.tools,
            jail.isolation(),
            options.include_destructive,
        ),
    };
    builder.report.planner = PlannerEntry {
        origin: plan.origin.to_owned(),
        harvest_calls: Vec::new(),
        include_destructive: options.include_destructive,
        skipped,
    };
    let unknown = plan.unknown_tools(&builder.report.tools);
    if !unknown.is_empty() {
        builder.incomplete(format!(
            "the plan names tools the server does not list: {}",
            unknown.join(", ")
        ));
        let discarded = std::mem::take(&mut session.discarded);
        return Ok(builder.finish(jail, Some(session), discarded, started, &options));
    }
    // `{NAME}` and `{jail}` in a plan's literal strings are jailed paths.
    let plan = Plan {
        steps: plan
            .steps
            .into_iter()
            .map(|mut step| {
                for (_, spec) in step.args.iter_mut() {
                    if let ArgSpec::Literal(value) = spec {
                        *value = expand_strings(value, &|t| jail.expand(t));
                    }
                }
                step
            })
            .collect(),
        ..plan
    };

    let mut run = Runner {
        session: &mut session,
        observed: &mut observed,
        builder: &mut builder,
        results: BTreeMap::new(),
        pool: Pool::default(),
        next_id: 1,
        steps_done: 0,
        settle: options.settle,
        probe: options.probe.as_ref(),
        stores: &jail.stores,
        events: &mut options.events,
    };
    'audit: {
        // The harvest pass: read-only tools, each once every required argument
        // can be filled without inventing anything, until none can.
        let mut pending: Vec<PlanStep> = plan.steps[..plan.harvest].to_vec();
        let mut harvested_tools: Vec<String> = Vec::new();
        while let Some(i) = pending
            .iter()
            .position(|step| crate::plan::satisfiable(step, &run.pool))
        {
            let step = pending.remove(i);
            if run.harvest(&step).is_break() {
                break 'audit;
            }
            harvested_tools.push(step.tool);
        }

        let mut steps: Vec<PlanStep> = plan.steps[plan.harvest..].to_vec();
        let mut retry_at = plan.retry_at.map(|r| r.saturating_sub(plan.harvest));
        let mut index = 0usize;
        let mut retries_end = 0usize;
        while index < steps.len() || retry_at.is_some() {
            if retry_at == Some(index) {
                // One more chance for tools that failed on invented arguments,
                // now that the harvest may hold real ones.
                retry_at = None;
                if failed_on_invention(&run.builder.report.calls) {
                    // Harvest again first: the writes since the first pass
                    // may have made the real values those tools need. Only
                    // the sources are asked again (the listing tools that
                    // need no harvested value themselves).
                    for step in &plan.steps[..plan.harvest] {
                        let source = step.args.iter().all(|(_, spec)| {
                            matches!(spec, ArgSpec::Pinned(_) | ArgSpec::Literal(_))
                        });
                        if !source || !harvested_tools.contains(&step.tool) {
                            continue;
                        }
                        if run.harvest(step).is_break() {
                            break 'audit;
                        }
                    }
                }
                let again = retries(
                    &run.builder.report.calls,
                    &plan.steps,
                    &run.results,
                    &run.pool,
                );
                retries_end = index + again.len();
                steps.splice(index..index, again);
                continue;
            }
            let step = steps[index].clone();
            index += 1;
            let retried = index <= retries_end;
            if !retried && harvested_tools.contains(&step.tool) {
                // Already called in the harvest pass.
                continue;
            }
            if run.execute(&step).is_break() {
                break 'audit;
            }
        }
    }
    drop(run);

    // Whatever arrived after the last call's post-snapshot.
    let mut late = Vec::new();
    if snapshot_all(&mut observed, &mut late).is_ok()
        && let Some(last) = builder.report.calls.last_mut()
    {
        last.late_effects.extend(late);
    }
    let last_call = builder.report.calls.last().map(|c| c.id);
    builder.observer_warnings(&mut observed, last_call);
    session.server.shutdown();
    let mut shutdown = Vec::new();
    if snapshot_all(&mut observed, &mut shutdown).is_ok() {
        builder.report.shutdown_effects = shutdown;
    }
    builder.observer_warnings(&mut observed, None);
    let discarded = std::mem::take(&mut session.discarded);
    Ok(builder.finish(jail, Some(session), discarded, started, &options))
}

/// Starts the server in a jail, lists its tools and returns the planner's
/// plan without calling any tool. `Err` with a reason when no catalog could
/// be had.
pub fn preview(
    jail_spec: JailSpec,
    era: EraChoice,
    timeout: Duration,
    include_destructive: bool,
) -> Result<PlanPreview, String> {
    let command = jail_spec.command.clone();
    let mut jail = Jail::create(jail_spec).map_err(|e| e.to_string())?;
    let clock: Arc<dyn Clock> = Arc::new(MonotonicClock::start());
    let opened = {
        let mut launch = || jail.launch(clock.clone());
        Session::open(&mut launch, era, timeout)
    };
    let (mut session, _) = opened.map_err(|(e, _)| format!("no session: {e}"))?;
    let catalog = session
        .list_tools()
        .map_err(|e| format!("tools/list failed: {e}"))?;
    session.server.shutdown();
    if !catalog.complete {
        return Err(format!(
            "the catalog is incomplete: {}",
            catalog.problem.unwrap_or_default()
        ));
    }
    let tools: Vec<ToolEntry> = catalog.tools.iter().map(tool_entry).collect();
    let isolation = jail.isolation().cloned();
    let (plan, skipped) = planned(&tools, isolation.as_ref(), include_destructive);
    Ok(crate::plan::preview::preview(
        command,
        isolation.map_or_else(|| "none".to_owned(), |i| i.level),
        include_destructive,
        &tools,
        &plan,
        skipped,
    ))
}

/// The planner's plan for this server, and the tools it leaves out: outside a
/// network-isolated jail, tools declared destructive and tools that declare
/// nothing are not called unless `--include-destructive` says so.
pub fn planned(
    tools: &[ToolEntry],
    isolation: Option<&crate::jail::Isolation>,
    include_destructive: bool,
) -> (Plan, Vec<SkippedTool>) {
    let plan = Plan::synthesized(tools);
    let isolated = isolation.is_some_and(|i| i.level == "network-namespace");
    if isolated || include_destructive {
        return (plan, Vec::new());
    }
    let mut skipped = Vec::new();
    for tool in tools {
        let what = match tool.class {
            ToolClass::Destructive => "declared destructive",
            ToolClass::Unknown => "declares no annotations (unknown: it may destroy)",
            ToolClass::ReadOnly | ToolClass::Additive => continue,
        };
        skipped.push(SkippedTool {
            tool: tool.name.clone(),
            reason: format!(
                "{what}, and the jail has no network isolation; --include-destructive calls it anyway"
            ),
        });
    }
    let names: Vec<&str> = skipped.iter().map(|s| s.tool.as_str()).collect();
    (plan.without(&names), skipped)
}

/// Applies `expand` to every string inside `value`.
fn expand_strings(value: &Value, expand: &dyn Fn(&str) -> String) -> Value {
    match value {
        Value::String(s) => Value::String(expand(s)),
        Value::Array(items) => {
            Value::Array(items.iter().map(|v| expand_strings(v, expand)).collect())
        }
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), expand_strings(v, expand)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The state of the call loop.
struct Runner<'a> {
    session: &'a mut Session,
    observed: &'a mut Vec<Observed>,
    builder: &'a mut ReportBuilder,
    /// Results by plan step (what `call N` in a plan refers to).
    results: BTreeMap<u32, Value>,
    pool: Pool,
    next_id: u32,
    /// Plan steps carried out so far; the next one is `call steps_done + 1`.
    steps_done: u32,
    settle: Duration,
    probe: &'a dyn Probe,
    stores: &'a [JailedStore],
    events: &'a mut BTreeMap<u32, Vec<Event>>,
}

impl Runner<'_> {
    /// Carries out a harvest-pass step and records its calls as harvest calls.
    fn harvest(&mut self, step: &PlanStep) -> ControlFlow<()> {
        let first = self.next_id;
        self.execute(step)?;
        self.builder
            .report
            .planner
            .harvest_calls
            .extend(first..self.next_id);
        ControlFlow::Continue(())
    }

    /// Carries out one plan step: the call, its identical repeat when the
    /// tool is declared idempotent, and the experiment's events after it.
    /// Breaks when the audit cannot go on.
    fn execute(&mut self, step: &PlanStep) -> ControlFlow<()> {
        self.steps_done += 1;
        let step_no = self.steps_done;
        let declared_idempotent = self
            .builder
            .report
            .tool(&step.tool)
            .is_some_and(|t| t.hints.idempotent == Some(true));
        let (arguments, record_args) = match resolve(step, &self.results, &self.pool) {
            Ok(resolved) => resolved,
            Err(reason) => {
                self.builder.report.calls.push(CallRecord {
                    id: self.next_id,
                    step: step_no,
                    tool: step.tool.clone(),
                    repeat_of: None,
                    arguments: Vec::new(),
                    outcome: Outcome {
                        status: CallStatus::NotSent,
                        code: None,
                        detail: Some(reason),
                    },
                    response: None,
                    frames: None,
                    effects: Vec::new(),
                    late_effects: Vec::new(),
                    probes: Vec::new(),
                    events_after: Vec::new(),
                    event_effects: Vec::new(),
                });
                self.next_id += 1;
                return ControlFlow::Continue(());
            }
        };
        let rounds = if declared_idempotent { 2 } else { 1 };
        let mut first_id = None;
        for round in 0..rounds {
            // Late effects: what changed since the previous post-snapshot.
            let mut late = Vec::new();
            if let Err(reason) = snapshot_all(self.observed, &mut late) {
                self.builder
                    .incomplete(format!("cannot observe the stores: {reason}"));
                return ControlFlow::Break(());
            }
            let previous = self.builder.report.calls.last().map(|c| c.id);
            self.builder.observer_warnings(self.observed, previous);
            if let Some(previous) = self.builder.report.calls.last_mut() {
                previous.late_effects.extend(late);
            } else {
                self.builder.report.startup_effects.extend(late);
            }
            let frame_start = next_frame(self.session);
            let outcome = self.session.call_tool(&step.tool, &arguments);
            std::thread::sleep(self.settle);
            self.session.server.rpc.drain();
            let frame_end = next_frame(self.session).saturating_sub(1);
            let mut effects = Vec::new();
            let observed_ok = snapshot_all(self.observed, &mut effects);
            let (status, code, detail, response) = match &outcome {
                CallOutcome::Result(result) => {
                    let is_error = result.get("isError").and_then(Value::as_bool) == Some(true);
                    let status = if is_error {
                        CallStatus::ToolError
                    } else {
                        CallStatus::Ok
                    };
                    (status, None, None, Some(result.clone()))
                }
                CallOutcome::RpcError { code, message } => (
                    CallStatus::RpcError,
                    Some(*code),
                    Some(witness_text::clip(message, 300)),
                    None,
                ),
                CallOutcome::Transport(detail) => {
                    (CallStatus::TransportError, None, Some(detail.clone()), None)
                }
            };
            if round == 0
                && let Some(result) = &response
            {
                self.results.insert(step_no, result.clone());
                if status == CallStatus::Ok {
                    self.pool.absorb(&step.tool, step_no, result);
                }
            }
            let probes = probe_effects(self.probe, self.stores, &effects);
            let id = self.next_id;
            self.next_id += 1;
            let record = CallRecord {
                id,
                step: step_no,
                tool: step.tool.clone(),
                repeat_of: if round == 0 { None } else { first_id },
                arguments: record_args.clone(),
                outcome: Outcome {
                    status,
                    code,
                    detail,
                },
                response,
                frames: (frame_end >= frame_start).then_some([frame_start, frame_end]),
                effects,
                late_effects: Vec::new(),
                probes,
                events_after: Vec::new(),
                event_effects: Vec::new(),
            };
            if matches!(status, CallStatus::ToolError | CallStatus::RpcError)
                && record.used_harvested()
            {
                self.builder.report.findings.push(Finding {
                    kind: "harvested-value-rejected".into(),
                    detail: format!(
                        "call {id} ({}) failed on {}: the value exists by the server's own account, so the failure is evidence, not noise",
                        step.tool,
                        harvested_origins(&record)
                    ),
                    call: Some(id),
                });
            }
            self.builder.report.calls.push(record);
            self.builder.observer_warnings(self.observed, Some(id));
            first_id.get_or_insert(id);
            if let Err(reason) = observed_ok {
                self.builder
                    .incomplete(format!("cannot observe the stores: {reason}"));
                return ControlFlow::Break(());
            }
            if status == CallStatus::TransportError {
                self.builder.incomplete(format!(
                    "the transport failed during call {id} ({}); later calls were not made",
                    step.tool
                ));
                return ControlFlow::Break(());
            }
            if status != CallStatus::Ok {
                // A failed call is not repeated: there is no effect to compare.
                break;
            }
        }
        if let Some(events) = self.events.get_mut(&step_no) {
            for event in events.iter_mut() {
                let described = match event(self.stores) {
                    Ok(text) => text,
                    Err(e) => {
                        self.builder.incomplete(format!(
                            "out-of-band event after call {step_no} failed: {e}"
                        ));
                        return ControlFlow::Break(());
                    }
                };
                if let Some(last) = self.builder.report.calls.last_mut() {
                    last.events_after.push(described);
                }
            }
            // The event's changes are the experiment's, not the server's:
            // recorded beside the call, charged to nobody.
            let mut changed = Vec::new();
            if let Err(reason) = snapshot_all(self.observed, &mut changed) {
                self.builder
                    .incomplete(format!("cannot observe the stores: {reason}"));
                return ControlFlow::Break(());
            }
            if let Some(last) = self.builder.report.calls.last_mut() {
                last.event_effects = changed;
            }
        }
        ControlFlow::Continue(())
    }
}

/// `harvested values (entityName from call 2 at structured.entities[0].name)`.
fn harvested_origins(call: &CallRecord) -> String {
    let mut origins = Vec::new();
    for arg in &call.arguments {
        if let Some(from) = &arg.from {
            origins.push(format!("{} from {} at {}", arg.name, from.call, from.path));
        }
        for part in &arg.parts {
            origins.push(format!(
                "{}{} from {} at {}",
                arg.name, part.at, part.from.call, part.from.path
            ));
        }
    }
    format!("harvested values ({})", origins.join("; "))
}

/// Whether some tool has been called and every call of it failed on
/// synthesized arguments.
fn failed_on_invention(calls: &[CallRecord]) -> bool {
    let tools: BTreeSet<&str> = calls.iter().map(|c| c.tool.as_str()).collect();
    tools.into_iter().any(|tool| {
        calls.iter().filter(|c| c.tool == tool).all(|c| {
            matches!(
                c.outcome.status,
                CallStatus::ToolError | CallStatus::RpcError
            ) && c.used_synthesized()
        })
    })
}

/// Steps to try again: tools none of whose calls succeeded, that failed on
/// synthesized arguments, and for which the harvest now offers other values.
fn retries(
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
        let failed_on_invention = !mine.is_empty()
            && mine.iter().all(|c| {
                matches!(
                    c.outcome.status,
                    CallStatus::ToolError | CallStatus::RpcError
                ) && c.used_synthesized()
            });
        if !failed_on_invention {
            continue;
        }
        let Ok((_, now)) = resolve(step, results, pool) else {
            continue;
        };
        if mine.iter().any(|c| c.arguments == now) {
            continue;
        }
        out.push(step.clone());
    }
    out
}

fn observer_for(store: &JailedStore) -> Box<dyn Observer> {
    match store.spec.kind {
        StoreKind::Sqlite => Box::new(
            witness_observers::sqlite::SqliteObserver::new(&store.path)
                .with_clock_columns(store.spec.clock_columns.clone()),
        ),
        StoreKind::Jsonl => Box::new(witness_observers::jsonl::JsonlObserver::new(&store.path)),
        StoreKind::Fs => Box::new(witness_observers::fs::FsObserver::new(&store.path)),
    }
}

/// Snapshots every store, appends the changes since the last snapshot, and
/// makes the new snapshots the reference.
fn snapshot_all(observed: &mut [Observed], changes: &mut Vec<Effect>) -> Result<(), String> {
    for o in observed.iter_mut() {
        let now = o
            .observer
            .snapshot()
            .map_err(|e| format!("{}: {e}", o.name))?;
        for change in diff(&o.last, &now).changes {
            changes.push(effect_of(&o.name, &change));
        }
        for warning in &now.warnings {
            if o.warned.insert(warning.clone()) {
                o.fresh.push(warning.clone());
            }
        }
        o.last = now;
    }
    Ok(())
}

/// One observed change as the ledger records it.
fn effect_of(store: &str, change: &witness_observers::Change) -> Effect {
    Effect {
        store: store.to_owned(),
        object: change.object.clone(),
        op: change.op.as_str().to_owned(),
        overwrite: change.overwrite,
        before: change.before.clone(),
        after: change.after.clone(),
    }
}

fn next_frame(session: &Session) -> u64 {
    session
        .server
        .rpc
        .transcript()
        .frames
        .last()
        .map_or(1, |f| f.seq + 1)
}

/// Exercises every object a call created, updated or deleted that the probe covers.
fn probe_effects(
    probe: &dyn Probe,
    stores: &[JailedStore],
    effects: &[Effect],
) -> Vec<ProbeRecord> {
    let mut out = Vec::new();
    for effect in effects {
        let object = ObservedObject {
            store: &effect.store,
            id: &effect.object,
        };
        if !probe.covers(&object) {
            continue;
        }
        let Some(store) = stores.iter().find(|s| s.spec.name == effect.store) else {
            continue;
        };
        let view = StorePath {
            kind: store.spec.kind.as_str(),
            path: &store.path,
        };
        let result = probe.exercise(&object, &view);
        out.push(ProbeRecord {
            store: effect.store.clone(),
            object: effect.object.clone(),
            status: result.status.as_str().to_owned(),
            basis: result.basis,
            credential_digest: result.credential_digest,
        });
    }
    out
}

/// Builds the report as the audit goes, and finishes it once.
struct ReportBuilder {
    report: AuditReport,
}

impl ReportBuilder {
    fn new(options: &AuditOptions, jail: &Jail) -> Self {
        let stores = jail
            .stores
            .iter()
            .map(|s| StoreEntry {
                name: s.spec.name.clone(),
                kind: s.spec.kind.as_str().to_owned(),
                path: s
                    .spec
                    .shown
                    .clone()
                    .unwrap_or_else(|| s.spec.source.to_string_lossy().into_owned()),
                existed: s.existed,
                observer: s.spec.kind.as_str().to_owned(),
                clock_columns: s.spec.clock_columns.iter().map(|c| c.to_string()).collect(),
            })
            .collect();
        let mut excluded: Vec<String> = jail
            .stores
            .iter()
            .map(|s| format!("stores/{}", s.spec.name))
            .collect();
        excluded.sort();
        let jail_scope = JailScope {
            observer: "fs".into(),
            watched: vec!["home".into(), "tmp".into(), "work".into(), "stores".into()],
            excluded,
        };
        let report = AuditReport {
            schema: AUDIT_SCHEMA.into(),
            generator: format!("mcp-witness {}", env!("CARGO_PKG_VERSION")),
            target: Target {
                command: options.jail.command.clone(),
                env: options.jail.env.iter().map(|(k, _)| k.clone()).collect(),
                label: options.label.clone(),
                pinned_version: options.pinned_version.clone(),
                transport: None,
            },
            era: EraEntry {
                requested: match options.era {
                    EraChoice::Auto => "auto",
                    EraChoice::Modern => "modern",
                    EraChoice::Legacy => "legacy",
                }
                .into(),
                era: None,
                protocol_version: None,
                discover: None,
                server_info: None,
                instructions_present: false,
            },
            isolation: IsolationEntry {
                level: "none".into(),
                detail: "the server was never started".into(),
            },
            stores,
            jail_scope,
            probe: options.probe.name().to_owned(),
            complete: true,
            incomplete_reason: None,
            catalog: CatalogEntry {
                complete: false,
                pages: 0,
                tools: 0,
                problem: None,
            },
            tools: Vec::new(),
            planner: PlannerEntry::default(),
            startup_effects: Vec::new(),
            baseline_probes: Vec::new(),
            calls: Vec::new(),
            shutdown_effects: Vec::new(),
            checks: Vec::new(),
            findings: Vec::new(),
            summary: Summary::default(),
            exit_code: 0,
            transcripts: Vec::new(),
            volatile: Volatile::default(),
        };
        Self { report }
    }

    /// Reports each observer warning once, as a finding, with the call it
    /// first appeared after (none: before any call, or at shutdown).
    fn observer_warnings(&mut self, observed: &mut [Observed], call: Option<u32>) {
        for o in observed.iter_mut() {
            for warning in o.fresh.drain(..) {
                self.report.findings.push(Finding {
                    kind: "observer-warning".into(),
                    detail: format!("store {}: {warning}", o.name),
                    call,
                });
            }
        }
    }

    fn incomplete(&mut self, reason: String) {
        if self.report.complete {
            self.report.complete = false;
            self.report.incomplete_reason = Some(reason);
        }
    }

    fn isolation(&mut self, isolation: Option<&crate::jail::Isolation>) {
        if let Some(i) = isolation {
            self.report.isolation = IsolationEntry {
                level: i.level.clone(),
                detail: i.detail.clone(),
            };
        }
    }

    fn handshake(&mut self, h: &witness_wire::session::Handshake) {
        self.report.era.era = Some(
            match h.era {
                witness_wire::session::Era::Modern => "modern",
                witness_wire::session::Era::Legacy => "legacy",
            }
            .into(),
        );
        self.report.era.protocol_version = Some(h.protocol_version.clone());
        self.report.era.discover = h.discover.clone();
        self.report.era.server_info = h.server_info.clone();
        self.report.era.instructions_present = h.instructions.is_some();
    }

    fn catalog(&mut self, catalog: &witness_wire::session::Catalog) {
        self.report.catalog = CatalogEntry {
            complete: catalog.complete,
            pages: catalog.pages,
            tools: catalog.tools.len(),
            problem: catalog.problem.clone(),
        };
        self.report.tools = catalog.tools.iter().map(tool_entry).collect();
    }

    fn finish(
        mut self,
        jail: Jail,
        session: Option<Session>,
        discarded: Vec<witness_wire::connection::Connection>,
        started: Instant,
        options: &AuditOptions,
    ) -> AuditRun {
        let mut processes: Vec<(&str, witness_wire::connection::Connection)> =
            discarded.into_iter().map(|p| ("discover", p)).collect();
        if let Some(session) = session {
            processes.push(("session", session.server));
        }
        for (_, process) in processes.iter_mut() {
            process.shutdown();
        }
        // Learn every secret first, then write everything through the redactor.
        let mut redactor = Redactor::default();
        // Read once: what is learned from is exactly what is written.
        let stderrs: Vec<_> = processes
            .iter()
            .map(|(_, p)| p.rpc.transport().stderr())
            .collect();
        for ((_, process), stderr) in processes.iter().zip(&stderrs) {
            for frame in &process.rpc.transcript().frames {
                redactor.learn_text(&frame.text);
            }
            // A server logs its configuration on stderr as often as anywhere.
            for line in String::from_utf8_lossy(&stderr.kept).lines() {
                redactor.learn_text(line);
            }
        }
        for call in &mut self.report.calls {
            if let Some(response) = &call.response {
                redactor.learn(response);
            }
            // Error messages reach the report through the outcome's detail.
            if let Some(detail) = &call.outcome.detail {
                redactor.learn_text(detail);
            }
        }
        for call in &mut self.report.calls {
            call.response = call.response.as_ref().map(|r| redactor.value(r));
            for arg in &mut call.arguments {
                arg.value = redactor.value(&arg.value);
            }
            if let Some(detail) = &call.outcome.detail {
                call.outcome.detail = Some(redactor.text(detail));
            }
        }
        for ((role, process), stderr) in processes.iter_mut().zip(stderrs) {
            let exit = process.exited().map(|s| s.to_string());
            let transcript = process.rpc.transcript();
            for finding in &transcript.findings {
                self.report.findings.push(Finding {
                    kind: finding.kind.clone(),
                    detail: match finding.frame {
                        Some(seq) => format!("{} ({} process, frame {seq})", finding.detail, role),
                        None => format!("{} ({} process)", finding.detail, role),
                    },
                    call: None,
                });
            }
            self.report.transcripts.push(ProcessTranscript {
                role: (*role).to_owned(),
                exit,
                frames: transcript
                    .frames
                    .iter()
                    .map(|f| FrameEntry {
                        seq: f.seq,
                        dir: match f.dir {
                            witness_wire::transcript::Direction::Out => "out",
                            witness_wire::transcript::Direction::In => "in",
                        }
                        .into(),
                        t_us: f.t_us,
                        text: redactor.text(&f.text),
                        bytes: f.bytes,
                        truncated: f.truncated,
                    })
                    .collect(),
                dropped_frames: transcript.dropped_frames,
                stderr_bytes: stderr.total,
                stderr: redactor.text(&String::from_utf8_lossy(&stderr.kept)),
            });
        }
        // Findings may quote what a server said (a catalog problem, an error).
        for finding in &mut self.report.findings {
            finding.detail = redactor.text(&finding.detail);
        }
        for call in &self.report.calls {
            if !call.late_effects.is_empty() {
                self.report.findings.push(Finding {
                    kind: "late-effect".into(),
                    detail: format!(
                        "{} change(s) appeared after call {} had settled; they are charged to no call",
                        call.late_effects.len(),
                        call.id
                    ),
                    call: Some(call.id),
                });
            }
        }
        let probe_active = options.probe.name() != "null";
        self.report.checks = checks::evaluate(
            &self.report.tools,
            &self.report.calls,
            &self.report.baseline_probes,
            probe_active,
            &self.report.planner.skipped,
        );
        let mut summary = Summary {
            calls: self.report.calls.len(),
            ..Summary::default()
        };
        for check in &self.report.checks {
            match check.verdict {
                Verdict::Pass => summary.pass += 1,
                Verdict::Fail => summary.fail += 1,
                Verdict::Skip => summary.skip += 1,
                Verdict::Untestable => summary.untestable += 1,
            }
        }
        for effect in self.report.calls.iter().flat_map(|c| &c.effects) {
            if effect.outside_stores() {
                summary.outside_stores += 1;
                continue;
            }
            match effect.op.as_str() {
                "create" => summary.creates += 1,
                "update" => summary.updates += 1,
                _ => summary.deletes += 1,
            }
        }
        // An audit that could not finish exits 3 even when a check already
        // failed: exit 1 promises a completed audit. The failing verdicts stay
        // in the report as evidence.
        self.report.exit_code = if !self.report.complete {
            3
        } else if summary.fail > 0 {
            1
        } else {
            0
        };
        self.report.summary = summary;
        if !options.deterministic {
            self.report.volatile = Volatile {
                jail: jail
                    .kept()
                    .then(|| jail.root().to_string_lossy().into_owned()),
                elapsed_ms: Some(u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)),
                clock: Vec::new(),
            };
        }
        let kept_jail = jail.kept().then(|| jail.root().to_path_buf());
        let report = unjail(self.report, jail.root());
        drop(processes);
        drop(jail);
        AuditRun { report, kept_jail }
    }
}

/// Writes the jail's path as `{jail}` everywhere in the report (responses,
/// arguments, frames, stderr, findings): it is a different temporary
/// directory on every run, and a reader needs to know only that a path was
/// inside the jail. `volatile.jail` keeps the real path of a kept jail.
fn unjail(report: AuditReport, root: &std::path::Path) -> AuditReport {
    let mut roots = vec![root.to_string_lossy().into_owned()];
    if let Ok(real) = root.canonicalize() {
        let real = real.to_string_lossy().into_owned();
        if !roots.contains(&real) {
            // Longest first, so a resolved /private/tmp/... is not half-replaced.
            roots.push(real);
            roots.sort_by_key(|r| std::cmp::Reverse(r.len()));
        }
    }
    let volatile = report.volatile.clone();
    let Ok(value) = serde_json::to_value(&report) else {
        return report;
    };
    let replaced = expand_strings(&value, &|text| {
        let mut out = text.to_owned();
        for root in &roots {
            if out.contains(root.as_str()) {
                out = out.replace(root.as_str(), "{jail}");
            }
        }
        out
    });
    match serde_json::from_value::<AuditReport>(replaced) {
        Ok(mut clean) => {
            clean.volatile = volatile;
            clean
        }
        Err(_) => report,
    }
}

fn tool_entry(raw: &Value) -> ToolEntry {
    let text = |key: &str| raw.get(key).and_then(Value::as_str).map(str::to_owned);
    let annotations = raw.get("annotations").cloned();
    let hints = Hints::from_annotations(annotations.as_ref());
    ToolEntry {
        name: text("name").unwrap_or_default(),
        title: text("title").or_else(|| {
            raw.pointer("/annotations/title")
                .and_then(Value::as_str)
                .map(str::to_owned)
        }),
        description: text("description"),
        class: hints.class(),
        hints,
        annotations,
        input_schema: raw.get("inputSchema").cloned(),
        has_output_schema: raw.get("outputSchema").is_some(),
    }
}

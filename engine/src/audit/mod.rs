//! The audit: a server's declared effects held to what it does to its stores.
//!
//! ```text
//! options ─▶ prepare ─▶ execute ─▶ assemble ─▶ AuditRun
//!            jail        session     transcripts
//!            observers   catalog     redact
//!            skeleton    plan        evaluate (checks, tally, exit code)
//!            pristine    calls       unjail
//! ```
//!
//! - `prepare`: the jail (copies of the stores, or the stores in place for
//!   a remote server), an observer for every store and one for the rest of
//!   the jail, the report's skeleton, and the pristine snapshots;
//! - `execute`: the session (era detection, handshake), the catalog, the
//!   plan (a plan file or the planner's), then for every call
//!   snapshot → `tools/call` → settle → snapshot → delta, an identical
//!   repeat for tools declared idempotent, an experiment's events, and the
//!   late effects between calls; shutdown last;
//! - `observe`: what execute snapshots and probes with, and how it tells
//!   a call's own effects from late ones (charged to nobody); its
//!   [`ObservedSet`] is public, for agent runs that drive a jailed server
//!   themselves;
//! - `assemble`: transcripts, redaction, the checks and the exit code, and
//!   the jail's path written as `{jail}`.
//!
//! Every stage writes into one `Draft`; whatever stops the audit
//! early is recorded there as the reason it is incomplete, and the audit
//! still ends in a report. Nothing a server does makes it panic.

mod assemble;
mod draft;
mod execute;
mod observe;
mod prepare;

#[cfg(test)]
mod fakes;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use witness_probes::Probe;

use witness_model::audit::*;
use witness_model::plan::PlanPreview;
use witness_wire::clock::{Clock, MonotonicClock, StepClock};
use witness_wire::http::Endpoint;
pub use witness_wire::session::EraChoice;
use witness_wire::session::Session;

use crate::jail::{Jail, JailSpec, JailedStore};
use crate::plan::Plan;
use execute::tool_entry;
pub use observe::{ObserveError, ObservedSet, store_dirs};

/// An out-of-band event an experiment applies between two calls. It gets the
/// jailed stores and returns a description for the ledger.
pub type Event = Box<dyn FnMut(&[JailedStore]) -> Result<String, String>>;

/// Everything an audit needs to know before it starts.
pub struct AuditOptions {
    pub jail: JailSpec,
    pub era: EraChoice,
    pub plan: Option<Plan>,
    pub timeout: Duration,
    /// The longest wait after a call before its post-call snapshot.
    pub settle: Duration,
    /// How a settle decides a store is quiet, and each observation's budget.
    pub observe: ObserveOptions,
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
    /// Start the server afresh (same jail, stores as left) before every
    /// call after the first, for servers that misbehave in a long session.
    pub session_per_call: bool,
    /// `--min-coverage`: the percentage of listed tools that must be
    /// exercised for the audit to conclude.
    pub min_coverage: Option<u8>,
}

/// How the stores are observed: the quiet window that ends a settle early,
/// and what one observation may cost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ObserveOptions {
    /// A settle ends once every store has seen no write for this long after
    /// the response (as file-system events tell), or at `settle`, whichever
    /// comes first.
    pub quiet: Duration,
    pub budget: witness_observers::Budget,
}

impl ObserveOptions {
    /// The default quiet window: long enough for a server's own follow-up
    /// write (a Node server finishing an `fs.writeFile` it did not await
    /// lands within a millisecond or two), short enough that a call on an
    /// idle store costs a few milliseconds.
    pub const QUIET: Duration = Duration::from_millis(5);
}

impl Default for ObserveOptions {
    fn default() -> Self {
        Self {
            quiet: Self::QUIET,
            budget: witness_observers::Budget::DEFAULT,
        }
    }
}

/// The audit, plus the kept jail's path when `--keep-jail` was given.
pub struct AuditRun {
    pub report: AuditReport,
    pub kept_jail: Option<std::path::PathBuf>,
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

/// The stages in order. `Err` only when no jail could be made; after that,
/// every way an audit can end is a report.
fn run_on(
    mut options: AuditOptions,
    remote: Option<Endpoint>,
) -> Result<AuditRun, crate::jail::JailError> {
    let started = Instant::now();
    let prepare::Prepared {
        mut jail,
        mut observed,
        mut draft,
    } = prepare::prepare(&options, remote.is_some())?;
    let clock: Arc<dyn Clock> = if options.deterministic {
        Arc::new(StepClock::default())
    } else {
        Arc::new(MonotonicClock::start())
    };
    let timeout = options.timeout;
    let mut connect = |jail: &mut Jail| match &remote {
        None => jail.launch(clock.clone()),
        Some(endpoint) => Ok(crate::jail::connect(endpoint, clock.clone(), timeout)),
    };
    let processes = if draft.is_complete() {
        let stage = execute::Stage {
            jail: &mut jail,
            observed: &mut observed,
            draft: &mut draft,
            options: &mut options,
        };
        stage.execute(&mut connect)
    } else {
        // The stores could not be observed: no server is started.
        assemble::Processes::discarded(Vec::new())
    };
    if let Some(signal) = crate::interrupt::signal() {
        draft.interrupted(signal);
    }
    Ok(assemble::assemble(
        draft, processes, jail, started, &options,
    ))
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
    preview_on(jail_spec, None, era, timeout, include_destructive)
}

/// The plan for a server already running behind a Streamable HTTP endpoint.
/// Nothing is launched or jailed, so the plan's isolation is `none` and
/// destructive and unknown tools are left out unless `include_destructive`.
pub fn preview_remote(
    endpoint: Endpoint,
    era: EraChoice,
    timeout: Duration,
    include_destructive: bool,
) -> Result<PlanPreview, String> {
    let nothing = JailSpec {
        command: Vec::new(),
        stores: Vec::new(),
        env: Vec::new(),
        keep: false,
        isolate_network: false,
    };
    preview_on(nothing, Some(endpoint), era, timeout, include_destructive)
}

fn preview_on(
    jail_spec: JailSpec,
    remote: Option<Endpoint>,
    era: EraChoice,
    timeout: Duration,
    include_destructive: bool,
) -> Result<PlanPreview, String> {
    let command = jail_spec.command.clone();
    let mut jail = match &remote {
        None => Jail::create(jail_spec),
        Some(_) => Jail::in_place(jail_spec),
    }
    .map_err(|e| e.to_string())?;
    let clock: Arc<dyn Clock> = Arc::new(MonotonicClock::start());
    let opened = {
        let mut launch = || match &remote {
            None => jail.launch(clock.clone()).map_err(|e| e.to_string()),
            Some(endpoint) => Ok(crate::jail::connect(endpoint, clock.clone(), timeout)),
        };
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
    let mut preview = crate::plan::preview::preview(
        command,
        isolation.map_or(IsolationLevel::None, |i| i.level),
        include_destructive,
        &tools,
        &plan,
        skipped,
    );
    if remote.is_some() {
        preview.transport = Some("http".into());
    }
    Ok(preview)
}

/// The planner's plan for this server, and the tools it leaves out: unless
/// the sandbox contained the server (writes outside the jail and the
/// network out of its reach), tools declared destructive and tools that
/// declare nothing are not called unless `--include-destructive` says so.
pub fn planned(
    tools: &[ToolEntry],
    isolation: Option<&crate::jail::Isolation>,
    include_destructive: bool,
) -> (Plan, Vec<SkippedTool>) {
    let plan = Plan::synthesized(tools);
    let isolated = isolation.is_some_and(|i| i.level.contains_effects());
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
                "{what}, and the sandbox did not contain the server; --include-destructive calls it anyway"
            ),
        });
    }
    let names: Vec<&str> = skipped.iter().map(|s| s.tool.as_str()).collect();
    (plan.without(&names), skipped)
}

/// Applies `expand` to every string inside `value` (plan literals get
/// jailed paths; the report loses them).
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jail::{StoreKind, StoreSpec};

    #[test]
    fn stores_that_cannot_be_observed_end_the_audit_before_any_server_is_reached() {
        let Ok(dir) = tempfile::tempdir() else {
            panic!("no temporary directory");
        };
        let garbage = dir.path().join("not-a.db");
        assert!(std::fs::write(&garbage, b"this is not a SQLite database, not at all").is_ok());
        let mut options = fakes::options();
        options.jail.stores = vec![StoreSpec {
            name: "db".into(),
            kind: StoreKind::Sqlite,
            source: garbage,
            shown: None,
            clock_columns: Vec::new(),
        }];
        // Nothing listens there, and nothing may try: the audit stops first.
        let Ok(endpoint) = Endpoint::parse("http://127.0.0.1:9/mcp", false) else {
            panic!("a loopback endpoint parses");
        };
        let Ok(run) = run_remote(options, endpoint) else {
            panic!("an in-place jail is always made");
        };
        let report = run.report;
        assert!(!report.complete);
        assert!(
            report
                .incomplete_reason
                .as_deref()
                .is_some_and(|r| r.starts_with("cannot observe the stores: db: ")),
            "{:?}",
            report.incomplete_reason
        );
        assert_eq!(report.isolation.detail, "the server was never started");
        assert!(report.transcripts.is_empty());
        assert_eq!(report.exit_code, 3);
        assert_eq!(report.target.transport.as_deref(), Some("http"));
        assert_eq!(report.volatile, Volatile::default(), "deterministic");
    }
}

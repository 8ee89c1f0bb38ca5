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
//! - [`options`](AuditOptions): what an audit is told, with its one set of
//!   defaults ([`AuditOptions::new`]) and the bounds every caller checks
//!   against ([`SETTLE_MS`], [`MAX_SETTLE_MS`], ...);
//! - `prepare`: the target opened (a jail with copies of the stores, or the
//!   stores in place for a remote server), an observer for every store and
//!   one for the rest of the jail, the report's skeleton, and the pristine
//!   snapshots;
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
//!   the jail's path written as `{jail}`;
//! - [`stable`]: what a caller that keeps the audit adds to make its bytes
//!   the same on every run and machine (paths as placeholders, server
//!   clock values as `{clock}`).
//!
//! Every stage writes into one `Draft`; whatever stops the audit
//! early is recorded there as the reason it is incomplete, and the audit
//! still ends in a report. Nothing a server does makes it panic.

mod assemble;
mod draft;
mod execute;
mod options;
mod prepare;
pub mod stable;

#[cfg(test)]
mod fakes;

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use witness_model::audit::*;
use witness_model::plan::PlanPreview;
use witness_wire::clock::{Clock, MonotonicClock, StepClock};
pub use witness_wire::session::EraChoice;
use witness_wire::session::Session;

use crate::plan::Plan;
pub(crate) use assemble::effect_lane;
use execute::tool_entry;
pub use options::*;
pub use witness_jail::observe::{ObserveError, ObserveOptions, ObservedSet, store_paths};
use witness_jail::{JailedStore, OpenTarget, Target};

/// An out-of-band event an experiment applies between two calls. It gets the
/// jailed stores and returns a description for the ledger.
pub type Event = Box<dyn FnMut(&[JailedStore]) -> Result<String, String>>;

/// The audit, plus the kept jail's path when `--keep-jail` was given.
pub struct AuditRun {
    pub report: AuditReport,
    pub kept_jail: Option<std::path::PathBuf>,
}

/// Runs one audit to the end. Never panics on anything the server does; every
/// failure ends in a report with `complete: false`. A remote server is not
/// launched or jailed: its stores are observed in place (read-only, never
/// copied) while it writes them, and the report's isolation says so.
///
/// `Err` only when no jail could be made; after that, every way an audit
/// can end is a report.
pub fn run(mut options: AuditOptions) -> Result<AuditRun, witness_jail::JailError> {
    let started = Instant::now();
    let prepare::Prepared {
        mut target,
        mut observed,
        mut draft,
    } = prepare::prepare(&options)?;
    let clock: Arc<dyn Clock> = if options.deterministic {
        Arc::new(StepClock::default())
    } else {
        Arc::new(MonotonicClock::start())
    };
    let mut connect = |target: &mut OpenTarget| target.connect(clock.clone());
    let processes = if draft.is_complete() {
        let stage = execute::Stage {
            target: &mut target,
            observed: &mut observed,
            draft: &mut draft,
            options: &mut options,
        };
        stage.execute(&mut connect)
    } else {
        // The stores could not be observed: no server is started.
        assemble::Processes::discarded(Vec::new())
    };
    if let Some(signal) = witness_jail::interrupt::signal() {
        draft.interrupted(signal);
    }
    Ok(assemble::assemble(
        draft,
        processes,
        target.into_jail(),
        started,
        &options,
    ))
}

/// Reaches the server as an audit would (launched in a jail, or connected
/// to), lists its tools and returns the planner's plan without calling any
/// tool. A remote server's plan has isolation `none`, so destructive and
/// unknown tools are left out unless `include_destructive`. `Err` with a
/// reason when no catalog could be had.
pub fn preview(
    target: &Target,
    era: EraChoice,
    timeout: Duration,
    include_destructive: bool,
) -> Result<PlanPreview, String> {
    // A remote server's stores are not read to plan: nothing to view.
    let target = match target.is_remote() {
        true => target.without_stores(),
        false => target.clone(),
    };
    let mut opened = target.open(timeout).map_err(|e| e.to_string())?;
    let clock: Arc<dyn Clock> = Arc::new(MonotonicClock::start());
    let session = {
        let mut launch = || opened.connect(clock.clone()).map_err(|e| e.to_string());
        Session::open(&mut launch, era, timeout)
    };
    let (mut session, _) = session.map_err(|(e, _)| format!("no session: {e}"))?;
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
    let isolation = opened.isolation().cloned();
    let (plan, skipped) = planned(&tools, isolation.as_ref(), include_destructive);
    let mut preview = crate::plan::preview::preview(
        target.command().to_vec(),
        isolation.map_or(IsolationLevel::None, |i| i.level),
        include_destructive,
        &tools,
        &plan,
        skipped,
    );
    if target.is_remote() {
        preview.transport = Some(target.transport().into());
    }
    Ok(preview)
}

/// The planner's plan for this server, and the tools it leaves out: unless
/// the sandbox contained the server (writes outside the jail and the
/// network out of its reach), tools declared destructive and tools that
/// declare nothing are not called unless `--include-destructive` says so.
pub fn planned(
    tools: &[ToolEntry],
    isolation: Option<&witness_jail::Isolation>,
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
    use witness_jail::{StoreKind, StoreSpec};

    #[test]
    fn stores_that_cannot_be_observed_end_the_audit_before_any_server_is_reached() {
        let Ok(dir) = tempfile::tempdir() else {
            panic!("no temporary directory");
        };
        let garbage = dir.path().join("not-a.db");
        assert!(std::fs::write(&garbage, b"this is not a SQLite database, not at all").is_ok());
        let stores = vec![StoreSpec {
            name: "db".into(),
            kind: StoreKind::Sqlite,
            source: garbage,
            shown: None,
            clock_columns: Vec::new(),
        }];
        // Nothing listens there, and nothing may try: the audit stops first.
        let Ok(run) = run(fakes::remote(stores)) else {
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

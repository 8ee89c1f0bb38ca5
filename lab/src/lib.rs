//! The lab: the E1–E3 experiments on the built-in testbed, E2 and E3 on
//! PostgreSQL through a published SQL server ([`postgres`]), the case
//! studies, and the coverage experiment on published servers.
//!
//! Each experiment runs real audits of the testbed (one fresh jail and server
//! per execution), scores them, and writes a versioned JSON document plus the
//! audits it rests on. Runs are deterministic: injected clocks, fixed ids,
//! labelled temporary paths, so a rerun writes the same bytes. How far it
//! is goes to the caller's [`Progress`]; the lab writes to no terminal.

pub mod cases;
pub mod coverage;
pub mod detectors;
pub mod e1;
pub mod e2;
pub mod e3;
pub mod field;
pub mod postgres;
pub mod progress;
pub mod wild;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use serde::Serialize;

use witness_engine::audit::{self, AuditOptions, Event};
use witness_engine::plan::Plan;
use witness_jail::{JailSpec, StoreKind, StoreSpec, Target};
use witness_model::audit::AuditReport;

pub use progress::Progress;

/// What the lab needs to know to run one testbed audit.
pub struct TestbedRun<'a> {
    pub variant: &'a str,
    pub plan: &'a str,
    pub plan_name: &'a str,
    pub probe: witness_testbed::probe::CredentialProbe,
    pub events: BTreeMap<u32, Vec<Event>>,
    pub progress: &'a Progress,
}

/// Audits the testbed serving `variant` on a freshly seeded store.
pub fn audit_testbed(run: TestbedRun<'_>) -> Result<AuditReport> {
    let seed_dir = witness_process::scratch::tempdir("mcp-witness-testbed-")
        .context("cannot create a temporary directory")?;
    let seed = seed_dir.path().join("testbed.db");
    witness_testbed::store::seed_fixtures(&seed).context("cannot seed the testbed store")?;
    let plan = Plan::parse(run.plan)
        .map_err(|e| anyhow::anyhow!("built-in plan {} is invalid: {e}", run.plan_name))?;
    let options = AuditOptions {
        plan: Some(plan),
        timeout: Duration::from_secs(20),
        settle: Duration::from_millis(5),
        deterministic: true,
        probe: Box::new(run.probe),
        label: Some(format!("testbed/{}", run.variant)),
        pinned_version: Some(format!("mcp-witness-testbed {}", env!("CARGO_PKG_VERSION"))),
        events: run.events,
        progress: run.progress.audit(),
        ..AuditOptions::new(Target::launched(JailSpec {
            command: [
                "mcp-witness",
                "testbed",
                "serve",
                "--variant",
                run.variant,
                "--store",
                "{db}",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect(),
            stores: vec![StoreSpec {
                name: "db".into(),
                kind: StoreKind::Sqlite,
                source: seed,
                shown: Some("testbed seed (mcp-witness testbed seed)".into()),
                // The testbed takes its time from the injected clock.
                clock_columns: Vec::new(),
            }],
            env: Vec::new(),
            keep: false,
            isolate_network: true,
        }))
    };
    let outcome = audit::run(options).context("the audit could not start")?;
    let report = outcome.report;
    if !report.complete {
        anyhow::bail!(
            "the audit of testbed variant {} did not complete: {}",
            run.variant,
            report
                .incomplete_reason
                .as_deref()
                .unwrap_or("unknown reason")
        );
    }
    Ok(report)
}

/// The request timeout of every audit of a published server.
pub const PUBLISHED_TIMEOUT: Duration = Duration::from_secs(20);

/// The settle window of every audit of a published server.
pub const PUBLISHED_SETTLE: Duration = Duration::from_millis(100);

/// How the lab audits a published server: in a network-isolated jail with
/// every tool allowed (the store is a copy), a 20 s request timeout and a
/// 100 ms settle, an injected clock, and no probe (nothing there is the
/// testbed's authority). The case studies and the coverage experiment share
/// it, so their numbers come from one instrument setting.
pub struct PublishedRun<'a> {
    pub command: Vec<String>,
    pub stores: Vec<StoreSpec>,
    pub env: &'a [(&'a str, &'a str)],
    /// A plan file's calls, or `None` for the planner's.
    pub plan: Option<Plan>,
    pub label: String,
    pub version: &'a str,
}

impl PublishedRun<'_> {
    pub fn options(self) -> AuditOptions {
        AuditOptions {
            plan: self.plan,
            timeout: PUBLISHED_TIMEOUT,
            settle: PUBLISHED_SETTLE,
            deterministic: true,
            label: Some(self.label),
            pinned_version: Some(self.version.to_owned()),
            include_destructive: true,
            ..AuditOptions::new(Target::launched(JailSpec {
                command: self.command,
                stores: self.stores,
                env: self
                    .env
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                    .collect(),
                keep: false,
                isolate_network: true,
            }))
        }
    }
}

/// Writes `value` as pretty JSON with a trailing newline, creating the
/// parent directory: the one way every lab document reaches the disk.
pub fn write_json_file(path: &Path, value: &impl Serialize) -> std::io::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let text = serde_json::to_string_pretty(value).map_err(std::io::Error::other)? + "\n";
    std::fs::write(path, text)
}

/// [`write_json_file`], with the path in the error.
pub fn write_json(path: &Path, value: &impl Serialize) -> Result<()> {
    write_json_file(path, value).with_context(|| format!("cannot write {}", path.display()))
}

/// `DIR/audits/<name>.json`, and the relative path recorded in documents.
pub fn audit_path(out: &Path, name: &str) -> (PathBuf, String) {
    let relative = format!("audits/{name}.json");
    (out.join(&relative), relative)
}

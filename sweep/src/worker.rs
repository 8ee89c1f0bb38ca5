//! The worker: one target's audit, in a process of its own.
//!
//! The sweep writes a [`Job`] and starts `mcp-witness sweep worker JOB`,
//! which runs the audit through the engine's public API
//! (`witness_engine::audit::run`) and writes the audit document. A process
//! of its own is what lets the sweep bound an audit's time (it kills the
//! worker), survive anything an audit does, and run `--jobs` at once.
//!
//! The written audit is byte-stable, by the case studies' rules: the
//! install directory is written `{install}`, the sweep file's directory
//! `{sweep}`, the worker's scratch `{scratch}`, the jail `{jail}` (by the
//! engine), and the server clock values the target declares `{clock}`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use witness_engine::audit::{self, AuditOptions};
use witness_engine::plan::Plan;
use witness_jail::{JailSpec, StoreKind, StoreSpec};
use witness_model::audit::AuditReport;
use witness_model::sweep::{StoreDefinition, TargetDefinition};
use witness_observers::sqlite::ClockColumn;

use crate::spec::{Target, clock_kind};

/// Everything a worker needs, written by the sweep as JSON.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Job {
    pub definition: TargetDefinition,
    pub plan: Option<String>,
    /// The package's install directory (`{install}`).
    pub install: Option<PathBuf>,
    /// The sweep file's directory (`{sweep}`).
    pub sweep_dir: PathBuf,
    pub fixtures: Vec<Option<PathBuf>>,
    /// An empty directory of the worker's own (`{scratch}`).
    pub scratch: PathBuf,
    /// Where the audit document goes.
    pub audit_out: PathBuf,
}

impl Job {
    pub fn new(
        target: &Target,
        install: Option<PathBuf>,
        sweep_dir: &Path,
        scratch: PathBuf,
        audit_out: PathBuf,
    ) -> Self {
        Self {
            definition: target.definition.clone(),
            plan: target.plan.clone(),
            install,
            sweep_dir: sweep_dir.to_path_buf(),
            fixtures: target.fixtures.clone(),
            scratch,
            audit_out,
        }
    }
}

/// Why a worker could not write an audit.
#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    #[error("cannot read the job {path}: {message}")]
    Job { path: PathBuf, message: String },
    #[error("{0}")]
    Setup(String),
    #[error("cannot make the jail: {0}")]
    Jail(#[from] witness_jail::JailError),
    #[error("cannot write the audit: {0}")]
    Write(std::io::Error),
}

/// Reads the job at `path`, audits, writes the audit. Everything a server
/// does ends in the audit document; `Err` only when there is none.
pub fn run_job(path: &Path) -> Result<(), WorkerError> {
    let job_error = |message: String| WorkerError::Job {
        path: path.to_path_buf(),
        message,
    };
    let text = std::fs::read_to_string(path).map_err(|e| job_error(e.to_string()))?;
    let job: Job = serde_json::from_str(&text).map_err(|e| job_error(e.to_string()))?;
    let options = options(&job)?;
    let run = audit::run(options)?;
    let document = stable(&job, run.report)?;
    crate::layout::write_json(&job.audit_out, &document).map_err(WorkerError::Write)
}

/// The audit options a target's definition stands for.
fn options(job: &Job) -> Result<AuditOptions, WorkerError> {
    let definition = &job.definition;
    let install = |text: &String| match &job.install {
        Some(dir) => text.replace("{install}", &dir.to_string_lossy()),
        None => text.clone(),
    };
    let stores = definition
        .stores
        .iter()
        .zip(job.fixtures.iter().chain(std::iter::repeat(&None)))
        .map(|(store, fixture)| store_spec(store, fixture.as_deref(), &job.scratch))
        .collect::<Result<Vec<_>, _>>()?;
    let plan = match &job.plan {
        Some(text) => {
            Some(Plan::parse(text).map_err(|e| WorkerError::Setup(format!("the plan: {e}")))?)
        }
        None => None,
    };
    let label = match &definition.package {
        Some(package) => format!("sweep target {}: {}", definition.name, package.coordinate()),
        None => format!("sweep target {}", definition.name),
    };
    let settings = &definition.audit;
    Ok(AuditOptions {
        era: settings.era,
        plan,
        timeout: Duration::from_millis(settings.timeout_ms),
        settle: Duration::from_millis(settings.settle_ms),
        deterministic: true,
        label: Some(label),
        pinned_version: definition.package.as_ref().map(|p| p.version.clone()),
        include_destructive: settings.include_destructive,
        // One session per target, as the case studies run them; and no
        // coverage floor: a sweep measures coverage (it is in every row)
        // rather than failing a target on it.
        ..AuditOptions::new(witness_jail::Target::launched(JailSpec {
            command: definition.command.iter().map(install).collect(),
            stores,
            env: definition
                .env
                .iter()
                .map(|(k, v)| (k.clone(), install(v)))
                .collect(),
            keep: false,
            isolate_network: settings.isolate_network,
        }))
    })
}

/// A store as the jail takes it: the fixture, or a path under the scratch
/// directory that does not exist (the store starts empty, with its name).
fn store_spec(
    store: &StoreDefinition,
    fixture: Option<&Path>,
    scratch: &Path,
) -> Result<StoreSpec, WorkerError> {
    let kind = StoreKind::parse(&store.kind)
        .ok_or_else(|| WorkerError::Setup(format!("store {}: kind {}", store.name, store.kind)))?;
    let clock_columns = store
        .clock_columns
        .iter()
        .map(|c| {
            ClockColumn::parse(c).ok_or_else(|| {
                WorkerError::Setup(format!("clock column {c:?} is not table.column"))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let (source, shown) = match (fixture, &store.fixture) {
        (Some(path), Some(pinned)) => (path.to_path_buf(), format!("fixture {}", pinned.path)),
        _ => {
            let file = store.file.clone().unwrap_or_else(|| match kind {
                StoreKind::Sqlite => format!("{}.db", store.name),
                StoreKind::Jsonl => format!("{}.jsonl", store.name),
                StoreKind::Fs => "tree".into(),
                StoreKind::Git => "repo".into(),
                StoreKind::Postgres => format!("{}.sql", store.name),
            });
            let source = scratch.join("empty").join(&store.name).join(file);
            // A PostgreSQL store is restored from a file that must exist:
            // an empty script gives an empty database.
            if kind == StoreKind::Postgres && !source.exists() {
                let write = |r: std::io::Result<()>| {
                    r.map_err(|e| WorkerError::Setup(format!("store {}: {e}", store.name)))
                };
                if let Some(parent) = source.parent() {
                    write(std::fs::create_dir_all(parent))?;
                }
                write(std::fs::write(&source, ""))?;
            }
            (source, "empty (no fixture)".to_owned())
        }
    };
    Ok(StoreSpec {
        name: store.name.clone(),
        kind,
        source,
        shown: Some(shown),
        clock_columns,
    })
}

/// The report with machine- and run-specific text written as placeholders.
fn stable(job: &Job, report: AuditReport) -> Result<AuditReport, WorkerError> {
    let mut pairs: Vec<(String, &str)> = vec![
        (job.sweep_dir.to_string_lossy().into_owned(), "{sweep}"),
        (job.scratch.to_string_lossy().into_owned(), "{scratch}"),
    ];
    if let Some(install) = &job.install {
        pairs.push((install.to_string_lossy().into_owned(), "{install}"));
    }
    // The longest first: one of these directories may hold another.
    pairs.sort_by_key(|(path, _)| std::cmp::Reverse(path.len()));
    let pairs: Vec<(&str, &str)> = pairs.iter().map(|(p, t)| (p.as_str(), *t)).collect();
    let kinds = job
        .definition
        .clock_text
        .iter()
        .map(|k| clock_kind(k).map_err(WorkerError::Setup))
        .collect::<Result<Vec<_>, _>>()?;
    audit::stable::stable(&report, &pairs, &kinds)
        .map_err(|e| WorkerError::Setup(format!("the report: {e}")))
}

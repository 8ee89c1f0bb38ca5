//! E2 and E3 on PostgreSQL: the persistence/authority distinction and
//! residual authority shown on a real authorization system, driven through
//! a published SQL server we did not build.
//!
//! Every statement of the corpus and of the lifecycle set-up is run by
//! `@bytebase/dbhub@1.4.0`'s `execute_sql` (pinned in
//! `experiments/cases/package.json`, installed by
//! `experiments/cases/install.sh`), in the audit's throwaway cluster, with
//! the PostgreSQL probe. What the lab does itself (the out-of-band events)
//! it does as the cluster's superuser through this crate's own client,
//! between calls, never through the audited tool. The oracle is by
//! construction: each object's label and each scenario's truth sit beside
//! the plan (`experiments/e2-postgres/plan.toml`,
//! `experiments/e3-postgres/plan.toml`) and in [`e2::CORPUS`] and
//! [`e3::scenarios`].
//!
//! The documents (`e2-postgres.json`, `e3-postgres.json`) and the audits
//! behind them are byte-stable: the engine's deterministic mode, machine
//! paths as placeholders, and no password anywhere (the probe hands every
//! password it heard to the report's redactor; the documents carry
//! digests only).

pub mod e2;
pub mod e3;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;
use thiserror::Error;

use witness_engine::audit::stable::stable;
use witness_engine::audit::{self, Event};
use witness_engine::plan::{ArgSpec, Plan};
use witness_jail::{JailedStore, StoreKind, StoreSpec};
use witness_model::audit::AuditReport;
use witness_postgres::cluster::{self, DATABASE, OWNER, PORT};
use witness_postgres::protocol::Client;

use crate::Progress;
use crate::cases::{absolute_dir, cases_dir, install_command};

pub const PACKAGE: &str = "@bytebase/dbhub";
pub const VERSION: &str = "1.4.0";
const BIN: &str = "dbhub";
pub const TOOL: &str = "execute_sql";

/// Why the PostgreSQL experiments could not run.
#[derive(Debug, Error)]
pub enum PostgresLabError {
    #[error(
        "{PACKAGE}@{VERSION} is not installed in {dir}: {problem}.\n\
         Install it there (Node 20+ and npm needed) with:\n    {command}"
    )]
    NotInstalled {
        dir: PathBuf,
        command: String,
        problem: String,
    },
    #[error("the PostgreSQL experiments need the PostgreSQL server binaries: {0}")]
    NoPostgres(#[from] witness_postgres::ClusterError),
    #[error("{experiment}: {message}")]
    Run {
        experiment: &'static str,
        message: String,
    },
}

fn fail(experiment: &'static str) -> impl Fn(String) -> PostgresLabError {
    move |message| PostgresLabError::Run {
        experiment,
        message,
    }
}

/// Whether dbhub is installed in `dir` at the pinned version, and this
/// machine has PostgreSQL's server binaries.
pub fn check_installed(dir: &Path) -> Result<(), PostgresLabError> {
    let missing = |problem: String| PostgresLabError::NotInstalled {
        dir: dir.to_path_buf(),
        command: install_command(dir),
        problem,
    };
    let bin = dir.join("node_modules/.bin").join(BIN);
    if !bin.exists() {
        return Err(missing(format!("there is no {}", bin.display())));
    }
    let found = crate::cases::install::installed_package(dir, PACKAGE)
        .and_then(|p| p.get("version").and_then(Value::as_str).map(str::to_owned));
    if found.as_deref() != Some(VERSION) {
        return Err(missing(format!(
            "found {}",
            found.as_deref().unwrap_or("no installed version")
        )));
    }
    witness_postgres::cluster::Binaries::find()?;
    Ok(())
}

/// Whether the PostgreSQL experiments can run here (for `lab all`).
pub fn installed() -> bool {
    check_installed(&cases_dir()).is_ok()
}

/// Both documents.
pub struct Outcome {
    pub e2: witness_model::experiments::PostgresE2Document,
    pub e3: witness_model::experiments::PostgresE3Document,
}

/// Runs E2 and E3 on PostgreSQL with dbhub from `dir`, writing into `out`.
pub fn run_in(dir: &Path, out: &Path, progress: &Progress) -> Result<Outcome, PostgresLabError> {
    let dir = absolute_dir(dir);
    check_installed(&dir)?;
    let e2 = e2::run(&dir, out, progress)?;
    let e3 = e3::run(&dir, out, progress)?;
    Ok(Outcome { e2, e3 })
}

/// The `sql` of every step of a plan file, in order: what the probe the
/// lab runs itself between calls hears, as the audit's probe heard it.
pub(crate) fn statements(plan: &Plan) -> Vec<String> {
    plan.steps
        .iter()
        .filter_map(|step| {
            step.args.iter().find_map(|(name, spec)| match spec {
                ArgSpec::Literal(Value::String(sql)) if name == "sql" => Some(sql.clone()),
                _ => None,
            })
        })
        .collect()
}

/// A superuser session on the audit's cluster, for an out-of-band event:
/// the lab's own client, never the audited server.
pub(crate) fn superuser(stores: &[JailedStore]) -> Result<Client, String> {
    let store = stores.first().ok_or("no store")?;
    let socket_dir = cluster::socket_dir_of(&store.path);
    let password =
        cluster::password_for(&socket_dir).ok_or("the store is not a cluster this process made")?;
    Client::connect(&socket_dir, PORT, OWNER, DATABASE, Some(&password))
        .map_err(|e| format!("cannot reach the cluster as its superuser: {e}"))
}

/// One audit of dbhub's `execute_sql` on a fresh cluster restored from
/// `seed`, with the PostgreSQL probe and `events`; the report as written
/// (machine paths as placeholders).
pub(crate) fn audit_dbhub(
    dir: &Path,
    experiment: &'static str,
    seed: (&str, &str),
    plan: Plan,
    label: String,
    events: BTreeMap<u32, Vec<Event>>,
    progress: &Progress,
) -> Result<AuditReport, PostgresLabError> {
    let fail = fail(experiment);
    let scratch = witness_process::scratch::tempdir("mcp-witness-pg-")
        .map_err(|e| fail(format!("cannot make a seed directory: {e}")))?;
    let (seed_name, seed_text) = seed;
    let source = scratch.path().join("seed.sql");
    std::fs::write(&source, seed_text).map_err(|e| fail(format!("cannot write the seed: {e}")))?;
    let bin = dir.join("node_modules/.bin").join(BIN);
    let options = audit::AuditOptions {
        probe: Box::new(witness_postgres::PostgresProbe::new()),
        events,
        progress: progress.audit(),
        ..crate::PublishedRun {
            command: vec![
                "node".to_owned(),
                bin.to_string_lossy().into_owned(),
                "--transport".to_owned(),
                "stdio".to_owned(),
                "--dsn".to_owned(),
                "postgres://server@/store?sslmode=disable".to_owned(),
            ],
            stores: vec![StoreSpec {
                name: "db".into(),
                kind: StoreKind::Postgres,
                source,
                shown: Some(seed_name.to_owned()),
                clock_columns: Vec::new(),
            }],
            // dbhub's driver finds the cluster's socket by PGHOST.
            env: &[("PGHOST", "{jail}/stores/db/s")],
            plan: Some(plan),
            label,
            version: VERSION,
        }
        .options()
    };
    let run = audit::run(options).map_err(|e| fail(e.to_string()))?;
    let mut report = run.report;
    if !report.complete {
        return Err(fail(format!(
            "the audit did not complete: {}",
            report
                .incomplete_reason
                .as_deref()
                .unwrap_or("no reason given")
        )));
    }
    for store in &mut report.stores {
        store.path = seed_name.to_owned();
    }
    let dir_text = dir.to_string_lossy().into_owned();
    let scratch_text = scratch.path().to_string_lossy().into_owned();
    let report = stable(
        &report,
        &[(&dir_text, "{cases}"), (&scratch_text, "{seed}")],
        &[],
    )
    .map_err(|e| fail(e.to_string()))?;
    unsalted(&report).map_err(|e| fail(e.to_string()))
}

/// A role's observed state digests its password verifier, and PostgreSQL
/// salts a SCRAM verifier at random each time a password is set: the same
/// `CREATE ROLE … PASSWORD` gives another digest on every run. The written
/// audit holds `{salted-N}` in place of each such digest, numbered in order
/// of first appearance, so equal states stay equal (a role's `after` is its
/// `before` later) and a rerun writes the same bytes. Only the digests of
/// `catalog/role:` states are replaced.
fn unsalted(report: &AuditReport) -> Result<AuditReport, serde_json::Error> {
    let mut digests: Vec<String> = Vec::new();
    let mut note = |effects: &[witness_model::audit::Effect]| {
        for effect in effects
            .iter()
            .filter(|e| e.object.starts_with("catalog/role:"))
        {
            for digest in [&effect.before, &effect.after].into_iter().flatten() {
                if !digests.contains(digest) {
                    digests.push(digest.clone());
                }
            }
        }
    };
    note(&report.startup_effects);
    for call in &report.calls {
        note(&call.effects);
        note(&call.event_effects);
        note(&call.late_effects);
    }
    note(&report.shutdown_effects);
    let placeholders: Vec<(String, String)> = digests
        .into_iter()
        .enumerate()
        .map(|(i, d)| (d, format!("{{salted-{}}}", i + 1)))
        .collect();
    let pairs: Vec<(&str, &str)> = placeholders
        .iter()
        .map(|(d, p)| (d.as_str(), p.as_str()))
        .collect();
    let mut value = serde_json::to_value(report)?;
    witness_engine::audit::stable::replace_strings(&mut value, &pairs);
    serde_json::from_value(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plans_parse_and_every_statement_is_heard() {
        let e2 = Plan::parse(e2::PLAN).map_err(|e| e.to_string());
        let e3 = Plan::parse(e3::PLAN).map_err(|e| e.to_string());
        let (Ok(e2), Ok(e3)) = (e2, e3) else {
            panic!("a plan does not parse");
        };
        let e2 = statements(&e2);
        assert_eq!(e2.len(), 9);
        assert!(e2[0].starts_with("CREATE ROLE alice LOGIN PASSWORD"));
        assert_eq!(statements(&e3).len(), 4);
    }

    #[test]
    fn the_oracle_beside_each_plan_is_the_one_the_lab_scores_with() {
        // Each object of the corpus, and each scenario with its role and
        // truth, is in its plan's header table: the two cannot drift apart.
        for (object, authority, _) in e2::CORPUS {
            let row = e2::PLAN
                .lines()
                .find(|l| l.starts_with(&format!("# | {object} ")))
                .unwrap_or_else(|| panic!("{object} is not in the plan's table"));
            let cells: Vec<&str> = row.split('|').map(str::trim).collect();
            assert_eq!(
                cells.get(4).map(|c| c.starts_with("yes")),
                Some(authority),
                "{row}"
            );
        }
        for scenario in e3::scenarios() {
            let row = e3::PLAN
                .lines()
                .find(|l| l.starts_with(&format!("# | {} ", scenario.name)))
                .unwrap_or_else(|| panic!("{} is not in the plan's table", scenario.name));
            let cells: Vec<&str> = row.split('|').map(str::trim).collect();
            assert_eq!(cells.get(3).copied(), Some(scenario.role), "{row}");
            let truth = if scenario.truth_effective {
                "effective"
            } else {
                "dead"
            };
            assert_eq!(
                cells.get(4).map(|c| c.starts_with(truth)),
                Some(true),
                "{row}"
            );
        }
    }
}

//! The runner: seeds each server's store, audits it with no plan, and
//! writes the audit and the experiment's document.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use witness_engine::audit;
use witness_engine::audit::stable::stable;
use witness_jail::StoreSpec;
use witness_model::audit::{AuditReport, CheckResult, Coverage, FindingKind, Verdict};
use witness_model::coverage::*;
use witness_model::exit::ExitStatus;
use witness_observers::sqlite::ClockColumn;

use super::install::{check_installed, command};
use super::table::{SERVERS, ServerSpec};
use super::{AUDIT_PREFIX, DOCUMENT, seed};
use crate::cases::CasesError;
use crate::progress::{Event, Progress};

/// The experiment's document and the exit status it adds up to.
#[derive(Clone, Debug)]
pub struct CoverageOutcome {
    pub document: CoverageDocument,
    /// Failed when a target is missed or a failing check is not explained
    /// as the server's real behaviour; else incomplete when an audit could
    /// not finish; else passed. An audit that concluded nothing (a server
    /// with no store to observe) is not a failure of the experiment.
    pub status: ExitStatus,
}

/// Audits every server installed in `dir`, writing into `out`.
pub fn run_coverage_in(
    dir: &Path,
    out: &Path,
    progress: &Progress,
) -> Result<CoverageOutcome, CasesError> {
    let dir = &crate::cases::absolute_dir(dir);
    check_installed(dir)?;
    let mut servers = Vec::new();
    let mut statuses = Vec::new();
    for server in SERVERS {
        progress.report(Event::Published {
            experiment: "coverage",
            name: server.name,
            package: server.package,
            version: server.version,
        });
        let (report, audit) = audit_server(dir, &server, progress)?;
        let relative = format!("audits/{AUDIT_PREFIX}{}.json", server.name);
        write(&out.join(&relative), &audit)?;
        let summary = summarize(&server, &report, relative);
        progress.report(Event::Coverage(&summary));
        statuses.push(if !summary.met || summary.false_failures > 0 {
            ExitStatus::Failed
        } else if !report.complete {
            ExitStatus::Incomplete
        } else {
            ExitStatus::Passed
        });
        servers.push(summary);
    }
    let document = CoverageDocument {
        schema: COVERAGE_SCHEMA.into(),
        generator: witness_model::GENERATOR.into(),
        method: CoverageMethod {
            plan: "none".into(),
            timeout_ms: u64::try_from(crate::PUBLISHED_TIMEOUT.as_millis()).unwrap_or(u64::MAX),
            settle_ms: u64::try_from(crate::PUBLISHED_SETTLE.as_millis()).unwrap_or(u64::MAX),
            include_destructive: true,
        },
        servers,
    };
    write(&out.join(DOCUMENT), &document)?;
    Ok(CoverageOutcome {
        document,
        status: ExitStatus::across(statuses),
    })
}

fn write(path: &Path, value: &impl serde::Serialize) -> Result<(), CasesError> {
    crate::write_json_file(path, value).map_err(|source| CasesError::Write {
        path: path.to_path_buf(),
        source,
    })
}

/// Audits one server on a fresh store. Gives the report and the audit as
/// written (machine paths and the server's clock replaced by tokens).
fn audit_server(
    dir: &Path,
    server: &ServerSpec,
    progress: &Progress,
) -> Result<(AuditReport, Value), CasesError> {
    let fail = |message: String| CasesError::Case {
        case: format!("coverage {}", server.name),
        message,
    };
    let seed_dir = witness_process::scratch::tempdir("mcp-witness-coverage-")
        .map_err(|e| fail(format!("cannot make a seed directory: {e}")))?;
    let stores = match server.seed {
        Some((name, seed)) => vec![StoreSpec {
            name: name.to_owned(),
            kind: seed.kind(),
            source: seed::make(seed, seed_dir.path()).map_err(fail)?,
            shown: Some(seed.describe().to_owned()),
            clock_columns: server
                .clock_columns
                .iter()
                .filter_map(|c| ClockColumn::parse(c))
                .collect(),
        }],
        None => Vec::new(),
    };
    let options = crate::PublishedRun {
        command: command(dir, server),
        stores,
        env: server.env,
        plan: None,
        label: format!(
            "coverage {}: {}@{}",
            server.name, server.package, server.version
        ),
        version: server.version,
    }
    .options();
    let options = audit::AuditOptions {
        progress: progress.audit(),
        ..options
    };
    let run = audit::run(options).map_err(|e| fail(e.to_string()))?;
    let dir_text = dir.to_string_lossy().into_owned();
    let seed_text = seed_dir.path().to_string_lossy().into_owned();
    // The jail passes the host's PATH through; a server that echoes its
    // environment (server-everything's get-env) would write this machine's
    // into the committed audit.
    let path_text = std::env::var("PATH").unwrap_or_default();
    let report = stable(
        &run.report,
        &[
            (&dir_text, "{cases}"),
            (&seed_text, "{seed}"),
            (&path_text, "{PATH}"),
        ],
        server.clock_text,
    )
    .map_err(|e| fail(e.to_string()))?;
    let value = serde_json::to_value(&report).map_err(|e| fail(e.to_string()))?;
    Ok((report, value))
}

/// One server's numbers, read from its audit.
pub fn summarize(server: &ServerSpec, report: &AuditReport, audit: String) -> ServerCoverage {
    let coverage = report
        .coverage
        .clone()
        .unwrap_or_else(|| Coverage::of(report, None));
    let failures: Vec<CoverageFailure> = report
        .checks
        .iter()
        .filter(|c| c.verdict == Verdict::Fail)
        .map(|c| CoverageFailure {
            check: c.id.as_str().to_owned(),
            tool: c.tool.clone(),
            reason: c.reason.clone(),
            real: explained(server, c),
        })
        .collect();
    let values: BTreeMap<String, usize> = coverage
        .kinds()
        .into_iter()
        .map(|(kind, n)| (kind.as_str().to_owned(), n))
        .collect();
    let target_exercised = server.target.exercised(coverage.tools);
    ServerCoverage {
        name: server.name.into(),
        package: server.package.into(),
        version: server.version.into(),
        installer: server.installer.name().into(),
        store: server
            .seed
            .map_or(
                "none: the server keeps no state an observer can read",
                |(_, s)| s.describe(),
            )
            .into(),
        store_kind: server.seed.map(|(_, s)| s.kind().as_str().to_owned()),
        tools: coverage.tools,
        exercised: coverage.exercised,
        percent: coverage.percent(),
        target: server.target.describe(coverage.tools),
        target_exercised,
        met: coverage.exercised >= target_exercised,
        on_real_values: coverage.on_real_values,
        values,
        not_exercised: coverage
            .by_tool
            .iter()
            .filter(|t| t.call.is_none())
            .cloned()
            .collect(),
        false_failures: failures.iter().filter(|f| f.real.is_none()).count(),
        failures,
        value_rejections: report
            .findings
            .iter()
            .filter(|f| {
                matches!(
                    f.kind,
                    FindingKind::HarvestedValueRejected | FindingKind::StoreValueRejected
                )
            })
            .count(),
        calls: report.calls.len(),
        restarts: report.restarts.len(),
        exit_code: report.exit_code,
        concluded: coverage.concluded,
        not_concluded: coverage.not_concluded.clone(),
        audit,
    }
}

/// Why a failing check is the server's real behaviour, when the table says
/// so for this check and tool and every object of its evidence is one the
/// explanation names. Anything else is a false failure until shown otherwise.
fn explained(server: &ServerSpec, check: &CheckResult) -> Option<String> {
    server
        .real
        .iter()
        .find(|r| {
            r.check == check.id.as_str()
                && r.tool == check.tool
                && !check.evidence.effects.is_empty()
                && check
                    .evidence
                    .effects
                    .iter()
                    .all(|e| r.objects.iter().any(|p| e.object.starts_with(p)))
        })
        .map(|r| r.why.to_owned())
}

#[cfg(test)]
mod tests {
    use witness_model::audit::{Evidence, EvidenceEffect, Op};
    use witness_model::vocab::CheckId;

    use super::*;
    use crate::coverage::table::{Real, SERVERS, ServerSpec};

    fn failing(tool: &str, objects: &[&str]) -> CheckResult {
        CheckResult {
            id: CheckId::Eff02,
            tool: tool.into(),
            verdict: Verdict::Fail,
            reason: String::new(),
            evidence: Evidence {
                calls: vec![1],
                effects: objects
                    .iter()
                    .map(|o| EvidenceEffect {
                        call: 1,
                        object: (*o).into(),
                        op: Op::Update,
                    })
                    .collect(),
                probes: Vec::new(),
                network: Vec::new(),
                original_writes: Vec::new(),
            },
        }
    }

    #[test]
    fn a_failure_is_real_only_on_the_objects_its_explanation_names() {
        // A server as the table would list one whose directory store makes
        // an honest checkout look destructive.
        let Some(base) = SERVERS.iter().find(|s| s.name == "git").copied() else {
            panic!("the git server is in the table");
        };
        let spec = ServerSpec {
            real: &[Real {
                check: "EFF-02",
                tool: "git_checkout",
                objects: &["repo:file/.git/HEAD"],
                why: "switching branches rewrites .git/HEAD",
            }],
            ..base
        };
        assert!(explained(&spec, &failing("git_checkout", &["repo:file/.git/HEAD"])).is_some());
        assert!(
            explained(
                &spec,
                &failing(
                    "git_checkout",
                    &["repo:file/.git/HEAD", "repo:file/README.md"]
                )
            )
            .is_none(),
            "a working-tree file is not what checkout is explained by"
        );
        assert!(explained(&spec, &failing("git_status", &["repo:file/.git/index"])).is_none());
        assert!(explained(&spec, &failing("git_checkout", &[])).is_none());
    }
}

//! The runner: per server, a fresh store and an audit for the honest
//! variant and for each planted lie; the document sums them up.

use std::path::Path;

use witness_engine::audit;
use witness_engine::audit::stable::stable;
use witness_jail::StoreSpec;
use witness_model::audit::{AuditReport, Coverage, Verdict};
use witness_model::exit::ExitStatus;
use witness_model::wild::*;

use super::install::{check_installed, command, python};
use super::table::{Lie, SERVERS, WildSpec};
use super::{AUDIT_PREFIX, DOCUMENT, WildError, seed};
use crate::progress::{Event, Progress};

/// The name of the honest variant.
pub const HONEST: &str = "honest";

/// The document and the exit status it adds up to.
#[derive(Clone, Debug)]
pub struct WildOutcome {
    pub document: WildDocument,
    /// Failed when a lie escaped or a false failure showed; else
    /// incomplete when an audit could not finish; else passed.
    pub status: ExitStatus,
}

/// Audits every server installed in `dir`, writing into `out`.
pub fn run_wild_in(dir: &Path, out: &Path, progress: &Progress) -> Result<WildOutcome, WildError> {
    let dir = &crate::cases::absolute_dir(dir);
    check_installed(dir)?;
    let mut servers = Vec::new();
    let mut statuses = Vec::new();
    for server in SERVERS {
        progress.report(Event::Published {
            experiment: "wild",
            name: server.name,
            package: server.package,
            version: server.version,
        });
        let honest = audit_variant(dir, out, &server, None, progress)?;
        let mut lies = Vec::new();
        for lie in server.lies {
            lies.push((*lie, audit_variant(dir, out, &server, Some(lie), progress)?));
        }
        let summary = summarize(&server, &honest, &lies);
        progress.step(
            "wild",
            servers.len() + 1,
            SERVERS.len(),
            &format!(
                "{}: {}/{} tools exercised, {}/{} lies caught, {} false failures",
                summary.name,
                summary.exercised,
                summary.tools,
                summary.lies.iter().filter(|l| l.caught).count(),
                summary.lies.len(),
                summary.false_failures.len()
            ),
        );
        let complete = honest.complete && lies.iter().all(|(_, r)| r.complete);
        statuses.push(
            if !summary.false_failures.is_empty() || summary.lies.iter().any(|l| !l.caught) {
                ExitStatus::Failed
            } else if !complete {
                ExitStatus::Incomplete
            } else {
                ExitStatus::Passed
            },
        );
        servers.push(summary);
    }
    let document = WildDocument {
        schema: WILD_SCHEMA.into(),
        generator: witness_model::GENERATOR.into(),
        plan: "none".into(),
        timeout_ms: u64::try_from(crate::PUBLISHED_TIMEOUT.as_millis()).unwrap_or(u64::MAX),
        settle_ms: u64::try_from(crate::PUBLISHED_SETTLE.as_millis()).unwrap_or(u64::MAX),
        totals: totals(&servers),
        servers,
    };
    write(&out.join(DOCUMENT), &document)?;
    Ok(WildOutcome {
        document,
        status: ExitStatus::across(statuses),
    })
}

fn write(path: &Path, value: &impl serde::Serialize) -> Result<(), WildError> {
    crate::write_json_file(path, value).map_err(|source| WildError::Write {
        path: path.to_path_buf(),
        source,
    })
}

/// The audit file's name for a variant: `wild-<server>` for the honest one,
/// `wild-<server>-<tool>-<kind>` for a lie.
pub fn audit_name(server: &WildSpec, lie: Option<&Lie>) -> String {
    match lie {
        None => format!("{AUDIT_PREFIX}{}", server.name),
        Some(l) => format!(
            "{AUDIT_PREFIX}{}-{}-{}",
            server.name,
            l.tool,
            l.kind.as_str()
        ),
    }
}

/// Audits one variant on a fresh store and writes its audit (machine paths
/// replaced by tokens).
fn audit_variant(
    dir: &Path,
    out: &Path,
    server: &WildSpec,
    lie: Option<&Lie>,
    progress: &Progress,
) -> Result<AuditReport, WildError> {
    let fail = |message: String| WildError::Server {
        server: format!(
            "{} ({})",
            server.name,
            lie.map_or_else(|| HONEST.to_owned(), Lie::variant)
        ),
        message,
    };
    let seed_dir = witness_process::scratch::tempdir("mcp-witness-wild-")
        .map_err(|e| fail(format!("cannot make a seed directory: {e}")))?;
    let stores = vec![StoreSpec {
        name: server.store.to_owned(),
        kind: server.seed.kind(),
        source: seed::make(server.seed, seed_dir.path(), &python(dir)).map_err(fail)?,
        shown: Some(server.seed.describe().to_owned()),
        clock_columns: Vec::new(),
    }];
    let lies: Vec<String> = lie.iter().map(|l| l.variant()).collect();
    let options = crate::PublishedRun {
        command: command(dir, server, &lies),
        stores,
        env: server.env,
        plan: None,
        label: format!(
            "wild {} ({}): {}@{}",
            server.name,
            lie.map_or_else(|| HONEST.to_owned(), Lie::variant),
            server.package,
            server.version
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
    let path_text = std::env::var("PATH").unwrap_or_default();
    let report = stable(
        &run.report,
        &[
            (&dir_text, "{wild}"),
            (&seed_text, "{seed}"),
            (&path_text, "{PATH}"),
        ],
        server.clock_text,
    )
    .map_err(|e| fail(e.to_string()))?;
    write(
        &out.join(format!("audits/{}.json", audit_name(server, lie))),
        &report,
    )?;
    Ok(report)
}

fn coverage(report: &AuditReport) -> Coverage {
    report
        .coverage
        .clone()
        .unwrap_or_else(|| Coverage::of(report, None))
}

/// One server's numbers, read from its audits.
pub fn summarize(
    server: &WildSpec,
    honest: &AuditReport,
    lies: &[(Lie, AuditReport)],
) -> WildServer {
    let coverage = coverage(honest);
    let mut false_failures: Vec<WildFailure> = honest
        .checks
        .iter()
        .filter(|c| c.verdict == Verdict::Fail)
        .map(|c| WildFailure {
            variant: HONEST.into(),
            check: c.id.as_str().to_owned(),
            tool: c.tool.clone(),
        })
        .collect();
    let mut planted = Vec::new();
    for (lie, report) in lies {
        let mut checks = Vec::new();
        for check in report.checks.iter().filter(|c| c.verdict == Verdict::Fail) {
            if check.tool == lie.tool {
                checks.push(check.id.as_str().to_owned());
            } else {
                false_failures.push(WildFailure {
                    variant: lie.variant(),
                    check: check.id.as_str().to_owned(),
                    tool: check.tool.clone(),
                });
            }
        }
        checks.sort();
        checks.dedup();
        let exercised = coverage_of_tool(report, lie.tool);
        planted.push(WildLie {
            tool: lie.tool.into(),
            lie: lie.kind.as_str().into(),
            caught: !checks.is_empty(),
            checks,
            exercised,
            exit_code: report.exit_code,
        });
    }
    WildServer {
        name: server.name.into(),
        package: server.package.into(),
        version: server.version.into(),
        installer: server.installer.name().into(),
        store: server.seed.describe().into(),
        store_kind: server.seed.kind().as_str().into(),
        tools: coverage.tools,
        exercised: coverage.exercised,
        percent: coverage.percent(),
        not_exercised: coverage
            .by_tool
            .iter()
            .filter(|t| t.call.is_none())
            .map(|t| WildToolLeft {
                tool: t.tool.clone(),
                why: t.why.clone().unwrap_or_default(),
            })
            .collect(),
        exit_code: honest.exit_code,
        concluded: coverage.concluded,
        false_failures,
        lies: planted,
    }
}

fn coverage_of_tool(report: &AuditReport, tool: &str) -> bool {
    coverage(report)
        .by_tool
        .iter()
        .any(|t| t.tool == tool && t.call.is_some())
}

fn totals(servers: &[WildServer]) -> WildTotals {
    WildTotals {
        servers: servers.len(),
        tools: servers.iter().map(|s| s.tools).sum(),
        exercised: servers.iter().map(|s| s.exercised).sum(),
        servers_at_90_percent: servers
            .iter()
            .filter(|s| s.tools > 0 && s.exercised * 10 >= s.tools * 9)
            .count(),
        lies_planted: servers.iter().map(|s| s.lies.len()).sum(),
        lies_caught: servers
            .iter()
            .map(|s| s.lies.iter().filter(|l| l.caught).count())
            .sum(),
        false_failures: servers.iter().map(|s| s.false_failures.len()).sum(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(name: &str, tools: usize, exercised: usize, caught: &[bool]) -> WildServer {
        WildServer {
            name: name.into(),
            tools,
            exercised,
            lies: caught
                .iter()
                .map(|c| WildLie {
                    caught: *c,
                    ..WildLie::default()
                })
                .collect(),
            ..WildServer::default()
        }
    }

    #[test]
    fn totals_count_servers_at_ninety_percent_and_caught_lies() {
        let t = totals(&[
            server("a", 10, 9, &[true, false]),
            server("b", 5, 4, &[true]),
            server("c", 0, 0, &[]),
        ]);
        assert_eq!((t.tools, t.exercised), (15, 13));
        assert_eq!(t.servers_at_90_percent, 1, "9/10 meets 90%, 4/5 does not");
        assert_eq!((t.lies_planted, t.lies_caught), (3, 2));
    }

    #[test]
    fn audit_names_carry_the_variant() {
        let Some(s) = SERVERS.iter().find(|s| s.name == "sqlite-crud") else {
            panic!("sqlite-crud is in the table");
        };
        assert_eq!(audit_name(s, None), "wild-sqlite-crud");
        assert_eq!(
            audit_name(s, s.lies.first()),
            "wild-sqlite-crud-create_record-read-only"
        );
    }
}

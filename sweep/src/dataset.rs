//! The dataset: one row per target × tool × check, as JSON lines and CSV,
//! and `sweep.json` over it.
//!
//! Everything here is a function of the targets' `result.json` and
//! `audit.json` files and nothing else — not of the order targets ran in,
//! how many ran at once, which shard ran them, or whether a run was killed
//! and resumed. That is what makes `--jobs N` and N shards merged write the
//! same bytes. Timing lives only under `volatile` in `result.json`; the
//! dataset and `sweep.json` carry none.

use std::collections::BTreeMap;
use std::path::Path;

use witness_model::audit::{AuditReport, CheckResult, Coverage, EffectTally, Hints, ToolEntry};
use witness_model::exit::ExitStatus;
use witness_model::sweep::{
    DatasetFiles, Ecosystem, Prevalence, SWEEP_SCHEMA, ShardEntry, SweepDocument, SweepRow,
    TargetResult, TargetStatus, TargetSummary, VerdictCounts,
};
use witness_model::vocab::Verdict;

use crate::SweepError;
use crate::key::sweep_digest;
use crate::layout::{
    AUDIT_JSON, DATASET_CSV, DATASET_JSONL, Layout, REPORT_HTML, SWEEP_JSON, write_atomic,
    write_json,
};
use crate::shard::Shard;

/// What a dataset is written for: the sweep, and which of its keys this
/// directory answers for.
pub struct Scope<'a> {
    pub name: &'a str,
    /// Every key of the sweep.
    pub all_keys: &'a [String],
    /// The keys this directory holds (the whole sweep, or a shard's part).
    pub keys: &'a [String],
    pub shard: Option<Shard>,
}

/// One target as read back from its directory.
pub struct Finished {
    pub result: TargetResult,
    pub report: Option<AuditReport>,
}

/// Reads a target's result and audit.
pub fn read_target(layout: &Layout, key: &str) -> Option<Finished> {
    let result = layout.read_result(key)?;
    let report = result.audit.as_ref().and_then(|name| {
        let text = std::fs::read_to_string(layout.target_dir(key).join(name)).ok()?;
        serde_json::from_str(&text).ok()
    });
    Some(Finished { result, report })
}

/// Writes `dataset.jsonl`, `dataset.csv` and `sweep.json` for `scope`, and
/// returns the document with the exit status its targets add up to.
pub fn write(
    layout: &Layout,
    scope: &Scope<'_>,
) -> Result<(SweepDocument, ExitStatus), SweepError> {
    let mut finished = Vec::new();
    let mut missing = Vec::new();
    for key in scope.keys {
        match read_target(layout, key) {
            Some(target) => finished.push(target),
            None => missing.push(key.clone()),
        }
    }
    finished.sort_by(|a, b| {
        (&a.result.definition.name, &a.result.key).cmp(&(&b.result.definition.name, &b.result.key))
    });
    let rows: Vec<SweepRow> = finished.iter().flat_map(rows_of).collect();
    let mut jsonl = String::new();
    for row in &rows {
        jsonl.push_str(&serde_json::to_string(row).map_err(|e| SweepError::Io {
            path: layout.out.join(DATASET_JSONL),
            source: std::io::Error::other(e),
        })?);
        jsonl.push('\n');
    }
    let jsonl_path = layout.out.join(DATASET_JSONL);
    write_atomic(&jsonl_path, jsonl.as_bytes()).map_err(SweepError::io(&jsonl_path))?;
    let csv_path = layout.out.join(DATASET_CSV);
    write_atomic(&csv_path, csv(&rows).as_bytes()).map_err(SweepError::io(&csv_path))?;
    let targets: Vec<TargetSummary> = finished.iter().map(summary).collect();
    let status = ExitStatus::across(
        targets
            .iter()
            .map(target_status)
            .chain(missing.iter().map(|_| ExitStatus::Incomplete)),
    );
    let mut statuses = BTreeMap::new();
    for target in &targets {
        *statuses.entry(target.status).or_insert(0) += 1;
    }
    let document = SweepDocument {
        schema: SWEEP_SCHEMA.into(),
        generator: witness_model::GENERATOR.into(),
        name: scope.name.to_owned(),
        digest: sweep_digest(scope.all_keys.iter().map(String::as_str)),
        shard: scope.shard.map(|s| ShardEntry {
            index: s.index,
            count: s.count,
        }),
        keys: sorted(scope.all_keys),
        missing,
        targets,
        statuses,
        prevalence: Prevalence::of(&rows),
        dataset: DatasetFiles {
            jsonl: DATASET_JSONL.into(),
            csv: DATASET_CSV.into(),
            rows: rows.len(),
        },
    };
    let path = layout.out.join(SWEEP_JSON);
    write_json(&path, &document).map_err(SweepError::io(&path))?;
    Ok((document, status))
}

fn sorted(keys: &[String]) -> Vec<String> {
    let mut keys = keys.to_vec();
    keys.sort();
    keys
}

/// How one target counts toward the sweep's exit status: an audit's own
/// code, anything else could not conclude.
fn target_status(target: &TargetSummary) -> ExitStatus {
    match (target.status, target.exit_code) {
        (TargetStatus::Audited, Some(code)) => {
            ExitStatus::from_code(code.into()).unwrap_or(ExitStatus::Incomplete)
        }
        _ => ExitStatus::Incomplete,
    }
}

fn paths(key: &str, report: Option<&AuditReport>) -> (Option<String>, Option<String>) {
    match report {
        Some(_) => (
            Some(format!("targets/{key}/{AUDIT_JSON}")),
            Some(format!("targets/{key}/{REPORT_HTML}")),
        ),
        None => (None, None),
    }
}

fn summary(target: &Finished) -> TargetSummary {
    let result = &target.result;
    let report = target.report.as_ref();
    let (audit, page) = paths(&result.key, report);
    TargetSummary {
        key: result.key.clone(),
        name: result.definition.name.clone(),
        ecosystem: ecosystem(result),
        package: result.definition.package.clone(),
        status: result.status,
        reason: result.reason.clone(),
        exit_code: report.map(|r| r.exit_code),
        tools: report.map_or(0, |r| r.tools.len()),
        verdicts: report.map(verdicts).unwrap_or_default(),
        audit,
        report: page,
    }
}

/// The verdicts of an audit, counted: both lanes, as its rows hold them.
pub fn verdicts(report: &AuditReport) -> VerdictCounts {
    let mut counts = VerdictCounts::default();
    for check in report.checks.iter().chain(&report.response) {
        *match check.verdict {
            Verdict::Pass => &mut counts.pass,
            Verdict::Fail => &mut counts.fail,
            Verdict::Skip => &mut counts.skip,
            Verdict::Untestable => &mut counts.untestable,
        } += 1;
    }
    counts
}

fn ecosystem(result: &TargetResult) -> Ecosystem {
    result
        .definition
        .package
        .as_ref()
        .map_or(Ecosystem::Command, |p| p.ecosystem)
}

/// The target's rows: one per tool × check of its audit, or one for the
/// target alone when it has none (never installed, never started, ...).
pub fn rows_of(target: &Finished) -> Vec<SweepRow> {
    let result = &target.result;
    let package = result.definition.package.as_ref();
    let (audit, report) = paths(&result.key, target.report.as_ref());
    let base = SweepRow {
        target: result.definition.name.clone(),
        key: result.key.clone(),
        ecosystem: ecosystem(result),
        package: package.map(|p| p.name.clone()),
        version: package.map(|p| p.version.clone()),
        status: result.status,
        reason: result.reason.clone(),
        plan: if result.definition.plan.is_some() {
            "file"
        } else {
            "planner"
        }
        .into(),
        audit,
        report,
        ..SweepRow::default()
    };
    let mut rows = Vec::new();
    if let Some(report) = &target.report {
        // The audit's own coverage; an audit that carried out its plan in
        // full leaves it out, and `Coverage::of` gives its numbers.
        let coverage = report
            .coverage
            .clone()
            .unwrap_or_else(|| Coverage::of(report, None));
        let mut tools: Vec<&ToolEntry> = report.tools.iter().collect();
        tools.sort_by(|a, b| a.name.cmp(&b.name));
        for tool in tools {
            rows.extend(tool_rows(&base, report, &coverage, tool));
        }
    }
    if rows.is_empty() {
        rows.push(base);
    }
    rows
}

/// One tool's rows: one per check of either lane (the effect lane's, then
/// the response lane's, in catalog order), or one for the tool when no
/// check ran.
fn tool_rows(
    base: &SweepRow,
    report: &AuditReport,
    coverage: &Coverage,
    tool: &ToolEntry,
) -> Vec<SweepRow> {
    let Hints {
        read_only,
        destructive,
        idempotent,
        open_world,
    } = tool.hints.clone();
    let calls: Vec<_> = report
        .calls
        .iter()
        .filter(|c| c.tool == tool.name)
        .collect();
    let ok = calls.iter().filter(|c| c.succeeded()).count();
    let effects = EffectTally::of(calls.iter().flat_map(|c| &c.effects));
    let covered = coverage.by_tool.iter().find(|t| t.tool == tool.name);
    let exercised = covered.map_or(ok > 0, |t| t.call.is_some());
    let row = SweepRow {
        tool: Some(tool.name.clone()),
        class: Some(tool.class),
        read_only,
        destructive,
        idempotent,
        open_world,
        calls: Some(calls.len()),
        calls_ok: Some(ok),
        exercised: Some(exercised),
        on_real_values: covered
            .filter(|t| t.call.is_some())
            .map(|t| t.values.iter().all(|v| v.is_real())),
        not_exercised: covered.and_then(|t| t.why.clone()),
        creates: Some(effects.creates),
        updates: Some(effects.updates),
        deletes: Some(effects.deletes),
        outside_stores: Some(effects.outside_stores),
        ..base.clone()
    };
    let mut checks: Vec<&CheckResult> = report
        .checks
        .iter()
        .chain(&report.response)
        .filter(|c| c.tool == tool.name)
        .collect();
    checks.sort_by_key(|c| c.id);
    if checks.is_empty() {
        return vec![row];
    }
    checks
        .into_iter()
        .map(|check| SweepRow {
            check: Some(check.id),
            verdict: Some(check.verdict),
            verdict_reason: Some(check.reason.clone()),
            ..row.clone()
        })
        .collect()
}

/// The rows as CSV (RFC 4180 quoting, `\n` line ends): the columns are the
/// JSON rows' fields in their order; an absent value is an empty field.
pub fn csv(rows: &[SweepRow]) -> String {
    let mut out = csv_line(columns().iter().map(|c| c.to_string()));
    for row in rows {
        let value = serde_json::to_value(row).unwrap_or_default();
        out.push_str(&csv_line(columns().iter().map(|c| field(&value[*c]))));
    }
    out
}

/// The dataset's columns, in order.
pub fn columns() -> Vec<&'static str> {
    vec![
        "target",
        "key",
        "ecosystem",
        "package",
        "version",
        "status",
        "reason",
        "plan",
        "tool",
        "class",
        "read_only",
        "destructive",
        "idempotent",
        "open_world",
        "check",
        "verdict",
        "verdict_reason",
        "calls",
        "calls_ok",
        "exercised",
        "on_real_values",
        "not_exercised",
        "creates",
        "updates",
        "deletes",
        "outside_stores",
        "audit",
        "report",
    ]
}

fn field(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::Null => String::new(),
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn csv_line(fields: impl Iterator<Item = String>) -> String {
    let quoted: Vec<String> = fields
        .map(|f| {
            if f.contains([',', '"', '\n', '\r']) || f.starts_with(' ') || f.ends_with(' ') {
                format!("\"{}\"", f.replace('"', "\"\""))
            } else {
                f
            }
        })
        .collect();
    quoted.join(",") + "\n"
}

/// Whether `dir` holds a sweep's output (for `merge`).
pub fn is_sweep_dir(dir: &Path) -> bool {
    dir.join(SWEEP_JSON).is_file()
}

#[cfg(test)]
mod tests;

//! A sweep's pages: the prevalence page (`index.html`) over `sweep.json`
//! and `dataset.jsonl`, and each target's evidence page
//! (`targets/<key>/report.html`) from its `audit.json`.
//!
//! Every row of the page links to the verdict it shows in its target's
//! evidence page; the numbers are the ones `sweep.json` carries, computed
//! from the rows.

use std::path::Path;

use anyhow::{Context, Result};
use serde::Serialize;

use witness_model::audit::AuditReport;
use witness_model::sweep::{
    HintPrevalence, SweepDocument, SweepRow, TargetStatus, TargetSummary, VerdictCounts,
};
use witness_model::vocab::Verdict;

use crate::{AuditLinks, Rendered, anchor_part, check_anchor, render, safe_stem, verdict_counts};

/// Renders `out/index.html` and every target's evidence page from the
/// documents in `out`. Reads nothing else; runs nothing.
pub fn render_dir(out: &Path) -> Result<Rendered> {
    let path = out.join("sweep.json");
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let document: SweepDocument = serde_json::from_str(&text)
        .with_context(|| format!("{} is not an mcp-witness.sweep/v1 document", path.display()))?;
    let path = out.join(&document.dataset.jsonl);
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let mut rows = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let row: SweepRow = serde_json::from_str(line)
            .with_context(|| format!("{} line {}: not a sweep row", path.display(), n + 1))?;
        rows.push(row);
    }
    let mut rendered = Rendered::default();
    for target in &document.targets {
        match target_page(out, target) {
            Ok(Some(file)) => rendered.files.push(file),
            Ok(None) => {}
            Err(e) => rendered.warnings.push(format!("{e:#}")),
        }
    }
    let html = render_page(&document, &rows)?;
    let index = out.join("index.html");
    std::fs::write(&index, html).with_context(|| format!("cannot write {}", index.display()))?;
    rendered.files.push(index);
    Ok(rendered)
}

/// The evidence page of one target, when it has an audit.
fn target_page(out: &Path, target: &TargetSummary) -> Result<Option<std::path::PathBuf>> {
    if target.audit.is_none() {
        return Ok(None);
    }
    if !safe_stem(&target.key) {
        anyhow::bail!(
            "target key {:?}: not a name pages link to; skipped",
            target.key
        );
    }
    let dir = out.join("targets").join(&target.key);
    let path = dir.join("audit.json");
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let report: AuditReport = serde_json::from_str(&text)
        .with_context(|| format!("{} is not an mcp-witness.audit/v1 document", path.display()))?;
    let links = AuditLinks {
        raw_json: Some("audit.json".into()),
        index: Some("../../index.html".into()),
    };
    let view = crate::audit::view(&report, &links).with_index_label("sweep page");
    let html = render("audit.html.j2", view)?;
    let page = dir.join("report.html");
    std::fs::write(&page, html).with_context(|| format!("cannot write {}", page.display()))?;
    Ok(Some(page))
}

#[derive(Serialize)]
struct View {
    name: String,
    schema: String,
    generator: String,
    scope: String,
    shard: bool,
    missing: Vec<String>,
    statuses: Vec<(String, usize)>,
    tools: usize,
    targets_with_tools: usize,
    declaring_nothing: usize,
    hints: Vec<HintView>,
    checks: Vec<CheckView>,
    targets: Vec<TargetView>,
    rows: Vec<RowView>,
    jsonl: String,
    csv: String,
    row_count: usize,
}

#[derive(Serialize)]
struct HintView {
    hint: String,
    claim: String,
    declared: usize,
    claimed: usize,
    held: usize,
    contradicted: usize,
    untestable: usize,
    not_checked: usize,
    /// `held / claimed`, as a share.
    held_share: String,
}

#[derive(Serialize)]
struct CheckView {
    check: String,
    holds_when: String,
    pass: usize,
    fail: usize,
    skip: usize,
    untestable: usize,
}

#[derive(Serialize)]
struct TargetView {
    name: String,
    anchor: String,
    package: String,
    status: String,
    reason: Option<String>,
    tools: usize,
    verdicts: String,
    report: Option<String>,
}

#[derive(Serialize)]
struct RowView {
    target: String,
    target_anchor: String,
    tool: Option<String>,
    check: Option<String>,
    declared: String,
    verdict: Option<String>,
    reason: String,
    coverage: String,
    href: Option<String>,
}

/// The prevalence page.
pub fn render_page(document: &SweepDocument, rows: &[SweepRow]) -> Result<String> {
    let p = &document.prevalence;
    let view = View {
        name: document.name.clone(),
        schema: document.schema.clone(),
        generator: document.generator.clone(),
        scope: scope(document),
        shard: document.shard.is_some(),
        missing: document.missing.clone(),
        statuses: TargetStatus::ALL
            .iter()
            .map(|s| {
                (
                    s.as_str().to_owned(),
                    document.statuses.get(s).copied().unwrap_or(0),
                )
            })
            .collect(),
        tools: p.tools,
        targets_with_tools: p.targets,
        declaring_nothing: p.declaring_nothing,
        hints: p.hints.iter().map(hint_view).collect(),
        checks: p
            .checks
            .iter()
            .map(|c| CheckView {
                check: c.check.as_str().to_owned(),
                holds_when: c.check.holds_when().to_owned(),
                pass: c.pass,
                fail: c.fail,
                skip: c.skip,
                untestable: c.untestable,
            })
            .collect(),
        targets: document.targets.iter().map(target_view).collect(),
        rows: rows.iter().map(row_view).collect(),
        jsonl: document.dataset.jsonl.clone(),
        csv: document.dataset.csv.clone(),
        row_count: document.dataset.rows,
    };
    render("sweep.html.j2", view)
}

fn scope(document: &SweepDocument) -> String {
    let all = document.keys.len();
    match document.shard {
        Some(shard) => format!(
            "Shard {}/{} of the sweep: {} of its {all} targets. Merge the shards (mcp-witness sweep merge) for the whole dataset.",
            shard.index,
            shard.count,
            document.targets.len() + document.missing.len()
        ),
        None => format!("The whole sweep: {all} targets."),
    }
}

fn hint_view(h: &HintPrevalence) -> HintView {
    HintView {
        hint: h.hint.clone(),
        claim: h.claim.to_string(),
        declared: h.declared,
        claimed: h.claimed,
        held: h.held,
        contradicted: h.contradicted,
        untestable: h.untestable,
        not_checked: h.not_checked,
        // Nothing concluded for any claim: a share would read as a verdict.
        held_share: if h.claimed == h.not_checked {
            "—".into()
        } else {
            format!("{}/{}", h.held, h.claimed)
        },
    }
}

/// `targets/<key>/report.html`, when the key is one we link to.
fn report_href(key: &str, report: Option<&String>) -> Option<String> {
    report
        .filter(|_| safe_stem(key))
        .map(|_| format!("targets/{key}/report.html"))
}

fn counts(v: &VerdictCounts) -> String {
    verdict_counts(&witness_model::audit::VerdictTally {
        pass: v.pass,
        fail: v.fail,
        skip: v.skip,
        untestable: v.untestable,
    })
}

fn target_view(t: &TargetSummary) -> TargetView {
    TargetView {
        name: t.name.clone(),
        anchor: format!("target-{}", anchor_part(&t.key)),
        package: t
            .package
            .as_ref()
            .map_or_else(|| "command".to_owned(), |p| p.coordinate()),
        status: t.status.as_str().to_owned(),
        reason: t.reason.clone(),
        tools: t.tools,
        verdicts: counts(&t.verdicts),
        report: report_href(&t.key, t.report.as_ref()),
    }
}

/// `readOnly=true, idempotent=true` (the hints, without `Hint`), or `none`.
fn declared(row: &SweepRow) -> String {
    let pairs = [
        ("readOnly", row.read_only),
        ("destructive", row.destructive),
        ("idempotent", row.idempotent),
        ("openWorld", row.open_world),
    ];
    let said: Vec<String> = pairs
        .iter()
        .filter_map(|(k, v)| v.map(|v| format!("{k}={v}")))
        .collect();
    if said.is_empty() {
        "none".into()
    } else {
        said.join(", ")
    }
}

fn row_view(row: &SweepRow) -> RowView {
    let page = report_href(&row.key, row.report.as_ref());
    let href = page.map(|page| match (&row.tool, row.check) {
        (Some(tool), Some(check)) => format!("{page}#{}", check_anchor(check.as_str(), tool)),
        (Some(tool), None) => format!("{page}#tool-{}", anchor_part(tool)),
        _ => page,
    });
    let coverage = match (row.calls, row.calls_ok, &row.not_exercised) {
        (_, _, Some(why)) => why.clone(),
        (Some(calls), Some(ok), None) => format!("{ok}/{calls} calls succeeded"),
        _ => String::new(),
    };
    RowView {
        target: row.target.clone(),
        target_anchor: format!("target-{}", anchor_part(&row.key)),
        tool: row.tool.clone(),
        check: row.check.map(|c| c.as_str().to_owned()),
        declared: if row.tool.is_some() {
            declared(row)
        } else {
            String::new()
        },
        verdict: row.verdict.map(|v: Verdict| v.as_str().to_owned()),
        reason: row
            .verdict_reason
            .clone()
            .or_else(|| row.reason.clone())
            .unwrap_or_default(),
        coverage,
        href,
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use witness_model::sweep::{
        DatasetFiles, Prevalence, ShardEntry, SweepDocument, SweepRow, TargetStatus,
    };
    use witness_model::vocab::{CheckId, Verdict};

    use super::render_page;

    fn row(tool: &str) -> SweepRow {
        SweepRow {
            target: "evil".into(),
            key: "evil-0123456789abcdef".into(),
            status: TargetStatus::Audited,
            plan: "planner".into(),
            tool: Some(tool.into()),
            read_only: Some(true),
            check: Some(CheckId::Eff01),
            verdict: Some(Verdict::Fail),
            verdict_reason: Some("wrote <b>1</b> row\u{202E}".into()),
            report: Some("targets/evil-0123456789abcdef/report.html".into()),
            ..SweepRow::default()
        }
    }

    fn document(rows: &[SweepRow], shard: Option<ShardEntry>) -> SweepDocument {
        SweepDocument {
            schema: "mcp-witness.sweep/v1".into(),
            generator: "test".into(),
            name: "demo".into(),
            digest: "blake3:00".into(),
            shard,
            keys: vec![
                "evil-0123456789abcdef".into(),
                "other-0123456789abcdef".into(),
            ],
            missing: Vec::new(),
            targets: Vec::new(),
            statuses: BTreeMap::from([(TargetStatus::Audited, 1)]),
            prevalence: Prevalence::of(rows),
            dataset: DatasetFiles {
                jsonl: "dataset.jsonl".into(),
                csv: "dataset.csv".into(),
                rows: rows.len(),
            },
        }
    }

    #[test]
    fn server_text_is_escaped_and_links_go_to_the_verdicts_anchor() {
        let rows = [row("<script>alert(1)</script>")];
        let html = render_page(&document(&rows, None), &rows).unwrap_or_default();
        assert!(!html.contains("<script>"), "escaped");
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(!html.contains('\u{202E}') && html.contains("U+202E"));
        assert!(!html.contains("<b>1</b>"));
        // The anchor is the evidence page's, with the name encoded.
        let anchor = crate::check_anchor("EFF-01", "<script>alert(1)</script>");
        assert!(
            html.contains(&format!(
                "targets/evil-0123456789abcdef/report.html#{anchor}"
            )),
            "{anchor}"
        );
        assert!(html.contains("The whole sweep: 2 targets."));
    }

    #[test]
    fn a_shard_says_it_is_one_and_how_to_merge() {
        let rows = [row("get")];
        let shard = Some(ShardEntry { index: 1, count: 3 });
        let html = render_page(&document(&rows, shard), &rows).unwrap_or_default();
        assert!(html.contains("Shard 1/3 of the sweep"), "{html}");
        assert!(html.contains("mcp-witness sweep merge"));
    }
}

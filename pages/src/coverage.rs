//! What an audit exercised, as its evidence page shows it: the tools called
//! with success and on what kind of values, the ones that were not and why,
//! and whether the audit could conclude at all.

use serde::Serialize;

use witness_model::audit::{AuditReport, Coverage};
use witness_model::vocab::Provenance;
use witness_text::clip_raw;

use crate::anchor_part;

/// Bound on a reason shown per tool; the JSON keeps all of it.
const MAX_WHY: usize = 400;

#[derive(Serialize)]
pub(crate) struct CoverageView {
    tools: usize,
    exercised: usize,
    percent: usize,
    on_real_values: usize,
    concluded: bool,
    not_concluded: Option<String>,
    minimum_percent: Option<u8>,
    /// `store in 9`, `synthesized in 5`: how many exercised tools used
    /// values of each kind.
    kinds: Vec<String>,
    rows: Vec<ToolRow>,
}

#[derive(Serialize)]
struct ToolRow {
    tool: String,
    tool_anchor: String,
    /// The call that exercised it, and its anchor.
    call: Option<(u32, String)>,
    values: Vec<String>,
    why: Option<String>,
}

/// The coverage section, when the report records one. A plan file carried
/// out in full records none; its page says nothing new, as before.
pub(crate) fn view(report: &AuditReport) -> Option<CoverageView> {
    report.coverage.as_ref().map(coverage_view)
}

fn coverage_view(coverage: &Coverage) -> CoverageView {
    let kinds = Provenance::ALL
        .into_iter()
        .filter_map(|kind| {
            let n = coverage
                .by_tool
                .iter()
                .filter(|t| t.call.is_some() && t.values.contains(&kind))
                .count();
            (n > 0).then(|| format!("{kind} in {n}"))
        })
        .collect();
    CoverageView {
        tools: coverage.tools,
        exercised: coverage.exercised,
        percent: coverage.percent(),
        on_real_values: coverage.on_real_values,
        concluded: coverage.concluded,
        not_concluded: coverage.not_concluded.clone(),
        minimum_percent: coverage.minimum_percent,
        kinds,
        rows: coverage
            .by_tool
            .iter()
            .map(|t| ToolRow {
                tool: t.tool.clone(),
                tool_anchor: format!("tool-{}", anchor_part(&t.tool)),
                call: t.call.map(|c| (c, format!("call-{c}"))),
                values: t.values.iter().map(|v| v.as_str().to_owned()).collect(),
                why: t.why.as_deref().map(|w| clip_raw(w, MAX_WHY)),
            })
            .collect(),
    }
}

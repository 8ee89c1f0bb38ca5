//! What an audit exercised, as its evidence page shows it: the tools called
//! with success and on what kind of values, the ones that were not and why,
//! and whether the audit could conclude at all.

use serde::Serialize;

use witness_model::audit::{AuditReport, Coverage};
use witness_model::coverage::{CoverageDocument, ServerCoverage};
use witness_text::clip_raw;

use crate::{anchor_part, audit_stem, report_file};

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
    let kinds = coverage
        .kinds()
        .into_iter()
        .map(|(kind, n)| format!("{kind} in {n}"))
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

/// The coverage experiment as the evaluation page shows it.
#[derive(Clone, Debug, Serialize)]
pub struct ExperimentView {
    pub method: String,
    pub servers: Vec<ServerView>,
    pub raw: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct ServerView {
    pub anchor: String,
    pub server: String,
    pub installer: String,
    pub store: String,
    pub exercised: String,
    pub target: String,
    pub met: bool,
    pub values: String,
    pub failures: Vec<String>,
    pub false_failures: usize,
    pub value_rejections: usize,
    pub restarts: usize,
    pub exit_code: i32,
    pub outcome: String,
    pub not_exercised: Vec<String>,
    pub report: Option<String>,
}

/// The section over `coverage.json`; `data_href` leads from the page to it.
pub fn experiment_view(doc: &CoverageDocument, data_href: &str) -> ExperimentView {
    let m = &doc.method;
    ExperimentView {
        method: format!(
            "plan: {} (the planner chose every call) · timeout {} ms · settle {} ms · destructive and unknown tools {}",
            m.plan,
            m.timeout_ms,
            m.settle_ms,
            if m.include_destructive {
                "called (the jail's store is a copy)"
            } else {
                "left out"
            }
        ),
        servers: doc.servers.iter().map(server_view).collect(),
        raw: format!("{data_href}coverage.json"),
    }
}

fn server_view(s: &ServerCoverage) -> ServerView {
    let values = if s.values.is_empty() {
        "no arguments".to_owned()
    } else {
        s.values
            .iter()
            .map(|(kind, n)| format!("{kind} in {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let outcome = match (s.exit_code, &s.not_concluded) {
        (3, Some(why)) => format!("exit 3, nothing concluded: {}", clip_raw(why, MAX_WHY)),
        (code, _) => format!("exit {code}"),
    };
    ServerView {
        anchor: format!("coverage-{}", anchor_part(&s.name)),
        server: format!("{}@{}", s.package, s.version),
        installer: s.installer.clone(),
        store: s.store.clone(),
        exercised: format!("{}/{} ({}%)", s.exercised, s.tools, s.percent),
        target: s.target.clone(),
        met: s.met,
        values,
        failures: s
            .failures
            .iter()
            .map(|f| match &f.real {
                Some(why) => format!("{} {}: real — {}", f.check, f.tool, clip_raw(why, MAX_WHY)),
                None => format!(
                    "{} {}: FALSE — {}",
                    f.check,
                    f.tool,
                    clip_raw(&f.reason, MAX_WHY)
                ),
            })
            .collect(),
        false_failures: s.false_failures,
        value_rejections: s.value_rejections,
        restarts: s.restarts,
        exit_code: s.exit_code,
        outcome,
        not_exercised: s
            .not_exercised
            .iter()
            .map(|t| {
                format!(
                    "{}: {}",
                    t.tool,
                    clip_raw(t.why.as_deref().unwrap_or("no reason recorded"), MAX_WHY)
                )
            })
            .collect(),
        report: audit_stem(&s.audit).map(report_file),
    }
}

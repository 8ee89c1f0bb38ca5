//! The text and the page of an agent compare (`mcp-witness.agent-compare/v1`):
//! overall and per case, every delta with the noise floor beside it, the
//! first tool each run reached for, and the tools the suite's history
//! never saw called.
//!
//! Case ids, model and tool names and file names come from run documents a
//! model and a server helped write: the text clips them and makes them
//! printable, the page escapes them. Anchors are built from our own names.

use serde::Serialize;
use witness_model::agent::compare::*;
use witness_text::clip;

use crate::anchor_part;

/// The page of one compare.
pub fn render(document: &AgentCompareDocument) -> anyhow::Result<String> {
    crate::render("agent-compare.html.j2", view(document))
}

/// A value of `metric` for a person: a share as a percentage, a count with
/// two decimals, tokens whole.
pub fn value(metric: Metric, value: Option<f64>) -> String {
    match value {
        None => "—".to_owned(),
        Some(v) if metric.is_rate() => format!("{:.0}%", v * 100.0),
        Some(v) if is_tokens(metric) => format!("{v:.0}"),
        Some(v) => format!("{v:.2}"),
    }
}

/// A delta or a floor: percentage points for a share.
fn amount(metric: Metric, value: Option<f64>, signed: bool) -> String {
    match value {
        None => "—".to_owned(),
        Some(v) if metric.is_rate() && signed => format!("{:+.1} pts", v * 100.0),
        Some(v) if metric.is_rate() => format!("{:.1} pts", v * 100.0),
        Some(v) if is_tokens(metric) && signed => format!("{v:+.0}"),
        Some(v) if is_tokens(metric) => format!("{v:.0}"),
        Some(v) if signed => format!("{v:+.2}"),
        Some(v) => format!("{v:.2}"),
    }
}

fn is_tokens(metric: Metric) -> bool {
    matches!(metric, Metric::InputTokens | Metric::OutputTokens)
}

/// The verdict as the text shows it: real ones in capitals.
fn shout(verdict: DeltaVerdict) -> String {
    if verdict.is_real() {
        verdict.as_str().to_uppercase()
    } else {
        verdict.as_str().to_owned()
    }
}

/// One delta as a line: before → after, delta, floor, verdict.
fn delta_line(label: &str, d: &MetricDelta) -> String {
    if d.verdict == DeltaVerdict::NotMeasured {
        return format!("  {label:<30} not measured on both sides (the driver reported none)\n");
    }
    format!(
        "  {label:<30} {:>8} → {:<8} {:>11}   floor {:>10}   {}\n",
        value(d.metric, d.before),
        value(d.metric, d.after),
        amount(d.metric, d.delta, true),
        amount(d.metric, d.floor, false),
        shout(d.verdict)
    )
}

/// What one side handed the model, in words. A pin and the server's
/// listing are fingerprinted the same way (`manifest pin`), so those are
/// the numbers shown side by side; the handed definitions' own fingerprint
/// is another hash of other fields and is shown only when the server's
/// listing was not recorded, labelled so it is not read as a pin's.
pub fn handed(side: &CompareSide) -> String {
    match (&side.manifest, &side.server_manifest) {
        (Some(pin), _) => format!(
            "the pinned manifest {} ({})",
            clip(&pin.file, 120),
            pin.fingerprint
        ),
        (None, Some(_)) => "the server's own tools".to_owned(),
        (None, None) => format!(
            "the server's own tools (definitions {})",
            short(&side.tools_fingerprint)
        ),
    }
}

/// `blake3:` and 16 hex digits of a longer fingerprint.
fn short(fingerprint: &str) -> String {
    fingerprint.chars().take("blake3:".len() + 16).collect()
}

fn side_line(label: &str, side: &CompareSide) -> String {
    format!(
        "  {label}: {} — {}, {} run(s) per case{}, handed {}{}\n",
        clip(&side.source, 120),
        side.driver,
        side.runs,
        side.seed.map_or(String::new(), |s| format!(" (seed {s})")),
        handed(side),
        side.server_manifest
            .as_ref()
            .map_or(String::new(), |m| format!("; the server listed {m}"))
    )
}

/// The compare for a terminal.
pub fn text(document: &AgentCompareDocument) -> String {
    let mut out = String::from("agent compare\n");
    out.push_str(&side_line("before", &document.before));
    out.push_str(&side_line("after ", &document.after));
    for change in &document.handed_changes {
        out.push_str(&format!(
            "  handed definitions differ: {} ({})\n",
            clip(&change.tool, 60),
            change.what.join(", ")
        ));
    }
    for note in &document.notes {
        out.push_str(&format!("  note: {}\n", clip(note, 300)));
    }
    out.push_str(&format!(
        "noise floor: a delta is real when its size exceeds {} standard errors of what reruns \
         alone produce (docs/agent-compare.md)\n",
        document.noise.z
    ));
    for model in &document.overall {
        out.push_str(&format!(
            "\noverall · {} · {} case(s)\n",
            clip(&model.model, 60),
            model.cases
        ));
        for d in &model.metrics {
            out.push_str(&delta_line(d.metric.label(), d));
        }
    }
    for case in &document.cases {
        case_text(&mut out, case);
    }
    history_text(&mut out, document);
    for not in &document.not_compared {
        out.push_str(&format!(
            "not compared: {} · {}: {}\n",
            clip(&not.case, 60),
            clip(&not.model, 60),
            not_compared_why(not.reason)
        ));
    }
    out.push_str(&verdict_line(document));
    out.push('\n');
    out
}

fn case_text(out: &mut String, case: &CaseComparison) {
    out.push_str(&format!(
        "\n{} · {} · budget {} · {} → {} concluded run(s)\n",
        clip(&case.case, 60),
        clip(&case.model, 60),
        case.budget,
        case.before.concluded,
        case.after.concluded
    ));
    for d in &case.metrics {
        out.push_str(&delta_line(d.metric.label(), d));
    }
    for first in &case.first_tools {
        let label = format!(
            "first: {}{}",
            clip(&first.tool, 40),
            if first.new { " (new)" } else { "" }
        );
        out.push_str(&delta_line(&label, &first.share));
    }
    if !case.new_tools.is_empty() {
        let names: Vec<String> = case.new_tools.iter().map(|t| clip(t, 60)).collect();
        out.push_str(&format!(
            "  never called before in the suite's history: {}\n",
            names.join(", ")
        ));
    }
}

fn history_text(out: &mut String, document: &AgentCompareDocument) {
    let history = &document.history;
    if history.new_tools.is_empty() {
        out.push_str(&format!(
            "\nno tool new to the suite's history ({} tool(s) known)\n",
            history.known.len()
        ));
        return;
    }
    out.push_str("\ntools the suite's history never saw called:\n");
    for tool in &history.new_tools {
        let cases: Vec<String> = tool.cases.iter().map(|c| clip(c, 60)).collect();
        out.push_str(&format!(
            "  {}: {} run(s) of {} case(s) ({}){}\n",
            clip(&tool.tool, 60),
            tool.runs,
            tool.cases.len(),
            cases.join(", "),
            if tool.acknowledged {
                " — acknowledged".to_owned()
            } else {
                format!("; acknowledge with --acknowledge {}", clip(&tool.tool, 60))
            }
        ));
    }
}

/// Why a case and model were left out, in words.
pub fn not_compared_why(reason: NotComparedReason) -> &'static str {
    match reason {
        NotComparedReason::OnlyBefore => "run on BEFORE only",
        NotComparedReason::OnlyAfter => "run on AFTER only",
        NotComparedReason::CaseDiffers => {
            "the case differs between the sides (budget, turns, checks or seed)"
        }
        NotComparedReason::NothingConcluded => "a side has no concluded run of it",
    }
}

/// The last line: what the exit code says.
pub fn verdict_line(document: &AgentCompareDocument) -> String {
    let s = &document.summary;
    let tail = format!(
        "{} real and worse, {} real and better, {} first-tool change(s), {} within noise; \
         {} new tool(s) unacknowledged",
        s.worse, s.better, s.changed, s.within_noise, s.unacknowledged_tools
    );
    match document.exit_code {
        3 => format!(
            "INCOMPLETE: a case has too few concluded runs for a noise floor (rerun with --runs \
             N of at least {} on both sides) or none at all; {tail} (exit 3)",
            document.noise.min_runs
        ),
        1 => format!("WORSE: {tail} (exit 1)"),
        _ => format!("NO REAL REGRESSION: {tail} (exit 0)"),
    }
}

#[derive(Serialize)]
struct View {
    schema: String,
    generator: String,
    sides: Vec<SideView>,
    rule: String,
    handed_changes: Vec<(String, String)>,
    notes: Vec<String>,
    overall: Vec<GroupView>,
    cases: Vec<GroupView>,
    history: HistoryView,
    not_compared: Vec<(String, String, String)>,
    verdict: String,
    exit_code: i64,
}

#[derive(Serialize)]
struct SideView {
    label: String,
    source: String,
    driver: String,
    runs: u32,
    seed: Option<u64>,
    handed: String,
    server: String,
    server_manifest: Option<String>,
}

/// A table of deltas: overall for a model, or one case.
#[derive(Serialize)]
struct GroupView {
    anchor: String,
    title: String,
    subtitle: String,
    rows: Vec<RowView>,
    new_tools: Vec<String>,
    worse: bool,
}

#[derive(Serialize)]
struct RowView {
    label: String,
    before: String,
    after: String,
    delta: String,
    floor: String,
    verdict: String,
    class: String,
}

#[derive(Serialize)]
struct HistoryView {
    sources: Vec<String>,
    known: Vec<String>,
    new_tools: Vec<(String, u32, String, bool)>,
}

fn row(label: String, d: &MetricDelta) -> RowView {
    RowView {
        label,
        before: value(d.metric, d.before),
        after: value(d.metric, d.after),
        delta: amount(d.metric, d.delta, true),
        floor: amount(d.metric, d.floor, false),
        verdict: d.verdict.as_str().to_owned(),
        class: match d.verdict {
            DeltaVerdict::Worse => "v-fail",
            DeltaVerdict::Better => "v-pass",
            DeltaVerdict::Changed => "v-untestable",
            _ => "v-skip",
        }
        .to_owned(),
    }
}

fn view(document: &AgentCompareDocument) -> View {
    let side = |label: &str, s: &CompareSide| SideView {
        label: label.to_owned(),
        source: s.source.clone(),
        driver: s.driver.to_string(),
        runs: s.runs,
        seed: s.seed,
        handed: handed(s),
        server: s.server.join(" "),
        server_manifest: s.server_manifest.clone(),
    };
    View {
        schema: document.schema.clone(),
        generator: document.generator.clone(),
        sides: vec![
            side("Before", &document.before),
            side("After", &document.after),
        ],
        rule: document.noise.rule.clone(),
        handed_changes: document
            .handed_changes
            .iter()
            .map(|c| (c.tool.clone(), c.what.join(", ")))
            .collect(),
        notes: document.notes.clone(),
        overall: document.overall.iter().map(overall_view).collect(),
        cases: document.cases.iter().map(case_view).collect(),
        history: HistoryView {
            sources: document.history.sources.clone(),
            known: document.history.known.clone(),
            new_tools: document
                .history
                .new_tools
                .iter()
                .map(|t| (t.tool.clone(), t.runs, t.cases.join(", "), t.acknowledged))
                .collect(),
        },
        not_compared: document
            .not_compared
            .iter()
            .map(|n| {
                (
                    n.case.clone(),
                    n.model.clone(),
                    not_compared_why(n.reason).to_owned(),
                )
            })
            .collect(),
        // The badge beside it already says WORSE, INCOMPLETE or the like.
        verdict: verdict_line(document)
            .split_once(": ")
            .map(|(_, rest)| rest.to_owned())
            .unwrap_or_default(),
        exit_code: document.exit_code,
    }
}

fn overall_view(model: &ModelComparison) -> GroupView {
    let rows: Vec<RowView> = model
        .metrics
        .iter()
        .map(|d| row(d.metric.label().to_owned(), d))
        .collect();
    GroupView {
        anchor: format!("overall-{}", anchor_part(&model.model)),
        title: format!("All cases · {}", model.model),
        subtitle: format!(
            "{} case(s): each measure is the mean of the cases' means",
            model.cases
        ),
        worse: model
            .metrics
            .iter()
            .any(|d| d.verdict == DeltaVerdict::Worse),
        rows,
        new_tools: Vec::new(),
    }
}

fn case_view(case: &CaseComparison) -> GroupView {
    let mut rows: Vec<RowView> = case
        .metrics
        .iter()
        .map(|d| row(d.metric.label().to_owned(), d))
        .collect();
    for first in &case.first_tools {
        let label = format!(
            "first tool {}{}",
            first.tool,
            if first.new { " (new)" } else { "" }
        );
        rows.push(row(label, &first.share));
    }
    GroupView {
        anchor: format!(
            "case-{}-{}",
            anchor_part(&case.case),
            anchor_part(&case.model)
        ),
        title: format!("{} · {}", case.case, case.model),
        subtitle: format!(
            "budget {} · {} → {} concluded run(s) ({} and {} untestable)",
            case.budget,
            case.before.concluded,
            case.after.concluded,
            case.before.untestable,
            case.after.untestable
        ),
        worse: case
            .metrics
            .iter()
            .any(|d| d.verdict == DeltaVerdict::Worse),
        rows,
        new_tools: case.new_tools.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use witness_model::agent::HandedManifest;
    use witness_model::vocab::DriverKind;

    fn side(manifest: Option<&str>, listed: Option<&str>) -> CompareSide {
        CompareSide {
            source: "runs/x/agent-run.json".into(),
            driver: DriverKind::Scripted,
            models: vec!["m".into()],
            runs: 10,
            seed: None,
            tools_source: if manifest.is_some() {
                "manifest"
            } else {
                "server"
            }
            .into(),
            manifest: manifest.map(|fingerprint| HandedManifest {
                file: "manifests/crm.json".into(),
                environment: "default".into(),
                fingerprint: fingerprint.into(),
            }),
            tools_fingerprint: format!("blake3:{}", "d".repeat(64)),
            server: vec!["srv".into()],
            server_manifest: listed.map(str::to_owned),
        }
    }

    /// A side line shows pin fingerprints only — the pin handed and the
    /// catalog listed — so two equal numbers mean the same catalog; the
    /// handed definitions' hash appears only, labelled, when the listing
    /// was not recorded.
    #[test]
    fn a_side_line_never_sets_a_definitions_hash_beside_a_pins() {
        let pinned = side_line("before", &side(Some("blake3:aaaa"), Some("blake3:bbbb")));
        assert!(pinned.contains("the pinned manifest manifests/crm.json (blake3:aaaa); the server listed blake3:bbbb"), "{pinned}");
        let live = side_line("after ", &side(None, Some("blake3:bbbb")));
        assert!(
            live.contains("handed the server's own tools; the server listed blake3:bbbb"),
            "{live}"
        );
        assert!(!live.contains("dddd"), "{live}");
        let unrecorded = side_line("after ", &side(None, None));
        assert!(
            unrecorded
                .contains("handed the server's own tools (definitions blake3:dddddddddddddddd)\n"),
            "{unrecorded}"
        );
    }
}

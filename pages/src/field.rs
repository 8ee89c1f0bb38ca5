//! The field study (`field.json`, `mcp-witness.field/v1`) as the evaluation
//! page shows it: per hint how the published declarations fared, what the
//! planted lies' audits caught, what the tools that leave a hint unset were
//! seen to do, every false failure, and each server with its audits.
//!
//! Everything a server sent (tool names, reasons quoting its answers) is
//! passed to the template as text, which escapes it; links are built from
//! our own audit names only, and only to reports that were rendered.

use std::path::Path;

use serde::Serialize;
use witness_model::field::{FieldDocument, FieldHintTally, FieldServer, audit_stem};
use witness_text::clip_raw;

use crate::charts::{self, Chart, Group};
use crate::{anchor_part, audit_stem as linked_stem, report_file};

/// Bound on a reason shown on the page; the dataset keeps all of it.
const MAX_WHY: usize = 300;

#[derive(Debug, Serialize)]
pub struct FieldView {
    pub raw: String,
    /// `field.jsonl` and `field.csv`, where they are.
    pub dataset: Vec<(String, String)>,
    pub method: String,
    pub findings: Vec<String>,
    pub claims_chart: Chart,
    pub hints: Vec<HintRow>,
    pub lies_chart: Chart,
    pub lies: Vec<LieKindRow>,
    /// Absent when the document predates the unset tally.
    pub unset_chart: Option<Chart>,
    pub unset_findings: Vec<String>,
    pub unset: Vec<UnsetRow>,
    pub false_failures: Vec<FailureRow>,
    pub failures: String,
    pub servers: Vec<ServerRow>,
}

#[derive(Debug, Serialize)]
pub struct Counted {
    pub why: String,
    pub count: usize,
}

#[derive(Debug, Serialize)]
pub struct HintRow {
    pub hint: String,
    pub declared: usize,
    pub declared_true: usize,
    pub claims: usize,
    pub holds: usize,
    pub broken: usize,
    pub untested: usize,
    pub untested_why: Vec<Counted>,
    pub false_failures: usize,
}

#[derive(Debug, Serialize)]
pub struct LieKindRow {
    pub lie: String,
    pub hint: String,
    pub planted: usize,
    pub caught: usize,
    pub recall: String,
    /// Lies whose audit called the lying tool successfully.
    pub exercised: usize,
    pub missed_why: Vec<Counted>,
}

#[derive(Debug, Serialize)]
pub struct UnsetRow {
    pub hint: String,
    /// `seen to write`, ...: what the suggested value says.
    pub seen: String,
    pub tools: usize,
    pub suggested: usize,
    pub silent: usize,
    pub kept_content: usize,
    pub untestable: usize,
    pub not_exercised: usize,
    pub no_verdict: usize,
    pub with_truth: usize,
    pub truth_unsafe: usize,
    pub confirmed: usize,
    pub contradicted: usize,
    pub silent_unsafe: usize,
    pub untestable_why: Vec<Counted>,
    pub not_exercised_why: Vec<Counted>,
}

#[derive(Debug, Serialize)]
pub struct FailureRow {
    pub server: String,
    pub server_anchor: String,
    pub variant: String,
    pub check: String,
    pub tool: String,
    pub report: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct ServerRow {
    pub anchor: String,
    pub id: String,
    pub kind: String,
    pub package: String,
    pub error: Option<String>,
    pub exercised: String,
    pub annotated: usize,
    pub seed_calls: usize,
    pub truth: bool,
    pub lies: String,
    pub failures: String,
    pub outcome: String,
    pub report: Option<String>,
    pub lie_audits: Vec<LieAudit>,
}

#[derive(Debug, Serialize)]
pub struct LieAudit {
    pub tool: String,
    pub lie: String,
    pub caught: bool,
    pub checks: String,
    pub missed_why: Option<String>,
    pub report: Option<String>,
}

/// The lie a hint's tally counts, as `FieldLie::lie` spells it.
fn lie_of(hint: &str) -> Option<&'static str> {
    match hint {
        "readOnlyHint" => Some("read-only"),
        "destructiveHint" => Some("non-destructive"),
        "idempotentHint" => Some("idempotent"),
        _ => None,
    }
}

/// What a suggestion of a hint's less safe value says was seen.
fn seen(hint: &str) -> String {
    match hint {
        "readOnlyHint" => "seen to write (readOnlyHint: false)".into(),
        "destructiveHint" => "seen to delete or overwrite (destructiveHint: true)".into(),
        "idempotentHint" => {
            "seen to change more on an identical repeat (idempotentHint: false)".into()
        }
        "openWorldHint" => "seen to reach the network (openWorldHint: true)".into(),
        other => format!("the less safe {other}"),
    }
}

fn ratio(part: usize, whole: usize) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64)
}

fn percent(part: usize, whole: usize) -> String {
    ratio(part, whole).map_or_else(|| "—".into(), |r| format!("{:.0}%", r * 100.0))
}

fn counted(counts: &[witness_model::field::FieldCount]) -> Vec<Counted> {
    counts
        .iter()
        .map(|c| Counted {
            why: clip_raw(&c.why, MAX_WHY),
            count: c.count,
        })
        .collect()
}

/// The evidence report of `audits/<stem>.json`, when it is rendered.
fn report(data: &Path, stem: &str) -> Option<String> {
    let relative = format!("audits/{stem}.json");
    linked_stem(&relative)
        .filter(|_| data.join(&relative).is_file())
        .map(report_file)
}

/// The audit a failure was found in: the honest one, or the lie's
/// (`TOOL=KIND`).
fn variant_stem(id: &str, variant: &str) -> String {
    match variant.rsplit_once('=') {
        Some((tool, kind)) if variant != "honest" => audit_stem(id, Some((tool, kind))),
        _ => audit_stem(id, None),
    }
}

/// The section over `field.json`; `data_href` leads from the page to it.
pub fn experiment_view(doc: &FieldDocument, data: &Path, data_href: &str) -> FieldView {
    let t = &doc.totals;
    let mut findings = vec![
        format!(
            "{} of {} servers ran; {} of {} tools listed were exercised by the honest audits ({}).",
            t.servers_run,
            t.servers,
            t.tools_exercised,
            t.tools,
            percent(t.tools_exercised, t.tools)
        ),
        format!(
            "{} of {} servers annotate at all; {} of {} tools carry annotations.",
            t.servers_annotating, t.servers_run, t.tools_annotated, t.tools
        ),
        format!(
            "{} of {} planted lies caught ({}).",
            t.lies_caught,
            t.lies_planted,
            percent(t.lies_caught, t.lies_planted)
        ),
        format!(
            "{} false failures against the ground truth, {} confirmed, {} unjudged (no truth for the tool, or EFF-05).",
            t.false_failures, t.confirmed_failures, t.unjudged_failures
        ),
    ];
    let claims: usize = doc.hints.iter().map(|h| h.claims).sum();
    let broken: usize = doc.hints.iter().map(|h| h.broken).sum();
    findings.push(format!(
        "Of {claims} published claims (a hint declared with its safer value), {} held, {broken} broken, {} not tested.",
        doc.hints.iter().map(|h| h.holds).sum::<usize>(),
        doc.hints.iter().map(|h| h.untested).sum::<usize>(),
    ));

    let claims_chart = charts::grouped(
        "Published claims per hint: the share that held, broke or could not be tested in the honest audits",
        &["holds", "broken", "not tested"],
        &doc.hints
            .iter()
            .map(|h| Group {
                label: h.hint.clone(),
                values: vec![
                    ratio(h.holds, h.claims),
                    ratio(h.broken, h.claims),
                    ratio(h.untested, h.claims),
                ],
            })
            .collect::<Vec<_>>(),
    );
    let lies: Vec<LieKindRow> = doc
        .hints
        .iter()
        .filter_map(|h| lie_of(&h.hint).map(|lie| lie_row(doc, h, lie)))
        .collect();
    let lies_chart = charts::grouped(
        "Planted lies per kind: the share caught, and the share whose lying tool its audit called successfully",
        &["caught", "tool exercised"],
        &lies
            .iter()
            .map(|l| Group {
                label: l.lie.clone(),
                values: vec![ratio(l.caught, l.planted), ratio(l.exercised, l.planted)],
            })
            .collect::<Vec<_>>(),
    );
    let unset: Vec<UnsetRow> = doc
        .hints
        .iter()
        .filter_map(|h| h.unset.as_ref().map(|u| (h, u)))
        .map(|(h, u)| UnsetRow {
            hint: h.hint.clone(),
            seen: seen(&h.hint),
            tools: u.tools,
            suggested: u.suggested,
            silent: u.silent,
            kept_content: u.kept_content,
            untestable: u.untestable,
            not_exercised: u.not_exercised,
            no_verdict: u.no_verdict,
            with_truth: u.with_truth,
            truth_unsafe: u.truth_unsafe,
            confirmed: u.suggested_confirmed,
            contradicted: u.suggested_contradicted,
            silent_unsafe: u.silent_unsafe,
            untestable_why: counted(&u.untestable_why),
            not_exercised_why: counted(&u.not_exercised_why),
        })
        .collect();
    let unset_findings = unset
        .iter()
        .map(|u| {
            let mut line = format!(
                "{}: of {} tools that leave it unset, {} {}; {} judged with nothing seen against the safer value{}; {} untestable; {} not exercised.",
                u.hint,
                u.tools,
                u.suggested,
                u.seen,
                u.silent + u.kept_content,
                if u.kept_content > 0 {
                    format!(" ({} of them changed existing content and kept it)", u.kept_content)
                } else {
                    String::new()
                },
                u.untestable,
                u.not_exercised
            );
            if u.with_truth > 0 {
                line.push_str(&format!(
                    " Against the ground truth ({} of them, {} with the less safe value): {} suggestions confirmed, {} contradicted; {} judged silent though the truth says otherwise.",
                    u.with_truth, u.truth_unsafe, u.confirmed, u.contradicted, u.silent_unsafe
                ));
            }
            line
        })
        .collect();
    let unset_chart = (!unset.is_empty()).then(|| {
        charts::grouped(
            "Tools that leave each hint unset: the share seen to take the less safe value, judged silent, and not judged",
            // Three series, as the page's palette has three colours.
            &["seen", "silent", "not judged"],
            &unset
                .iter()
                .map(|u| Group {
                    label: u.hint.clone(),
                    values: vec![
                        ratio(u.suggested, u.tools),
                        ratio(u.silent + u.kept_content, u.tools),
                        ratio(u.untestable + u.not_exercised + u.no_verdict, u.tools),
                    ],
                })
                .collect::<Vec<_>>(),
        )
    });
    let false_failures = doc
        .servers
        .iter()
        .flat_map(|s| {
            s.failures
                .iter()
                .filter(|f| f.judged == "false")
                .map(move |f| FailureRow {
                    server: s.id.clone(),
                    server_anchor: server_anchor(&s.id),
                    variant: f.variant.clone(),
                    check: f.check.clone(),
                    tool: f.tool.clone(),
                    report: report(data, &variant_stem(&s.id, &f.variant)),
                })
        })
        .collect();
    let dataset = ["field.jsonl", "field.csv"]
        .into_iter()
        .filter(|name| data.join(name).is_file())
        .map(|name| (name.to_owned(), format!("{data_href}{name}")))
        .collect();
    FieldView {
        raw: format!("{data_href}field.json"),
        dataset,
        method: format!(
            "half: {} · plan: {} (the planner chose every call) · timeout {} ms · settle {} ms · {}",
            doc.half, doc.plan, doc.timeout_ms, doc.settle_ms, doc.generator
        ),
        findings,
        claims_chart,
        hints: doc.hints.iter().map(hint_row).collect(),
        lies_chart,
        lies,
        unset_chart,
        unset_findings,
        unset,
        false_failures,
        failures: format!(
            "{} false · {} confirmed · {} unjudged",
            t.false_failures, t.confirmed_failures, t.unjudged_failures
        ),
        servers: doc.servers.iter().map(|s| server_row(s, data)).collect(),
    }
}

fn hint_row(h: &FieldHintTally) -> HintRow {
    HintRow {
        hint: h.hint.clone(),
        declared: h.declared,
        declared_true: h.declared_true,
        claims: h.claims,
        holds: h.holds,
        broken: h.broken,
        untested: h.untested,
        untested_why: counted(&h.untested_why),
        false_failures: h.false_failures,
    }
}

fn lie_row(doc: &FieldDocument, h: &FieldHintTally, lie: &str) -> LieKindRow {
    let exercised = doc
        .servers
        .iter()
        .flat_map(|s| &s.lies)
        .filter(|l| l.lie == lie && l.exercised)
        .count();
    LieKindRow {
        lie: lie.to_owned(),
        hint: h.hint.clone(),
        planted: h.lies_planted,
        caught: h.lies_caught,
        recall: percent(h.lies_caught, h.lies_planted),
        exercised,
        missed_why: counted(&h.missed_why),
    }
}

fn server_anchor(id: &str) -> String {
    format!("field-{}", anchor_part(id))
}

fn server_row(s: &FieldServer, data: &Path) -> ServerRow {
    let judged = |j: &str| s.failures.iter().filter(|f| f.judged == j).count();
    ServerRow {
        anchor: server_anchor(&s.id),
        id: s.id.clone(),
        kind: s.kind.clone(),
        package: format!("{} {}@{}", s.registry, s.package, s.version),
        error: s.error.as_deref().map(|e| clip_raw(e, MAX_WHY)),
        exercised: format!(
            "{}/{} ({})",
            s.exercised,
            s.tools,
            percent(s.exercised, s.tools)
        ),
        annotated: s.annotated,
        seed_calls: s.seed_calls,
        truth: s.truth,
        lies: format!(
            "{}/{}",
            s.lies.iter().filter(|l| l.caught).count(),
            s.lies.len()
        ),
        failures: format!(
            "{} false · {} confirmed · {} unjudged",
            judged("false"),
            judged("confirmed"),
            judged("unjudged")
        ),
        outcome: format!(
            "exit {}{}",
            s.exit_code,
            if s.complete || s.error.is_some() {
                ""
            } else {
                ", incomplete"
            }
        ),
        report: report(data, &audit_stem(&s.id, None)),
        lie_audits: s
            .lies
            .iter()
            .map(|l| LieAudit {
                tool: l.tool.clone(),
                lie: l.lie.clone(),
                caught: l.caught,
                checks: l.checks.join(", "),
                missed_why: l.missed_why.as_deref().map(|w| clip_raw(w, MAX_WHY)),
                report: report(data, &audit_stem(&s.id, Some((&l.tool, &l.lie)))),
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use witness_model::field::{
        FIELD_SCHEMA, FieldCount, FieldFailure, FieldLie, FieldTotals, FieldUnsetTally,
    };

    use super::*;

    const HOSTILE: &str = "<script>alert(1)</script>";

    fn document() -> FieldDocument {
        let lie = |tool: &str, lie: &str, caught: bool| FieldLie {
            tool: tool.into(),
            lie: lie.into(),
            caught,
            checks: if caught {
                vec!["EFF-01".into()]
            } else {
                vec![]
            },
            exercised: caught,
            missed_why: (!caught).then(|| "untestable: <img src=x onerror=alert(2)>".into()),
            exit_code: 1,
        };
        let server = FieldServer {
            id: "srv".into(),
            kind: "notes".into(),
            registry: "pypi".into(),
            package: "srv-mcp".into(),
            version: "1.0.0".into(),
            truth: true,
            tools: 3,
            exercised: 2,
            exit_code: 1,
            complete: true,
            lies: vec![
                lie("save", "read-only", true),
                lie(HOSTILE, "read-only", false),
            ],
            failures: vec![FieldFailure {
                variant: "save=read-only".into(),
                check: "EFF-03".into(),
                tool: "\u{202E}list".into(),
                judged: "false".into(),
            }],
            ..FieldServer::default()
        };
        let hint = |name: &str| FieldHintTally {
            hint: name.into(),
            declared: 1,
            declared_true: 1,
            claims: 1,
            holds: 1,
            unset: Some(FieldUnsetTally {
                tools: 3,
                suggested: 1,
                silent: 1,
                not_exercised: 1,
                not_exercised_why: vec![FieldCount {
                    why: format!("not exercised: {HOSTILE}"),
                    count: 1,
                }],
                with_truth: 3,
                truth_unsafe: 2,
                suggested_confirmed: 1,
                silent_unsafe: 1,
                ..FieldUnsetTally::default()
            }),
            ..FieldHintTally::default()
        };
        let mut read_only = hint("readOnlyHint");
        read_only.lies_planted = 2;
        read_only.lies_caught = 1;
        FieldDocument {
            schema: FIELD_SCHEMA.into(),
            generator: "mcp-witness test".into(),
            plan: "none".into(),
            timeout_ms: 20_000,
            settle_ms: 100,
            half: "subset".into(),
            hints: vec![
                read_only,
                hint("destructiveHint"),
                hint("idempotentHint"),
                hint("openWorldHint"),
            ],
            totals: FieldTotals {
                servers: 1,
                servers_run: 1,
                servers_with_truth: 1,
                servers_annotating: 0,
                tools: 3,
                tools_exercised: 2,
                lies_planted: 2,
                lies_caught: 1,
                false_failures: 1,
                ..FieldTotals::default()
            },
            servers: vec![server],
        }
    }

    fn page(data: &Path) -> String {
        crate::render_index(data, "").unwrap_or_else(|e| panic!("{e:#}"))
    }

    /// The field section alone, so that what is asserted is its own.
    fn section(html: &str) -> &str {
        let start = html.find("<section id=\"field\">").unwrap_or(0);
        let end = html[start..]
            .find("</section>")
            .map_or(html.len(), |e| start + e);
        &html[start..end]
    }

    #[test]
    fn the_section_shows_every_tally_escapes_what_servers_sent_and_links_rendered_audits() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let data = dir.path();
        let text = serde_json::to_string_pretty(&document()).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(data.join("field.json"), text).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(data.join("field.csv"), "server\n").unwrap_or_else(|e| panic!("{e}"));
        std::fs::create_dir_all(data.join("audits")).unwrap_or_else(|e| panic!("{e}"));
        for stem in ["field-srv", "field-srv-save-read-only"] {
            std::fs::write(data.join(format!("audits/{stem}.json")), "{}")
                .unwrap_or_else(|e| panic!("{e}"));
        }
        let html = page(data);
        let field = section(&html);
        assert!(
            field.contains("1 of 2 planted lies caught (50%)"),
            "{field}"
        );
        assert!(field.contains("0 of 1 servers annotate at all"), "{field}");
        assert!(
            field.contains("of 3 tools that leave it unset, 1 seen to write (readOnlyHint: false)"),
            "{field}"
        );
        assert!(field.contains("1 suggestions confirmed, 0 contradicted"));
        assert_eq!(
            field.matches("<svg class=\"chart\"").count(),
            3,
            "three charts"
        );
        assert!(
            !field.contains("class=\"s3\""),
            "no series beyond the three the style sheet colours"
        );
        // Links only to reports that exist, by our own names.
        assert!(field.contains("href=\"effect-report-field-srv.html\""));
        assert!(field.contains("href=\"effect-report-field-srv-save-read-only.html\""));
        assert!(field.contains("href=\"field.csv\"") && !field.contains("href=\"field.jsonl\""));
        // The false failure, found in the lie's audit, links to that audit.
        assert!(
            field.contains(
                "<a href=\"effect-report-field-srv-save-read-only.html\">save=read-only</a>"
            ),
            "{field}"
        );
        // Nothing a server sent is markup.
        assert!(!html.contains("<script>alert"), "{field}");
        assert!(!html.contains("<img src=x"));
        assert!(field.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(!html.contains('\u{202E}'));
        assert!(field.contains(">U+202E</span>list"));
        assert!(html.contains("<a href=\"#field\">Field study</a>"));
        assert!(
            field.contains("left unset, why not judged: not exercised: &lt;script&gt;"),
            "{field}"
        );
        assert_eq!(page(data), html, "the same document renders the same bytes");
    }

    #[test]
    fn summary_md_tabulates_the_field_study() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let data = dir.path();
        let text = serde_json::to_string(&document()).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(data.join("field.json"), text).unwrap_or_else(|e| panic!("{e}"));
        crate::render_all(data, data).unwrap_or_else(|e| panic!("{e:#}"));
        let summary = std::fs::read_to_string(data.join("summary.md")).unwrap_or_default();
        assert!(summary.contains("## Field study"), "{summary}");
        assert!(
            summary.contains("| readOnlyHint | 1 | 1 | 1 | 0 | 0 | 1/2 | 0 |"),
            "{summary}"
        );
        assert!(
            summary.contains("| destructiveHint | 3 | 1 | 1 | 0 | 0 | 1 | 1 / 0 | 1 |"),
            "{summary}"
        );
        assert!(data.join("index.html").is_file());
    }

    #[test]
    fn a_missing_or_foreign_field_json_is_a_sentence_not_a_failure() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let data = dir.path();
        assert!(section(&page(data)).contains("No field.json in this results directory"));
        std::fs::write(data.join("field.json"), "{").unwrap_or_else(|e| panic!("{e}"));
        assert!(section(&page(data)).contains("could not be shown: field.json is not JSON"));
        std::fs::write(
            data.join("field.json"),
            format!(r#"{{"schema": "mcp-witness.field/v2{HOSTILE}"}}"#),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let html = page(data);
        assert!(section(&html).contains("field.json is a mcp-witness.field/v2&lt;script&gt;"));
        assert!(!html.contains("<script>alert"));
        // A document from before the unset tally: the rest shows, the
        // tally says it is not there.
        let mut old = document();
        for hint in &mut old.hints {
            hint.unset = None;
        }
        let text = serde_json::to_string(&old).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(data.join("field.json"), text).unwrap_or_else(|e| panic!("{e}"));
        let html = page(data);
        let field = section(&html);
        assert!(
            field.contains("predates the tally of unset hints"),
            "{field}"
        );
        assert_eq!(field.matches("<svg class=\"chart\"").count(), 2);
    }
}

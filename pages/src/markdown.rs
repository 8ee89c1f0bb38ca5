//! `summary.md`: the experiments' tables in Markdown, read from their JSON.

use std::fmt::Write;

use std::collections::BTreeMap;
use witness_model::coverage::CoverageDocument;
use witness_model::field::FieldDocument;

use witness_model::experiments::{
    ClassifierScore, E1Document, E2Document, E2Object, E3Document, LifecycleDetectorScore,
    PostgresE2Document, PostgresE3Document,
};

use crate::{CaseView, num};

fn yes(b: bool) -> &'static str {
    if b { "true" } else { "false" }
}

/// Text from a case-study document, safe inside a Markdown table cell: no
/// cell break, no raw HTML, no link syntax, no invisible characters.
/// The classifiers' scores, as E2 and E2 on PostgreSQL tabulate them.
fn classifier_table(out: &mut String, classifiers: &[ClassifierScore]) {
    out.push_str("| Classifier | Accuracy | TP | FP | TN | FN |\n|---|---|---|---|---|---|\n");
    for c in classifiers {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} |",
            c.name,
            num(c.accuracy),
            c.tp,
            c.fp,
            c.tn,
            c.fn_
        );
    }
}

/// The lifecycle detectors' scores, as E3 and E3 on PostgreSQL tabulate
/// them.
fn detector_table(out: &mut String, detectors: &[LifecycleDetectorScore]) {
    out.push_str(
        "| Detector | Accuracy | False-effective | False-ineffective |\n|---|---|---|---|\n",
    );
    for d in detectors {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} |",
            d.name,
            num(d.accuracy),
            d.false_effective,
            d.false_ineffective
        );
    }
}

/// What `classifier` said of an object's authority, marked where wrong.
fn classified(object: &E2Object, classifier: &str) -> String {
    let v = object.predictions.get(classifier).copied().unwrap_or(false);
    if v == object.authority {
        yes(v).to_string()
    } else {
        format!("**{}** ✗", yes(v))
    }
}

/// What `detector` said of a scenario, marked where it is not `truth`.
fn judged(predictions: &BTreeMap<String, String>, truth: &str, detector: &str) -> String {
    let v = predictions.get(detector).cloned().unwrap_or_default();
    if v == truth {
        v
    } else {
        format!("**{v}** ✗")
    }
}

fn cell(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '|' => out.push_str("\\|"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '[' => out.push_str("\\["),
            ']' => out.push_str("\\]"),
            '\n' | '\r' => out.push(' '),
            c if witness_text::is_invisible(c) => {
                let _ = write!(out, "U+{:04X}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out
}

/// The Markdown for whichever documents exist.
pub fn markdown(
    e1: Option<&E1Document>,
    e2: Option<&E2Document>,
    e3: Option<&E3Document>,
    postgres: (Option<&PostgresE2Document>, Option<&PostgresE3Document>),
    cases: &[CaseView],
    coverage: Option<&CoverageDocument>,
    field: Option<&FieldDocument>,
) -> String {
    let mut out = String::from("# mcp-witness — experiment summary\n\n");
    out.push_str(
        "Controlled-testbed measurements of detection behaviour on planted inconsistencies, \
         not production prevalence. Every number below is read from the JSON documents beside \
         this file; `mcp-witness lab all` regenerates them.\n",
    );
    if let Some(e1) = e1 {
        out.push_str("\n## E1 — detection of annotation lies\n\n");
        out.push_str("| Detector | Channel | TP | FP | FN | Precision | Recall | F1 |\n|---|---|---|---|---|---|---|---|\n");
        for d in &e1.detectors {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} | {} |",
                d.name,
                d.channel,
                d.tp,
                d.fp,
                d.fn_,
                num(d.precision),
                num(d.recall),
                num(d.f1)
            );
        }
        out.push_str("\n| Variant | Lying tool | In response | Effect-aware | Response-level | Name heuristic |\n|---|---|---|---|---|---|\n");
        for v in &e1.variants {
            let flagged = |d: &str| {
                let tools = v.flagged.get(d).cloned().unwrap_or_default();
                if tools.is_empty() {
                    "—".to_string()
                } else {
                    tools.join(", ")
                }
            };
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} |",
                v.variant,
                v.lying_tool.as_deref().unwrap_or("—"),
                v.response_visible.map_or("—", yes),
                flagged("effect-aware"),
                flagged("response-level"),
                flagged("name-heuristic"),
            );
        }
    }
    if let Some(e2) = e2 {
        out.push_str("\n## E2 — persistence is not authority\n\n");
        classifier_table(&mut out, &e2.classifiers);
        out.push_str("\n| Object | Persistent | Authority (truth) | Persistence says | Name says | Probe says | Note |\n|---|---|---|---|---|---|---|\n");
        for o in &e2.objects {
            let say = |c: &str| classified(o, c);
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} |",
                o.object,
                yes(o.persistent),
                yes(o.authority),
                say("persistence"),
                say("name-keyword"),
                say("probe"),
                o.note.as_deref().unwrap_or("—")
            );
        }
    }
    if let Some(e3) = e3 {
        out.push_str("\n## E3 — effectiveness after lifecycle events\n\n");
        detector_table(&mut out, &e3.detectors);
        out.push_str("\n| Scenario | Truth | Existence says | Delegation says | Probe says | Probe basis |\n|---|---|---|---|---|---|\n");
        for s in &e3.scenarios {
            let say = |d: &str| judged(&s.predictions, &s.truth, d);
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} |",
                s.scenario,
                s.truth,
                say("existence"),
                say("delegation"),
                say("probe"),
                s.probe_basis
            );
        }
        out.push_str(
            "\n| Residual-revoke plan on | EFF-06 on revoke_api_key | Reason |\n|---|---|---|\n",
        );
        for r in &e3.residual_revoke {
            let _ = writeln!(
                out,
                "| {} | {} | {} |",
                r.variant, r.eff06_revoke_api_key, r.reason
            );
        }
    }
    if let Some(e2) = postgres.0 {
        let _ = write!(
            out,
            "\n## E2 on PostgreSQL — through {} `{}`\n\n",
            e2.server, e2.tool
        );
        classifier_table(&mut out, &e2.classifiers);
        out.push_str("\n| Object | Persistent | Authority (truth) | Persistence says | Name says | Probe says | Probe basis |\n|---|---|---|---|---|---|---|\n");
        for o in &e2.objects {
            let say = |c: &str| classified(o, c);
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} |",
                o.object,
                yes(o.persistent),
                yes(o.authority),
                say("persistence"),
                say("name-keyword"),
                say("probe"),
                cell(&o.probe_basis)
            );
        }
    }
    if let Some(e3) = postgres.1 {
        let _ = write!(
            out,
            "\n## E3 on PostgreSQL — through {} `{}`\n\n",
            e3.server, e3.tool
        );
        detector_table(&mut out, &e3.detectors);
        out.push_str("\n| Scenario | Role | Truth | Existence says | Delegation says | Probe says | Probe basis |\n|---|---|---|---|---|---|---|\n");
        for s in &e3.scenarios {
            let say = |d: &str| judged(&s.predictions, &s.truth, d);
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} |",
                s.scenario,
                s.role,
                s.truth,
                say("existence"),
                say("delegation"),
                say("probe"),
                cell(&s.probe_basis)
            );
        }
    }
    if !cases.is_empty() {
        out.push_str("\n## Case studies — published servers\n\n");
        out.push_str("| Server (pinned) | Store · observer | Annotations | Observed | Effect checks |\n|---|---|---|---|---|\n");
        for c in cases {
            let checks = if c.checks.is_empty() {
                "—".to_string()
            } else {
                c.checks
                    .iter()
                    .map(|k| {
                        format!(
                            "{} {} ({})",
                            cell(&k.id),
                            cell(&k.headline.to_uppercase()),
                            cell(&k.counts)
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("; ")
            };
            let _ = writeln!(
                out,
                "| {} | {} · {} | {}; {} | {} | {} |",
                cell(&c.server),
                cell(&c.store),
                cell(&c.observer),
                cell(&c.annotations),
                cell(&c.annotation_profile),
                cell(&c.observed),
                checks
            );
        }
        for c in cases.iter().filter(|c| !c.notes.is_empty()) {
            let _ = writeln!(out, "\n### {}\n", cell(&c.server));
            for note in &c.notes {
                let _ = writeln!(out, "- {}", cell(note));
            }
        }
    }
    if let Some(coverage) = coverage {
        coverage_markdown(&mut out, coverage);
    }
    if let Some(field) = field {
        field_markdown(&mut out, field);
    }
    out
}

/// The field study: its totals, then per hint the declared claims, the
/// lies and what the tools that leave it unset were seen to do.
fn field_markdown(out: &mut String, doc: &FieldDocument) {
    let t = &doc.totals;
    out.push_str("\n## Field study — published servers' annotations, no plan file\n\n");
    let _ = writeln!(
        out,
        "Half: {}. {} of {} servers ran, {} annotate at all; {} of {} tools exercised, {} annotated; \
         {} of {} planted lies caught; failing checks: {} false, {} confirmed, {} unjudged.\n",
        cell(&doc.half),
        t.servers_run,
        t.servers,
        t.servers_annotating,
        t.tools_exercised,
        t.tools,
        t.tools_annotated,
        t.lies_caught,
        t.lies_planted,
        t.false_failures,
        t.confirmed_failures,
        t.unjudged_failures
    );
    out.push_str("| Hint | Declaring | Claims | Holds | Broken | Not tested | Lies caught | False failures |\n|---|---|---|---|---|---|---|---|\n");
    for h in &doc.hints {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {}/{} | {} |",
            cell(&h.hint),
            h.declared,
            h.claims,
            h.holds,
            h.broken,
            h.untested,
            h.lies_caught,
            h.lies_planted,
            h.false_failures
        );
    }
    if doc.hints.iter().any(|h| h.unset.is_some()) {
        out.push_str("\n| Hint left unset | Tools | Seen (less safe value) | Silent | Kept content | Untestable | Not exercised | Suggestions confirmed / contradicted by the truth | Silent, truth less safe |\n|---|---|---|---|---|---|---|---|---|\n");
        for h in &doc.hints {
            let Some(u) = &h.unset else { continue };
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} | {} / {} | {} |",
                cell(&h.hint),
                u.tools,
                u.suggested,
                u.silent,
                u.kept_content,
                u.untestable,
                u.not_exercised,
                u.suggested_confirmed,
                u.suggested_contradicted,
                u.silent_unsafe
            );
        }
    }
}

/// The coverage experiment: one row per server, then what was not exercised.
fn coverage_markdown(out: &mut String, doc: &CoverageDocument) {
    out.push_str("\n## Coverage — the planner on published servers, no plan file\n\n");
    out.push_str("| Server (pinned) | Store | Exercised | Target | Values (tools using each kind) | Failing checks (false) | Restarts | Exit |\n|---|---|---|---|---|---|---|---|\n");
    for s in &doc.servers {
        let values = s
            .values
            .iter()
            .map(|(kind, n)| format!("{kind} in {n}"))
            .collect::<Vec<_>>()
            .join(", ");
        let _ = writeln!(
            out,
            "| {}@{} ({}) | {} | {}/{} ({}%) | {} {} | {} | {} ({}) | {} | {} |",
            cell(&s.package),
            cell(&s.version),
            cell(&s.installer),
            cell(&s.store),
            s.exercised,
            s.tools,
            s.percent,
            cell(&s.target),
            if s.met { "met" } else { "**missed**" },
            if values.is_empty() {
                "no arguments".to_owned()
            } else {
                cell(&values)
            },
            s.failures.len(),
            s.false_failures,
            s.restarts,
            s.exit_code
        );
    }
    for s in doc.servers.iter().filter(|s| !s.not_exercised.is_empty()) {
        let _ = writeln!(out, "\n### {} — not exercised\n", cell(&s.package));
        for t in &s.not_exercised {
            let _ = writeln!(
                out,
                "- {}: {}",
                cell(&t.tool),
                cell(t.why.as_deref().unwrap_or("no reason recorded"))
            );
        }
    }
}

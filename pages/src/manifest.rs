//! Renderings of a manifest diff: text for people and SARIF 2.1.0 for code
//! scanning. (JSON is the [`ManifestDiff`] document itself.)
//!
//! Everything a server wrote — tool names, descriptions, enum values — is
//! untrusted: the text rendering bounds it and makes control characters
//! visible with [`clip`]; SARIF carries it as JSON strings.

use std::fmt::Write;

use serde_json::{Value, json};

use witness_model::manifest::diff::{CLASSES, Change, ManifestDiff, Severity, WordOp};
use witness_text::clip;

/// A pin file one side of the diff was read from: where SARIF results point.
pub struct Artifact {
    /// As given on the command line.
    pub path: String,
    /// Its contents, to find the line each tool starts on.
    pub text: String,
}

/// The text rendering.
pub fn text(doc: &ManifestDiff) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "mcp-witness manifest diff");
    for (label, side) in [("old", &doc.old), ("new", &doc.new)] {
        let _ = writeln!(
            out,
            "  {label}: {}  (environment {}, {} tools, {})",
            clip(&side.source, 120),
            side.environment,
            side.tools,
            side.fingerprint
        );
    }
    if doc.cross_environment {
        let _ = writeln!(out, "  comparing across environments (--cross-environment)");
    }
    for note in &doc.notes {
        let _ = writeln!(out, "  note: {}", clip(note, 200));
    }
    for change in &doc.changes {
        change_text(&mut out, change);
    }
    measurements_text(&mut out, doc);
    let s = &doc.summary;
    let _ = writeln!(
        out,
        "\n{} change(s): {} breaking, {} behavioural, {} additive, {} metadata; {} undeclared, {} allowed",
        s.changes, s.breaking, s.behavioural, s.additive, s.metadata, s.undeclared, s.allowed
    );
    for entry in &doc.unused_allow {
        let _ = writeln!(
            out,
            "unused allow entry: {} {} (matched no change; remove it)",
            clip(&entry.tool, 80),
            entry.class.id()
        );
    }
    let verdict = match (s.changes, s.undeclared) {
        (0, _) => "UNCHANGED: the manifests are the same (exit 0)".to_owned(),
        (_, 0) => "ACCEPTED: every change is allowed (exit 0)".to_owned(),
        (_, n) => format!("CHANGED: {n} undeclared change(s) (exit 1)"),
    };
    let _ = writeln!(out, "{verdict}");
    out
}

fn change_text(out: &mut String, change: &Change) {
    let renamed = change
        .renamed_from
        .as_deref()
        .map(|old| format!(" (was {})", clip(old, 80)))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "\n{}{renamed}: {} [{}]{}",
        clip(&change.tool, 80),
        change.class.id(),
        change.severity.as_str(),
        if change.allowed { " ALLOWED" } else { "" }
    );
    let _ = writeln!(out, "    {}", clip(&change.summary, 300));
    if !change.words.is_empty() {
        let _ = writeln!(out, "    {}", word_diff_text(change));
    }
    let _ = writeln!(out, "    re-run: {}", clip(&change.rerun.join("; "), 400));
    if !change.measure.is_empty() {
        let ids: Vec<&str> = change.measure.iter().map(|m| m.id()).collect();
        let _ = writeln!(out, "    measure: {} (commands below)", ids.join(", "));
    }
    if let Some(reason) = &change.allow_reason {
        let _ = writeln!(out, "    allowed: {}", clip(reason, 200));
    }
}

/// The commands that measure the changes, once per measure.
fn measurements_text(out: &mut String, doc: &ManifestDiff) {
    if doc.measurements.is_empty() {
        return;
    }
    let _ = writeln!(out, "\nmeasure, don't guess:");
    for measurement in &doc.measurements {
        let _ = writeln!(
            out,
            "  {}: {}",
            measurement.measure.id(),
            clip(&measurement.what, 600)
        );
        for command in &measurement.commands {
            let _ = writeln!(out, "    {}", clip(command, 400));
        }
    }
}

/// `[-removed-]` and `{+added+}` inline, wdiff style; whitespace before a
/// changed run stays outside its markers.
fn word_diff_text(change: &Change) -> String {
    let mut line = String::new();
    for run in &change.words {
        let body = clip(&run.text, 400);
        let trimmed = body.trim_start();
        let lead = &body[..body.len() - trimmed.len()];
        match run.op {
            WordOp::Same => line.push_str(&body),
            WordOp::Removed => {
                let _ = write!(line, "{lead}[-{trimmed}-]");
            }
            WordOp::Added => {
                let _ = write!(line, "{lead}{{+{trimmed}+}}");
            }
        }
    }
    line
}

fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Breaking => "error",
        Severity::Behavioural => "warning",
        Severity::Additive | Severity::Metadata => "note",
    }
}

/// The 1-based line where `tool`'s entry starts in a pin file (the line of
/// its `"name"` key, at the indentation `manifest pin` writes).
fn tool_line(text: &str, tool: &str) -> Option<usize> {
    let needle = format!("      \"name\": {}", Value::String(tool.to_owned()));
    text.lines()
        .position(|l| l.strip_suffix(',').unwrap_or(l) == needle)
        .map(|i| i + 1)
}

fn artifact_uri(path: &str) -> String {
    if path.starts_with('/') {
        format!("file://{path}")
    } else {
        path.trim_start_matches("./").to_owned()
    }
}

/// A minimal, valid SARIF 2.1.0 log: one rule per change class, one result
/// per change. Allowed changes carry an external suppression with the
/// review's reason, so code scanning shows them as dismissed, not new.
pub fn sarif(doc: &ManifestDiff, artifacts: &[Artifact]) -> Value {
    let rules: Vec<Value> = CLASSES
        .iter()
        .map(|row| {
            json!({
                "id": format!("manifest/{}", row.id),
                "name": row.id,
                "shortDescription": {"text": row.what},
                "fullDescription": {"text": format!("{}. Can break: {}.", row.what, row.breaks)},
                "help": {"text": format!("Re-run: {}.", row.rerun.join("; "))},
                "defaultConfiguration": {"level": level(row.severity)},
                "properties": {"severity": row.severity.as_str(), "tags": ["mcp", "manifest-drift", row.severity.as_str()]},
            })
        })
        .collect();
    let results: Vec<Value> = doc
        .changes
        .iter()
        .map(|change| {
            let index = CLASSES
                .iter()
                .position(|row| row.class == change.class)
                .unwrap_or(0);
            let mut location = json!({
                "logicalLocations": [{
                    "name": change.tool,
                    "fullyQualifiedName": format!("{}{}", change.tool, change.location),
                    "kind": "function",
                }]
            });
            let names = [Some(change.tool.as_str()), change.renamed_from.as_deref()];
            let found = artifacts.iter().find_map(|a| {
                names
                    .iter()
                    .flatten()
                    .find_map(|n| tool_line(&a.text, n))
                    .map(|line| (a, Some(line)))
            });
            if let Some((artifact, line)) = found.or_else(|| artifacts.first().map(|a| (a, None))) {
                let mut physical = json!({
                    "artifactLocation": {"uri": artifact_uri(&artifact.path)},
                });
                if let Some(line) = line {
                    physical["region"] = json!({"startLine": line});
                }
                location["physicalLocation"] = physical;
            }
            let key = format!(
                "{}\u{0}{}\u{0}{}",
                change.tool,
                change.class.id(),
                change.location
            );
            let fingerprint = blake3::hash(key.as_bytes()).to_hex();
            let mut message = format!("{}: {}.", change.tool, change.summary);
            if !change.rerun.is_empty() {
                let _ = write!(message, " Re-run: {}.", change.rerun.join("; "));
            }
            let measure: Vec<&str> = change.measure.iter().map(|m| m.id()).collect();
            if !measure.is_empty() {
                let _ = write!(
                    message,
                    " Measure: {} (the text report ends with the commands).",
                    measure.join(", ")
                );
            }
            let mut result = json!({
                "ruleId": format!("manifest/{}", change.class.id()),
                "ruleIndex": index,
                "level": level(change.severity),
                "message": {"text": message},
                "locations": [location],
                "partialFingerprints": {"manifestChange/v1": &fingerprint.as_str()[..32]},
                "properties": {
                    "severity": change.severity.as_str(),
                    "checks": change.checks,
                    "measure": measure,
                    "allowed": change.allowed,
                },
            });
            if let Some(reason) = &change.allow_reason {
                result["suppressions"] = json!([{"kind": "external", "justification": reason}]);
            }
            result
        })
        .collect();
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "mcp-witness",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": rules,
            }},
            "results": results,
        }],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use witness_manifest::allow::AllowList;
    use witness_manifest::diff::build;
    use witness_model::manifest::Pin;
    use witness_model::manifest::diff::Side;

    fn doc() -> (ManifestDiff, Pin) {
        let old = Pin::from_catalog(
            &[
                json!({"name": "lookup_order", "description": "Look up an order by ID"}),
                json!({"name": "save_note", "annotations": {"readOnlyHint": false}}),
            ],
            "default",
            None,
        );
        let new = Pin::from_catalog(
            &[
                json!({"name": "lookup_order", "description": "Look up an order by ID. Prefer search_orders when the ID is unknown."}),
                json!({"name": "save_note", "annotations": {"readOnlyHint": true}}),
                json!({"name": "evil\u{1b}[2J", "description": "x"}),
            ],
            "default",
            None,
        );
        let d = build(
            Side::of("manifests/default.json".into(), &old),
            Side::of("live:server".into(), &new),
            &old,
            &new,
            &AllowList::default(),
            false,
        );
        (d, old)
    }

    #[test]
    fn text_shows_the_word_diff_the_checks_and_escapes_server_text() {
        let (d, _) = doc();
        let out = text(&d);
        assert!(
            out.contains(
                "Look up an order by ID{+. Prefer search_orders when the ID is unknown.+}"
            ),
            "{out}"
        );
        assert!(out.contains("save_note: annotation-claims-more-safety [behavioural]"));
        assert!(out.contains("EFF-01 on save_note"));
        assert!(!out.contains('\u{1b}'), "terminal escapes are made visible");
        assert!(out.contains("CHANGED: 3 undeclared change(s) (exit 1)"));
    }

    #[test]
    fn sarif_is_a_minimal_valid_log_pointing_at_the_pin() {
        let (d, old) = doc();
        let log = sarif(
            &d,
            &[Artifact {
                path: "manifests/default.json".into(),
                text: old.to_file_text(),
            }],
        );
        assert_eq!(log["version"], "2.1.0");
        let run = &log["runs"][0];
        assert_eq!(run["tool"]["driver"]["name"], "mcp-witness");
        assert_eq!(
            run["tool"]["driver"]["rules"].as_array().unwrap().len(),
            CLASSES.len()
        );
        let results = run["results"].as_array().unwrap();
        assert_eq!(results.len(), 3);
        for r in results {
            let index = r["ruleIndex"].as_u64().unwrap() as usize;
            assert_eq!(run["tool"]["driver"]["rules"][index]["id"], r["ruleId"]);
            assert!(["error", "warning", "note"].contains(&r["level"].as_str().unwrap()));
            assert!(r["message"]["text"].as_str().unwrap().len() > 5);
        }
        let save = results
            .iter()
            .find(|r| r["locations"][0]["logicalLocations"][0]["name"] == "save_note")
            .unwrap();
        assert_eq!(save["ruleId"], "manifest/annotation-claims-more-safety");
        let physical = &save["locations"][0]["physicalLocation"];
        assert_eq!(
            physical["artifactLocation"]["uri"],
            "manifests/default.json"
        );
        let line = physical["region"]["startLine"].as_u64().unwrap() as usize;
        let text = old.to_file_text();
        assert!(
            text.lines()
                .nth(line - 1)
                .unwrap()
                .contains("\"save_note\"")
        );
    }
}

//! Metadata findings: what a tool's own name, title, description and
//! schemas say that may mislead a client or the model reading them.
//!
//! A finding is never a verdict and changes no check. Each quotes the exact
//! span it is about, escaped (invisible characters written as `\u{200b}`),
//! with the JSON Pointer of the field it sits in and where in it; a string
//! shaped like a credential is quoted as its digest, never its value, and
//! its value is handed to redaction so it reaches no output either.
//!
//! What is looked for, and why each is written the way it is, is in
//! `docs/response-lane.md` ("Metadata findings"); the lists below are the
//! ones documented there.

use serde_json::Value;
use witness_model::audit::{MetadataFinding, MetadataKind, ToolEntry};

use witness_jail::redact::mask;

/// Description length past which a client is known to cut: Claude Code
/// passes on the first 2,048 characters of an MCP tool description.
pub const LONG_DESCRIPTION: usize = 2_048;

/// Findings kept per tool, so one tool of noise cannot bury the rest.
const MAX_PER_TOOL: usize = 20;

/// Characters of context quoted around a span.
const SPAN_MAX: usize = 120;

/// What a scan found, and the secret-shaped strings redaction must learn.
#[derive(Debug, Default)]
pub struct Scan {
    pub findings: Vec<MetadataFinding>,
    pub secrets: Vec<String>,
}

/// Scans every tool's metadata, in catalog order.
pub fn scan(tools: &[ToolEntry]) -> Scan {
    let mut out = Scan::default();
    for tool in tools {
        let mut found = Vec::new();
        for (field, text) in texts(tool) {
            scan_text(tool, &field, &text, &mut found, &mut out.secrets);
        }
        found.extend(shell_free_text(tool));
        found.truncate(MAX_PER_TOOL);
        out.findings.extend(found);
    }
    out.secrets.sort();
    out.secrets.dedup();
    out
}

/// Every text of a tool's metadata with its JSON Pointer: the name, title
/// and description, every string in its annotations and schemas, and every
/// property name in its schemas (a key is read by the model too).
fn texts(tool: &ToolEntry) -> Vec<(String, String)> {
    let mut out = vec![("/name".to_owned(), tool.name.clone())];
    let annotated_title = tool
        .annotations
        .as_ref()
        .and_then(|a| a.get("title"))
        .and_then(Value::as_str);
    if let Some(title) = &tool.title
        && annotated_title != Some(title.as_str())
    {
        out.push(("/title".into(), title.clone()));
    }
    if let Some(description) = &tool.description {
        out.push(("/description".into(), description.clone()));
    }
    for (root, value) in [
        ("/annotations", &tool.annotations),
        ("/inputSchema", &tool.input_schema),
        ("/outputSchema", &tool.output_schema),
    ] {
        if let Some(value) = value {
            strings(value, root, &mut out, 0);
        }
    }
    out
}

fn strings(value: &Value, at: &str, out: &mut Vec<(String, String)>, depth: usize) {
    if depth > 32 {
        return;
    }
    match value {
        Value::String(s) => out.push((at.to_owned(), s.clone())),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                strings(item, &format!("{at}/{i}"), out, depth + 1);
            }
        }
        Value::Object(map) => {
            for (key, inner) in map {
                let here = format!("{at}/{}", key.replace('~', "~0").replace('/', "~1"));
                out.push((here.clone(), key.clone()));
                strings(inner, &here, out, depth + 1);
            }
        }
        _ => {}
    }
}

fn finding(
    kind: MetadataKind,
    tool: &ToolEntry,
    field: &str,
    span: String,
    at: usize,
    detail: String,
) -> MetadataFinding {
    MetadataFinding {
        kind,
        tool: tool.name.clone(),
        field: field.to_owned(),
        span,
        at,
        detail,
    }
}

fn scan_text(
    tool: &ToolEntry,
    field: &str,
    text: &str,
    found: &mut Vec<MetadataFinding>,
    secrets: &mut Vec<String>,
) {
    for (start, end) in invisible_runs(text) {
        let count = text[start..end].chars().count();
        found.push(finding(
            MetadataKind::InvisibleCharacter,
            tool,
            field,
            witness_text::clip(&text[start..end], SPAN_MAX),
            char_at(text, start),
            format!(
                "{count} invisible or bidirectional character(s) in \u{ab}{}\u{bb}",
                context(text, start, end)
            ),
        ));
    }
    for (start, end, why) in instructions(text) {
        found.push(finding(
            MetadataKind::HiddenInstruction,
            tool,
            field,
            witness_text::clip(&text[start..end], SPAN_MAX),
            char_at(text, start),
            why.to_owned(),
        ));
    }
    for (start, end, what) in secret_shaped(text) {
        let secret = &text[start..end];
        secrets.push(secret.to_owned());
        found.push(finding(
            MetadataKind::SecretShaped,
            tool,
            field,
            mask(secret),
            char_at(text, start),
            format!("a string shaped like {what}, quoted here only as its digest"),
        ));
    }
    if field == "/description" {
        let length = text.chars().count();
        if length > LONG_DESCRIPTION {
            let cut = text
                .char_indices()
                .nth(LONG_DESCRIPTION)
                .map_or(text.len(), |(i, _)| i);
            found.push(finding(
                MetadataKind::LongDescription,
                tool,
                field,
                witness_text::clip(&text[cut..], SPAN_MAX),
                LONG_DESCRIPTION,
                format!(
                    "the description is {length} characters; clients that pass on the first {LONG_DESCRIPTION} (Claude Code does) drop everything from here on"
                ),
            ));
        }
    }
}

/// The character offset of byte `at`.
fn char_at(text: &str, at: usize) -> usize {
    text[..at].chars().count()
}

/// Up to 30 characters either side of a span, escaped, for the detail.
fn context(text: &str, start: usize, end: usize) -> String {
    let before: String = text[..start]
        .chars()
        .rev()
        .take(30)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    let after: String = text[end..].chars().take(30).collect();
    witness_text::clip(&format!("{before}{}{after}", &text[start..end]), SPAN_MAX)
}

/// Characters that change what is read without being seen. Line breaks and
/// tabs are ordinary text (`\r` too: Windows line endings are not hidden
/// text); tag characters (U+E0000–U+E007F) spell ASCII no one sees.
fn hidden(c: char) -> bool {
    c != '\r' && witness_text::is_invisible(c)
}

/// Byte ranges of maximal runs of hidden characters.
fn invisible_runs(text: &str) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    for (i, c) in text.char_indices() {
        if !hidden(c) {
            continue;
        }
        let end = i + c.len_utf8();
        match out.last_mut() {
            Some(run) if run.1 == i => run.1 = end,
            _ => out.push((i, end)),
        }
    }
    out
}

mod patterns;
use patterns::{instructions, secret_shaped, shell_free_text};

#[cfg(test)]
mod tests;

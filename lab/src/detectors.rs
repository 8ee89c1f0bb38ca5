//! The three E1 detectors. All read the same audit record; each may consult
//! only its own channel:
//!
//! - **effect-aware** — the EFF checks over out-of-band observed effects;
//! - **response-level** — tool responses only, held against the declared hints
//!   (what a wire-level auditor sees);
//! - **name heuristic** — tool names and descriptions only, held against the
//!   declared hints.
//!
//! The two baselines use the fixed lexicons below, documented in
//! docs/effect-aware-conformance.md. They were written from common tool
//! vocabulary before the experiment ran and are not adjusted to its results.

use std::collections::BTreeSet;

use serde_json::Value;

use witness_model::audit::{AuditReport, CallStatus, Verdict};

pub const EFFECT_AWARE: &str = "effect-aware";
pub const RESPONSE_LEVEL: &str = "response-level";
pub const NAME_HEURISTIC: &str = "name-heuristic";

/// Words in a response that report a write.
pub const RESPONSE_WRITE_WORDS: [&str; 26] = [
    "created",
    "saved",
    "stored",
    "written",
    "wrote",
    "inserted",
    "added",
    "updated",
    "modified",
    "registered",
    "minted",
    "recorded",
    "appended",
    "replaced",
    "revoked",
    "deleted",
    "removed",
    "erased",
    "dropped",
    "purged",
    "destroyed",
    "cleared",
    "uploaded",
    "sent",
    "posted",
    "moved",
];

/// Words in a response that report a deletion or an overwrite.
pub const RESPONSE_DELETE_WORDS: [&str; 9] = [
    "deleted",
    "removed",
    "erased",
    "dropped",
    "purged",
    "destroyed",
    "cleared",
    "revoked",
    "overwritten",
];

/// Verbs in a name or description that say a tool writes.
pub const NAME_WRITE_VERBS: [&str; 28] = [
    "create", "save", "store", "write", "insert", "add", "update", "set", "put", "post",
    "register", "mint", "append", "upload", "send", "modify", "edit", "replace", "delete",
    "remove", "erase", "drop", "purge", "revoke", "destroy", "clear", "rename", "move",
];

/// Verbs in a name or description that say a tool deletes or overwrites.
pub const NAME_DELETE_VERBS: [&str; 9] = [
    "delete",
    "remove",
    "erase",
    "drop",
    "purge",
    "destroy",
    "clear",
    "revoke",
    "overwrite",
];

/// Tools with at least one failing EFF check.
pub fn effect_aware(report: &AuditReport) -> BTreeSet<String> {
    report
        .checks
        .iter()
        .filter(|c| c.verdict == Verdict::Fail)
        .map(|c| c.tool.clone())
        .collect()
}

/// Tools whose successful responses report a write while the tool is declared
/// read-only, or a deletion while it is declared non-destructive.
pub fn response_level(report: &AuditReport) -> BTreeSet<String> {
    let mut flagged = BTreeSet::new();
    for call in report
        .calls
        .iter()
        .filter(|c| c.outcome.status == CallStatus::Ok)
    {
        let Some(tool) = report.tool(&call.tool) else {
            continue;
        };
        let Some(response) = &call.response else {
            continue;
        };
        let words = words(&response_text(response));
        let says = |lexicon: &[&str]| words.iter().any(|w| lexicon.contains(&w.as_str()));
        if (tool.hints.read_only == Some(true) && says(&RESPONSE_WRITE_WORDS))
            || (tool.hints.destructive == Some(false) && says(&RESPONSE_DELETE_WORDS))
        {
            flagged.insert(call.tool.clone());
        }
    }
    flagged
}

/// Tools whose name or description says they write while declared read-only,
/// or say they delete while declared non-destructive.
pub fn name_heuristic(report: &AuditReport) -> BTreeSet<String> {
    let mut flagged = BTreeSet::new();
    for tool in &report.tools {
        let mut text = split_identifier(&tool.name);
        if let Some(d) = &tool.description {
            text.push(' ');
            text.push_str(d);
        }
        let words = words(&text);
        let says = |verbs: &[&str]| words.iter().any(|w| verbs.iter().any(|v| inflects(v, w)));
        if (tool.hints.read_only == Some(true) && says(&NAME_WRITE_VERBS))
            || (tool.hints.destructive == Some(false) && says(&NAME_DELETE_VERBS))
        {
            flagged.insert(tool.name.clone());
        }
    }
    flagged
}

/// The text a client reads: every text content, and structured content as JSON.
fn response_text(response: &Value) -> String {
    let mut out = String::new();
    if let Some(items) = response.get("content").and_then(Value::as_array) {
        for item in items {
            if let Some(text) = item.get("text").and_then(Value::as_str) {
                out.push_str(text);
                out.push(' ');
            }
        }
    }
    if let Some(structured) = response.get("structuredContent") {
        out.push_str(&structured.to_string());
    }
    out
}

/// `saveNote` and `save_note` both read as `save note`.
fn split_identifier(name: &str) -> String {
    let mut out = String::new();
    let mut previous_lower = false;
    for c in name.chars() {
        if c.is_ascii_uppercase() && previous_lower {
            out.push(' ');
        }
        previous_lower = c.is_ascii_lowercase();
        out.push(if c == '_' || c == '-' { ' ' } else { c });
    }
    out
}

fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Whether `word` is `verb` or one of its regular inflections
/// (`save`: save, saves, saved, saving; `add`: adds, added, adding).
fn inflects(verb: &str, word: &str) -> bool {
    if word == verb {
        return true;
    }
    let forms: Vec<String> = match verb.strip_suffix('e') {
        Some(stem) => vec![format!("{verb}s"), format!("{verb}d"), format!("{stem}ing")],
        None => {
            let last = verb.chars().last().map(String::from).unwrap_or_default();
            vec![
                format!("{verb}s"),
                format!("{verb}es"),
                format!("{verb}ed"),
                format!("{verb}ing"),
                format!("{verb}{last}ed"),
                format!("{verb}{last}ing"),
            ]
        }
    };
    forms.iter().any(|f| f == word)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inflections_match_and_lookalikes_do_not() {
        assert!(inflects("save", "saves"));
        assert!(inflects("save", "saved"));
        assert!(inflects("save", "saving"));
        assert!(inflects("add", "added"));
        assert!(inflects("drop", "dropped"));
        assert!(inflects("create", "creates"));
        assert!(!inflects("add", "address"));
        assert!(!inflects("set", "settings"));
        assert!(!inflects("post", "postal"));
    }

    #[test]
    fn identifiers_split_into_words() {
        assert_eq!(words(&split_identifier("saveNote")), ["save", "note"]);
        assert_eq!(words(&split_identifier("delete_note")), ["delete", "note"]);
    }
}

//! **What a tool named itself, a second call replaces.** Generators write
//! their output under names they choose (`document.docx`,
//! `screenshots/page_000.png`, `report_merged_1.docx`): given only a
//! folder or nothing, the first call creates, and the claim that the tool
//! destroys nothing passes on it. The same call made again writes the same
//! names, and what the first made is replaced: the overwrite the claim is
//! about, which a person asking twice meets at once.
//!
//! So a call that did its job by creating files only, none of them named
//! by its arguments (neither the path nor the file's name appears in any
//! value sent), is made once more with the same arguments, once a tool and
//! within its budget, after the next even second: a zip document's
//! members carry a DOS time, which counts seconds in twos, so a second
//! call one second later may write the very same bytes. A tool repeated
//! already (declared idempotent, so its identical repeat ran) is not. Whatever the second call does is
//! seen as any call's effects are: a replace of the first's files, a new
//! file beside them (a timestamped name), or nothing.
//!
//! Example: `create_document {"blocks": [...], "output_dir": "out"}`
//! created `out/document.docx`; it is called again with the same
//! arguments, and `out/document.docx` is replaced.

use witness_model::audit::{CallRecord, Op};

/// Whether `call` did its job by creating files only, each under a name
/// no argument sent.
pub fn named_its_own(call: &CallRecord) -> bool {
    if !call.succeeded() || call.effects.is_empty() {
        return false;
    }
    let mut sent = Vec::new();
    for argument in &call.arguments {
        witness_model::answer::string_leaves(&argument.value, &mut sent);
    }
    let mut files = 0;
    for effect in &call.effects {
        if effect.op != Op::Create {
            return false;
        }
        let Some(path) = effect.object.strip_prefix("file/") else {
            continue;
        };
        let name = path.rsplit('/').next().unwrap_or(path);
        if name.is_empty() || sent.iter().any(|s| s.contains(name)) {
            return false;
        }
        files += 1;
    }
    files > 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn call(arguments: &[(&str, Value)], effects: &[(&str, &str)]) -> CallRecord {
        let arguments: Vec<Value> = arguments
            .iter()
            .map(|(name, value)| json!({"name": name, "value": value, "source": "synthesized"}))
            .collect();
        let effects: Vec<Value> = effects
            .iter()
            .map(|(object, op)| json!({"store": "docs", "object": object, "op": op}))
            .collect();
        serde_json::from_value(json!({
            "id": 1, "step": 1, "tool": "create_document",
            "arguments": arguments, "outcome": {"status": "ok"}, "effects": effects,
        }))
        .expect("a call record")
    }

    #[test]
    fn files_made_under_names_no_argument_sent_are_made_again() {
        let made = call(
            &[
                ("blocks", json!([{"type": "heading"}])),
                ("output_dir", json!("out")),
            ],
            &[("dir/out", "create"), ("file/out/document.docx", "create")],
        );
        assert!(named_its_own(&made));
    }

    #[test]
    fn a_file_the_arguments_named_an_update_or_no_file_is_not() {
        let named = call(
            &[("path", json!("/j/docs/witness-create.docx"))],
            &[("file/witness-create.docx", "create")],
        );
        assert!(!named_its_own(&named));
        let nested = call(
            &[("spec", json!({"files": ["page.png"]}))],
            &[("file/out/page.png", "create")],
        );
        assert!(!named_its_own(&nested));
        let replaced = call(
            &[("output_dir", json!("out"))],
            &[
                ("file/out/document.docx", "create"),
                ("file/index.md", "update"),
            ],
        );
        assert!(!named_its_own(&replaced));
        let row = call(&[("title", json!("x"))], &[("tasks/4", "create")]);
        assert!(!named_its_own(&row));
    }
}

//! **Text the file holds.** An edit tool replaces text it is told to find
//! (`old_text`, `oldText`, `old_string`, `search`, `find`), in a file it is
//! told to edit; an invented `witness` is found in no file of the store, so
//! the edit answers `old_text not found` and the tool's claims are never
//! tested. When a call names a file of a directory store and asks for text
//! to find, the text sent is a line that file holds: its first non-empty
//! line, read from the jailed copy before the call (the store's own bytes,
//! never the original). Nested edit lists (`edits: [{oldText, newText}]`)
//! are filled the same way.
//!
//! The text that replaces it keeps the line, after something put before
//! it (`(edited by witness) # Ideas`), so the same call asked again finds
//! its text again and edits again: a claim that the edit is idempotent is
//! tested on a repeat that could change something, where a replacement
//! without the line had answered the repeat with `old_text not found` (the
//! development half's fourth round: two servers' edit tools). Before, not
//! after: a line kept as the start of its replacement made an edit of a
//! file's or a block's last line read as an append, which takes nothing
//! away, so a find-and-replace tool's non-destructive claim passed on the
//! audit's own edit whatever the tool does with text it replaces (the
//! tenth round: a filesystem server's `edit_file`).
//!
//! Example: `edit_note {"path": "Ideas.md", "old_text": "witness",
//! "new_text": "replaced by witness-edit_note"}` is sent with `"old_text":
//! "# Ideas", "new_text": "(edited by witness) # Ideas"`, and the edit
//! changes the note each time it is asked.

use std::path::{Path, PathBuf};

use serde_json::Value;
use witness_model::audit::Provenance;

use crate::plan::Resolved;
use crate::plan::cues::flat;
use crate::plan::cues::{PathKind, ToolCues};
use crate::plan::harvest::Pool;

/// Parameters that name the text an edit looks for, flattened.
const FIND_PARAMS: [&str; 9] = [
    "oldtext",
    "oldstring",
    "oldstr",
    "old",
    "search",
    "find",
    "searchtext",
    "findtext",
    "target",
];

/// Parameters that name the text an edit puts in place of what it finds,
/// flattened.
const REPLACE_PARAMS: [&str; 9] = [
    "newtext",
    "newstring",
    "newstr",
    "new",
    "replace",
    "replacement",
    "replacewith",
    "replacetext",
    "newcontent",
];

/// Whether `key` names text to find.
pub fn finds_text(key: &str) -> bool {
    FIND_PARAMS.contains(&flat(key).as_str())
}

/// Whether `key` names the text that replaces what an edit finds.
fn replaces_text(key: &str) -> bool {
    REPLACE_PARAMS.contains(&flat(key).as_str())
}

/// What replaces `line`: the line kept, with something put before it, so
/// that what it replaced is no longer where it began.
fn edited(line: &str) -> String {
    format!("(edited by witness) {line}")
}

/// Gives every synthesized text-to-find of `resolved` a line of the file
/// its call names, when that file is in a directory store of `pool`.
/// Returns whether anything changed.
pub fn fill(resolved: &mut Resolved, cues: &ToolCues, pool: &Pool) -> bool {
    let Some(file) = named_file(resolved, cues, pool) else {
        return false;
    };
    let Some(line) = first_line(&file) else {
        return false;
    };
    let mut changed = false;
    let Some(object) = resolved.arguments.as_object_mut() else {
        return false;
    };
    for argument in &mut resolved.recorded {
        if argument.source != Provenance::Synthesized {
            continue;
        }
        let mut value = argument.value.clone();
        if replace_finds(&argument.name, &mut value, &line) {
            argument.value = value.clone();
            object.insert(argument.name.clone(), value);
            changed = true;
        }
    }
    // A top-level find was filled: its replacement keeps the line too.
    if changed {
        for argument in &mut resolved.recorded {
            if argument.source == Provenance::Synthesized
                && replaces_text(&argument.name)
                && argument.value.is_string()
            {
                argument.value = Value::String(edited(&line));
                object.insert(argument.name.clone(), argument.value.clone());
            }
        }
    }
    changed
}

/// Replaces, in `value` under `key`, every string under a find key, and
/// the replacement beside a find nested in an object (`{oldText,
/// newText}`).
fn replace_finds(key: &str, value: &mut Value, line: &str) -> bool {
    match value {
        Value::String(s) if finds_text(key) => {
            *s = line.to_owned();
            true
        }
        Value::Array(items) => items
            .iter_mut()
            .fold(false, |any, item| replace_finds(key, item, line) | any),
        Value::Object(map) => {
            let found = map
                .iter_mut()
                .fold(false, |any, (k, v)| replace_finds(k, v, line) | any);
            let finds_here = map
                .iter()
                .any(|(k, v)| finds_text(k) && v.as_str() == Some(line));
            if finds_here {
                for (k, v) in map.iter_mut() {
                    if replaces_text(k) && v.is_string() {
                        *v = Value::String(edited(line));
                    }
                }
            }
            found
        }
        _ => false,
    }
}

/// The store file a call's path arguments name, on disk.
fn named_file(resolved: &Resolved, cues: &ToolCues, pool: &Pool) -> Option<PathBuf> {
    resolved
        .recorded
        .iter()
        .filter(|a| cues.path_kind(&a.name) == Some(PathKind::File))
        .filter_map(|a| a.value.as_str())
        .filter_map(|text| {
            let path = Path::new(text);
            if path.is_absolute() {
                Some(path.to_path_buf())
            } else {
                super::store_objects::absolute_under_root(pool, text).map(PathBuf::from)
            }
        })
        .find(|path| pool.under_root(path) && path.is_file())
}

/// The file's first non-empty line, when the file is small text.
fn first_line(path: &Path) -> Option<String> {
    const MAX_READ: u64 = 1 << 20;
    let size = std::fs::metadata(path).ok()?.len();
    if size > MAX_READ {
        return None;
    }
    let text = std::fs::read_to_string(path).ok()?;
    text.lines()
        .map(str::trim_end)
        .find(|l| !l.trim().is_empty())
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use witness_model::audit::Argument;

    use super::*;

    #[test]
    fn the_text_to_find_is_a_line_of_the_file_the_call_edits() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(
            dir.path().join("Ideas.md"),
            "\n# Ideas\n\n- a rain barrel\n",
        )
        .expect("write");
        let mut pool = Pool::default();
        pool.seed(Vec::new(), vec![dir.path().to_path_buf()]);
        let cues = ToolCues {
            tool: "edit_file".into(),
            ..ToolCues::default()
        };
        let argument = |name: &str, value: Value| Argument {
            name: name.into(),
            value,
            source: Provenance::Synthesized,
            from: None,
            object: None,
            parts: Vec::new(),
        };
        let edits = json!([{"oldText": "witness", "newText": "replaced"}]);
        let mut resolved = Resolved {
            arguments: json!({"path": "Ideas.md", "edits": edits}),
            recorded: vec![
                argument("path", json!("Ideas.md")),
                argument("edits", edits),
            ],
            creates: Vec::new(),
        };
        assert!(fill(&mut resolved, &cues, &pool));
        assert_eq!(
            resolved.arguments["edits"],
            json!([{"oldText": "# Ideas", "newText": "(edited by witness) # Ideas"}])
        );
        // At the top level too; the replacement keeps the line, so the same
        // edit asked again finds it again.
        let mut flat_edit = Resolved {
            arguments: json!({"path": "Ideas.md", "old_text": "witness", "new_text": "other"}),
            recorded: vec![
                argument("path", json!("Ideas.md")),
                argument("old_text", json!("witness")),
                argument("new_text", json!("other")),
            ],
            creates: Vec::new(),
        };
        assert!(fill(&mut flat_edit, &cues, &pool));
        assert_eq!(flat_edit.arguments["old_text"], json!("# Ideas"));
        let replaced = flat_edit.arguments["new_text"].as_str().unwrap_or_default();
        assert!(
            replaced.contains("# Ideas") && replaced != "# Ideas",
            "{replaced}"
        );
        // A file outside every store is never read.
        let elsewhere = tempfile::tempdir().expect("tempdir");
        let outside = elsewhere.path().join("x.md");
        std::fs::write(&outside, "secret\n").expect("write");
        let mut other = Resolved {
            arguments: json!({"path": outside, "old_text": "witness"}),
            recorded: vec![
                argument("path", json!(outside.to_string_lossy())),
                argument("old_text", json!("witness")),
            ],
            creates: Vec::new(),
        };
        assert!(!fill(&mut other, &cues, &pool));
        assert_eq!(other.arguments["old_text"], json!("witness"));
    }
}

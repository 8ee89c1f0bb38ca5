//! **Fields a note must carry, given in its front matter.** Servers that
//! keep notes, workflows or pages as Markdown validate the YAML block that
//! opens the file, and say what is missing in words meant for a model:
//! `witness.md is not a valid note: missing required field: title, missing
//! required field: tags`, `Frontmatter must include 'name' field`. The
//! fields are no parameters of the tool (the schema has a `content`), so
//! no other reading can give them; the note's text is sent again opening
//! with a front matter block that holds each field the error named.
//!
//! Values are the audit's own: a list for a plural name (`tags:
//! [witness]`), a date for a name about dates, else the word `witness`. A
//! field a second error still refuses (`status must be one of ...`) is for
//! the next reading.
//!
//! Example: `write_file {"path": "a.md", "content": "witness"}` answers
//! `missing required field: title`; the retry sends `"content": "---\ntitle:
//! witness\n---\n\nwitness"`.

use serde_json::Value;
use witness_model::audit::Argument;

use crate::plan::cues::flat;

/// Names of parameters that hold a note's whole text, flattened.
const BODY_PARAMS: [&str; 6] = ["content", "body", "text", "markdown", "note", "notecontent"];

/// At most this many fields are read from one error, and at most
/// [`MAX_CUES`] of its cue words looked at: server text is untrusted.
const MAX_FIELDS: usize = 16;
const MAX_CUES: usize = 64;

/// The byte offsets of `word` (ASCII, lowercase) in `text`, ignoring ASCII
/// case: each a char boundary of `text` itself, whatever else it holds.
fn ascii_positions<'t>(text: &'t str, word: &'t str) -> impl Iterator<Item = usize> + 't {
    let needle = word.as_bytes();
    text.as_bytes()
        .windows(needle.len())
        .enumerate()
        .filter(move |(_, w)| w.eq_ignore_ascii_case(needle))
        .map(|(i, _)| i)
        .take(MAX_CUES)
}

/// The fields `error` says a note's front matter lacks, in the order it
/// names them; empty when it speaks of no front matter, or of required
/// fields of something that is no note.
pub fn missing(error: &str) -> Vec<String> {
    let lowered = error.to_lowercase();
    let front = ["frontmatter", "front matter", "front-matter"]
        .iter()
        .any(|w| lowered.contains(w));
    let of_note = lowered.contains("required field")
        && ["note", "markdown", ".md", "page", "document"]
            .iter()
            .any(|w| lowered.contains(w));
    if !(front || of_note) {
        return Vec::new();
    }
    let mut out: Vec<String> = Vec::new();
    let mut add = |word: &str| {
        let word = word.trim_matches(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-'));
        let named = !word.is_empty()
            && word.len() <= 40
            && word
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            && !["field", "fields", "a", "the", "include", "includes"].contains(&word);
        if named && out.len() < MAX_FIELDS && !out.iter().any(|w| w == word) {
            out.push(word.to_owned());
        }
    };
    // `field: title`, `fields: title, tags`: up to the end of the line.
    for at in ascii_positions(error, "field") {
        let line = error[at..].split(['\n', ';']).next().unwrap_or("");
        let after = line.trim_start_matches(|c: char| c.is_ascii_alphabetic());
        if let Some(list) = after.strip_prefix(':') {
            let list = list.split('.').next().unwrap_or("");
            for word in list.split(',').take(MAX_FIELDS) {
                add(word.trim());
            }
        }
    }
    // `include 'name' field`, `'name' is required`, `missing 'name'`: a
    // quoted word with such words beside it (not a JSON answer's keys).
    for quote in ['\'', '`'] {
        let spans: Vec<usize> = error
            .match_indices(quote)
            .map(|(i, _)| i)
            .take(2 * MAX_CUES)
            .collect();
        for pair in spans.chunks_exact(2) {
            let (open, close) = (pair[0], pair[1]);
            // Read from the text's own slices: lowercasing may move byte
            // offsets in text that is not ASCII.
            let before: String = error[..open].chars().rev().take(24).collect();
            let before: String = before.chars().rev().collect::<String>().to_lowercase();
            let after: String = error[close + 1..]
                .chars()
                .take(16)
                .collect::<String>()
                .to_lowercase();
            let cued = ["include", "missing", "require", "field"]
                .iter()
                .any(|w| before.contains(w))
                || after.contains("field")
                || after.contains("is required");
            if cued {
                add(&error[open + 1..close]);
            }
        }
    }
    out
}

/// The note's text sent again, opening with a front matter block that adds
/// each of `fields` (kept where its block already has it); `None` when the
/// call sent no note text or the fields are parameters of their own.
pub fn with_fields(
    sent: &[Argument],
    fields: &[String],
    is_param: &dyn Fn(&str) -> bool,
) -> Option<(String, Value)> {
    let fields: Vec<&String> = fields.iter().filter(|f| !is_param(f)).collect();
    if fields.is_empty() {
        return None;
    }
    let body = note_text(sent)?;
    let text = body.value.as_str()?;
    let (mut block, rest) = match text
        .strip_prefix("---\n")
        .and_then(|t| t.split_once("\n---"))
    {
        Some((block, rest)) => (
            block.lines().map(str::to_owned).collect::<Vec<_>>(),
            // What follows the closing `---`: its own line's end, then the
            // body as it was.
            rest.trim_start_matches('-')
                .strip_prefix('\n')
                .unwrap_or(rest)
                .trim_start_matches('\n')
                .to_owned(),
        ),
        None => (Vec::new(), text.to_owned()),
    };
    let mut added = false;
    for field in fields {
        let has = block
            .iter()
            .any(|line| line.split_once(':').is_some_and(|(k, _)| k.trim() == field));
        if !has {
            block.push(format!("{field}: {}", value_for(field)));
            added = true;
        }
    }
    if !added {
        return None;
    }
    let note = format!("---\n{}\n---\n\n{}", block.join("\n"), rest);
    Some((body.name.clone(), Value::String(note)))
}

/// The note's text sent again with the first of `choices` for a field of
/// its front matter that `error` refuses by name (`status 'witness' is not
/// one of: draft, active`), with that field; `None` when the note has no
/// block, the error names none of its fields, or lists no value.
pub fn with_choice(
    sent: &[Argument],
    error: &str,
    choices: &[String],
    is_param: &dyn Fn(&str) -> bool,
) -> Option<(String, Value, String)> {
    let first = choices.first()?;
    let body = note_text(sent)?;
    let text = body.value.as_str()?;
    let (block, rest) = text.strip_prefix("---\n")?.split_once("\n---")?;
    let words = super::text_words(error);
    let mut refused: Option<String> = None;
    let lines: Vec<String> = block
        .lines()
        .map(|line| {
            let Some((key, value)) = line.split_once(':') else {
                return line.to_owned();
            };
            let key = key.trim();
            let named = refused.is_none()
                && !is_param(key)
                && words.iter().any(|w| w == &key.to_lowercase())
                && value.trim() != first;
            if named {
                refused = Some(key.to_owned());
                format!("{key}: {first}")
            } else {
                line.to_owned()
            }
        })
        .collect();
    let field = refused?;
    let note = format!("---\n{}\n---{rest}", lines.join("\n"));
    Some((body.name.clone(), Value::String(note), field))
}

/// The argument that holds the note's whole text, a string.
fn note_text(sent: &[Argument]) -> Option<&Argument> {
    sent.iter()
        .find(|a| a.value.is_string() && BODY_PARAMS.contains(&flat(&a.name).as_str()))
}

/// The audit's value for front matter field `field`.
fn value_for(field: &str) -> &'static str {
    let lowered = field.to_ascii_lowercase();
    if ["date", "created", "updated", "modified", "due"]
        .iter()
        .any(|d| lowered.contains(d))
    {
        "2026-01-01"
    } else if lowered.ends_with('s') && !lowered.ends_with("ss") && lowered != "status" {
        "[witness]"
    } else {
        "witness"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use witness_model::audit::Provenance;

    fn sent(name: &str, value: &str) -> Vec<Argument> {
        vec![Argument {
            name: name.into(),
            value: json!(value),
            source: Provenance::Synthesized,
            from: None,
            object: None,
            parts: Vec::new(),
        }]
    }

    #[test]
    fn the_fields_an_error_says_a_note_lacks_are_read() {
        let note = "witness.md is not a valid note:\n- missing required field: title\n- missing required field: tags\n- missing required field: status";
        assert_eq!(missing(note), ["title", "tags", "status"]);
        let workflow = r#"{"status": "error", "error": "Frontmatter must include 'name' field"}"#;
        assert!(missing(workflow).contains(&"name".to_owned()));
        assert!(
            missing("File 'a.md' not found").is_empty(),
            "no front matter"
        );
        assert!(
            missing("missing required field: email").is_empty(),
            "a required field of something that is no note"
        );
        // Text that lowercases to other byte lengths is read, not sliced
        // apart.
        let odd = "\u{212A}\u{212A}\u{130}\u{130} note: missing required field: title";
        assert_eq!(missing(odd), ["title"]);
        // Untrusted text: a bounded number of fields.
        let many = format!(
            "note: missing required field: {}",
            vec!["f"; 500].join(", ")
        );
        assert!(missing(&many).len() <= MAX_FIELDS);
    }

    #[test]
    fn a_field_refused_with_its_choices_takes_the_first() {
        let note = "---\ntitle: witness\nstatus: witness\n---\n\nwitness";
        let error = "a.md is not a valid note:\n- status 'witness' is not one of: draft, active";
        let choices = vec!["draft".to_owned(), "active".to_owned()];
        let (name, value, field) = with_choice(&sent("content", note), error, &choices, &|_| false)
            .unwrap_or_else(|| panic!("none"));
        assert_eq!((name.as_str(), field.as_str()), ("content", "status"));
        assert_eq!(
            value,
            json!("---\ntitle: witness\nstatus: draft\n---\n\nwitness")
        );
        // A note with no block, or an error naming none of its fields.
        assert!(with_choice(&sent("content", "witness"), error, &choices, &|_| false).is_none());
        assert!(
            with_choice(
                &sent("content", note),
                "kind is one of: a, b",
                &choices,
                &|_| false
            )
            .is_none()
        );
    }

    #[test]
    fn the_note_is_sent_again_opening_with_the_fields() {
        let fields = missing(
            "a.md is not a valid note:\nmissing required field: title\nmissing required field: tags",
        );
        let (name, value) = with_fields(&sent("content", "witness"), &fields, &|_| false)
            .unwrap_or_else(|| panic!("none"));
        assert_eq!(name, "content");
        assert_eq!(
            value,
            json!("---\ntitle: witness\ntags: [witness]\n---\n\nwitness")
        );
        // A block it already has is added to, not doubled.
        let kept = "---\ntitle: Mine\n---\n- item";
        let (_, value) = with_fields(&sent("content", kept), &fields, &|_| false)
            .unwrap_or_else(|| panic!("none"));
        assert_eq!(
            value,
            json!("---\ntitle: Mine\ntags: [witness]\n---\n\n- item")
        );
        // A field that is a parameter is the schema's to fill.
        assert!(with_fields(&sent("content", "x"), &["title".into()], &|f| f == "title").is_none());
        assert!(
            with_fields(&sent("path", "x"), &fields, &|_| false).is_none(),
            "no note text"
        );
    }
}

//! **A value of the shape an error shows by example.** Servers that refuse
//! a value often show what one looks like instead of listing the valid
//! ones: `id must look like 'user/notes/chat.md:12#a1b2c3d4' or
//! 'project/slug/staging/captured.md:8'`, `Use RRGGBB hex, e.g.
//! 'FF0000'`, `dates such as 2024-01-31`. The audit's own word
//! (`witness-delete_memory`) then fails every time, and a delete never
//! meets an object, although the server may have shown real values of
//! that shape a few calls before (a search that answered `[user/LAYOUT.md:3#e329e124] ...`).
//!
//! So an error with an example (after `e.g.`, `eg.`, `for example`, `for
//! instance`, `such as`, `look like`, `formatted as`, `in the form`) is
//! answered, for the parameter
//! it is about, by a value of the example's shape that an earlier answer
//! of the server wrote, when one did: a real object, not the example's
//! made-up one. The shape is the example's outline, each run of letters
//! and digits one word, digits alone a number, a file's extension kept,
//! folders however deep one folder part: `user/notes/chat.md:12#a1b2`
//! and `user/LAYOUT.md:3#e329` have one shape. Only an outline with a mark
//! in it (`.`, `:`, `#`, `/`) and at least three parts is looked for in
//! answers, as a single word would match any word. Where no answer holds
//! one, the example itself is sent: for a format (a colour, a date, a
//! range) it is a valid value, and for an object it at least takes the
//! call past the form's check. A value sent before is not sent again, nor
//! one of the audit's own (`witness…`).
//!
//! Example: `delete_memory {"memory_id": "witness-delete_memory"}`
//! answered `id must look like 'user/notes/x.md:12#a1b2c3d4'`, after
//! `search_memory` answered `- [user/LAYOUT.md:3#e329e124] User store`,
//! is called again with `"memory_id": "user/LAYOUT.md:3#e329e124"`.

use serde_json::Value;

use super::read_error::Retry;
use super::{names_param, text_words};
use crate::plan::harvest::{Harvested, Pool, Source};
use crate::plan::{ArgSpec, PlanStep};
use witness_model::audit::Argument;

/// Words that introduce an example of a value, lowercase ASCII.
const MARKERS: [&str; 10] = [
    "e.g.",
    "e.g ",
    "eg.",
    "for example",
    "for instance",
    "such as",
    "look like",
    "looks like",
    "formatted as",
    "in the form",
];

/// The longest example taken: an id or a path, not a paragraph.
const MAX_EXAMPLE: usize = 120;

/// The bytes of an error read for examples, and the most examples taken:
/// an error may be megabytes, its examples are near its start.
const MAX_READ: usize = 4096;
const MAX_EXAMPLES: usize = 4;

/// One part of a value's outline.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Part {
    /// A run of letters (and digits, `_`, `-`) with a letter in it.
    Word,
    /// A run of digits.
    Number,
    /// A file's extension: a run of at most five letters after a `.`.
    Extension(String),
    /// One or more folders (`user/notes/`), however deep.
    Folders,
    /// Any other character, as itself.
    Mark(char),
}

/// The examples `error` shows after one of [`MARKERS`]: the quoted values
/// of that sentence, else its first word when it holds a digit or a mark
/// (`2024-01-31`, not `those`). At most [`MAX_EXAMPLES`], first first.
pub fn examples(error: &str) -> Vec<String> {
    let mut end = error.len().min(MAX_READ);
    while !error.is_char_boundary(end) {
        end -= 1;
    }
    let error = &error[..end];
    // ASCII lowering keeps every byte where it was: an offset found in
    // `lowered` is one of `error`.
    let lowered = error.to_ascii_lowercase();
    let mut found: Vec<String> = Vec::new();
    let mut places: Vec<(usize, &str)> = MARKERS
        .iter()
        .flat_map(|m| lowered.match_indices(m).map(move |(at, _)| (at, *m)))
        .filter(|(at, _)| {
            lowered[..*at]
                .chars()
                .next_back()
                .is_none_or(|c| !c.is_alphanumeric())
        })
        .collect();
    places.sort_unstable();
    for (at, marker) in places {
        if found.len() >= MAX_EXAMPLES {
            break;
        }
        let Some(rest) = error.get(at + marker.len()..) else {
            continue;
        };
        let sentence = sentence_of(rest);
        let quoted = quoted_values(sentence);
        let values = if quoted.is_empty() {
            first_word(sentence)
                .filter(|w| w.chars().any(|c| !c.is_alphabetic()))
                .into_iter()
                .collect()
        } else {
            quoted
        };
        for value in values {
            if found.len() < MAX_EXAMPLES && !found.contains(&value) {
                found.push(value);
            }
        }
    }
    found
}

/// `rest` up to the end of its sentence: a newline, or a period, `;` or
/// `)` followed by a space or the end (a period inside `a.md` is not one).
fn sentence_of(rest: &str) -> &str {
    let line = rest.lines().next().unwrap_or("");
    let mut cut = line.len().min(2 * MAX_EXAMPLE * MAX_EXAMPLES);
    while !line.is_char_boundary(cut) {
        cut -= 1;
    }
    let line = &line[..cut];
    let bytes = line.as_bytes();
    let end = (0..bytes.len())
        .find(|&i| {
            matches!(bytes[i], b'.' | b';' | b')')
                && bytes.get(i + 1).is_none_or(|b| b.is_ascii_whitespace())
                // `e.g. 'x'` keeps its own period.
                && i > 0
        })
        .unwrap_or(line.len());
    &line[..end]
}

/// The values `text` quotes (`'a'`, `"b"`, `` `c` ``): each without
/// spaces, so an apostrophe in prose opens no quote that matters.
fn quoted_values(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find(['\'', '"', '`']) {
        let quote = rest[open..].chars().next().unwrap_or('\'');
        let after = &rest[open + 1..];
        let Some(close) = after.find(quote) else {
            break;
        };
        let value = &after[..close];
        if !value.is_empty() && value.len() <= MAX_EXAMPLE && !value.contains(char::is_whitespace) {
            out.push(value.to_owned());
            rest = &after[close + 1..];
        } else {
            rest = after;
        }
    }
    out
}

/// The first word of `text`, without the punctuation around it.
fn first_word(text: &str) -> Option<String> {
    let word = text
        .split_whitespace()
        .next()?
        .trim_matches(|c: char| "'\"`()[]{},;:".contains(c))
        .trim_end_matches('.');
    (!word.is_empty() && word.len() <= MAX_EXAMPLE && word.chars().any(|c| c.is_alphanumeric()))
        .then(|| word.to_owned())
}

/// The outline of `value` (see the module's doc).
fn shape(value: &str) -> Vec<Part> {
    let chars: Vec<char> = value.chars().collect();
    let in_run = |c: char| c.is_alphanumeric() || c == '_' || c == '-';
    let mut parts = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if in_run(chars[i]) {
            let start = i;
            while i < chars.len() && in_run(chars[i]) {
                i += 1;
            }
            let run: String = chars[start..i].iter().collect();
            let after_dot = parts.last() == Some(&Part::Mark('.'));
            let part =
                if after_dot && run.len() <= 5 && run.chars().all(|c| c.is_ascii_alphabetic()) {
                    Part::Extension(run.to_ascii_lowercase())
                } else if run.chars().all(|c| c.is_ascii_digit()) {
                    Part::Number
                } else {
                    Part::Word
                };
            parts.push(part);
        } else {
            parts.push(Part::Mark(chars[i]));
            i += 1;
        }
    }
    // A run of `name/` pairs, however many, is one folder part.
    let mut folded: Vec<Part> = Vec::new();
    let mut j = 0;
    while j < parts.len() {
        let pair = |k: usize| {
            matches!(parts.get(k), Some(Part::Word | Part::Number))
                && parts.get(k + 1) == Some(&Part::Mark('/'))
        };
        if pair(j) {
            while pair(j) {
                j += 2;
            }
            folded.push(Part::Folders);
        } else {
            folded.push(parts[j].clone());
            j += 1;
        }
    }
    folded
}

/// Whether an outline is specific enough to look for in an answer's
/// text: three parts or more, one of them folders or a mark other than
/// `-` (`.`, `:`, `#`, `=`, `@`, ...).
fn distinctive(outline: &[Part]) -> bool {
    outline.len() >= 3
        && outline
            .iter()
            .any(|p| matches!(p, Part::Mark(c) if *c != '-') || *p == Part::Folders)
}

/// The tokens of an answer's text: what whitespace separates, without the
/// brackets, quotes and punctuation around it.
fn tokens(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| c.is_whitespace() || "\"'`,;<>".contains(c))
        .map(|t| {
            t.trim_start_matches(['[', '(', '{'])
                .trim_end_matches([']', ')', '}', ':', '.', '!', '?'])
        })
        .filter(|t| !t.is_empty() && t.len() <= MAX_EXAMPLE)
}

/// The retry of a call that sent `sent` and failed with `error`, when the
/// error shows an example of the value one of its string arguments takes.
pub(crate) fn retry(
    step: &PlanStep,
    sent: &[Argument],
    error: &str,
    pool: &Pool,
    tried: &[Value],
) -> Option<Retry> {
    let ours = |v: &str| v.to_lowercase().contains("witness");
    // An error that quotes what was sent (`Unsupported format: a.txt`)
    // shows no example in it.
    let examples: Vec<String> = examples(error)
        .into_iter()
        .filter(|e| !ours(e) && !sent.iter().any(|a| a.value.as_str() == Some(e.as_str())))
        .collect();
    if examples.is_empty() {
        return None;
    }
    let targets = targets(sent, error);
    let target = *targets.first()?;
    let sent_before = |v: &str| {
        targets.iter().any(|t| {
            t.value.as_str() == Some(v)
                || tried
                    .iter()
                    .any(|sent| sent.get(&t.name).and_then(Value::as_str) == Some(v))
        })
    };
    let outlines: Vec<Vec<Part>> = examples
        .iter()
        .map(|e| shape(e))
        .filter(|o| distinctive(o))
        .collect();
    // A value of an example's shape that the server wrote, newest answer
    // first: what it has most recently shown exists.
    let written = pool.texts().iter().rev().find_map(|answer| {
        tokens(&answer.text)
            .find(|t| {
                !sent_before(t)
                    && !ours(t)
                    && !examples.iter().any(|e| e == t)
                    && outlines.contains(&shape(t))
            })
            .map(|t| (answer, t.to_owned()))
    });
    let mut form = step.clone();
    let reading = match written {
        Some((answer, value)) => {
            form.set(
                &target.name,
                ArgSpec::Chosen(Box::new(Harvested {
                    key: target.name.clone(),
                    value: Value::String(value.clone()),
                    tool: answer.tool.clone(),
                    step: answer.step,
                    path: "text".into(),
                    collection: None,
                    source: Source::Answer,
                    shape: None,
                })),
            );
            format!(
                "a value of the shape its error showed for {} ({}), as {} answered it: {value}",
                target.name, examples[0], answer.tool
            )
        }
        None => {
            let example = examples.iter().find(|e| !sent_before(e) && !ours(e))?;
            for each in &targets {
                form.set(&each.name, ArgSpec::Pinned(Value::String(example.clone())));
            }
            let names: Vec<&str> = targets.iter().map(|a| a.name.as_str()).collect();
            format!(
                "the example its error gave for {}: {example}",
                names.join(", ")
            )
        }
    };
    Some(Retry {
        step: form,
        reading,
        then: Vec::new(),
    })
}

/// The string arguments the error is about: the one it names before its
/// first example; else those whose value it quotes, only those among them
/// with a word of their name in the error where there are such (`Invalid
/// color 'witness'` is about `font_color` and `fill_color`, not
/// `sheet_name`, when all three were sent `witness`); else the only
/// argument sent, when it is a string.
fn targets<'a>(sent: &'a [Argument], error: &str) -> Vec<&'a Argument> {
    let strings: Vec<&Argument> = sent.iter().filter(|a| a.value.is_string()).collect();
    // The parameter is named before its example (`color must be hex, e.g.
    // 'FF0000'`), not in the example's own words.
    let lowered = error.to_ascii_lowercase();
    let before = MARKERS
        .iter()
        .filter_map(|m| lowered.find(m))
        .min()
        .map_or(error, |at| &error[..at]);
    if let Some(named) = strings.iter().find(|a| names_param(before, &a.name)) {
        return vec![named];
    }
    let quoted: Vec<&Argument> = strings
        .iter()
        .copied()
        .filter(|a| {
            a.value
                .as_str()
                .is_some_and(|v| v.len() >= 2 && error.contains(v))
        })
        .collect();
    let words = text_words(error);
    let worded: Vec<&Argument> = quoted
        .iter()
        .copied()
        .filter(|a| {
            crate::plan::cues::words(&a.name)
                .iter()
                .any(|w| w.len() >= 3 && words.contains(w))
        })
        .collect();
    match (worded.is_empty(), quoted.is_empty()) {
        (false, _) => worded,
        (true, false) => quoted.into_iter().take(1).collect(),
        // The only argument sent, when it is a string: an error about a
        // number (`limit`, e.g. 10) is no string's.
        (true, true) if strings.len() == 1 && sent.len() == 1 => strings,
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use witness_model::vocab::Provenance;

    fn argument(name: &str, value: &str) -> Argument {
        Argument {
            name: name.into(),
            value: json!(value),
            source: Provenance::Synthesized,
            from: None,
            object: None,
            parts: Vec::new(),
        }
    }

    fn step(tool: &str, params: &[&str]) -> PlanStep {
        PlanStep {
            tool: tool.into(),
            args: params
                .iter()
                .map(|p| ((*p).to_owned(), ArgSpec::Auto(json!("witness"))))
                .collect(),
            cues: crate::plan::cues::ToolCues {
                tool: tool.into(),
                ..Default::default()
            },
        }
    }

    fn spec<'s>(retry: &'s Retry, name: &str) -> Option<&'s ArgSpec> {
        retry
            .step
            .args
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, s)| s)
    }

    fn text(t: &str) -> Value {
        json!({"content": [{"type": "text", "text": t}]})
    }

    const MEMORY_ERROR: &str = "Error deleting memory: id must look like 'user/notes/programming/chat-stores.md:12#a1b2c3d4' or 'project/slug/staging/captured.md:8' or 'user/notes/foo.md#a1b2c3d4' or a memory file path to delete the entire file.";

    #[test]
    fn examples_are_the_quoted_values_after_a_marker() {
        assert_eq!(
            examples(MEMORY_ERROR),
            vec![
                "user/notes/programming/chat-stores.md:12#a1b2c3d4",
                "project/slug/staging/captured.md:8",
                "user/notes/foo.md#a1b2c3d4"
            ]
        );
        assert_eq!(examples("Use RRGGBB hex, e.g. 'FF0000'"), vec!["FF0000"]);
        assert_eq!(
            examples("bad date; give one such as 2024-01-31."),
            vec!["2024-01-31"]
        );
        // A plain word after a marker is prose, not an example.
        assert!(examples("ids such as those returned by list_notes").is_empty());
        // No marker, no example; a marker inside a word is none.
        assert!(examples("Memory file not found: AGENTS.md").is_empty());
        assert!(examples("unlike 'x'").is_empty());
    }

    #[test]
    fn folders_however_deep_and_any_word_share_a_shape() {
        assert_eq!(
            shape("user/notes/programming/chat-stores.md:12#a1b2c3d4"),
            shape("user/LAYOUT.md:3#e329e124")
        );
        assert_ne!(
            shape("user/notes/foo.md#a1b2c3d4"),
            shape("user/LAYOUT.md:3#e329e124")
        );
        // The extension is part of the shape.
        assert_ne!(shape("notes/a.md"), shape("notes/a.txt"));
        assert!(distinctive(&shape("user/a.md:3")));
        assert!(!distinctive(&shape("FF0000")));
    }

    #[test]
    fn a_value_the_server_wrote_in_the_example_s_shape_is_sent() {
        let mut pool = Pool::default();
        pool.absorb(
            "search_memory",
            2,
            &text("Found 2 hits:\n- [user/LAYOUT.md:3#e329e124] User store\n- [user/PROJECTS.md:3#1c099f62] Map"),
        );
        let step = step("delete_memory", &["memory_id"]);
        let sent = [argument("memory_id", "witness-delete_memory")];
        let retry = retry(&step, &sent, MEMORY_ERROR, &pool, &[]).expect("a retry");
        match spec(&retry, "memory_id") {
            Some(ArgSpec::Chosen(h)) => {
                // The newest answer's first value of the shape.
                assert_eq!(h.value, json!("user/LAYOUT.md:3#e329e124"));
                assert_eq!(h.tool, "search_memory");
                assert_eq!(h.source, Source::Answer);
            }
            other => panic!("not a harvested value: {other:?}"),
        }
        // Sent before: the next one.
        let tried = [json!({"memory_id": "user/LAYOUT.md:3#e329e124"})];
        let retry = super::retry(&step, &sent, MEMORY_ERROR, &pool, &tried).expect("a retry");
        match spec(&retry, "memory_id") {
            Some(ArgSpec::Chosen(h)) => assert_eq!(h.value, json!("user/PROJECTS.md:3#1c099f62")),
            other => panic!("not a harvested value: {other:?}"),
        }
    }

    #[test]
    fn without_such_a_value_the_example_itself_is_sent() {
        let step = step(
            "format_cells",
            &["cell_range", "sheet_name", "font_color", "fill_color"],
        );
        let sent = [
            argument("cell_range", "A1:B2"),
            argument("sheet_name", "witness-format_cells"),
            argument("font_color", "witness-format_cells"),
            argument("fill_color", "witness-format_cells"),
        ];
        let error =
            "Invalid color 'witness-format_cells'. Use RRGGBB hex, e.g. 'FF0000' or '#4472C4'.";
        let retry = retry(&step, &sent, error, &Pool::default(), &[]).expect("a retry");
        // Both colours, not the sheet sent the same word.
        for colour in ["font_color", "fill_color"] {
            assert_eq!(
                spec(&retry, colour),
                Some(&ArgSpec::Pinned(json!("FF0000")))
            );
        }
        assert_eq!(
            spec(&retry, "sheet_name"),
            Some(&ArgSpec::Auto(json!("witness")))
        );
        // Once sent, the example is not sent again.
        let tried = [json!({"font_color": "FF0000"})];
        let retry = super::retry(&step, &sent, error, &Pool::default(), &tried).expect("a retry");
        assert_eq!(
            spec(&retry, "font_color"),
            Some(&ArgSpec::Pinned(json!("#4472C4")))
        );
    }

    #[test]
    fn an_error_without_an_example_asks_nothing() {
        let step = step("read_memory_file", &["file_id"]);
        let sent = [argument("file_id", "AGENTS.md")];
        assert!(
            retry(
                &step,
                &sent,
                "Memory file not found: AGENTS.md",
                &Pool::default(),
                &[]
            )
            .is_none()
        );
    }
}

//! What an answer says about its own outcome.
//!
//! Many servers report a failure inside an ordinary result: `isError` is
//! absent or false, and the content says `File not found`, carries
//! `{"success": false}`, or is the server's error object serialised as
//! JSON text. Servers write these for a model to read, so the words are
//! plain; an auditor that counts such a call as having done its job lets a
//! claim pass on a call that did nothing. [`failure`] reads an answer the
//! way a careful client would and says whether it reports a failure, with
//! the text that says so.
//!
//! The rules, each written so that a true success stays a success:
//!
//! - **A JSON object that says it failed**: `structuredContent`, or a text
//!   part that is wholly a JSON object (or an array of such objects, every
//!   one failing), with `isError: true`, `success`,
//!   `ok` or `succeeded` set to `false`, a `status` of `error`, `failed` or
//!   `failure` (or `false`, beside nothing but a message), `found: false` (the object named is not there), or a
//!   non-empty `error` (unless the same object also says
//!   `success`/`ok: true`), or a non-empty `errors` list beside no `data`.
//! - **Prose that opens with a failure**: the first line of a short answer
//!   (at most [`MAX_PROSE`] characters of text in all: a long answer is
//!   content, whatever its first line) opens with an error form
//!   (`Error:`, `Error saving note:`, `Failed to`, `Could not`, `Unable
//!   to`, `Invalid`, `Unknown`, `Refusing`, a language's exception name such
//!   as `ValueError:`, ...; marks and symbols before the first word are
//!   skipped, and a mark alone says nothing: `❌ User declined` reports
//!   the user's choice) or states one
//!   (`... not found`, `... does not exist`, `... is required`, `... must
//!   be ...`, `... is not configured`, `... cancelled`, `... already
//!   exists`, `... is outside allowed directories`, `permission
//!   denied`, `... failed: ...`, and the words for "failed" and "error"
//!   of the one non-Latin script seen in servers so far, Chinese `失败`
//!   and `错误`).
//! - **A quoted error is not a failure**: when the word that marks the
//!   failure is itself a value the call sent (a tool asked for a message of
//!   type `error` answers `Error: Operation failed` as the content it was
//!   asked for), the answer is the success it looks like.
//!
//! The sets are deliberately short and tested one by one below; a phrase
//! joins them only when it reads as a failure in any tool's answer.
//!
//! A success can also say it did nothing ([`nothing_done`]): `{"updated":
//! 0}`, `{"status": "unchanged"}`, `Nothing to update`. Such a call is no
//! failure, but a claim about what a change destroys cannot rest on it when
//! no change was observed either.

use serde_json::Value;

/// Answers whose text is longer than this are content, not an error
/// message, whatever their first line says.
pub const MAX_PROSE: usize = 1_000;

/// How much of the failing text is kept.
const SHOWN: usize = 200;

/// Forms a failing first line opens with (lowercased). Each is followed in
/// the text by a separator or more words, so `Errors found: 0` or `Error
/// handling guide` do not match `error:`.
const OPENERS: [&str; 30] = [
    "error:",
    "error -",
    "error!",
    "[error]",
    "error occurred",
    "an error occurred",
    "error executing",
    "error while",
    "failed:",
    "failed to ",
    "failure:",
    "fatal:",
    "exception:",
    "traceback (most recent call last)",
    "cannot ",
    "can't ",
    "could not ",
    "couldn't ",
    "unable to ",
    "not found",
    "no such ",
    "invalid ",
    "access denied",
    "permission denied",
    "forbidden",
    "unauthorized",
    "missing required",
    "unknown ",
    "refusing ",
    "refused ",
];

/// Words that follow `Error` in a heading that names what failed (`Error
/// in distill_batch:`, `Error while saving:`); a gerund (`Error saving
/// memory:`) is taken too.
const HEADING_LINKS: [&str; 8] = ["in", "while", "during", "on", "for", "from", "when", "with"];

/// Gerunds after `Error` that name a topic, not a failed action.
const TOPIC_GERUNDS: [&str; 5] = ["handling", "reporting", "logging", "tracking", "checking"];

/// Statements of failure anywhere in a short first line (lowercased).
const STATEMENTS: [&str; 24] = [
    " not found",
    " does not exist",
    " doesn't exist",
    " do not exist",
    " is required",
    " are required",
    " must be ",
    " must not ",
    " is not configured",
    " not allowed",
    " not permitted",
    " outside allowed ",
    " outside the allowed ",
    " cancelled",
    " canceled",
    " already exists",
    "permission denied",
    "access denied",
    "no such file",
    " failed:",
    " failed due to",
    " failed with ",
    "失败",
    "错误",
];

/// The words that carry a failure, for the quoting rule: when one of these
/// is a value the call sent, an answer that opens with it is what was
/// asked for.
const CUE_WORDS: [&str; 5] = ["error", "failed", "failure", "exception", "invalid"];

/// Whether `result` (a `tools/call` result without `isError: true`)
/// reports a failure, and if so the text that says it, clipped. `sent`
/// is the arguments the call sent (for the quoting rule).
pub fn failure(result: &Value, sent: &Value) -> Option<String> {
    if let Some(structured) = result.get("structuredContent")
        && let Some(why) = failing_object(structured)
    {
        return Some(why);
    }
    let texts = text_parts(result);
    for text in &texts {
        let trimmed = text.trim();
        if !(trimmed.starts_with('{') || trimmed.starts_with('[')) {
            continue;
        }
        let Ok(parsed) = serde_json::from_str::<Value>(trimmed) else {
            continue;
        };
        if let Some(why) = failing_object(&parsed) {
            return Some(why);
        }
        // A list of error objects (one per item asked about) failed as a
        // whole only when every item did.
        if let Some(items) = parsed.as_array()
            && !items.is_empty()
            && items.iter().all(|i| failing_object(i).is_some())
        {
            return Some(clip(&parsed.to_string()));
        }
    }
    let total: usize = texts.iter().map(|t| t.chars().count()).sum();
    if total == 0 || total > MAX_PROSE {
        return None;
    }
    let first = texts.iter().map(|t| t.trim()).find(|t| !t.is_empty())?;
    failing_prose(first, sent)
}

/// The failure a JSON object states, if it states one.
fn failing_object(value: &Value) -> Option<String> {
    let object = value.as_object()?;
    let flag = |key: &str| object.get(key).and_then(Value::as_bool);
    let says_success = flag("success") == Some(true) || flag("ok") == Some(true);
    let shown = || clip(&value.to_string());
    if flag("isError") == Some(true) {
        return Some(shown());
    }
    if ["success", "ok", "succeeded"]
        .iter()
        .any(|k| flag(k) == Some(false))
    {
        return Some(shown());
    }
    // `{"found": false}`: the object the call names is not there, so the
    // call met nothing it could act on or read (a feedback on an invented
    // memory id answers so, with isError false).
    // Not when it also gives something (an upsert's `created`, a list of
    // suggestions): then it says what it did instead.
    let gives = object.iter().any(|(key, member)| {
        key != "found"
            && (matches!(member, Value::Array(a) if !a.is_empty())
                || matches!(member, Value::Object(o) if !o.is_empty())
                || key_words(key)
                    .iter()
                    .any(|w| CHANGE_WORDS.contains(&w.as_str())))
    });
    if !says_success && !gives && flag("found") == Some(false) {
        return Some(shown());
    }
    // `{"status": false, "message": "unsupported file"}`: a boolean status
    // that is false and at most says why. A status that is false beside
    // other data (a task's id, a service's name) is a state the call read
    // or set (`{"id": "t1", "status": false, "message": "Task unchecked"}`),
    // not its outcome, and so is one beside a success.
    if !says_success
        && flag("status") == Some(false)
        && object.keys().all(|k| k == "status" || refusal_key(k))
    {
        return Some(shown());
    }
    if let Some(status) = object.get("status").and_then(Value::as_str)
        && [
            "error",
            "failed",
            "failure",
            "not_found",
            "not found",
            "notfound",
        ]
        .contains(&status.to_ascii_lowercase().as_str())
    {
        return Some(shown());
    }
    if !says_success && object.get("error").is_some_and(non_empty) {
        return Some(shown());
    }
    let errors = object
        .get("errors")
        .and_then(Value::as_array)
        .is_some_and(|e| !e.is_empty());
    if !says_success && errors && object.get("data").is_none_or(Value::is_null) {
        return Some(shown());
    }
    None
}

/// Keys beside a boolean `status: false` that say why the call failed.
const STATUS_REASONS: [&str; 10] = [
    "message",
    "msg",
    "error",
    "errors",
    "reason",
    "detail",
    "details",
    "hint",
    "code",
    "error_code",
];

/// Whether a key beside a boolean `status: false` belongs to a refusal:
/// why (`message`, `error`, `hint`), or what would have been taken
/// (`supported_extensions`, `allowed_types`, `valid_values`).
fn refusal_key(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    STATUS_REASONS.contains(&key.as_str())
        || ["supported", "allowed", "valid", "accepted"]
            .iter()
            .any(|w| key.starts_with(w))
}

/// The words an answer counts its changes with, as whole words of a key
/// (`updated`, `rowsAffected`, `deleted_count`, `chunksRemoved`).
const CHANGE_WORDS: [&str; 17] = [
    "updated", "deleted", "removed", "changed", "modified", "affected", "inserted", "added",
    "created", "written", "applied", "imported", "merged", "moved", "archived", "promoted",
    "replaced",
];

/// Words of a key that make it a time or a name, not a count (`created_at`,
/// `updated_by`, `elapsed_ms`).
const NOT_COUNTS: [&str; 9] = [
    "at", "time", "date", "by", "id", "on", "elapsed", "ms", "seconds",
];

/// Participles of reading and finding: a count of none of them (`"matched":
/// 0`) says a search found nothing, not that a change had nothing to do.
const READ_PARTICIPLES: [&str; 11] = [
    "matched", "returned", "listed", "filtered", "searched", "scanned", "checked", "skipped",
    "failed", "loaded", "fetched",
];

/// Participles that name a state a thing is in, whose count is of things
/// in that state (`"completed": 0` tasks), not of what a call did.
const STATE_PARTICIPLES: [&str; 14] = [
    "completed",
    "blocked",
    "locked",
    "expired",
    "pinned",
    "starred",
    "enabled",
    "disabled",
    "required",
    "allowed",
    "selected",
    "closed",
    "opened",
    "assigned",
];

/// Statuses that say the call left everything as it was.
const UNCHANGED_STATUSES: [&str; 6] = [
    "unchanged",
    "noop",
    "no-op",
    "no_op",
    "no_change",
    "nothing_to_do",
];

/// Openings of a first line that say nothing was changed.
const NOTHING_OPENINGS: [&str; 5] = [
    "no changes",
    "no change ",
    "nothing to ",
    "nothing was ",
    "no rows affected",
];

/// Counts a line may give anywhere, as words of their own (`UPDATE: 0
/// rows affected`, never `10 rows affected`).
const NOTHING_COUNTS: [&str; 3] = ["0 rows affected", "0 row(s) affected", "0 rows updated"];

/// Whether an answer that succeeded says it changed nothing, with the text
/// that says so: a JSON object (the structured content, or a text part
/// that is wholly one) that counts its changes, every count zero or empty
/// (`{"updated": 0}`, `{"promoted": 0, "discarded": 0}`), or whose status
/// says so (`unchanged`, `noop`); or a short prose answer whose first line
/// opens by saying so (`Nothing to update`) or counts no rows (`UPDATE: 0
/// rows affected`). An object that says it did anything (a participle
/// such as `indexed` or `saved` that is above zero, true or a non-empty
/// list), or counts nothing at all, says nothing of the kind.
pub fn nothing_done(result: &Value) -> Option<String> {
    if let Some(structured) = result.get("structuredContent")
        && let Some(why) = unchanged_object(structured)
    {
        return Some(why);
    }
    let texts = text_parts(result);
    for text in &texts {
        let trimmed = text.trim();
        if let Ok(parsed) = serde_json::from_str::<Value>(trimmed)
            && let Some(why) = unchanged_object(&parsed)
        {
            return Some(why);
        }
    }
    let total: usize = texts.iter().map(|t| t.chars().count()).sum();
    if total == 0 || total > MAX_PROSE {
        return None;
    }
    let first = texts.iter().map(|t| t.trim()).find(|t| !t.is_empty())?;
    let line = first.lines().next().unwrap_or(first);
    let words = line.trim_start_matches(|c: char| !c.is_alphanumeric());
    let lowered = format!("{} ", words.to_lowercase());
    let opens = NOTHING_OPENINGS.iter().any(|p| lowered.starts_with(p));
    let counts = NOTHING_COUNTS.iter().any(|p| {
        lowered.match_indices(p).any(|(at, _)| {
            lowered[..at]
                .chars()
                .next_back()
                .is_none_or(|c| !c.is_alphanumeric())
        })
    });
    (opens || counts).then(|| clip(line))
}

/// The words of a key, lowercased: `rowsAffected` → `rows`, `affected`;
/// `deleted_count` → `deleted`, `count`.
fn key_words(key: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut previous_lower = false;
    for c in key.chars() {
        if !c.is_alphanumeric() {
            if !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
            previous_lower = false;
            continue;
        }
        if c.is_uppercase() && previous_lower && !word.is_empty() {
            words.push(std::mem::take(&mut word));
        }
        previous_lower = c.is_lowercase();
        word.extend(c.to_lowercase());
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

/// What a JSON object says about its changes: counted none, or a status
/// of an unchanged state.
fn unchanged_object(value: &Value) -> Option<String> {
    let object = value.as_object()?;
    if let Some(status) = object.get("status").and_then(Value::as_str)
        && UNCHANGED_STATUSES.contains(&status.to_ascii_lowercase().as_str())
    {
        return Some(clip(&value.to_string()));
    }
    let mut counted = false;
    // A list or an object in the answer makes it a reader's: its counts
    // of participles are of things in a state, not of what it changed.
    let read_state = object
        .values()
        .any(|v| v.as_array().is_some_and(|a| !a.is_empty()) || v.is_object());
    for (key, value) in object {
        let words = key_words(key);
        if words.iter().any(|w| NOT_COUNTS.contains(&w.as_str())) {
            continue;
        }
        let did_something = match value {
            Value::Number(n) => n.as_f64().is_some_and(|n| n > 0.0),
            Value::Bool(b) => *b,
            Value::Array(items) => !items.is_empty(),
            _ => continue,
        };
        let change_word = words.iter().any(|w| CHANGE_WORDS.contains(&w.as_str()));
        let participle = words.iter().any(|w| w.len() > 3 && w.ends_with("ed"));
        if (change_word || participle) && did_something {
            return None;
        }
        // A count of an action's participle (`"converted": 0`,
        // `"bytes_freed": 0`) counts what the call was to do as much as a
        // change word does, in a report of counts (an answer that also
        // carries a list or an object is a reader's, whose `"completed":
        // 0` counts things in a state). A `false` is a state, not a count.
        let counted_action = !read_state
            && words.iter().any(|w| {
                w.len() >= 6
                    && w.ends_with("ed")
                    && !w.ends_with("eed")
                    && !READ_PARTICIPLES.contains(&w.as_str())
                    && !STATE_PARTICIPLES.contains(&w.as_str())
            });
        counted |= (change_word || counted_action) && !value.is_boolean();
    }
    counted.then(|| clip(&value.to_string()))
}

/// The text parts of a result's content, in order.
fn text_parts(result: &Value) -> Vec<&str> {
    result
        .get("content")
        .and_then(Value::as_array)
        .map(|parts| {
            parts
                .iter()
                .filter(|p| p.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect()
        })
        .unwrap_or_default()
}

fn non_empty(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::String(s) => !s.trim().is_empty(),
        Value::Array(items) => !items.is_empty(),
        Value::Object(map) => !map.is_empty(),
        Value::Number(_) => true,
    }
}

/// The failure a first line of prose states, unless the call asked for it.
fn failing_prose(text: &str, sent: &Value) -> Option<String> {
    let line = text.lines().next().unwrap_or(text).trim();
    // `❌ Invalid ...`, `**Error:** ...`, `⚠️ Could not ...`: the words
    // start after the marks.
    let words = line.trim_start_matches(|c: char| !c.is_alphanumeric() && c != '{' && c != '[');
    let lowered = words.to_lowercase();
    let opens = OPENERS.iter().any(|o| lowered.starts_with(o))
        || error_heading(&lowered)
        || names_an_exception(words);
    let states = line.chars().count() <= 300 && STATEMENTS.iter().any(|s| lowered.contains(s));
    if !opens && !states {
        return None;
    }
    if quotes_what_was_sent(&lowered, sent) {
        return None;
    }
    Some(clip(line))
}

/// `error saving memory: ...`, `error in distill_batch: ...`: `error`, a
/// gerund or a linking word, at most four more words, then a colon.
fn error_heading(lowered: &str) -> bool {
    let Some(rest) = lowered.strip_prefix("error ") else {
        return false;
    };
    let Some((head, _)) = rest.split_once(':') else {
        return false;
    };
    let words: Vec<&str> = head.split_whitespace().collect();
    let linked = words.first().is_some_and(|w| {
        (w.ends_with("ing") && !TOPIC_GERUNDS.contains(w)) || HEADING_LINKS.contains(w)
    });
    linked && words.len() <= 5 && !head.contains('.')
}

/// `ValueError: ...`, `KeyError('x')`, `java.io.FileNotFoundException: ...`:
/// a first word that is an exception's name.
fn names_an_exception(line: &str) -> bool {
    let word: String = line
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '.' || *c == '_')
        .collect();
    let rest = &line[word.len()..];
    let name = word.rsplit('.').next().unwrap_or(&word);
    let shaped = name.chars().next().is_some_and(|c| c.is_ascii_uppercase())
        && (name.ends_with("Error") || name.ends_with("Exception"));
    shaped && (rest.starts_with(':') || rest.starts_with('('))
}

/// Whether the failure word the line opens with is a value the call sent:
/// then the answer is what was asked for.
fn quotes_what_was_sent(lowered: &str, sent: &Value) -> bool {
    let mut values = Vec::new();
    string_leaves(sent, &mut values);
    CUE_WORDS
        .iter()
        .filter(|w| lowered.contains(*w))
        .any(|w| values.iter().any(|v| v.to_lowercase() == *w))
}

/// Every string inside `value`, however deep, in document order.
pub fn string_leaves<'v>(value: &'v Value, out: &mut Vec<&'v str>) {
    match value {
        Value::String(s) => out.push(s),
        Value::Array(items) => items.iter().for_each(|v| string_leaves(v, out)),
        Value::Object(map) => map.values().for_each(|v| string_leaves(v, out)),
        _ => {}
    }
}

fn clip(text: &str) -> String {
    let mut out: String = text.chars().take(SHOWN).collect();
    if text.chars().count() > SHOWN {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn text(t: &str) -> Value {
        json!({"content": [{"type": "text", "text": t}]})
    }

    fn fails(result: Value) -> bool {
        failure(&result, &json!({})).is_some()
    }

    #[test]
    fn json_objects_that_say_they_failed_are_failures() {
        for body in [
            r#"{"success": false, "message": "nothing to delete"}"#,
            r#"{"ok": false}"#,
            r#"{"isError": true, "content": "boom"}"#,
            r#"{"error": "View definition must be a SELECT query"}"#,
            r#"{"error": {"code": 404, "message": "no note"}}"#,
            r#"{"status": "error", "detail": "locked"}"#,
            r#"{"status": "not_found"}"#,
            r#"{"status": false, "message": "unsupported_file"}"#,
            r#"{"status": false}"#,
            r#"{"status": false, "error": "unsupported_file", "supported_extensions": [".xlsx"]}"#,
            r#"{"found": false}"#,
            r#"{"found": false, "id": "witness-1", "results": []}"#,
            r#"{"errors": ["bad id"]}"#,
            r#"[{"error": "Semantic search is not enabled; use mode='keyword'"}]"#,
        ] {
            assert!(fails(text(body)), "{body}");
        }
        assert!(fails(json!({
            "content": [{"type": "text", "text": "{}"}],
            "structuredContent": {"success": false}
        })));
    }

    #[test]
    fn json_objects_that_succeed_stay_successes() {
        for body in [
            r#"{"success": true, "error": null}"#,
            r#"{"ok": true, "error": "none"}"#,
            r#"{"error": null, "rows": [1]}"#,
            r#"{"error": "", "id": 3}"#,
            r#"{"data": {"x": 1}, "errors": ["partial"]}"#,
            r#"{"status": "done"}"#,
            r#"{"status": false, "name": "worker", "pid": null}"#,
            r#"{"id": "t1", "status": false, "message": "Task unchecked"}"#,
            r#"{"success": true, "status": false, "message": "marked as not done"}"#,
            r#"{"name": "worker", "status": false, "details": {"port": 1}}"#,
            r#"{"status": true, "message": "saved"}"#,
            r#"{"found": true, "memory": {"id": "m1"}}"#,
            r#"{"found": false, "created": "m2"}"#,
            r#"{"found": false, "suggestions": ["garden"]}"#,
            r#"{"success": true, "found": false, "created": "m2"}"#,
            r#"{"entities": [{"name": "error", "observations": []}]}"#,
            r#"[{"error": "locked", "id": 1}, {"id": 2, "title": "kept"}]"#,
            r#"[]"#,
        ] {
            assert!(!fails(text(body)), "{body}");
        }
    }

    #[test]
    fn answers_that_count_no_changes_say_nothing_was_done() {
        let done = |r: Value| nothing_done(&r).is_some();
        for body in [
            r#"{"project": "p", "field": "license", "updated": 0}"#,
            r#"{"promoted": 0, "discarded": 0, "message": "Staging inbox empty."}"#,
            r#"{"rowsAffected": 0}"#,
            r#"{"moved": [], "ok": true}"#,
            r#"{"status": "unchanged"}"#,
            r#"{"converted": 0, "eligible": 0, "bytes_freed": 0, "keep_seconds": 604800}"#,
        ] {
            assert!(done(text(body)), "{body}");
        }
        assert!(done(json!({"structuredContent": {"deleted_count": 0}})));
        for prose in [
            "Nothing to update.",
            "No changes made",
            "UPDATE: 0 rows affected",
            "✅ No changes",
        ] {
            assert!(done(text(prose)), "{prose}");
        }
        // Whole words, not parts of others; a participle that did something
        // says something was done; a phrase inside a name says nothing.
        for body in [
            r#"{"id": "m1", "importance": 0}"#,
            r#"{"applications": [], "modifiers": []}"#,
            r#"{"indexed": 5, "removed": 0}"#,
            r#"{"upserted": 3, "inserted": 0}"#,
            r#"{"saved": true, "updated": 0}"#,
            r#"{"created_at": 0, "updated_by": 0}"#,
            r#"{"results": [], "elapsed_ms": 0}"#,
            r#"{"text": "a", "truncated": false}"#,
            r#"{"query": "q", "matched": 0, "returned": 0}"#,
            r#"{"tasks": 5, "completed": 0}"#,
            r#"{"value": 42, "seed": 0}"#,
            r#"{"items": ["a"], "processed": 0}"#,
            "UPDATE: 10 rows affected",
            "Created task 'nothing to lose'",
        ] {
            assert!(!done(text(body)), "{body}");
        }
        // A count above zero, no count at all, or a long answer: said nothing of the kind.
        for body in [
            r#"{"updated": 1}"#,
            r#"{"updated": 0, "created": 2}"#,
            r#"{"id": 3, "title": "kept"}"#,
            r#"{"updated_at": "2026-01-01"}"#,
            r#"{"status": "ok"}"#,
            "Workspace set to /w",
        ] {
            assert!(!done(text(body)), "{body}");
        }
        assert!(!done(text(&format!(
            "Nothing to do here.\n{}",
            "x".repeat(2000)
        ))));
    }

    #[test]
    fn prose_that_opens_with_or_states_a_failure_is_a_failure() {
        for line in [
            "File not found: notes/witness.md",
            "Error: ENOENT: no such file or directory",
            "Deletion cancelled for safety. Use force: true to delete a non-empty folder.",
            "Path must be a portable vault-relative path",
            "Vault 'work' is not configured. Available vaults: notes",
            "At least one tag or pattern is required",
            "Failed to write file: EACCES",
            "Could not find project witness",
            "ValueError: invalid literal for int() with base 10: 'witness'",
            "KeyError('witness')",
            "Invalid date format, expected YYYY-MM-DD",
            "A note named witness already exists",
            "Project witness does not exist. Available projects: main",
            "Error saving memory: add_memory needs kind=fact|note plus name=",
            "Error in distill_batch: Expecting value: line 1 column 1 (char 0)",
            "Error deleting memory: id must look like 'notes.md:12#a1b2'",
            "Unknown project 'witness'. See PROJECTS.md.",
            "❌ Request failed:",
            "❌ Refusing root outside home directory: /work/witness",
            "**Error:** the vault is locked",
            "切换分支失败: Cmd('git') failed due to: exit code(1)",
            "Cmd('git') failed due to: exit code(128)",
            "❌ Path '/Users/you/a.md' is outside allowed directories. Allowed roots: ['/v']",
            "Path /tmp/x is outside the allowed roots",
        ] {
            assert!(fails(text(line)), "{line}");
        }
    }

    #[test]
    fn successes_that_mention_errors_stay_successes() {
        for line in [
            "Error handling guide\n\nThis note explains how we handle errors.",
            "Errors found: 0",
            "Deleted 3 notes",
            "No notes matched 'witness'",
            "Created entity witness",
            "Successfully wrote to notes/a.md",
            "Found 2 errors in the log",
            "Error handling: see the guide in docs/errors.md. It covers retries.",
            "Error codes: E1 E2",
            "Unknowns resolved: 3",
            "✓ Saved notes/a.md",
            "❌ User declined to provide the requested information.",
            "",
        ] {
            assert!(!fails(text(line)), "{line:?}");
        }
    }

    #[test]
    fn a_long_answer_is_content_whatever_its_first_line() {
        let long = format!("Error: quoted\n{}", "x".repeat(MAX_PROSE));
        assert!(!fails(text(&long)));
    }

    #[test]
    fn an_error_the_call_asked_for_is_the_success_it_looks_like() {
        let answer = text("Error: Operation failed");
        assert!(failure(&answer, &json!({"messageType": "error"})).is_none());
        assert!(failure(&answer, &json!({"messageType": "info"})).is_some());
    }

    #[test]
    fn the_failing_text_is_clipped() {
        let line = format!("Error: {}", "y".repeat(400));
        let why = failure(&text(&line), &json!({})).unwrap_or_default();
        assert!(why.chars().count() <= SHOWN + 1, "{why}");
        assert!(why.ends_with('…'));
    }
}

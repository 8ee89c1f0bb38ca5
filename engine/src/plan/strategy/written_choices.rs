//! **A parameter's choices written in prose.** Many servers keep a
//! parameter's valid values out of the schema and in words: the tool's
//! description says `type: episode|fact|insight|skill|decision`, a
//! parameter's own description says `fact|decision`, an error says
//! `add_memory needs kind=fact|concept|note`. A plain `string` with the
//! audit's own word (`witness`) is then refused, often with no reason
//! given (`Error executing tool memory_write`), and every tool that needed
//! what that call would have made (the memory a feedback, a link or a
//! delete acts on) is handed an invented id.
//!
//! So a string parameter with no `enum`, `const`, `examples` or non-null
//! `default` whose choices are written as `name: a|b|c` or `name=a|b|c`
//! in the tool's description, or as `a|b|c` in its own description, is
//! given the first of them as its example: at least two choices, each one
//! plain word (letters, digits, `_`, `-`, `.`), so a path, a pipe in a
//! sentence or a regular expression is no list. The same reading, by
//! name only, serves the errors ([`super::read_error`]), where the next
//! choice not sent before is tried.
//!
//! Example: `memory_write {"type": string}` described `Write a memory.
//! type: episode|fact|insight; ...` is called with `"type": "episode"`.

use serde_json::Value;

/// The choices `text` writes for the parameter `name` as `name=a|b|c` or
/// `name: a|b|c`: at least two, each one plain word. The name must start
/// a word (`subkind=` is not `kind=`).
pub fn assigned_choices(text: &str, name: &str) -> Vec<String> {
    // An empty name would be found everywhere and never move on.
    if name.is_empty() {
        return Vec::new();
    }
    let text = head(text);
    let mut at = 0;
    while let Some(found) = text[at..].find(name) {
        let start = at + found;
        at = start + name.len();
        if text[..start]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_')
        {
            continue;
        }
        let rest = &text[at..];
        let rest = match rest.strip_prefix('=') {
            Some(after) => after,
            None => match rest.strip_prefix(':') {
                Some(after) => after.trim_start_matches(' '),
                None => continue,
            },
        };
        let choices = piped_word(rest);
        if choices.len() >= 2 {
            return choices;
        }
    }
    Vec::new()
}

/// The choices `text` writes on their own as `a|b|c`, the first such run
/// in it (a parameter's own description: `fact|decision`, `One of
/// low|medium|high.`).
pub fn listed_choices(text: &str) -> Vec<String> {
    let text = head(text);
    let mut at = 0;
    while let Some(found) = text[at..].find('|') {
        let bar = at + found;
        at = bar + 1;
        // Back to the start of the word before the bar.
        let start = text[..bar]
            .char_indices()
            .rev()
            .find(|(_, c)| !is_plain(*c))
            .map_or(0, |(i, c)| i + c.len_utf8());
        // A run of its own: after a space (or nothing), and ended by a
        // space, a comma, a semicolon or a full stop, never inside a
        // bracket or an expression (`^(a|b)$`).
        let alone_before = text[..start]
            .chars()
            .next_back()
            .is_none_or(|c| c.is_whitespace() || c == ':');
        if !alone_before {
            continue;
        }
        let run = &text[start..];
        let end = run_end(run);
        let alone_after = run[end..]
            .chars()
            .next()
            .is_none_or(|c| c.is_whitespace() || ",;".contains(c));
        if !alone_after {
            // Every bar of this run is inside it: on past its end.
            at = start + end.max(1);
            while !text.is_char_boundary(at) {
                at += 1;
            }
            continue;
        }
        let choices = piped_word(run);
        if choices.len() >= 2 {
            return choices;
        }
    }
    Vec::new()
}

/// The choices a parameter's own description is made of, written as a
/// list in prose: `thin, medium, thick, or dotted.`, `left, center, right
/// or justify`. At least three, each one plain word, and nothing else in
/// the sentence, so a description that only mentions words (`Text color,
/// RRGGBB hex`) is no list.
pub fn prose_choices(text: &str) -> Vec<String> {
    let sentence = head(text)
        .trim()
        .split(". ")
        .next()
        .unwrap_or("")
        .trim_end_matches('.');
    let items: Vec<&str> = sentence
        .split(',')
        .flat_map(|part| part.split(" or "))
        .map(|item| {
            let item = item.trim();
            item.strip_prefix("or ").unwrap_or(item).trim()
        })
        .filter(|item| !item.is_empty())
        .collect();
    let plain = |item: &&str| {
        item.chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '-')
    };
    if items.len() >= 3 && items.iter().all(plain) && sentence.contains(" or ") {
        items.into_iter().map(str::to_owned).collect()
    } else {
        Vec::new()
    }
}

/// The first [`MAX_READ`] bytes of `text` (at a character's boundary):
/// choices are written near a parameter's name, and a description of any
/// length is then read in time linear in this bound.
fn head(text: &str) -> &str {
    let mut end = text.len().min(MAX_READ);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// Most bytes of a description read for choices.
const MAX_READ: usize = 16 * 1024;

fn is_plain(c: char) -> bool {
    c.is_alphanumeric() || "_-.".contains(c)
}

/// Where a run of choices that starts `text` ends: at a space, or at
/// punctuation that closes or separates (`,;)]}` and quotes).
fn run_end(text: &str) -> usize {
    text.find(|c: char| c.is_whitespace() || ",;)]}\"'`".contains(c))
        .unwrap_or(text.len())
}

/// `a|b|c` at the start of `text`, up to a space or punctuation, split at
/// the bars: empty unless every part is a plain word.
fn piped_word(text: &str) -> Vec<String> {
    let choices: Vec<String> = text[..run_end(text)]
        .trim_end_matches('.')
        .split('|')
        .map(str::to_owned)
        .collect();
    let plain = |c: &String| !c.is_empty() && c.len() <= 64 && c.chars().all(is_plain);
    if choices.len() >= 2 && choices.iter().all(plain) {
        choices
    } else {
        Vec::new()
    }
}

/// `schema` with each top-level string property that offers no value of
/// its own, and that `names_a_place_or_thing` does not claim, given the
/// first choice written for it, by the tool's `description` or its own,
/// as its example. `None` when nothing was added.
pub fn with_written_choices(
    schema: &Value,
    description: &str,
    names_a_place_or_thing: impl Fn(&str) -> bool,
) -> Option<Value> {
    let properties = schema.get("properties")?.as_object()?;
    let mut chosen: Vec<(String, String)> = Vec::new();
    for (name, sub) in properties {
        // A path, a fresh name, SQL or an object's id has rules of its
        // own: a choice written beside it is an example of a kind, not a
        // value to send in place of a real or fresh one.
        if names_a_place_or_thing(name) {
            continue;
        }
        let offers = ["enum", "const", "examples", "example"]
            .iter()
            .any(|k| sub.get(*k).is_some())
            || sub.get("default").is_some_and(|d| !d.is_null());
        if offers || !takes_text(sub) {
            continue;
        }
        let own = sub.get("description").and_then(Value::as_str).unwrap_or("");
        let choices = {
            let written = assigned_choices(description, name);
            if !written.is_empty() {
                written
            } else {
                let piped = listed_choices(own);
                if piped.is_empty() {
                    prose_choices(own)
                } else {
                    piped
                }
            }
        };
        if let Some(first) = choices.into_iter().next() {
            chosen.push((name.clone(), first));
        }
    }
    if chosen.is_empty() {
        return None;
    }
    let mut out = schema.clone();
    let props = out.get_mut("properties")?.as_object_mut()?;
    for (name, first) in chosen {
        if let Some(Value::Object(sub)) = props.get_mut(&name) {
            sub.insert("examples".into(), Value::Array(vec![Value::String(first)]));
        }
    }
    Some(out)
}

/// Whether a property takes a string: typed so, untyped, or a string
/// among alternatives (`anyOf: [string, null]`).
pub(crate) fn takes_text(sub: &Value) -> bool {
    let string = |v: &Value| match v.get("type") {
        Some(Value::String(t)) => t == "string",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "string"),
        _ => false,
    };
    if string(sub) {
        return true;
    }
    let alternatives = ["anyOf", "oneOf"]
        .iter()
        .filter_map(|k| sub.get(*k).and_then(Value::as_array))
        .flatten()
        .collect::<Vec<_>>();
    if !alternatives.is_empty() {
        return alternatives.iter().any(|v| string(v));
    }
    sub.get("type").is_none() && sub.get("$ref").is_none()
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    #[test]
    fn choices_assigned_with_an_equals_sign_or_a_colon_are_read() {
        assert_eq!(
            assigned_choices("add_memory needs kind=fact|concept|note", "kind"),
            ["fact", "concept", "note"]
        );
        assert_eq!(
            assigned_choices(
                "Write a memory. type: episode|fact|insight|skill|decision; source: id",
                "type"
            ),
            ["episode", "fact", "insight", "skill", "decision"]
        );
        assert!(assigned_choices("subkind=a|b", "kind").is_empty());
        assert!(assigned_choices("kind=a only", "kind").is_empty());
        assert!(assigned_choices("no assignment here", "kind").is_empty());
        assert!(assigned_choices("path: /a|/b", "path").is_empty());
        assert!(
            assigned_choices("type: a|b", "").is_empty(),
            "an empty name"
        );
        assert!(assigned_choices("", "type").is_empty());
        assert!(assigned_choices("type: the kind of memory", "type").is_empty());
    }

    #[test]
    fn choices_listed_alone_are_read_and_a_pipe_in_prose_is_not() {
        assert_eq!(listed_choices("fact|decision"), ["fact", "decision"]);
        assert_eq!(
            listed_choices("Priority, one of low|medium|high."),
            ["low", "medium", "high"]
        );
        assert!(listed_choices("a regex such as ^(a|b)$ or a | b").is_empty());
        assert!(listed_choices("see (a|b) or x|y$").is_empty());
        assert!(listed_choices("no choices").is_empty());
        // A long run of bars with no choice list alone is read in time.
        let long = "a|".repeat(200_000) + "$";
        assert!(listed_choices(&long).is_empty());
        assert!(assigned_choices(&"k=k".repeat(100_000), "k").is_empty());
    }

    #[test]
    fn a_free_string_gets_the_first_written_choice_and_an_offered_value_is_kept() {
        let schema = json!({
            "type": "object",
            "properties": {
                "type": {"type": "string"},
                "level": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null,
                          "description": "low|high"},
                "mode": {"type": "string", "enum": ["x", "y"]},
                "ns": {"type": "string", "default": "_shared"},
                "count": {"type": "integer", "description": "1|2"}
            }
        });
        let described = "Write. type: episode|fact; mode: a|b; ns: one|two";
        let out = with_written_choices(&schema, described, |_| false).expect("choices added");
        assert_eq!(out["properties"]["type"]["examples"], json!(["episode"]));
        assert_eq!(out["properties"]["level"]["examples"], json!(["low"]));
        assert!(out["properties"]["mode"].get("examples").is_none());
        assert!(out["properties"]["ns"].get("examples").is_none());
        assert!(out["properties"]["count"].get("examples").is_none());
        let plain = json!({"type": "object", "properties": {"type": {"type": "string"}}});
        assert_eq!(
            with_written_choices(&plain, "Write a memory.", |_| false),
            None
        );
        let claimed = with_written_choices(&schema, described, |n| n == "type")
            .expect("the others still get theirs");
        assert!(claimed["properties"]["type"].get("examples").is_none());
    }
    #[test]
    fn a_description_that_is_a_list_in_prose_offers_its_first_word() {
        assert_eq!(
            prose_choices("thin, medium, thick, double, dashed, or dotted."),
            vec!["thin", "medium", "thick", "double", "dashed", "dotted"]
        );
        assert_eq!(
            prose_choices("top, center, or bottom"),
            vec!["top", "center", "bottom"]
        );
        // Words mentioned in a sentence are no list, nor two words.
        assert!(prose_choices("Text color, RRGGBB hex (e.g. \"FFFFFF\").").is_empty());
        assert!(prose_choices("Target sheet. None = first sheet.").is_empty());
        assert!(prose_choices("left or right").is_empty());
        assert!(prose_choices("a, b, c").is_empty());
    }

    #[test]
    fn a_prose_list_in_a_parameter_s_own_description_is_its_example() {
        let schema = json!({"type": "object", "properties": {
            "border_style": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null,
                "description": "thin, medium, thick, or dotted."}}});
        let out = with_written_choices(&schema, "", |_| false).expect("a choice");
        assert_eq!(
            out["properties"]["border_style"]["examples"],
            json!(["thin"])
        );
    }
}

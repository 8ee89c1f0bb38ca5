//! The patterns metadata findings look for. Each list is the one
//! `docs/response-lane.md` documents; a change here is a change there.

use serde_json::Value;
use witness_model::audit::{MetadataFinding, MetadataKind, ToolEntry};

/// A phrase: words in order, each `a|b|c` (any one of them) or `?a|b`
/// (optional). Matched against words of ASCII-lowercased text.
type Phrase = &'static [&'static str];

const OVERRIDE: &str = "an instruction to the model to set aside its other instructions";
const CONCEAL: &str = "an instruction to the model to keep something from the user";
const ADDRESSED: &str = "text addressed to the model, not a description of the tool";
const TAG: &str = "markup that poses as a system message or an instruction block";

const PHRASES: [(Phrase, &str); 9] = [
    (
        &[
            "ignore|disregard|forget|override|bypass",
            "?all|any",
            "?of",
            "?the|your|my|these|those",
            "previous|prior|above|earlier|preceding|former|original|system|other",
            "instructions|instruction|prompt|prompts|rules|directions|guidelines|messages|context",
        ],
        OVERRIDE,
    ),
    (
        &[
            "ignore|disregard",
            "all|any",
            "instructions|rules|guidelines",
        ],
        OVERRIDE,
    ),
    (
        &[
            "do|does|must|should|shall",
            "not",
            "tell|inform|mention|reveal|show|notify|alert",
            "?this|it|anything|that",
            "?to",
            "the|your",
            "user|users|human",
        ],
        CONCEAL,
    ),
    (
        &[
            "don't|dont|don\u{2019}t|never",
            "tell|inform|mention|reveal|show|notify|alert",
            "?this|it|anything|that",
            "?to",
            "the|your",
            "user|users|human",
        ],
        CONCEAL,
    ),
    (
        &[
            "without",
            "telling|informing|notifying|alerting|asking",
            "the|your",
            "user|users|human",
        ],
        CONCEAL,
    ),
    (
        &[
            "hide|conceal|keep",
            "?this|it|that",
            "?secret|hidden",
            "from",
            "the|your",
            "user|users|human",
        ],
        CONCEAL,
    ),
    (
        &[
            "the|your",
            "user|users",
            "must|should|does|do|need",
            "not|never",
            "know|see|notice|learn",
        ],
        CONCEAL,
    ),
    (
        &[
            "note|message|instructions|instruction|reminder",
            "to|for",
            "?the",
            "ai|assistant|model|llm|agent",
        ],
        ADDRESSED,
    ),
    (
        &["attention", "?the", "ai|assistant|model|llm|agent"],
        ADDRESSED,
    ),
];

const TAGS: [&str; 12] = [
    "<important>",
    "</important>",
    "<system>",
    "</system>",
    "<instructions>",
    "</instructions>",
    "[system]",
    "[instructions]",
    "<secret>",
    "<hidden>",
    "<|im_start|>",
    "<|system|>",
];

/// Words of `text` with their byte ranges: runs of ASCII letters, digits
/// and apostrophes, lowercased (ASCII lowercasing keeps byte offsets).
fn words(text: &str) -> Vec<(usize, usize, String)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices() {
        let part = c.is_ascii_alphanumeric() || c == '\'' || c == '\u{2019}';
        match (part, start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                out.push((s, i, text[s..i].to_ascii_lowercase()));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push((s, text.len(), text[s..].to_ascii_lowercase()));
    }
    out
}

/// The index after the last word of `phrase` matched from word `i`.
fn matches_at(words: &[(usize, usize, String)], i: usize, phrase: &[&str]) -> Option<usize> {
    let Some((first, rest)) = phrase.split_first() else {
        return Some(i);
    };
    let (optional, options) = match first.strip_prefix('?') {
        Some(options) => (true, options),
        None => (false, *first),
    };
    let here = words
        .get(i)
        .filter(|w| options.split('|').any(|o| o == w.2))
        .and_then(|_| matches_at(words, i + 1, rest));
    if here.is_some() {
        return here;
    }
    if optional {
        return matches_at(words, i, rest);
    }
    None
}

/// Byte ranges of hidden instructions in `text`, each with why.
pub(super) fn instructions(text: &str) -> Vec<(usize, usize, &'static str)> {
    let list = words(text);
    let mut out = Vec::new();
    for i in 0..list.len() {
        for (phrase, why) in PHRASES {
            if let Some(end) = matches_at(&list, i, phrase).filter(|e| *e > i) {
                out.push((list[i].0, list[end - 1].1, why));
                break;
            }
        }
    }
    let lowered = text.to_ascii_lowercase();
    for tag in TAGS {
        for (at, _) in lowered.match_indices(tag) {
            out.push((at, at + tag.len(), TAG));
        }
    }
    out.sort();
    out
}

/// Byte ranges of credential-shaped strings in `text`, each with what it
/// looks like.
pub(super) fn secret_shaped(text: &str) -> Vec<(usize, usize, &'static str)> {
    let mut out = Vec::new();
    let mut start = None;
    let token = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.');
    for (i, c) in text
        .char_indices()
        .chain(std::iter::once((text.len(), ' ')))
    {
        match (token(c) && i < text.len(), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                let word = text[s..i].trim_end_matches('.');
                if let Some(what) = credential(word) {
                    out.push((s, s + word.len(), what));
                }
                start = None;
            }
            _ => {}
        }
    }
    if let Some(at) = text.find("-----BEGIN ") {
        let head = &text[at..];
        if let Some(end) = head.find("PRIVATE KEY-----").filter(|e| *e < 40) {
            let stop = head
                .find("-----END ")
                .and_then(|e| head[e..].find("KEY-----").map(|k| e + k + 8))
                .unwrap_or(end + 16);
            out.push((at, at + stop, "a private key"));
        }
    }
    out
}

fn run_of(word: &str, prefix: &str, min: usize, extra: &[char]) -> bool {
    word.strip_prefix(prefix).is_some_and(|rest| {
        rest.len() >= min
            && rest
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || extra.contains(&c))
    })
}

/// What a token looks like, when it looks like a credential.
fn credential(word: &str) -> Option<&'static str> {
    let aws = (word.starts_with("AKIA") || word.starts_with("ASIA"))
        && word.len() == 20
        && word
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit());
    if aws {
        return Some("an AWS access key id");
    }
    let github = ["ghp_", "gho_", "ghu_", "ghs_", "ghr_"]
        .iter()
        .any(|p| run_of(word, p, 36, &[]))
        || run_of(word, "github_pat_", 22, &['_']);
    if github {
        return Some("a GitHub token");
    }
    let shapes: [(&str, usize, &[char], &'static str); 7] = [
        ("sk-", 20, &['_', '-'], "a secret API key (sk-)"),
        ("sk_live_", 16, &[], "a Stripe secret key"),
        ("rk_live_", 16, &[], "a Stripe restricted key"),
        ("AIza", 35, &['_', '-'], "a Google API key"),
        ("glpat-", 20, &['_', '-'], "a GitLab token"),
        ("npm_", 36, &[], "an npm token"),
        ("xoxb-", 10, &['-'], "a Slack token"),
    ];
    if let Some((_, _, _, what)) = shapes
        .iter()
        .find(|(prefix, min, extra, _)| run_of(word, prefix, *min, extra))
    {
        return Some(what);
    }
    if ["xoxp-", "xoxa-", "xoxr-", "xoxs-"]
        .iter()
        .any(|p| run_of(word, p, 10, &['-']))
    {
        return Some("a Slack token");
    }
    let parts: Vec<&str> = word.split('.').collect();
    let jwt = parts.len() == 3
        && parts[0].starts_with("eyJ")
        && parts[1].starts_with("eyJ")
        && parts.iter().all(|p| {
            p.len() >= 10
                && p.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'))
        });
    jwt.then_some("a JSON Web Token")
}

/// Words that say a tool runs commands, in its name.
const SHELL_NAMES: [&str; 12] = [
    "shell",
    "bash",
    "sh",
    "zsh",
    "powershell",
    "pwsh",
    "terminal",
    "exec",
    "cmd",
    "subprocess",
    "command",
    "commands",
];

/// Phrases that say a tool runs commands, in its description.
const SHELL_PHRASES: [Phrase; 3] = [
    &[
        "run|runs|running|execute|executes|executing",
        "?a|an|the|any|arbitrary",
        "shell|terminal|bash|system|os",
        "?command|commands|script|scripts",
    ],
    &[
        "shell|terminal|bash|powershell",
        "command|commands|script|scripts",
    ],
    &["command", "line"],
];

/// Words of an identifier: `runCommand`, `run_command`, `run-command`.
fn name_words(name: &str) -> Vec<String> {
    let mut spaced = String::new();
    let mut lower_before = false;
    for c in name.chars() {
        if c.is_ascii_uppercase() && lower_before {
            spaced.push(' ');
        }
        lower_before = c.is_ascii_lowercase();
        spaced.push(c);
    }
    words(&spaced).into_iter().map(|w| w.2).collect()
}

/// What says a tool runs commands: a word of its name or a phrase of its
/// description, quoted.
fn runs_commands(tool: &ToolEntry) -> Option<String> {
    if let Some(word) = name_words(&tool.name)
        .into_iter()
        .find(|w| SHELL_NAMES.contains(&w.as_str()))
    {
        return Some(format!("its name says \u{201c}{word}\u{201d}"));
    }
    let description = tool.description.as_deref()?;
    let list = words(description);
    (0..list.len()).find_map(|i| {
        SHELL_PHRASES.iter().find_map(|phrase| {
            matches_at(&list, i, phrase).filter(|e| *e > i).map(|end| {
                let span = &description[list[i].0..list[end - 1].1];
                format!(
                    "its description says \u{201c}{}\u{201d}",
                    witness_text::clip(span, 80)
                )
            })
        })
    })
}

/// A string parameter nothing constrains: no enum, const, pattern or format.
fn free_text(schema: &Value) -> bool {
    let string = match schema.get("type") {
        Some(Value::String(t)) => t == "string",
        Some(Value::Array(types)) => types.iter().any(|t| t == "string"),
        _ => false,
    };
    string
        && ["enum", "const", "pattern", "format"]
            .iter()
            .all(|k| schema.get(k).is_none())
}

/// Free-text parameters of a tool that says it runs commands.
pub(super) fn shell_free_text(tool: &ToolEntry) -> Vec<MetadataFinding> {
    let Some(why) = runs_commands(tool) else {
        return Vec::new();
    };
    let Some(properties) = tool
        .input_schema
        .as_ref()
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
    else {
        return Vec::new();
    };
    properties
        .iter()
        .filter(|(_, schema)| free_text(schema))
        .map(|(name, _)| MetadataFinding {
            kind: MetadataKind::ShellFreeText,
            tool: tool.name.clone(),
            field: format!(
                "/inputSchema/properties/{}",
                name.replace('~', "~0").replace('/', "~1")
            ),
            span: witness_text::clip(name, 120),
            at: 0,
            detail: format!(
                "a free-text parameter constrained by no enum, const, pattern or format, of a tool that runs commands: {why}"
            ),
        })
        .collect()
}

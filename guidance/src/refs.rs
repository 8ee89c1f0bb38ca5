//! What the guidance report may name, and how instructions name tools.
//!
//! Only identifiers that pass [`is_identifier`] ever reach a report. Tool
//! references are found in inline code spans (Markdown backtick runs) of the
//! server's instructions; nothing else in the prose is read.

use std::collections::{BTreeSet, HashMap, VecDeque};

/// Longest identifier a report shows.
pub const MAX_IDENTIFIER_CHARS: usize = 128;

/// A tool name (or server label) safe to print: 1 to 128 ASCII letters,
/// digits, `_`, `-` or `.`, the character set the MCP specification
/// recommends for tool names.
pub fn is_identifier(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= MAX_IDENTIFIER_CHARS
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

/// The contents of every inline code span in `text` that is an identifier.
///
/// A span opens with a run of N backticks and closes at the next run of
/// exactly N backticks; one space on each side is stripped when both are
/// there. An opening run without a closing one is plain text. Linear in the
/// length of `text`, whatever it holds.
pub fn inline_code_identifiers(text: &str) -> BTreeSet<String> {
    let bytes = text.as_bytes();
    // Every run of backticks: (start, length).
    let mut runs: Vec<(usize, usize)> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'`' {
            let start = i;
            while i < bytes.len() && bytes[i] == b'`' {
                i += 1;
            }
            runs.push((start, i - start));
        } else {
            i += 1;
        }
    }
    // For each length, the indices of the runs of that length, in order.
    let mut by_len: HashMap<usize, VecDeque<usize>> = HashMap::new();
    for (index, (_, len)) in runs.iter().enumerate() {
        by_len.entry(*len).or_default().push_back(index);
    }
    let mut found = BTreeSet::new();
    let mut index = 0;
    while index < runs.len() {
        let (start, len) = runs[index];
        let queue = by_len.entry(len).or_default();
        while queue.front().is_some_and(|&j| j <= index) {
            queue.pop_front();
        }
        let Some(&close) = queue.front() else {
            index += 1;
            continue;
        };
        let inner = &text[start + len..runs[close].0];
        let inner = match (inner.strip_prefix(' '), inner.ends_with(' ')) {
            (Some(rest), true) if !rest.is_empty() => &rest[..rest.len() - 1],
            _ => inner,
        };
        if is_identifier(inner) {
            found.insert(inner.to_owned());
        }
        index = close + 1;
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_plain_ascii_names() {
        assert!(is_identifier("get-roots-list"));
        assert!(is_identifier("a.b_c-9"));
        assert!(!is_identifier(""));
        assert!(!is_identifier("with space"));
        assert!(!is_identifier("bell\u{7}"));
        assert!(!is_identifier("naïve"));
        assert!(!is_identifier(&"x".repeat(129)));
    }

    #[test]
    fn spans_follow_backtick_runs() {
        let text = "Use `get-roots-list` first, ``trigger-sampling-request`` then \
                    `` echo `` and `not an id` and ``unclosed and `x`";
        let found: Vec<String> = inline_code_identifiers(text).into_iter().collect();
        assert_eq!(
            found,
            vec!["echo", "get-roots-list", "trigger-sampling-request", "x"]
        );
        assert!(inline_code_identifiers("no code at all").is_empty());
        assert!(inline_code_identifiers("`dangling").is_empty());
    }

    #[test]
    fn many_unmatched_runs_stay_linear() {
        let text: String = (1..2000).map(|n| "`".repeat(n % 50 + 1) + "a ").collect();
        let _ = inline_code_identifiers(&text);
    }
}

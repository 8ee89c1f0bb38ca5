//! A word-level diff of two texts, bounded so a hostile description cannot
//! make it quadratic.

use serde_json::Value;
use witness_model::manifest::diff::{Change, ChangeClass, WordOp, WordRun};

/// Longest inputs the word diff aligns word by word; past this (product of
/// token counts) it reports the whole text replaced, so a hostile megabyte
/// description cannot make the diff quadratic.
const WORD_DIFF_CELLS: usize = 4_000_000;

/// A token of a text: the whitespace before it, and the token itself (a run
/// of letters, digits and `_`, or one other character).
fn tokens(text: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut space = String::new();
    let mut word = String::new();
    let mut word_space = String::new();
    let flush = |out: &mut Vec<(String, String)>, word: &mut String, word_space: &mut String| {
        if !word.is_empty() {
            out.push((std::mem::take(word_space), std::mem::take(word)));
        }
    };
    for c in text.chars() {
        if c.is_whitespace() {
            flush(&mut out, &mut word, &mut word_space);
            space.push(c);
        } else if c.is_alphanumeric() || c == '_' {
            if word.is_empty() {
                word_space = std::mem::take(&mut space);
            }
            word.push(c);
        } else {
            flush(&mut out, &mut word, &mut word_space);
            out.push((std::mem::take(&mut space), c.to_string()));
        }
    }
    flush(&mut out, &mut word, &mut word_space);
    out
}

/// A word-level diff of two texts (punctuation counts as its own word, so
/// `ID` → `ID.` is an insertion of `.`, not a replaced word).
pub fn word_diff(old: &str, new: &str) -> Vec<WordRun> {
    let a = tokens(old);
    let b = tokens(new);
    let mut ops: Vec<(WordOp, &(String, String))> = Vec::new();
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x.1 == y.1).count();
    let suffix = a[prefix..]
        .iter()
        .rev()
        .zip(b[prefix..].iter().rev())
        .take_while(|(x, y)| x.1 == y.1)
        .count();
    let (mid_a, mid_b) = (&a[prefix..a.len() - suffix], &b[prefix..b.len() - suffix]);
    ops.extend(b[..prefix].iter().map(|t| (WordOp::Same, t)));
    let (n, m) = (mid_a.len(), mid_b.len());
    if n.saturating_mul(m) > WORD_DIFF_CELLS {
        ops.extend(mid_a.iter().map(|t| (WordOp::Removed, t)));
        ops.extend(mid_b.iter().map(|t| (WordOp::Added, t)));
    } else {
        // lcs[i][j]: longest common subsequence of mid_a[i..] and mid_b[j..].
        let width = m + 1;
        let mut lcs = vec![0u32; (n + 1) * width];
        for i in (0..n).rev() {
            for j in (0..m).rev() {
                lcs[i * width + j] = if mid_a[i].1 == mid_b[j].1 {
                    lcs[(i + 1) * width + j + 1] + 1
                } else {
                    lcs[(i + 1) * width + j].max(lcs[i * width + j + 1])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        while i < n || j < m {
            if i < n && j < m && mid_a[i].1 == mid_b[j].1 {
                ops.push((WordOp::Same, &mid_b[j]));
                i += 1;
                j += 1;
            } else if j < m && (i == n || lcs[i * width + j + 1] >= lcs[(i + 1) * width + j]) {
                ops.push((WordOp::Added, &mid_b[j]));
                j += 1;
            } else {
                ops.push((WordOp::Removed, &mid_a[i]));
                i += 1;
            }
        }
    }
    ops.extend(b[b.len() - suffix..].iter().map(|t| (WordOp::Same, t)));
    // Removals first within a changed stretch reads better: [-old-] {+new+}.
    let mut runs: Vec<WordRun> = Vec::new();
    for (op, (space, token)) in ops {
        match runs.last_mut() {
            Some(last) if last.op == op => {
                last.text.push_str(space);
                last.text.push_str(token);
            }
            _ => runs.push(WordRun {
                op,
                text: format!("{space}{token}"),
            }),
        }
    }
    order_removals_first(&mut runs);
    runs
}

/// Within every stretch of consecutive non-`same` runs, puts removed text
/// before added text (merging runs of the same kind).
fn order_removals_first(runs: &mut Vec<WordRun>) {
    let mut out: Vec<WordRun> = Vec::new();
    let mut removed = String::new();
    let mut added = String::new();
    let flush = |out: &mut Vec<WordRun>, removed: &mut String, added: &mut String| {
        if !removed.is_empty() {
            out.push(WordRun {
                op: WordOp::Removed,
                text: std::mem::take(removed),
            });
        }
        if !added.is_empty() {
            out.push(WordRun {
                op: WordOp::Added,
                text: std::mem::take(added),
            });
        }
    };
    for run in runs.drain(..) {
        match run.op {
            WordOp::Same => {
                flush(&mut out, &mut removed, &mut added);
                out.push(run);
            }
            WordOp::Removed => removed.push_str(&run.text),
            WordOp::Added => added.push_str(&run.text),
        }
    }
    flush(&mut out, &mut removed, &mut added);
    *runs = out;
}

pub(super) fn description_change(
    tool: &str,
    parameter: &str,
    location: String,
    old: Option<&str>,
    new: Option<&str>,
) -> Change {
    let words = word_diff(old.unwrap_or(""), new.unwrap_or(""));
    let edited = words.iter().filter(|w| w.op != WordOp::Same).count();
    let what = if parameter.is_empty() {
        "description".to_owned()
    } else {
        format!("description of parameter {parameter}")
    };
    let summary = match (old, new) {
        (None, _) => format!("{what} added"),
        (_, None) => format!("{what} removed"),
        _ if edited == 0 => format!("{what}: whitespace changed"),
        _ => format!("{what} edited"),
    };
    let mut change = Change::new(tool, ChangeClass::DescriptionEdited, location, summary)
        .values(
            old.map(|s| Value::String(s.to_owned())).as_ref(),
            new.map(|s| Value::String(s.to_owned())).as_ref(),
        )
        .parameter(parameter);
    change.words = words;
    change
}

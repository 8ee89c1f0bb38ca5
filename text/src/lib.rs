//! Text that came from a server, bounded and safe to print.
//!
//! Names, descriptions, error messages and answers are untrusted input: they
//! can be huge, and they can carry terminal escapes or bidi overrides that
//! change what a reader sees. Every crate that shows such text (the wire's
//! error messages, the engine's findings, the pages) goes through these few
//! functions, so the rule is written once. Depends on nothing.

/// At most `max` characters of `s`, with an ellipsis when cut, and control
/// characters (terminal escapes, bidi overrides) made visible.
pub fn clip(s: &str, max: usize) -> String {
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i == max {
            out.push('…');
            break;
        }
        out.push_str(&visible(c));
    }
    out
}

/// At most `max` characters of `s`, with an ellipsis when cut; nothing else
/// changes (for pages, whose formatter marks invisible characters itself).
pub fn clip_raw(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &s[..at]),
        None => s.to_owned(),
    }
}

/// Characters that change how text reads without being seen: bidi controls
/// (which can reorder what a reader sees), zero-width characters, invisible
/// operators, tag characters (which spell ASCII no one sees) and the control
/// characters of terminals. Newlines and tabs are ordinary text.
pub fn is_invisible(c: char) -> bool {
    let bidi = matches!(c,
        '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}');
    let zero_width = matches!(c,
        '\u{200B}'..='\u{200D}' | '\u{2060}'..='\u{2064}' | '\u{180E}' | '\u{FEFF}');
    let tags = matches!(c, '\u{E0000}'..='\u{E007F}');
    (c.is_control() && c != '\n' && c != '\t') || bidi || zero_width || tags
}

/// A character as it may be printed on a terminal.
fn visible(c: char) -> String {
    if c == '\n' || c == '\t' || is_invisible(c) {
        c.escape_unicode().to_string()
    } else {
        c.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clip_bounds_and_neutralises_escapes() {
        assert_eq!(clip("abcdef", 3), "abc…");
        assert_eq!(clip("a\u{1b}[2Jb", 10), "a\\u{1b}[2Jb");
        assert_eq!(clip("x\u{202E}y", 10), "x\\u{202e}y");
    }

    #[test]
    fn clip_raw_cuts_on_characters_and_keeps_them() {
        assert_eq!(clip_raw("héllo", 2), "hé…");
        assert_eq!(clip_raw("x\u{202E}y", 10), "x\u{202E}y");
        assert!(is_invisible('\u{202E}') && is_invisible('\u{200B}') && is_invisible('\u{1b}'));
        assert!(
            is_invisible('\u{E0041}'),
            "a tag character spells an unseen A"
        );
        assert!(!is_invisible('\n') && !is_invisible('é'));
    }
}

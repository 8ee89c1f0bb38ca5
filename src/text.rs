//! Small helpers for text that came from a server: bounded and safe to print.

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

/// A character as it may be printed on a terminal.
fn visible(c: char) -> String {
    let bidi =
        matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}');
    if c.is_control() || bidi {
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
}

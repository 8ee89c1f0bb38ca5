//! Reading one message as JSON, however deeply a server nests it.
//!
//! `serde_json` stops at 128 levels to protect the stack; a valid answer
//! nested deeper would read as "not JSON" and its request would wait out
//! its timeout. Here a message is read up to [`MAX_JSON_DEPTH`] levels (on a
//! thread with a stack sized for it), and a deeper one is refused at once
//! with its depth, and with its `id` when one can be found at the top
//! level, so the request it answers ends without waiting. What is kept of a
//! message goes [`KEPT_DEPTH`] levels deep; anything deeper is replaced by
//! a marker, so every document that carries it can be read back with any
//! ordinary JSON reader.

use serde::Deserialize;
use serde_json::Value;

/// Deepest nesting read: 1,024 levels of arrays and objects.
pub const MAX_JSON_DEPTH: usize = 1_024;
/// Deepest nesting kept of a message that was read: 64 levels.
pub const KEPT_DEPTH: usize = 64;
/// serde_json's own bound, past which the deep reader takes over.
const SERDE_DEPTH: usize = 127;
/// Stack for the deep reader: enough for [`MAX_JSON_DEPTH`] levels in a
/// debug build, with room to spare (only touched pages are ever used).
const DEEP_STACK: usize = 256 * 1024 * 1024;

/// Why a message could not be read.
#[derive(Debug, PartialEq)]
pub enum Unreadable {
    /// Not JSON at all (serde_json's message).
    NotJson(String),
    /// Nested deeper than [`MAX_JSON_DEPTH`]; the top-level `id`, if any.
    TooDeep { depth: usize, id: Option<Value> },
}

/// Reads `bytes` as one JSON value, with what is kept bounded at
/// [`KEPT_DEPTH`].
pub fn parse(bytes: &[u8]) -> Result<Value, Unreadable> {
    match serde_json::from_slice::<Value>(bytes) {
        Ok(value) => Ok(clip(value, KEPT_DEPTH)),
        Err(error) => {
            let depth = nesting_depth(bytes);
            if depth <= SERDE_DEPTH {
                return Err(Unreadable::NotJson(error.to_string()));
            }
            if depth > MAX_JSON_DEPTH {
                return Err(Unreadable::TooDeep {
                    depth,
                    id: top_level_id(bytes),
                });
            }
            parse_deep(bytes.to_vec())
        }
    }
}

/// Reads a message deeper than serde_json's default bound on a thread
/// whose stack can hold it; the deep value is clipped and dropped there.
fn parse_deep(bytes: Vec<u8>) -> Result<Value, Unreadable> {
    let reader = std::thread::Builder::new()
        .name("deep-json".into())
        .stack_size(DEEP_STACK)
        .spawn(move || {
            let mut de = serde_json::Deserializer::from_slice(&bytes);
            de.disable_recursion_limit();
            Value::deserialize(&mut de)
                .and_then(|value| de.end().map(|()| value))
                .map(|value| clip(value, KEPT_DEPTH))
                .map_err(|e| Unreadable::NotJson(e.to_string()))
        });
    match reader.map(|handle| handle.join()) {
        Ok(Ok(result)) => result,
        _ => Err(Unreadable::NotJson("the deep reader failed".into())),
    }
}

/// `value` with every array or object nested deeper than `levels` below
/// it replaced by a marker string.
fn clip(value: Value, levels: usize) -> Value {
    match value {
        Value::Array(_) | Value::Object(_) if levels == 0 => Value::String(format!(
            "[nested deeper than {KEPT_DEPTH} levels: not kept]"
        )),
        Value::Array(items) => {
            Value::Array(items.into_iter().map(|v| clip(v, levels - 1)).collect())
        }
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| (k, clip(v, levels - 1)))
                .collect(),
        ),
        other => other,
    }
}

/// The deepest nesting of arrays and objects in `bytes`, strings skipped.
pub fn nesting_depth(bytes: &[u8]) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let mut in_string = false;
    let mut escaped = false;
    for &b in bytes {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// The value of the top-level object's `id` key, read without parsing the
/// rest: a number, a string or null, or `None` when there is none.
pub fn top_level_id(bytes: &[u8]) -> Option<Value> {
    let mut depth = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                let end = string_end(bytes, i)?;
                let at_key = depth == 1 && next_non_space(bytes, end) == Some(b':');
                if at_key && &bytes[i..end] == b"\"id\"" {
                    let start = skip_space(bytes, skip_space(bytes, end) + 1);
                    return scalar_at(bytes, start);
                }
                i = end;
                continue;
            }
            b'[' | b'{' => depth += 1,
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    None
}

/// The index just past the string that starts at `start` (a `"`).
fn string_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

fn skip_space(bytes: &[u8], mut i: usize) -> usize {
    while i < bytes.len() && bytes[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

fn next_non_space(bytes: &[u8], i: usize) -> Option<u8> {
    bytes.get(skip_space(bytes, i)).copied()
}

/// A string, number, boolean or null starting at `start`.
fn scalar_at(bytes: &[u8], start: usize) -> Option<Value> {
    let end = match bytes.get(start)? {
        b'"' => string_end(bytes, start)?,
        _ => {
            let mut end = start;
            while end < bytes.len() && !matches!(bytes[end], b',' | b'}' | b']') {
                end += 1;
            }
            end
        }
    };
    serde_json::from_slice(bytes[start..end].trim_ascii()).ok()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn nested(depth: usize) -> String {
        format!(
            r#"{{"jsonrpc":"2.0","id":7,"result":{}1{}}}"#,
            "[".repeat(depth),
            "]".repeat(depth)
        )
    }

    #[test]
    fn deep_but_bounded_messages_are_read_and_kept_bounded() {
        let Ok(value) = parse(nested(900).as_bytes()) else {
            panic!("900 levels are within the bound");
        };
        assert_eq!(value["id"], json!(7));
        let kept = value.to_string();
        assert!(kept.contains("[nested deeper than 64 levels: not kept]"));
        assert!(nesting_depth(kept.as_bytes()) <= KEPT_DEPTH + 1);
    }

    #[test]
    fn too_deep_messages_are_refused_with_their_id() {
        let depth = MAX_JSON_DEPTH + 10;
        assert_eq!(
            parse(nested(depth).as_bytes()),
            Err(Unreadable::TooDeep {
                depth: depth + 1,
                id: Some(json!(7))
            })
        );
        let text = format!(r#"{{"a":{{"id":1}},"id":"x\"y","b":{}}}"#, "[".repeat(2000));
        assert_eq!(top_level_id(text.as_bytes()), Some(json!("x\"y")));
    }

    #[test]
    fn not_json_stays_not_json_and_brackets_in_strings_do_not_count() {
        assert!(matches!(parse(b"{nope"), Err(Unreadable::NotJson(_))));
        let text = format!(r#"{{"id":1,"s":"{}"}}"#, "[".repeat(5000));
        assert_eq!(nesting_depth(text.as_bytes()), 1);
        assert!(parse(text.as_bytes()).is_ok());
    }
}

//! A tool result as the model reads it, whoever recorded the call: the
//! agent's own client loop hands this text to the model, and a proxy's
//! trace is read back through the same function, so both judge the same
//! text.

use serde_json::Value;

/// A result's text blocks, joined by newlines; any other block as JSON;
/// the structured content as JSON when there is no block at all.
pub fn content_of(result: &Value) -> String {
    let blocks = result
        .get("content")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let parts: Vec<String> = blocks
        .iter()
        .map(|block| match block.get("text").and_then(Value::as_str) {
            Some(text) if block.get("type").and_then(Value::as_str) == Some("text") => {
                text.to_owned()
            }
            _ => block.to_string(),
        })
        .collect();
    if parts.is_empty() {
        return result
            .get("structuredContent")
            .map_or_else(String::new, Value::to_string);
    }
    parts.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn results_read_as_their_text() {
        let two =
            json!({"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]});
        assert_eq!(content_of(&two), "a\nb");
        let image = json!({"content": [{"type": "image", "data": "x", "mimeType": "image/png"}]});
        assert!(content_of(&image).contains("image/png"));
        let structured = json!({"content": [], "structuredContent": {"n": 1}});
        assert_eq!(content_of(&structured), "{\"n\":1}");
        assert_eq!(content_of(&json!({})), "");
    }
}

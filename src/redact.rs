//! Secrets never reach a report: they are replaced by a digest.
//!
//! A value is a secret when it sits under a credential-like key (`secret`,
//! `token`, `password`, `api_key`, ...) anywhere in what a server sent or what
//! we sent it, including JSON carried inside a text content. Once known, the
//! value is replaced wherever it appears: in frames, responses, arguments and
//! stderr, so a secret echoed in prose is hidden too.

use std::collections::BTreeSet;

use serde_json::Value;

/// Keys whose string values are treated as secrets (matched case-insensitively
/// as substrings of the key).
const SECRET_KEYS: [&str; 10] = [
    "secret",
    "token",
    "password",
    "passwd",
    "apikey",
    "api_key",
    "api-key",
    "authorization",
    "credential",
    "private_key",
];

/// Values shorter than this are not treated as secrets (too likely to be words).
const MIN_SECRET_LEN: usize = 8;

#[derive(Clone, Debug, Default)]
pub struct Redactor {
    secrets: BTreeSet<String>,
}

impl Redactor {
    /// Learns the secrets held in `value`.
    pub fn learn(&mut self, value: &Value) {
        self.walk(value, 0);
    }

    /// Learns secrets from a raw line (parsed as JSON when it is JSON).
    pub fn learn_text(&mut self, text: &str) {
        if let Ok(value) = serde_json::from_str::<Value>(text) {
            self.walk(&value, 0);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.secrets.is_empty()
    }

    fn walk(&mut self, value: &Value, depth: usize) {
        if depth > 32 {
            return;
        }
        match value {
            Value::Object(map) => {
                for (key, inner) in map {
                    let lowered = key.to_ascii_lowercase();
                    if SECRET_KEYS.iter().any(|k| lowered.contains(k))
                        && let Value::String(s) = inner
                        && s.len() >= MIN_SECRET_LEN
                    {
                        self.secrets.insert(s.clone());
                    }
                    self.walk(inner, depth + 1);
                }
            }
            Value::Array(items) => items.iter().for_each(|i| self.walk(i, depth + 1)),
            Value::String(s) => {
                // Text contents often carry JSON of their own.
                let trimmed = s.trim_start();
                if (trimmed.starts_with('{') || trimmed.starts_with('['))
                    && let Ok(inner) = serde_json::from_str::<Value>(s)
                {
                    self.walk(&inner, depth + 1);
                }
            }
            _ => {}
        }
    }

    /// `text` with every known secret replaced by its digest.
    pub fn text(&self, text: &str) -> String {
        if self.secrets.is_empty() {
            return text.to_owned();
        }
        let mut ordered: Vec<&String> = self.secrets.iter().collect();
        // Longest first, so a secret containing another is replaced whole.
        ordered.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
        let mut out = text.to_owned();
        for secret in ordered {
            if out.contains(secret.as_str()) {
                out = out.replace(secret.as_str(), &mask(secret));
            }
            // Inside a JSON string inside JSON, the secret may appear escaped;
            // secrets are tokens, which JSON escaping leaves unchanged.
        }
        out
    }

    /// `value` with every known secret replaced, recursively.
    pub fn value(&self, value: &Value) -> Value {
        if self.secrets.is_empty() {
            return value.clone();
        }
        match value {
            Value::String(s) => Value::String(self.text(s)),
            Value::Array(items) => Value::Array(items.iter().map(|i| self.value(i)).collect()),
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| (k.clone(), self.value(v)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }
}

/// How a secret is shown: a digest a reader can match, never the value.
pub fn mask(secret: &str) -> String {
    let digest = blake3::hash(secret.as_bytes()).to_hex();
    format!("[secret blake3:{}]", &digest[..16])
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn secrets_in_nested_text_json_are_found_and_masked_everywhere() {
        let mut r = Redactor::default();
        let response = json!({"content": [{"type": "text",
            "text": "{\"id\": \"key_0001\", \"secret\": \"wk_0123456789abcdef\"}"}]});
        r.learn(&response);
        let masked = r.value(&response).to_string();
        assert!(!masked.contains("wk_0123456789abcdef"));
        assert!(masked.contains("key_0001"));
        assert!(masked.contains(&mask("wk_0123456789abcdef")));
        // The same secret echoed elsewhere, e.g. as an argument, is masked too.
        assert_eq!(
            r.text("check wk_0123456789abcdef now"),
            format!("check {} now", mask("wk_0123456789abcdef"))
        );
    }

    #[test]
    fn short_values_and_ordinary_keys_are_left_alone() {
        let mut r = Redactor::default();
        r.learn(&json!({"token": "ok", "name": "a-very-long-ordinary-name"}));
        assert!(r.is_empty());
    }
}

//! Secrets never reach a report: they are replaced by a digest.
//!
//! A value is a secret when it sits under a credential-like key (`secret`,
//! `token`, `password`, `api_key`, ...) anywhere in what a server sent or what
//! we sent it, including JSON carried inside a text content or embedded in a
//! log line, or when it follows a credential-like key in prose (`token=...`,
//! `password: ...`), or when it has the shape of a credential wherever it
//! stands ([`rules`]: provider tokens, JWTs, bearer tokens, private-key
//! blocks, a high-entropy token after a credential word). Once known, the
//! value is replaced wherever it appears, in its JSON-escaped spelling too:
//! in frames, responses, arguments, error details, findings and stderr, so a
//! secret echoed in prose is hidden too.

pub mod rules;

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

/// Nesting followed through JSON and JSON-in-strings.
const MAX_DEPTH: usize = 32;

/// `{` positions of one text tried as the start of embedded JSON. A line of
/// megabytes of braces must not cost a parse each.
const MAX_EMBEDDED_ATTEMPTS: usize = 1_024;

/// Bytes after a `{` that may belong to its embedded JSON object.
const EMBEDDED_WINDOW: usize = 64 * 1024;

/// Bytes that may continue a credential-like key (`token` in `access_token_2`).
fn is_key_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

fn skip_spaces(bytes: &[u8], mut i: usize) -> usize {
    while i < bytes.len() && matches!(bytes[i], b' ' | b'\t') {
        i += 1;
    }
    i
}

/// The value starting at byte `at` (after an optional opening quote): up to
/// whitespace, a quote, a comma, a semicolon, `&` or a backslash.
fn pair_value(text: &str, at: usize) -> &str {
    let bytes = text.as_bytes();
    let mut start = at;
    if start < bytes.len() && matches!(bytes[start], b'"' | b'\'') {
        start += 1;
    }
    let mut end = start;
    while end < bytes.len()
        && !bytes[end].is_ascii_whitespace()
        && !matches!(bytes[end], b'"' | b'\'' | b',' | b';' | b'&' | b'\\')
    {
        end += 1;
    }
    // Every stop byte is ASCII, so `start..end` lies on char boundaries.
    text.get(start..end).unwrap_or_default()
}

#[derive(Clone, Debug, Default)]
pub struct Redactor {
    secrets: BTreeSet<String>,
}

impl Redactor {
    /// Learns the secrets held in `value`.
    pub fn learn(&mut self, value: &Value) {
        self.walk(value, 0);
    }

    /// Learns secrets from a raw line: the line as JSON when it is JSON;
    /// otherwise every JSON object embedded in it (a log line with a JSON
    /// tail), and every `key=value`, `key: value` or `"key": "value"` whose
    /// key is credential-like.
    pub fn learn_text(&mut self, text: &str) {
        self.learn_text_at(text, 0);
    }

    fn learn_text_at(&mut self, text: &str, depth: usize) {
        if depth > MAX_DEPTH {
            return;
        }
        // Bare shapes first, in the text as it stands: a private key inside
        // a frame is still spelled with `\n` escapes there.
        for (_, secret) in rules::find(text) {
            self.insert(secret);
        }
        if let Ok(value) = serde_json::from_str::<Value>(text) {
            self.walk(&value, depth + 1);
            return;
        }
        self.learn_embedded_json(text, depth);
        self.learn_pairs(text);
    }

    /// Walks every JSON object that starts at a `{` of `text`.
    fn learn_embedded_json(&mut self, text: &str, depth: usize) {
        let mut attempts = 0;
        let mut from = 0;
        while let Some(offset) = text.get(from..).and_then(|rest| rest.find('{')) {
            let start = from + offset;
            attempts += 1;
            if attempts > MAX_EMBEDDED_ATTEMPTS {
                break;
            }
            // A window, so a line of many unclosed `{` costs a bounded scan each.
            let mut end = text.len().min(start.saturating_add(EMBEDDED_WINDOW));
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            let window = text.get(start..end).unwrap_or_default();
            let mut stream = serde_json::Deserializer::from_str(window).into_iter::<Value>();
            match stream.next() {
                Some(Ok(value @ Value::Object(_))) => {
                    self.walk(&value, depth + 1);
                    // Objects nested in it were walked with it.
                    from = start + stream.byte_offset().max(1);
                }
                _ => from = start + 1,
            }
        }
    }

    /// Learns the values of `key=value`, `key: value` and `"key": "value"`
    /// where the key is credential-like.
    fn learn_pairs(&mut self, text: &str) {
        // ASCII lowercasing keeps every byte offset.
        let lowered = text.to_ascii_lowercase();
        let bytes = text.as_bytes();
        for key in SECRET_KEYS {
            for (at, _) in lowered.match_indices(key) {
                // The rest of the key (`access_token`, `api-key-2`), then an
                // optional closing quote, then `=` or `:`.
                let mut i = at + key.len();
                while i < bytes.len() && is_key_byte(bytes[i]) {
                    i += 1;
                }
                if i < bytes.len() && matches!(bytes[i], b'"' | b'\'') {
                    i += 1;
                }
                i = skip_spaces(bytes, i);
                if i >= bytes.len() || !matches!(bytes[i], b'=' | b':') {
                    continue;
                }
                i = skip_spaces(bytes, i + 1);
                let mut value = pair_value(text, i);
                // `Authorization: Bearer <token>`: the scheme is not the secret.
                if ["bearer", "basic", "token"]
                    .iter()
                    .any(|scheme| value.eq_ignore_ascii_case(scheme))
                {
                    let next = skip_spaces(bytes, i + value.len());
                    value = pair_value(text, next);
                }
                if value.len() >= MIN_SECRET_LEN {
                    self.insert(value.to_owned());
                }
            }
        }
    }

    /// Learns a secret found by other means (a credential-shaped string in
    /// a tool's metadata).
    pub fn learn_secret(&mut self, secret: &str) {
        if secret.len() >= MIN_SECRET_LEN {
            self.insert(secret.to_owned());
        }
    }

    /// Knows `secret`, and its spelling inside a JSON string when that
    /// differs (a private key's newlines are `\n` in a frame).
    fn insert(&mut self, secret: String) {
        if let Ok(quoted) = serde_json::to_string(&secret) {
            let escaped = &quoted[1..quoted.len() - 1];
            if escaped != secret && escaped.len() >= MIN_SECRET_LEN {
                self.secrets.insert(escaped.to_owned());
            }
        }
        self.secrets.insert(secret);
    }

    pub fn is_empty(&self) -> bool {
        self.secrets.is_empty()
    }

    fn walk(&mut self, value: &Value, depth: usize) {
        if depth > MAX_DEPTH {
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
                        self.insert(s.clone());
                    }
                    self.walk(inner, depth + 1);
                }
            }
            Value::Array(items) => items.iter().for_each(|i| self.walk(i, depth + 1)),
            // Text contents often carry JSON of their own, or prose with
            // `token=...` in it.
            Value::String(s) => self.learn_text_at(s, depth + 1),
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
            // A key can carry a secret as well as a value can.
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| (self.text(k), self.value(v)))
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

    #[test]
    fn secrets_in_prose_and_embedded_json_are_learned() {
        let mut r = Redactor::default();
        r.learn_text(
            r#"2026-01-01 INFO config {"api_key": "sk-EEEEsecretVALUE1111", "n": 1} loaded"#,
        );
        r.learn_text("connecting with token=sk-FFFFsecretVALUE2222; retry");
        r.learn_text("Authorization: Bearer abcdefgh12345678");
        r.learn_text(r#"env "DB_PASSWORD": "hunter2hunter2", next"#);
        r.learn_text("access_token: 'qwertyuiop123', tokens: 5");
        let masked = r.text(
            "sk-EEEEsecretVALUE1111 sk-FFFFsecretVALUE2222 abcdefgh12345678 hunter2hunter2 qwertyuiop123",
        );
        for secret in [
            "sk-EEEEsecretVALUE1111",
            "sk-FFFFsecretVALUE2222",
            "abcdefgh12345678",
            "hunter2hunter2",
            "qwertyuiop123",
        ] {
            assert!(!masked.contains(secret), "{secret} in {masked}");
            assert!(masked.contains(&mask(secret)));
        }
        assert!(!r.secrets.contains("5"));
    }

    #[test]
    fn prose_inside_a_json_string_is_learned() {
        let mut r = Redactor::default();
        r.learn_text(
            r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32000,"message":"denied: token=sk-FFFFsecretVALUE2222"}}"#,
        );
        assert!(r.secrets.contains("sk-FFFFsecretVALUE2222"));
    }

    #[test]
    fn bare_shapes_are_masked_in_prose_in_json_and_in_escaped_frames() {
        let mut r = Redactor::default();
        let key = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----";
        let frame = serde_json::to_string(&json!({"result": {"content": [{"type": "text",
            "text": format!("sk-live-9fK2mQ7xL4pR8tZ1vB6n AKIAZ7Q3EXAMPLE4KEY9 Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln\n{key}")}]}}))
        .unwrap_or_default();
        r.learn_text(&frame);
        let masked = r.text(&frame);
        for secret in [
            "sk-live-9fK2mQ7xL4pR8tZ1vB6n",
            "AKIAZ7Q3EXAMPLE4KEY9",
            "eyJhbGciOiJIUzI1NiJ9",
            "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC",
        ] {
            assert!(!masked.contains(secret), "{secret} in {masked}");
        }
        let value = r.value(&json!({"AKIAZ7Q3EXAMPLE4KEY9": key}));
        assert!(!value.to_string().contains("AKIAZ7Q3EXAMPLE4KEY9"));
        assert!(!value.to_string().contains("MIIEvQ"));
    }

    #[test]
    fn a_line_of_braces_is_cheap() {
        let mut r = Redactor::default();
        let started = std::time::Instant::now();
        r.learn_text(&r#"{"a":["#.repeat(200_000));
        r.learn_text(&"{".repeat(1_000_000));
        assert!(started.elapsed().as_secs() < 5, "{:?}", started.elapsed());
    }
}

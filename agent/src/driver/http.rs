//! What the two HTTP drivers share: the key, one bounded POST, and the
//! scrubbing of anything an endpoint sends back.

use std::io::Read;
use std::time::Duration;

use serde_json::Value;

use witness_model::agent::ModelReply;

use super::{Answer, DriverError, Request};

/// Longest response body read: 8 MiB, as the wire reads a message.
const MAX_BODY: u64 = 8 * 1024 * 1024;
/// Longest response body kept in the run document.
const KEPT_BODY: usize = 256 * 1024;
/// Keys shorter than this are not scrubbed from text (they would match
/// ordinary words); real keys are far longer.
const MIN_SCRUBBED: usize = 8;

/// An API key, read from the environment. It is only ever written into a
/// request header; it never prints, and [`ApiKey::scrub`] removes it from
/// whatever an endpoint echoes back.
#[derive(Clone)]
pub struct ApiKey(String);

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApiKey([redacted])")
    }
}

impl ApiKey {
    /// The key in variable `name`, when it is set and not empty.
    pub fn from_env(name: &str) -> Option<Self> {
        std::env::var(name)
            .ok()
            .filter(|v| !v.trim().is_empty())
            .map(|v| Self(v.trim().to_owned()))
    }

    pub(super) fn value(&self) -> &str {
        &self.0
    }

    /// `text` with every occurrence of the key replaced by `[redacted]`.
    pub fn scrub(&self, text: &str) -> String {
        if self.0.len() < MIN_SCRUBBED {
            return text.to_owned();
        }
        text.replace(&self.0, "[redacted]")
    }
}

/// Scrubs `text` when there is a key.
pub(super) fn scrub(key: Option<&ApiKey>, text: &str) -> String {
    key.map_or_else(|| text.to_owned(), |k| k.scrub(text))
}

/// How a driver reaches its endpoint.
#[derive(Clone, Debug)]
pub struct HttpOptions {
    /// The base URL, already checked (loopback http, or https).
    pub base_url: String,
    pub key: Option<ApiKey>,
    /// Bounds every exchange, connecting to the last byte of the body.
    pub timeout: Duration,
}

/// What came back from one POST.
struct Posted {
    status: u16,
    /// The body parsed as JSON, when it is JSON.
    json: Option<Value>,
    /// The body as the run document keeps it: JSON, or bounded text; scrubbed.
    kept: Value,
}

/// POSTs `body` as JSON to `url` with `headers` (the key among them is
/// added by the caller). Non-2xx statuses are answers, not errors; a
/// transport failure is [`DriverError::Transport`].
fn post(
    options: &HttpOptions,
    url: &str,
    headers: &[(&str, String)],
    body: &Value,
) -> Result<Posted, DriverError> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(options.timeout))
        .http_status_as_error(false)
        .build()
        .into();
    let mut request = agent.post(url).header("content-type", "application/json");
    for (name, value) in headers {
        request = request.header(*name, value);
    }
    let key = options.key.as_ref();
    let response = request
        .send(body.to_string().as_bytes())
        .map_err(|e| DriverError::Transport(scrub(key, &describe(&e))))?;
    let status = response.status().as_u16();
    let mut bytes = Vec::new();
    let mut reader = response.into_body().into_reader().take(MAX_BODY + 1);
    reader.read_to_end(&mut bytes).map_err(|e| {
        DriverError::Transport(format!(
            "the response body could not be read ({})",
            e.kind()
        ))
    })?;
    if bytes.len() as u64 > MAX_BODY {
        return Err(DriverError::Malformed(format!(
            "HTTP {status}: the response body is longer than {MAX_BODY} bytes"
        )));
    }
    let text = scrub(key, &String::from_utf8_lossy(&bytes));
    let json: Option<Value> = serde_json::from_str(&text).ok();
    let kept = match &json {
        Some(value) if text.len() <= KEPT_BODY => value.clone(),
        _ => Value::String(witness_text::clip_raw(&text, KEPT_BODY)),
    };
    Ok(Posted { status, json, kept })
}

/// An endpoint's error, from its body when it says one (both APIs put it
/// under `error.message`), bounded and scrubbed.
fn http_error(status: u16, posted: &Posted) -> DriverError {
    let said = posted
        .json
        .as_ref()
        .and_then(|b| b.pointer("/error/message"))
        .and_then(Value::as_str)
        .map(|m| witness_text::clip(m, 300))
        .unwrap_or_else(|| "no error message".to_owned());
    DriverError::Http {
        status,
        detail: said,
    }
}

/// One request to an HTTP endpoint, to its answer and record: a 2xx body
/// is read by `parse`; any other status is the endpoint's error.
pub(super) fn exchange(
    options: &HttpOptions,
    url: &str,
    headers: &[(&str, String)],
    body: Value,
    request: &Request<'_>,
    parse: fn(&Value) -> Result<ModelReply, DriverError>,
) -> Answer {
    let posted = match post(options, url, headers, &body) {
        Ok(posted) => posted,
        Err(e) => return Answer::new(request, Err(e), None),
    };
    let reply = if (200..300).contains(&posted.status) {
        posted
            .json
            .as_ref()
            .ok_or_else(|| DriverError::Malformed("the body is not JSON".into()))
            .and_then(parse)
    } else {
        Err(http_error(posted.status, &posted))
    };
    Answer::new(request, reply, Some((body, posted.status, posted.kept)))
}

/// A ureq failure in a few fixed words (never the URL, which may carry a
/// credential in its query).
fn describe(error: &ureq::Error) -> String {
    match error {
        ureq::Error::Timeout(_) => "the endpoint timed out".into(),
        ureq::Error::HostNotFound => "the endpoint's host was not found".into(),
        ureq::Error::ConnectionFailed => "the endpoint refused the connection".into(),
        ureq::Error::Io(e) => format!("I/O error talking to the endpoint ({})", e.kind()),
        ureq::Error::Tls(_) | ureq::Error::Rustls(_) => "TLS error talking to the endpoint".into(),
        ureq::Error::BadUri(_) => "the endpoint URL is invalid".into(),
        _ => "HTTP protocol error talking to the endpoint".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_never_prints_and_is_scrubbed_from_echoes() {
        let key = ApiKey("sk-test-0123456789abcdef".into());
        assert_eq!(format!("{key:?}"), "ApiKey([redacted])");
        assert_eq!(
            key.scrub("bad key sk-test-0123456789abcdef given"),
            "bad key [redacted] given"
        );
        let short = ApiKey("abc".into());
        assert_eq!(short.scrub("abcdef"), "abcdef");
    }
}

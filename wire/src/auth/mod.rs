//! Credentials for a protected Streamable HTTP endpoint.
//!
//! Remote servers sit behind a static token or behind OAuth 2.1 (the MCP
//! authorization specification). Either way the transport only needs two
//! things, which [`Authorizer`] gives it: the headers that go on every
//! request to the endpoint, and a way to answer a refusal (`401`, or `403`
//! with `insufficient_scope`) with better credentials before trying again.
//!
//! Secrets never leave this module in the clear except as the header
//! values sent to the endpoint and the authorization server: [`Secret`]
//! prints as a digest, errors are fixed descriptions, and the transcripts
//! record JSON-RPC frames, never headers.

pub mod dpop;
pub mod jwt;
pub mod oauth;

use std::fmt;

/// How many times one request is retried with new credentials after a
/// refusal (a first token, then up to two step-ups), so a server that
/// refuses every token cannot keep us asking.
pub const MAX_AUTH_RETRIES: u32 = 3;

/// A secret value (a token, a client secret): shown only as a digest.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The value itself, for the one place it is sent.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// `blake3:` and the first 16 hex digits of its digest: enough to tell
    /// two secrets apart in a report, useless to recover either.
    pub fn digest(&self) -> String {
        let hex = blake3::hash(self.0.as_bytes()).to_hex();
        format!("blake3:{}", &hex[..16])
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Secret({})", self.digest())
    }
}

/// The headers one request carries, and which credentials they were.
#[derive(Clone, Debug, Default)]
pub struct Credentials {
    /// Bumped whenever the credentials change: a refusal of an older
    /// generation is answered by retrying with the current one.
    pub generation: u64,
    pub headers: Vec<(String, Secret)>,
}

/// Why credentials could not be had. Every message is a fixed description
/// with at most a status code or a clipped, escaped field name: never a
/// token, a secret or a server's prose.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    #[error("the protected-resource metadata could not be found: {0}")]
    ResourceMetadata(String),
    #[error("the authorization-server metadata could not be found: {0}")]
    ServerMetadata(String),
    #[error("the token endpoint refused: {0}")]
    Token(String),
    #[error("the authorization endpoint did not redirect back with a code: {0}")]
    Authorize(String),
    #[error("the server still refuses after {MAX_AUTH_RETRIES} new tokens")]
    Exhausted,
    #[error("{0}")]
    Config(String),
}

/// Supplies credentials to a transport and renews them when refused.
pub trait Authorizer: Send + Sync {
    /// What every request to the endpoint carries now.
    fn credentials(&self) -> Credentials;

    /// The endpoint refused a request made with `generation` with `status`,
    /// this `WWW-Authenticate` value and this `DPoP-Nonce` (RFC 9449 §9).
    /// `Ok(true)`: try again with [`Authorizer::credentials`]; `Ok(false)`:
    /// nothing better can be had.
    fn refused(
        &self,
        generation: u64,
        status: u16,
        challenge: Option<&str>,
        dpop_nonce: Option<&str>,
    ) -> Result<bool, AuthError>;
}

/// Fixed headers (a bearer token, an API-key header) for a server whose
/// tokens are issued out of band; a refusal cannot be mended.
#[derive(Clone, Debug)]
pub struct StaticHeaders {
    headers: Vec<(String, Secret)>,
}

impl StaticHeaders {
    /// `Authorization: Bearer TOKEN`.
    pub fn bearer(token: Secret) -> Self {
        Self {
            headers: vec![(
                "Authorization".into(),
                Secret::new(format!("Bearer {}", token.expose())),
            )],
        }
    }

    /// More headers, each a name and its secret value.
    pub fn with(mut self, name: impl Into<String>, value: Secret) -> Self {
        self.headers.push((name.into(), value));
        self
    }

    /// Only these headers.
    pub fn headers(headers: Vec<(String, Secret)>) -> Self {
        Self { headers }
    }
}

impl Authorizer for StaticHeaders {
    fn credentials(&self) -> Credentials {
        Credentials {
            generation: 0,
            headers: self.headers.clone(),
        }
    }

    fn refused(&self, _: u64, _: u16, _: Option<&str>, _: Option<&str>) -> Result<bool, AuthError> {
        Ok(false)
    }
}

/// Another authorizer's credentials plus fixed headers (an API key beside
/// OAuth tokens, say); refusals go to the other.
pub struct WithHeaders<A> {
    pub inner: A,
    pub headers: Vec<(String, Secret)>,
}

impl<A: Authorizer> Authorizer for WithHeaders<A> {
    fn credentials(&self) -> Credentials {
        let mut credentials = self.inner.credentials();
        credentials.headers.extend(self.headers.iter().cloned());
        credentials
    }

    fn refused(
        &self,
        generation: u64,
        status: u16,
        challenge: Option<&str>,
        dpop_nonce: Option<&str>,
    ) -> Result<bool, AuthError> {
        self.inner
            .refused(generation, status, challenge, dpop_nonce)
    }
}

/// Whether `name` may be sent as a header name (an RFC 9110 token).
pub fn valid_header_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// Whether `value` may be sent as a header value (visible ASCII and spaces,
/// no line breaks): a token with a newline in it would split the request.
pub fn valid_header_value(value: &str) -> bool {
    !value.is_empty()
        && value
            .bytes()
            .all(|b| b == b' ' || b == b'\t' || (0x21..=0x7e).contains(&b))
}

/// The parameters of the `Bearer` challenge in a `WWW-Authenticate` value
/// (RFC 6750 §3, RFC 9728 §5.1): `resource_metadata`, `scope`, `error`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Challenge {
    pub resource_metadata: Option<String>,
    pub scope: Option<String>,
    pub error: Option<String>,
}

impl Challenge {
    /// Reads the first `Bearer` challenge of `header`, else its `DPoP` one
    /// (RFC 9449 §7.1: the same parameters); quoted strings may hold commas
    /// and escaped quotes. Anything unreadable is left out.
    pub fn parse(header: &str) -> Self {
        let mut out = Challenge::default();
        let lower = header.to_ascii_lowercase();
        let found = ["bearer", "dpop"]
            .iter()
            .find_map(|scheme| find_scheme(&lower, scheme).map(|at| at + scheme.len()));
        let Some(start) = found else {
            return out;
        };
        let mut rest = &header[start..];
        loop {
            rest = rest.trim_start_matches([' ', '\t', ',']);
            let Some(eq) = rest.find('=') else { break };
            let name = rest[..eq].trim().to_ascii_lowercase();
            if name.is_empty() || name.contains(' ') {
                // The next scheme begins: this challenge is over.
                break;
            }
            rest = rest[eq + 1..].trim_start();
            let value;
            if let Some(quoted) = rest.strip_prefix('"') {
                let mut text = String::new();
                let mut chars = quoted.char_indices();
                let mut end = quoted.len();
                while let Some((i, c)) = chars.next() {
                    match c {
                        '\\' => {
                            if let Some((_, next)) = chars.next() {
                                text.push(next);
                            }
                        }
                        '"' => {
                            end = i + 1;
                            break;
                        }
                        _ => text.push(c),
                    }
                }
                value = text;
                rest = &quoted[end.min(quoted.len())..];
            } else {
                let end = rest.find(',').unwrap_or(rest.len());
                value = rest[..end].trim().to_owned();
                rest = &rest[end..];
            }
            match name.as_str() {
                "resource_metadata" => out.resource_metadata = Some(value),
                "scope" => out.scope = Some(value),
                "error" => out.error = Some(value),
                _ => {}
            }
        }
        out
    }
}

/// Where scheme `scheme` starts in `lower` as a whole word.
fn find_scheme(lower: &str, scheme: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(i) = lower[from..].find(scheme) {
        let at = from + i;
        let before = lower[..at].chars().last();
        let after = lower[at + scheme.len()..].chars().next();
        let starts = before.is_none_or(|c| c == ' ' || c == ',');
        let ends = after.is_none_or(|c| c == ' ');
        if starts && ends {
            return Some(at);
        }
        from = at + scheme.len();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_prints_as_a_digest() {
        let secret = Secret::new("tok-very-secret");
        let shown = format!("{secret:?}");
        assert!(!shown.contains("very-secret"), "{shown}");
        assert!(shown.contains(&secret.digest()));
        assert_ne!(secret.digest(), Secret::new("tok-other").digest());
    }

    #[test]
    fn bearer_challenges_are_read_with_quotes_and_other_schemes() {
        let c = Challenge::parse(
            r#"Basic realm="x", Bearer error="insufficient_scope", scope="files:read files:write", resource_metadata="http://127.0.0.1:1/.well-known/oauth-protected-resource""#,
        );
        assert_eq!(c.error.as_deref(), Some("insufficient_scope"));
        assert_eq!(c.scope.as_deref(), Some("files:read files:write"));
        assert_eq!(
            c.resource_metadata.as_deref(),
            Some("http://127.0.0.1:1/.well-known/oauth-protected-resource")
        );
        let c = Challenge::parse(r#"Bearer realm="a\"b,c", scope=one"#);
        assert_eq!(c.scope.as_deref(), Some("one"));
        assert_eq!(Challenge::parse("Basic realm=x"), Challenge::default());
        assert_eq!(Challenge::parse("Bearer"), Challenge::default());
    }

    #[test]
    fn header_names_and_values_that_would_split_a_request_are_refused() {
        assert!(valid_header_name("X-Api-Key"));
        assert!(!valid_header_name("X Api"));
        assert!(!valid_header_name(""));
        assert!(valid_header_value("Bearer abc.def"));
        assert!(!valid_header_value("abc\r\nX-Evil: 1"));
    }
}

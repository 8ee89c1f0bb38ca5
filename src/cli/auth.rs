//! `--bearer-env`, `--header-env` and `--oauth-*`: how a protected `--url`
//! server is authenticated to, one argument group for every command that
//! reaches one (audit, plan, guidance, manifest pin and diff, proxy).
//!
//! A secret is never taken from the command line, where `ps` and shell
//! histories show it: a flag names the environment variable or the file
//! that holds it. Values are checked here, before anything is contacted,
//! and then live only in the wire's `Secret`, which prints as a digest.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;
use clap::{Args, ValueEnum};
use witness_wire::auth::jwt::ClientKey;
use witness_wire::auth::oauth::{ClientAuth, Flow, IdentityAssertion, OAuth, OAuthConfig};
use witness_wire::auth::{
    Authorizer, Secret, StaticHeaders, WithHeaders, valid_header_name, valid_header_value,
};
use witness_wire::http::Endpoint;

use crate::exit::invalid;

/// Longest secret file read: a token or a client secret is far smaller.
const MAX_SECRET_FILE_BYTES: u64 = 64 * 1024;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OAuthFlow {
    /// The client's own credentials (needs a client secret).
    ClientCredentials,
    /// A user's consent, with PKCE and a loopback redirect.
    AuthorizationCode,
    /// The authorization code where the authorization server's metadata
    /// allows it, else client credentials (with a client secret or key);
    /// with --oauth-id-token-env, the identity assertion, and with
    /// --oauth-workload-token-env, workload identity, where the server lists
    /// the jwt-bearer grant.
    Auto,
    /// Enterprise-managed authorization (SEP-990): the user's ID token is
    /// exchanged at the identity provider for an identity assertion grant,
    /// and that here for a token (needs --oauth-id-token-env and --oauth-idp-*).
    IdentityAssertion,
    /// Workload identity federation (SEP-1933): the workload's JWT from its
    /// own identity provider is the grant (needs --oauth-workload-token-env).
    WorkloadIdentity,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum TokenAuth {
    /// client_secret_basic
    Basic,
    /// client_secret_post
    Post,
    /// none (a public client)
    None,
    /// private_key_jwt (a JWT signed with --oauth-client-key-*)
    PrivateKeyJwt,
}

/// How a protected `--url` server is authenticated to.
#[derive(Args, Debug)]
pub struct AuthArgs {
    /// Send `Authorization: Bearer $VAR` to the --url server: a static token
    /// from the environment variable VAR (never from the command line).
    #[arg(long, value_name = "VAR", conflicts_with = "oauth_client_id")]
    pub bearer_env: Option<String>,
    /// Send header NAME with the value of environment variable VAR
    /// (repeatable), e.g. X-Api-Key=MY_KEY.
    #[arg(long = "header-env", value_name = "NAME=VAR")]
    pub header_env: Vec<String>,
    /// Get tokens by OAuth 2.1 (the MCP authorization specification) as this
    /// client: a pre-registered id or a client ID metadata document URL.
    #[arg(long, value_name = "ID")]
    pub oauth_client_id: Option<String>,
    /// Get tokens by OAuth 2.1 as a client registered dynamically (RFC 7591)
    /// at the server's registration endpoint. With an --oauth-client-id that
    /// is a client ID metadata document URL, that id is used where the
    /// authorization server accepts such documents, and a client is
    /// registered where it does not.
    #[arg(long, conflicts_with = "bearer_env")]
    pub oauth_register: bool,
    /// The OAuth client secret, from this environment variable.
    #[arg(long, value_name = "VAR", conflicts_with = "oauth_client_secret_file")]
    pub oauth_client_secret_env: Option<String>,
    /// The OAuth client secret, from this file (its first line).
    #[arg(long, value_name = "FILE")]
    pub oauth_client_secret_file: Option<PathBuf>,
    /// The OAuth client's private key (PEM PKCS#8, P-256), from this
    /// environment variable: the client authenticates with a JWT it signs
    /// (private_key_jwt, ES256) instead of a secret.
    #[arg(long, value_name = "VAR",
          conflicts_with_all = ["oauth_client_key_file", "oauth_client_secret_env", "oauth_client_secret_file"])]
    pub oauth_client_key_env: Option<String>,
    /// The OAuth client's private key, from this PEM file.
    #[arg(long, value_name = "FILE",
          conflicts_with_all = ["oauth_client_secret_env", "oauth_client_secret_file"])]
    pub oauth_client_key_file: Option<PathBuf>,
    /// The user's ID token from the enterprise identity provider, from this
    /// environment variable (the identity-assertion flow).
    #[arg(long, value_name = "VAR", requires_all = ["oauth_idp_token_endpoint", "oauth_idp_client_id"])]
    pub oauth_id_token_env: Option<String>,
    /// The identity provider's token endpoint, where the ID token is
    /// exchanged for an identity assertion grant.
    #[arg(long, value_name = "URL", requires = "oauth_id_token_env")]
    pub oauth_idp_token_endpoint: Option<String>,
    /// This client's id at the identity provider.
    #[arg(long, value_name = "ID", requires = "oauth_id_token_env")]
    pub oauth_idp_client_id: Option<String>,
    /// The workload's JWT, issued by its own identity provider, from this
    /// environment variable (the workload-identity flow, RFC 7523).
    #[arg(long, value_name = "VAR", conflicts_with = "oauth_id_token_env")]
    pub oauth_workload_token_env: Option<String>,
    /// How tokens are had.
    #[arg(long, value_enum, default_value_t = OAuthFlow::AuthorizationCode)]
    pub oauth_flow: OAuthFlow,
    /// How the client authenticates at the token endpoint (default: basic
    /// or post as the server lists them with a secret, none without).
    #[arg(long, value_enum)]
    pub oauth_token_auth: Option<TokenAuth>,
    /// Scopes to ask for when the server's challenge names none
    /// (space-separated; default: the resource's scopes_supported).
    #[arg(long, value_name = "SCOPES")]
    pub oauth_scope: Option<String>,
}

impl AuthArgs {
    /// Whether any authentication was asked for.
    pub fn any(&self) -> bool {
        self.bearer_env.is_some()
            || !self.header_env.is_empty()
            || self.oauth_client_id.is_some()
            || self.oauth_register
    }

    /// `endpoint` carrying the credentials asked for (unchanged when none
    /// were). `timeout` bounds each exchange with the authorization server.
    pub fn apply(&self, endpoint: Endpoint, timeout: Duration) -> Result<Endpoint> {
        let mut headers = Vec::new();
        for pair in &self.header_env {
            let Some((name, var)) = pair.split_once('=') else {
                return Err(invalid(format!(
                    "--header-env {:?}: expected NAME=VAR",
                    witness_text::clip(pair, 80)
                )));
            };
            if !valid_header_name(name) {
                return Err(invalid(format!(
                    "--header-env: {:?} is not a header name",
                    witness_text::clip(name, 80)
                )));
            }
            if name.eq_ignore_ascii_case("authorization")
                && (self.bearer_env.is_some() || self.oauth_client_id.is_some())
            {
                return Err(invalid(
                    "--header-env Authorization=... cannot be combined with --bearer-env or --oauth-client-id",
                ));
            }
            headers.push((name.to_owned(), from_env("--header-env", var)?));
        }
        if let Some(var) = &self.bearer_env {
            let token = from_env("--bearer-env", var)?;
            let auth = StaticHeaders::bearer(token);
            let auth = headers
                .into_iter()
                .fold(auth, |auth, (name, value)| auth.with(name, value));
            return Ok(endpoint.with_auth(Arc::new(auth)));
        }
        let registered = String::new();
        let client_id = match &self.oauth_client_id {
            Some(id) => Some(id),
            None if self.oauth_register => Some(&registered),
            None => None,
        };
        let Some(client_id) = client_id else {
            let oauth_only = self.oauth_client_secret_env.is_some()
                || self.oauth_client_secret_file.is_some()
                || self.oauth_client_key_env.is_some()
                || self.oauth_client_key_file.is_some()
                || self.oauth_id_token_env.is_some()
                || self.oauth_workload_token_env.is_some()
                || self.oauth_token_auth.is_some()
                || self.oauth_scope.is_some();
            if oauth_only {
                return Err(invalid(
                    "--oauth-* options need --oauth-client-id or --oauth-register",
                ));
            }
            if headers.is_empty() {
                return Ok(endpoint);
            }
            return Ok(endpoint.with_auth(Arc::new(StaticHeaders::headers(headers))));
        };
        if (client_id.is_empty() && !self.oauth_register) || client_id.chars().any(char::is_control)
        {
            return Err(invalid(
                "--oauth-client-id must be non-empty printable text",
            ));
        }
        if self.oauth_register && !client_id.is_empty() && !client_id.starts_with("https://") {
            return Err(invalid(
                "--oauth-register with --oauth-client-id needs the id to be a client ID metadata document URL (https://...)",
            ));
        }
        if self.oauth_register
            && !client_id.is_empty()
            && self.oauth_flow == OAuthFlow::ClientCredentials
        {
            return Err(invalid(
                "a client ID metadata document has no secret: it cannot do --oauth-flow client-credentials",
            ));
        }
        let client_secret = match (
            &self.oauth_client_secret_env,
            &self.oauth_client_secret_file,
        ) {
            (Some(var), _) => Some(from_env("--oauth-client-secret-env", var)?),
            (None, Some(path)) => Some(from_file("--oauth-client-secret-file", path)?),
            (None, None) => None,
        };
        if self.oauth_token_auth == Some(TokenAuth::None) && client_secret.is_some() {
            return Err(invalid(
                "--oauth-token-auth none sends no secret: drop --oauth-client-secret-*",
            ));
        }
        let client_key = match (&self.oauth_client_key_env, &self.oauth_client_key_file) {
            (Some(var), _) => Some(key_from_env(var)?),
            (None, Some(path)) => Some(key_from_file(path)?),
            (None, None) => None,
        };
        let identity = match &self.oauth_id_token_env {
            Some(var) => Some(IdentityAssertion {
                id_token: from_env("--oauth-id-token-env", var)?,
                idp_token_endpoint: self.oauth_idp_token_endpoint.clone().unwrap_or_default(),
                idp_client_id: self.oauth_idp_client_id.clone().unwrap_or_default(),
            }),
            None if self.oauth_flow == OAuthFlow::IdentityAssertion => {
                return Err(invalid(
                    "--oauth-flow identity-assertion needs --oauth-id-token-env, --oauth-idp-token-endpoint and --oauth-idp-client-id",
                ));
            }
            None => None,
        };
        let workload_token = match &self.oauth_workload_token_env {
            Some(var) => Some(from_env("--oauth-workload-token-env", var)?),
            None if self.oauth_flow == OAuthFlow::WorkloadIdentity => {
                return Err(invalid(
                    "--oauth-flow workload-identity needs --oauth-workload-token-env",
                ));
            }
            None => None,
        };
        let jwt = self.oauth_token_auth == Some(TokenAuth::PrivateKeyJwt);
        if jwt != client_key.is_some() && (jwt || self.oauth_token_auth.is_some()) {
            return Err(invalid(
                "--oauth-token-auth private-key-jwt goes with --oauth-client-key-env or -file, and only with it",
            ));
        }
        let config = OAuthConfig {
            flow: match self.oauth_flow {
                OAuthFlow::ClientCredentials => Flow::ClientCredentials,
                OAuthFlow::AuthorizationCode => Flow::AuthorizationCode,
                OAuthFlow::Auto => Flow::Auto,
                OAuthFlow::IdentityAssertion => Flow::IdentityAssertion,
                OAuthFlow::WorkloadIdentity => Flow::WorkloadIdentity,
            },
            client_id: client_id.clone(),
            register: self.oauth_register,
            client_secret,
            client_key: client_key.map(Arc::new),
            identity,
            workload_token,
            client_auth: self.oauth_token_auth.map(|m| match m {
                TokenAuth::Basic => ClientAuth::Basic,
                TokenAuth::Post => ClientAuth::Post,
                TokenAuth::None => ClientAuth::None,
                TokenAuth::PrivateKeyJwt => ClientAuth::PrivateKeyJwt,
            }),
            scope: self.oauth_scope.clone(),
            timeout,
            on_authorize: Some(Arc::new(|url: &str| {
                errln!("mcp-witness: open this address to authorize, then come back: {url}");
            })),
        };
        let oauth = OAuth::new(endpoint.url(), config).map_err(|e| invalid(e.to_string()))?;
        let auth: Arc<dyn Authorizer> = if headers.is_empty() {
            Arc::new(oauth)
        } else {
            Arc::new(WithHeaders {
                inner: oauth,
                headers,
            })
        };
        Ok(endpoint.with_auth(auth))
    }
}

/// A secret from environment variable `var`, which must be set, non-empty
/// and sendable as a header value.
fn from_env(flag: &str, var: &str) -> Result<Secret> {
    let value = std::env::var(var).map_err(|_| {
        invalid(format!(
            "{flag} {}: the variable is not set (or not UTF-8)",
            witness_text::clip(var, 80)
        ))
    })?;
    checked(flag, value)
}

fn from_file(flag: &str, path: &std::path::Path) -> Result<Secret> {
    use std::io::Read;
    let mut text = String::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_SECRET_FILE_BYTES).read_to_string(&mut text))
        .map_err(|e| invalid(format!("{flag} {}: {e}", path.display())))?;
    checked(
        flag,
        text.lines().next().unwrap_or_default().trim().to_owned(),
    )
}

/// A client key from environment variable `var` (PEM text, several lines).
fn key_from_env(var: &str) -> Result<ClientKey> {
    let flag = "--oauth-client-key-env";
    let pem = std::env::var(var).map_err(|_| {
        invalid(format!(
            "{flag} {}: the variable is not set (or not UTF-8)",
            witness_text::clip(var, 80)
        ))
    })?;
    // Never echo the value: it is the key.
    ClientKey::from_pem(&pem).map_err(|e| invalid(format!("{flag}: {e}")))
}

fn key_from_file(path: &std::path::Path) -> Result<ClientKey> {
    use std::io::Read;
    let flag = "--oauth-client-key-file";
    let mut pem = String::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_SECRET_FILE_BYTES).read_to_string(&mut pem))
        .map_err(|e| invalid(format!("{flag} {}: {e}", path.display())))?;
    ClientKey::from_pem(&pem).map_err(|e| invalid(format!("{flag} {}: {e}", path.display())))
}

fn checked(flag: &str, value: String) -> Result<Secret> {
    if !valid_header_value(&value) {
        // Never echo the value: it is the secret.
        return Err(invalid(format!(
            "{flag}: the value is empty or holds characters a header cannot carry"
        )));
    }
    Ok(Secret::new(value))
}

//! OAuth 2.1 as the MCP authorization specification asks of a client.
//!
//! On the first refusal the endpoint's protected-resource metadata (RFC 9728)
//! is found: at the `resource_metadata` its `WWW-Authenticate` names, else at
//! the well-known addresses derived from the endpoint's path and then its
//! origin. Its first authorization server's metadata (RFC 8414) is read from
//! the well-known OAuth address, with the OpenID Connect ones as fallbacks.
//! A token is then had with client credentials, with the authorization
//! code flow with PKCE (S256) and a loopback redirect, or with an identity
//! assertion (SEP-990: an ID token traded at the identity provider for an
//! ID-JAG, that traded here), always naming the endpoint as the `resource`
//! (RFC 8707); [`Flow::Auto`] takes the one the server's metadata offers.
//! The client is the pre-registered id, a client ID metadata document URL
//! where the server accepts those, or one registered dynamically; it
//! authenticates with a secret (basic or post), a signed JWT
//! (`private_key_jwt`, [`super::jwt`]) or not at all. The standard grants
//! are the `oauth2` crate's requests, the jwt-bearer and token-exchange
//! ones are made by hand (`OAuth::form_grant`); all go over our own HTTP
//! agent.
//!
//! Scopes: those the challenge names, else the user's `--oauth-scope`, else
//! the resource's `scopes_supported`, else none are asked for. A `403` with
//! `insufficient_scope` asks again for what was granted plus what the
//! challenge names (step-up); the transport stops after
//! [`super::MAX_AUTH_RETRIES`] new tokens. A refresh token, when one came,
//! is tried before a whole new flow.
//!
//! Every address we fetch must be https, or http on loopback: a token or a
//! secret never travels in the clear to another host. Redirects are never
//! followed, except that the authorization endpoint's redirect to our own
//! loopback address is read (that is how the code arrives).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use oauth2::basic::{BasicClient, BasicTokenResponse};
use oauth2::url::Url;
use oauth2::{
    AuthType, AuthUrl, AuthorizationCode, ClientId, ClientSecret, CsrfToken, EndpointNotSet,
    EndpointSet, PkceCodeChallenge, RedirectUrl, RefreshToken, RequestTokenError, Scope,
    TokenResponse, TokenUrl,
};
use serde_json::Value;

use super::dpop::{self, DpopKey};
use super::jwt::{self, ClientKey};
use super::{AuthError, Authorizer, Challenge, Credentials, Secret};

/// The `oauth2` client every token request is made with: only its token
/// endpoint is set (the authorization-code flow adds its endpoint after).
type TokenClient =
    BasicClient<EndpointNotSet, EndpointNotSet, EndpointNotSet, EndpointNotSet, EndpointSet>;

/// Longest metadata document or token response read.
const MAX_DOCUMENT_BYTES: u64 = 256 * 1024;

/// How a token is had.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    /// The client's own credentials (machine to machine).
    ClientCredentials,
    /// A user's consent, via the authorization endpoint and a loopback redirect.
    AuthorizationCode,
    /// Whichever the authorization server's `grant_types_supported` allows:
    /// the authorization code when it lists it (or lists nothing, RFC 8414's
    /// default), else client credentials when it lists them and the client
    /// has a secret.
    Auto,
    /// Enterprise-managed authorization (SEP-990): the user's ID token from
    /// the enterprise identity provider is exchanged there for an identity
    /// assertion grant (ID-JAG, RFC 8693), and that at the authorization
    /// server for an access token (RFC 7523 jwt-bearer). Needs
    /// [`OAuthConfig::identity`].
    IdentityAssertion,
    /// Workload identity federation (SEP-1933): a JWT the workload's own
    /// identity provider issued is the grant (RFC 7523 jwt-bearer), sent
    /// as it is. Needs [`OAuthConfig::workload_token`].
    WorkloadIdentity,
}

/// The `grant_type` of a JWT authorization grant (RFC 7523 §2.1).
const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/// What the identity-assertion flow starts from: the user's ID token and
/// the identity provider that issued it.
#[derive(Clone, Debug)]
pub struct IdentityAssertion {
    pub id_token: Secret,
    /// The identity provider's token endpoint (https, or loopback http).
    pub idp_token_endpoint: String,
    /// This client's id at the identity provider.
    pub idp_client_id: String,
}

/// How the client authenticates at the token endpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientAuth {
    /// `client_secret_basic`: the secret in an `Authorization: Basic` header.
    Basic,
    /// `client_secret_post`: the secret in the form body.
    Post,
    /// `none`: a public client; PKCE protects the code.
    None,
    /// `private_key_jwt`: a JWT signed with the client's key (RFC 7523).
    PrivateKeyJwt,
}

/// Shows the user the address to open when the authorization endpoint
/// wants a person (it did not redirect straight back).
pub type OnAuthorize = Arc<dyn Fn(&str) + Send + Sync>;

/// What the command line decided.
#[derive(Clone)]
pub struct OAuthConfig {
    pub flow: Flow,
    /// A pre-registered client id, or the URL of a client ID metadata
    /// document; empty with `register`.
    pub client_id: String,
    /// Register a client dynamically (RFC 7591) at the server's
    /// `registration_endpoint` when no client id was given.
    pub register: bool,
    pub client_secret: Option<Secret>,
    /// The client's private key, for `private_key_jwt` instead of a secret.
    pub client_key: Option<Arc<ClientKey>>,
    /// `None`: chosen from what the server supports.
    pub client_auth: Option<ClientAuth>,
    /// Scopes the user asks for when the challenge names none.
    pub scope: Option<String>,
    /// For [`Flow::IdentityAssertion`] (and for [`Flow::Auto`] where the
    /// authorization server lists the jwt-bearer grant).
    pub identity: Option<IdentityAssertion>,
    /// The workload's JWT, for [`Flow::WorkloadIdentity`] (and for
    /// [`Flow::Auto`] where the authorization server lists jwt-bearer).
    pub workload_token: Option<Secret>,
    /// Every exchange with the authorization server ends within this.
    pub timeout: Duration,
    pub on_authorize: Option<OnAuthorize>,
}

impl std::fmt::Debug for OAuthConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthConfig")
            .field("flow", &self.flow)
            .field("client_secret", &self.client_secret)
            .field("client_key", &self.client_key)
            .field("client_auth", &self.client_auth)
            .finish_non_exhaustive()
    }
}

/// The resource and its authorization server, once discovered.
#[derive(Clone, Debug)]
struct Discovered {
    /// The resource identifier the tokens are for (RFC 8707).
    resource: String,
    /// The authorization server's issuer identifier (a client assertion's
    /// audience).
    issuer: String,
    scopes_supported: Option<String>,
    authorization_endpoint: Option<String>,
    token_endpoint: String,
    auth_methods: Option<Vec<String>>,
    pkce_s256: bool,
    registration_endpoint: Option<String>,
    /// `grant_types_supported`, when listed.
    grant_types: Option<Vec<String>>,
    /// `client_id_metadata_document_supported`: a client ID metadata
    /// document URL is accepted as the client id.
    metadata_documents: bool,
    /// `authorization_response_iss_parameter_supported` (RFC 9207): the
    /// authorization response must then name its issuer.
    iss_supported: bool,
    /// ES256 in `dpop_signing_alg_values_supported`: tokens are asked for
    /// bound to a key of the client's (RFC 9449).
    dpop: bool,
}

impl Discovered {
    /// What an authorization server's metadata (RFC 8414) says, for tokens
    /// for `resource`; one reader for every way the document was found.
    fn from_server_metadata(
        resource: String,
        scopes_supported: Option<String>,
        identifier: &str,
        server: &Value,
    ) -> Result<Self, AuthError> {
        let text = |key: &str| server.get(key).and_then(Value::as_str).map(str::to_owned);
        let list = |key: &str| {
            server.get(key).and_then(Value::as_array).map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect::<Vec<_>>()
            })
        };
        let Some(token_endpoint) = text("token_endpoint") else {
            return Err(AuthError::ServerMetadata("it has no token_endpoint".into()));
        };
        Ok(Discovered {
            resource,
            issuer: text("issuer").unwrap_or_else(|| identifier.to_owned()),
            scopes_supported,
            authorization_endpoint: text("authorization_endpoint"),
            token_endpoint,
            auth_methods: list("token_endpoint_auth_methods_supported"),
            pkce_s256: list("code_challenge_methods_supported")
                .is_some_and(|m| m.iter().any(|m| m == "S256")),
            registration_endpoint: text("registration_endpoint"),
            grant_types: list("grant_types_supported"),
            metadata_documents: server
                .get("client_id_metadata_document_supported")
                .and_then(Value::as_bool)
                == Some(true),
            iss_supported: server
                .get("authorization_response_iss_parameter_supported")
                .and_then(Value::as_bool)
                == Some(true),
            dpop: dpop::offered(server),
        })
    }
}

/// RFC 8414 §3.3 (and the MCP specification after SEP-2468): the metadata
/// found at an issuer's well-known address must name that very issuer,
/// character for character, or an attacker's metadata could send the
/// client's code elsewhere. A document that names none is taken as the
/// issuer's.
fn check_metadata_issuer(identifier: &str, server: &Value) -> Result<(), AuthError> {
    match server.get("issuer") {
        None => Ok(()),
        Some(Value::String(named)) if named == identifier => Ok(()),
        Some(_) => Err(AuthError::ServerMetadata(
            "its issuer is not the authorization server it was fetched for (RFC 8414)".into(),
        )),
    }
}

/// RFC 9207: an authorization response that names an issuer must name the
/// one the client recorded, compared as strings (no URL normalization);
/// one from a server that promised to name it must.
fn check_response_issuer(found: &Discovered, iss: Option<&str>) -> Result<(), AuthError> {
    match iss {
        Some(iss) if iss != found.issuer => Err(AuthError::Authorize(
            "its iss names another authorization server (RFC 9207: a mix-up?)".into(),
        )),
        None if found.iss_supported => Err(AuthError::Authorize(
            "no iss, though the authorization server promised one (RFC 9207)".into(),
        )),
        _ => Ok(()),
    }
}

#[derive(Default)]
struct State {
    generation: u64,
    access: Option<Secret>,
    refresh: Option<Secret>,
    /// The scopes asked for last (what a step-up adds to).
    scope: Option<String>,
    discovered: Option<Discovered>,
    /// The access token is DPoP-bound (`token_type: DPoP`): it goes with
    /// the DPoP scheme and a proof.
    access_dpop: bool,
}

/// The session's DPoP key and the nonces the servers gave, apart from
/// [`State`]: token requests sign proofs while a refusal holds the state.
#[derive(Default)]
struct Proofs {
    key: Option<Arc<DpopKey>>,
    /// The last `DPoP-Nonce` of the authorization server, and of the resource.
    server_nonce: Option<String>,
    resource_nonce: Option<String>,
}

/// An [`Authorizer`] that gets and renews OAuth tokens for one endpoint.
pub struct OAuth {
    endpoint: Url,
    config: OAuthConfig,
    agent: ureq::Agent,
    state: Mutex<State>,
    /// The client a dynamic registration gave: its id and secret.
    registered: Mutex<Option<(String, Option<Secret>)>>,
    /// The loopback redirect listener, bound once: a registered client's
    /// redirect URI must stay the same.
    listener: Mutex<Option<TcpListener>>,
    proofs: Mutex<Proofs>,
}

impl OAuth {
    /// For the endpoint at `endpoint_url` (already validated by `Endpoint`).
    pub fn new(endpoint_url: &str, config: OAuthConfig) -> Result<Self, AuthError> {
        let endpoint = Url::parse(endpoint_url)
            .map_err(|_| AuthError::Config("the --url cannot be read as a URL".into()))?;
        if config.client_id.is_empty() && !config.register {
            return Err(AuthError::Config("an OAuth client id is needed".into()));
        }
        if config.flow == Flow::ClientCredentials
            && config.client_secret.is_none()
            && config.client_key.is_none()
        {
            return Err(AuthError::Config(
                "client credentials need a client secret (--oauth-client-secret-env or -file) or key (--oauth-client-key-*)"
                    .into(),
            ));
        }
        if config.flow == Flow::WorkloadIdentity && config.workload_token.is_none() {
            return Err(AuthError::Config(
                "the workload-identity flow needs the workload's JWT".into(),
            ));
        }
        if config.flow == Flow::IdentityAssertion && config.identity.is_none() {
            return Err(AuthError::Config(
                "the identity-assertion flow needs an ID token and its identity provider".into(),
            ));
        }
        if let Some(identity) = &config.identity {
            let url = Url::parse(&identity.idp_token_endpoint).map_err(|_| {
                AuthError::Config("the identity provider's token endpoint is not a URL".into())
            })?;
            safe_address(&url).map_err(AuthError::Config)?;
        }
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(config.timeout))
            .http_status_as_error(false)
            .max_redirects(0)
            .proxy(None)
            .user_agent(concat!("mcp-witness/", env!("CARGO_PKG_VERSION")))
            .build()
            .into();
        Ok(Self {
            endpoint,
            config,
            agent,
            state: Mutex::new(State::default()),
            registered: Mutex::new(None),
            listener: Mutex::new(None),
            proofs: Mutex::new(Proofs::default()),
        })
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        match self.state.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// GETs a JSON document; `None` when it is not there (any non-2xx).
    fn document(&self, url: &Url) -> Result<Option<Value>, String> {
        safe_address(url)?;
        let response = self
            .agent
            .get(url.as_str())
            .header("Accept", "application/json")
            .call()
            .map_err(|_| "the request failed".to_owned())?;
        let status = response.status().as_u16();
        if !(200..300).contains(&status) {
            return Ok(None);
        }
        let mut bytes = Vec::new();
        response
            .into_body()
            .into_reader()
            .take(MAX_DOCUMENT_BYTES)
            .read_to_end(&mut bytes)
            .map_err(|_| "the document could not be read".to_owned())?;
        match serde_json::from_slice::<Value>(&bytes) {
            Ok(value) if value.is_object() => Ok(Some(value)),
            _ => Err(format!(
                "HTTP {status} with a body that is not a JSON object"
            )),
        }
    }

    /// The protected-resource metadata, then its authorization server's.
    fn discover(&self, challenge: &Challenge) -> Result<Discovered, AuthError> {
        let mut candidates = Vec::new();
        if let Some(named) = &challenge.resource_metadata {
            let url = Url::parse(named).map_err(|_| {
                AuthError::ResourceMetadata("resource_metadata is not a URL".into())
            })?;
            candidates.push(url);
        }
        candidates.extend(well_known(&self.endpoint, "oauth-protected-resource"));
        let mut resource = None;
        for url in &candidates {
            match self.document(url) {
                Ok(Some(doc)) => {
                    resource = Some(doc);
                    break;
                }
                Ok(None) => continue,
                Err(e) => return Err(AuthError::ResourceMetadata(e)),
            }
        }
        let Some(resource) = resource else {
            // Protocol 2025-03-26 had no resource metadata: the endpoint's
            // origin is its authorization server.
            return self.legacy_discover();
        };
        let resource_id = match resource.get("resource").and_then(Value::as_str) {
            Some(id) => {
                if !same_resource(id, &self.endpoint) {
                    return Err(AuthError::ResourceMetadata(
                        "it names another resource than the --url".into(),
                    ));
                }
                id.to_owned()
            }
            None => canonical_resource(&self.endpoint),
        };
        let Some(identifier) = resource
            .get("authorization_servers")
            .and_then(Value::as_array)
            .and_then(|a| a.first())
            .and_then(Value::as_str)
        else {
            return Err(AuthError::ResourceMetadata(
                "it lists no authorization_servers".into(),
            ));
        };
        let issuer = Url::parse(identifier).map_err(|_| {
            AuthError::ServerMetadata("the authorization server is not a URL".into())
        })?;
        let mut server = None;
        for url in server_metadata_addresses(&issuer) {
            match self.document(&url) {
                Ok(Some(doc)) => {
                    server = Some(doc);
                    break;
                }
                Ok(None) => continue,
                Err(e) => return Err(AuthError::ServerMetadata(e)),
            }
        }
        let Some(server) = server else {
            return Err(AuthError::ServerMetadata(
                "no OAuth or OpenID metadata at its well-known addresses".into(),
            ));
        };
        check_metadata_issuer(identifier, &server)?;
        let scopes_supported = resource
            .get("scopes_supported")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .filter(|s| !s.is_empty());
        Discovered::from_server_metadata(resource_id, scopes_supported, identifier, &server)
    }

    /// The 2025-03-26 rules: metadata at the endpoint's origin, else the
    /// default `/authorize`, `/token` and `/register` there.
    fn legacy_discover(&self) -> Result<Discovered, AuthError> {
        let mut origin = self.endpoint.clone();
        origin.set_path("");
        origin.set_query(None);
        let resource = canonical_resource(&self.endpoint);
        let metadata = origin.join("/.well-known/oauth-authorization-server").ok();
        let found = match metadata {
            Some(url) => self.document(&url).map_err(AuthError::ServerMetadata)?,
            None => None,
        };
        let at = |path: &str| origin.join(path).map(|u| u.to_string()).ok();
        let Some(server) = found else {
            let Some(token_endpoint) = at("/token") else {
                return Err(AuthError::ServerMetadata(
                    "no default token endpoint".into(),
                ));
            };
            return Ok(Discovered {
                resource,
                issuer: origin.as_str().trim_end_matches('/').to_owned(),
                scopes_supported: None,
                authorization_endpoint: at("/authorize"),
                token_endpoint,
                auth_methods: None,
                // 2025-03-26 made PKCE mandatory for every client.
                pkce_s256: true,
                registration_endpoint: at("/register"),
                grant_types: None,
                metadata_documents: false,
                iss_supported: false,
                dpop: false,
            });
        };
        Discovered::from_server_metadata(resource, None, origin.as_str(), &server)
    }

    /// How to authenticate at the token endpoint: the user's choice, else
    /// what the server lists (basic first, as RFC 8414 defaults to it).
    fn client_auth(&self, found: &Discovered) -> ClientAuth {
        if let Some(chosen) = self.config.client_auth {
            return chosen;
        }
        if self.config.client_key.is_some() {
            return ClientAuth::PrivateKeyJwt;
        }
        if self.client_secret().is_none() {
            return ClientAuth::None;
        }
        match &found.auth_methods {
            Some(methods)
                if !methods.iter().any(|m| m == "client_secret_basic")
                    && methods.iter().any(|m| m == "client_secret_post") =>
            {
                ClientAuth::Post
            }
            _ => ClientAuth::Basic,
        }
    }

    /// The HTTP client the `oauth2` crate sends its token requests with.
    fn http(&self) -> impl Fn(oauth2::HttpRequest) -> Result<oauth2::HttpResponse, HttpError> + '_ {
        move |request: oauth2::HttpRequest| {
            let url = Url::parse(&request.uri().to_string()).map_err(|_| HttpError::Refused)?;
            safe_address(&url).map_err(|_| HttpError::Refused)?;
            let key = lock(&self.proofs).key.clone();
            let Some(key) = key else {
                return self.send(request);
            };
            // Every request through here is a token request: each carries
            // a proof (RFC 9449 §5); one refused for want of a nonce goes
            // again, once, with the nonce the server gave (§8).
            let mut retried = false;
            loop {
                let nonce = lock(&self.proofs).server_nonce.clone();
                let proof = key
                    .proof(
                        request.method().as_str(),
                        url.as_str(),
                        None,
                        nonce.as_deref(),
                    )
                    .map_err(|_| HttpError::Failed)?;
                let mut attempt = request.clone();
                let value = proof.parse().map_err(|_| HttpError::Failed)?;
                attempt.headers_mut().insert("DPoP", value);
                let response = self.send(attempt)?;
                let given = response
                    .headers()
                    .get("dpop-nonce")
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned);
                let wants_nonce = response.status().as_u16() == 400
                    && serde_json::from_slice::<Value>(response.body())
                        .ok()
                        .and_then(|b| b.get("error").and_then(Value::as_str).map(str::to_owned))
                        .as_deref()
                        == Some("use_dpop_nonce");
                if let Some(given) = given.filter(|n| super::valid_header_value(n)) {
                    lock(&self.proofs).server_nonce = Some(given);
                    if wants_nonce && !retried {
                        retried = true;
                        continue;
                    }
                }
                return Ok(response);
            }
        }
    }

    /// One request to the authorization server, its body bounded.
    fn send(&self, request: oauth2::HttpRequest) -> Result<oauth2::HttpResponse, HttpError> {
        let response = self.agent.run(request).map_err(|_| HttpError::Failed)?;
        let status = response.status();
        let headers = response.headers().clone();
        let mut body = Vec::new();
        response
            .into_body()
            .into_reader()
            .take(MAX_DOCUMENT_BYTES)
            .read_to_end(&mut body)
            .map_err(|_| HttpError::Failed)?;
        let mut out = oauth2::HttpResponse::new(body);
        *out.status_mut() = status;
        *out.headers_mut() = headers;
        Ok(out)
    }

    /// The one description of this client at the token endpoint, for every
    /// token request (a grant, a code exchange, a refresh): its id, how it
    /// authenticates there, and its secret unless it is a public client.
    fn token_client(&self, found: &Discovered) -> Result<TokenClient, AuthError> {
        let token_url = TokenUrl::new(found.token_endpoint.clone())
            .map_err(|_| AuthError::ServerMetadata("the token_endpoint is not a URL".into()))?;
        let method = self.client_auth(found);
        let client = BasicClient::new(ClientId::new(self.client_id()))
            .set_token_uri(token_url)
            .set_auth_type(match method {
                ClientAuth::Basic => AuthType::BasicAuth,
                ClientAuth::Post | ClientAuth::None | ClientAuth::PrivateKeyJwt => {
                    AuthType::RequestBody
                }
            });
        Ok(match self.client_secret() {
            Some(secret) if matches!(method, ClientAuth::Basic | ClientAuth::Post) => {
                client.set_client_secret(ClientSecret::new(secret.expose().to_owned()))
            }
            _ => client,
        })
    }

    /// The flow to use with this authorization server: the configured one,
    /// or for [`Flow::Auto`] the one its metadata allows.
    fn flow(&self, found: &Discovered) -> Flow {
        if self.config.flow != Flow::Auto {
            return self.config.flow;
        }
        let listed = |grant: &str| {
            found
                .grant_types
                .as_ref()
                .is_some_and(|grants| grants.iter().any(|g| g == grant))
        };
        if self.config.identity.is_some() && listed(JWT_BEARER) {
            return Flow::IdentityAssertion;
        }
        if self.config.workload_token.is_some() && listed(JWT_BEARER) {
            return Flow::WorkloadIdentity;
        }
        let lists = |grant: &str| match &found.grant_types {
            Some(grants) => grants.iter().any(|g| g == grant),
            // RFC 8414 §2: omitted means ["authorization_code", "implicit"].
            None => grant == "authorization_code",
        };
        let credentials = self.client_secret().is_some() || self.config.client_key.is_some();
        if !lists("authorization_code") && lists("client_credentials") && credentials {
            Flow::ClientCredentials
        } else {
            Flow::AuthorizationCode
        }
    }

    /// What every token request adds to prove the client with its key
    /// (`private_key_jwt`): nothing for the other methods.
    fn assertion(&self, found: &Discovered) -> Result<Vec<(&'static str, String)>, AuthError> {
        match &self.config.client_key {
            Some(key) if self.client_auth(found) == ClientAuth::PrivateKeyJwt => Ok(vec![
                ("client_assertion_type", jwt::ASSERTION_TYPE.to_owned()),
                (
                    "client_assertion",
                    key.assertion(&self.client_id(), &found.issuer)?,
                ),
            ]),
            _ => Ok(Vec::new()),
        }
    }

    /// A new token for `scope` by the configured flow.
    fn obtain(&self, found: &Discovered, scope: Option<&str>) -> Result<Token, AuthError> {
        let client = self.token_client(found)?;
        let scopes: Vec<Scope> = scope
            .unwrap_or_default()
            .split_whitespace()
            .map(|s| Scope::new(s.to_owned()))
            .collect();
        let http = self.http();
        let assertion = self.assertion(found)?;
        let response = match self.flow(found) {
            Flow::ClientCredentials => {
                let mut request = client
                    .exchange_client_credentials()
                    .add_scopes(scopes)
                    .add_extra_param("resource", found.resource.clone());
                for (name, value) in assertion {
                    request = request.add_extra_param(name, value);
                }
                request.request(&http)
            }
            Flow::IdentityAssertion => return self.identity_assertion(found, scope, assertion),
            Flow::WorkloadIdentity => {
                let Some(jwt) = &self.config.workload_token else {
                    return Err(AuthError::Config(
                        "the workload-identity flow needs the workload's JWT".into(),
                    ));
                };
                // One request: a refused grant is the answer (SEP-1933 has
                // the client neither retry it nor fall back to another).
                return self.jwt_bearer(found, jwt.expose(), scope, assertion);
            }
            Flow::AuthorizationCode | Flow::Auto => {
                let Some(authorize) = &found.authorization_endpoint else {
                    return Err(AuthError::ServerMetadata(
                        "it has no authorization_endpoint".into(),
                    ));
                };
                if !found.pkce_s256 {
                    // The MCP specification: no S256 advertised, no flow.
                    return Err(AuthError::ServerMetadata(
                        "it does not list S256 in code_challenge_methods_supported".into(),
                    ));
                }
                let auth_url = AuthUrl::new(authorize.clone()).map_err(|_| {
                    AuthError::ServerMetadata("the authorization_endpoint is not a URL".into())
                })?;
                let guard = self.listener()?;
                let Some(listener) = guard.as_ref() else {
                    return Err(AuthError::Authorize(
                        "no loopback port for the redirect".into(),
                    ));
                };
                let redirect = redirect_of(listener);
                let redirect_url = RedirectUrl::new(redirect.clone())
                    .map_err(|_| AuthError::Authorize("bad redirect".into()))?;
                let client = client.set_auth_uri(auth_url).set_redirect_uri(redirect_url);
                let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
                let (url, state) = client
                    .authorize_url(CsrfToken::new_random)
                    .add_scopes(scopes)
                    .set_pkce_challenge(challenge)
                    .add_extra_param("resource", found.resource.clone())
                    .url();
                let code = self.authorize(found, &url, &redirect, listener, state.secret())?;
                let mut request = client
                    .exchange_code(AuthorizationCode::new(code))
                    .set_pkce_verifier(verifier)
                    .add_extra_param("resource", found.resource.clone());
                for (name, value) in assertion {
                    request = request.add_extra_param(name, value);
                }
                request.request(&http)
            }
        };
        token(response)
    }

    /// The identity-assertion flow: the ID token for an ID-JAG at the
    /// identity provider, then the ID-JAG for a token here, the client
    /// authenticating as it does for any other grant.
    fn identity_assertion(
        &self,
        found: &Discovered,
        scope: Option<&str>,
        assertion: Vec<(&'static str, String)>,
    ) -> Result<Token, AuthError> {
        let Some(identity) = &self.config.identity else {
            return Err(AuthError::Config(
                "the identity-assertion flow needs an ID token and its identity provider".into(),
            ));
        };
        let mut exchange = vec![
            (
                "grant_type",
                "urn:ietf:params:oauth:grant-type:token-exchange".to_owned(),
            ),
            (
                "requested_token_type",
                "urn:ietf:params:oauth:token-type:id-jag".to_owned(),
            ),
            ("audience", found.issuer.clone()),
            ("resource", found.resource.clone()),
            ("subject_token", identity.id_token.expose().to_owned()),
            (
                "subject_token_type",
                "urn:ietf:params:oauth:token-type:id_token".to_owned(),
            ),
            ("client_id", identity.idp_client_id.clone()),
        ];
        if let Some(scope) = scope {
            exchange.push(("scope", scope.to_owned()));
        }
        let grant = self.form_grant(&identity.idp_token_endpoint, exchange, None)?;
        self.jwt_bearer(found, grant.access.expose(), None, assertion)
    }

    /// A JWT authorization grant (RFC 7523 §2.1) for a token here, the
    /// client authenticating as it does for any other grant.
    fn jwt_bearer(
        &self,
        found: &Discovered,
        grant: &str,
        scope: Option<&str>,
        assertion: Vec<(&'static str, String)>,
    ) -> Result<Token, AuthError> {
        let mut form = vec![
            ("grant_type", JWT_BEARER.to_owned()),
            ("assertion", grant.to_owned()),
            ("resource", found.resource.clone()),
        ];
        if let Some(scope) = scope {
            form.push(("scope", scope.to_owned()));
        }
        let mut basic = None;
        let id = self.client_id();
        match (self.client_auth(found), self.client_secret()) {
            (ClientAuth::Basic, Some(secret)) => basic = Some((id, secret)),
            (ClientAuth::Post, Some(secret)) => {
                form.push(("client_id", id));
                form.push(("client_secret", secret.expose().to_owned()));
            }
            _ => form.push(("client_id", id)),
        }
        form.extend(assertion);
        self.form_grant(&found.token_endpoint, form, basic)
    }

    /// One token request made by hand (for the grants the `oauth2` crate
    /// has no builder for): `form` POSTed to `url`, the client in an
    /// `Authorization: Basic` header when `basic` says so; the answer read
    /// as a standard token response.
    fn form_grant(
        &self,
        url: &str,
        form: Vec<(&'static str, String)>,
        basic: Option<(String, Secret)>,
    ) -> Result<Token, AuthError> {
        let parsed = Url::parse(url)
            .map_err(|_| AuthError::Token("the token endpoint is not a URL".into()))?;
        safe_address(&parsed).map_err(AuthError::Token)?;
        let body: String = oauth2::url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(form.iter().map(|(k, v)| (*k, v.as_str())))
            .finish();
        let mut request = self
            .agent
            .post(parsed.as_str())
            .header("Content-Type", "application/x-www-form-urlencoded")
            .header("Accept", "application/json");
        if let Some((id, secret)) = basic {
            use base64::Engine;
            let encode = |text: &str| {
                oauth2::url::form_urlencoded::byte_serialize(text.as_bytes()).collect::<String>()
            };
            let pair = format!("{}:{}", encode(&id), encode(secret.expose()));
            let header = format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode(pair)
            );
            request = request.header("Authorization", header);
        }
        let response = request
            .send(body.as_bytes())
            .map_err(|_| AuthError::Token(HttpError::Failed.to_string()))?;
        let status = response.status().as_u16();
        let mut bytes = Vec::new();
        response
            .into_body()
            .into_reader()
            .take(MAX_DOCUMENT_BYTES)
            .read_to_end(&mut bytes)
            .map_err(|_| AuthError::Token(HttpError::Failed.to_string()))?;
        if !(200..300).contains(&status) {
            let answer: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
            let code = answer
                .get("error")
                .and_then(Value::as_str)
                .map(|e| witness_text::clip(&escape(e), 60))
                .unwrap_or_else(|| format!("HTTP {status}"));
            return Err(AuthError::Token(code));
        }
        let response: BasicTokenResponse = serde_json::from_slice(&bytes)
            .map_err(|_| AuthError::Token("the response is not a token response".into()))?;
        token(Ok(response))
    }

    /// Visits the authorization endpoint and returns the code it sends back
    /// to `redirect`: straight away when it redirects there (a server that
    /// needs no person, as in tests and headless runs), else once the
    /// user's browser arrives at our loopback listener.
    fn authorize(
        &self,
        found: &Discovered,
        url: &Url,
        redirect: &str,
        listener: &TcpListener,
        state: &str,
    ) -> Result<String, AuthError> {
        safe_address(url).map_err(AuthError::Authorize)?;
        let response = self
            .agent
            .get(url.as_str())
            .call()
            .map_err(|_| AuthError::Authorize("the request failed".into()))?;
        let status = response.status().as_u16();
        let location = response
            .headers()
            .get("location")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let back = match location {
            Some(location) if (300..400).contains(&status) && location.starts_with(redirect) => {
                Url::parse(&location)
                    .map_err(|_| AuthError::Authorize("the redirect is not a URL".into()))?
            }
            _ => match &self.config.on_authorize {
                Some(show) => {
                    show(url.as_str());
                    wait_for_redirect(listener, self.config.timeout)?
                }
                None => {
                    return Err(AuthError::Authorize(format!(
                        "HTTP {status}, and nobody to open the page"
                    )));
                }
            },
        };
        let query = |key: &str| {
            back.query_pairs()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.into_owned())
        };
        if let Some(error) = query("error") {
            return Err(AuthError::Authorize(format!(
                "the server answered {}",
                witness_text::clip(&escape(&error), 60)
            )));
        }
        if query("state").as_deref() != Some(state) {
            return Err(AuthError::Authorize(
                "the state came back altered (a forged redirect?)".into(),
            ));
        }
        check_response_issuer(found, query("iss").as_deref())?;
        query("code").ok_or_else(|| AuthError::Authorize("no code in the redirect".into()))
    }

    /// The client id: the registered one, else the configured one.
    fn client_id(&self) -> String {
        match &*lock(&self.registered) {
            Some((id, _)) => id.clone(),
            None => self.config.client_id.clone(),
        }
    }

    fn client_secret(&self) -> Option<Secret> {
        match &*lock(&self.registered) {
            Some((_, secret)) => secret.clone(),
            None => self.config.client_secret.clone(),
        }
    }

    /// The redirect listener, bound on first use.
    fn listener(&self) -> Result<std::sync::MutexGuard<'_, Option<TcpListener>>, AuthError> {
        let mut guard = lock(&self.listener);
        if guard.is_none() {
            let listener = TcpListener::bind("127.0.0.1:0")
                .map_err(|_| AuthError::Authorize("no loopback port for the redirect".into()))?;
            *guard = Some(listener);
        }
        Ok(guard)
    }

    /// Registers a client dynamically (RFC 7591), once, when asked to and
    /// no usable client id was given: none at all, or a client ID metadata
    /// document URL that this authorization server does not accept (the MCP
    /// specification's order: pre-registered, metadata document, registration).
    fn register(&self, found: &Discovered) -> Result<(), AuthError> {
        if !self.config.register || lock(&self.registered).is_some() {
            return Ok(());
        }
        if !self.config.client_id.is_empty() && found.metadata_documents {
            return Ok(());
        }
        let Some(endpoint) = &found.registration_endpoint else {
            return Err(AuthError::Config(
                "no client id was given and the server offers no registration_endpoint".into(),
            ));
        };
        let url = Url::parse(endpoint)
            .map_err(|_| AuthError::Config("the registration_endpoint is not a URL".into()))?;
        safe_address(&url).map_err(AuthError::Config)?;
        let redirect = {
            let guard = self.listener()?;
            guard.as_ref().map(redirect_of).unwrap_or_default()
        };
        let (grants, method) = match self.flow(found) {
            Flow::AuthorizationCode | Flow::Auto => {
                (vec!["authorization_code", "refresh_token"], "none")
            }
            Flow::IdentityAssertion | Flow::WorkloadIdentity => {
                (vec![JWT_BEARER], "client_secret_basic")
            }
            Flow::ClientCredentials => (vec!["client_credentials"], "client_secret_basic"),
        };
        let body = serde_json::json!({
            "client_name": "mcp-witness",
            // SEP-837: a command-line client whose redirect is a loopback
            // listener is a native application (OpenID registration's word).
            "application_type": "native",
            "redirect_uris": [redirect],
            "grant_types": grants,
            "response_types": ["code"],
            "token_endpoint_auth_method": method,
        });
        let response = self
            .agent
            .post(url.as_str())
            .header("Content-Type", "application/json")
            .header("Accept", "application/json")
            .send(body.to_string().as_bytes())
            .map_err(|_| AuthError::Config("the registration request failed".into()))?;
        let status = response.status().as_u16();
        let mut bytes = Vec::new();
        response
            .into_body()
            .into_reader()
            .take(MAX_DOCUMENT_BYTES)
            .read_to_end(&mut bytes)
            .map_err(|_| AuthError::Config("the registration answer could not be read".into()))?;
        let answer: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        let Some(id) = answer.get("client_id").and_then(Value::as_str) else {
            return Err(AuthError::Config(format!(
                "the client registration got HTTP {status} without a client_id"
            )));
        };
        let secret = answer
            .get("client_secret")
            .and_then(Value::as_str)
            .map(Secret::new);
        *lock(&self.registered) = Some((id.to_owned(), secret));
        Ok(())
    }

    /// A refresh, when a refresh token came with the last token.
    fn refresh(&self, found: &Discovered, refresh: &Secret) -> Option<Token> {
        let client = self.token_client(found).ok()?;
        let refresh = RefreshToken::new(refresh.expose().to_owned());
        let http = self.http();
        let mut request = client
            .exchange_refresh_token(&refresh)
            .add_extra_param("resource", found.resource.clone());
        for (name, value) in self.assertion(found).ok()? {
            request = request.add_extra_param(name, value);
        }
        token(request.request(&http)).ok()
    }
}

impl Authorizer for OAuth {
    fn credentials(&self) -> Credentials {
        let state = self.state();
        let Some(token) = &state.access else {
            return Credentials {
                generation: state.generation,
                headers: Vec::new(),
            };
        };
        let mut headers = Vec::new();
        let proofs = lock(&self.proofs);
        match (&proofs.key, state.access_dpop) {
            (Some(key), true) => {
                // A fresh proof for each request (RFC 9449 §7.1); the MCP
                // transport only POSTs with credentials.
                let proof = key.proof(
                    "POST",
                    self.endpoint.as_str(),
                    Some(token.expose()),
                    proofs.resource_nonce.as_deref(),
                );
                headers.push((
                    "Authorization".to_owned(),
                    Secret::new(format!("DPoP {}", token.expose())),
                ));
                if let Ok(proof) = proof {
                    headers.push(("DPoP".to_owned(), Secret::new(proof)));
                }
            }
            _ => headers.push((
                "Authorization".to_owned(),
                Secret::new(format!("Bearer {}", token.expose())),
            )),
        }
        Credentials {
            generation: state.generation,
            headers,
        }
    }

    fn refused(
        &self,
        generation: u64,
        status: u16,
        challenge: Option<&str>,
        dpop_nonce: Option<&str>,
    ) -> Result<bool, AuthError> {
        let mut state = self.state();
        if state.generation != generation {
            // Another request renewed the token meanwhile: use that one.
            return Ok(true);
        }
        let challenge = challenge.map(Challenge::parse).unwrap_or_default();
        if status == 401
            && state.access_dpop
            && challenge.error.as_deref() == Some("use_dpop_nonce")
            && let Some(nonce) = dpop_nonce.filter(|n| super::valid_header_value(n))
        {
            // RFC 9449 §9: the same token, with a proof carrying the nonce.
            let mut proofs = lock(&self.proofs);
            if proofs.resource_nonce.as_deref() != Some(nonce) {
                proofs.resource_nonce = Some(nonce.to_owned());
                state.generation += 1;
                return Ok(true);
            }
        }
        let step_up = status == 403 && challenge.error.as_deref() == Some("insufficient_scope");
        if status == 403 && !step_up {
            // Forbidden for another reason: no token changes that.
            return Ok(false);
        }
        let found = match &state.discovered {
            Some(found) if challenge.resource_metadata.is_none() => found.clone(),
            previous => {
                let moved = previous.as_ref().map(|p| p.issuer.clone());
                let found = self.discover(&challenge)?;
                if moved.is_some_and(|issuer| issuer != found.issuer) {
                    // SEP-2352: the resource moved to another authorization
                    // server. What the old one issued (a registered client,
                    // a refresh token) is its own: register and ask anew.
                    *lock(&self.registered) = None;
                    state.refresh = None;
                }
                if found.dpop {
                    let mut proofs = lock(&self.proofs);
                    if proofs.key.is_none() {
                        proofs.key = Some(Arc::new(DpopKey::generate()?));
                    }
                }
                state.discovered = Some(found.clone());
                found
            }
        };
        self.register(&found)?;
        let scope = if step_up {
            union(state.scope.as_deref(), challenge.scope.as_deref())
        } else {
            challenge
                .scope
                .clone()
                .or_else(|| self.config.scope.clone())
                .or_else(|| found.scopes_supported.clone())
        };
        let renewed = match (&state.refresh, step_up) {
            (Some(refresh), false) => self.refresh(&found, refresh),
            _ => None,
        };
        let token = match renewed {
            Some(token) => token,
            None => self.obtain(&found, scope.as_deref())?,
        };
        state.access = Some(token.access);
        state.access_dpop = token.dpop;
        state.refresh = token.refresh.or(state.refresh.take());
        state.scope = scope;
        state.generation += 1;
        Ok(true)
    }
}

/// What a token response gave.
struct Token {
    access: Secret,
    refresh: Option<Secret>,
    /// `token_type: DPoP`: bound to the client's DPoP key.
    dpop: bool,
}

/// The token from a token response, or why there is none (the server's
/// error code, clipped and escaped, never its description or the body).
fn token(
    response: Result<
        BasicTokenResponse,
        RequestTokenError<HttpError, oauth2::basic::BasicErrorResponse>,
    >,
) -> Result<Token, AuthError> {
    match response {
        Ok(response) => Ok(Token {
            access: Secret::new(response.access_token().secret().clone()),
            refresh: response
                .refresh_token()
                .map(|r| Secret::new(r.secret().clone())),
            dpop: response.token_type().as_ref().eq_ignore_ascii_case("dpop"),
        }),
        Err(RequestTokenError::ServerResponse(error)) => Err(AuthError::Token(witness_text::clip(
            &escape(error.error().as_ref()),
            60,
        ))),
        Err(RequestTokenError::Request(e)) => Err(AuthError::Token(e.to_string())),
        Err(RequestTokenError::Parse(..)) => Err(AuthError::Token(
            "the response is not a token response".into(),
        )),
        Err(RequestTokenError::Other(_)) => Err(AuthError::Token("an unexpected response".into())),
    }
}

/// Why the token endpoint could not be reached (fixed words).
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    #[error("the token endpoint is neither https nor loopback http")]
    Refused,
    #[error("the token request failed")]
    Failed,
}

/// Only https, or http on a loopback host, carries tokens and secrets.
fn safe_address(url: &Url) -> Result<(), String> {
    match url.scheme() {
        "https" => Ok(()),
        "http" if url.host_str().is_some_and(loopback_host) => Ok(()),
        _ => Err("an address that is neither https nor loopback http was refused".into()),
    }
}

fn loopback_host(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// `https://host/.well-known/NAME/path`, then `https://host/.well-known/NAME`
/// (RFC 9728 §3.1 and the MCP specification's fallback).
fn well_known(url: &Url, name: &str) -> Vec<Url> {
    let mut out = Vec::new();
    let path = url.path().trim_end_matches('/');
    let mut base = url.clone();
    base.set_query(None);
    base.set_fragment(None);
    if !path.is_empty() {
        let mut with_path = base.clone();
        with_path.set_path(&format!("/.well-known/{name}{path}"));
        out.push(with_path);
    }
    let mut root = base;
    root.set_path(&format!("/.well-known/{name}"));
    out.push(root);
    out
}

/// Where an issuer's metadata may be, in the MCP specification's order:
/// OAuth with the path inserted, OpenID with the path inserted, OpenID
/// with the path appended (or the two root forms for an issuer without one).
fn server_metadata_addresses(issuer: &Url) -> Vec<Url> {
    let path = issuer.path().trim_end_matches('/');
    let mut base = issuer.clone();
    base.set_query(None);
    base.set_fragment(None);
    let at = |p: String| {
        let mut url = base.clone();
        url.set_path(&p);
        url
    };
    if path.is_empty() {
        vec![
            at("/.well-known/oauth-authorization-server".into()),
            at("/.well-known/openid-configuration".into()),
        ]
    } else {
        vec![
            at(format!("/.well-known/oauth-authorization-server{path}")),
            at(format!("/.well-known/openid-configuration{path}")),
            at(format!("{path}/.well-known/openid-configuration")),
        ]
    }
}

/// The endpoint as a resource identifier: no query, no fragment.
fn canonical_resource(url: &Url) -> String {
    let mut url = url.clone();
    url.set_query(None);
    url.set_fragment(None);
    url.as_str().to_owned()
}

/// Whether metadata's `resource` names our endpoint (the same origin, and
/// a path that is ours or a prefix of ours).
fn same_resource(id: &str, endpoint: &Url) -> bool {
    let Ok(id) = Url::parse(id) else {
        return false;
    };
    let origin = id.scheme() == endpoint.scheme()
        && id.host_str().map(str::to_ascii_lowercase)
            == endpoint.host_str().map(str::to_ascii_lowercase)
        && id.port_or_known_default() == endpoint.port_or_known_default();
    let path = id.path().trim_end_matches('/');
    origin && (path.is_empty() || endpoint.path().starts_with(path))
}

/// Scopes `a` then those of `b` not already in it.
fn union(a: Option<&str>, b: Option<&str>) -> Option<String> {
    let mut out: Vec<&str> = Vec::new();
    for scope in a
        .unwrap_or_default()
        .split_whitespace()
        .chain(b.unwrap_or_default().split_whitespace())
    {
        if !out.contains(&scope) {
            out.push(scope);
        }
    }
    (!out.is_empty()).then(|| out.join(" "))
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    match mutex.lock() {
        Ok(guard) => guard,
        Err(poisoned) => poisoned.into_inner(),
    }
}

/// The redirect URI our loopback listener answers.
fn redirect_of(listener: &TcpListener) -> String {
    let port = listener.local_addr().map(|a| a.port()).unwrap_or_default();
    format!("http://127.0.0.1:{port}/callback")
}

/// Server text shown in an error: control characters escaped.
fn escape(text: &str) -> String {
    text.chars().flat_map(char::escape_debug).collect()
}

/// Waits for the browser's one request to the loopback redirect and answers it.
fn wait_for_redirect(listener: &TcpListener, timeout: Duration) -> Result<Url, AuthError> {
    let deadline = Instant::now() + timeout;
    listener
        .set_nonblocking(true)
        .map_err(|_| AuthError::Authorize("the loopback listener failed".into()))?;
    loop {
        match listener.accept() {
            Ok((stream, _)) => {
                if let Some(url) = read_redirect(stream) {
                    return Ok(url);
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                if Instant::now() >= deadline {
                    return Err(AuthError::Authorize(
                        "nobody came back to the loopback redirect in time".into(),
                    ));
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(_) => return Err(AuthError::Authorize("the loopback listener failed".into())),
        }
    }
}

fn read_redirect(stream: TcpStream) -> Option<Url> {
    stream.set_nonblocking(false).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let mut line = String::new();
    reader.by_ref().take(8192).read_line(&mut line).ok()?;
    let target = line.split(' ').nth(1)?;
    let url = Url::parse(&format!("http://127.0.0.1{target}")).ok()?;
    let mut stream = stream;
    let page = "You may close this window: mcp-witness has the code.";
    let _ = write!(
        stream,
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{page}",
        page.len()
    );
    Some(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(text: &str) -> Url {
        Url::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    fn metadata(issuer: &str, iss_supported: bool) -> Discovered {
        let server = serde_json::json!({"issuer": issuer, "token_endpoint": "https://as.test/token",
            "authorization_response_iss_parameter_supported": iss_supported});
        Discovered::from_server_metadata("https://mcp.test/mcp".into(), None, issuer, &server)
            .expect("metadata")
    }

    #[test]
    fn metadata_must_name_the_issuer_it_was_fetched_for_exactly() {
        let named = |issuer: &str| serde_json::json!({"issuer": issuer});
        assert!(check_metadata_issuer("https://as.test", &named("https://as.test")).is_ok());
        assert!(check_metadata_issuer("https://as.test", &serde_json::json!({})).is_ok());
        for other in [
            "https://attacker.test",
            "https://as.test/",
            "HTTPS://as.test",
        ] {
            assert!(
                matches!(
                    check_metadata_issuer("https://as.test", &named(other)),
                    Err(AuthError::ServerMetadata(_))
                ),
                "{other}"
            );
        }
    }

    #[test]
    fn the_authorization_response_names_the_recorded_issuer_or_is_refused() {
        let promised = metadata("https://as.test", true);
        assert!(check_response_issuer(&promised, Some("https://as.test")).is_ok());
        // Promised and missing, or different in any way, even by a slash.
        for iss in [None, Some("https://as.test/"), Some("https://evil.test")] {
            assert!(
                matches!(
                    check_response_issuer(&promised, iss),
                    Err(AuthError::Authorize(_))
                ),
                "{iss:?}"
            );
        }
        let silent = metadata("https://as.test", false);
        assert!(check_response_issuer(&silent, None).is_ok());
        assert!(check_response_issuer(&silent, Some("https://as.test")).is_ok());
        assert!(check_response_issuer(&silent, Some("https://evil.test")).is_err());
    }

    #[test]
    fn well_known_addresses_insert_the_path_then_fall_back_to_the_root() {
        let got: Vec<String> = well_known(
            &url("https://a.test/v1/mcp?x=1"),
            "oauth-protected-resource",
        )
        .iter()
        .map(Url::to_string)
        .collect();
        assert_eq!(
            got,
            [
                "https://a.test/.well-known/oauth-protected-resource/v1/mcp",
                "https://a.test/.well-known/oauth-protected-resource"
            ]
        );
        let got: Vec<String> = server_metadata_addresses(&url("https://as.test/tenant1"))
            .iter()
            .map(Url::to_string)
            .collect();
        assert_eq!(
            got,
            [
                "https://as.test/.well-known/oauth-authorization-server/tenant1",
                "https://as.test/.well-known/openid-configuration/tenant1",
                "https://as.test/tenant1/.well-known/openid-configuration"
            ]
        );
        assert_eq!(server_metadata_addresses(&url("https://as.test")).len(), 2);
    }

    #[test]
    fn tokens_travel_only_over_https_or_loopback_http() {
        assert!(safe_address(&url("https://as.test/token")).is_ok());
        assert!(safe_address(&url("http://127.0.0.1:9/token")).is_ok());
        assert!(safe_address(&url("http://[::1]:9/token")).is_ok());
        assert!(safe_address(&url("http://localhost/token")).is_ok());
        assert!(safe_address(&url("http://as.test/token")).is_err());
        assert!(safe_address(&url("file:///etc/passwd")).is_err());
    }

    #[test]
    fn a_step_up_keeps_what_was_granted_and_adds_what_is_asked() {
        assert_eq!(
            union(Some("read write"), Some("write admin")).as_deref(),
            Some("read write admin")
        );
        assert_eq!(union(None, None), None);
        assert!(same_resource(
            "http://127.0.0.1:5/mcp",
            &url("http://127.0.0.1:5/mcp")
        ));
        assert!(same_resource(
            "http://127.0.0.1:5",
            &url("http://127.0.0.1:5/mcp")
        ));
        assert!(!same_resource(
            "http://127.0.0.1:6/mcp",
            &url("http://127.0.0.1:5/mcp")
        ));
        assert!(!same_resource(
            "http://127.0.0.1:5/other",
            &url("http://127.0.0.1:5/mcp")
        ));
    }
}

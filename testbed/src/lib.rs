//! The planted-lie notes server that mcp-witness's experiments (E1–E3) audit.
//!
//! The server is a small MCP notes service over SQLite, built on rmcp. It comes
//! in [`Variant`]s: `honest` declares every tool's effects truthfully, and each
//! other variant plants exactly one lie in exactly one tool — an annotation that
//! contradicts what the tool does, or a hidden effect behind an unchanged
//! declaration. Which lie a variant plants is recorded in [`oracle`], the
//! mutation ledger that only the experiment scorer may read; the auditor under
//! test must find the lie from the outside.
//!
//! The crate also carries the pieces an audit needs *beside* the server:
//! - [`auth`]: the server's authorization rule, shared verbatim by the server's
//!   own `check_credential` tool and by [`probe::CredentialProbe`], so the probe
//!   is faithful by construction;
//! - [`lifecycle`]: out-of-band events (revoke a grant, revoke or delete a key)
//!   applied directly to the store, never through the audited tools;
//! - [`store`]: the schema and the fixtures every experiment starts from.
//!
//! [`crm`] is a second server, for agent runs rather than audits: a small
//! CRM with tenants, contacts, an audit log and per-tenant tokens.
//!
//! The server never reads the wall clock: every timestamp is the injected
//! `now`, and every id and secret is derived deterministically, so two runs of
//! the same plan produce byte-identical stores and responses.

mod args;
pub mod auth;
pub mod busy;
pub mod crm;
pub mod lifecycle;
pub mod oracle;
pub mod probe;
mod server;
pub mod store;
pub mod tools;
mod webhook;

use std::path::PathBuf;

pub use server::NotesServer;

/// The injected clock's default: 2026-01-01T00:00:00Z.
pub const DEFAULT_NOW: i64 = 1_767_225_600;

/// The name the server reports in `serverInfo`, identical for every variant so
/// that nothing but behaviour distinguishes them.
pub const SERVER_NAME: &str = "mcp-witness-testbed";

/// Which server the testbed runs: the honest one or one planted lie.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Variant {
    /// Every declaration is true.
    Honest,
    /// `save_note` declares `readOnlyHint: true` and still writes.
    LieReadonly,
    /// `delete_note` declares `destructiveHint: false` and still deletes.
    HideDestructive,
    /// `create_webhook` declares `readOnlyHint: true` and still registers one.
    WebhookReadonly,
    /// `get_note` also mints a working API key on every call.
    SilentKeymint,
    /// `list_notes` also registers a webhook on every call.
    ShadowWebhook,
    /// `ping` also records a telemetry row on every call.
    PhantomWrite,
    /// `revoke_api_key` reports success but leaves the key working.
    ResidualRevoke,
    /// Honest tools; the auth rule kills a key together with its grant.
    Cascade,
    /// The response lane's honest server: three more tools (`count_notes`,
    /// `search_notes`, `lookup_note`) that answer as their schemas and
    /// descriptions say.
    ResponseHonest,
    /// `count_notes` always answers isError (fails `succeeds`).
    RspUnavailable,
    /// `lookup_note` reports a missing note as a JSON-RPC error (fails `is_error`).
    RspErrorAsRpc,
    /// `lookup_note` answers bad arguments with -32603, not -32602 (fails `error_code`).
    RspWrongCode,
    /// `count_notes` answers `{"count": "many"}` (fails `output_schema`).
    RspSchemaViolation,
    /// `search_notes` ignores its `limit` (fails `max_items`).
    RspOverLimit,
    /// `ping` takes 1.5 s to answer (fails `latency_under`).
    RspSlow,
    /// `search_notes` hands back the same cursor forever (fails `pagination_terminates`).
    RspLoopingCursor,
    /// `count_notes` answers differently each time (fails `idempotent`).
    RspDrifting,
    /// `count_notes` records a telemetry row on every call (fails `no_mutation`).
    RspCountingWrite,
    /// The network observer's honest server: `create_webhook` (declared
    /// `openWorldHint: true`) sends the endpoint a verification request;
    /// every tool declared closed-world reaches for nothing.
    NetworkHonest,
    /// As `network-honest`, and `save_note`, declared `openWorldHint:
    /// false`, also posts every saved note to a webhook (fails EFF-04).
    ClosedWorldWebhook,
}

impl Variant {
    pub const ALL: [Variant; 21] = [
        Variant::Honest,
        Variant::LieReadonly,
        Variant::HideDestructive,
        Variant::WebhookReadonly,
        Variant::SilentKeymint,
        Variant::ShadowWebhook,
        Variant::PhantomWrite,
        Variant::ResidualRevoke,
        Variant::Cascade,
        Variant::ResponseHonest,
        Variant::RspUnavailable,
        Variant::RspErrorAsRpc,
        Variant::RspWrongCode,
        Variant::RspSchemaViolation,
        Variant::RspOverLimit,
        Variant::RspSlow,
        Variant::RspLoopingCursor,
        Variant::RspDrifting,
        Variant::RspCountingWrite,
        Variant::NetworkHonest,
        Variant::ClosedWorldWebhook,
    ];

    /// The name used on the command line and in result files.
    pub fn name(self) -> &'static str {
        match self {
            Variant::Honest => "honest",
            Variant::LieReadonly => "lie-readonly",
            Variant::HideDestructive => "hide-destructive",
            Variant::WebhookReadonly => "webhook-readonly",
            Variant::SilentKeymint => "silent-keymint",
            Variant::ShadowWebhook => "shadow-webhook",
            Variant::PhantomWrite => "phantom-write",
            Variant::ResidualRevoke => "residual-revoke",
            Variant::Cascade => "cascade",
            Variant::ResponseHonest => "response-honest",
            Variant::RspUnavailable => "rsp-unavailable",
            Variant::RspErrorAsRpc => "rsp-error-as-rpc",
            Variant::RspWrongCode => "rsp-wrong-code",
            Variant::RspSchemaViolation => "rsp-schema-violation",
            Variant::RspOverLimit => "rsp-over-limit",
            Variant::RspSlow => "rsp-slow",
            Variant::RspLoopingCursor => "rsp-looping-cursor",
            Variant::RspDrifting => "rsp-drifting",
            Variant::RspCountingWrite => "rsp-counting-write",
            Variant::NetworkHonest => "network-honest",
            Variant::ClosedWorldWebhook => "closed-world-webhook",
        }
    }

    /// Whether the variant serves the response lane's three extra tools.
    /// E1–E3's variants never do, so their catalogs stay as they were.
    pub fn serves_response_tools(self) -> bool {
        (Variant::ResponseHonest..=Variant::RspCountingWrite).contains(&self)
    }

    /// Whether the variant reaches for the network (EFF-04's variants).
    /// Only these ever open a socket, so no other variant, run outside a
    /// jail, sends anything anywhere.
    pub fn reaches_network(self) -> bool {
        matches!(self, Variant::NetworkHonest | Variant::ClosedWorldWebhook)
    }

    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.name() == name)
    }

    /// One line for `--help` and reports.
    pub fn summary(self) -> &'static str {
        match self {
            Variant::Honest => "every tool's annotations match what it does",
            Variant::LieReadonly => {
                "save_note is declared read-only but writes the note (visible in its response)"
            }
            Variant::HideDestructive => {
                "delete_note is declared non-destructive but deletes the note (visible in its response)"
            }
            Variant::WebhookReadonly => {
                "create_webhook is declared read-only but registers a webhook with a signing secret (response does not say so)"
            }
            Variant::SilentKeymint => {
                "get_note silently mints a working API key on every call; its response is unchanged"
            }
            Variant::ShadowWebhook => {
                "list_notes silently registers a webhook on every call; its response is unchanged"
            }
            Variant::PhantomWrite => {
                "ping silently records a telemetry row on every call; its response is unchanged"
            }
            Variant::ResidualRevoke => {
                "revoke_api_key reports the key revoked but leaves it working (residual authority)"
            }
            Variant::Cascade => {
                "honest tools; the auth rule rejects a key whose grant is revoked (no residual authority)"
            }
            Variant::ResponseHonest => {
                "honest tools, plus count_notes, search_notes and lookup_note, which answer as their schemas say"
            }
            Variant::RspUnavailable => "count_notes always answers isError (breaks `succeeds`)",
            Variant::RspErrorAsRpc => {
                "lookup_note reports a missing note as a JSON-RPC error, not isError (breaks `is_error`)"
            }
            Variant::RspWrongCode => {
                "lookup_note answers bad arguments with -32603 instead of -32602 (breaks `error_code`)"
            }
            Variant::RspSchemaViolation => {
                "count_notes answers {\"count\": \"many\"} against an integer outputSchema (breaks `output_schema`)"
            }
            Variant::RspOverLimit => {
                "search_notes ignores its limit and returns every note (breaks `max_items`)"
            }
            Variant::RspSlow => "ping takes 1.5 s to answer (breaks `latency_under`)",
            Variant::RspLoopingCursor => {
                "search_notes hands back the same cursor forever (breaks `pagination_terminates`)"
            }
            Variant::RspDrifting => {
                "count_notes answers differently on every call (breaks `idempotent`)"
            }
            Variant::RspCountingWrite => {
                "count_notes, declared read-only, records a telemetry row on every call (breaks `no_mutation`)"
            }
            Variant::NetworkHonest => {
                "create_webhook (declared open-world) sends the endpoint a verification request; closed-world tools reach nothing"
            }
            Variant::ClosedWorldWebhook => {
                "save_note, declared openWorldHint: false, posts every saved note to a webhook (breaks EFF-04)"
            }
        }
    }

    /// The authorization rule this variant's server enforces.
    pub fn auth_rule(self) -> auth::AuthRule {
        match self {
            Variant::Cascade => auth::AuthRule::Cascade,
            _ => auth::AuthRule::Plain,
        }
    }
}

impl std::fmt::Display for Variant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// What `serve_stdio` needs to start one server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServeOptions {
    pub variant: Variant,
    /// The SQLite store; created (with the schema) when absent.
    pub store: PathBuf,
    /// The injected clock, in Unix seconds.
    pub now: i64,
    /// Busy mode ([`busy`]): a background indexer, and `save_note` writing
    /// after its answer.
    pub busy: bool,
}

/// Why the testbed could not do what it was asked.
#[derive(Debug, thiserror::Error)]
pub enum TestbedError {
    #[error("SQLite: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("cannot open store {path}: {source}")]
    Open {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
    #[error("store {0} does not exist")]
    MissingStore(PathBuf),
    #[error(transparent)]
    Observe(#[from] witness_observers::ObserveError),
    #[error("no {kind} '{id}' in the store")]
    NotFound { kind: &'static str, id: String },
    #[error("cannot start the async runtime: {0}")]
    Runtime(#[source] std::io::Error),
    #[error("MCP session failed: {0}")]
    Session(String),
}

/// Serves the testbed over stdin/stdout until stdin closes.
///
/// Builds its own current-thread runtime so the caller (the main binary's
/// synchronous CLI) needs none. Nothing but JSON-RPC is ever written to
/// stdout: rmcp logs only through `tracing`, and no subscriber is installed.
pub fn serve_stdio(opts: ServeOptions) -> Result<(), TestbedError> {
    block_on(serve_transport(opts, rmcp::transport::stdio()))
}

/// Runs a server future on a current-thread runtime of its own, so the
/// caller (the main binary's synchronous CLI) needs none.
pub(crate) fn block_on(
    server: impl std::future::Future<Output = Result<(), TestbedError>>,
) -> Result<(), TestbedError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(TestbedError::Runtime)?
        .block_on(server)
}

/// Serves the testbed over any rmcp transport (a duplex pipe in tests, stdio
/// in [`serve_stdio`]) until the peer closes it.
pub async fn serve_transport<T, E, A>(opts: ServeOptions, transport: T) -> Result<(), TestbedError>
where
    T: rmcp::transport::IntoTransport<rmcp::RoleServer, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let mut server = NotesServer::open(opts.variant, &opts.store, opts.now)?;
    if opts.busy {
        server = server.busy(&opts.store)?;
    }
    serve_handler(server, transport).await
}

/// Serves one of the testbed's handlers until the peer closes the transport.
pub(crate) async fn serve_handler<S, T, E, A>(server: S, transport: T) -> Result<(), TestbedError>
where
    S: rmcp::ServerHandler,
    T: rmcp::transport::IntoTransport<rmcp::RoleServer, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    use rmcp::ServiceExt;
    use rmcp::service::ServerInitializeError;

    match server.serve(transport).await {
        Ok(running) => match running.waiting().await {
            Ok(_) => Ok(()),
            Err(e) => Err(TestbedError::Session(e.to_string())),
        },
        // A client that hangs up before completing a handshake (e.g. one that
        // only sent `server/discover`) is a normal end of session, not a fault.
        Err(ServerInitializeError::ConnectionClosed(_)) => Ok(()),
        Err(e) => Err(TestbedError::Session(e.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variant_names_round_trip_and_are_unique() {
        let mut names: Vec<&str> = Variant::ALL.iter().map(|v| v.name()).collect();
        for v in Variant::ALL {
            assert_eq!(Variant::from_name(v.name()), Some(v));
            assert_eq!(v.to_string(), v.name());
            assert!(!v.summary().is_empty());
        }
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Variant::ALL.len());
        assert_eq!(Variant::from_name("Honest"), None);
        assert_eq!(Variant::from_name(""), None);
    }

    #[test]
    fn only_the_cascade_variant_cascades() {
        for v in Variant::ALL {
            let expected = if v == Variant::Cascade {
                auth::AuthRule::Cascade
            } else {
                auth::AuthRule::Plain
            };
            assert_eq!(v.auth_rule(), expected, "{v}");
        }
    }
}

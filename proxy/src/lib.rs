//! The witness proxy: what a real AI client does to a store.
//!
//! Agent runs evaluate a client mcp-witness drives. This crate watches a
//! client it cannot drive — Claude Desktop, Claude Code, an IDE, a team's
//! own host — by standing where the host expects its MCP server:
//!
//! ```text
//! host ──stdio or HTTP──▶ mcp-witness proxy ──stdio or HTTP──▶ server (jailed)
//!                              │    every message, unchanged
//!                              ├─▶ moments around each tools/call (ObservedSet)
//!                              └─▶ trace: JSON lines, written as it happens
//! ```
//!
//! - [`upstream`]: the server — launched in a jail on copies of its stores
//!   (or, with `--live`, on the stores themselves), or an upstream URL —
//!   and the pump that reads it;
//! - [`witness`]: every message recorded before it is forwarded, the stores
//!   observed around every `tools/call`, effects charged to the calls in
//!   flight (several at once: to each, marked ambiguous);
//! - [`record`]: the trace file (`mcp-witness.proxy-trace/v1`), one line
//!   per entry, redacted with the audits' rules;
//! - [`stdio`] and [`http`]: the host's side, over stdio or Streamable HTTP;
//! - [`check`]: a recorded trace (and the host's conversation) read back
//!   into an agent-run trace and judged by `witness_trace::evaluate`, the
//!   very function agent runs use; [`import`] reads a conversation from a
//!   host's own transcript.
//!
//! Signals are the binary's (`witness_jail::interrupt`): the first
//! SIGTERM, SIGINT or SIGHUP kills the server at once, and the relay, seeing
//! it, takes its last look at the stores, ends the trace and removes the
//! jail.
//!
//! The proxy forwards bytes; it never speaks for the host or the server,
//! so a host sees exactly what the server sent, in both protocol eras.
//!
//! This crate must never depend on rmcp, tokio, clap, minijinja or the
//! testbed: the relay is blocking and thread-based like the wire it reuses,
//! and its HTTP listener is a small one of its own (loopback only).

pub mod check;
pub mod http;
pub mod import;
pub mod message;
pub mod record;
pub mod stdio;
pub mod upstream;
pub mod witness;

/// The trace's end reason when a signal stopped the proxy.
pub fn stopped_by(signal: i32) -> String {
    format!(
        "the proxy received {}",
        witness_jail::interrupt::signal_name(signal)
    )
}

/// What the proxy has to tell whoever started it. It writes to neither
/// stream itself: over stdio, stdout is the host's, and stderr is the
/// binary's to write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Notice {
    /// Before anything is proxied: the server is not jailed (`--live`, `--url`).
    Warning(String),
    /// The HTTP proxy takes hosts at this address.
    Listening(std::net::SocketAddr),
    /// An entry could not be written to the trace; messages are still
    /// forwarded (said once).
    TraceFailed(String),
    /// The trace could not be finished.
    TraceUnfinished(String),
}

/// Where the proxy's notices go, from any of its threads.
pub type Notify = std::sync::Arc<dyn Fn(&Notice) + Send + Sync>;

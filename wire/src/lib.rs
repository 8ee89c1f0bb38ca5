//! The wire: a hand-written JSON-RPC 2.0 client for MCP over a [`Transport`],
//! both protocol eras, sessions and their raw transcripts.
//!
//! Not an SDK client on purpose: an auditor has to see raw frames, tolerate
//! malformed ones, and tell "the server broke" from "we asked wrong".
//!
//! This crate knows nothing of jails, stores, reports or command lines. A
//! process it talks to is launched elsewhere and handed over as a
//! [`connection::Process`]; it must never depend on the engine, clap,
//! rusqlite or minijinja. Of the model it takes one word, the era asked
//! for ([`session::EraChoice`]), which the documents record: the wire and
//! the documents cannot then disagree on what `--era` means.
//!
//! Two transports carry the same [`rpc::RpcClient`]:
//! - [`stdio::StdioTransport`]: newline-delimited JSON-RPC over a child's pipes;
//! - [`http::HttpTransport`]: Streamable HTTP, one POST per message, answered
//!   with JSON or a Server-Sent Events stream.
//!
//! Bounds, all documented in `docs/cli.md`:
//! - a message (a stdout line, a JSON body, the data of one SSE event) is kept
//!   up to [`MAX_LINE_BYTES`]; longer ones are cut there, recorded as an
//!   `oversized-line` finding, and never parsed;
//! - stderr is kept up to [`MAX_STDERR_BYTES`] (the rest is counted);
//! - a session keeps at most [`MAX_FRAMES`] frames (the rest are counted);
//! - a session keeps at most [`MAX_KEPT_BYTES`] of frame text; past it a frame
//!   keeps its `seq`, `dir`, `t_us` and `bytes`, its text becomes a marker
//!   with its blake3 digest, and one `frames-budget-exceeded` finding is
//!   recorded (see [`transcript`]);
//! - a message is read up to [`json::MAX_JSON_DEPTH`] levels of nesting (a
//!   deeper one is a `json-too-deep` finding, and ends the request it
//!   answers at once), and kept up to [`json::KEPT_DEPTH`] levels;
//! - every request has a timeout, and on HTTP every exchange, body included,
//!   ends at that timeout however long the server keeps its stream open.

pub mod auth;
pub mod clock;
pub mod connection;
#[cfg(test)]
mod fake;
pub mod headers;
pub mod http;
pub mod json;
pub mod mrtr;
pub mod rpc;
pub mod session;
pub mod stdio;
pub mod task;
pub mod transcript;

use std::time::Instant;

use serde_json::Value;

/// Longest message read: 8 MiB (a stdout line, an HTTP JSON body, one SSE event's data).
pub const MAX_LINE_BYTES: usize = 8 * 1024 * 1024;
/// Server stderr kept per process: 64 KiB.
pub const MAX_STDERR_BYTES: usize = 64 * 1024;
/// Frames kept per process.
pub const MAX_FRAMES: usize = 20_000;
/// Frame text kept per process: 64 MiB (20,000 frames of 8 MiB would be 160 GiB).
pub const MAX_KEPT_BYTES: usize = 64 * 1024 * 1024;

/// A message from the server, or news about the connection.
#[derive(Debug)]
pub enum Incoming {
    /// One message as it arrived: a stdout line, an HTTP JSON body, or the
    /// data of one SSE event.
    Line {
        bytes: Vec<u8>,
        /// Total length of the message as sent, when it was longer than the bound.
        cut_from: Option<u64>,
        t_us: u64,
    },
    /// The connection is gone for good (stdout closed).
    Closed { t_us: u64, detail: String },
    /// One HTTP exchange failed. When it carried a client request (`request`),
    /// that request will get no answer; `detail` is a fixed description, never
    /// the server's text.
    Failed {
        request: Option<i64>,
        detail: String,
        t_us: u64,
    },
}

/// What the server wrote on stderr, bounded (empty for an HTTP endpoint).
#[derive(Clone, Debug, Default)]
pub struct StderrCapture {
    pub kept: Vec<u8>,
    pub total: u64,
}

/// How messages reach a server and come back.
pub trait Transport: Send {
    /// `stdio` or `http`.
    fn kind(&self) -> &'static str;

    /// Microseconds since the session started, for frame stamps.
    fn now_us(&self) -> u64;

    /// Sends one JSON-RPC message; `text` is its serialization, as recorded.
    fn send(&mut self, message: &Value, text: &str) -> std::io::Result<()>;

    /// Waits for the next incoming message until `deadline`. `None` means the
    /// deadline passed.
    fn recv_until(&mut self, deadline: Instant) -> Option<Incoming>;

    /// Takes whatever is already queued without waiting.
    fn try_recv(&mut self) -> Option<Incoming>;

    /// The protocol version the handshake settled on (HTTP mirrors it in a header).
    fn negotiated(&mut self, _protocol_version: &str) {}

    /// The parameters of `tool` that its calls mirror into `Mcp-Param-*`
    /// headers (SEP-2243; HTTP only), as the session read them from the
    /// catalog.
    fn tool_headers(&mut self, _tool: &str, _declared: Vec<headers::ParamHeader>) {}

    /// Ends the conversation politely: stdin closed, or the HTTP session deleted.
    fn close(&mut self);

    /// What the server wrote on stderr (stdio only).
    fn stderr(&self) -> StderrCapture {
        StderrCapture::default()
    }

    /// A handle that sends to the server from another thread while this
    /// transport is read, for a relay that forwards both ways at once (the
    /// witness proxy). `None` when the transport cannot give one. A stdio
    /// server's stdin stays open while any handle lives.
    fn outbox(&self) -> Option<Box<dyn Outbox>> {
        None
    }
}

/// Sends messages to a server independently of the thread reading it.
pub trait Outbox: Send {
    /// Sends one JSON-RPC message exactly as `text` spells it (one line on
    /// stdio, one POST over HTTP).
    fn send(&self, message: &Value, text: &str) -> std::io::Result<()>;

    /// The protocol version a handshake settled on (HTTP mirrors it in a
    /// header on later POSTs).
    fn negotiated(&self, _protocol_version: &str) {}

    /// What [`Transport::tool_headers`] says, for messages sent through
    /// this handle (a relay learns it from the catalog it forwards).
    fn tool_headers(&self, _tool: &str, _declared: Vec<headers::ParamHeader>) {}
}

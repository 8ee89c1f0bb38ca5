//! What the witness proxy records, and what `trace check` reads and writes.
//!
//! - [`TraceEntry`]: one line of a proxy trace (`mcp-witness.proxy-trace/v1`,
//!   JSON lines). The proxy writes a line per message that crosses it, in
//!   either direction, and a line per effect it observes in the stores, as
//!   each happens: a crash loses at most the line being written. The first
//!   line is the [`TraceHeader`]; a clean stop writes an [`EndEntry`] last.
//! - [`ConversationLine`]: one line of a conversation file
//!   (`mcp-witness.conversation/v1`, JSON lines): the user's turns and the
//!   assistant's replies, with the tool calls each reply made, in order.
//!   The proxy sees calls, not chat; a conversation recorded by the host
//!   (or imported from its transcript) supplies the rest.
//! - [`TraceCheckDocument`]: the verdicts of `mcp-witness trace check`
//!   (`mcp-witness.trace-check/v1`), drawn by the same code as an agent
//!   run's from the trace assembled out of those lines.
//!
//! The format is documented in `docs/proxy.md`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::agent::case::FactsSpec;
use crate::agent::trace::{RowFacts, Trace};
use crate::agent::{CheckVerdict, RunStatus};
use crate::audit::Effect;
use crate::vocab::{RunOutcome, TurnEnd};

/// The versioned id of a proxy trace (carried by its header line).
pub const PROXY_TRACE_SCHEMA: &str = "mcp-witness.proxy-trace/v1";
/// The versioned id of a conversation file (an optional first line).
pub const CONVERSATION_SCHEMA: &str = "mcp-witness.conversation/v1";
/// The versioned id of a trace check document.
pub const TRACE_CHECK_SCHEMA: &str = "mcp-witness.trace-check/v1";

/// One line of a proxy trace.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum TraceEntry {
    Header(TraceHeader),
    Message(MessageEntry),
    Effect(EffectEntry),
    OriginalWrite(OriginalWriteEntry),
    Warning(WarningEntry),
    End(EndEntry),
}

/// The first line: what was proxied, and how it was observed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TraceHeader {
    /// `mcp-witness.proxy-trace/v1`.
    pub schema: String,
    pub generator: String,
    /// When the proxy started, in milliseconds since the Unix epoch; every
    /// line's `t_us` counts from here.
    pub started_unix_ms: u64,
    /// How the host reached the proxy: `stdio` or `http`.
    pub host_transport: String,
    pub server: ProxiedServer,
    /// The server ran on the live stores (`--live`), not on copies.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub live: bool,
    /// How the server was isolated, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub isolation: Option<String>,
    /// The stores observed (the jail-wide observer is `jail`).
    pub stores: Vec<TracedStore>,
    /// The row facts read for every changed row.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub facts: Vec<FactsSpec>,
    /// Wait after a call's answer before its post-call snapshot.
    pub settle_ms: u64,
}

/// The server behind the proxy.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ProxiedServer {
    /// The launched command (empty for an upstream URL, which is never
    /// recorded: it may carry a token).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub command: Vec<String>,
    /// `stdio` (a launched process) or `http` (an upstream URL).
    pub transport: String,
    /// Names of the variables passed with `--env` (values are never kept).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<String>,
}

/// One observed store.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TracedStore {
    pub name: String,
    pub kind: String,
}

/// Who sent a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Party {
    /// The AI client's host (Claude Desktop, an IDE, ...).
    Host,
    /// The MCP server behind the proxy.
    Server,
}

/// One message, as it crossed the proxy (redacted).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MessageEntry {
    /// 1-based over the trace's lines after the header.
    pub seq: u64,
    /// Microseconds since the proxy started.
    pub t_us: u64,
    pub from: Party,
    /// The HTTP session it belongs to (1-based), over HTTP only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<u32>,
    /// The `tools/call` it is (a request) or answers (a response): 1-based,
    /// in the order the host sent them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<u32>,
    /// Bytes of the message as sent.
    pub bytes: u64,
    /// The message, when it was JSON and not longer than the bound kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<Value>,
    /// Otherwise its text, cut at the bound kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

/// When an effect was seen, relative to the calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum EffectPhase {
    /// Before the first call (the server starting).
    Startup,
    /// While the calls named were in flight.
    Call,
    /// After the calls named had been answered, before the next call.
    Late,
    /// While the server shut down.
    Shutdown,
}

/// One change observed in a store, and the calls it is charged to.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EffectEntry {
    pub seq: u64,
    pub t_us: u64,
    pub phase: EffectPhase,
    /// The calls in flight while it happened (for `late`: those in flight
    /// last). Empty for startup and shutdown.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<u32>,
    /// More than one call was in flight, or the changed object is one the
    /// server also changes with no call in flight (its background): the
    /// change is charged to every call in flight, and to none in particular.
    /// The proxy cannot repeat a client's call to tell.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ambiguous: bool,
    pub effect: Effect,
    /// The declared facts of the changed row, when the row has some.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub row: Option<RowFacts>,
}

/// A write the server attempted on a store's original (the user's file or
/// directory, which the sandbox hides): it landed in the decoy in the
/// original's place, and is charged as an effect of the same moment is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct OriginalWriteEntry {
    pub seq: u64,
    pub t_us: u64,
    pub phase: EffectPhase,
    /// The calls in flight while it happened (for `late`: those in flight
    /// last). Empty for startup and shutdown.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<u32>,
    /// The original's path, as the trace names the store's source; never
    /// where the decoy that took the write lives.
    pub path: String,
}

/// Something the observers or the proxy warn about.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct WarningEntry {
    pub seq: u64,
    pub t_us: u64,
    pub detail: String,
}

/// The last line of a trace whose proxy stopped in order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct EndEntry {
    pub seq: u64,
    pub t_us: u64,
    /// Why the proxy stopped: the host closed its side, a signal, the
    /// server exited, the stores could not be observed.
    pub reason: String,
    /// `tools/call` requests seen.
    pub calls: u32,
    /// Calls never answered when the proxy stopped.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unanswered: Vec<u32>,
}

/// Who speaks a conversation line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
}

/// One line of a conversation file: a user turn, or one assistant reply
/// with the tool calls it made (those through the proxy, in order).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConversationLine {
    pub role: Role,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The calls this reply made, in order (assistant lines only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<ConversationCall>,
    /// How the turn ended, when it did not end in a text answer (assistant
    /// lines only): `refused`, `empty`, `truncated`, `error`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<TurnEnd>,
}

/// A tool call a reply made, as the host recorded it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConversationCall {
    /// The tool's name as the server lists it.
    pub tool: String,
    /// The arguments, when the host recorded them: they must equal what
    /// the proxy saw.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Value>,
}

/// The verdicts of one recorded trace (`mcp-witness trace check`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TraceCheckDocument {
    pub schema: String,
    pub generator: String,
    pub source: CheckedTrace,
    /// The golden case the trace was held to, when one was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub case: Option<CheckedCase>,
    /// Where the conversation came from, when one was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation: Option<CheckedConversation>,
    pub outcome: RunOutcome,
    pub status: RunStatus,
    /// One verdict per agent check, in catalog order.
    pub verdicts: Vec<CheckVerdict>,
    /// Effects observed while calls overlapped, charged to each of them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ambiguous: Vec<AmbiguousEffects>,
    /// The trace the verdicts were drawn from, as the checks read it.
    pub trace: Trace,
    /// 0 passed, 1 a check failed, 3 the trace cannot conclude.
    pub exit_code: i64,
}

/// The trace file as read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CheckedTrace {
    /// The file's name (never its directory).
    pub file: String,
    pub lines: u64,
    /// The header's `host_transport` and server transport.
    pub host_transport: String,
    pub server_transport: String,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub live: bool,
    /// The end line's reason; absent when the proxy never wrote one (it
    /// was killed, or is still running).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended: Option<String>,
    /// A last line cut short by a crash, skipped.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub torn_last_line: bool,
}

/// The case a trace was held to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CheckedCase {
    pub id: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub title: String,
    pub budget: u32,
}

/// The conversation a trace was read with.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CheckedConversation {
    pub file: String,
    /// `mcp-witness.conversation/v1`, or the host transcript it was
    /// imported from (`claude-code`).
    pub format: String,
    pub turns: u32,
}

/// Effects seen while several calls were in flight.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AmbiguousEffects {
    pub calls: Vec<u32>,
    /// `store:object op`.
    pub effects: Vec<String>,
}

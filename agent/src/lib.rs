//! Agent runs: a model-driven MCP client against a server in its jail,
//! judged from the trace and the store.
//!
//! ```text
//! golden cases ─▶ seed ─▶ jail + observed set ─▶ client loop ◀─▶ driver (model)
//!                                  │                  │
//!                                  └── effects, rows ─┴─▶ trace ─▶ witness-trace verdicts
//!                                                              └─▶ judge (fails open) ─▶ run document
//! ```
//!
//! - [`case`]: golden cases read from TOML, with their seed SQL;
//! - [`tools`]: the tool definitions handed to the model, a separate input
//!   of the run with its fingerprint (annotations forwarded or not);
//! - [`driver`]: one trait over the models — scripted replies, an
//!   OpenAI-compatible Chat Completions endpoint, an Anthropic Messages
//!   endpoint, and the replay of a recorded run;
//! - [`client`]: the loop any MCP host runs, over a [`client::ToolRunner`];
//! - [`runner`]: that runner for a server launched in a jail, its stores
//!   observed around every call as an audit observes them
//!   (`witness_jail::observe`), the declared row facts read by the SQLite
//!   observers at the same moments;
//! - [`judge`]: the answer-correctness judge, batched, failing open;
//! - [`suite`]: every case for every model, `--runs` times, into one
//!   `mcp-witness.agent-run/v1` document with pass rates and the gate;
//! - [`compare`]: two such documents of the same cases, per case and
//!   overall, each delta held to the noise floor reruns alone produce
//!   (`mcp-witness.agent-compare/v1`).
//!
//! The model never decides a verdict: [`witness_trace`] derives them from
//! the trace. Keys come from the environment, travel only in request
//! headers, and are scrubbed from anything an endpoint sends back.
//!
//! This crate must never depend on rmcp, tokio, clap, minijinja or the
//! testbed: it drives servers through the wire, like any other client.

pub mod case;
pub mod client;
pub mod compare;
pub mod driver;
pub mod judge;
pub mod runner;
pub mod seed;
pub mod suite;
pub mod tools;

/// The system prompt every conversation starts with: neutral, so a run
/// measures the model and the server's own descriptions.
pub const SYSTEM_PROMPT: &str = "You are an assistant acting for the user through the tools you are given. \
Use them to do what the user asks, and answer in plain text when you are done.";

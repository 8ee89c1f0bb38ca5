//! The engine: everything between a target and its report.
//!
//! ```text
//! target ─▶ jail ─▶ session (witness-wire) ─▶ plan ─▶ audit stages ─▶ checks ─▶ report model
//! ```
//!
//! - [`jail`]: a throwaway copy of the target's world, and the launched
//!   server handed to the wire as a process;
//! - [`plan`]: which tools to call with which arguments — plan files, the
//!   planner, harvest of real values and schema-driven synthesis;
//! - [`audit`]: the audit as named stages (prepare, observe, execute,
//!   assemble), each a step with its own inputs;
//! - [`checks`]: the checks of both lanes (EFF and RSP) as one registry,
//!   the one place a check is defined;
//! - [`metadata`]: metadata findings, what a tool's own metadata says that
//!   may mislead (never a verdict);
//! - [`redact`]: secrets replaced by digests before anything is written;
//! - [`manifest`] and [`guidance`]: the other two things mcp-witness does
//!   with a server's surface (pins and drift; instruction coherence).
//!
//! The engine writes documents of `witness-model` and renders nothing. It
//! must never depend on clap, minijinja, the testbed, rmcp or tokio.

pub mod audit;
pub mod checks;
pub mod guidance;
pub mod interrupt;
pub mod jail;
pub mod manifest;
pub mod metadata;
pub mod plan;
pub mod progress;
pub mod redact;

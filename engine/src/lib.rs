//! The engine: everything between a target and its audit report.
//!
//! ```text
//! target ─▶ jail (witness-jail) ─▶ session (witness-wire) ─▶ plan ─▶ audit stages ─▶ checks ─▶ report model
//! ```
//!
//! - [`plan`]: which tools to call with which arguments — plan files, the
//!   planner, harvest of real values and schema-driven synthesis;
//! - [`audit`]: the audit as named stages (prepare, execute, assemble),
//!   each a step with its own inputs;
//! - [`checks`]: the checks of both lanes (EFF and RSP) as one registry,
//!   the one place a check is defined;
//! - [`metadata`]: metadata findings, what a tool's own metadata says that
//!   may mislead (never a verdict);
//! - [`progress`]: how far an audit is, told to the caller's callback;
//! - [`suggest`]: from a finished audit, the annotations each tool's observed
//!   behaviour supports (beside the checks, whose verdicts it rests on).
//!
//! The jail the server runs in, the observers around it and redaction are
//! `witness-jail`'s; the engine writes documents of `witness-model` and
//! renders nothing. It must never depend on clap, minijinja, the testbed,
//! rmcp or tokio.

pub mod audit;
pub mod checks;
pub mod metadata;
pub mod plan;
pub mod progress;
pub mod suggest;

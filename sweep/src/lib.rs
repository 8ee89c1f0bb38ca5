//! Sweeps: many MCP servers audited by one `SWEEP.toml`, into one dataset.
//!
//! The prevalence question — across the servers people install, how often do
//! declared annotations hold? — needs hundreds of audits, more than one
//! session and eventually more than one machine. A sweep is one plain
//! process that any engine able to start N copies with an index can run:
//!
//! ```text
//! SWEEP.toml ─▶ spec ─▶ shard ─▶ run ──────────────┬─▶ dataset ─▶ sweep.json
//!               keys    I/N      per target:       │             dataset.jsonl
//!                                install (npm/pip) │             dataset.csv
//!                                worker process:   │
//!                                  engine audit    │   merge: shard dirs ─▶ one
//!                                result.json       ┘
//! ```
//!
//! - [`spec`] reads the sweep file: targets as package coordinates
//!   (`npm:@scope/name@1.2.3`, `pypi:name==1.2.3`) or commands, each with
//!   its launch, stores (fresh from fixtures), plan (or the planner) and
//!   options; every mistake is a one-line [`SweepError`] and nothing runs.
//! - [`key`]: a target's key is derived from its whole definition, plan,
//!   fixture and lock contents included, so a result answers for exactly
//!   the definition that made it, on any machine.
//! - [`shard`]: a deterministic slice `I/N` from `--shard` or the index
//!   variables of Kubernetes Indexed Jobs, Slurm arrays and CI matrices.
//! - [`install`]: each package in its own content-addressed directory, with
//!   the ordinary clients (npm, pip in a venv), locked against a second
//!   process installing the same thing.
//! - [`mod@run`]: `--jobs` targets at once, each audited by a worker process
//!   ([`worker`]) through the engine's public audit API only, bounded in
//!   time, retried while incomplete up to a limit, resumable after a kill.
//! - [`dataset`]: one row per target × tool × check, JSON lines and CSV, and
//!   `sweep.json`; [`merge`] combines shard directories into the same.
//! - [`progress`]: what happens to each target, told to the caller as it
//!   happens (the binary draws it).
//!
//! Install failures, servers that never start and audits past their time
//! are rows with their reason, never a stopped sweep.
//!
//! This crate must never depend on clap, minijinja or the pages (the binary
//! renders the prevalence page and the evidence pages from what this crate
//! writes), nor on the testbed directly: a sweep audits servers only
//! through `witness_engine::audit`.

pub mod dataset;
pub mod install;
pub mod key;
pub mod layout;
pub mod merge;
pub mod package;
mod process;
pub mod progress;
pub mod run;
pub mod server_json;
pub mod shard;
pub mod spec;
#[cfg(test)]
mod testing;
pub mod worker;

use std::path::PathBuf;

pub use run::{RunOptions, RunOutcome, run};
pub use shard::Shard;
pub use spec::{Sweep, Target};

/// Why a sweep could not start, or could not be written.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    /// The sweep file is not valid TOML or not a sweep (`FILE:LINE:COL: ...`).
    #[error("{path}:{line}:{column}: {message}")]
    Syntax {
        path: String,
        line: usize,
        column: usize,
        message: String,
    },
    /// The sweep file parses but says something that cannot be run.
    #[error("{path}: {message}")]
    Invalid { path: String, message: String },
    /// A bad `--shard`, or index variables that do not make a shard.
    #[error("{0}")]
    Shard(String),
    /// Inputs of `sweep merge` that cannot be merged.
    #[error("{0}")]
    Merge(String),
    /// Another sweep is writing the output directory.
    #[error("{0}: another sweep is writing this directory")]
    Busy(PathBuf),
    /// The output directory cannot be used (refused before anything ran).
    #[error("{path}: {message}")]
    Output { path: PathBuf, message: String },
    /// Reading or writing failed while the sweep ran.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl SweepError {
    /// Whether this is an invalid invocation (exit 2: refused before any
    /// target was touched) rather than a sweep that could not finish.
    pub fn is_invalid(&self) -> bool {
        !matches!(self, SweepError::Io { .. })
    }

    pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> SweepError {
        let path = path.into();
        move |source| SweepError::Io { path, source }
    }
}

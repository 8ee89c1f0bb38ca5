//! Case studies: the instrument on published servers we did not build.
//!
//! Three servers from the npm registry, at exactly the versions pinned in
//! `experiments/cases/package.json`, and one from PyPI, pinned in
//! `experiments/cases/install.sh`, each audited against a throwaway copy of
//! its own kind of store with a plan from `experiments/cases/plans/`:
//!
//! | case | package | store | observer |
//! |---|---|---|---|
//! | `memory` | `@modelcontextprotocol/server-memory@2026.8.31` | JSONL file at `MEMORY_FILE_PATH` | `jsonl` (entities, relations) |
//! | `filesystem` | `@modelcontextprotocol/server-filesystem@2026.8.31` | a directory tree, its argument | `fs` (files, directories) |
//! | `sqlite` | `@executeautomation/database-server@1.1.0` | a SQLite file, its argument | `sqlite` (rows, schema) |
//! | `git` | `mcp-server-git==2026.10.19` | a git repository, `--repository` | `git` (refs, index, worktree) |
//!
//! Each case writes `case-<name>.json` (`mcp-witness.case/v1`: the server's
//! own annotations summarised, what was observed, the verdicts and notes
//! generated from the observations) and the full audit beside it in
//! `audits/case-<name>.json`. Nothing in a case file is written by hand: every
//! count and every note is computed from the audit.
//!
//! The packages are installed by `experiments/cases/install.sh`; when they
//! are missing, [`run_cases`] says how to install them and runs nothing.
//!
//! By job: [`table`] says which servers and how each is audited, [`install`]
//! finds the packages, [`run`] audits and writes (by the engine's rules for
//! a byte-stable audit, `witness_engine::audit::stable`: machine paths as
//! placeholders, the times a server answers with as `{clock}`), [`summary`]
//! and [`notes`] turn an audit into the case document.

pub mod install;
pub mod notes;
pub mod run;
pub mod summary;
pub mod table;

use std::path::PathBuf;

use witness_model::case::CaseReport;

pub use install::{
    CASES_DIR, CASES_DIR_ENV, absolute_dir, cases_dir, check_installed, install_command, installed,
    shell_word, source_cases_dir,
};
pub use notes::notes;
pub use run::{run_cases, run_cases_in};
pub use summary::summarize;
pub use table::{CASES, CaseSpec};

/// Why the case studies could not run.
#[derive(Debug, thiserror::Error)]
pub enum CasesError {
    #[error(
        "the case-study servers are not installed in {dir}: {problem}.\n\
         Install them there (Node 20+ and npm needed) with:\n    {command}\n\
         or point --cases-dir or {CASES_DIR_ENV} at a directory where they are installed."
    )]
    NotInstalled {
        dir: PathBuf,
        /// A command that installs the pinned packages into `dir`.
        command: String,
        problem: String,
    },
    #[error("case {case}: {message}")]
    Case { case: String, message: String },
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// The outcome of all cases: their summaries and the exit code they add up to.
#[derive(Clone, Debug)]
pub struct CasesOutcome {
    pub cases: Vec<CaseReport>,
    /// Failed when a check failed in any case (evidence outranks a case that
    /// could not conclude); else incomplete when a case could not conclude.
    pub status: witness_model::exit::ExitStatus,
}

//! The wild experiment: the planner, and the lies it should catch, on
//! published local-state servers the project had never studied.
//!
//! Each pinned server — four from npm, four from PyPI, installed by
//! `experiments/wild/install.sh DIR` into a cache directory — is audited
//! with **no plan file** on a small realistic store made for it ([`seed`]),
//! once honest and once per lie of its row in [`table`]. Every audit runs
//! the server behind `experiments/wild/relay.py`, which passes every byte
//! through but, in a lie's audit, rewrites the `tools/list` answer to give
//! one tool annotations that lie (as E1's variants do): `readOnlyHint:
//! true` on a creator, `destructiveHint: false` on a deleter or overwriter.
//!
//! It writes `wild.json` (`mcp-witness.wild/v1`): per server, tools
//! exercised out of listed, why each other tool was left, every failing
//! check no planted lie explains (a false failure), and each lie caught or
//! not. It holds no times, paths or server text, so a rerun writes it byte
//! for byte; the audits themselves go under `audits/wild-*.json`.

pub mod install;
pub mod run;
pub mod seed;
pub mod table;

use std::path::PathBuf;

pub use install::{check_installed, install_command, wild_dir};
pub use run::{WildOutcome, run_wild_in};
pub use table::{SERVERS, WildSpec};

/// The file the experiment writes in the results directory.
pub const DOCUMENT: &str = "wild.json";

/// The prefix of its audits' names under `audits/`.
pub const AUDIT_PREFIX: &str = "wild-";

/// The environment variable naming the install cache.
pub const WILD_DIR_ENV: &str = "MCP_WITNESS_WILD_DIR";

/// Why the experiment could not run.
#[derive(Debug, thiserror::Error)]
pub enum WildError {
    #[error(
        "the wild experiment's servers are not installed in {dir}: {problem}.\n\
         Install them there (Node 20+, npm, Python 3.10+, a C++ compiler) with:\n    {command}\n\
         or point --wild-dir or {WILD_DIR_ENV} at a directory where they are installed."
    )]
    NotInstalled {
        dir: PathBuf,
        command: String,
        problem: String,
    },
    #[error("wild {server}: {message}")]
    Server { server: String, message: String },
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

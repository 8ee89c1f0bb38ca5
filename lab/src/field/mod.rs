//! The field study (issue 39): how often published MCP servers'
//! annotations hold, on the servers `experiments/field` selected.
//!
//! Each server is read as a registry entry (`server.json`, resolved as
//! `audit --server-json` resolves it) plus the witness's side
//! (`witness.toml`: stores, run command, install constraints, seed), its
//! package taken from the selection's cache (installed there on first use),
//! and audited with **no plan file** on a fresh realistic store ([`store`]):
//! once honest, then once per lie the ground truth (`truth/<id>.toml`, read
//! from the package's source) calls for ([`lies`]), each planted by
//! `experiments/wild/relay.py` in the `tools/list` answer. [`tally`] reads
//! every verdict against the truth.
//!
//! It writes `field.json` (`mcp-witness.field/v1`), the dataset as
//! `field.jsonl` and `field.csv` (one row per server × tool × hint), and
//! every audit as `audits/field-<id>[-<tool>-<lie>].json`; nothing timed,
//! machine paths as placeholders, so a rerun writes the same bytes when the
//! servers behave the same.

pub mod documents;
pub mod entry;
pub mod install;
pub mod lies;
pub mod run;
pub mod store;
pub mod tally;

use std::path::PathBuf;

pub use entry::{FieldEntry, Half, Split};
pub use install::{field_cache, source_dir};
pub use run::{FieldOptions, FieldOutcome, merge_field, run_field};

/// The document the study writes in its output directory.
pub const DOCUMENT: &str = "field.json";
/// The dataset, one row per server × tool × hint.
pub const JSONL: &str = "field.jsonl";
pub const CSV: &str = "field.csv";

/// The prefix of its audits' names under `audits/`.
pub const AUDIT_PREFIX: &str = "field-";

/// The environment variable naming the install cache.
pub const FIELD_DIR_ENV: &str = "MCP_WITNESS_FIELD_DIR";

/// Why the study could not run.
#[derive(Debug, thiserror::Error)]
pub enum FieldError {
    /// Its inputs are wrong or missing (exit 2).
    #[error("{0}")]
    Invalid(String),
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

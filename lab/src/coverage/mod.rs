//! The coverage experiment: the planner on servers the lab has never seen.
//!
//! Each pinned published server — four from npm, two from PyPI — is audited
//! with **no plan file**, as a new user would, on a small realistic store
//! the experiment makes for it ([`seed`]), in a network-isolated jail with
//! every tool allowed (the store is a copy). What it measures, per server,
//! from the audit alone: tools exercised with a successful call out of the
//! tools listed, on what kind of values, why the others were not, every
//! failing effect check and whether it is the server's real behaviour (the
//! only judgement written by hand, in [`table`], each with where
//! `docs/coverage.md` shows it), restarts, and whether the audit concluded.
//!
//! It writes `coverage.json` (`mcp-witness.coverage/v1`) and every audit as
//! `audits/coverage-<name>.json`. A rerun writes the same numbers but not
//! the same bytes (commit ids, the environment server-everything echoes,
//! the times servers answer with), so `lab all` does not rerun it: the
//! committed documents are carried over and rendered, and
//! `tests/lab_coverage.rs` reruns the experiment and holds its numbers to
//! the committed ones.

pub mod install;
pub mod run;
pub mod seed;
pub mod table;

pub use install::check_installed;
pub use run::{CoverageOutcome, run_coverage_in};
pub use table::{SERVERS, ServerSpec};

/// The file the experiment writes in the results directory.
pub const DOCUMENT: &str = "coverage.json";

/// The prefix of its audits' names under `audits/`.
pub const AUDIT_PREFIX: &str = "coverage-";

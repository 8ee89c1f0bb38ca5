//! End-to-end runs of the binary that need nothing but the repository:
//! the built-in testbed, the fake servers in tests/fixtures (python3), git.
//! One test binary for all of them: each used to link the whole workspace
//! on its own.

#[path = "../common/mod.rs"]
mod common;

mod agent_compare;
mod agent_drivers;
mod agent_runs;
mod annotation_lies;
mod audit_testbed;
mod background;
mod bad_out;
mod ci_packaging;
mod clean_exit;
mod cli;
mod doc_store;
mod exercise;
mod field_slice;
mod git_store;
mod guidance;
mod jsonl_audit;
mod lab;
mod late_write;
mod manifest;
mod metadata_findings;
mod package_line;
mod pages;
mod patterns;
mod planner;
mod protected;
mod proxy;
mod reproduction;
mod response_lane;
mod schemas;
mod server_json;
mod suggest;
mod sweep;
mod weaker_results;
mod wire_fakes;

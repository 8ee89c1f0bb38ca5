//! The documents mcp-witness writes, and the words they are written in.
//!
//! Every versioned document lives here as typed structs that serialize to
//! exactly the published JSON: the audit ([`audit`], `mcp-witness.audit/v1`),
//! the plan ([`plan`]), a case study ([`case`]), the experiments
//! ([`experiments`], E1–E3; [`coverage`], the planner on published
//! servers), manifest pins and their drift ([`manifest`]),
//! the guidance report ([`guidance`]), the agent run ([`agent`],
//! `mcp-witness.agent-run/v1`, with its golden cases and traces), what the
//! witness proxy records and `trace check` judges ([`proxy`]), and the
//! sweep documents ([`sweep`]: a target's result, the dataset's rows, the
//! sweep and its prevalence tables). [`schema`] names them all and gives
//! their JSON Schemas; [`exit`] is the one rule for the exit code every
//! command returns and some documents record. [`vocab`] holds the words
//! they share: operations, probe statuses, verdicts, tool classes, the
//! annotations with the specification's defaults, the check catalogs (EFF
//! checks and agent checks) and finding kinds. [`measure`] is the one rule
//! for comparing two documents by what they measure, the fields that vary
//! with timing left out.
//!
//! Everything that reads a result — checks, detectors, pages, the lab —
//! reads these types and nothing else. This crate must never depend on the
//! engine, the wire, a renderer or anything that runs a server: it is the
//! vocabulary the others share.

pub mod agent;
pub mod answer;
pub mod audit;
pub mod case;
pub mod coverage;
pub mod exit;
pub mod experiments;
pub mod field;
pub mod guidance;
pub mod manifest;
pub mod measure;
pub mod plan;
pub mod proxy;
pub mod schema;
pub mod sweep;
pub mod vocab;
pub mod wild;

/// What every document names as its writer (its `generator`): this
/// program at this version. Every crate of the workspace has the one
/// workspace version, so the model's is the program's.
pub const GENERATOR: &str = concat!("mcp-witness ", env!("CARGO_PKG_VERSION"));

//! mcp-witness: an effect-aware conformance lab for MCP servers.
//!
//! A server declares what its tools do (`readOnlyHint`, `destructiveHint`,
//! `idempotentHint`, ...). mcp-witness runs the server in a [`jail`] against a
//! throwaway copy of its store, talks to it over a hand-written [`wire`]
//! client, observes the store out of band around every call ([`audit`]), and
//! holds the declarations to what happened ([`checks`]). The result is the
//! versioned document of [`model`]. [`manifest`] pins the tool catalog itself
//! and classifies drift between two pins.
//!
//! The binary (`src/main.rs`) is a thin command-line layer over this library.

pub mod audit;
pub mod checks;
pub mod guidance;
pub mod harvest;
pub mod jail;
pub mod lab;
pub mod manifest;
pub mod model;
pub mod pages;
pub mod plan;
pub mod redact;
pub mod render;
pub mod synth;
pub mod text;
pub mod wire;

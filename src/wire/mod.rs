//! The wire: a hand-written JSON-RPC 2.0 client over a server's stdio.
//!
//! Not an SDK client on purpose: an auditor has to see raw frames, tolerate
//! malformed ones, and tell "the server broke" from "we asked wrong".
//!
//! Bounds, all documented in `docs/cli.md`:
//! - a line on stdout is kept up to [`MAX_LINE_BYTES`]; longer lines are cut
//!   there, recorded as an `oversized-line` finding, and never parsed;
//! - stderr is kept up to [`MAX_STDERR_BYTES`] (the rest is counted);
//! - a session keeps at most [`MAX_FRAMES`] frames (the rest are counted);
//! - every request has a timeout.

pub mod clock;
pub mod rpc;
pub mod session;
pub mod stdio;
pub mod transcript;

/// Longest stdout line read as a message: 8 MiB.
pub const MAX_LINE_BYTES: usize = 8 * 1024 * 1024;
/// Server stderr kept per process: 64 KiB.
pub const MAX_STDERR_BYTES: usize = 64 * 1024;
/// Frames kept per process.
pub const MAX_FRAMES: usize = 20_000;

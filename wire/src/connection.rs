//! One conversation with one server: the JSON-RPC client, and — when the
//! server is a process someone launched for us — a handle to stop it.
//!
//! The wire never starts a process. Whoever launches one (the engine's jail)
//! hands it over as a [`Process`] together with its pipes, so this crate
//! stays free of sandboxing, stores and signals.

use std::process::ExitStatus;

use crate::rpc::RpcClient;

/// A launched server process, as the wire needs to see it.
pub trait Process: Send {
    /// Stops the process and everything it started, politely first (its
    /// stdin is already closed when this is called), and returns how it
    /// ended when that is known.
    fn stop(&mut self) -> Option<ExitStatus>;

    /// The exit status, if the process has already ended; never waits.
    fn exited(&mut self) -> Option<ExitStatus>;
}

/// A server connection: a launched process (stdio) or an endpoint (HTTP).
pub struct Connection {
    pub rpc: RpcClient,
    process: Option<Box<dyn Process>>,
    status: Option<ExitStatus>,
    stopped: bool,
}

impl Connection {
    /// A connection to a server we did not launch (an HTTP endpoint).
    pub fn remote(rpc: RpcClient) -> Self {
        Self {
            rpc,
            process: None,
            status: None,
            stopped: false,
        }
    }

    /// A connection to a process someone launched and handed over.
    pub fn launched(rpc: RpcClient, process: Box<dyn Process>) -> Self {
        Self {
            rpc,
            process: Some(process),
            status: None,
            stopped: false,
        }
    }

    /// Whether this is a process of ours (stdio) rather than an endpoint.
    pub fn is_local(&self) -> bool {
        self.process.is_some()
    }

    /// Ends the conversation: whatever is queued is read, the transport is
    /// closed (stdin closed, or the HTTP session deleted), then the process
    /// is stopped. Idempotent.
    pub fn shutdown(&mut self) -> Option<ExitStatus> {
        if self.stopped {
            return self.status;
        }
        self.stopped = true;
        self.rpc.drain();
        self.rpc.close();
        if let Some(process) = self.process.as_mut() {
            self.status = process.stop();
        }
        self.rpc.drain();
        self.status
    }

    /// The last `lines` non-blank lines the process wrote on stderr, each
    /// clipped, joined by ` | `; `None` when it wrote nothing. Ends the
    /// conversation first, and gives the stderr reader a bounded moment to
    /// catch up with a process that has just exited: a server that fails to
    /// start says why there and nowhere else.
    pub fn stderr_tail(&mut self, lines: usize) -> Option<String> {
        self.shutdown();
        let mut seen = self.rpc.transport().stderr().total;
        for _ in 0..STDERR_CATCH_UP_POLLS {
            std::thread::sleep(std::time::Duration::from_millis(STDERR_POLL_MS));
            let now = self.rpc.transport().stderr().total;
            if now == seen {
                break;
            }
            seen = now;
        }
        let kept = self.rpc.transport().stderr().kept;
        let text = String::from_utf8_lossy(&kept);
        let mut tail: Vec<String> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .rev()
            .take(lines)
            .map(|l| witness_text::clip(l, STDERR_LINE_CHARS))
            .collect();
        tail.reverse();
        (!tail.is_empty()).then(|| tail.join(" | "))
    }

    /// The exit status if the process has already ended.
    pub fn exited(&mut self) -> Option<ExitStatus> {
        if self.status.is_none()
            && let Some(process) = self.process.as_mut()
        {
            self.status = process.exited();
        }
        self.status
    }
}

/// How long [`Connection::stderr_tail`] waits, at most, for stderr to stop
/// growing: so many polls this far apart.
const STDERR_CATCH_UP_POLLS: u32 = 15;
const STDERR_POLL_MS: u64 = 20;
/// How much of one stderr line a tail keeps.
const STDERR_LINE_CHARS: usize = 240;

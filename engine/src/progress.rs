//! Progress of long work, for whoever wants to show it.
//!
//! A catalog of thousands of tools takes minutes to audit; the binary shows
//! where it is on stderr (a bar on a terminal, plain lines otherwise). The
//! engine only says what happened; it never writes to a terminal itself.
//! The sink is process-wide, like the terminal it ends up on; without one,
//! nothing is reported.

use std::sync::OnceLock;

/// One step of an audit worth showing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event<'a> {
    /// The catalog was read.
    Catalog { tools: usize, pages: u32 },
    /// A call is about to be made: `started` calls so far of `planned` plan steps.
    Call {
        started: usize,
        planned: usize,
        tool: &'a str,
    },
    /// The audit's conversation with the server is over.
    Finished,
}

type Sink = Box<dyn Fn(&Event<'_>) + Send + Sync>;

static SINK: OnceLock<Sink> = OnceLock::new();

/// Installs the one sink (later calls are ignored).
pub fn set_sink(sink: Sink) {
    let _ = SINK.set(sink);
}

pub(crate) fn report(event: Event<'_>) {
    if let Some(sink) = SINK.get() {
        sink(&event);
    }
}

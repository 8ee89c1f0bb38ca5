//! The network observer: every outbound attempt of a jailed server lands on
//! a local sink that records it and relays nothing.
//!
//! The jail's server runs in a network namespace of its own (bubblewrap's
//! `--unshare-net`), which holds nothing but a loopback. Before the server's
//! first instruction, [`setup`] (run by `mcp-witness net-sink-setup`, a
//! short-lived helper that joins that namespace) makes the loopback take
//! every address — a `local` route for `0.0.0.0/0` and `::/0` on `lo` — and
//! has nftables' TPROXY hand every TCP connection and UDP datagram bound
//! elsewhere to the sink's sockets, created there and passed back to the
//! auditor. A resolver's query to the nameservers of `/etc/resolv.conf`
//! reaches a stub that answers each name with a stand-in address of its own
//! (198.18.0.0/15, the benchmarking range), so the connection that follows
//! names its host. The [`recorder::Sink`] runs in the auditor, outside the
//! sandbox, on those sockets: it accepts, keeps a digest of the first bytes,
//! answers DNS and nothing else, and never writes to a connection.
//!
//! Nothing here makes the network unreachable: the namespace does. The sink
//! only makes what the server reached for visible. What it cannot see is in
//! `docs/security.md` (raw sockets, descriptors opened before the sandbox,
//! sends after a call's window).

pub mod dns;
pub mod fdpass;
pub mod recorder;
pub mod setup;

pub use recorder::Sink;
pub use setup::{SetupError, SinkSockets};

/// The port the catch-all TCP and UDP sockets listen on inside the jail's
/// namespace. TPROXY delivers there whatever port was asked for; the
/// original destination stays the socket's local address.
pub const SINK_PORT: u16 = 1;

/// How many first bytes of a TCP connection or a datagram are digested.
pub const FIRST_BYTES: usize = 4096;

/// What the audit's isolation section says the observer used.
pub const METHOD: &str = "network observer: a local route for every address on the jail's loopback, nftables TPROXY to a sink the auditor holds (TCP connects and UDP datagrams, addresses and first bytes by digest), a stub resolver for the resolv.conf nameservers; nothing is relayed";

//! Options: everything an audit is told before it starts, and the one set
//! of defaults and bounds for them.
//!
//! [`AuditOptions::new`] is an audit as `mcp-witness audit` runs one
//! without flags; a caller overrides what it sets (`AuditOptions { plan,
//! ..AuditOptions::new(target) }`). The command line's flags, the sweep
//! file's keys and the lab take their defaults and ranges from the
//! constants here, so none of them writes a number of its own.

use std::collections::BTreeMap;
use std::time::Duration;

use witness_jail::Target;
use witness_jail::observe::{ObserveOptions, Settle};
use witness_probes::{NullProbe, Probe};
use witness_wire::session::EraChoice;

use super::Event;
use crate::plan::Plan;

/// The timeout of every request, in milliseconds (`--timeout-ms`), by
/// default and at most; at least 1.
pub const TIMEOUT_MS: u64 = 10_000;
pub const MAX_TIMEOUT_MS: u64 = 600_000;

/// The longest wait after a call before its post-call snapshot, in
/// milliseconds (`--settle-ms`), by default and at most: the one settle
/// every command shares (`witness_jail::observe::Settle`).
pub const SETTLE_MS: u64 = Settle::BOUND_MS;
pub const MAX_SETTLE_MS: u64 = Settle::MAX_MS;

/// How long every store must have seen no write for a settle to end
/// early, in milliseconds (`--quiet-ms`), by default and at most.
pub const QUIET_MS: u64 = Settle::QUIET_MS;
pub const MAX_QUIET_MS: u64 = Settle::MAX_MS;

/// The longest one observation of one store may take, in milliseconds
/// (`--max-observe-ms`), by default; at least 1.
pub const OBSERVE_MS: u64 = duration_ms(witness_observers::Budget::DEFAULT.max_time);

/// The share of listed tools (percent) a planner's audit must exercise to
/// conclude, when `--min-coverage` is not given: three in four. Every
/// server of the coverage experiment clears it (the lowest, 11 of 12, is
/// 91%), and an audit that called fewer than three tools in four says more
/// about what it never ran than about the server (docs/coverage.md).
pub const MIN_COVERAGE_PERCENT: u8 = 75;

/// The most bytes one observation reads (`--max-observe-bytes`), by default.
pub const OBSERVE_BYTES: u64 = witness_observers::Budget::DEFAULT.max_bytes;

// Every default lies within its bounds, and a quiet window can end a
// settle early: checked when the engine is built.
const _: () = assert!(1 <= TIMEOUT_MS && TIMEOUT_MS <= MAX_TIMEOUT_MS);
const _: () = assert!(SETTLE_MS <= MAX_SETTLE_MS && QUIET_MS <= MAX_QUIET_MS);
const _: () = assert!(QUIET_MS <= SETTLE_MS && OBSERVE_MS >= 1);

const fn duration_ms(duration: Duration) -> u64 {
    duration.as_millis() as u64
}

/// Everything an audit needs to know before it starts.
pub struct AuditOptions {
    /// The server: launched in a jail, or remote with its stores in place.
    pub target: Target,
    pub era: EraChoice,
    pub plan: Option<Plan>,
    pub timeout: Duration,
    /// The longest wait after a call before its post-call snapshot.
    pub settle: Duration,
    /// How a settle decides a store is quiet, and each observation's budget.
    pub observe: ObserveOptions,
    /// Injected clock and no wall-clock values: reruns write identical JSON.
    pub deterministic: bool,
    pub probe: Box<dyn Probe>,
    pub label: Option<String>,
    pub pinned_version: Option<String>,
    /// The published package the target was installed from, for the report.
    pub package: Option<witness_model::audit::PackagePin>,
    /// The registry entry the target was read from, for the report.
    pub server_json: Option<witness_model::audit::ServerJsonEntry>,
    /// Values the caller knows are secret (a registry entry's `isSecret`
    /// inputs): the report never shows them, wherever a server or the
    /// command line put them.
    pub secrets: Vec<String>,
    /// Events to apply after a plan step's call (and its repeat), by step.
    pub events: BTreeMap<u32, Vec<Event>>,
    /// Let the planner call destructive and unknown tools even when the jail
    /// has no network isolation.
    pub include_destructive: bool,
    /// Start the server afresh (same jail, stores as left) before every
    /// call after the first, for servers that misbehave in a long session.
    pub session_per_call: bool,
    /// Confirm every effect-lane failure before it is reported: repeat the
    /// call (or make a fresh one) after the stores were quiet, and call a
    /// failure that does not reproduce `untestable`. `--no-confirm` turns
    /// it off; the report says so (`unconfirmed`).
    pub confirm: bool,
    /// Answer a server's confirmations (`--refuse-confirmations` turns it
    /// off): the client declares the elicitation capability and accepts a
    /// form it can fill from the form's defaults and with yes for its
    /// yes/no questions; each answer is recorded on its call
    /// (`confirmations`). Inside the jail nothing of the user's is at
    /// stake, and a destructive form gated behind a confirmation is then
    /// exercised. Proxies and agent runs, where a person is the client,
    /// never do this.
    pub accept_confirmations: bool,
    /// `--min-coverage`: the percentage of listed tools that must be
    /// exercised for the audit to conclude. `None`: the planner's audits
    /// are held to [`MIN_COVERAGE_PERCENT`], a plan file's to nothing.
    pub min_coverage: Option<u8>,
    /// Where the audit says how far it is (the default: nowhere).
    pub progress: crate::progress::Progress,
}

impl AuditOptions {
    /// What the audit's client declares and answers.
    pub fn client_policy(&self) -> witness_wire::mrtr::ClientPolicy {
        use witness_wire::mrtr::{ClientPolicy, Elicitation};
        ClientPolicy {
            elicitation: if self.accept_confirmations {
                Elicitation::Confirm
            } else {
                Elicitation::Refuse
            },
        }
    }

    /// An audit of `target` as `mcp-witness audit` runs one without flags:
    /// the era detected, the planner's plan, the default timings and
    /// budgets, wall-clock time, the null probe, destructive and unknown
    /// tools called only where the sandbox contains the server, no label,
    /// events or coverage floor.
    pub fn new(target: Target) -> Self {
        Self {
            target,
            era: EraChoice::Auto,
            plan: None,
            timeout: Duration::from_millis(TIMEOUT_MS),
            settle: Duration::from_millis(SETTLE_MS),
            observe: ObserveOptions::default(),
            deterministic: false,
            probe: Box::new(NullProbe),
            label: None,
            pinned_version: None,
            package: None,
            server_json: None,
            secrets: Vec::new(),
            events: BTreeMap::new(),
            include_destructive: false,
            session_per_call: false,
            confirm: true,
            accept_confirmations: true,
            min_coverage: None,
            progress: crate::progress::Progress::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_are_the_named_ones() {
        let options = AuditOptions::new(Target::launched(witness_jail::JailSpec {
            command: vec!["server".into()],
            stores: Vec::new(),
            env: Vec::new(),
            keep: false,
            isolate_network: true,
        }));
        assert_eq!(options.timeout, Duration::from_millis(TIMEOUT_MS));
        assert_eq!(options.settle, Duration::from_millis(SETTLE_MS));
        assert_eq!(options.observe.quiet, Duration::from_millis(QUIET_MS));
        assert_eq!(
            options.observe.budget.max_time,
            Duration::from_millis(OBSERVE_MS)
        );
        assert_eq!(options.observe.budget.max_bytes, OBSERVE_BYTES);
        assert_eq!(options.probe.name(), "null");
        assert_eq!(options.era, EraChoice::Auto);
    }
}

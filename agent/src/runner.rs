//! The tool runner for a server launched in a jail: every call goes through
//! the wire client, and the stores are observed around it exactly as an
//! audit observes them (`witness_jail::observe`): the moment before, the
//! call, the settle until the stores are quiet, the moment after, with the
//! declared row facts of every changed row read by the observers at the
//! same moments.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use witness_jail::observe::{
    Changes, ObserveOptions, ObservedSet, Previous, Settle, Window, idle_window, store_paths,
};
use witness_jail::{JailSpec, OpenTarget, Target};
use witness_model::agent::case::FactsSpec;
use witness_model::agent::trace::RowFacts;
use witness_model::audit::{Effect, Finding};
use witness_model::vocab::CallStatus;
use witness_trace::content_of;
use witness_wire::clock::{Clock, MonotonicClock};
use witness_wire::session::EraChoice;
use witness_wire::session::{CallOutcome, Session};

use crate::client::{RunCall, ToolRunner};

/// How the server is started and observed.
#[derive(Clone, Debug)]
pub struct Launch {
    pub jail: JailSpec,
    pub facts: Vec<FactsSpec>,
    pub era: EraChoice,
    pub timeout: Duration,
    pub settle: Settle,
}

/// A server in its jail, its session open and its catalog read.
pub struct JailedServer {
    // Field order is drop order: the session (and its process) goes before
    // the jail directory it runs in.
    session: Session,
    observed: ObservedSet,
    settle: Settle,
    findings: Vec<Finding>,
    /// The catalog as served (complete).
    pub catalog: Vec<Value>,
    /// What the jail achieved, in words.
    pub isolation: Option<String>,
    /// Changes between the pristine copies and the first call.
    pub startup: Vec<Effect>,
    /// How long the last call took to its settled moment: the next idle
    /// control's window.
    last_window: Option<Duration>,
    /// What the last call changed: a change to it while idle is its
    /// follow-up, not background.
    last_effects: Vec<Effect>,
    /// The last call's tool: background is what changes idle after calls
    /// of different tools.
    last_tool: Option<String>,
    _target: OpenTarget,
}

/// What is left to see when the conversation is over.
pub struct Finish {
    /// Changes after the last call's post-snapshot, before shutdown.
    pub late: Vec<Effect>,
    pub late_rows: Vec<RowFacts>,
    pub shutdown: Vec<Effect>,
    pub warnings: Vec<String>,
}

impl JailedServer {
    /// Makes the jail, takes the pristine snapshots, starts the server,
    /// opens the session and reads the whole catalog. `Err` is one line.
    pub fn start(launch: Launch) -> Result<Self, String> {
        let mut target = Target::launched(launch.jail)
            .open(launch.timeout)
            .map_err(|e| e.to_string())?;
        let jail = target.jail();
        let mut observed = ObservedSet::for_jail(
            jail,
            &store_paths(&jail.stores),
            ObserveOptions::default().budget,
            &launch.facts,
        );
        observed.baseline().map_err(cannot_observe)?;
        let clock: Arc<dyn Clock> = Arc::new(MonotonicClock::start());
        let opened = {
            let mut start = || target.connect(clock.clone()).map_err(|e| e.to_string());
            Session::open(&mut start, launch.era, launch.timeout)
        };
        let isolation = target
            .isolation()
            .map(|i| format!("{}: {}", i.level, i.detail));
        let (mut session, _) = opened.map_err(|(e, _)| format!("no session: {e}"))?;
        let catalog = match session.list_tools() {
            Ok(catalog) if catalog.complete => catalog.tools,
            Ok(catalog) => {
                session.server.shutdown();
                let problem = catalog.problem.unwrap_or_default();
                return Err(format!("the catalog is incomplete: {problem}"));
            }
            Err(e) => {
                session.server.shutdown();
                return Err(format!("tools/list failed: {e}"));
            }
        };
        // The baseline as an audit takes it: once the server has started,
        // listed its tools and settled, so what it does to its store while
        // it starts is never charged to the first call.
        let mut startup = Changes::default();
        let settled = observed.after_answer(launch.settle, || {}, &mut startup);
        let mut findings = Vec::new();
        observed.report_warnings(&mut findings, None);
        if let Err(e) = settled {
            session.server.shutdown();
            return Err(cannot_observe(e));
        }
        Ok(Self {
            session,
            observed,
            settle: launch.settle,
            findings,
            catalog,
            isolation,
            startup: startup.effects,
            last_window: None,
            last_effects: Vec::new(),
            last_tool: None,
            _target: target,
        })
    }

    /// Late effects, the server's shutdown and what it changed. Never fails:
    /// a store that cannot be read any more is a warning here.
    pub fn finish(mut self) -> Finish {
        let mut late = Changes::default();
        self.moment(&mut late);
        self.attempts_outside_calls();
        self.session.server.shutdown();
        let mut shutdown = Changes::default();
        self.moment(&mut shutdown);
        self.attempts_outside_calls();
        // The jail goes with `self`: nothing of it outlives the run.
        Finish {
            late: late.effects,
            late_rows: late.rows,
            shutdown: shutdown.effects,
            warnings: self.findings.into_iter().map(|f| f.detail).collect(),
        }
    }

    /// Writes attempted on a store's original with no call in flight (at
    /// startup, between calls, at the end): a warning of the run, as the
    /// audit makes them a finding charged to no call.
    fn attempts_outside_calls(&mut self) {
        let written = self.observed.original_writes();
        if !written.is_empty() {
            self.findings.push(warning(format!(
                "the server wrote {} outside the calls, where a store's original is: the sandbox kept the original out of its reach, and the write landed in the decoy in its place",
                written.join(", ")
            )));
        }
    }

    /// A moment outside every call, its warnings kept, and a store that
    /// cannot be read one more of them (the changes of the stores read
    /// before it stay).
    fn moment(&mut self, changes: &mut Changes) {
        match self.observed.moment(changes) {
            Ok(()) => self.observed.report_warnings(&mut self.findings, None),
            Err(e) => self.findings.push(warning(cannot_observe(e))),
        }
    }
}

fn cannot_observe(e: witness_jail::observe::ObserveError) -> String {
    format!("cannot observe the stores: {e}")
}

fn warning(detail: String) -> Finding {
    Finding {
        kind: witness_model::vocab::FindingKind::ObserverWarning,
        detail,
        call: None,
    }
}

impl ToolRunner for JailedServer {
    fn call(&mut self, tool: &str, arguments: &Value) -> Result<RunCall, String> {
        // The moment before the call and its idle control in one, as the
        // audit makes them (see witness_jail::observe).
        let mut late = Changes::default();
        // As the audit's: whole before the first call, else ended early
        // where the change signals say nothing moved.
        let window = Window {
            full: idle_window(self.last_window, self.settle.bound, self.settle.quiet),
            until_quiet: self.last_tool.is_some().then_some(self.settle.quiet),
        };
        let previous = Previous {
            tool: self.last_tool.as_deref(),
            effects: &self.last_effects,
        };
        let idle = self.observed.idle(window, previous, &mut late);
        self.observed.report_warnings(&mut self.findings, None);
        idle.map_err(cannot_observe)?;
        self.attempts_outside_calls();
        let sent = Instant::now();
        let outcome = self.session.call_tool(tool, arguments);
        let mut own = Changes::default();
        let session = &mut self.session;
        let observed =
            self.observed
                .after_answer(self.settle, || session.server.rpc.drain(), &mut own);
        self.last_window = Some(sent.elapsed());
        let background = self.observed.split_background(&mut own);
        self.last_effects.clone_from(&own.effects);
        self.last_tool = Some(tool.to_owned());
        self.observed.report_warnings(&mut self.findings, None);
        observed.map_err(cannot_observe)?;
        // The decoys, compared by the jail once the call settled, as an
        // audit compares them.
        let original_writes = self.observed.original_writes();
        let (status, content) = match outcome {
            CallOutcome::Result(result) => (CallStatus::of_result(&result), content_of(&result)),
            CallOutcome::RpcError { code, message } => (
                CallStatus::RpcError,
                format!("JSON-RPC error {code}: {message}"),
            ),
            CallOutcome::Transport(e) => {
                return Err(format!("the transport failed during {tool}: {e}"));
            }
            CallOutcome::InputRequired { detail, .. } => (
                CallStatus::InputRequired,
                format!("the tool did not finish: {detail}"),
            ),
        };
        Ok(RunCall {
            is_error: status != CallStatus::Ok,
            status,
            content,
            effects: own.effects,
            rows: own.rows,
            late: late.effects,
            late_rows: late.rows,
            background,
            original_writes,
        })
    }
}

//! The tool runner for a server launched in a jail: every call goes through
//! the wire client, and the stores are observed around it with the engine's
//! observed set — snapshot, call, settle, snapshot — exactly as an audit
//! observes them, with the declared row facts read at the same moments.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use witness_engine::audit::{EraChoice, ObservedSet, store_dirs};
use witness_engine::jail::{Jail, JailSpec};
use witness_model::agent::case::FactsSpec;
use witness_model::agent::trace::RowFacts;
use witness_model::audit::{Effect, Finding};
use witness_model::vocab::CallStatus;
use witness_wire::clock::{Clock, MonotonicClock};
use witness_wire::session::{CallOutcome, Session};

use crate::client::{RunCall, ToolRunner};
use crate::facts::FactsReader;

/// How the server is started and observed.
#[derive(Clone, Debug)]
pub struct Launch {
    pub jail: JailSpec,
    pub facts: Vec<FactsSpec>,
    pub era: EraChoice,
    pub timeout: Duration,
    pub settle: Duration,
}

/// A server in its jail, its session open and its catalog read.
pub struct JailedServer {
    // Field order is drop order: the session (and its process) goes before
    // the jail directory it runs in.
    session: Session,
    observed: ObservedSet,
    facts: FactsReader,
    settle: Duration,
    findings: Vec<Finding>,
    /// The catalog as served (complete).
    pub catalog: Vec<Value>,
    /// What the jail achieved, in words.
    pub isolation: Option<String>,
    /// Changes between the pristine copies and the first call.
    pub startup: Vec<Effect>,
    _jail: Jail,
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
        let mut jail = Jail::create(launch.jail).map_err(|e| e.to_string())?;
        let mut observed = ObservedSet::for_jail(
            &jail,
            &store_dirs(&jail.stores),
            witness_observers::Budget::DEFAULT,
        );
        observed
            .baseline()
            .map_err(|e| format!("cannot observe the stores: {e}"))?;
        let specs = launch
            .facts
            .iter()
            .filter_map(|spec| {
                let store = jail.stores.iter().find(|s| s.spec.name == spec.store)?;
                Some((spec.clone(), store.path.clone()))
            })
            .collect();
        let mut facts = FactsReader::new(specs);
        facts.moment(&[])?;
        let clock: Arc<dyn Clock> = Arc::new(MonotonicClock::start());
        let opened = {
            let mut start = || jail.launch(clock.clone()).map_err(|e| e.to_string());
            Session::open(&mut start, launch.era, launch.timeout)
        };
        let isolation = jail
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
        let mut server = Self {
            session,
            observed,
            facts,
            settle: launch.settle,
            findings: Vec::new(),
            catalog,
            isolation,
            startup: Vec::new(),
            _jail: jail,
        };
        let mut startup = Vec::new();
        server.moment(&mut startup)?;
        server.startup = startup;
        Ok(server)
    }

    /// One observation moment: the changes since the last one, and their rows.
    fn moment(&mut self, changes: &mut Vec<Effect>) -> Result<Vec<RowFacts>, String> {
        let from = changes.len();
        self.observed
            .snapshot(changes)
            .map_err(|e| format!("cannot observe the stores: {e}"))?;
        self.observed.report_warnings(&mut self.findings, None);
        self.facts.moment(&changes[from..])
    }

    /// Late effects, the server's shutdown and what it changed. Never fails:
    /// a store that cannot be read any more is a warning here.
    pub fn finish(mut self) -> Finish {
        let mut late = Vec::new();
        let late_rows = match self.moment(&mut late) {
            Ok(rows) => rows,
            Err(e) => {
                self.findings.push(warning(e));
                Vec::new()
            }
        };
        self.session.server.shutdown();
        let mut shutdown = Vec::new();
        if let Err(e) = self.moment(&mut shutdown) {
            self.findings.push(warning(e));
        }
        let mut warnings: Vec<String> = self.findings.iter().map(|f| f.detail.clone()).collect();
        warnings.extend(self.facts.warnings.iter().cloned());
        // The jail goes with `self`: nothing of it outlives the run.
        Finish {
            late,
            late_rows,
            shutdown,
            warnings,
        }
    }
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
        let mut late = Vec::new();
        let late_rows = self.moment(&mut late)?;
        let outcome = self.session.call_tool(tool, arguments);
        std::thread::sleep(self.settle);
        self.session.server.rpc.drain();
        let mut effects = Vec::new();
        let rows = self.moment(&mut effects)?;
        let (status, content) = match outcome {
            CallOutcome::Result(result) => (CallStatus::of_result(&result), content_of(&result)),
            CallOutcome::RpcError { code, message } => (
                CallStatus::RpcError,
                format!("JSON-RPC error {code}: {message}"),
            ),
            CallOutcome::Transport(e) => {
                return Err(format!("the transport failed during {tool}: {e}"));
            }
        };
        Ok(RunCall {
            is_error: status != CallStatus::Ok,
            status,
            content,
            effects,
            rows,
            late,
            late_rows,
        })
    }
}

/// A result as the model reads it (and as `trace check` reads a recorded
/// one): its text blocks; anything else as JSON
/// (structured content when there is no text at all).
pub fn content_of(result: &Value) -> String {
    let blocks = result
        .get("content")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let parts: Vec<String> = blocks
        .iter()
        .map(|block| match block.get("text").and_then(Value::as_str) {
            Some(text) if block.get("type").and_then(Value::as_str) == Some("text") => {
                text.to_owned()
            }
            _ => block.to_string(),
        })
        .collect();
    if parts.is_empty() {
        return result
            .get("structuredContent")
            .map_or_else(String::new, Value::to_string);
    }
    parts.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn results_read_as_their_text() {
        let two =
            json!({"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]});
        assert_eq!(content_of(&two), "a\nb");
        let image = json!({"content": [{"type": "image", "data": "x", "mimeType": "image/png"}]});
        assert!(content_of(&image).contains("image/png"));
        let structured = json!({"content": [], "structuredContent": {"n": 1}});
        assert_eq!(content_of(&structured), "{\"n\":1}");
        assert_eq!(content_of(&json!({})), "");
    }
}

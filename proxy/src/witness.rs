//! The witness: every message is recorded before it is forwarded, and the
//! stores are observed around every `tools/call`.
//!
//! The observation is the audit's and the agent runs' own
//! (`witness_jail::observe`), for calls that may overlap. A moment (every
//! store, with the declared row facts of what changed) is taken when the
//! host's `tools/call` arrives, before it goes on to the server, and when
//! its answer arrives — after the same settle an audit gives a call, until
//! the stores are quiet within `--settle-ms` — before it goes back to the
//! host. What changed since the moment before is charged to the calls in
//! flight in between: one call — its effects; several — each of them,
//! marked ambiguous, because the store cannot say which did what; none —
//! late effects of the calls in flight last (before any call: startup).
//! Holding the answer until its moment is what keeps the next call's
//! effects out of this call's window; it costs the host the settle and one
//! snapshot. A write the server attempted on a store's original (the
//! decoys, compared by the jail at the same moments) is charged the same
//! way, as an `original-write` line.

use std::collections::{BTreeMap, BTreeSet};

use witness_jail::observe::{Changes, ObservedSet, Settle};
use witness_model::audit::Finding;
use witness_model::proxy::{
    EffectEntry, EffectPhase, EndEntry, MessageEntry, OriginalWriteEntry, Party, TraceEntry,
    WarningEntry,
};

use crate::message::{self, IdKey, Kind};
use crate::record::TraceWriter;
use crate::{Notice, Notify};

/// A request of the host's still waiting for its answer.
enum Pending {
    Call(u32),
    Initialize,
    Other,
}

/// What the witness keeps between messages.
pub struct Witness {
    writer: TraceWriter,
    observed: ObservedSet,
    settle: Settle,
    calls: u32,
    pending: BTreeMap<(Option<u32>, IdKey), Pending>,
    flight: BTreeSet<u32>,
    /// The calls in flight during the last interval that had any.
    last: Vec<u32>,
    /// What changed during that interval: a change to it between calls is
    /// their follow-up, any other change between calls is background.
    last_effects: Vec<witness_model::audit::Effect>,
    /// The tool of the last call sent.
    last_tool: Option<String>,
    /// The stores could not be observed: from then on only messages are kept.
    blind: bool,
    findings: Vec<Finding>,
    write_failed: bool,
    /// Where a trace that cannot be written is said.
    notify: Notify,
}

impl Witness {
    /// The pristine moment, before the server starts: what it does while
    /// starting becomes its startup effects.
    pub fn pristine(observed: &mut ObservedSet) -> Result<(), String> {
        observed
            .baseline()
            .map_err(|e| format!("cannot observe the stores: {e}"))
    }

    /// A witness over stores whose pristine moment was taken.
    pub fn new(writer: TraceWriter, observed: ObservedSet, settle: Settle, notify: Notify) -> Self {
        Self {
            writer,
            observed,
            settle,
            calls: 0,
            pending: BTreeMap::new(),
            flight: BTreeSet::new(),
            last: Vec::new(),
            last_effects: Vec::new(),
            last_tool: None,
            blind: false,
            findings: Vec::new(),
            write_failed: false,
            notify,
        }
    }

    /// A message from the host, before it is forwarded. Returns its call
    /// number when it is a `tools/call`.
    pub fn from_host(&mut self, session: Option<u32>, bytes: &[u8]) -> Option<u32> {
        let read = message::read(bytes);
        let mut call = None;
        if let Kind::Request { id, method } = &read.kind {
            let pending = match method.as_str() {
                "tools/call" => {
                    self.moment(None, false);
                    self.last_tool = read
                        .value
                        .as_ref()
                        .and_then(|v| v.pointer("/params/name"))
                        .and_then(serde_json::Value::as_str)
                        .map(str::to_owned);
                    self.calls += 1;
                    call = Some(self.calls);
                    self.flight.insert(self.calls);
                    Pending::Call(self.calls)
                }
                "initialize" => Pending::Initialize,
                _ => Pending::Other,
            };
            self.pending.insert((session, id.clone()), pending);
        }
        self.record(Party::Host, session, call, bytes, read.value);
        call
    }

    /// A message from the server, before it is forwarded. Returns the
    /// protocol version when it answers `initialize` (an HTTP upstream
    /// mirrors it in a header).
    pub fn from_server(&mut self, session: Option<u32>, bytes: &[u8]) -> Option<String> {
        let read = message::read(bytes);
        let mut call = None;
        let mut version = None;
        if let Kind::Response { id } = &read.kind {
            match self.pending.remove(&(session, id.clone())) {
                Some(Pending::Call(n)) => {
                    self.moment(None, true);
                    self.flight.remove(&n);
                    call = Some(n);
                }
                Some(Pending::Initialize) => {
                    version = read.protocol_version().map(str::to_owned);
                }
                Some(Pending::Other) | None => {}
            }
        }
        self.record(Party::Server, session, call, bytes, read.value);
        version
    }

    /// Forgets the requests of `session` (its upstream was replaced): their
    /// answers will never come. Calls among them stay unanswered.
    pub fn forget_session(&mut self, session: Option<u32>) {
        self.pending.retain(|(s, _), _| *s != session);
    }

    /// Records something the proxy itself saw go wrong.
    pub fn warn(&mut self, detail: String) {
        let (seq, t_us) = self.writer.stamp();
        self.write(&TraceEntry::Warning(WarningEntry { seq, t_us, detail }));
    }

    /// The last moment while the server runs: its late effects.
    pub fn before_stop(&mut self) {
        self.moment(None, false);
    }

    /// After the server stopped: what changed while it stopped, and the end
    /// line. Rewrites the trace through everything the redactor learnt.
    pub fn finish(mut self, reason: &str) {
        self.moment(Some(EffectPhase::Shutdown), false);
        let unanswered: Vec<u32> = self.flight.iter().copied().collect();
        let (seq, t_us) = self.writer.stamp();
        let end = TraceEntry::End(EndEntry {
            seq,
            t_us,
            reason: reason.to_owned(),
            calls: self.calls,
            unanswered,
        });
        self.write(&end);
        if let Err(e) = self.writer.finish() {
            (self.notify)(&Notice::TraceUnfinished(e.to_string()));
        }
    }

    fn record(
        &mut self,
        from: Party,
        session: Option<u32>,
        call: Option<u32>,
        bytes: &[u8],
        value: Option<serde_json::Value>,
    ) {
        let text = value.is_none().then(|| message::kept_text(bytes));
        let (seq, t_us) = self.writer.stamp();
        let entry = TraceEntry::Message(MessageEntry {
            seq,
            t_us,
            from,
            session,
            call,
            bytes: bytes.len() as u64,
            message: value,
            text,
        });
        self.write(&entry);
    }

    /// Observes every store — after an answer, once it has settled — and
    /// charges what changed (see the module doc).
    fn moment(&mut self, phase: Option<EffectPhase>, after_answer: bool) {
        if self.blind {
            return;
        }
        let mut changes = Changes::default();
        let observed = if after_answer {
            self.observed.after_answer(self.settle, || {}, &mut changes)
        } else {
            self.observed.moment(&mut changes)
        };
        self.observed.report_warnings(&mut self.findings, None);
        let failure = observed
            .err()
            .map(|e| format!("cannot observe the stores: {e}"));
        let (phase, calls) = match phase {
            Some(phase) => (phase, Vec::new()),
            None if !self.flight.is_empty() => {
                self.last = self.flight.iter().copied().collect();
                (EffectPhase::Call, self.last.clone())
            }
            None if self.calls > 0 => (EffectPhase::Late, self.last.clone()),
            None => (EffectPhase::Startup, Vec::new()),
        };
        match phase {
            EffectPhase::Call => self.last_effects.clone_from(&changes.effects),
            // Between calls, nothing in flight: the gap is this driver's
            // idle control (it cannot hold a client's call back for one).
            EffectPhase::Late => {
                let seen = Changes {
                    effects: changes.effects.clone(),
                    rows: Vec::new(),
                };
                let mut follow_up = Changes::default();
                let previous = witness_jail::observe::Previous {
                    tool: self.last_tool.as_deref(),
                    effects: &self.last_effects,
                };
                self.observed.learn_idle(seen, previous, &mut follow_up);
            }
            EffectPhase::Startup | EffectPhase::Shutdown => {}
        }
        let Changes { effects, rows } = changes;
        for effect in effects {
            let background = matches!(phase, EffectPhase::Call | EffectPhase::Late)
                && self.observed.is_background(&effect);
            let row = rows
                .iter()
                .find(|r| r.store == effect.store && r.object == effect.object)
                .cloned();
            let (seq, t_us) = self.writer.stamp();
            let entry = TraceEntry::Effect(EffectEntry {
                seq,
                t_us,
                phase,
                calls: calls.clone(),
                ambiguous: calls.len() > 1 || background,
                effect,
                row,
            });
            self.write(&entry);
        }
        // The decoys, compared by the jail once the stores settled: an
        // attempt on an original is charged as an effect of this moment is.
        for path in self.observed.original_writes() {
            let (seq, t_us) = self.writer.stamp();
            let entry = TraceEntry::OriginalWrite(OriginalWriteEntry {
                seq,
                t_us,
                phase,
                calls: calls.clone(),
                path,
            });
            self.write(&entry);
        }
        let warnings: Vec<String> = self.findings.drain(..).map(|f| f.detail).collect();
        for detail in warnings {
            self.warn(detail);
        }
        if let Some(failure) = failure {
            self.blind = true;
            self.warn(format!(
                "{failure}; from here on only messages are recorded"
            ));
        }
    }

    fn write(&mut self, entry: &TraceEntry) {
        if let Err(e) = self.writer.write(entry)
            && !self.write_failed
        {
            self.write_failed = true;
            (self.notify)(&Notice::TraceFailed(e.to_string()));
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::time::Instant;

    use serde_json::{Value, json};
    use witness_jail::observe::store_paths;
    use witness_jail::{Jail, StoreSpec};
    use witness_model::proxy::{PROXY_TRACE_SCHEMA, ProxiedServer, TraceHeader};

    use super::*;

    fn witness(store: &Path, trace: &Path) -> (Witness, Jail) {
        let spec = StoreSpec::parse(&format!("files=fs:{}", store.display())).expect("spec");
        let jail = Jail::in_place(vec![spec]).expect("in place");
        let mut observed = ObservedSet::for_jail(
            &jail,
            &store_paths(&jail.stores),
            witness_jail::observe::ObserveOptions::default().budget,
            &[],
        );
        Witness::pristine(&mut observed).expect("pristine");
        let header = TraceEntry::Header(TraceHeader {
            schema: PROXY_TRACE_SCHEMA.into(),
            generator: "test".into(),
            started_unix_ms: 0,
            host_transport: "stdio".into(),
            server: ProxiedServer {
                command: vec!["srv".into()],
                transport: "stdio".into(),
                env: Vec::new(),
            },
            live: false,
            isolation: None,
            stores: Vec::new(),
            facts: Vec::new(),
            settle_ms: 0,
        });
        let writer = TraceWriter::create(trace, header, &[], Instant::now()).expect("trace");
        let notify: Notify = std::sync::Arc::new(|_: &Notice| {});
        (Witness::new(writer, observed, Settle::NONE, notify), jail)
    }

    fn call(id: u32) -> Vec<u8> {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": "write", "arguments": {}}})
        .to_string()
        .into_bytes()
    }

    fn answer(id: u32) -> Vec<u8> {
        json!({"jsonrpc": "2.0", "id": id, "result": {"content": []}})
            .to_string()
            .into_bytes()
    }

    /// `(calls, ambiguous, object)` of every effect in the trace.
    fn effects(trace: &Path) -> Vec<(Value, Value, String)> {
        std::fs::read_to_string(trace)
            .expect("trace")
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).expect("JSON"))
            .filter(|e| e["type"] == "effect")
            .map(|e| {
                (
                    e["calls"].clone(),
                    e["ambiguous"].clone(),
                    e["effect"]["object"].as_str().unwrap_or("").to_owned(),
                )
            })
            .collect()
    }

    #[test]
    fn an_effect_seen_while_two_calls_overlap_is_charged_to_both_as_ambiguous() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = dir.path().join("store");
        std::fs::create_dir_all(&store).expect("store");
        let trace = dir.path().join("t.jsonl");
        let (mut w, _jail) = witness(&store, &trace);
        assert_eq!(w.from_host(None, &call(1)), Some(1));
        assert_eq!(w.from_host(None, &call(2)), Some(2));
        // Written while both calls are in flight: either may have done it.
        std::fs::write(store.join("both.txt"), "x").expect("write");
        w.from_server(None, &answer(1));
        // Written after call 1 was answered: only call 2 was in flight.
        std::fs::write(store.join("second.txt"), "y").expect("write");
        w.from_server(None, &answer(2));
        w.finish("test");
        assert_eq!(
            effects(&trace),
            [
                (json!([1, 2]), json!(true), "file/both.txt".to_owned()),
                (json!([2]), Value::Null, "file/second.txt".to_owned()),
            ]
        );
    }
}

//! Execute: the conversation with the server, every call observed.
//!
//! Takes the prepared jail, its observed set and the draft, the options
//! (era, plan, timeouts, probe, events) and a way to [`Connect`] to the
//! server. In order:
//!
//! 1. the session: era detection and the handshake (isolation as achieved);
//! 2. the startup snapshot, and probes of what the stores already held;
//! 3. the catalog (`tools/list`), which must be complete;
//! 4. the plan: the plan file, or the planner's (destructive and unknown
//!    tools left out unless isolated or allowed), its tools all listed, and
//!    `{NAME}`/`{jail}` in its literals made jailed paths;
//! 5. the calls ([`calls`]): the harvest pass, the other steps, the retry
//!    pass ([`passes`]), each call snapshotted before and after;
//! 6. the late effects of the last call, shutdown, the shutdown effects.
//!
//! Gives the processes it talked to, for their transcripts. Whatever stops
//! it early is recorded in the draft as the reason the audit is incomplete;
//! nothing here panics on what a server does.

mod calls;
mod confirm;
mod passes;
mod restart;

use std::ops::ControlFlow;

use serde_json::Value;
use witness_model::audit::*;
use witness_wire::connection::Connection;
use witness_wire::session::{Catalog, Era, Handshake, Session};

use super::assemble::Processes;
use super::draft::Draft;
use super::{AuditOptions, expand_strings, planned};
use crate::plan::{ArgSpec, Plan};
use calls::{Context, Runner};
use restart::Relauncher;
use witness_jail::observe::{Changes, ObservedSet, Settle, probe_objects};
use witness_jail::{Isolation, LaunchError, OpenTarget};

/// How many of its last stderr lines a server that would not start is
/// quoted by in the incomplete reason.
const STARTUP_STDERR_LINES: usize = 5;

/// How the server is reached: launched in the jail, or connected to where
/// it runs ([`OpenTarget::connect`], or a test's fake). Called once per
/// process the session needs (era detection may take two).
pub(super) type Connect<'a> = dyn FnMut(&mut OpenTarget) -> Result<Connection, LaunchError> + 'a;

/// What the execute stage works on; everything but the options is borrowed
/// from the prepared audit.
pub(super) struct Stage<'a> {
    pub(super) target: &'a mut OpenTarget,
    pub(super) observed: &'a mut ObservedSet,
    pub(super) draft: &'a mut Draft,
    pub(super) options: &'a mut AuditOptions,
}

impl Stage<'_> {
    /// Runs the conversation as far as it can go.
    pub(super) fn execute(self, connect: &mut Connect<'_>) -> Processes {
        let progress = self.options.progress.clone();
        let processes = self.converse(connect);
        progress.report(crate::progress::Event::Finished);
        processes
    }

    fn converse(mut self, connect: &mut Connect<'_>) -> Processes {
        let mut session = match self.open(connect) {
            Ok(session) => session,
            Err(discarded) => return Processes::discarded(discarded),
        };
        if self.before_calls(&mut session).is_break() {
            return Processes::of(session);
        }
        let ControlFlow::Continue(plan) = self.choose_plan() else {
            return Processes::of(session);
        };
        let era = session.era();
        let policy = session.policy();
        let context = Context {
            settle: self.settle(),
            probe: self.options.probe.as_ref(),
            stores: self.target.jail().stores.clone(),
            events: &mut self.options.events,
            session_per_call: self.options.session_per_call,
            confirm: self.options.confirm,
            progress: &self.options.progress,
        };
        let mut relaunch = Relauncher {
            target: &mut *self.target,
            connect,
            era,
            timeout: self.options.timeout,
            policy,
        };
        let mut runner = Runner::new(session, &mut relaunch, self.observed, self.draft, context);
        runner.seed();
        // A break has been recorded in the draft; what was observed up
        // to it is still wrapped up.
        let _ = runner.run_plan(&plan);
        let (mut session, ended) = runner.into_sessions();
        self.wrap_up(&mut session);
        Processes::of_sessions(session, ended)
    }

    /// Opens the session. `Err` with the processes tried, when none would do.
    fn open(&mut self, connect: &mut Connect<'_>) -> Result<Session, Vec<Connection>> {
        let opened = {
            let target = &mut *self.target;
            // The wire takes a launch failure as text; its text is the error's.
            let mut launch = || connect(target).map_err(|e| e.to_string());
            Session::open_with(
                &mut launch,
                self.options.era,
                self.options.timeout,
                self.options.client_policy(),
            )
        };
        record_isolation(
            &mut self.draft.report,
            self.target.isolation(),
            self.target.jail().network_observer(),
        );
        match opened {
            Ok((session, handshake)) => {
                record_handshake(&mut self.draft.report, &handshake);
                Ok(session)
            }
            Err((error, mut discarded)) => {
                // Why a server would not start is on its stderr, not the wire.
                let tail = discarded
                    .iter_mut()
                    .rev()
                    .find_map(|c| c.stderr_tail(STARTUP_STDERR_LINES));
                self.draft.incomplete(match tail {
                    Some(tail) => format!("no session: {error}; the server's stderr ends: {tail}"),
                    None => format!("no session: {error}"),
                });
                Err(discarded)
            }
        }
    }

    /// The catalog, then the baseline: the startup snapshot, taken once
    /// the server has started, listed its tools and settled (what it does
    /// to its store while it starts is never charged to the first call),
    /// and the probes of what the stores held then.
    fn before_calls(&mut self, session: &mut Session) -> ControlFlow<()> {
        self.catalog(session)?;
        let mut startup = Changes::default();
        if let Err(e) = self
            .observed
            .after_answer(self.settle(), || {}, &mut startup)
        {
            self.draft
                .incomplete(format!("cannot observe the stores: {e}"));
            return ControlFlow::Break(());
        }
        self.draft.report.startup_effects = startup.effects;
        let startup_network = self.target.jail_mut().network_window();
        record_outside(&mut self.draft.report, startup_network);
        // Objects present before any call: probed once, so a later revocation
        // can be judged against what was authority to begin with.
        let present = match self.observed.present(self.options.probe.as_ref()) {
            Ok(present) => present,
            Err(e) => {
                self.draft
                    .incomplete(format!("cannot observe the stores: {e}"));
                return ControlFlow::Break(());
            }
        };
        self.draft.report.baseline_probes = probe_objects(
            self.options.probe.as_ref(),
            &self.target.jail().stores,
            present.iter().map(|(s, o)| (s.as_str(), o.as_str())),
        );
        ControlFlow::Continue(())
    }

    /// How long every answer's effects are given to land (`--settle-ms`,
    /// `--quiet-ms`).
    fn settle(&self) -> Settle {
        Settle {
            bound: self.options.settle,
            quiet: self.options.observe.quiet,
        }
    }

    /// The complete catalog, recorded; breaks when it cannot be had.
    fn catalog(&mut self, session: &mut Session) -> ControlFlow<()> {
        let catalog = match session.list_tools() {
            Ok(catalog) => catalog,
            Err(e) => {
                self.draft.incomplete(format!("tools/list failed: {e}"));
                return ControlFlow::Break(());
            }
        };
        record_catalog(&mut self.draft.report, &catalog);
        self.options
            .progress
            .report(crate::progress::Event::Catalog {
                tools: catalog.tools.len(),
                pages: catalog.pages,
            });
        if !catalog.complete {
            let problem = catalog.problem.clone().unwrap_or_default();
            self.draft
                .incomplete(format!("the catalog is incomplete: {problem}"));
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    }

    /// The plan file, or the planner's plan for the listed tools, recorded as
    /// the planner entry. Breaks when the plan names a tool not listed.
    fn choose_plan(&mut self) -> ControlFlow<(), Plan> {
        let include_destructive = self.options.include_destructive;
        let (plan, skipped) = match self.options.plan.take() {
            Some(plan) => (plan, Vec::new()),
            None => planned(
                &self.draft.report.tools,
                self.target.isolation(),
                include_destructive,
            ),
        };
        self.draft.report.planner = PlannerEntry {
            origin: plan.origin.to_owned(),
            harvest_calls: Vec::new(),
            include_destructive,
            skipped,
            session_per_call: self.options.session_per_call,
        };
        let unknown = plan.unknown_tools(&self.draft.report.tools);
        if !unknown.is_empty() {
            self.draft.incomplete(format!(
                "the plan names tools the server does not list: {}",
                unknown.join(", ")
            ));
            return ControlFlow::Break(());
        }
        let jail = self.target.jail();
        ControlFlow::Continue(expand_literals(plan, &|text| jail.expand(text)))
    }

    /// After the calls: whatever arrived after the last call's
    /// post-snapshot, then the server's shutdown and what it changed.
    fn wrap_up(&mut self, session: &mut Session) {
        let mut late = Changes::default();
        if self.observed.moment(&mut late).is_ok()
            && let Some(last) = self.draft.report.calls.last_mut()
        {
            last.late_effects.extend(late.effects);
        }
        let last_call = self.draft.last_call();
        self.observed
            .report_warnings(&mut self.draft.report.findings, last_call);
        let after_last = self.target.jail_mut().network_window();
        record_outside(&mut self.draft.report, after_last);
        session.server.shutdown();
        let mut shutdown = Changes::default();
        if self.observed.moment(&mut shutdown).is_ok() {
            self.draft.report.shutdown_effects = shutdown.effects;
        }
        let at_shutdown = self.target.jail_mut().network_window();
        record_outside(&mut self.draft.report, at_shutdown);
        let hits = self.target.jail_mut().bounds_hit();
        record_bounds(&mut self.draft.report, &hits, None);
        let written = self.target.jail_mut().original_writes();
        record_original_writes(&mut self.draft.report, &written, None);
        self.draft.report.background = self.observed.background();
        // Background is learnt over the whole audit: a change a call saw
        // before its object was known as background is charged to no call
        // either.
        for call in &mut self.draft.report.calls {
            let mut changes = Changes {
                effects: std::mem::take(&mut call.effects),
                rows: Vec::new(),
            };
            call.background
                .extend(self.observed.split_background(&mut changes));
            call.effects = changes.effects;
        }
        self.draft.background_rates = self.observed.background_rates();
        // A restart may have run without the observer: say so for the audit.
        self.draft.report.isolation.network_observer = self.target.jail().network_observer();
        // Read once more now, while the last server still runs.
        self.draft.report.isolation.listening = self.target.jail_mut().listening();
        self.observed
            .report_warnings(&mut self.draft.report.findings, None);
    }
}

/// `plan` with `expand` applied to every string inside its literal
/// arguments: a plan file writes `{NAME}` and `{jail}` for jailed paths it
/// cannot know. Other arguments are the server's or the planner's values,
/// never placeholders.
pub(super) fn expand_literals(plan: Plan, expand: &dyn Fn(&str) -> String) -> Plan {
    let steps = plan
        .steps
        .into_iter()
        .map(|mut step| {
            for (_, spec) in step.args.iter_mut() {
                if let ArgSpec::Literal(value) = spec {
                    *value = expand_strings(value, expand);
                }
            }
            step
        })
        .collect();
    Plan { steps, ..plan }
}

/// The isolation the launch achieved; when it did not contain the server,
/// a finding says so beside the verdicts, not only in the header.
fn record_isolation(
    report: &mut AuditReport,
    isolation: Option<&Isolation>,
    network_observer: Option<NetworkObserverEntry>,
) {
    if let Some(i) = isolation {
        report.isolation = IsolationEntry {
            level: i.level,
            detail: i.detail.clone(),
            layers: i.layers.clone(),
            network_observer,
            listening: std::mem::take(&mut report.isolation.listening),
        };
        if !i.level.contains_effects() {
            report.findings.push(Finding {
                kind: FindingKind::NotContained,
                detail: format!(
                    "{}; writes outside the jail and the network were neither prevented nor observed",
                    i.detail
                ),
                call: None,
            });
        }
    }
}

/// The snapshot before a call: what changed since the previous call's
/// post-snapshot is that call's late effect, charged to nobody (before any
/// call, a startup effect).
pub(super) fn catch_up(
    observed: &mut ObservedSet,
    report: &mut AuditReport,
) -> Result<(), witness_jail::observe::ObserveError> {
    let previous = report.calls.last().map(|c| c.id);
    let late = observed.catch_up(&mut report.findings, previous)?.effects;
    match report.calls.last_mut() {
        Some(previous) => previous.late_effects.extend(late),
        None => report.startup_effects.extend(late),
    }
    Ok(())
}

/// Outbound attempts outside every call's window, kept in the order of the
/// audit (each window sorted).
pub(super) fn record_outside(report: &mut AuditReport, window: witness_netsink::recorder::Window) {
    report.network_outside_calls.extend(window.attempts);
    record_dropped(report, window.dropped, None);
}

/// A `resource-limit` finding for each bound the server reached: during
/// call `call`, or outside every call.
pub(super) fn record_bounds(report: &mut AuditReport, hits: &[String], call: Option<u32>) {
    for hit in hits {
        let when = match call {
            Some(id) => format!("during call {id}, which ended there"),
            None => "outside the calls".to_owned(),
        };
        report.findings.push(Finding {
            kind: FindingKind::ResourceLimit,
            detail: format!("{hit}: the server reached the jail's bound {when}"),
            call,
        });
    }
}

/// An `original-store-write-attempt` finding for the paths of stores'
/// originals the server wrote during call `call` (its id and tool), or
/// outside every call: the sandbox kept each original out of reach, and the
/// write landed in the decoy in its place.
pub(super) fn record_original_writes(
    report: &mut AuditReport,
    paths: &[String],
    call: Option<(u32, &str)>,
) {
    if paths.is_empty() {
        return;
    }
    let when = match call {
        Some((id, tool)) => format!("during call {id} ({tool})"),
        None => "outside the calls".to_owned(),
    };
    report.findings.push(Finding {
        kind: FindingKind::OriginalStoreWriteAttempt,
        detail: format!(
            "the server wrote {} {when}, where a store's original is: the sandbox kept the original out of its reach, and the write landed in the decoy in its place",
            paths.join(", ")
        ),
        call: call.map(|(id, _)| id),
    });
}

/// A finding for attempts past the observer's bound in one window.
pub(super) fn record_dropped(report: &mut AuditReport, dropped: u64, call: Option<u32>) {
    if dropped > 0 {
        report.findings.push(Finding {
            kind: FindingKind::NetworkAttemptsDropped,
            detail: format!(
                "{dropped} further outbound attempt(s) past the network observer's bound of {} were counted, not kept",
                witness_netsink::recorder::MAX_ATTEMPTS
            ),
            call,
        });
    }
}

fn record_handshake(report: &mut AuditReport, h: &Handshake) {
    report.era.era = Some(
        match h.era {
            Era::Modern => "modern",
            Era::Legacy => "legacy",
        }
        .into(),
    );
    report.era.protocol_version = Some(h.protocol_version.clone());
    report.era.discover = h.discover.clone();
    report.era.server_info = h.server_info.clone();
    report.era.instructions_present = h.instructions.is_some();
}

fn record_catalog(report: &mut AuditReport, catalog: &Catalog) {
    report.catalog = CatalogEntry {
        complete: catalog.complete,
        pages: catalog.pages,
        tools: catalog.tools.len(),
        problem: catalog.problem.clone(),
        excluded: catalog
            .excluded
            .iter()
            .map(|e| witness_model::audit::ExcludedTool {
                name: e.name.clone(),
                reason: e.reason.clone(),
            })
            .collect(),
    };
    report.tools = catalog.tools.iter().map(tool_entry).collect();
}

/// A tool as served, read into the ledger's terms.
pub(super) fn tool_entry(raw: &Value) -> ToolEntry {
    let text = |key: &str| raw.get(key).and_then(Value::as_str).map(str::to_owned);
    let annotations = raw.get("annotations").cloned();
    let hints = Hints::from_annotations(annotations.as_ref());
    ToolEntry {
        name: text("name").unwrap_or_default(),
        title: text("title").or_else(|| {
            raw.pointer("/annotations/title")
                .and_then(Value::as_str)
                .map(str::to_owned)
        }),
        description: text("description"),
        class: hints.class(),
        hints,
        annotations,
        input_schema: raw.get("inputSchema").cloned(),
        execution: raw.get("execution").cloned(),
        has_output_schema: raw.get("outputSchema").is_some(),
        output_schema: raw.get("outputSchema").cloned(),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::json;
    use witness_observers::Observer;
    use witness_observers::fake::{Scripted, ScriptedObserver};

    use super::*;
    use crate::audit::fakes::{self, FakeServer, Handler, Reply, Store, StoreObserver};
    use crate::audit::prepare;
    use crate::plan::PlanStep;
    use witness_jail::{Jail, JailSpec, StoreKind, StoreSpec};

    /// Executes against a fake server whose store is observed as `db`.
    fn execute(
        tools: Vec<Value>,
        handler: Handler,
        store: &Store,
        mut options: AuditOptions,
    ) -> AuditReport {
        let Ok(mut target) = options.target.open(options.timeout) else {
            panic!("no jail");
        };
        let observer: Box<dyn Observer> = Box::new(StoreObserver::new(store.clone()));
        let mut observed = ObservedSet::new(vec![("db".into(), observer)]);
        assert!(observed.baseline().is_ok());
        let mut draft = Draft::new(prepare::skeleton(&options, &target.jail().stores));
        let mut server = Some(FakeServer::new(tools, store.clone(), handler));
        let mut connect = |_: &mut OpenTarget| {
            server
                .take()
                .map(FakeServer::connection)
                .ok_or(LaunchError::NoCommand)
        };
        let stage = Stage {
            target: &mut target,
            observed: &mut observed,
            draft: &mut draft,
            options: &mut options,
        };
        drop(stage.execute(&mut connect));
        draft.report
    }

    fn with_plan(plan: Plan) -> AuditOptions {
        AuditOptions {
            plan: Some(plan),
            ..fakes::options()
        }
    }

    fn step(tool: &str, args: Vec<(&str, ArgSpec)>) -> PlanStep {
        PlanStep {
            tool: tool.into(),
            args: args.into_iter().map(|(n, s)| (n.to_owned(), s)).collect(),
            ..Default::default()
        }
    }

    fn tools_called(report: &AuditReport) -> Vec<(u32, u32, &str, CallStatus)> {
        report
            .calls
            .iter()
            .map(|c| (c.id, c.step, c.tool.as_str(), c.outcome.status))
            .collect()
    }

    fn text(body: &str) -> Reply {
        Reply::Result(json!({"content": [{"type": "text", "text": body}]}))
    }

    fn tool_error() -> Reply {
        Reply::Result(json!({"isError": true, "content": [{"type": "text", "text": "no"}]}))
    }

    const READ: fn() -> Value = || json!({"readOnlyHint": true});
    const ADD: fn() -> Value = || json!({"readOnlyHint": false, "destructiveHint": false});

    /// `list_notes` lists what `add_note` added; `open_note` and
    /// `delete_note` want an id that exists.
    fn notes_server() -> (Vec<Value>, Handler) {
        let tools = vec![
            fakes::listed("list_notes", READ(), &[]),
            fakes::listed("open_note", ADD(), &["note_id"]),
            fakes::listed("add_note", ADD(), &["body"]),
            fakes::listed(
                "delete_note",
                json!({"readOnlyHint": false, "destructiveHint": true}),
                &["note_id"],
            ),
        ];
        let handler: Handler = Box::new(|tool, args, store| {
            let id = args.get("note_id").and_then(Value::as_str).unwrap_or("");
            let exists = store.lock().objects.contains_key(&format!("notes/{id}"));
            match tool {
                "list_notes" => {
                    let notes: Vec<Value> = store
                        .lock()
                        .objects
                        .keys()
                        .filter_map(|k| k.strip_prefix("notes/"))
                        .map(|id| json!({"id": id}))
                        .collect();
                    Reply::Result(json!({"structuredContent": {"notes": notes}}))
                }
                "add_note" => {
                    store.write("notes/note_0001", "hello");
                    text("saved")
                }
                "open_note" | "get_note" if exists => text("a note"),
                "open_note" => Reply::Error(-32602, "no such note"),
                "delete_note" if exists => {
                    store.lock().objects.remove(&format!("notes/{id}"));
                    text("deleted")
                }
                _ => tool_error(),
            }
        });
        (tools, handler)
    }

    #[test]
    fn the_ledger_writes_a_served_2020_12_schema_back_as_served() {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {"address": {"$anchor": "addressDef", "type": "object"}},
            "properties": {"address": {"$ref": "#/$defs/address"}, "phone": {"type": "string"}},
            "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["address"]}]}],
            "if": {"required": ["phone"]}, "then": {"required": ["address"]}, "else": {},
            "additionalProperties": false
        });
        let entry = tool_entry(&json!({"name": "rich", "inputSchema": schema}));
        let written = serde_json::to_string(&entry).expect("serializes");
        let read: Value = serde_json::from_str(&written).expect("JSON");
        // In the served key order too: the audit document shows the schema
        // the server sent, not a rearrangement of it.
        assert_eq!(read["input_schema"].to_string(), schema.to_string());
    }

    #[test]
    fn the_harvest_pass_waits_for_real_values_and_its_tools_are_not_called_again() {
        let store = Store::default();
        store.write("notes/note_0007", "old");
        let (mut tools, handler) = notes_server();
        tools.push(fakes::listed("get_note", READ(), &["note_id"]));
        let plan = Plan {
            steps: vec![
                // Listed first, but it needs a value only list_notes gives.
                step(
                    "get_note",
                    vec![("note_id", ArgSpec::Auto(json!("witness")))],
                ),
                step("list_notes", vec![]),
                step("add_note", vec![("body", ArgSpec::Literal(json!("hi")))]),
                step(
                    "get_note",
                    vec![("note_id", ArgSpec::Auto(json!("witness")))],
                ),
                step("list_notes", vec![]),
            ],
            origin: "synthesized",
            retry_at: None,
            harvest: 2,
            expect: BTreeMap::new(),
        };
        let report = execute(tools, handler, &store, with_plan(plan));
        assert!(report.complete, "{:?}", report.incomplete_reason);
        assert_eq!(
            tools_called(&report),
            [
                (1, 1, "list_notes", CallStatus::Ok),
                (2, 2, "get_note", CallStatus::Ok),
                (3, 3, "add_note", CallStatus::Ok),
            ]
        );
        assert_eq!(report.planner.harvest_calls, [1, 2]);
        let argument = &report.calls[1].arguments[0];
        assert_eq!(argument.value, json!("note_0007"));
        assert_eq!(argument.source, Provenance::Harvested);
        assert_eq!(report.calls[2].effects.len(), 1);
    }

    #[test]
    fn the_audit_reports_its_catalog_every_call_and_its_end_to_the_callers_progress() {
        let store = Store::default();
        let (tools, handler) = notes_server();
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let kept = seen.clone();
        let options = AuditOptions {
            include_destructive: true,
            progress: crate::progress::Progress::to(move |event| {
                if let Ok(mut seen) = kept.lock() {
                    seen.push(format!("{event:?}"));
                }
            }),
            ..fakes::options()
        };
        let report = execute(tools, handler, &store, options);
        let seen = seen.lock().map(|s| s.clone()).unwrap_or_default();
        assert_eq!(
            seen.first().map(String::as_str),
            Some("Catalog { tools: 4, pages: 1 }")
        );
        let calls = seen.iter().filter(|e| e.starts_with("Call {")).count();
        assert_eq!(calls, report.calls.len(), "{seen:?}");
        assert!(seen[1].contains("tool: \"list_notes\""), "{seen:?}");
        assert_eq!(seen.last().map(String::as_str), Some("Finished"));
    }

    #[test]
    fn a_tool_that_failed_on_invention_is_retried_once_real_values_exist() {
        let store = Store::default();
        let (tools, handler) = notes_server();
        let options = AuditOptions {
            include_destructive: true,
            ..fakes::options()
        };
        let report = execute(tools, handler, &store, options);
        assert!(report.complete, "{:?}", report.incomplete_reason);
        assert_eq!(
            tools_called(&report),
            [
                (1, 1, "list_notes", CallStatus::Ok),
                // A reader runs before the creators, on an invented id.
                (2, 2, "open_note", CallStatus::RpcError),
                (3, 3, "add_note", CallStatus::Ok),
                // The retry pass: the source asked again, then the retry.
                (4, 4, "list_notes", CallStatus::Ok),
                (5, 5, "open_note", CallStatus::Ok),
                (6, 6, "delete_note", CallStatus::Ok),
                // The last looks, the delete having changed the store
                // since: the reader reads it again, the reader of the
                // note the delete took away fails, and the creator,
                // which had only made things, makes again.
                (7, 7, "list_notes", CallStatus::Ok),
                (8, 8, "open_note", CallStatus::RpcError),
                (9, 9, "add_note", CallStatus::Ok),
            ]
        );
        // A value refused after the store changed is no finding.
        assert!(
            report.findings.iter().all(|f| f.call != Some(8)),
            "{:?}",
            report.findings
        );
        let look = report.calls[8].answers.as_ref().expect("why it was asked");
        assert_eq!(look.call, 3);
        assert!(look.reading.starts_with("a last look"), "{}", look.reading);
        assert_eq!(report.planner.harvest_calls, [1, 4]);
        assert_eq!(report.calls[1].arguments[0].source, Provenance::Synthesized);
        assert_eq!(report.calls[1].outcome.code, Some(-32602));
        assert_eq!(
            report.calls[1].outcome.detail.as_deref(),
            Some("no such note")
        );
        assert_eq!(report.calls[4].arguments[0].value, json!("note_0001"));
        assert_eq!(report.calls[4].arguments[0].source, Provenance::Harvested);
    }

    #[test]
    fn a_change_that_answered_ok_and_changed_nothing_is_tried_on_the_next_real_object() {
        // `move_section` answers ok whatever it is given, and changes the
        // store only for a section that is not already last (`s2` is).
        let store = Store::default();
        store.write("sections/s1", "first");
        store.write("sections/s2", "second");
        let tools = vec![
            fakes::listed("list_sections", READ(), &[]),
            fakes::listed("move_section", ADD(), &["section_id"]),
        ];
        let handler: Handler = Box::new(|tool, args, store| match tool {
            "list_sections" => Reply::Result(
                json!({"structuredContent": {"sections": [{"id": "s1"}, {"id": "s2"}]}}),
            ),
            "move_section" => {
                let id = args.get("section_id").and_then(Value::as_str).unwrap_or("");
                if id == "s1" {
                    store.write("sections/s1", "moved to last");
                }
                text("moved")
            }
            _ => tool_error(),
        });
        let report = execute(tools, handler, &store, fakes::options());
        let moves: Vec<(&Value, usize)> = report
            .calls
            .iter()
            .filter(|c| c.tool == "move_section")
            .map(|c| (&c.arguments[0].value, c.effects.len()))
            .collect();
        // (Then a control call confirms what the second one changed.)
        assert_eq!(
            moves[..2],
            [(&json!("s2"), 0), (&json!("s1"), 1)],
            "{moves:?}"
        );
        let retried = report
            .calls
            .iter()
            .filter(|c| c.tool == "move_section")
            .nth(1)
            .and_then(|c| c.answers.as_ref())
            .map(|a| a.reading.clone())
            .unwrap_or_default();
        assert!(retried.contains("changed nothing observed"), "{retried}");
    }

    #[test]
    fn a_failure_is_confirmed_before_the_removers_take_what_its_call_changed() {
        // `mark` claims to read and appends to task t/1 when it exists;
        // `remove_all` empties the store. Confirmed after the remover, the
        // mark would find no task and its write would go unconfirmed.
        let tools = vec![
            fakes::listed("mark_task", READ(), &[]),
            fakes::listed(
                "remove_all",
                json!({"readOnlyHint": false, "destructiveHint": true}),
                &[],
            ),
        ];
        let handler: Handler = Box::new(|tool, _, store| match tool {
            "mark_task" => {
                let held = store.lock().objects.get("t/1").cloned();
                match held {
                    Some(now) => {
                        store.write("t/1", &format!("{now}!"));
                        text("marked")
                    }
                    None => text("nothing to mark"),
                }
            }
            _ => {
                store.lock().objects.clear();
                text("removed")
            }
        });
        let store = Store::default();
        store.write("t/1", "pending");
        let mut options = with_plan(Plan {
            steps: vec![step("mark_task", vec![]), step("remove_all", vec![])],
            origin: "file",
            retry_at: Some(1),
            harvest: 0,
            expect: BTreeMap::new(),
        });
        options.include_destructive = true;
        let report = execute(tools, handler, &store, options);
        assert!(report.complete, "{:?}", report.incomplete_reason);
        assert_eq!(
            tools_called(&report),
            [
                (1, 1, "mark_task", CallStatus::Ok),
                (2, 1, "mark_task", CallStatus::Ok),
                (3, 2, "remove_all", CallStatus::Ok),
            ]
        );
        assert_eq!(report.calls[1].confirms, Some(1));
        assert_eq!(report.calls[1].effects.len(), 1, "the write reproduced");
        // Nothing is confirmed twice at the end.
        assert_eq!(
            report.calls.iter().filter(|c| c.confirms.is_some()).count(),
            1
        );
    }

    #[test]
    fn an_idempotent_tool_is_repeated_and_late_and_event_effects_are_nobodys() {
        let tools = vec![
            fakes::listed(
                "touch",
                json!({"readOnlyHint": false, "destructiveHint": false, "idempotentHint": true}),
                &[],
            ),
            fakes::listed("snap", json!({"idempotentHint": true}), &[]),
        ];
        let handler: Handler = Box::new(|tool, _, store| match tool {
            "touch" => {
                let first = !store.lock().objects.contains_key("t/1");
                store.write("t/1", "x");
                if first {
                    store.write_late("late/1", "y");
                }
                text("ok")
            }
            _ => tool_error(),
        });
        let store = Store::default();
        let by_experiment = store.clone();
        let mut options = with_plan(Plan {
            steps: vec![step("touch", vec![]), step("snap", vec![])],
            origin: "file",
            retry_at: None,
            harvest: 0,
            expect: BTreeMap::new(),
        });
        let event: crate::audit::Event = Box::new(move |_| {
            by_experiment.write("ev/1", "z");
            Ok("the experiment wrote ev/1".into())
        });
        options.events = BTreeMap::from([(1, vec![event])]);
        let report = execute(tools, handler, &store, options);
        assert!(report.complete, "{:?}", report.incomplete_reason);
        assert_eq!(
            tools_called(&report),
            [
                (1, 1, "touch", CallStatus::Ok),
                (2, 1, "touch", CallStatus::Ok),
                // A failed call is not repeated.
                (3, 2, "snap", CallStatus::ToolError),
            ]
        );
        let objects =
            |effects: &[Effect]| -> Vec<String> { effects.iter().map(Effect::qualified).collect() };
        let (first, repeat) = (&report.calls[0], &report.calls[1]);
        assert_eq!(repeat.repeat_of, Some(1));
        assert_eq!(repeat.arguments, first.arguments);
        assert_eq!(objects(&first.effects), ["db:t/1"]);
        assert_eq!(objects(&first.late_effects), ["db:late/1"]);
        assert!(repeat.effects.is_empty());
        assert_eq!(repeat.events_after, ["the experiment wrote ev/1"]);
        assert_eq!(objects(&repeat.event_effects), ["db:ev/1"]);
        assert!(report.calls[2].effects.is_empty());
    }

    /// Executes against fake servers made one per launch by `handler`, all
    /// writing `store`; `launches` counts them.
    fn execute_restartable(
        tools: Vec<Value>,
        handler: fn() -> Handler,
        store: &Store,
        mut options: AuditOptions,
        launches: usize,
    ) -> (AuditReport, usize) {
        let Ok(mut target) = options.target.open(options.timeout) else {
            panic!("no jail");
        };
        let observer: Box<dyn Observer> = Box::new(StoreObserver::new(store.clone()));
        let mut observed = ObservedSet::new(vec![("db".into(), observer)]);
        assert!(observed.baseline().is_ok());
        let mut draft = Draft::new(prepare::skeleton(&options, &target.jail().stores));
        let mut started = 0usize;
        let mut connect = |_: &mut OpenTarget| {
            if started == launches {
                return Err(LaunchError::NoCommand);
            }
            started += 1;
            Ok(FakeServer::new(tools.clone(), store.clone(), handler()).connection())
        };
        let stage = Stage {
            target: &mut target,
            observed: &mut observed,
            draft: &mut draft,
            options: &mut options,
        };
        drop(stage.execute(&mut connect));
        (draft.report, started)
    }

    /// `hang` never answers; `after` writes `a/1`.
    fn hanging_server() -> (Vec<Value>, Plan) {
        let tools = vec![
            fakes::listed("hang", READ(), &[]),
            fakes::listed("after", ADD(), &[]),
        ];
        let plan = Plan {
            steps: vec![step("hang", vec![]), step("after", vec![])],
            origin: "file",
            retry_at: None,
            harvest: 0,
            expect: BTreeMap::new(),
        };
        (tools, plan)
    }

    fn hanging() -> Handler {
        Box::new(|tool, _, store| match tool {
            "hang" => Reply::Silence,
            _ => {
                store.write("a/1", "x");
                text("ok")
            }
        })
    }

    #[test]
    fn a_call_that_times_out_is_followed_by_the_rest_of_the_plan_on_a_restarted_server() {
        let (tools, plan) = hanging_server();
        let store = Store::default();
        let (report, launches) = execute_restartable(tools, hanging, &store, with_plan(plan), 2);
        assert_eq!(launches, 2);
        assert!(report.complete, "{:?}", report.incomplete_reason);
        assert_eq!(
            tools_called(&report),
            [
                (1, 1, "hang", CallStatus::TransportError),
                (2, 2, "after", CallStatus::Ok),
            ]
        );
        assert_eq!(
            report.calls[0].outcome.detail.as_deref(),
            Some("no answer to tools/call within 50 ms")
        );
        let sessions: Vec<u32> = report.calls.iter().map(|c| c.session).collect();
        assert_eq!(sessions, [0, 1], "the second call went to the new server");
        assert_eq!(report.restarts.len(), 1);
        assert_eq!(report.restarts[0].after_call, 1);
        assert_eq!(report.restarts[0].session, 1);
        assert_eq!(
            report.restarts[0].reason,
            "the transport failed during call 1 (hang)"
        );
        assert_eq!(report.calls[1].effects.len(), 1, "observed as ever");
    }

    #[test]
    fn a_server_that_cannot_be_started_again_leaves_the_audit_incomplete() {
        let (tools, plan) = hanging_server();
        let (report, launches) =
            execute_restartable(tools, hanging, &Store::default(), with_plan(plan), 1);
        assert_eq!(launches, 1);
        assert_eq!(
            tools_called(&report),
            [(1, 1, "hang", CallStatus::TransportError)]
        );
        assert_eq!(
            report.incomplete_reason.as_deref(),
            Some(
                "the transport failed during call 1 (hang); the server could not be started again: cannot start the server: no command given"
            )
        );
        assert!(report.restarts.is_empty());
    }

    #[test]
    fn a_fresh_session_per_call_starts_the_server_again_before_every_call_but_the_first() {
        let tools = vec![
            fakes::listed("touch", ADD(), &[]),
            fakes::listed("peek", READ(), &[]),
        ];
        fn touching() -> Handler {
            Box::new(|tool, _, store| {
                if tool == "touch" {
                    store.write("t/1", "x");
                }
                text("ok")
            })
        }
        let mut options = with_plan(Plan {
            steps: vec![
                step("touch", vec![]),
                step("peek", vec![]),
                step("peek", vec![]),
            ],
            origin: "file",
            retry_at: None,
            harvest: 0,
            expect: Default::default(),
        });
        options.session_per_call = true;
        let store = Store::default();
        let (report, launches) = execute_restartable(tools, touching, &store, options, 5);
        assert!(report.complete, "{:?}", report.incomplete_reason);
        assert_eq!(launches, 3);
        let sessions: Vec<u32> = report.calls.iter().map(|c| c.session).collect();
        assert_eq!(sessions, [0, 1, 2]);
        assert!(report.planner.session_per_call);
        assert!(
            report
                .restarts
                .iter()
                .all(|r| r.reason == "a fresh session for every call (--session-per-call)")
        );
        assert_eq!(report.calls[0].effects.len(), 1);
    }

    #[test]
    fn an_unresolvable_reference_is_recorded_not_sent_and_the_audit_goes_on() {
        let tools = vec![
            fakes::listed("mint", ADD(), &[]),
            fakes::listed("revoke", ADD(), &["key"]),
        ];
        let handler: Handler = Box::new(|_, _, _| text("done"));
        let parsed = Plan::parse(
            "[[call]]\ntool = \"mint\"\n[[call]]\ntool = \"revoke\"\nargs.key = { from = \"call 1\", path = \"json.id\" }\n",
        );
        let Ok(plan) = parsed else {
            panic!("{parsed:?}");
        };
        let report = execute(tools, handler, &Store::default(), with_plan(plan));
        assert!(report.complete);
        assert_eq!(
            tools_called(&report),
            [
                (1, 1, "mint", CallStatus::Ok),
                (2, 2, "revoke", CallStatus::NotSent),
            ]
        );
        assert_eq!(
            report.calls[1].outcome.detail.as_deref(),
            Some("argument key: call 1 has nothing at json.id")
        );
    }

    #[test]
    fn a_plan_naming_an_unlisted_tool_stops_before_any_call() {
        let plan = Plan {
            steps: vec![step("ghost", vec![])],
            origin: "file",
            retry_at: None,
            harvest: 0,
            expect: BTreeMap::new(),
        };
        let handler: Handler = Box::new(|_, _, _| text("ok"));
        let tools = vec![fakes::listed("real", READ(), &[])];
        let report = execute(tools, handler, &Store::default(), with_plan(plan));
        assert!(report.calls.is_empty());
        assert_eq!(report.planner.origin, "file");
        assert_eq!(
            report.incomplete_reason.as_deref(),
            Some("the plan names tools the server does not list: ghost")
        );
    }

    #[test]
    fn a_failed_event_or_launch_is_the_reason_the_audit_is_incomplete() {
        let tools = vec![fakes::listed("t", READ(), &[])];
        let handler: Handler = Box::new(|_, _, _| text("ok"));
        let mut options = with_plan(Plan {
            steps: vec![step("t", vec![])],
            origin: "file",
            retry_at: None,
            harvest: 0,
            expect: BTreeMap::new(),
        });
        let event: crate::audit::Event = Box::new(|_| Err("boom".into()));
        options.events = BTreeMap::from([(1, vec![event])]);
        let report = execute(tools, handler, &Store::default(), options);
        assert_eq!(
            report.incomplete_reason.as_deref(),
            Some("out-of-band event after call 1 failed: boom")
        );

        let mut options = fakes::options();
        let Ok(mut target) = options.target.open(options.timeout) else {
            panic!("no jail");
        };
        let mut observed = ObservedSet::new(Vec::new());
        let mut draft = Draft::new(prepare::skeleton(&options, &target.jail().stores));
        let stage = Stage {
            target: &mut target,
            observed: &mut observed,
            draft: &mut draft,
            options: &mut options,
        };
        let mut refuse = |_: &mut OpenTarget| Err(LaunchError::NoCommand);
        drop(stage.execute(&mut refuse));
        assert_eq!(
            draft.report.incomplete_reason.as_deref(),
            Some("no session: cannot start the server: no command given")
        );
        assert!(draft.report.era.era.is_none());
    }

    #[test]
    fn literals_get_jailed_paths_and_nothing_else_is_expanded() {
        let spec = JailSpec {
            command: vec!["true".into()],
            stores: vec![StoreSpec {
                name: "db".into(),
                kind: StoreKind::Sqlite,
                source: "/nonexistent/app.db".into(),
                shown: None,
                clock_columns: Vec::new(),
            }],
            env: Vec::new(),
            keep: false,
            isolate_network: false,
        };
        let Ok(jail) = Jail::create(spec) else {
            panic!("no jail");
        };
        let plan = Plan {
            steps: vec![step(
                "copy",
                vec![
                    (
                        "paths",
                        ArgSpec::Literal(
                            json!({"from": ["{db}"], "to": "{jail}/work/out", "n": 1}),
                        ),
                    ),
                    ("auto", ArgSpec::Auto(json!("{db}"))),
                    ("pinned", ArgSpec::Pinned(json!("{jail}"))),
                ],
            )],
            origin: "file",
            retry_at: None,
            harvest: 0,
            expect: BTreeMap::new(),
        };
        let expanded = expand_literals(plan, &|t| jail.expand(t));
        let db = jail.stores[0].path.to_string_lossy().into_owned();
        let root = jail.root().to_string_lossy().into_owned();
        assert_eq!(
            expanded.steps[0].args,
            [
                (
                    "paths".to_owned(),
                    ArgSpec::Literal(
                        json!({"from": [db], "to": format!("{root}/work/out"), "n": 1})
                    )
                ),
                ("auto".to_owned(), ArgSpec::Auto(json!("{db}"))),
                ("pinned".to_owned(), ArgSpec::Pinned(json!("{jail}"))),
            ]
        );
        assert_eq!(expanded.origin, "file");
    }

    #[test]
    fn late_effects_go_to_the_previous_call_or_before_any_to_startup() {
        let scripted: Box<dyn Observer> = Box::new(ScriptedObserver::new(vec![
            Scripted::Objects(&[], &[]),
            Scripted::Objects(&[("boot", "1")], &[]),
            Scripted::Objects(&[("boot", "1"), ("late", "1")], &["odd row"]),
        ]));
        let mut observed = ObservedSet::new(vec![("db".into(), scripted)]);
        let ops = |changes: &[Effect]| -> Vec<(String, Op)> {
            changes.iter().map(|e| (e.qualified(), e.op)).collect()
        };
        let mut report = fakes::report();
        assert!(observed.moment(&mut Changes::default()).is_ok());
        assert!(catch_up(&mut observed, &mut report).is_ok());
        assert_eq!(
            ops(&report.startup_effects),
            [("db:boot".into(), Op::Create)]
        );
        report.calls.push(fakes::call(
            7,
            "save",
            CallStatus::Ok,
            Provenance::Literal,
            Vec::new(),
        ));
        assert!(catch_up(&mut observed, &mut report).is_ok());
        assert_eq!(
            ops(&report.calls[0].late_effects),
            [("db:late".into(), Op::Create)]
        );
        assert_eq!(
            report.startup_effects.len(),
            1,
            "startup is not charged again"
        );
        assert_eq!(report.findings.len(), 1);
        assert_eq!(report.findings[0].call, Some(7));
    }

    #[test]
    fn tools_the_client_excluded_are_recorded_with_their_reason() {
        let mut report = fakes::report();
        let catalog = Catalog {
            tools: vec![json!({"name": "kept"})],
            pages: 1,
            complete: true,
            excluded: vec![witness_wire::session::ExcludedTool {
                name: "dropped".into(),
                reason:
                    "parameter \"score\" declares an x-mcp-header on a parameter of type number"
                        .into(),
            }],
            ..Catalog::default()
        };
        record_catalog(&mut report, &catalog);
        assert_eq!(report.catalog.tools, 1);
        assert_eq!(report.tools.len(), 1);
        assert_eq!(report.catalog.excluded.len(), 1);
        assert_eq!(report.catalog.excluded[0].name, "dropped");
        assert!(report.catalog.excluded[0].reason.contains("number"));
    }
}

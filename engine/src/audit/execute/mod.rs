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
mod passes;

use std::ops::ControlFlow;

use serde_json::Value;
use witness_model::audit::*;
use witness_wire::connection::Connection;
use witness_wire::session::{Catalog, Era, Handshake, Session};

use super::assemble::Processes;
use super::draft::Draft;
use super::observe::{ObservedSet, probe_objects};
use super::{AuditOptions, expand_strings, planned};
use crate::jail::{Isolation, Jail, LaunchError};
use crate::plan::{ArgSpec, Plan};
use calls::{Context, Runner};

/// How the server is reached: launched in the jail, or connected to where
/// it runs. Called once per process the session needs (era detection may
/// take two).
pub(super) type Connect<'a> = dyn FnMut(&mut Jail) -> Result<Connection, LaunchError> + 'a;

/// What the execute stage works on; everything but the options is borrowed
/// from the prepared audit.
pub(super) struct Stage<'a> {
    pub(super) jail: &'a mut Jail,
    pub(super) observed: &'a mut ObservedSet,
    pub(super) draft: &'a mut Draft,
    pub(super) options: &'a mut AuditOptions,
}

impl Stage<'_> {
    /// Runs the conversation as far as it can go.
    pub(super) fn execute(mut self, connect: &mut Connect<'_>) -> Processes {
        let mut session = match self.open(connect) {
            Ok(session) => session,
            Err(discarded) => return Processes::discarded(discarded),
        };
        if self.before_calls(&mut session).is_continue()
            && let ControlFlow::Continue(plan) = self.choose_plan()
        {
            let context = Context {
                settle: self.options.settle,
                probe: self.options.probe.as_ref(),
                stores: &self.jail.stores,
                events: &mut self.options.events,
            };
            // A break has been recorded in the draft; what was observed up
            // to it is still wrapped up.
            let _ = Runner::new(&mut session, self.observed, self.draft, context).run_plan(&plan);
            self.wrap_up(&mut session);
        }
        Processes::of(session)
    }

    /// Opens the session. `Err` with the processes tried, when none would do.
    fn open(&mut self, connect: &mut Connect<'_>) -> Result<Session, Vec<Connection>> {
        let opened = {
            let jail = &mut *self.jail;
            // The wire takes a launch failure as text; its text is the error's.
            let mut launch = || connect(jail).map_err(|e| e.to_string());
            Session::open(&mut launch, self.options.era, self.options.timeout)
        };
        record_isolation(&mut self.draft.report, self.jail.isolation());
        match opened {
            Ok((session, handshake)) => {
                record_handshake(&mut self.draft.report, &handshake);
                Ok(session)
            }
            Err((error, discarded)) => {
                self.draft.incomplete(format!("no session: {error}"));
                Err(discarded)
            }
        }
    }

    /// The startup snapshot, the baseline probes and the catalog.
    fn before_calls(&mut self, session: &mut Session) -> ControlFlow<()> {
        let mut startup = Vec::new();
        if let Err(e) = self.observed.snapshot(&mut startup) {
            self.draft
                .incomplete(format!("cannot observe the stores: {e}"));
            return ControlFlow::Break(());
        }
        self.draft.report.startup_effects = startup;
        // Objects present before any call: probed once, so a later revocation
        // can be judged against what was authority to begin with.
        self.draft.report.baseline_probes = probe_objects(
            self.options.probe.as_ref(),
            &self.jail.stores,
            self.observed.present(),
        );
        let catalog = match session.list_tools() {
            Ok(catalog) => catalog,
            Err(e) => {
                self.draft.incomplete(format!("tools/list failed: {e}"));
                return ControlFlow::Break(());
            }
        };
        record_catalog(&mut self.draft.report, &catalog);
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
                self.jail.isolation(),
                include_destructive,
            ),
        };
        self.draft.report.planner = PlannerEntry {
            origin: plan.origin.to_owned(),
            harvest_calls: Vec::new(),
            include_destructive,
            skipped,
        };
        let unknown = plan.unknown_tools(&self.draft.report.tools);
        if !unknown.is_empty() {
            self.draft.incomplete(format!(
                "the plan names tools the server does not list: {}",
                unknown.join(", ")
            ));
            return ControlFlow::Break(());
        }
        let jail = &*self.jail;
        ControlFlow::Continue(expand_literals(plan, &|text| jail.expand(text)))
    }

    /// After the calls: whatever arrived after the last call's
    /// post-snapshot, then the server's shutdown and what it changed.
    fn wrap_up(&mut self, session: &mut Session) {
        let mut late = Vec::new();
        if self.observed.snapshot(&mut late).is_ok()
            && let Some(last) = self.draft.report.calls.last_mut()
        {
            last.late_effects.extend(late);
        }
        let last_call = self.draft.last_call();
        self.observed
            .report_warnings(&mut self.draft.report.findings, last_call);
        session.server.shutdown();
        let mut shutdown = Vec::new();
        if self.observed.snapshot(&mut shutdown).is_ok() {
            self.draft.report.shutdown_effects = shutdown;
        }
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

fn record_isolation(report: &mut AuditReport, isolation: Option<&Isolation>) {
    if let Some(i) = isolation {
        report.isolation = IsolationEntry {
            level: i.level,
            detail: i.detail.clone(),
        };
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
        has_output_schema: raw.get("outputSchema").is_some(),
    }
}

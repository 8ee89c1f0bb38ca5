//! The notes of a case document: sentences generated from the audit, each
//! one a reader can check against the calls, effects and verdicts it names.
//! Nothing here is written by hand for a particular server.

use witness_model::audit::{AuditReport, CallRecord, CheckId, Effect, FindingKind, Verdict};
use witness_model::case::AnnotationSummary;

/// Sentences a reader can check against the audit, generated from it.
pub fn notes(report: &AuditReport) -> Vec<String> {
    let mut notes = Vec::new();
    declaration_notes(report, &mut notes);
    for call in &report.calls {
        call_notes(report, call, &mut notes);
    }
    silent_write_notes(report, &mut notes);
    undeclared_notes(report, &mut notes);
    scope_notes(report, &mut notes);
    trouble_notes(report, &mut notes);
    clock_notes(report, &mut notes);
    notes
}

/// Whether the audit concluded, what the server declares, and how each
/// declaration fared.
fn declaration_notes(report: &AuditReport, notes: &mut Vec<String>) {
    let a = AnnotationSummary::of(&report.tools);
    if !report.complete {
        notes.push(format!(
            "The audit did not conclude: {}. Nothing below is evidence against the server.",
            report
                .incomplete_reason
                .as_deref()
                .unwrap_or("no reason recorded")
        ));
    }
    if a.declared == 0 {
        notes.push(format!(
            "None of the {} tools declares any annotation, so EFF-01 and EFF-03 skip for every tool: there is no claim to hold to what was observed.",
            a.tools
        ));
    } else {
        notes.push(format!(
            "{} of {} tools declare annotations: {} readOnlyHint true, {} destructiveHint true, {} idempotentHint true.",
            a.declared, a.tools, a.read_only, a.destructive, a.idempotent
        ));
    }
    let ro_pass = verdict_tools(report, CheckId::Eff01, Verdict::Pass);
    if !ro_pass.is_empty() {
        notes.push(format!(
            "{} declared read-only ({}) caused no observed change: EFF-01 holds against the server's own declarations.",
            plural(ro_pass.len(), "tool", "tools"),
            list(&ro_pass)
        ));
    }
    for check in report.checks.iter().filter(|c| c.verdict == Verdict::Fail) {
        notes.push(format!(
            "{} fails for {}: {}.",
            check.id, check.tool, check.reason
        ));
    }
    let idem_pass = verdict_tools(report, CheckId::Eff03, Verdict::Pass);
    if !idem_pass.is_empty() {
        notes.push(format!(
            "Declared idempotent and repeated with identical arguments, {} changed nothing on the repeat: the claim held under an actual repeat, not by trust.",
            list(&idem_pass)
        ));
    }
}

/// What one call did in the declared store, when it is worth a sentence: a
/// create together with a delete (a move), an in-place update, an empty table.
fn call_notes(report: &AuditReport, call: &CallRecord, notes: &mut Vec<String>) {
    let inside: Vec<&Effect> = call
        .effects
        .iter()
        .filter(|e| !e.outside_stores())
        .collect();
    let with_op =
        |op: &str| -> Vec<&Effect> { inside.iter().copied().filter(|e| e.op == op).collect() };
    let creates = with_op("create");
    let deletes = with_op("delete");
    let updates = with_op("update");
    if !creates.is_empty() && !deletes.is_empty() {
        let eff02 = report
            .check(CheckId::Eff02, &call.tool)
            .map(|c| {
                format!(
                    "EFF-02 reads every target, so the delete is judged: {} ({})",
                    c.verdict.as_str(),
                    c.reason
                )
            })
            .unwrap_or_default();
        notes.push(format!(
            "Call {} ({}) was observed as {} together with {}. {eff02}.",
            call.id,
            call.tool,
            effect_list(&creates),
            effect_list(&deletes)
        ));
    }
    if !updates.is_empty() && creates.is_empty() && deletes.is_empty() {
        let kinds: Vec<String> = updates
            .iter()
            .map(|e| {
                let how = if e.is_destructive() {
                    "content changed or removed"
                } else {
                    "content only added"
                };
                format!("{} ({how})", e.object)
            })
            .collect();
        notes.push(format!(
            "Call {} ({}) changed objects in place: an update of {}, not a create or delete.",
            call.id,
            call.tool,
            list(&kinds)
        ));
    }
    for table in creates
        .iter()
        .filter_map(|e| e.object.strip_prefix("sqlite_master/table:"))
    {
        let prefix = format!("{table}/");
        if !inside.iter().any(|e| e.object.starts_with(&prefix)) {
            notes.push(format!(
                "Call {} ({}) created table {table} with no row in it; the observer sees it as the schema object sqlite_master/table:{table}, so an empty table is still an observed effect.",
                call.id, call.tool
            ));
        }
    }
}

/// Declared writes that, this time, changed nothing (a duplicate create, a
/// refused drop): the absence of an effect is an observation too.
fn silent_write_notes(report: &AuditReport, notes: &mut Vec<String>) {
    for call in report
        .calls
        .iter()
        .filter(|c| c.repeat_of.is_none() && c.succeeded() && c.effects.is_empty())
    {
        let declared_write = report
            .tool(&call.tool)
            .is_some_and(|t| t.hints.read_only == Some(false));
        if declared_write {
            notes.push(format!(
                "Call {} ({}), a tool declared to write, succeeded and changed no object.",
                call.id, call.tool
            ));
        }
    }
}

/// Tools that declare nothing yet changed the store (observation does not
/// depend on annotations), and destruction covered only by the default.
fn undeclared_notes(report: &AuditReport, notes: &mut Vec<String>) {
    for tool in report.tools.iter().filter(|t| !t.hints.declares_anything()) {
        let effects: Vec<&Effect> = report
            .calls
            .iter()
            .filter(|c| c.tool == tool.name)
            .flat_map(|c| c.effects.iter())
            .collect();
        if !effects.is_empty() {
            notes.push(format!(
                "{} declares nothing, and its calls made {}.",
                tool.name,
                effect_list(&effects)
            ));
        }
    }
    let destructive_undeclared: Vec<String> = report
        .checks
        .iter()
        .filter(|c| c.id == CheckId::Eff02 && c.verdict == Verdict::Pass)
        .filter(|c| c.reason.contains("default for an unset destructiveHint"))
        .map(|c| c.tool.clone())
        .collect();
    if !destructive_undeclared.is_empty() {
        notes.push(format!(
            "The deletes or overwrites of {} are covered by the specification's default for an unset destructiveHint (true): consistent, not a contradiction.",
            list(&destructive_undeclared)
        ));
    }
}

/// Whether anything changed outside the declared store, or before any call.
fn scope_notes(report: &AuditReport, notes: &mut Vec<String>) {
    let outside: Vec<String> = report
        .calls
        .iter()
        .flat_map(|c| {
            c.effects
                .iter()
                .filter(|e| e.outside_stores())
                .map(move |e| format!("call {} {} {}", c.id, e.op, e.object))
        })
        .collect();
    if outside.is_empty() {
        notes.push(
            "Nothing changed in the jail outside the declared store (HOME, TMPDIR, working directory) during any call: EFF-05 passes where a tool changed the store and skips where it changed nothing.".into(),
        );
    } else {
        notes.push(format!(
            "Changes outside the declared store: {}.",
            list(&outside)
        ));
    }
    if !report.startup_effects.is_empty() {
        let effects: Vec<&Effect> = report.startup_effects.iter().collect();
        notes.push(format!(
            "At start, before any call, the server made {}.",
            effect_list(&effects)
        ));
    }
}

/// Calls that failed, observer warnings, and what no probe could tell.
fn trouble_notes(report: &AuditReport, notes: &mut Vec<String>) {
    let failed: Vec<String> = report
        .calls
        .iter()
        .filter(|c| !c.succeeded())
        .map(|c| format!("call {} ({}, {})", c.id, c.tool, c.outcome.status.phrase()))
        .collect();
    if !failed.is_empty() {
        notes.push(format!(
            "{} did not succeed: {}.",
            plural(failed.len(), "call", "calls"),
            list(&failed)
        ));
    }
    let warnings = report
        .findings
        .iter()
        .filter(|f| f.kind == FindingKind::ObserverWarning)
        .count();
    if warnings > 0 {
        notes.push(format!(
            "The observer reported {} (see the audit's findings); none stopped the observation.",
            plural(warnings, "warning", "warnings")
        ));
    }
    if report.probe == "null" {
        notes.push(
            "No probe exercises this store's objects (NullProbe): authority is unknown and EFF-06 skips.".into(),
        );
    }
}

/// What the audit did with the times the server took from its clock: a
/// reader comparing two runs should know why they agree.
fn clock_notes(report: &AuditReport, notes: &mut Vec<String>) {
    let columns: Vec<String> = report
        .stores
        .iter()
        .flat_map(|s| s.clock_columns.iter().cloned())
        .collect();
    if !columns.is_empty() {
        notes.push(format!(
            "The server fills {} from the clock; the observer digests a time there as one stand-in, so those rows' digests do not depend on when the audit ran (and a change from one time to another there would not be seen).",
            list(&columns)
        ));
    }
    for clock in &report.volatile.clock {
        let mut tools: Vec<String> = Vec::new();
        for call in clock.at.iter().filter_map(|at| call_at(report, at)) {
            if !tools.contains(&call.tool) {
                tools.push(call.tool.clone());
            }
        }
        let place = if tools.is_empty() {
            "the server's frames".to_owned()
        } else {
            format!("the answers to {} and their frames", list(&tools))
        };
        notes.push(format!(
            "Times read from the server's clock ({}) appear {} in {place}; the audit writes each as {} and lists where under volatile.clock, so a rerun writes the same bytes.",
            clock.kind,
            plural(clock.count, "time", "times"),
            clock.token
        ));
    }
}

/// The call a JSON pointer into the audit (`/calls/7/response/...`) is in.
fn call_at<'a>(report: &'a AuditReport, pointer: &str) -> Option<&'a CallRecord> {
    let rest = pointer.strip_prefix("/calls/")?;
    let index = rest.split('/').next()?.parse::<usize>().ok()?;
    report.calls.get(index)
}

/// `a, b and c`.
fn list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn verdict_tools(report: &AuditReport, id: CheckId, verdict: Verdict) -> Vec<String> {
    report
        .checks
        .iter()
        .filter(|c| c.id == id && c.verdict == verdict)
        .map(|c| c.tool.clone())
        .collect()
}

fn effect_list(effects: &[&Effect]) -> String {
    let items: Vec<String> = effects
        .iter()
        .map(|e| format!("{} of {}", e.op, e.object))
        .collect();
    list(&items)
}

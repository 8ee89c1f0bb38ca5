//! **An output is replaced once what it was made from has changed.**
//! Exports, indexes, reports, renders and snapshots write a file made
//! from other things of the store: `export_project` writes
//! `<project>.export.json`, `generate_index` an `index.md` of a folder, a
//! reflection today's snapshot. The first call creates it, and the claim
//! that the tool destroys nothing passes on that call; asked again with
//! nothing changed, the tool writes the same bytes, and no store shows the
//! second write. What it replaces is seen only when the second call
//! writes something else: once the things it is made from have changed.
//! A plan that asks the exports last, as plans ask readers of what others
//! made, never meets that.
//!
//! So, after the last looks, a tool whose calls made or changed things
//! and never destroyed any, and that was not asked to make a named thing
//! of its own (a note under a fresh title, whose second call makes a
//! second note), is asked once more after a change the audit makes: the
//! latest call of another tool that did its job by making or changing
//! things, and deleted nothing, is asked again with fresh names (`-more`),
//! preferring one that changed a thing the output's call names (the
//! document a render was handed), then one handed a value the output's
//! call was handed too (the project both name), then one that made
//! something; a change in none of the output's stores, naming nothing it
//! names, is never chosen. Its effects are its own tool's, as any call's;
//! one change serves every output that chose it. The output is then sent
//! the very values it was sent before. When that call is confirmed, the
//! change is made once more before it (`-more-anew`), since without it
//! the confirmation only writes the same bytes again, and only an effect
//! the confirmation shows again confirms (`checks::confirm`).
//!
//! Example: `export_project {project, save_to_file: true}` created
//! `garden.export.json` and its repeat wrote it again unchanged; after
//! `add_chunk {project: garden, id: witness-add_chunk-more}` the export is
//! asked again and replaces the file's `exported` count and chunk list.

use witness_model::audit::{CallRecord, Op};

use crate::checks::did_its_job;
use crate::plan::{ArgSpec, PlanStep};

/// Whether `step` gives its tool a fresh name of a thing of its own (a
/// note's new title, a task's new id): a second call makes a second
/// thing, and replaces nothing. A fresh place for the output (`output`,
/// `destination`) is the name the output goes by, and is no such thing.
pub fn names_its_own(step: &PlanStep) -> bool {
    step.args
        .iter()
        .any(|(key, spec)| matches!(spec, ArgSpec::Fresh(_)) && !step.cues.new_place(key))
}

/// An output to ask for again after a change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refresh {
    pub tool: String,
    /// The tool's call whose values are sent again: its last that did its
    /// job and changed something.
    pub after: u32,
    /// The step number of that call.
    pub step: u32,
    /// The call of another tool asked again first, to change what the
    /// output is made from.
    pub change: u32,
    /// That call's tool.
    pub change_tool: String,
}

/// The outputs to ask for again, in the order of their first call, each
/// with the change to make before it. A refresh and its change are asked
/// whatever calls the tools' budgets have left (they count toward them,
/// as any call asked for itself does), as a confirmation is: each asks
/// again a call that did its job, once a refresh. `takes_away` says a
/// tool removes things (never an output, never a change); `names_its_own`
/// says a call's step gave the tool a fresh name of a thing of its own (a
/// second call makes a second thing rather than replacing the first).
/// Computed once: a refresh never makes another.
pub fn stale_outputs(
    calls: &[CallRecord],
    takes_away: &dyn Fn(&str) -> bool,
    names_its_own: &dyn Fn(&CallRecord) -> bool,
) -> Vec<Refresh> {
    super::late_look::planned_tools(calls)
        .into_iter()
        .filter(|tool| !takes_away(tool))
        .filter_map(|tool| refresh(calls, tool, takes_away, names_its_own))
        .collect()
}

fn refresh(
    calls: &[CallRecord],
    tool: &str,
    takes_away: &dyn Fn(&str) -> bool,
    names_its_own: &dyn Fn(&CallRecord) -> bool,
) -> Option<Refresh> {
    let mine: Vec<&CallRecord> = calls.iter().filter(|c| c.tool == tool).collect();
    // A plan file's calls carry no form: its author's, never asked unasked.
    if mine.iter().any(|c| c.form.is_none())
        || mine
            .iter()
            .any(|c| c.effects.iter().any(|e| e.is_destructive()))
    {
        return None;
    }
    let output = mine
        .iter()
        .rfind(|c| c.asked_for_itself() && did_its_job(c) && !c.effects.is_empty())?;
    if names_its_own(output) {
        return None;
    }
    let change = change_for(calls, output, takes_away)?;
    Some(Refresh {
        tool: tool.to_owned(),
        after: output.id,
        step: output.step,
        change: change.id,
        change_tool: change.tool.clone(),
    })
}

/// The call to ask again before `output`'s: of another tool, asked for
/// itself by the planner, that did its job by changing a store and deleted
/// nothing. Best is one that changed a thing `output` names (the document
/// a render was handed, a note in the folder an index was handed), then
/// one handed a value `output` was handed too, then one that made
/// something; the latest among equals.
fn change_for<'c>(
    calls: &'c [CallRecord],
    output: &CallRecord,
    takes_away: &dyn Fn(&str) -> bool,
) -> Option<&'c CallRecord> {
    let stores: Vec<&str> = output.effects.iter().map(|e| e.store.as_str()).collect();
    calls
        .iter()
        .filter(|c| {
            c.tool != output.tool
                && c.form.is_some()
                && c.asked_for_itself()
                && did_its_job(c)
                && !c.effects.is_empty()
                && !c.effects.iter().any(|e| e.op == Op::Delete)
                && !takes_away(&c.tool)
        })
        .filter_map(|c| {
            let touched = touches_what_it_names(c, output);
            let shared = shares_a_value(c, output);
            let same_store = c.effects.iter().any(|e| stores.contains(&e.store.as_str()));
            let made = c.effects.iter().any(|e| e.op == Op::Create);
            (touched || shared || same_store).then_some(((touched, shared, made, c.id), c))
        })
        .max_by_key(|(rank, _)| *rank)
        .map(|(_, c)| c)
}

/// Whether a change `change` made is to a thing `output` was handed by
/// name or path: an effect's object has a part of its path (or that part
/// without its extension) that is the last part of a value sent
/// (`file/Daily/a.md` for `folder: Daily`, `xlsx/budget.xlsx#A1` for
/// `path: /…/budget.xlsx`).
fn touches_what_it_names(change: &CallRecord, output: &CallRecord) -> bool {
    let named: Vec<&str> = output
        .arguments
        .iter()
        .filter(|a| !crate::plan::synth::is_content(&a.name.to_ascii_lowercase()))
        .filter_map(|a| a.value.as_str())
        .filter_map(|v| v.trim_end_matches('/').rsplit('/').next())
        .filter(|last| last.len() > 1 && *last != "..")
        .collect();
    change.effects.iter().any(|e| {
        // `kind/path#inside`: the kind, then the path's parts.
        let path = e.object.split('#').next().unwrap_or_default();
        path.split('/').skip(1).any(|part| {
            let stem = part.split('.').next().unwrap_or(part);
            named.iter().any(|n| *n == part || *n == stem)
        })
    })
}

/// Whether `a` and `b` were handed one text value (not content: a note's
/// text names nothing) under any parameters.
fn shares_a_value(a: &CallRecord, b: &CallRecord) -> bool {
    let names = |c: &CallRecord| -> Vec<String> {
        c.arguments
            .iter()
            .filter(|x| !crate::plan::synth::is_content(&x.name.to_ascii_lowercase()))
            .filter_map(|x| x.value.as_str())
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect()
    };
    let theirs = names(b);
    names(a).iter().any(|v| theirs.contains(v))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn call(
        id: u32,
        tool: &str,
        args: &[(&str, &str)],
        status: &str,
        effects: &[(&str, &str)],
    ) -> CallRecord {
        let effects: Vec<Value> = effects
            .iter()
            .map(|(object, op)| json!({"store": "s", "object": object, "op": op}))
            .collect();
        let arguments: Vec<Value> = args
            .iter()
            .map(|(name, value)| json!({"name": name, "value": value, "source": "synthesized"}))
            .collect();
        serde_json::from_value(json!({
            "id": id, "step": id, "tool": tool, "form": "create",
            "arguments": arguments, "outcome": {"status": status}, "effects": effects,
        }))
        .expect("a call record")
    }

    fn never(_: &str) -> bool {
        false
    }

    fn unnamed(_: &CallRecord) -> bool {
        false
    }

    #[test]
    fn an_export_is_asked_again_after_a_change_to_what_it_exports() {
        let calls = vec![
            call(
                1,
                "create_project",
                &[("name", "garden")],
                "ok",
                &[("file/garden.json", "create")],
            ),
            call(
                2,
                "add_chunk",
                &[("project", "garden"), ("id", "c1")],
                "ok",
                &[("json/garden.json#/chunks/0", "create")],
            ),
            call(
                3,
                "add_note",
                &[("title", "n")],
                "ok",
                &[("file/n.md", "create")],
            ),
            call(
                4,
                "export_project",
                &[("project", "garden")],
                "ok",
                &[("file/garden.export.json", "create")],
            ),
        ];
        let refreshes = stale_outputs(&calls, &never, &unnamed);
        let export = refreshes
            .iter()
            .find(|r| r.tool == "export_project")
            .expect("the export is refreshed");
        // The call handed the same project, though a later call made a note.
        assert_eq!((export.after, export.change), (4, 2));
        assert_eq!(export.change_tool, "add_chunk");
    }

    #[test]
    fn a_tool_that_destroyed_failed_or_named_its_own_thing_is_left_alone() {
        let base = vec![
            call(
                1,
                "add_chunk",
                &[("project", "garden")],
                "ok",
                &[("file/a.json", "create")],
            ),
            call(
                2,
                "render",
                &[("project", "garden")],
                "ok",
                &[("file/page.png", "create")],
            ),
        ];
        assert_eq!(
            stale_outputs(&base, &never, &unnamed)
                .iter()
                .map(|r| r.tool.as_str())
                .collect::<Vec<_>>(),
            vec!["add_chunk", "render"],
            "each is the other's change"
        );
        // Its calls replaced something: the claim already met its form.
        let mut replaced = base.clone();
        replaced[1].effects[0].op = Op::Update;
        assert!(
            !stale_outputs(&replaced, &never, &unnamed)
                .iter()
                .any(|r| r.tool == "render")
        );
        // It never did its job: nothing to refresh.
        let mut failed = base.clone();
        failed[1].outcome.status = witness_model::audit::CallStatus::ToolError;
        assert!(
            !stale_outputs(&failed, &never, &unnamed)
                .iter()
                .any(|r| r.tool == "render")
        );
        // Asked to make a thing under a name of its own.
        let named = |c: &CallRecord| c.tool == "render";
        assert!(
            !stale_outputs(&base, &never, &named)
                .iter()
                .any(|r| r.tool == "render")
        );
        // Its budget spent: a refresh asks again a call that did its job,
        // as a confirmation does.
        let mut spent = base.clone();
        for id in 3..=5 {
            spent.push(call(
                id,
                "render",
                &[("project", "garden")],
                "tool-error",
                &[],
            ));
        }
        assert!(
            stale_outputs(&spent, &never, &unnamed)
                .iter()
                .any(|r| r.tool == "render" && r.after == 2)
        );
    }

    #[test]
    fn a_change_never_deletes_and_never_comes_from_a_remover() {
        let calls = vec![
            call(
                1,
                "prune",
                &[("project", "garden")],
                "ok",
                &[("file/a.json", "update")],
            ),
            call(
                2,
                "drop_chunk",
                &[("project", "garden")],
                "ok",
                &[("file/b.json", "delete")],
            ),
            call(
                3,
                "export",
                &[("project", "garden")],
                "ok",
                &[("file/garden.export.json", "create")],
            ),
        ];
        let removers = |tool: &str| tool == "prune";
        let refreshes = stale_outputs(&calls, &removers, &unnamed);
        assert!(
            refreshes.iter().all(|r| r.tool != "export"),
            "no change left to make: {refreshes:?}"
        );
        let refreshes = stale_outputs(&calls, &never, &unnamed);
        let export = refreshes.iter().find(|r| r.tool == "export");
        assert_eq!(export.map(|r| r.change), Some(1));
    }

    #[test]
    fn a_change_to_the_very_thing_an_output_names_comes_first() {
        let calls = vec![
            call(
                1,
                "edit_document",
                &[("path", "/s/report.docx")],
                "ok",
                &[("file/report.docx", "update")],
            ),
            call(
                2,
                "create_document",
                &[("out", "/s")],
                "ok",
                &[("file/document.docx", "create")],
            ),
            call(
                3,
                "write_note",
                &[("path", "Daily/a.md")],
                "ok",
                &[("file/Daily/a.md", "create")],
            ),
            call(
                4,
                "render",
                &[("docx_path", "/s/report.docx")],
                "ok",
                &[("file/screens/page_000.png", "create")],
            ),
            call(
                5,
                "generate_index",
                &[("folder", "Daily")],
                "ok",
                &[("file/Daily/index.md", "create")],
            ),
        ];
        let mut calls = calls;
        calls[0].effects[0].overwrite = Some(false);
        let refreshes = stale_outputs(&calls, &never, &unnamed);
        let change = |tool: &str| {
            refreshes
                .iter()
                .find(|r| r.tool == tool)
                .map(|r| r.change_tool.as_str())
        };
        assert_eq!(change("render"), Some("edit_document"));
        assert_eq!(change("generate_index"), Some("write_note"));
    }

    #[test]
    fn without_a_shared_value_the_latest_maker_in_the_same_store_is_the_change() {
        let mut calls = vec![
            call(
                1,
                "write_note",
                &[("path", "a.md")],
                "ok",
                &[("file/a.md", "create")],
            ),
            call(
                2,
                "tag_note",
                &[("path", "b.md")],
                "ok",
                &[("file/b.md", "update")],
            ),
            call(
                3,
                "generate_index",
                &[],
                "ok",
                &[("file/index.md", "create")],
            ),
        ];
        calls[1].effects[0].overwrite = Some(false);
        let refreshes = stale_outputs(&calls, &never, &unnamed);
        let index = refreshes.iter().find(|r| r.tool == "generate_index");
        assert_eq!(index.map(|r| r.change), Some(1), "a maker before an update");
        // A change in another store only is none.
        let mut elsewhere = calls.clone();
        for c in &mut elsewhere[..2] {
            c.effects[0].store = "other".into();
        }
        assert!(
            !stale_outputs(&elsewhere, &never, &unnamed)
                .iter()
                .any(|r| r.tool == "generate_index")
        );
    }
}

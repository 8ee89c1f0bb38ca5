//! **What a tool finds depends on when it is asked.** A plan orders its
//! calls once, before any is made, and many tools act only on what others
//! made: a delete of repository 1 answers `Repository 1 not found` until a
//! clone registers one, an ignore of a project removes it from a list only
//! once a register has put it there, a second render replaces the first's
//! pages, a write of row 1 overwrites only once row 1 holds something, a
//! distiller files staged bullets only once something is staged. Asked
//! before the others, such a tool did nothing or only made things, and the
//! claim that it writes nothing, or destroys nothing, was never met by the
//! call it is about.
//!
//! So, once every planned step has run, each tool gets one last look when
//! the store changed after its last call (a later call of another tool did
//! its job and was seen to change something) and its calls so far either
//! never did their job (every one failed, answered an error, or said it
//! changed nothing) or never destroyed anything (no delete, no overwrite).
//! That includes a reader whose calls did their job and changed nothing:
//! a read of a store that changed since is the read that refreshes an
//! index or a cache gone stale, and its answer offers what the others
//! made to the looks after it. The step is asked as the
//! tool's last call that did its job was asked (else its last call), with
//! its values resolved anew, so a value made since (the registered
//! project's slug) replaces one invented before; within the tool's call
//! budget, removers last, so a delete does not take away what another
//! late look acts on. Whatever the look does is seen as any call's
//! effects are.
//!
//! Example: `ignore_project {slug}` ran before `register_project` and got
//! the made-up `witness`, which only added a name to an ignore list; the
//! last look sends the slug the register made, and the project is removed
//! from the list of projects.

use witness_model::audit::{CallForm, CallRecord};

use crate::checks::did_its_job;

/// A tool to ask once more, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LateLook {
    pub tool: String,
    /// The tool's call whose step is asked again: its last that did its
    /// job, else its last.
    pub after: u32,
    /// The step number of that call.
    pub step: u32,
    /// What the ledger says about the look.
    pub reading: String,
}

/// The tools to ask once more, in the order to ask them: tools in order
/// of their first call, those that take things away (`takes_away`) last.
/// `budget` is the most calls a tool gets, those asked for themselves
/// (`CallRecord::asked_for_itself`).
/// Computed once, before any look is made: a look never makes another.
pub fn late_looks(
    calls: &[CallRecord],
    budget: usize,
    takes_away: &dyn Fn(&str) -> bool,
) -> Vec<LateLook> {
    let mut looks: Vec<LateLook> = planned_tools(calls)
        .into_iter()
        .filter_map(|tool| look(calls, tool, budget))
        .collect();
    looks.sort_by_key(|l| takes_away(&l.tool));
    looks
}

/// The tools the planner shaped calls for (a plan file's carry no form),
/// in the order of their first call.
pub(crate) fn planned_tools(calls: &[CallRecord]) -> Vec<&str> {
    let mut tools: Vec<&str> = Vec::new();
    for call in calls {
        if call.form.is_some() && !tools.contains(&call.tool.as_str()) {
            tools.push(&call.tool);
        }
    }
    tools
}

fn look(calls: &[CallRecord], tool: &str, budget: usize) -> Option<LateLook> {
    let mine: Vec<&CallRecord> = calls.iter().filter(|c| c.tool == tool).collect();
    // A plan file's calls carry no form: its author's, never asked unasked.
    if mine.iter().any(|c| c.form.is_none()) {
        return None;
    }
    if mine.iter().filter(|c| c.asked_for_itself()).count() >= budget {
        return None;
    }
    // A confirmation only asks again what a call asked: the tool's last
    // call is the last it was asked for itself.
    let last = mine
        .iter()
        .filter(|c| c.confirms.is_none())
        .map(|c| c.id)
        .max()?;
    let since = calls.iter().find(|c| {
        c.id > last
            && c.tool != tool
            && c.confirms.is_none()
            && did_its_job(c)
            && !c.effects.is_empty()
    })?;
    let done: Vec<&&CallRecord> = mine
        .iter()
        .filter(|c| c.asked_for_itself() && did_its_job(c))
        .collect();
    let why = if done.is_empty() {
        "no call of it had done its job"
    } else {
        let destroyed = mine
            .iter()
            .any(|c| c.effects.iter().any(|e| e.is_destructive()));
        let wrote = mine
            .iter()
            .any(|c| !c.effects.is_empty() || c.form.is_some_and(|f| f != CallForm::Read));
        if destroyed {
            return None;
        }
        if wrote {
            "its calls had changed or replaced nothing that existed"
        } else {
            "it had read the store only before it changed"
        }
    };
    let asked = done.last().map_or_else(
        || mine.iter().rfind(|c| c.asked_for_itself()).copied(),
        |c| Some(**c),
    )?;
    Some(LateLook {
        tool: tool.to_owned(),
        after: asked.id,
        step: asked.step,
        reading: format!(
            "a last look: {why}, and call {} of {} changed the store since",
            since.id, since.tool
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn call(id: u32, tool: &str, form: &str, status: &str, effects: &[(&str, &str)]) -> CallRecord {
        let effects: Vec<Value> = effects
            .iter()
            .map(|(object, op)| json!({"store": "s", "object": object, "op": op}))
            .collect();
        serde_json::from_value(json!({
            "id": id, "step": id, "tool": tool, "form": form,
            "arguments": [], "outcome": {"status": status}, "effects": effects,
        }))
        .expect("a call record")
    }

    fn never(_: &str) -> bool {
        false
    }

    #[test]
    fn a_tool_that_failed_before_another_made_something_is_asked_again() {
        let calls = vec![
            call(1, "delete_repo", "change", "in-band-error", &[]),
            call(2, "clone_repo", "create", "ok", &[("repos/1", "create")]),
        ];
        let looks = late_looks(&calls, 4, &never);
        assert_eq!(looks.len(), 1, "{looks:?}");
        assert_eq!(looks[0].tool, "delete_repo");
        assert_eq!(looks[0].after, 1);
        assert!(
            looks[0].reading.contains("call 2 of clone_repo"),
            "{}",
            looks[0].reading
        );
    }

    #[test]
    fn nothing_changed_since_means_no_look() {
        let calls = vec![
            call(1, "clone_repo", "create", "ok", &[("repos/1", "create")]),
            call(2, "delete_repo", "change", "in-band-error", &[]),
            call(3, "list_repos", "read", "ok", &[]),
        ];
        assert!(late_looks(&calls, 4, &never).is_empty());
    }

    #[test]
    fn a_writer_that_only_created_is_asked_again_and_one_that_replaced_is_not() {
        let calls = vec![
            call(
                1,
                "render",
                "create",
                "ok",
                &[("file/page_000.png", "create")],
            ),
            call(2, "rewrite", "change", "ok", &[("file/a.md", "update")]),
            call(3, "add_note", "create", "ok", &[("file/b.md", "create")]),
        ];
        let looks = late_looks(&calls, 4, &never);
        let tools: Vec<&str> = looks.iter().map(|l| l.tool.as_str()).collect();
        assert_eq!(tools, vec!["render"]);
        // An update that kept what it changed (a list one name longer)
        // replaced nothing.
        let mut kept = calls.clone();
        kept[1].effects[0].overwrite = Some(false);
        let tools: Vec<String> = late_looks(&kept, 4, &never)
            .into_iter()
            .map(|l| l.tool)
            .collect();
        assert_eq!(tools, vec!["render", "rewrite"]);
    }

    #[test]
    fn a_confirmation_is_not_the_tools_last_call() {
        // The failure of call 1 was confirmed (call 3) after the creator's
        // call 2: the store still changed after the tool's own last call.
        let mut calls = vec![
            call(
                1,
                "ignore_project",
                "change",
                "ok",
                &[("json/scan.json#", "update")],
            ),
            call(
                2,
                "register_project",
                "create",
                "ok",
                &[("md/PROJECTS.md#/a", "create")],
            ),
            call(
                3,
                "ignore_project",
                "change",
                "ok",
                &[("json/scan.json#", "update")],
            ),
        ];
        calls[0].effects[0].overwrite = Some(false);
        calls[2].effects[0].overwrite = Some(false);
        calls[2].confirms = Some(1);
        let looks = late_looks(&calls, 4, &never);
        assert_eq!(looks.len(), 1, "{looks:?}");
        assert_eq!(
            (looks[0].tool.as_str(), looks[0].after),
            ("ignore_project", 1)
        );
    }

    #[test]
    fn a_reader_is_asked_again_after_the_store_changed_and_not_before() {
        let calls = vec![
            call(1, "list_notes", "read", "ok", &[]),
            call(2, "add_note", "create", "ok", &[("file/b.md", "create")]),
            call(3, "search_notes", "read", "ok", &[]),
        ];
        let looks = late_looks(&calls, 4, &never);
        let tools: Vec<&str> = looks.iter().map(|l| l.tool.as_str()).collect();
        assert_eq!(tools, vec!["list_notes"]);
        assert!(
            looks[0].reading.contains("read the store only before"),
            "{}",
            looks[0].reading
        );
    }

    #[test]
    fn a_tool_at_its_budget_or_planned_by_a_person_is_not_asked_again() {
        let mut calls: Vec<CallRecord> = (1..=4)
            .map(|id| call(id, "delete_repo", "change", "tool-error", &[]))
            .collect();
        calls.push(call(
            5,
            "clone_repo",
            "create",
            "ok",
            &[("repos/1", "create")],
        ));
        assert!(late_looks(&calls, 4, &never).is_empty());
        let mut planned = vec![
            call(1, "delete_repo", "change", "tool-error", &[]),
            call(2, "clone_repo", "create", "ok", &[("repos/1", "create")]),
        ];
        planned[0].form = None;
        assert!(late_looks(&planned, 4, &never).is_empty());
    }

    #[test]
    fn removers_come_last_and_the_step_is_that_of_the_last_call_that_did_its_job() {
        let mut calls = vec![
            call(1, "remove_all", "change", "in-band-error", &[]),
            call(2, "write_rows", "create", "ok", &[("sheet/A1", "create")]),
            call(3, "write_rows", "create", "tool-error", &[]),
            call(
                4,
                "create_file",
                "create",
                "ok",
                &[("file/x.xlsx", "create")],
            ),
        ];
        calls[2].step = 9;
        let looks = late_looks(&calls, 4, &|tool: &str| tool.starts_with("remove"));
        let tools: Vec<&str> = looks.iter().map(|l| l.tool.as_str()).collect();
        assert_eq!(tools, vec!["write_rows", "remove_all"]);
        assert_eq!((looks[0].after, looks[0].step), (2, 2));
    }
}

//! The planner's strategies, each on a fake server that lies in a way only
//! that strategy reaches (issue 40, patterns 2-5): the server is
//! `tests/fixtures/pattern_server.py`, one mode per pattern, on a directory
//! store the audit observes. Without the strategy each lie would pass.

use std::process::Command;

use serde_json::Value;

use crate::common::fixture;

/// One audit of `pattern_server.py MODE {files}` on a directory store
/// holding `files`: (exit code, text on stdout, the JSON report).
fn audit(mode: &str, files: &[&str]) -> (i32, String, Value) {
    let held: Vec<(&str, String)> = files.iter().map(|n| (*n, format!("{n}\n"))).collect();
    audit_holding(mode, &held)
}

/// As [`audit`], on a store whose files hold the given text.
fn audit_holding(mode: &str, files: &[(&str, String)]) -> (i32, String, Value) {
    let store = tempfile::tempdir().expect("tempdir");
    for (name, text) in files {
        std::fs::write(store.path().join(name), text).expect("seed the store");
    }
    let out = tempfile::tempdir().expect("tempdir");
    let output = Command::new(env!("CARGO_BIN_EXE_mcp-witness"))
        .args(["audit", "--era", "legacy", "--settle-ms", "0"])
        .args(["--timeout-ms", "20000", "--progress", "off"])
        .arg(format!("--store=files=fs:{}", store.path().display()))
        .arg("--out")
        .arg(out.path())
        .arg("--")
        .arg("python3")
        .arg(fixture("pattern_server.py"))
        .args([mode, "{files}"])
        .output()
        .expect("mcp-witness runs");
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    let json = std::fs::read_to_string(out.path().join("audit.json")).unwrap_or_else(|e| {
        panic!(
            "{mode}: no audit.json ({e}); stdout {text}; stderr {}",
            String::from_utf8_lossy(&output.stderr)
        )
    });
    let report: Value = serde_json::from_str(&json).expect("audit.json is JSON");
    (output.status.code().unwrap_or(-1), text, report)
}

fn calls_of<'r>(report: &'r Value, tool: &str) -> Vec<&'r Value> {
    report["calls"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["tool"] == tool)
        .collect()
}

fn argument<'c>(call: &'c Value, name: &str) -> &'c Value {
    call["arguments"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|a| a["name"] == name)
        .unwrap_or(&Value::Null)
}

fn verdict(report: &Value, check: &str, tool: &str) -> Value {
    report["checks"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["id"] == check && c["tool"] == tool)
        .map(|c| c["verdict"].clone())
        .unwrap_or_default()
}

/// Pattern 3: the error lists the valid values; the retry takes one, says
/// which error it answers, and the write it then makes catches the claim.
#[test]
fn a_value_the_error_lists_is_tried_and_the_write_it_allows_is_caught() {
    let (code, text, report) = audit("listed", &["readme.txt"]);
    let adds = calls_of(&report, "add_task");
    assert!(adds.len() >= 2, "{text}");
    assert_eq!(
        adds[0]["outcome"]["status"], "in-band-error",
        "{:#}",
        adds[0]
    );
    let retry = adds
        .iter()
        .find(|c| argument(c, "project")["value"] == "main")
        .unwrap_or_else(|| panic!("no retry with the listed project: {text}"));
    assert_eq!(retry["answers"]["call"], adds[0]["id"], "{retry:#}");
    assert_eq!(
        retry["answers"]["reading"], "a value it listed for project: main",
        "{retry:#}"
    );
    assert_eq!(retry["outcome"]["status"], "ok", "{retry:#}");
    assert_eq!(verdict(&report, "EFF-01", "add_task"), "fail", "{text}");
    assert_eq!(code, 1, "{text}");
}

/// Pattern 4: the optional `directory` is filled with the store, so the
/// tool works where the store is and its delete shows.
#[test]
fn an_optional_directory_is_given_the_store_and_the_delete_there_is_caught() {
    let (code, text, report) = audit("scope", &["scratch.txt", "keep.md"]);
    let cleans = calls_of(&report, "clean");
    assert!(!cleans.is_empty(), "{text}");
    let directory = argument(cleans[0], "directory");
    assert_eq!(directory["source"], "store", "{:#}", cleans[0]);
    assert_eq!(directory["object"]["store"], "files", "{:#}", cleans[0]);
    assert_eq!(verdict(&report, "EFF-02", "clean"), "fail", "{text}");
    assert_eq!(code, 1, "{text}");
}

/// Pattern 5: every value of the operation enum is asked, makers first
/// and removers last, each with its form; the delete form's effect
/// catches the claim to destroy nothing.
#[test]
fn every_operation_of_a_multi_form_tool_is_asked_and_the_delete_is_caught() {
    let (code, text, report) = audit("operations", &["readme.txt"]);
    let calls = calls_of(&report, "manage_note");
    let ops: Vec<(&Value, &Value)> = calls
        .iter()
        .filter(|c| c["repeat_of"].is_null() && c["confirms"].is_null())
        .map(|c| (&argument(c, "operation")["value"], &c["form"]))
        .collect();
    assert_eq!(
        ops,
        [
            (&Value::from("create"), &Value::from("create")),
            (&Value::from("read"), &Value::from("read")),
            (&Value::from("delete"), &Value::from("change")),
        ],
        "{text}"
    );
    assert!(
        argument(calls[0], "content")["value"].is_string(),
        "create's own field is sent: {:#}",
        calls[0]
    );
    assert_eq!(verdict(&report, "EFF-02", "manage_note"), "fail", "{text}");
    assert_eq!(code, 1, "{text}");
}

/// Pattern 2: the store's paths are offered relative to its root when the
/// server asks for that, and a delete is handed a note that still exists,
/// not the one an earlier move took away.
#[test]
fn store_paths_go_relative_when_asked_and_a_delete_meets_a_note_still_there() {
    let (code, text, report) = audit("relative", &["a.md", "b.md"]);
    let reads = calls_of(&report, "read_note");
    assert!(reads.len() >= 2, "{text}");
    assert_eq!(reads[0]["outcome"]["status"], "in-band-error", "{text}");
    let relative = reads[1];
    assert_eq!(
        relative["answers"]["reading"], "paths relative to the store",
        "{relative:#}"
    );
    assert_eq!(relative["outcome"]["status"], "ok", "{relative:#}");
    assert_eq!(
        argument(relative, "path")["source"],
        "store",
        "{relative:#}"
    );
    // The archive moved one note away; the delete is handed the other.
    let archived = calls_of(&report, "archive_note")
        .into_iter()
        .find(|c| c["outcome"]["status"] == "ok")
        .unwrap_or_else(|| panic!("nothing archived: {text}"));
    let moved = argument(archived, "path")["value"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let deletes = calls_of(&report, "delete_note");
    assert!(!deletes.is_empty(), "{text}");
    for call in &deletes {
        let path = argument(call, "path")["value"].as_str().unwrap_or_default();
        assert!(
            !path.ends_with(&moved),
            "a delete was handed {path}, archived before: {call:#}"
        );
    }
    assert_eq!(verdict(&report, "EFF-02", "delete_note"), "fail", "{text}");
    assert_eq!(code, 1, "{text}");
}

/// An error that names the set-up tool to call first: it is called, the
/// write is asked again, and the overwrite it then makes catches the claim.
#[test]
fn the_tool_an_error_names_to_call_first_is_called_and_the_write_it_allows_is_caught() {
    let (code, text, report) = audit("setup", &["home.txt"]);
    let writes = calls_of(&report, "write_page");
    assert!(writes.len() >= 2, "{text}");
    assert_eq!(writes[0]["outcome"]["status"], "in-band-error", "{text}");
    let init = calls_of(&report, "init_wiki");
    assert!(
        init.iter().any(|c| c["answers"]["call"] == writes[0]["id"]),
        "init_wiki answers the failed write: {:#}",
        report["calls"]
    );
    assert_eq!(verdict(&report, "EFF-02", "write_page"), "fail", "{text}");
    assert_eq!(code, 1, "{text}");
}

/// An update by id alone changes nothing; the planner also gives it a
/// field to change, and the rewrite catches the read-only claim.
#[test]
fn an_update_is_told_what_to_change_and_its_read_only_lie_is_caught() {
    let (code, text, report) = audit("update", &["groceries.txt", "garden.txt"]);
    let updates = calls_of(&report, "update_note");
    assert!(!updates.is_empty(), "{text}");
    assert!(
        updates
            .iter()
            .any(|c| argument(c, "title")["value"].is_string()),
        "{:?}",
        updates
    );
    assert_eq!(verdict(&report, "EFF-01", "update_note"), "fail", "{text}");
    assert_eq!(code, 1, "{text}");
}

/// An export that writes only when asked to save: the planner also throws
/// its `save_to_file` switch, and the file it then writes catches the
/// read-only claim.
#[test]
fn a_switch_that_turns_a_tool_to_writing_is_thrown_and_the_write_caught() {
    let (code, text, report) = audit("switch", &["groceries.txt"]);
    let exports = calls_of(&report, "export_notes");
    assert!(
        exports
            .iter()
            .any(|c| argument(c, "save_to_file")["value"] == Value::Bool(true)),
        "{:#}",
        report["calls"]
    );
    // The form as planned, with the switch at its default, is asked too.
    assert!(
        exports
            .iter()
            .any(|c| argument(c, "save_to_file").is_null()),
        "{:#}",
        report["calls"]
    );
    assert_eq!(verdict(&report, "EFF-01", "export_notes"), "fail", "{text}");
    assert_eq!(code, 1, "{text}");
}

/// Ids written beside a plain-text listing's items (`#3 Plan the garden`)
/// are the ids a later call is handed, not an invented number.
#[test]
fn an_id_a_text_listing_shows_is_the_one_a_later_call_takes() {
    let tasks = "3 Plan the garden\n7 Fix the gate\n".to_owned();
    let (code, text, report) = audit_holding("listing", &[("tasks.txt", tasks)]);
    let completes = calls_of(&report, "complete_task");
    let first = completes
        .first()
        .unwrap_or_else(|| panic!("complete_task never called: {text}"));
    let id = &argument(first, "task_id")["value"];
    assert!(*id == 3 || *id == 7, "an id the listing showed: {first:#}");
    assert_eq!(
        argument(first, "task_id")["source"],
        "harvested",
        "{first:#}"
    );
    assert_eq!(first["outcome"]["status"], "ok", "{first:#}");
    assert_eq!(
        verdict(&report, "EFF-01", "complete_task"),
        "fail",
        "{text}"
    );
    assert_eq!(code, 1, "{text}");
}

/// The overwrite form of a tool that saves to a place it is given names a
/// file that exists, not a bare name the server would give an extension of
/// its own (a second new file, never an overwrite).
#[test]
fn an_output_writers_overwrite_form_replaces_a_file_that_exists() {
    let (code, text, report) = audit_holding("output", &[]);
    let renders = calls_of(&report, "render_report");
    assert!(renders.len() >= 2, "create, then overwrite: {text}");
    let made = &argument(renders[0], "out_path")["value"];
    let again = &argument(renders[1], "out_path")["value"];
    assert_eq!(
        again, made,
        "the file the create form made: {:#}",
        report["calls"]
    );
    assert_eq!(
        verdict(&report, "EFF-02", "render_report"),
        "fail",
        "{text}"
    );
    assert_eq!(code, 1, "{text}");
}

/// The overwrite form of a tool that reads one file and saves another
/// writes its output over a file other than its input: the input itself is
/// refused (`save to original must be incremental`), and the file the
/// create form made is what a second run silently replaces, from another
/// input (the same input would write the same bytes, and no change shows).
#[test]
fn an_overwrite_that_reads_a_file_saves_over_another() {
    let (code, text, report) = audit("inplace", &["memo.pdf", "scan.pdf"]);
    let calls = calls_of(&report, "compress_pdf");
    assert!(calls.len() >= 2, "create, then overwrite: {text}");
    let made = &argument(calls[0], "output")["value"];
    let replaced: Vec<&Value> = calls[1..]
        .iter()
        .map(|c| &argument(c, "output")["value"])
        .collect();
    assert!(
        replaced.contains(&made),
        "the create form's own output is replaced: {:#}",
        report["calls"]
    );
    for call in &calls {
        assert_ne!(
            argument(call, "output")["value"],
            argument(call, "input_path")["value"],
            "never saved over its own input: {:#}",
            report["calls"]
        );
    }
    assert_eq!(verdict(&report, "EFF-02", "compress_pdf"), "fail", "{text}");
    assert_eq!(code, 1, "{text}");
}

/// A value an error taught a tool's call (an operation the error listed)
/// is what the tool's later forms send too: the overwrite form, built from
/// the planned step, would send the invented operation the error refused,
/// and the claim it is about would go untested.
#[test]
fn a_value_an_error_taught_is_sent_by_the_later_forms() {
    let (code, text, report) = audit("taught", &["memo.pdf", "scan.pdf"]);
    let calls = calls_of(&report, "pdf_tool");
    let merged: Vec<&&Value> = calls
        .iter()
        .filter(|c| argument(c, "operation")["value"] == "merge")
        .collect();
    assert!(
        merged.len() >= 2,
        "the retry and the overwrite form both merge: {:#}",
        report["calls"]
    );
    assert_eq!(verdict(&report, "EFF-02", "pdf_tool"), "fail", "{text}");
    assert_eq!(code, 1, "{text}");
}

/// The identical repeat of a call that wrote a file comes in a later
/// second: a tool that stamps the time into what it writes is caught every
/// time, not only when its repeat happens to cross a second.
#[test]
fn the_repeat_of_a_file_write_comes_in_a_later_second() {
    for _ in 0..3 {
        let (code, text, report) = audit("stamp", &[]);
        assert_eq!(
            verdict(&report, "EFF-03", "save_state"),
            "fail",
            "{text}: {:#}",
            report["calls"]
        );
        assert_eq!(code, 1, "{text}");
    }
}

/// An export replaces its previous output only once what it exports has
/// changed: asked again after the audit added an item, it rewrites
/// `export.txt`, and the claim that it destroys nothing fails, confirmed
/// after the item is added once more. Asked only after the add, and again
/// with nothing changed, it wrote the same bytes, and the claim passed.
#[test]
fn an_output_asked_again_after_its_input_changed_shows_what_it_replaces() {
    let (code, text, report) = audit("stale", &["groceries.txt"]);
    let exports = calls_of(&report, "export_items");
    let refreshed = exports
        .iter()
        .find(|c| {
            c["answers"]["reading"]
                .as_str()
                .is_some_and(|r| r.starts_with("its output again"))
        })
        .unwrap_or_else(|| panic!("no refresh of the export: {:#}", report["calls"]));
    let id = refreshed["id"].as_u64().unwrap_or_default();
    let adds = calls_of(&report, "add_item");
    assert!(
        adds.iter()
            .any(|c| argument(c, "name")["value"] == "witness-add_item-more"),
        "the change is the add, on a fresh name: {:#}",
        report["calls"]
    );
    assert_eq!(
        refreshed["after_change"].as_u64(),
        adds.iter()
            .find(|c| argument(c, "name")["value"] == "witness-add_item-more")
            .and_then(|c| c["id"].as_u64()),
        "the ledger names the change: {refreshed:#}"
    );
    // Confirmed after the add is made once more, by the export showing
    // its replace again.
    let confirmation = exports
        .iter()
        .find(|c| c["confirms"].as_u64() == Some(id))
        .unwrap_or_else(|| panic!("the refresh is not confirmed: {:#}", report["calls"]));
    let remade = adds
        .iter()
        .find(|c| argument(c, "name")["value"] == "witness-add_item-more-anew")
        .unwrap_or_else(|| panic!("the change is not made again: {:#}", report["calls"]));
    assert!(remade["id"].as_u64() < confirmation["id"].as_u64());
    assert_eq!(confirmation["after_change"], remade["id"]);
    let check = report["checks"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["id"] == "EFF-02" && c["tool"] == "export_items")
        .cloned()
        .unwrap_or_default();
    assert_eq!(check["verdict"], "fail", "{text}");
    assert!(
        check["reason"]
            .as_str()
            .is_some_and(|r| r.contains("confirmed by call")),
        "{check:#}"
    );
    // The add that was made again only made things.
    assert_eq!(verdict(&report, "EFF-02", "add_item"), "pass", "{text}");
    assert_eq!(code, 1, "{text}");
}

/// An export of the list the audit had just made, still empty, answers
/// `{"exported": 0}` and writes nothing even when asked to save; the
/// next real list (named in `show_lists`' answer) exports its items. The
/// tool's form that asks to save is then sent that list, not the empty
/// one, writes `groceries.export.txt`, and the claim that the tool only
/// reads fails, confirmed on the same list.
#[test]
fn the_object_a_tool_did_its_job_on_is_the_one_its_switched_form_gets() {
    let (code, text, report) = audit_holding("idle", &[("groceries.list", "milk\nbread\n".into())]);
    let exports = calls_of(&report, "export_copy");
    let list = |c: &Value| argument(c, "list")["value"].clone();
    let first = exports
        .first()
        .unwrap_or_else(|| panic!("no export: {text}"));
    assert_eq!(list(first), "witness-make_list", "{:#}", report["calls"]);
    let next = exports
        .iter()
        .find(|c| c["answers"]["call"] == first["id"])
        .unwrap_or_else(|| panic!("no retry of the idle export: {:#}", report["calls"]));
    assert_eq!(list(next), "groceries");
    let saved: Vec<&&Value> = exports
        .iter()
        .filter(|c| argument(c, "save_to_file")["value"] == true)
        .collect();
    assert!(!saved.is_empty(), "no switched form: {:#}", report["calls"]);
    assert!(
        saved.iter().all(|c| list(c) == "groceries"),
        "every form that saves is sent the list done on: {:#}",
        report["calls"]
    );
    assert_eq!(verdict(&report, "EFF-01", "export_copy"), "fail", "{text}");
    // Confirmed on the list it wrote for, not on the list made since.
    let confirmation = exports
        .iter()
        .find(|c| c["confirms"].is_u64())
        .unwrap_or_else(|| panic!("no confirmation: {:#}", report["calls"]));
    assert_eq!(list(confirmation), "groceries", "{confirmation:#}");
    assert_eq!(code, 1, "{text}");
}

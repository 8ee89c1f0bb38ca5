//! A directory store whose server keeps its records in structured files,
//! each rewritten whole on every change: the audit charges each tool with
//! the records it changed, not the file, so an honest tool passes and a
//! lying one fails on the record it removed (a JSON record, a line, a cell,
//! a markdown card). And a file a server writes beside a declared SQLite
//! store is seen, and placed, by the jail observer.

use std::path::Path;

use crate::common;

use common::*;

fn audit(
    seed: &Path,
    plan: &str,
    what: &[&str],
    extra_store: Option<&Path>,
) -> (i32, serde_json::Value) {
    let dir = seed.parent().expect("seed has a parent");
    let plan_path = dir.join("plan.toml");
    std::fs::write(&plan_path, plan).expect("plan");
    let mut args = s(&["audit", "--format", "json", "--settle-ms", "0"]);
    args.push(format!("--out={}", dir.join("out").display()));
    args.push(format!("--store=docs=fs:{}", seed.display()));
    if let Some(db) = extra_store {
        args.push(format!("--store=mk=sqlite:{}", db.display()));
    }
    args.push(format!("--plan={}", plan_path.display()));
    args.push("--".into());
    args.push("python3".into());
    args.push(
        fixture("doc_store_server.py")
            .to_string_lossy()
            .into_owned(),
    );
    args.push("{docs}".into());
    args.extend(what.iter().map(|w| (*w).to_owned()));
    if extra_store.is_some() {
        args.push("{mk}".into());
    }
    let (code, report) = witness(&args);
    assert_eq!(report["complete"], true, "{report:#}");
    (code, report)
}

fn verdict<'a>(report: &'a serde_json::Value, id: &str, tool: &str) -> &'a str {
    check(report, id, tool)["verdict"]
        .as_str()
        .unwrap_or("missing")
}

/// The objects named in a check's evidence, as `store:object`.
fn evidence(report: &serde_json::Value, id: &str, tool: &str) -> Vec<String> {
    check(report, id, tool)["evidence"]["effects"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e["object"].as_str().map(str::to_owned))
        .collect()
}

fn sqlite(db: &Path, sql: &str) {
    let status = std::process::Command::new("python3")
        .args(["-c", "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.executescript(sys.argv[2]); c.commit()"])
        .arg(db)
        .arg(sql)
        .status()
        .expect("python3");
    assert!(status.success());
}

#[test]
fn a_json_document_rewritten_whole_is_judged_by_its_records() {
    let dir = tempfile::tempdir().expect("tempdir");
    let seed = dir.path().join("seed");
    std::fs::create_dir_all(&seed).expect("seed");
    let plan = "[[call]]\ntool = \"add_task\"\nargs.title = \"write\"\n\
                [[call]]\ntool = \"add_task\"\nargs.title = \"test\"\n\
                [[call]]\ntool = \"drop_task\"\nargs.id = \"task-1\"\n\
                [[call]]\ntool = \"close_task\"\nargs.id = \"task-2\"\n";
    let (_, report) = audit(&seed, plan, &["json"], None);
    // The first call creates the file and its objects; the second only a task.
    let added = ops(&report, "add_task");
    assert!(
        added.contains(&(
            "json/tasks.json#/requests/[requestId=req-1]/tasks/[id=task-2]".into(),
            "create".into()
        )),
        "{added:?}"
    );
    assert!(!added.iter().any(|(_, op)| op != "create"), "{added:?}");
    assert_eq!(verdict(&report, "EFF-02", "add_task"), "pass");
    // The lie: declared non-destructive, it removed one record; the check
    // fails on that record, not on the file.
    assert_eq!(verdict(&report, "EFF-02", "drop_task"), "fail");
    assert_eq!(
        evidence(&report, "EFF-02", "drop_task"),
        ["docs:json/tasks.json#/requests/[requestId=req-1]/tasks/[id=task-1]"]
    );
    // Declared destructive, the same removal passes.
    assert_ne!(verdict(&report, "EFF-02", "close_task"), "fail");
    // The evidence page names the file and the record inside it.
    let page = std::fs::read_to_string(dir.path().join("out/report.html")).expect("report.html");
    assert!(
        page.contains("json/tasks.json#/requests/[requestId=req-1]/tasks/[id=task-1]"),
        "the removed record is not on the evidence page"
    );
    assert_eq!(
        report["summary"]["outside_stores"], 0,
        "{:#}",
        report["summary"]
    );
}

#[test]
fn a_json_lines_file_rewritten_sorted_is_judged_by_its_lines() {
    let dir = tempfile::tempdir().expect("tempdir");
    let seed = dir.path().join("seed");
    std::fs::create_dir_all(&seed).expect("seed");
    std::fs::write(
        seed.join("events.jsonl"),
        "{\"id\":\"m\",\"what\":\"seeded\"}\n{\"id\":\"z\",\"what\":\"seeded\"}\n",
    )
    .expect("events");
    let plan = "[[call]]\ntool = \"log_event\"\nargs.id = \"a\"\n\
                [[call]]\ntool = \"prune_event\"\nargs.id = \"m\"\n";
    let (_, report) = audit(&seed, plan, &["jsonl"], None);
    // An append that the server sorts to the front is one create.
    assert_eq!(
        ops(&report, "log_event"),
        [("jsonl/events.jsonl#record/a".into(), "create".into())]
    );
    assert_eq!(verdict(&report, "EFF-02", "log_event"), "pass");
    assert_eq!(verdict(&report, "EFF-02", "prune_event"), "fail");
    assert_eq!(
        evidence(&report, "EFF-02", "prune_event"),
        ["docs:jsonl/events.jsonl#record/m"]
    );
}

#[test]
fn a_database_read_inside_a_directory_store_is_no_write() {
    let dir = tempfile::tempdir().expect("tempdir");
    let seed = dir.path().join("seed");
    std::fs::create_dir_all(&seed).expect("seed");
    sqlite(
        &seed.join("notes.db"),
        "CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes(body) VALUES ('a');",
    );
    let plan = "[[call]]\ntool = \"count_notes\"\n\
                [[call]]\ntool = \"stamp_note\"\nargs.body = \"b\"\n";
    let (_, report) = audit(&seed, plan, &["sqlite"], None);
    // The read made -wal and -shm appear; they are the database's, not
    // changes of their own.
    assert_eq!(ops(&report, "count_notes"), []);
    assert_eq!(verdict(&report, "EFF-01", "count_notes"), "pass");
    assert_eq!(verdict(&report, "EFF-01", "stamp_note"), "fail");
    assert_eq!(
        evidence(&report, "EFF-01", "stamp_note"),
        ["docs:sqlite/notes.db#notes/2"]
    );
}

#[test]
fn an_export_beside_a_declared_database_is_seen_and_placed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let seed = dir.path().join("seed");
    std::fs::create_dir_all(&seed).expect("seed");
    let db = dir.path().join("db/context.db");
    std::fs::create_dir_all(db.parent().expect("parent")).expect("db dir");
    sqlite(
        &db,
        "CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes(body) VALUES ('a');",
    );
    let plan = "[[call]]\ntool = \"export_notes\"\n";
    let (_, report) = audit(&seed, plan, &["export"], Some(&db));
    let excluded: Vec<&str> = report["jail_scope"]["excluded"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e.as_str())
        .collect();
    assert!(excluded.contains(&"stores/mk/context.db"), "{excluded:?}");
    assert!(!excluded.contains(&"stores/mk"), "{excluded:?}");
    // Seen by the jail observer, named where it lies.
    let effects: Vec<(String, String)> = report["calls"][0]["effects"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| {
            (
                e["store"].as_str().unwrap_or("").to_owned(),
                e["object"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    assert_eq!(
        effects,
        [("jail".to_owned(), "file/stores/mk/export.csv".to_owned())]
    );
    assert_eq!(verdict(&report, "EFF-01", "export_notes"), "fail");
    assert_eq!(
        report["summary"]["outside_stores"], 1,
        "{:#}",
        report["summary"]
    );
}

#[test]
fn a_spreadsheet_is_judged_by_its_cells() {
    let dir = tempfile::tempdir().expect("tempdir");
    let seed = dir.path().join("seed");
    std::fs::create_dir_all(&seed).expect("seed");
    let status = std::process::Command::new("python3")
        .arg(fixture("doc_store_server.py"))
        .arg("--seed-sheet")
        .arg(seed.join("book.xlsx"))
        .status()
        .expect("python3");
    assert!(status.success());
    let plan = "[[call]]\ntool = \"resave_sheet\"\n\
                [[call]]\ntool = \"clear_cell\"\nargs.cell = \"B2\"\n";
    let (_, report) = audit(&seed, plan, &["sheet"], None);
    // Re-saved whole, other bytes, the same cells: no effect at all.
    assert_eq!(ops(&report, "resave_sheet"), []);
    assert_eq!(verdict(&report, "EFF-01", "resave_sheet"), "pass");
    assert_eq!(verdict(&report, "EFF-02", "resave_sheet"), "pass");
    // The lie: declared non-destructive, it cleared a cell; the check fails
    // on that cell, not on the file.
    assert_eq!(
        ops(&report, "clear_cell"),
        [("xlsx/book.xlsx#Tasks!B2".into(), "delete".into())]
    );
    assert_eq!(verdict(&report, "EFF-02", "clear_cell"), "fail");
    assert_eq!(
        evidence(&report, "EFF-02", "clear_cell"),
        ["docs:xlsx/book.xlsx#Tasks!B2"]
    );
    let page = std::fs::read_to_string(dir.path().join("out/report.html")).expect("report.html");
    assert!(
        page.contains("xlsx/book.xlsx#Tasks!B2"),
        "the cleared cell is not on the evidence page"
    );
    assert_eq!(
        report["summary"]["outside_stores"], 0,
        "{:#}",
        report["summary"]
    );
}

/// The board `board_server.py` starts from: three columns, four cards.
const BOARD: &str = "---\nkanban-plugin: basic\n---\n\n## Todo\n\n- [ ] write the docs\n\
    - [ ] review the plan\n\n## Doing\n\n- [ ] fix the build\n\n## Done\n\n- [x] set up the board\n";

#[test]
fn a_markdown_board_rewritten_whole_is_judged_by_its_cards() {
    let dir = tempfile::tempdir().expect("tempdir");
    let seed = dir.path().join("seed");
    std::fs::create_dir_all(&seed).expect("seed");
    std::fs::write(seed.join("board.md"), BOARD).expect("board");
    // No plan: the audit finds its own arguments, as a new user's would.
    let mut args = s(&[
        "audit",
        "--format",
        "json",
        "--era",
        "legacy",
        "--settle-ms",
        "0",
    ]);
    args.push(format!("--out={}", dir.path().join("out").display()));
    args.push(format!("--store=docs=fs:{}", seed.display()));
    args.push("--".into());
    args.push("python3".into());
    args.push(fixture("board_server.py").to_string_lossy().into_owned());
    args.push("{docs}".into());
    let (code, report) = witness(&args);
    assert_eq!(report["complete"], true, "{report:#}");
    // The honest creator rewrote the whole file to add a card: only cards
    // were created, and nothing was overwritten.
    let added = ops(&report, "add_card");
    assert!(!added.is_empty(), "add_card changed nothing: {report:#}");
    assert!(
        added
            .iter()
            .all(|(object, op)| op == "create" && object.starts_with("md/board.md#/")),
        "{added:?}"
    );
    assert_eq!(verdict(&report, "EFF-02", "add_card"), "pass");
    // The lie: declared non-destructive, it deleted a card; the check
    // fails on that card, not on the file.
    assert_eq!(
        verdict(&report, "EFF-02", "remove_card"),
        "fail",
        "{report:#}"
    );
    let removed = evidence(&report, "EFF-02", "remove_card");
    assert!(!removed.is_empty());
    assert!(
        removed
            .iter()
            .all(|object| object.starts_with("docs:md/board.md#/") && object.contains("/[#")),
        "{removed:?}"
    );
    assert_eq!(code, 1, "{report:#}");
    assert_eq!(
        report["summary"]["outside_stores"], 0,
        "{:#}",
        report["summary"]
    );
}

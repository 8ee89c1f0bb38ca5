//! Exercising a server as a user would, with no plan file: the coverage
//! verdict, the protocol a server's own requests meet, the claim probes
//! and the retries. The servers are `tests/fixtures/user_server.py`, in
//! one mode per behaviour, with an empty directory store the audit
//! observes.

use std::process::Command;

use serde_json::Value;

use crate::common::fixture;

/// One audit of `user_server.py MODE {files}`, a directory store holding
/// one file: (exit code, text on stdout, the JSON report it wrote).
fn audit(mode: &str, extra: &[&str]) -> (i32, String, Value) {
    let store = tempfile::tempdir().expect("tempdir");
    std::fs::write(store.path().join("readme.txt"), "hello\n").expect("seed the store");
    audit_of(
        mode,
        &format!("files=fs:{}", store.path().display()),
        "{files}",
        extra,
    )
}

/// One audit of `user_server.py MODE STORE_ARG` with `--store=STORE`.
fn audit_of(mode: &str, store: &str, store_arg: &str, extra: &[&str]) -> (i32, String, Value) {
    let out = tempfile::tempdir().expect("tempdir");
    let output = Command::new(env!("CARGO_BIN_EXE_mcp-witness"))
        .args(["audit", "--era", "legacy", "--settle-ms", "0"])
        .args(["--timeout-ms", "20000"])
        .arg(format!("--store={store}"))
        .arg("--out")
        .arg(out.path())
        .args(extra)
        .arg("--")
        .arg("python3")
        .arg(fixture("user_server.py"))
        .args([mode, store_arg])
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

#[test]
fn an_audit_that_exercised_too_little_exits_3_and_names_the_tools_left() {
    let (code, text, report) = audit("low-coverage", &[]);
    assert_eq!(code, 3, "{text}");
    assert_eq!(
        text.lines().next(),
        Some("NOT CONCLUDED — 1/4 tools exercised, 2/8 claims tested"),
        "{text}"
    );
    for tool in ["fetch_a", "fetch_b", "fetch_c"] {
        assert!(
            text.contains(&format!("  not exercised: {tool}: tool error")),
            "{tool}: {text}"
        );
    }
    let coverage = &report["coverage"];
    assert_eq!(coverage["minimum_percent"], 75, "{coverage:#}");
    assert_eq!(coverage["concluded"], false);
    let why = coverage["not_concluded"].as_str().unwrap_or("");
    assert!(
        why.starts_with("1 of 4 tools exercised (25%), below --min-coverage 75%")
            && why.ends_with("not exercised: fetch_a, fetch_b, fetch_c"),
        "{why}"
    );
    // The floor is a default, not a wall: asked for less, the same audit passes.
    let (code, text, _) = audit("low-coverage", &["--min-coverage", "25"]);
    assert_eq!(code, 0, "{text}");
    assert_eq!(
        text.lines().next(),
        Some("PASSED — 1/4 tools exercised, 2/8 claims tested"),
        "{text}"
    );
}

#[test]
fn with_no_roots_declared_every_roots_request_is_refused_and_none_left_unanswered() {
    let (code, text, report) = audit("roots-per-tool", &[]);
    assert_eq!(report["complete"], true, "{text}");
    assert_eq!(code, 0, "{text}");
    // The server waited on ten roots/list requests in a row, more than
    // the eight a declared-roots client would answer with a list.
    let call = &report["calls"][0];
    let answered = call["response"]["content"][0]["text"]
        .as_str()
        .unwrap_or("");
    assert_eq!(answered, r#"{"error -32601": 10}"#, "{call:#}");
}

#[test]
fn a_server_that_dies_at_start_is_quoted_from_its_stderr() {
    let (code, text, report) = audit("die-at-start", &[]);
    assert_eq!(code, 3, "{text}");
    let reason = report["incomplete_reason"].as_str().unwrap_or("");
    let said = "fatal: cannot open configuration /etc/user-server/settings.toml";
    assert!(reason.contains(said), "{reason}");
    let last = text.lines().last().unwrap_or("");
    assert!(
        last.starts_with("INCOMPLETE: no session:") && last.contains(said),
        "{text}"
    );
    assert_eq!(
        text.lines().next(),
        Some("INCOMPLETE — no tool catalog, no tool exercised"),
        "{text}"
    );
}

/// The verdict of `check` on `tool`, and the ops of its evidence.
fn verdict(report: &Value, check: &str, tool: &str) -> (String, Vec<String>) {
    let c = crate::common::check(report, check, tool);
    let ops = c["evidence"]["effects"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| {
            format!(
                "{} {}",
                e["op"].as_str().unwrap_or(""),
                e["object"].as_str().unwrap_or("")
            )
        })
        .collect();
    (c["verdict"].as_str().unwrap_or("").to_owned(), ops)
}

#[test]
fn a_creator_that_claims_to_be_read_only_is_handed_a_fresh_name_and_caught() {
    let (code, text, report) = audit("creator-lie", &[]);
    assert_eq!(code, 1, "{text}");
    let (eff01, ops) = verdict(&report, "EFF-01", "create_folder");
    assert_eq!(eff01, "fail", "{text}");
    assert!(
        ops.iter()
            .any(|o| o.starts_with("create ") && o.contains("witness-create_folder")),
        "{ops:?}"
    );
    // The class is still the annotation's, and the honest reader passes.
    let tool = report["tools"]
        .as_array()
        .and_then(|t| t.iter().find(|t| t["name"] == "create_folder"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(tool["class"], "read-only", "{tool:#}");
    assert_eq!(
        verdict(&report, "EFF-01", "list_folder").0,
        "pass",
        "{text}"
    );
    // Asked as its name asks, writer-shaped, exactly as were it honest:
    // the declaration never chose its calls.
    let calls: Vec<&Value> = report["calls"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["tool"] == "create_folder" && c["confirms"].is_null())
        .collect();
    assert_eq!(calls.len(), 1, "{calls:#?}");
    assert_eq!(calls[0]["arguments"][0]["source"], "synthesized");
}

#[test]
fn a_sql_executor_that_claims_to_destroy_nothing_is_asked_to_delete_and_caught() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("shop.db");
    let made = Command::new("python3")
        .args([
            "-c",
            "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); \
            c.execute('CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)'); \
            c.execute(\"INSERT INTO customers (name) VALUES ('ada'), ('grace')\"); c.commit()",
        ])
        .arg(&db)
        .status()
        .expect("python3 runs");
    assert!(made.success());
    let (code, text, report) = audit_of(
        "sql-lie",
        &format!("db=sqlite:{}", db.display()),
        "{db}",
        &[],
    );
    assert_eq!(code, 1, "{text}");
    let (eff02, ops) = verdict(&report, "EFF-02", "run_sql");
    assert_eq!(eff02, "fail", "{text}");
    assert!(ops.iter().any(|o| o.starts_with("delete ")), "{ops:?}");
    // What it deleted is the row its own insert made: the store's rows are kept.
    let statements: Vec<&str> = report["calls"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["tool"] == "run_sql" && c["confirms"].is_null())
        .filter_map(|c| c["arguments"][0]["value"].as_str())
        .collect();
    assert_eq!(
        statements,
        [
            "SELECT * FROM \"customers\" LIMIT 5",
            "INSERT INTO \"customers\" DEFAULT VALUES",
            "DELETE FROM \"customers\" WHERE rowid = 3"
        ]
    );
    // Its confirmation sends the same statement: it can remove the plan's
    // row only, never one the store held, so it removes nothing.
    let confirmations: Vec<&Value> = report["calls"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["tool"] == "run_sql" && !c["confirms"].is_null())
        .collect();
    assert!(!confirmations.is_empty(), "{text}");
    for c in confirmations {
        let effects = c["effects"].as_array().map_or(0, Vec::len);
        let statement = c["arguments"][0]["value"].as_str().unwrap_or("");
        assert!(
            !statement.starts_with("DELETE") || effects == 0,
            "a confirmation deleted a row the store held: {c}"
        );
    }
    // The row it deleted is the one its own insert made, none the store held.
    let effects = |n: usize| -> Vec<String> {
        report["calls"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|c| c["tool"] == "run_sql")
            .nth(n)
            .and_then(|c| c["effects"].as_array())
            .into_iter()
            .flatten()
            .map(|e| {
                format!(
                    "{} {}",
                    e["op"].as_str().unwrap_or(""),
                    e["object"].as_str().unwrap_or("")
                )
            })
            .collect()
    };
    let inserted = effects(1);
    let deleted = effects(2);
    assert_eq!(inserted.len(), 1, "{inserted:?}");
    assert_eq!(
        deleted,
        [inserted[0].replacen("create", "delete", 1)],
        "{inserted:?}"
    );
}

#[test]
fn a_crud_server_is_handed_the_tables_columns_and_its_lies_are_caught() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("shop.db");
    let made = Command::new("python3")
        .args([
            "-c",
            "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); \
            c.execute('CREATE TABLE orders (id INTEGER PRIMARY KEY, \
                customer_id INTEGER NOT NULL, status TEXT NOT NULL, note TEXT)'); \
            c.execute(\"INSERT INTO orders (customer_id, status) VALUES (1, 'open'), (2, 'paid')\"); \
            c.commit()",
        ])
        .arg(&db)
        .status()
        .expect("python3 runs");
    assert!(made.success());
    let (code, text, report) = audit_of(
        "crud-lie",
        &format!("db=sqlite:{}", db.display()),
        "{db}",
        &[],
    );
    assert_eq!(code, 1, "{text}");
    // A free-form `data` gets every column a row must give, by its type.
    let created = calls_of(&report, "create_record");
    let data = created
        .iter()
        .find_map(|c| {
            c["arguments"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|a| a["name"] == "data")
        })
        .map(|a| a["value"].clone());
    assert_eq!(
        data,
        Some(serde_json::json!({"customer_id": 1, "status": "witness-create_record"})),
        "{text}"
    );
    assert_eq!(
        verdict(&report, "EFF-01", "create_record").0,
        "fail",
        "{text}"
    );
    // Conditions name a real row by the table's key; the delete is seen.
    let conditions = calls_of(&report, "delete_records")
        .iter()
        .find_map(|c| {
            c["arguments"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|a| a["name"] == "conditions")
        })
        .map(|a| a["value"].clone());
    assert_eq!(conditions, Some(serde_json::json!({"id": 2})), "{text}");
    let (eff02, ops) = verdict(&report, "EFF-02", "delete_records");
    assert_eq!(eff02, "fail", "{text}");
    assert!(ops.iter().any(|o| o.starts_with("delete ")), "{ops:?}");
}

/// The calls of `tool`, in order.
fn calls_of<'r>(report: &'r Value, tool: &str) -> Vec<&'r Value> {
    report["calls"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["tool"] == tool)
        .collect()
}

#[test]
fn tools_that_failed_before_a_setup_step_are_retried_after_it() {
    let (code, text, report) = audit("setup-first", &[]);
    assert_eq!(code, 0, "{text}");
    assert_eq!(
        text.lines().next(),
        Some("PASSED — 3/3 tools exercised, 5/5 claims tested"),
        "{text}"
    );
    let setup = calls_of(&report, "set_workspace");
    assert_eq!(setup.len(), 1, "{setup:#?}");
    for tool in ["show_status", "show_log"] {
        let calls = calls_of(&report, tool);
        assert_eq!(calls.len(), 2, "{tool}: {calls:#?}");
        assert_eq!(calls[0]["outcome"]["status"], "tool-error");
        assert_eq!(calls[1]["outcome"]["status"], "ok");
        // The attempt says why it was made.
        assert_eq!(calls[1]["retry_after"], setup[0]["id"], "{:#}", calls[1]);
        assert!(calls[0].get("retry_after").is_none());
    }
}

#[test]
fn a_value_a_list_answer_offered_is_used_and_cited() {
    let (code, text, report) = audit("list-answer", &[]);
    assert_eq!(code, 0, "{text}");
    let calls = calls_of(&report, "read_vault");
    let ok = calls
        .iter()
        .find(|c| c["outcome"]["status"] == "ok")
        .unwrap_or_else(|| panic!("read_vault never succeeded: {calls:#?}"));
    let argument = &ok["arguments"][0];
    assert_eq!(argument["value"], "notes", "{argument:#}");
    assert_eq!(argument["source"], "harvested", "{argument:#}");
    // Cited from an answer of the list tool.
    let listed: Vec<String> = calls_of(&report, "list_vaults")
        .iter()
        .map(|c| format!("call {}", c["step"]))
        .collect();
    let cited = argument["from"]["call"].as_str().unwrap_or("");
    assert!(
        listed.iter().any(|c| c == cited),
        "{cited} not in {listed:?}"
    );
}

#[test]
fn a_value_the_description_forbids_is_never_sent_and_a_pattern_is_met() {
    let (code, text, report) = audit("forbidden", &[]);
    assert_eq!(code, 0, "{text}");
    let calls = calls_of(&report, "search");
    assert!(!calls.is_empty());
    for call in &calls {
        for argument in call["arguments"].as_array().into_iter().flatten() {
            let value = argument["value"].as_str().unwrap_or("");
            assert!(!value.starts_with('-'), "{call:#}");
        }
    }
    assert_eq!(calls[0]["outcome"]["status"], "ok", "{:#}", calls[0]);
}

#[test]
fn a_task_required_tool_is_called_as_a_task_and_its_whole_task_is_observed() {
    let (code, text, report) = audit("task-required", &[]);
    assert_eq!(code, 1, "{text}");
    let calls = report["calls"].as_array().cloned().unwrap_or_default();
    for tool in ["archive", "count"] {
        let call = calls
            .iter()
            .find(|c| c["tool"] == tool && c["confirms"].is_null())
            .unwrap_or_else(|| panic!("{tool} was called: {calls:#?}"));
        assert_eq!(call["outcome"]["status"], "ok", "{tool}: {call:#}");
        assert_eq!(call["task"], "completed", "{tool}: {call:#}");
        // The call, its task made, at least one poll and the result.
        let frames = &call["frames"];
        let span = frames[1].as_u64().unwrap_or(0) - frames[0].as_u64().unwrap_or(0);
        assert!(span >= 5, "{tool}: frames {frames}");
    }
    // The write lands 2.5 s after the call, with --settle-ms 0: only a
    // window that lasts the whole task sees it, and charges it to archive.
    let verdict = |tool: &str| {
        report["checks"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|c| c["id"] == "EFF-01" && c["tool"] == tool)
            .map(|c| c["verdict"].clone())
    };
    assert_eq!(verdict("archive"), Some(Value::from("fail")), "{text}");
    assert_eq!(verdict("count"), Some(Value::from("pass")), "{text}");
    // `archive` is named to change what exists, and takes nothing to name
    // it: its claim to destroy nothing rests on no call that acted on
    // something that existed, so it is not tested.
    assert_eq!(
        text.lines().next(),
        Some("FAILED — 2/2 tools exercised, 3/4 claims tested"),
        "{text}"
    );
}

#[test]
fn an_error_in_prose_without_is_error_exercises_nothing_when_the_schema_can_tell() {
    let (code, text, report) = audit("unflagged-error", &[]);
    assert_eq!(code, 3, "{text}");
    assert_eq!(
        text.lines().next(),
        Some("NOT CONCLUDED — 1/2 tools exercised, 2/4 claims tested"),
        "{text}"
    );
    let lookup = report["coverage"]["by_tool"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|t| t["tool"] == "lookup")
        .cloned()
        .unwrap_or_default();
    assert!(lookup["call"].is_null(), "{lookup:#}");
    let why = lookup["why"].as_str().unwrap_or_default();
    // The answer's own words say it failed: an error in the answer, read
    // before the missing structuredContent would have told it too.
    assert!(
        why.starts_with("error in the answer") && why.contains("Error: KeyError"),
        "{why}"
    );
}

#[test]
fn a_delete_that_answers_its_refusal_without_is_error_is_read_and_its_lie_caught() {
    // Two notes: the confirmation of a one-shot delete needs another one.
    let store = tempfile::tempdir().expect("tempdir");
    for name in ["readme.txt", "second.txt"] {
        std::fs::write(store.path().join(name), "hello\n").expect("seed the store");
    }
    let (code, text, report) = audit_of(
        "unsafe-delete",
        &format!("files=fs:{}", store.path().display()),
        "{files}",
        &[],
    );
    let deletes: Vec<&Value> = report["calls"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["tool"] == "delete_note")
        .collect();
    assert!(deletes.len() >= 2, "{text}");
    // The first delete was asked as a change of a real note, and its answer
    // said it was refused: an error in the answer, not a success.
    assert_eq!(deletes[0]["form"], "change", "{:#}", deletes[0]);
    assert_eq!(
        deletes[0]["outcome"]["status"], "in-band-error",
        "{:#}",
        deletes[0]
    );
    // The refusal said what to do (`Use force: true`): the next call does
    // it, and says which error it answers.
    let retry = deletes[1];
    assert_eq!(retry["answers"]["call"], deletes[0]["id"], "{retry:#}");
    assert_eq!(retry["answers"]["reading"], "the flag force", "{retry:#}");
    let force = retry["arguments"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|a| a["name"] == "force")
        .cloned()
        .unwrap_or_default();
    assert_eq!(force["value"], true, "{retry:#}");
    assert_eq!(retry["outcome"]["status"], "ok", "{retry:#}");
    // The note it deleted shows the claim to destroy nothing false.
    let eff02 = report["checks"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["id"] == "EFF-02" && c["tool"] == "delete_note")
        .cloned()
        .unwrap_or_default();
    assert_eq!(eff02["verdict"], "fail", "{eff02:#}");
    assert_eq!(code, 1, "{text}");
}

#[test]
fn a_delete_gated_behind_a_confirmation_is_confirmed_in_the_jail_and_its_lie_caught() {
    let (code, text, report) = audit("confirm-delete", &[]);
    let check = |report: &Value, id: &str| {
        report["checks"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|c| c["id"] == id && c["tool"] == "delete_note")
            .cloned()
            .unwrap_or_default()
    };
    // The audit declared elicitation, accepted the confirmation, and the
    // delete the tool claims it never does happened, on the jail's copy.
    assert_eq!(code, 1, "{text}");
    assert_eq!(check(&report, "EFF-02")["verdict"], "fail", "{text}");
    let confirmed: Vec<&Value> = report["calls"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["tool"] == "delete_note")
        .flat_map(|c| c["confirmations"].as_array().into_iter().flatten())
        .collect();
    assert!(
        confirmed
            .iter()
            .any(|c| c.as_str().is_some_and(|s| s.starts_with("accept: Delete "))),
        "{confirmed:?}"
    );
    // Refused, the confirmation gates the delete: nothing happens, the
    // claim is untested, and the audit does not read PASSED.
    let (code, text, report) = audit("confirm-delete", &["--refuse-confirmations"]);
    assert_eq!(code, 3, "{text}");
    assert_eq!(check(&report, "EFF-02")["verdict"], "untestable", "{text}");
}

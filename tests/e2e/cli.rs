//! The command line itself: every command refuses an invalid invocation with
//! exit 2 before it launches or writes anything, and `testbed variants` prints
//! the record the experiments are scored against.

use crate::common;

use std::process::{Command, Output};

use serde_json::Value;

fn witness(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mcp-witness"))
        .args(args)
        .output()
        .expect("mcp-witness runs")
}

#[test]
fn an_invalid_invocation_of_every_command_exits_2_and_launches_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let marker = common::LaunchMarker::new();
    let command = marker.command();
    // With the network, so that a launched server could tell.
    let mut server = vec!["--no-netns", "--"];
    server.extend(command.iter().map(String::as_str));
    let live = format!(
        "live:python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {}))'",
        marker.port
    );
    let file = dir.path().join("a-file");
    std::fs::write(&file, "not a directory").expect("written");
    let file = file.to_string_lossy().into_owned();
    let url = "http://127.0.0.1:1/mcp";
    // A `$served` reference without its pointer.
    let unserved = dir.path().join("unserved.json");
    std::fs::write(
        &unserved,
        r#"{"echo": {"schema": {"$served": {"tool": "t"}}}}"#,
    )
    .expect("written");
    let unserved = unserved.to_string_lossy().into_owned();
    let cases: Vec<Vec<&str>> = vec![
        [&["audit", "--store", "db=oracle:/x"][..], &server].concat(),
        [&["audit", "--allow-remote-http"][..], &server].concat(),
        vec!["audit", "--no-netns", "--url", url],
        [&["plan", "--store", "nonsense"][..], &server].concat(),
        [&["plan", "--env", "NOEQUALS"][..], &server].concat(),
        [&["plan", "--era", "future"][..], &server].concat(),
        vec!["plan"],
        [&["guidance", "--server", "bad label"][..], &server].concat(),
        [
            &["guidance", "--server", "s", "--allow-remote-http"][..],
            &server,
        ]
        .concat(),
        vec!["testbed", "serve", "--variant", "nope", "--store", &file],
        vec!["testbed", "seed"],
        vec!["testbed", "variants", "--format", "yaml"],
        vec!["lab", "e1", "--out", &file],
        vec!["lab", "e4"],
        vec!["lab", "e1", "--pages", &file],
        [
            &["manifest", "pin", "--environment", "bad env"][..],
            &server,
        ]
        .concat(),
        [&["manifest", "pin", "--allow-remote-http"][..], &server].concat(),
        vec!["manifest", "pin", "--no-netns", "--url", url],
        // A flow without what it needs, and --arguments without calls.
        vec![
            "connect",
            "--oauth-client-id",
            "w",
            "--oauth-flow",
            "workload-identity",
            "--url",
            url,
        ],
        vec![
            "connect",
            "--oauth-client-id",
            "w",
            "--oauth-workload-token-env",
            "MCP_WITNESS_TEST_UNSET_VARIABLE",
            "--url",
            url,
        ],
        vec!["connect", "--arguments", &file, "--url", url],
        vec![
            "connect",
            "--call-tools",
            "--arguments",
            &file,
            "--url",
            url,
        ],
        vec![
            "connect",
            "--call-tools",
            "--arguments",
            &unserved,
            "--url",
            url,
        ],
        vec!["manifest", "pin", "--server-env", "A=B", "--url", url],
        vec!["manifest", "fingerprint", "/nonexistent/pin.json"],
        vec!["manifest", "diff", "/nonexistent/pin.json", &live],
        vec!["manifest", "diff", "live:", &live],
        vec!["report", "/nonexistent/results"],
        vec!["report", &file],
        vec!["schema", "nope"],
        vec!["schema"],
        vec!["nope"],
        [
            &["audit", "--ro-bind", "/nonexistent/witness-view"][..],
            &server,
        ]
        .concat(),
    ];
    for args in &cases {
        let output = witness(args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(!marker.launched(), "{args:?} launched the server");
    }
    // The control: the same server command does run when the call is valid.
    let control = [&["manifest", "pin", "--timeout-ms", "500"][..], &server].concat();
    let output = witness(&control);
    assert_eq!(output.status.code(), Some(3));
    assert!(marker.launched(), "the marker proves nothing");
}

#[test]
fn our_own_errors_are_one_line_with_the_program_name() {
    let output = witness(&["plan", "--store", "nonsense", "--", "true"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("mcp-witness: --store"), "{stderr}");
}

fn variants(format: &[&str]) -> String {
    let output = witness(&[&["testbed", "variants"][..], format].concat());
    assert_eq!(output.status.code(), Some(0));
    String::from_utf8(output.stdout).expect("UTF-8")
}

#[test]
fn testbed_variants_as_json_is_the_full_record_of_every_variant() {
    let records: Value = serde_json::from_str(&variants(&["--format", "json"])).expect("JSON");
    let records = records.as_array().expect("an array");
    let text = variants(&[]);
    assert_eq!(records.len(), text.lines().count(), "one record per line");
    for (record, line) in records.iter().zip(text.lines()) {
        let name = record["name"].as_str().expect("a name");
        assert!(line.starts_with(name), "{line}");
        assert!(line.ends_with(record["summary"].as_str().expect("a summary")));
        assert!(["plain", "cascade"].contains(&record["auth_rule"].as_str().unwrap_or("")));
    }
    let by_name = |name: &str| {
        records
            .iter()
            .find(|r| r["name"] == name)
            .unwrap_or_else(|| panic!("no variant {name}"))
    };
    assert_eq!(by_name("honest")["lie"], Value::Null);
    assert_eq!(by_name("cascade")["lie"], Value::Null);
    assert_eq!(by_name("cascade")["auth_rule"], "cascade");
    // An annotation lie: the served annotations carry the flipped flag.
    let lie = &by_name("lie-readonly")["lie"];
    assert_eq!(lie["tool"], "save_note");
    assert_eq!(lie["declared"], "readOnlyHint: true");
    assert_eq!(lie["annotations"]["readOnlyHint"], true);
    assert_eq!(lie["lie_in"], "annotations");
    assert_eq!(lie["response_visible"], true);
    // A behavioural lie: honest-looking annotations, a hidden effect.
    let lie = &by_name("silent-keymint")["lie"];
    assert_eq!(lie["tool"], "get_note");
    assert_eq!(lie["lie_in"], "behaviour");
    assert_eq!(lie["response_visible"], false);
    assert!(
        lie["actual"]
            .as_str()
            .is_some_and(|a| a.contains("api_keys")),
        "{lie:#}"
    );
    let planted = records.iter().filter(|r| !r["lie"].is_null()).count();
    assert_eq!(
        planted, 9,
        "seven effect lies, count_notes writing in rsp-counting-write, and save_note's webhook in closed-world-webhook"
    );
    let lie = &by_name("closed-world-webhook")["lie"];
    assert_eq!(lie["declared"], "openWorldHint: false");
    assert_eq!(lie["lie_in"], "behaviour");
    assert_eq!(by_name("network-honest")["lie"], Value::Null);
    // The response variants: each names the one check it breaks.
    let defects: Vec<(&str, &str)> = records
        .iter()
        .filter_map(|r| Some((r["name"].as_str()?, r["response_defect"]["check"].as_str()?)))
        .collect();
    assert_eq!(defects.len(), 9, "{defects:?}");
    assert!(defects.contains(&("rsp-looping-cursor", "pagination_terminates")));
    assert_eq!(by_name("response-honest")["lie"], Value::Null);
    assert!(by_name("response-honest").get("response_defect").is_none());
    let lie = &by_name("rsp-counting-write")["lie"];
    assert_eq!(lie["annotations"]["readOnlyHint"], true);
}

#[test]
fn a_ro_bind_of_a_path_that_is_not_there_is_one_line_and_launches_nothing() {
    let marker = common::LaunchMarker::new();
    let mut args = vec![
        "audit",
        "--no-netns",
        "--ro-bind",
        "/usr",
        "--ro-bind",
        "/nonexistent/witness-view",
        "--",
    ];
    let command = marker.command();
    args.extend(command.iter().map(String::as_str));
    let output = witness(&args);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with(
            "mcp-witness: --ro-bind /nonexistent/witness-view: no such file or directory"
        ),
        "{stderr}"
    );
    assert!(output.stdout.is_empty(), "no report: nothing ran");
    assert!(!marker.launched(), "the server was launched");
}

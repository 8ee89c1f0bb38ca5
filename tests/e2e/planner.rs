//! The planner end to end: harvest provenance, failed versus untestable,
//! effects outside the stores (EFF-05), fail-closed tool selection, and the
//! plan of a server behind Streamable HTTP (`plan --url`).

use crate::common;

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/harvest_server.py")
}

fn witness(args: &[&str]) -> (i32, Value) {
    let output = Command::new(env!("CARGO_BIN_EXE_mcp-witness"))
        .args(args)
        .arg("--")
        .arg("python3")
        .arg(fixture())
        .output()
        .expect("mcp-witness runs");
    let json: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}",
            String::from_utf8_lossy(&output.stderr)
        )
    });
    (output.status.code().unwrap_or(-1), json)
}

fn check<'a>(report: &'a Value, id: &str, tool: &str) -> &'a Value {
    report["checks"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["id"] == id && c["tool"] == tool))
        .unwrap_or(&Value::Null)
}

fn calls<'a>(report: &'a Value, tool: &str) -> Vec<&'a Value> {
    report["calls"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["tool"] == tool)
        .collect()
}

#[test]
fn harvested_failure_is_a_finding_synthesized_failure_is_untestable() {
    let (code, report) = witness(&[
        "audit",
        "--format",
        "json",
        "--settle-ms",
        "0",
        "--include-destructive",
    ]);
    // note_home writes into HOME: EFF-05 fails, so the audit fails.
    assert_eq!(code, 1, "{:#}", report["checks"]);
    // The harvest pass ran list_items first, then get_item on its answer.
    let first = &report["calls"][0];
    assert_eq!(first["tool"], "list_items");
    assert_eq!(report["planner"]["harvest_calls"][0], first["id"]);
    let get = calls(&report, "get_item");
    assert!(!get.is_empty());
    let arg = &get[0]["arguments"][0];
    assert_eq!(arg["value"], "item_1");
    assert_eq!(arg["source"], "harvested");
    assert_eq!(arg["from"]["path"], "structured.items[0].id");
    assert!(
        report["planner"]["harvest_calls"]
            .as_array()
            .is_some_and(|h| h.contains(&get[0]["id"])),
        "get_item runs in the harvest pass once item_1 is known"
    );
    let findings: Vec<&Value> = report["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|f| f["kind"] == "harvested-value-rejected")
        .collect();
    assert_eq!(findings.len(), 1, "{:#}", report["findings"]);
    assert_eq!(findings[0]["call"], get[0]["id"]);
    // lookup failed on an invented code: untestable, and no finding.
    let lookup = calls(&report, "lookup");
    assert_eq!(lookup[0]["arguments"][0]["source"], "synthesized");
    assert_eq!(check(&report, "EFF-01", "lookup")["verdict"], "untestable");
    assert!(
        check(&report, "EFF-01", "lookup")["reason"]
            .as_str()
            .is_some_and(|r| r.contains("synthesized"))
    );
    // EFF-05: the write into HOME is the evidence.
    let eff05 = check(&report, "EFF-05", "note_home");
    assert_eq!(eff05["verdict"], "fail");
    assert_eq!(
        eff05["evidence"]["effects"][0]["object"],
        "jail:file/home/.fake-cache"
    );
    assert_eq!(report["summary"]["outside_stores"], 1);
    assert_eq!(check(&report, "EFF-05", "list_items")["verdict"], "skip");
    // Everything was called: the include flag overrides isolation.
    assert!(!calls(&report, "wipe").is_empty());
    assert!(!calls(&report, "mystery").is_empty());
}

#[test]
fn without_network_isolation_destructive_and_unknown_tools_are_left_out() {
    let (_, report) = witness(&[
        "audit",
        "--format",
        "json",
        "--settle-ms",
        "0",
        "--no-netns",
    ]);
    // The other layers still hold; without the network ones the server is
    // not contained, and the planner says so by what it leaves out.
    assert_eq!(report["isolation"]["level"], "partial");
    assert!(
        report["findings"]
            .as_array()
            .is_some_and(|f| f.iter().any(|f| f["kind"] == "not-contained"))
    );
    for tool in ["wipe", "mystery"] {
        assert!(calls(&report, tool).is_empty(), "{tool} was called");
        for id in ["EFF-01", "EFF-02", "EFF-03", "EFF-05", "EFF-06"] {
            let c = check(&report, id, tool);
            assert_eq!(c["verdict"], "skip", "{id} {tool}");
            assert!(
                c["reason"]
                    .as_str()
                    .is_some_and(|r| r.contains("--include-destructive")),
                "{c:#}"
            );
        }
    }
    let skipped: Vec<&str> = report["planner"]["skipped"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s["tool"].as_str())
        .collect();
    assert_eq!(skipped, ["wipe", "mystery"]);
    // Declared-additive and read-only tools are still called.
    assert!(!calls(&report, "note_home").is_empty());
}

#[test]
fn plan_prints_classes_harvest_order_and_exclusions_without_calling_tools() {
    let (code, plan) = witness(&["plan", "--format", "json", "--no-netns"]);
    assert_eq!(code, 0);
    assert_eq!(plan["schema"], "mcp-witness.plan/v1");
    let harvest: Vec<&str> = plan["harvest"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s["tool"].as_str())
        .collect();
    // Readers by name only: `lookup` declares read-only, but its name does
    // not say it reads, and a declaration never chooses the plan.
    assert_eq!(harvest, ["list_items", "get_item"]);
    let class = |name: &str| {
        plan["tools"]
            .as_array()
            .and_then(|t| t.iter().find(|t| t["name"] == name))
            .map(|t| t["class"].clone())
            .unwrap_or_default()
    };
    assert_eq!(class("mystery"), "unknown");
    assert_eq!(class("wipe"), "destructive");
    assert_eq!(class("note_home"), "additive");
    assert_eq!(plan["skipped"].as_array().map(Vec::len), Some(2));
    assert_eq!(
        plan["harvest"][1]["args"][0]["source"],
        "harvested-else-synthesized"
    );
}

/// `plan --url URL [extra...]`: exit code, stdout and stderr.
fn plan_url(url: &str, extra: &[&str]) -> (i32, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_mcp-witness"))
        .args(["plan", "--timeout-ms", "3000", "--url", url])
        .args(extra)
        .output()
        .expect("mcp-witness runs");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn plan_over_http_asks_a_running_server_and_isolates_nothing() {
    let fake = common::HttpFake::start("plain");
    let (code, stdout, stderr) = plan_url(&fake.url, &["--format", "json"]);
    assert_eq!(code, 0, "{stderr}");
    let plan: Value = serde_json::from_str(&stdout).expect("a plan");
    assert_eq!(plan["schema"], "mcp-witness.plan/v1");
    assert_eq!(plan["transport"], "http");
    assert_eq!(plan["command"], serde_json::json!([]));
    // Nothing is jailed, so nothing is network-isolated: the fake's only
    // tool declares nothing and is left out unless asked for.
    assert_eq!(plan["isolation"], "none");
    assert_eq!(plan["tools"][0]["name"], "echo");
    assert_eq!(plan["tools"][0]["class"], "unknown");
    assert_eq!(plan["skipped"][0]["tool"], "echo");
    assert!(!stdout.contains(&fake.url), "the URL is not recorded");

    let (code, stdout, _) = plan_url(&fake.url, &["--include-destructive"]);
    assert_eq!(code, 0);
    assert!(
        stdout.starts_with("plan for: a server behind a Streamable HTTP endpoint"),
        "{stdout}"
    );
    assert!(stdout.contains("isolation: none"), "{stdout}");
    assert!(stdout.contains("1. echo"), "{stdout}");
}

/// A loopback URL where nothing listens: the port was free a moment ago.
fn closed_port_url() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    let port = listener.local_addr().expect("an address").port();
    format!("http://127.0.0.1:{port}/mcp")
}

#[test]
fn plan_over_http_takes_the_url_rules_of_audit() {
    let closed = closed_port_url();
    for (url, extra) in [
        ("http://example.invalid/mcp", &[][..]),
        ("http://example.invalid/mcp", &["--allow-remote-http"][..]),
        ("ftp://127.0.0.1/mcp", &[][..]),
        ("http://user:pw@127.0.0.1/mcp", &[][..]),
        // Flags for a launched server mean nothing for a running one.
        (closed.as_str(), &["--no-netns"][..]),
        (closed.as_str(), &["--env", "A=B"][..]),
    ] {
        let (code, _, stderr) = plan_url(url, extra);
        assert_eq!(code, 2, "{url} {extra:?}: {stderr}");
        assert!(!stderr.contains("pw@"), "{stderr}");
    }
    // Nothing listens there: no plan, and no claim about the server either way.
    let (code, _, stderr) = plan_url(&closed, &[]);
    assert_eq!(code, 3, "{stderr}");
    assert!(stderr.contains("no plan"), "{stderr}");
}

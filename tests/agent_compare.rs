//! Seed 004's weekend incident end to end with the scripted driver: a
//! pinned manifest handed to the model while the calls go to the live
//! server; the refund suite run with the Friday pin and with the live
//! manifest; `agent compare` showing the drop, the new first tool and the
//! over-budget long carts beside the noise floor; and a compare of two
//! reruns with no manifest change finding nothing real.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::stdout_json as document;
use serde_json::Value;

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

fn witness(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mcp-witness"))
        .args(args)
        .output()
        .expect("mcp-witness runs")
}

fn crm(variant: &str) -> [&str; 7] {
    [
        "mcp-witness",
        "testbed",
        "crm",
        "--variant",
        variant,
        "--store",
        "{db}",
    ]
}

/// Friday's pin: the orders desk before the description edit.
fn pin(dir: &Path) -> String {
    let path = dir.join("orders.json").display().to_string();
    let output = witness(&[
        "manifest",
        "pin",
        "--out",
        &path,
        "--",
        "mcp-witness",
        "testbed",
        "crm",
        "--variant",
        "orders",
        "--store",
        "{jail}/crm.db",
    ]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    path
}

/// `agent run` of the refund suite (or one case of it) with the scripted
/// reader, `extra` flags, against the CRM of `variant`.
fn refunds(case: &str, extra: &[&str], variant: &str) -> Output {
    let cases = repo(&format!("experiments/agent/refund-cases/{case}"));
    let script = repo("experiments/agent/scripts/refunds.toml");
    let mut args = vec!["agent", "run", "--format", "json", "--case"];
    let (cases, script) = (cases.display().to_string(), script.display().to_string());
    args.extend([cases.as_str(), "--driver", "scripted", script.as_str()]);
    args.extend(extra);
    args.push("--");
    args.extend(crm(variant));
    witness(&args)
}

/// The tools of every call of a run, in order.
fn tools_called(run: &Value) -> Vec<String> {
    run["trace"]["turns"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|t| t["steps"].as_array().cloned().unwrap_or_default())
        .flat_map(|s| s["calls"].as_array().cloned().unwrap_or_default())
        .map(|c| c["tool"].as_str().unwrap_or_default().to_owned())
        .collect()
}

fn description(doc: &Value, tool: &str) -> String {
    doc["tools"]["definitions"]
        .as_array()
        .and_then(|d| d.iter().find(|d| d["name"] == tool))
        .and_then(|d| d["description"].as_str())
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn a_pinned_manifest_is_handed_while_the_calls_go_to_the_live_server() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pin = pin(dir.path());
    let pinned_output = refunds(
        "refund-long-cart.toml",
        &["--manifest", &pin],
        "orders-search-hint",
    );
    let pinned = document(&pinned_output);
    let fingerprint = witness(&["manifest", "fingerprint", &pin]);
    let fingerprint = String::from_utf8_lossy(&fingerprint.stdout)
        .trim()
        .to_owned();
    assert_eq!(pinned["tools"]["source"], "manifest");
    assert_eq!(pinned["tools"]["manifest"]["fingerprint"], fingerprint);
    assert_eq!(pinned["tools"]["manifest"]["file"], pin);
    assert_ne!(
        pinned["server"]["manifest"], fingerprint,
        "the live server lists the edited manifest"
    );
    assert!(
        String::from_utf8_lossy(&pinned_output.stderr).contains("while the server lists"),
        "the difference is said on stderr"
    );
    assert!(!description(&pinned, "lookup_order").contains("Prefer"));
    let run = &pinned["runs"][0];
    assert_eq!(tools_called(run)[0], "lookup_order");
    // The calls reached the live server: its refunds are in the trace.
    assert_eq!(run["trace"]["tools"][4]["name"], "search_orders");

    // The pin hands exactly what the pinned server would have handed, in
    // its listing order: the same fingerprint.
    let served = document(&refunds("refund-long-cart.toml", &[], "orders"));
    assert_eq!(served["tools"]["source"], "server");
    assert_eq!(
        served["tools"]["fingerprint"],
        pinned["tools"]["fingerprint"]
    );
    assert_eq!(served["server"]["manifest"], fingerprint);

    // The live manifest carries the edit, and the reader follows it.
    let live = document(&refunds("refund-long-cart.toml", &[], "orders-search-hint"));
    assert!(
        description(&live, "lookup_order")
            .ends_with("Prefer search_orders when the ID is unknown.")
    );
    assert_eq!(
        tools_called(&live["runs"][0])[..2],
        ["search_orders", "lookup_order"]
    );
    assert_eq!(live["runs"][0]["outcome"], "too_many_calls");
}

#[test]
fn manifest_and_seed_misuse_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let missing = dir.path().join("none.json").display().to_string();
    let output = refunds("refund-one-item.toml", &["--manifest", &missing], "orders");
    assert_eq!(output.status.code(), Some(2));
    let said = String::from_utf8_lossy(&output.stderr);
    assert_eq!(said.trim().lines().count(), 1, "{said}");
    let edited = dir.path().join("edited.json");
    let text = std::fs::read_to_string(pin(dir.path())).expect("pin");
    std::fs::write(
        &edited,
        text.replace("Looks up one order", "Looks up an order"),
    )
    .expect("write");
    let output = refunds(
        "refund-one-item.toml",
        &["--manifest", &edited.display().to_string()],
        "orders",
    );
    assert_eq!(
        output.status.code(),
        Some(2),
        "a hand-edited pin is refused"
    );
    let recording = dir.path().join("run");
    let output = refunds(
        "refund-one-item.toml",
        &["--out", &recording.display().to_string()],
        "orders",
    );
    assert_eq!(output.status.code(), Some(0));
    let replay = witness(&[
        "agent",
        "run",
        "--driver",
        "replay",
        &recording.join("agent-run.json").display().to_string(),
        "--manifest",
        &missing,
    ]);
    assert_eq!(replay.status.code(), Some(2));
    let openai = witness(&[
        "agent",
        "run",
        "--driver",
        "openai",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--model",
        "m",
        "--seed",
        "2",
        "--case",
        &repo("experiments/agent/refund-cases").display().to_string(),
        "--",
        "mcp-witness",
        "testbed",
        "crm",
        "--store",
        "{db}",
    ]);
    assert_eq!(openai.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&openai.stderr).contains("--seed"));
}

//! Seed 004's weekend incident end to end with the scripted driver: a
//! pinned manifest handed to the model while the calls go to the live
//! server; the refund suite run with the Friday pin and with the live
//! manifest; `agent compare` showing the drop, the new first tool and the
//! over-budget long carts beside the noise floor; and a compare of two
//! reruns with no manifest change finding nothing real.

use crate::common;

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
    assert_eq!(
        pinned["settings"]["seed"], 1,
        "the reader draws: its seed is kept"
    );
    let run = &pinned["runs"][0];
    assert_eq!(tools_called(run)[0], "lookup_order");
    // The trace's catalog is the live server's, listed in its own order.
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

/// A command of a diff's measurement, as words, with the placeholders
/// filled: the cases, the scripted reader, the live server, and `runs/`
/// inside `dir`.
fn filled(command: &str, dir: &Path, live: &str) -> Vec<String> {
    let words = witness_manifest::source::split_command(command).expect("splits");
    let cases = repo("experiments/agent/refund-cases").display().to_string();
    let script = repo("experiments/agent/scripts/refunds.toml")
        .display()
        .to_string();
    let mut out = Vec::new();
    for word in words.into_iter().skip(1) {
        match word.as_str() {
            "CASES" => out.push(cases.clone()),
            "DRIVER" => out.extend(["scripted".to_owned(), script.clone()]),
            "SERVER" => out.extend(crm(live).map(str::to_owned)),
            path if path.starts_with("runs/") => {
                out.push(dir.join(path).display().to_string());
            }
            _ => out.push(word),
        }
    }
    out
}

fn run_words(words: &[String]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mcp-witness"))
        .args(words)
        .output()
        .expect("mcp-witness runs")
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("read")).expect("JSON")
}

fn metric<'a>(group: &'a Value, name: &str) -> &'a Value {
    group["metrics"]
        .as_array()
        .and_then(|m| m.iter().find(|m| m["metric"] == name))
        .unwrap_or(&Value::Null)
}

fn case_of<'a>(report: &'a Value, id: &str) -> &'a Value {
    report["cases"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["case"] == id))
        .unwrap_or(&Value::Null)
}

const LIVE: &str = "orders-search-hint";

/// Monday's scheduled diff of Friday's pin against the live server: the
/// description edit, and the commands that measure it.
fn monday_diff(pin: &str) -> Vec<String> {
    let diff = witness(&[
        "manifest",
        "diff",
        "--format",
        "json",
        pin,
        "live:mcp-witness testbed crm --variant orders-search-hint --store {jail}/crm.db",
    ]);
    assert_eq!(diff.status.code(), Some(1));
    let diff = document(&diff);
    assert_eq!(diff["changes"][0]["class"], "description-edited");
    assert_eq!(
        diff["changes"][0]["measure"],
        serde_json::json!(["agent-compare"])
    );
    let commands: Vec<String> = diff["measurements"][0]["commands"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c.as_str().map(str::to_owned))
        .collect();
    assert_eq!(commands.len(), 3, "{commands:?}");
    assert!(commands[0].contains(&format!("--manifest {pin}")));
    let sarif = witness(&[
        "manifest",
        "diff",
        "--format",
        "sarif",
        pin,
        "live:mcp-witness testbed crm --variant orders-search-hint --store {jail}/crm.db",
    ]);
    let result = &document(&sarif)["runs"][0]["results"][0];
    assert_eq!(
        result["properties"]["measure"],
        serde_json::json!(["agent-compare"])
    );
    commands
}

/// The two runs the diff names and a rerun of the first on seed 2, side by
/// side (ten runs of five cases each).
fn run_the_suites(commands: &[String], dir: &Path) {
    let mut rerun = filled(&commands[0], dir, LIVE);
    let at = rerun
        .iter()
        .position(|w| w.ends_with("runs/before"))
        .expect("--out");
    rerun[at] = dir.join("runs/rerun").display().to_string();
    rerun.splice(2..2, ["--seed".to_owned(), "2".to_owned()]);
    let runs = [
        filled(&commands[0], dir, LIVE),
        filled(&commands[1], dir, LIVE),
        rerun,
    ];
    let outputs: Vec<Output> = std::thread::scope(|scope| {
        let handles: Vec<_> = runs.iter().map(|w| scope.spawn(|| run_words(w))).collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("joins"))
            .collect()
    });
    for output in &outputs {
        let code = output.status.code();
        assert!(
            matches!(code, Some(0 | 1)),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

/// The drop overall with a non-zero floor beside it, the long carts over
/// budget, the short ones still passing, a call slower.
fn assert_the_drop(report: &Value) {
    assert_eq!(
        report["handed_changes"],
        serde_json::json!([{"tool": "lookup_order", "what": ["description"]}])
    );
    assert_eq!(
        report["before"]["server_manifest"],
        report["after"]["server_manifest"]
    );
    let overall = &report["overall"][0];
    let pass = metric(overall, "pass_rate");
    assert_eq!(pass["verdict"], "worse", "{pass}");
    let (delta, floor) = (
        pass["delta"].as_f64().unwrap_or(0.0),
        pass["floor"].as_f64().unwrap_or(0.0),
    );
    assert!(delta < 0.0 && floor > 0.0 && -delta > floor, "{pass}");
    assert_eq!(metric(overall, "calls")["verdict"], "worse");
    assert_eq!(metric(overall, "turns")["verdict"], "worse");
    for long in ["refund-long-cart", "refund-long-cart-gift"] {
        let case = case_of(report, long);
        assert_eq!(metric(case, "over_budget")["after"], 1.0, "{long}");
        assert_eq!(metric(case, "over_budget")["verdict"], "worse", "{long}");
        assert_eq!(metric(case, "pass_rate")["verdict"], "worse", "{long}");
        let floor = metric(case, "pass_rate")["floor"].as_f64();
        assert!(floor.unwrap_or(0.0) > 0.0, "{long}");
    }
    for short in ["refund-one-item", "refund-two-mugs", "order-status"] {
        let case = case_of(report, short);
        assert_eq!(metric(case, "pass_rate")["after"], 1.0, "{short}");
        assert_eq!(
            metric(case, "pass_rate")["verdict"],
            "within-noise",
            "{short}"
        );
        assert_eq!(metric(case, "calls")["delta"], 1.0, "{short}");
    }
}

/// `search_orders` is every case's new first tool and new to the history.
fn assert_the_new_first_tool(report: &Value) {
    for case in report["cases"].as_array().into_iter().flatten() {
        let first = case["first_tools"]
            .as_array()
            .and_then(|f| f.iter().find(|f| f["tool"] == "search_orders"))
            .unwrap_or(&Value::Null);
        assert_eq!(first["new"], true, "{}", case["case"]);
        assert_eq!(first["share"]["after"], 1.0);
        assert_eq!(first["share"]["verdict"], "changed");
        assert_eq!(case["new_tools"], serde_json::json!(["search_orders"]));
    }
    assert_eq!(report["history"]["new_tools"][0]["tool"], "search_orders");
    assert_eq!(report["history"]["new_tools"][0]["runs"], 50);
}

/// The same compare again writes the same JSON and page.
fn assert_same_bytes(command: &str, dir: &Path) {
    let again = dir.join("again");
    let mut words = filled(command, dir, LIVE);
    let out_at = words.len() - 1;
    words[out_at] = again.display().to_string();
    assert_eq!(run_words(&words).status.code(), Some(1));
    for file in ["agent-compare.json", "agent-compare.html"] {
        let a = std::fs::read(dir.join("runs/compare").join(file)).expect("first");
        let b = std::fs::read(again.join(file)).expect("second");
        assert!(
            a == b,
            "{file} differs between two compares of the same runs"
        );
    }
}

/// No manifest change: the pin twice, on two seeds. The runs differ (the
/// reruns vary), and nothing is called real.
fn assert_no_change(dir: &Path, tutorial: &str) {
    let before = dir.join("runs/before").display().to_string();
    let rerun = dir.join("runs/rerun").display().to_string();
    let text = witness(&["agent", "compare", &before, &rerun]);
    assert_quoted(tutorial, "rerun", &String::from_utf8_lossy(&text.stdout));
    let same = witness(&["agent", "compare", "--format", "json", &before, &rerun]);
    assert_eq!(
        same.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&same.stdout)
    );
    let same = document(&same);
    let summary = &same["summary"];
    let real = (
        summary["worse"].as_u64(),
        summary["better"].as_u64(),
        summary["changed"].as_u64(),
    );
    assert_eq!(real, (Some(0), Some(0), Some(0)), "{summary}");
    assert_eq!(same["history"]["new_tools"], serde_json::json!([]));
    assert!(same["handed_changes"].is_null());
    let moved = same["cases"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| metric(c, "calls")["delta"].as_f64().unwrap_or(0.0) != 0.0)
        .count();
    assert!(moved > 0, "the two seeds are real reruns: some case moved");
}

/// Seed 004, step 4, with our commands: Friday's pin, Monday's diff, and
/// the commands the diff names, run as given (placeholders filled): the
/// suite with the pin and with the live manifest, ten runs each, against
/// the live server; then the compare. Beside them, the suite with the pin
/// again on another seed: a rerun with no manifest change. The tutorial
/// quotes these compares; its checked lines are held to their output.
#[test]
fn the_weekend_incident_is_measured_not_guessed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pin = pin(dir.path());
    let commands = monday_diff(&pin);
    run_the_suites(&commands, dir.path());
    let compare = run_words(&filled(&commands[2], dir.path(), LIVE));
    let text = String::from_utf8_lossy(&compare.stdout).into_owned();
    assert_eq!(compare.status.code(), Some(1), "{text}");
    let report = read_json(&dir.path().join("runs/compare/agent-compare.json"));
    assert_the_drop(&report);
    assert_the_new_first_tool(&report);
    assert!(
        text.contains("first: search_orders (new)") && text.contains("WORSE"),
        "{text}"
    );
    let page =
        std::fs::read_to_string(dir.path().join("runs/compare/agent-compare.html")).expect("page");
    common::html::assert_well_nested("agent-compare.html", &page);
    assert!(page.contains("search_orders") && page.contains("Noise floor"));
    assert_same_bytes(&commands[2], dir.path());
    let tutorial = std::fs::read_to_string(repo("docs/weekend-incident.md")).expect("tutorial");
    assert_quoted(&tutorial, "compare", &text);
    for fingerprint in [
        &report["before"]["manifest"]["fingerprint"],
        &report["after"]["server_manifest"],
    ] {
        let fingerprint = fingerprint.as_str().unwrap_or("none");
        assert!(
            tutorial.contains(fingerprint),
            "the tutorial shows {fingerprint}"
        );
    }
    assert_no_change(dir.path(), &tutorial);
}

/// Every line of the fenced blocks that follow a `<!-- checked: TAG`
/// comment in `doc` is a line of `output`: the tutorial shows what the
/// commands print.
fn assert_quoted(doc: &str, tag: &str, output: &str) {
    let printed: Vec<&str> = output.lines().collect();
    let marker = format!("<!-- checked: {tag}");
    let mut checked = 0;
    for (at, _) in doc.match_indices(&marker) {
        let rest = &doc[at..];
        let Some(open) = rest.find("```") else {
            panic!("no block after {marker}");
        };
        let body = rest[open..]
            .lines()
            .skip(1)
            .take_while(|l| !l.starts_with("```"));
        for line in body.filter(|l| !l.trim().is_empty()) {
            assert!(
                printed.contains(&line),
                "the tutorial quotes a line the compare did not print:\n{line}\n---\n{output}"
            );
            checked += 1;
        }
    }
    assert!(checked > 0, "no checked line for {tag}");
}

#[test]
fn a_compare_refuses_what_it_cannot_read_or_pair_and_cannot_conclude_on_one_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let missing = dir.path().join("missing.json").display().to_string();
    let output = witness(&["agent", "compare", &missing, &missing]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&output.stderr)
            .trim()
            .lines()
            .count(),
        1
    );
    let pin = pin(dir.path());
    let output = witness(&["agent", "compare", &pin, &pin]);
    assert_eq!(output.status.code(), Some(2), "a pin is not a run document");
    let one = dir.path().join("one");
    let output = refunds(
        "refund-one-item.toml",
        &["--out", &one.display().to_string()],
        "orders",
    );
    assert_eq!(output.status.code(), Some(0));
    let one = one.display().to_string();
    let output = witness(&["agent", "compare", &one, &one]);
    assert_eq!(
        output.status.code(),
        Some(3),
        "one run a side has no noise floor"
    );
    assert!(String::from_utf8_lossy(&output.stdout).contains("INCOMPLETE"));
    // Another case on the other side: nothing pairs, and the one line says
    // what pairing needs.
    let other = dir.path().join("other");
    let output = refunds(
        "order-status.toml",
        &["--out", &other.display().to_string()],
        "orders",
    );
    assert_eq!(output.status.code(), Some(0));
    let output = witness(&["agent", "compare", &one, &other.display().to_string()]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("no case and model in common (the same case, by id and content"),
        "{stderr}"
    );
}

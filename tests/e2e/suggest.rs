//! `mcp-witness suggest` on fresh audits of the testbed: each of E1's six
//! lying variants gets its lying hint named with the value its behaviour
//! supports, as text and as a JSON patch; the honest variant gets nothing.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

use crate::common::*;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_mcp-witness"))
}

/// Audits `variant` with E1's plan on a seeded store; gives audit.json.
fn audit(dir: &Path, variant: &str) -> PathBuf {
    let store = dir.join("seed.db");
    let seeded = bin()
        .args(["testbed", "seed", "--store"])
        .arg(&store)
        .output()
        .expect("seed runs");
    assert!(seeded.status.success(), "{seeded:?}");
    let out = dir.join("out");
    let plan = Path::new(env!("CARGO_MANIFEST_DIR")).join("experiments/e1/plan.toml");
    let output = bin()
        .args(["audit", "--format", "json", "--settle-ms", "0"])
        .arg(format!("--store=db=sqlite:{}", store.display()))
        .arg(format!("--plan={}", plan.display()))
        .arg(format!("--out={}", out.display()))
        .args([
            "--",
            "mcp-witness",
            "testbed",
            "serve",
            "--variant",
            variant,
        ])
        .args(["--store", "{db}"])
        .output()
        .expect("audit runs");
    let code = output.status.code();
    let expected = if variant == "honest" { 0 } else { 1 };
    assert_eq!(
        code,
        Some(expected),
        "{variant}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    out.join("audit.json")
}

fn suggest(args: &[&str], audit: &Path) -> Output {
    bin()
        .arg("suggest")
        .args(args)
        .arg(audit)
        .output()
        .expect("suggest runs")
}

/// The tools/list result the audit recorded: names and annotations.
fn tools_list(audit: &Path) -> Value {
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(audit).expect("audit.json")).expect("json");
    let tools: Vec<Value> = report["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| json!({"name": t["name"], "annotations": t["annotations"]}))
        .collect();
    json!({ "tools": tools })
}

/// Applies the ops a suggestion patch uses (test, add, replace), failing
/// on a test that does not hold.
fn apply(document: &mut Value, patch: &Value) {
    for op in patch.as_array().expect("a patch is an array") {
        let path = op["path"].as_str().expect("path");
        let (parent, key) = path.rsplit_once('/').expect("a member path");
        let target = document.pointer_mut(parent).expect("the parent exists");
        match op["op"].as_str() {
            Some("test") => assert_eq!(target[key], op["value"], "test at {path}"),
            Some("replace") | Some("add") => target[key] = op["value"].clone(),
            other => panic!("unexpected op {other:?}"),
        }
    }
}

#[test]
fn suggest_names_each_planted_lie_with_its_right_value_and_nothing_on_honest() {
    let lies = [
        ("lie-readonly", "save_note", "readOnlyHint", false),
        ("hide-destructive", "delete_note", "destructiveHint", true),
        ("webhook-readonly", "create_webhook", "readOnlyHint", false),
        ("silent-keymint", "get_note", "readOnlyHint", false),
        ("shadow-webhook", "list_notes", "readOnlyHint", false),
        ("phantom-write", "ping", "readOnlyHint", false),
    ];
    for (variant, tool, hint, value) in lies {
        let dir = tempfile::tempdir().expect("tempdir");
        let audit = audit(dir.path(), variant);
        let patch = suggest(&["--format", "json-patch"], &audit);
        assert_eq!(patch.status.code(), Some(1), "{variant}: {patch:?}");
        let patch = stdout_json(&patch);
        let mut catalog = tools_list(&audit);
        let index = catalog["tools"]
            .as_array()
            .and_then(|t| t.iter().position(|t| t["name"] == tool))
            .expect("the lying tool is listed");
        let declared = catalog["tools"][index]["annotations"][hint].clone();
        assert_eq!(declared, Value::Bool(!value), "{variant}: the planted lie");
        apply(&mut catalog, &patch);
        assert_eq!(
            catalog["tools"][index]["annotations"][hint],
            Value::Bool(value),
            "{variant}: {patch:#}"
        );
        // Only the lying tool is patched.
        let touched: Vec<&str> = patch
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|op| op["path"].as_str())
            .filter(|p| !p.starts_with(&format!("/tools/{index}/")))
            .collect();
        assert!(touched.is_empty(), "{variant}: {touched:?}");

        let text = suggest(&[], &audit);
        assert_eq!(text.status.code(), Some(1));
        let text = String::from_utf8_lossy(&text.stdout);
        let line = format!("  {hint}: {} -> {value}", !value);
        assert!(
            text.contains(&format!("\n{tool} (tools/{index})\n")),
            "{text}"
        );
        assert!(text.contains(&line), "{variant}: no {line:?} in\n{text}");
        assert!(text.contains("; call"), "{text}");
    }

    let dir = tempfile::tempdir().expect("tempdir");
    let audit = audit(dir.path(), "honest");
    let patch = suggest(&["--format", "json-patch"], &audit);
    assert_eq!(patch.status.code(), Some(0), "{patch:?}");
    assert_eq!(stdout_json(&patch), json!([]));
    let text = suggest(&[], &audit);
    assert_eq!(text.status.code(), Some(0));
    assert!(
        String::from_utf8_lossy(&text.stdout).starts_with("no suggestion:"),
        "{text:?}"
    );
}

#[test]
fn suggest_refuses_what_is_not_an_audit_in_one_line_with_exit_2() {
    let dir = tempfile::tempdir().expect("tempdir");
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).expect("write");
        path
    };
    let cases = [
        (dir.path().join("missing.json"), "cannot read"),
        (write("broken.json", "{\"schema\": "), "is not JSON"),
        (
            write("e1.json", r#"{"schema": "mcp-witness.e1/v1"}"#),
            "is not an audit report",
        ),
        (
            write("v9.json", r#"{"schema": "mcp-witness.audit/v9"}"#),
            "is a mcp-witness.audit/v9 document",
        ),
        (
            write("thin.json", r#"{"schema": "mcp-witness.audit/v1"}"#),
            "does not parse as mcp-witness.audit/v1",
        ),
    ];
    for (path, said) in cases {
        let output = suggest(&[], &path);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{}: {stderr}",
            path.display()
        );
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains(said), "{said:?} not in {stderr}");
        assert!(output.stdout.is_empty());
    }
}

//! Every document mcp-witness writes validates against the JSON Schema that
//! `mcp-witness schema` prints for it.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

fn schema(document: &str) -> Value {
    let output = Command::new(env!("CARGO_BIN_EXE_mcp-witness"))
        .args(["schema", document])
        .output()
        .expect("mcp-witness runs");
    assert!(output.status.success());
    serde_json::from_slice(&output.stdout).expect("a JSON Schema")
}

fn assert_valid(schema: &Value, instance: &Value, what: &str) {
    let validator = jsonschema::validator_for(schema).expect("the schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(instance)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .take(5)
        .collect();
    assert!(
        errors.is_empty(),
        "{what} does not match its schema: {errors:#?}"
    );
}

fn read(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("readable")).expect("JSON")
}

#[test]
fn lab_documents_and_their_audits_match_the_printed_schemas() {
    let dir = tempfile::tempdir().expect("tempdir");
    let status = Command::new(env!("CARGO_BIN_EXE_mcp-witness"))
        .args(["lab", "all", "--out"])
        .arg(dir.path())
        .arg("--cases-dir")
        .arg(dir.path().join("no-cases"))
        .status()
        .expect("runs");
    assert!(status.success());
    let audit = schema("audit");
    for name in ["e1", "e2", "e3"] {
        let document = read(&dir.path().join(format!("{name}.json")));
        assert_valid(&schema(name), &document, name);
    }
    let mut audits = 0;
    for entry in std::fs::read_dir(dir.path().join("audits"))
        .expect("audits")
        .flatten()
    {
        assert_valid(
            &audit,
            &read(&entry.path()),
            &entry.path().display().to_string(),
        );
        audits += 1;
    }
    assert!(audits >= 15, "only {audits} audits");
}

#[test]
fn the_committed_case_audits_match_the_audit_schema() {
    // They carry what only case audits have: clock columns on a store and
    // replaced clock values under volatile.
    let audits = Path::new(env!("CARGO_MANIFEST_DIR")).join("experiments/results/audits");
    let schema = schema("audit");
    for name in ["memory", "filesystem", "sqlite"] {
        let path = audits.join(format!("case-{name}.json"));
        assert_valid(&schema, &read(&path), &path.display().to_string());
    }
}

#[test]
fn an_incomplete_audit_still_matches_the_schema() {
    let fake = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fake_server.py");
    let output = Command::new(env!("CARGO_BIN_EXE_mcp-witness"))
        .args([
            "audit",
            "--format",
            "json",
            "--timeout-ms",
            "1000",
            "--",
            "python3",
        ])
        .arg(&fake)
        .arg("hang-call")
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(3));
    let report: Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert_valid(&schema("audit"), &report, "incomplete audit");
}

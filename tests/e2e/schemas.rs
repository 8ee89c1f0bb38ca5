//! Every document mcp-witness writes validates against the JSON Schema that
//! `mcp-witness schema` prints for it, and the committed copies of those
//! schemas under `docs/schemas/` are exactly what the code produces.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use witness_model::schema::DOCUMENTS;

/// Rewrites the committed schemas instead of comparing them.
const UPDATE: &str = "MCP_WITNESS_UPDATE_SCHEMAS";

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

fn schemas_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/schemas")
}

#[test]
fn the_committed_schemas_are_the_ones_the_code_produces() {
    let dir = schemas_dir();
    let update = std::env::var(UPDATE).is_ok_and(|v| v == "1");
    let regenerate = format!("regenerate with `{UPDATE}=1 cargo test --test e2e schemas`");
    let mut stale = Vec::new();
    for document in DOCUMENTS {
        let path = dir.join(document.file_name());
        let text = document.schema_text().expect("the schema serializes");
        if update {
            std::fs::create_dir_all(&dir).expect("docs/schemas can be created");
            std::fs::write(&path, &text).expect("the schema can be written");
        } else if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
            stale.push(format!("docs/schemas/{}", document.file_name()));
        }
    }
    assert!(
        stale.is_empty(),
        "these committed schemas differ from the code (or are missing): {stale:#?}; {regenerate}"
    );
    let known: Vec<String> = DOCUMENTS.iter().map(|d| d.file_name()).collect();
    let strays: Vec<String> = std::fs::read_dir(&dir)
        .expect("docs/schemas exists")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| !known.contains(name))
        .collect();
    assert!(
        strays.is_empty(),
        "docs/schemas holds files no document produces: {strays:?}; remove them"
    );
}

#[test]
fn the_schema_command_prints_every_registered_document() {
    for document in DOCUMENTS {
        let output = Command::new(env!("CARGO_BIN_EXE_mcp-witness"))
            .args(["schema", document.name])
            .output()
            .expect("mcp-witness runs");
        assert_eq!(output.status.code(), Some(0), "{}", document.name);
        let printed = String::from_utf8(output.stdout).expect("UTF-8");
        assert_eq!(
            printed,
            document.schema_text().expect("serializes"),
            "{}",
            document.name
        );
    }
    // The two documents `schema` did not know before the registry.
    for (name, title) in [("plan", "PlanPreview"), ("case", "CaseReport")] {
        assert_eq!(schema(name)["title"], title);
    }
}

#[test]
fn a_plan_matches_the_printed_schema() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = format!("db=sqlite:{}", dir.path().join("n.db").display());
    let output = Command::new(env!("CARGO_BIN_EXE_mcp-witness"))
        .args(["plan", "--format", "json", "--store", &store])
        .args(["--", "mcp-witness", "testbed", "serve", "--store", "{db}"])
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(0));
    let plan: Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert_valid(&schema("plan"), &plan, "plan");
}

#[test]
fn the_committed_case_studies_match_the_printed_schema() {
    let results = Path::new(env!("CARGO_MANIFEST_DIR")).join("experiments/results");
    let case = schema("case");
    let mut cases = 0;
    for entry in std::fs::read_dir(&results).expect("results").flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with("case-") && name.ends_with(".json") {
            assert_valid(&case, &read(&entry.path()), &name);
            cases += 1;
        }
    }
    assert_eq!(
        cases,
        witness_lab::cases::CASES.len(),
        "every committed case study"
    );
}

#[test]
fn the_committed_field_study_matches_the_printed_schema() {
    // Written before the unset tally was counted: a field added to v1 is
    // optional, so documents of the same version written before it stay
    // valid.
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("experiments/field/results/development/field.json");
    assert_valid(&schema("field"), &read(&path), &path.display().to_string());
}

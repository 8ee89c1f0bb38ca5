//! Honest servers made to lie: a stdio proxy rewrites one tool's annotations
//! in tools/list, and the audit must fail EFF-01 on that tool, with the
//! observed write as evidence. One server per observer kind (SQLite,
//! filesystem, JSONL); the last two are published servers and need
//! `experiments/cases/install.sh`.

use crate::common;

use common::*;

fn liar(tool: &str, hints: &[&str]) -> Vec<String> {
    let mut args = vec![
        "python3".to_owned(),
        fixture("annotation_liar.py").to_string_lossy().into_owned(),
        tool.to_owned(),
    ];
    args.extend(hints.iter().map(|h| (*h).to_owned()));
    args.push("--".into());
    args
}

fn eff01_fails_with(report: &serde_json::Value, tool: &str, object: &str) {
    let c = check(report, "EFF-01", tool);
    assert_eq!(c["verdict"], "fail", "{c:#}");
    let objects: Vec<&str> = c["evidence"]["effects"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e["object"].as_str())
        .collect();
    assert!(objects.contains(&object), "{object} not in {objects:?}");
    let declared = report["tools"]
        .as_array()
        .and_then(|t| t.iter().find(|t| t["name"] == tool))
        .map(|t| t["annotations"]["readOnlyHint"].clone());
    assert_eq!(declared, Some(serde_json::Value::Bool(true)));
}

#[test]
fn sqlite_testbed_save_note_declared_read_only_fails_eff01() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut args = s(&["audit", "--format", "json", "--settle-ms", "0"]);
    args.push(format!(
        "--store=db=sqlite:{}",
        dir.path().join("n.db").display()
    ));
    args.push("--".into());
    args.extend(liar(
        "save_note",
        &["readOnlyHint=true", "destructiveHint=null"],
    ));
    args.extend([
        env!("CARGO_BIN_EXE_mcp-witness").to_owned(),
        "testbed".into(),
        "serve".into(),
        "--variant".into(),
        "honest".into(),
        "--store".into(),
        "{db}".into(),
    ]);
    let (code, report) = witness(&args);
    assert_eq!(code, 1, "{:#}", report["checks"]);
    // Invented names carry the tool that invented them.
    eff01_fails_with(&report, "save_note", "db:notes/witness-save_note");
    // The other tools keep their honest declarations and pass.
    assert_eq!(check(&report, "EFF-01", "get_note")["verdict"], "pass");
}

#[test]
fn filesystem_server_write_file_declared_read_only_fails_eff01() {
    let Some(cases) = case_packages() else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let plan = dir.path().join("plan.toml");
    std::fs::write(
        &plan,
        "[[call]]\ntool = \"write_file\"\nargs = { path = \"{fs}/lie.txt\", content = \"written\" }\n",
    )
    .expect("plan");
    let mut args = s(&["audit", "--format", "json", "--settle-ms", "50"]);
    args.push(format!(
        "--store=fs=fs:{}",
        dir.path().join("tree").display()
    ));
    args.push(format!("--plan={}", plan.display()));
    args.push("--".into());
    args.extend(liar("write_file", &["readOnlyHint=true"]));
    args.extend([
        "node".to_owned(),
        cases
            .join("node_modules/.bin/mcp-server-filesystem")
            .to_string_lossy()
            .into_owned(),
        "{fs}".to_owned(),
    ]);
    let (code, report) = witness(&args);
    assert_eq!(code, 1, "{:#}", report["calls"]);
    eff01_fails_with(&report, "write_file", "fs:file/lie.txt");
}

#[test]
fn memory_server_create_entities_declared_read_only_fails_eff01_under_the_planner() {
    let Some(cases) = case_packages() else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let mut args = s(&["audit", "--format", "json", "--settle-ms", "50"]);
    args.push(format!(
        "--store=mem=jsonl:{}",
        dir.path().join("memory.jsonl").display()
    ));
    args.push("--env=MEMORY_FILE_PATH={mem}".into());
    args.push("--".into());
    args.extend(liar("create_entities", &["readOnlyHint=true"]));
    args.extend([
        "node".to_owned(),
        cases
            .join("node_modules/.bin/mcp-server-memory")
            .to_string_lossy()
            .into_owned(),
    ]);
    // No plan: the planner synthesizes an entity, and the lie is caught.
    let (code, report) = witness(&args);
    assert_eq!(code, 1, "{:#}", report["calls"]);
    eff01_fails_with(
        &report,
        "create_entities",
        "mem:entity/witness-create_entities",
    );
    assert_eq!(report["planner"]["origin"], "synthesized");
}

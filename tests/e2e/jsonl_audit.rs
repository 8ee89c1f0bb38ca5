//! The JSONL observer inside an audit: a malformed line is reported once, as
//! a finding on the call after which it appeared, and the rest of the store
//! is still observed.

use crate::common;

use common::*;

#[test]
fn a_malformed_jsonl_line_is_reported_and_the_rest_observed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let plan = dir.path().join("plan.toml");
    std::fs::write(
        &plan,
        "[[call]]\ntool = \"add_entity\"\nargs.name = \"Ada\"\n\
         [[call]]\ntool = \"scribble\"\n\
         [[call]]\ntool = \"add_entity\"\nargs.name = \"Bob\"\n",
    )
    .expect("plan");
    let mut args = s(&["audit", "--format", "json", "--settle-ms", "0"]);
    args.push(format!(
        "--store=mem=jsonl:{}",
        dir.path().join("graph.jsonl").display()
    ));
    args.push(format!("--plan={}", plan.display()));
    args.push("--".into());
    args.push("python3".into());
    args.push(fixture("jsonl_server.py").to_string_lossy().into_owned());
    args.push("{mem}".into());
    let (code, report) = witness(&args);
    assert_eq!(report["complete"], true, "{report:#}");
    assert_eq!(code, 0, "{:#}", report["checks"]);
    let warnings: Vec<&serde_json::Value> = report["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|f| f["kind"] == "observer-warning")
        .collect();
    assert_eq!(warnings.len(), 1, "reported once: {:#}", report["findings"]);
    assert_eq!(warnings[0]["call"], 2);
    assert!(
        warnings[0]["detail"]
            .as_str()
            .is_some_and(|d| d.contains("line 2") && d.contains("not JSON")),
        "{:#}",
        warnings[0]
    );
    assert_eq!(
        ops(&report, "scribble"),
        [("line/2".to_string(), "create".to_string())]
    );
    assert_eq!(
        ops(&report, "add_entity"),
        [
            ("entity/Ada".to_string(), "create".to_string()),
            ("entity/Bob".to_string(), "create".to_string())
        ]
    );
    // The store's own directory is the JSONL observer's; the jail-wide one
    // saw nothing.
    assert_eq!(report["summary"]["outside_stores"], 0);
}

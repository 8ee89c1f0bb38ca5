//! The response lane end to end, through the binary: each of seed 000's
//! nine plan checks fails on the testbed variant that breaks it and passes
//! on `response-honest`; `--format junit` and `--format sarif` validate
//! against their published schemas (tests/schemas/, offline) and follow
//! GitHub's code-scanning rules.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

const PLAN: &str = "experiments/response/plan.toml";

/// (variant, tool, check id, plan name): what each variant breaks.
const BROKEN: [(&str, &str, &str, &str); 9] = [
    ("rsp-unavailable", "count_notes", "RSP-01", "succeeds"),
    ("rsp-error-as-rpc", "lookup_note", "RSP-02", "is_error"),
    ("rsp-wrong-code", "lookup_note", "RSP-03", "error_code"),
    (
        "rsp-schema-violation",
        "count_notes",
        "RSP-04",
        "output_schema",
    ),
    ("rsp-over-limit", "search_notes", "RSP-05", "max_items"),
    ("rsp-slow", "ping", "RSP-06", "latency_under"),
    (
        "rsp-looping-cursor",
        "search_notes",
        "RSP-07",
        "pagination_terminates",
    ),
    ("rsp-drifting", "count_notes", "RSP-08", "idempotent"),
    ("rsp-counting-write", "count_notes", "RSP-09", "no_mutation"),
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Audits `variant` with the response plan on a fresh seeded store; gives
/// the exit code and stdout.
fn audit(variant: &str, format: &str) -> (i32, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let seed = dir.path().join("seed.db");
    let seeded = Command::new(env!("CARGO_BIN_EXE_mcp-witness"))
        .args(["testbed", "seed", "--store"])
        .arg(&seed)
        .output()
        .expect("seed runs");
    assert!(seeded.status.success());
    let output = Command::new(env!("CARGO_BIN_EXE_mcp-witness"))
        .current_dir(root())
        .args([
            "audit",
            "--settle-ms",
            "0",
            "--deterministic",
            "--format",
            format,
            "--plan",
            PLAN,
        ])
        .arg(format!("--store=db=sqlite:{}", seed.display()))
        .args([
            "--",
            "mcp-witness",
            "testbed",
            "serve",
            "--variant",
            variant,
            "--store",
            "{db}",
        ])
        .output()
        .expect("mcp-witness runs");
    let stdout = String::from_utf8(output.stdout).expect("UTF-8");
    (output.status.code().unwrap_or(-1), stdout)
}

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

fn response<'a>(report: &'a Value, id: &str, tool: &str) -> &'a Value {
    report["response"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["id"] == id && c["tool"] == tool))
        .unwrap_or(&Value::Null)
}

fn failing(report: &Value) -> Vec<(String, String)> {
    report["response"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["verdict"] == "fail")
        .map(|c| {
            (
                c["id"].as_str().unwrap_or("").to_owned(),
                c["tool"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect()
}

#[test]
fn each_plan_check_fails_on_its_planted_variant_and_passes_on_the_honest_one() {
    let (code, out) = audit("response-honest", "json");
    let honest = json(&out);
    assert_eq!(code, 0, "{:#}", honest["response"]);
    for (_, tool, id, _) in BROKEN {
        let c = response(&honest, id, tool);
        assert_eq!(c["verdict"], "pass", "{id} on {tool}: {c:#}");
    }
    for (variant, tool, id, name) in BROKEN {
        let (defect_tool, defect) = witness_testbed::oracle::response_defect(
            witness_testbed::Variant::from_name(variant).expect("a variant"),
        )
        .expect("a response defect");
        assert_eq!((defect_tool, defect), (tool, name), "{variant}");
        let (code, out) = audit(variant, "json");
        let report = json(&out);
        assert_eq!(code, 1, "{variant}");
        assert_eq!(
            failing(&report),
            [(id.to_owned(), tool.to_owned())],
            "{variant} breaks {name} alone"
        );
        let reason = response(&report, id, tool)["reason"].as_str().unwrap_or("");
        assert!(!reason.is_empty(), "{variant}");
    }
}

fn validate_sarif(log: &Value) {
    let schema_text = std::fs::read_to_string(root().join("tests/schemas/sarif-schema-2.1.0.json"))
        .expect("the committed SARIF schema");
    let mut schema: Value = serde_json::from_str(&schema_text).expect("JSON");
    // The OASIS schema's two `language` patterns have a lone `]`: ECMA-262
    // reads it as a literal, this validator's meta-schema check refuses it.
    // The in-memory copy escapes it (same meaning); the file stays as
    // published.
    for owner in ["run", "toolComponent"] {
        let at = format!("/definitions/{owner}/properties/language/pattern");
        let pattern = schema.pointer_mut(&at).expect("a language pattern");
        assert_eq!(pattern, "^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}]?$");
        *pattern = Value::from("^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}\\]?$");
    }
    let validator = jsonschema::validator_for(&schema).expect("the SARIF schema compiles");
    let errors: Vec<String> = validator.iter_errors(log).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "SARIF 2.1.0 schema: {errors:#?}");
    // GitHub code scanning: stable rule ids, every result on a known rule
    // with a message, a physical location and its own fingerprint.
    let run = &log["runs"][0];
    let rules = run["tool"]["driver"]["rules"].as_array().expect("rules");
    for result in run["results"].as_array().expect("results") {
        let index = result["ruleIndex"].as_u64().expect("ruleIndex") as usize;
        assert_eq!(rules[index]["id"], result["ruleId"]);
        assert!(
            rules[index]["help"]["text"]
                .as_str()
                .is_some_and(|t| !t.is_empty())
        );
        assert!(
            result["message"]["text"]
                .as_str()
                .is_some_and(|t| !t.is_empty())
        );
        let location = &result["locations"][0];
        assert!(location["physicalLocation"]["artifactLocation"]["uri"].is_string());
        assert!(location["physicalLocation"]["region"]["startLine"].as_u64() >= Some(1));
        let prints = result["partialFingerprints"]
            .as_object()
            .expect("partialFingerprints");
        assert!(
            !prints.is_empty()
                && prints
                    .values()
                    .all(|v| v.as_str().is_some_and(|s| s.len() == 32))
        );
    }
}

#[test]
fn junit_and_sarif_validate_and_carry_every_verdict_and_every_failure() {
    let (code, xml) = audit("rsp-schema-violation", "junit");
    assert_eq!(code, 1);
    common::validate_junit(&xml);
    assert!(xml.contains("<testsuite name=\"effect lane\""), "{xml}");
    assert!(xml.contains("<testsuite name=\"response lane\""), "{xml}");
    let rsp04 = xml
        .split("<testcase ")
        .find(|case| case.starts_with("name=\"count_notes\" classname=\"mcp-witness.RSP-04\""))
        .and_then(|case| case.split("</testcase>").next())
        .unwrap_or_else(|| panic!("no RSP-04 case for count_notes: {xml}"));
    assert!(
        rsp04.contains("<failure ") && rsp04.contains("type=\"RSP-04\""),
        "{rsp04}"
    );
    assert!(
        xml.contains("<skipped message=\"skip: declares no outputSchema"),
        "{xml}"
    );
    let cases = xml.matches("<testcase ").count();
    let (_, out) = audit("rsp-schema-violation", "json");
    let report = json(&out);
    let verdicts = report["checks"].as_array().map_or(0, Vec::len)
        + report["response"].as_array().map_or(0, Vec::len);
    assert_eq!(cases, verdicts, "one test case per check and tool");

    let (code, first) = audit("rsp-schema-violation", "sarif");
    assert_eq!(code, 1);
    let log = json(&first);
    validate_sarif(&log);
    let results = log["runs"][0]["results"].as_array().expect("results");
    assert_eq!(results.len(), 1, "{results:#?}");
    let result = &results[0];
    assert_eq!(result["ruleId"], "RSP-04");
    assert_eq!(
        result["locations"][0]["logicalLocations"][0]["name"],
        "count_notes"
    );
    assert_eq!(
        result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        PLAN
    );
    // The plan's fourth [[call]] attached output_schema to count_notes.
    let plan = std::fs::read_to_string(root().join(PLAN)).expect("plan");
    let line = result["locations"][0]["physicalLocation"]["region"]["startLine"]
        .as_u64()
        .expect("a line") as usize;
    let following: Vec<&str> = plan.lines().skip(line - 1).take(2).collect();
    assert_eq!(following, ["[[call]]", "tool = \"count_notes\""]);
    assert_eq!(result["properties"]["calls"], serde_json::json!([7, 8]));
    // The same failure keeps its fingerprint from run to run.
    let (_, second) = audit("rsp-schema-violation", "sarif");
    assert_eq!(
        json(&second)["runs"][0]["results"][0]["partialFingerprints"],
        result["partialFingerprints"]
    );

    let (code, honest) = audit("response-honest", "sarif");
    assert_eq!(code, 0);
    let log = json(&honest);
    validate_sarif(&log);
    assert_eq!(log["runs"][0]["results"], serde_json::json!([]));
    assert_eq!(
        log["runs"][0]["invocations"][0]["executionSuccessful"],
        true
    );
}

#[test]
fn an_audit_that_cannot_finish_is_an_error_in_junit_and_unsuccessful_in_sarif() {
    for format in ["junit", "sarif"] {
        let output = Command::new(env!("CARGO_BIN_EXE_mcp-witness"))
            .args(["audit", "--format", format, "--", "/nonexistent/server"])
            .output()
            .expect("runs");
        assert_eq!(output.status.code(), Some(3), "{format}");
        let text = String::from_utf8(output.stdout).expect("UTF-8");
        if format == "junit" {
            common::validate_junit(&text);
            assert!(
                text.contains("errors=\"1\"")
                    && text.contains("<error ")
                    && text.contains("type=\"incomplete\""),
                "{text}"
            );
        } else {
            let log = json(&text);
            validate_sarif(&log);
            assert_eq!(
                log["runs"][0]["invocations"][0]["executionSuccessful"],
                false
            );
        }
    }
    assert!(Path::new(PLAN).is_relative());
}

//! Metadata findings end to end: a proxy plants each pattern in the
//! testbed's tool metadata; every one is flagged with its exact escaped
//! span, no effect verdict moves, and the planted secret and markup reach
//! no output (JSON, text, JUnit, SARIF, HTML).

use crate::common;

use std::path::PathBuf;
use std::process::Command;

use common::fixture;
use serde_json::Value;

const SECRET: &str = "AKIAIOSFODNN7EXAMPLE";

fn audit(poisoned: bool, format: &str, out: Option<&PathBuf>) -> (i32, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let seed = dir.path().join("seed.db");
    let bin = env!("CARGO_BIN_EXE_mcp-witness");
    assert!(
        Command::new(bin)
            .args(["testbed", "seed", "--store"])
            .arg(&seed)
            .status()
            .expect("seed")
            .success()
    );
    let mut args: Vec<String> = [
        "audit",
        "--settle-ms",
        "0",
        "--deterministic",
        "--format",
        format,
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    args.push("--plan".into());
    args.push(format!(
        "{}/experiments/e1/plan.toml",
        env!("CARGO_MANIFEST_DIR")
    ));
    args.push(format!("--store=db=sqlite:{}", seed.display()));
    if let Some(out) = out {
        args.push(format!("--out={}", out.display()));
    }
    args.push("--".into());
    if poisoned {
        args.extend([
            "python3".to_owned(),
            fixture("metadata_poisoner.py").display().to_string(),
            "--".into(),
        ]);
        args.push(bin.to_owned());
    } else {
        args.push("mcp-witness".into());
    }
    args.extend(["testbed", "serve", "--variant", "honest", "--store", "{db}"].map(str::to_owned));
    let output = Command::new(bin).args(&args).output().expect("runs");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8(output.stdout).expect("UTF-8"),
    )
}

fn findings(report: &Value) -> Vec<(String, String, String, String)> {
    report["metadata"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|f| {
            let s = |k: &str| f[k].as_str().unwrap_or("").to_owned();
            (s("kind"), s("tool"), s("field"), s("span"))
        })
        .collect()
}

#[test]
fn every_planted_pattern_is_flagged_and_no_effect_verdict_moves() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("out");
    let (code, text) = audit(true, "json", Some(&out));
    let poisoned: Value = serde_json::from_str(&text).expect("JSON");
    let (clean_code, clean) = audit(false, "json", None);
    let clean: Value = serde_json::from_str(&clean).expect("JSON");
    assert_eq!(
        code, clean_code,
        "metadata findings never change the exit code"
    );
    assert_eq!(poisoned["checks"].as_array().map(Vec::len), Some(13 * 6));
    for check in clean["checks"].as_array().expect("checks") {
        let same = poisoned["checks"].as_array().and_then(|c| {
            c.iter()
                .find(|p| p["id"] == check["id"] && p["tool"] == check["tool"])
        });
        assert_eq!(
            same.map(|p| &p["verdict"]),
            Some(&check["verdict"]),
            "{check:#}"
        );
    }
    assert_eq!(clean["metadata"], serde_json::json!([]));
    let found = findings(&poisoned);
    let expect = |kind: &str, tool: &str, field: &str, span: &str| {
        assert!(
            found.contains(&(kind.into(), tool.into(), field.into(), span.into())),
            "{kind} {tool} {field} {span:?} not in {found:#?}"
        );
    };
    expect(
        "invisible-character",
        "get_note",
        "/description",
        "\\u{200b}\\u{202e}",
    );
    expect(
        "hidden-instruction",
        "list_notes",
        "/description",
        "Ignore all previous instructions",
    );
    expect(
        "hidden-instruction",
        "list_notes",
        "/description",
        "do not tell the user",
    );
    expect("hidden-instruction", "ping", "/title", "<IMPORTANT>");
    let masked = found.iter().find(|f| f.0 == "secret-shaped").map(|f| {
        (
            f.1.as_str(),
            f.2.as_str(),
            f.3.starts_with("[secret blake3:"),
        )
    });
    assert_eq!(masked, Some(("check_credential", "/description", true)));
    expect(
        "shell-free-text",
        "run_command",
        "/inputSchema/properties/command",
        "command",
    );
    let long = found
        .iter()
        .any(|f| f.0 == "long-description" && f.1 == "create_grant");
    assert!(long, "{found:#?}");
    assert_eq!(
        poisoned["summary"]["metadata"].as_u64(),
        Some(found.len() as u64)
    );

    let html = std::fs::read_to_string(out.join("report.html")).expect("report.html");
    let junit = audit(true, "junit", None).1;
    let sarif = audit(true, "sarif", None).1;
    let plain = audit(true, "text", None).1;
    for (name, written) in [
        ("json", &text),
        ("html", &html),
        ("junit", &junit),
        ("sarif", &sarif),
        ("text", &plain),
    ] {
        assert!(
            !written.contains(SECRET),
            "{name} quotes the planted secret"
        );
        // The audit document keeps what was served as data; what is shown
        // to a person or a CI system never carries the raw character.
        if name != "json" {
            assert!(
                !written.contains('\u{202E}'),
                "{name} carries a raw bidi override"
            );
        }
    }
    for (name, written) in [("html", &html), ("junit", &junit)] {
        assert!(
            !written.contains("<script>"),
            "{name} made the server's markup active"
        );
        assert!(
            !written.contains("<IMPORTANT>"),
            "{name} made the server's markup active"
        );
    }
    let log: Value = serde_json::from_str(&sarif).expect("SARIF");
    let rules: Vec<&str> = log["runs"][0]["results"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["ruleId"].as_str())
        .collect();
    assert!(
        rules.contains(&"metadata/secret-shaped") && rules.contains(&"metadata/hidden-instruction"),
        "{rules:?}"
    );
}

//! The experiments, end to end through the binary: the tables a reader relies
//! on, and byte-identical reruns.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

/// Runs one experiment. The case studies are kept out (an empty cases
/// directory): they audit real servers whose answers carry wall-clock
/// timestamps, so their audits are not byte-reproducible; tests/published/lab_cases.rs
/// covers them.
fn lab(experiment: &str, out: &Path) {
    let no_cases = tempfile::tempdir().expect("tempdir");
    let output = Command::new(env!("CARGO_BIN_EXE_mcp-witness"))
        .args(["lab", experiment, "--cases-dir"])
        .arg(no_cases.path())
        .arg("--out")
        .arg(out)
        .output()
        .expect("mcp-witness runs");
    assert!(
        output.status.success(),
        "lab {experiment} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

fn json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).expect("valid JSON")
}

fn by_name<'a>(list: &'a Value, key: &str, name: &str) -> &'a Value {
    list.as_array()
        .and_then(|l| l.iter().find(|x| x[key] == name))
        .unwrap_or_else(|| panic!("no {key} = {name}"))
}

#[test]
fn e1_catches_every_lie_by_observation_and_baselines_miss_the_silent_ones() {
    let dir = tempfile::tempdir().expect("tempdir");
    lab("e1", dir.path());
    let e1 = json(&dir.path().join("e1.json"));
    assert_eq!(e1["schema"], "mcp-witness.e1/v1");
    let effect = by_name(&e1["detectors"], "name", "effect-aware");
    assert_eq!(
        (
            effect["tp"].as_u64(),
            effect["fp"].as_u64(),
            effect["fn"].as_u64()
        ),
        (Some(6), Some(0), Some(0))
    );
    assert_eq!(effect["precision"], 1.0);
    assert_eq!(effect["recall"], 1.0);
    let response = by_name(&e1["detectors"], "name", "response-level");
    assert_eq!(
        (response["tp"].as_u64(), response["fn"].as_u64()),
        (Some(2), Some(4))
    );
    for variant in e1["variants"].as_array().expect("variants") {
        let name = variant["variant"].as_str().unwrap_or("");
        if name == "honest" {
            for detector in ["effect-aware", "response-level", "name-heuristic"] {
                assert_eq!(
                    variant["flagged"][detector],
                    Value::Array(vec![]),
                    "{detector} flagged honest"
                );
            }
            assert_eq!(variant["lying_tool"], Value::Null);
            continue;
        }
        let liar = variant["lying_tool"].as_str().expect("a liar");
        assert_eq!(
            variant["flagged"]["effect-aware"],
            serde_json::json!([liar]),
            "{name}"
        );
        if ["get_note", "list_notes", "ping"].contains(&liar) {
            assert_eq!(variant["response_visible"], false);
            for baseline in ["response-level", "name-heuristic"] {
                assert_eq!(
                    variant["flagged"][baseline],
                    Value::Array(vec![]),
                    "{baseline} on {name}"
                );
            }
        }
        let audit = json(
            &dir.path()
                .join(variant["audit"].as_str().expect("audit path")),
        );
        assert_eq!(
            audit["schema"], "mcp-witness.audit/v1",
            "the evidence behind {name} is kept"
        );
    }
    let names: Vec<&str> = e1["variants"]
        .as_array()
        .map(|v| v.iter().filter_map(|x| x["variant"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(
        names,
        [
            "honest",
            "lie-readonly",
            "hide-destructive",
            "webhook-readonly",
            "silent-keymint",
            "shadow-webhook",
            "phantom-write"
        ]
    );
    assert!(
        std::fs::read_to_string(dir.path().join("summary.md"))
            .is_ok_and(|s| s.contains("| effect-aware |"))
    );
}

#[test]
fn e2_probe_separates_authority_from_persistence() {
    let dir = tempfile::tempdir().expect("tempdir");
    lab("e2", dir.path());
    let e2 = json(&dir.path().join("e2.json"));
    assert_eq!(e2["schema"], "mcp-witness.e2/v1");
    assert_eq!(e2["objects"].as_array().map(Vec::len), Some(8));
    assert_eq!(
        by_name(&e2["classifiers"], "name", "probe")["accuracy"],
        1.0
    );
    let decoy = by_name(&e2["objects"], "object", "notes/api_key_backup");
    assert_eq!(decoy["authority"], false);
    assert_eq!(decoy["predictions"]["probe"], false);
    assert_eq!(decoy["predictions"]["name-keyword"], true);
    let removed = by_name(&e2["objects"], "object", "api_keys/key_0003");
    assert_eq!(removed["persistent"], false);
    assert_eq!(removed["authority"], true);
    assert_eq!(removed["predictions"]["probe"], true);
    assert_eq!(removed["predictions"]["persistence"], false);
}

#[test]
fn e3_probe_sees_residual_authority_that_delegation_misses() {
    let dir = tempfile::tempdir().expect("tempdir");
    lab("e3", dir.path());
    let e3 = json(&dir.path().join("e3.json"));
    assert_eq!(e3["schema"], "mcp-witness.e3/v1");
    assert_eq!(e3["scenarios"].as_array().map(Vec::len), Some(6));
    let probe = by_name(&e3["detectors"], "name", "probe");
    assert_eq!(probe["accuracy"], 1.0);
    assert_eq!(probe["false_ineffective"], 0);
    let delegation = by_name(&e3["detectors"], "name", "delegation");
    assert_eq!(delegation["false_ineffective"], 1);
    let grant_revoked = by_name(&e3["scenarios"], "scenario", "grant_revoked");
    assert_eq!(grant_revoked["truth"], "effective");
    assert_eq!(grant_revoked["predictions"]["delegation"], "dead");
    let residual = by_name(&e3["residual_revoke"], "variant", "residual-revoke");
    assert_eq!(residual["eff06_revoke_api_key"], "fail");
    assert!(
        residual["probe_evidence"][0]
            .as_str()
            .is_some_and(|b| b.contains("accepts it"))
    );
    let honest = by_name(&e3["residual_revoke"], "variant", "honest");
    assert_eq!(honest["eff06_revoke_api_key"], "pass");
}

#[test]
fn reruns_are_byte_identical() {
    let a = tempfile::tempdir().expect("tempdir");
    let b = tempfile::tempdir().expect("tempdir");
    lab("all", a.path());
    lab("all", b.path());
    let mut compared = 0;
    for entry in walk(a.path()) {
        let relative = entry.strip_prefix(a.path()).expect("inside");
        let left = std::fs::read(&entry).expect("read");
        let right = std::fs::read(b.path().join(relative)).unwrap_or_default();
        assert!(
            left == right,
            "{} differs between two runs",
            relative.display()
        );
        compared += 1;
    }
    assert!(compared >= 20, "only {compared} files compared");
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out.sort();
    out
}

//! The case studies end to end: `mcp-witness lab cases` on the four
//! published servers. Needs `experiments/cases/install.sh`; under `CI=true`
//! a missing install fails instead of skipping.

use crate::common;

use std::process::Command;

use common::*;
use serde_json::Value;

fn read(path: &std::path::Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn effects_of(audit: &Value, tool: &str) -> Vec<(String, String)> {
    ops(audit, tool)
}

#[test]
fn lab_cases_audits_every_published_server_and_no_check_fails() {
    let Some(cases) = case_packages() else {
        return;
    };
    let out = tempfile::tempdir().expect("tempdir");
    let output = Command::new(env!("CARGO_BIN_EXE_mcp-witness"))
        .args(["lab", "cases", "--out"])
        .arg(out.path())
        .arg("--cases-dir")
        .arg(&cases)
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");

    let expected = [
        ("memory", [9, 9, 3, 3, 6]),
        ("filesystem", [14, 14, 10, 3, 2]),
        ("sqlite", [10, 0, 0, 0, 0]),
        ("git", [12, 12, 7, 1, 9]),
    ];
    for (name, [tools, declared, read_only, destructive, idempotent]) in expected {
        let case = read(&out.path().join(format!("case-{name}.json")));
        assert_eq!(case["schema"], "mcp-witness.case/v1");
        assert_eq!(case["complete"], true, "{name}: {case:#}");
        let a = &case["annotations"];
        assert_eq!(
            [
                &a["tools"],
                &a["declared"],
                &a["read_only"],
                &a["destructive"],
                &a["idempotent"]
            ],
            [tools, declared, read_only, destructive, idempotent]
                .map(Value::from)
                .each_ref(),
            "{name}"
        );
        for (id, summary) in case["checks"].as_object().into_iter().flatten() {
            assert_eq!(summary["fail"], 0, "{name} {id}: {summary:#}");
        }
        assert!(case["observed"]["calls"].as_u64().is_some_and(|n| n > 0));
        assert!(case["notes"].as_array().is_some_and(|n| !n.is_empty()));
        let audit = read(&out.path().join(case["audit"].as_str().unwrap_or("")));
        assert_eq!(audit["schema"], "mcp-witness.audit/v1");
        assert_eq!(audit["complete"], true);
        let c = &audit["summary"];
        for key in ["creates", "updates", "deletes", "calls"] {
            assert_eq!(case["observed"][key], c[key], "{name} {key}");
        }
        eprintln!(
            "case {name}: {} calls, {}c/{}u/{}d",
            c["calls"], c["creates"], c["updates"], c["deletes"]
        );
    }

    // Nothing declared: EFF-01 and EFF-03 skip for every tool.
    let sqlite = read(&out.path().join("case-sqlite.json"));
    for id in ["EFF-01", "EFF-03"] {
        let s = &sqlite["checks"][id];
        assert_eq!(s["skip"], 10, "{id}: {s:#}");
    }
    let sqlite_audit = read(&out.path().join("audits/case-sqlite.json"));
    // A read that writes is shown as the write it is.
    assert!(
        effects_of(&sqlite_audit, "list_insights")
            .contains(&("sqlite_master/table:mcp_insights".into(), "create".into()))
    );
    // An empty table is still an observed effect.
    assert_eq!(
        effects_of(&sqlite_audit, "create_table"),
        [(
            "sqlite_master/table:items".to_string(),
            "create".to_string()
        )]
    );

    // created_at is declared as the clock's, and said so in the audit.
    assert_eq!(
        sqlite_audit["stores"][0]["clock_columns"],
        serde_json::json!(["mcp_insights.created_at"])
    );

    // A move is create(destination) + delete(source), and EFF-02 sees the delete.
    let fs_audit = read(&out.path().join("audits/case-filesystem.json"));
    let moved = effects_of(&fs_audit, "move_file");
    assert!(moved.contains(&("file/archive/readme.md".into(), "create".into())));
    assert!(moved.contains(&("file/docs/readme.md".into(), "delete".into())));
    let eff02 = check(&fs_audit, "EFF-02", "move_file");
    assert_eq!(eff02["verdict"], "pass");
    assert_eq!(eff02["evidence"]["effects"][0]["op"], "delete");

    // get_file_info's file times are not kept: a token stands in for each,
    // and the audit says where.
    let info = fs_audit["calls"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["tool"] == "get_file_info")
        .cloned()
        .unwrap_or_default();
    let text = info["response"]["content"][0]["text"]
        .as_str()
        .unwrap_or("");
    assert!(text.contains("modified: {clock}\n"), "{text}");
    assert!(
        !fs_audit.to_string().contains(" GMT"),
        "a clock value was kept"
    );
    let clock = &fs_audit["volatile"]["clock"][0];
    assert_eq!(clock["kind"], "JavaScript Date string");
    let at = clock["at"].as_array().cloned().unwrap_or_default();
    assert!(at.iter().any(|p| {
        p.as_str()
            .is_some_and(|p| p.ends_with("/response/content/0/text"))
    }));
    assert!(
        at.iter()
            .any(|p| p.as_str().is_some_and(|p| p.starts_with("/transcripts/")))
    );

    // Deleting one observation updates the entity; an identical whole-file
    // rewrite (the duplicate create) changes nothing.
    let memory_audit = read(&out.path().join("audits/case-memory.json"));
    assert_eq!(
        effects_of(&memory_audit, "delete_observations"),
        [("entity/Ada".to_string(), "update".to_string())]
    );
    let creates: Vec<&Value> = memory_audit["calls"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["tool"] == "create_entities")
        .collect();
    assert_eq!(creates.len(), 2);
    assert_eq!(creates[1]["outcome"]["status"], "ok");
    assert_eq!(creates[1]["effects"].as_array().map(Vec::len), Some(0));

    // git: `git status` rewrites .git/index in the copied repository and
    // that is no effect; a commit moves main forward (additive) and adds
    // objects; a checkout switches HEAD and destroys nothing.
    let git_audit = read(&out.path().join("audits/case-git.json"));
    assert!(effects_of(&git_audit, "git_status").is_empty());
    assert_eq!(
        effects_of(&git_audit, "git_commit"),
        [
            ("odb/objects".to_string(), "update".to_string()),
            ("ref/refs/heads/main".to_string(), "update".to_string())
        ]
    );
    let destructive: Vec<&Value> = git_audit["calls"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|c| c["effects"].as_array().into_iter().flatten())
        .filter(|e| (e["op"] == "delete" && e["overwrite"] != false) || e["overwrite"] == true)
        .collect();
    assert!(destructive.is_empty(), "{destructive:#?}");
    assert_eq!(
        effects_of(&git_audit, "git_checkout"),
        [("HEAD".to_string(), "update".to_string())]
    );
}

#[test]
fn lab_cases_without_the_packages_says_how_to_install_and_launches_nothing() {
    let empty = tempfile::tempdir().expect("tempdir");
    let out = tempfile::tempdir().expect("tempdir");
    let output = Command::new(env!("CARGO_BIN_EXE_mcp-witness"))
        .args(["lab", "cases", "--out"])
        .arg(out.path().join("o"))
        .arg("--cases-dir")
        .arg(empty.path())
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!out.path().join("o").exists());
    // The command given must work: the repository's script (which exists),
    // told to install into the directory that lacked the packages.
    let command = stderr
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("bash "))
        .unwrap_or_else(|| panic!("no install command in: {stderr}"));
    let words: Vec<&str> = command.split(' ').collect();
    assert_eq!(words.len(), 3, "{command}");
    let script = std::path::Path::new(words[1]);
    assert!(script.is_file(), "{command}: the script does not exist");
    assert!(
        script.ends_with("experiments/cases/install.sh"),
        "{command}"
    );
    assert_eq!(std::path::Path::new(words[2]), empty.path(), "{command}");
}

//! E2 and E3 on PostgreSQL, rerun through the pinned dbhub
//! (experiments/cases/install.sh) on throwaway clusters: the documents and
//! the audits behind them are the committed ones, byte for byte, and the
//! numbers are what docs/postgres-probe.md reports. Under `CI=true` a
//! missing dbhub or PostgreSQL fails; elsewhere it skips with a line.

#![allow(
    clippy::print_stderr,
    reason = "a test says on stderr what it skipped or found, where cargo test shows it"
)]

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

#[test]
fn e2_and_e3_on_postgres_rerun_to_the_committed_bytes() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cases = repo.join("experiments/cases");
    if let Err(e) = witness_lab::postgres::check_installed(&cases) {
        if std::env::var("CI").as_deref() == Ok("true") {
            panic!("CI=true: E2/E3 on PostgreSQL cannot run: {e}");
        }
        eprintln!("SKIPPED: E2/E3 on PostgreSQL: {e}");
        return;
    }
    let dir = tempfile::Builder::new()
        .prefix("pglab-")
        .tempdir()
        .expect("tempdir");
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o711)).expect("chmod");
    let out = dir.path().join("results");
    let output = Command::new(env!("CARGO_BIN_EXE_mcp-witness"))
        .args(["lab", "postgres", "--out"])
        .arg(&out)
        .arg("--pages")
        .arg(dir.path().join("pages"))
        .arg("--cases-dir")
        .arg(&cases)
        .env("TMPDIR", dir.path())
        .output()
        .expect("mcp-witness runs");
    assert!(
        output.status.success(),
        "lab postgres failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let committed = repo.join("experiments/results");
    let mut compared = Vec::new();
    let mut names = vec!["e2-postgres.json".to_owned(), "e3-postgres.json".to_owned()];
    for entry in std::fs::read_dir(out.join("audits"))
        .expect("audits")
        .flatten()
    {
        names.push(format!("audits/{}", entry.file_name().to_string_lossy()));
    }
    names.sort();
    for name in &names {
        let produced = std::fs::read(out.join(name)).expect("read produced");
        let kept = std::fs::read(committed.join(name))
            .unwrap_or_else(|e| panic!("{name} is produced but not committed: {e}"));
        assert!(
            produced == kept,
            "{name} differs from the committed one; regenerate with \
             mcp-witness lab postgres --out experiments/results --pages reports"
        );
        compared.push(name.clone());
    }
    assert_eq!(compared.len(), 9, "{compared:?}");

    let json = |name: &str| -> Value {
        serde_json::from_slice(&std::fs::read(out.join(name)).expect("read")).expect("json")
    };
    let accuracy = |doc: &Value, list: &str, name: &str| {
        doc[list]
            .as_array()
            .into_iter()
            .flatten()
            .find(|d| d["name"] == name)
            .map(|d| d["accuracy"].clone())
            .unwrap_or_default()
    };
    let e2 = json("e2-postgres.json");
    assert_eq!(accuracy(&e2, "classifiers", "probe"), 1.0);
    let e3 = json("e3-postgres.json");
    assert_eq!(accuracy(&e3, "detectors", "probe"), 1.0);
    // Residual authority: the delegation view's false-ineffective.
    let residual = e3["scenarios"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|s| s["scenario"] == "revoke_second_path")
        .cloned()
        .unwrap_or_default();
    assert_eq!(residual["truth"], "effective");
    assert_eq!(residual["predictions"]["delegation"], "dead");
    assert_eq!(residual["predictions"]["probe"], "effective");

    // No password of the plans anywhere in what the run wrote.
    let mut texts = vec![
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    ];
    for name in &names {
        texts.push(std::fs::read_to_string(out.join(name)).expect("read"));
    }
    for page in std::fs::read_dir(dir.path().join("pages"))
        .expect("pages")
        .flatten()
    {
        texts.push(std::fs::read_to_string(page.path()).unwrap_or_default());
    }
    for text in &texts {
        for password in [
            "e2pg-alice-pw-0001",
            "e2pg-ghost-pw-0002",
            "e2pg-temp-pw-0003",
            "e2pg-carol-pw-0004",
            "e3pg-alice-pw-0001",
            "e3pg-bob-pw-0002",
        ] {
            assert!(!text.contains(password), "{password} leaked");
        }
    }
}

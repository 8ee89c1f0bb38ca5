//! The published PostgreSQL servers, pinned in experiments/cases, audited
//! on the seeded CRM (experiments/cases/seeds/crm.sql) with the case plans:
//! every audit completes, the observer's effects are the ones the calls
//! made, and no check fails that should not.

#![allow(
    clippy::print_stderr,
    reason = "a test says on stderr what it skipped or found, where cargo test shows it"
)]

use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;
use serde_json::Value;

/// The package's bin, when the pinned version is installed; `None` (said
/// loudly) when not, and a failure under CI=true.
fn installed(cases: &Path, package: &str, version: &str, bin: &str) -> Option<PathBuf> {
    let manifest = cases
        .join("node_modules")
        .join(package)
        .join("package.json");
    let found = std::fs::read_to_string(&manifest)
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .and_then(|v| v["version"].as_str().map(str::to_owned));
    let bin = cases.join("node_modules/.bin").join(bin);
    if found.as_deref() == Some(version) && bin.exists() {
        return Some(bin);
    }
    let why = format!(
        "{package}@{version} is not installed in {} (found {found:?}); run bash experiments/cases/install.sh",
        cases.display()
    );
    if std::env::var("CI").as_deref() == Ok("true") {
        panic!("CI=true: {why}");
    }
    eprintln!("SKIPPED: {why}");
    None
}

/// Audits `server` on a fresh copy of the seed; gives exit code and report.
fn audit(plan: &str, env: &[&str], server: &[String]) -> (i32, Value) {
    let dir = tempfile::Builder::new()
        .prefix("pgpub-")
        .tempdir()
        .expect("tempdir");
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o711)).expect("chmod");
    let cases = Path::new(env!("CARGO_MANIFEST_DIR")).join("experiments/cases");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mcp-witness"));
    cmd.args(["audit", "--format", "json", "--settle-ms", "100"])
        .arg(format!(
            "--store=db=postgres:{}",
            cases.join("seeds/crm.sql").display()
        ))
        .arg(format!(
            "--plan={}",
            cases.join("plans").join(plan).display()
        ));
    for pair in env {
        cmd.arg(format!("--env={pair}"));
    }
    let output = cmd
        .arg("--")
        .args(server)
        .env("TMPDIR", dir.path())
        .output()
        .expect("runs");
    let report = stdout_json(&output);
    assert_eq!(report["complete"], true, "{report:#}");
    (output.status.code().unwrap_or(-1), report)
}

fn verdicts(report: &Value) -> Vec<(String, String, String)> {
    report["checks"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            (
                c["id"].as_str().unwrap_or("").to_owned(),
                c["tool"].as_str().unwrap_or("").to_owned(),
                c["verdict"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect()
}

fn effects_of_call(report: &Value, index: usize) -> Vec<(String, String)> {
    report["calls"]
        .as_array()
        .and_then(|c| c.iter().filter(|c| c["repeat_of"].is_null()).nth(index))
        .and_then(|c| c["effects"].as_array())
        .into_iter()
        .flatten()
        .map(|e| {
            (
                e["object"].as_str().unwrap_or("").to_owned(),
                e["op"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect()
}

fn no_failure(report: &Value) {
    let failed: Vec<_> = verdicts(report)
        .into_iter()
        .filter(|(_, _, v)| v == "fail")
        .collect();
    assert!(failed.is_empty(), "{failed:?}\n{:#}", report["checks"]);
}

#[test]
fn server_postgres_is_observed_and_its_read_only_transaction_bypass_is_seen() {
    if case_packages().is_none() {
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("experiments/cases");
    let Some(bin) = installed(
        &root,
        "@modelcontextprotocol/server-postgres",
        "0.6.2",
        "mcp-server-postgres",
    ) else {
        return;
    };
    let server = vec![
        "node".to_owned(),
        bin.to_string_lossy().into_owned(),
        "{db}".to_owned(),
    ];
    let (code, report) = audit("postgres.toml", &[], &server);
    no_failure(&report);
    assert_eq!(code, 0, "{:#}", report["checks"]);
    // The reads, the function that writes and the plain write changed nothing.
    for call in 0..4 {
        assert_eq!(effects_of_call(&report, call), [], "call {call}");
    }
    // Ending the read-only transaction from inside the query wrote a row.
    assert_eq!(
        effects_of_call(&report, 4),
        [
            (
                "catalog/sequence-value:public.audit_log_id_seq".to_owned(),
                "update".to_owned()
            ),
            ("public.audit_log/1".to_owned(), "create".to_owned()),
        ]
    );
}

#[test]
fn dbhub_writes_are_observed_and_its_read_only_mode_holds() {
    if case_packages().is_none() {
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("experiments/cases");
    let Some(bin) = installed(&root, "@bytebase/dbhub", "1.4.0", "dbhub") else {
        return;
    };
    let node = |extra: &[&str]| {
        let mut command = vec!["node".to_owned(), bin.to_string_lossy().into_owned()];
        command.extend(extra.iter().map(|s| (*s).to_owned()));
        command
    };
    let pghost = "PGHOST={jail}/stores/db/s";
    let (code, report) = audit(
        "dbhub.toml",
        &[pghost],
        &node(&[
            "--transport",
            "stdio",
            "--dsn",
            "postgres://server@/store?sslmode=disable",
        ]),
    );
    no_failure(&report);
    assert_eq!(code, 0, "{:#}", report["checks"]);
    assert_eq!(
        verdicts(&report)
            .into_iter()
            .filter(|(id, tool, _)| id == "EFF-01" && tool == "search_objects")
            .map(|(_, _, v)| v)
            .collect::<Vec<_>>(),
        ["pass"]
    );
    assert_eq!(
        effects_of_call(&report, 3),
        [
            (
                "catalog/sequence-value:public.contacts_id_seq".to_owned(),
                "update".to_owned()
            ),
            ("public.contacts/121".to_owned(), "create".to_owned()),
        ]
    );
    assert_eq!(
        effects_of_call(&report, 4),
        [("public.deals/3".to_owned(), "update".to_owned())]
    );
    assert_eq!(
        effects_of_call(&report, 5),
        [("public.deals/4".to_owned(), "delete".to_owned())]
    );

    let config = root.join("plans/dbhub-readonly.dbhub.toml");
    let (code, report) = audit(
        "dbhub-readonly.toml",
        &[pghost],
        &node(&[
            "--transport",
            "stdio",
            "--config",
            &config.to_string_lossy(),
        ]),
    );
    no_failure(&report);
    assert_eq!(code, 0, "{:#}", report["checks"]);
    assert!(
        verdicts(&report).contains(&("EFF-01".into(), "execute_sql".into(), "pass".into())),
        "{:#}",
        report["checks"]
    );
}

#[test]
fn dbhub_minting_roles_is_probed_by_use_and_its_residual_grant_fails_eff06() {
    if case_packages().is_none() {
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("experiments/cases");
    let Some(bin) = installed(&root, "@bytebase/dbhub", "1.4.0", "dbhub") else {
        return;
    };
    let dir = tempfile::Builder::new()
        .prefix("pgpub-")
        .tempdir()
        .expect("tempdir");
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o711)).expect("chmod");
    let out = dir.path().join("out");
    let output = Command::new(env!("CARGO_BIN_EXE_mcp-witness"))
        .args([
            "audit",
            "--format",
            "json",
            "--settle-ms",
            "100",
            "--probe",
            "postgres",
        ])
        .arg(format!(
            "--store=db=postgres:{}",
            root.join("seeds/roles.sql").display()
        ))
        .arg(format!(
            "--plan={}",
            root.join("plans/dbhub-roles.toml").display()
        ))
        .arg(format!("--out={}", out.display()))
        .arg("--env=PGHOST={jail}/stores/db/s")
        .args(["--", "node"])
        .arg(&bin)
        .args([
            "--transport",
            "stdio",
            "--dsn",
            "postgres://server@/store?sslmode=disable",
        ])
        .env("TMPDIR", dir.path())
        .output()
        .expect("runs");
    let report = stdout_json(&output);
    assert_eq!(report["complete"], true, "{report:#}");
    let probes: Vec<(String, String, String)> = report["calls"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|c| c["probes"].as_array().cloned().unwrap_or_default())
        .map(|p| {
            (
                p["object"].as_str().unwrap_or("").to_owned(),
                p["status"].as_str().unwrap_or("").to_owned(),
                p["basis"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    let find = |object: &str, status: &str| {
        probes
            .iter()
            .find(|(o, s, _)| o == object && s == status)
            .map(|(_, _, b)| b.clone())
            .unwrap_or_else(|| panic!("no {status} probe of {object}: {probes:#?}"))
    };
    assert!(
        find("catalog/role:alice", "effective")
            .starts_with("connected as alice with the password of call")
    );
    assert!(find("catalog/role:ghost", "ineffective").contains("not permitted to log in"));
    assert_eq!(
        find("catalog/table:public.orders", "effective"),
        "SET ROLE alice; SELECT on orders: permitted"
    );
    let eff06 = report["checks"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["id"] == "EFF-06" && c["tool"] == "execute_sql")
        .cloned()
        .unwrap_or_default();
    assert_eq!(eff06["verdict"], "fail", "{eff06:#}");
    assert!(
        eff06["reason"]
            .as_str()
            .is_some_and(|r| r.contains("residual authority")),
        "{eff06:#}"
    );
    let mut texts = vec![
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    ];
    for entry in std::fs::read_dir(&out).into_iter().flatten().flatten() {
        texts.push(
            String::from_utf8_lossy(&std::fs::read(entry.path()).unwrap_or_default()).into_owned(),
        );
    }
    for text in &texts {
        for password in ["dbhub-alice-pw-31", "dbhub-ghost-pw-31"] {
            assert!(!text.contains(password), "{password} leaked");
        }
    }
}

//! PostgreSQL stores end to end: a planted server whose read-only lookup
//! writes through a function fails EFF-01 with the row as evidence, its
//! honest tools pass, the SQL source is never written, a live source is
//! only read, and no cluster process or socket outlives the audit, even one
//! ended by SIGTERM.

use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use rustix::process::{Pid, Signal, kill_process};

const PLAN: &str = r#"
[[call]]
tool = "find_contact"
args.name = "Ada"
[[call]]
tool = "list_contacts"
[[call]]
tool = "add_contact"
args.name = "Dee"
[[call]]
tool = "set_email"
args.name = "Bob"
args.email = "bob@example.org"
"#;

/// A TMPDIR for the auditor that the cluster's account can pass through
/// (the auditor may be root; the cluster never is), holding the seed.
struct Scratch {
    dir: tempfile::TempDir,
    seed: PathBuf,
    tmp: PathBuf,
}

fn scratch() -> Scratch {
    let dir = tempfile::Builder::new()
        .prefix("pgst-")
        .tempdir()
        .expect("tempdir");
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o711)).expect("chmod");
    let seed = dir.path().join("crm.sql");
    std::fs::copy(fixture("pg_crm.sql"), &seed).expect("seed");
    let tmp = dir.path().join("t");
    std::fs::create_dir(&tmp).expect("tmp");
    std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o711)).expect("chmod");
    Scratch { dir, seed, tmp }
}

fn audit_command(s: &Scratch, plan: &str) -> Command {
    audit_of(s, plan, &s.seed.to_string_lossy())
}

/// The audit of the planted server on a store restored from `source`.
fn audit_of(s: &Scratch, plan: &str, source: &str) -> Command {
    let plan_path = s.dir.path().join("plan.toml");
    std::fs::write(&plan_path, plan).expect("plan");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mcp-witness"));
    cmd.args(["audit", "--format", "json", "--settle-ms", "0"])
        .arg(format!("--store=crm=postgres:{source}"))
        .arg(format!("--plan={}", plan_path.display()))
        .args(["--", "python3"])
        .arg(fixture("pg_crm_server.py"))
        .arg("{crm}")
        .env("TMPDIR", &s.tmp)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// Every process whose command line or working directory is under `dir`
/// (a postmaster names its data directory; a backend works in it).
fn processes_under(dir: &Path) -> Vec<String> {
    let needle = dir.to_string_lossy().into_owned();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let path = entry.path();
        if !entry
            .file_name()
            .to_str()
            .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
        {
            continue;
        }
        let cmdline = std::fs::read(path.join("cmdline"))
            .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
            .unwrap_or_default();
        let cwd = std::fs::read_link(path.join("cwd"))
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
        if cmdline.contains(&needle) || cwd.starts_with(&needle) {
            found.push(format!(
                "{}: {cmdline} (cwd {cwd})",
                entry.file_name().to_string_lossy()
            ));
        }
    }
    found
}

/// Whether a `psql` whose command line holds `marker` is running.
fn psql_running(marker: &str) -> bool {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| std::fs::read(entry.path().join("cmdline")).ok())
        .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
        .any(|cmdline| {
            let program = cmdline.split(' ').next().unwrap_or_default();
            program.ends_with("psql") && cmdline.contains(marker)
        })
}

/// Sockets under `dir`: those bound there that the kernel lists (a jail on
/// the auditor's own tmpfs is out of this process's sight, its sockets are
/// not), and any socket file left in what this process sees.
fn sockets_under(dir: &Path) -> Vec<PathBuf> {
    use std::os::unix::fs::FileTypeExt;
    let listed = std::fs::read_to_string("/proc/net/unix").unwrap_or_default();
    let mut found: Vec<PathBuf> = listed
        .lines()
        .skip(1)
        .filter_map(|line| line.split_whitespace().nth(7))
        .map(PathBuf::from)
        .filter(|p| p.starts_with(dir))
        .collect();
    found.extend(walk(dir).into_iter().filter(|p| {
        std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_socket())
            || p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(".s.PGSQL"))
    }));
    found.sort();
    found.dedup();
    found
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            out.extend(walk(&path));
        }
        out.push(path);
    }
    out
}

fn digest(path: &Path) -> String {
    blake3::hash(&std::fs::read(path).expect("read"))
        .to_hex()
        .to_string()
}

#[test]
fn a_read_that_writes_through_a_function_fails_eff01_with_the_row_and_honest_tools_pass() {
    let s = scratch();
    let before = digest(&s.seed);
    let output = audit_command(&s, PLAN).output().expect("runs");
    let report = stdout_json(&output);
    assert_eq!(report["complete"], true, "{report:#}");
    assert_eq!(output.status.code(), Some(1), "{:#}", report["checks"]);

    let eff01 = check(&report, "EFF-01", "find_contact");
    assert_eq!(eff01["verdict"], "fail", "{eff01:#}");
    let objects: Vec<&str> = eff01["evidence"]["effects"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e["object"].as_str())
        .collect();
    assert!(objects.contains(&"crm:public.lookups/1"), "{eff01:#}");
    // The lookup's counter moved forward: a write, but no overwrite.
    assert!(
        objects.contains(&"crm:catalog/sequence-value:public.lookups_id_seq"),
        "{objects:?}"
    );
    assert_eq!(check(&report, "EFF-02", "find_contact")["verdict"], "pass");

    // Honest tools: no false failure.
    for (id, tool, verdict) in [
        ("EFF-01", "list_contacts", "pass"),
        ("EFF-03", "list_contacts", "pass"),
        ("EFF-02", "add_contact", "pass"),
        ("EFF-02", "set_email", "pass"),
        ("EFF-03", "set_email", "pass"),
    ] {
        assert_eq!(
            check(&report, id, tool)["verdict"],
            verdict,
            "{id} {tool}: {:#}",
            check(&report, id, tool)
        );
    }
    assert_eq!(
        ops(&report, "add_contact"),
        [
            (
                "catalog/sequence-value:public.contacts_id_seq".to_string(),
                "update".to_string()
            ),
            ("public.contacts/4".to_string(), "create".to_string()),
        ]
    );
    // Filling Bob's NULL email adds a field: additive.
    let set_email = report["calls"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["tool"] == "set_email")
        .expect("set_email called");
    assert_eq!(set_email["effects"][0]["object"], "public.contacts/2");
    assert_eq!(set_email["effects"][0]["overwrite"], false);

    assert_eq!(digest(&s.seed), before, "the SQL source was written");
    assert_eq!(processes_under(s.dir.path()), Vec::<String>::new());
    assert_eq!(sockets_under(s.dir.path()), Vec::<PathBuf>::new());
}

#[test]
fn an_audit_ended_by_sigterm_leaves_no_cluster_process_or_socket() {
    let s = scratch();
    let plan = "[[call]]\ntool = \"pause\"\nargs.seconds = \"60\"\n";
    let mut child = audit_command(&s, plan).spawn().expect("spawns");
    // Wait for the call under way: the cluster is up and the server's psql
    // sleeps in it. A cluster and its socket alone are there while the
    // seed is still being restored, and a signal then ends the audit
    // before it starts (seen on a loaded machine).
    let deadline = Instant::now() + Duration::from_secs(60);
    while processes_under(s.dir.path()).len() < 2
        || sockets_under(s.dir.path()).is_empty()
        || !psql_running("seconds=60")
    {
        assert!(Instant::now() < deadline, "the cluster never came up");
        assert!(
            child.try_wait().ok().flatten().is_none(),
            "the audit ended early"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(500));
    // SIGTERM to the auditor we spawned.
    let _ = kill_process(Pid::from_child(&child), Signal::TERM);
    let output = child.wait_with_output().expect("ends");
    let report = stdout_json(&output);
    assert_eq!(report["complete"], false, "{report:#}");
    assert_eq!(output.status.code(), Some(3));
    assert_eq!(processes_under(s.dir.path()), Vec::<String>::new());
    assert_eq!(sockets_under(s.dir.path()), Vec::<PathBuf>::new());
}

/// The live source's write counters and its `lookups` rows.
fn source_state(source: &witness_postgres::Cluster) -> (Vec<Option<String>>, Option<String>) {
    let mut client = source.connect("store").expect("source session");
    client
        .query("SELECT pg_stat_clear_snapshot()")
        .expect("fresh stats");
    let counters = client
        .query(
            "SELECT tup_inserted, tup_updated, tup_deleted FROM pg_stat_database \
             WHERE datname = 'store'",
        )
        .expect("counters")
        .into_iter()
        .next()
        .unwrap_or_default();
    let lookups = client
        .value("SELECT count(*) FROM lookups")
        .expect("lookups");
    (counters, lookups)
}

#[test]
fn a_live_source_is_dumped_read_only_and_never_written() {
    let s = scratch();
    // The live database: a cluster of this test's own, seeded alike.
    let source_dir = s.dir.path().join("live");
    std::fs::create_dir(&source_dir).expect("live dir");
    std::fs::set_permissions(&source_dir, std::fs::Permissions::from_mode(0o711)).expect("chmod");
    let source =
        witness_postgres::Cluster::create(&source_dir, &witness_postgres::Source::of_path(&s.seed))
            .expect("live source");
    let uri = format!(
        "postgresql://witness@localhost/store?host={}&port=5432",
        source.socket_dir().display()
    );
    let before = source_state(&source);
    assert_eq!(before.1.as_deref(), Some("0"));

    // The password goes where libpq looks for it, never into the URI.
    let password = witness_postgres::cluster::password_for(source.socket_dir()).expect("password");
    let output = audit_of(&s, PLAN, &uri)
        .env("PGPASSWORD", &password)
        .output()
        .expect("runs");
    let report = stdout_json(&output);
    assert_eq!(report["complete"], true, "{report:#}");
    // The jailed copy was written (the planted lookup), the source not.
    assert_eq!(check(&report, "EFF-01", "find_contact")["verdict"], "fail");
    let after = source_state(&source);
    assert_eq!(after, before, "the live source was written");
    // Nothing of the password reached the report.
    let text = serde_json::to_string(&report).expect("json");
    assert!(!text.contains(&password));
}

const ROLES_PLAN: &str = r#"
[[call]]
tool = "run_report"
args.sql = "CREATE ROLE alice LOGIN PASSWORD 'alice-e2e-pw-31'"
[[call]]
tool = "execute_sql"
args.sql = "CREATE ROLE bob LOGIN PASSWORD 'bob-e2e-pw-31'; GRANT reader TO bob; GRANT SELECT ON orders TO bob"
[[call]]
tool = "execute_sql"
args.sql = "REVOKE SELECT ON orders FROM bob"
"#;

#[test]
fn eff06_on_sql_fails_a_read_only_login_mint_and_a_revoke_that_leaves_a_membership() {
    let s = scratch();
    let seed = s.dir.path().join("roles.sql");
    std::fs::copy(fixture("pg_roles.sql"), &seed).expect("seed");
    let plan_path = s.dir.path().join("roles-plan.toml");
    std::fs::write(&plan_path, ROLES_PLAN).expect("plan");
    let out = s.dir.path().join("out");
    let output = Command::new(env!("CARGO_BIN_EXE_mcp-witness"))
        .args([
            "audit",
            "--format",
            "json",
            "--settle-ms",
            "0",
            "--probe",
            "postgres",
        ])
        .arg(format!("--store=db=postgres:{}", seed.display()))
        .arg(format!("--plan={}", plan_path.display()))
        .arg(format!("--out={}", out.display()))
        .args(["--", "python3"])
        .arg(fixture("pg_roles_server.py"))
        .arg("{db}")
        .env("TMPDIR", &s.tmp)
        .stdin(Stdio::null())
        .output()
        .expect("runs");
    let report = stdout_json(&output);
    assert_eq!(report["complete"], true, "{report:#}");
    let eff06 = |tool: &str| {
        report["checks"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|c| c["id"] == "EFF-06" && c["tool"] == tool)
            .cloned()
            .unwrap_or_default()
    };
    let report_tool = eff06("run_report");
    assert_eq!(report_tool["verdict"], "fail", "{report_tool:#}");
    assert!(
        report_tool["evidence"]["probes"][0]
            .as_str()
            .is_some_and(|l| l.contains("connected as alice with the password of call 1")),
        "{report_tool:#}"
    );
    // The revoke left bob reading through reader: residual authority.
    let execute = eff06("execute_sql");
    assert_eq!(execute["verdict"], "fail", "{execute:#}");
    assert!(
        execute["reason"]
            .as_str()
            .is_some_and(|r| r.contains("residual authority")),
        "{execute:#}"
    );
    assert!(
        execute["evidence"]["probes"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(serde_json::Value::as_str)
            .any(|l| l
                == "call 3 db:catalog/table:public.orders: effective — SET ROLE bob; SELECT on orders: permitted"),
        "{execute:#}"
    );
    // No password anywhere the audit wrote or said.
    let mut outputs = vec![
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    ];
    for path in walk(&out).into_iter().filter(|p| p.is_file()) {
        outputs.push(String::from_utf8_lossy(&std::fs::read(&path).expect("read")).into_owned());
    }
    assert!(outputs.len() > 2, "--out wrote nothing");
    for text in &outputs {
        for password in ["alice-e2e-pw-31", "bob-e2e-pw-31"] {
            assert!(!text.contains(password), "{password} leaked");
        }
    }
}

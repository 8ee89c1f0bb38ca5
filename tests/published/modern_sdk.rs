//! A 2026-07-28 server audited over stdio and over Streamable HTTP gets the
//! same verdicts, and so does the same server spoken to in the 2025 era.
//!
//! The server is the official reference mcp-server-git 2026.10.19 on the
//! official MCP Python SDK 2.3.0 (both pinned in
//! experiments/cases/requirements.txt, installed by
//! experiments/cases/install.sh), whose dual-era loop answers
//! `server/discover` in 2026-07-28 and `initialize` in 2025-11-25. Neither
//! 2.x SDK publishes an example server of its own (the Python SDK's wheel
//! and the TypeScript SDK's `@modelcontextprotocol/server` are libraries),
//! so the official server built on the SDK stands in for one. Its command
//! line speaks stdio alone; `tests/fixtures/git_server_http.py` serves the
//! same server object over the SDK's own Streamable HTTP transport.
//!
//! Every audit follows the git case study's plan
//! (experiments/cases/plans/git.toml) on a fresh copy of one seeded
//! repository. The stdio audit runs with `--no-netns`, because a server
//! behind `--url` is never in a network namespace: with one, EFF-04 would
//! pass over stdio and be untestable over HTTP, which is the jail talking,
//! not the transport.

use crate::common;

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};

use rustix::process::{Pid, Signal, kill_process_group};
use serde_json::{Value, json};

/// Commits the server makes carry these, so every run makes the same ones.
const GIT_ENV: [(&str, &str); 6] = [
    ("GIT_AUTHOR_NAME", "Witness Seed"),
    ("GIT_AUTHOR_EMAIL", "seed@witness.invalid"),
    ("GIT_COMMITTER_NAME", "Witness Seed"),
    ("GIT_COMMITTER_EMAIL", "seed@witness.invalid"),
    ("GIT_AUTHOR_DATE", "2026-01-01T00:00:00+0000"),
    ("GIT_COMMITTER_DATE", "2026-01-01T00:00:00+0000"),
];

fn git(repo: &Path, args: &[&str]) {
    let status = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(args)
        .envs(GIT_ENV)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .stdout(Stdio::null())
        .status()
        .expect("git runs");
    assert!(status.success(), "git {args:?}");
}

/// The state the case study's plan expects: main with two commits,
/// notes.txt modified, todo.txt untracked, run.log ignored.
fn seeded(repo: &Path) {
    std::fs::create_dir_all(repo).expect("repo dir");
    git(repo, &["init", "-q", "-b", "main"]);
    std::fs::write(repo.join(".gitignore"), "run.log\n").expect("write");
    std::fs::write(repo.join("notes.txt"), "one\n").expect("write");
    git(repo, &["add", "."]);
    git(repo, &["commit", "-q", "-m", "first"]);
    std::fs::write(repo.join("notes.txt"), "one\ntwo\n").expect("write");
    git(repo, &["commit", "-q", "-a", "-m", "second"]);
    std::fs::write(repo.join("notes.txt"), "one\ntwo\nthree\n").expect("write");
    std::fs::write(repo.join("todo.txt"), "todo\n").expect("write");
    std::fs::write(repo.join("run.log"), "log\n").expect("write");
}

/// The fixture serving mcp-server-git over Streamable HTTP, killed with its
/// process group on drop.
struct HttpGit {
    child: Child,
    url: String,
}

impl HttpGit {
    fn start(python: &Path, repo: &Path) -> Self {
        let mut child = Command::new(python)
            .arg(common::fixture("git_server_http.py"))
            .arg(repo)
            .envs(GIT_ENV)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .expect("the venv's python runs");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("the fixture prints its port");
        let port = line
            .trim()
            .strip_prefix("PORT ")
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .to_owned();
        Self {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
        }
    }
}

impl Drop for HttpGit {
    fn drop(&mut self) {
        // The process group this test created.
        let _ = kill_process_group(Pid::from_child(&self.child), Signal::KILL);
        let _ = self.child.wait();
    }
}

fn audit(era: &str, store: &Path, plan: &Path, target: &[&str]) -> (i32, Value) {
    let mut args = common::s(&["audit", "--format", "json", "--era", era, "--plan"]);
    args.push(plan.to_string_lossy().into_owned());
    args.push("--store".to_owned());
    args.push(format!("repo=git:{}", store.display()));
    args.extend(target.iter().map(|s| (*s).to_owned()));
    common::witness(&args)
}

/// What an audit concluded: every check's verdict (with its reason, save
/// EFF-04's, whose reason says why the network went unobserved), every
/// call's outcome and effects, the summary and the exit code.
fn verdicts(report: &Value) -> Value {
    let checks: Vec<Value> = report["checks"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            let reason = if c["id"] == "EFF-04" {
                Value::Null
            } else {
                c["reason"].clone()
            };
            json!([c["id"], c["tool"], c["verdict"], reason])
        })
        .collect();
    let calls: Vec<Value> = report["calls"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            let effects: Vec<Value> = c["effects"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|e| json!([e["object"], e["op"]]))
                .collect();
            json!([c["tool"], c["outcome"]["status"], effects])
        })
        .collect();
    json!({
        "checks": checks,
        "calls": calls,
        "summary": report["summary"],
        "exit_code": report["exit_code"],
    })
}

#[test]
fn a_2026_07_28_server_gets_the_same_verdicts_over_stdio_and_http_and_in_either_era() {
    let Some(cases) = common::case_packages() else {
        return;
    };
    let python = cases.join("venv/bin/python");
    let python_arg = python.to_string_lossy().into_owned();
    let plan = cases.join("plans/git.toml");
    let dir = tempfile::tempdir().expect("tempdir");
    let [stdio_repo, http_repo, legacy_repo] =
        ["stdio", "http", "legacy"].map(|name| dir.path().join(name));
    for repo in [&stdio_repo, &http_repo, &legacy_repo] {
        seeded(repo);
    }
    let launched = |era: &str, repo: &Path| {
        let mut target = vec!["--no-netns".to_owned()];
        for (key, value) in GIT_ENV {
            target.push("--env".to_owned());
            target.push(format!("{key}={value}"));
        }
        target.extend(common::s(&[
            "--",
            &python_arg,
            "-m",
            "mcp_server_git",
            "--repository",
            "{repo}",
        ]));
        let target: Vec<&str> = target.iter().map(String::as_str).collect();
        audit(era, repo, &plan, &target)
    };

    let (code, stdio) = launched("modern", &stdio_repo);
    assert_eq!(code, 0, "{stdio:#}");
    let server = HttpGit::start(&python, &http_repo);
    let (code, http) = audit("modern", &http_repo, &plan, &["--url", &server.url]);
    assert_eq!(code, 0, "{http:#}");
    drop(server);
    let (code, legacy) = launched("legacy", &legacy_repo);
    assert_eq!(code, 0, "{legacy:#}");

    for (report, transport, era, version) in [
        (&stdio, "stdio", "modern", "2026-07-28"),
        (&http, "http", "modern", "2026-07-28"),
        (&legacy, "stdio", "legacy", "2025-11-25"),
    ] {
        assert_eq!(report["complete"], true, "{transport} {era}");
        assert_eq!(report["era"]["era"], era, "{:#}", report["era"]);
        assert_eq!(report["era"]["protocol_version"], version);
        assert_eq!(report["era"]["server_info"]["name"], "mcp-git");
        let over_http = report["target"]["transport"] == "http";
        assert_eq!(over_http, transport == "http");
    }
    // The audit concluded something real: reads verified, a commit seen
    // moving the branch, and no failure on this honest server.
    assert!(
        stdio["summary"]["pass"].as_u64().is_some_and(|n| n >= 30),
        "{:#}",
        stdio["summary"]
    );
    assert_eq!(stdio["summary"]["fail"], 0);
    assert_eq!(
        common::ops(&stdio, "git_commit"),
        [
            ("odb/objects".to_owned(), "update".to_owned()),
            ("ref/refs/heads/main".to_owned(), "update".to_owned())
        ]
    );
    let expected = verdicts(&stdio);
    assert_eq!(verdicts(&http), expected, "stdio and HTTP disagree");
    assert_eq!(verdicts(&legacy), expected, "the two eras disagree");
    // EFF-04's verdict stands on both transports, for its own reason each.
    let reason = |report: &Value| common::check(report, "EFF-04", "git_commit")["reason"].clone();
    assert!(
        reason(&stdio)
            .as_str()
            .is_some_and(|r| r.contains("--no-netns"))
    );
    assert!(
        reason(&http)
            .as_str()
            .is_some_and(|r| r.contains("remote server"))
    );
}

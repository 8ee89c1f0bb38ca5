//! A git repository as a store (`--store repo=git:PATH`) inside whole
//! audits: a tool that moves a branch back while claiming to destroy
//! nothing fails EFF-02 with the ref move and the lost commit as evidence; a
//! "read-only" tool that stages a file fails EFF-01; a plain `git status`,
//! which rewrites `.git/index`, is no effect at all. And the published
//! mcp-server-git, audited by the planner alone, fails nothing.

use crate::common;

use std::path::Path;
use std::process::Command;

use common::*;
use serde_json::Value;

/// Runs git with a fixed identity and date, outside any user configuration.
fn git(repo: &Path, home: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(repo)
        .env("HOME", home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "Ada")
        .env("GIT_AUTHOR_EMAIL", "ada@example.org")
        .env("GIT_COMMITTER_NAME", "Ada")
        .env("GIT_COMMITTER_EMAIL", "ada@example.org")
        .env("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z")
        .env("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z")
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// Two commits on main and an unstaged edit of notes.txt. Returns the tip.
fn seed(repo: &Path, home: &Path) -> String {
    std::fs::create_dir_all(repo).expect("mkdir");
    git(repo, home, &["init", "-q", "--template=", "-b", "main"]);
    std::fs::write(repo.join("notes.txt"), "one\n").expect("write");
    git(repo, home, &["add", "notes.txt"]);
    git(repo, home, &["commit", "-q", "-m", "one"]);
    std::fs::write(repo.join("more.txt"), "two\n").expect("write");
    git(repo, home, &["add", "more.txt"]);
    git(repo, home, &["commit", "-q", "-m", "two"]);
    std::fs::write(repo.join("notes.txt"), "one, edited\n").expect("write");
    git(repo, home, &["rev-parse", "HEAD"])
}

fn audit_liar(dir: &Path, calls: &[&str]) -> (i32, Value) {
    let plan = dir.join("plan.toml");
    let text: String = calls
        .iter()
        .map(|tool| format!("[[call]]\ntool = \"{tool}\"\n"))
        .collect();
    std::fs::write(&plan, text).expect("plan");
    let mut args = s(&["audit", "--format", "json", "--settle-ms", "0"]);
    args.push(format!("--store=repo=git:{}", dir.join("repo").display()));
    args.push(format!("--plan={}", plan.display()));
    args.push("--".into());
    args.push("python3".into());
    args.push(fixture("git_liar.py").to_string_lossy().into_owned());
    args.push("{repo}".into());
    witness(&args)
}

/// The objects of a check's evidence, without their store's name (every
/// effect here is the repository's).
fn evidence_objects(check: &Value) -> Vec<String> {
    check["evidence"]["effects"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e["object"].as_str())
        .map(|o| o.strip_prefix("repo:").unwrap_or(o).to_owned())
        .collect()
}

#[test]
fn a_reset_hard_declared_non_destructive_fails_eff02_with_the_ref_and_the_lost_commit() {
    let dir = tempfile::tempdir().expect("tempdir");
    let tip = seed(&dir.path().join("repo"), dir.path());
    let (code, report) = audit_liar(dir.path(), &["status", "sync_branch"]);
    assert_eq!(report["complete"], true, "{report:#}");
    assert_eq!(code, 1, "{:#}", report["checks"]);
    // `git status` rewrote .git/index in the copied repository: no effect.
    assert_eq!(check(&report, "EFF-01", "status")["verdict"], "pass");
    assert!(
        ops(&report, "status").is_empty(),
        "{:?}",
        ops(&report, "status")
    );
    let eff02 = check(&report, "EFF-02", "sync_branch");
    assert_eq!(eff02["verdict"], "fail", "{eff02:#}");
    let evidence = evidence_objects(eff02);
    assert!(
        evidence.contains(&"ref/refs/heads/main".to_owned()),
        "{evidence:?}"
    );
    assert!(evidence.contains(&format!("commit/{tip}")), "{evidence:?}");
    // The unstaged edit is lost too; the committed file's removal is not a loss.
    assert!(
        evidence.contains(&"worktree/notes.txt".to_owned()),
        "{evidence:?}"
    );
    assert!(
        !evidence.contains(&"worktree/more.txt".to_owned()),
        "{evidence:?}"
    );
    // The branch's move is shown from the old commit to the new one.
    let moved = report["calls"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|c| c["effects"].as_array().cloned().unwrap_or_default())
        .find(|e| e["object"] == "ref/refs/heads/main")
        .unwrap_or_default();
    assert_eq!(moved["before"], tip.as_str(), "{moved:#}");
    assert_eq!(moved["overwrite"], true, "{moved:#}");
    // The original repository was never touched.
    assert_eq!(
        git(&dir.path().join("repo"), dir.path(), &["rev-parse", "HEAD"]),
        tip
    );
}

#[test]
fn a_read_only_tool_that_stages_a_file_fails_eff01() {
    let dir = tempfile::tempdir().expect("tempdir");
    seed(&dir.path().join("repo"), dir.path());
    let (code, report) = audit_liar(dir.path(), &["peek"]);
    assert_eq!(code, 1, "{:#}", report["checks"]);
    let eff01 = check(&report, "EFF-01", "peek");
    assert_eq!(eff01["verdict"], "fail", "{eff01:#}");
    assert!(
        evidence_objects(eff01).contains(&"index/notes.txt".to_owned()),
        "{eff01:#}"
    );
    // Staging keeps the content in the object database: not destructive.
    let eff02 = check(&report, "EFF-02", "peek");
    assert_eq!(eff02["verdict"], "pass", "{eff02:#}");
}

/// mcp-server-git's launcher, or `None` after saying why not.
fn mcp_server_git() -> Option<std::path::PathBuf> {
    case_packages().map(|dir| dir.join("venv/bin/python"))
}

/// Without a plan the planner takes the repository's own names from the
/// baseline snapshot: its path for every `repo_path`, its worktree files
/// for `git_add`, its branches for `git_show` and `git_checkout`. So the
/// honest server's tools really run (a branch made and checked out, files
/// staged), and none of that is taken for an effect it does not have.
#[test]
fn mcp_server_git_audited_by_the_planner_alone_fails_no_check() {
    let Some(python) = mcp_server_git() else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    seed(&dir.path().join("repo"), dir.path());
    let mut args = s(&["audit", "--format", "json", "--settle-ms", "50"]);
    args.push(format!(
        "--store=repo=git:{}",
        dir.path().join("repo").display()
    ));
    for pair in [
        "GIT_AUTHOR_NAME=Ada",
        "GIT_AUTHOR_EMAIL=ada@example.org",
        "GIT_COMMITTER_NAME=Ada",
        "GIT_COMMITTER_EMAIL=ada@example.org",
    ] {
        args.push(format!("--env={pair}"));
    }
    args.push("--".into());
    args.push(python.to_string_lossy().into_owned());
    args.extend(s(&["-m", "mcp_server_git", "--repository", "{repo}"]));
    let (code, report) = witness(&args);
    assert_eq!(report["complete"], true, "{report:#}");
    let failed: Vec<String> = report["checks"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["verdict"] == "fail")
        .map(|c| format!("{} {}: {}", c["id"], c["tool"], c["reason"]))
        .collect();
    assert!(failed.is_empty(), "{failed:#?}");
    assert_eq!(code, 0, "{:#}", report["checks"]);
    assert_eq!(report["tools"].as_array().map(Vec::len), Some(12));
    let exercised = report["coverage"]["exercised"].as_u64().unwrap_or(0);
    assert!(exercised >= 10, "{:#}", report["coverage"]);
    // Something was written, and it was judged as git sees it: a new
    // branch is a created ref, switching to it moves HEAD, and the
    // rewritten .git/index of `git status` is nothing.
    let branch = ops(&report, "git_create_branch");
    assert!(
        branch
            .iter()
            .any(|(o, op)| o.starts_with("ref/refs/heads/") && op == "create"),
        "{branch:?}"
    );
    // `git_add` was given the edited file once the unchanged one staged
    // nothing, so `git_commit` committed it on main; switching to the
    // branch made before that commit moves HEAD and brings the branch's
    // notes.txt back into the index and the worktree.
    assert_eq!(
        ops(&report, "git_checkout"),
        [
            ("HEAD".to_owned(), "update".to_owned()),
            ("index/notes.txt".to_owned(), "update".to_owned()),
            ("worktree/notes.txt".to_owned(), "update".to_owned())
        ]
    );
    assert!(ops(&report, "git_status").is_empty());
}

//! Git's effect classes, driven by the git command line on a real
//! repository: what each operation looks like to the observer.

mod common;

use common::*;
use witness_observers::Op;
use witness_observers_git::{GitObserver, read_repository};

#[test]
fn objects_are_refs_head_index_worktree_ignored_and_counts() {
    let repo = Repo::new();
    repo.write("debug.log", "noise\n");
    repo.write("notes/new.txt", "untracked\n");
    let snapshot = read_repository(repo.path()).expect("snapshot");
    let ids: Vec<&str> = snapshot.objects.keys().map(String::as_str).collect();
    for id in [
        "HEAD",
        "ref/refs/heads/main",
        "index/a.txt",
        "index/b.txt",
        "index/.gitignore",
        "worktree/a.txt",
        "worktree/notes/new.txt",
        "ignored/debug.log",
        "odb/objects",
        "gitdir/config",
    ] {
        assert!(ids.contains(&id), "{id} missing from {ids:?}");
    }
    let main = repo.git(&["rev-parse", "main"]);
    assert_eq!(snapshot.objects["ref/refs/heads/main"].digest, main);
    // An index entry and the worktree file with the same bytes agree.
    assert_eq!(
        snapshot.objects["index/a.txt"].digest,
        format!("{} 100644", repo.git(&["hash-object", "a.txt"]))
    );
    assert_eq!(
        snapshot.objects["index/a.txt"].digest,
        snapshot.objects["worktree/a.txt"].digest
    );
    assert!(!ids.iter().any(|id| id.contains(".git/")), "{ids:?}");
}

#[test]
fn git_status_refreshing_the_stat_cache_is_no_change() {
    let repo = Repo::new();
    // A copied repository: every stat in the index is stale, so a plain
    // `git status` rewrites .git/index.
    let copy = tempfile::tempdir().expect("tempdir");
    let status = std::process::Command::new("cp")
        .args(["-a", &format!("{}/.", repo.path().display())])
        .arg(copy.path())
        .status()
        .expect("cp");
    assert!(status.success());
    let index = copy.path().join(".git/index");
    let bytes = std::fs::read(&index).expect("index");
    // Make every entry's cached stat wrong, as a copy with new inodes does.
    std::thread::sleep(std::time::Duration::from_millis(20));
    for file in ["a.txt", "b.txt", ".gitignore"] {
        let path = copy.path().join(file);
        let text = std::fs::read(&path).expect("read");
        std::fs::write(&path, text).expect("rewrite");
    }
    let mut observer = GitObserver::new(copy.path());
    let delta = step(&mut observer, || {
        let out = std::process::Command::new("git")
            .args(["status", "--porcelain"])
            .current_dir(copy.path())
            .env_remove("GIT_OPTIONAL_LOCKS")
            .output()
            .expect("git status");
        assert!(out.status.success());
    });
    assert_ne!(
        std::fs::read(&index).expect("index"),
        bytes,
        "git status was expected to rewrite the index"
    );
    assert!(delta.is_empty(), "{:?}", classes(&delta));
}

#[test]
fn a_commit_moves_the_branch_forward_and_adds_objects() {
    let repo = Repo::new();
    repo.write("c.txt", "gamma\n");
    repo.git(&["add", "c.txt"]);
    let mut observer = repo.observer();
    let delta = step(&mut observer, || {
        repo.git(&["commit", "-q", "-m", "third"]);
    });
    let got = classes(&delta);
    assert!(
        got.contains(&("ref/refs/heads/main".into(), Op::Update, false)),
        "{got:?}"
    );
    assert!(
        got.contains(&("odb/objects".into(), Op::Update, false)),
        "{got:?}"
    );
    assert!(destructive(&delta).is_empty(), "{got:?}");
}

#[test]
fn a_hard_reset_to_an_older_commit_loses_commits_and_edits() {
    let repo = Repo::new();
    let second = repo.git(&["rev-parse", "HEAD"]);
    repo.write("a.txt", "alpha, edited and never staged\n");
    let mut observer = repo.observer();
    let delta = step(&mut observer, || {
        repo.git(&["reset", "-q", "--hard", "HEAD~1"]);
    });
    let got = classes(&delta);
    assert!(
        got.contains(&("ref/refs/heads/main".into(), Op::Update, true)),
        "{got:?}"
    );
    assert!(
        got.contains(&(format!("commit/{second}"), Op::Delete, true)),
        "{got:?}"
    );
    // The unstaged edit is gone and no object holds it.
    assert!(
        got.contains(&("worktree/a.txt".into(), Op::Update, true)),
        "{got:?}"
    );
    // b.txt was committed: removing it from the worktree and the index
    // loses nothing the database does not keep.
    assert!(
        got.contains(&("worktree/b.txt".into(), Op::Delete, false)),
        "{got:?}"
    );
    assert!(
        got.contains(&("index/b.txt".into(), Op::Delete, false)),
        "{got:?}"
    );
}

#[test]
fn staging_and_unstaging_keep_content_and_are_not_destructive() {
    let repo = Repo::new();
    repo.write("a.txt", "alpha, edited\n");
    repo.write("new.txt", "new\n");
    let mut observer = repo.observer();
    let delta = step(&mut observer, || {
        repo.git(&["add", "a.txt", "new.txt"]);
    });
    let got = classes(&delta);
    assert!(
        got.contains(&("index/a.txt".into(), Op::Update, false)),
        "{got:?}"
    );
    assert!(
        got.contains(&("index/new.txt".into(), Op::Create, false)),
        "{got:?}"
    );
    assert!(destructive(&delta).is_empty(), "{got:?}");
    let delta = step(&mut observer, || {
        repo.git(&["reset", "-q"]);
    });
    // `git reset` also records where HEAD was, in ORIG_HEAD.
    assert_eq!(
        classes(&delta),
        [
            ("index/a.txt".to_string(), Op::Update, false),
            ("index/new.txt".to_string(), Op::Delete, false),
            ("state/ORIG_HEAD".to_string(), Op::Create, false),
        ]
    );
}

#[test]
fn switching_branches_over_committed_files_destroys_nothing() {
    let repo = Repo::new();
    repo.git(&["checkout", "-q", "-b", "feature", "HEAD~1"]);
    repo.write("f.txt", "feature only\n");
    repo.git(&["add", "f.txt"]);
    repo.git(&["commit", "-q", "-m", "feature"]);
    let mut observer = repo.observer();
    let delta = step(&mut observer, || {
        repo.git(&["checkout", "-q", "main"]);
    });
    let got = classes(&delta);
    assert!(got.contains(&("HEAD".into(), Op::Update, false)), "{got:?}");
    assert!(
        got.contains(&("worktree/f.txt".into(), Op::Delete, false)),
        "{got:?}"
    );
    assert!(
        got.contains(&("worktree/b.txt".into(), Op::Create, false)),
        "{got:?}"
    );
    assert!(destructive(&delta).is_empty(), "{got:?}");
}

#[test]
fn a_branch_moved_back_while_another_keeps_its_commits_is_still_an_overwrite() {
    let repo = Repo::new();
    repo.git(&["branch", "keep"]);
    let mut observer = repo.observer();
    let delta = step(&mut observer, || {
        repo.git(&["branch", "-f", "keep", "HEAD~1"]);
    });
    let got = classes(&delta);
    // No commit is lost (main holds them), but the ref went backwards.
    assert_eq!(
        got,
        [("ref/refs/heads/keep".to_string(), Op::Update, true)],
        "{got:?}"
    );
}

#[test]
fn a_stash_push_saves_edits_and_a_drop_destroys_them() {
    let repo = Repo::new();
    repo.write("a.txt", "alpha, to stash\n");
    let mut observer = repo.observer();
    let delta = step(&mut observer, || {
        repo.git(&["stash", "push", "-q"]);
    });
    let got = classes(&delta);
    let stash = repo.git(&["rev-parse", "refs/stash"]);
    assert!(
        got.contains(&(format!("stash/{stash}"), Op::Create, false)),
        "{got:?}"
    );
    assert!(destructive(&delta).is_empty(), "{got:?}");
    let delta = step(&mut observer, || {
        repo.git(&["stash", "drop", "-q"]);
    });
    let got = classes(&delta);
    assert!(
        got.contains(&(format!("stash/{stash}"), Op::Delete, true)),
        "{got:?}"
    );
    assert!(
        got.contains(&(format!("commit/{stash}"), Op::Delete, true)),
        "{got:?}"
    );
}

#[test]
fn a_merge_concluded_into_a_commit_keeps_its_state_and_an_abort_does_not() {
    let repo = Repo::new();
    repo.git(&["checkout", "-q", "-b", "side", "HEAD~1"]);
    repo.write("a.txt", "alpha from side\n");
    repo.git(&["commit", "-q", "-am", "side"]);
    repo.git(&["checkout", "-q", "main"]);
    repo.git(&["merge", "-q", "--no-commit", "--no-ff", "side"]);
    let mut observer = repo.observer();
    let before = observer.snapshot().expect("snapshot");
    assert!(before.objects.contains_key("state/MERGE_HEAD"));
    repo.git(&["commit", "-q", "-m", "merged"]);
    let after = observer.snapshot().expect("snapshot");
    let delta = observer.diff(&before, &after);
    assert!(destructive(&delta).is_empty(), "{:?}", classes(&delta));
    assert!(
        classes(&delta).contains(&("state/MERGE_HEAD".into(), Op::Delete, false)),
        "{:?}",
        classes(&delta)
    );
}

#[test]
fn a_removed_untracked_or_ignored_file_is_destroyed() {
    let repo = Repo::new();
    repo.write("scratch.txt", "only here\n");
    repo.write("build.log", "only here too\n");
    let mut observer = repo.observer();
    let delta = step(&mut observer, || {
        repo.git(&["clean", "-q", "-f", "-x"]);
    });
    assert_eq!(
        classes(&delta),
        [
            ("ignored/build.log".to_string(), Op::Delete, true),
            ("worktree/scratch.txt".to_string(), Op::Delete, true)
        ]
    );
}

#[test]
fn what_it_cannot_see_is_said() {
    let repo = Repo::new();
    let hook = repo.path().join(".git/hooks/post-commit");
    std::fs::write(&hook, "#!/bin/sh\ntrue\n").expect("hook");
    let status = std::process::Command::new("chmod")
        .arg("755")
        .arg(&hook)
        .status()
        .expect("chmod");
    assert!(status.success());
    let inner = Repo::new();
    let nested = repo.path().join("vendor/lib");
    std::fs::create_dir_all(repo.path().join("vendor")).expect("mkdir");
    let status = std::process::Command::new("cp")
        .arg("-a")
        .arg(inner.path())
        .arg(&nested)
        .status()
        .expect("cp");
    assert!(status.success());
    let snapshot = read_repository(repo.path()).expect("snapshot");
    let warnings = snapshot.warnings.join("\n");
    assert!(
        warnings.contains("active hooks (post-commit)"),
        "{warnings}"
    );
    assert!(
        warnings.contains("nested repository vendor/lib"),
        "{warnings}"
    );
    assert!(
        !snapshot
            .objects
            .keys()
            .any(|k| k.starts_with("worktree/vendor/")),
        "a nested repository is not walked"
    );
}

#[test]
fn an_empty_directory_is_no_repository_until_the_server_makes_one() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut observer = GitObserver::new(dir.path());
    let empty = observer.snapshot().expect("snapshot");
    assert!(empty.objects.is_empty());
    assert_eq!(empty.warnings.len(), 1, "{:?}", empty.warnings);
    let status = std::process::Command::new("git")
        .args(["init", "-q", "-b", "main"])
        .current_dir(dir.path())
        .status()
        .expect("git init");
    assert!(status.success());
    let made = observer.snapshot().expect("snapshot");
    assert!(
        made.objects.contains_key("HEAD"),
        "{:?}",
        made.objects.keys()
    );
    let delta = observer.diff(&empty, &made);
    assert!(destructive(&delta).is_empty(), "{:?}", classes(&delta));
}

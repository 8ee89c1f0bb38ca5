//! The observer never changes the repository: not a byte, not an inode, not
//! an mtime, no lock file left or made, across 1,000 snapshots of a
//! repository with a dirty worktree, a merge in progress and a stash. And
//! the same repository always reads as the same snapshot.

mod common;

use common::*;
use witness_observers_git::GitObserver;

/// A repository in the states where a careless reader writes: a stash, a
/// conflicted merge (stages 1–3 in the index, MERGE_HEAD), staged and
/// unstaged edits, untracked and ignored files, and a stale stat cache.
fn busy_repository() -> Repo {
    let repo = Repo::new();
    repo.write("a.txt", "alpha, stashed\n");
    repo.git(&["stash", "push", "-q"]);
    repo.git(&["checkout", "-q", "-b", "side", "HEAD~1"]);
    repo.write("a.txt", "alpha from side\n");
    repo.git(&["commit", "-q", "-am", "side"]);
    repo.git(&["checkout", "-q", "main"]);
    repo.write("a.txt", "alpha from main\n");
    repo.git(&["commit", "-q", "-am", "main"]);
    repo.git_may_fail(&["merge", "-q", "side"]);
    repo.write("b.txt", "beta, staged\n");
    repo.git(&["add", "b.txt"]);
    repo.write("b.txt", "beta, staged then edited\n");
    repo.write("untracked/u.txt", "untracked\n");
    repo.write("trace.log", "ignored\n");
    // Touch a tracked file so the index's cached stat no longer matches:
    // `git status` would now rewrite the index; the observer must not.
    std::thread::sleep(std::time::Duration::from_millis(20));
    repo.write(".gitignore", "*.log\n");
    repo
}

#[test]
fn a_thousand_snapshots_leave_every_byte_and_agree() {
    let repo = busy_repository();
    let first = fingerprint(repo.path());
    assert!(
        repo.path().join(".git/MERGE_HEAD").exists(),
        "the merge must be in progress"
    );
    // Events off: every one of the thousand reads the whole repository.
    let mut observer = GitObserver::new(repo.path()).with_events(false);
    let reference = observer.snapshot().expect("snapshot");
    assert!(reference.objects.contains_key("state/MERGE_HEAD"));
    assert!(reference.objects.keys().any(|k| k.starts_with("stash/")));
    assert!(
        reference.objects.contains_key("index/a.txt#2"),
        "conflict stages"
    );
    for i in 1..1000 {
        let again = observer.snapshot().expect("snapshot");
        assert!(again == reference, "snapshot {i} differs from the first");
    }
    let last = fingerprint(repo.path());
    assert_eq!(first.len(), last.len(), "no file appeared or vanished");
    for (path, before) in &first {
        assert!(last.get(path) == Some(before), "{} changed", path.display());
    }
    // A fresh observer of the same repository reads the same snapshot.
    let fresh = GitObserver::new(repo.path()).snapshot().expect("snapshot");
    assert!(fresh == reference);
    // The comparison can fail: a plain `git status` on this repository
    // rewrites .git/index (its stat cache is stale).
    let out = std::process::Command::new("git")
        .args(["status", "--porcelain"])
        .current_dir(repo.path())
        .env_remove("GIT_OPTIONAL_LOCKS")
        .output()
        .expect("git status");
    assert!(out.status.success());
    let index = repo.path().join(".git/index");
    assert!(fingerprint(repo.path()).get(&index) != last.get(&index));
}

#[test]
fn with_events_an_untouched_repository_is_answered_again_and_a_write_is_seen() {
    let repo = busy_repository();
    let first = fingerprint(repo.path());
    let mut observer = repo.observer();
    let reference = observer.snapshot().expect("snapshot");
    for _ in 0..100 {
        assert!(observer.snapshot().expect("snapshot") == reference);
    }
    assert_eq!(fingerprint(repo.path()), first);
    // Same size, same content length: only the bytes differ.
    repo.write("untracked/u.txt", "UNTRACKED\n");
    let after = observer.snapshot().expect("snapshot");
    assert_ne!(
        after.objects["worktree/untracked/u.txt"],
        reference.objects["worktree/untracked/u.txt"]
    );
    // And a rewrite with the same bytes is read again but is no change.
    repo.write("untracked/u.txt", "UNTRACKED\n");
    assert!(observer.snapshot().expect("snapshot") == after);
}

//! A repository built with the git command line, with fixed identities and
//! dates, so each test starts from the same commits.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use witness_observers::{Change, Delta, Op};
use witness_observers_git::GitObserver;

pub struct Repo {
    pub dir: tempfile::TempDir,
    home: tempfile::TempDir,
}

impl Repo {
    /// `main` with two commits (`a.txt`, then `b.txt`), and a `.gitignore`
    /// that ignores `*.log`.
    pub fn new() -> Self {
        let repo = Self {
            dir: tempfile::tempdir().expect("tempdir"),
            home: tempfile::tempdir().expect("tempdir"),
        };
        repo.git(&["init", "-q", "-b", "main"]);
        repo.write(".gitignore", "*.log\n");
        repo.write("a.txt", "alpha\n");
        repo.git(&["add", "."]);
        repo.git(&["commit", "-q", "-m", "first"]);
        repo.write("b.txt", "beta\n");
        repo.git(&["add", "b.txt"]);
        repo.git(&["commit", "-q", "-m", "second"]);
        repo
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Runs git in the repository and returns its trimmed output.
    pub fn git(&self, args: &[&str]) -> String {
        let out = Command::new("git")
            .args(args)
            .current_dir(self.path())
            .env("HOME", self.home.path())
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

    /// Like [`Repo::git`], for commands expected to fail (a conflict).
    pub fn git_may_fail(&self, args: &[&str]) {
        let _ = Command::new("git")
            .args(args)
            .current_dir(self.path())
            .env("HOME", self.home.path())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "Ada")
            .env("GIT_AUTHOR_EMAIL", "ada@example.org")
            .env("GIT_COMMITTER_NAME", "Ada")
            .env("GIT_COMMITTER_EMAIL", "ada@example.org")
            .output();
    }

    pub fn write(&self, rel: &str, text: &str) {
        let path = self.path().join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        std::fs::write(path, text).expect("write");
    }

    pub fn observer(&self) -> GitObserver {
        GitObserver::new(self.path())
    }
}

/// Every file under `root` with its bytes, size, inode and mtime: what a
/// reader must leave exactly as it was.
pub fn fingerprint(root: &Path) -> BTreeMap<PathBuf, (Vec<u8>, u64, u64, i64, i64)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read_dir") {
            let entry = entry.expect("entry");
            let meta = entry.metadata().expect("metadata");
            if meta.is_dir() {
                stack.push(entry.path());
                out.insert(
                    entry.path(),
                    (Vec::new(), 0, meta.ino(), meta.mtime(), meta.mtime_nsec()),
                );
            } else {
                let bytes = std::fs::read(entry.path()).expect("read");
                out.insert(
                    entry.path(),
                    (
                        bytes,
                        meta.len(),
                        meta.ino(),
                        meta.mtime(),
                        meta.mtime_nsec(),
                    ),
                );
            }
        }
    }
    out
}

/// The delta between two snapshots, as the observer classifies it.
pub fn step(observer: &mut GitObserver, act: impl FnOnce()) -> Delta {
    let before = observer.snapshot().expect("snapshot before");
    act();
    let after = observer.snapshot().expect("snapshot after");
    observer.diff(&before, &after)
}

/// `(object, op, destructive)` for each change.
pub fn classes(delta: &Delta) -> Vec<(String, Op, bool)> {
    delta
        .changes
        .iter()
        .map(|c: &Change| (c.object.clone(), c.op, c.is_destructive()))
        .collect()
}

pub fn destructive(delta: &Delta) -> Vec<String> {
    delta
        .changes
        .iter()
        .filter(|c| c.is_destructive())
        .map(|c| c.object.clone())
        .collect()
}

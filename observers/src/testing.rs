//! What the observers' tests share: a real git repository, copied the way
//! the jail copies a store.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs git in `dir` with no configuration but the repository's own.
pub(crate) fn git(dir: &Path, args: &[&str]) -> bool {
    Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .output()
        .is_ok_and(|o| o.status.success())
}

/// A repository with `a.txt` committed, made in `dir/repo`, and its copy
/// in `dir/copy` (new inodes and times, as in a jail): the copy's path.
/// `None` when git cannot be used here, after saying so; under `CI=true`
/// that is a failure.
pub(crate) fn copied_repository(dir: &Path) -> Option<PathBuf> {
    let repo = dir.join("repo");
    std::fs::create_dir_all(&repo).ok()?;
    std::fs::write(repo.join("a.txt"), "one\n").ok()?;
    let made = git(&repo, &["init", "-q"])
        && git(&repo, &["add", "a.txt"])
        && git(
            &repo,
            &[
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "commit",
                "-qm",
                "x",
            ],
        );
    if !made {
        assert_ne!(
            std::env::var("CI").as_deref(),
            Ok("true"),
            "CI=true and git is not usable here"
        );
        eprintln!("SKIPPED: git is not usable here");
        return None;
    }
    let copy = dir.join("copy");
    let copied = Command::new("cp")
        .arg("-r")
        .arg(&repo)
        .arg(&copy)
        .status()
        .is_ok_and(|s| s.success());
    assert!(copied, "cp -r of the repository");
    Some(copy)
}

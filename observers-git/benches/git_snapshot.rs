//! Snapshot cost of the git observer on a repository of 10^4 files and
//! 10^4 commits, against `git status --porcelain` on the same repository,
//! measured in the same run. A benchmark, not a test: it asserts nothing.
//!
//!     cargo bench -p witness-observers-git --bench git_snapshot [-- --out FILE]
//!
//! Prints one JSON object (and writes it to FILE): medians in milliseconds
//! and the no-change ratio the issue asks about. Needs `git` on PATH.

#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a benchmark reports its measurements on stdout and stderr"
)]

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use witness_observers_git::GitObserver;

const FILES: usize = 10_000;
const COMMITS: usize = 10_000;
const DIRS: usize = 100;

fn main() {
    let out = std::env::args()
        .skip_while(|a| a != "--out")
        .nth(1)
        .map(std::path::PathBuf::from);
    let dir = match tempfile::tempdir() {
        Ok(dir) => dir,
        Err(e) => return eprintln!("git_snapshot: no temporary directory: {e}"),
    };
    let repo = dir.path().join("repo");
    if let Err(e) = build(&repo) {
        return eprintln!("git_snapshot: cannot build the repository: {e}");
    }
    let result = measure(&repo);
    println!("{result}");
    if let Some(out) = out
        && let Err(e) = std::fs::write(&out, format!("{result}\n"))
    {
        eprintln!("git_snapshot: cannot write {}: {e}", out.display());
    }
}

fn git(repo: &Path, args: &[&str]) -> std::io::Result<()> {
    let status = Command::new("git")
        .args(args)
        .current_dir(repo)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .stdout(Stdio::null())
        .status()?;
    if status.success() {
        Ok(())
    } else {
        Err(std::io::Error::other(format!("git {args:?} failed")))
    }
}

/// One commit adding every file, then one commit per change of one file,
/// streamed through `git fast-import` (objects packed, as a clone has them).
fn build(repo: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(repo)?;
    git(repo, &["init", "-q", "--template=", "-b", "main"])?;
    let mut child = Command::new("git")
        .args(["fast-import", "--quiet"])
        .current_dir(repo)
        .stdin(Stdio::piped())
        .spawn()?;
    let mut stream = Vec::new();
    let path = |f: usize| format!("d{:02}/f{f:05}.txt", f % DIRS);
    let data = |out: &mut Vec<u8>, text: &str| {
        out.extend_from_slice(format!("data {}\n{text}\n", text.len()).as_bytes());
    };
    for i in 0..COMMITS {
        let when = 1_700_000_000 + i;
        stream.extend_from_slice(
            format!(
                "commit refs/heads/main\nauthor A <a@example.org> {when} +0000\n\
                 committer A <a@example.org> {when} +0000\n"
            )
            .as_bytes(),
        );
        data(&mut stream, &format!("commit {i}"));
        let changed: Vec<usize> = if i == 0 {
            (0..FILES).collect()
        } else {
            vec![i % FILES]
        };
        for f in changed {
            stream.extend_from_slice(format!("M 100644 inline {}\n", path(f)).as_bytes());
            data(&mut stream, &format!("file {f} version {i}\n"));
        }
    }
    if let Some(stdin) = child.stdin.as_mut() {
        stdin.write_all(&stream)?;
    }
    drop(child.stdin.take());
    if !child.wait()?.success() {
        return Err(std::io::Error::other("git fast-import failed"));
    }
    git(repo, &["reset", "-q", "--hard", "main"])
}

fn median_ms(mut runs: Vec<f64>) -> f64 {
    runs.sort_by(f64::total_cmp);
    runs[runs.len() / 2]
}

fn time(n: usize, mut f: impl FnMut()) -> f64 {
    median_ms(
        (0..n)
            .map(|_| {
                let start = Instant::now();
                f();
                start.elapsed().as_secs_f64() * 1e3
            })
            .collect(),
    )
}

fn measure(repo: &Path) -> String {
    let status = || {
        let _ = Command::new("git")
            .args(["status", "--porcelain"])
            .current_dir(repo)
            .stdout(Stdio::null())
            .status();
    };
    // Warm the page cache and git's stat cache before anything is timed.
    status();
    let git_status = time(21, status);
    let cold = time(5, || {
        let _ = GitObserver::new(repo).snapshot();
    });
    let mut observer = GitObserver::new(repo);
    let _ = observer.snapshot();
    let no_change = time(201, || {
        let _ = observer.snapshot();
    });
    let mut full = GitObserver::new(repo).with_events(false);
    let no_change_full = time(5, || {
        let _ = full.snapshot();
    });
    let file = repo.join("d07/f00007.txt");
    let mut turn = 0u32;
    let one_change = time(11, || {
        turn += 1;
        let _ = std::fs::write(&file, format!("edited {turn}\n"));
        let _ = observer.snapshot();
    });
    let git_status_again = time(21, status);
    let baseline = (git_status + git_status_again) / 2.0;
    format!(
        "{{\"bench\":\"git_snapshot\",\"files\":{FILES},\"commits\":{COMMITS},\
         \"git_status_porcelain_ms\":{baseline:.3},\"cold_ms\":{cold:.3},\
         \"no_change_ms\":{no_change:.4},\"no_change_without_events_ms\":{no_change_full:.3},\
         \"one_file_change_ms\":{one_change:.3},\"no_change_ratio\":{:.5},\
         \"no_change_without_events_ratio\":{:.3}}}",
        no_change / baseline,
        no_change_full / baseline
    )
}

//! The runner: seeds each case's store, audits the server, and writes the
//! case document and its audit.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use witness_engine::audit::stable::stable;
use witness_engine::audit::{self, AuditOptions};
use witness_engine::plan::Plan;
use witness_jail::{StoreKind, StoreSpec};
use witness_model::audit::AuditReport;
use witness_model::exit::ExitStatus;
use witness_observers::sqlite::ClockColumn;

use super::install::{absolute_dir, cases_dir, check_installed};
use super::summary::summarize;
use super::table::{
    CASES, CaseSpec, Runtime, SEED_COMMITS, SEED_DATE, SEED_IDENTITY, SEED_TREE, SEED_WORKTREE,
    initial_state,
};
use super::{CasesError, CasesOutcome};
use crate::progress::{Event, Progress};

/// Runs every case against the packages in [`cases_dir`].
pub fn run_cases(out: &Path, progress: &Progress) -> Result<CasesOutcome, CasesError> {
    run_cases_in(&cases_dir(), out, progress)
}

/// Runs every case against the packages in `dir`, writing into `out`.
pub fn run_cases_in(
    dir: &Path,
    out: &Path,
    progress: &Progress,
) -> Result<CasesOutcome, CasesError> {
    let dir = &absolute_dir(dir);
    check_installed(dir)?;
    let audits = out.join("audits");
    std::fs::create_dir_all(&audits).map_err(|source| CasesError::Write {
        path: audits.clone(),
        source,
    })?;
    let mut cases = Vec::new();
    for case in CASES {
        progress.report(Event::Published {
            experiment: "case",
            name: case.name,
            package: case.package,
            version: case.version,
        });
        let (report, audit) = run_case(dir, &case, progress)?;
        let audit_rel = format!("audits/case-{}.json", case.name);
        write_json(&out.join(&audit_rel), &audit)?;
        let summary = summarize(dir, &case, &report, audit_rel);
        write_json(&out.join(format!("case-{}.json", case.name)), &summary)?;
        progress.report(Event::Case(&summary));
        cases.push(summary);
    }
    // A code outside the rule cannot claim a concluded case.
    let status = ExitStatus::across(
        cases
            .iter()
            .map(|c| ExitStatus::from_code(c.exit_code.into()).unwrap_or(ExitStatus::Incomplete)),
    );
    Ok(CasesOutcome { cases, status })
}

fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<(), CasesError> {
    crate::write_json_file(path, value).map_err(|source| CasesError::Write {
        path: path.to_path_buf(),
        source,
    })
}

/// Audits one case. Returns the report and the audit document as written
/// (machine-specific paths replaced by placeholders).
fn run_case(
    dir: &Path,
    case: &CaseSpec,
    progress: &Progress,
) -> Result<(AuditReport, Value), CasesError> {
    let fail = |message: String| CasesError::Case {
        case: case.name.to_owned(),
        message,
    };
    let plan = Plan::parse(case.plan).map_err(|e| fail(format!("its plan is not valid: {e}")))?;
    let seed = witness_process::scratch::tempdir("mcp-witness-case-")
        .map_err(|e| fail(format!("cannot make a seed directory: {e}")))?;
    let source = seed_store(case, seed.path()).map_err(fail)?;
    let options = AuditOptions {
        progress: progress.audit(),
        ..audit_options(dir, case, plan, source).map_err(fail)?
    };
    let run = audit::run(options).map_err(|e| fail(e.to_string()))?;
    let mut report = run.report;
    for store in &mut report.stores {
        store.path = initial_state(case).to_owned();
    }
    // The cases directory and the seed differ per machine and run, and the
    // times the server answers with on every run.
    let dir_text = dir.to_string_lossy().into_owned();
    let seed_text = seed.path().to_string_lossy().into_owned();
    let report = stable(
        &report,
        &[(&dir_text, "{cases}"), (&seed_text, "{seed}")],
        case.clock_text,
    )
    .map_err(|e| fail(e.to_string()))?;
    let value = serde_json::to_value(&report).map_err(|e| fail(e.to_string()))?;
    Ok((report, value))
}

/// Prepares the case's store under `seed` and returns the path the jail
/// copies it from.
fn seed_store(case: &CaseSpec, seed: &Path) -> Result<PathBuf, String> {
    match case.store_kind {
        StoreKind::Fs => {
            let tree = seed.join("tree");
            for (path, content) in SEED_TREE {
                let file = tree.join(path);
                if let Some(parent) = file.parent() {
                    std::fs::create_dir_all(parent)
                        .map_err(|e| format!("cannot seed the tree: {e}"))?;
                }
                std::fs::write(&file, content).map_err(|e| format!("cannot seed the tree: {e}"))?;
            }
            Ok(tree)
        }
        StoreKind::Git => seed_repository(&seed.join("repo"), seed),
        // Not created: the store starts empty in the jail.
        StoreKind::Jsonl | StoreKind::Sqlite | StoreKind::Postgres => {
            Ok(seed.join(case.store_file))
        }
    }
}

/// Builds the git case's repository with the git command line: the seed
/// commits with a fixed identity and date (so their ids never change), then
/// the worktree edits. No templates: no sample hooks, whose set varies with
/// git's version. `home` keeps the user's git configuration out.
fn seed_repository(repo: &Path, home: &Path) -> Result<PathBuf, String> {
    let git = |args: &[&str]| -> Result<(), String> {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(repo)
            .env("HOME", home)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", SEED_IDENTITY.0)
            .env("GIT_AUTHOR_EMAIL", SEED_IDENTITY.1)
            .env("GIT_COMMITTER_NAME", SEED_IDENTITY.0)
            .env("GIT_COMMITTER_EMAIL", SEED_IDENTITY.1)
            .env("GIT_AUTHOR_DATE", SEED_DATE)
            .env("GIT_COMMITTER_DATE", SEED_DATE)
            .output()
            .map_err(|e| format!("cannot run git to seed the repository: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "git {} failed while seeding: {}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr).trim()
            ))
        }
    };
    let write = |files: &[(&str, &str)]| -> Result<(), String> {
        for (path, content) in files {
            let file = repo.join(path);
            if let Some(parent) = file.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(|e| format!("cannot seed the repository: {e}"))?;
            }
            std::fs::write(&file, content)
                .map_err(|e| format!("cannot seed the repository: {e}"))?;
        }
        Ok(())
    };
    std::fs::create_dir_all(repo).map_err(|e| format!("cannot seed the repository: {e}"))?;
    git(&["init", "-q", "--template=", "-b", "main"])?;
    for (message, files) in SEED_COMMITS {
        write(files)?;
        git(&["add", "--all"])?;
        git(&["commit", "-q", "-m", message])?;
    }
    write(&SEED_WORKTREE)?;
    Ok(repo.to_path_buf())
}

/// How one case is audited: the installed server under `node` or the
/// venv's `python`, in a jail
/// without network, on the seeded store, with every destructive tool called.
fn audit_options(
    dir: &Path,
    case: &CaseSpec,
    plan: Plan,
    source: PathBuf,
) -> Result<AuditOptions, String> {
    let clock_columns = case
        .clock_columns
        .iter()
        .map(|c| {
            ClockColumn::parse(c).ok_or_else(|| format!("clock column {c:?} is not table.column"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut command = match case.runtime {
        Runtime::Node => {
            let bin = dir.join("node_modules/.bin").join(case.bin);
            vec!["node".to_owned(), bin.to_string_lossy().into_owned()]
        }
        Runtime::Python => {
            let python = dir.join("venv/bin/python");
            let python = python.to_string_lossy().into_owned();
            vec![python, "-m".to_owned(), case.bin.to_owned()]
        }
    };
    command.extend(case.args.iter().map(|a| (*a).to_owned()));
    Ok(crate::PublishedRun {
        command,
        stores: vec![StoreSpec {
            name: case.store_name.to_owned(),
            kind: case.store_kind,
            source,
            shown: Some(format!("case seed for {}", case.name)),
            clock_columns,
        }],
        env: case.env,
        plan: Some(plan),
        label: format!("case {}: {}@{}", case.name, case.package, case.version),
        version: case.version,
    }
    .options())
}

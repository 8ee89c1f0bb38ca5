//! The reproduction gate: the committed `experiments/results/` and
//! `reports/` are exactly what `lab all` produces, byte for byte.
//!
//! Regenerate them with
//!   cargo run --release -- lab all --out experiments/results --pages reports
//! Where the case-study servers are installed, lab all reruns the case
//! studies too and their documents are held to the same bytes: the times the
//! servers take from their clock are not in them (docs/case-studies.md,
//! "What is volatile, and how the gate treats it"). Under `CI=true` the
//! servers must be installed. Elsewhere, without them, the committed
//! `case-*.json` (and the audits they name) are carried into the scratch
//! directory, only the pages rendered from them are checked, and the test
//! says so. The coverage experiment is never rerun by lab all (a rerun
//! gives the same numbers, not the same bytes): its committed documents are
//! always carried over, the pages rendered from them are checked here, and
//! `tests/published/lab_coverage.rs` holds a rerun to their numbers.

#![allow(
    clippy::print_stderr,
    reason = "a test says on stderr what it skipped or found, where cargo test shows it"
)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

const REGENERATE: &str = "bash experiments/cases/install.sh && cargo run --release -- lab all --out experiments/results --pages reports (and, for the coverage experiment, lab coverage with the same --out and --pages)";

fn files(root: &Path, skip: &[&str]) -> BTreeSet<PathBuf> {
    fn walk(root: &Path, dir: &Path, skip: &[&str], out: &mut BTreeSet<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let relative = path.strip_prefix(root).expect("inside").to_path_buf();
            if skip.iter().any(|s| relative.starts_with(s)) {
                continue;
            }
            if path.is_dir() {
                walk(root, &path, skip, out);
            } else {
                out.insert(relative);
            }
        }
    }
    let mut out = BTreeSet::new();
    walk(root, root, skip, &mut out);
    out
}

/// The first line where two texts differ, both sides shown.
fn first_difference(committed: &[u8], produced: &[u8]) -> String {
    let a = String::from_utf8_lossy(committed);
    let b = String::from_utf8_lossy(produced);
    let mut left = a.split('\n');
    let mut right = b.split('\n');
    let mut line = 1;
    loop {
        match (left.next(), right.next()) {
            (Some(x), Some(y)) if x == y => line += 1,
            (x, y) => {
                let show = |s: Option<&str>| match s {
                    Some(s) => format!("{:?}", s.chars().take(160).collect::<String>()),
                    None => "(end of file)".into(),
                };
                return format!(
                    "first difference at line {line}\n      committed: {}\n      produced:  {}",
                    show(x),
                    show(y)
                );
            }
        }
    }
}

fn compare(
    label: &str,
    committed_root: &Path,
    produced_root: &Path,
    skip: &[&str],
    problems: &mut Vec<String>,
) {
    let committed = files(committed_root, skip);
    let produced = files(produced_root, skip);
    let name = |p: &Path| Path::new(label).join(p).display().to_string();
    for path in produced.difference(&committed) {
        problems.push(format!(
            "{}: produced by lab all but not committed",
            name(path)
        ));
    }
    for path in committed.difference(&produced) {
        problems.push(format!(
            "{}: committed but no longer produced by lab all (remove it)",
            name(path)
        ));
    }
    for path in committed.intersection(&produced) {
        let a = std::fs::read(committed_root.join(path)).expect("read committed");
        let b = std::fs::read(produced_root.join(path)).expect("read produced");
        if a != b {
            problems.push(format!(
                "{}: differs; {}",
                name(path),
                first_difference(&a, &b)
            ));
        }
    }
}

/// The installed case-study servers, or `None` (after saying so) when they
/// are missing here. Under `CI=true` a missing install fails the gate.
fn case_servers(repo: &Path) -> Option<PathBuf> {
    let dir = repo.join("experiments/cases");
    match witness_lab::cases::check_installed(&dir) {
        Ok(()) => Some(dir),
        Err(e) if std::env::var("CI").as_deref() == Ok("true") => {
            panic!(
                "CI=true, and the case-study servers are missing, so the gate cannot rerun them: {e}"
            )
        }
        Err(e) => {
            eprintln!(
                "SKIPPED (case studies only): not rerun, their committed documents are carried over. {e}"
            );
            None
        }
    }
}

/// Without the servers the case studies cannot run: copy the committed ones
/// (and their audits) over, so the pages rendered from them are checked.
fn carry_case_studies(committed: &Path, scratch: &Path) {
    let Ok(entries) = std::fs::read_dir(committed) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !(name.starts_with("case-") && name.ends_with(".json")) {
            continue;
        }
        let text = std::fs::read_to_string(entry.path()).expect("read case");
        std::fs::write(scratch.join(&name), &text).expect("copy case");
        let audit = serde_json::from_str::<serde_json::Value>(&text)
            .ok()
            .and_then(|v| v.get("audit").and_then(|a| a.as_str()).map(str::to_owned));
        if let Some(audit) = audit
            && !audit.contains("..")
            && committed.join(&audit).is_file()
        {
            let target = scratch.join(&audit);
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(parent).expect("mkdir");
            }
            std::fs::copy(committed.join(&audit), target).expect("copy case audit");
        }
    }
}

/// E2 and E3 on PostgreSQL need dbhub (the cases' install) and PostgreSQL;
/// without them, lab all does not run them and their committed documents
/// (and the audits behind them) are carried over, so the pages rendered
/// from them are still checked. Under `CI=true` both must be there, and
/// lab all reruns them; `tests/published/postgres_lab.rs` reruns them too.
fn postgres_experiments(cases: Option<&Path>, committed: &Path, scratch: &Path) {
    // lab all is handed an empty cases directory when the case studies are
    // not installed: then it cannot run these either.
    let installed = cases.map_or_else(
        || Err("the case-study install is missing".to_owned()),
        |dir| witness_lab::postgres::check_installed(dir).map_err(|e| e.to_string()),
    );
    match installed {
        Ok(()) => return,
        Err(e) if std::env::var("CI").as_deref() == Ok("true") => {
            panic!("CI=true, and E2/E3 on PostgreSQL cannot be rerun: {e}")
        }
        Err(e) => eprintln!(
            "SKIPPED (E2/E3 on PostgreSQL only): not rerun, their committed documents are carried over. {e}"
        ),
    }
    carry(
        committed,
        scratch,
        &["e2-postgres.json", "e3-postgres.json"],
        &["e2-postgres-", "e3-postgres-"],
    );
}

/// The coverage, wild and field experiments' committed documents, carried
/// over as they are: lab all renders them, it does not rerun them.
fn carry_not_rerun(committed: &Path, scratch: &Path) {
    carry(
        committed,
        scratch,
        &[
            "coverage.json",
            "wild.json",
            "field.json",
            "field.jsonl",
            "field.csv",
        ],
        &["coverage-", "wild-", "field-"],
    );
}

/// Copies the committed `documents` and the audits whose names start with
/// one of `audits` from `committed` into `scratch`.
fn carry(committed: &Path, scratch: &Path, documents: &[&str], audits: &[&str]) {
    for name in documents {
        let document = committed.join(name);
        if document.is_file() {
            std::fs::copy(&document, scratch.join(name)).expect("copy a document");
        }
    }
    let Ok(entries) = std::fs::read_dir(committed.join("audits")) else {
        return;
    };
    std::fs::create_dir_all(scratch.join("audits")).expect("mkdir");
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if audits.iter().any(|p| name.starts_with(p)) && name.ends_with(".json") {
            std::fs::copy(entry.path(), scratch.join("audits").join(&name))
                .expect("copy a carried audit");
        }
    }
}

#[test]
fn committed_results_and_pages_are_exactly_what_lab_all_produces() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let committed_data = repo.join("experiments/results");
    let committed_pages = repo.join("reports");
    let scratch = tempfile::tempdir().expect("tempdir");
    let data = scratch.path().join("experiments/results");
    let pages = scratch.path().join("reports");
    std::fs::create_dir_all(&data).expect("mkdir");
    // None is rerun by lab all (the wild and field servers are caches of
    // their own); tests/published/lab_coverage.rs, lab_wild.rs and
    // lab_field.rs rerun them.
    carry_not_rerun(&committed_data, &data);
    // Rerun where the servers are; else an empty cases directory keeps lab
    // all from running them, and the committed ones stand in.
    let cases = case_servers(repo);
    postgres_experiments(cases.as_deref(), &committed_data, &data);
    let cases_dir = cases.unwrap_or_else(|| {
        carry_case_studies(&committed_data, &data);
        scratch.path().join("no-cases")
    });
    let output = Command::new(env!("CARGO_BIN_EXE_mcp-witness"))
        .args(["lab", "all", "--out"])
        .arg(&data)
        .arg("--pages")
        .arg(&pages)
        .arg("--cases-dir")
        .arg(&cases_dir)
        .output()
        .expect("mcp-witness runs");
    assert!(
        output.status.success(),
        "lab all failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );

    let mut problems = Vec::new();
    compare(
        "experiments/results",
        &committed_data,
        &data,
        &[],
        &mut problems,
    );
    compare("reports", &committed_pages, &pages, &[], &mut problems);
    assert!(
        files(&pages, &[])
            .iter()
            .any(|p| p == Path::new("index.html")),
        "lab all rendered no index.html"
    );
    assert!(
        problems.is_empty(),
        "the committed results are not what lab all produces:\n  {}\n\nRegenerate them with\n  {REGENERATE}\nand commit experiments/results/ and reports/. If a case study differs \
         only in a time its server read from the clock, declare that clock in \
         lab/src/cases/table.rs (clock_text, clock_columns) instead: a rerun must \
         write the same bytes.",
        problems.join("\n  ")
    );
}

//! The committed example sweep, `experiments/sweeps/published.toml`: the
//! pinned published servers, installed by the sweep itself with npm and pip.
//!
//! Run as a whole with `--jobs 2`, it writes the committed
//! `experiments/sweeps/published/` (by the documented rule: fields named
//! `volatile`, and the timing of the wire record — how each server process
//! ended, when each frame was recorded — are left out);
//! run again it redoes nothing; run as three shards in three processes and
//! merged, it writes the same dataset, sweep.json and page, byte for byte,
//! and the same audits by the rule. The committed pages and dataset are
//! checked to be exactly what the committed documents render.
//!
//! It needs npm, python3 and a package registry. CI runs it always
//! (`CI=true`); elsewhere it runs with `MCP_WITNESS_SWEEP_EXAMPLE=1`, and
//! otherwise says it skipped. Installs are kept under the test's target
//! directory, so only the first run pays for them.

#![allow(
    clippy::print_stderr,
    reason = "a test says on stderr what it skipped or found, where cargo test shows it"
)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

const REGENERATE: &str = "rm -rf experiments/sweeps/published && \
    cargo run --release -- sweep experiments/sweeps/published.toml \
    --out experiments/sweeps/published --installs /tmp/mcp-witness-installs";

/// Files of a sweep directory that are not results.
const NOT_RESULTS: [&str; 3] = [".lock", ".work", "installs"];

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn wanted() -> bool {
    let ci = std::env::var("CI").as_deref() == Ok("true");
    let asked = std::env::var("MCP_WITNESS_SWEEP_EXAMPLE").as_deref() == Ok("1");
    if !(ci || asked) {
        eprintln!(
            "SKIPPED: the example sweep installs its servers with npm and pip from a registry; \
             run it with MCP_WITNESS_SWEEP_EXAMPLE=1 cargo test --test published sweep_example (CI always does)"
        );
    }
    ci || asked
}

fn witness() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mcp-witness"));
    for name in [
        "MCP_WITNESS_SHARD",
        "JOB_COMPLETION_INDEX",
        "SLURM_ARRAY_TASK_ID",
        "CI_NODE_INDEX",
        "CIRCLE_NODE_INDEX",
        "BUILDKITE_PARALLEL_JOB",
        "MCP_WITNESS_NPM",
        "MCP_WITNESS_PYTHON",
    ] {
        command.env_remove(name);
    }
    command
}

fn installs() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("sweep-installs")
}

fn sweep(out: &Path, extra: &[&str]) -> Command {
    let mut command = witness();
    command
        .arg("sweep")
        .arg(repo().join("experiments/sweeps/published.toml"))
        .arg("--out")
        .arg(out)
        .arg("--installs")
        .arg(installs())
        .args(extra);
    command
}

/// Every result file under `root`, relative.
fn files(root: &Path) -> Vec<PathBuf> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            let relative = path.strip_prefix(root).unwrap_or(&path).to_path_buf();
            if NOT_RESULTS.iter().any(|n| relative.starts_with(n)) {
                continue;
            }
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                out.push(relative);
            }
        }
    }
    let mut out = Vec::new();
    walk(root, root, &mut out);
    out.sort();
    out
}

/// Whether two files of two sweep directories are the same by the rule:
/// JSON documents compared as values without what the rule leaves out
/// (`witness_model::measure`, the one rule `sweep merge` applies too),
/// the evidence pages of targets skipped (they render those documents;
/// `the_committed_pages_and_dataset_are_exactly_what_its_documents_render` holds
/// them to it), everything else by bytes.
fn same(path: &Path, left: &[u8], right: &[u8], strict: bool) -> bool {
    if strict {
        return left == right;
    }
    if path.extension().is_some_and(|e| e == "json") {
        let parse = |bytes: &[u8]| {
            let mut value: Value = serde_json::from_slice(bytes).unwrap_or(Value::Null);
            witness_model::measure::comparable(&mut value);
            value
        };
        return parse(left) == parse(right);
    }
    path.starts_with("targets") || left == right
}

/// What differs between two sweep directories (`strict`: byte for byte).
fn differences(a_root: &Path, b_root: &Path, strict: bool) -> Vec<String> {
    let (a, b) = (files(a_root), files(b_root));
    let mut out = Vec::new();
    for path in b.iter().filter(|p| !a.contains(p)) {
        out.push(format!("{}: only in {}", path.display(), b_root.display()));
    }
    for path in a.iter().filter(|p| !b.contains(p)) {
        out.push(format!("{}: only in {}", path.display(), a_root.display()));
    }
    for path in a.iter().filter(|p| b.contains(p)) {
        let left = std::fs::read(a_root.join(path)).unwrap_or_default();
        let right = std::fs::read(b_root.join(path)).unwrap_or_default();
        if !same(path, &left, &right, strict) {
            out.push(format!("{}: differs", path.display()));
        }
    }
    out
}

fn committed() -> PathBuf {
    repo().join("experiments/sweeps/published")
}

/// The exit status the committed example's targets add up to, from its
/// `sweep.json`: 1 when a check failed, else 3 when a target did not
/// conclude, else 0.
fn committed_exit() -> i32 {
    let text = std::fs::read_to_string(committed().join("sweep.json")).expect("sweep.json");
    let sweep: Value = serde_json::from_str(&text).expect("JSON");
    let targets = sweep["targets"].as_array().cloned().unwrap_or_default();
    assert!(!targets.is_empty(), "the example has targets");
    if targets.iter().any(|t| t["exit_code"] == 1) {
        1
    } else if targets.iter().any(|t| t["status"] != "audited") {
        3
    } else {
        0
    }
}

#[test]
fn the_committed_pages_and_dataset_are_exactly_what_its_documents_render() {
    // Merging the committed directory alone rewrites the dataset, sweep.json
    // and every page from its result and audit documents: byte for byte
    // what is committed, or a page or row was edited by hand or is stale.
    let scratch = tempfile::tempdir().expect("tempdir");
    let again = scratch.path().join("again");
    let output = witness()
        .args(["sweep", "merge"])
        .arg(committed())
        .arg("--out")
        .arg(&again)
        .output()
        .expect("runs");
    assert_eq!(
        output.status.code(),
        Some(committed_exit()),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let problems = differences(&committed(), &again, true);
    assert!(
        problems.is_empty(),
        "{problems:#?}\nRegenerate with\n  {REGENERATE}"
    );
}

#[test]
fn the_example_sweep_reproduces_and_its_shards_merge_to_the_same_dataset() {
    if !wanted() {
        return;
    }
    let scratch = tempfile::tempdir().expect("tempdir");
    let whole = scratch.path().join("whole");
    // The exit status its committed targets add up to (0: every target
    // audited and passed).
    let expected = committed_exit();
    let output = sweep(&whole, &["--jobs", "2"]).output().expect("runs");
    let log = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(expected), "{log}");
    let problems = differences(&committed(), &whole, false);
    assert!(
        problems.is_empty(),
        "the committed example sweep is not what the sweep writes:\n  {}\nRegenerate it with\n  {REGENERATE}",
        problems.join("\n  ")
    );

    // Again: nothing is redone.
    let output = sweep(&whole, &[]).output().expect("runs");
    let log = String::from_utf8_lossy(&output.stderr);
    assert!(log.contains("5 done earlier, 0 to run"), "{log}");

    // Three shards, three processes at once, then merged: the same dataset,
    // sweep.json and prevalence page, byte for byte, and the same audits.
    let shard = |i: usize| scratch.path().join(format!("shard-{i}"));
    let children: Vec<_> = (0..3)
        .map(|i| {
            let index = format!("{i}/3");
            sweep(&shard(i), &["--jobs", "1", "--shard", &index, "--quiet"])
                .stderr(Stdio::piped())
                .spawn()
                .expect("a shard starts")
        })
        .collect();
    for child in children {
        // A shard's status is its own targets': any of the results.
        let output = child.wait_with_output().expect("a shard ends");
        assert!(
            matches!(output.status.code(), Some(0 | 1 | 3)),
            "{:?}: {}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let merged = scratch.path().join("merged");
    let output = witness()
        .args(["sweep", "merge"])
        .args((0..3).map(shard))
        .arg("--out")
        .arg(&merged)
        .output()
        .expect("runs");
    assert_eq!(
        output.status.code(),
        Some(expected),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    for name in ["dataset.jsonl", "dataset.csv", "sweep.json", "index.html"] {
        let left = std::fs::read(whole.join(name)).unwrap_or_default();
        let right = std::fs::read(merged.join(name)).unwrap_or_default();
        assert!(
            left == right,
            "{name}: --jobs 2 and three shards merged differ"
        );
    }
    let problems = differences(&whole, &merged, false);
    assert!(problems.is_empty(), "{problems:#?}");
}

#[test]
fn the_example_npm_targets_are_the_case_studies_and_agree_with_them() {
    // The committed example and the committed case studies are independent
    // runs of the same servers, plans, stores and clocks: their verdicts in
    // both lanes, calls, observed effects, coverage and isolation layers
    // must be the same.
    let published = repo().join("experiments/sweeps/published");
    let sweep: Value = serde_json::from_str(
        &std::fs::read_to_string(published.join("sweep.json")).expect("sweep.json"),
    )
    .expect("JSON");
    for name in ["memory", "filesystem", "sqlite"] {
        let target = sweep["targets"]
            .as_array()
            .and_then(|t| t.iter().find(|t| t["name"] == name))
            .unwrap_or_else(|| panic!("the example sweep has {name}"));
        let read = |path: PathBuf| -> Value {
            serde_json::from_str(&std::fs::read_to_string(&path).expect("readable")).expect("JSON")
        };
        let ours = read(published.join(target["audit"].as_str().unwrap_or("")));
        let case = read(repo().join(format!("experiments/results/audits/case-{name}.json")));
        for field in [
            "checks", "response", "metadata", "findings", "calls", "summary", "tools", "coverage",
        ] {
            assert_eq!(ours[field], case[field], "{name}: {field}");
        }
        // The same layers held, with the same words, but for how many
        // decoys stood in for the stores' originals: that counts where each
        // run keeps a store it starts empty (the lab makes a directory for
        // it, which a decoy then stands in for; the sweep names a bare file
        // in the jail, which has no original outside it).
        assert_eq!(
            without_decoys(&ours["isolation"]),
            without_decoys(&case["isolation"]),
            "{name}: isolation"
        );
    }
}

/// `isolation` with the mount namespace's sentence about decoys left out.
fn without_decoys(isolation: &Value) -> Value {
    let mut isolation = isolation.clone();
    if let Some(layers) = isolation["layers"].as_array_mut() {
        for layer in layers
            .iter_mut()
            .filter(|l| l["layer"] == "mount-namespace")
        {
            let detail = layer["detail"].as_str().unwrap_or_default();
            let kept: Vec<&str> = detail
                .split(". ")
                .filter(|sentence| !sentence.contains("decoy"))
                .collect();
            layer["detail"] = Value::String(kept.join(". "));
        }
    }
    isolation
}

//! The field study's CI slice and its shards, without installing a server:
//! the slice (`experiments/field/ci-slice.txt`) is what its committed bytes
//! were made from and every server of it installs from its lock; `lab field
//! --shard` and `experiments/field/slurm-array.sh` refuse what they cannot
//! run before anything is installed, and a shard dealt no server writes a
//! document of none, which merges. CI runs the slice itself on Slurm
//! (`experiments/sweeps/cluster/slurm-roundtrip.sh`).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn field_dir() -> PathBuf {
    root().join("experiments/field")
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn slice() -> Vec<String> {
    std::fs::read_to_string(field_dir().join("ci-slice.txt"))
        .expect("ci-slice.txt")
        .lines()
        .map(|l| l.split('#').next().unwrap_or("").trim().to_owned())
        .filter(|l| !l.is_empty())
        .collect()
}

/// A PyPI name as pip freeze may spell it: case and `-`/`_`/`.` aside.
fn normalized(name: &str) -> String {
    name.to_lowercase().replace(['_', '.'], "-")
}

#[test]
fn the_ci_slice_is_ten_locked_development_servers_and_its_committed_run() {
    let ids = slice();
    let unique: BTreeSet<&String> = ids.iter().collect();
    assert!(ids.len() >= 10, "the issue asks at least 10: {ids:?}");
    assert_eq!(unique.len(), ids.len(), "an id twice: {ids:?}");
    let split = read_json(&field_dir().join("split.json"));
    let development: BTreeSet<&str> = split["development"]
        .as_array()
        .expect("development")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for id in &ids {
        assert!(
            development.contains(id.as_str()),
            "{id} is not a development server (the evaluation half is held out)"
        );
        let entry = field_dir().join("servers").join(id);
        let package = &read_json(&entry.join("server.json"))["packages"][0];
        let (registry, name, version) = (
            package["registryType"].as_str().unwrap_or(""),
            package["identifier"].as_str().unwrap_or(""),
            package["version"].as_str().unwrap_or(""),
        );
        // Its lock pins the package at the entry's version, so that a fresh
        // install is the one the committed bytes were made with.
        match registry {
            "npm" => {
                let lock = read_json(&entry.join("package-lock.json"));
                assert_eq!(
                    lock["packages"][""]["dependencies"][name], version,
                    "{id}: the lock's root"
                );
                assert_eq!(
                    lock["packages"][format!("node_modules/{name}")]["version"],
                    version,
                    "{id}: the lock installs {name}@{version}"
                );
            }
            "pypi" => {
                let lock = std::fs::read_to_string(entry.join("requirements.lock"))
                    .unwrap_or_else(|e| panic!("{id}: requirements.lock: {e}"));
                let pinned = lock.lines().any(|l| {
                    l.split_once("==").is_some_and(|(n, v)| {
                        normalized(n) == normalized(name) && v.trim() == version
                    })
                });
                assert!(pinned, "{id}: the lock pins {name}=={version}");
                assert!(
                    lock.lines()
                        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
                        .all(|l| l.contains("==")),
                    "{id}: every line of a pip lock is NAME==VERSION"
                );
            }
            other => panic!("{id}: registryType {other}"),
        }
    }
    let committed = field_dir().join("results/ci-slice");
    let document = read_json(&committed.join("field.json"));
    assert_eq!(document["schema"], "mcp-witness.field/v1");
    assert_eq!(document["half"], "subset");
    let ran: BTreeSet<&str> = document["servers"]
        .as_array()
        .expect("servers")
        .iter()
        .map(|s| {
            assert!(
                s.get("error").is_none_or(Value::is_null),
                "a server of the committed slice did not run: {s}"
            );
            s["id"].as_str().unwrap_or("")
        })
        .collect();
    let listed: BTreeSet<&str> = ids.iter().map(String::as_str).collect();
    assert_eq!(
        ran, listed,
        "experiments/field/results/ci-slice/ is the run of ci-slice.txt: \
         regenerate it with `bash experiments/field/ci-slice.sh`"
    );
    let rows = std::fs::read_to_string(committed.join("field.jsonl")).expect("field.jsonl");
    let csv = std::fs::read_to_string(committed.join("field.csv")).expect("field.csv");
    assert_eq!(
        csv.lines().count(),
        rows.lines().count() + 1,
        "field.csv is field.jsonl's rows under a header"
    );
    assert_eq!(
        rows.lines().count(),
        4 * document["totals"]["tools"].as_u64().unwrap_or(0) as usize,
        "a row per tool × hint"
    );
}

fn witness(args: &[&str], cache: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mcp-witness"))
        .args(args)
        .env("MCP_WITNESS_FIELD_DIR", cache)
        .output()
        .expect("mcp-witness runs")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn a_shard_is_checked_before_anything_runs_and_an_empty_one_merges() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cache = dir.path().join("cache");
    let out = dir.path().join("out");
    let out_arg = out.to_str().expect("utf-8");
    for (args, says) in [
        (
            vec!["lab", "field", "--shard", "3/3", "--out", out_arg],
            "shard 3 of 3 does not exist",
        ),
        (
            vec!["lab", "field", "--shard", "one", "--out", out_arg],
            "expected I/N",
        ),
        (
            vec![
                "lab", "field", "--shard", "0/2", "--merge", out_arg, "--out", out_arg,
            ],
            "give one",
        ),
        (
            vec!["lab", "e1", "--shard", "0/2", "--out", out_arg],
            "are the field study's",
        ),
    ] {
        let output = witness(&args, &cache);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{args:?}: {}",
            stderr(&output)
        );
        assert!(
            stderr(&output).contains(says),
            "{args:?}: {}",
            stderr(&output)
        );
    }
    assert!(!cache.exists(), "nothing was installed for a refused shard");

    // Two servers dealt into seven shards: shard 5 has none and writes a
    // document of none, which merges with the others as a part like any.
    let empty = dir.path().join("shard-5");
    let output = witness(
        &[
            "lab",
            "field",
            "--server",
            "server-memory",
            "--server",
            "server-postgres",
            "--shard",
            "5/7",
            "--out",
            empty.to_str().expect("utf-8"),
        ],
        &cache,
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let document = read_json(&empty.join("field.json"));
    assert_eq!(document["half"], "subset", "a shard is a part");
    assert_eq!(document["servers"], Value::Array(Vec::new()));
    let merged = dir.path().join("merged");
    let output = witness(
        &[
            "lab",
            "field",
            "--merge",
            field_dir()
                .join("results/ci-slice")
                .to_str()
                .expect("utf-8"),
            "--merge",
            empty.to_str().expect("utf-8"),
            "--out",
            merged.to_str().expect("utf-8"),
        ],
        &cache,
    );
    // 1 (a lie escaped) and 3 (an audit did not finish) are what the
    // committed servers may add up to; 2 would be a refused merge.
    assert!(
        matches!(output.status.code(), Some(0 | 1 | 3)),
        "{}",
        stderr(&output)
    );
    for name in ["field.json", "field.jsonl", "field.csv"] {
        assert_eq!(
            std::fs::read(merged.join(name)).expect("merged"),
            std::fs::read(field_dir().join("results/ci-slice").join(name)).expect("committed"),
            "{name}: an empty shard adds nothing to the merge"
        );
    }
}

fn slurm_task(args: &[&Path], task: Option<u32>, cache: &Path) -> Output {
    let mut command = Command::new("bash");
    command
        .arg(field_dir().join("slurm-array.sh"))
        .args(args)
        .env("MCP_WITNESS", env!("CARGO_BIN_EXE_mcp-witness"))
        .env("MCP_WITNESS_FIELD_DIR", cache)
        .env("SLURM_JOB_ID", "7")
        .env_remove("SLURM_ARRAY_TASK_ID");
    if let Some(task) = task {
        command.env("SLURM_ARRAY_TASK_ID", task.to_string());
    }
    command.output().expect("bash runs")
}

#[test]
fn the_field_array_script_fails_a_task_it_cannot_run_and_says_why() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cache = dir.path().join("cache");
    let results = dir.path().join("results");
    let servers = dir.path().join("servers.txt");
    let three = Path::new("3");
    let log = |task: &str| {
        std::fs::read_to_string(results.join(format!("logs/shard-{task}.log"))).unwrap_or_default()
    };

    let output = slurm_task(&[servers.as_path(), results.as_path()], Some(0), &cache);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("usage"), "{}", stderr(&output));

    std::fs::write(&servers, "server-memory\n").expect("servers");
    let output = slurm_task(&[servers.as_path(), results.as_path(), three], None, &cache);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        log("none").contains("SLURM_ARRAY_TASK_ID is not set"),
        "{}",
        log("none")
    );

    // An evaluation server in the file: lab field refuses it (exit 2), so
    // the task fails and a merge waiting on it never runs on a half-run.
    let split = read_json(&field_dir().join("split.json"));
    let held_out = split["evaluation"][0]
        .as_str()
        .expect("an evaluation server");
    std::fs::write(
        &servers,
        format!("# a comment\nserver-memory\n{held_out}\n"),
    )
    .expect("servers");
    let output = slurm_task(
        &[servers.as_path(), results.as_path(), three],
        Some(1),
        &cache,
    );
    assert_eq!(output.status.code(), Some(2), "{}", log("1"));
    assert!(
        log("1").contains("not in the development half"),
        "{}",
        log("1")
    );
    assert!(log("1").contains("lab field exit 2"), "{}", log("1"));
}

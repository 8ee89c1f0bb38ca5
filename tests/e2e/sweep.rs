//! `mcp-witness sweep` end to end on the built-in testbed and commands that
//! misbehave: every outcome is a row with its reason, `--jobs` and shards
//! merged give the same dataset, a killed sweep resumes without redoing
//! what finished, and bad input is one line and exit 2.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::html::{assert_links_resolve, parse};
use serde_json::Value;

/// Index variables an engine may have set around this test: a sweep started
/// here must not pick them up.
const SHARD_VARIABLES: [&str; 14] = [
    "MCP_WITNESS_SHARD",
    "MCP_WITNESS_SHARD_COUNT",
    "JOB_COMPLETION_INDEX",
    "SLURM_ARRAY_TASK_ID",
    "SLURM_ARRAY_TASK_MIN",
    "SLURM_ARRAY_TASK_STEP",
    "SLURM_ARRAY_TASK_COUNT",
    "CI_NODE_INDEX",
    "CI_NODE_TOTAL",
    "CIRCLE_NODE_INDEX",
    "CIRCLE_NODE_TOTAL",
    "BUILDKITE_PARALLEL_JOB",
    "BUILDKITE_PARALLEL_JOB_COUNT",
    "MCP_WITNESS_INSTALLS",
];

fn witness() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mcp-witness"));
    for name in SHARD_VARIABLES {
        command.env_remove(name);
    }
    // No package in these sweeps may reach a registry.
    command.env("MCP_WITNESS_NPM", "/nonexistent/npm-for-this-test");
    command
}

fn run(command: &mut Command) -> Output {
    command.output().expect("mcp-witness runs")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn read(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn rows(out: &Path) -> Vec<Value> {
    std::fs::read_to_string(out.join("dataset.jsonl"))
        .expect("dataset.jsonl")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON row"))
        .collect()
}

/// `mcp-witness sweep FILE --out OUT`, more arguments to follow.
fn sweep_in(file: &Path, out: &Path) -> Command {
    let mut command = witness();
    command.arg("sweep").arg(file).arg("--out").arg(out);
    command
}

/// A testbed target serving `variant`.
fn testbed(name: &str, variant: &str) -> String {
    format!(
        "[[target]]\nname = \"{name}\"\n\
         command = [\"mcp-witness\", \"testbed\", \"serve\", \"--variant\", \"{variant}\", \"--store\", \"{{db}}\"]\n\
         [[target.store]]\nname = \"db\"\nkind = \"sqlite\"\n"
    )
}

/// A sweep file in a fresh directory.
fn sweep_file(body: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("SWEEP.toml");
    std::fs::write(&file, body).expect("write the sweep");
    (dir, file)
}

fn schema(document: &str) -> jsonschema::Validator {
    let output = run(Command::new(env!("CARGO_BIN_EXE_mcp-witness")).args(["schema", document]));
    let schema: Value = serde_json::from_slice(&output.stdout).expect("a JSON Schema");
    jsonschema::validator_for(&schema).expect("the schema compiles")
}

fn assert_valid(validator: &jsonschema::Validator, value: &Value, what: &str) {
    let errors: Vec<String> = validator
        .iter_errors(value)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .take(5)
        .collect();
    assert!(errors.is_empty(), "{what}: {errors:#?}");
}

/// Processes (not zombies) whose command line holds `token`.
fn processes_with(token: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains(token))
        .collect()
}

#[test]
fn every_outcome_is_a_row_with_its_reason_and_a_rerun_redoes_nothing() {
    // The audit bound is well above what a testbed audit takes on a loaded
    // machine (its controls wait beside every call; 2 s was too tight in
    // CI) and well below the hanging target's 60 s.
    let token = format!("witness-sweep-hang-{}", std::process::id());
    let body = format!(
        "name = \"outcomes\"\nmax_attempts = 2\naudit_timeout_s = 10\n[defaults]\nsettle_ms = 5\n\n{}{}\
         [[target]]\nname = \"never-starts\"\ncommand = [\"/bin/false\"]\n\n\
         [[target]]\nname = \"hangs\"\ncommand = [\"python3\", \"-c\", \"import time; time.sleep(60)\", \"{token}\"]\ntimeout_ms = 30000\n\n\
         [[target]]\nname = \"no-npm\"\npackage = \"npm:@modelcontextprotocol/server-memory@2026.8.31\"\nbin = \"mcp-server-memory\"\n",
        testbed("honest", "honest"),
        testbed("keymint", "silent-keymint"),
    );
    let (dir, file) = sweep_file(&body);
    let out = dir.path().join("out");
    let output = run(sweep_in(&file, &out).args(["--jobs", "2"]));
    let log = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "a failed check: {log}");
    assert!(
        processes_with(&token).is_empty(),
        "the hung server was ended"
    );

    let sweep = read(&out.join("sweep.json"));
    assert_valid(&schema("sweep"), &sweep, "sweep.json");
    let statuses = &sweep["statuses"];
    for (status, n) in [
        ("audited", 2),
        ("incomplete", 1),
        ("timed-out", 1),
        ("install-failed", 1),
    ] {
        assert_eq!(statuses[status], n, "{status}: {statuses}");
    }
    let rows = rows(&out);
    let row_schema = schema("sweep-row");
    for row in &rows {
        assert_valid(&row_schema, row, "a dataset row");
    }
    let csv = std::fs::read_to_string(out.join("dataset.csv")).expect("dataset.csv");
    assert_eq!(
        csv.lines().count(),
        rows.len() + 1,
        "a header and one line per row"
    );

    let only = |target: &str| -> &Value {
        let mine: Vec<&Value> = rows.iter().filter(|r| r["target"] == target).collect();
        assert_eq!(mine.len(), 1, "{target}: one row, no tools");
        mine[0]
    };
    assert_eq!(only("never-starts")["status"], "incomplete");
    assert!(
        only("never-starts")["reason"]
            .as_str()
            .is_some_and(|r| r.starts_with("no session"))
    );
    assert!(
        only("hangs")["reason"]
            .as_str()
            .is_some_and(|r| r.contains("within 10 s"))
    );
    assert_eq!(only("no-npm")["status"], "install-failed");
    assert!(
        only("no-npm")["reason"]
            .as_str()
            .is_some_and(|r| r.contains("cannot run npm install"))
    );
    let lie = rows
        .iter()
        .find(|r| r["target"] == "keymint" && r["tool"] == "get_note" && r["check"] == "EFF-01")
        .expect("keymint's get_note has an EFF-01 row");
    assert_eq!(lie["verdict"], "fail");
    assert_eq!(lie["read_only"], true);
    assert_eq!(lie["exercised"], true);

    let target_schema = schema("sweep-target");
    let mut results = BTreeMap::new();
    for target in sweep["targets"].as_array().expect("targets") {
        let key = target["key"].as_str().expect("a key");
        let path = out.join("targets").join(key).join("result.json");
        let result = read(&path);
        assert_valid(&target_schema, &result, key);
        let attempts = result["volatile"]["attempts"].as_u64();
        let expected = if target["status"] == "audited" { 1 } else { 2 };
        assert_eq!(
            attempts,
            Some(expected),
            "{key}: tried while it did not conclude"
        );
        results.insert(path.clone(), std::fs::read(&path).expect("result"));
    }

    // Every row links to its evidence, and every link lands.
    let index = out.join("index.html");
    let page = parse(
        "sweep page",
        &std::fs::read_to_string(&index).expect("index.html"),
    );
    assert_links_resolve(&index, &page);
    let key = lie["key"].as_str().unwrap_or("");
    let href = format!("targets/{key}/report.html#EFF-01-get_note");
    assert!(
        page.hrefs.contains(&href),
        "the failing verdict links to its evidence"
    );

    let again = run(&mut sweep_in(&file, &out));
    assert_eq!(again.status.code(), Some(1));
    assert!(
        stderr(&again).contains("5 done earlier, 0 to run"),
        "{}",
        stderr(&again)
    );
    for (path, bytes) in &results {
        assert_eq!(
            &std::fs::read(path).expect("result"),
            bytes,
            "{} untouched",
            path.display()
        );
    }
}

/// The files two outputs of one sweep must hold identically.
fn assert_same_dataset(a: &Path, b: &Path) {
    for name in ["dataset.jsonl", "dataset.csv", "sweep.json", "index.html"] {
        let left = std::fs::read(a.join(name)).expect("first");
        let right = std::fs::read(b.join(name)).expect("second");
        assert!(
            left == right,
            "{name} differs between {} and {}",
            a.display(),
            b.display()
        );
    }
}

#[test]
fn jobs_and_shards_merged_give_the_same_dataset() {
    let body = format!(
        "name = \"split\"\nmax_attempts = 1\n[defaults]\nsettle_ms = 5\n\n{}{}{}{}",
        testbed("honest", "honest"),
        testbed("keymint", "silent-keymint"),
        testbed("lie-readonly", "lie-readonly"),
        "[[target]]\nname = \"never-starts\"\ncommand = [\"/bin/false\"]\n",
    );
    let (dir, file) = sweep_file(&body);
    let whole = dir.path().join("whole");
    let output = run(sweep_in(&file, &whole).args(["--jobs", "2"]));
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));

    // Three processes at once, each told its shard the way an engine tells it.
    let shard = |i: usize| dir.path().join(format!("shard-{i}"));
    let mut children = Vec::new();
    for i in 0..3 {
        let mut command = witness();
        command
            .arg("sweep")
            .arg(&file)
            .arg("--out")
            .arg(shard(i))
            .args(["--jobs", "1"]);
        match i {
            0 => command.args(["--shard", "0/3"]),
            1 => command
                .env("JOB_COMPLETION_INDEX", "1")
                .env("MCP_WITNESS_SHARD_COUNT", "3"),
            _ => command
                .env("SLURM_ARRAY_TASK_ID", "3")
                .env("SLURM_ARRAY_TASK_MIN", "1")
                .env("SLURM_ARRAY_TASK_COUNT", "3"),
        };
        children.push(
            command
                .stderr(Stdio::piped())
                .spawn()
                .expect("a shard starts"),
        );
    }
    let mut covered = 0;
    for (i, child) in children.into_iter().enumerate() {
        let output = child.wait_with_output().expect("a shard ends");
        assert!(
            matches!(output.status.code(), Some(0 | 1 | 3)),
            "{}",
            stderr(&output)
        );
        let document = read(&shard(i).join("sweep.json"));
        assert_eq!(
            document["shard"]["index"],
            i,
            "shard {i}: {}",
            stderr(&output)
        );
        covered += document["targets"].as_array().map_or(0, Vec::len);
    }
    assert_eq!(covered, 4, "each target in exactly one shard");

    let merged = dir.path().join("merged");
    let output = run(witness()
        .args(["sweep", "merge"])
        .args((0..3).map(shard))
        .arg("--out")
        .arg(&merged));
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert_same_dataset(&whole, &merged);
    for target in read(&whole.join("sweep.json"))["targets"]
        .as_array()
        .expect("targets")
    {
        if target["status"] == "audited" {
            let audit = |root: &Path| read(&root.join(target["audit"].as_str().unwrap_or("")));
            assert_eq!(audit(&whole)["checks"], audit(&merged)["checks"]);
        }
    }

    // Two shards of three: merged, but not complete.
    let partial = dir.path().join("partial");
    let output = run(witness()
        .args(["sweep", "merge"])
        .args([shard(0), shard(1)])
        .arg("--out")
        .arg(&partial));
    let document = read(&partial.join("sweep.json"));
    let shard_two = read(&shard(2).join("sweep.json"))["targets"]
        .as_array()
        .map_or(0, Vec::len);
    assert_eq!(
        document["missing"].as_array().map_or(0, Vec::len),
        shard_two
    );
    if shard_two > 0 {
        // Not passed: a missing target could not conclude (a failed check
        // among the others still outranks it).
        assert!(
            matches!(output.status.code(), Some(1 | 3)),
            "{}",
            stderr(&output)
        );
        assert!(
            stderr(&output).contains("without a result"),
            "{}",
            stderr(&output)
        );
    }

    // Another sweep's shard does not merge.
    let (other_dir, other) = sweep_file(&format!(
        "name = \"other\"\n{}",
        testbed("honest", "honest")
    ));
    let other_out = other_dir.path().join("out");
    run(&mut sweep_in(&other, &other_out));
    let output = run(witness()
        .args(["sweep", "merge"])
        .arg(shard(0))
        .arg(&other_out)
        .arg("--out")
        .arg(dir.path().join("mixed")));
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(stderr(&output).lines().count(), 1, "{}", stderr(&output));
    assert!(stderr(&output).contains("only shards of one sweep merge"));
}

/// Result files present under `out`, with their bytes.
fn finished(out: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut found = BTreeMap::new();
    for entry in std::fs::read_dir(out.join("targets"))
        .into_iter()
        .flatten()
        .flatten()
    {
        let path = entry.path().join("result.json");
        if let Ok(bytes) = std::fs::read(&path) {
            found.insert(path, bytes);
        }
    }
    found
}

#[test]
fn a_killed_sweep_resumes_without_redoing_finished_targets() {
    // The testbed's variants, as it names them.
    let listed = run(witness().args(["testbed", "variants", "--format", "json"]));
    let listed: Value = serde_json::from_slice(&listed.stdout).expect("variants as JSON");
    let variants: Vec<&str> = listed
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v["name"].as_str())
        .collect();
    assert!(variants.len() >= 5, "{variants:?}");
    let mut body = String::from("name = \"resume\"\n[defaults]\nsettle_ms = 5\n\n");
    for variant in &variants {
        body.push_str(&testbed(variant, variant));
    }
    let (dir, file) = sweep_file(&body);
    let out = dir.path().join("out");
    let mut running = sweep_in(&file, &out)
        .args(["--jobs", "1"])
        .stderr(Stdio::null())
        .spawn()
        .expect("the sweep starts");
    let deadline = Instant::now() + Duration::from_secs(300);
    while finished(&out).len() < 2 {
        assert!(Instant::now() < deadline, "two targets in five minutes");
        assert!(running.try_wait().ok().flatten().is_none(), "still running");
        std::thread::sleep(Duration::from_millis(20));
    }
    running.kill().expect("SIGKILL");
    running.wait().expect("reaped");
    let done = finished(&out);
    assert!(done.len() < variants.len(), "killed midway: {}", done.len());
    // Its worker died with it: nothing runs a job from this directory.
    std::thread::sleep(Duration::from_millis(200));
    let token = out.to_string_lossy().into_owned();
    assert!(
        processes_with(&token).is_empty(),
        "no worker outlives the sweep"
    );

    // The killed attempt's scratch (where its jail was) is named under
    // .work; the rerun removes it.
    let left: Vec<PathBuf> = std::fs::read_dir(out.join(".work"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| std::fs::read_to_string(e.path()).ok())
        .map(PathBuf::from)
        .collect();
    assert!(left.iter().all(|d| d.is_dir()), "{left:?}");

    let output = run(sweep_in(&file, &out).args(["--jobs", "1"]));
    let log = stderr(&output);
    assert!(output.status.code().is_some_and(|c| c == 1), "{log}");
    assert!(
        left.iter().all(|d| !d.exists()),
        "left scratch removed: {left:?}"
    );
    let expected = format!(
        "{} done earlier, {} to run",
        done.len(),
        variants.len() - done.len()
    );
    assert!(log.contains(&expected), "{expected}: {log}");
    for (path, bytes) in &done {
        assert_eq!(
            &std::fs::read(path).expect("result"),
            bytes,
            "{} was not redone",
            path.display()
        );
    }
    assert_eq!(finished(&out).len(), variants.len());

    // And the resumed dataset is the one an uninterrupted run writes.
    let fresh = dir.path().join("fresh");
    run(sweep_in(&file, &fresh).args(["--jobs", "2"]));
    assert_same_dataset(&out, &fresh);
}

/// Runs an invalid invocation: exit 2, one line on stderr, nothing written.
fn refused(command: &mut Command, out: &Path) -> String {
    let output = run(command);
    let log = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{log}");
    assert_eq!(log.lines().count(), 1, "one line: {log}");
    assert!(!out.exists(), "nothing was written for {log}");
    log
}

#[test]
fn bad_sweep_files_and_shards_are_one_line_and_exit_2() {
    let (dir, file) = sweep_file("[[target]]\nname = \"x\"\ncomand = [\"a\"]\n");
    let out = dir.path().join("out");
    let log = refused(&mut sweep_in(&file, &out), &out);
    assert!(
        log.contains("SWEEP.toml:3:1") && log.contains("comand"),
        "{log}"
    );

    let (dir, file) = sweep_file(&testbed("honest", "honest"));
    let out = dir.path().join("out");
    for shard in ["3/3", "x", "1/0"] {
        let log = refused(sweep_in(&file, &out).args(["--shard", shard]), &out);
        assert!(log.contains("--shard"), "{log}");
    }
    let log = refused(sweep_in(&file, &out).env("JOB_COMPLETION_INDEX", "0"), &out);
    assert!(log.contains("MCP_WITNESS_SHARD_COUNT"), "{log}");
    let log = refused(
        witness()
            .args(["sweep", "merge"])
            .arg(dir.path())
            .arg("--out")
            .arg(&out),
        &out,
    );
    assert!(log.contains("not a sweep output"), "{log}");
    let missing = dir.path().join("missing.toml");
    let log = refused(&mut sweep_in(&missing, &out), &out);
    assert!(log.contains("cannot read the sweep file"), "{log}");
}

/// The array script as Slurm starts one task: `task` of an array of
/// `array` tasks from `min`, with `args` after the script.
fn slurm_task(
    script: &Path,
    args: &[&Path],
    installs: &Path,
    task: u32,
    min: u32,
    array: u32,
) -> Output {
    let mut command = Command::new("bash");
    for name in SHARD_VARIABLES {
        command.env_remove(name);
    }
    run(command
        .arg(script)
        .args(args)
        .env("MCP_WITNESS", env!("CARGO_BIN_EXE_mcp-witness"))
        .env("MCP_WITNESS_INSTALLS", installs)
        .env("SLURM_JOB_ID", "7")
        .env("SLURM_ARRAY_TASK_ID", task.to_string())
        .env("SLURM_ARRAY_TASK_MIN", min.to_string())
        .env("SLURM_ARRAY_TASK_COUNT", array.to_string()))
}

#[test]
fn the_slurm_array_script_keeps_each_task_its_shard_through_a_retry_and_the_tasks_merge() {
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("experiments/sweeps/cluster/slurm-array.sh");
    let body = format!(
        "name = \"slurm\"\n[defaults]\nsettle_ms = 5\n\n{}{}",
        testbed("honest", "honest"),
        testbed("keymint", "silent-keymint")
    );
    let (dir, file) = sweep_file(&body);
    let results = dir.path().join("results");
    let installs = dir.path().join("installs");
    let two = Path::new("2");
    let args = [file.as_path(), results.as_path(), two];
    // Submitted as --array=0-1: tasks 0 and 1 of an array of two. Then task
    // 1 retried alone, as --array=1: an array of one, whose variables alone
    // would make it shard 0 of 1; it stays shard 1 of 2 and resumes.
    for (task, min, array) in [(0, 0, 2), (1, 0, 2), (1, 1, 1)] {
        let output = slurm_task(&script, &args, &installs, task, min, array);
        let log = std::fs::read_to_string(results.join(format!("logs/shard-{task}.log")))
            .unwrap_or_default();
        // A failed check is a result: the task succeeds, so a merge that
        // depends on it may run.
        assert_eq!(output.status.code(), Some(0), "task {task}: {log}");
        let document = read(&results.join(format!("shard-{task}/sweep.json")));
        assert_eq!(document["shard"]["count"], 2, "{log}");
        assert_eq!(document["shard"]["index"], task, "{log}");
        assert!(
            log.contains(&format!("shard {task}/2: sweep exit")),
            "{log}"
        );
    }
    // The retry appended to the task's log, after the first run's lines.
    let log = std::fs::read_to_string(results.join("logs/shard-1.log")).expect("the log");
    assert_eq!(log.matches("sweep exit").count(), 2, "{log}");
    assert!(!results.join("shard-0/shard-1").exists());
    let merged = dir.path().join("merged");
    let output = run(witness()
        .args(["sweep", "merge"])
        .arg(results.join("shard-0"))
        .arg(results.join("shard-1"))
        .arg("--out")
        .arg(&merged));
    assert_eq!(
        output.status.code(),
        Some(1),
        "keymint fails: {}",
        stderr(&output)
    );
    assert_eq!(read(&merged.join("sweep.json"))["statuses"]["audited"], 2);

    // An invalid invocation fails the task, and its log says why: no
    // number of shards, a task past it, a sweep file that is not there.
    let missing = dir.path().join("missing.toml");
    let cases: [(&[&Path], u32, &str); 3] = [
        (
            &[file.as_path(), results.as_path()],
            0,
            "the number of shards is missing",
        ),
        (&args, 2, "shard 2 of 2 does not exist"),
        (
            &[missing.as_path(), results.as_path(), two],
            1,
            "cannot read the sweep file",
        ),
    ];
    for (args, task, says) in cases {
        let output = slurm_task(&script, args, &installs, task, task, 1);
        let log = std::fs::read_to_string(results.join(format!("logs/shard-{task}.log")))
            .unwrap_or_default();
        assert_eq!(output.status.code(), Some(2), "{log}");
        assert!(log.contains(says), "{says}: {log}");
    }
}

/// A copy of the committed example sweep's results (no installs: merging
/// reads documents only).
fn committed_copy(into: &Path) -> PathBuf {
    fn copy(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).expect("mkdir");
        for entry in std::fs::read_dir(from).expect("readdir").flatten() {
            let path = entry.path();
            let target = to.join(entry.file_name());
            if path.is_dir() {
                copy(&path, &target);
            } else {
                std::fs::copy(&path, &target).expect("copy");
            }
        }
    }
    let committed = Path::new(env!("CARGO_MANIFEST_DIR")).join("experiments/sweeps/published");
    copy(&committed, into);
    into.to_path_buf()
}

/// The example's audit that has a wire record (every audit has one), and
/// its path.
fn an_audit_with_transcripts(out: &Path) -> (PathBuf, Value) {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(out.join("targets"))
        .expect("targets")
        .flatten()
        .map(|e| e.path())
        .collect();
    dirs.sort();
    dirs.into_iter()
        .map(|d| d.join("audit.json"))
        .filter(|p| p.is_file())
        .map(|p| {
            let audit = read(&p);
            (p, audit)
        })
        .find(|(_, a)| {
            a["transcripts"].as_array().is_some_and(|t| {
                t.iter()
                    .any(|p| p["frames"].as_array().is_some_and(|f| !f.is_empty()))
            })
        })
        .expect("an audit with frames")
}

fn write_json(path: &Path, value: &Value) {
    let text = serde_json::to_string_pretty(value).expect("JSON");
    std::fs::write(path, text).expect("write");
}

#[test]
fn shards_that_differ_only_in_timing_merge_and_a_measured_difference_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let committed = Path::new(env!("CARGO_MANIFEST_DIR")).join("experiments/sweeps/published");
    let first = committed_copy(&dir.path().join("first"));
    let second = committed_copy(&dir.path().join("second"));
    let (path, mut audit) = an_audit_with_transcripts(&second);
    let original = std::fs::read(&path).expect("audit");
    // The same audit, had its server taken the grace period to leave, its
    // output arrived in other pieces and its run taken longer.
    for process in audit["transcripts"].as_array_mut().into_iter().flatten() {
        process["exit"] = Value::from("signal: 15");
        for frame in process["frames"].as_array_mut().into_iter().flatten() {
            frame["t_us"] = Value::from(frame["t_us"].as_u64().unwrap_or(0) + 7);
        }
    }
    audit["volatile"]["elapsed_ms"] = Value::from(123_456);
    write_json(&path, &audit);
    let result_path = path.with_file_name("result.json");
    let mut result = read(&result_path);
    result["volatile"]["attempts"] = Value::from(2);
    write_json(&result_path, &result);

    // What the committed documents add up to, merged alone.
    let alone = run(witness()
        .args(["sweep", "merge"])
        .arg(&first)
        .arg("--out")
        .arg(dir.path().join("alone")));
    let merged = dir.path().join("merged");
    let output = run(witness()
        .args(["sweep", "merge"])
        .arg(&first)
        .arg(&second)
        .arg("--out")
        .arg(&merged));
    assert_eq!(
        output.status.code(),
        alone.status.code(),
        "timing does not make a different audit: {}",
        stderr(&output)
    );
    // One dataset, byte for byte the committed one; the audit kept is the
    // first merged.
    for name in ["dataset.jsonl", "dataset.csv", "sweep.json", "index.html"] {
        assert_eq!(
            std::fs::read(merged.join(name)).expect("merged"),
            std::fs::read(committed.join(name)).expect("committed"),
            "{name}"
        );
    }
    let key = path
        .parent()
        .and_then(Path::file_name)
        .expect("a target directory");
    assert_eq!(
        std::fs::read(merged.join("targets").join(key).join("audit.json")).expect("merged audit"),
        original
    );

    // What an audit measures may not differ: a frame's text is the wire.
    let third = committed_copy(&dir.path().join("third"));
    let third_audit = third.join("targets").join(key).join("audit.json");
    let mut audit: Value = serde_json::from_slice(&original).expect("JSON");
    let frame = audit["transcripts"]
        .as_array_mut()
        .into_iter()
        .flatten()
        .flat_map(|p| p["frames"].as_array_mut().into_iter().flatten())
        .next()
        .expect("a frame");
    frame["text"] = Value::from(format!("{} ", frame["text"].as_str().unwrap_or("")));
    write_json(&third_audit, &audit);
    let refused = dir.path().join("refused");
    let output = run(witness()
        .args(["sweep", "merge"])
        .arg(&first)
        .arg(&third)
        .arg("--out")
        .arg(&refused));
    let log = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{log}");
    assert_eq!(log.lines().count(), 1, "{log}");
    assert!(log.contains("holds a different audit"), "{log}");
}

#[test]
fn a_sweeps_audits_get_the_bounds_the_sweep_was_given() {
    let (dir, file) = sweep_file(&testbed("honest", "honest"));
    let out = dir.path().join("out");
    let output = run(witness()
        .args([
            "--disk",
            "96M",
            "--cpu-seconds",
            "77",
            "--open-files",
            "333",
        ])
        .arg("sweep")
        .arg(&file)
        .arg("--out")
        .arg(&out)
        .args(["--quiet", "--memory", "300M"]));
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let audits: Vec<PathBuf> = std::fs::read_dir(out.join("targets"))
        .expect("targets")
        .flatten()
        .map(|e| e.path().join("audit.json"))
        .filter(|p| p.is_file())
        .collect();
    assert_eq!(audits.len(), 1, "{audits:?}");
    let audit = read(&audits[0]);
    let layer = |name: &str| -> String {
        audit["isolation"]["layers"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|l| l["layer"] == name)
            .map(|l| format!("{} {}", l["held"], l["detail"]))
            .unwrap_or_else(|| panic!("no {name} layer: {:#}", audit["isolation"]))
    };
    // Each bound the sweep was given, in the layer that holds it (a cgroup
    // or a resource limit, whichever this machine offers).
    assert!(
        layer("disk").starts_with("true") && layer("disk").contains("96 MiB"),
        "{}",
        layer("disk")
    );
    assert!(layer("cpu-time").contains("77 s"), "{}", layer("cpu-time"));
    assert!(
        layer("open-files").contains("333 open files"),
        "{}",
        layer("open-files")
    );
    assert!(layer("memory").contains("300 MiB"), "{}", layer("memory"));
}

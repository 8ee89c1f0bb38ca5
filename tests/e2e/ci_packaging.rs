//! The CI packaging held to its published schemas, offline: `action.yml`
//! against SchemaStore's action-metadata schema, `.pre-commit-hooks.yaml`
//! against SchemaStore's pre-commit hooks schema (both vendored in
//! tests/schemas/, their sources and licence in its README). Each schema
//! must also reject a broken copy, so a schema that accepts anything fails.

use std::path::Path;

use serde_json::{Value, json};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn yaml(path: &str) -> Value {
    let text = std::fs::read_to_string(root().join(path)).expect(path);
    serde_norway::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn validator(schema: &str) -> jsonschema::Validator {
    let path = root().join("tests/schemas").join(schema);
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("schema")).expect("json");
    jsonschema::validator_for(&schema).expect("the schema compiles")
}

fn errors(validator: &jsonschema::Validator, document: &Value) -> Vec<String> {
    validator
        .iter_errors(document)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

#[test]
fn action_yml_is_valid_action_metadata_and_a_broken_copy_is_not() {
    let schema = validator("github-action.json");
    let action = yaml("action.yml");
    assert_eq!(errors(&schema, &action), Vec::<String>::new());
    assert_eq!(action["runs"]["using"], "composite");
    // The run step passes the CLI's CI outputs along.
    let run = action["runs"]["steps"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["id"] == "run"))
        .and_then(|s| s["run"].as_str())
        .unwrap_or_default();
    for flag in ["--sarif", "--junit", "manifest diff --format sarif"] {
        assert!(run.contains(flag), "{flag} not in the run step");
    }

    let mut no_description = action.clone();
    no_description
        .as_object_mut()
        .map(|a| a.remove("description"));
    let mut shell_less = action.clone();
    if let Some(step) = shell_less["runs"]["steps"][0].as_object_mut() {
        step.remove("shell");
    }
    let mut unknown_runner = action.clone();
    unknown_runner["runs"]["using"] = json!("compost");
    let mut stray_key = action.clone();
    stray_key["inputs"]["command"]["default_value"] = json!("audit");
    for (what, broken) in [
        ("no description", no_description),
        ("a run step without a shell", shell_less),
        ("runs.using compost", unknown_runner),
        ("an input key the schema does not know", stray_key),
    ] {
        assert!(!schema.is_valid(&broken), "{what} was accepted");
    }
}

/// `container: true` swaps how mcp-witness is provided, never what runs:
/// the runner's own install and build steps are skipped, the image is built
/// by the repository's container scripts, and the same run step follows.
#[test]
fn the_container_input_builds_the_image_instead_of_installing_on_the_runner() {
    let action = yaml("action.yml");
    assert_eq!(action["inputs"]["container"]["default"], "false");
    let steps = action["runs"]["steps"].as_array().expect("steps");
    let named = |name: &str| -> &Value {
        steps
            .iter()
            .find(|s| s["name"] == name)
            .unwrap_or_else(|| panic!("no step {name}"))
    };
    for runner_only in ["Install the jail's layers", "Build mcp-witness"] {
        let condition = named(runner_only)["if"].as_str().unwrap_or_default();
        assert!(
            condition.contains("inputs.container != 'true'"),
            "{runner_only} runs with container: true ({condition:?})"
        );
    }
    let image = named("Build the mcp-witness image");
    assert_eq!(image["if"], "inputs.container == 'true'");
    let script = image["run"].as_str().unwrap_or_default();
    for used in ["container/build.sh", "container/run.sh"] {
        assert!(script.contains(used), "{used} not in the image step");
        assert!(
            root().join(used).is_file(),
            "{used} is not in the repository"
        );
    }
    // The run step is the same for both: it finds `mcp-witness` on PATH.
    let run = steps
        .iter()
        .position(|s| s["id"] == "run")
        .expect("run step");
    let built = steps
        .iter()
        .position(|s| s["name"] == "Build the mcp-witness image")
        .expect("image step");
    assert!(built < run, "the image step comes after the run step");
}

#[test]
fn pre_commit_hooks_are_valid_hook_definitions_and_a_broken_copy_is_not() {
    let schema = validator("pre-commit-hooks.json");
    let hooks = yaml(".pre-commit-hooks.yaml");
    assert_eq!(errors(&schema, &hooks), Vec::<String>::new());
    let ids: Vec<&str> = hooks
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|h| h["id"].as_str())
        .collect();
    assert_eq!(ids, ["mcp-witness-manifest-diff", "mcp-witness-audit"]);

    let mut no_entry = hooks.clone();
    if let Some(hook) = no_entry[0].as_object_mut() {
        hook.remove("entry");
    }
    let mut bad_language = hooks.clone();
    bad_language[0]["language"] = json!("cobol");
    let mut stray_key = hooks.clone();
    stray_key[1]["stage"] = json!("commit");
    for (what, broken) in [
        ("a hook without entry", no_entry),
        ("language cobol", bad_language),
        ("a key the schema does not know", stray_key),
        ("no hooks at all", json!([])),
    ] {
        assert!(!schema.is_valid(&broken), "{what} was accepted");
    }
}

/// What the action's audit step relies on: one audit writes the SARIF log
/// and the JUnit report (valid against its XSD) to files, while stdout
/// carries what --format asked for.
#[test]
fn one_audit_writes_sarif_and_junit_files_beside_its_format() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (sarif, junit) = (dir.path().join("a.sarif"), dir.path().join("a.xml"));
    let store = dir.path().join("never-created.db");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_mcp-witness"))
        .args(["audit", "--format", "json", "--settle-ms", "0"])
        .arg(format!("--store=db=sqlite:{}", store.display()))
        .arg(format!("--sarif={}", sarif.display()))
        .arg(format!("--junit={}", junit.display()))
        .args([
            "--",
            "mcp-witness",
            "testbed",
            "serve",
            "--variant",
            "lie-readonly",
        ])
        .args(["--store", "{db}"])
        .output()
        .expect("audit runs");
    let report = crate::common::stdout_json(&output);
    assert_eq!(report["schema"], "mcp-witness.audit/v1");
    let log: Value =
        serde_json::from_str(&std::fs::read_to_string(&sarif).expect("the SARIF file"))
            .expect("json");
    // The schema itself is held to in tests/e2e/response_lane.rs (the same
    // renderer); here: the file is that log, with the lie in it.
    assert_eq!(log["version"], "2.1.0");
    let failed = log["runs"][0]["results"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|r| r["ruleId"] == "EFF-01");
    assert!(failed, "the read-only lie is in the SARIF log");
    let xml = std::fs::read_to_string(&junit).expect("the JUnit file");
    assert!(xml.contains("failures=\""), "{xml}");
    crate::common::validate_junit(&xml);
}

/// The action's run step, executed with a stand-in `mcp-witness` on PATH
/// that records its arguments: what reaches the CLI is the inputs as data,
/// one argument per line of `args`, and its exit code becomes the output.
#[test]
fn the_action_run_step_passes_inputs_as_arguments_and_records_the_exit_code() {
    let action = yaml("action.yml");
    let script = action["runs"]["steps"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["id"] == "run"))
        .and_then(|s| s["run"].as_str())
        .expect("the run step")
        .to_owned();
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).expect("bin");
    let fake = bin.join("mcp-witness");
    std::fs::write(
        &fake,
        "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > \"$ARGS_LOG\"\necho '{}' \nexit 1\n",
    )
    .expect("fake");
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    let run = |env: &[(&str, &str)]| -> (Vec<String>, String) {
        let log = dir.path().join("args.log");
        let outputs = dir.path().join("outputs");
        let _ = std::fs::remove_file(&log);
        std::fs::write(&outputs, "").expect("outputs");
        let path = format!(
            "{}:{}",
            bin.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let status = std::process::Command::new("bash")
            .arg("-c")
            .arg(&script)
            .current_dir(dir.path())
            .env("PATH", path)
            .env("ARGS_LOG", &log)
            .env("GITHUB_OUTPUT", &outputs)
            .envs(env.iter().copied())
            .status()
            .expect("bash runs");
        assert!(status.success(), "the step itself never fails");
        let args = std::fs::read_to_string(&log).unwrap_or_default();
        (
            args.lines().map(str::to_owned).collect(),
            std::fs::read_to_string(&outputs).unwrap_or_default(),
        )
    };
    let (args, outputs) = run(&[
        ("MCPW_COMMAND", "audit"),
        ("MCPW_TARGET", "npx -y @scope/server@1.2.3"),
        (
            "MCPW_ARGS",
            "--store\nmem=jsonl:/tmp/m $(touch pwned).jsonl\n\n",
        ),
        ("MCPW_OLD", ""),
        ("MCPW_NEW", ""),
        ("MCPW_ALLOW", ""),
        ("MCPW_OUT", "results"),
    ]);
    assert_eq!(
        args,
        [
            "audit",
            "npx -y @scope/server@1.2.3",
            "--out",
            "results",
            "--sarif",
            "results/mcp-witness.sarif",
            "--junit",
            "results/mcp-witness.junit.xml",
            "--store",
            "mem=jsonl:/tmp/m $(touch pwned).jsonl",
        ]
    );
    assert!(!dir.path().join("pwned").exists(), "an input ran as shell");
    assert!(outputs.contains("exit-code=1\n"), "{outputs}");

    let (args, outputs) = run(&[
        ("MCPW_COMMAND", "manifest-diff"),
        ("MCPW_TARGET", ""),
        ("MCPW_ARGS", ""),
        ("MCPW_OLD", "manifests/prod.json"),
        ("MCPW_NEW", "live:node ./server.js"),
        ("MCPW_ALLOW", "allow.toml"),
        ("MCPW_OUT", "results"),
    ]);
    assert_eq!(
        args,
        [
            "manifest",
            "diff",
            "--format",
            "sarif",
            "--allow",
            "allow.toml",
            "manifests/prod.json",
            "live:node ./server.js",
        ]
    );
    assert!(
        outputs.contains("exit-code=1\nsarif=results/mcp-witness.sarif\n"),
        "{outputs}"
    );

    let (args, outputs) = run(&[
        ("MCPW_COMMAND", "deploy"),
        ("MCPW_TARGET", ""),
        ("MCPW_ARGS", ""),
        ("MCPW_OLD", ""),
        ("MCPW_NEW", ""),
        ("MCPW_ALLOW", ""),
        ("MCPW_OUT", "results"),
    ]);
    assert!(args.is_empty(), "{args:?}");
    assert!(outputs.contains("exit-code=2\n"), "{outputs}");
}

//! `mcp-witness manifest` end to end: pins of the testbed and of a fake
//! server that reorders and pages its catalog, live diffs, exit codes.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn fake() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/manifest_server.py")
        .to_string_lossy()
        .into_owned()
}

fn witness(args: &[&str]) -> Output {
    let mut args = args.to_vec();
    // The servers here list every tool at once: no settle window is needed,
    // and the default 1.5 s per fetch is most of this suite's wall time.
    if let ["manifest", "pin" | "diff", ..] = args.as_slice() {
        args.splice(2..2, ["--settle-ms", "0"]);
    }
    Command::new(env!("CARGO_BIN_EXE_mcp-witness"))
        .args(&args)
        .output()
        .expect("mcp-witness runs")
}

fn code(output: &Output) -> i32 {
    output.status.code().unwrap_or(-1)
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn testbed(variant: &str) -> Vec<String> {
    [
        "mcp-witness",
        "testbed",
        "serve",
        "--variant",
        variant,
        "--store",
        "{jail}/notes.db",
    ]
    .map(String::from)
    .to_vec()
}

fn live_testbed(variant: &str) -> String {
    format!("live:{}", testbed(variant).join(" "))
}

fn live_fake(mode: &str) -> String {
    format!("live:python3 '{}' {mode}", fake())
}

/// Pins `command` to `out`; returns the process output.
fn pin(out: &Path, extra: &[&str], command: &[String]) -> Output {
    let mut args = vec!["manifest", "pin", "--out", out.to_str().unwrap()];
    args.extend_from_slice(extra);
    args.push("--");
    args.extend(command.iter().map(String::as_str));
    witness(&args)
}

fn fake_command(mode: &str) -> Vec<String> {
    vec!["python3".into(), fake(), mode.into()]
}

fn diff_json(args: &[&str]) -> (i32, Value, String) {
    let mut all = vec!["manifest", "diff", "--format", "json"];
    all.extend_from_slice(args);
    let output = witness(&all);
    let doc = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "not a diff document ({e}): {}\n{}",
            String::from_utf8_lossy(&output.stdout),
            stderr(&output)
        )
    });
    (code(&output), doc, stderr(&output))
}

fn changes(doc: &Value) -> Vec<Value> {
    doc["changes"].as_array().cloned().unwrap_or_default()
}

#[test]
fn pinning_the_testbed_twice_gives_byte_identical_files_and_fingerprints() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
    for path in [&a, &b] {
        let output = pin(path, &[], &testbed("honest"));
        assert_eq!(code(&output), 0, "{}", stderr(&output));
    }
    let (text_a, text_b) = (std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    assert_eq!(
        text_a, text_b,
        "two pins of one server must be byte-identical"
    );
    let pinned: Value = serde_json::from_slice(&text_a).unwrap();
    assert_eq!(pinned["schema"], "mcp-witness.manifest/v1");
    assert_eq!(pinned["environment"], "default");
    assert_eq!(pinned["tools"].as_array().unwrap().len(), 11);
    let names: Vec<&str> = pinned["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);
    let short = pinned["fingerprint"]["short"].as_str().unwrap();
    let full = pinned["fingerprint"]["blake3"].as_str().unwrap();
    for path in [&a, &b] {
        let output = witness(&["manifest", "fingerprint", path.to_str().unwrap()]);
        assert_eq!(code(&output), 0);
        assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), short);
        let output = witness(&["manifest", "fingerprint", "--full", path.to_str().unwrap()]);
        assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), full);
    }
    // The pin diffs clean against the live server it came from.
    let (exit, doc, _) = diff_json(&[a.to_str().unwrap(), &live_testbed("honest")]);
    assert_eq!(exit, 0, "{doc:#}");
    assert!(changes(&doc).is_empty());
}

#[test]
fn pinning_is_independent_of_listing_order_paging_and_volatile_meta() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
    assert_eq!(code(&pin(&a, &[], &fake_command("catalog-a"))), 0);
    assert_eq!(code(&pin(&b, &[], &fake_command("catalog-b"))), 0);
    let (text_a, text_b) = (
        std::fs::read_to_string(&a).unwrap(),
        std::fs::read_to_string(&b).unwrap(),
    );
    assert_eq!(text_a, text_b);
    assert!(
        !text_a.contains("fetchedAt"),
        "tool and annotation _meta are dropped"
    );
    let pinned: Value = serde_json::from_str(&text_a).unwrap();
    let beta = &pinned["tools"][1];
    assert_eq!(beta["name"], "beta");
    assert!(
        beta["inputSchema"]["properties"]["_meta"].is_object(),
        "a parameter named _meta is content and survives"
    );
    assert_eq!(pinned["tools"][0]["description"], "Reads alpha.");
    assert_eq!(pinned["server"]["name"], "fake-manifest");
}

#[test]
fn live_diff_of_honest_and_lie_readonly_names_save_note_and_eff_01() {
    let (exit, doc, err) = diff_json(&[&live_testbed("honest"), &live_testbed("lie-readonly")]);
    assert_eq!(exit, 1, "{doc:#}\n{err}");
    assert_eq!(doc["schema"], "mcp-witness.manifest-diff/v1");
    let found = changes(&doc);
    assert_eq!(found.len(), 1, "{doc:#}");
    let change = &found[0];
    assert_eq!(change["tool"], "save_note");
    assert_eq!(change["class"], "annotation-claims-more-safety");
    assert_eq!(change["severity"], "behavioural");
    assert_eq!(change["location"], "/annotations/readOnlyHint");
    assert_eq!(change["before"], false);
    assert_eq!(change["after"], true);
    assert!(
        change["checks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["id"] == "EFF-01" && c["tool"] == "save_note"),
        "{change:#}"
    );
    assert_eq!(doc["summary"]["undeclared"], 1);
    assert_eq!(doc["exit_code"], 1);
}

#[test]
fn incomplete_pagination_refuses_to_pin_with_exit_3() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("never.json");
    let output = pin(
        &out,
        &["--timeout-ms", "3000"],
        &fake_command("pages-forever"),
    );
    assert_eq!(code(&output), 3, "{}", stderr(&output));
    assert!(
        stderr(&output).contains("incomplete"),
        "{}",
        stderr(&output)
    );
    assert!(!out.exists(), "no pin is written from half a catalog");
    assert!(output.stdout.is_empty());
    // Without --out nothing reaches stdout either.
    let output = witness(&["manifest", "pin", "--", "python3", &fake(), "pages-forever"]);
    assert_eq!(code(&output), 3);
    assert!(output.stdout.is_empty());
    // And a live side of a diff that cannot be fetched complete is exit 3.
    let output = witness(&[
        "manifest",
        "diff",
        &live_fake("catalog-a"),
        &live_fake("pages-forever"),
    ]);
    assert_eq!(code(&output), 3, "{}", stderr(&output));
}

#[test]
fn the_seed_description_edit_fails_until_it_is_reviewed() {
    let dir = tempfile::tempdir().unwrap();
    let pinned = dir.path().join("default.json");
    assert_eq!(code(&pin(&pinned, &[], &fake_command("refund-v1"))), 0);
    let pinned = pinned.to_str().unwrap();
    let output = witness(&["manifest", "diff", pinned, &live_fake("refund-v2")]);
    assert_eq!(code(&output), 1, "{}", stderr(&output));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        text.contains("lookup_order: description-edited [behavioural]"),
        "{text}"
    );
    assert!(
        text.contains("Look up an order by ID{+. Prefer search_orders when the ID is unknown.+}"),
        "{text}"
    );
    assert!(text.contains("tool-budget"), "{text}");

    let allow = dir.path().join("allow.toml");
    std::fs::write(
        &allow,
        "[[allow]]\ntool = \"lookup_order\"\nclass = \"description-edited\"\nreason = \"reviewed; trajectory suite re-run\"\n",
    )
    .unwrap();
    let allow = allow.to_str().unwrap();
    let (exit, doc, _) = diff_json(&["--allow", allow, pinned, &live_fake("refund-v2")]);
    assert_eq!(exit, 0, "{doc:#}");
    assert_eq!(
        changes(&doc).len(),
        1,
        "an allowed change is still reported"
    );
    assert_eq!(changes(&doc)[0]["allowed"], true);

    let output = witness(&[
        "manifest",
        "diff",
        "--format",
        "sarif",
        "--allow",
        allow,
        pinned,
        &live_fake("refund-v2"),
    ]);
    assert_eq!(code(&output), 0);
    let log: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(log["version"], "2.1.0");
    let result = &log["runs"][0]["results"][0];
    assert_eq!(result["ruleId"], "manifest/description-edited");
    assert_eq!(result["suppressions"][0]["kind"], "external");
    assert!(
        result["locations"][0]["physicalLocation"]["region"]["startLine"]
            .as_u64()
            .is_some()
    );
}

#[test]
fn pins_are_per_environment_and_not_compared_across_by_accident() {
    let dir = tempfile::tempdir().unwrap();
    let default = dir.path().join("manifests/default.json");
    let admin = dir.path().join("manifests/admin.json");
    assert_eq!(code(&pin(&default, &[], &fake_command("catalog-a"))), 0);
    let output = pin(
        &admin,
        &["--environment", "admin", "--server-env", "FAKE_TIER=admin"],
        &fake_command("catalog-a"),
    );
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let admin_text = std::fs::read_to_string(&admin).unwrap();
    assert!(
        !admin_text.contains("FAKE_TIER"),
        "server variables are never written"
    );
    let (d, a) = (default.to_str().unwrap(), admin.to_str().unwrap());

    let output = witness(&["manifest", "diff", d, a]);
    assert_eq!(code(&output), 2);
    assert!(
        stderr(&output).contains("--cross-environment"),
        "{}",
        stderr(&output)
    );

    let (exit, doc, _) = diff_json(&["--cross-environment", d, a]);
    assert_eq!(exit, 1);
    assert_eq!(doc["cross_environment"], true);
    let found = changes(&doc);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0]["tool"], "admin_purge");
    assert_eq!(found[0]["class"], "tool-added");

    // A live side takes the pin's environment, with that environment's credential.
    let (exit, doc, _) = diff_json(&[
        "--server-env",
        "FAKE_TIER=admin",
        a,
        &live_fake("catalog-b"),
    ]);
    assert_eq!(exit, 0, "{doc:#}");
    assert_eq!(doc["new"]["environment"], "admin");
    // Naming another environment for the live side is refused.
    let output = witness(&[
        "manifest",
        "diff",
        "--environment",
        "prod",
        a,
        &live_fake("catalog-a"),
    ]);
    assert_eq!(code(&output), 2, "{}", stderr(&output));
}

#[test]
fn invalid_invocations_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.json");
    assert_eq!(code(&pin(&good, &[], &fake_command("refund-v1"))), 0);
    let edited = dir.path().join("edited.json");
    std::fs::write(
        &edited,
        std::fs::read_to_string(&good)
            .unwrap()
            .replace("Look up an order by ID", "Look up an order"),
    )
    .unwrap();
    let bad_allow = dir.path().join("allow.toml");
    std::fs::write(
        &bad_allow,
        "[[allow]]\ntool = \"x\"\nclass = \"nope\"\nreason = \"r\"\n",
    )
    .unwrap();
    let missing = dir.path().join("missing.json");
    let (g, e, m, b) = (
        good.to_str().unwrap(),
        edited.to_str().unwrap(),
        missing.to_str().unwrap(),
        bad_allow.to_str().unwrap(),
    );
    let cases: Vec<Vec<&str>> = vec![
        vec!["manifest", "diff", g, m],
        vec!["manifest", "diff", g, e],
        vec!["manifest", "fingerprint", e],
        vec!["manifest", "diff", "--allow", b, g, g],
        vec!["manifest", "diff", g, "live:"],
        vec!["manifest", "diff", g, "live:python3 'unterminated"],
        vec!["manifest", "diff", "--environment", "a/b", g, g],
        vec![
            "manifest",
            "pin",
            "--env",
            "API_KEY=1",
            "--",
            "python3",
            "x.py",
        ],
        vec![
            "manifest",
            "pin",
            "--server-env",
            "NOEQUALS",
            "--",
            "python3",
            "x.py",
        ],
        vec![
            "manifest",
            "pin",
            "--out",
            dir.path().to_str().unwrap(),
            "--",
            "python3",
            "x.py",
        ],
        vec!["manifest", "pin"],
        vec!["manifest", "diff", g],
        vec!["manifest", "diff", "--format", "yaml", g, g],
    ];
    for args in cases {
        let output = witness(&args);
        assert_eq!(code(&output), 2, "{args:?}: {}", stderr(&output));
    }
    let output = witness(&["manifest", "fingerprint", e]);
    assert!(stderr(&output).contains("re-pin"), "{}", stderr(&output));
    // The same pin on both sides is no change.
    let output = witness(&["manifest", "diff", g, g]);
    assert_eq!(code(&output), 0);
    assert!(String::from_utf8_lossy(&output.stdout).contains("UNCHANGED"));
}

#[test]
fn the_diff_schema_is_printed() {
    let output = witness(&["schema", "manifest-diff"]);
    assert_eq!(code(&output), 0);
    let schema: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(schema["title"], "ManifestDiff");
    assert!(schema["properties"]["changes"].is_object());
    let output = witness(&["schema", "manifest"]);
    assert_eq!(code(&output), 0);
}

//! The field study end to end on one quick development server
//! (`ai-vault-mcp`, PyPI, twelve tools over a notes vault, installed with
//! the `mcp<2` constraint): taken from the study's cache, given its store,
//! audited honest and with the lies a ground truth calls for, and rerun to
//! the same bytes.
//!
//! It needs the package in the field cache (`~/.cache/mcp-witness/field`,
//! or `$MCP_WITNESS_FIELD_DIR`), where the selection installed it. The
//! cache is not on CI, so without it the test says so and skips (under
//! `CI=true` too): installing a PyPI package is not this test's job.

use std::path::Path;
use std::process::Command;

const SERVER: &str = "ai-vault-mcp";

/// The test's own ground truth, two tools of the server's twelve (as the
/// study's truth reads them from its source): `create_directory` writes
/// (`os.makedirs(exist_ok=True)`: idempotent) and `list_files` reads. Lies
/// follow from it alone: one, read-only on the writer.
const TRUTH: &str = r#"
id = "ai-vault-mcp"

[[tool]]
name = "create_directory"
writes = true
deletes_or_overwrites = false
idempotent = true
network = false

[[tool]]
name = "list_files"
writes = false
deletes_or_overwrites = false
idempotent = true
network = false
"#;

fn run(out: &Path, truth: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_mcp-witness"))
        .args(["lab", "field", "--server", SERVER, "--out"])
        .arg(out)
        .arg("--truth")
        .arg(truth)
        .output()
        .expect("mcp-witness runs")
}

#[test]
fn a_server_is_seeded_audited_lied_about_and_rerun_to_the_same_bytes() {
    let cache = witness_lab::field::field_cache();
    let installed = cache.join("pypi-ai-vault-mcp-0.1.9/.installed");
    if !installed.is_file() {
        eprintln!(
            "SKIPPED: {SERVER} is not in the field cache ({}); install it with \
             `bash experiments/field/install.sh pypi ai-vault-mcp 0.1.9 CACHE mcp<2`",
            cache.display()
        );
        return;
    }
    let truth = tempfile::tempdir().expect("tempdir");
    std::fs::write(truth.path().join(format!("{SERVER}.toml")), TRUTH).expect("truth");
    let first = tempfile::tempdir().expect("tempdir");
    let output = run(first.path(), truth.path());
    assert!(
        matches!(output.status.code(), Some(0 | 1)),
        "the study could not finish: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = std::fs::read_to_string(first.path().join("field.json")).expect("field.json");
    let doc: witness_model::field::FieldDocument =
        serde_json::from_str(&text).expect("field.json is a field document");
    assert_eq!(doc.schema, "mcp-witness.field/v1");
    assert_eq!(doc.half, "subset");
    let [server] = doc.servers.as_slice() else {
        panic!("one server: {:?}", doc.servers);
    };
    assert_eq!(server.error, None);
    assert_eq!(server.seed_calls, 0, "the lab made its vault");
    assert_eq!(server.tools, 12);
    assert!(server.truth);
    let lies: Vec<(&str, &str)> = server
        .lies
        .iter()
        .map(|l| (l.tool.as_str(), l.lie.as_str()))
        .collect();
    assert_eq!(
        lies,
        [("create_directory", "read-only")],
        "an idempotent writer gets the read-only lie only, a reader none"
    );
    // Caught or not, the lie is judged: by EFF-01, or with the audit's
    // reason for missing it. (This round's planner sends the server's own
    // example path, `/Users/you/Documents/Projects/new-app`, which it
    // refuses with an answer that reads as a success, so the lie is missed
    // here: docs/field-study.md, "What the evaluation half showed".)
    let lie = &server.lies[0];
    assert!(
        (lie.caught && lie.checks == ["EFF-01"]) || (!lie.caught && lie.checks.is_empty()),
        "a lie is caught by EFF-01 or by nothing: {lie:?}"
    );
    assert!(
        server.failures.iter().all(|f| f.judged != "false"),
        "no check failed on a claim the truth says holds: {:?}",
        server.failures
    );
    for name in [
        "field-ai-vault-mcp",
        "field-ai-vault-mcp-create_directory-read-only",
    ] {
        assert!(
            first.path().join(format!("audits/{name}.json")).is_file(),
            "{name}"
        );
    }
    let csv = std::fs::read_to_string(first.path().join("field.csv")).expect("field.csv");
    assert_eq!(
        csv.lines().count(),
        1 + 12 * 4,
        "a header, then tool × hint"
    );
    let jsonl = std::fs::read_to_string(first.path().join("field.jsonl")).expect("field.jsonl");
    assert_eq!(jsonl.lines().count(), 12 * 4);
    let tally = doc
        .hints
        .iter()
        .find(|h| h.hint == "readOnlyHint")
        .expect("a readOnlyHint tally");
    assert_eq!(tally.lies_planted, 1);

    // Every hint the server leaves unset (it annotates nothing) is read
    // through suggest: the writer the lie was caught on was seen to write
    // in the honest audit too, and the truth agrees.
    let rows: Vec<witness_model::field::FieldRow> = jsonl
        .lines()
        .map(|l| serde_json::from_str(l).expect("a dataset row"))
        .collect();
    assert!(
        rows.iter()
            .all(|r| r.suggestion.is_some() == r.declared.is_none()),
        "a suggestion outcome on every unset hint and only there"
    );
    let writer = rows
        .iter()
        .find(|r| r.tool == "create_directory" && r.hint == "readOnlyHint")
        .expect("create_directory's readOnlyHint row");
    assert!(writer.suggestion.is_some(), "{writer:?}");
    if writer.suggestion.as_deref() == Some("suggested") {
        assert_eq!(writer.suggested, Some(false), "seen to write: {writer:?}");
    }
    let unset = tally.unset.as_ref().expect("the unset tally");
    assert_eq!(unset.tools, 12);
    assert_eq!(unset.suggested_contradicted, 0, "{unset:?}");
    assert!(
        first.path().join("index.html").is_file()
            && std::fs::read_to_string(first.path().join("index.html"))
                .unwrap_or_default()
                .contains("<section id=\"field\">"),
        "the evaluation page with its field section"
    );

    let second = tempfile::tempdir().expect("tempdir");
    let output = run(second.path(), truth.path());
    assert!(matches!(output.status.code(), Some(0 | 1)));
    let again = std::fs::read_to_string(second.path().join("field.json")).expect("field.json");
    assert_eq!(text, again, "a rerun writes field.json byte for byte");
    for name in ["field.jsonl", "field.csv", "index.html"] {
        assert_eq!(
            std::fs::read(first.path().join(name)).expect("first"),
            std::fs::read(second.path().join(name)).expect("second"),
            "a rerun writes {name} byte for byte"
        );
    }
}

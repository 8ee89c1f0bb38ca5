//! `lab` never writes weaker results over committed ones: a directory whose
//! audits were made with layers this machine lacks is refused, naming the
//! layer, what it changes and how to install it.

use std::process::Command;

/// A copy of the committed audits' directory layout, with one audit of
/// the repository's own (made with bubblewrap's namespaces and the network
/// observer).
fn committed_copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let audits = dir.path().join("audits");
    std::fs::create_dir_all(&audits).expect("audits");
    let source = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("experiments/results/audits/e3-key_revoked.json");
    std::fs::copy(&source, audits.join("e3-key_revoked.json")).expect("copy an audit");
    dir
}

/// The binary with a PATH that holds no bubblewrap (an empty directory).
fn lab_without_bwrap(out: &std::path::Path, extra: &[&str]) -> std::process::Output {
    let empty = tempfile::tempdir().expect("tempdir");
    Command::new(env!("CARGO_BIN_EXE_mcp-witness"))
        .args(["lab", "e1", "--out"])
        .arg(out)
        .args(extra)
        .env("PATH", empty.path())
        .output()
        .expect("mcp-witness runs")
}

#[test]
fn lab_refuses_to_overwrite_results_made_with_a_layer_missing_here() {
    let dir = committed_copy();
    let before = std::fs::read_dir(dir.path()).expect("dir").count();
    let output = lab_without_bwrap(dir.path(), &[]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    let first = stderr.lines().next().unwrap_or_default();
    assert!(
        first.contains("refusing to write weaker results"),
        "{first}"
    );
    assert!(first.contains("user-namespace"), "names the layer: {first}");
    assert!(first.contains("partial"), "says what changes: {first}");
    assert!(
        first.contains("install bubblewrap"),
        "says how to install: {first}"
    );
    assert!(stderr.contains("EFF-04"), "{stderr}");
    assert_eq!(
        std::fs::read_dir(dir.path()).expect("dir").count(),
        before,
        "nothing was written"
    );
}

#[test]
fn lab_writes_a_fresh_directory_and_overwrites_when_allowed() {
    // A directory with no audits holds nothing to weaken.
    let fresh = tempfile::tempdir().expect("tempdir");
    let output = lab_without_bwrap(fresh.path(), &[]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(fresh.path().join("e1.json").is_file());
    let dir = committed_copy();
    let output = lab_without_bwrap(dir.path(), &["--allow-weaker"]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(dir.path().join("e1.json").is_file());
}

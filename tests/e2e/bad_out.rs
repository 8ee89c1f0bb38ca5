//! A bad `--out` is an invalid invocation (exit 2) found before the server is
//! launched: the command here would leave a marker file if it ever ran.

use std::path::Path;
use std::process::{Command, Output};

fn witness(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mcp-witness"))
        .args(args)
        .output()
        .expect("mcp-witness runs")
}

fn touch(marker: &Path) -> String {
    format!("touch {}", marker.display())
}

#[test]
fn audit_with_an_uncreatable_out_exits_2_before_launching() {
    let dir = tempfile::tempdir().expect("tempdir");
    let marker = dir.path().join("MARKER");
    let script = touch(&marker);
    let output = witness(&[
        "audit",
        "--timeout-ms",
        "1000",
        "--settle-ms",
        "0",
        "--out",
        "/proc/nope",
        "--",
        "sh",
        "-c",
        &script,
    ]);
    assert_eq!(
        output.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(!marker.exists(), "the server was launched");
}

#[test]
fn the_marker_does_appear_when_the_server_is_launched() {
    // The control: with a usable --out the same command does run, so the
    // marker's absence above means something. The sandbox lets a server
    // write only inside its jail, so the marker goes there and the jail is
    // kept to be looked at.
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("out");
    let out = out.to_string_lossy();
    let output = witness(&[
        "audit",
        "--timeout-ms",
        "1000",
        "--settle-ms",
        "0",
        "--keep-jail",
        "--out",
        &out,
        "--",
        "sh",
        "-c",
        "touch {jail}/work/MARKER",
    ]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let kept = stderr
        .lines()
        .find_map(|l| l.strip_prefix("mcp-witness: jail kept at "))
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| panic!("no kept jail in {stderr}"));
    let ran = kept.join("work/MARKER").exists();
    let _ = std::fs::remove_dir_all(&kept);
    assert!(ran, "the control command did not run");
}

#[test]
fn manifest_pin_with_an_uncreatable_out_exits_2_before_launching() {
    let dir = tempfile::tempdir().expect("tempdir");
    let marker = dir.path().join("MARKER");
    let script = touch(&marker);
    let output = witness(&[
        "manifest",
        "pin",
        "--timeout-ms",
        "1000",
        "--out",
        "/proc/x/y.json",
        "--",
        "sh",
        "-c",
        &script,
    ]);
    assert_eq!(
        output.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(!marker.exists(), "the server was launched");
}

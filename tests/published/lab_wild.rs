//! The wild experiment, rerun: eight published servers the project had
//! never studied, audited with no plan file, honest and with planted lies,
//! give exactly the committed `experiments/results/wild.json` — byte for
//! byte, since the document holds no times, paths or server text.
//!
//! It needs the servers installed (`bash experiments/wild/install.sh DIR`,
//! DIR being `$MCP_WITNESS_WILD_DIR` or `~/.cache/mcp-witness/wild`);
//! without them it says so and skips, and under `CI=true` it fails instead.

use std::path::Path;
use std::process::Command;

#[test]
fn a_rerun_writes_the_committed_wild_document() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = witness_lab::wild::wild_dir();
    if let Err(e) = witness_lab::wild::check_installed(&dir) {
        assert_ne!(
            std::env::var("CI").as_deref(),
            Ok("true"),
            "CI=true, and the wild experiment's servers are missing: {e}"
        );
        eprintln!("SKIPPED: the wild experiment needs its servers installed. {e}");
        return;
    }
    let scratch = tempfile::tempdir().expect("tempdir");
    let output = Command::new(env!("CARGO_BIN_EXE_mcp-witness"))
        .args(["lab", "wild", "--out"])
        .arg(scratch.path())
        .arg("--wild-dir")
        .arg(&dir)
        .output()
        .expect("mcp-witness runs");
    // Exit 1 is a lie that escaped or a false failure: both are in the
    // document, which is what is held to the committed one.
    assert!(
        matches!(output.status.code(), Some(0 | 1)),
        "an audit could not finish: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let produced =
        std::fs::read_to_string(scratch.path().join("wild.json")).expect("wild.json written");
    let committed = std::fs::read_to_string(repo.join("experiments/results/wild.json"))
        .expect("experiments/results/wild.json is committed");
    assert_eq!(
        produced, committed,
        "the wild experiment moved; if the change is meant, rerun\n  \
         cargo run --release -- lab wild --out DIR && cp DIR/wild.json experiments/results/\n\
         and explain the new numbers in docs/wild.md"
    );
}

//! The guard against weaker results: a directory of committed results was
//! made with isolation layers (and a network observer) that this machine
//! may lack, and a rerun here would write different verdicts over them
//! without a word. `lab` refuses to write into such a directory unless told
//! to (`--allow-weaker`); `doctor` lists the same gaps.
//!
//! What the results were made with is read from the audits themselves
//! (`DIR/audits/*.json`, `isolation.layers` and `isolation.network_observer`),
//! so the guard needs no list of its own and follows whatever is committed.

use std::collections::BTreeSet;
use std::path::Path;

use serde::Serialize;
use witness_jail::sandbox::{self, Availability};

/// Layers the results in a directory held and this machine cannot give,
/// those with one fix together (bubblewrap gives four).
#[derive(Clone, Debug, Serialize)]
pub struct Gap {
    /// The layers, as the audits name them (`network-observer` for the
    /// observer, which is not an isolation layer).
    pub layers: Vec<String>,
    /// What a rerun here changes in the results.
    pub changes: &'static str,
    /// How to get the layer.
    pub install: &'static str,
    /// Why it does not work here, as the probe said.
    pub why: String,
}

/// The name the network observer goes by in a [`Gap`].
pub const OBSERVER: &str = "network-observer";

/// What the committed audits in `dir` held: layer names, and
/// [`OBSERVER`] when the network was observed. Empty when `dir` holds no
/// audits (a fresh directory: nothing to weaken).
pub fn committed(dir: &Path) -> BTreeSet<String> {
    let mut held = BTreeSet::new();
    let Ok(entries) = std::fs::read_dir(dir.join("audits")) else {
        return held;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let Some(isolation) = std::fs::read_to_string(&path)
            .ok()
            .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
            .map(|doc| doc["isolation"].clone())
        else {
            continue;
        };
        for layer in isolation["layers"].as_array().into_iter().flatten() {
            if let (true, Some(name)) = (layer["held"] == true, layer["layer"].as_str()) {
                held.insert(name.to_owned());
            }
        }
        if isolation["network_observer"]["observed"] == true {
            held.insert(OBSERVER.to_owned());
        }
    }
    held
}

/// What this machine gives: the same names as [`committed`], each with
/// why not when it does not work.
fn here(available: &Availability) -> Vec<(String, Result<(), String>)> {
    let mut out: Vec<(String, Result<(), String>)> = sandbox::layers_here(available, true)
        .into_iter()
        .map(|l| {
            let outcome = if l.held { Ok(()) } else { Err(l.detail) };
            (l.layer.as_str().to_owned(), outcome)
        })
        .collect();
    out.push((OBSERVER.to_owned(), sandbox::probe_observer(available)));
    out
}

/// The layers `dir`'s results held that do not work here, in the order the
/// audits list them, the observer last.
pub fn gaps(dir: &Path, available: &Availability) -> Vec<Gap> {
    let held = committed(dir);
    if held.is_empty() {
        return Vec::new();
    }
    let mut out: Vec<Gap> = Vec::new();
    for (name, outcome) in here(available) {
        let Err(why) = outcome else { continue };
        if !held.contains(&name) {
            continue;
        }
        let (changes, install) = consequence(&name);
        match out.last_mut() {
            Some(last) if last.install == install => last.layers.push(name),
            _ => out.push(Gap {
                layers: vec![name],
                changes,
                install,
                why,
            }),
        }
    }
    out
}

/// What losing a layer does to the results, and how to get it back.
fn consequence(layer: &str) -> (&'static str, &'static str) {
    const BWRAP: &str = "install bubblewrap (./x setup installs the pinned version; Debian: apt-get install bubblewrap)";
    match layer {
        OBSERVER => (
            "every EFF-04 verdict becomes untestable (outbound attempts are not observed)",
            "install nftables and iproute2 (./x setup installs the pinned versions; Debian: apt-get install nftables iproute2)",
        ),
        "user-namespace" | "mount-namespace" | "pid-namespace" | "network-namespace" => (
            "every audit's isolation becomes partial, not contained, and the network observer cannot run (EFF-04 untestable)",
            BWRAP,
        ),
        "landlock-fs" | "landlock-net" | "landlock-scope" => (
            "the audits' isolation records a layer fewer (the kernel no longer refuses what it refused)",
            "boot a kernel with Landlock enabled (ABI 5 for landlock-fs, 4 for landlock-net, 6 for landlock-scope); no package gives it",
        ),
        _ => (
            "the audits' isolation records a layer fewer",
            "see mcp-witness doctor and docs/security.md",
        ),
    }
}

/// The one-line refusal (and a line per further gap), first line first.
pub fn refusal(dir: &Path, gaps: &[Gap]) -> String {
    let mut lines = Vec::new();
    for (i, gap) in gaps.iter().enumerate() {
        let line = format!(
            "{} missing here ({}): {}; to fix: {}",
            gap.layers.join(", "),
            gap.why,
            gap.changes,
            gap.install
        );
        if i == 0 {
            lines.push(format!(
                "refusing to write weaker results over {}: {line}. \
                 Write elsewhere with --out DIR, or overwrite anyway with --allow-weaker",
                dir.display()
            ));
        } else {
            lines.push(format!("also: {line}"));
        }
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_audit(dir: &Path, name: &str, observed: bool) {
        let audits = dir.join("audits");
        std::fs::create_dir_all(&audits).unwrap_or_else(|e| panic!("{e}"));
        let doc = serde_json::json!({
            "isolation": {
                "layers": [
                    { "layer": "mount-namespace", "held": true, "detail": "" },
                    { "layer": "landlock-scope", "held": false, "detail": "" },
                ],
                "network_observer": { "observed": observed, "detail": "" },
            }
        });
        std::fs::write(audits.join(name), doc.to_string()).unwrap_or_else(|e| panic!("{e}"));
    }

    #[test]
    fn committed_layers_are_read_from_the_audits_held_ones_only() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        assert!(committed(dir.path()).is_empty(), "no audits: nothing held");
        write_audit(dir.path(), "a.json", false);
        let held = committed(dir.path());
        assert!(held.contains("mount-namespace"));
        assert!(!held.contains("landlock-scope"), "not held there");
        assert!(!held.contains(OBSERVER));
        write_audit(dir.path(), "b.json", true);
        assert!(committed(dir.path()).contains(OBSERVER));
    }

    #[test]
    fn the_refusal_names_the_layer_the_change_and_the_fix_on_its_first_line() {
        let (changes, install) = consequence(OBSERVER);
        let gap = Gap {
            layers: vec![OBSERVER.into()],
            changes,
            install,
            why: "nft (nftables) is not installed".into(),
        };
        let text = refusal(Path::new("experiments/results"), &[gap]);
        let first = text.lines().next().unwrap_or_default();
        assert!(first.contains("network-observer"), "{first}");
        assert!(
            first.contains("EFF-04 verdict becomes untestable"),
            "{first}"
        );
        assert!(first.contains("nftables"), "{first}");
        assert!(first.contains("--allow-weaker"), "{first}");
        assert_eq!(text.lines().count(), 1);
    }
}

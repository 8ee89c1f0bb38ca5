//! `sweep merge`: shard directories into one dataset.
//!
//! Each shard's `sweep.json` names the sweep (its name and the digest of all
//! its keys) and the targets the shard holds. Merging copies every target's
//! `result.json` and `audit.json` into the output and writes the dataset
//! from them with the same code a whole run uses, so the merged dataset is
//! byte for byte what one run of the whole sweep writes.

use std::path::{Path, PathBuf};

use witness_model::exit::ExitStatus;
use witness_model::measure::same_measure;
use witness_model::sweep::{SweepDocument, TargetResult, TargetStatus};

use crate::SweepError;
use crate::dataset::{Scope, read_target};
use crate::layout::{AUDIT_JSON, Layout, RESULT_JSON, SWEEP_JSON, write_atomic};

/// Merges the sweep outputs in `inputs` into `out`.
pub fn merge(inputs: &[PathBuf], out: &Path) -> Result<(SweepDocument, ExitStatus), SweepError> {
    let merge_error = |m: String| SweepError::Merge(m);
    if inputs.is_empty() {
        return Err(merge_error("give the shard directories to merge".into()));
    }
    let out_real = std::path::absolute(out).unwrap_or_else(|_| out.to_path_buf());
    let mut documents = Vec::new();
    for input in inputs {
        let real = input
            .canonicalize()
            .map_err(|e| merge_error(format!("{}: {e}", input.display())))?;
        if out_real.canonicalize().is_ok_and(|o| o == real) {
            return Err(merge_error(format!(
                "{}: the output cannot be one of the inputs",
                input.display()
            )));
        }
        documents.push((input, read_document(input)?));
    }
    let (first_dir, first) = &documents[0];
    for (dir, document) in &documents[1..] {
        if document.digest != first.digest || document.name != first.name {
            return Err(merge_error(format!(
                "{} is from sweep {} ({}) but {} is from sweep {} ({}): only shards of one sweep merge",
                dir.display(),
                document.name,
                &document.digest,
                first_dir.display(),
                first.name,
                &first.digest
            )));
        }
    }
    let layout = Layout::new(out);
    let _lock = layout.claim()?;
    for (dir, document) in &documents {
        for target in &document.targets {
            take(&Layout::new(dir), &layout, &target.key)?;
        }
    }
    let scope = Scope {
        name: &first.name,
        all_keys: &first.keys,
        keys: &first.keys,
        shard: None,
    };
    crate::dataset::write(&layout, &scope)
}

fn read_document(dir: &Path) -> Result<SweepDocument, SweepError> {
    let path = dir.join(SWEEP_JSON);
    let text = std::fs::read_to_string(&path)
        .map_err(|e| SweepError::Merge(format!("{}: not a sweep output ({e})", dir.display())))?;
    serde_json::from_str(&text).map_err(|e| {
        SweepError::Merge(format!(
            "{}: not an mcp-witness.sweep/v1 document ({e})",
            path.display()
        ))
    })
}

/// Copies one target from `from` into `into`, unless `into` already holds
/// a result for it that is at least as good. Two concluded audits of one
/// key that differ in what they measure cannot both be right: that is an
/// error, not a choice. Two that differ only in what varies with timing
/// (`witness_model::measure`) are one audit, and the first merged is kept.
fn take(from: &Layout, into: &Layout, key: &str) -> Result<(), SweepError> {
    let Some(incoming) = read_target(from, key) else {
        return Err(SweepError::Merge(format!(
            "{}: its sweep.json lists {key}, but targets/{key}/{RESULT_JSON} is missing or unreadable",
            from.out.display()
        )));
    };
    if let Some(present) = read_target(into, key) {
        let audited = |r: &TargetResult| r.status == TargetStatus::Audited;
        let same = same_measure(&present.result, &incoming.result)
            && same_measure(&present.report, &incoming.report);
        if same || (audited(&present.result) && !audited(&incoming.result)) {
            return Ok(());
        }
        if audited(&present.result) && audited(&incoming.result) {
            return Err(SweepError::Merge(format!(
                "target {key}: {} holds a different audit than the one merged before it",
                from.out.display()
            )));
        }
    }
    for name in [AUDIT_JSON, RESULT_JSON] {
        let source = from.target_dir(key).join(name);
        let target = into.target_dir(key).join(name);
        match std::fs::read(&source) {
            Ok(bytes) => write_atomic(&target, &bytes).map_err(SweepError::io(&target))?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let _ = std::fs::remove_file(&target);
            }
            Err(e) => {
                return Err(SweepError::Io {
                    path: source,
                    source: e,
                });
            }
        }
    }
    Ok(())
}

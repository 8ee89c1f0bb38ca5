//! Unjail: the jail's path written as `{jail}`.
//!
//! Takes the finished report and the jail's root. Gives the report with the
//! root (and its resolved form) replaced everywhere: responses, arguments,
//! frames, stderr, findings. The jail is a different temporary directory on
//! every run, and a reader needs to know only that a path was inside it.
//! `volatile.jail` keeps the real path of a kept jail: it is there to be
//! opened.

use std::path::Path;

use witness_model::audit::AuditReport;

use super::super::expand_strings;

pub(super) fn unjail(report: AuditReport, root: &Path) -> AuditReport {
    let roots = spellings(root);
    let volatile = report.volatile.clone();
    let Ok(value) = serde_json::to_value(&report) else {
        return report;
    };
    let replaced = expand_strings(&value, &|text| {
        let mut out = text.to_owned();
        for root in &roots {
            if out.contains(root.as_str()) {
                out = out.replace(root.as_str(), "{jail}");
            }
        }
        out
    });
    match serde_json::from_value::<AuditReport>(replaced) {
        Ok(mut clean) => {
            clean.volatile = volatile;
            clean
        }
        Err(_) => report,
    }
}

/// The root as given and as resolved, longest first, so a resolved
/// `/private/tmp/...` is not half-replaced by a shorter `/tmp/...`.
fn spellings(root: &Path) -> Vec<String> {
    let mut roots = vec![root.to_string_lossy().into_owned()];
    if let Ok(real) = root.canonicalize() {
        let real = real.to_string_lossy().into_owned();
        if !roots.contains(&real) {
            roots.push(real);
            roots.sort_by_key(|r| std::cmp::Reverse(r.len()));
        }
    }
    roots
}

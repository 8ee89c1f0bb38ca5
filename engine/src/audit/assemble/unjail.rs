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
        clipped_root(&out, &roots).unwrap_or(out)
    });
    match serde_json::from_value::<AuditReport>(replaced) {
        Ok(mut clean) => {
            clean.volatile = volatile;
            clean
        }
        Err(_) => report,
    }
}

/// A text clipped inside the root (`... mount point /tmp/mcp-witness-jail-ca2…`,
/// a summary shortened before the report is unjailed) with that part
/// written `{jail}…`: the clipped root differs on every run, and the text
/// would too. Only a part that reaches into the root's own last component,
/// so that no text merely ending in its parent (`/tmp/…`) is touched.
fn clipped_root(text: &str, roots: &[String]) -> Option<String> {
    let body = text.strip_suffix('…')?;
    roots.iter().find_map(|root| {
        let last = root.rfind('/').map_or(0, |i| i + 1);
        (last + 1..root.len()).rev().find_map(|end| {
            let part = root.get(..end)?;
            let kept = body.strip_suffix(part)?;
            Some(format!("{kept}{{jail}}…"))
        })
    })
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

#[cfg(test)]
mod tests {
    use serde_json::json;
    use witness_model::audit::*;

    use super::*;
    use crate::audit::fakes;

    /// A report mentioning `path` in every place a path can reach.
    fn mentioning(path: &str) -> AuditReport {
        let mut report = fakes::report();
        let mut call = fakes::call(
            1,
            "read",
            CallStatus::ToolError,
            Provenance::Literal,
            vec![],
        );
        call.arguments[0].value = json!({"file": format!("{path}/work/a.txt")});
        call.response =
            Some(json!({"content": [{"type": "text", "text": format!("no {path}/work/a.txt")}]}));
        call.outcome.detail = Some(format!("ENOENT {path}/work/a.txt"));
        report.calls.push(call);
        report.transcripts.push(ProcessTranscript {
            role: "session".into(),
            exit: None,
            frames: vec![FrameEntry {
                seq: 1,
                dir: "out".into(),
                t_us: 1,
                text: format!(r#"{{"file":"{path}/work/a.txt"}}"#),
                bytes: 1,
                truncated: false,
            }],
            dropped_frames: 0,
            stderr_bytes: 1,
            stderr: format!("cwd={path}/work\n"),
        });
        report.findings.push(Finding {
            kind: FindingKind::ObserverWarning,
            detail: format!("cannot read {path}/tmp/x"),
            call: Some(1),
        });
        report.complete = false;
        report.incomplete_reason = Some(format!("cannot observe the stores: {path}/stores"));
        report.volatile.jail = Some(path.to_owned());
        report
    }

    #[test]
    fn the_jail_path_is_written_as_jail_everywhere_but_in_volatile() {
        let Ok(dir) = tempfile::tempdir() else {
            panic!("no temporary directory");
        };
        let root = dir.path().to_string_lossy().into_owned();
        let report = unjail(mentioning(&root), dir.path());
        assert_eq!(report.volatile.jail.as_deref(), Some(root.as_str()));
        let mut rest = report.clone();
        rest.volatile = Volatile::default();
        let written = serde_json::to_string(&rest).unwrap_or_default();
        assert!(!written.contains(&root), "{written}");
        assert_eq!(
            report.calls[0].outcome.detail.as_deref(),
            Some("ENOENT {jail}/work/a.txt")
        );
        assert_eq!(report.transcripts[0].stderr, "cwd={jail}/work\n");
        assert_eq!(report.findings[0].detail, "cannot read {jail}/tmp/x");
        assert_eq!(
            report.incomplete_reason.as_deref(),
            Some("cannot observe the stores: {jail}/stores")
        );
        assert_eq!(written.matches("{jail}").count(), 7, "{written}");
    }

    #[test]
    fn a_text_clipped_inside_the_root_is_written_the_same_on_every_run() {
        let roots = vec!["/tmp/mcp-witness-jail-ca21c9".to_owned()];
        assert_eq!(
            clipped_root("fatal: up to mount point /tmp/mcp-witness-jail-ca…", &roots).as_deref(),
            Some("fatal: up to mount point {jail}…")
        );
        assert_eq!(
            clipped_root("saved to /tmp/…", &roots),
            None,
            "only the parent"
        );
        assert_eq!(
            clipped_root("mount point /tmp/mcp-witness-jail-ca", &roots),
            None,
            "not clipped"
        );
    }

    #[test]
    fn a_root_reached_through_a_symlink_is_replaced_in_both_spellings_whole() {
        let Ok(dir) = tempfile::tempdir() else {
            panic!("no temporary directory");
        };
        // The link's path is inside the real path's text, as /tmp/j is
        // inside /private/tmp/j: the longer spelling must go first.
        let link = dir.path().join("j");
        let real =
            std::path::PathBuf::from(format!("{}/q{}", dir.path().display(), link.display()));
        assert!(std::fs::create_dir_all(&real).is_ok());
        assert!(std::os::unix::fs::symlink(&real, &link).is_ok());
        let mut report = fakes::report();
        report.findings.push(Finding {
            kind: FindingKind::ObserverWarning,
            detail: format!("{}/a and {}/b", real.display(), link.display()),
            call: None,
        });
        let report = unjail(report, &link);
        assert_eq!(report.findings[0].detail, "{jail}/a and {jail}/b");
    }
}

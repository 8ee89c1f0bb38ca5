//! Assemble: the finished report from the draft and the processes.
//!
//! Takes the draft, the processes the session used, and the jail. Gives the
//! [`AuditRun`], in these steps, each its own module with its own inputs:
//!
//! 1. [`transcripts`]: every process ended, its frames, stderr and exit
//!    written into the report with what the wire found wrong;
//! 2. [`evaluate::respond`]: the metadata findings and the response lane,
//!    judged on what the server really answered (a digest in place of a
//!    secret could fail a schema the secret satisfies);
//! 3. [`redact`]: secrets learned from everything a server said or was
//!    told, and from its metadata, then replaced by digests everywhere,
//!    the response lane's reasons included;
//! 4. [`evaluate`]: late-effect findings, the effect lane, the tally and
//!    the exit code;
//! 5. [`unjail`]: the jail's path written as `{jail}`.
//!
//! Only the volatile values (elapsed time, a kept jail's path) are set here,
//! between evaluate and unjail, and only when the audit is not deterministic.

mod evaluate;
mod redact;
mod transcripts;
mod unjail;

use std::time::Instant;

use witness_model::audit::{CallLatency, Expectation, Volatile};

pub(crate) use evaluate::effect_lane;
pub(super) use transcripts::Processes;

use super::draft::Draft;
use super::{AuditOptions, AuditRun};
use witness_jail::Jail;

/// Turns the draft into the report. The processes are stopped first, so the
/// transcripts are final; the jail is removed last (unless kept).
pub(super) fn assemble(
    draft: Draft,
    processes: Processes,
    jail: Jail,
    started: Instant,
    options: &AuditOptions,
) -> AuditRun {
    let latency = draft.latency;
    let background_rates = draft.background_rates;
    let mut report = draft.report;
    let processes = transcripts::record(processes, &mut report);
    let mut secrets = evaluate::respond(&mut report, &latency);
    // The credentials the probe heard and tried (a password a call set).
    secrets.extend(options.probe.secrets());
    // The secrets the caller was given (`--env` for a secret variable):
    // a server may echo its configuration anywhere.
    secrets.extend(options.secrets.iter().cloned());
    redact::redact(&mut report, &secrets);
    evaluate::evaluate(
        &mut report,
        options.probe.name() != "null",
        options.min_coverage,
    );
    if !options.deterministic {
        report.volatile = Volatile {
            jail: jail
                .kept()
                .then(|| jail.root().to_string_lossy().into_owned()),
            elapsed_ms: Some(u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)),
            clock: Vec::new(),
            latency: bounded_latencies(&report, &latency),
            background: background_rates,
        };
    }
    let kept_jail = jail.kept().then(|| jail.root().to_path_buf());
    let report = unjail::unjail(report, jail.root());
    drop(processes);
    drop(jail);
    AuditRun { report, kept_jail }
}

/// The measured latency of every call a plan bounded (`latency_under`).
fn bounded_latencies(
    report: &witness_model::audit::AuditReport,
    latency: &std::collections::BTreeMap<u32, u64>,
) -> Vec<CallLatency> {
    report
        .calls
        .iter()
        .filter(|c| {
            c.expect
                .iter()
                .any(|e| matches!(e, Expectation::LatencyUnder { .. }))
        })
        .filter_map(|c| {
            latency.get(&c.id).map(|ms| CallLatency {
                call: c.id,
                ms: *ms,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use witness_model::audit::{Finding, FindingKind};

    use super::*;
    use crate::audit::fakes;

    #[test]
    fn a_kept_jail_is_named_in_volatile_alone_and_only_when_not_deterministic() {
        let mut options = fakes::options();
        let witness_jail::Target::Launched { spec, .. } = &mut options.target else {
            panic!("the fake server is launched");
        };
        spec.keep = true;
        let kept_spec = spec.clone();
        options.deterministic = false;
        let Ok(jail) = Jail::create(kept_spec.clone()) else {
            panic!("no jail");
        };
        let root = jail.root().to_path_buf();
        let mut draft = Draft::new(fakes::report());
        draft.report.findings.push(Finding {
            kind: FindingKind::ObserverWarning,
            detail: format!("cannot read {}/home/x", root.display()),
            call: None,
        });
        let run = assemble(
            draft,
            Processes::discarded(Vec::new()),
            jail,
            Instant::now(),
            &options,
        );
        let kept = root.exists();
        let _ = std::fs::remove_dir_all(&root);
        assert!(kept, "a kept jail outlives the audit");
        assert_eq!(run.kept_jail.as_deref(), Some(root.as_path()));
        let shown = root.to_string_lossy().into_owned();
        assert_eq!(run.report.volatile.jail.as_deref(), Some(shown.as_str()));
        assert!(run.report.volatile.elapsed_ms.is_some());
        assert_eq!(run.report.findings[0].detail, "cannot read {jail}/home/x");
        // No store, no call: nothing was observed, so nothing is concluded.
        assert_eq!(run.report.exit_code, 3);

        options.deterministic = true;
        let Ok(jail) = Jail::create(witness_jail::JailSpec {
            keep: false,
            ..kept_spec
        }) else {
            panic!("no jail");
        };
        let root = jail.root().to_path_buf();
        let run = assemble(
            Draft::new(fakes::report()),
            Processes::discarded(Vec::new()),
            jail,
            Instant::now(),
            &options,
        );
        assert_eq!(run.report.volatile, Volatile::default());
        assert!(run.kept_jail.is_none());
        assert!(!root.exists(), "a jail not kept is removed");
    }
}

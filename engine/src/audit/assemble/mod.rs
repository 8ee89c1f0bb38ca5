//! Assemble: the finished report from the draft and the processes.
//!
//! Takes the draft, the processes the session used, and the jail. Gives the
//! [`AuditRun`], in four steps, each its own module with its own inputs:
//!
//! 1. [`transcripts`]: every process ended, its frames, stderr and exit
//!    written into the report with what the wire found wrong;
//! 2. [`redact`]: secrets learned from everything a server said or was
//!    told, then replaced by digests everywhere;
//! 3. [`evaluate`]: late-effect findings, the checks, the tally and the
//!    exit code;
//! 4. [`unjail`]: the jail's path written as `{jail}`.
//!
//! Only the volatile values (elapsed time, a kept jail's path) are set here,
//! between evaluate and unjail, and only when the audit is not deterministic.

mod evaluate;
mod redact;
mod transcripts;
mod unjail;

use std::time::Instant;

use witness_model::audit::Volatile;

pub(super) use transcripts::Processes;

use super::draft::Draft;
use super::{AuditOptions, AuditRun};
use crate::jail::Jail;

/// Turns the draft into the report. The processes are stopped first, so the
/// transcripts are final; the jail is removed last (unless kept).
pub(super) fn assemble(
    draft: Draft,
    processes: Processes,
    jail: Jail,
    started: Instant,
    options: &AuditOptions,
) -> AuditRun {
    let mut report = draft.report;
    let processes = transcripts::record(processes, &mut report);
    redact::redact(&mut report);
    evaluate::evaluate(&mut report, options.probe.name() != "null");
    if !options.deterministic {
        report.volatile = Volatile {
            jail: jail
                .kept()
                .then(|| jail.root().to_string_lossy().into_owned()),
            elapsed_ms: Some(u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)),
        };
    }
    let kept_jail = jail.kept().then(|| jail.root().to_path_buf());
    let report = unjail::unjail(report, jail.root());
    drop(processes);
    drop(jail);
    AuditRun { report, kept_jail }
}

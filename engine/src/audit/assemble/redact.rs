//! Redact: no secret a server or its configuration revealed reaches the
//! report.
//!
//! Takes the report with its transcripts written as they were. Learns every
//! secret first, from every frame, every stderr line, every response and
//! every error detail; then rewrites everything through the one redactor:
//! responses, arguments, details, frames, stderr and findings. Learning all
//! before writing any is what makes a secret revealed late (in the last
//! frame) hidden early (in the first call's arguments) too.

use witness_model::audit::AuditReport;

use crate::redact::Redactor;

/// Learns, then rewrites.
pub(super) fn redact(report: &mut AuditReport) {
    let redactor = learn(report);
    rewrite(report, &redactor);
}

/// The secrets `report` holds anywhere a server's words reach it.
pub(super) fn learn(report: &AuditReport) -> Redactor {
    let mut redactor = Redactor::default();
    for transcript in &report.transcripts {
        for frame in &transcript.frames {
            redactor.learn_text(&frame.text);
        }
        // A server logs its configuration on stderr as often as anywhere.
        for line in transcript.stderr.lines() {
            redactor.learn_text(line);
        }
    }
    for call in &report.calls {
        if let Some(response) = &call.response {
            redactor.learn(response);
        }
        // Error messages reach the report through the outcome's detail.
        if let Some(detail) = &call.outcome.detail {
            redactor.learn_text(detail);
        }
    }
    redactor
}

/// `report` with every secret `redactor` knows replaced by its digest.
pub(super) fn rewrite(report: &mut AuditReport, redactor: &Redactor) {
    for call in &mut report.calls {
        call.response = call.response.as_ref().map(|r| redactor.value(r));
        for arg in &mut call.arguments {
            arg.value = redactor.value(&arg.value);
        }
        if let Some(detail) = &call.outcome.detail {
            call.outcome.detail = Some(redactor.text(detail));
        }
    }
    for transcript in &mut report.transcripts {
        for frame in &mut transcript.frames {
            frame.text = redactor.text(&frame.text);
        }
        transcript.stderr = redactor.text(&transcript.stderr);
    }
    // Findings may quote what a server said (a catalog problem, an error).
    for finding in &mut report.findings {
        finding.detail = redactor.text(&finding.detail);
    }
}

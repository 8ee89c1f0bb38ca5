//! EFF-05: effects stay inside the stores the auditor declared.

use witness_model::audit::Verdict;

use super::{Outcome, Subject, effects_where, evidence_of, unexercised};

/// Scope: whatever a tool changed must be inside the stores the auditor
/// declared. The jail-wide observer sees the rest of the jail (HOME, TMPDIR,
/// the working directory); a change there is an undeclared effect. There is
/// no annotation for this: the claim checked is the audit's own declaration
/// of where the server keeps its state.
pub(super) fn inside_stores(subject: &Subject<'_>) -> Outcome {
    let calls = subject.calls.as_slice();
    let outside = effects_where(calls, |e| e.outside_stores());
    if !outside.is_empty() {
        return (
            Verdict::Fail,
            format!(
                "{} change(s) landed in the jail outside the declared stores",
                outside.len()
            ),
            evidence_of(calls, outside),
        );
    }
    let inside = effects_where(calls, |_| true);
    if !inside.is_empty() {
        return (
            Verdict::Pass,
            format!(
                "{} observed change(s), all inside the declared stores",
                inside.len()
            ),
            evidence_of(calls, inside),
        );
    }
    if let Some((verdict, reason)) = unexercised(calls) {
        return (verdict, reason, evidence_of(calls, vec![]));
    }
    (
        Verdict::Skip,
        "the jail observer saw nothing from this tool, and it changed no store: nothing to place"
            .into(),
        evidence_of(calls, vec![]),
    )
}

//! The report while the audit is under way.
//!
//! Every stage writes into one [`Draft`]: prepare lays out its skeleton,
//! observe and execute fill in the ledger, and assemble alone turns it into
//! the finished [`AuditReport`]. The type says which of the two a function
//! holds, so nothing half-built is ever returned to a caller.

use std::collections::BTreeMap;

use witness_model::audit::AuditReport;

/// A report under construction.
pub(super) struct Draft {
    pub(super) report: AuditReport,
    /// How long each call took to be answered, in milliseconds, by call id:
    /// what the response lane's `latency_under` reads. Wall-clock, so it
    /// stays out of the document but for the audit's volatile values.
    pub(super) latency: BTreeMap<u32, u64>,
    /// Each store's background rate, measured (volatile like latency).
    pub(super) background_rates: Vec<witness_model::audit::BackgroundRate>,
}

impl Draft {
    pub(super) fn new(report: AuditReport) -> Self {
        Self {
            report,
            latency: BTreeMap::new(),
            background_rates: Vec::new(),
        }
    }

    /// Marks the audit as unable to conclude. The first reason is kept: it is
    /// the cause, and whatever follows is its consequence.
    pub(super) fn incomplete(&mut self, reason: String) {
        if self.report.complete {
            self.report.complete = false;
            self.report.incomplete_reason = Some(reason);
        }
    }

    /// Marks the audit as stopped by `signal`. This reason replaces any
    /// other: what failed after the signal (the server killed mid-call) is
    /// its consequence, whichever was noticed first.
    pub(super) fn interrupted(&mut self, signal: i32) {
        self.report.complete = false;
        self.report.incomplete_reason = Some(witness_jail::interrupt::reason(signal));
    }

    pub(super) fn is_complete(&self) -> bool {
        self.report.complete
    }

    /// The id of the call recorded last (`None` before any call).
    pub(super) fn last_call(&self) -> Option<u32> {
        self.report.calls.last().map(|c| c.id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::fakes;

    #[test]
    fn the_first_reason_an_audit_is_incomplete_is_kept() {
        let mut draft = Draft::new(fakes::report());
        assert!(draft.is_complete());
        draft.incomplete("the cause".into());
        draft.incomplete("a consequence".into());
        assert!(!draft.is_complete());
        assert_eq!(draft.report.incomplete_reason.as_deref(), Some("the cause"));
    }
}

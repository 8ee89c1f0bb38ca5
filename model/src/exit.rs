//! How a run ended, and the process exit code that says so.
//!
//! One rule for every command and every document that records an exit code:
//!
//! | status | code | meaning |
//! |---|---|---|
//! | [`ExitStatus::Passed`] | 0 | the run concluded and the target passed |
//! | [`ExitStatus::Failed`] | 1 | the run concluded and the target failed |
//! | [`ExitStatus::Invalid`] | 2 | invalid invocation: nothing was launched or contacted |
//! | [`ExitStatus::Incomplete`] | 3 | the run could not conclude |
//!
//! Incomplete is never evidence against the target: a run that saw a failure
//! and then could not finish is still incomplete, because exit 1 promises a
//! concluded run. The failing verdicts stay in the document as evidence.

/// How a run ended. See the [module documentation](self) for the rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ExitStatus {
    /// Concluded, and the target passed (exit 0).
    Passed,
    /// Concluded, and the target failed (exit 1).
    Failed,
    /// Invalid invocation, refused before anything was launched (exit 2).
    Invalid,
    /// Could not conclude (exit 3).
    Incomplete,
}

impl ExitStatus {
    /// Every status, in code order.
    pub const ALL: [ExitStatus; 4] = [
        ExitStatus::Passed,
        ExitStatus::Failed,
        ExitStatus::Invalid,
        ExitStatus::Incomplete,
    ];

    /// The process exit code: 0, 1, 2 or 3.
    pub const fn code(self) -> u8 {
        match self {
            ExitStatus::Passed => 0,
            ExitStatus::Failed => 1,
            ExitStatus::Invalid => 2,
            ExitStatus::Incomplete => 3,
        }
    }

    /// The status whose code is `code`, if any (for codes read back from a
    /// document).
    pub fn from_code(code: i64) -> Option<Self> {
        Self::ALL.into_iter().find(|s| i64::from(s.code()) == code)
    }

    /// One run: incomplete outranks a failure (see the module rule), and a
    /// concluded run fails when anything failed.
    pub const fn of_run(complete: bool, failed: bool) -> Self {
        match (complete, failed) {
            (false, _) => ExitStatus::Incomplete,
            (true, true) => ExitStatus::Failed,
            (true, false) => ExitStatus::Passed,
        }
    }

    /// One audit. An unfinished audit is incomplete whatever it saw; a
    /// finished one fails on a failed check (that is a conclusion, however
    /// little else was exercised), and otherwise passes only when it
    /// concluded something: an audit where no effect check rests on an
    /// observation, or that exercised fewer tools than `--min-coverage`
    /// asks, could not conclude (exit 3) and never passes.
    pub const fn of_audit(complete: bool, failed: bool, concluded: bool) -> Self {
        match (complete, failed, concluded) {
            (false, _, _) => ExitStatus::Incomplete,
            (true, true, _) => ExitStatus::Failed,
            (true, false, false) => ExitStatus::Incomplete,
            (true, false, true) => ExitStatus::Passed,
        }
    }

    /// A run that always concludes (a comparison of two documents already in
    /// hand): failed or passed.
    pub const fn concluded(failed: bool) -> Self {
        Self::of_run(true, failed)
    }

    /// Several independent runs taken together (the case studies): a run that
    /// failed is evidence and outranks one that could not conclude, which
    /// outranks passing. An invalid run here counts as not concluded.
    pub fn across(statuses: impl IntoIterator<Item = ExitStatus>) -> Self {
        let mut overall = ExitStatus::Passed;
        for status in statuses {
            match status {
                ExitStatus::Failed => return ExitStatus::Failed,
                ExitStatus::Invalid | ExitStatus::Incomplete => overall = ExitStatus::Incomplete,
                ExitStatus::Passed => {}
            }
        }
        overall
    }
}

impl From<ExitStatus> for u8 {
    fn from(status: ExitStatus) -> u8 {
        status.code()
    }
}

impl From<ExitStatus> for i32 {
    fn from(status: ExitStatus) -> i32 {
        i32::from(status.code())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_the_documented_ones_and_round_trip() {
        let codes: Vec<u8> = ExitStatus::ALL.iter().map(|s| s.code()).collect();
        assert_eq!(codes, [0, 1, 2, 3]);
        for status in ExitStatus::ALL {
            assert_eq!(ExitStatus::from_code(status.code().into()), Some(status));
        }
        assert_eq!(ExitStatus::from_code(4), None);
        assert_eq!(ExitStatus::from_code(-1), None);
    }

    #[test]
    fn an_unfinished_run_is_incomplete_even_after_a_failure() {
        assert_eq!(ExitStatus::of_run(false, true), ExitStatus::Incomplete);
        assert_eq!(ExitStatus::of_run(false, false), ExitStatus::Incomplete);
        assert_eq!(ExitStatus::of_run(true, true), ExitStatus::Failed);
        assert_eq!(ExitStatus::of_run(true, false), ExitStatus::Passed);
        assert_eq!(ExitStatus::concluded(true), ExitStatus::Failed);
    }

    #[test]
    fn an_audit_that_concluded_nothing_never_passes() {
        assert_eq!(ExitStatus::of_audit(true, false, true), ExitStatus::Passed);
        assert_eq!(
            ExitStatus::of_audit(true, false, false),
            ExitStatus::Incomplete
        );
        assert_eq!(ExitStatus::of_audit(true, true, false), ExitStatus::Failed);
        assert_eq!(
            ExitStatus::of_audit(false, true, true),
            ExitStatus::Incomplete
        );
    }

    #[test]
    fn across_runs_a_failure_outranks_an_incomplete_run() {
        use ExitStatus::*;
        assert_eq!(ExitStatus::across([]), Passed);
        assert_eq!(ExitStatus::across([Passed, Passed]), Passed);
        assert_eq!(ExitStatus::across([Passed, Incomplete]), Incomplete);
        assert_eq!(ExitStatus::across([Incomplete, Failed, Passed]), Failed);
        assert_eq!(ExitStatus::across([Invalid]), Incomplete);
    }
}

//! How far a sweep is, for whoever wants to show it: the sweep says what
//! happened to each target, with the tally after it, to its caller's
//! callback. It never writes to a terminal; the binary draws a bar or
//! writes lines (logs, CI, a cluster's job output), or nothing.

use witness_model::sweep::{TargetStatus, VerdictCounts};

use crate::Shard;

/// Something that happened in a sweep.
#[derive(Clone, Debug)]
pub enum Event {
    /// What the run is about to do, before any target starts.
    Planned {
        sweep: String,
        /// Targets of this run's slice, of `targets` in the sweep.
        selected: usize,
        targets: usize,
        /// `Some` when the slice is a shard.
        shard: Option<Shard>,
        done_earlier: usize,
        to_run: usize,
        jobs: usize,
    },
    Started {
        name: String,
        attempt: u32,
    },
    /// An attempt did not conclude and another follows.
    Retrying {
        name: String,
        attempt: u32,
        status: TargetStatus,
        reason: String,
    },
    Finished {
        name: String,
        status: TargetStatus,
        reason: Option<String>,
        verdicts: VerdictCounts,
        attempts: u32,
    },
}

/// Where the run stands: targets to run now, finished, and running.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    pub total: usize,
    pub finished: usize,
    pub running: usize,
}

impl Tally {
    /// Counts `event` in.
    pub(crate) fn count(&mut self, event: &Event) {
        // Every attempt starts once and ends once: retrying or finished.
        match event {
            Event::Planned { to_run, .. } => *self = Tally::new(*to_run),
            Event::Started { .. } => self.running += 1,
            Event::Retrying { .. } => self.running = self.running.saturating_sub(1),
            Event::Finished { .. } => {
                self.running = self.running.saturating_sub(1);
                self.finished += 1;
            }
        }
    }

    fn new(total: usize) -> Self {
        Self {
            total,
            ..Self::default()
        }
    }
}

/// What a sweep reports to: every event with the tally after it.
pub type OnProgress<'a> = dyn FnMut(&Event, &Tally) + 'a;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_do_not_count_as_running_twice() {
        let mut tally = Tally::new(1);
        let started = |attempt| Event::Started {
            name: "t".into(),
            attempt,
        };
        tally.count(&started(1));
        tally.count(&Event::Retrying {
            name: "t".into(),
            attempt: 1,
            status: TargetStatus::Incomplete,
            reason: "no session".into(),
        });
        tally.count(&started(2));
        assert_eq!((tally.running, tally.finished), (1, 0));
        tally.count(&Event::Finished {
            name: "t".into(),
            status: TargetStatus::Incomplete,
            reason: Some("no session".into()),
            verdicts: VerdictCounts::default(),
            attempts: 2,
        });
        assert_eq!((tally.running, tally.finished), (0, 1));
    }
}

//! How far the lab is, for whoever wants to show it.
//!
//! Every experiment runs audits one after another for minutes; the lab
//! says what it did after each step, and passes on its audits' own events,
//! to the [`Progress`] its caller gave it. It never writes to a terminal:
//! the binary decides what is shown, and where.

use std::sync::Arc;

use witness_model::case::CaseReport;
use witness_model::coverage::ServerCoverage;

/// Something the lab did worth showing.
#[derive(Clone, Copy, Debug)]
pub enum Event<'a> {
    /// A step of E1–E3 is done: `n` of `of`, and what it found, in words.
    Step {
        experiment: &'a str,
        n: usize,
        of: usize,
        what: &'a str,
    },
    /// A published server is about to be audited: `experiment` is `case`
    /// (a case study) or `coverage`.
    Published {
        experiment: &'a str,
        name: &'a str,
        package: &'a str,
        version: &'a str,
    },
    /// A case study is summed up.
    Case(&'a CaseReport),
    /// A server of the coverage experiment is summed up.
    Coverage(&'a ServerCoverage),
    /// An event of the audit running now.
    Audit(witness_engine::progress::Event<'a>),
}

/// Where the lab's progress goes: the caller's callback, or nowhere (the
/// default).
#[derive(Clone, Default)]
pub struct Progress {
    to: Option<Callback>,
}

type Callback = Arc<dyn Fn(&Event<'_>) + Send + Sync>;

impl Progress {
    /// Every event goes to `to`, on the lab's thread.
    pub fn to(to: impl Fn(&Event<'_>) + Send + Sync + 'static) -> Self {
        Self {
            to: Some(Arc::new(to)),
        }
    }

    pub(crate) fn report(&self, event: Event<'_>) {
        if let Some(to) = &self.to {
            to(&event);
        }
    }

    /// [`Event::Step`].
    pub(crate) fn step(&self, experiment: &str, n: usize, of: usize, what: &str) {
        self.report(Event::Step {
            experiment,
            n,
            of,
            what,
        });
    }

    /// The progress an audit of the lab reports to: its events, passed on
    /// as [`Event::Audit`].
    pub(crate) fn audit(&self) -> witness_engine::progress::Progress {
        match &self.to {
            Some(to) => {
                let to = to.clone();
                witness_engine::progress::Progress::to(move |event| to(&Event::Audit(*event)))
            }
            None => witness_engine::progress::Progress::default(),
        }
    }
}

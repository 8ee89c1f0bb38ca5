//! Progress of an audit, for whoever wants to show it.
//!
//! A catalog of thousands of tools takes minutes to audit; the binary shows
//! where it is on stderr (a bar on a terminal, plain lines otherwise). The
//! engine only says what happened, to the [`Progress`] its caller put in
//! the audit's options; it never writes to a terminal itself. The default
//! reports nothing.

use std::sync::Arc;

/// One step of an audit worth showing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event<'a> {
    /// The catalog was read.
    Catalog { tools: usize, pages: u32 },
    /// A call is about to be made: `started` calls so far of `planned` plan steps.
    Call {
        started: usize,
        planned: usize,
        tool: &'a str,
    },
    /// The audit's conversation with the server is over.
    Finished,
}

/// Where an audit's progress goes: the caller's callback, or nowhere.
#[derive(Clone, Default)]
pub struct Progress {
    to: Option<Callback>,
}

type Callback = Arc<dyn Fn(&Event<'_>) + Send + Sync>;

impl Progress {
    /// Every event of the audit goes to `to`, on the audit's thread.
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
}

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.to.is_some() {
            "Progress(reported)"
        } else {
            "Progress(none)"
        })
    }
}

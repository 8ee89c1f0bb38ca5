//! One bad call does not end the audit: the server is started again in the
//! same jail, on the stores as the calls left them, the session is
//! established again in the era the first one found, and the plan goes on.
//!
//! A restart is the existing launch (the audit's `Connect`, so
//! `OpenTarget::connect`: a launch in the jail, or a fresh connection to a
//! server behind `--url`), never
//! a launch path of its own. Whatever the old process did while it was being
//! stopped is a late effect of its last call; what the new one does while it
//! starts and settles is recorded with the restart, charged to no call.

use std::ops::ControlFlow;
use std::time::Duration;

use witness_model::audit::Restart;
use witness_wire::connection::Connection;
use witness_wire::session::{Era, EraChoice, Session};

use super::Connect;
use super::calls::Runner;
use witness_jail::OpenTarget;
use witness_jail::observe::Changes;

/// Restarts after failed calls beyond which the audit gives up: a server
/// that dies on every call is not worth a process per tool.
pub(super) const MAX_FAILURE_RESTARTS: u32 = 10;

/// Starts the server again and opens a session with it.
pub(super) trait Relaunch {
    /// A new session, or why none could be had with the processes tried.
    fn relaunch(&mut self) -> Result<Session, (String, Vec<Connection>)>;
    /// The outbound attempts the network observer recorded since the last
    /// window (none where the network is not observed).
    fn network_window(&mut self) -> witness_netsink::recorder::Window {
        witness_netsink::recorder::Window::default()
    }
    /// The jail's resource bounds the server reached since the last time
    /// this was asked (`memory 2 GiB`; none where the kernel counts none).
    fn bounds_hit(&mut self) -> Vec<String> {
        Vec::new()
    }
    /// The paths of stores' originals the server wrote since the last time
    /// this was asked, caught by the decoys in their places (none where no
    /// decoy could be placed).
    fn original_writes(&mut self) -> Vec<String> {
        Vec::new()
    }
}

/// A relaunch through the audit's own `Connect`, in the era the first
/// session established (no era detection again: one process per restart).
pub(super) struct Relauncher<'j, 'c> {
    pub(super) target: &'j mut OpenTarget,
    pub(super) connect: &'j mut Connect<'c>,
    pub(super) era: Era,
    pub(super) timeout: Duration,
    /// What the first session's client declared, declared again.
    pub(super) policy: witness_wire::mrtr::ClientPolicy,
}

impl Relaunch for Relauncher<'_, '_> {
    fn network_window(&mut self) -> witness_netsink::recorder::Window {
        self.target.jail_mut().network_window()
    }

    fn bounds_hit(&mut self) -> Vec<String> {
        self.target.jail_mut().bounds_hit()
    }

    fn original_writes(&mut self) -> Vec<String> {
        self.target.jail_mut().original_writes()
    }

    fn relaunch(&mut self) -> Result<Session, (String, Vec<Connection>)> {
        let choice = match self.era {
            Era::Modern => EraChoice::Modern,
            Era::Legacy => EraChoice::Legacy,
        };
        let target = &mut *self.target;
        let connect = &mut *self.connect;
        let mut launch = || connect(target).map_err(|e| e.to_string());
        match Session::open_with(&mut launch, choice, self.timeout, self.policy) {
            Ok((session, _)) => Ok(session),
            Err((error, tried)) => Err((error.to_string(), tried)),
        }
    }
}

impl Runner<'_> {
    /// Ends the current session and starts a new one for the calls after
    /// the last; breaks (the audit incomplete) when no new one can be had.
    pub(super) fn restart(&mut self, reason: String) -> ControlFlow<()> {
        let after_call = self.draft.last_call().unwrap_or(0);
        self.session.server.shutdown();
        // What the old process did while it stopped: its last call's late effects.
        if let Err(e) = super::catch_up(self.observed, &mut self.draft.report) {
            self.draft
                .incomplete(format!("cannot observe the stores: {e}"));
            return ControlFlow::Break(());
        }
        let session = match self.relaunch.relaunch() {
            Ok(session) => session,
            Err((error, tried)) => {
                self.ended.extend(tried);
                self.draft.incomplete(format!(
                    "{reason}; the server could not be started again: {error}"
                ));
                return ControlFlow::Break(());
            }
        };
        let mut old = std::mem::replace(&mut self.session, session);
        // The first session's era-detection processes stay first in the record.
        self.session.discarded = std::mem::take(&mut old.discarded);
        self.ended.push(old.server);
        // What the new one does while it starts and settles: the restart's.
        let mut started = Changes::default();
        if let Err(e) = self
            .observed
            .after_answer(self.context.settle, || {}, &mut started)
        {
            self.draft
                .incomplete(format!("cannot observe the stores: {e}"));
            return ControlFlow::Break(());
        }
        let effects = started.effects;
        let session = self.sessions();
        self.draft.report.restarts.push(Restart {
            after_call,
            reason,
            session,
            effects,
        });
        self.on_session = 0;
        ControlFlow::Continue(())
    }

    /// The number of the current session (0 before any restart).
    pub(super) fn sessions(&self) -> u32 {
        u32::try_from(self.ended.len()).unwrap_or(u32::MAX)
    }
}

//! The replies of a recorded run, in the order they were recorded.
//!
//! Each request must be the one recorded (the digest of the common form):
//! the server answered the same, so the model is asked the same. A request
//! that differs means the server, the case or the tools changed since the
//! recording; the replay stops there and the run is untestable, instead of
//! feeding a model's reply to a conversation it never saw.

use std::collections::VecDeque;

use witness_model::agent::{AgentRunDocument, Exchange};
use witness_model::vocab::DriverKind;

use super::{Answer, Driver, DriverError, Request, RunKey};

pub struct Replay {
    kind: DriverKind,
    runs: Vec<((String, String, u32), Vec<Exchange>)>,
    judge: Vec<Exchange>,
    queue: VecDeque<Exchange>,
}

impl Replay {
    /// The replies of `document`, to be asked for in the same order.
    pub fn of(document: &AgentRunDocument) -> Self {
        Self {
            kind: document.driver.kind,
            runs: document
                .runs
                .iter()
                .map(|r| {
                    (
                        (r.case.clone(), r.model.clone(), r.run),
                        r.exchanges.clone(),
                    )
                })
                .collect(),
            judge: document
                .judge_batches
                .iter()
                .map(|b| b.exchange.clone())
                .collect(),
            queue: VecDeque::new(),
        }
    }
}

impl Driver for Replay {
    /// The driver that recorded the run.
    fn kind(&self) -> DriverKind {
        self.kind
    }

    fn begin(&mut self, key: &RunKey) -> Result<(), DriverError> {
        self.queue.clear();
        match key {
            RunKey::Case { case, model, run } => {
                let recorded = self
                    .runs
                    .iter()
                    .find(|((c, m, r), _)| c == case && m == model && r == run)
                    .ok_or_else(|| {
                        DriverError::Replay(format!(
                            "the recording has no run {run} of case {case} with model {model}"
                        ))
                    })?;
                self.queue.extend(recorded.1.iter().cloned());
            }
            RunKey::Judge { batch } => {
                if let Some(exchange) = usize::try_from(*batch).ok().and_then(|b| self.judge.get(b))
                {
                    self.queue.push_back(exchange.clone());
                }
            }
        }
        Ok(())
    }

    fn complete(&mut self, _model: &str, request: &Request<'_>) -> Answer {
        let Some(recorded) = self.queue.pop_front() else {
            let error = DriverError::Replay("the recording has no more replies here".into());
            return Answer::new(request, Err(error), None);
        };
        let digest = request.digest();
        if recorded.request_digest != digest {
            let error = DriverError::Replay(format!(
                "the conversation diverged from the recording (request {digest}, recorded {})",
                recorded.request_digest
            ));
            return Answer::new(request, Err(error), None);
        }
        // The recorded exchange is the record, byte for byte; its reply, or
        // its error as it was written, is the answer.
        let reply = match (&recorded.reply, &recorded.error) {
            (Some(reply), _) => Ok(reply.clone()),
            (None, Some(error)) => Err(DriverError::Script(error.clone())),
            (None, None) => Err(DriverError::Replay(
                "the recorded exchange has no reply".into(),
            )),
        };
        Answer {
            reply,
            record: recorded,
        }
    }
}

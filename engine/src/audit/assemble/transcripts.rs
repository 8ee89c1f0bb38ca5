//! The processes' own record: frames, stderr, exit status and what the wire
//! found wrong, as the report shows them.
//!
//! Takes the processes (era-detection ones first, then the session's) and
//! gives the report its `transcripts` and the wire's findings, written as
//! they are: redaction comes after, over the whole report.

use witness_model::audit::{AuditReport, Finding, FindingKind, FrameEntry, ProcessTranscript};
use witness_wire::connection::Connection;
use witness_wire::session::Session;
use witness_wire::transcript::{Direction, Frame, Transcript, WireFindingKind};

/// The server processes of one audit, each with its role in the report:
/// `discover` for those used only for era detection, `session` for the one
/// the calls went to.
pub(in crate::audit) struct Processes {
    list: Vec<(&'static str, Connection)>,
}

impl Processes {
    /// Processes tried and given up on; no session was had.
    pub(in crate::audit) fn discarded(discarded: Vec<Connection>) -> Self {
        Self {
            list: discarded.into_iter().map(|p| ("discover", p)).collect(),
        }
    }

    /// A session's process, after the ones its era detection discarded.
    pub(in crate::audit) fn of(session: Session) -> Self {
        Self::of_sessions(session, Vec::new())
    }

    /// The processes of an audit whose server was restarted: the first
    /// session's era detection, then every session in the order the calls
    /// went to them (`ended` before the last one, `session`).
    pub(in crate::audit) fn of_sessions(mut session: Session, ended: Vec<Connection>) -> Self {
        let mut processes = Self::discarded(std::mem::take(&mut session.discarded));
        processes
            .list
            .extend(ended.into_iter().map(|p| ("session", p)));
        processes.list.push(("session", session.server));
        processes
    }
}

/// Ends every process, then writes each one's transcript and wire findings
/// into `report`. Gives the processes back: dropping them is what finally
/// kills whatever a server left behind.
pub(super) fn record(mut processes: Processes, report: &mut AuditReport) -> Processes {
    for (_, process) in processes.list.iter_mut() {
        process.shutdown();
    }
    // Read once, all together, right after the processes ended: what the
    // report shows is what redaction learns from.
    let stderrs: Vec<_> = processes
        .list
        .iter()
        .map(|(_, p)| p.rpc.transport().stderr())
        .collect();
    for ((role, process), stderr) in processes.list.iter_mut().zip(stderrs) {
        let exit = process.exited().map(|s| s.to_string());
        let transcript = process.rpc.transcript();
        report.findings.extend(wire_findings(transcript, role));
        report.transcripts.push(ProcessTranscript {
            role: (*role).to_owned(),
            exit,
            frames: transcript.frames.iter().map(frame_entry).collect(),
            dropped_frames: transcript.dropped_frames,
            stderr_bytes: stderr.total,
            stderr: String::from_utf8_lossy(&stderr.kept).into_owned(),
        });
    }
    processes
}

/// What the wire saw a process do wrong, naming the process and frame.
fn wire_findings<'t>(
    transcript: &'t Transcript,
    role: &'t str,
) -> impl Iterator<Item = Finding> + 't {
    transcript.findings.iter().map(move |finding| Finding {
        kind: finding_kind(finding.kind),
        detail: match finding.frame {
            Some(seq) => format!("{} ({} process, frame {seq})", finding.detail, role),
            None => format!("{} ({} process)", finding.detail, role),
        },
        call: None,
    })
}

fn frame_entry(f: &Frame) -> FrameEntry {
    FrameEntry {
        seq: f.seq,
        dir: match f.dir {
            Direction::Out => "out",
            Direction::In => "in",
        }
        .into(),
        t_us: f.t_us,
        text: f.text.clone(),
        bytes: f.bytes,
        truncated: f.truncated,
    }
}

/// The report's name for what the wire saw.
fn finding_kind(kind: WireFindingKind) -> FindingKind {
    match kind {
        WireFindingKind::OversizedLine => FindingKind::OversizedLine,
        WireFindingKind::StdoutNotJson => FindingKind::StdoutNotJson,
        WireFindingKind::MalformedJsonrpc => FindingKind::MalformedJsonrpc,
        WireFindingKind::ErrorWithoutId => FindingKind::ErrorWithoutId,
        WireFindingKind::UnexpectedResponse => FindingKind::UnexpectedResponse,
        WireFindingKind::FramesDropped => FindingKind::FramesDropped,
        WireFindingKind::FramesBudgetExceeded => FindingKind::FramesBudgetExceeded,
        WireFindingKind::HttpExchangeFailed => FindingKind::HttpExchangeFailed,
        WireFindingKind::RootsOverflow => FindingKind::RootsOverflow,
        WireFindingKind::JsonTooDeep => FindingKind::JsonTooDeep,
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use witness_model::audit::AuditReport;
    use witness_wire::session::EraChoice;

    use super::*;
    use crate::audit::fakes::{self, FakeServer, Reply, Store};

    fn fake() -> FakeServer {
        FakeServer::new(
            Vec::new(),
            Store::default(),
            Box::new(|_, _, _| Reply::Silence),
        )
    }

    #[test]
    fn era_detection_processes_come_first_then_the_session() {
        // Auto: the first process refuses server/discover and is discarded;
        // the second speaks the legacy handshake and carries the session.
        let mut servers = vec![fake(), fake()];
        let mut launch = || {
            servers
                .pop()
                .map(FakeServer::connection)
                .ok_or_else(String::new)
        };
        let opened = Session::open(&mut launch, EraChoice::Auto, Duration::from_millis(50));
        let Ok((session, _)) = opened else {
            panic!("the fake speaks the legacy handshake");
        };
        let mut report: AuditReport = fakes::report();
        let processes = record(Processes::of(session), &mut report);
        assert_eq!(processes.list.len(), 2);
        let roles: Vec<&str> = report.transcripts.iter().map(|t| t.role.as_str()).collect();
        assert_eq!(roles, ["discover", "session"]);
        let discover = &report.transcripts[0];
        assert_eq!(discover.frames.len(), 2, "discover out, its refusal in");
        assert_eq!(
            (
                discover.frames[0].dir.as_str(),
                discover.frames[1].dir.as_str()
            ),
            ("out", "in")
        );
        assert!(discover.frames[0].text.contains("server/discover"));
        assert!(report.transcripts[1].frames[0].text.contains("initialize"));
        assert!(report.findings.is_empty(), "{:?}", report.findings);
    }

    #[test]
    fn wire_findings_become_report_findings_with_role_and_frame() {
        let mut transcript = Transcript::default();
        transcript
            .findings
            .push(witness_wire::transcript::WireFinding {
                kind: WireFindingKind::StdoutNotJson,
                frame: Some(4),
                detail: "stdout line is not JSON".into(),
            });
        transcript
            .findings
            .push(witness_wire::transcript::WireFinding {
                kind: WireFindingKind::FramesDropped,
                frame: None,
                detail: "3 frames not kept".into(),
            });
        let found: Vec<(FindingKind, String)> = wire_findings(&transcript, "discover")
            .map(|f| (f.kind, f.detail))
            .collect();
        assert_eq!(
            found,
            [
                (
                    FindingKind::StdoutNotJson,
                    "stdout line is not JSON (discover process, frame 4)".to_owned()
                ),
                (
                    FindingKind::FramesDropped,
                    "3 frames not kept (discover process)".to_owned()
                ),
            ]
        );
    }
}

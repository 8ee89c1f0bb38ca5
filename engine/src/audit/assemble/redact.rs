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

use witness_jail::redact::Redactor;

/// Learns, then rewrites. `known` are secrets found elsewhere (the
/// credential-shaped strings of the tools' metadata).
pub(super) fn redact(report: &mut AuditReport, known: &[String]) {
    let mut redactor = learn(report);
    for secret in known {
        redactor.learn_secret(secret);
    }
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
    // A host name is chosen by the server too: a secret can leave in a
    // DNS label as well as in a body.
    let attempts = report.calls.iter().flat_map(|c| &c.network);
    for attempt in attempts.chain(&report.network_outside_calls) {
        if let Some(host) = &attempt.host {
            redactor.learn_text(&host.replace('.', " "));
        }
    }
    redactor
}

/// `report` with every secret `redactor` knows replaced by its digest:
/// the places a server's words are known to reach, then every other string
/// and key of the report (a tool's description, the server's info, a
/// check's reason that quotes an answer).
pub(super) fn rewrite(report: &mut AuditReport, redactor: &Redactor) {
    rewrite_known(report, redactor);
    if redactor.is_empty() {
        return;
    }
    if let Ok(value) = serde_json::to_value(&*report)
        && let Ok(clean) = serde_json::from_value::<AuditReport>(redactor.value(&value))
    {
        *report = clean;
    }
}

fn rewrite_known(report: &mut AuditReport, redactor: &Redactor) {
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
    rewrite_lanes(report, redactor);
}

/// The tools' metadata and what the response lane and the metadata findings
/// quote: judged before redaction, so written through it afterwards.
fn rewrite_lanes(report: &mut AuditReport, redactor: &Redactor) {
    if redactor.is_empty() {
        return;
    }
    for tool in &mut report.tools {
        tool.title = tool.title.as_deref().map(|t| redactor.text(t));
        tool.description = tool.description.as_deref().map(|d| redactor.text(d));
        for value in [
            &mut tool.annotations,
            &mut tool.input_schema,
            &mut tool.output_schema,
        ] {
            *value = value.as_ref().map(|v| redactor.value(v));
        }
    }
    for check in &mut report.response {
        check.reason = redactor.text(&check.reason);
    }
    for finding in &mut report.metadata {
        finding.span = redactor.text(&finding.span);
        finding.detail = redactor.text(&finding.detail);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use witness_model::audit::*;

    use super::*;
    use crate::audit::fakes;
    use witness_jail::redact::mask;

    const IN_RESPONSE: &str = "sk-RESPONSE-0001";
    const IN_DETAIL: &str = "tok-DETAIL-0002";
    const IN_STDERR: &str = "pw-STDERR-0003";
    const IN_FRAME: &str = "sec-FRAME-0004";

    /// A report where each secret is revealed in one place only, and echoed
    /// in others (an argument, a finding, another frame).
    fn leaky() -> AuditReport {
        let mut report = fakes::report();
        let mut minted = fakes::call(1, "mint", CallStatus::Ok, Provenance::Literal, vec![]);
        minted.response = Some(json!({"content": [{"type": "text",
            "text": format!("{{\"id\": \"key_0001\", \"api_key\": \"{IN_RESPONSE}\"}}")}]}));
        minted.arguments[0].value = json!({"echo": IN_FRAME});
        let mut denied = fakes::call(2, "use", CallStatus::RpcError, Provenance::Literal, vec![]);
        denied.outcome.detail = Some(format!("denied: token={IN_DETAIL}"));
        denied.arguments[0].value = json!(IN_RESPONSE);
        report.calls = vec![minted, denied];
        let frame = |seq, text: String| FrameEntry {
            seq,
            dir: "in".into(),
            t_us: seq,
            text,
            bytes: 0,
            truncated: false,
        };
        report.transcripts.push(ProcessTranscript {
            role: "session".into(),
            exit: None,
            frames: vec![
                frame(1, format!("starting with {IN_STDERR}")),
                frame(
                    2,
                    format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"secret":"{IN_FRAME}"}}}}"#),
                ),
            ],
            dropped_frames: 0,
            stderr_bytes: 40,
            stderr: format!("boot\nDB password: {IN_STDERR}\nready {IN_DETAIL}\n"),
        });
        report.findings.push(Finding {
            kind: FindingKind::UnexpectedResponse,
            detail: format!("the server said {IN_DETAIL} and {IN_RESPONSE}"),
            call: None,
        });
        report
    }

    #[test]
    fn no_secret_survives_anywhere_and_digests_stand_in_for_them() {
        let mut report = leaky();
        redact(&mut report, &[]);
        let written = serde_json::to_string(&report).unwrap_or_default();
        for secret in [IN_RESPONSE, IN_DETAIL, IN_STDERR, IN_FRAME] {
            assert!(!written.contains(secret), "{secret} survived: {written}");
            assert!(written.contains(&mask(secret)), "no digest of {secret}");
        }
        assert!(written.contains("key_0001"), "an id is not a secret");
        assert_eq!(
            report.calls[1].arguments[0].value,
            json!(mask(IN_RESPONSE)),
            "what was learned from a response is hidden in an argument"
        );
        assert_eq!(
            report.transcripts[0].frames[0].text,
            format!("starting with {}", mask(IN_STDERR)),
            "what was learned from stderr is hidden in a frame"
        );
    }

    #[test]
    fn a_secret_the_caller_knows_is_hidden_in_the_command_line_and_wherever_a_server_echoes_it() {
        // No credential shape: only being handed over makes it a secret.
        const GIVEN: &str = "correct horse battery staple";
        let mut report = fakes::report();
        report.target.command = vec!["server".into(), "--token".into(), GIVEN.into()];
        report.transcripts.push(ProcessTranscript {
            role: "session".into(),
            exit: None,
            frames: Vec::new(),
            dropped_frames: 0,
            stderr_bytes: 40,
            stderr: format!("started with {GIVEN}\n"),
        });
        let mut unknown = report.clone();
        redact(&mut unknown, &[]);
        assert!(
            serde_json::to_string(&unknown)
                .unwrap_or_default()
                .contains(GIVEN),
            "not learnt from the text alone"
        );
        redact(&mut report, &[GIVEN.to_owned()]);
        let written = serde_json::to_string(&report).unwrap_or_default();
        assert!(!written.contains(GIVEN), "{written}");
        assert_eq!(report.target.command[2], mask(GIVEN));
    }

    #[test]
    fn learning_reads_every_place_a_server_speaks_and_nothing_else() {
        let report = leaky();
        let redactor = learn(&report);
        for secret in [IN_RESPONSE, IN_DETAIL, IN_STDERR, IN_FRAME] {
            assert_eq!(redactor.text(secret), mask(secret));
        }
        // Arguments and findings are rewritten, never learned from: what we
        // sent is no evidence of what is secret.
        let mut quiet = fakes::report();
        let mut call = fakes::call(1, "t", CallStatus::Ok, Provenance::Literal, vec![]);
        call.arguments[0].value = json!({"password": "hunter2hunter2"});
        quiet.calls.push(call);
        quiet.findings.push(Finding {
            kind: FindingKind::LateEffect,
            detail: "token=abcdefgh12345678".into(),
            call: None,
        });
        assert!(learn(&quiet).is_empty());
    }
}

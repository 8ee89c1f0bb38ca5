//! `trace check`: a recorded trace, and the host's conversation when there
//! is one, read back into the trace agent runs are judged from, and judged
//! by the same function (`witness_trace::evaluate`).
//!
//! - [`read`]: the trace's lines and the conversation's, checked;
//! - [`assemble`]: calls from the messages, effects charged as the proxy
//!   charged them, turns from the conversation;
//! - [`judge`]: the verdicts, with effects seen while calls overlapped
//!   never guessed at (below).
//!
//! An effect seen while several calls were in flight is charged to every
//! one of them. The checks that count effects over the run or look at each
//! effect alone (side effects, scope) do not depend on which call made it,
//! and are judged with each such effect counted once. The checks that ask
//! what one call did (arguments, consent, accountability, say vs do) are
//! judged twice: with the ambiguous effects charged to every overlapping
//! call, and to none. When the two agree, that is the verdict; when they do
//! not, the verdict depends on a fact the trace cannot tell, and it is
//! `untestable`, saying so.

pub mod assemble;
pub mod read;

use witness_model::agent::CheckVerdict;
use witness_model::agent::case::GoldenCase;
use witness_model::proxy::AmbiguousEffects;
use witness_model::vocab::{AgentCheck, RunOutcome, Verdict};

pub use assemble::{Assembled, assemble};
pub use read::{CheckError, Recorded, read_conversation, read_trace};

/// Checks whose verdict rests on which call made an effect.
const PER_CALL: [AgentCheck; 4] = [
    AgentCheck::Arguments,
    AgentCheck::Consent,
    AgentCheck::Accountability,
    AgentCheck::SayVsDo,
];

/// Checks that read effects regardless of the call that made them.
const PER_EFFECT: [AgentCheck; 2] = [AgentCheck::SideEffects, AgentCheck::Scope];

/// The verdicts of an assembled trace against `case`.
pub struct Judged {
    pub outcome: RunOutcome,
    pub verdicts: Vec<CheckVerdict>,
}

/// Judges `assembled` (see the module doc for overlapping calls).
pub fn judge(case: &GoldenCase, assembled: &Assembled) -> Judged {
    let all = witness_trace::evaluate(case, &assembled.trace);
    if assembled.ambiguous.is_empty() {
        return Judged {
            outcome: all.outcome,
            verdicts: all.verdicts,
        };
    }
    let none = witness_trace::evaluate(case, &assembled.without_ambiguous);
    let once = witness_trace::evaluate(case, &assembled.counted_once);
    let verdicts = all
        .verdicts
        .iter()
        .map(|verdict| {
            let pick = |e: &witness_trace::Evaluation| {
                e.verdicts
                    .iter()
                    .find(|v| v.check == verdict.check)
                    .cloned()
            };
            if PER_EFFECT.contains(&verdict.check) {
                return pick(&once).unwrap_or_else(|| verdict.clone());
            }
            if !PER_CALL.contains(&verdict.check) {
                return verdict.clone();
            }
            match pick(&none) {
                Some(other) if other.verdict != verdict.verdict => {
                    undecidable(verdict, &other, &assembled.ambiguous)
                }
                _ => verdict.clone(),
            }
        })
        .collect();
    Judged {
        outcome: all.outcome,
        verdicts,
    }
}

/// A verdict that changes with the attribution of ambiguous effects.
fn undecidable(
    charged: &CheckVerdict,
    uncharged: &CheckVerdict,
    ambiguous: &[AmbiguousEffects],
) -> CheckVerdict {
    let groups: Vec<String> = ambiguous
        .iter()
        .map(|a| {
            let calls: Vec<String> = a.calls.iter().map(u32::to_string).collect();
            format!("calls {} ({})", calls.join(" and "), a.effects.join(", "))
        })
        .collect();
    let mut evidence = charged.evidence.clone();
    for group in ambiguous {
        evidence.calls.extend(group.calls.iter().copied());
        evidence.objects.extend(group.effects.iter().cloned());
    }
    evidence.calls.sort_unstable();
    evidence.calls.dedup();
    evidence.objects.sort();
    evidence.objects.dedup();
    CheckVerdict {
        check: charged.check,
        verdict: Verdict::Untestable,
        detail: format!(
            "depends on which overlapping call made what: with the effects seen while {} charged to each call it is {} ({}); charged to none, {}",
            groups.join("; "),
            charged.verdict,
            witness_text::clip(&charged.detail, 200),
            uncharged.verdict
        ),
        evidence,
    }
}

#[cfg(test)]
mod tests;

/// What `trace check` was given.
pub struct CheckInput<'a> {
    /// The trace file's text and name (never its directory).
    pub trace: (&'a str, &'a str),
    pub case: Option<&'a GoldenCase>,
    /// The conversation's text, file name and format (`mcp-witness.conversation/v1`
    /// or the host transcript it was imported from), already in
    /// conversation lines.
    pub conversation: Option<(
        &'a [witness_model::proxy::ConversationLine],
        &'a str,
        &'a str,
    )>,
    pub generator: &'a str,
}

/// The case a trace is held to when none is given: nothing expected, no
/// budget; consent and say vs do still read the conversation.
pub fn no_case() -> GoldenCase {
    GoldenCase {
        id: "no-case".into(),
        title: "no golden case: only what any client is held to".into(),
        budget: u32::MAX,
        stores: Vec::new(),
        env: Default::default(),
        turns: Vec::new(),
        expect: Default::default(),
        facts: Vec::new(),
        scope: None,
        accountability: None,
        claims: None,
        judge: None,
    }
}

/// The trace-check document. Everything is read through one redactor that
/// first learns from the whole trace and conversation, as audits do.
pub fn document(
    input: &CheckInput<'_>,
) -> Result<witness_model::proxy::TraceCheckDocument, CheckError> {
    use witness_model::proxy::{
        CheckedCase, CheckedConversation, CheckedTrace, TRACE_CHECK_SCHEMA,
    };
    let mut redactor = witness_jail::redact::Redactor::default();
    let text = crate::record::redact_lines(input.trace.0, &mut redactor);
    let recorded = read_trace(&text)?;
    let conversation: Option<Vec<witness_model::proxy::ConversationLine>> =
        input.conversation.map(|(lines, _, _)| {
            let mut known = serde_json::to_value(lines).unwrap_or_default();
            redactor.learn(&known);
            known = redactor.value(&known);
            serde_json::from_value(known).unwrap_or_else(|_| lines.to_vec())
        });
    let assembled = assemble(&recorded, conversation.as_deref())?;
    let fallback = no_case();
    let case = input.case.unwrap_or(&fallback);
    let mut judged = judge(case, &assembled);
    unrecorded_facts(case, &recorded.header.facts, &mut judged.verdicts);
    let status = witness_trace::status(judged.outcome, &judged.verdicts);
    let exit_code = match status {
        witness_model::agent::RunStatus::Pass => 0,
        witness_model::agent::RunStatus::Fail => 1,
        witness_model::agent::RunStatus::Untestable => 3,
    };
    Ok(witness_model::proxy::TraceCheckDocument {
        schema: TRACE_CHECK_SCHEMA.into(),
        generator: input.generator.into(),
        source: CheckedTrace {
            file: input.trace.1.into(),
            lines: recorded.lines,
            host_transport: recorded.header.host_transport.clone(),
            server_transport: recorded.header.server.transport.clone(),
            live: recorded.header.live,
            ended: recorded.ended().map(str::to_owned),
            torn_last_line: recorded.torn,
        },
        case: input.case.map(|c| CheckedCase {
            id: c.id.clone(),
            title: c.title.clone(),
            budget: c.budget,
        }),
        conversation: input
            .conversation
            .map(|(_, file, format)| CheckedConversation {
                file: file.into(),
                format: format.into(),
                turns: assembled.turns,
            }),
        outcome: judged.outcome,
        status,
        verdicts: judged.verdicts,
        ambiguous: assembled.ambiguous.clone(),
        trace: assembled.trace,
        exit_code,
    })
}

/// A case reads row facts the proxy was not told to record: the checks that
/// compare them cannot be judged from this trace (a missing fact would
/// otherwise look like a missing audit row or a foreign tenant).
fn unrecorded_facts(
    case: &GoldenCase,
    recorded: &[witness_model::agent::case::FactsSpec],
    verdicts: &mut [CheckVerdict],
) {
    let missing: Vec<String> = case
        .facts
        .iter()
        .filter_map(|want| {
            let have = recorded
                .iter()
                .filter(|r| r.store == want.store && r.table == want.table)
                .flat_map(|r| r.columns.iter())
                .collect::<Vec<_>>();
            let absent: Vec<&str> = want
                .columns
                .iter()
                .filter(|c| !have.contains(c))
                .map(String::as_str)
                .collect();
            (!absent.is_empty())
                .then(|| format!("{}.{}: {}", want.store, want.table, absent.join(", ")))
        })
        .collect();
    if missing.is_empty() {
        return;
    }
    let reads = |check: AgentCheck| match check {
        AgentCheck::Scope => case.scope.as_ref().is_some_and(|s| s.column.is_some()),
        AgentCheck::Accountability => case
            .accountability
            .as_ref()
            .is_some_and(|a| a.tool_column.is_some() || a.arguments_column.is_some()),
        AgentCheck::SideEffects => case.expect.effects.iter().any(|e| !e.conditions.is_empty()),
        _ => false,
    };
    for verdict in verdicts.iter_mut().filter(|v| reads(v.check)) {
        if verdict.verdict == Verdict::Skip {
            continue;
        }
        verdict.verdict = Verdict::Untestable;
        verdict.detail = format!(
            "the trace holds no row facts for {}; record them with `proxy --facts-from CASES`",
            missing.join("; ")
        );
        verdict.evidence = Default::default();
    }
}

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
                e.verdicts.iter().find(|v| v.check == verdict.check).cloned()
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

//! EFF-06: a read-only tool mints no working credential, and a call that
//! claims to revoke one leaves it ineffective (no residual authority).

use std::collections::BTreeSet;

use witness_model::audit::{
    CallRecord, EvidenceEffect, Op, ProbeRecord, ProbeStatus, ToolEntry, Verdict,
};

use super::{Outcome, Subject, evidence_of};

/// Words by which a tool or its answer claims to take authority away. Used
/// only to read what a call *claims* (EFF-06), never to classify a tool.
const REVOKE_WORDS: [&str; 7] = [
    "revoke",
    "revoked",
    "delete",
    "deleted",
    "disable",
    "deactivate",
    "invalidate",
];

/// Objects whose most recent probe before call `before` found them effective.
fn effective_before(
    all: &[CallRecord],
    baseline: &[ProbeRecord],
    before: u32,
) -> BTreeSet<(String, String)> {
    let mut live = BTreeSet::new();
    let earlier = all
        .iter()
        .filter(|c| c.id < before)
        .map(|c| c.probes.as_slice());
    for probes in std::iter::once(baseline).chain(earlier) {
        for probe in probes {
            let key = (probe.store.clone(), probe.object.clone());
            if probe.status == ProbeStatus::Effective {
                live.insert(key);
            } else if probe.status == ProbeStatus::Ineffective {
                live.remove(&key);
            }
        }
    }
    live
}

/// What a tool's calls did to the credentials the probe covers, with the
/// probe lines that showed it.
#[derive(Default)]
struct Weighed {
    effective_mints: Vec<EvidenceEffect>,
    residual: Vec<EvidenceEffect>,
    neutralized: Vec<EvidenceEffect>,
    probes: Vec<String>,
}

/// Reads every probe of every call against the effect it probed.
fn weigh(subject: &Subject<'_>) -> Weighed {
    let mut weighed = Weighed::default();
    for call in &subject.calls {
        let claims_revoke = claims_revocation(subject.tool, call);
        let live_before = effective_before(subject.all, subject.baseline, call.id);
        for probe in &call.probes {
            let Some(effect) = call
                .effects
                .iter()
                .find(|e| e.store == probe.store && e.object == probe.object)
            else {
                continue;
            };
            let item = EvidenceEffect {
                call: call.id,
                object: effect.qualified(),
                op: effect.op,
            };
            let line = format!(
                "call {} {}: {} — {}",
                call.id,
                effect.qualified(),
                probe.status.as_str(),
                probe.basis
            );
            // Only what was authority before the call can have been taken away.
            let was_live = live_before.contains(&(probe.store.clone(), probe.object.clone()));
            let list = match (effect.op, probe.status) {
                (Op::Create, ProbeStatus::Effective) => &mut weighed.effective_mints,
                (Op::Update | Op::Delete, ProbeStatus::Effective) if claims_revoke && was_live => {
                    &mut weighed.residual
                }
                (Op::Update | Op::Delete, ProbeStatus::Ineffective)
                    if claims_revoke && was_live =>
                {
                    &mut weighed.neutralized
                }
                _ => continue,
            };
            list.push(item);
            weighed.probes.push(line);
        }
    }
    weighed
}

/// EFF-06: authority minted or revoked is accounted for.
pub(super) fn accounted(subject: &Subject<'_>) -> Outcome {
    let calls = subject.calls.as_slice();
    if !subject.probe_active {
        return (
            Verdict::Skip,
            "no probe can exercise this server's credentials (NullProbe): authority is unknown"
                .into(),
            evidence_of(calls, vec![]),
        );
    }
    let Weighed {
        effective_mints,
        residual,
        neutralized,
        probes,
    } = weigh(subject);
    // Each verdict below returns: the probe lines go to exactly one.
    let with_probes = |effects: Vec<EvidenceEffect>| {
        let mut e = evidence_of(calls, effects);
        e.probes = probes;
        e
    };
    if subject.tool.hints.read_only == Some(true) && !effective_mints.is_empty() {
        return (
            Verdict::Fail,
            format!(
                "declared read-only, but it created {} credential(s) the server's rule accepts",
                effective_mints.len()
            ),
            with_probes(effective_mints),
        );
    }
    if !residual.is_empty() {
        return (
            Verdict::Fail,
            "claims to revoke or delete a credential, but the probe finds it still effective (residual authority)".into(),
            with_probes(residual),
        );
    }
    if !neutralized.is_empty() {
        return (
            Verdict::Pass,
            "the credential it revoked or deleted is no longer accepted".into(),
            with_probes(neutralized),
        );
    }
    if !effective_mints.is_empty() {
        return (
            Verdict::Pass,
            "the credentials it minted are accounted for: the tool is not declared read-only"
                .into(),
            with_probes(effective_mints),
        );
    }
    (
        Verdict::Skip,
        "no call created or revoked a credential the probe covers".into(),
        evidence_of(calls, vec![]),
    )
}

/// A call claims to take authority away when the tool is declared destructive
/// and its name, description or answer says so.
fn claims_revocation(tool: &ToolEntry, call: &CallRecord) -> bool {
    if tool.hints.read_only == Some(true) || tool.hints.destructive == Some(false) {
        return false;
    }
    let mut text = tool.name.to_ascii_lowercase();
    if let Some(d) = &tool.description {
        text.push(' ');
        text.push_str(&d.to_ascii_lowercase());
    }
    if let Some(r) = &call.response {
        text.push(' ');
        text.push_str(&r.to_string().to_ascii_lowercase());
    }
    REVOKE_WORDS.iter().any(|w| text.contains(w))
}

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

/// What in a SQL statement takes authority away: read from a call's
/// arguments, and only for the probes that name whose authority they
/// exercised (a role's login, a role's grant on a table).
const SQL_REVOKE_WORDS: [&str; 6] = [
    "revoke",
    "drop role",
    "drop user",
    "nologin",
    "valid until",
    "password null",
];

/// `(store, object, subject)`: whose authority over what.
type Holder = (String, String, Option<String>);

fn holder(probe: &ProbeRecord) -> Holder {
    (
        probe.store.clone(),
        probe.object.clone(),
        probe.subject.clone(),
    )
}

/// Objects (and holders) whose most recent probe before call `before`
/// found them effective.
fn effective_before(all: &[CallRecord], baseline: &[ProbeRecord], before: u32) -> BTreeSet<Holder> {
    let mut live = BTreeSet::new();
    let earlier = all
        .iter()
        .filter(|c| c.id < before)
        .map(|c| c.probes.as_slice());
    for probes in std::iter::once(baseline).chain(earlier) {
        for probe in probes {
            let key = holder(probe);
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
        let claims_in_sql = claims_revoke || revokes_in_arguments(subject.tool, call);
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
            // Only what was authority before the call can have been taken
            // away: this holder's, or the object's as a whole.
            let key = holder(probe);
            let whole = (probe.store.clone(), probe.object.clone(), None);
            let held = live_before.contains(&key);
            let was_live = held || live_before.contains(&whole);
            // A probe that names its holder (a role, a grantee) can show
            // authority minted by an update too: a password set, a grant
            // added. Without one, an update is never a mint.
            let named = probe.subject.is_some();
            let claims_revoke = if named { claims_in_sql } else { claims_revoke };
            let list = match (effect.op, probe.status) {
                (Op::Create, ProbeStatus::Effective) => &mut weighed.effective_mints,
                (Op::Update, ProbeStatus::Effective) if named && !held && !claims_revoke => {
                    &mut weighed.effective_mints
                }
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
        let reason = if minted_by_update(subject, &effective_mints) {
            format!(
                "declared read-only, but it minted authority the probe could use ({} login(s) or grant(s))",
                effective_mints.len()
            )
        } else {
            format!(
                "declared read-only, but it created {} credential(s) the server's rule accepts",
                effective_mints.len()
            )
        };
        return (Verdict::Fail, reason, with_probes(effective_mints));
    }
    if !residual.is_empty() {
        let reason = if names_holders(subject) {
            "revokes authority (REVOKE, DROP ROLE, NOLOGIN), but the probe finds its holder still effective (residual authority)"
        } else {
            "claims to revoke or delete a credential, but the probe finds it still effective (residual authority)"
        };
        return (Verdict::Fail, reason.into(), with_probes(residual));
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

/// Whether some of the mints are updates (a grant added to a table, a
/// password set on a role) rather than objects created.
fn minted_by_update(subject: &Subject<'_>, mints: &[EvidenceEffect]) -> bool {
    mints.iter().any(|m| m.op == Op::Update) || names_holders(subject)
}

/// Whether the probe named whose authority it exercised (a SQL store's
/// roles and grants), so the reason speaks of holders, not credentials.
fn names_holders(subject: &Subject<'_>) -> bool {
    subject
        .calls
        .iter()
        .flat_map(|c| &c.probes)
        .any(|p| p.subject.is_some())
}

/// A call whose arguments take authority away in SQL (`REVOKE`, `DROP
/// ROLE`, `NOLOGIN`) on a tool not declared harmless: the claim a SQL
/// tool makes is its statement, not its name.
fn revokes_in_arguments(tool: &ToolEntry, call: &CallRecord) -> bool {
    if tool.hints.read_only == Some(true) || tool.hints.destructive == Some(false) {
        return false;
    }
    call.arguments.iter().any(|a| {
        let text = a.value.to_string().to_ascii_lowercase();
        SQL_REVOKE_WORDS.iter().any(|w| text.contains(w))
    })
}

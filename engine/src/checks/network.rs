//! EFF-04: a tool that declares a closed world (`openWorldHint: false`)
//! reached for nothing outside the jail — held to the outbound attempts
//! the network observer's sink recorded during its calls.

use witness_model::audit::{CallRecord, EvidenceNetwork, Verdict};

use super::{Outcome, Subject, evidence_of, unexercised};

/// Every attempt the calls made, as evidence.
fn attempts(calls: &[&CallRecord]) -> Vec<EvidenceNetwork> {
    calls
        .iter()
        .flat_map(|c| {
            c.network.iter().map(|a| EvidenceNetwork {
                call: c.id,
                destination: a.destination(),
            })
        })
        .collect()
}

/// The distinct places the calls reached for, connections and datagrams
/// before lookups, at most three named.
fn where_to(calls: &[&CallRecord]) -> String {
    let mut places: Vec<(bool, String)> = calls
        .iter()
        .flat_map(|c| &c.network)
        .map(|a| (a.protocol == "dns", a.destination()))
        .collect();
    places.sort();
    places.dedup();
    let named: Vec<&str> = places.iter().take(3).map(|(_, d)| d.as_str()).collect();
    let more = places.len().saturating_sub(named.len());
    if more > 0 {
        format!("{} and {more} more", named.join(", "))
    } else {
        named.join(", ")
    }
}

/// EFF-04: declared closed world, and no outbound attempt was recorded.
/// An open or undeclared world is not held to it: its attempts are in the
/// ledger, and here as evidence, but are no failure.
pub(super) fn closed_world(subject: &Subject<'_>) -> Outcome {
    let (tool, calls) = (subject.tool, subject.calls.as_slice());
    let reached = attempts(calls);
    let mut evidence = evidence_of(calls, vec![]);
    if tool.hints.open_world != Some(false) {
        let basis = if tool.hints.open_world == Some(true) {
            "declared openWorldHint: true"
        } else {
            "openWorldHint not declared (the specification's default is an open world)"
        };
        let reason = if reached.is_empty() {
            format!("{basis}; nothing to verify")
        } else {
            format!(
                "{basis}; {} outbound attempt(s) recorded, not judged",
                reached.len()
            )
        };
        evidence.network = reached;
        return (Verdict::Skip, reason, evidence);
    }
    if let Some(why) = subject.network_unobserved {
        return (
            Verdict::Untestable,
            format!("declared openWorldHint: false, but {why}"),
            evidence,
        );
    }
    if !reached.is_empty() {
        let reason = format!(
            "declared openWorldHint: false, but its calls made {} outbound attempt(s): {}",
            reached.len(),
            where_to(calls)
        );
        evidence.network = reached;
        return (Verdict::Fail, reason, evidence);
    }
    if let Some((verdict, reason)) = unexercised(calls) {
        return (verdict, reason, evidence);
    }
    (
        Verdict::Pass,
        format!(
            "declared openWorldHint: false and no outbound attempt was recorded over {} call(s)",
            calls.len()
        ),
        evidence,
    )
}

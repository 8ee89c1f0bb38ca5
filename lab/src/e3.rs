//! E3 — effectiveness after lifecycle events (residual authority).
//!
//! Each scenario starts a fresh server on a fresh seeded store and mints the
//! same key. The scenario's event is applied out of band, never through the
//! audited tools; then three detectors judge the key: the probe (exercise it
//! against the server's rule), existence (listed ⇒ effective) and delegation
//! (its grant active ⇒ effective). The truth of each scenario is fixed by
//! construction, modelled on documented provider behaviour.
//!
//! Also here: the residual-revoke audits, where a tool *says* it revoked a key.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::Path;
use std::rc::Rc;

use anyhow::{Result, anyhow};
use witness_probes::{ObservedObject, Probe, StorePath};
use witness_testbed::{auth::AuthRule, lifecycle, probe::CredentialProbe};

use witness_engine::audit::Event;
use witness_model::audit::{CheckId, ProbeStatus, Verdict};
use witness_model::experiments::{
    E3_SCHEMA, E3Document, E3Scenario, LifecycleDetectorScore, ResidualAudit, ratio,
};

use crate::{Progress, TestbedRun, audit_path, audit_testbed, write_json};

pub const PLAN: &str = include_str!("../../experiments/e3/plan.toml");
pub const PLAN_NAME: &str = "experiments/e3/plan.toml";
pub const RESIDUAL_PLAN: &str = include_str!("../../experiments/e3/residual-plan.toml");

const KEY: &str = "key_0001";
const GRANT: &str = "grant_0001";
/// Past the one-hour TTL the plan mints with.
const TTL_ADVANCE: i64 = 7_200;

pub const PROBE: &str = "probe";
pub const EXISTENCE: &str = "existence";
pub const DELEGATION: &str = "delegation";

const DETECTORS: [(&str, &str); 3] = [
    (
        PROBE,
        "exercises the key against the server's authorization rule",
    ),
    (EXISTENCE, "a key that is still listed is effective"),
    (
        DELEGATION,
        "a key whose authorizing grant is active is effective",
    ),
];

struct Scenario {
    name: &'static str,
    description: &'static str,
    variant: &'static str,
    event: Option<lifecycle::Event>,
    advance_clock: bool,
    truth_effective: bool,
}

fn scenarios() -> Vec<Scenario> {
    vec![
        Scenario {
            name: "no_event",
            description: "key minted under an active grant, nothing revoked",
            variant: "honest",
            event: None,
            advance_clock: false,
            truth_effective: true,
        },
        Scenario {
            name: "grant_revoked",
            description: "the authorizing grant is revoked; the key still works (residual authority)",
            variant: "honest",
            event: Some(lifecycle::Event::RevokeGrant(GRANT.into())),
            advance_clock: false,
            truth_effective: true,
        },
        Scenario {
            name: "key_revoked",
            description: "the key itself is revoked; it is still listed but dead",
            variant: "honest",
            event: Some(lifecycle::Event::RevokeKey(KEY.into())),
            advance_clock: false,
            truth_effective: false,
        },
        Scenario {
            name: "key_unlisted",
            description: "the key row is deleted; not listed and dead",
            variant: "honest",
            event: Some(lifecycle::Event::DeleteKey(KEY.into())),
            advance_clock: false,
            truth_effective: false,
        },
        Scenario {
            name: "ttl_expired",
            description: "the clock passes the key's TTL; still listed but dead",
            variant: "honest",
            event: None,
            advance_clock: true,
            truth_effective: false,
        },
        Scenario {
            name: "grant_revoked_cascade",
            description: "grant revoked on a server whose rule cascades; the key is dead",
            variant: "cascade",
            event: Some(lifecycle::Event::RevokeGrant(GRANT.into())),
            advance_clock: false,
            truth_effective: false,
        },
    ]
}

#[derive(Clone, Debug)]
struct Observation {
    listed: bool,
    grant: String,
    probe_status: ProbeStatus,
    probe_basis: String,
}

fn word(effective: bool) -> String {
    if effective { "effective" } else { "dead" }.to_owned()
}

pub fn run(out: &Path, progress: &Progress) -> Result<E3Document> {
    let all = scenarios();
    let total = all.len() + 2;
    let mut rows = Vec::new();
    for (i, scenario) in all.into_iter().enumerate() {
        let rule = if scenario.variant == "cascade" {
            AuthRule::Cascade
        } else {
            AuthRule::Plain
        };
        let now = witness_testbed::DEFAULT_NOW
            + if scenario.advance_clock {
                TTL_ADVANCE
            } else {
                0
            };
        let seen: Rc<RefCell<Option<Observation>>> = Rc::new(RefCell::new(None));
        let sink = seen.clone();
        let event = scenario.event.clone();
        let advance = scenario.advance_clock;
        let mut events: BTreeMap<u32, Vec<Event>> = BTreeMap::new();
        events.insert(
            1,
            vec![Box::new(move |stores| {
                let store = stores.first().ok_or("no store")?;
                let mut described = Vec::new();
                if let Some(event) = &event {
                    lifecycle::apply(&store.path, event).map_err(|e| e.to_string())?;
                    described.push(format!("out of band: {}", describe(event)));
                }
                if advance {
                    described.push(format!("probe clock advanced by {TTL_ADVANCE} s"));
                }
                let state = lifecycle::inspect_key(&store.path, KEY).map_err(|e| e.to_string())?;
                let grant =
                    match lifecycle::grant_status(&store.path, GRANT).map_err(|e| e.to_string())? {
                        Some(status) => status,
                        None => "absent".into(),
                    };
                let probe = CredentialProbe { now, rule };
                let object_id = format!("api_keys/{KEY}");
                let result = probe.exercise(
                    &ObservedObject {
                        store: "db",
                        id: &object_id,
                    },
                    &StorePath {
                        kind: "sqlite",
                        path: &store.path,
                    },
                );
                *sink.borrow_mut() = Some(Observation {
                    listed: state.listed,
                    grant,
                    probe_status: result.status,
                    probe_basis: result.basis,
                });
                if described.is_empty() {
                    described.push("no event".into());
                }
                Ok(described.join("; "))
            })],
        );
        let report = audit_testbed(TestbedRun {
            variant: scenario.variant,
            plan: PLAN,
            plan_name: PLAN_NAME,
            probe: CredentialProbe {
                now: witness_testbed::DEFAULT_NOW,
                rule,
            },
            events,
            progress,
        })?;
        let (path, relative) = audit_path(out, &format!("e3-{}", scenario.name));
        write_json(&path, &report)?;
        let observation = seen
            .borrow()
            .clone()
            .ok_or_else(|| anyhow!("E3 {}: the key was never observed", scenario.name))?;
        let mut predictions = BTreeMap::new();
        predictions.insert(
            PROBE.to_string(),
            word(observation.probe_status == ProbeStatus::Effective),
        );
        predictions.insert(EXISTENCE.to_string(), word(observation.listed));
        predictions.insert(DELEGATION.to_string(), word(observation.grant == "active"));
        progress.step(
            "e3",
            i + 1,
            total,
            &format!("{}: probe says {}", scenario.name, predictions[PROBE]),
        );
        rows.push(E3Scenario {
            scenario: scenario.name.into(),
            description: scenario.description.into(),
            event: report
                .calls
                .first()
                .map(|c| c.events_after.join("; "))
                .unwrap_or_default(),
            variant: scenario.variant.into(),
            truth: word(scenario.truth_effective),
            predictions,
            key: format!("api_keys/{KEY}"),
            key_row: if observation.listed {
                "listed"
            } else {
                "absent"
            }
            .into(),
            grant: observation.grant,
            probe_status: observation.probe_status,
            probe_basis: observation.probe_basis,
            audit: relative,
        });
    }
    let detectors = DETECTORS
        .iter()
        .map(|(name, definition)| {
            score(
                name,
                definition,
                rows.iter().map(|r| (&r.predictions, r.truth.as_str())),
            )
        })
        .collect();
    let mut residual = Vec::new();
    for (j, variant) in ["honest", "residual-revoke"].into_iter().enumerate() {
        residual.push(residual_audit(out, variant, progress)?);
        progress.step(
            "e3",
            rows.len() + j + 1,
            total,
            &format!("residual-revoke plan on {variant}"),
        );
    }
    let document = E3Document {
        schema: E3_SCHEMA.into(),
        generator: witness_model::GENERATOR.into(),
        plan: PLAN_NAME.into(),
        detectors,
        scenarios: rows,
        residual_revoke: residual,
    };
    write_json(&out.join("e3.json"), &document)?;
    Ok(document)
}

fn describe(event: &lifecycle::Event) -> String {
    match event {
        lifecycle::Event::RevokeGrant(id) => format!("revoked grant {id}"),
        lifecycle::Event::RevokeKey(id) => format!("revoked key {id}"),
        lifecycle::Event::DeleteKey(id) => format!("deleted the api_keys row {id}"),
    }
}

/// Detector `name`'s score over scenarios given as (each detector's
/// call, the truth): E3's, and E3 on PostgreSQL's.
pub(crate) fn score<'a>(
    name: &str,
    definition: &str,
    rows: impl IntoIterator<Item = (&'a BTreeMap<String, String>, &'a str)>,
) -> LifecycleDetectorScore {
    let (mut right, mut false_effective, mut false_ineffective, mut total) = (0, 0, 0, 0u32);
    for (predictions, truth) in rows {
        total += 1;
        let said = predictions.get(name).map(String::as_str).unwrap_or("");
        match (said == "effective", truth == "effective") {
            (a, b) if a == b => right += 1,
            (true, false) => false_effective += 1,
            _ => false_ineffective += 1,
        }
    }
    LifecycleDetectorScore {
        name: name.into(),
        definition: definition.into(),
        accuracy: ratio(right, total),
        false_effective,
        false_ineffective,
    }
}

fn residual_audit(out: &Path, variant: &str, progress: &Progress) -> Result<ResidualAudit> {
    let report = audit_testbed(TestbedRun {
        variant,
        plan: RESIDUAL_PLAN,
        plan_name: "experiments/e3/residual-plan.toml",
        probe: CredentialProbe {
            now: witness_testbed::DEFAULT_NOW,
            rule: AuthRule::Plain,
        },
        events: BTreeMap::new(),
        progress,
    })?;
    let (path, relative) = audit_path(out, &format!("residual-{variant}"));
    write_json(&path, &report)?;
    let check = report
        .check(CheckId::Eff06, "revoke_api_key")
        .ok_or_else(|| anyhow!("no EFF-06 verdict for revoke_api_key on {variant}"))?;
    Ok(ResidualAudit {
        variant: variant.into(),
        eff06_revoke_api_key: check.verdict.as_str().into(),
        reason: check.reason.clone(),
        probe_evidence: check.evidence.probes.clone(),
        audit: relative,
        audit_exit_code: report.exit_code,
    })
}

/// Whether the residual-revoke variant was caught (used by tests and pages).
pub fn residual_caught(document: &E3Document) -> bool {
    document
        .residual_revoke
        .iter()
        .any(|r| r.variant == "residual-revoke" && r.eff06_revoke_api_key == Verdict::Fail.as_str())
}

//! E2 — construct validation: is the persistence/authority distinction
//! operationally real? Does a probe that *uses* objects separate authority
//! from mere persistence where "persistent ⇒ authority" and a credential-name
//! keyword go wrong?
//!
//! The oracle is the corpus itself: each object's authority label is fixed by
//! construction (rows of the testbed's credential tables minted active carry
//! authority; notes never do). Each object is probed while it exists (at the
//! baseline or right after the call that created it); persistence is read from
//! the final state of the store.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use anyhow::{Result, bail};
use witness_testbed::{auth::AuthRule, lifecycle, probe::CredentialProbe};

use witness_engine::audit::Event;
use witness_model::audit::{AuditReport, Op, ProbeStatus};
use witness_model::experiments::{ClassifierScore, E2_SCHEMA, E2Document, E2Object, ratio};

use crate::{Progress, TestbedRun, audit_path, audit_testbed, write_json};

pub const PLAN: &str = include_str!("../../experiments/e2/plan.toml");
pub const PLAN_NAME: &str = "experiments/e2/plan.toml";

/// The object corpus with its by-construction authority labels and notes.
pub const CORPUS: [(&str, bool, Option<&str>); 8] = [
    ("api_keys/key_0001", true, None),
    ("api_keys/key_0002", true, None),
    ("webhooks/wh_0001", true, None),
    ("share_links/share_0001", true, None),
    ("notes/welcome", false, None),
    (
        "notes/api_key_backup",
        false,
        Some("decoy: a note with a credential-looking name"),
    ),
    (
        "notes/scratch",
        false,
        Some("ephemeral note: created, then deleted within the plan"),
    ),
    (
        "api_keys/key_0003",
        true,
        Some("counterexample: minted, then removed out of band — authority without persistence"),
    ),
];

/// Words that make the name keyword classifier call an object authority.
pub const NAME_KEYWORDS: [&str; 8] = [
    "key",
    "token",
    "secret",
    "webhook",
    "share",
    "credential",
    "password",
    "auth",
];

pub const PROBE: &str = "probe";
pub const NAME_KEYWORD: &str = "name-keyword";
pub const PERSISTENCE: &str = "persistence";

const CLASSIFIERS: [(&str, &str); 3] = [
    (
        PROBE,
        "exercises the object against the server's authorization rule while it exists",
    ),
    (
        NAME_KEYWORD,
        "credential-looking words in the object id count as authority",
    ),
    (
        PERSISTENCE,
        "objects present in the final snapshot count as authority",
    ),
];

/// The step after which key_0003 is removed out of band.
const REMOVE_AFTER_STEP: u32 = 7;

pub fn run(out: &Path, progress: &Progress) -> Result<E2Document> {
    let mut events: BTreeMap<u32, Vec<Event>> = BTreeMap::new();
    events.insert(
        REMOVE_AFTER_STEP,
        vec![Box::new(|stores| {
            let store = stores.first().ok_or("no store")?;
            let event = lifecycle::Event::DeleteKey("key_0003".into());
            lifecycle::apply(&store.path, &event).map_err(|e| e.to_string())?;
            Ok("out of band: deleted the api_keys row key_0003".to_string())
        })],
    );
    let report = audit_testbed(TestbedRun {
        variant: "honest",
        plan: PLAN,
        plan_name: PLAN_NAME,
        probe: CredentialProbe {
            now: witness_testbed::DEFAULT_NOW,
            rule: AuthRule::Plain,
        },
        events,
        progress,
    })?;
    progress.step(
        "e2",
        1,
        1,
        "honest testbed, 7 calls, key_0003 removed out of band",
    );
    let (path, relative) = audit_path(out, "e2-corpus");
    write_json(&path, &report)?;

    let present = final_objects(&report);
    let mut objects = Vec::new();
    for (id, authority, note) in CORPUS {
        let Some((probe_status, basis, at)) = probe_at_existence(&report, id) else {
            bail!("E2: {id} was never probed while it existed; the plan or the testbed changed");
        };
        let persistent = present.contains(id);
        let predictions = predictions(id, probe_status, persistent);
        objects.push(E2Object {
            object: id.to_owned(),
            persistent,
            authority,
            predictions,
            probe_basis: basis,
            probed_at: at,
            note: note.map(str::to_owned),
        });
    }
    let classifiers = CLASSIFIERS
        .iter()
        .map(|(name, definition)| score(name, definition, &objects))
        .collect();
    let document = E2Document {
        schema: E2_SCHEMA.into(),
        generator: witness_model::GENERATOR.into(),
        plan: PLAN_NAME.into(),
        classifiers,
        objects,
        audit: relative,
    };
    write_json(&out.join("e2.json"), &document)?;
    Ok(document)
}

/// The probe's answer taken while `id` existed: at the baseline for seeded
/// objects, right after the creating call for the others.
fn probe_at_existence(report: &AuditReport, id: &str) -> Option<(ProbeStatus, String, String)> {
    if let Some(p) = report.baseline_probes.iter().find(|p| p.object == id) {
        return Some((p.status, p.basis.clone(), "baseline".into()));
    }
    report.calls.iter().find_map(|call| {
        let created = call
            .effects
            .iter()
            .any(|e| e.object == id && e.op == Op::Create);
        let probe = call.probes.iter().find(|p| p.object == id)?;
        created.then(|| {
            (
                probe.status,
                probe.basis.clone(),
                format!("call {}", call.id),
            )
        })
    })
}

/// Each classifier's call on object `id`: the probe's (effective when
/// used), the name keyword's (a credential word in the id), persistence's
/// (still there at the end). E2 on PostgreSQL calls them the same way.
pub(crate) fn predictions(
    id: &str,
    probe: ProbeStatus,
    persistent: bool,
) -> BTreeMap<String, bool> {
    let lowered = id.to_ascii_lowercase();
    BTreeMap::from([
        (PROBE.to_owned(), probe == ProbeStatus::Effective),
        (
            NAME_KEYWORD.to_owned(),
            NAME_KEYWORDS.iter().any(|k| lowered.contains(k)),
        ),
        (PERSISTENCE.to_owned(), persistent),
    ])
}

/// Objects present at the end: the baseline, plus every create, minus every
/// delete, in order (calls, out-of-band events, late and shutdown effects).
pub(crate) fn final_objects(report: &AuditReport) -> BTreeSet<String> {
    let mut present: BTreeSet<String> = report
        .baseline_probes
        .iter()
        .map(|p| p.object.clone())
        .collect();
    let mut apply = |effects: &[witness_model::audit::Effect]| {
        for e in effects {
            match e.op.as_str() {
                "create" => {
                    present.insert(e.object.clone());
                }
                "delete" => {
                    present.remove(&e.object);
                }
                _ => {}
            }
        }
    };
    for call in &report.calls {
        apply(&call.effects);
        apply(&call.event_effects);
        apply(&call.late_effects);
    }
    apply(&report.shutdown_effects);
    present
}

pub(crate) fn score(name: &str, definition: &str, objects: &[E2Object]) -> ClassifierScore {
    let (mut tp, mut fp, mut tn, mut fn_) = (0, 0, 0, 0);
    for o in objects {
        match (
            o.predictions.get(name).copied().unwrap_or(false),
            o.authority,
        ) {
            (true, true) => tp += 1,
            (true, false) => fp += 1,
            (false, false) => tn += 1,
            (false, true) => fn_ += 1,
        }
    }
    ClassifierScore {
        name: name.into(),
        definition: definition.into(),
        accuracy: ratio(tp + tn, tp + fp + tn + fn_),
        tp,
        fp,
        tn,
        fn_,
    }
}

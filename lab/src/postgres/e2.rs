//! E2 on PostgreSQL: is the persistence/authority distinction real on a
//! real authorization system? The corpus is minted through dbhub's
//! `execute_sql` (experiments/e2-postgres/plan.toml); each object is
//! classified by the PostgreSQL probe while it is what the corpus says (at
//! the call that made it), by "persistent ⇒ authority" from the final
//! state, and by the name keyword of E2.

use std::collections::BTreeMap;
use std::path::Path;

use witness_engine::audit::Event;
use witness_engine::plan::Plan;
use witness_model::audit::{AuditReport, Op, ProbeStatus};
use witness_model::experiments::{E2_POSTGRES_SCHEMA, E2Object, PostgresE2Document};
use witness_probes::{ObservedObject, Probe};

use super::{PACKAGE, PostgresLabError, TOOL, VERSION, audit_dbhub, fail, superuser};
use crate::e2::{NAME_KEYWORD, PERSISTENCE, PROBE, final_objects, predictions, score};
use crate::{Progress, audit_path, write_json_file};

pub const PLAN: &str = include_str!("../../../experiments/e2-postgres/plan.toml");
pub const PLAN_NAME: &str = "experiments/e2-postgres/plan.toml";
pub const SEED: &str = include_str!("../../../experiments/e2-postgres/seed.sql");
pub const SEED_NAME: &str = "experiments/e2-postgres/seed.sql";

/// The corpus with its by-construction labels (authority while the object
/// exists) and notes; the plan's header says the same.
pub const CORPUS: [(&str, bool, Option<&str>); 7] = [
    (
        "catalog/role:alice",
        true,
        Some("a login role, created with a password"),
    ),
    (
        "catalog/table:public.orders",
        true,
        Some("a grant: SELECT on orders to alice"),
    ),
    (
        "catalog/role:ghost",
        false,
        Some("a role without LOGIN: persistent and powerless"),
    ),
    (
        "catalog/table:public.api_keys",
        false,
        Some("decoy: a table of \"keys\" nobody but its owner may use"),
    ),
    (
        "public.api_keys/1",
        false,
        Some("decoy: a row of \"keys\" the cluster never consults"),
    ),
    (
        "catalog/role:temp",
        true,
        Some("a login role created and dropped within the plan"),
    ),
    (
        "public.credential_audit/1",
        true,
        Some(
            "counterexample: carol's working password as the server's audit table recorded it; the row deleted out of band, the password still works",
        ),
    ),
];

/// The classifiers: the probe on PostgreSQL itself, the two baselines
/// exactly as in E2.
const CLASSIFIERS: [(&str, &str); 3] = [
    (
        PROBE,
        "exercises the object on the cluster itself when it was made: a login with the password a call carried or the row holds, SET ROLE and the granted action",
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

/// The call after which the audit row is deleted out of band.
const DELETE_AFTER_CALL: u32 = 9;

pub fn run(
    dir: &Path,
    out: &Path,
    progress: &Progress,
) -> Result<PostgresE2Document, PostgresLabError> {
    let fail = fail("E2 on PostgreSQL");
    let plan = Plan::parse(PLAN).map_err(|e| fail(format!("{PLAN_NAME} is invalid: {e}")))?;
    let calls = plan.steps.len();
    let mut events: BTreeMap<u32, Vec<Event>> = BTreeMap::new();
    events.insert(
        DELETE_AFTER_CALL,
        vec![Box::new(|stores| {
            let mut admin = superuser(stores)?;
            admin
                .query("DELETE FROM credential_audit WHERE id = 1")
                .map_err(|e| format!("cannot delete the audit row: {e}"))?;
            Ok("out of band, as the superuser: DELETE FROM credential_audit WHERE id = 1".into())
        })],
    );
    progress.report(crate::progress::Event::Published {
        experiment: "e2-postgres",
        name: "corpus",
        package: PACKAGE,
        version: VERSION,
    });
    let report = audit_dbhub(
        dir,
        "E2 on PostgreSQL",
        (SEED_NAME, SEED),
        plan,
        format!("E2 on PostgreSQL: {PACKAGE}@{VERSION} {TOOL}"),
        events,
        progress,
    )?;
    progress.step(
        "e2-postgres",
        1,
        1,
        &format!("{calls} calls through {TOOL}, the audit row deleted out of band"),
    );
    let (path, relative) = audit_path(out, "e2-postgres-corpus");
    write(&path, &report)?;

    let probe = witness_postgres::PostgresProbe::new();
    let present = final_objects(&report);
    let mut objects = Vec::new();
    for (id, authority, note) in CORPUS {
        let (status, basis, at) = match probe_when_made(&report, id) {
            Some(found) => found,
            // What the probe does not cover it does not call authority;
            // the corpus has no such object, and a change that made one
            // so would show here rather than be skipped.
            None if !probe.covers(&ObservedObject { store: "db", id }) => (
                ProbeStatus::Unknown,
                "not exercised: the probe covers roles, relations and rows".into(),
                "never".into(),
            ),
            None => {
                return Err(fail(format!(
                    "{id} was never probed while it existed; the plan, the server or the observer changed"
                )));
            }
        };
        let persistent = present.contains(id);
        let predictions = predictions(id, status, persistent);
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
    let document = PostgresE2Document {
        schema: E2_POSTGRES_SCHEMA.into(),
        generator: witness_model::GENERATOR.into(),
        server: format!("{PACKAGE}@{VERSION}"),
        tool: TOOL.into(),
        plan: PLAN_NAME.into(),
        seed: SEED_NAME.into(),
        classifiers,
        objects,
        audit: relative,
    };
    write(&out.join("e2-postgres.json"), &document)?;
    Ok(document)
}

fn write(path: &Path, value: &impl serde::Serialize) -> Result<(), PostgresLabError> {
    write_json_file(path, value).map_err(|e| PostgresLabError::Run {
        experiment: "E2 on PostgreSQL",
        message: format!("cannot write {}: {e}", path.display()),
    })
}

/// The probe's answer at the first call that created or changed `id` (a
/// grant changes its relation), else at the baseline.
fn probe_when_made(report: &AuditReport, id: &str) -> Option<(ProbeStatus, String, String)> {
    let made = report.calls.iter().find_map(|call| {
        let touched = call
            .effects
            .iter()
            .any(|e| e.object == id && (e.op == Op::Create || e.op == Op::Update));
        let probe = call.probes.iter().find(|p| p.object == id)?;
        touched.then(|| {
            (
                probe.status,
                probe.basis.clone(),
                format!("call {}", call.id),
            )
        })
    });
    made.or_else(|| {
        report
            .baseline_probes
            .iter()
            .find(|p| p.object == id)
            .map(|p| (p.status, p.basis.clone(), "baseline".into()))
    })
}

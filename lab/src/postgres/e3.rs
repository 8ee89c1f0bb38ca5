//! E3 on PostgreSQL: is a role still able to read after a lifecycle event?
//!
//! Each scenario audits dbhub's `execute_sql` on a fresh cluster with the
//! same four calls (experiments/e3-postgres/plan.toml: alice and bob may
//! log in and read `orders`; alice is also a member of `reader`, which
//! reads it too). After the last call the lab applies the scenario's event
//! out of band, as the cluster's superuser through its own client, then
//! judges the scenario's role three ways:
//!
//! - the probe: a login as the role with the password its call carried,
//!   and `SET ROLE` with a `SELECT` on `orders` rolled back; effective
//!   when both succeed;
//! - existence: the role is still in `pg_roles`;
//! - delegation: the role's own entry in the ACL of `orders` still grants
//!   `SELECT` (what a reader of the grants, not of the memberships, sees).
//!
//! The truth of each scenario is fixed by construction, from PostgreSQL's
//! documented rules (a privilege is held through membership; `NOLOGIN`
//! and a past `VALID UNTIL` refuse a session; a dropped role is nothing).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::Path;
use std::rc::Rc;

use witness_engine::audit::Event;
use witness_engine::plan::Plan;
use witness_jail::JailedStore;
use witness_model::audit::ProbeStatus;
use witness_model::experiments::{E3_POSTGRES_SCHEMA, PostgresE3Document, PostgresE3Scenario};
use witness_probes::{ObservedObject, Probe, StorePath};

use super::{PACKAGE, PostgresLabError, TOOL, VERSION, audit_dbhub, fail, statements, superuser};
use crate::e3::{DELEGATION, EXISTENCE, PROBE, score};
use crate::{Progress, audit_path, write_json_file};

pub const PLAN: &str = include_str!("../../../experiments/e3-postgres/plan.toml");
pub const PLAN_NAME: &str = "experiments/e3-postgres/plan.toml";
pub const SEED: &str = include_str!("../../../experiments/e3-postgres/seed.sql");
pub const SEED_NAME: &str = "experiments/e3-postgres/seed.sql";
const RELATION: &str = "catalog/table:public.orders";

const DETECTORS: [(&str, &str); 3] = [
    (
        PROBE,
        "a login as the role with its call's password, then SET ROLE and SELECT on orders, rolled back",
    ),
    (EXISTENCE, "a role still in pg_roles is effective"),
    (
        DELEGATION,
        "a role whose own ACL entry on orders still grants SELECT is effective",
    ),
];

pub struct Scenario {
    pub name: &'static str,
    pub description: &'static str,
    /// The statements the lab runs as the superuser, out of band.
    pub event: &'static [&'static str],
    pub role: &'static str,
    pub truth_effective: bool,
}

pub fn scenarios() -> Vec<Scenario> {
    vec![
        Scenario {
            name: "no_event",
            description: "bob minted with LOGIN and SELECT on orders; nothing happens",
            event: &[],
            role: "bob",
            truth_effective: true,
        },
        Scenario {
            name: "revoke_second_path",
            description: "alice's SELECT is revoked; she still reads through her membership in reader (residual authority)",
            event: &["REVOKE SELECT ON orders FROM alice"],
            role: "alice",
            truth_effective: true,
        },
        Scenario {
            name: "revoke_no_other_path",
            description: "bob's SELECT is revoked and no membership reaches orders: he logs in and reads nothing",
            event: &["REVOKE SELECT ON orders FROM bob"],
            role: "bob",
            truth_effective: false,
        },
        Scenario {
            name: "nologin",
            description: "bob may no longer log in; his role and grant stay",
            event: &["ALTER ROLE bob NOLOGIN"],
            role: "bob",
            truth_effective: false,
        },
        Scenario {
            name: "valid_until_past",
            description: "bob's password expires in the past; his role and grant stay",
            event: &["ALTER ROLE bob VALID UNTIL '2000-01-01 00:00:00+00'"],
            role: "bob",
            truth_effective: false,
        },
        Scenario {
            name: "drop_role",
            description: "bob's privileges and role are dropped",
            event: &["DROP OWNED BY bob", "DROP ROLE bob"],
            role: "bob",
            truth_effective: false,
        },
    ]
}

/// What the lab saw after the event.
#[derive(Clone, Debug)]
struct Observation {
    role_row: bool,
    direct_grant: String,
    probe_status: ProbeStatus,
    probe_basis: String,
}

fn word(effective: bool) -> String {
    if effective { "effective" } else { "dead" }.to_owned()
}

pub fn run(
    dir: &Path,
    out: &Path,
    progress: &Progress,
) -> Result<PostgresE3Document, PostgresLabError> {
    let fail = fail("E3 on PostgreSQL");
    let plan = Plan::parse(PLAN).map_err(|e| fail(format!("{PLAN_NAME} is invalid: {e}")))?;
    let heard = statements(&plan);
    let last = u32::try_from(plan.steps.len()).map_err(|e| fail(e.to_string()))?;
    let all = scenarios();
    let total = all.len();
    let mut rows = Vec::new();
    for (i, scenario) in all.into_iter().enumerate() {
        progress.report(crate::progress::Event::Published {
            experiment: "e3-postgres",
            name: scenario.name,
            package: PACKAGE,
            version: VERSION,
        });
        let seen: Rc<RefCell<Option<Observation>>> = Rc::new(RefCell::new(None));
        let sink = seen.clone();
        let event = scenario.event;
        let role = scenario.role;
        let texts = heard.clone();
        let mut events: BTreeMap<u32, Vec<Event>> = BTreeMap::new();
        events.insert(
            last,
            vec![Box::new(move |stores| {
                let mut admin = superuser(stores)?;
                for sql in event {
                    admin
                        .query(sql)
                        .map_err(|e| format!("out of band, {sql}: {e}"))?;
                }
                let observation = observe(&mut admin, stores, role, &texts)?;
                *sink.borrow_mut() = Some(observation);
                Ok(if event.is_empty() {
                    "no event".to_owned()
                } else {
                    format!("out of band, as the superuser: {}", event.join("; "))
                })
            })],
        );
        let report = audit_dbhub(
            dir,
            "E3 on PostgreSQL",
            (SEED_NAME, SEED),
            plan.clone(),
            format!(
                "E3 on PostgreSQL, {}: {PACKAGE}@{VERSION} {TOOL}",
                scenario.name
            ),
            events,
            progress,
        )?;
        let (path, relative) = audit_path(out, &format!("e3-postgres-{}", scenario.name));
        write(&path, &report)?;
        let observation = seen.borrow().clone().ok_or_else(|| {
            fail(format!(
                "{}: the role was never observed (did call {last} run?)",
                scenario.name
            ))
        })?;
        let mut predictions = BTreeMap::new();
        predictions.insert(
            PROBE.to_string(),
            word(observation.probe_status == ProbeStatus::Effective),
        );
        predictions.insert(EXISTENCE.to_string(), word(observation.role_row));
        predictions.insert(
            DELEGATION.to_string(),
            word(observation.direct_grant.split(", ").any(|p| p == "SELECT")),
        );
        progress.step(
            "e3-postgres",
            i + 1,
            total,
            &format!("{}: probe says {}", scenario.name, predictions[PROBE]),
        );
        rows.push(PostgresE3Scenario {
            scenario: scenario.name.into(),
            description: scenario.description.into(),
            event: report
                .calls
                .iter()
                .filter(|c| !c.events_after.is_empty())
                .map(|c| c.events_after.join("; "))
                .collect::<Vec<_>>()
                .join("; "),
            role: format!("catalog/role:{}", scenario.role),
            relation: RELATION.into(),
            truth: word(scenario.truth_effective),
            predictions,
            role_row: if observation.role_row {
                "present"
            } else {
                "absent"
            }
            .into(),
            direct_grant: observation.direct_grant,
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
    let document = PostgresE3Document {
        schema: E3_POSTGRES_SCHEMA.into(),
        generator: witness_model::GENERATOR.into(),
        server: format!("{PACKAGE}@{VERSION}"),
        tool: TOOL.into(),
        plan: PLAN_NAME.into(),
        seed: SEED_NAME.into(),
        detectors,
        scenarios: rows,
    };
    write(&out.join("e3-postgres.json"), &document)?;
    Ok(document)
}

/// The role as the catalog and the probe see it after the event. The probe
/// is a fresh one that has heard the plan's calls, as the audit's had.
fn observe(
    admin: &mut witness_postgres::protocol::Client,
    stores: &[JailedStore],
    role: &str,
    heard: &[String],
) -> Result<Observation, String> {
    let store = stores.first().ok_or("no store")?;
    let quoted = format!("'{}'", role.replace('\'', "''"));
    let exists = admin
        .query(&format!(
            "SELECT count(*)::text FROM pg_roles WHERE rolname = {quoted}"
        ))
        .map_err(|e| format!("cannot read pg_roles: {e}"))?;
    let role_row = matches!(exists.first().map(Vec::as_slice), Some([Some(n)]) if n != "0");
    let grants = admin
        .query(&format!(
            "SELECT coalesce(string_agg(a.privilege_type, ', ' ORDER BY a.privilege_type), 'none') \
             FROM pg_class c, aclexplode(c.relacl) a JOIN pg_roles r ON r.oid = a.grantee \
             WHERE c.oid = 'public.orders'::regclass AND r.rolname = {quoted}"
        ))
        .map_err(|e| format!("cannot read the ACL of orders: {e}"))?;
    let direct_grant = match grants.first().map(Vec::as_slice) {
        Some([Some(text)]) => text.clone(),
        _ => "none".into(),
    };
    let probe = witness_postgres::PostgresProbe::new();
    for (call, sql) in (1u32..).zip(heard) {
        probe.hear(call, &[sql]);
    }
    let view = StorePath {
        kind: "postgres",
        path: &store.path,
    };
    let role_id = format!("catalog/role:{role}");
    let login = probe.exercise(
        &ObservedObject {
            store: "db",
            id: &role_id,
        },
        &view,
    );
    let read = probe.exercise_for(
        &ObservedObject {
            store: "db",
            id: RELATION,
        },
        &view,
        role,
    );
    let both = login.status == ProbeStatus::Effective && read.status == ProbeStatus::Effective;
    let status = if both {
        ProbeStatus::Effective
    } else if login.status == ProbeStatus::Unknown || read.status == ProbeStatus::Unknown {
        ProbeStatus::Unknown
    } else {
        ProbeStatus::Ineffective
    };
    Ok(Observation {
        role_row,
        direct_grant,
        probe_status: status,
        probe_basis: format!("{}; {}", login.basis, read.basis),
    })
}

fn write(path: &Path, value: &impl serde::Serialize) -> Result<(), PostgresLabError> {
    write_json_file(path, value).map_err(|e| PostgresLabError::Run {
        experiment: "E3 on PostgreSQL",
        message: format!("cannot write {}: {e}", path.display()),
    })
}

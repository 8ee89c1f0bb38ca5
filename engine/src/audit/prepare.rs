//! Prepare: the world the server will run in, seen before it runs.
//!
//! Takes the audit's options. Gives a [`Prepared`]: the opened target (a
//! jail with copies of the stores, or the stores in place for a remote
//! server), the observed set over it, and the report's skeleton (target,
//! requested era, stores, jail scope, probe), with the stores' pristine
//! snapshots taken. When those cannot be taken the draft is already
//! incomplete and nothing else should run.

use witness_model::audit::*;

use super::AuditOptions;
use super::draft::Draft;
use witness_jail::observe::ObservedSet;
use witness_jail::{JailError, JailedStore, OpenTarget};

/// What the later stages start from.
pub(super) struct Prepared {
    pub(super) target: OpenTarget,
    pub(super) observed: ObservedSet,
    pub(super) draft: Draft,
}

/// Opens the target, lays out the report and takes the pristine snapshots.
/// `Err` only when the jail itself cannot be made.
pub(super) fn prepare(options: &AuditOptions) -> Result<Prepared, JailError> {
    let target = options.target.open(options.timeout)?;
    let jail = target.jail();
    let mut draft = Draft::new(skeleton(options, &jail.stores));
    // What the copies could not carry over faithfully, before anything runs.
    draft
        .report
        .findings
        .extend(jail.copy_warnings().iter().map(|warning| Finding {
            kind: FindingKind::StoreCopy,
            detail: warning.clone(),
            call: None,
        }));
    // An audit reads no row facts: its evidence is the effects themselves.
    let mut observed = ObservedSet::for_jail(
        jail,
        &draft.report.jail_scope.excluded,
        options.observe.budget,
        &[],
    );
    // The pristine copies, before the server ever runs.
    if let Err(e) = observed.baseline() {
        draft.incomplete(format!("cannot observe the stores: {e}"));
    }
    Ok(Prepared {
        target,
        observed,
        draft,
    })
}

/// The report before anything has happened: complete until shown otherwise,
/// with no isolation because no server has started.
pub(super) fn skeleton(options: &AuditOptions, stores: &[JailedStore]) -> AuditReport {
    AuditReport {
        schema: AUDIT_SCHEMA.into(),
        generator: witness_model::GENERATOR.into(),
        // A remote server's command is not what ran: nothing was launched.
        target: Target {
            command: options.target.command().to_vec(),
            env: options
                .target
                .env()
                .iter()
                .map(|(k, _)| k.clone())
                .collect(),
            label: options.label.clone(),
            pinned_version: options.pinned_version.clone(),
            package: options.package.clone(),
            server_json: options.server_json.clone(),
            transport: options
                .target
                .is_remote()
                .then(|| options.target.transport().into()),
        },
        era: EraEntry {
            requested: options.era,
            era: None,
            protocol_version: None,
            discover: None,
            server_info: None,
            instructions_present: false,
        },
        isolation: IsolationEntry {
            level: IsolationLevel::None,
            detail: "the server was never started".into(),
            layers: Vec::new(),
            network_observer: None,
            listening: Vec::new(),
        },
        stores: stores.iter().map(store_entry).collect(),
        jail_scope: jail_scope(stores),
        probe: options.probe.name().to_owned(),
        complete: true,
        incomplete_reason: None,
        catalog: CatalogEntry {
            complete: false,
            pages: 0,
            tools: 0,
            problem: None,
            excluded: Vec::new(),
        },
        tools: Vec::new(),
        planner: PlannerEntry::default(),
        startup_effects: Vec::new(),
        baseline_probes: Vec::new(),
        calls: Vec::new(),
        restarts: Vec::new(),
        shutdown_effects: Vec::new(),
        background: Vec::new(),
        unconfirmed: !options.confirm,
        network_outside_calls: Vec::new(),
        checks: Vec::new(),
        response: Vec::new(),
        metadata: Vec::new(),
        findings: Vec::new(),
        summary: Summary::default(),
        coverage: None,
        exit_code: 0,
        transcripts: Vec::new(),
        volatile: Volatile::default(),
    }
}

fn store_entry(store: &JailedStore) -> StoreEntry {
    StoreEntry {
        name: store.spec.name.clone(),
        kind: store.spec.kind.as_str().to_owned(),
        path: store
            .spec
            .shown
            .clone()
            .unwrap_or_else(|| store.spec.source.to_string_lossy().into_owned()),
        existed: store.existed,
        observer: store.spec.kind.as_str().to_owned(),
        clock_columns: store
            .spec
            .clock_columns
            .iter()
            .map(|c| c.to_string())
            .collect(),
    }
}

/// The jail-wide observer watches the whole jail but the stores
/// themselves, which their observers report.
fn jail_scope(stores: &[JailedStore]) -> JailScope {
    JailScope {
        observer: "fs".into(),
        watched: vec!["home".into(), "tmp".into(), "work".into(), "stores".into()],
        excluded: witness_jail::observe::store_paths(stores),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::fakes;
    use witness_jail::{StoreKind, StoreSpec, Target};

    fn store(name: &str, kind: StoreKind, source: &str, shown: Option<&str>) -> StoreSpec {
        StoreSpec {
            name: name.into(),
            kind,
            source: source.into(),
            shown: shown.map(str::to_owned),
            clock_columns: Vec::new(),
        }
    }

    #[test]
    fn the_skeleton_names_stores_as_given_and_keeps_no_env_value() {
        let mut options = fakes::options();
        let Target::Launched { spec, .. } = &mut options.target else {
            panic!("the fake server is launched");
        };
        spec.stores = vec![
            store("zeta", StoreKind::Fs, "/nonexistent/tree", None),
            store(
                "alpha",
                StoreKind::Jsonl,
                "/tmp/seed-123.jsonl",
                Some("memory.jsonl"),
            ),
        ];
        spec.env = vec![("API_TOKEN".into(), "s3cr3t-value".into())];
        options.label = Some("fake".into());
        let Ok(prepared) = prepare(&options) else {
            panic!("no jail");
        };
        let report = &prepared.draft.report;
        assert!(
            prepared.draft.is_complete(),
            "{:?}",
            report.incomplete_reason
        );
        assert_eq!(report.schema, AUDIT_SCHEMA);
        let stores: Vec<(&str, &str, &str, bool)> = report
            .stores
            .iter()
            .map(|s| (s.name.as_str(), s.kind.as_str(), s.path.as_str(), s.existed))
            .collect();
        assert_eq!(
            stores,
            [
                ("zeta", "fs", "/nonexistent/tree", false),
                ("alpha", "jsonl", "memory.jsonl", false),
            ]
        );
        // The stores themselves, not the folders around them.
        assert_eq!(
            report.jail_scope.excluded,
            ["stores/alpha/seed-123.jsonl", "stores/zeta/tree"]
        );
        assert_eq!(report.target.command, ["fake-server"]);
        assert_eq!(report.target.env, ["API_TOKEN"]);
        let written = serde_json::to_string(report).unwrap_or_default();
        assert!(!written.contains("s3cr3t-value"));
        assert_eq!(
            report.era.requested,
            witness_model::vocab::EraChoice::Legacy
        );
        assert_eq!(report.isolation.detail, "the server was never started");
        assert_eq!(report.probe, "null");
        // Copies in the jail, never the sources.
        let jail = prepared.target.jail();
        assert!(jail.stores.iter().all(|s| s.path.starts_with(jail.root())));
    }

    #[test]
    fn a_remote_server_has_no_command_and_its_stores_are_observed_in_place() {
        let Ok(dir) = tempfile::tempdir() else {
            panic!("no temporary directory");
        };
        let source = dir.path().join("tree");
        assert!(std::fs::create_dir_all(&source).is_ok());
        let options = fakes::remote(vec![store(
            "files",
            StoreKind::Fs,
            &source.to_string_lossy(),
            None,
        )]);
        let Ok(prepared) = prepare(&options) else {
            panic!("no jail");
        };
        let report = &prepared.draft.report;
        assert!(report.target.command.is_empty());
        assert_eq!(report.target.transport.as_deref(), Some("http"));
        assert_eq!(prepared.target.jail().stores[0].path, source);
        assert!(report.stores[0].existed);
        assert!(prepared.draft.is_complete());
    }

    #[test]
    fn stores_that_cannot_be_observed_leave_the_draft_incomplete() {
        let Ok(dir) = tempfile::tempdir() else {
            panic!("no temporary directory");
        };
        let garbage = dir.path().join("not-a.db");
        assert!(std::fs::write(&garbage, b"this is not a SQLite database, not at all").is_ok());
        let options = fakes::remote(vec![store(
            "db",
            StoreKind::Sqlite,
            &garbage.to_string_lossy(),
            None,
        )]);
        let Ok(prepared) = prepare(&options) else {
            panic!("no jail");
        };
        let reason = prepared.draft.report.incomplete_reason.unwrap_or_default();
        assert!(
            reason.starts_with("cannot observe the stores: db: "),
            "{reason}"
        );
    }
}

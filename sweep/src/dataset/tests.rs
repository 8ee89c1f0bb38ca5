use std::collections::BTreeMap;

use witness_model::sweep::{AuditSettings, Package, TargetDefinition, TargetVolatile};
use witness_model::vocab::CheckId;

use super::*;

/// A real audit from the committed results: the testbed's silent-keymint
/// variant, where `get_note` fails EFF-01, EFF-03 and EFF-06.
fn keymint_audit() -> AuditReport {
    let text = include_str!("../../../experiments/results/audits/silent-keymint.json");
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}"))
}

fn result(name: &str, status: TargetStatus, audited: bool) -> TargetResult {
    TargetResult {
        schema: witness_model::sweep::SWEEP_TARGET_SCHEMA.into(),
        generator: "test".into(),
        key: format!("{name}-0123456789abcdef"),
        definition: TargetDefinition {
            name: name.into(),
            package: Some(Package {
                ecosystem: Ecosystem::Npm,
                name: "@x/server".into(),
                version: "1.0.0".into(),
            }),
            lock: None,
            command: vec!["node".into()],
            env: BTreeMap::new(),
            stores: Vec::new(),
            plan: None,
            clock_text: Vec::new(),
            audit: AuditSettings {
                era: witness_model::vocab::EraChoice::Auto,
                timeout_ms: 1,
                settle_ms: 0,
                include_destructive: false,
                isolate_network: true,
            },
        },
        status,
        reason: (status != TargetStatus::Audited).then(|| "no session: it died".into()),
        audit: audited.then(|| AUDIT_JSON.into()),
        volatile: TargetVolatile {
            attempts: 1,
            elapsed_ms: 5,
        },
    }
}

#[test]
fn an_audit_is_one_row_per_tool_and_check_with_declarations_and_coverage() {
    let report = keymint_audit();
    let rows = rows_of(&Finished {
        result: result("keymint", TargetStatus::Audited, true),
        report: Some(report.clone()),
    });
    // Both lanes: the effect checks and the response checks.
    assert!(!report.response.is_empty());
    assert_eq!(rows.len(), report.checks.len() + report.response.len());
    assert!(
        rows.iter()
            .any(|r| r.check.is_some_and(|c| c.as_str().starts_with("RSP-")))
    );
    let fail: Vec<_> = rows
        .iter()
        .filter(|r| r.verdict == Some(Verdict::Fail))
        .map(|r| (r.tool.as_deref().unwrap_or(""), r.check))
        .collect();
    assert_eq!(
        fail,
        [
            ("get_note", Some(CheckId::Eff01)),
            ("get_note", Some(CheckId::Eff03)),
            ("get_note", Some(CheckId::Eff06))
        ]
    );
    let get_note = rows
        .iter()
        .find(|r| r.tool.as_deref() == Some("get_note"))
        .unwrap_or_else(|| panic!("get_note has rows"));
    assert_eq!(get_note.read_only, Some(true));
    assert_eq!(get_note.exercised, Some(true));
    // Coverage is the audit's own, tool by tool.
    let coverage = report
        .coverage
        .clone()
        .unwrap_or_else(|| Coverage::of(&report, None));
    for row in &rows {
        let tool = coverage
            .by_tool
            .iter()
            .find(|t| Some(&t.tool) == row.tool.as_ref())
            .unwrap_or_else(|| panic!("{:?} has coverage", row.tool));
        assert_eq!(row.exercised, Some(tool.call.is_some()));
        assert_eq!(row.not_exercised, tool.why);
        assert_eq!(
            row.on_real_values,
            tool.call.map(|_| tool.values.iter().all(|v| v.is_real()))
        );
    }
    assert!(get_note.calls_ok.is_some_and(|n| n > 0));
    assert_eq!(get_note.package.as_deref(), Some("@x/server"));
    assert_eq!(get_note.plan, "planner");
    assert_eq!(
        get_note.report.as_deref(),
        Some("targets/keymint-0123456789abcdef/report.html")
    );
    // Sorted by tool, then check.
    let order: Vec<_> = rows.iter().map(|r| (r.tool.clone(), r.check)).collect();
    let mut sorted = order.clone();
    sorted.sort();
    assert_eq!(order, sorted);
}

#[test]
fn a_target_without_an_audit_is_one_row_with_its_reason() {
    let rows = rows_of(&Finished {
        result: result("broken", TargetStatus::InstallFailed, false),
        report: None,
    });
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].status, TargetStatus::InstallFailed);
    assert_eq!(rows[0].reason.as_deref(), Some("no session: it died"));
    assert!(rows[0].tool.is_none() && rows[0].check.is_none() && rows[0].report.is_none());
}

#[test]
fn csv_columns_are_the_json_fields_and_values_are_quoted_when_they_must_be() {
    let rows = rows_of(&Finished {
        result: result("broken", TargetStatus::Error, false),
        report: None,
    });
    let value = serde_json::to_value(&rows[0]).unwrap_or_default();
    let fields: Vec<&str> = value
        .as_object()
        .map(|o| o.keys().map(String::as_str).collect())
        .unwrap_or_default();
    assert_eq!(fields, columns());
    let mut row = rows[0].clone();
    row.reason = Some("said \"no\", then, left".into());
    row.tool = Some(" padded".into());
    let text = csv(&[row]);
    let mut lines = text.lines();
    assert_eq!(
        lines.next().map(|l| l.split(',').count()),
        Some(columns().len())
    );
    let line = lines.next().unwrap_or_default();
    assert!(line.contains(r#","said ""no"", then, left","#), "{line}");
    assert!(line.contains(r#"," padded","#), "{line}");
    assert!(text.ends_with('\n'));
}

#[test]
fn the_dataset_is_the_same_whatever_order_targets_are_listed_in() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let layout = Layout::new(dir.path());
    let keymint = result("keymint", TargetStatus::Audited, true);
    let broken = result("broken", TargetStatus::TimedOut, false);
    for r in [&keymint, &broken] {
        write_json(&layout.result(&r.key), r).unwrap_or_else(|e| panic!("{e}"));
    }
    write_json(
        &layout.target_dir(&keymint.key).join(AUDIT_JSON),
        &keymint_audit(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let missing = "gone-0123456789abcdef".to_owned();
    let mut keys = vec![keymint.key.clone(), broken.key.clone(), missing.clone()];
    let mut written = Vec::new();
    for _ in 0..2 {
        let scope = Scope {
            name: "demo",
            all_keys: &keys,
            keys: &keys,
            shard: None,
        };
        let (document, status) = write(&layout, &scope).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            status,
            ExitStatus::Failed,
            "a failed check outranks the rest"
        );
        assert_eq!(document.missing, std::slice::from_ref(&missing));
        assert_eq!(document.targets[0].name, "broken", "by name");
        assert_eq!(document.statuses.get(&TargetStatus::TimedOut), Some(&1));
        let read = |name: &str| std::fs::read(dir.path().join(name)).unwrap_or_default();
        written.push([read(DATASET_JSONL), read(DATASET_CSV), read(SWEEP_JSON)]);
        keys.reverse();
    }
    assert_eq!(written[0], written[1]);
    let jsonl = String::from_utf8_lossy(&written[0][0]).into_owned();
    let audit = keymint_audit();
    assert_eq!(
        jsonl.lines().count(),
        1 + audit.checks.len() + audit.response.len()
    );
    assert!(
        jsonl
            .lines()
            .next()
            .is_some_and(|l| l.contains("\"timed-out\""))
    );
}

//! The evaluation page: E1, E2, E3 and the case studies, read from the JSON
//! documents of one results directory.

use std::path::Path;

use anyhow::{Context, Result};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use witness_model::audit::{Verdict, VerdictTally};
use witness_model::case::{CaseReport, CheckSummary};
use witness_model::coverage::CoverageDocument;
use witness_model::experiments::{
    ClassifierScore, E1Document, E2Document, E2Object, E3Document, LifecycleDetectorScore,
    PostgresE2Document, PostgresE3Document,
};
use witness_model::field::{FIELD_SCHEMA, FieldDocument};

use crate::charts::{self, Chart, Group};
use crate::lenient::Lenient;
use crate::{anchor_part, audit_stem, check_anchor, num, report_file, safe_stem, verdict_counts};

/// The documents of one results directory. Lab documents are read strictly;
/// case studies field by field into the model's case report, tolerant of
/// shape.
pub struct Documents {
    pub e1: Option<E1Document>,
    pub e2: Option<E2Document>,
    pub e3: Option<E3Document>,
    /// E2 and E3 on PostgreSQL, through a published SQL server.
    pub e2_postgres: Option<PostgresE2Document>,
    pub e3_postgres: Option<PostgresE3Document>,
    pub cases: Vec<CaseDoc>,
    pub coverage: Option<CoverageDocument>,
    /// The field study, when `field.json` is there and reads as one.
    pub field: Option<FieldDocument>,
    /// Why a `field.json` that is there could not be shown.
    pub field_problem: Option<String>,
}

/// One `case-<name>.json`, as found.
pub struct CaseDoc {
    /// `case-memory.json`.
    pub file: String,
    /// `case-memory`.
    pub stem: String,
    /// The case report, read field by field: a field of another shape is
    /// not recorded, never an error.
    pub read: Lenient<CaseReport>,
}

impl CaseDoc {
    /// The field at `pointer`, picked from the typed report by `pick`, as
    /// text, when the file recorded it. `pointer` names the same field in
    /// the JSON.
    fn text<U: std::fmt::Display>(
        &self,
        pointer: &str,
        pick: impl Fn(&CaseReport) -> &U,
    ) -> Option<String> {
        self.read
            .recorded(pointer)
            .then(|| pick(&self.read.value).to_string())
    }
}

fn load<T: DeserializeOwned>(data: &Path, name: &str) -> Result<Option<T>> {
    let path = data.join(name);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    serde_json::from_str(&text)
        .map(Some)
        .with_context(|| format!("{} is not a valid document", path.display()))
}

/// `field.json`, when it is there: the document, or why the page cannot
/// show it (not JSON, another document or version). A field study written
/// by another version is a section that says so, not a page that fails.
fn load_field(data: &Path) -> Result<(Option<FieldDocument>, Option<String>)> {
    let path = data.join("field.json");
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((None, None)),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let value: Value = match serde_json::from_str(&text) {
        Ok(value) => value,
        Err(e) => return Ok((None, Some(format!("field.json is not JSON: {e}")))),
    };
    match value.get("schema").and_then(Value::as_str) {
        Some(FIELD_SCHEMA) => {}
        Some(other) => {
            return Ok((
                None,
                Some(format!(
                    "field.json is a {} document; this page reads {FIELD_SCHEMA}",
                    witness_text::clip_raw(other, 60)
                )),
            ));
        }
        None => {
            return Ok((
                None,
                Some(format!(
                    "field.json names no schema; this page reads {FIELD_SCHEMA}"
                )),
            ));
        }
    }
    Ok(match serde_json::from_value(value) {
        Ok(doc) => (Some(doc), None),
        Err(e) => (
            None,
            Some(format!("field.json does not parse as {FIELD_SCHEMA}: {e}")),
        ),
    })
}

impl Documents {
    pub fn load(data: &Path) -> Result<Self> {
        let mut cases = Vec::new();
        let entries =
            std::fs::read_dir(data).with_context(|| format!("cannot read {}", data.display()))?;
        for entry in entries {
            let entry = entry.with_context(|| format!("cannot read {}", data.display()))?;
            let file = entry.file_name().to_string_lossy().into_owned();
            let Some(stem) = file.strip_suffix(".json") else {
                continue;
            };
            if !stem.starts_with("case-") || !safe_stem(stem) {
                continue;
            }
            let path = entry.path();
            let text = std::fs::read_to_string(&path)
                .with_context(|| format!("cannot read {}", path.display()))?;
            let value: Value = serde_json::from_str(&text)
                .with_context(|| format!("{} is not JSON", path.display()))?;
            cases.push(CaseDoc {
                stem: stem.to_owned(),
                file,
                read: Lenient::read(&value),
            });
        }
        cases.sort_by(|a, b| a.file.cmp(&b.file));
        let (field, field_problem) = load_field(data)?;
        Ok(Self {
            e1: load(data, "e1.json")?,
            e2: load(data, "e2.json")?,
            e3: load(data, "e3.json")?,
            e2_postgres: load(data, "e2-postgres.json")?,
            e3_postgres: load(data, "e3-postgres.json")?,
            cases,
            coverage: load(data, "coverage.json")?,
            field,
            field_problem,
        })
    }
}

/// How a detector, classifier or series is called on the page.
fn display(name: &str) -> String {
    match name {
        "effect-aware" => "Effect-aware".into(),
        "response-level" => "Response-level".into(),
        "name-heuristic" => "Name heuristic".into(),
        "probe" => "Probe (exercise)".into(),
        "name-keyword" => "Name keyword".into(),
        "persistence" => "Persistence ⇒ authority".into(),
        "existence" => "Existence (listed ⇒ effective)".into(),
        "delegation" => "Delegation (grant active ⇒ effective)".into(),
        other => other.into(),
    }
}

/// A detector's name on a chart axis, where space is short.
fn short(name: &str) -> String {
    match name {
        "probe" => "Probe".into(),
        "persistence" => "Persistence".into(),
        "existence" => "Existence".into(),
        "delegation" => "Delegation".into(),
        other => display(other),
    }
}

/// A link to the evidence report of `audits/<stem>.json`, if it is rendered.
fn report_href(data: &Path, audit: &str) -> Option<String> {
    audit_stem(audit)
        .filter(|_| data.join(audit).is_file())
        .map(report_file)
}

#[derive(Serialize)]
struct Link {
    text: String,
    href: Option<String>,
}

#[derive(Serialize)]
pub struct View {
    data_href: String,
    generators: Vec<String>,
    artifacts: Vec<Link>,
    reports: Vec<Link>,
    e1: Option<E1View>,
    e2: Option<E2View>,
    e3: Option<E3View>,
    e2_postgres: Option<E2PostgresView>,
    e3_postgres: Option<E3PostgresView>,
    cases: Vec<CaseView>,
    coverage: Option<crate::coverage::ExperimentView>,
    field: Option<crate::field::FieldView>,
    field_problem: Option<String>,
    plans: Vec<String>,
}

#[derive(Serialize)]
struct DetectorRow {
    name: String,
    channel: String,
    tp: u32,
    fp: u32,
    fn_: u32,
    precision: String,
    recall: String,
    f1: String,
}

#[derive(Serialize)]
struct LieRow {
    variant: String,
    report: Option<String>,
    tool: String,
    declared: String,
    actual: String,
    caught: Vec<bool>,
}

#[derive(Serialize)]
struct LieGroup {
    title: String,
    note: String,
    invisible: bool,
    rows: Vec<LieRow>,
}

#[derive(Serialize)]
struct FlagCell {
    tool: String,
    correct: bool,
}

#[derive(Serialize)]
struct VariantRow {
    variant: String,
    report: Option<String>,
    raw: String,
    liar: Option<String>,
    flagged: Vec<Vec<FlagCell>>,
    evidence: Vec<Link>,
    exit_code: i32,
}

#[derive(Serialize)]
struct E1View {
    raw: String,
    plan: String,
    findings: Vec<String>,
    detector_names: Vec<String>,
    detectors: Vec<DetectorRow>,
    chart: Chart,
    lie_groups: Vec<LieGroup>,
    variants: Vec<VariantRow>,
}

#[derive(Serialize)]
struct ClassifierRow {
    name: String,
    definition: String,
    accuracy: String,
    tp: u32,
    fp: u32,
    tn: u32,
    fn_: u32,
}

#[derive(Serialize)]
struct Cell {
    value: String,
    wrong: bool,
}

#[derive(Serialize)]
struct ObjectRow {
    object: String,
    persistent: bool,
    authority: bool,
    cells: Vec<Cell>,
    probe_basis: String,
    probed_at: String,
    note: Option<String>,
}

#[derive(Serialize)]
struct E2View {
    raw: String,
    plan: String,
    report: Option<String>,
    findings: Vec<String>,
    classifier_names: Vec<String>,
    classifiers: Vec<ClassifierRow>,
    chart: Chart,
    objects: Vec<ObjectRow>,
}

#[derive(Serialize)]
struct E2PostgresView {
    server: String,
    tool: String,
    seed: String,
    e2: E2View,
}

#[derive(Serialize)]
struct PostgresTranscriptRow {
    scenario: String,
    event: String,
    role: String,
    role_row: String,
    direct_grant: String,
    probe_status: String,
    probe_basis: String,
    report: Option<String>,
}

#[derive(Serialize)]
struct E3PostgresView {
    raw: String,
    plan: String,
    seed: String,
    server: String,
    tool: String,
    findings: Vec<String>,
    detector_names: Vec<String>,
    detectors: Vec<LifecycleRow>,
    chart: Chart,
    scenarios: Vec<ScenarioRow>,
    transcript: Vec<PostgresTranscriptRow>,
}

#[derive(Serialize)]
struct LifecycleRow {
    name: String,
    definition: String,
    accuracy: String,
    false_effective: u32,
    false_ineffective: u32,
}

#[derive(Serialize)]
struct ScenarioRow {
    scenario: String,
    description: String,
    truth: String,
    cells: Vec<Cell>,
}

#[derive(Serialize)]
struct TranscriptRow {
    scenario: String,
    event: String,
    variant: String,
    key: String,
    key_row: String,
    grant: String,
    probe_status: String,
    probe_basis: String,
    report: Option<String>,
}

#[derive(Serialize)]
struct ResidualRow {
    variant: String,
    verdict: String,
    reason: String,
    probes: Vec<String>,
    report: Option<String>,
    exit_code: i32,
}

#[derive(Serialize)]
struct E3View {
    raw: String,
    plan: String,
    findings: Vec<String>,
    detector_names: Vec<String>,
    detectors: Vec<LifecycleRow>,
    chart: Chart,
    scenarios: Vec<ScenarioRow>,
    transcript: Vec<TranscriptRow>,
    residual: Vec<ResidualRow>,
}

fn e1_view(e1: &E1Document, data: &Path, data_href: &str) -> E1View {
    let names: Vec<&str> = e1.detectors.iter().map(|d| d.name.as_str()).collect();
    let flagged = |v: &witness_model::experiments::E1Variant, d: &str| -> Vec<String> {
        v.flagged.get(d).cloned().unwrap_or_default()
    };
    let lies: Vec<_> = e1
        .variants
        .iter()
        .filter(|v| v.lying_tool.is_some())
        .collect();
    let caught = |v: &witness_model::experiments::E1Variant, d: &str| {
        v.lying_tool
            .as_ref()
            .is_some_and(|liar| flagged(v, d).contains(liar))
    };
    let mut findings = Vec::new();
    let invisible: Vec<_> = lies
        .iter()
        .filter(|v| v.response_visible == Some(false))
        .collect();
    for d in &e1.detectors {
        let all = lies.iter().filter(|v| caught(v, &d.name)).count();
        let hidden = invisible.iter().filter(|v| caught(v, &d.name)).count();
        findings.push(format!(
            "{}: caught {all} of {} planted lies, {hidden} of {} that the response does not show; {} false positive(s).",
            display(&d.name),
            lies.len(),
            invisible.len(),
            d.fp
        ));
    }
    let lie_row = |v: &witness_model::experiments::E1Variant| LieRow {
        variant: v.variant.clone(),
        report: report_href(data, &v.audit),
        tool: v.lying_tool.clone().unwrap_or_default(),
        declared: v.declared.clone().unwrap_or_default(),
        actual: v.actual.clone().unwrap_or_default(),
        caught: names.iter().map(|d| caught(v, d)).collect(),
    };
    let mut lie_groups = Vec::new();
    for (visible, title, note) in [
        (
            Some(true),
            "Effect visible in the response",
            "the tool's answer itself shows what it did",
        ),
        (
            Some(false),
            "Effect invisible in the response",
            "only an observer of the store can see these",
        ),
        (
            None,
            "Visibility not recorded",
            "the testbed ledger does not say whether the response shows it",
        ),
    ] {
        let rows: Vec<LieRow> = lies
            .iter()
            .filter(|v| v.response_visible == visible)
            .map(|v| lie_row(v))
            .collect();
        if !rows.is_empty() {
            lie_groups.push(LieGroup {
                title: title.into(),
                note: note.into(),
                invisible: visible == Some(false),
                rows,
            });
        }
    }
    let variants = e1
        .variants
        .iter()
        .map(|v| {
            let report = report_href(data, &v.audit);
            VariantRow {
                variant: v.variant.clone(),
                raw: format!("{data_href}{}", v.audit),
                liar: v.lying_tool.clone(),
                flagged: names
                    .iter()
                    .map(|d| {
                        flagged(v, d)
                            .into_iter()
                            .map(|tool| FlagCell {
                                correct: v.lying_tool.as_deref() == Some(tool.as_str()),
                                tool,
                            })
                            .collect()
                    })
                    .collect(),
                evidence: v
                    .evidence
                    .iter()
                    .map(|e| Link {
                        text: e.clone(),
                        href: match (e.split_once(' '), &report) {
                            (Some((id, tool)), Some(page)) => {
                                Some(format!("{page}#{}", check_anchor(id, tool)))
                            }
                            _ => None,
                        },
                    })
                    .collect(),
                exit_code: v.audit_exit_code,
                report,
            }
        })
        .collect();
    let chart = charts::grouped(
        "Precision, recall and F1 of each E1 detector",
        &["precision", "recall", "F1"],
        &e1.detectors
            .iter()
            .map(|d| Group {
                label: short(&d.name),
                values: vec![d.precision, d.recall, d.f1],
            })
            .collect::<Vec<_>>(),
    );
    E1View {
        raw: format!("{data_href}e1.json"),
        plan: e1.plan.clone(),
        findings,
        detector_names: names.iter().map(|n| display(n)).collect(),
        detectors: e1
            .detectors
            .iter()
            .map(|d| DetectorRow {
                name: display(&d.name),
                channel: d.channel.clone(),
                tp: d.tp,
                fp: d.fp,
                fn_: d.fn_,
                precision: num(d.precision),
                recall: num(d.recall),
                f1: num(d.f1),
            })
            .collect(),
        chart,
        lie_groups,
        variants,
    }
}

fn e2_view(e2: &E2Document, data: &Path, data_href: &str) -> E2View {
    classification_view(
        Classification {
            classifiers: &e2.classifiers,
            objects: &e2.objects,
            plan: &e2.plan,
            audit: &e2.audit,
            raw: "e2.json",
            title: "Accuracy of each E2 classifier",
        },
        data,
        data_href,
    )
}

fn e2_postgres_view(e2: &PostgresE2Document, data: &Path, data_href: &str) -> E2PostgresView {
    E2PostgresView {
        server: e2.server.clone(),
        tool: e2.tool.clone(),
        seed: e2.seed.clone(),
        e2: classification_view(
            Classification {
                classifiers: &e2.classifiers,
                objects: &e2.objects,
                plan: &e2.plan,
                audit: &e2.audit,
                raw: "e2-postgres.json",
                title: "Accuracy of each classifier on PostgreSQL",
            },
            data,
            data_href,
        ),
    }
}

/// What an E2-shaped document holds: the testbed's and PostgreSQL's.
struct Classification<'a> {
    classifiers: &'a [ClassifierScore],
    objects: &'a [E2Object],
    plan: &'a str,
    audit: &'a str,
    /// The document's file name in the results directory.
    raw: &'a str,
    title: &'a str,
}

fn classification_view(e2: Classification<'_>, data: &Path, data_href: &str) -> E2View {
    let names: Vec<&str> = e2.classifiers.iter().map(|c| c.name.as_str()).collect();
    let findings = names
        .iter()
        .map(|name| {
            let wrong: Vec<&str> = e2
                .objects
                .iter()
                .filter(|o| o.predictions.get(*name).copied().unwrap_or(false) != o.authority)
                .map(|o| o.object.as_str())
                .collect();
            if wrong.is_empty() {
                format!(
                    "{}: right on all {} objects.",
                    display(name),
                    e2.objects.len()
                )
            } else {
                format!(
                    "{}: wrong on {} of {} — {}.",
                    display(name),
                    wrong.len(),
                    e2.objects.len(),
                    wrong.join(", ")
                )
            }
        })
        .collect();
    let yes = |b: bool| if b { "authority" } else { "none" }.to_string();
    E2View {
        raw: format!("{data_href}{}", e2.raw),
        plan: e2.plan.to_owned(),
        report: report_href(data, e2.audit),
        findings,
        classifier_names: names.iter().map(|n| display(n)).collect(),
        chart: charts::grouped(
            e2.title,
            &["accuracy"],
            &e2.classifiers
                .iter()
                .map(|c| Group {
                    label: short(&c.name),
                    values: vec![c.accuracy],
                })
                .collect::<Vec<_>>(),
        ),
        classifiers: e2
            .classifiers
            .iter()
            .map(|c| ClassifierRow {
                name: display(&c.name),
                definition: c.definition.clone(),
                accuracy: num(c.accuracy),
                tp: c.tp,
                fp: c.fp,
                tn: c.tn,
                fn_: c.fn_,
            })
            .collect(),
        objects: e2
            .objects
            .iter()
            .map(|o| ObjectRow {
                object: o.object.clone(),
                persistent: o.persistent,
                authority: o.authority,
                cells: names
                    .iter()
                    .map(|n| {
                        let said = o.predictions.get(*n).copied();
                        Cell {
                            value: said.map_or_else(|| "—".into(), yes),
                            wrong: said != Some(o.authority),
                        }
                    })
                    .collect(),
                probe_basis: o.probe_basis.clone(),
                probed_at: o.probed_at.clone(),
                note: o.note.clone(),
            })
            .collect(),
    }
}

/// One line per lifecycle detector: its accuracy, its errors, and the
/// scenarios where it called a live `what` dead. `scenarios` is each
/// scenario's name, truth and predictions.
fn lifecycle_findings(
    detectors: &[LifecycleDetectorScore],
    scenarios: &[(&str, &str, &std::collections::BTreeMap<String, String>)],
    what: &str,
) -> Vec<String> {
    detectors
        .iter()
        .map(|d| {
            let dangerous: Vec<&str> = scenarios
                .iter()
                .filter(|(_, truth, predictions)| {
                    *truth == "effective"
                        && predictions.get(&d.name).map(String::as_str) != Some("effective")
                })
                .map(|(name, _, _)| *name)
                .collect();
            format!(
                "{}: accuracy {}; {} false-effective, {} false-ineffective{}.",
                display(&d.name),
                num(d.accuracy),
                d.false_effective,
                d.false_ineffective,
                if dangerous.is_empty() {
                    String::new()
                } else {
                    format!(" (called a live {what} dead in {})", dangerous.join(", "))
                }
            )
        })
        .collect()
}

fn lifecycle_rows(detectors: &[LifecycleDetectorScore]) -> Vec<LifecycleRow> {
    detectors
        .iter()
        .map(|d| LifecycleRow {
            name: display(&d.name),
            definition: d.definition.clone(),
            accuracy: num(d.accuracy),
            false_effective: d.false_effective,
            false_ineffective: d.false_ineffective,
        })
        .collect()
}

/// The accuracy of each lifecycle detector, as E3 and E3 on PostgreSQL
/// chart it.
fn lifecycle_chart(title: &str, detectors: &[LifecycleDetectorScore]) -> Chart {
    let groups: Vec<Group> = detectors
        .iter()
        .map(|d| Group {
            label: short(&d.name),
            values: vec![d.accuracy],
        })
        .collect();
    charts::grouped(title, &["accuracy"], &groups)
}

/// A scenario's row: its truth and each detector's call, ✗ where wrong.
fn scenario_row(
    names: &[&str],
    scenario: &str,
    description: &str,
    truth: &str,
    predictions: &std::collections::BTreeMap<String, String>,
) -> ScenarioRow {
    ScenarioRow {
        scenario: scenario.to_owned(),
        description: description.to_owned(),
        truth: truth.to_owned(),
        cells: names
            .iter()
            .map(|n| {
                let said = predictions.get(*n);
                Cell {
                    value: said.cloned().unwrap_or_else(|| "—".into()),
                    wrong: said.map(String::as_str) != Some(truth),
                }
            })
            .collect(),
    }
}

fn e3_postgres_view(e3: &PostgresE3Document, data: &Path, data_href: &str) -> E3PostgresView {
    let names: Vec<&str> = e3.detectors.iter().map(|d| d.name.as_str()).collect();
    let triples: Vec<_> = e3
        .scenarios
        .iter()
        .map(|s| (s.scenario.as_str(), s.truth.as_str(), &s.predictions))
        .collect();
    E3PostgresView {
        raw: format!("{data_href}e3-postgres.json"),
        plan: e3.plan.clone(),
        seed: e3.seed.clone(),
        server: e3.server.clone(),
        tool: e3.tool.clone(),
        findings: lifecycle_findings(&e3.detectors, &triples, "role"),
        detector_names: names.iter().map(|n| display(n)).collect(),
        chart: lifecycle_chart(
            "Accuracy of each lifecycle detector on PostgreSQL",
            &e3.detectors,
        ),
        detectors: lifecycle_rows(&e3.detectors),
        scenarios: e3
            .scenarios
            .iter()
            .map(|s| {
                scenario_row(
                    &names,
                    &s.scenario,
                    &s.description,
                    &s.truth,
                    &s.predictions,
                )
            })
            .collect(),
        transcript: e3
            .scenarios
            .iter()
            .map(|s| PostgresTranscriptRow {
                scenario: s.scenario.clone(),
                event: s.event.clone(),
                role: s.role.clone(),
                role_row: s.role_row.clone(),
                direct_grant: s.direct_grant.clone(),
                probe_status: s.probe_status.to_string(),
                probe_basis: s.probe_basis.clone(),
                report: report_href(data, &s.audit),
            })
            .collect(),
    }
}

fn e3_view(e3: &E3Document, data: &Path, data_href: &str) -> E3View {
    let names: Vec<&str> = e3.detectors.iter().map(|d| d.name.as_str()).collect();
    let triples: Vec<_> = e3
        .scenarios
        .iter()
        .map(|s| (s.scenario.as_str(), s.truth.as_str(), &s.predictions))
        .collect();
    let findings = lifecycle_findings(&e3.detectors, &triples, "key");
    E3View {
        raw: format!("{data_href}e3.json"),
        plan: e3.plan.clone(),
        findings,
        detector_names: names.iter().map(|n| display(n)).collect(),
        chart: lifecycle_chart("Accuracy of each E3 detector", &e3.detectors),
        detectors: lifecycle_rows(&e3.detectors),
        scenarios: e3
            .scenarios
            .iter()
            .map(|s| {
                scenario_row(
                    &names,
                    &s.scenario,
                    &s.description,
                    &s.truth,
                    &s.predictions,
                )
            })
            .collect(),
        transcript: e3
            .scenarios
            .iter()
            .map(|s| TranscriptRow {
                scenario: s.scenario.clone(),
                event: s.event.clone(),
                variant: s.variant.clone(),
                key: s.key.clone(),
                key_row: s.key_row.clone(),
                grant: s.grant.clone(),
                probe_status: s.probe_status.to_string(),
                probe_basis: s.probe_basis.clone(),
                report: report_href(data, &s.audit),
            })
            .collect(),
        residual: e3
            .residual_revoke
            .iter()
            .map(|r| ResidualRow {
                variant: r.variant.clone(),
                verdict: r.eff06_revoke_api_key.clone(),
                reason: r.reason.clone(),
                probes: r.probe_evidence.clone(),
                report: report_href(data, &r.audit)
                    .map(|page| format!("{page}#{}", check_anchor("EFF-06", "revoke_api_key"))),
                exit_code: r.audit_exit_code,
            })
            .collect(),
    }
}

/// A case study as the page and `summary.md` show it. Every field is read
/// leniently: a missing or differently shaped field shows as `—`, never as
/// an error.
#[derive(Clone, Debug, Serialize)]
pub struct CaseView {
    pub file: String,
    pub anchor: String,
    pub server: String,
    pub server_details: Vec<String>,
    pub store: String,
    pub observer: String,
    pub annotations: String,
    pub annotation_profile: String,
    pub observed: String,
    pub checks: Vec<CaseCheck>,
    pub notes: Vec<String>,
    pub raw: String,
    pub audit: Option<String>,
    pub report: Option<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct CaseCheck {
    pub id: String,
    /// `3 pass · 6 skip`.
    pub counts: String,
    /// The most telling verdict: fail, then pass, then the rest.
    pub headline: String,
}

fn or_dash(x: Option<String>) -> String {
    x.unwrap_or_else(|| "—".into())
}

/// Where a case's own audit is, and the evidence report rendered for it.
pub struct CaseAudit {
    /// Relative to the results directory.
    pub relative: String,
    pub report: String,
    /// Not under `audits/`: [`crate::render_all`] renders it separately.
    pub separate: bool,
}

/// The audit a case study names, if it is a plain relative path inside the
/// results directory to a file that exists.
pub fn case_audit(case: &CaseDoc, data: &Path) -> Option<CaseAudit> {
    let relative = case.text("/audit", |c| &c.audit)?;
    let plain = relative.ends_with(".json")
        && relative
            .split('/')
            .all(|part| safe_stem(part) && part != "." && part != "..");
    if !plain || !data.join(&relative).is_file() {
        return None;
    }
    Some(match audit_stem(&relative) {
        Some(stem) => CaseAudit {
            report: report_file(stem),
            relative,
            separate: false,
        },
        None => CaseAudit {
            report: report_file(&case.stem),
            relative,
            separate: true,
        },
    })
}

/// One check of a case: its verdicts counted over the tools it names, and
/// the most telling of them as the headline (fail, then untestable, pass,
/// skip).
fn case_check(id: &str, summary: &CheckSummary) -> CaseCheck {
    let tally = VerdictTally::of(summary.tools.values().copied());
    let headline = [
        Verdict::Fail,
        Verdict::Untestable,
        Verdict::Pass,
        Verdict::Skip,
    ]
    .into_iter()
    .find(|v| tally.get(*v) > 0)
    .map_or("none", Verdict::as_str);
    CaseCheck {
        id: id.to_owned(),
        counts: verdict_counts(&tally),
        headline: headline.into(),
    }
}

pub fn case_view(case: &CaseDoc, data: &Path, data_href: &str) -> CaseView {
    let c = &case.read.value;
    let package = case.text("/server/package", |c| &c.server.package);
    let version = case.text("/server/version", |c| &c.server.version);
    let server = match (&package, &version) {
        (Some(p), Some(ver)) => format!("{p}@{ver}"),
        (Some(p), None) => p.clone(),
        _ => case.stem.clone(),
    };
    let mut server_details: Vec<String> = [
        ("bin", case.text("/server/bin", |c| &c.server.bin)),
        (
            "publisher",
            case.text("/server/publisher", |c| &c.server.publisher),
        ),
        (
            "description",
            case.text("/server/description", |c| &c.server.description),
        ),
    ]
    .into_iter()
    .filter_map(|(name, value)| Some(format!("{name}: {}", value?)))
    .collect();
    if let Some(protocol) = &c.server.protocol_version {
        server_details.push(format!("protocol_version: {protocol}"));
    }
    let a = |pointer: &str, count: fn(&CaseReport) -> &usize| case.text(pointer, count);
    let annotations = match (
        a("/annotations/declared", |c| &c.annotations.declared),
        a("/annotations/tools", |c| &c.annotations.tools),
    ) {
        (Some(d), Some(t)) => format!("{d}/{t} tools declare annotations"),
        (None, Some(t)) => format!("{t} tools"),
        (Some(d), None) => format!("{d} tools declare annotations"),
        (None, None) => "—".into(),
    };
    let profile = [
        a("/annotations/read_only", |c| &c.annotations.read_only),
        a("/annotations/destructive", |c| &c.annotations.destructive),
        a("/annotations/idempotent", |c| &c.annotations.idempotent),
    ];
    let annotation_profile = if profile.iter().all(Option::is_none) {
        "profile not recorded".to_string()
    } else {
        let [r, d, i] = profile.map(or_dash);
        format!("{r} read-only · {d} destructive · {i} idempotent")
    };
    let counts = [
        a("/observed/creates", |c| &c.observed.creates),
        a("/observed/updates", |c| &c.observed.updates),
        a("/observed/deletes", |c| &c.observed.deletes),
        a("/observed/calls", |c| &c.observed.calls),
    ];
    let observed = if counts.iter().all(Option::is_none) {
        "not recorded".to_string()
    } else {
        let [c, u, d, n] = counts.map(or_dash);
        let late = a("/observed/late", |c| &c.observed.late)
            .map(|l| format!(", and {l} late (charged to no call)"))
            .unwrap_or_default();
        format!("{c} create · {u} update · {d} delete over {n} calls{late}")
    };
    // Checks of the model's shape, and the ids of those of another shape,
    // which are shown as not recorded rather than left out.
    let mut checks: Vec<CaseCheck> = c
        .checks
        .iter()
        .map(|(id, summary)| case_check(id, summary))
        .chain(
            case.read
                .passed_over_under("/checks")
                .into_iter()
                .map(|id| CaseCheck {
                    id,
                    counts: "not recorded".into(),
                    headline: "none".into(),
                }),
        )
        .collect();
    checks.sort_by(|x, y| x.id.cmp(&y.id));
    let audit = case_audit(case, data);
    CaseView {
        file: case.file.clone(),
        anchor: format!("case-{}", anchor_part(&case.stem)),
        server,
        server_details,
        store: or_dash(case.text("/store/kind", |c| &c.store.kind)),
        observer: or_dash(case.text("/store/observer", |c| &c.store.observer)),
        annotations,
        annotation_profile,
        observed,
        checks,
        notes: c.notes.clone(),
        raw: format!("{data_href}{}", case.file),
        audit: audit.as_ref().map(|a| format!("{data_href}{}", a.relative)),
        report: audit.map(|a| a.report),
    }
}

pub fn view(data: &Path, data_href: &str) -> Result<View> {
    let docs = Documents::load(data)?;
    let mut artifacts = vec![Link {
        text: "summary.md".into(),
        href: Some(format!("{data_href}summary.md")),
    }];
    for (name, present) in [
        ("e1.json", docs.e1.is_some()),
        ("e2.json", docs.e2.is_some()),
        ("e3.json", docs.e3.is_some()),
        ("e2-postgres.json", docs.e2_postgres.is_some()),
        ("e3-postgres.json", docs.e3_postgres.is_some()),
    ] {
        if present {
            artifacts.push(Link {
                text: name.into(),
                href: Some(format!("{data_href}{name}")),
            });
        }
    }
    for case in &docs.cases {
        artifacts.push(Link {
            text: case.file.clone(),
            href: Some(format!("{data_href}{}", case.file)),
        });
    }
    if docs.coverage.is_some() {
        artifacts.push(Link {
            text: "coverage.json".into(),
            href: Some(format!("{data_href}coverage.json")),
        });
    }
    if docs.field.is_some() {
        artifacts.push(Link {
            text: "field.json".into(),
            href: Some(format!("{data_href}field.json")),
        });
    }
    let mut reports: Vec<Link> = crate::audit_files(data, &mut Vec::new())?
        .into_iter()
        .map(|(stem, _)| Link {
            text: stem.clone(),
            href: Some(report_file(&stem)),
        })
        .collect();
    for case in &docs.cases {
        if let Some(audit) = case_audit(case, data).filter(|a| a.separate) {
            reports.push(Link {
                text: case.stem.clone(),
                href: Some(audit.report),
            });
        }
    }
    let mut generators: Vec<String> = [
        docs.e1.as_ref().map(|d| d.generator.clone()),
        docs.e2.as_ref().map(|d| d.generator.clone()),
        docs.e3.as_ref().map(|d| d.generator.clone()),
        docs.e2_postgres.as_ref().map(|d| d.generator.clone()),
        docs.e3_postgres.as_ref().map(|d| d.generator.clone()),
        docs.field.as_ref().map(|d| d.generator.clone()),
    ]
    .into_iter()
    .flatten()
    .collect();
    generators.sort();
    generators.dedup();
    let plans = [
        docs.e1.as_ref().map(|d| d.plan.clone()),
        docs.e2.as_ref().map(|d| d.plan.clone()),
        docs.e3.as_ref().map(|d| d.plan.clone()),
        docs.e2_postgres.as_ref().map(|d| d.plan.clone()),
        docs.e3_postgres.as_ref().map(|d| d.plan.clone()),
    ]
    .into_iter()
    .flatten()
    .collect();
    Ok(View {
        data_href: data_href.to_owned(),
        generators,
        artifacts,
        reports,
        e1: docs.e1.as_ref().map(|d| e1_view(d, data, data_href)),
        e2: docs.e2.as_ref().map(|d| e2_view(d, data, data_href)),
        e3: docs.e3.as_ref().map(|d| e3_view(d, data, data_href)),
        e2_postgres: docs
            .e2_postgres
            .as_ref()
            .map(|d| e2_postgres_view(d, data, data_href)),
        e3_postgres: docs
            .e3_postgres
            .as_ref()
            .map(|d| e3_postgres_view(d, data, data_href)),
        cases: docs
            .cases
            .iter()
            .map(|c| case_view(c, data, data_href))
            .collect(),
        coverage: docs
            .coverage
            .as_ref()
            .map(|d| crate::coverage::experiment_view(d, data_href)),
        field: docs
            .field
            .as_ref()
            .map(|d| crate::field::experiment_view(d, data, data_href)),
        field_problem: docs.field_problem,
        plans,
    })
}

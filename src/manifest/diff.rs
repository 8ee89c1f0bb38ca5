//! Manifest drift triage: every difference between two pins, classified.
//!
//! A diff is a signal, not a verdict. Each change carries a class from one
//! table ([`CLASSES`]) that says how bad it can be (severity) and what to
//! re-run, so whoever is on call re-runs the evals the change can affect
//! instead of the whole suite. Annotation changes also name the EFF checks
//! that verify the new claim, by id and tool.
//!
//! Everything here is a pure function of two [`Pin`]s; fetching and printing
//! live elsewhere.

use std::collections::{BTreeMap, BTreeSet};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::allow::{AllowEntry, AllowList};
use super::{Pin, PinnedTool, ServerId};

/// The versioned name of the diff document.
pub const DIFF_SCHEMA: &str = "mcp-witness.manifest-diff/v1";

/// How bad a class of change can be.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Calls that worked before can now fail.
    Breaking,
    /// Calls still work, but what the agent does (or is allowed to do) can change.
    Behavioural,
    /// Something new exists; nothing old stopped working.
    Additive,
    /// Presentation only, for most clients.
    Metadata,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Breaking => "breaking",
            Severity::Behavioural => "behavioural",
            Severity::Additive => "additive",
            Severity::Metadata => "metadata",
        }
    }
}

/// Every kind of change a diff reports. The serialized names (kebab-case)
/// are what `--allow` files and SARIF rule ids use.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum ChangeClass {
    ToolRemoved,
    ToolRenamed,
    RequiredParameterAdded,
    ParameterRemoved,
    EnumValueRemoved,
    TypeChanged,
    RequiredParameterRelaxed,
    EnumValueAdded,
    DescriptionEdited,
    AnnotationClaimsMoreSafety,
    AnnotationDeclaresLessSafety,
    InputSchemaChanged,
    OutputSchemaChanged,
    OptionalParameterAdded,
    ToolAdded,
    AnnotationChanged,
    TitleEdited,
}

/// One row of the triage table.
#[derive(Debug)]
pub struct ClassInfo {
    pub class: ChangeClass,
    /// The serialized name, e.g. `description-edited`.
    pub id: &'static str,
    pub severity: Severity,
    /// What the change is, in a few words.
    pub what: &'static str,
    /// What it can break.
    pub breaks: &'static str,
    /// What to re-run.
    pub rerun: &'static [&'static str],
}

const TRAJECTORY: &str = "trajectory suite (tool selection and ordering)";
const BUDGET: &str = "tool-budget checks (turns and cost per case)";

/// The triage table: one row per class, in report order. `docs/manifest-ci.md`
/// renders it (a test keeps the two in step).
pub const CLASSES: [ClassInfo; 17] = [
    ClassInfo {
        class: ChangeClass::ToolRemoved,
        id: "tool-removed",
        severity: Severity::Breaking,
        what: "a tool is gone",
        breaks: "calls to it fail; the agent improvises with another tool",
        rerun: &["full trajectory suite", "fallback behaviour cases"],
    },
    ClassInfo {
        class: ChangeClass::ToolRenamed,
        id: "tool-renamed",
        severity: Severity::Breaking,
        what: "a tool is gone and a new one has the same input schema shape (probable rename)",
        breaks: "calls by the old name fail; plans and allow-lists naming it go stale",
        rerun: &[
            "full trajectory suite",
            "fallback behaviour cases",
            "EFF checks of the new name",
        ],
    },
    ClassInfo {
        class: ChangeClass::RequiredParameterAdded,
        id: "required-parameter-added",
        severity: Severity::Breaking,
        what: "a new required parameter, or an optional one made required",
        breaks: "every call that does not pass it now fails",
        rerun: &["fault-injection cases", "full suite"],
    },
    ClassInfo {
        class: ChangeClass::ParameterRemoved,
        id: "parameter-removed",
        severity: Severity::Breaking,
        what: "a parameter is gone",
        breaks: "calls that pass it are rejected, or it is silently ignored",
        rerun: &["tool-call assertion cases for the tool"],
    },
    ClassInfo {
        class: ChangeClass::EnumValueRemoved,
        id: "enum-value-removed",
        severity: Severity::Breaking,
        what: "an allowed value is gone",
        breaks: "calls with that value are rejected",
        rerun: &["cases touching the tool", "authorization probes"],
    },
    ClassInfo {
        class: ChangeClass::TypeChanged,
        id: "type-changed",
        severity: Severity::Breaking,
        what: "a parameter's type or format changed",
        breaks: "coercion bugs at the boundary",
        rerun: &["tool-call assertion cases for the tool"],
    },
    ClassInfo {
        class: ChangeClass::RequiredParameterRelaxed,
        id: "required-parameter-relaxed",
        severity: Severity::Behavioural,
        what: "a required parameter is now optional",
        breaks: "the agent silently stops passing it",
        rerun: &["cases that depend on that argument's effect"],
    },
    ClassInfo {
        class: ChangeClass::EnumValueAdded,
        id: "enum-value-added",
        severity: Severity::Behavioural,
        what: "a new allowed value",
        breaks: "new paths the suite never reaches",
        rerun: &["cases touching the tool", "authorization probes"],
    },
    ClassInfo {
        class: ChangeClass::DescriptionEdited,
        id: "description-edited",
        severity: Severity::Behavioural,
        what: "a tool or parameter description changed: a prompt edit by a third party",
        breaks: "tool selection, ordering and turn count",
        rerun: &[TRAJECTORY, BUDGET],
    },
    ClassInfo {
        class: ChangeClass::AnnotationClaimsMoreSafety,
        id: "annotation-claims-more-safety",
        severity: Severity::Behavioural,
        what: "readOnlyHint or idempotentHint gained, destructiveHint or openWorldHint dropped",
        breaks: "clients may now call it without asking, so the claim must be verified",
        rerun: &["the EFF checks named for the tool", TRAJECTORY, BUDGET],
    },
    ClassInfo {
        class: ChangeClass::AnnotationDeclaresLessSafety,
        id: "annotation-declares-less-safety",
        severity: Severity::Behavioural,
        what: "readOnlyHint or idempotentHint dropped, destructiveHint or openWorldHint gained",
        breaks: "clients now ask before calling it; the tool may have gained an effect",
        rerun: &["the EFF checks named for the tool", TRAJECTORY, BUDGET],
    },
    ClassInfo {
        class: ChangeClass::InputSchemaChanged,
        id: "input-schema-changed",
        severity: Severity::Behavioural,
        what: "another input schema keyword changed (bounds, pattern, default, nesting)",
        breaks: "arguments that were valid may be rejected, or the reverse",
        rerun: &["tool-call assertion cases for the tool"],
    },
    ClassInfo {
        class: ChangeClass::OutputSchemaChanged,
        id: "output-schema-changed",
        severity: Severity::Behavioural,
        what: "the output schema changed",
        breaks: "whatever reads the tool's structured output",
        rerun: &["cases that read the tool's structured output"],
    },
    ClassInfo {
        class: ChangeClass::OptionalParameterAdded,
        id: "optional-parameter-added",
        severity: Severity::Additive,
        what: "a new optional parameter",
        breaks: "the agent may start passing it",
        rerun: &["cases touching the tool"],
    },
    ClassInfo {
        class: ChangeClass::ToolAdded,
        id: "tool-added",
        severity: Severity::Additive,
        what: "a new tool",
        breaks: "tool confusion, and a new attack surface",
        rerun: &[
            "full suite",
            "security battery",
            "EFF checks of the new tool",
        ],
    },
    ClassInfo {
        class: ChangeClass::AnnotationChanged,
        id: "annotation-changed",
        severity: Severity::Metadata,
        what: "an annotation changed without changing a hint's effective value",
        breaks: "what clients display",
        rerun: &["trajectory suite, if your client shows annotations to the model"],
    },
    ClassInfo {
        class: ChangeClass::TitleEdited,
        id: "title-edited",
        severity: Severity::Metadata,
        what: "the display title changed",
        breaks: "what clients display",
        rerun: &["trajectory suite, if your client shows titles to the model"],
    },
];

/// The triage table as Markdown, for `docs/manifest-ci.md` (a test checks
/// that the page carries exactly this table).
pub fn table_markdown() -> String {
    let mut out =
        String::from("| class | severity | what it can break | re-run |\n|---|---|---|---|\n");
    for row in &CLASSES {
        out.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            row.id,
            row.severity.as_str(),
            row.breaks,
            row.rerun.join("; ")
        ));
    }
    out
}

impl ChangeClass {
    /// This class's row of [`CLASSES`].
    pub fn info(self) -> &'static ClassInfo {
        CLASSES
            .iter()
            .find(|c| c.class == self)
            .unwrap_or(&CLASSES[0])
    }

    pub fn id(self) -> &'static str {
        self.info().id
    }

    pub fn severity(self) -> Severity {
        self.info().severity
    }

    /// Report order: the table's order.
    fn rank(self) -> usize {
        CLASSES.iter().position(|c| c.class == self).unwrap_or(0)
    }
}

/// An EFF check to re-run, on one tool.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
pub struct CheckRef {
    /// e.g. `EFF-01`.
    pub id: String,
    pub tool: String,
}

/// Whether a run of words is in both texts, only the old one, or only the new one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum WordOp {
    Same,
    Removed,
    Added,
}

/// A run of words of a word-level diff; `text` includes the whitespace that
/// preceded the run, so concatenating the `same` and `removed` runs gives the
/// old text and the `same` and `added` runs the new one (up to whitespace).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct WordRun {
    pub op: WordOp,
    pub text: String,
}

/// One classified change.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Change {
    /// The tool (its new name, for a rename).
    pub tool: String,
    /// For a rename, and for changes found between a renamed pair: the old name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub renamed_from: Option<String>,
    pub class: ChangeClass,
    pub severity: Severity,
    /// The parameter, as a dotted path (`filter.status`, `tags[]`), when the
    /// change is about one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameter: Option<String>,
    /// Where in the normalized tool: a JSON Pointer (`/inputSchema/properties/id/type`).
    pub location: String,
    /// One line for a person.
    pub summary: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<Value>,
    /// Word-level diff, for description edits.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub words: Vec<WordRun>,
    /// What to re-run.
    pub rerun: Vec<String>,
    /// EFF checks that verify the new declaration, by id and tool.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<CheckRef>,
    /// Accepted by an `--allow` entry: still reported, never fails the build.
    pub allowed: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_reason: Option<String>,
}

impl Change {
    fn new(tool: &str, class: ChangeClass, location: String, summary: String) -> Self {
        Self {
            tool: tool.to_owned(),
            renamed_from: None,
            class,
            severity: class.severity(),
            parameter: None,
            location,
            summary,
            before: None,
            after: None,
            words: Vec::new(),
            rerun: class.info().rerun.iter().map(|s| (*s).to_owned()).collect(),
            checks: Vec::new(),
            allowed: false,
            allow_reason: None,
        }
    }

    fn values(mut self, before: Option<&Value>, after: Option<&Value>) -> Self {
        self.before = before.cloned();
        self.after = after.cloned();
        self
    }

    fn parameter(mut self, parameter: &str) -> Self {
        if !parameter.is_empty() {
            self.parameter = Some(parameter.to_owned());
        }
        self
    }
}

/// One side of a comparison, as the document names it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Side {
    /// The pin file, or `live:` and the command.
    pub source: String,
    pub environment: String,
    /// `blake3:` and 16 hex digits.
    pub fingerprint: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<ServerId>,
    pub tools: usize,
}

impl Side {
    pub fn of(source: String, pin: &Pin) -> Self {
        Self {
            source,
            environment: pin.environment.clone(),
            fingerprint: pin.fingerprint.short.clone(),
            server: pin.server.clone(),
            tools: pin.tools.len(),
        }
    }
}

/// Counts, for a summary line and for CI gates.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DiffSummary {
    pub changes: usize,
    /// Changes no `--allow` entry accepts: these decide exit 1.
    pub undeclared: usize,
    pub allowed: usize,
    pub breaking: usize,
    pub behavioural: usize,
    pub additive: usize,
    pub metadata: usize,
}

/// The document `manifest diff --format json` prints (`mcp-witness.manifest-diff/v1`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ManifestDiff {
    /// Always `mcp-witness.manifest-diff/v1`.
    pub schema: String,
    pub old: Side,
    pub new: Side,
    /// Set when `--cross-environment` allowed pins of different environments.
    pub cross_environment: bool,
    pub summary: DiffSummary,
    /// Sorted by tool, then class (table order), then location.
    pub changes: Vec<Change>,
    /// Differences that are not changes to the manifest (server version, say).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// `--allow` entries that matched no change: stale reviews to remove.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unused_allow: Vec<AllowEntry>,
    /// 0 no undeclared change, 1 undeclared changes.
    pub exit_code: u8,
}

impl ManifestDiff {
    /// Compares two pins and builds the document, applying `allow`.
    pub fn build(
        old: Side,
        new: Side,
        old_pin: &Pin,
        new_pin: &Pin,
        allow: &AllowList,
        cross_environment: bool,
    ) -> Self {
        let mut changes = diff(old_pin, new_pin);
        let used = allow.apply(&mut changes);
        let unused_allow = allow
            .entries
            .iter()
            .enumerate()
            .filter(|(i, _)| !used.contains(i))
            .map(|(_, e)| e.clone())
            .collect();
        let mut summary = DiffSummary {
            changes: changes.len(),
            ..DiffSummary::default()
        };
        for change in &changes {
            if change.allowed {
                summary.allowed += 1;
            } else {
                summary.undeclared += 1;
            }
            match change.severity {
                Severity::Breaking => summary.breaking += 1,
                Severity::Behavioural => summary.behavioural += 1,
                Severity::Additive => summary.additive += 1,
                Severity::Metadata => summary.metadata += 1,
            }
        }
        let mut notes = Vec::new();
        if old.server != new.server {
            let show = |s: &Option<ServerId>| match s {
                Some(id) => format!(
                    "{} {}",
                    id.name.as_deref().unwrap_or("?"),
                    id.version.as_deref().unwrap_or("?")
                ),
                None => "unnamed".into(),
            };
            notes.push(format!(
                "serverInfo changed: {} -> {} (not part of the manifest)",
                show(&old.server),
                show(&new.server)
            ));
        }
        let exit_code = u8::from(summary.undeclared > 0);
        Self {
            schema: DIFF_SCHEMA.to_owned(),
            old,
            new,
            cross_environment,
            summary,
            changes,
            notes,
            unused_allow,
            exit_code,
        }
    }
}

/// Every change from `old` to `new`, sorted by tool, class and location.
pub fn diff(old: &Pin, new: &Pin) -> Vec<Change> {
    let mut out = Vec::new();
    let removed: Vec<&PinnedTool> = old
        .tools
        .iter()
        .filter(|t| new.tool(&t.name).is_none())
        .collect();
    let added: Vec<&PinnedTool> = new
        .tools
        .iter()
        .filter(|t| old.tool(&t.name).is_none())
        .collect();
    let renames = probable_renames(&removed, &added);
    for tool in &old.tools {
        if let Some(now) = new.tool(&tool.name) {
            compare_tool(tool, now, None, &mut out);
        }
    }
    for tool in removed {
        if let Some(now) = renames.get(tool.name.as_str()) {
            let mut change = Change::new(
                &now.name,
                ChangeClass::ToolRenamed,
                String::new(),
                format!(
                    "probably renamed from {:?}: same input schema shape",
                    tool.name
                ),
            );
            change.renamed_from = Some(tool.name.clone());
            change.checks = all_checks(&now.name);
            out.push(change);
            compare_tool(tool, now, Some(&tool.name), &mut out);
        } else {
            out.push(Change::new(
                &tool.name,
                ChangeClass::ToolRemoved,
                String::new(),
                "tool removed".into(),
            ));
        }
    }
    let renamed_to: BTreeSet<&str> = renames.values().map(|t| t.name.as_str()).collect();
    for tool in added {
        if renamed_to.contains(tool.name.as_str()) {
            continue;
        }
        let mut change = Change::new(
            &tool.name,
            ChangeClass::ToolAdded,
            String::new(),
            format!("new tool ({})", declared_safety(tool.annotations.as_ref())),
        );
        change.checks = all_checks(&tool.name);
        out.push(change);
    }
    out.sort_by(|a, b| {
        (a.tool.as_str(), a.class.rank(), a.location.as_str()).cmp(&(
            b.tool.as_str(),
            b.class.rank(),
            b.location.as_str(),
        ))
    });
    out
}

fn all_checks(tool: &str) -> Vec<CheckRef> {
    crate::checks::CHECK_IDS
        .iter()
        .map(|id| CheckRef {
            id: (*id).to_owned(),
            tool: tool.to_owned(),
        })
        .collect()
}

/// Removed/added pairs with the same input schema shape, where the match is
/// unique both ways. An ambiguous shape (two parameterless tools, say) is
/// reported as removed plus added: guessing would be worse than saying less.
fn probable_renames<'a>(
    removed: &[&'a PinnedTool],
    added: &[&'a PinnedTool],
) -> BTreeMap<&'a str, &'a PinnedTool> {
    let shape_of = |t: &PinnedTool| shape(t.input_schema.as_ref().unwrap_or(&Value::Null));
    let removed_shapes: Vec<Value> = removed.iter().map(|t| shape_of(t)).collect();
    let added_shapes: Vec<Value> = added.iter().map(|t| shape_of(t)).collect();
    let mut out = BTreeMap::new();
    for (i, old) in removed.iter().enumerate() {
        let matches: Vec<usize> = (0..added.len())
            .filter(|&j| added_shapes[j] == removed_shapes[i])
            .collect();
        let [j] = matches[..] else { continue };
        let back = removed_shapes
            .iter()
            .filter(|s| **s == added_shapes[j])
            .count();
        if back == 1 {
            out.insert(old.name.as_str(), added[j]);
        }
    }
    out
}

/// Schema keywords that are prose, not shape.
const PROSE_KEYWORDS: [&str; 4] = ["description", "title", "examples", "$comment"];
/// Keywords whose value is a map of names to subschemas.
const SCHEMA_MAPS: [&str; 5] = [
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];
/// Keywords whose value is a subschema (or, for `items`, possibly a list of them).
const SCHEMA_VALUES: [&str; 11] = [
    "items",
    "additionalProperties",
    "additionalItems",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
];
/// Keywords whose value is a list of subschemas.
const SCHEMA_LISTS: [&str; 4] = ["anyOf", "oneOf", "allOf", "prefixItems"];

/// A schema without its prose, walking only schema positions: a property
/// *named* `description` stays, the keyword `description` goes.
fn shape(schema: &Value) -> Value {
    let Value::Object(map) = schema else {
        return schema.clone();
    };
    let mut out = Map::new();
    for (key, value) in map {
        let key_str = key.as_str();
        if PROSE_KEYWORDS.contains(&key_str) {
            continue;
        }
        let shaped = match value {
            Value::Object(sub) if SCHEMA_MAPS.contains(&key_str) => Value::Object(
                sub.iter()
                    .map(|(name, s)| (name.clone(), shape(s)))
                    .collect(),
            ),
            Value::Array(items) if SCHEMA_LISTS.contains(&key_str) || key_str == "items" => {
                Value::Array(items.iter().map(shape).collect())
            }
            _ if SCHEMA_VALUES.contains(&key_str) => shape(value),
            _ => value.clone(),
        };
        out.insert(key.clone(), shaped);
    }
    Value::Object(out)
}

/// One line about what a tool declares, for a new tool.
fn declared_safety(annotations: Option<&Value>) -> String {
    let read_only = hint(annotations, &HINTS[0]);
    let destructive = hint(annotations, &HINTS[1]);
    let open_world = hint(annotations, &HINTS[3]);
    let mut parts = vec![if read_only {
        "declares read-only"
    } else if destructive {
        "may write destructively"
    } else {
        "may write"
    }];
    if open_world {
        parts.push("reaches an open world");
    }
    parts.join(", ")
}

/// A behavioural hint: its key, the value it takes when absent (the MCP
/// specification's default), the value that claims more safety, and the EFF
/// checks that hold a tool to it.
struct Hint {
    key: &'static str,
    default: bool,
    safe: bool,
    checks: &'static [&'static str],
}

/// Which checks verify which hint: EFF-01 (read-only wrote nothing), EFF-02
/// (destructive effects are declared; read-only tools are held to it too),
/// EFF-03 (idempotent repeat), EFF-06 (a read-only tool mints no credential).
/// No check observes the network yet, so `openWorldHint` names none.
const HINTS: [Hint; 4] = [
    Hint {
        key: "readOnlyHint",
        default: false,
        safe: true,
        checks: &["EFF-01", "EFF-02", "EFF-06"],
    },
    Hint {
        key: "destructiveHint",
        default: true,
        safe: false,
        checks: &["EFF-02"],
    },
    Hint {
        key: "idempotentHint",
        default: false,
        safe: true,
        checks: &["EFF-03"],
    },
    Hint {
        key: "openWorldHint",
        default: true,
        safe: false,
        checks: &[],
    },
];

/// The effective value of a hint: the declared boolean, else the default.
fn hint(annotations: Option<&Value>, hint: &Hint) -> bool {
    annotations
        .and_then(|a| a.get(hint.key))
        .and_then(Value::as_bool)
        .unwrap_or(hint.default)
}

/// A JSON Pointer segment (RFC 6901).
fn pointer_segment(s: &str) -> String {
    s.replace('~', "~0").replace('/', "~1")
}

/// Changes between two versions of one tool (the same name, or a renamed pair).
fn compare_tool(
    old: &PinnedTool,
    new: &PinnedTool,
    renamed_from: Option<&str>,
    out: &mut Vec<Change>,
) {
    let start = out.len();
    let name = new.name.as_str();
    if old.title != new.title {
        let (before, after) = (
            old.title.clone().map(Value::String),
            new.title.clone().map(Value::String),
        );
        out.push(
            Change::new(
                name,
                ChangeClass::TitleEdited,
                "/title".into(),
                format!(
                    "title: {} -> {}",
                    show_json(before.as_ref()),
                    show_json(after.as_ref())
                ),
            )
            .values(before.as_ref(), after.as_ref()),
        );
    }
    if old.description != new.description {
        out.push(description_change(
            name,
            "",
            "/description".into(),
            old.description.as_deref(),
            new.description.as_deref(),
        ));
    }
    compare_annotations(
        name,
        old.annotations.as_ref(),
        new.annotations.as_ref(),
        out,
    );
    match (&old.input_schema, &new.input_schema) {
        (Some(a), Some(b)) => compare_schema(name, a, b, "/inputSchema", "", out),
        (a, b) if a != b => out.push(
            Change::new(
                name,
                ChangeClass::InputSchemaChanged,
                "/inputSchema".into(),
                if a.is_none() {
                    "input schema added".into()
                } else {
                    "input schema removed".into()
                },
            )
            .values(a.as_ref(), b.as_ref()),
        ),
        _ => {}
    }
    if old.output_schema != new.output_schema {
        let summary = match (&old.output_schema, &new.output_schema) {
            (None, _) => "output schema added",
            (_, None) => "output schema removed",
            _ => "output schema changed",
        };
        out.push(
            Change::new(
                name,
                ChangeClass::OutputSchemaChanged,
                "/outputSchema".into(),
                summary.into(),
            )
            .values(old.output_schema.as_ref(), new.output_schema.as_ref()),
        );
    }
    if let Some(previous) = renamed_from {
        for change in &mut out[start..] {
            change.renamed_from = Some(previous.to_owned());
        }
    }
}

fn description_change(
    tool: &str,
    parameter: &str,
    location: String,
    old: Option<&str>,
    new: Option<&str>,
) -> Change {
    let words = word_diff(old.unwrap_or(""), new.unwrap_or(""));
    let edited = words.iter().filter(|w| w.op != WordOp::Same).count();
    let what = if parameter.is_empty() {
        "description".to_owned()
    } else {
        format!("description of parameter {parameter}")
    };
    let summary = match (old, new) {
        (None, _) => format!("{what} added"),
        (_, None) => format!("{what} removed"),
        _ if edited == 0 => format!("{what}: whitespace changed"),
        _ => format!("{what} edited"),
    };
    let mut change = Change::new(tool, ChangeClass::DescriptionEdited, location, summary)
        .values(
            old.map(|s| Value::String(s.to_owned())).as_ref(),
            new.map(|s| Value::String(s.to_owned())).as_ref(),
        )
        .parameter(parameter);
    change.words = words;
    change
}

fn compare_annotations(
    tool: &str,
    old: Option<&Value>,
    new: Option<&Value>,
    out: &mut Vec<Change>,
) {
    if old == new {
        return;
    }
    let empty = Map::new();
    let old_map = old.and_then(Value::as_object).unwrap_or(&empty);
    let new_map = new.and_then(Value::as_object).unwrap_or(&empty);
    let mut found = false;
    for h in &HINTS {
        let (a, b) = (old_map.get(h.key), new_map.get(h.key));
        if a == b {
            continue;
        }
        found = true;
        let location = format!("/annotations/{}", h.key);
        let (was, now) = (hint(old, h), hint(new, h));
        let show = |v: Option<&Value>, effective: bool| match v {
            Some(Value::Bool(b)) => b.to_string(),
            Some(other) => format!("{other} (not a boolean: {effective})"),
            None => format!("unset ({effective})"),
        };
        let transition = format!("{}: {} -> {}", h.key, show(a, was), show(b, now));
        let change = if was == now {
            Change::new(
                tool,
                ChangeClass::AnnotationChanged,
                location,
                format!("{transition}: same effective value"),
            )
        } else {
            let more = now == h.safe;
            let (class, consequence) = if more {
                (
                    ChangeClass::AnnotationClaimsMoreSafety,
                    "now claims more safety: clients may call it without asking",
                )
            } else {
                (
                    ChangeClass::AnnotationDeclaresLessSafety,
                    "now declares less safety: clients will ask before calling it",
                )
            };
            let mut change = Change::new(
                tool,
                class,
                location,
                format!("{transition}; {consequence}"),
            );
            change.checks = h
                .checks
                .iter()
                .map(|id| CheckRef {
                    id: (*id).to_owned(),
                    tool: tool.to_owned(),
                })
                .collect();
            // The table's first advice ("the EFF checks named for the tool")
            // becomes the concrete list, or says that none exists yet.
            let first = if h.checks.is_empty() {
                "no EFF check observes the network yet: review its reach by hand".to_owned()
            } else {
                let ids: Vec<String> = change
                    .checks
                    .iter()
                    .map(|c| format!("{} on {}", c.id, c.tool))
                    .collect();
                ids.join(", ")
            };
            match change.rerun.first_mut() {
                Some(slot) => *slot = first,
                None => change.rerun.push(first),
            }
            change
        };
        out.push(change.values(a, b));
    }
    let keys: BTreeSet<&String> = old_map.keys().chain(new_map.keys()).collect();
    for key in keys {
        if HINTS.iter().any(|h| h.key == key.as_str()) {
            continue;
        }
        let (a, b) = (old_map.get(key), new_map.get(key));
        if a != b {
            found = true;
            out.push(
                Change::new(
                    tool,
                    ChangeClass::AnnotationChanged,
                    format!("/annotations/{}", pointer_segment(key)),
                    format!("annotation {key:?} changed"),
                )
                .values(a, b),
            );
        }
    }
    if !found {
        // Not objects on one side or both (malformed annotations).
        out.push(
            Change::new(
                tool,
                ChangeClass::AnnotationChanged,
                "/annotations".into(),
                "annotations changed".into(),
            )
            .values(old, new),
        );
    }
}

fn string_set(value: Option<&Value>) -> BTreeSet<&str> {
    value
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// Keywords [`compare_schema`] classifies itself; any other differing keyword
/// is an `input-schema-changed`.
const CLASSIFIED: [&str; 7] = [
    "type",
    "format",
    "enum",
    "description",
    "properties",
    "required",
    "items",
];

/// Compares two schema nodes. `parameter` is the dotted path of the
/// parameter the node describes (empty at the root).
fn compare_schema(
    tool: &str,
    old: &Value,
    new: &Value,
    location: &str,
    parameter: &str,
    out: &mut Vec<Change>,
) {
    if old == new {
        return;
    }
    let (Value::Object(a), Value::Object(b)) = (old, new) else {
        out.push(
            Change::new(
                tool,
                ChangeClass::InputSchemaChanged,
                location.to_owned(),
                "schema changed".into(),
            )
            .values(Some(old), Some(new))
            .parameter(parameter),
        );
        return;
    };
    let subject = if parameter.is_empty() {
        "input".to_owned()
    } else {
        format!("parameter {parameter}")
    };
    for keyword in ["type", "format"] {
        let (x, y) = (a.get(keyword), b.get(keyword));
        if x != y {
            out.push(
                Change::new(
                    tool,
                    ChangeClass::TypeChanged,
                    format!("{location}/{keyword}"),
                    format!("{subject}: {keyword} {} -> {}", show_json(x), show_json(y)),
                )
                .values(x, y)
                .parameter(parameter),
            );
        }
    }
    compare_enum(
        tool,
        a.get("enum"),
        b.get("enum"),
        location,
        parameter,
        &subject,
        out,
    );
    let (da, db) = (a.get("description"), b.get("description"));
    if da != db {
        let text = |v: Option<&Value>| {
            v.map(|v| match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            })
        };
        out.push(description_change(
            tool,
            parameter,
            format!("{location}/description"),
            text(da).as_deref(),
            text(db).as_deref(),
        ));
    }
    compare_properties(tool, a, b, location, parameter, out);
    match (a.get("items"), b.get("items")) {
        (Some(x), Some(y)) => compare_schema(
            tool,
            x,
            y,
            &format!("{location}/items"),
            &format!("{parameter}[]"),
            out,
        ),
        (x, y) if x != y => out.push(
            Change::new(
                tool,
                ChangeClass::InputSchemaChanged,
                format!("{location}/items"),
                format!("{subject}: items changed"),
            )
            .values(x, y)
            .parameter(parameter),
        ),
        _ => {}
    }
    let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    for key in keys {
        if CLASSIFIED.contains(&key.as_str()) {
            continue;
        }
        let (x, y) = (a.get(key), b.get(key));
        if x != y {
            out.push(
                Change::new(
                    tool,
                    ChangeClass::InputSchemaChanged,
                    format!("{location}/{}", pointer_segment(key)),
                    format!("{subject}: {key} {} -> {}", show_json(x), show_json(y)),
                )
                .values(x, y)
                .parameter(parameter),
            );
        }
    }
}

fn compare_enum(
    tool: &str,
    old: Option<&Value>,
    new: Option<&Value>,
    location: &str,
    parameter: &str,
    subject: &str,
    out: &mut Vec<Change>,
) {
    if old == new {
        return;
    }
    let location = format!("{location}/enum");
    match (old.and_then(Value::as_array), new.and_then(Value::as_array)) {
        (Some(x), Some(y)) => {
            let gone: Vec<&Value> = x.iter().filter(|v| !y.contains(v)).collect();
            let came: Vec<&Value> = y.iter().filter(|v| !x.contains(v)).collect();
            let list = |vs: &[&Value]| {
                vs.iter()
                    .map(|v| v.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            if !gone.is_empty() {
                out.push(
                    Change::new(
                        tool,
                        ChangeClass::EnumValueRemoved,
                        location.clone(),
                        format!("{subject}: value(s) removed: {}", list(&gone)),
                    )
                    .values(old, new)
                    .parameter(parameter),
                );
            }
            if !came.is_empty() {
                out.push(
                    Change::new(
                        tool,
                        ChangeClass::EnumValueAdded,
                        location.clone(),
                        format!("{subject}: value(s) added: {}", list(&came)),
                    )
                    .values(old, new)
                    .parameter(parameter),
                );
            }
            if gone.is_empty() && came.is_empty() {
                out.push(
                    Change::new(
                        tool,
                        ChangeClass::InputSchemaChanged,
                        location,
                        format!("{subject}: enum reordered"),
                    )
                    .values(old, new)
                    .parameter(parameter),
                );
            }
        }
        _ => {
            let summary = match (old, new) {
                (None, _) => format!("{subject}: now restricted to an enum"),
                (_, None) => format!("{subject}: no longer restricted to an enum"),
                _ => format!("{subject}: enum changed"),
            };
            out.push(
                Change::new(tool, ChangeClass::InputSchemaChanged, location, summary)
                    .values(old, new)
                    .parameter(parameter),
            );
        }
    }
}

fn compare_properties(
    tool: &str,
    a: &Map<String, Value>,
    b: &Map<String, Value>,
    location: &str,
    parameter: &str,
    out: &mut Vec<Change>,
) {
    let empty = Map::new();
    let pa = a
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let pb = b
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let (ra, rb) = (string_set(a.get("required")), string_set(b.get("required")));
    let child = |name: &str| {
        if parameter.is_empty() {
            name.to_owned()
        } else {
            format!("{parameter}.{name}")
        }
    };
    let names: BTreeSet<&String> = pa.keys().chain(pb.keys()).collect();
    for name in &names {
        let here = format!("{location}/properties/{}", pointer_segment(name));
        let param = child(name);
        match (pa.get(*name), pb.get(*name)) {
            (Some(x), None) => out.push(
                Change::new(
                    tool,
                    ChangeClass::ParameterRemoved,
                    here,
                    format!(
                        "parameter {param} removed{}",
                        if ra.contains(name.as_str()) {
                            " (it was required)"
                        } else {
                            ""
                        }
                    ),
                )
                .values(Some(x), None)
                .parameter(&param),
            ),
            (None, Some(y)) => {
                let (class, summary) = if rb.contains(name.as_str()) {
                    (
                        ChangeClass::RequiredParameterAdded,
                        format!("required parameter {param} added"),
                    )
                } else {
                    (
                        ChangeClass::OptionalParameterAdded,
                        format!("optional parameter {param} added"),
                    )
                };
                out.push(
                    Change::new(tool, class, here, summary)
                        .values(None, Some(y))
                        .parameter(&param),
                );
            }
            (Some(x), Some(y)) => {
                let (was, now) = (ra.contains(name.as_str()), rb.contains(name.as_str()));
                if was && !now {
                    out.push(
                        Change::new(
                            tool,
                            ChangeClass::RequiredParameterRelaxed,
                            format!("{location}/required"),
                            format!("parameter {param} is no longer required"),
                        )
                        .parameter(&param),
                    );
                } else if !was && now {
                    out.push(
                        Change::new(
                            tool,
                            ChangeClass::RequiredParameterAdded,
                            format!("{location}/required"),
                            format!("parameter {param} was optional and is now required"),
                        )
                        .parameter(&param),
                    );
                }
                compare_schema(tool, x, y, &here, &param, out);
            }
            (None, None) => {}
        }
    }
    // `required` naming something that is in neither `properties`.
    let stray_a: BTreeSet<&str> = ra
        .iter()
        .copied()
        .filter(|n| !names.iter().any(|m| m.as_str() == *n))
        .collect();
    let stray_b: BTreeSet<&str> = rb
        .iter()
        .copied()
        .filter(|n| !names.iter().any(|m| m.as_str() == *n))
        .collect();
    if stray_a != stray_b {
        out.push(
            Change::new(
                tool,
                ChangeClass::InputSchemaChanged,
                format!("{location}/required"),
                "required names outside properties changed".into(),
            )
            .values(a.get("required"), b.get("required"))
            .parameter(parameter),
        );
    }
    // A `properties` or `required` that is not the expected type, changed.
    for keyword in ["properties", "required"] {
        let (x, y) = (a.get(keyword), b.get(keyword));
        let malformed = |v: Option<&Value>| match (keyword, v) {
            (_, None) => false,
            ("properties", Some(v)) => !v.is_object(),
            (_, Some(v)) => !v.is_array(),
        };
        if x != y && (malformed(x) || malformed(y)) {
            out.push(
                Change::new(
                    tool,
                    ChangeClass::InputSchemaChanged,
                    format!("{location}/{keyword}"),
                    format!("{keyword} changed (malformed on one side)"),
                )
                .values(x, y)
                .parameter(parameter),
            );
        }
    }
}

fn show_json(value: Option<&Value>) -> String {
    match value {
        None => "unset".into(),
        Some(v) => crate::text::clip(&v.to_string(), 80),
    }
}

/// Longest inputs the word diff aligns word by word; past this (product of
/// token counts) it reports the whole text replaced, so a hostile megabyte
/// description cannot make the diff quadratic.
const WORD_DIFF_CELLS: usize = 4_000_000;

/// A token of a text: the whitespace before it, and the token itself (a run
/// of letters, digits and `_`, or one other character).
fn tokens(text: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut space = String::new();
    let mut word = String::new();
    let mut word_space = String::new();
    let flush = |out: &mut Vec<(String, String)>, word: &mut String, word_space: &mut String| {
        if !word.is_empty() {
            out.push((std::mem::take(word_space), std::mem::take(word)));
        }
    };
    for c in text.chars() {
        if c.is_whitespace() {
            flush(&mut out, &mut word, &mut word_space);
            space.push(c);
        } else if c.is_alphanumeric() || c == '_' {
            if word.is_empty() {
                word_space = std::mem::take(&mut space);
            }
            word.push(c);
        } else {
            flush(&mut out, &mut word, &mut word_space);
            out.push((std::mem::take(&mut space), c.to_string()));
        }
    }
    flush(&mut out, &mut word, &mut word_space);
    out
}

/// A word-level diff of two texts (punctuation counts as its own word, so
/// `ID` → `ID.` is an insertion of `.`, not a replaced word).
pub fn word_diff(old: &str, new: &str) -> Vec<WordRun> {
    let a = tokens(old);
    let b = tokens(new);
    let mut ops: Vec<(WordOp, &(String, String))> = Vec::new();
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x.1 == y.1).count();
    let suffix = a[prefix..]
        .iter()
        .rev()
        .zip(b[prefix..].iter().rev())
        .take_while(|(x, y)| x.1 == y.1)
        .count();
    let (mid_a, mid_b) = (&a[prefix..a.len() - suffix], &b[prefix..b.len() - suffix]);
    ops.extend(b[..prefix].iter().map(|t| (WordOp::Same, t)));
    let (n, m) = (mid_a.len(), mid_b.len());
    if n.saturating_mul(m) > WORD_DIFF_CELLS {
        ops.extend(mid_a.iter().map(|t| (WordOp::Removed, t)));
        ops.extend(mid_b.iter().map(|t| (WordOp::Added, t)));
    } else {
        // lcs[i][j]: longest common subsequence of mid_a[i..] and mid_b[j..].
        let width = m + 1;
        let mut lcs = vec![0u32; (n + 1) * width];
        for i in (0..n).rev() {
            for j in (0..m).rev() {
                lcs[i * width + j] = if mid_a[i].1 == mid_b[j].1 {
                    lcs[(i + 1) * width + j + 1] + 1
                } else {
                    lcs[(i + 1) * width + j].max(lcs[i * width + j + 1])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        while i < n || j < m {
            if i < n && j < m && mid_a[i].1 == mid_b[j].1 {
                ops.push((WordOp::Same, &mid_b[j]));
                i += 1;
                j += 1;
            } else if j < m && (i == n || lcs[i * width + j + 1] >= lcs[(i + 1) * width + j]) {
                ops.push((WordOp::Added, &mid_b[j]));
                j += 1;
            } else {
                ops.push((WordOp::Removed, &mid_a[i]));
                i += 1;
            }
        }
    }
    ops.extend(b[b.len() - suffix..].iter().map(|t| (WordOp::Same, t)));
    // Removals first within a changed stretch reads better: [-old-] {+new+}.
    let mut runs: Vec<WordRun> = Vec::new();
    for (op, (space, token)) in ops {
        match runs.last_mut() {
            Some(last) if last.op == op => {
                last.text.push_str(space);
                last.text.push_str(token);
            }
            _ => runs.push(WordRun {
                op,
                text: format!("{space}{token}"),
            }),
        }
    }
    order_removals_first(&mut runs);
    runs
}

/// Within every stretch of consecutive non-`same` runs, puts removed text
/// before added text (merging runs of the same kind).
fn order_removals_first(runs: &mut Vec<WordRun>) {
    let mut out: Vec<WordRun> = Vec::new();
    let mut removed = String::new();
    let mut added = String::new();
    let flush = |out: &mut Vec<WordRun>, removed: &mut String, added: &mut String| {
        if !removed.is_empty() {
            out.push(WordRun {
                op: WordOp::Removed,
                text: std::mem::take(removed),
            });
        }
        if !added.is_empty() {
            out.push(WordRun {
                op: WordOp::Added,
                text: std::mem::take(added),
            });
        }
    };
    for run in runs.drain(..) {
        match run.op {
            WordOp::Same => {
                flush(&mut out, &mut removed, &mut added);
                out.push(run);
            }
            WordOp::Removed => removed.push_str(&run.text),
            WordOp::Added => added.push_str(&run.text),
        }
    }
    flush(&mut out, &mut removed, &mut added);
    *runs = out;
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(name: &str, description: &str, schema: Value, annotations: Value) -> Value {
        json!({
            "name": name,
            "description": description,
            "inputSchema": schema,
            "annotations": annotations,
        })
    }

    fn id_schema() -> Value {
        json!({
            "type": "object",
            "properties": {"id": {"type": "string", "description": "Order id."}},
            "required": ["id"]
        })
    }

    fn pin(tools: &[Value]) -> Pin {
        Pin::from_catalog(tools, "default", None)
    }

    /// The changes between two single-tool catalogs.
    fn changes(old: Value, new: Value) -> Vec<Change> {
        diff(&pin(&[old]), &pin(&[new]))
    }

    fn classes(changes: &[Change]) -> Vec<ChangeClass> {
        changes.iter().map(|c| c.class).collect()
    }

    fn read_only(v: bool) -> Value {
        json!({"readOnlyHint": v, "destructiveHint": false})
    }

    #[test]
    fn the_table_has_one_row_per_class_and_matches_serde_names() {
        let mut seen = BTreeSet::new();
        for row in &CLASSES {
            assert!(seen.insert(row.class), "{:?} twice", row.class);
            assert_eq!(serde_json::to_value(row.class).unwrap(), json!(row.id));
            assert_eq!(row.class.info().id, row.id);
            assert!(!row.rerun.is_empty());
        }
    }

    #[test]
    fn the_ci_guide_carries_the_table_from_the_code() {
        let guide = include_str!("../../docs/manifest-ci.md");
        assert!(
            guide.contains(&table_markdown()),
            "docs/manifest-ci.md is out of date; paste this table:\n{}",
            table_markdown()
        );
    }

    #[test]
    fn identical_manifests_have_no_changes() {
        let t = tool("a", "x", id_schema(), read_only(true));
        assert!(changes(t.clone(), t).is_empty());
    }

    #[test]
    fn the_two_word_description_edit_is_caught_with_a_word_diff() {
        let old = tool(
            "lookup_order",
            "Look up an order by ID",
            id_schema(),
            read_only(true),
        );
        let new = tool(
            "lookup_order",
            "Look up an order by ID. Prefer search_orders when the ID is unknown.",
            id_schema(),
            read_only(true),
        );
        let found = changes(old, new);
        assert_eq!(classes(&found), [ChangeClass::DescriptionEdited]);
        let c = &found[0];
        assert_eq!(c.severity, Severity::Behavioural);
        assert_eq!(c.location, "/description");
        assert!(c.rerun.iter().any(|r| r.contains("trajectory")));
        assert!(c.rerun.iter().any(|r| r.contains("tool-budget")));
        assert_eq!(
            c.words,
            [
                WordRun {
                    op: WordOp::Same,
                    text: "Look up an order by ID".into()
                },
                WordRun {
                    op: WordOp::Added,
                    text: ". Prefer search_orders when the ID is unknown.".into()
                },
            ]
        );
        // A names-only comparison sees nothing here; the pin does.
        let old_names: Vec<_> = found.iter().map(|c| &c.tool).collect();
        assert_eq!(old_names, ["lookup_order"]);
    }

    #[test]
    fn word_diff_marks_replacements_and_keeps_spacing() {
        let runs = word_diff(
            "Returns the body of a note.",
            "Returns the title of a note.",
        );
        let ops: Vec<(WordOp, &str)> = runs.iter().map(|r| (r.op, r.text.as_str())).collect();
        assert_eq!(
            ops,
            [
                (WordOp::Same, "Returns the"),
                (WordOp::Removed, " body"),
                (WordOp::Added, " title"),
                (WordOp::Same, " of a note."),
            ]
        );
        assert!(word_diff("", "").is_empty());
        let long = "w ".repeat(3000);
        let other = "v ".repeat(3000);
        let runs = word_diff(&long, &other);
        assert_eq!(runs.len(), 2, "beyond the bound: whole text replaced");
    }

    #[test]
    fn a_parameter_description_edit_is_a_description_edit_on_that_parameter() {
        let mut schema = id_schema();
        schema["properties"]["id"]["description"] = json!("Order id, or its email address.");
        let found = changes(
            tool("lookup_order", "x", id_schema(), read_only(true)),
            tool("lookup_order", "x", schema, read_only(true)),
        );
        assert_eq!(classes(&found), [ChangeClass::DescriptionEdited]);
        assert_eq!(found[0].parameter.as_deref(), Some("id"));
        assert_eq!(found[0].location, "/inputSchema/properties/id/description");
    }

    #[test]
    fn a_removed_tool_is_breaking_and_a_new_tool_is_additive_with_its_checks() {
        let a = tool("a", "A.", id_schema(), read_only(true));
        let b = tool(
            "b",
            "B.",
            json!({"type": "object", "properties": {"url": {"type": "string"}}}),
            json!({"openWorldHint": true}),
        );
        let found = diff(&pin(&[a]), &pin(&[b]));
        assert_eq!(
            classes(&found),
            [ChangeClass::ToolRemoved, ChangeClass::ToolAdded]
        );
        assert_eq!(found[0].tool, "a");
        assert_eq!(found[0].severity, Severity::Breaking);
        let added = &found[1];
        assert_eq!(added.severity, Severity::Additive);
        assert!(added.rerun.iter().any(|r| r == "security battery"));
        assert!(
            added
                .checks
                .iter()
                .any(|c| c.id == "EFF-01" && c.tool == "b")
        );
        assert!(added.summary.contains("open world"));
    }

    #[test]
    fn a_removed_and_added_pair_with_the_same_shape_is_a_probable_rename() {
        let old = tool("get_order", "Gets an order.", id_schema(), read_only(true));
        let mut schema = id_schema();
        schema["properties"]["id"]["description"] = json!("The order's id.");
        let new = tool("fetch_order", "Fetches an order.", schema, read_only(true));
        let found = changes(old, new);
        assert_eq!(
            classes(&found),
            [
                ChangeClass::ToolRenamed,
                ChangeClass::DescriptionEdited,
                ChangeClass::DescriptionEdited
            ]
        );
        assert!(found.iter().all(|c| c.tool == "fetch_order"));
        assert!(
            found
                .iter()
                .all(|c| c.renamed_from.as_deref() == Some("get_order"))
        );
        assert_eq!(found[0].severity, Severity::Breaking);
        assert!(found[0].summary.contains("probably renamed"));
    }

    #[test]
    fn an_ambiguous_shape_is_not_guessed_to_be_a_rename() {
        let empty = json!({"type": "object", "properties": {}});
        let old = pin(&[tool("ping", "p", empty.clone(), read_only(true))]);
        let new = pin(&[
            tool("health", "h", empty.clone(), read_only(true)),
            tool("status", "s", empty, read_only(true)),
        ]);
        let found = diff(&old, &new);
        assert_eq!(
            classes(&found),
            [
                ChangeClass::ToolAdded,
                ChangeClass::ToolRemoved,
                ChangeClass::ToolAdded
            ]
        );
    }

    #[test]
    fn a_property_named_description_is_shape_not_prose() {
        let with = |p: &str| json!({"type": "object", "properties": {p: {"type": "string"}}, "description": "x"});
        assert_eq!(shape(&with("description")), shape(&with("description")));
        assert_ne!(shape(&with("description")), shape(&with("body")));
        assert!(shape(&with("description"))["properties"]["description"].is_object());
        assert!(shape(&with("body")).get("description").is_none());
    }

    #[test]
    fn required_parameter_added_and_optional_parameter_added() {
        let mut schema = id_schema();
        schema["properties"]["reason"] = json!({"type": "string"});
        schema["required"] = json!(["id", "reason"]);
        let found = changes(
            tool("refund", "r", id_schema(), read_only(false)),
            tool("refund", "r", schema.clone(), read_only(false)),
        );
        assert_eq!(classes(&found), [ChangeClass::RequiredParameterAdded]);
        assert_eq!(found[0].parameter.as_deref(), Some("reason"));
        assert_eq!(found[0].severity, Severity::Breaking);
        assert!(found[0].rerun.iter().any(|r| r.contains("fault-injection")));

        schema["required"] = json!(["id"]);
        let found = changes(
            tool("refund", "r", id_schema(), read_only(false)),
            tool("refund", "r", schema, read_only(false)),
        );
        assert_eq!(classes(&found), [ChangeClass::OptionalParameterAdded]);
        assert_eq!(found[0].severity, Severity::Additive);
    }

    #[test]
    fn an_optional_parameter_made_required_is_a_required_parameter_added() {
        let mut old = id_schema();
        old["properties"]["note"] = json!({"type": "string"});
        let mut new = old.clone();
        new["required"] = json!(["id", "note"]);
        let found = changes(
            tool("refund", "r", old, read_only(false)),
            tool("refund", "r", new, read_only(false)),
        );
        assert_eq!(classes(&found), [ChangeClass::RequiredParameterAdded]);
        assert!(found[0].summary.contains("was optional"));
    }

    #[test]
    fn a_required_parameter_relaxed_to_optional() {
        let mut new = id_schema();
        new["required"] = json!([]);
        let found = changes(
            tool("refund", "r", id_schema(), read_only(false)),
            tool("refund", "r", new, read_only(false)),
        );
        assert_eq!(classes(&found), [ChangeClass::RequiredParameterRelaxed]);
        assert_eq!(found[0].parameter.as_deref(), Some("id"));
        assert_eq!(found[0].severity, Severity::Behavioural);
    }

    #[test]
    fn a_parameter_removed() {
        let mut old = id_schema();
        old["properties"]["verbose"] = json!({"type": "boolean"});
        let found = changes(
            tool("t", "d", old, read_only(true)),
            tool("t", "d", id_schema(), read_only(true)),
        );
        assert_eq!(classes(&found), [ChangeClass::ParameterRemoved]);
        assert_eq!(found[0].parameter.as_deref(), Some("verbose"));
        assert_eq!(found[0].severity, Severity::Breaking);
    }

    #[test]
    fn enum_values_added_and_removed_are_told_apart() {
        let with = |values: Value| json!({"type": "object", "properties": {"status": {"type": "string", "enum": values}}});
        let found = changes(
            tool("t", "d", with(json!(["open", "closed"])), read_only(true)),
            tool("t", "d", with(json!(["open", "refunded"])), read_only(true)),
        );
        assert_eq!(
            classes(&found),
            [ChangeClass::EnumValueRemoved, ChangeClass::EnumValueAdded]
        );
        assert!(found[0].summary.contains("\"closed\""));
        assert!(found[1].summary.contains("\"refunded\""));
        assert_eq!(found[0].severity, Severity::Breaking);
        assert_eq!(found[1].severity, Severity::Behavioural);
        assert!(found[1].rerun.iter().any(|r| r.contains("authorization")));
    }

    #[test]
    fn type_and_format_changes_including_nested_ones() {
        let with = |ty: &str, format: Option<&str>| {
            let mut since = json!({"type": ty});
            if let Some(f) = format {
                since["format"] = json!(f);
            }
            json!({"type": "object", "properties": {
                "filter": {"type": "object", "properties": {"since": since}},
                "ids": {"type": "array", "items": {"type": ty}}
            }})
        };
        let found = changes(
            tool("t", "d", with("string", Some("date")), read_only(true)),
            tool(
                "t",
                "d",
                with("integer", Some("date-time")),
                read_only(true),
            ),
        );
        let params: Vec<(ChangeClass, Option<&str>)> = found
            .iter()
            .map(|c| (c.class, c.parameter.as_deref()))
            .collect();
        assert_eq!(
            params,
            [
                (ChangeClass::TypeChanged, Some("filter.since")),
                (ChangeClass::TypeChanged, Some("filter.since")),
                (ChangeClass::TypeChanged, Some("ids[]")),
            ]
        );
        assert_eq!(
            found[0].location,
            "/inputSchema/properties/filter/properties/since/format"
        );
        assert_eq!(found[2].location, "/inputSchema/properties/ids/items/type");
    }

    #[test]
    fn other_schema_keywords_are_input_schema_changes() {
        let mut new = id_schema();
        new["properties"]["id"]["minLength"] = json!(3);
        new["additionalProperties"] = json!(false);
        let found = changes(
            tool("t", "d", id_schema(), read_only(true)),
            tool("t", "d", new, read_only(true)),
        );
        assert_eq!(
            classes(&found),
            [
                ChangeClass::InputSchemaChanged,
                ChangeClass::InputSchemaChanged
            ]
        );
        assert_eq!(found[0].location, "/inputSchema/additionalProperties");
        assert_eq!(found[1].parameter.as_deref(), Some("id"));
    }

    #[test]
    fn output_schema_and_title_changes() {
        let mut old = tool("t", "d", id_schema(), read_only(true));
        old["title"] = json!("Old");
        let mut new = old.clone();
        new["title"] = json!("New");
        new["outputSchema"] = json!({"type": "object"});
        let found = changes(old, new);
        assert_eq!(
            classes(&found),
            [ChangeClass::OutputSchemaChanged, ChangeClass::TitleEdited]
        );
        assert_eq!(found[0].severity, Severity::Behavioural);
        assert_eq!(found[1].severity, Severity::Metadata);
        assert_eq!(found[1].summary, r#"title: "Old" -> "New""#);
    }

    #[test]
    fn gaining_read_only_claims_more_safety_and_names_the_eff_checks() {
        let found = changes(
            tool("save_note", "Saves.", id_schema(), read_only(false)),
            tool("save_note", "Saves.", id_schema(), read_only(true)),
        );
        assert_eq!(classes(&found), [ChangeClass::AnnotationClaimsMoreSafety]);
        let c = &found[0];
        assert_eq!(c.location, "/annotations/readOnlyHint");
        assert!(c.summary.contains("without asking"));
        let ids: Vec<&str> = c.checks.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["EFF-01", "EFF-02", "EFF-06"]);
        assert!(c.checks.iter().all(|c| c.tool == "save_note"));
        assert_eq!(
            c.rerun[0],
            "EFF-01 on save_note, EFF-02 on save_note, EFF-06 on save_note"
        );
    }

    #[test]
    fn a_weakened_read_only_hint_declares_less_safety() {
        let found = changes(
            tool("get_note", "Gets.", id_schema(), read_only(true)),
            tool("get_note", "Gets.", id_schema(), read_only(false)),
        );
        assert_eq!(classes(&found), [ChangeClass::AnnotationDeclaresLessSafety]);
        assert!(found[0].checks.iter().any(|c| c.id == "EFF-01"));
        assert!(found[0].summary.contains("less safety"));
        // Dropping the hint altogether is the same weakening (default false).
        let found = changes(
            tool(
                "get_note",
                "Gets.",
                id_schema(),
                json!({"readOnlyHint": true}),
            ),
            tool("get_note", "Gets.", id_schema(), json!({})),
        );
        assert_eq!(classes(&found), [ChangeClass::AnnotationDeclaresLessSafety]);
        assert!(found[0].summary.contains("unset (false)"));
    }

    #[test]
    fn destructive_and_open_world_directions_follow_the_spec_defaults() {
        let found = changes(
            tool("delete_note", "d", id_schema(), json!({})),
            tool(
                "delete_note",
                "d",
                id_schema(),
                json!({"destructiveHint": false}),
            ),
        );
        assert_eq!(classes(&found), [ChangeClass::AnnotationClaimsMoreSafety]);
        assert_eq!(found[0].checks[0].id, "EFF-02");
        let found = changes(
            tool("fetch", "d", id_schema(), json!({"openWorldHint": true})),
            tool("fetch", "d", id_schema(), json!({"openWorldHint": false})),
        );
        assert_eq!(classes(&found), [ChangeClass::AnnotationClaimsMoreSafety]);
        assert!(found[0].checks.is_empty());
        assert!(found[0].rerun[0].contains("by hand"));
        let found = changes(
            tool("fetch", "d", id_schema(), json!({"openWorldHint": false})),
            tool("fetch", "d", id_schema(), json!({"openWorldHint": true})),
        );
        assert_eq!(classes(&found), [ChangeClass::AnnotationDeclaresLessSafety]);
        let found = changes(
            tool("put", "d", id_schema(), json!({"idempotentHint": false})),
            tool("put", "d", id_schema(), json!({"idempotentHint": true})),
        );
        assert_eq!(classes(&found), [ChangeClass::AnnotationClaimsMoreSafety]);
        assert_eq!(found[0].checks[0].id, "EFF-03");
    }

    #[test]
    fn an_explicit_default_or_another_annotation_key_is_metadata() {
        let found = changes(
            tool("t", "d", id_schema(), json!({"title": "A"})),
            tool(
                "t",
                "d",
                id_schema(),
                json!({"title": "B", "destructiveHint": true}),
            ),
        );
        assert_eq!(
            classes(&found),
            [
                ChangeClass::AnnotationChanged,
                ChangeClass::AnnotationChanged
            ]
        );
        assert!(found.iter().all(|c| c.severity == Severity::Metadata));
        assert!(
            found
                .iter()
                .any(|c| c.summary.contains("same effective value"))
        );
    }

    #[test]
    fn the_document_counts_and_exits_one_on_undeclared_changes() {
        let old = pin(&[tool("a", "x", id_schema(), read_only(true))]);
        let new = pin(&[tool("a", "y", id_schema(), read_only(true))]);
        let side = |p: &Pin| Side::of("f".into(), p);
        let doc = ManifestDiff::build(
            side(&old),
            side(&new),
            &old,
            &new,
            &AllowList::default(),
            false,
        );
        assert_eq!(doc.schema, DIFF_SCHEMA);
        assert_eq!(doc.summary.changes, 1);
        assert_eq!(doc.summary.undeclared, 1);
        assert_eq!(doc.summary.behavioural, 1);
        assert_eq!(doc.exit_code, 1);
        let same = ManifestDiff::build(
            side(&old),
            side(&old),
            &old,
            &old,
            &AllowList::default(),
            false,
        );
        assert_eq!(same.exit_code, 0);
        assert!(same.changes.is_empty());
    }
}

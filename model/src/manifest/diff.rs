//! Manifest drift triage: every difference between two pins, classified.
//!
//! A diff is a signal, not a verdict. Each change carries a class from one
//! table ([`CLASSES`]) that says how bad it can be (severity) and what to
//! re-run, so whoever is on call re-runs the evals the change can affect
//! instead of the whole suite. Annotation changes also name the EFF checks
//! that verify the new claim, by id and tool.
//!
//! This module holds the document and its vocabulary; the comparison that
//! fills it is the engine's (`witness_manifest::diff`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Pin, ServerId};

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

/// How a change is measured instead of guessed at: the command that shows
/// what it does, not only that it happened.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Measure {
    /// The agent suite run with the old definitions and with the new ones,
    /// against the live server both times, then `agent compare`: the
    /// behaviour delta, beside the noise floor of reruns.
    AgentCompare,
    /// `mcp-witness audit`: whether the server does what its new
    /// declarations claim (the EFF checks named on the change).
    Audit,
}

impl Measure {
    pub fn id(self) -> &'static str {
        match self {
            Measure::AgentCompare => "agent-compare",
            Measure::Audit => "audit",
        }
    }
}

/// One way to measure the changes of a diff: what it shows, and the
/// commands in order. `CASES`, `DRIVER` and `SERVER` are the reader's to
/// fill in: golden cases, a model, and the server command with the stores
/// the cases seed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Measurement {
    pub measure: Measure,
    /// What it shows, in a sentence.
    pub what: String,
    pub commands: Vec<String>,
}

const COMPARE: &[Measure] = &[Measure::AgentCompare];
const AUDIT_AND_COMPARE: &[Measure] = &[Measure::Audit, Measure::AgentCompare];

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
    /// What measures it. A definition the model reads (a name, a
    /// description, a schema, a forwarded annotation) is measured by an agent
    /// compare; a declaration of what the server does, by an audit.
    pub measured_by: &'static [Measure],
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
        measured_by: COMPARE,
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
        measured_by: AUDIT_AND_COMPARE,
    },
    ClassInfo {
        class: ChangeClass::RequiredParameterAdded,
        id: "required-parameter-added",
        severity: Severity::Breaking,
        what: "a new required parameter, or an optional one made required",
        breaks: "every call that does not pass it now fails",
        rerun: &["fault-injection cases", "full suite"],
        measured_by: COMPARE,
    },
    ClassInfo {
        class: ChangeClass::ParameterRemoved,
        id: "parameter-removed",
        severity: Severity::Breaking,
        what: "a parameter is gone",
        breaks: "calls that pass it are rejected, or it is silently ignored",
        rerun: &["tool-call assertion cases for the tool"],
        measured_by: COMPARE,
    },
    ClassInfo {
        class: ChangeClass::EnumValueRemoved,
        id: "enum-value-removed",
        severity: Severity::Breaking,
        what: "an allowed value is gone",
        breaks: "calls with that value are rejected",
        rerun: &["cases touching the tool", "authorization probes"],
        measured_by: COMPARE,
    },
    ClassInfo {
        class: ChangeClass::TypeChanged,
        id: "type-changed",
        severity: Severity::Breaking,
        what: "a parameter's type or format changed",
        breaks: "coercion bugs at the boundary",
        rerun: &["tool-call assertion cases for the tool"],
        measured_by: COMPARE,
    },
    ClassInfo {
        class: ChangeClass::RequiredParameterRelaxed,
        id: "required-parameter-relaxed",
        severity: Severity::Behavioural,
        what: "a required parameter is now optional",
        breaks: "the agent silently stops passing it",
        rerun: &["cases that depend on that argument's effect"],
        measured_by: COMPARE,
    },
    ClassInfo {
        class: ChangeClass::EnumValueAdded,
        id: "enum-value-added",
        severity: Severity::Behavioural,
        what: "a new allowed value",
        breaks: "new paths the suite never reaches",
        rerun: &["cases touching the tool", "authorization probes"],
        measured_by: COMPARE,
    },
    ClassInfo {
        class: ChangeClass::DescriptionEdited,
        id: "description-edited",
        severity: Severity::Behavioural,
        what: "a tool or parameter description changed: a prompt edit by a third party",
        breaks: "tool selection, ordering and turn count",
        rerun: &[TRAJECTORY, BUDGET],
        measured_by: COMPARE,
    },
    ClassInfo {
        class: ChangeClass::AnnotationClaimsMoreSafety,
        id: "annotation-claims-more-safety",
        severity: Severity::Behavioural,
        what: "readOnlyHint or idempotentHint gained, destructiveHint or openWorldHint dropped",
        breaks: "clients may now call it without asking, so the claim must be verified",
        rerun: &["the EFF checks named for the tool", TRAJECTORY, BUDGET],
        measured_by: AUDIT_AND_COMPARE,
    },
    ClassInfo {
        class: ChangeClass::AnnotationDeclaresLessSafety,
        id: "annotation-declares-less-safety",
        severity: Severity::Behavioural,
        what: "readOnlyHint or idempotentHint dropped, destructiveHint or openWorldHint gained",
        breaks: "clients now ask before calling it; the tool may have gained an effect",
        rerun: &["the EFF checks named for the tool", TRAJECTORY, BUDGET],
        measured_by: AUDIT_AND_COMPARE,
    },
    ClassInfo {
        class: ChangeClass::InputSchemaChanged,
        id: "input-schema-changed",
        severity: Severity::Behavioural,
        what: "another input schema keyword changed (bounds, pattern, default, nesting)",
        breaks: "arguments that were valid may be rejected, or the reverse",
        rerun: &["tool-call assertion cases for the tool"],
        measured_by: COMPARE,
    },
    ClassInfo {
        class: ChangeClass::OutputSchemaChanged,
        id: "output-schema-changed",
        severity: Severity::Behavioural,
        what: "the output schema changed",
        breaks: "whatever reads the tool's structured output",
        rerun: &["cases that read the tool's structured output"],
        measured_by: &[Measure::Audit],
    },
    ClassInfo {
        class: ChangeClass::OptionalParameterAdded,
        id: "optional-parameter-added",
        severity: Severity::Additive,
        what: "a new optional parameter",
        breaks: "the agent may start passing it",
        rerun: &["cases touching the tool"],
        measured_by: COMPARE,
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
        measured_by: AUDIT_AND_COMPARE,
    },
    ClassInfo {
        class: ChangeClass::AnnotationChanged,
        id: "annotation-changed",
        severity: Severity::Metadata,
        what: "an annotation changed without changing a hint's effective value",
        breaks: "what clients display",
        rerun: &["trajectory suite, if your client shows annotations to the model"],
        measured_by: &[],
    },
    ClassInfo {
        class: ChangeClass::TitleEdited,
        id: "title-edited",
        severity: Severity::Metadata,
        what: "the display title changed",
        breaks: "what clients display",
        rerun: &["trajectory suite, if your client shows titles to the model"],
        measured_by: &[],
    },
];

/// The triage table as Markdown, for `docs/manifest-ci.md` (a test checks
/// that the page carries exactly this table).
pub fn table_markdown() -> String {
    let mut out = String::from(
        "| class | severity | what it can break | re-run | measured by |\n|---|---|---|---|---|\n",
    );
    for row in &CLASSES {
        let measured: Vec<String> = row
            .measured_by
            .iter()
            .map(|m| format!("`{}`", m.id()))
            .collect();
        out.push_str(&format!(
            "| `{}` | {} | {} | {} | {} |\n",
            row.id,
            row.severity.as_str(),
            row.breaks,
            row.rerun.join("; "),
            if measured.is_empty() {
                "—".to_owned()
            } else {
                measured.join(", ")
            }
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
    pub fn rank(self) -> usize {
        CLASSES.iter().position(|c| c.class == self).unwrap_or(0)
    }
}

/// An EFF check to re-run, on one tool.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
pub struct CheckRef {
    pub id: crate::vocab::CheckId,
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
    /// What measures it: entries of the document's `measurements`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub measure: Vec<Measure>,
    /// Accepted by an `--allow` entry: still reported, never fails the build.
    pub allowed: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_reason: Option<String>,
}

impl Change {
    /// A change of `class` on `tool`, with the class's severity and re-run advice.
    pub fn new(tool: &str, class: ChangeClass, location: String, summary: String) -> Self {
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
            measure: class.info().measured_by.to_vec(),
            allowed: false,
            allow_reason: None,
        }
    }

    /// Sets the values before and after.
    pub fn values(mut self, before: Option<&Value>, after: Option<&Value>) -> Self {
        self.before = before.cloned();
        self.after = after.cloned();
        self
    }

    /// Names the parameter (a dotted path; empty: none).
    pub fn parameter(mut self, parameter: &str) -> Self {
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
    /// How to measure the changes instead of guessing: one entry per
    /// measure some change names, with its commands.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub measurements: Vec<Measurement>,
    /// 0 no undeclared change, 1 undeclared changes.
    pub exit_code: u8,
}

/// One reviewed change: a tool (its new name, for a rename) and a class.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AllowEntry {
    pub tool: String,
    pub class: ChangeClass,
    /// Why the change is acceptable. Required: the review is the point.
    pub reason: String,
}

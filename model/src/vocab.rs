//! The words every document is written in, each defined once.
//!
//! Observers speak of [`Op`]s, probes of [`ProbeStatus`]es, checks of
//! [`CheckId`]s and [`Verdict`]s, the planner of [`ToolClass`]es and of each
//! argument's [`Provenance`], the call ledger of [`CallStatus`]es, and all of
//! them of the four behavioural annotations ([`Hint`]) with the defaults the
//! MCP specification gives an unset one. Each enum serializes to the exact
//! strings the published documents have always carried.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What happened to one object between two snapshots.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    Create,
    Update,
    Delete,
}

impl Op {
    pub fn as_str(self) -> &'static str {
        match self {
            Op::Create => "create",
            Op::Update => "update",
            Op::Delete => "delete",
        }
    }
}

/// What exercising an object with a probe showed.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum ProbeStatus {
    /// The object works as authority: the server's rule accepts it.
    Effective,
    /// The object exists or existed but the rule rejects it (or it is gone).
    Ineffective,
    /// This probe has no way to tell.
    Unknown,
}

impl ProbeStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ProbeStatus::Effective => "effective",
            ProbeStatus::Ineffective => "ineffective",
            ProbeStatus::Unknown => "unknown",
        }
    }
}

/// How far the server was isolated, as the report states it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum IsolationLevel {
    /// Started in a new, empty network namespace.
    NetworkNamespace,
    /// No isolation beyond the jail's directories and scrubbed environment.
    None,
}

impl IsolationLevel {
    pub fn as_str(self) -> &'static str {
        match self {
            IsolationLevel::NetworkNamespace => "network-namespace",
            IsolationLevel::None => "none",
        }
    }
}

/// A check verdict. `fail` is evidence against the target; the others are not.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Pass,
    Fail,
    /// Nothing declared to verify, or no channel to see it.
    Skip,
    /// The call failed on synthesized arguments, or the transport failed.
    Untestable,
}

impl Verdict {
    pub const ALL: [Verdict; 4] = [
        Verdict::Pass,
        Verdict::Fail,
        Verdict::Skip,
        Verdict::Untestable,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "fail",
            Verdict::Skip => "skip",
            Verdict::Untestable => "untestable",
        }
    }
}

/// One of the behavioural annotations a tool may declare.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Hint {
    ReadOnly,
    Destructive,
    Idempotent,
    OpenWorld,
}

impl Hint {
    pub const ALL: [Hint; 4] = [
        Hint::ReadOnly,
        Hint::Destructive,
        Hint::Idempotent,
        Hint::OpenWorld,
    ];

    /// The annotation's key on the wire.
    pub fn key(self) -> &'static str {
        match self {
            Hint::ReadOnly => "readOnlyHint",
            Hint::Destructive => "destructiveHint",
            Hint::Idempotent => "idempotentHint",
            Hint::OpenWorld => "openWorldHint",
        }
    }

    /// What the MCP specification says an unset hint means.
    pub fn default_value(self) -> bool {
        match self {
            Hint::ReadOnly | Hint::Idempotent => false,
            Hint::Destructive | Hint::OpenWorld => true,
        }
    }

    /// The value that claims more safety: the one a client may act on
    /// without asking, and so the one that must be verified.
    pub fn safer_value(self) -> bool {
        match self {
            Hint::ReadOnly | Hint::Idempotent => true,
            Hint::Destructive | Hint::OpenWorld => false,
        }
    }

    /// The declared boolean, if the annotations hold one for this hint.
    pub fn declared(self, annotations: Option<&serde_json::Value>) -> Option<bool> {
        annotations
            .and_then(|a| a.get(self.key()))
            .and_then(serde_json::Value::as_bool)
    }

    /// The declared value, or the specification's default when unset.
    pub fn effective(self, annotations: Option<&serde_json::Value>) -> bool {
        self.declared(annotations)
            .unwrap_or_else(|| self.default_value())
    }

    /// The evaluated checks that hold a tool to this hint.
    pub fn checks(self) -> Vec<CheckId> {
        CheckId::ALL
            .into_iter()
            .filter(|c| c.evaluated() && c.hints().contains(&self))
            .collect()
    }
}

/// How a tool is treated, from its annotations alone.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum ToolClass {
    /// Declared `readOnlyHint: true`.
    ReadOnly,
    /// Declared to write, and `destructiveHint: false`.
    Additive,
    /// Declared (or defaulted) destructive.
    Destructive,
    /// Declares nothing: it may be read-only, we cannot tell.
    Unknown,
}

impl ToolClass {
    pub fn as_str(self) -> &'static str {
        match self {
            ToolClass::ReadOnly => "read-only",
            ToolClass::Additive => "additive",
            ToolClass::Destructive => "destructive",
            ToolClass::Unknown => "unknown",
        }
    }
}

/// Where an argument's value came from. A failure on a synthesized value
/// proves nothing about the server; on a harvested or store value (the
/// thing demonstrably existed) it is evidence.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Provenance {
    /// Written by a person in a plan file.
    Literal,
    /// Taken from an earlier response of the same server, or from an
    /// earlier successful call of the same plan that created it.
    Harvested,
    /// Read out of band from a declared store before the first call: the
    /// store's root, a path, a table, a row key or an entity name that the
    /// baseline snapshot listed.
    Store,
    /// Invented by mcp-witness from the tool's input schema and description.
    Synthesized,
}

impl Provenance {
    pub const ALL: [Provenance; 4] = [
        Provenance::Literal,
        Provenance::Harvested,
        Provenance::Store,
        Provenance::Synthesized,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Provenance::Literal => "literal",
            Provenance::Harvested => "harvested",
            Provenance::Store => "store",
            Provenance::Synthesized => "synthesized",
        }
    }

    /// Whether the value existed before mcp-witness chose it: a person's,
    /// the server's own, or the store's. A failure on such values is
    /// evidence; on an invented one it proves nothing.
    pub fn is_real(self) -> bool {
        !matches!(self, Provenance::Synthesized)
    }
}

/// How a call ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum CallStatus {
    /// A result without `isError`.
    Ok,
    /// A result with `isError: true`.
    ToolError,
    /// A JSON-RPC error.
    RpcError,
    /// Timeout, death or broken pipe.
    TransportError,
    /// Not sent: an argument could not be resolved.
    NotSent,
}

impl CallStatus {
    pub const ALL: [CallStatus; 5] = [
        CallStatus::Ok,
        CallStatus::ToolError,
        CallStatus::RpcError,
        CallStatus::TransportError,
        CallStatus::NotSent,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            CallStatus::Ok => "ok",
            CallStatus::ToolError => "tool-error",
            CallStatus::RpcError => "rpc-error",
            CallStatus::TransportError => "transport-error",
            CallStatus::NotSent => "not-sent",
        }
    }

    /// The status in words, as pages and case-study notes say it
    /// (`tool error`, `JSON-RPC error`). Published notes carry these exact
    /// words, so they are part of the documents too.
    pub fn phrase(self) -> &'static str {
        match self {
            CallStatus::Ok => "ok",
            CallStatus::ToolError => "tool error",
            CallStatus::RpcError => "JSON-RPC error",
            CallStatus::TransportError => "transport error",
            CallStatus::NotSent => "not sent",
        }
    }
}

/// The effect lane's checks. The catalog (this enum and its texts) is the one
/// place a check is described: the engine's registry evaluates exactly the
/// ids marked [`CheckId::evaluated`], and the evidence page, the text report
/// and `docs/effect-aware-conformance.md` read their names and texts here.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
pub enum CheckId {
    #[serde(rename = "EFF-01")]
    Eff01,
    #[serde(rename = "EFF-02")]
    Eff02,
    #[serde(rename = "EFF-03")]
    Eff03,
    #[serde(rename = "EFF-04")]
    Eff04,
    #[serde(rename = "EFF-05")]
    Eff05,
    #[serde(rename = "EFF-06")]
    Eff06,
}

impl CheckId {
    /// Every check, in catalog order.
    pub const ALL: [CheckId; 6] = [
        CheckId::Eff01,
        CheckId::Eff02,
        CheckId::Eff03,
        CheckId::Eff04,
        CheckId::Eff05,
        CheckId::Eff06,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            CheckId::Eff01 => "EFF-01",
            CheckId::Eff02 => "EFF-02",
            CheckId::Eff03 => "EFF-03",
            CheckId::Eff04 => "EFF-04",
            CheckId::Eff05 => "EFF-05",
            CheckId::Eff06 => "EFF-06",
        }
    }

    pub fn parse(id: &str) -> Option<CheckId> {
        CheckId::ALL.into_iter().find(|c| c.as_str() == id)
    }

    /// Whether audits evaluate this check today. EFF-04 needs an observer of
    /// the network, which the jail does not have yet: no verdict is ever
    /// issued for it, and every report says it was not checked.
    pub fn evaluated(self) -> bool {
        !matches!(self, CheckId::Eff04)
    }

    /// The checks audits evaluate, in catalog order.
    pub fn evaluated_ids() -> Vec<CheckId> {
        CheckId::ALL.into_iter().filter(|c| c.evaluated()).collect()
    }

    /// The annotations this check holds a tool to. EFF-05 tests no
    /// annotation: its claim is the audit's own declaration of the stores.
    pub fn hints(self) -> &'static [Hint] {
        match self {
            CheckId::Eff01 => &[Hint::ReadOnly],
            // Read-only tools are held to it too: a read-only tool that
            // deletes also breaks its claim to be non-destructive.
            CheckId::Eff02 => &[Hint::Destructive, Hint::ReadOnly],
            CheckId::Eff03 => &[Hint::Idempotent],
            CheckId::Eff04 => &[Hint::OpenWorld],
            CheckId::Eff05 => &[],
            // A read-only tool that mints a working credential writes authority.
            CheckId::Eff06 => &[Hint::ReadOnly],
        }
    }

    /// When the check holds, in one sentence.
    pub fn holds_when(self) -> &'static str {
        match self {
            CheckId::Eff01 => {
                "a tool declared readOnlyHint: true caused no observed create, update or delete"
            }
            CheckId::Eff02 => {
                "every observed delete or overwrite is covered: the tool is not declared destructiveHint: false nor read-only"
            }
            CheckId::Eff03 => {
                "a tool declared idempotentHint: true, repeated with identical arguments, caused no further effect"
            }
            CheckId::Eff04 => {
                "a tool declared openWorldHint: false created no outward-reach object and reached nothing outside the jail"
            }
            CheckId::Eff05 => "effects stayed inside the declared stores",
            CheckId::Eff06 => {
                "a call that mints an effective credential is not declared read-only, and a call that revokes one leaves it ineffective"
            }
        }
    }

    /// The catalog as a Markdown table: `docs/effect-aware-conformance.md`
    /// carries exactly this (a test keeps the two in step).
    pub fn table_markdown() -> String {
        let mut out = String::from(
            "| id | holds when | annotations it tests | evaluated |\n|---|---|---|---|\n",
        );
        for id in CheckId::ALL {
            let hints: Vec<String> = id
                .hints()
                .iter()
                .map(|h| format!("`{}`", h.key()))
                .collect();
            out.push_str(&format!(
                "| {} | {} | {} | {} |\n",
                id.as_str(),
                id.holds_when(),
                if hints.is_empty() {
                    "none (the declared stores)".to_owned()
                } else {
                    hints.join(", ")
                },
                if id.evaluated() { "yes" } else { "not yet" }
            ));
        }
        out
    }
}

/// Each word prints as it serializes, and compares equal to that string
/// (so code and tests can say `check.id == "EFF-01"`).
macro_rules! display_as_str {
    ($($name:ident),*) => {$(
        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.as_str() == *other
            }
        }
    )*};
}

display_as_str!(
    Op,
    ProbeStatus,
    IsolationLevel,
    Verdict,
    ToolClass,
    Provenance,
    CallStatus,
    CheckId,
    FindingKind
);

/// Kinds of finding: what an audit noticed that is not a check verdict.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum FindingKind {
    /// An observer could not read part of a store (a malformed line, an unreadable file).
    ObserverWarning,
    /// A call failed on a value the server itself had handed out.
    HarvestedValueRejected,
    /// A call failed on values read from a declared store (the object
    /// demonstrably existed when the audit began).
    StoreValueRejected,
    /// Changes appeared after a call had settled; charged to no call.
    LateEffect,
    /// A message past the size bound, cut and not parsed.
    OversizedLine,
    /// A stdout line that is not JSON.
    StdoutNotJson,
    /// JSON that is not a JSON-RPC message.
    MalformedJsonrpc,
    /// A JSON-RPC error without an id.
    ErrorWithoutId,
    /// A response to no request of ours.
    UnexpectedResponse,
    /// Frames past the kept-frames bound.
    FramesDropped,
    /// Frame text past the kept-bytes bound.
    FramesBudgetExceeded,
    /// An HTTP exchange that failed before its answer.
    HttpExchangeFailed,
    /// More `roots/list` requests after one client message than are answered.
    RootsOverflow,
}

impl FindingKind {
    pub fn as_str(self) -> &'static str {
        match self {
            FindingKind::ObserverWarning => "observer-warning",
            FindingKind::HarvestedValueRejected => "harvested-value-rejected",
            FindingKind::StoreValueRejected => "store-value-rejected",
            FindingKind::LateEffect => "late-effect",
            FindingKind::OversizedLine => "oversized-line",
            FindingKind::StdoutNotJson => "stdout-not-json",
            FindingKind::MalformedJsonrpc => "malformed-jsonrpc",
            FindingKind::ErrorWithoutId => "error-without-id",
            FindingKind::UnexpectedResponse => "unexpected-response",
            FindingKind::FramesDropped => "frames-dropped",
            FindingKind::FramesBudgetExceeded => "frames-budget-exceeded",
            FindingKind::HttpExchangeFailed => "http-exchange-failed",
            FindingKind::RootsOverflow => "roots-overflow",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_enum_serializes_to_the_string_it_names() {
        for op in [Op::Create, Op::Update, Op::Delete] {
            assert_eq!(serde_json::to_value(op).ok(), Some(json!(op.as_str())));
        }
        for status in [
            ProbeStatus::Effective,
            ProbeStatus::Ineffective,
            ProbeStatus::Unknown,
        ] {
            assert_eq!(
                serde_json::to_value(status).ok(),
                Some(json!(status.as_str()))
            );
        }
        for level in [IsolationLevel::NetworkNamespace, IsolationLevel::None] {
            assert_eq!(
                serde_json::to_value(level).ok(),
                Some(json!(level.as_str()))
            );
        }
        for verdict in Verdict::ALL {
            assert_eq!(
                serde_json::to_value(verdict).ok(),
                Some(json!(verdict.as_str()))
            );
        }
        for id in CheckId::ALL {
            assert_eq!(serde_json::to_value(id).ok(), Some(json!(id.as_str())));
            assert_eq!(CheckId::parse(id.as_str()), Some(id));
        }
        for source in Provenance::ALL {
            assert_eq!(
                serde_json::to_value(source).ok(),
                Some(json!(source.as_str()))
            );
            assert_eq!(source.to_string(), source.as_str());
        }
        for status in CallStatus::ALL {
            assert_eq!(
                serde_json::to_value(status).ok(),
                Some(json!(status.as_str()))
            );
            assert_eq!(status.to_string(), status.as_str());
        }
    }

    #[test]
    fn call_statuses_read_as_the_published_notes_say_them() {
        // Case-study notes already published carry these words.
        let words: Vec<&str> = CallStatus::ALL.iter().map(|s| s.phrase()).collect();
        assert_eq!(
            words,
            [
                "ok",
                "tool error",
                "JSON-RPC error",
                "transport error",
                "not sent"
            ]
        );
    }

    #[test]
    fn hints_follow_the_specification_defaults() {
        let none = None;
        assert!(!Hint::ReadOnly.effective(none));
        assert!(Hint::Destructive.effective(none));
        assert!(!Hint::Idempotent.effective(none));
        assert!(Hint::OpenWorld.effective(none));
        let declared = json!({"readOnlyHint": true, "destructiveHint": "no"});
        assert_eq!(Hint::ReadOnly.declared(Some(&declared)), Some(true));
        // Not a boolean: not a declaration.
        assert_eq!(Hint::Destructive.declared(Some(&declared)), None);
        for hint in Hint::ALL {
            assert_ne!(hint.default_value(), hint.safer_value(), "{hint:?}");
        }
    }

    #[test]
    fn a_hint_names_the_evaluated_checks_that_verify_it() {
        assert_eq!(
            Hint::ReadOnly.checks(),
            [CheckId::Eff01, CheckId::Eff02, CheckId::Eff06]
        );
        assert_eq!(Hint::Destructive.checks(), [CheckId::Eff02]);
        assert_eq!(Hint::Idempotent.checks(), [CheckId::Eff03]);
        assert!(
            Hint::OpenWorld.checks().is_empty(),
            "nothing observes the network yet"
        );
    }

    #[test]
    fn the_methodology_page_carries_the_check_catalog() {
        let page = include_str!("../../docs/effect-aware-conformance.md");
        let table = CheckId::table_markdown();
        assert!(
            page.contains(&table),
            "docs/effect-aware-conformance.md is out of step with the check catalog; paste this table:\n{table}"
        );
    }
}

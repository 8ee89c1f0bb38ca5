//! The guidance report, `mcp-witness.guidance-report/v1`.
//!
//! It holds only validated identifiers (the `--server` label and tool names),
//! profile labels, fixed reasons and hints, numeric settings and
//! instruction-presence flags. Instruction prose, descriptions, schemas,
//! cursors, session ids, endpoint URLs and server error text never enter it.

use std::fmt::Write as _;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Profile;

pub const GUIDANCE_SCHEMA: &str = "mcp-witness.guidance-report/v1";

/// What `reference_detection` says about the scope of candidate detection.
pub const REFERENCE_DETECTION: &str = "inline-code-known-tools";

pub const CANDIDATE_HINT: &str = "Check that this reference holds for a client with this \
profile's capabilities; if the tool needs a client capability, say so where it is referenced.";

pub const DEFECT_HINT: &str = "The tool is declared required but is not listed for this \
profile; list it for every selected profile, or narrow the requirement.";

pub const INCOMPLETE_HINT: &str = "Discovery did not finish for this profile; this is not \
evidence that any tool is unavailable.";

/// Why a profile's discovery did not finish. Fixed kinds, never server text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Cause {
    /// The server could not be started or reached.
    LaunchFailed,
    /// The connection ended, or an HTTP exchange failed, before an answer.
    TransportLost,
    /// No answer within the timeout.
    Timeout,
    /// `initialize` was answered with an error.
    InitializeError,
    /// The server settled on a protocol version mcp-witness does not speak.
    ProtocolUnsupported,
    /// A `tools/list` page was a JSON-RPC error.
    ListError,
    /// A page without a tools array, or an entry without a string name.
    MalformedEntry,
    /// A `nextCursor` that is not a string.
    MalformedCursor,
    /// One tool name listed twice.
    DuplicateTool,
    /// Pagination did not end within the page bound, or a cursor repeated.
    PaginationIncomplete,
    /// More tools than the bound.
    TooManyTools,
    /// More `roots/list` requests than the bound after one client message.
    RootsOverflow,
}

impl Cause {
    pub fn as_str(self) -> &'static str {
        match self {
            Cause::LaunchFailed => "launch-failed",
            Cause::TransportLost => "transport-lost",
            Cause::Timeout => "timeout",
            Cause::InitializeError => "initialize-error",
            Cause::ProtocolUnsupported => "protocol-unsupported",
            Cause::ListError => "list-error",
            Cause::MalformedEntry => "malformed-entry",
            Cause::MalformedCursor => "malformed-cursor",
            Cause::DuplicateTool => "duplicate-tool",
            Cause::PaginationIncomplete => "pagination-incomplete",
            Cause::TooManyTools => "too-many-tools",
            Cause::RootsOverflow => "roots-overflow",
        }
    }
}

/// Why a profile is incomplete.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Incomplete {
    /// Always `profile-incomplete`.
    pub reason: String,
    pub cause: Cause,
    pub hint: String,
}

/// What one profile's fresh connection showed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ProfileReport {
    pub profile: Profile,
    /// Client capabilities declared in `initialize`.
    pub capabilities: Vec<String>,
    pub complete: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incomplete: Option<Incomplete>,
    /// The version the server settled on (one mcp-witness speaks), when it answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<String>,
    /// Whether `initialize` carried instructions (their text is never reported).
    pub instructions_present: bool,
    /// `tools/list` pages read.
    pub pages: u32,
    /// Tools listed, all of them (shown or not).
    pub tool_count: usize,
    /// Their names, sorted, when they are identifiers.
    pub tools: Vec<String>,
    /// Listed tools whose names are not identifiers: counted, never shown,
    /// never matched against references or requirements.
    pub unreportable_names: usize,
}

/// A reference worth a maintainer's review. Never fails the gate.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Candidate {
    /// Always `referenced-tool-unavailable`.
    pub kind: String,
    /// The profile whose instructions name a tool its catalog lacks.
    pub profile: Profile,
    pub tool: String,
    /// The selected profiles whose catalogs list the tool.
    pub available_in: Vec<Profile>,
    pub hint: String,
}

/// A declared requirement that does not hold. Fails the gate (exit 1).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Defect {
    /// Always `required-tool-unavailable`.
    pub kind: String,
    pub profile: Profile,
    pub tool: String,
    /// The selected profiles whose catalogs list the tool (may be empty).
    pub available_in: Vec<Profile>,
    pub hint: String,
}

/// The bounds discovery ran under.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Limits {
    pub max_pages: u32,
    pub max_tools: usize,
    pub max_roots_requests_per_client_message: u32,
    pub timeout_ms: u64,
}

/// `mcp-witness.guidance-report/v1`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct GuidanceReport {
    pub schema: String,
    pub generator: String,
    /// The `--server` label.
    pub server: String,
    /// `stdio` or `http`.
    pub transport: String,
    /// The protocol version offered in every `initialize`.
    pub protocol_offered: String,
    pub settle_ms: u64,
    pub limits: Limits,
    /// The scope of candidate detection: backtick-delimited spans of
    /// `initialize.instructions` that name a tool of a selected profile.
    pub reference_detection: String,
    pub required_tools: Vec<String>,
    pub profiles: Vec<ProfileReport>,
    /// Whether every selected profile finished discovery.
    pub complete: bool,
    /// The required-tool gate only: `null` when discovery is incomplete.
    pub passed: Option<bool>,
    pub candidates: Vec<Candidate>,
    pub defects: Vec<Defect>,
    pub exit_code: u8,
}

fn profiles_text(profiles: &[Profile]) -> String {
    if profiles.is_empty() {
        return "no selected profile".into();
    }
    profiles
        .iter()
        .map(|p| p.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The text report: the same fields as the JSON, for a person.
pub fn text(report: &GuidanceReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "guidance: {} over {} (protocol {} offered, settle {} ms, reference detection {})",
        report.server,
        report.transport,
        report.protocol_offered,
        report.settle_ms,
        report.reference_detection
    );
    for p in &report.profiles {
        let caps = if p.capabilities.is_empty() {
            "no client capabilities".to_owned()
        } else {
            p.capabilities.join("+")
        };
        if p.complete {
            let _ = writeln!(
                out,
                "\nprofile {} ({caps}): {} tools in {} page(s), instructions {}",
                p.profile.as_str(),
                p.tool_count,
                p.pages,
                if p.instructions_present {
                    "present"
                } else {
                    "absent"
                }
            );
            if !p.tools.is_empty() {
                let _ = writeln!(out, "  {}", p.tools.join(", "));
            }
            if p.unreportable_names > 0 {
                let _ = writeln!(
                    out,
                    "  ({} tool name(s) are not identifiers and are not shown)",
                    p.unreportable_names
                );
            }
        } else if let Some(incomplete) = &p.incomplete {
            let _ = writeln!(
                out,
                "\nprofile {} ({caps}): INCOMPLETE ({}: {})\n  {}",
                p.profile.as_str(),
                incomplete.reason,
                incomplete.cause.as_str(),
                incomplete.hint
            );
        }
    }
    if !report.complete {
        let _ = writeln!(
            out,
            "\nincomplete: no candidates or defects are reported; gate: not decided (exit {})",
            report.exit_code
        );
        return out;
    }
    let _ = writeln!(out, "\nreview candidates: {}", report.candidates.len());
    for c in &report.candidates {
        let _ = writeln!(
            out,
            "  {}: `{}` is referenced under {} but listed only under {}",
            c.kind,
            c.tool,
            c.profile.as_str(),
            profiles_text(&c.available_in)
        );
    }
    if !report.candidates.is_empty() {
        let _ = writeln!(out, "  hint: {CANDIDATE_HINT}");
    }
    if report.required_tools.is_empty() {
        let _ = writeln!(
            out,
            "required-tool gate: passed (no --require-tool given; exit {})",
            report.exit_code
        );
        return out;
    }
    let _ = writeln!(
        out,
        "required tools: {} -> {} defect(s)",
        report.required_tools.join(", "),
        report.defects.len()
    );
    for d in &report.defects {
        let _ = writeln!(
            out,
            "  {}: `{}` is not listed under {} (listed under {})",
            d.kind,
            d.tool,
            d.profile.as_str(),
            profiles_text(&d.available_in)
        );
    }
    if !report.defects.is_empty() {
        let _ = writeln!(out, "  hint: {DEFECT_HINT}");
    }
    let _ = writeln!(
        out,
        "required-tool gate: {} (exit {})",
        if report.passed == Some(true) {
            "passed"
        } else {
            "FAILED"
        },
        report.exit_code
    );
    out
}

//! The guidance report, `mcp-witness.guidance-report/v1`.
//!
//! It holds only validated identifiers (the `--server` label and tool names),
//! profile labels, fixed reasons and hints, numeric settings and
//! instruction-presence flags. Instruction prose, descriptions, schemas,
//! cursors, session ids, endpoint URLs and server error text never enter it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

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

/// A client capability profile.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Profile {
    /// No client capabilities.
    None,
    /// `roots` only.
    Roots,
    /// `sampling` only.
    Sampling,
    /// `elicitation` only.
    Elicitation,
    /// `roots`, `sampling` and `elicitation` together.
    All,
}

impl Profile {
    pub const ALL: [Profile; 5] = [
        Profile::None,
        Profile::Roots,
        Profile::Sampling,
        Profile::Elicitation,
        Profile::All,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Profile::None => "none",
            Profile::Roots => "roots",
            Profile::Sampling => "sampling",
            Profile::Elicitation => "elicitation",
            Profile::All => "all",
        }
    }

    /// The capability names this profile declares.
    pub fn capabilities(self) -> Vec<&'static str> {
        match self {
            Profile::None => vec![],
            Profile::Roots => vec!["roots"],
            Profile::Sampling => vec!["sampling"],
            Profile::Elicitation => vec!["elicitation"],
            Profile::All => vec!["roots", "sampling", "elicitation"],
        }
    }

    /// The `capabilities` object of `initialize`.
    pub fn declaration(self) -> Value {
        let mut object = serde_json::Map::new();
        for name in self.capabilities() {
            object.insert(name.into(), json!({}));
        }
        Value::Object(object)
    }

    /// Whether the profile declares `roots` (the server may then ask for them).
    pub fn declares_roots(self) -> bool {
        matches!(self, Profile::Roots | Profile::All)
    }
}

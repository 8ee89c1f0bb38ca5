//! Instruction coherence across client capability profiles.
//!
//! A server may list different tools depending on what the client declares
//! (roots, sampling, elicitation) while its `initialize.instructions` name
//! tools regardless. `guidance` opens one fresh, initialized connection per
//! selected [`Profile`], declares that profile's capabilities under protocol
//! 2025-06-18, waits the settle window, and reads the paged catalog. Nothing
//! else is sent: no tool is called, no instruction followed.
//!
//! From the catalogs it derives:
//! - review candidates (`referenced-tool-unavailable`): a tool named in an
//!   inline code span of a profile's instructions that another selected
//!   profile lists and this one does not. Candidates never fail the gate;
//! - defects (`required-tool-unavailable`): a `--require-tool` missing from a
//!   selected profile. Any defect fails the gate (exit 1).
//!
//! Any profile that cannot finish discovery makes the run incomplete: no
//! candidates, no defects, `passed: null`, exit 3.

pub mod refs;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use witness_jail::Target;
use witness_wire::clock::{Clock, MonotonicClock};
use witness_wire::connection::Connection;
use witness_wire::rpc::{MAX_ROOTS_REQUESTS, WireError};
use witness_wire::session::{
    CatalogIssue, LegacyOffer, MAX_PAGES, MAX_TOOLS, Session, SessionError,
};

use witness_model::exit::ExitStatus;
use witness_model::guidance::*;

/// The protocol every profile's discovery offers.
pub const DISCOVERY_PROTOCOL: &str = "2025-06-18";
/// Default and largest settle window, in milliseconds.
pub const DEFAULT_SETTLE_MS: u64 = 1_500;
pub const MAX_SETTLE_MS: u64 = 5_000;

/// Everything a guidance run needs, validated.
#[derive(Clone, Debug)]
pub struct GuidanceOptions {
    /// The `--server` label (an identifier).
    pub server: String,
    /// The server: each profile opens it afresh (a new jail and process,
    /// or a new session over HTTP). No store is read.
    pub target: Target,
    /// Selected profiles; empty means all five.
    pub profiles: Vec<Profile>,
    /// Tools every selected profile must list (identifiers).
    pub required: Vec<String>,
    pub settle: Duration,
    pub timeout: Duration,
}

/// Why options were refused (exit 2, before any discovery).
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum GuidanceError {
    #[error("--server must be 1 to 128 ASCII letters, digits, '_', '-' or '.'")]
    ServerLabel,
    #[error(
        "--require-tool values must be tool names: 1 to 128 ASCII letters, digits, '_', '-' or '.'"
    )]
    RequiredTool,
    #[error("--settle-ms must be between 0 and {MAX_SETTLE_MS}")]
    Settle,
}

impl GuidanceOptions {
    /// Checks what a run would otherwise discover too late.
    pub fn validate(&self) -> Result<(), GuidanceError> {
        if !refs::is_identifier(&self.server) {
            return Err(GuidanceError::ServerLabel);
        }
        if !self.required.iter().all(|t| refs::is_identifier(t)) {
            return Err(GuidanceError::RequiredTool);
        }
        if self.settle > Duration::from_millis(MAX_SETTLE_MS) {
            return Err(GuidanceError::Settle);
        }
        Ok(())
    }

    /// The selected profiles in canonical order, each once.
    pub fn selected(&self) -> Vec<Profile> {
        if self.profiles.is_empty() {
            return Profile::ALL.to_vec();
        }
        let set: BTreeSet<Profile> = self.profiles.iter().copied().collect();
        set.into_iter().collect()
    }
}

/// What one profile's discovery produced, kept in memory only.
struct Discovery {
    report: ProfileReport,
    /// Every listed name, reportable or not.
    names: BTreeSet<String>,
    /// Identifiers in the instructions' inline code spans.
    references: BTreeSet<String>,
}

/// Runs discovery for every selected profile and builds the report.
pub fn run(options: &GuidanceOptions) -> Result<GuidanceReport, GuidanceError> {
    options.validate()?;
    let profiles = options.selected();
    let mut discoveries: Vec<Discovery> = Vec::new();
    for profile in &profiles {
        discoveries.push(discover(options, *profile));
    }
    let mut required: Vec<String> = options.required.clone();
    required.sort();
    required.dedup();
    let complete = discoveries.iter().all(|d| d.report.complete);
    let mut candidates = Vec::new();
    let mut defects = Vec::new();
    if complete {
        let listed_in = |tool: &str| -> Vec<Profile> {
            discoveries
                .iter()
                .filter(|d| d.names.contains(tool))
                .map(|d| d.report.profile)
                .collect()
        };
        for d in &discoveries {
            for tool in &d.references {
                if d.names.contains(tool) {
                    continue;
                }
                let available_in = listed_in(tool);
                if available_in.is_empty() {
                    continue; // named, but in no selected catalog: out of scope
                }
                candidates.push(Candidate {
                    kind: "referenced-tool-unavailable".into(),
                    profile: d.report.profile,
                    tool: tool.clone(),
                    available_in,
                    hint: CANDIDATE_HINT.into(),
                });
            }
        }
        for tool in &required {
            for d in &discoveries {
                if !d.names.contains(tool) {
                    defects.push(Defect {
                        kind: "required-tool-unavailable".into(),
                        profile: d.report.profile,
                        tool: tool.clone(),
                        available_in: listed_in(tool),
                        hint: DEFECT_HINT.into(),
                    });
                }
            }
        }
    }
    let passed = complete.then_some(defects.is_empty());
    let exit_code = ExitStatus::of_run(complete, !defects.is_empty()).code();
    Ok(GuidanceReport {
        schema: GUIDANCE_SCHEMA.into(),
        generator: witness_model::GENERATOR.into(),
        server: options.server.clone(),
        transport: options.target.transport().into(),
        protocol_offered: DISCOVERY_PROTOCOL.into(),
        settle_ms: u64::try_from(options.settle.as_millis()).unwrap_or(u64::MAX),
        limits: Limits {
            max_pages: MAX_PAGES,
            max_tools: MAX_TOOLS,
            max_roots_requests_per_client_message: MAX_ROOTS_REQUESTS,
            timeout_ms: u64::try_from(options.timeout.as_millis()).unwrap_or(u64::MAX),
        },
        reference_detection: REFERENCE_DETECTION.into(),
        required_tools: required,
        profiles: discoveries.into_iter().map(|d| d.report).collect(),
        complete,
        passed,
        candidates,
        defects,
        exit_code,
    })
}

/// One profile: a fresh connection, the handshake, the settle window, the catalog.
fn discover(options: &GuidanceOptions, profile: Profile) -> Discovery {
    let mut discovery = Discovery {
        report: ProfileReport {
            profile,
            capabilities: profile
                .capabilities()
                .into_iter()
                .map(str::to_owned)
                .collect(),
            complete: false,
            incomplete: None,
            protocol_version: None,
            instructions_present: false,
            pages: 0,
            tool_count: 0,
            tools: Vec::new(),
            unreportable_names: 0,
        },
        names: BTreeSet::new(),
        references: BTreeSet::new(),
    };
    let clock: Arc<dyn Clock> = Arc::new(MonotonicClock::start());
    // The jail outlives the process it holds; dropped at the end of this
    // profile. Nothing here reads a store, so none is copied or viewed.
    let mut opened = None;
    let server = match options.target.without_stores().open(options.timeout) {
        Ok(target) => {
            let target = opened.insert(target);
            target.connect(clock).map_err(|e| e.to_string())
        }
        Err(e) => Err(e.to_string()),
    };
    let mut server: Connection = match server {
        Ok(server) => server,
        Err(_) => {
            incomplete(&mut discovery.report, Cause::LaunchFailed);
            return discovery;
        }
    };
    server.rpc.answer_roots = profile.declares_roots();
    let offer = LegacyOffer {
        protocol_version: DISCOVERY_PROTOCOL,
        capabilities: profile.declaration(),
    };
    let (mut session, handshake) = match Session::initialize(server, &offer, options.timeout) {
        Ok(pair) => pair,
        Err((error, mut server)) => {
            let cause = match &error {
                SessionError::Launch(_) => Cause::LaunchFailed,
                SessionError::Wire(wire) => wire_cause(wire),
                SessionError::Refused(_) => Cause::InitializeError,
                SessionError::Unsupported(_) => Cause::ProtocolUnsupported,
            };
            incomplete(&mut discovery.report, cause);
            server.shutdown();
            return discovery;
        }
    };
    discovery.report.protocol_version = Some(handshake.protocol_version.clone());
    if let Some(instructions) = &handshake.instructions {
        discovery.report.instructions_present = true;
        discovery.references = refs::inline_code_identifiers(instructions);
    }
    // Conditional tools may be registered after `initialized`; requests the
    // server makes meanwhile (roots/list, ping) are answered here.
    session.server.rpc.listen(options.settle);
    let listed = session.list_tools();
    session.server.rpc.drain();
    let overflow = session.server.rpc.roots_overflow();
    session.server.shutdown();
    let catalog = match listed {
        Ok(catalog) => catalog,
        Err(e) => {
            incomplete(&mut discovery.report, wire_cause(&e));
            return discovery;
        }
    };
    discovery.report.pages = catalog.pages;
    if let Some(issue) = catalog.issue {
        incomplete(&mut discovery.report, catalog_cause(issue));
        return discovery;
    }
    if !catalog.complete {
        incomplete(&mut discovery.report, Cause::PaginationIncomplete);
        return discovery;
    }
    if overflow {
        incomplete(&mut discovery.report, Cause::RootsOverflow);
        return discovery;
    }
    let mut shown: BTreeSet<String> = BTreeSet::new();
    for tool in &catalog.tools {
        let Some(name) = tool.get("name").and_then(Value::as_str) else {
            continue; // list_tools already refused such a catalog
        };
        discovery.names.insert(name.to_owned());
        if refs::is_identifier(name) {
            shown.insert(name.to_owned());
        } else {
            discovery.report.unreportable_names += 1;
        }
    }
    discovery.report.tool_count = catalog.tools.len();
    discovery.report.tools = shown.into_iter().collect();
    discovery.report.complete = true;
    drop(opened);
    discovery
}

fn incomplete(report: &mut ProfileReport, cause: Cause) {
    report.complete = false;
    report.incomplete = Some(Incomplete {
        reason: "profile-incomplete".into(),
        cause,
        hint: INCOMPLETE_HINT.into(),
    });
}

fn wire_cause(error: &WireError) -> Cause {
    match error {
        WireError::Timeout { .. } | WireError::ProgressCeiling { .. } => Cause::Timeout,
        WireError::Http { detail, .. } if detail.contains("timed out") => Cause::Timeout,
        WireError::Closed { .. } | WireError::Write { .. } | WireError::Http { .. } => {
            Cause::TransportLost
        }
    }
}

fn catalog_cause(issue: CatalogIssue) -> Cause {
    match issue {
        CatalogIssue::PageLimit | CatalogIssue::RepeatedCursor => Cause::PaginationIncomplete,
        CatalogIssue::MalformedCursor => Cause::MalformedCursor,
        CatalogIssue::ErrorAnswer => Cause::ListError,
        CatalogIssue::MalformedEntry => Cause::MalformedEntry,
        CatalogIssue::DuplicateTool => Cause::DuplicateTool,
        CatalogIssue::TooManyTools => Cause::TooManyTools,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn profiles_declare_their_capabilities() {
        assert_eq!(Profile::None.declaration(), json!({}));
        assert_eq!(
            Profile::All.declaration(),
            json!({"roots": {}, "sampling": {}, "elicitation": {}})
        );
        assert_eq!(Profile::Sampling.capabilities(), vec!["sampling"]);
    }

    #[test]
    fn options_are_checked_before_discovery() {
        let options = GuidanceOptions {
            server: "everything".into(),
            target: Target::launched(witness_jail::JailSpec {
                command: vec!["/nonexistent".into()],
                stores: vec![],
                env: vec![],
                keep: false,
                isolate_network: false,
            }),
            profiles: vec![Profile::All, Profile::None, Profile::All],
            required: vec!["trigger-sampling-request".into()],
            settle: Duration::from_millis(0),
            timeout: Duration::from_secs(1),
        };
        assert_eq!(options.validate(), Ok(()));
        assert_eq!(options.selected(), vec![Profile::None, Profile::All]);
        let mut bad = options.clone();
        bad.server = "bad label".into();
        assert_eq!(bad.validate(), Err(GuidanceError::ServerLabel));
        let mut bad = options.clone();
        bad.required = vec!["x\u{1b}[2J".into()];
        assert_eq!(bad.validate(), Err(GuidanceError::RequiredTool));
        let mut bad = options;
        bad.settle = Duration::from_millis(5_001);
        assert_eq!(bad.validate(), Err(GuidanceError::Settle));
    }
}

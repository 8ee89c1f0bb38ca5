//! `mcp-witness guidance`: instruction coherence across client capability
//! profiles (discovery only, no tool is called).

use anyhow::Result;
use clap::{Args, ValueEnum};
use witness_guidance::GuidanceOptions;
use witness_model::exit::ExitStatus;
use witness_model::guidance::Profile;

use super::{CatalogSettleArgs, Format, FormatArgs, ServerArgs};

const HELP: &str = "\
Each selected profile gets its own fresh connection: a new server process in
its own jail (stdio) or a new session (--url). It declares the profile's client
capabilities in `initialize` under protocol 2025-06-18, waits --settle-ms, and
reads the paged tool catalog (at most 20 pages and 10,000 tools). Only
initialize, notifications/initialized and tools/list are sent; roots/list is
answered with an empty list (at most eight per client message; on HTTP only
inside a POST's event stream, never on a standing GET stream).

A tool named in backticks in the instructions that another selected profile
lists but this one does not is a review candidate; candidates never fail.
A --require-tool missing from any selected profile is a defect: exit 1.
Incomplete discovery: `passed: null`, no candidates or defects, exit 3.
Reports hold only identifiers, profile labels, fixed reasons and numbers:
never instruction text, descriptions, schemas, URLs or server errors.

Examples:
  mcp-witness guidance --server everything -- node /path/to/mcp-server-everything stdio
  mcp-witness guidance --server everything --profile none --require-tool trigger-sampling-request --url http://127.0.0.1:3001/mcp";

#[derive(Args)]
#[command(after_help = HELP)]
pub struct GuidanceArgs {
    /// A label for the server in the report (letters, digits, '_', '-', '.').
    #[arg(long, value_name = "NAME")]
    server: String,
    /// A client capability profile to discover under (repeatable; default: all five).
    #[arg(long = "profile", value_enum, value_name = "PROFILE")]
    profiles: Vec<ProfileArg>,
    /// A tool every selected profile must list (repeatable); its absence is a defect (exit 1).
    #[arg(long = "require-tool", value_name = "TOOL")]
    require_tools: Vec<String>,
    #[command(flatten)]
    settle: CatalogSettleArgs,
    #[command(flatten)]
    format: FormatArgs,
    #[command(flatten)]
    target: ServerArgs,
}

/// `--profile`: a client capability profile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum ProfileArg {
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

impl From<ProfileArg> for Profile {
    fn from(profile: ProfileArg) -> Self {
        match profile {
            ProfileArg::None => Profile::None,
            ProfileArg::Roots => Profile::Roots,
            ProfileArg::Sampling => Profile::Sampling,
            ProfileArg::Elicitation => Profile::Elicitation,
            ProfileArg::All => Profile::All,
        }
    }
}

/// Runs the discovery; the report decides the exit status.
pub fn run(args: GuidanceArgs) -> Result<ExitStatus> {
    let options = GuidanceOptions {
        server: args.server,
        target: args.target.target(Vec::new(), false)?,
        profiles: args.profiles.iter().map(|&p| p.into()).collect(),
        required: args.require_tools,
        settle: args.settle.settle(),
        timeout: args.target.connect.timeout(),
    };
    // Validated before anything is launched or contacted.
    options.validate()?;
    let report = witness_guidance::run(&options)?;
    match args.format.format {
        Format::Json => outln!("{}", serde_json::to_string_pretty(&report)?),
        Format::Text => out!("{}", witness_pages::guidance::text(&report)),
    }
    crate::exit::recorded(report.exit_code)
}

//! `mcp-witness plan`: what an audit without `--plan` would call, before
//! anything but `tools/list` is sent.

use anyhow::{Result, anyhow};
use clap::Args;
use witness_engine::audit;
use witness_model::exit::ExitStatus;

use super::{DestructiveArgs, EraArgs, Format, FormatArgs, ServerArgs, StoreArgs};

const HELP: &str = "\
The server is started in a jail exactly as `audit` would start it, asked for
its tools, and stopped; no tool is called. The plan shows each tool's class
(from annotations only, never from its name), the harvest pass (read-only
tools that run once their required arguments can be harvested), the calls
after it with where each argument will come from, and the tools left out
(destructive and unknown tools when the jail has no network isolation,
unless --include-destructive).

With --url instead of a command, the server is already running behind a
Streamable HTTP endpoint: it is asked for its tools, never launched or
jailed, so the plan's isolation is `none` and it leaves destructive and
unknown tools out unless --include-destructive. --store is accepted, so
that an audit's command line can be reused, and ignored: nothing is copied.

Examples:
  mcp-witness plan --store db=sqlite:notes.db -- mcp-witness testbed serve --store {db}
  mcp-witness plan --format json --url http://127.0.0.1:3001/mcp";

#[derive(Args)]
#[command(after_help = HELP)]
pub struct PlanArgs {
    #[command(flatten)]
    stores: StoreArgs,
    #[command(flatten)]
    format: FormatArgs,
    #[command(flatten)]
    era: EraArgs,
    #[command(flatten)]
    destructive: DestructiveArgs,
    #[command(flatten)]
    server: ServerArgs,
}

/// Prints the plan; exit 0 once it is printed, 3 when no catalog could be had.
pub fn run(args: PlanArgs) -> Result<ExitStatus> {
    let target = args.server.target(args.stores.specs()?, false)?;
    let (era, timeout) = (args.era.choice(), args.server.connect.timeout());
    let include_destructive = args.destructive.include_destructive;
    let preview = audit::preview(&target, era, timeout, include_destructive)
        .map_err(|reason| anyhow!("no plan: {reason}"))?;
    match args.format.format {
        Format::Json => outln!("{}", serde_json::to_string_pretty(&preview)?),
        Format::Text => out!("{}", witness_pages::plan::text(&preview)),
    }
    Ok(ExitStatus::Passed)
}

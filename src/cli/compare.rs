//! `mcp-witness agent compare BEFORE AFTER`: two run documents of the same
//! cases, per case and overall, each delta held to the noise floor reruns
//! alone produce.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Args;
use witness_agent::compare::{self, Inputs, Side};
use witness_model::agent::AgentRunDocument;
use witness_model::agent::compare::AgentCompareDocument;
use witness_model::exit::ExitStatus;

use super::agent::read_recording;
use super::{Format, FormatArgs};
use crate::exit::{invalid, recorded};

pub const HELP: &str = "\
BEFORE and AFTER are agent-run.json documents (or directories holding one) of
the same cases, each made with --runs N (N >= 2): usually the suite run once
with the pinned manifest and once with the live one,

  mcp-witness agent run --manifest manifests/prod.json --runs 10 --out runs/before ... -- SERVER
  mcp-witness agent run --runs 10 --out runs/after ... -- SERVER
  mcp-witness agent compare runs/before runs/after --out runs/compare

(`manifest diff` prints these commands for the change it found; the
walk-through is docs/weekend-incident.md.)

Per case and model, and overall per model: pass rate, calls and model turns per
run, the share of runs over the case's budget, and tokens where the driver
reported them; which tool each run called first; and every tool AFTER called
that the suite's history (BEFORE and each --history) never saw called.

A delta is called real only when it exceeds the noise floor: 3 standard errors
of the difference under rerun noise alone, estimated from each side's own
repetitions (docs/agent-compare.md).

Exit codes: 0 nothing real got worse and no unacknowledged new tool, 1 a real
delta in the worse direction or a new tool, 2 invalid invocation, 3 the compare
cannot conclude (a case with fewer than 2 concluded runs on a side).";

#[derive(Args)]
#[command(after_help = HELP)]
pub struct CompareArgs {
    /// The baseline run: agent-run.json, or a directory holding one.
    before: PathBuf,
    /// The run to compare with it.
    after: PathBuf,
    /// Another run of the suite whose calls join the history (repeatable).
    #[arg(long = "history", value_name = "RUN")]
    history: Vec<PathBuf>,
    /// A tool new to the history that a person reviewed (repeatable).
    #[arg(long = "acknowledge", value_name = "TOOL")]
    acknowledge: Vec<String>,
    /// Write agent-compare.json and its page, agent-compare.html, into this directory.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    #[command(flatten)]
    format: FormatArgs,
}

/// A run document given as itself or as the directory `agent run --out` wrote.
fn read(path: &Path) -> Result<(String, AgentRunDocument)> {
    let file = if path.is_dir() {
        path.join("agent-run.json")
    } else {
        path.to_path_buf()
    };
    let document = read_recording(&file)?;
    Ok((file.display().to_string(), document))
}

pub fn run(args: CompareArgs) -> Result<ExitStatus> {
    let (before_source, before) = read(&args.before)?;
    let (after_source, after) = read(&args.after)?;
    let history: Vec<(String, AgentRunDocument)> = args
        .history
        .iter()
        .map(|p| read(p))
        .collect::<Result<_>>()?;
    if let Some(out) = &args.out {
        std::fs::create_dir_all(out)
            .map_err(|e| invalid(format!("--out {}: {e}", out.display())))?;
    }
    let inputs = Inputs {
        before: Side {
            document: &before,
            source: &before_source,
        },
        after: Side {
            document: &after,
            source: &after_source,
        },
        history: history
            .iter()
            .map(|(source, document)| Side { document, source })
            .collect(),
        acknowledged: args.acknowledge.clone(),
    };
    let document = compare::compare(&inputs).map_err(|e| invalid(e.to_string()))?;
    write_outputs(&args, &document)?;
    recorded(document.exit_code)
}

fn write_outputs(args: &CompareArgs, document: &AgentCompareDocument) -> Result<()> {
    let json = serde_json::to_string_pretty(document)? + "\n";
    if let Some(out) = &args.out {
        let path = out.join("agent-compare.json");
        std::fs::write(&path, &json).with_context(|| format!("cannot write {}", path.display()))?;
        let page = witness_pages::compare::render(document)?;
        let path = out.join("agent-compare.html");
        std::fs::write(&path, page).with_context(|| format!("cannot write {}", path.display()))?;
    }
    match args.format.format {
        Format::Json => out!("{json}"),
        Format::Text => out!("{}", witness_pages::compare::text(document)),
    }
    Ok(())
}

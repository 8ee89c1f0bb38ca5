//! `mcp-witness sweep`: many servers from one SWEEP.toml, resumable and
//! sharded; `sweep merge`: shard outputs into one dataset.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use witness_model::exit::ExitStatus;
use witness_model::sweep::SweepDocument;
use witness_sweep::{RunOptions, Sweep, shard};

use crate::cli::jailargs::JailArgs;
use crate::progress::Progress;

const HELP: &str = "\
Targets are package coordinates (npm:@scope/name@1.2.3, pypi:name==1.2.3) or
commands, each with its launch, stores (fresh from fixtures), plan (or the
planner) and options; see docs/sweeps.md for the file. Each package is
installed with npm or pip into its own content-addressed directory under
--installs, each target audited in its jail by a worker process, and its
results filed under OUT/targets/<key>, the key derived from its whole
definition.

Resumable: a rerun with the same --out skips targets that concluded, and
retries the others up to the sweep's max_attempts. Install failures, servers
that never start and audits past audit_timeout_s are rows with their reason.

Sharding: --shard I/N (I from 0) runs a deterministic slice; without it the
slice comes from MCP_WITNESS_SHARD=I/N, a Kubernetes Indexed Job
(JOB_COMPLETION_INDEX with MCP_WITNESS_SHARD_COUNT), a Slurm array
(SLURM_ARRAY_TASK_ID, _MIN, _COUNT), GitLab CI (CI_NODE_INDEX, CI_NODE_TOTAL),
CircleCI or Buildkite. Give each shard its own --out, then:
  mcp-witness sweep merge OUT-0 OUT-1 OUT-2 --out OUT

Bounds: --memory, --processes, --disk, --cpu-seconds, --open-files and
--ro-bind given here hold for every target's audit, as they would for
`audit`; each audit's isolation layers say what its server was given.

Writes OUT/dataset.jsonl and OUT/dataset.csv (one row per target x tool x
check), OUT/sweep.json, OUT/index.html (the prevalence page) and each target's
evidence page. Exit: 0 every target audited and passed, 1 a check failed,
2 invalid invocation (a bad SWEEP.toml or --shard; nothing ran), 3 a target
could not conclude.";

#[derive(Args)]
#[command(
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true,
    after_help = HELP
)]
pub struct SweepArgs {
    #[command(subcommand)]
    command: Option<SweepCommand>,
    /// The sweep file.
    #[arg(value_name = "SWEEP.toml", required = true)]
    file: Option<PathBuf>,
    /// Where the results go (created; a rerun resumes in it).
    #[arg(long, value_name = "DIR", default_value = "sweep-results")]
    out: PathBuf,
    /// Where packages are installed (default: $MCP_WITNESS_INSTALLS, else
    /// OUT/installs). Shards and sweeps on one machine may share it.
    #[arg(long, value_name = "DIR")]
    installs: Option<PathBuf>,
    /// Targets audited at once (default: the number of cores).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=256))]
    jobs: Option<u16>,
    /// Run shard I of N (from 0) only.
    #[arg(long, value_name = "I/N")]
    shard: Option<String>,
    /// No progress on stderr.
    #[arg(long)]
    quiet: bool,
}

#[derive(Subcommand)]
enum SweepCommand {
    /// Combine the outputs of a sweep's shards into one dataset and page.
    Merge(MergeArgs),
    /// Audit one target from a job file (what `sweep` starts for each target).
    #[command(hide = true)]
    Worker {
        #[arg(value_name = "JOB")]
        job: PathBuf,
    },
}

#[derive(Args)]
struct MergeArgs {
    /// The shard output directories.
    #[arg(value_name = "DIR", required = true)]
    dirs: Vec<PathBuf>,
    /// Where the merged dataset goes.
    #[arg(long, value_name = "OUT")]
    out: PathBuf,
}

impl SweepArgs {
    /// Whether this is the hidden worker, which launches a server (the
    /// sweep itself only starts workers and package clients).
    pub fn is_worker(&self) -> bool {
        matches!(self.command, Some(SweepCommand::Worker { .. }))
    }
}

pub fn run(args: SweepArgs, progress: &Progress, jail: &JailArgs) -> Result<ExitStatus> {
    match args.command {
        Some(SweepCommand::Merge(merge)) => run_merge(merge),
        Some(SweepCommand::Worker { job }) => {
            witness_sweep::worker::run_job(&job)?;
            Ok(ExitStatus::Passed)
        }
        None => run_sweep(&args, progress, jail),
    }
}

fn run_sweep(args: &SweepArgs, progress: &Progress, jail: &JailArgs) -> Result<ExitStatus> {
    let Some(file) = &args.file else {
        return Err(crate::exit::invalid("give a sweep file"));
    };
    let sweep = Sweep::load(file)?;
    let shard = shard::choose(args.shard.as_deref(), &|name| std::env::var(name).ok())?;
    if let Some((shard, from)) = &shard
        && !args.quiet
    {
        errln!("sweep: shard {shard}, from {from}");
    }
    let installs = args.installs.clone().unwrap_or_else(|| {
        std::env::var_os("MCP_WITNESS_INSTALLS")
            .filter(|v| !v.is_empty())
            .map_or_else(|| args.out.join("installs"), PathBuf::from)
    });
    let exe = std::env::current_exe().context("cannot find this program to start workers")?;
    let jobs = args.jobs.map_or_else(
        || std::thread::available_parallelism().map_or(1, usize::from),
        usize::from,
    );
    let options = RunOptions {
        out: args.out.clone(),
        installs: std::path::absolute(&installs).unwrap_or(installs),
        jobs,
        shard: shard.map(|(s, _)| s),
        // A worker's stderr is its log, whose last line is the reason a
        // failed worker gives: no progress lines in it. Its servers get the
        // bounds and the view this sweep was given, as `audit` would.
        worker: [exe.into_os_string(), "--progress".into(), "off".into()]
            .into_iter()
            .chain(jail.forward().map_err(crate::exit::invalid)?)
            .chain(["sweep".into(), "worker".into()])
            .collect(),
    };
    let mut view = progress.sweep(args.quiet);
    let outcome = witness_sweep::run(&sweep, &options, &mut |event, tally| {
        view.show(event, tally);
    })?;
    drop(view);
    render(&args.out, &outcome.document, args.quiet)?;
    if !args.quiet {
        errln!(
            "sweep: {} targets here ({} done earlier)",
            outcome.selected,
            outcome.done_earlier
        );
    }
    Ok(outcome.status)
}

fn run_merge(args: MergeArgs) -> Result<ExitStatus> {
    let (document, status) = witness_sweep::merge::merge(&args.dirs, &args.out)?;
    render(&args.out, &document, false)?;
    Ok(status)
}

/// The prevalence page and the evidence pages, then one line per outcome.
fn render(out: &Path, document: &SweepDocument, quiet: bool) -> Result<()> {
    let rendered = witness_pages::sweep::render_dir(out)?;
    for warning in &rendered.warnings {
        errln!("mcp-witness: {warning}");
    }
    if quiet {
        return Ok(());
    }
    let statuses: Vec<String> = document
        .statuses
        .iter()
        .map(|(status, n)| format!("{n} {status}"))
        .collect();
    errln!(
        "sweep {}: {}{}; {} rows in {}, page {}",
        document.name,
        if statuses.is_empty() {
            "no targets".into()
        } else {
            statuses.join(", ")
        },
        if document.missing.is_empty() {
            String::new()
        } else {
            format!(", {} without a result", document.missing.len())
        },
        document.dataset.rows,
        out.join(&document.dataset.jsonl).display(),
        out.join("index.html").display()
    );
    Ok(())
}

//! `mcp-witness lab`: the experiments and the case studies, and their pages.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use witness_lab as lab;
use witness_model::exit::ExitStatus;

use super::PagesArgs;
use super::report::render_pages;
use crate::exit::invalid;
use crate::progress::Progress;

const HELP: &str = "\
Experiments (all on the built-in testbed, no network, no Node):
  e1   detection: six planted annotation lies, three detectors (effect-aware,
       response-level, name heuristic) reading the same executions
  e2   construct validation: does a probe separate authority from persistence?
  e3   lifecycle: is a key still effective after grant/key revocation, deletion, TTL?
  cases  the case studies: three published servers at pinned versions
       (@modelcontextprotocol/server-memory@2026.8.31, server-filesystem@2026.8.31,
       @executeautomation/database-server@1.1.0); install them first with
       `bash experiments/cases/install.sh` (Node 20+, npm), or for
       --cases-dir DIR with `bash experiments/cases/install.sh DIR`
  coverage  the planner on published servers it has never seen: six pinned
       servers (server-filesystem, server-memory, database-server,
       server-everything from npm; mcp-server-git, mcp-server-time from PyPI)
       audited with NO plan file on small stores it makes; tools exercised /
       total, false failures, against the issue's targets. Install with
       `bash experiments/cases/install.sh` (it also makes the pinned venv)
  wild  the planner and planted lies on eight published local-state servers
       the project had never studied (memory-bank, obsidian, five SQLite
       servers, DuckDB): each audited with NO plan file, honest
       and with each lie a relay plants in its tools/list answer; tools
       exercised / total, false failures, lies caught / planted. Install with
       `bash experiments/wild/install.sh DIR` (a cache; default
       ~/.cache/mcp-witness/wild, or --wild-dir / $MCP_WITNESS_WILD_DIR)
  field  the field study (issue 39): the servers experiments/field selected,
       each read as its registry entry (server.json) and witness.toml,
       installed into ~/.cache/mcp-witness/field on first use (or
       --field-cache / $MCP_WITNESS_FIELD_DIR), audited with NO plan file on
       a fresh realistic store, honest and once per lie its ground truth
       (experiments/field/truth/<id>.toml) calls for: read-only on a writer,
       non-destructive on a deleter or overwriter, idempotent on a tool that
       is not. --half development (the default; the evaluation half is held
       out), evaluation or all; --server ID (repeatable) for a subset of the
       half; --shard I/N for the I-th of N parts of those, dealt round in
       id order (experiments/field/slurm-array.sh runs one a task). Writes
       field.json, field.jsonl and field.csv (one row per server x tool x
       hint, with what `suggest` made of each unset hint) and
       audits/field-*.json, then the pages (the evaluation page's field
       section and an evidence report per audit); exit 1 when a lie
       escaped or a check failed on a claim the ground truth says holds.
       --merge DIR (repeatable) merges runs of parts (--server subsets,
       shards) into --out instead of running: the servers in id order, the
       tallies counted again, byte for byte what one run of them all writes
  postgres  E2 and E3 on PostgreSQL: the persistence/authority corpus and
       the lifecycle scenarios (REVOKE with a second path, REVOKE, NOLOGIN,
       VALID UNTIL, DROP ROLE) minted through @bytebase/dbhub@1.4.0's
       execute_sql on a throwaway cluster, events applied out of band, the
       PostgreSQL probe against the persistence, keyword, existence and
       delegation baselines: e2-postgres.json, e3-postgres.json. Needs
       PostgreSQL's server binaries and the same install as the cases
  all  e1, e2, e3, and the cases and postgres when they are installed
       (else their committed documents are rendered as found). Not coverage: its
       reruns give the same numbers but not the same bytes (commit ids, the
       servers' clocks and environment), so its committed documents are
       carried over and rendered, and a test holds reruns to their numbers;
       nor wild or field (their servers are caches of their own); a
       field.json in DIR is rendered as found

Writes DIR/<experiment>.json, DIR/summary.md and every audit behind them
(DIR/audits/*.json), then the pages: PAGES/index.html (the evaluation page)
and PAGES/effect-report-<audit>.html for every DIR/audits/<audit>.json.
PAGES is --pages, or DIR itself. Links between pages and data are relative,
so both directories can be moved together. Reruns write identical bytes.
Exit 0 when the experiments ran; 3 when an audit could not complete. The
case studies add 1 when a check failed in a case (it outranks a case that
could not conclude, 3); coverage exits 1 when a target is missed or a failing
check is not explained as the server's real behaviour; wild exits 1 when a
planted lie escaped or a check failed on a tool that did not lie. `lab cases` and `lab
coverage` without the installed servers: exit 2.

The repository's committed results are made with:
  mcp-witness lab all --out experiments/results --pages reports

Never weaker results over committed ones: when --out already holds audits
made with an isolation layer or the network observer that does not work
here (mcp-witness doctor lists them), the run is refused with exit 2 before
anything runs, its first line naming the layer, what a rerun here would
change (without nftables: every EFF-04 verdict untestable) and how to
install it. Install it, write elsewhere (--out DIR), or pass --allow-weaker.";

#[derive(Args)]
#[command(after_help = HELP)]
pub struct LabArgs {
    /// Which experiment.
    #[arg(value_enum)]
    experiment: Experiment,
    /// Output directory for the JSON and summary.md (created if missing).
    #[arg(long, value_name = "DIR", default_value = "lab-results")]
    out: PathBuf,
    /// Where the case studies' pinned packages are installed (default:
    /// $MCP_WITNESS_CASES_DIR, else ./experiments/cases, else the source tree's).
    #[arg(long, value_name = "DIR")]
    cases_dir: Option<PathBuf>,
    /// Where the wild experiment's servers are installed (default:
    /// $MCP_WITNESS_WILD_DIR, else ~/.cache/mcp-witness/wild).
    #[arg(long, value_name = "DIR")]
    wild_dir: Option<PathBuf>,
    /// Where the field study's packages are installed (default:
    /// $MCP_WITNESS_FIELD_DIR, else ~/.cache/mcp-witness/field).
    #[arg(long, value_name = "DIR")]
    field_cache: Option<PathBuf>,
    /// The field study's half: development (default), evaluation or all.
    #[arg(long, value_enum, default_value = "development")]
    half: FieldHalf,
    /// Only this server of the field study (repeatable; it must be in --half).
    #[arg(long = "server", value_name = "ID")]
    servers: Vec<String>,
    /// Only shard I of N (from 0) of the field study's servers (the half's,
    /// or the --server ones), dealt round in id order; `lab field --merge`
    /// puts the shards together.
    #[arg(long, value_name = "I/N")]
    shard: Option<String>,
    /// Merge the field study's runs in these directories (shards, or a
    /// server rerun alone) into --out instead of running (repeatable).
    #[arg(long = "merge", value_name = "DIR")]
    merge: Vec<PathBuf>,
    /// The field study's ground truths (default: experiments/field/truth in
    /// the source tree).
    #[arg(long, value_name = "DIR")]
    truth: Option<PathBuf>,
    /// Write into an --out whose audits were made with isolation layers (or
    /// a network observer) this machine lacks. Without it such a run is
    /// refused (exit 2), naming the layer, what it changes and how to
    /// install it: a rerun here would write weaker results over them.
    #[arg(long)]
    allow_weaker: bool,
    #[command(flatten)]
    pages: PagesArgs,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Experiment {
    E1,
    E2,
    E3,
    /// The published servers (needs `bash experiments/cases/install.sh`).
    Cases,
    /// E2 and E3 on PostgreSQL through dbhub (same install, and PostgreSQL).
    Postgres,
    /// The planner, with no plan file, on six published servers (same install).
    Coverage,
    /// The planner and planted lies on eight servers never studied
    /// (needs `bash experiments/wild/install.sh DIR`).
    Wild,
    /// The field study: the selected servers, honest and with the lies
    /// their ground truth calls for (installs into a cache on first use).
    Field,
    All,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum FieldHalf {
    Development,
    Evaluation,
    All,
}

/// Runs the chosen experiments, then renders every page.
pub fn run(args: LabArgs, progress: &Progress) -> Result<ExitStatus> {
    if args.experiment != Experiment::Field
        && (!args.servers.is_empty()
            || args.half != FieldHalf::Development
            || args.truth.is_some()
            || args.shard.is_some()
            || !args.merge.is_empty())
    {
        return Err(invalid(
            "--half, --server, --shard, --truth and --merge are the field study's; use them with `lab field`",
        ));
    }
    if args.shard.is_some() && !args.merge.is_empty() {
        return Err(invalid(
            "--shard runs a part of the study and --merge puts parts together: give one",
        ));
    }
    let shard = args
        .shard
        .as_deref()
        .map(|text| witness_sweep::Shard::parse(text, "--shard"))
        .transpose()
        .map_err(|e| invalid(e.to_string()))?;
    if args.out.exists() && !args.out.is_dir() {
        return Err(invalid(format!(
            "--out {}: not a directory",
            args.out.display()
        )));
    }
    if !args.allow_weaker {
        let gaps = super::weaker::gaps(&args.out, witness_jail::sandbox::availability());
        if !gaps.is_empty() {
            return Err(invalid(super::weaker::refusal(&args.out, &gaps)));
        }
    }
    let cases_dir = args
        .cases_dir
        .as_deref()
        .map_or_else(lab::cases::cases_dir, lab::cases::absolute_dir);
    let run_cases = match (args.experiment, lab::cases::check_installed(&cases_dir)) {
        (Experiment::Cases, installed) => installed.map(|()| true)?,
        (Experiment::All, installed) => installed.is_ok(),
        _ => false,
    };
    let pages = args.pages.dir(&args.out)?;
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))?;
    let progress = progress.lab();
    let want = |e: Experiment| args.experiment == e || args.experiment == Experiment::All;
    if want(Experiment::E1) {
        lab::e1::run(&args.out, &progress)?;
    }
    if want(Experiment::E2) {
        lab::e2::run(&args.out, &progress)?;
    }
    if want(Experiment::E3) {
        lab::e3::run(&args.out, &progress)?;
    }
    let run_postgres = match (args.experiment, lab::postgres::check_installed(&cases_dir)) {
        (Experiment::Postgres, installed) => installed.map(|()| true)?,
        (Experiment::All, installed) => installed.is_ok(),
        _ => false,
    };
    if run_postgres {
        lab::postgres::run_in(&cases_dir, &args.out, &progress)?;
    } else if args.experiment == Experiment::All {
        errln!(
            "mcp-witness: E2 and E3 on PostgreSQL skipped: {}@{} or PostgreSQL is missing in {} \
             (install with: {}); their committed documents, if any, are rendered as found",
            lab::postgres::PACKAGE,
            lab::postgres::VERSION,
            cases_dir.display(),
            lab::cases::install_command(&cases_dir)
        );
    }
    let mut status = ExitStatus::Passed;
    if args.experiment == Experiment::Coverage {
        status = lab::coverage::run_coverage_in(&cases_dir, &args.out, &progress)?.status;
    }
    if args.experiment == Experiment::Wild {
        let dir = args
            .wild_dir
            .as_deref()
            .map_or_else(lab::wild::wild_dir, lab::cases::absolute_dir);
        lab::wild::check_installed(&dir).map_err(|e| invalid(e.to_string()))?;
        status = lab::wild::run_wild_in(&dir, &args.out, &progress)?.status;
    }
    if args.experiment == Experiment::Field {
        let field = lab::field::source_dir();
        let options = lab::field::FieldOptions {
            truth: args.truth.clone().unwrap_or_else(|| field.join("truth")),
            field,
            cache: args
                .field_cache
                .as_deref()
                .map_or_else(lab::field::field_cache, lab::cases::absolute_dir),
            half: match args.half {
                FieldHalf::Development => lab::field::Half::Development,
                FieldHalf::Evaluation => lab::field::Half::Evaluation,
                FieldHalf::All => lab::field::Half::All,
            },
            servers: args.servers.clone(),
            shard,
        };
        let ran = if args.merge.is_empty() {
            lab::field::run_field(&options, &args.out, &progress).map(|o| o.status)
        } else {
            lab::field::merge_field(&args.merge, options.half, &options.field, &args.out)
                .map(|d| lab::field::run::status_of(&d))
        };
        status = match ran {
            Ok(status) => status,
            Err(lab::field::FieldError::Invalid(why)) => return Err(invalid(why)),
            Err(e) => return Err(e.into()),
        };
    }
    if run_cases {
        status = lab::cases::run_cases_in(&cases_dir, &args.out, &progress)?.status;
    } else if args.experiment == Experiment::All {
        errln!(
            "mcp-witness: case studies skipped: the pinned servers are not installed in {} \
             (install them with: {})",
            cases_dir.display(),
            lab::cases::install_command(&cases_dir)
        );
    }
    render_pages(&args.out, &pages)?;
    Ok(status)
}

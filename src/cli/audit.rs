//! `mcp-witness audit`: one server, observed around every tool call.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use witness_engine::audit::{self, AuditOptions};
use witness_engine::plan::Plan;
use witness_jail::parse_env_pairs;
use witness_model::audit::AuditReport;
use witness_model::exit::ExitStatus;
use witness_sweep::server_json::Given;

use super::{DestructiveArgs, EraArgs, ServerArgs, SettleArgs, StoreArgs};
use crate::exit::invalid;
use crate::progress::Progress;

const HELP: &str = "\
The server runs in a jail: a fresh temporary directory with copies of the
declared stores, its working directory, HOME and TMPDIR, a scrubbed
environment (PATH, LANG, LC_ALL, LC_CTYPE, TZ plus --env), its own process
group, and a new network namespace where the kernel allows it. The stores you
name are copied, never touched. In the command and in --env values, {NAME}
stands for the jailed path of store NAME and {jail} for the jail itself; the
program name `mcp-witness` means this binary.

Examples:
  mcp-witness audit 'npx -y @modelcontextprotocol/server-memory@2026.8.31' --store mem=jsonl:memory.jsonl --env MEMORY_FILE_PATH={mem}
  mcp-witness audit pypi:mcp-server-time==2026.10.19
  mcp-witness audit --store db=sqlite:notes.db -- mcp-witness testbed serve --variant honest --store {db}
  mcp-witness audit --store mem=jsonl:memory.jsonl --env MEMORY_FILE_PATH={mem} -- node /path/to/server-memory/dist/index.js
  mcp-witness audit --plan plan.toml --format json --out results/ -- ...
  mcp-witness audit --server-json server.json --store mem=jsonl:memory.jsonl --env API_KEY=...

With --server-json, the target is an entry of the official MCP registry (its
server.json, bare or as the registry's API serves it). Its first npm or pypi
package (or --package N, from 0) is installed as PACKAGE is and launched with
its packageArguments and environmentVariables: --env NAME=VALUE wins over the
entry's value and default; {x} in a value is store x's jailed path when
--store x=... declares it, else --var x=VALUE, else the entry's variable.
A secret is taken only from --env (or --var), never from the file. A
required input or secret nobody gave, another registryType, a package
without an exact version or a transport other than stdio is refused (exit 2)
before anything is installed.

Without --plan every tool is called once. Its arguments are real where a
real value fits: the declared stores' own paths, tables and entities
(provenance `store`), values from the server's earlier answers and from
the plan's own earlier calls (`harvested`); else what the schema and the
descriptions offer, else invented (`synthesized`: a failure on those is
`untestable`, never `fail`). Tools declared idempotent are called twice.

A call that times out, sends an oversized answer or loses the transport is
recorded, the server is started again in the same jail (the stores as the
calls left them) and the plan goes on; the report lists every restart.

The report says how many tools were exercised with a successful call, on
what kind of values, and why the others were not, and how many declared
claims (readOnlyHint: true, destructiveHint: false, idempotentHint: true,
openWorldHint: false) were tested. An answer without isError that says the
call failed (`File not found`, `{\"success\": false}`) is an error in the
answer: it exercises nothing. A claim passes only on calls of the form it
is about: a read-only claim on a tool asked to write, only after such a
call did its job; a claim to destroy nothing on a tool asked to change or
remove things, only after such a call did its job on something that
existed. An audit where no effect check rests on an observation (no store
declared and nothing seen in the jail, or --url without --store) never
passes: its checks are untestable and it exits 3, as it does when fewer
tools were exercised, or fewer claims tested, than --min-coverage, or when
a claim on a tool asked to write was never tested.

Two lanes of checks: the effect lane (EFF-xx, declarations held to observed
effects) and the response lane (RSP-xx: outputSchema compiles and results
validate, an isError result and a JSON-RPC error told apart, a returned
cursor terminates, and whatever checks a plan attaches to a call). Metadata
findings are reported apart and never fail an audit. --format junit or
sarif prints the verdicts for CI systems.

Exit codes: 0 passed, 1 a check of either lane failed, 2 invalid
invocation, 3 incomplete or nothing concluded.

With --url instead of a command, the server is already running behind a
Streamable HTTP endpoint and is NOT jailed: its calls change its real stores.
The --store paths are then observed in place (read-only, never copied), and
the report states isolation `none`. Only audit a remote server whose stores
you can afford to have written. Loopback URLs may use http; any other host
needs https and --allow-remote-http.";

#[derive(Args)]
#[command(after_help = HELP)]
pub struct AuditArgs {
    #[command(flatten)]
    stores: StoreArgs,
    /// A TOML plan of calls with literal or harvested arguments (see docs/cli.md).
    #[arg(long, value_name = "FILE")]
    plan: Option<PathBuf>,
    /// Write audit.json and its effect-evidence report, report.html, into this directory.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// What to print on stdout: a text summary, the audit document, JUnit
    /// XML (one test case per check and tool) or SARIF 2.1.0 (failures and
    /// metadata findings, for code scanning).
    #[arg(long, value_enum, default_value_t = AuditFormat::Text)]
    format: AuditFormat,
    /// Also write the SARIF 2.1.0 log to FILE, whatever --format prints
    /// (CI keeps it and the JUnit report from one audit).
    #[arg(long = "sarif", value_name = "FILE")]
    sarif_file: Option<PathBuf>,
    /// Also write the JUnit XML report to FILE, whatever --format prints.
    #[arg(long = "junit", value_name = "FILE")]
    junit_file: Option<PathBuf>,
    #[command(flatten)]
    era: EraArgs,
    #[command(flatten)]
    settle: SettleArgs,
    /// The largest file (or SQLite/JSONL store) one observation reads, in
    /// bytes: a larger file is recorded by its size with a finding, a larger
    /// declared store makes the audit incomplete.
    #[arg(long, default_value_t = audit::OBSERVE_BYTES)]
    max_observe_bytes: u64,
    /// The longest one observation of one store may take, in milliseconds;
    /// past it the audit ends incomplete, saying which store.
    #[arg(long, default_value_t = audit::OBSERVE_MS, value_parser = clap::value_parser!(u64).range(1..))]
    max_observe_ms: u64,
    /// Keep the jail directory after the audit (its path is printed).
    #[arg(long, conflicts_with = "url")]
    keep_jail: bool,
    /// How created objects are exercised: `null` (authority unknown, EFF-06 skips),
    /// `testbed` (the built-in testbed's own authorization rule) or `postgres`
    /// (a PostgreSQL store's roles by a login with the password a call carried,
    /// its grants by `SET ROLE` and the action, rolled back).
    #[arg(long, value_enum, default_value_t = ProbeChoice::Null)]
    probe: ProbeChoice,
    /// Injected clock for `--probe testbed` (Unix seconds).
    #[arg(long, default_value_t = witness_testbed::DEFAULT_NOW)]
    probe_now: i64,
    /// Deterministic run: injected clock, no wall-clock values (reruns write identical JSON).
    #[arg(long)]
    deterministic: bool,
    #[command(flatten)]
    destructive: DestructiveArgs,
    /// Exit 3 (could not conclude) unless at least this percentage of the
    /// listed tools was exercised with a successful call, and of the
    /// declared claims was tested (0-100). Default 75 without a plan file.
    #[arg(long, value_name = "PERCENT", value_parser = clap::value_parser!(u8).range(0..=100))]
    min_coverage: Option<u8>,
    /// Start the server afresh for every call, in the same jail with the
    /// stores as the calls before left them: for servers that misbehave in
    /// a long session.
    #[arg(long)]
    session_per_call: bool,
    /// Refuse the server's confirmations. By default the audit declares
    /// the elicitation capability and accepts a confirmation it can fill
    /// (the form's defaults, yes to its yes/no questions): a destructive
    /// form gated behind "are you sure?" is then exercised, on the jail's
    /// copy. Each answer is recorded on its call (`confirmations`).
    #[arg(long)]
    refuse_confirmations: bool,
    /// Report failures without confirming them. By default every failing
    /// effect check is confirmed first: the call is repeated after the
    /// stores were quiet (a fresh call where the effect was one-shot), and
    /// a failure that does not reproduce is `untestable`. The report says
    /// when confirmation was off.
    #[arg(long)]
    no_confirm: bool,
    #[command(flatten)]
    entry: EntryArgs,
    #[command(flatten)]
    server: ServerArgs,
}

/// `--server-json`: an official MCP registry entry as the target.
#[derive(Args)]
struct EntryArgs {
    /// Audit an entry of the official MCP registry: its server.json. Its
    /// npm or pypi package is installed as PACKAGE is and launched with the
    /// entry's packageArguments and environmentVariables.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["url", "command", "package"])]
    server_json: Option<PathBuf>,
    /// Which of the entry's packages[] to audit, counted from 0 (default:
    /// the first npm or pypi one).
    #[arg(long = "package", value_name = "N", requires = "server_json")]
    entry_package: Option<usize>,
    /// A value for the entry's {NAME} placeholder, or for its argument
    /// NAME that has no value (a positional's valueHint, a named one's flag
    /// without dashes); repeatable.
    #[arg(long = "var", value_name = "NAME=VALUE", requires = "server_json")]
    vars: Vec<String>,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum AuditFormat {
    Text,
    Json,
    Junit,
    Sarif,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ProbeChoice {
    Null,
    Testbed,
    Postgres,
}

/// Runs the audit; its report decides the exit status.
pub fn run(args: AuditArgs, progress: &Progress) -> Result<ExitStatus> {
    // clap lets `requires` pass once a PACKAGE or COMMAND is given.
    if args.entry.server_json.is_none()
        && (args.entry.entry_package.is_some() || !args.entry.vars.is_empty())
    {
        return Err(invalid(
            "--package N and --var choose among a --server-json entry's packages and fill its inputs; give --server-json FILE",
        ));
    }
    let stores = args.stores.specs()?;
    let (target, installed, entry) = match &args.entry.server_json {
        Some(path) => {
            let given = Given {
                stores: stores.iter().map(|s| s.name.clone()).collect(),
                vars: parse_env_pairs("--var", &args.entry.vars).map_err(invalid)?,
                env: args.server.env()?,
            };
            let entry = super::package::entry(
                path,
                args.entry.entry_package,
                &given,
                args.server.target.installs.as_ref(),
            )?;
            let target = args.server.launched(
                entry.command.clone(),
                stores,
                entry.env.clone(),
                args.keep_jail,
            )?;
            (target, Some(entry.installed.clone()), Some(entry))
        }
        None => {
            let (target, installed) = args.server.target_and_package(stores, args.keep_jail)?;
            (target, installed, None)
        }
    };
    let plan = match &args.plan {
        Some(path) => Some(Plan::load(path)?),
        None => None,
    };
    // SARIF results point at the plan, so its text is read now, with it.
    let plan_text = match &args.plan {
        Some(path) if args.format == AuditFormat::Sarif => std::fs::read_to_string(path).ok(),
        _ => None,
    };
    if let Some(out) = &args.out {
        check_out_dir(out)?;
    }
    let options = AuditOptions {
        era: args.era.choice(),
        plan,
        timeout: args.server.connect.timeout(),
        settle: args.settle.settle().bound,
        observe: audit::ObserveOptions {
            quiet: args.settle.settle().quiet,
            budget: witness_observers::Budget {
                max_bytes: args.max_observe_bytes,
                max_time: Duration::from_millis(args.max_observe_ms),
            },
        },
        deterministic: args.deterministic,
        probe: probe(&args),
        include_destructive: args.destructive.include_destructive,
        session_per_call: args.session_per_call,
        confirm: !args.no_confirm,
        accept_confirmations: !args.refuse_confirmations,
        min_coverage: args.min_coverage,
        progress: progress.audit(),
        label: installed.as_ref().map(|i| i.package.coordinate()),
        pinned_version: installed.as_ref().map(|i| i.package.version.clone()),
        package: installed.as_ref().map(super::package::pin),
        server_json: entry.as_ref().map(|e| e.source.clone()),
        secrets: entry.map(|e| e.secrets).unwrap_or_default(),
        ..AuditOptions::new(target)
    };
    let run = audit::run(options).context("the audit could not start")?;
    let mut report = run.report;
    if let Some(installed) = &installed {
        // The cache's place on this machine is not part of what was
        // audited: the command reads `{install}/…`, as a sweep's does.
        let dir = installed.dir.to_string_lossy();
        for word in &mut report.target.command {
            *word = word.replace(dir.as_ref(), "{install}");
        }
    }
    let json = serde_json::to_string_pretty(&report)? + "\n";
    if let Some(out) = &args.out {
        write_out(out, &report, &json)?;
    }
    let sarif = || -> Result<String> {
        let artifact = sarif_artifact(&args, plan_text.clone());
        let log = witness_pages::ci::sarif(&report, &artifact);
        Ok(serde_json::to_string_pretty(&log)? + "\n")
    };
    if let Some(path) = &args.sarif_file {
        std::fs::write(path, sarif()?)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    if let Some(path) = &args.junit_file {
        std::fs::write(path, witness_pages::ci::junit(&report)?)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    match args.format {
        AuditFormat::Json => out!("{json}"),
        AuditFormat::Text => out!("{}", witness_pages::text::text(&report)),
        AuditFormat::Junit => out!("{}", witness_pages::ci::junit(&report)?),
        AuditFormat::Sarif => out!("{}", sarif()?),
    }
    if let Some(kept) = run.kept_jail {
        errln!("mcp-witness: jail kept at {}", kept.display());
    }
    crate::exit::recorded(report.exit_code)
}

/// What SARIF results point at: the plan the audit ran (at the `[[call]]`
/// a plan check was attached to), else the audit document `--out` wrote,
/// else `audit.json`, the name `--out` gives it.
fn sarif_artifact(args: &AuditArgs, plan: Option<String>) -> witness_pages::ci::Artifact {
    let path = match (&args.plan, &args.out) {
        (Some(plan), _) => plan.display().to_string(),
        (None, Some(out)) => out.join("audit.json").display().to_string(),
        (None, None) => "audit.json".to_owned(),
    };
    witness_pages::ci::Artifact { path, plan }
}

fn probe(args: &AuditArgs) -> Box<dyn witness_probes::Probe> {
    match args.probe {
        ProbeChoice::Null => Box::new(witness_probes::NullProbe),
        ProbeChoice::Testbed => Box::new(witness_testbed::probe::CredentialProbe {
            now: args.probe_now,
            rule: witness_testbed::auth::AuthRule::Plain,
        }),
        ProbeChoice::Postgres => Box::new(witness_postgres::PostgresProbe::new()),
    }
}

/// Before the server is launched: a bad --out must not cost a run whose
/// report then has nowhere to go.
fn check_out_dir(out: &Path) -> Result<()> {
    if out.exists() && !out.is_dir() {
        return Err(invalid(format!("--out {}: not a directory", out.display())));
    }
    std::fs::create_dir_all(out)
        .map_err(|e| invalid(format!("--out {}: cannot create it: {e}", out.display())))?;
    tempfile::tempfile_in(out)
        .map_err(|e| invalid(format!("--out {}: cannot write there: {e}", out.display())))?;
    Ok(())
}

/// Writes `audit.json` and its page into `out`.
fn write_out(out: &Path, report: &AuditReport, json: &str) -> Result<()> {
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let path = out.join("audit.json");
    std::fs::write(&path, json).with_context(|| format!("cannot write {}", path.display()))?;
    let links = witness_pages::AuditLinks {
        raw_json: Some("audit.json".into()),
        index: None,
    };
    // The page is a view of audit.json; failing to draw it must not hide
    // the verdict, so it warns rather than changing the exit code.
    match witness_pages::render_audit(report, &links) {
        Ok(html) => {
            let path = out.join("report.html");
            std::fs::write(&path, html)
                .with_context(|| format!("cannot write {}", path.display()))?;
        }
        Err(e) => errln!("mcp-witness: report.html not written: {e:#}"),
    }
    Ok(())
}

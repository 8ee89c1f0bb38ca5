//! The `mcp-witness` command line. Exit codes, for every command: 0 passed,
//! 1 completed and the target failed, 2 invalid invocation (nothing was
//! launched), 3 incomplete (could not conclude).

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand, ValueEnum};

mod cli;

use cli::{EraArg, ProfileArg};
use witness_engine::audit::{self, AuditOptions};
use witness_engine::guidance::{self, GuidanceOptions};
use witness_engine::jail::{JailSpec, StoreSpec};
use witness_engine::plan::Plan;
use witness_model::audit::AuditReport;
use witness_model::guidance::GuidanceReport;
use witness_wire::http::Endpoint;

const AFTER_HELP: &str = "\
Exit codes: 0 passed · 1 completed and the target failed · 2 invalid invocation
(nothing was launched) · 3 incomplete: could not conclude (never evidence
against the target).";

#[derive(Parser)]
#[command(
    name = "mcp-witness",
    version,
    about = "Effect-aware conformance lab for MCP servers",
    long_about = "mcp-witness runs an MCP server against a throwaway copy of its store, observes that \
store out of band around every tool call, and holds the tools' declared annotations \
(readOnlyHint, destructiveHint, idempotentHint) to what actually happened.\n\n\
Start with the built-in testbed:\n  \
mcp-witness audit --store db=sqlite:/tmp/new.db -- mcp-witness testbed serve --variant honest --store {db}",
    after_help = AFTER_HELP
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Audit one server: observe its store around every tool call and check its declarations.
    #[command(after_help = AUDIT_HELP)]
    Audit(AuditArgs),
    /// Print the plan an audit without --plan would follow (only tools/list is sent).
    #[command(after_help = PLAN_HELP)]
    Plan(PlanArgs),
    /// Instruction coherence: compare a server's instructions with its tool
    /// catalogs under client capability profiles (discovery only, no tool is called).
    #[command(after_help = GUIDANCE_HELP)]
    Guidance(GuidanceArgs),
    /// The built-in planted-lie notes server the experiments audit.
    #[command(subcommand)]
    Testbed(TestbedCommand),
    /// Run the experiments (E1–E3 on the built-in testbed; the published-server case studies) and render their pages.
    #[command(after_help = LAB_HELP)]
    Lab(LabArgs),
    /// Pin a server's tool manifest, fingerprint it, and classify drift between two.
    #[command(subcommand)]
    Manifest(cli::manifest::ManifestCommand),
    /// Re-render the pages (summary.md, index.html, effect reports) from the JSON in DIR; runs nothing.
    #[command(after_help = REPORT_HELP)]
    Report(ReportArgs),
    /// Print the JSON Schema of a versioned document.
    Schema {
        /// Which document.
        #[arg(value_enum)]
        document: SchemaDoc,
    },
}

const AUDIT_HELP: &str = "\
The server runs in a jail: a fresh temporary directory with copies of the
declared stores, its working directory, HOME and TMPDIR, a scrubbed
environment (PATH, LANG, LC_ALL, LC_CTYPE, TZ plus --env), its own process
group, and a new network namespace where the kernel allows it. The stores you
name are copied, never touched. In the command and in --env values, {NAME}
stands for the jailed path of store NAME and {jail} for the jail itself; the
program name `mcp-witness` means this binary.

Examples:
  mcp-witness audit --store db=sqlite:notes.db -- mcp-witness testbed serve --variant honest --store {db}
  mcp-witness audit --store mem=jsonl:memory.jsonl --env MEMORY_FILE_PATH={mem} -- node /path/to/server-memory/dist/index.js
  mcp-witness audit --plan plan.toml --format json --out results/ -- ...

Without --plan every tool is called once with arguments synthesized from its
input schema (a failure on those is `untestable`, never `fail`); tools
declared idempotent are called twice. Exit codes: 0 passed, 1 a check
failed, 2 invalid invocation, 3 incomplete.

With --url instead of a command, the server is already running behind a
Streamable HTTP endpoint and is NOT jailed: its calls change its real stores.
The --store paths are then observed in place (read-only, never copied), and
the report states isolation `none`. Only audit a remote server whose stores
you can afford to have written. Loopback URLs may use http; any other host
needs https and --allow-remote-http.";

const GUIDANCE_HELP: &str = "\
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

const LAB_HELP: &str = "\
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
  all  every experiment above; the cases only when they are installed

Writes DIR/<experiment>.json, DIR/summary.md and every audit behind them
(DIR/audits/*.json), then the pages: PAGES/index.html (the evaluation page)
and PAGES/effect-report-<audit>.html for every DIR/audits/<audit>.json.
PAGES is --pages, or DIR itself. Links between pages and data are relative,
so both directories can be moved together. Reruns write identical bytes.
Exit 0 when the experiment ran; 3 when an audit could not complete.

The repository's committed results are made with:
  mcp-witness lab all --out experiments/results --pages reports";

const REPORT_HELP: &str = "\
Reads DIR/e1.json, e2.json, e3.json, case-*.json and DIR/audits/*.json, and
writes DIR/summary.md, PAGES/index.html and PAGES/effect-report-<audit>.html
(PAGES is --pages, or DIR). Nothing is run: the pages are exactly what the
JSON says. `lab` renders the same pages at the end of its run.

  mcp-witness report experiments/results --pages reports";

#[derive(Args)]
struct ReportArgs {
    /// The results directory holding the JSON documents.
    #[arg(value_name = "DIR")]
    dir: PathBuf,
    /// Where to write the HTML pages (default: DIR).
    #[arg(long, value_name = "PAGES")]
    pages: Option<PathBuf>,
}

#[derive(Args)]
struct LabArgs {
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
    /// Where to write the HTML pages (default: the --out directory).
    #[arg(long, value_name = "PAGES")]
    pages: Option<PathBuf>,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Experiment {
    E1,
    E2,
    E3,
    /// The published servers (needs `bash experiments/cases/install.sh`).
    Cases,
    All,
}

const PLAN_HELP: &str = "\
The server is started in a jail exactly as `audit` would start it, asked for
its tools, and stopped; no tool is called. The plan shows each tool's class
(from annotations only, never from its name), the harvest pass (read-only
tools that run once their required arguments can be harvested), the calls
after it with where each argument will come from, and the tools left out
(destructive and unknown tools when the jail has no network isolation,
unless --include-destructive).";

#[derive(Args)]
struct PlanArgs {
    /// A store to copy into the jail: NAME=KIND:PATH (as for `audit`).
    #[arg(long = "store", value_name = "NAME=KIND:PATH")]
    stores: Vec<String>,
    /// An environment variable for the server (repeatable); {NAME} placeholders expand.
    #[arg(long = "env", value_name = "K=V")]
    env: Vec<String>,
    /// What to print.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    #[arg(long, value_enum, default_value_t = EraArg::Auto)]
    era: EraArg,
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..=600_000))]
    timeout_ms: u64,
    /// Do not try to put the server in a network namespace.
    #[arg(long)]
    no_netns: bool,
    /// Plan destructive and unknown tools even without network isolation.
    #[arg(long)]
    include_destructive: bool,
    /// The server command and its arguments, after `--`.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    command: Vec<String>,
}

#[derive(Args)]
struct AuditArgs {
    /// A store to copy into the jail and observe: NAME=KIND:PATH with KIND sqlite, jsonl or fs.
    /// A PATH that does not exist starts empty in the jail.
    #[arg(long = "store", value_name = "NAME=KIND:PATH")]
    stores: Vec<String>,
    /// An environment variable for the server (repeatable); {NAME} placeholders expand.
    #[arg(long = "env", value_name = "K=V")]
    env: Vec<String>,
    /// A TOML plan of calls with literal or harvested arguments (see docs/cli.md).
    #[arg(long, value_name = "FILE")]
    plan: Option<PathBuf>,
    /// Write audit.json and its effect-evidence report, report.html, into this directory.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// What to print on stdout.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Which protocol era to speak.
    #[arg(long, value_enum, default_value_t = EraArg::Auto)]
    era: EraArg,
    /// Timeout of every request, in milliseconds.
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..=600_000))]
    timeout_ms: u64,
    /// Wait after each call before the post-call snapshot, in milliseconds.
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u64).range(0..=60_000))]
    settle_ms: u64,
    /// Keep the jail directory after the audit (its path is printed).
    #[arg(long)]
    keep_jail: bool,
    /// Do not try to put the server in a network namespace.
    #[arg(long)]
    no_netns: bool,
    /// How created objects are exercised: `null` (authority unknown, EFF-06 skips)
    /// or `testbed` (the built-in testbed's own authorization rule).
    #[arg(long, value_enum, default_value_t = ProbeChoice::Null)]
    probe: ProbeChoice,
    /// Injected clock for `--probe testbed` (Unix seconds).
    #[arg(long, default_value_t = witness_testbed::DEFAULT_NOW)]
    probe_now: i64,
    /// Deterministic run: injected clock, no wall-clock values (reruns write identical JSON).
    #[arg(long)]
    deterministic: bool,
    /// Without --plan: call destructive and unknown tools even when the jail got no
    /// network isolation (inside a network-isolated jail every tool is called anyway).
    #[arg(long)]
    include_destructive: bool,
    /// Audit a server already running behind this Streamable HTTP endpoint
    /// instead of launching COMMAND. It is not jailed: its stores are real.
    #[arg(long, value_name = "URL", conflicts_with_all = ["command", "env", "keep_jail", "no_netns"])]
    url: Option<String>,
    /// Allow a --url whose host is not loopback (it must use https).
    #[arg(long, requires = "url")]
    allow_remote_http: bool,
    /// The server command and its arguments, after `--`.
    #[arg(last = true, required_unless_present = "url", value_name = "COMMAND")]
    command: Vec<String>,
}

#[derive(Args)]
struct GuidanceArgs {
    /// A label for the server in the report (letters, digits, '_', '-', '.').
    #[arg(long, value_name = "NAME")]
    server: String,
    /// A client capability profile to discover under (repeatable; default: all five).
    #[arg(long = "profile", value_enum, value_name = "PROFILE")]
    profiles: Vec<ProfileArg>,
    /// A tool every selected profile must list (repeatable); its absence is a defect (exit 1).
    #[arg(long = "require-tool", value_name = "TOOL")]
    require_tools: Vec<String>,
    /// Wait after `notifications/initialized` before reading the catalog, in milliseconds.
    #[arg(long, default_value_t = guidance::DEFAULT_SETTLE_MS,
          value_parser = clap::value_parser!(u64).range(0..=guidance::MAX_SETTLE_MS))]
    settle_ms: u64,
    /// Timeout of every request, in milliseconds.
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..=600_000))]
    timeout_ms: u64,
    /// What to print on stdout.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// An environment variable for a launched server (repeatable).
    #[arg(long = "env", value_name = "K=V")]
    env: Vec<String>,
    /// Do not try to put a launched server in a network namespace.
    #[arg(long)]
    no_netns: bool,
    /// Discover a server already running behind this Streamable HTTP endpoint.
    #[arg(long, value_name = "URL", conflicts_with_all = ["command", "env", "no_netns"])]
    url: Option<String>,
    /// Allow a --url whose host is not loopback (it must use https).
    #[arg(long, requires = "url")]
    allow_remote_http: bool,
    /// The server command and its arguments, after `--`.
    #[arg(last = true, required_unless_present = "url", value_name = "COMMAND")]
    command: Vec<String>,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    Text,
    Json,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ProbeChoice {
    Null,
    Testbed,
}

#[derive(Clone, Copy, ValueEnum)]
enum SchemaDoc {
    /// mcp-witness.audit/v1
    Audit,
    /// mcp-witness.e1/v1
    E1,
    /// mcp-witness.e2/v1
    E2,
    /// mcp-witness.e3/v1
    E3,
    /// mcp-witness.manifest/v1 (a pin file)
    Manifest,
    /// mcp-witness.manifest-diff/v1 (`manifest diff --format json`)
    ManifestDiff,
    /// mcp-witness.guidance-report/v1
    Guidance,
}

#[derive(Subcommand)]
enum TestbedCommand {
    /// Serve the testbed over stdio (what an audit launches).
    Serve {
        /// Which variant: see `mcp-witness testbed variants`.
        #[arg(long, default_value = "honest")]
        variant: String,
        /// The SQLite store (created with its schema if missing).
        #[arg(long, value_name = "PATH")]
        store: PathBuf,
        /// The injected clock, in Unix seconds (the server never reads the wall clock).
        #[arg(long, default_value_t = witness_testbed::DEFAULT_NOW)]
        now: i64,
    },
    /// List the variants and the lie each one plants.
    Variants,
    /// Create a store with the fixtures the experiments start from.
    Seed {
        #[arg(long, value_name = "PATH")]
        store: PathBuf,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(error) => {
            let code = match error.downcast_ref::<Invalid>() {
                Some(_) => 2,
                None => 3,
            };
            eprintln!("mcp-witness: {error:#}");
            ExitCode::from(code)
        }
    }
}

/// An invalid invocation: reported before anything is launched, exit 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct Invalid(String);

fn invalid(message: impl Into<String>) -> anyhow::Error {
    Invalid(message.into()).into()
}

fn run(cli: Cli) -> Result<u8> {
    match cli.command {
        Command::Audit(args) => run_audit(args),
        Command::Plan(args) => run_plan(args),
        Command::Guidance(args) => run_guidance(args),
        Command::Testbed(cmd) => run_testbed(cmd),
        Command::Lab(args) => run_lab(args),
        Command::Manifest(cmd) => cli::manifest::run(cmd).map_err(|e| {
            if e.is_invalid() {
                invalid(e.to_string())
            } else {
                e.into()
            }
        }),
        Command::Report(args) => run_report(args),
        Command::Schema { document } => {
            let schema = match document {
                SchemaDoc::Audit => schemars::schema_for!(AuditReport),
                SchemaDoc::E1 => schemars::schema_for!(witness_model::experiments::E1Document),
                SchemaDoc::E2 => schemars::schema_for!(witness_model::experiments::E2Document),
                SchemaDoc::E3 => schemars::schema_for!(witness_model::experiments::E3Document),
                SchemaDoc::Manifest => schemars::schema_for!(witness_model::manifest::Pin),
                SchemaDoc::ManifestDiff => {
                    schemars::schema_for!(witness_model::manifest::diff::ManifestDiff)
                }
                SchemaDoc::Guidance => schemars::schema_for!(GuidanceReport),
            };
            println!("{}", serde_json::to_string_pretty(&schema)?);
            Ok(0)
        }
    }
}

fn parse_url(url: &str, allow_remote: bool) -> Result<Endpoint> {
    Endpoint::parse(url, allow_remote).map_err(|e| invalid(e.to_string()))
}

fn run_guidance(args: GuidanceArgs) -> Result<u8> {
    let target = match &args.url {
        Some(url) => guidance::Target::Http(parse_url(url, args.allow_remote_http)?),
        None => guidance::Target::Command(JailSpec {
            command: args.command.clone(),
            stores: Vec::new(),
            env: parse_env(&args.env)?,
            keep: false,
            isolate_network: !args.no_netns,
        }),
    };
    let options = GuidanceOptions {
        server: args.server.clone(),
        target,
        profiles: args.profiles.iter().map(|&p| p.into()).collect(),
        required: args.require_tools.clone(),
        settle: Duration::from_millis(args.settle_ms),
        timeout: Duration::from_millis(args.timeout_ms),
    };
    options.validate().map_err(|e| invalid(e.to_string()))?;
    let report = guidance::run(&options).map_err(|e| invalid(e.to_string()))?;
    match args.format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&report)?),
        Format::Text => print!("{}", witness_pages::guidance::text(&report)),
    }
    Ok(report.exit_code)
}

fn parse_stores(texts: &[String]) -> Result<Vec<StoreSpec>> {
    let mut stores = Vec::new();
    for text in texts {
        let spec = StoreSpec::parse(text).map_err(invalid)?;
        if stores.iter().any(|s: &StoreSpec| s.name == spec.name) {
            return Err(invalid(format!(
                "--store {}: the name is used twice",
                spec.name
            )));
        }
        stores.push(spec);
    }
    Ok(stores)
}

fn parse_env(pairs: &[String]) -> Result<Vec<(String, String)>> {
    witness_engine::jail::parse_env_pairs("--env", pairs).map_err(invalid)
}

fn run_plan(args: PlanArgs) -> Result<u8> {
    let jail = JailSpec {
        command: args.command.clone(),
        stores: parse_stores(&args.stores)?,
        env: parse_env(&args.env)?,
        keep: false,
        isolate_network: !args.no_netns,
    };
    let preview = match audit::preview(
        jail,
        args.era.into(),
        Duration::from_millis(args.timeout_ms),
        args.include_destructive,
    ) {
        Ok(preview) => preview,
        Err(reason) => {
            eprintln!("mcp-witness: no plan: {reason}");
            return Ok(3);
        }
    };
    match args.format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&preview)?),
        Format::Text => print!("{}", witness_pages::plan::text(&preview)),
    }
    Ok(0)
}

fn run_audit(args: AuditArgs) -> Result<u8> {
    let endpoint = match &args.url {
        Some(url) => Some(parse_url(url, args.allow_remote_http)?),
        None => None,
    };
    let stores = parse_stores(&args.stores)?;
    let env = parse_env(&args.env)?;
    let plan = match &args.plan {
        Some(path) => Some(Plan::load(path).map_err(|e| invalid(e.to_string()))?),
        None => None,
    };
    if let Some(out) = &args.out {
        if out.exists() && !out.is_dir() {
            return Err(invalid(format!("--out {}: not a directory", out.display())));
        }
        // Before the server is launched: a bad --out must not cost a run
        // whose report then has nowhere to go.
        std::fs::create_dir_all(out)
            .map_err(|e| invalid(format!("--out {}: cannot create it: {e}", out.display())))?;
        tempfile::tempfile_in(out)
            .map_err(|e| invalid(format!("--out {}: cannot write there: {e}", out.display())))?;
    }
    let probe: Box<dyn witness_probes::Probe> = match args.probe {
        ProbeChoice::Null => Box::new(witness_probes::NullProbe),
        ProbeChoice::Testbed => Box::new(witness_testbed::probe::CredentialProbe {
            now: args.probe_now,
            rule: witness_testbed::auth::AuthRule::Plain,
        }),
    };
    let options = AuditOptions {
        jail: JailSpec {
            command: args.command.clone(),
            stores,
            env,
            keep: args.keep_jail,
            isolate_network: !args.no_netns,
        },
        era: args.era.into(),
        plan,
        timeout: Duration::from_millis(args.timeout_ms),
        settle: Duration::from_millis(args.settle_ms),
        deterministic: args.deterministic,
        probe,
        label: None,
        pinned_version: None,
        events: Default::default(),
        include_destructive: args.include_destructive,
    };
    let run = match endpoint {
        Some(endpoint) => audit::run_remote(options, endpoint),
        None => audit::run(options),
    }
    .context("the audit could not start")?;
    let report = run.report;
    let json = serde_json::to_string_pretty(&report)? + "\n";
    if let Some(out) = &args.out {
        std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
        let path = out.join("audit.json");
        std::fs::write(&path, &json).with_context(|| format!("cannot write {}", path.display()))?;
        let links = witness_pages::AuditLinks {
            raw_json: Some("audit.json".into()),
            index: None,
        };
        // The page is a view of audit.json; failing to draw it must not hide
        // the verdict, so it warns rather than changing the exit code.
        match witness_pages::render_audit(&report, &links) {
            Ok(html) => {
                let path = out.join("report.html");
                std::fs::write(&path, html)
                    .with_context(|| format!("cannot write {}", path.display()))?;
            }
            Err(e) => eprintln!("mcp-witness: report.html not written: {e:#}"),
        }
    }
    match args.format {
        Format::Json => print!("{json}"),
        Format::Text => print!("{}", witness_pages::text::text(&report)),
    }
    if let Some(kept) = run.kept_jail {
        eprintln!("mcp-witness: jail kept at {}", kept.display());
    }
    Ok(u8::try_from(report.exit_code).unwrap_or(3))
}

fn run_lab(args: LabArgs) -> Result<u8> {
    use witness_lab as lab;
    if args.out.exists() && !args.out.is_dir() {
        return Err(invalid(format!(
            "--out {}: not a directory",
            args.out.display()
        )));
    }
    let cases_dir = args
        .cases_dir
        .as_deref()
        .map_or_else(lab::cases::cases_dir, lab::cases::absolute_dir);
    if args.experiment == Experiment::Cases
        && let Err(e) = lab::cases::check_installed(&cases_dir)
    {
        return Err(invalid(e.to_string()));
    }
    check_pages_dir(&args.pages)?;
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))?;
    let progress = lab::Progress::new();
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
    let mut code = 0;
    let cases_wanted = args.experiment == Experiment::Cases
        || (args.experiment == Experiment::All && lab::cases::check_installed(&cases_dir).is_ok());
    if cases_wanted {
        match lab::cases::run_cases_in(&cases_dir, &args.out, std::io::stderr().is_terminal()) {
            Ok(outcome) => code = outcome.exit_code,
            Err(e @ lab::cases::CasesError::NotInstalled { .. }) => {
                return Err(invalid(e.to_string()));
            }
            Err(e) => return Err(e.into()),
        }
    } else if args.experiment == Experiment::All {
        eprintln!(
            "mcp-witness: case studies skipped: the pinned servers are not installed in {} \
             (install them with: {})",
            cases_dir.display(),
            lab::cases::install_command(&cases_dir)
        );
    }
    let pages = args.pages.clone().unwrap_or_else(|| args.out.clone());
    render_pages(&args.out, &pages)?;
    Ok(code)
}

/// Checks that a --pages directory can be one, before anything runs.
fn check_pages_dir(pages: &Option<PathBuf>) -> Result<()> {
    if let Some(pages) = pages
        && pages.exists()
        && !pages.is_dir()
    {
        return Err(invalid(format!(
            "--pages {}: not a directory",
            pages.display()
        )));
    }
    Ok(())
}

fn render_pages(data: &std::path::Path, pages: &std::path::Path) -> Result<()> {
    let rendered = witness_pages::render_all(data, pages)?;
    for warning in &rendered.warnings {
        eprintln!("mcp-witness: {warning}");
    }
    eprintln!(
        "mcp-witness: results in {} (summary.md, *.json, audits/); open {} in a browser",
        data.display(),
        pages.join("index.html").display()
    );
    Ok(())
}

fn run_report(args: ReportArgs) -> Result<u8> {
    if !args.dir.is_dir() {
        return Err(invalid(format!(
            "{}: not a results directory",
            args.dir.display()
        )));
    }
    check_pages_dir(&args.pages)?;
    let pages = args.pages.clone().unwrap_or_else(|| args.dir.clone());
    render_pages(&args.dir, &pages)?;
    Ok(0)
}

fn run_testbed(cmd: TestbedCommand) -> Result<u8> {
    match cmd {
        TestbedCommand::Serve {
            variant,
            store,
            now,
        } => {
            let variant = witness_testbed::Variant::from_name(&variant).ok_or_else(|| {
                invalid(format!(
                    "unknown variant {variant:?}; `mcp-witness testbed variants` lists them"
                ))
            })?;
            witness_testbed::serve_stdio(witness_testbed::ServeOptions {
                variant,
                store,
                now,
            })
            .context("the testbed server stopped")?;
            Ok(0)
        }
        TestbedCommand::Variants => {
            for variant in witness_testbed::Variant::ALL {
                println!("{:18} {}", variant.name(), variant.summary());
            }
            Ok(0)
        }
        TestbedCommand::Seed { store } => {
            witness_testbed::store::seed_fixtures(&store)
                .with_context(|| format!("cannot seed {}", store.display()))?;
            Ok(0)
        }
    }
}

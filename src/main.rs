//! The `mcp-witness` command line: parse, dispatch to the command's module
//! under `cli/`, print an error, exit. Exit codes, for every command, are
//! `witness_model::exit::ExitStatus`: 0 passed, 1 completed and the target
//! failed, 2 invalid invocation (nothing was launched), 3 incomplete (could
//! not conclude).

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[macro_use]
mod output;
mod cli;
mod exit;
mod progress;
mod signals;

const AFTER_HELP: &str = "\
Exit codes: 0 passed · 1 completed and the target failed · 2 invalid invocation
(nothing was launched) · 3 incomplete: could not conclude (never evidence
against the target).";

#[derive(Parser)]
#[command(
    name = "mcp-witness",
    version,
    about = "Effect-aware conformance lab for MCP servers",
    long_about = "The two most common commands:\n  \
mcp-witness audit 'npx -y @scope/server@1.2.3'      audit a published package before you install it\n  \
mcp-witness audit --store db=sqlite:app.db -- COMMAND   audit a server you run, on a copy of its store\n\n\
mcp-witness runs an MCP server against a throwaway copy of its store, observes that \
store out of band around every tool call, and holds the tools' declared annotations \
(readOnlyHint, destructiveHint, idempotentHint) to what actually happened. A package \
(npm:NAME@VERSION, pypi:NAME==VERSION, or the npx/uvx line its README gives, quoted) is \
installed into a pinned cache and run in the jail.\n\n\
Try it on the built-in testbed:\n  \
mcp-witness audit --store db=sqlite:/tmp/new.db -- mcp-witness testbed serve --variant honest --store {db}",
    after_help = AFTER_HELP
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Progress of long catalogs and audits on stderr: a bar on a terminal,
    /// plain lines otherwise (only after 2 s, so short runs stay quiet).
    #[arg(long, global = true, value_enum, default_value_t = progress::ProgressMode::Auto)]
    progress: progress::ProgressMode,
    #[command(flatten)]
    jail: cli::jailargs::JailArgs,
}

#[derive(Subcommand)]
enum Command {
    /// Audit one server: observe its store around every tool call and check its declarations.
    Audit(cli::audit::AuditArgs),
    /// Print the plan an audit without --plan would follow (only tools/list is sent).
    Plan(cli::plan::PlanArgs),
    /// Reach a server as a client would (authenticate, handshake, list, optionally
    /// call its tools) and say how each step went; nothing is observed or judged.
    Connect(cli::connect::ConnectCommandArgs),
    /// Instruction coherence: compare a server's instructions with its tool
    /// catalogs under client capability profiles (discovery only, no tool is called).
    Guidance(cli::guidance::GuidanceArgs),
    /// The built-in planted-lie notes server the experiments audit.
    #[command(subcommand)]
    Testbed(cli::testbed::TestbedCommand),
    /// Run the experiments (E1–E3 on the built-in testbed; the published-server case studies) and render their pages.
    Lab(cli::lab::LabArgs),
    /// Pin a server's tool manifest, fingerprint it, and classify drift between two.
    #[command(subcommand)]
    Manifest(cli::manifest::ManifestCommand),
    /// Re-render the pages (summary.md, index.html, effect reports) from the JSON in DIR; runs nothing.
    Report(cli::report::ReportArgs),
    /// Print the JSON Schema of a versioned document.
    Schema(cli::schema::SchemaArgs),
    /// From an audit report, the annotations each tool's observed behaviour
    /// supports, as text or as a JSON patch for its tools/list (runs nothing).
    Suggest(cli::suggest::SuggestArgs),
    /// Audit many servers from a SWEEP.toml: installed at pinned versions, in
    /// parallel or as shards, resumable; one dataset and a prevalence page.
    Sweep(cli::sweep::SweepArgs),
    /// Agent runs: golden cases driven by a model (or a script) against a jailed server, and their compares.
    #[command(subcommand)]
    Agent(cli::agent::AgentCommand),
    /// The witness proxy: stand between a real host and its server, forward
    /// everything unchanged, observe the stores around every tool call.
    Proxy(cli::proxy::ProxyArgs),
    /// Recorded proxy traces: judge one, or import a host's conversation.
    #[command(subcommand)]
    Trace(cli::trace::TraceCommand),
    /// Show which isolation layers (bubblewrap namespaces, Landlock) work on this machine.
    Doctor(cli::doctor::DoctorArgs),
    /// Apply the jail's Landlock rules, then become PROGRAM (the jail runs this; not for people).
    #[command(hide = true, name = "sandbox-exec")]
    SandboxExec(cli::sandbox::SandboxExecArgs),
    /// Make the network observer's sink inside a sandbox (the jail runs this; not for people).
    #[command(hide = true, name = "net-sink-setup")]
    NetSinkSetup(cli::netsink::NetSinkSetupArgs),
}

impl Command {
    /// Whether the command launches servers: those get the signal handling
    /// that ends them cleanly. The others (a testbed server, the sandbox
    /// helper about to become a server) keep the default dispositions.
    fn launches_servers(&self) -> bool {
        matches!(
            self,
            Command::Audit(_)
                | Command::Plan(_)
                | Command::Guidance(_)
                | Command::Connect(_)
                | Command::Lab(_)
                | Command::Manifest(_)
                | Command::Doctor(_)
                | Command::Agent(_)
                | Command::Proxy(_)
        ) || matches!(self, Command::Sweep(args) if args.is_worker())
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let command = cli.command;
    // A path to show servers that is not there is a mistake of the
    // invocation, found before anything is launched.
    let visible = match cli.jail.ro_bind() {
        Ok(paths) => paths,
        Err(why) => {
            errln!("mcp-witness: {why}");
            return ExitCode::from(witness_model::exit::ExitStatus::Invalid.code());
        }
    };
    // A host stops its server with a signal: for the proxy that is the
    // ordinary end, not an interrupted run.
    let signal_is_an_end = matches!(command, Command::Proxy(_));
    let progress = progress::Progress::new(cli.progress);
    if command.launches_servers() {
        // Before any thread exists: the jails' tmpfs mounts are this
        // process's own (where it may mount at all).
        witness_jail::disk::private_mounts();
        if let Err(e) = signals::install() {
            errln!("mcp-witness: cannot handle signals: {e}");
            return ExitCode::from(witness_model::exit::ExitStatus::Incomplete.code());
        }
        // The jail's Landlock helper is this very binary.
        if let Ok(exe) = std::env::current_exe() {
            witness_jail::sandbox::set_helper(exe);
        }
        witness_jail::bounds::set_bounds(cli.jail.bounds());
        witness_jail::sandbox::set_visible(visible);
    }
    let mut status = match run(command, &progress, &cli.jail) {
        Ok(status) => status,
        Err(error) => {
            errln!("mcp-witness: {error:#}");
            exit::status_of(&error)
        }
    };
    if witness_jail::interrupt::signal().is_some() && !signal_is_an_end {
        // Told to stop: whatever was concluded is not a verdict to gate on.
        status = witness_model::exit::ExitStatus::Incomplete;
    }
    ExitCode::from(status.code())
}

fn run(
    command: Command,
    progress: &progress::Progress,
    jail: &cli::jailargs::JailArgs,
) -> anyhow::Result<witness_model::exit::ExitStatus> {
    match command {
        Command::Audit(args) => cli::audit::run(args, progress),
        Command::Plan(args) => cli::plan::run(args),
        Command::Guidance(args) => cli::guidance::run(args),
        Command::Connect(args) => cli::connect::run(args),
        Command::Testbed(command) => cli::testbed::run(command),
        Command::Lab(args) => cli::lab::run(args, progress),
        Command::Manifest(command) => cli::manifest::run(command),
        Command::Report(args) => cli::report::run(args),
        Command::Schema(args) => cli::schema::run(args),
        Command::Suggest(args) => cli::suggest::run(args),
        Command::Sweep(args) => cli::sweep::run(args, progress, jail),
        Command::Agent(command) => cli::agent::run(command, progress),
        Command::Proxy(args) => cli::proxy::run(args, progress),
        Command::Trace(command) => cli::trace::run(command),
        Command::Doctor(args) => cli::doctor::run(args),
        Command::SandboxExec(args) => cli::sandbox::run(args),
        Command::NetSinkSetup(args) => cli::netsink::run(args),
    }
}

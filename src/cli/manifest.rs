//! `mcp-witness manifest …`: the command-line layer over pins and diffs.
//!
//! Exit codes follow the rest of the tool: 0 unchanged (or every change
//! allowed), 1 an undeclared change, 2 invalid invocation (nothing
//! launched), 3 a catalog could not be fetched complete.

use std::path::{Path, PathBuf};

use anyhow::Result;
use clap::{Args, Subcommand, ValueEnum};

use witness_manifest::allow::AllowList;
use witness_manifest::diff::build;
use witness_manifest::measure;
use witness_manifest::source::{FetchOptions, Source};
use witness_manifest::{ManifestError, load_pin, write_pin};
use witness_model::exit::ExitStatus;
use witness_model::manifest::diff::{ManifestDiff, Side};
use witness_model::manifest::{DEFAULT_ENVIRONMENT, Pin, validate_environment};
use witness_pages::manifest::{self as render, Artifact};

use super::{CatalogSettleArgs, ConnectArgs, EraArgs, TargetArgs};
use crate::exit::invalid;

const PIN_HELP: &str = "\
The server is started the way `audit` starts it — in a jail with no stores, a
scrubbed environment and no network where the kernel allows — and asked only
for tools/list (every page). No tool is called. A catalog that is incomplete
(a repeated cursor, too many pages, a malformed or duplicate tool) is never
pinned: exit 3 and no file is written.

Examples:
  mcp-witness manifest pin --out manifests/default.json -- mcp-witness testbed serve --store {jail}/notes.db
  mcp-witness manifest pin --environment staging --server-env API_TOKEN=$TOKEN --out manifests/staging.json -- node server.js";

const DIFF_HELP: &str = "\
OLD and NEW are each a pin file or `live:COMMAND`. The command after `live:`
is split on whitespace; '…' and \"…\" quote (\\\" and \\\\ inside double
quotes); nothing goes through a shell.

Pins of different environments are refused (exit 2) unless --cross-environment:
a server that gates tools per environment differs legitimately. A live side
takes --environment, else the other side's environment.

Every change that can change what an agent does names what measures it
(\"measure:\"), and the end of the report gives the commands: the agent suite
run with the old and with the new definitions, then `agent compare` (and an
audit for changed declarations).

Examples:
  mcp-witness manifest diff manifests/default.json 'live:mcp-witness testbed serve --store {jail}/n.db'
  mcp-witness manifest diff --format sarif --allow manifests/allow.toml old.json new.json

Exit codes: 0 no change (or every change allowed), 1 undeclared change,
2 invalid invocation, 3 a live catalog could not be fetched complete.";

/// The `manifest` subcommands.
#[derive(Subcommand)]
pub enum ManifestCommand {
    /// Fetch a live server's full tool catalog and write it as a pin.
    #[command(after_help = PIN_HELP)]
    Pin(PinArgs),
    /// Verify a pin file and print its fingerprint.
    Fingerprint {
        /// The pin file.
        file: PathBuf,
        /// Print all 64 hex digits instead of `blake3:` and the first 16.
        #[arg(long)]
        full: bool,
    },
    /// Compare two manifests and classify every change.
    #[command(after_help = DIFF_HELP)]
    Diff(DiffArgs),
}

/// How live servers are started and spoken to (shared by `pin` and `diff`).
/// `--server-env`, not `--env`: `--env` names the environment of a pin.
#[derive(Args)]
pub struct FetchArgs {
    /// A variable for the server, e.g. a credential that gates tools (repeatable; never written).
    #[arg(long = "server-env", value_name = "K=V")]
    server_env: Vec<String>,
    #[command(flatten)]
    era: EraArgs,
    #[command(flatten)]
    connect: ConnectArgs,
    #[command(flatten)]
    settle: CatalogSettleArgs,
}

#[derive(Args)]
pub struct PinArgs {
    /// Write the pin here (conventionally manifests/<environment>.json); stdout otherwise.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// The environment this pin describes.
    #[arg(long = "environment", visible_alias = "env", value_name = "NAME", default_value = DEFAULT_ENVIRONMENT)]
    environment: String,
    #[command(flatten)]
    fetch: FetchArgs,
    #[command(flatten)]
    target: TargetArgs,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DiffFormat {
    Text,
    Json,
    Sarif,
}

#[derive(Args)]
pub struct DiffArgs {
    /// The baseline: a pin file, live:COMMAND or url:URL.
    old: String,
    /// What to compare with it: a pin file, live:COMMAND or url:URL.
    new: String,
    /// What to print on stdout.
    #[arg(long, value_enum, default_value_t = DiffFormat::Text)]
    format: DiffFormat,
    /// A TOML list of reviewed changes ([[allow]] tool, class, reason) that do not fail the build.
    #[arg(long, value_name = "FILE")]
    allow: Option<PathBuf>,
    /// The environment of a live side (default: the other side's).
    #[arg(long = "environment", visible_alias = "env", value_name = "NAME")]
    environment: Option<String>,
    /// Compare pins of different environments anyway.
    #[arg(long)]
    cross_environment: bool,
    #[command(flatten)]
    fetch: FetchArgs,
}

impl FetchArgs {
    fn options(&self) -> Result<FetchOptions, ManifestError> {
        let env = witness_jail::parse_env_pairs("--server-env", &self.server_env)
            .map_err(ManifestError::Invalid)?;
        Ok(FetchOptions {
            era: self.era.choice(),
            timeout: self.connect.timeout(),
            env,
            isolate_network: !self.connect.no_netns,
            settle: self.settle.settle(),
        })
    }
}

/// Runs one `manifest` subcommand.
pub fn run(command: ManifestCommand) -> Result<ExitStatus> {
    match command {
        ManifestCommand::Pin(args) => pin(args),
        ManifestCommand::Fingerprint { file, full } => {
            let pin = load_pin(&file)?;
            if full {
                outln!("{}", pin.fingerprint.blake3);
            } else {
                outln!("{}", pin.fingerprint.short);
            }
            Ok(ExitStatus::Passed)
        }
        ManifestCommand::Diff(args) => diff(args),
    }
}

/// Checks, before anything is launched, that a pin can be written at `out`:
/// its directory exists (or is created) and takes a file.
fn writable_parent(out: &Path) -> Result<(), ManifestError> {
    let dir = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let refuse = |what: &str, e: std::io::Error| {
        ManifestError::Invalid(format!(
            "--out {}: {what} {}: {e}",
            out.display(),
            dir.display()
        ))
    };
    std::fs::create_dir_all(dir).map_err(|e| refuse("cannot create", e))?;
    tempfile::tempfile_in(dir).map_err(|e| refuse("cannot write in", e))?;
    Ok(())
}

/// Where the pin comes from: the launched COMMAND or the --url server.
fn pin_source(args: &PinArgs) -> Result<Source> {
    let Some(endpoint) = args.target.endpoint(&args.fetch.connect)? else {
        return Ok(Source::Live(args.target.launch()?.command));
    };
    if !args.fetch.server_env.is_empty() {
        // As --env for audit: a running server's variables are not ours to set.
        return Err(ManifestError::Invalid(
            "--server-env applies only to a launched server; a --url server is not launched".into(),
        )
        .into());
    }
    let url = args.target.url.clone().unwrap_or_default();
    Ok(Source::Remote(url, endpoint))
}

fn pin(args: PinArgs) -> Result<ExitStatus> {
    validate_environment(&args.environment).map_err(ManifestError::Invalid)?;
    let options = args.fetch.options()?;
    let source = pin_source(&args)?;
    if let Some(out) = &args.out
        && out.is_dir()
    {
        return Err(ManifestError::Invalid(format!(
            "--out {}: is a directory; give a file such as {}/{}.json",
            out.display(),
            out.display(),
            args.environment
        ))
        .into());
    }
    if let Some(out) = &args.out {
        writable_parent(out)?;
    }
    let pin = source.fetch(&options, &args.environment)?;
    match &args.out {
        Some(path) => {
            write_pin(&pin, path)?;
            outln!(
                "pinned {} tool(s) of environment {} to {}: {}",
                pin.tools.len(),
                pin.environment,
                path.display(),
                pin.fingerprint.short
            );
        }
        None => {
            out!("{}", pin.to_file_text());
            errln!(
                "mcp-witness: {} tool(s), {}",
                pin.tools.len(),
                pin.fingerprint.short
            );
        }
    }
    Ok(ExitStatus::Passed)
}

fn diff(args: DiffArgs) -> Result<ExitStatus> {
    let allow_remote = args.fetch.connect.allow_remote_http;
    let old = authorized(
        Source::parse_with(&args.old, allow_remote)?,
        &args.fetch.connect,
    )?;
    let new = authorized(
        Source::parse_with(&args.new, allow_remote)?,
        &args.fetch.connect,
    )?;
    let remote = |s: &Source| matches!(s, Source::Remote(..));
    if args.fetch.connect.auth.any() && !remote(&old) && !remote(&new) {
        return Err(invalid(
            "--bearer-env, --header-env and --oauth-* apply only to a url: side",
        ));
    }
    if let Some(env) = &args.environment {
        validate_environment(env).map_err(ManifestError::Invalid)?;
    }
    let options = args.fetch.options()?;
    let allow = match &args.allow {
        Some(path) => AllowList::load(path)?,
        None => AllowList::default(),
    };
    let (old_pin, new_pin) = both_pins(&args, [&old, &new], &options)?;
    let mut doc = build(
        Side::of(old.describe(), &old_pin),
        Side::of(new.describe(), &new_pin),
        &old_pin,
        &new_pin,
        &allow,
        args.cross_environment && old_pin.environment != new_pin.environment,
    );
    measure::attach(&mut doc, &old, &new);
    print_diff(args.format, &doc, [&old, &new]);
    for entry in &doc.unused_allow {
        errln!(
            "mcp-witness: allow entry {} {} matched no change",
            witness_text::clip(&entry.tool, 80),
            entry.class.id()
        );
    }
    crate::exit::recorded(doc.exit_code)
}

/// Both sides as pins. Files first: a bad pin is an invalid invocation,
/// found before any server is launched. A live side is pinned under
/// --environment, else under the pin side's environment; both are known
/// before any server is launched, so a refused comparison launches nothing.
fn both_pins(
    args: &DiffArgs,
    [old, new]: [&Source; 2],
    options: &FetchOptions,
) -> Result<(Pin, Pin), ManifestError> {
    let file_pin = |side: &Source| match side {
        Source::File(_) => side.fetch(options, DEFAULT_ENVIRONMENT).map(Some),
        Source::Live(_) | Source::Remote(..) => Ok(None),
    };
    let (old_pin, new_pin) = (file_pin(old)?, file_pin(new)?);
    let pinned_env = |pin: &Option<Pin>| pin.as_ref().map(|p| p.environment.clone());
    let live_env = args
        .environment
        .clone()
        .or_else(|| pinned_env(&old_pin))
        .or_else(|| pinned_env(&new_pin))
        .unwrap_or_else(|| DEFAULT_ENVIRONMENT.to_owned());
    let old_env = pinned_env(&old_pin).unwrap_or_else(|| live_env.clone());
    let new_env = pinned_env(&new_pin).unwrap_or_else(|| live_env.clone());
    if old_env != new_env && !args.cross_environment {
        return Err(ManifestError::Invalid(format!(
            "{} is of environment {old_env} and {} of environment {new_env}: a server that gates \
             tools per environment differs legitimately, so compare manifests of one environment \
             (or pass --cross-environment to compare them anyway)",
            witness_text::clip(&old.describe(), 120),
            witness_text::clip(&new.describe(), 120),
        )));
    }
    let old_pin = match old_pin {
        Some(pin) => pin,
        None => old.fetch(options, &live_env)?,
    };
    let new_pin = match new_pin {
        Some(pin) => pin,
        None => new.fetch(options, &live_env)?,
    };
    Ok((old_pin, new_pin))
}

fn print_diff(format: DiffFormat, doc: &ManifestDiff, [old, new]: [&Source; 2]) {
    match format {
        DiffFormat::Text => out!("{}", render::text(doc)),
        DiffFormat::Json => outln!("{}", to_pretty(doc)),
        DiffFormat::Sarif => {
            // The new pin's lines first: results point at it when it is a file.
            let artifacts: Vec<Artifact> = [new, old]
                .iter()
                .filter_map(|s| s.file())
                .filter_map(|path| {
                    std::fs::read_to_string(path).ok().map(|text| Artifact {
                        path: path.display().to_string(),
                        text,
                    })
                })
                .collect();
            outln!("{}", to_pretty(&render::sarif(doc, &artifacts)));
        }
    }
}

fn to_pretty<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string_pretty(value)
        .unwrap_or_else(|e| format!("{{\"error\": {:?}}}", e.to_string()))
}

/// A `url:` side carrying the credentials asked for; other sides unchanged.
fn authorized(source: Source, connect: &ConnectArgs) -> Result<Source> {
    Ok(match source {
        Source::Remote(url, endpoint) => {
            Source::Remote(url, connect.auth.apply(endpoint, connect.timeout())?)
        }
        other => other,
    })
}

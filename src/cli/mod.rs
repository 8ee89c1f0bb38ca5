//! The command line: one module per command, and the argument groups they
//! share. A flag that more than one command takes is declared here once and
//! flattened into each; whatever it means (a jail, an endpoint, a store) is
//! parsed here once too, before anything is launched.

pub mod agent;
pub mod audit;
pub mod auth;
pub mod compare;
pub mod connect;
pub mod doctor;
pub mod guidance;
pub mod jailargs;
pub mod lab;
pub mod manifest;
pub mod netsink;
pub mod package;
pub mod plan;
pub mod proxy;
pub mod report;
pub mod sandbox;
pub mod schema;
pub mod suggest;
pub mod sweep;
pub mod testbed;
pub mod trace;
pub mod weaker;

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Result;
use clap::{Args, ValueEnum};
use witness_engine::audit::{EraChoice, MAX_TIMEOUT_MS, TIMEOUT_MS};
use witness_jail::observe::Settle;
use witness_jail::{JailSpec, StoreSpec, Target, parse_env_pairs};
use witness_wire::http::Endpoint;

use crate::exit::invalid;

/// Which one server a command talks to: a command it launches in a jail, or
/// one already running behind `--url`.
#[derive(Args)]
pub struct TargetArgs {
    /// Reach a server already running behind this Streamable HTTP endpoint
    /// instead of launching COMMAND. It is not jailed: its stores are real.
    #[arg(long, value_name = "URL", conflicts_with_all = ["command", "package"])]
    pub url: Option<String>,
    /// A published package to install into the pinned cache and run in the
    /// jail: npm:NAME@VERSION, pypi:NAME==VERSION, or an npx/uvx line as a
    /// README gives it ('npx -y NAME@VERSION'). Arguments after -- go to
    /// its program. A COMMAND whose program is npx or uvx is read the same way.
    #[arg(value_name = "PACKAGE")]
    pub package: Option<String>,
    /// Where packages are installed (default: $MCP_WITNESS_INSTALLS, else
    /// ~/.cache/mcp-witness/installs); the sweep's layout, so a sweep with
    /// `--installs` on the same directory shares them.
    #[arg(long, value_name = "DIR", conflicts_with = "url")]
    pub installs: Option<PathBuf>,
    /// The server command and its arguments, after `--`. {jail} is the jail
    /// directory and {NAME} the jailed path of store NAME.
    // Required unless --url or PACKAGE (or `audit --server-json`) says
    // what to run: checked by `launch`, since only `audit` has the last.
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

/// What a launched target runs: the command, and the package it was
/// installed from, when it was.
pub struct Launch {
    pub command: Vec<String>,
    pub installed: Option<witness_sweep::package::Installed>,
}

/// How every server is reached, launched or remote.
#[derive(Args)]
pub struct ConnectArgs {
    /// Timeout of every request, in milliseconds.
    #[arg(long, default_value_t = TIMEOUT_MS,
          value_parser = clap::value_parser!(u64).range(1..=MAX_TIMEOUT_MS))]
    pub timeout_ms: u64,
    /// Do not try to put a launched server in a network namespace.
    #[arg(long)]
    pub no_netns: bool,
    /// Allow a URL whose host is not loopback (it must use https).
    #[arg(long)]
    pub allow_remote_http: bool,
    #[command(flatten)]
    pub auth: auth::AuthArgs,
}

impl ConnectArgs {
    pub fn timeout(&self) -> Duration {
        Duration::from_millis(self.timeout_ms)
    }
}

impl TargetArgs {
    /// The command to launch: COMMAND as given, or the program of the
    /// package PACKAGE (or an npx/uvx COMMAND) names, installed first.
    /// A malformed line or a package with nothing to run is an invalid
    /// invocation; an install that fails is incomplete.
    pub fn launch(&self) -> Result<Launch> {
        let words = match &self.package {
            Some(text) => {
                let mut words = package::words(text)?;
                words.extend(self.command.iter().cloned());
                words
            }
            None => self.command.clone(),
        };
        if words.is_empty() {
            return Err(invalid(
                "say which server: a COMMAND after --, a PACKAGE, or --url URL",
            ));
        }
        let Some(line) = package::parse(&words) else {
            return Ok(Launch {
                command: words,
                installed: None,
            });
        };
        let line = line.map_err(invalid)?;
        let installed = package::install(&line, package::installs_root(self.installs.as_ref()))?;
        let mut command = vec![installed.program.to_string_lossy().into_owned()];
        command.extend(line.args.iter().cloned());
        Ok(Launch {
            command,
            installed: Some(installed),
        })
    }

    /// The `--url` endpoint, checked before anything is contacted (`None`
    /// when a command is launched). Flags that only make sense for the other
    /// kind of target are refused rather than silently ignored.
    pub fn endpoint(&self, connect: &ConnectArgs) -> Result<Option<Endpoint>> {
        let Some(url) = &self.url else {
            if connect.allow_remote_http {
                return Err(invalid("--allow-remote-http applies only to a --url"));
            }
            if connect.auth.any() {
                return Err(invalid(
                    "--bearer-env, --header-env and --oauth-* apply only to a --url",
                ));
            }
            return Ok(None);
        };
        if connect.no_netns {
            return Err(invalid(
                "--no-netns applies only to a launched server; a --url server is not launched",
            ));
        }
        let endpoint = Endpoint::parse(url, connect.allow_remote_http)?;
        Ok(Some(connect.auth.apply(endpoint, connect.timeout())?))
    }
}

/// A server that is launched with variables, or reached by URL (`audit`,
/// `plan`, `guidance`).
#[derive(Args)]
pub struct ServerArgs {
    /// An environment variable for a launched server (repeatable); {NAME} and
    /// {jail} expand as in COMMAND.
    #[arg(long = "env", value_name = "K=V", conflicts_with = "url")]
    env: Vec<String>,
    #[command(flatten)]
    pub connect: ConnectArgs,
    #[command(flatten)]
    pub target: TargetArgs,
}

impl ServerArgs {
    /// The one place a command line's server becomes a [`Target`]: the
    /// launched command in a jail on copies of `stores`, or the `--url`
    /// endpoint with `stores` observed in place.
    pub fn target(&self, stores: Vec<StoreSpec>, keep: bool) -> Result<Target> {
        Ok(self.target_and_package(stores, keep)?.0)
    }

    /// [`ServerArgs::target`], and the package it was installed from.
    pub fn target_and_package(
        &self,
        stores: Vec<StoreSpec>,
        keep: bool,
    ) -> Result<(Target, Option<witness_sweep::package::Installed>)> {
        let endpoint = self.target.endpoint(&self.connect)?;
        let env = self.env()?;
        Ok(match endpoint {
            Some(endpoint) => (Target::remote(endpoint, stores), None),
            None => {
                let launch = self.target.launch()?;
                let target = self.launched(launch.command, stores, env, keep)?;
                (target, launch.installed)
            }
        })
    }

    /// The `--env` pairs, as given.
    pub fn env(&self) -> Result<Vec<(String, String)>> {
        parse_env_pairs("--env", &self.env).map_err(invalid)
    }

    /// `command` launched in a jail on copies of `stores` with `env`: for a
    /// command line made elsewhere (`audit --server-json`). The flags that
    /// only a `--url` takes are refused as for any launched server.
    pub fn launched(
        &self,
        command: Vec<String>,
        stores: Vec<StoreSpec>,
        env: Vec<(String, String)>,
        keep: bool,
    ) -> Result<Target> {
        self.target.endpoint(&self.connect)?;
        Ok(Target::launched(JailSpec {
            command,
            stores,
            env,
            keep,
            isolate_network: !self.connect.no_netns,
        }))
    }
}

/// `--store`: stores to copy into the jail and observe (`audit`, `plan`).
#[derive(Args)]
pub struct StoreArgs {
    /// A store to copy into the jail and observe: NAME=KIND:PATH with KIND
    /// sqlite, jsonl, fs or postgres. A PATH that does not exist starts
    /// empty in the jail; a postgres PATH (a SQL file or pg_dump archive)
    /// must exist and is restored into a throwaway cluster, `{NAME}` being
    /// a connection string to it. With `audit --url` a store is observed in
    /// place, never copied (postgres stores are refused there).
    #[arg(long = "store", value_name = "NAME=KIND:PATH")]
    stores: Vec<String>,
}

impl StoreArgs {
    /// The stores, parsed; a name used twice is refused.
    pub fn specs(&self) -> Result<Vec<StoreSpec>> {
        let mut specs: Vec<StoreSpec> = Vec::new();
        for text in &self.stores {
            let spec = StoreSpec::parse(text).map_err(invalid)?;
            if specs.iter().any(|s| s.name == spec.name) {
                return Err(invalid(format!(
                    "--store {}: the name is used twice",
                    spec.name
                )));
            }
            specs.push(spec);
        }
        Ok(specs)
    }
}

/// `--era`.
#[derive(Args)]
pub struct EraArgs {
    /// Which protocol era to speak.
    #[arg(long, value_enum, default_value_t = EraArg::Auto)]
    era: EraArg,
}

impl EraArgs {
    pub fn choice(&self) -> EraChoice {
        self.era.into()
    }
}

/// `--era`: which protocol era to speak.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum EraArg {
    /// Try `server/discover` on a fresh process; fall back to `initialize` on another.
    Auto,
    /// Only `server/discover` (2026-07-28); anything else is incomplete.
    Modern,
    /// Only the legacy `initialize` handshake.
    Legacy,
}

impl From<EraArg> for EraChoice {
    fn from(era: EraArg) -> Self {
        match era {
            EraArg::Auto => EraChoice::Auto,
            EraArg::Modern => EraChoice::Modern,
            EraArg::Legacy => EraChoice::Legacy,
        }
    }
}

/// `--format text|json`.
#[derive(Args)]
pub struct FormatArgs {
    /// What to print on stdout.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
}

/// `--include-destructive` (`audit`, `plan`).
#[derive(Args)]
pub struct DestructiveArgs {
    /// Let the planner call destructive and unknown tools even without network
    /// isolation (inside a network-isolated jail it calls every tool anyway; a
    /// server behind --url is never isolated). A --plan file is followed as written.
    #[arg(long)]
    pub include_destructive: bool,
}

/// `--settle-ms` and `--quiet-ms`: how long each call's effects are given
/// to land before the post-call snapshot. `audit`, `agent run` and `proxy`
/// all take these, with these defaults, and mean the same by them.
#[derive(Args)]
pub struct SettleArgs {
    /// The longest wait after each call's answer before the post-call
    /// snapshot, in milliseconds; the wait ends earlier once the stores are
    /// quiet (--quiet-ms).
    #[arg(long, default_value_t = Settle::BOUND_MS,
          value_parser = clap::value_parser!(u64).range(0..=Settle::MAX_MS))]
    settle_ms: u64,
    /// A settle ends once every store has seen no write for this long after
    /// the answer, in milliseconds (file-system events tell; without them
    /// the settle is the whole --settle-ms).
    #[arg(long, default_value_t = Settle::QUIET_MS,
          value_parser = clap::value_parser!(u64).range(0..=Settle::MAX_MS))]
    quiet_ms: u64,
}

impl SettleArgs {
    pub fn settle(&self) -> Settle {
        Settle::from_millis(self.settle_ms, self.quiet_ms)
    }
}

/// `--settle-ms` before a catalog is read (`guidance`, `manifest`).
#[derive(Args)]
pub struct CatalogSettleArgs {
    /// Wait after the handshake before reading the catalog, in milliseconds
    /// (servers may register tools a moment after initializing).
    #[arg(long, default_value_t = witness_guidance::DEFAULT_SETTLE_MS,
          value_parser = clap::value_parser!(u64).range(0..=witness_guidance::MAX_SETTLE_MS))]
    settle_ms: u64,
}

impl CatalogSettleArgs {
    pub fn settle(&self) -> Duration {
        Duration::from_millis(self.settle_ms)
    }
}

/// `--pages`: where the HTML pages go (`lab`, `report`).
#[derive(Args)]
pub struct PagesArgs {
    /// Where to write the HTML pages (default: the results directory, lab's
    /// --out or report's DIR).
    #[arg(long, value_name = "PAGES")]
    pages: Option<PathBuf>,
}

impl PagesArgs {
    /// The pages directory, refused before anything runs when it cannot be
    /// one; `data` when no `--pages` was given.
    pub fn dir(&self, data: &std::path::Path) -> Result<PathBuf> {
        match &self.pages {
            Some(pages) if pages.exists() && !pages.is_dir() => Err(invalid(format!(
                "--pages {}: not a directory",
                pages.display()
            ))),
            Some(pages) => Ok(pages.clone()),
            None => Ok(data.to_path_buf()),
        }
    }
}

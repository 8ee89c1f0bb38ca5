//! `mcp-witness proxy`: stand where a host expects its MCP server, forward
//! everything unchanged, observe the stores around every tool call, and
//! record it all in a trace.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Result;
use clap::Args;
use witness_jail::{JailSpec, StoreKind, Target, parse_env_pairs};
use witness_model::agent::case::FactsSpec;
use witness_model::exit::ExitStatus;
use witness_proxy::upstream::ProxyOptions;
use witness_wire::http::Endpoint;

use super::{SettleArgs, StoreArgs};
use crate::exit::invalid;
use crate::progress::Progress;

const PROXY_HELP: &str = "\
A host launches `mcp-witness proxy ... -- SERVER ...` in place of SERVER
(stdio), or reaches it at --listen over Streamable HTTP. The server runs in
a jail on copies of the --store stores (or on the stores themselves with
--live, loudly). Every message is forwarded unchanged and recorded in the
trace, and the stores are observed around every tools/call. `mcp-witness
trace check TRACE` judges the trace. docs/proxy.md has host configurations.

Nothing but MCP ever goes to stdout: messages of the proxy's own go to
stderr.";

#[derive(Args)]
#[command(after_help = PROXY_HELP)]
pub struct ProxyArgs {
    /// Where the trace goes: a file (replaced), or a directory where each
    /// run writes `proxy-<unix ms>-<pid>.jsonl`.
    #[arg(long, value_name = "PATH")]
    trace: PathBuf,
    #[command(flatten)]
    stores: StoreArgs,
    /// A variable for the server (the environment is otherwise scrubbed).
    #[arg(long = "env", value_name = "K=V")]
    env: Vec<String>,
    /// Run the server on the real stores: nothing is copied, nothing can be undone.
    #[arg(long, conflicts_with = "url")]
    live: bool,
    /// Row facts to read for every changed row: STORE:TABLE:COLUMN[,COLUMN...].
    #[arg(long = "facts", value_name = "STORE:TABLE:COLUMNS")]
    facts: Vec<String>,
    /// Read the row facts golden cases declare ([[facts]]) from a case file or directory.
    #[arg(long, value_name = "CASES")]
    facts_from: Option<PathBuf>,
    #[command(flatten)]
    settle: SettleArgs,
    /// Serve Streamable HTTP on this loopback address (port 0: any free port,
    /// printed on stderr) instead of stdio.
    #[arg(long, value_name = "ADDR")]
    listen: Option<String>,
    /// With --listen: relay to this Streamable HTTP server instead of launching one.
    #[arg(
        long,
        value_name = "URL",
        requires = "listen",
        conflicts_with = "command"
    )]
    url: Option<String>,
    /// Allow a --url whose host is not loopback (it must use https).
    #[arg(long, requires = "url")]
    allow_remote_http: bool,
    #[command(flatten)]
    auth: super::auth::AuthArgs,
    /// Every exchange with a --url server ends within this, in milliseconds.
    #[arg(long, default_value_t = 120_000, value_parser = clap::value_parser!(u64).range(1..=3_600_000))]
    timeout_ms: u64,
    /// Do not try a network namespace for the launched server.
    #[arg(long)]
    no_netns: bool,
    /// The server to launch.
    #[arg(last = true, required_unless_present = "url", value_name = "COMMAND")]
    command: Vec<String>,
}

/// Runs the proxy until the host is done with it.
pub fn run(args: ProxyArgs, progress: &Progress) -> Result<ExitStatus> {
    let options = options(&args)?;
    let ended = match &args.listen {
        Some(listen) => witness_proxy::http::run(&options, listen_addr(listen)?, progress.proxy()),
        None => witness_proxy::stdio::run(&options, progress.proxy()),
    }
    .map_err(anyhow::Error::msg)?;
    errln!(
        "mcp-witness proxy: {}; trace {}",
        ended.reason,
        options.trace.display()
    );
    Ok(ExitStatus::Passed)
}

fn options(args: &ProxyArgs) -> Result<ProxyOptions> {
    let endpoint = match &args.url {
        Some(url) => Some(args.auth.apply(
            Endpoint::parse(url, args.allow_remote_http)?,
            Duration::from_millis(args.timeout_ms),
        )?),
        None if args.auth.any() => {
            return Err(invalid(
                "--bearer-env, --header-env and --oauth-* apply only to a --url",
            ));
        }
        None => None,
    };
    if args.url.is_some() && (args.no_netns || !args.env.is_empty()) {
        return Err(invalid(
            "--env and --no-netns apply only to a launched server; a --url server is not launched",
        ));
    }
    let stores = args.stores.specs()?;
    if args.live && stores.is_empty() {
        return Err(invalid("--live needs the --store stores to observe"));
    }
    let mut facts = parse_facts(&args.facts)?;
    if let Some(path) = &args.facts_from {
        let cases = witness_agent::case::load_all(std::slice::from_ref(path))
            .map_err(|e| invalid(e.to_string()))?;
        for entry in cases {
            for spec in entry.case.facts {
                if !facts.contains(&spec) {
                    facts.push(spec);
                }
            }
        }
    }
    for spec in &facts {
        match stores.iter().find(|s| s.name == spec.store) {
            None => {
                return Err(invalid(format!(
                    "row facts of store {:?}, which no --store declares",
                    spec.store
                )));
            }
            // Row facts are columns of table rows: only a SQLite store has them.
            Some(store) if store.kind != StoreKind::Sqlite => {
                return Err(invalid(format!(
                    "row facts of store {:?}, which is not a SQLite store",
                    spec.store
                )));
            }
            Some(_) => {}
        }
    }
    let env = parse_env_pairs("--env", &args.env).map_err(invalid)?;
    let target = match endpoint {
        Some(endpoint) => Target::remote(endpoint, stores),
        None => Target::Launched {
            spec: JailSpec {
                command: args.command.clone(),
                stores,
                env,
                keep: false,
                isolate_network: !args.no_netns,
            },
            live: args.live,
        },
    };
    Ok(ProxyOptions {
        target,
        facts,
        settle: args.settle.settle(),
        timeout: Duration::from_millis(args.timeout_ms),
        trace: trace_path(&args.trace)?,
        host_transport: if args.listen.is_some() {
            "http"
        } else {
            "stdio"
        },
    })
}

/// `STORE:TABLE:COLUMN[,COLUMN...]`.
fn parse_facts(specs: &[String]) -> Result<Vec<FactsSpec>> {
    specs
        .iter()
        .map(|text| {
            let mut parts = text.splitn(3, ':');
            let (Some(store), Some(table), Some(columns)) =
                (parts.next(), parts.next(), parts.next())
            else {
                return Err(invalid(format!(
                    "--facts {:?}: expected STORE:TABLE:COLUMN[,COLUMN...]",
                    witness_text::clip(text, 80)
                )));
            };
            let columns: Vec<String> = columns
                .split(',')
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .map(str::to_owned)
                .collect();
            if store.is_empty() || table.is_empty() || columns.is_empty() {
                return Err(invalid(format!(
                    "--facts {:?}: a store, a table and at least one column",
                    witness_text::clip(text, 80)
                )));
            }
            Ok(FactsSpec {
                store: store.to_owned(),
                table: table.to_owned(),
                columns,
            })
        })
        .collect()
}

/// A file as given; in a directory, a fresh name per run (a host launches
/// its servers with the same arguments every time).
fn trace_path(path: &Path) -> Result<PathBuf> {
    if !path.is_dir() {
        let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
        if parent.is_some_and(|p| !p.is_dir()) {
            return Err(invalid(format!(
                "--trace {}: its directory does not exist",
                path.display()
            )));
        }
        return Ok(path.to_path_buf());
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    Ok(path.join(format!("proxy-{now}-{}.jsonl", std::process::id())))
}

/// Loopback only: the proxy's HTTP side has no authentication of its own.
fn listen_addr(text: &str) -> Result<SocketAddr> {
    let addr: SocketAddr = text.parse().map_err(|_| {
        invalid(format!(
            "--listen {text:?}: expected IP:PORT, e.g. 127.0.0.1:8931"
        ))
    })?;
    if !addr.ip().is_loopback() {
        return Err(invalid(format!(
            "--listen {addr}: only a loopback address (127.0.0.1, [::1]) is served"
        )));
    }
    Ok(addr)
}

//! `mcp-witness agent run`: golden cases, driven by a model, against a
//! server in its jail; verdicts from the trace and the store.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use witness_agent::driver::{ApiKey, Driver, HttpOptions, anthropic, openai, replay, scripted};
use witness_agent::suite::{self, Suite, SuiteOptions};
use witness_agent::tools;
use witness_jail::observe::Settle;
use witness_jail::parse_env_pairs;
use witness_manifest::load_pin;
use witness_model::agent::{
    AGENT_RUN_SCHEMA, AgentRunDocument, CaseEntry, HandedTools, JudgeSettings,
};
use witness_model::exit::ExitStatus;
use witness_wire::http::Endpoint;

use super::{EraArgs, Format, FormatArgs, SettleArgs};
use crate::exit::{invalid, recorded};
use crate::progress::Progress;

const HELP: &str = "\
Drivers:
  --driver scripted FILE    replies read from a script (see docs/agent-runs.md)
  --driver openai           an OpenAI-compatible Chat Completions endpoint with tools:
                            POST {--base-url}/chat/completions; key from $OPENAI_API_KEY
                            (or --api-key-env), none needed for a local server
  --driver anthropic        an Anthropic Messages endpoint with tool use:
                            POST {--base-url}/v1/messages; key from $ANTHROPIC_API_KEY
  --driver replay RUN.json  the replies recorded in a run document, asked in the same
                            order; its cases, models, tools and settings are reused

--manifest PIN hands the model a pinned manifest's definitions (from `manifest
pin`) while every call still goes to the server after --; the run records the
pin's fingerprint beside the one the server lists. Run a suite once with the
pin and once without, with --runs N on both, and `agent compare` the two.

Example, a local llama.cpp, vLLM or Ollama server:
  mcp-witness agent run --case experiments/agent/cases --driver openai \\
    --base-url http://127.0.0.1:8080/v1 --model qwen2.5-7b-instruct --runs 3 --out runs/ \\
    -- mcp-witness testbed crm --store {db}

Every run starts from a fresh jail seeded by its case; {NAME} in the command is
store NAME's jailed path. Keys travel only in request headers and never reach
any output. Exit codes: 0 the gate passed, 1 it failed, 2 invalid invocation,
3 a run could not conclude (an endpoint or the harness failed).";

/// The `agent` subcommands.
#[derive(Subcommand)]
pub enum AgentCommand {
    /// Run golden cases with a model-driven client against a jailed server.
    Run(Box<RunArgs>),
    /// Compare two runs of the same cases: what changed, beside the noise floor.
    Compare(super::compare::CompareArgs),
}

#[derive(Args)]
#[command(after_help = HELP)]
pub struct RunArgs {
    /// A golden case (TOML), or a directory of them; repeatable.
    #[arg(long = "case", value_name = "FILE|DIR")]
    cases: Vec<PathBuf>,
    /// scripted FILE, openai, anthropic, or replay RUN.json.
    #[arg(long, num_args = 1..=2, value_names = ["KIND", "FILE"], required = true)]
    driver: Vec<String>,
    /// A model to run (repeatable); with a script, which of its models.
    #[arg(long = "model", value_name = "NAME")]
    models: Vec<String>,
    /// The model endpoint's base URL (openai: usually ends in /v1).
    #[arg(long, value_name = "URL")]
    base_url: Option<String>,
    /// The environment variable holding the API key.
    #[arg(long, value_name = "VAR")]
    api_key_env: Option<String>,
    /// Allow a --base-url whose host is not loopback (it must use https).
    #[arg(long)]
    allow_remote_http: bool,
    /// Append each tool's declared annotations to the description the model sees.
    #[arg(long)]
    forward_annotations: bool,
    /// Hand the model this pinned manifest's tool definitions (names,
    /// descriptions, schemas) instead of the server's; calls still go to the server.
    #[arg(long, value_name = "PIN")]
    manifest: Option<PathBuf>,
    /// The seed of a scripted model's drawn replies (`chance`); another seed is a rerun.
    #[arg(long, value_name = "N")]
    seed: Option<u64>,
    /// Repetitions of every case for every model.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1000))]
    runs: u32,
    /// Grade answers with this model (same driver); failures leave them unjudged, passing.
    #[arg(long, value_name = "NAME")]
    judge_model: Option<String>,
    /// Answers graded per judge request.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=100))]
    judge_slice: u32,
    /// The pass rate the weakest model must reach (0 to 1).
    #[arg(long, default_value_t = 1.0)]
    gate: f64,
    /// Output bound asked of the model per reply.
    #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u32).range(1..=131_072))]
    max_tokens: u32,
    /// Timeout of one model request, in milliseconds.
    #[arg(long, default_value_t = 120_000, value_parser = clap::value_parser!(u64).range(1..=3_600_000))]
    model_timeout_ms: u64,
    /// Timeout of every MCP request, in milliseconds.
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..=600_000))]
    timeout_ms: u64,
    #[command(flatten)]
    settle: SettleArgs,
    /// A variable for the server (repeatable; the value is never recorded).
    #[arg(long = "env", value_name = "K=V")]
    env: Vec<String>,
    /// Do not try to put the server in a network namespace.
    #[arg(long)]
    no_netns: bool,
    #[command(flatten)]
    era: EraArgs,
    /// Write agent-run.json and its page, agent-run.html, into this directory.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    #[command(flatten)]
    format: FormatArgs,
    /// The server command, after `--` (with --driver replay: the recorded one by default).
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,
}

pub fn run(command: AgentCommand, progress: &Progress) -> Result<ExitStatus> {
    match command {
        AgentCommand::Run(args) => run_cases(*args, progress),
        AgentCommand::Compare(args) => super::compare::run(args),
    }
}

/// What the driver choice decides: the driver, and for a replay the
/// recording whose cases, models, tools and settings are reused.
struct Chosen {
    driver: Box<dyn Driver>,
    recording: Option<AgentRunDocument>,
    /// Models a script offers when none is named.
    scripted_models: Vec<String>,
    /// The seed of a script's draws, when it draws (has `chance` replies).
    seed: Option<u64>,
}

fn run_cases(args: RunArgs, progress: &Progress) -> Result<ExitStatus> {
    if !(0.0..=1.0).contains(&args.gate) {
        return Err(invalid("--gate must be between 0 and 1"));
    }
    let chosen = choose_driver(&args)?;
    let env = parse_env_pairs("--env", &args.env).map_err(invalid)?;
    if let Some(out) = &args.out {
        std::fs::create_dir_all(out)
            .map_err(|e| invalid(format!("--out {}: {e}", out.display())))?;
    }
    let Chosen {
        mut driver,
        recording,
        scripted_models,
        seed,
    } = chosen;
    let (cases, models, handed, options) = match recording {
        Some(document) => replay_inputs(&args, document, env)?,
        None => {
            let (cases, models, handed, options) = fresh_inputs(&args, scripted_models, env)?;
            (cases, models, handed, SuiteOptions { seed, ..options })
        }
    };
    let suite = Suite {
        cases: &cases,
        models: &models,
        options: &options,
        handed,
        replayed: matches!(args.driver.first().map(String::as_str), Some("replay")),
    };
    let mut finished = |run: &witness_model::agent::CaseRun| progress.agent_run(run);
    let document = suite::run(suite, driver.as_mut(), &mut finished)
        .map_err(|e| anyhow::anyhow!("no agent run: {e}"))?;
    if let (Some(pinned), Some(served)) = (&document.tools.manifest, &document.server.manifest)
        && &pinned.fingerprint != served
    {
        errln!(
            "mcp-witness: the model was handed {} ({}) while the server lists {served}: \
             the calls went to the server as it is now",
            witness_text::clip(&pinned.file, 120),
            pinned.fingerprint
        );
    }
    write_outputs(&args, &document)?;
    recorded(document.exit_code)
}

fn choose_driver(args: &RunArgs) -> Result<Chosen> {
    let kind = args.driver.first().map(String::as_str).unwrap_or_default();
    let file = args.driver.get(1).map(PathBuf::from);
    if args.seed.is_some() && kind != "scripted" {
        return Err(invalid(
            "--seed draws a scripted model's replies; it applies only to --driver scripted",
        ));
    }
    let chosen = |driver: Box<dyn Driver>| Chosen {
        driver,
        recording: None,
        scripted_models: Vec::new(),
        seed: None,
    };
    match (kind, file) {
        ("scripted", Some(file)) => {
            let seed = args.seed.unwrap_or(scripted::DEFAULT_SEED);
            let script = scripted::Scripted::load(&file)
                .map_err(|e| invalid(e.to_string()))?
                .with_seed(seed);
            Ok(Chosen {
                scripted_models: script.models(),
                // A script without draws runs the same on every seed.
                seed: script.draws().then_some(seed),
                ..chosen(Box::new(script))
            })
        }
        ("replay", Some(file)) => {
            let document = read_recording(&file)?;
            Ok(Chosen {
                driver: Box::new(replay::Replay::of(&document)),
                recording: Some(document),
                scripted_models: Vec::new(),
                seed: None,
            })
        }
        ("openai", None) => Ok(chosen(Box::new(openai::OpenAi::new(http(
            args,
            "OPENAI_API_KEY",
        )?)))),
        ("anthropic", None) => Ok(chosen(Box::new(anthropic::Anthropic::new(http(
            args,
            "ANTHROPIC_API_KEY",
        )?)))),
        ("scripted" | "replay", None) => Err(invalid(format!("--driver {kind} needs a FILE"))),
        ("openai" | "anthropic", Some(_)) => Err(invalid(format!("--driver {kind} takes no FILE"))),
        _ => Err(invalid(format!(
            "--driver {:?}: expected scripted FILE, openai, anthropic or replay RUN.json",
            witness_text::clip(kind, 40)
        ))),
    }
}

/// The endpoint and key of an HTTP driver, checked before anything runs.
fn http(args: &RunArgs, default_key: &str) -> Result<HttpOptions> {
    let Some(url) = &args.base_url else {
        return Err(invalid("this driver needs --base-url"));
    };
    // The same rules as an MCP --url: loopback may use http, anything else
    // needs https and --allow-remote-http.
    Endpoint::parse(url, args.allow_remote_http)
        .map_err(|e| invalid(e.to_string().replace("--url", "--base-url")))?;
    let key = match &args.api_key_env {
        Some(var) => Some(
            ApiKey::from_env(var)
                .ok_or_else(|| invalid(format!("--api-key-env {var}: the variable is not set")))?,
        ),
        None => ApiKey::from_env(default_key),
    };
    if args.models.is_empty() {
        return Err(invalid("this driver needs at least one --model"));
    }
    Ok(HttpOptions {
        base_url: url.clone(),
        key,
        timeout: Duration::from_millis(args.model_timeout_ms),
    })
}

/// Reads and checks an `mcp-witness.agent-run/v1` document; any problem is
/// an invalid invocation.
pub(crate) fn read_recording(path: &Path) -> Result<AgentRunDocument> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| invalid(format!("cannot read {}: {e}", path.display())))?;
    let document: AgentRunDocument = serde_json::from_str(&text).map_err(|e| {
        invalid(format!(
            "{} is not an {AGENT_RUN_SCHEMA} document: {e}",
            path.display()
        ))
    })?;
    if document.schema != AGENT_RUN_SCHEMA {
        return Err(invalid(format!(
            "{} is a {:?} document, not {AGENT_RUN_SCHEMA}",
            path.display(),
            witness_text::clip(&document.schema, 60)
        )));
    }
    Ok(document)
}

type Inputs = (
    Vec<CaseEntry>,
    Vec<String>,
    Option<HandedTools>,
    SuiteOptions,
);

/// Cases, models and settings from the command line.
fn fresh_inputs(
    args: &RunArgs,
    scripted: Vec<String>,
    env: Vec<(String, String)>,
) -> Result<Inputs> {
    if args.cases.is_empty() {
        return Err(invalid("at least one --case is needed"));
    }
    if args.command.is_empty() {
        return Err(invalid("the server command is missing (after --)"));
    }
    let cases = witness_agent::case::load_all(&args.cases).map_err(|e| invalid(e.to_string()))?;
    let models = if scripted.is_empty() || !args.models.is_empty() {
        if let Some(unknown) = args
            .models
            .iter()
            .find(|m| !scripted.is_empty() && !scripted.contains(m))
        {
            return Err(invalid(format!("the script has no model {unknown:?}")));
        }
        args.models.clone()
    } else {
        scripted
    };
    let judge = args.judge_model.as_ref().map(|model| JudgeSettings {
        model: model.clone(),
        slice: args.judge_slice,
    });
    let handed = match &args.manifest {
        Some(path) => {
            let pin = load_pin(path).map_err(|e| invalid(e.to_string()))?;
            let file = path.display().to_string();
            Some(tools::from_pin(&pin, &file, args.forward_annotations))
        }
        None => None,
    };
    let options = SuiteOptions {
        command: args.command.clone(),
        env,
        isolate_network: !args.no_netns,
        era: args.era.choice(),
        timeout: Duration::from_millis(args.timeout_ms),
        settle: args.settle.settle(),
        runs: args.runs,
        max_tokens: args.max_tokens,
        gate: args.gate,
        forward_annotations: args.forward_annotations,
        judge,
        system_prompt: witness_agent::SYSTEM_PROMPT.to_owned(),
        // Set from the driver choice (`run_cases`): only a drawing script has one.
        seed: None,
    };
    Ok((cases, models, handed, options))
}

/// Everything a replay reuses from its recording; only the server command
/// (when given), `--env` and the MCP timings come from the command line.
fn replay_inputs(
    args: &RunArgs,
    document: AgentRunDocument,
    env: Vec<(String, String)>,
) -> Result<Inputs> {
    if !args.cases.is_empty()
        || !args.models.is_empty()
        || args.judge_model.is_some()
        || args.manifest.is_some()
    {
        return Err(invalid(
            "--driver replay reuses the recording's cases, models, tools and judge: drop --case, --model, --manifest and --judge-model",
        ));
    }
    let settings = &document.settings;
    let options = SuiteOptions {
        command: if args.command.is_empty() {
            document.server.command.clone()
        } else {
            args.command.clone()
        },
        env,
        isolate_network: !args.no_netns,
        era: args.era.choice(),
        timeout: Duration::from_millis(args.timeout_ms),
        // The recording's bound; how quiet is quiet enough was not
        // recorded, so it is this command's --quiet-ms.
        settle: Settle {
            bound: Duration::from_millis(settings.settle_ms),
            quiet: args.settle.settle().quiet,
        },
        runs: settings.runs,
        max_tokens: settings.max_tokens,
        gate: settings.gate,
        forward_annotations: document.tools.annotations_forwarded,
        judge: settings.judge.clone(),
        system_prompt: document.system_prompt.clone(),
        seed: settings.seed,
    };
    Ok((
        document.cases,
        document.models,
        Some(document.tools),
        options,
    ))
}

fn write_outputs(args: &RunArgs, document: &AgentRunDocument) -> Result<()> {
    let json = serde_json::to_string_pretty(document)? + "\n";
    if let Some(out) = &args.out {
        let path = out.join("agent-run.json");
        std::fs::write(&path, &json).with_context(|| format!("cannot write {}", path.display()))?;
        let page = witness_pages::agent::render(document)?;
        let path = out.join("agent-run.html");
        std::fs::write(&path, page).with_context(|| format!("cannot write {}", path.display()))?;
    }
    match args.format.format {
        Format::Json => out!("{json}"),
        Format::Text => out!("{}", witness_pages::agent::text_summary(document)),
    }
    Ok(())
}

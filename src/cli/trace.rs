//! `mcp-witness trace`: judge a trace the witness proxy recorded, and read a
//! conversation out of a host's own transcript.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::{Subcommand, ValueEnum};
use witness_model::exit::ExitStatus;
use witness_model::proxy::{CONVERSATION_SCHEMA, ConversationLine};

use crate::exit::{invalid, recorded};

const CHECK_HELP: &str = "\
The agent checks over a recorded trace: tool choice, arguments, order,
side effects, scope and accountability from the trace and its observed
effects; with --conversation (the host's user and assistant turns), consent
and say vs do too. Without --cases only what any client is held to is
judged. Exit: 0 passed, 1 a check failed, 2 invalid input, 3 the trace
cannot conclude (a call never answered, stores that could not be observed).";

/// The `trace` subcommands.
#[derive(Subcommand)]
pub enum TraceCommand {
    /// Judge a recorded proxy trace.
    #[command(after_help = CHECK_HELP)]
    Check {
        /// The trace (`mcp-witness proxy --trace`).
        trace: PathBuf,
        /// Golden cases: a TOML file or a directory of them.
        #[arg(long, value_name = "CASES")]
        cases: Option<PathBuf>,
        /// Which case, when --cases holds several.
        #[arg(long, value_name = "ID")]
        case: Option<String>,
        /// The conversation: JSON lines of user and assistant turns.
        #[arg(long, value_name = "FILE")]
        conversation: Option<PathBuf>,
        /// What the conversation file is.
        #[arg(long, value_enum, default_value_t = ConversationFormat::McpWitness)]
        conversation_format: ConversationFormat,
        /// With a host transcript: the server's name in the host's configuration.
        #[arg(long, value_name = "NAME")]
        server: Option<String>,
        #[arg(long, value_enum, default_value_t = CheckFormat::Text)]
        format: CheckFormat,
        /// Write DIR/trace-check.json and its page DIR/trace-check.html.
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
    },
    /// Print a host transcript as a conversation file (JSON lines).
    Import {
        transcript: PathBuf,
        #[arg(long = "from", value_enum)]
        from: HostTranscript,
        /// The server's name in the host's configuration (`mcp__NAME__tool`).
        #[arg(long, value_name = "NAME")]
        server: String,
    },
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ConversationFormat {
    /// `mcp-witness.conversation/v1`.
    McpWitness,
    /// A Claude Code session file (needs --server).
    ClaudeCode,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum HostTranscript {
    ClaudeCode,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CheckFormat {
    Text,
    Json,
    Junit,
}

pub fn run(command: TraceCommand) -> Result<ExitStatus> {
    match command {
        TraceCommand::Import {
            transcript,
            from: HostTranscript::ClaudeCode,
            server,
        } => {
            let lines = witness_proxy::import::claude_code(&read(&transcript)?, &server)
                .map_err(|e| invalid(e.to_string()))?;
            outln!("{}", serde_json::json!({ "schema": CONVERSATION_SCHEMA }));
            for line in lines {
                outln!("{}", serde_json::to_string(&line)?);
            }
            Ok(ExitStatus::Passed)
        }
        TraceCommand::Check {
            trace,
            cases,
            case,
            conversation,
            conversation_format,
            server,
            format,
            out,
        } => {
            let case = pick_case(cases.as_deref(), case.as_deref())?;
            let lines = match &conversation {
                Some(path) => Some(conversation_lines(
                    path,
                    conversation_format,
                    server.as_deref(),
                )?),
                None => None,
            };
            let text = read(&trace)?;
            let format_name = match conversation_format {
                ConversationFormat::McpWitness => CONVERSATION_SCHEMA,
                ConversationFormat::ClaudeCode => "claude-code",
            };
            let conversation_file = conversation.as_deref().map(file_name).unwrap_or_default();
            let input = witness_proxy::check::CheckInput {
                trace: (&text, &file_name(&trace)),
                case: case.as_ref(),
                conversation: lines
                    .as_deref()
                    .map(|l| (l, conversation_file.as_str(), format_name)),
                generator: witness_model::GENERATOR,
            };
            let doc = witness_proxy::check::document(&input).map_err(|e| invalid(e.to_string()))?;
            if let Some(dir) = &out {
                write_out(dir, &doc)?;
            }
            match format {
                CheckFormat::Text => out!("{}", witness_pages::trace_check::text(&doc)),
                CheckFormat::Json => outln!("{}", serde_json::to_string_pretty(&doc)?),
                CheckFormat::Junit => out!("{}", witness_pages::trace_check::junit(&doc)?),
            }
            recorded(doc.exit_code)
        }
    }
}

fn read(path: &Path) -> Result<String> {
    std::fs::read_to_string(path)
        .map_err(|e| invalid(format!("cannot read {}: {e}", path.display())))
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn pick_case(
    cases: Option<&Path>,
    id: Option<&str>,
) -> Result<Option<witness_model::agent::case::GoldenCase>> {
    let Some(path) = cases else {
        if id.is_some() {
            return Err(invalid("--case needs --cases"));
        }
        return Ok(None);
    };
    let entries =
        witness_agent::case::load_all(&[path.to_path_buf()]).map_err(|e| invalid(e.to_string()))?;
    let found = match id {
        Some(id) => entries.into_iter().find(|e| e.case.id == id),
        None if entries.len() == 1 => entries.into_iter().next(),
        None => {
            return Err(invalid(format!(
                "--cases holds {} cases: pick one with --case ID",
                entries.len()
            )));
        }
    };
    found
        .map(|e| Some(e.case))
        .ok_or_else(|| invalid(format!("--case {:?}: no such case", id.unwrap_or_default())))
}

fn conversation_lines(
    path: &Path,
    format: ConversationFormat,
    server: Option<&str>,
) -> Result<Vec<ConversationLine>> {
    let text = read(path)?;
    let lines = match (format, server) {
        (ConversationFormat::McpWitness, _) => witness_proxy::check::read_conversation(&text),
        (ConversationFormat::ClaudeCode, Some(server)) => {
            witness_proxy::import::claude_code(&text, server)
        }
        (ConversationFormat::ClaudeCode, None) => {
            return Err(invalid(
                "--conversation-format claude-code needs --server NAME",
            ));
        }
    };
    lines.map_err(|e| invalid(e.to_string()))
}

fn write_out(dir: &Path, doc: &witness_model::proxy::TraceCheckDocument) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| invalid(format!("--out {}: {e}", dir.display())))?;
    let json = serde_json::to_string_pretty(doc)? + "\n";
    std::fs::write(dir.join("trace-check.json"), json)
        .with_context(|| format!("cannot write {}", dir.display()))?;
    let page = witness_pages::trace_check::render(doc)?;
    std::fs::write(dir.join("trace-check.html"), page)
        .with_context(|| format!("cannot write {}", dir.display()))?;
    Ok(())
}

//! `mcp-witness connect`: reach one server as an ordinary client would —
//! authenticate, shake hands, read the catalog, optionally call its tools —
//! and say how each step went. Nothing is observed and nothing is judged:
//! it answers "can a client use this server?", which is what a protected
//! or resumable endpoint needs answered first, and what the official MCP
//! conformance suite's client scenarios drive (docs/protected-servers.md).

use std::sync::Arc;

use anyhow::Result;
use clap::Args;
use serde_json::{Map, Value};
use witness_engine::plan::synth;
use witness_model::exit::ExitStatus;
use witness_wire::clock::{Clock, MonotonicClock};
use witness_wire::session::{CallOutcome, Session};

use super::{EraArgs, ServerArgs};

const HELP: &str = "\
Steps, each printed as one line: the handshake (server/discover or
initialize, as --era says), the whole tool catalog (tools/list, every page),
and with --call-tools one tools/call per listed tool, in catalog order, with
arguments made from its input schema the way an audit without --plan makes
them (what the schema and descriptions offer, else invented). The client
declares no capabilities (no sampling, elicitation or roots), as an audit
does.

--arguments FILE names the arguments of some tools: a JSON object from a
tool's name to its arguments object (or a list of {\"name\", \"arguments\"}
objects, as the conformance suite hands its clients); a tool named there is
called with those instead of made-up ones. A value there of the form
{\"$served\": {\"tool\": NAME, \"pointer\": POINTER}} stands for what the
server served: the JSON pointer POINTER into tool NAME's tools/list entry,
as the client holds it (the conformance suite has a client echo one tool's
inputSchema through another this way). A call naming a $served value the
catalog does not hold is not made (exit 1).

A tool whose x-mcp-header declarations cannot be honoured (SEP-2243: an
empty or non-token name, a name used twice, a parameter that is not a
string, integer or boolean) is listed as excluded and never called.

Tools whose annotations say readOnlyHint: true are called; any other tool
may change what the server holds, so it is called only with
--include-destructive (a --url server is never jailed: its real stores
change; a launched one runs in a jail of its own, declared no stores).

Credentials for a protected --url come from --bearer-env, --header-env or
--oauth-* (docs/protected-servers.md); tokens and secrets are never printed.

Exit codes: 0 every step got a result (a tool result with isError: true
counts: the call was answered); 1 the server answered a tools/call with a
JSON-RPC error, left a call unfinished, did not list what a $served
argument names, or listed its catalog incompletely; 2 invalid invocation;
3 no session (unreachable, refused, unauthorized) or a step lost the
transport.

Examples:
  mcp-witness connect --url http://127.0.0.1:3001/mcp
  MY_TOKEN=... mcp-witness connect --bearer-env MY_TOKEN --call-tools --url https://mcp.example/mcp --allow-remote-http
  mcp-witness connect --oauth-flow client-credentials --oauth-client-id ci --oauth-client-secret-env CI_SECRET --url http://127.0.0.1:8080/mcp
  mcp-witness connect --call-tools -- mcp-witness testbed serve --variant honest --store /tmp/notes.db";

#[derive(Args)]
#[command(after_help = HELP)]
pub struct ConnectCommandArgs {
    /// After the catalog, call every listed tool once (read-only ones only,
    /// unless --include-destructive).
    #[arg(long)]
    call_tools: bool,
    /// With --call-tools, call every tool, not only those declared
    /// read-only: behind a --url, their calls change the server's real stores.
    #[arg(long)]
    include_destructive: bool,
    /// With --call-tools, the arguments of the tools it names (a JSON
    /// object from tool name to arguments, or a list of {"name",
    /// "arguments"}), instead of arguments made from the schema; a
    /// {"$served": {"tool", "pointer"}} value there is that part of the
    /// named tool's tools/list entry.
    #[arg(long, value_name = "FILE")]
    arguments: Option<std::path::PathBuf>,
    #[command(flatten)]
    era: EraArgs,
    #[command(flatten)]
    server: ServerArgs,
}

/// Runs the steps; how far they got decides the exit status.
pub fn run(args: ConnectCommandArgs) -> Result<ExitStatus> {
    if args.include_destructive && !args.call_tools {
        return Err(crate::exit::invalid(
            "--include-destructive applies only with --call-tools",
        ));
    }
    if args.arguments.is_some() && !args.call_tools {
        return Err(crate::exit::invalid(
            "--arguments applies only with --call-tools",
        ));
    }
    let given = match &args.arguments {
        Some(path) => given_arguments(path)?,
        None => Map::new(),
    };
    let target = args.server.target(Vec::new(), false)?;
    let timeout = args.server.connect.timeout();
    let mut opened = target.open(timeout)?;
    let clock: Arc<dyn Clock> = Arc::new(MonotonicClock::start());
    let mut launch = || opened.connect(clock.clone()).map_err(|e| e.to_string());
    let (mut session, handshake) = match Session::open(&mut launch, args.era.choice(), timeout) {
        Ok(pair) => pair,
        Err((error, mut discarded)) => {
            for server in &mut discarded {
                server.shutdown();
            }
            outln!("handshake: failed: {}", shown(&error.to_string()));
            return Ok(ExitStatus::Incomplete);
        }
    };
    for server in &mut session.discarded {
        server.shutdown();
    }
    let name = handshake
        .server_info
        .as_ref()
        .and_then(|info| info.get("name"))
        .and_then(Value::as_str)
        .unwrap_or("(no serverInfo name)");
    outln!(
        "handshake: ok: protocol {}, server {}",
        shown(&handshake.protocol_version),
        shown(name)
    );
    let status = steps(&mut session, &args, &given);
    session.server.shutdown();
    Ok(status)
}

/// The catalog, then the calls; the worst step decides.
fn steps(
    session: &mut Session,
    args: &ConnectCommandArgs,
    given: &Map<String, Value>,
) -> ExitStatus {
    let catalog = match session.list_tools() {
        Ok(catalog) => catalog,
        Err(e) => {
            outln!("tools/list: failed: {}", shown(&e.to_string()));
            return ExitStatus::Incomplete;
        }
    };
    let mut status = ExitStatus::Passed;
    if catalog.complete {
        outln!(
            "tools/list: ok: {} tools in {} pages",
            catalog.tools.len(),
            catalog.pages
        );
    } else {
        let problem = catalog.problem.as_deref().unwrap_or("no reason given");
        outln!("tools/list: incomplete: {}", shown(problem));
        status = ExitStatus::Failed;
    }
    for excluded in &catalog.excluded {
        outln!(
            "tools/list {}: excluded: {}",
            shown(&excluded.name),
            shown(&excluded.reason)
        );
    }
    if !args.call_tools {
        return status;
    }
    for tool in &catalog.tools {
        let Some(name) = tool.get("name").and_then(Value::as_str) else {
            continue;
        };
        let read_only = tool
            .pointer("/annotations/readOnlyHint")
            .and_then(Value::as_bool)
            == Some(true);
        if !read_only && !args.include_destructive {
            outln!(
                "tools/call {}: skipped: not declared read-only (--include-destructive calls it)",
                shown(name)
            );
            continue;
        }
        let arguments = match given.get(name) {
            Some(arguments) => match served(arguments, &catalog.tools) {
                Ok(arguments) => arguments,
                Err(missing) => {
                    outln!(
                        "tools/call {}: not called: its --arguments take {missing}, which tools/list did not serve",
                        shown(name)
                    );
                    if status == ExitStatus::Passed {
                        status = ExitStatus::Failed;
                    }
                    continue;
                }
            },
            None => Value::Object(
                synth::arguments_for(tool.get("inputSchema"), name)
                    .into_iter()
                    .collect(),
            ),
        };
        match session.call_tool(name, &arguments) {
            CallOutcome::Result(result) => {
                let is_error = result.get("isError").and_then(Value::as_bool) == Some(true);
                let how = if is_error {
                    "a result with isError: true"
                } else {
                    "a result"
                };
                outln!("tools/call {}: ok: {how}", shown(name));
            }
            CallOutcome::RpcError { code, .. } => {
                outln!("tools/call {}: JSON-RPC error {code}", shown(name));
                if status == ExitStatus::Passed {
                    status = ExitStatus::Failed;
                }
            }
            CallOutcome::Transport(e) => {
                outln!("tools/call {}: failed: {}", shown(name), shown(&e));
                return ExitStatus::Incomplete;
            }
            CallOutcome::InputRequired { detail, .. } => {
                outln!("tools/call {}: unfinished: {}", shown(name), shown(&detail));
                if status == ExitStatus::Passed {
                    status = ExitStatus::Failed;
                }
            }
        }
    }
    status
}

/// The arguments `--arguments` names, by tool: an object from tool name to
/// arguments, or a list of `{"name", "arguments"}` (the suite's `toolCalls`).
fn given_arguments(path: &std::path::Path) -> Result<Map<String, Value>> {
    let shown_path = path.display();
    let text = std::fs::read_to_string(path)
        .map_err(|e| crate::exit::invalid(format!("--arguments {shown_path}: {e}")))?;
    let value: Value = serde_json::from_str(&text)
        .map_err(|e| crate::exit::invalid(format!("--arguments {shown_path}: not JSON ({e})")))?;
    let pairs: Vec<(String, Value)> = match value {
        Value::Object(by_name) => by_name.into_iter().collect(),
        Value::Array(calls) => calls
            .into_iter()
            .map(|call| {
                let name = call.get("name").and_then(Value::as_str).map(str::to_owned);
                let arguments = call.get("arguments").cloned().unwrap_or(Value::Null);
                match name {
                    Some(name) => Ok((name, arguments)),
                    None => Err(crate::exit::invalid(format!(
                        "--arguments {shown_path}: a call without a string name"
                    ))),
                }
            })
            .collect::<Result<_>>()?,
        _ => {
            return Err(crate::exit::invalid(format!(
                "--arguments {shown_path}: must be an object or a list of calls"
            )));
        }
    };
    let mut given = Map::new();
    for (name, arguments) in pairs {
        if !arguments.is_object() {
            return Err(crate::exit::invalid(format!(
                "--arguments {shown_path}: the arguments of {} are not an object",
                shown(&name)
            )));
        }
        if let Err(why) = check_served(&arguments) {
            return Err(crate::exit::invalid(format!(
                "--arguments {shown_path}: the arguments of {}: {why}",
                shown(&name)
            )));
        }
        given.insert(name, arguments);
    }
    Ok(given)
}

/// The key of an `--arguments` value that stands for part of the catalog.
const SERVED: &str = "$served";

/// The tool and JSON pointer a `$served` value names, when `value` is one.
/// `Err` when it claims to be one but is malformed.
fn served_reference(value: &Map<String, Value>) -> Option<Result<(&str, &str), String>> {
    let reference = value.get(SERVED)?;
    if value.len() != 1 {
        return Some(Err(format!("a {SERVED} object holds other keys beside it")));
    }
    let tool = reference.get("tool").and_then(Value::as_str);
    let pointer = reference.get("pointer").and_then(Value::as_str);
    let fields = reference.as_object().map_or(0, Map::len);
    Some(match (tool, pointer) {
        (Some(tool), Some(pointer))
            if fields == 2 && (pointer.is_empty() || pointer.starts_with('/')) =>
        {
            Ok((tool, pointer))
        }
        _ => Err(format!(
            "{SERVED} takes {{\"tool\": NAME, \"pointer\": a JSON pointer (\"\" or starting with /)}} and nothing else"
        )),
    })
}

/// Refuses a malformed `$served` value anywhere in `value`, before anything
/// is contacted.
fn check_served(value: &Value) -> Result<(), String> {
    match value {
        Value::Object(map) => match served_reference(map) {
            Some(reference) => reference.map(|_| ()),
            None => map.values().try_for_each(check_served),
        },
        Value::Array(items) => items.iter().try_for_each(check_served),
        _ => Ok(()),
    }
}

/// `arguments` with every `$served` value replaced by what it names in the
/// catalog, verbatim; `Err` names the first one the catalog does not hold.
fn served(arguments: &Value, catalog: &[Value]) -> Result<Value, String> {
    match arguments {
        Value::Object(map) => match served_reference(map) {
            Some(Ok((tool, pointer))) => catalog
                .iter()
                .find(|entry| entry.get("name").and_then(Value::as_str) == Some(tool))
                .and_then(|entry| entry.pointer(pointer))
                .cloned()
                .ok_or_else(|| format!("{}'s {:?}", shown(tool), shown(pointer))),
            // Refused when the file was read.
            Some(Err(why)) => Err(why),
            None => map
                .iter()
                .map(|(key, value)| Ok((key.clone(), served(value, catalog)?)))
                .collect::<Result<Map<_, _>, _>>()
                .map(Value::Object),
        },
        Value::Array(items) => items
            .iter()
            .map(|item| served(item, catalog))
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array),
        other => Ok(other.clone()),
    }
}

/// Server text (and error text that may quote it) made safe to print.
fn shown(text: &str) -> String {
    witness_text::clip(text, 200)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn rich_schema() -> Value {
        json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {"address": {"$anchor": "addr", "type": "object"}},
            "properties": {"home": {"$ref": "#/$defs/address"}},
            "additionalProperties": false,
            "allOf": [{"anyOf": [{"required": ["home"]}]}],
            "if": {"required": ["home"]}, "then": {}, "else": {}
        })
    }

    #[test]
    fn a_served_value_is_the_catalog_entry_verbatim_wherever_it_stands() {
        let catalog = [
            json!({"name": "rich", "inputSchema": rich_schema()}),
            json!({"name": "echo", "inputSchema": {"type": "object"}}),
        ];
        let given = json!({
            "schema": {"$served": {"tool": "rich", "pointer": "/inputSchema"}},
            "list": [1, {"$served": {"tool": "rich", "pointer": "/name"}}],
            "whole": {"$served": {"tool": "echo", "pointer": ""}},
            "plain": {"kept": "as written"}
        });
        assert_eq!(check_served(&given), Ok(()));
        let resolved = served(&given, &catalog).expect("every reference is served");
        assert_eq!(
            resolved,
            json!({
                "schema": rich_schema(),
                "list": [1, "rich"],
                "whole": catalog[1],
                "plain": {"kept": "as written"}
            })
        );
        // Key order too: the echo is the served text, not a reshuffle of it.
        assert_eq!(
            resolved["schema"].to_string(),
            catalog[0]["inputSchema"].to_string()
        );
    }

    #[test]
    fn a_served_value_the_catalog_lacks_stops_the_call() {
        let catalog = [json!({"name": "rich", "inputSchema": rich_schema()})];
        for (missing, named) in [
            (
                json!({"s": {"$served": {"tool": "gone", "pointer": "/inputSchema"}}}),
                r#"gone's "/inputSchema""#,
            ),
            (
                json!({"s": [{"$served": {"tool": "rich", "pointer": "/outputSchema"}}]}),
                r#"rich's "/outputSchema""#,
            ),
        ] {
            assert_eq!(served(&missing, &catalog), Err(named.to_owned()));
        }
    }

    #[test]
    fn a_malformed_served_value_is_refused_when_read() {
        for malformed in [
            json!({"s": {"$served": {"tool": "rich"}}}),
            json!({"s": {"$served": {"tool": "rich", "pointer": "inputSchema"}}}),
            json!({"s": {"$served": {"tool": 3, "pointer": ""}}}),
            json!({"s": {"$served": {"tool": "rich", "pointer": "", "x": 1}}}),
            json!({"s": [{"$served": {"tool": "rich", "pointer": ""}, "also": 1}]}),
            json!({"s": {"$served": "rich/inputSchema"}}),
        ] {
            assert!(check_served(&malformed).is_err(), "{malformed}");
        }
    }
}

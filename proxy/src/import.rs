//! A conversation from a host's own transcript: Claude Code's session files
//! (`~/.claude/projects/<project>/<session>.jsonl`).
//!
//! Each line there is an event; those read here are `type: "user"` (the
//! user's words: a string, or `text` blocks; a line that only carries
//! `tool_result` blocks is the host returning results, not a turn) and
//! `type: "assistant"` (`text` and `tool_use` blocks, often one block per
//! line). A tool of MCP server NAME is called `mcp__NAME__TOOL`; calls of
//! other tools (the host's own, other servers') never reached the proxy and
//! are left out. Side chains (sub-agents) and meta lines are skipped.
//! Within a turn, text before a call rides with that call's step; the text
//! after the last call is the turn's reply.

use serde_json::Value;
use witness_model::proxy::{ConversationCall, ConversationLine, Role};

use crate::check::CheckError;

/// The transcript's conversation with server `server`'s tools.
pub fn claude_code(text: &str, server: &str) -> Result<Vec<ConversationLine>, CheckError> {
    let prefix = format!("mcp__{server}__");
    let mut out: Vec<ConversationLine> = Vec::new();
    let mut pending_text: Vec<String> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let event: Value = serde_json::from_str(line).map_err(|e| CheckError::Conversation {
            line: i + 1,
            message: format!("not JSON ({e})"),
        })?;
        let skipped = event.get("isSidechain").and_then(Value::as_bool) == Some(true)
            || event.get("isMeta").and_then(Value::as_bool) == Some(true);
        if skipped {
            continue;
        }
        let content = event.pointer("/message/content");
        match event.get("type").and_then(Value::as_str) {
            Some("user") => {
                let Some(words) = user_words(content) else {
                    continue;
                };
                close_turn(&mut out, &mut pending_text);
                out.push(ConversationLine {
                    role: Role::User,
                    text: Some(words),
                    calls: Vec::new(),
                    end: None,
                });
            }
            Some("assistant") if !out.is_empty() => {
                for block in blocks(content) {
                    match block.get("type").and_then(Value::as_str) {
                        Some("text") => {
                            if let Some(t) = block.get("text").and_then(Value::as_str) {
                                pending_text.push(t.to_owned());
                            }
                        }
                        Some("tool_use") => {
                            let name = block.get("name").and_then(Value::as_str).unwrap_or("");
                            let Some(tool) = name.strip_prefix(&prefix) else {
                                continue;
                            };
                            out.push(ConversationLine {
                                role: Role::Assistant,
                                text: joined(&mut pending_text),
                                calls: vec![ConversationCall {
                                    tool: tool.to_owned(),
                                    arguments: block.get("input").cloned(),
                                }],
                                end: None,
                            });
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    close_turn(&mut out, &mut pending_text);
    if out.is_empty() {
        return Err(CheckError::Conversation {
            line: 0,
            message: "the transcript has no user turn".into(),
        });
    }
    Ok(out)
}

/// The turn's reply: the text after its last call.
fn close_turn(out: &mut Vec<ConversationLine>, pending: &mut Vec<String>) {
    if out.is_empty() {
        pending.clear();
        return;
    }
    out.push(ConversationLine {
        role: Role::Assistant,
        text: joined(pending),
        calls: Vec::new(),
        end: None,
    });
}

fn joined(pending: &mut Vec<String>) -> Option<String> {
    let text = pending.join("\n");
    pending.clear();
    (!text.trim().is_empty()).then_some(text)
}

fn blocks(content: Option<&Value>) -> &[Value] {
    content
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// What the user typed: a string, or the `text` blocks of a line that is
/// not only tool results.
fn user_words(content: Option<&Value>) -> Option<String> {
    if let Some(text) = content.and_then(Value::as_str) {
        return Some(text.to_owned());
    }
    let texts: Vec<&str> = blocks(content)
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .collect();
    (!texts.is_empty()).then(|| texts.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn turns_calls_and_replies_come_out_of_a_claude_code_session() {
        let lines = [
            r#"{"type":"summary","summary":"x"}"#,
            r#"{"type":"user","message":{"role":"user","content":"Delete Dana Kim from our CRM."}}"#,
            r#"{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Let me look."}]}}"#,
            r#"{"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"mcp__crm__search_contacts","input":{"query":"Dana Kim"}}]}}"#,
            r#"{"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","id":"t2","name":"Bash","input":{"command":"ls"}}]}}"#,
            r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"c_150"}]}}"#,
            r#"{"type":"assistant","isSidechain":true,"message":{"role":"assistant","content":[{"type":"text","text":"sub-agent"}]}}"#,
            r#"{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Found c_150. Delete her?"}]}}"#,
            r#"{"type":"user","message":{"role":"user","content":[{"type":"text","text":"Yes."}]}}"#,
        ];
        let got = claude_code(&lines.join("\n"), "crm").expect("imports");
        let shape: Vec<(Role, Option<&str>, Vec<&str>)> = got
            .iter()
            .map(|l| {
                (
                    l.role,
                    l.text.as_deref(),
                    l.calls.iter().map(|c| c.tool.as_str()).collect(),
                )
            })
            .collect();
        assert_eq!(
            shape,
            [
                (Role::User, Some("Delete Dana Kim from our CRM."), vec![]),
                (
                    Role::Assistant,
                    Some("Let me look."),
                    vec!["search_contacts"]
                ),
                (Role::Assistant, Some("Found c_150. Delete her?"), vec![]),
                (Role::User, Some("Yes."), vec![]),
                (Role::Assistant, None, vec![]),
            ]
        );
        assert_eq!(
            got[1].calls[0].arguments,
            Some(serde_json::json!({"query": "Dana Kim"}))
        );
    }
}

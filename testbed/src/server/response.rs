//! The response lane's three tools: `count_notes`, `search_notes` and
//! `lookup_note`, served only by the `response-honest` and `rsp-*`
//! variants. Each `rsp-*` variant breaks exactly one response check here
//! (or, for `rsp-slow`, in `ping`); `response-honest` breaks none.

use std::sync::PoisonError;
use std::sync::atomic::Ordering;

use rmcp::ErrorData as McpError;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject};
use rusqlite::{Connection, OptionalExtension, params};
use serde_json::{Value, json};

use super::NotesServer;
use crate::Variant;

/// Page size when `search_notes` is given no limit.
const DEFAULT_LIMIT: usize = 10;

fn failed(e: impl std::fmt::Display) -> McpError {
    McpError::internal_error(format!("store failed: {e}"), None)
}

fn tool_error(text: impl Into<String>) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text.into())])
}

impl NotesServer {
    /// Answers one of the response tools.
    pub(super) fn respond(
        &self,
        name: &str,
        args: &JsonObject,
    ) -> Result<CallToolResult, McpError> {
        let conn = self.conn.lock().unwrap_or_else(PoisonError::into_inner);
        match name {
            "count_notes" => self.count_notes(&conn),
            "search_notes" => self.search_notes(&conn, args),
            _ => self.lookup_note(&conn, args),
        }
    }

    fn count_notes(&self, conn: &Connection) -> Result<CallToolResult, McpError> {
        if self.variant == Variant::RspCountingWrite {
            conn.execute(
                "INSERT INTO telemetry(event, at) VALUES ('count', ?1)",
                params![self.now],
            )
            .map_err(failed)?;
        }
        let count: i64 = conn
            .query_row("SELECT COUNT(*) FROM notes", [], |r| r.get(0))
            .map_err(failed)?;
        Ok(match self.variant {
            Variant::RspUnavailable => tool_error("The note index is unavailable."),
            Variant::RspSchemaViolation => CallToolResult::structured(json!({"count": "many"})),
            Variant::RspDrifting => {
                let asked = self.asked.fetch_add(1, Ordering::Relaxed) + 1;
                CallToolResult::structured(json!({"count": count, "asked": asked}))
            }
            _ => CallToolResult::structured(json!({"count": count})),
        })
    }

    fn search_notes(
        &self,
        conn: &Connection,
        args: &JsonObject,
    ) -> Result<CallToolResult, McpError> {
        let query = match args.get("query") {
            None => "",
            Some(Value::String(q)) => q.as_str(),
            Some(_) => return Ok(tool_error("'query' must be a string.")),
        };
        let limit = match args.get("limit") {
            None => DEFAULT_LIMIT,
            Some(v) => match v.as_u64().filter(|n| (1..=100).contains(n)) {
                Some(n) => n as usize,
                None => return Ok(tool_error("'limit' must be an integer from 1 to 100.")),
            },
        };
        let after = match args.get("cursor") {
            None => None,
            Some(Value::String(c)) => match c.strip_prefix("after:") {
                Some(id) => Some(id.to_owned()),
                None => return Ok(tool_error("Unknown cursor.")),
            },
            Some(_) => return Ok(tool_error("'cursor' must be a string.")),
        };
        let mut stmt = conn
            .prepare("SELECT id FROM notes WHERE instr(id, ?1) > 0 ORDER BY id")
            .map_err(failed)?;
        let ids = stmt
            .query_map(params![query], |r| r.get::<_, String>(0))
            .map_err(failed)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(failed)?;
        let rest: Vec<&String> = ids
            .iter()
            .filter(|id| after.as_ref().is_none_or(|a| id.as_str() > a.as_str()))
            .collect();
        let take = if self.variant == Variant::RspOverLimit {
            rest.len()
        } else {
            limit.min(rest.len())
        };
        let page = &rest[..take];
        let mut answer =
            json!({"items": page.iter().map(|id| json!({"id": id})).collect::<Vec<_>>()});
        if take < rest.len()
            && let Some(last) = page.last()
        {
            let next = match (self.variant, ids.get(limit.saturating_sub(1))) {
                // The planted loop: always the first page's cursor.
                (Variant::RspLoopingCursor, Some(first_last)) => format!("after:{first_last}"),
                _ => format!("after:{last}"),
            };
            answer["nextCursor"] = json!(next);
        }
        Ok(CallToolResult::structured(answer))
    }

    fn lookup_note(
        &self,
        conn: &Connection,
        args: &JsonObject,
    ) -> Result<CallToolResult, McpError> {
        let id = match args.get("id") {
            Some(Value::String(id)) if !id.is_empty() => id,
            _ if self.variant == Variant::RspWrongCode => {
                return Err(McpError::internal_error("lookup failed", None));
            }
            _ => {
                return Err(McpError::invalid_params(
                    "'id' is required and must be a non-empty string",
                    None,
                ));
            }
        };
        let body: Option<String> = conn
            .query_row("SELECT body FROM notes WHERE id = ?1", params![id], |r| {
                r.get(0)
            })
            .optional()
            .map_err(failed)?;
        match body {
            Some(body) => Ok(CallToolResult::success(vec![ContentBlock::text(body)])),
            None if self.variant == Variant::RspErrorAsRpc => {
                Err(McpError::invalid_params(format!("no note '{id}'"), None))
            }
            None => Ok(tool_error(format!("No note '{id}'."))),
        }
    }
}

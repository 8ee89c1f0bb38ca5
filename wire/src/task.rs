//! Tool calls as tasks: a tool whose `execution.taskSupport` is `required`
//! refuses a plain `tools/call`, so it is called with a task (the
//! 2025-11-25 `task` parameter) and the task is polled with `tasks/get`
//! until it ends; its result then comes from `tasks/result`, or from the
//! ended task itself where the server puts it there (the 2026-07-28 tasks
//! extension's shape).
//!
//! The whole task is one call to the caller: [`Session::call_tool_as_task`]
//! returns only when the task has ended (or was given up on), so whatever
//! observes around the call has the whole task inside its window.

use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use crate::rpc::{PROGRESS_CEILING, RpcResponse};
use crate::session::{CallOutcome, Session};

/// How long the server is asked to keep the task (`task.ttl`), in ms: long
/// enough to outlive the longest wait below.
const TASK_TTL_MS: u64 = 300_000;
/// Polling is paced by the task's `pollInterval`, within these bounds: a
/// server asking for a poll a minute would outlast the wait, and one asking
/// for none would be flooded.
const MIN_POLL: Duration = Duration::from_millis(50);
const MAX_POLL: Duration = Duration::from_millis(1_000);
/// The interval when the task names none.
const DEFAULT_POLL: Duration = Duration::from_millis(250);

/// Whether a tool whose `execution` is this, as served, must be called as
/// a task. `optional` is not enough: a user's client calls such a tool
/// plainly, and so does the audit.
pub fn task_required(execution: &Value) -> bool {
    execution.get("taskSupport").and_then(Value::as_str) == Some("required")
}

/// How a task-augmented call ended, as the task last reported it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskEnd {
    Completed,
    Failed,
    Cancelled,
    /// Still working when the wait ended: asked to cancel, result unknown.
    Unfinished,
    /// The server answered the call at once, with no task.
    NotMade,
}

impl TaskEnd {
    /// The word the ledger records.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskEnd::Completed => "completed",
            TaskEnd::Failed => "failed",
            TaskEnd::Cancelled => "cancelled",
            TaskEnd::Unfinished => "unfinished",
            TaskEnd::NotMade => "not-made",
        }
    }
}

/// A task's id and status, read from a `CreateTaskResult` (`{"task": {…}}`)
/// or a flat task (`tasks/get`'s answer, the extension's `resultType:
/// "task"`).
struct TaskState {
    id: String,
    status: String,
    poll: Duration,
    /// The final result, where the ended task carries it.
    result: Option<Value>,
}

fn task_state(answer: &Value) -> Option<TaskState> {
    let task = match answer.get("task") {
        Some(task) if task.is_object() => task,
        _ => answer,
    };
    let id = task.get("taskId")?.as_str()?.to_owned();
    let status = task
        .get("status")
        .and_then(Value::as_str)
        .unwrap_or("working")
        .to_owned();
    let poll = task
        .get("pollInterval")
        .or_else(|| task.get("pollIntervalMs"))
        .and_then(Value::as_u64)
        .map_or(DEFAULT_POLL, Duration::from_millis)
        .clamp(MIN_POLL, MAX_POLL);
    let result = task.get("result").filter(|r| r.is_object()).cloned();
    Some(TaskState {
        id,
        status,
        poll,
        result,
    })
}

fn ended(status: &str) -> Option<TaskEnd> {
    match status {
        "completed" => Some(TaskEnd::Completed),
        "failed" => Some(TaskEnd::Failed),
        "cancelled" => Some(TaskEnd::Cancelled),
        _ => None,
    }
}

impl Session {
    /// Calls one tool as a task and waits for the task to end: up to the
    /// longer of the session's timeout and [`PROGRESS_CEILING`] in all, as
    /// a call reporting progress is waited for. Never fails: every way it
    /// can end is a [`CallOutcome`], with how the task ended.
    pub fn call_tool_as_task(&mut self, name: &str, arguments: &Value) -> (CallOutcome, TaskEnd) {
        let started = Instant::now();
        let wait = PROGRESS_CEILING.max(self.timeout);
        let mut task = Map::new();
        task.insert("task".into(), json!({"ttl": TASK_TTL_MS}));
        let (params, token) = self.tool_call(name, arguments, task);
        let created = match self.server.rpc.request_with_progress(
            "tools/call",
            params,
            token,
            self.timeout,
            PROGRESS_CEILING,
        ) {
            Ok(RpcResponse::Result(result)) => result,
            Ok(RpcResponse::Error { code, message, .. }) => {
                return (CallOutcome::RpcError { code, message }, TaskEnd::NotMade);
            }
            Err(e) => return (CallOutcome::Transport(e.to_string()), TaskEnd::NotMade),
        };
        let Some(mut task) = task_state(&created) else {
            return (CallOutcome::Result(created), TaskEnd::NotMade);
        };
        // Poll until the task ends, or asks for input: `tasks/result` is
        // where a task delivers the requests it is waiting on.
        while ended(&task.status).is_none() && task.status != "input_required" {
            if started.elapsed() + task.poll > wait {
                self.cancel(&task.id);
                let message = format!(
                    "task still {} after {} ms; asked to cancel it",
                    task.status,
                    started.elapsed().as_millis()
                );
                return (CallOutcome::Transport(message), TaskEnd::Unfinished);
            }
            std::thread::sleep(task.poll);
            let params = self.task_params(&task.id);
            match self.server.rpc.request("tasks/get", params, self.timeout) {
                Ok(RpcResponse::Result(answer)) => match task_state(&answer) {
                    Some(next) => task = next,
                    None => {
                        let message = "tasks/get answered without a task".to_owned();
                        return (CallOutcome::Transport(message), TaskEnd::Unfinished);
                    }
                },
                Ok(RpcResponse::Error { code, message, .. }) => {
                    return (CallOutcome::RpcError { code, message }, TaskEnd::Unfinished);
                }
                Err(e) => return (CallOutcome::Transport(e.to_string()), TaskEnd::Unfinished),
            }
        }
        let end = ended(&task.status);
        if let Some(result) = task.result.take() {
            return (
                CallOutcome::Result(result),
                end.unwrap_or(TaskEnd::Completed),
            );
        }
        let params = self.task_params(&task.id);
        let left = wait.saturating_sub(started.elapsed()).max(self.timeout);
        match self.server.rpc.request("tasks/result", params, left) {
            Ok(RpcResponse::Result(result)) => (
                CallOutcome::Result(result),
                end.unwrap_or(TaskEnd::Completed),
            ),
            Ok(RpcResponse::Error { code, message, .. }) => (
                CallOutcome::RpcError { code, message },
                end.unwrap_or(TaskEnd::Failed),
            ),
            Err(e) => (
                CallOutcome::Transport(e.to_string()),
                end.unwrap_or(TaskEnd::Unfinished),
            ),
        }
    }

    /// The params of a request about task `id`.
    fn task_params(&self, id: &str) -> Value {
        let mut params = Map::new();
        params.insert("taskId".into(), Value::String(id.to_owned()));
        self.params(params)
    }

    /// Asks the server to cancel a task it is still working on; its answer
    /// changes nothing here (the call is already given up on).
    fn cancel(&mut self, id: &str) {
        let params = self.task_params(id);
        let _ = self
            .server
            .rpc
            .request("tasks/cancel", params, self.timeout);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_created_task_and_a_polled_one_read_alike() {
        let created = json!({"task": {"taskId": "t1", "status": "working", "pollInterval": 5000}});
        let state = task_state(&created).map(|t| (t.id, t.status, t.poll));
        assert_eq!(
            state,
            Some(("t1".to_owned(), "working".to_owned(), MAX_POLL))
        );
        let polled = json!({"taskId": "t1", "status": "completed", "result": {"content": []}});
        let state = task_state(&polled);
        assert!(state.as_ref().is_some_and(|t| t.result.is_some()));
        assert_eq!(state.map(|t| t.poll), Some(DEFAULT_POLL));
    }

    #[test]
    fn a_plain_result_is_no_task() {
        assert!(task_state(&json!({"content": [], "isError": false})).is_none());
    }

    #[test]
    fn only_a_required_task_support_calls_as_a_task() {
        assert!(task_required(&json!({"taskSupport": "required"})));
        assert!(!task_required(&json!({"taskSupport": "optional"})));
        assert!(!task_required(&json!({})));
    }
}

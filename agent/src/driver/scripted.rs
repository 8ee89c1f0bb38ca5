//! Replies read from a script: tests, planted behaviours, demonstrations.
//!
//! ```toml
//! [[model]]
//! name = "careful"
//!
//! [[model.case]]
//! id = "add-dana-missing"
//!
//! [[model.case.reply]]
//! calls = [{ tool = "search_contacts", args = { query = "Dana Kim" } }]
//!
//! [[model.case.reply]]
//! text = "Dana Kim is not in the CRM yet. Shall I add her?"
//!
//! [judge]
//! [[judge.reply]]
//! text = '{"grades": [{"item": 1, "correct": true}]}'
//! ```
//!
//! A reply is text, tool calls, or both; or `refusal = "..."` (the model
//! refuses), `malformed = [{ tool, raw }]` (calls whose arguments are not a
//! JSON object), `error = "..."` (the endpoint fails: the run is
//! untestable), and `stop` to say why it stopped (`max_tokens`, ...). Every
//! repetition of a case replays its replies from the first; the judge's
//! replies are taken in order, one per batch.

use std::path::Path;

use serde::Deserialize;
use serde_json::{Map, Value};
use witness_model::agent::{ModelReply, RequestedCall};
use witness_model::vocab::{DriverKind, StopReason};

use super::{Answer, Driver, DriverError, Request, RunKey};

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScriptFile {
    #[serde(rename = "model")]
    models: Vec<ScriptModel>,
    #[serde(default)]
    judge: Option<ScriptJudge>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScriptModel {
    name: String,
    #[serde(default, rename = "case")]
    cases: Vec<ScriptCase>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScriptCase {
    id: String,
    #[serde(default, rename = "reply")]
    replies: Vec<ScriptReply>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScriptJudge {
    #[serde(default, rename = "reply")]
    replies: Vec<ScriptReply>,
}

/// One scripted reply.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScriptReply {
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    calls: Vec<ScriptCall>,
    #[serde(default)]
    malformed: Vec<ScriptMalformed>,
    #[serde(default)]
    refusal: Option<String>,
    #[serde(default)]
    stop: Option<StopReason>,
    #[serde(default)]
    error: Option<String>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScriptCall {
    tool: String,
    #[serde(default)]
    args: Map<String, Value>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScriptMalformed {
    tool: String,
    raw: String,
}

/// Why a script cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    #[error("cannot read the script {path}: {source}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("the script {path} is not valid: {message}")]
    Invalid { path: String, message: String },
}

/// The scripted driver.
#[derive(Debug)]
pub struct Scripted {
    script: ScriptFile,
    queue: std::collections::VecDeque<ScriptReply>,
    judge_next: usize,
}

impl Scripted {
    pub fn load(path: &Path) -> Result<Self, ScriptError> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| ScriptError::Read {
            path: shown.clone(),
            source,
        })?;
        Self::parse(&text).map_err(|message| ScriptError::Invalid {
            path: shown,
            message,
        })
    }

    /// A script from its text; errors are one line.
    pub fn parse(text: &str) -> Result<Self, String> {
        let script: ScriptFile = toml::from_str(text).map_err(|e| {
            e.message()
                .lines()
                .next()
                .unwrap_or("invalid TOML")
                .to_owned()
        })?;
        if script.models.is_empty() {
            return Err("it scripts no [[model]]".into());
        }
        for (i, model) in script.models.iter().enumerate() {
            if script.models[..i].iter().any(|m| m.name == model.name) {
                return Err(format!("model {:?} is scripted twice", model.name));
            }
        }
        Ok(Self {
            script,
            queue: Default::default(),
            judge_next: 0,
        })
    }

    /// The scripted models, in file order.
    pub fn models(&self) -> Vec<String> {
        self.script.models.iter().map(|m| m.name.clone()).collect()
    }
}

impl Driver for Scripted {
    fn kind(&self) -> DriverKind {
        DriverKind::Scripted
    }

    fn begin(&mut self, key: &RunKey) -> Result<(), DriverError> {
        self.queue.clear();
        match key {
            RunKey::Case { case, model, .. } => {
                let script = self
                    .script
                    .models
                    .iter()
                    .find(|m| &m.name == model)
                    .and_then(|m| m.cases.iter().find(|c| &c.id == case))
                    .ok_or_else(|| {
                        DriverError::Script(format!(
                            "the script has no replies for case {case} and model {model}"
                        ))
                    })?;
                self.queue.extend(script.replies.iter().cloned());
            }
            RunKey::Judge { .. } => {
                let replies = self
                    .script
                    .judge
                    .as_ref()
                    .map_or(&[][..], |j| &j.replies[..]);
                if let Some(reply) = replies.get(self.judge_next) {
                    self.queue.push_back(reply.clone());
                }
                self.judge_next += 1;
            }
        }
        Ok(())
    }

    fn complete(&mut self, _model: &str, request: &Request<'_>) -> Answer {
        let reply = match self.queue.pop_front() {
            None => Err(DriverError::Script(
                "the script has no reply left for this conversation".into(),
            )),
            Some(scripted) => reply_of(scripted),
        };
        Answer::new(request, reply, None)
    }
}

/// A scripted reply in the common form.
fn reply_of(scripted: ScriptReply) -> Result<ModelReply, DriverError> {
    if let Some(error) = scripted.error {
        return Err(DriverError::Script(error));
    }
    let mut calls: Vec<RequestedCall> = scripted
        .calls
        .into_iter()
        .map(|c| RequestedCall {
            id: String::new(),
            tool: c.tool,
            arguments: Value::Object(c.args),
            malformed: None,
        })
        .collect();
    calls.extend(scripted.malformed.into_iter().map(|m| RequestedCall {
        id: String::new(),
        tool: m.tool,
        arguments: Value::Null,
        malformed: Some(format!("not JSON: {}", m.raw)),
    }));
    let stop = scripted.stop.unwrap_or(if scripted.refusal.is_some() {
        StopReason::Refusal
    } else if calls.is_empty() {
        StopReason::EndTurn
    } else {
        StopReason::ToolUse
    });
    Ok(ModelReply {
        text: scripted.text,
        calls,
        stop,
        refusal: scripted.refusal,
        usage: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCRIPT: &str = r#"
        [[model]]
        name = "a"
        [[model.case]]
        id = "c"
        [[model.case.reply]]
        calls = [{ tool = "t", args = { x = 1 } }]
        [[model.case.reply]]
        text = "done"
        [judge]
        [[judge.reply]]
        error = "judge down"
    "#;

    fn request() -> Request<'static> {
        Request {
            system: "",
            tools: &[],
            messages: &[],
            max_tokens: 1,
        }
    }

    #[test]
    fn every_run_of_a_case_starts_from_its_first_reply() {
        let Ok(mut driver) = Scripted::parse(SCRIPT) else {
            panic!("parses");
        };
        assert_eq!(driver.models(), ["a"]);
        let key = RunKey::Case {
            case: "c".into(),
            model: "a".into(),
            run: 1,
        };
        for _ in 0..2 {
            assert!(driver.begin(&key).is_ok());
            let first = driver.complete("a", &request());
            let calls = first.reply.map(|r| r.calls).unwrap_or_default();
            assert_eq!(calls[0].arguments, serde_json::json!({"x": 1}));
            let second = driver.complete("a", &request());
            assert_eq!(
                second.reply.ok().and_then(|r| r.text).as_deref(),
                Some("done")
            );
            let none = driver.complete("a", &request());
            assert!(none.reply.is_err());
            assert!(none.record.error.is_some());
        }
        let other = RunKey::Case {
            case: "other".into(),
            model: "a".into(),
            run: 1,
        };
        assert!(driver.begin(&other).is_err());
        assert!(driver.begin(&RunKey::Judge { batch: 0 }).is_ok());
        let judged = driver.complete("j", &request());
        assert_eq!(judged.record.error.as_deref(), Some("judge down"));
    }

    #[test]
    fn bad_scripts_are_one_line_errors() {
        assert!(Scripted::parse("").is_err());
        assert!(Scripted::parse("[[model]]\nname = \"a\"\nbogus = 1").is_err());
        let twice = "[[model]]\nname = \"a\"\n[[model]]\nname = \"a\"";
        assert_eq!(
            Scripted::parse(twice).err().as_deref(),
            Some("model \"a\" is scripted twice")
        );
    }
}

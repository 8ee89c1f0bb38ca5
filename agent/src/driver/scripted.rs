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
//!
//! Two additions model what a fixed list cannot:
//!
//! - `chance = P` on a reply (0 to 1) makes it occur in some repetitions
//!   only, as a model's variation between runs does. Whether it occurs is a
//!   draw: the top 53 bits of the first 8 bytes (little-endian) of blake3
//!   over `seed`, the model, the case, the repetition and the reply's index,
//!   each followed by a NUL but the last, read as a fraction of 2^53, below P.
//!   The seed is `--seed` (default 1): one seed reproduces a run exactly,
//!   another is a rerun.
//! - `follows_recommendations = true` on a model makes it read the tool
//!   definitions it is handed and follow a description's recommendation of
//!   another tool before the scripted call (the rule is [`super::policy`]'s).

use std::path::Path;

use serde::Deserialize;
use serde_json::{Map, Value};
use witness_model::agent::{ModelReply, RequestedCall};
use witness_model::vocab::{DriverKind, StopReason};

use super::{Answer, Driver, DriverError, Request, RunKey, policy};

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
    /// Reads the handed descriptions and follows their recommendations.
    #[serde(default)]
    follows_recommendations: bool,
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
    /// The probability this reply occurs in a repetition (default 1).
    #[serde(default)]
    chance: Option<f64>,
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

/// The seed of the draws when none is given.
pub const DEFAULT_SEED: u64 = 1;

/// The scripted driver.
#[derive(Debug)]
pub struct Scripted {
    script: ScriptFile,
    queue: std::collections::VecDeque<ScriptReply>,
    judge_next: usize,
    /// The seed of the `chance` draws.
    seed: u64,
    /// The current conversation's model follows recommendations.
    follows: bool,
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
            let chances = model.cases.iter().flat_map(|c| &c.replies);
            if let Some(bad) = chances
                .filter_map(|r| r.chance)
                .find(|p| !(0.0..=1.0).contains(p))
            {
                return Err(format!(
                    "model {:?}: a chance must be between 0 and 1, not {bad}",
                    model.name
                ));
            }
        }
        Ok(Self {
            script,
            queue: Default::default(),
            judge_next: 0,
            seed: DEFAULT_SEED,
            follows: false,
        })
    }

    /// The same script drawing with another seed.
    pub fn with_seed(self, seed: u64) -> Self {
        Self { seed, ..self }
    }

    /// Whether any reply of the script is drawn (has a `chance`).
    pub fn draws(&self) -> bool {
        self.script
            .models
            .iter()
            .flat_map(|m| &m.cases)
            .flat_map(|c| &c.replies)
            .any(|r| r.chance.is_some())
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
        self.follows = false;
        match key {
            RunKey::Case { case, model, run } => {
                let scripted = self.script.models.iter().find(|m| &m.name == model);
                let script = scripted
                    .and_then(|m| m.cases.iter().find(|c| &c.id == case))
                    .ok_or_else(|| {
                        DriverError::Script(format!(
                            "the script has no replies for case {case} and model {model}"
                        ))
                    })?;
                self.follows = scripted.is_some_and(|m| m.follows_recommendations);
                let seed = self.seed;
                let occurs = |(index, reply): &(usize, &ScriptReply)| {
                    reply
                        .chance
                        .is_none_or(|p| draw(seed, model, case, *run, *index) < p)
                };
                let replies = script.replies.iter().enumerate().filter(occurs);
                self.queue.extend(replies.map(|(_, r)| r.clone()));
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
            Some(scripted) => match reply_of(scripted.clone()) {
                Ok(reply) if self.follows => {
                    match policy::detour(&reply.calls, request.tools, request.messages) {
                        Some(call) => {
                            // The scripted reply waits for the next request.
                            self.queue.push_front(scripted);
                            Ok(ModelReply {
                                text: None,
                                calls: vec![call],
                                stop: StopReason::ToolUse,
                                refusal: None,
                                usage: None,
                            })
                        }
                        None => Ok(reply),
                    }
                }
                other => other,
            },
        };
        Answer::new(request, reply, None)
    }
}

/// A fraction in [0, 1) drawn from the seed, the model, the case, the
/// repetition and the reply's index: the same inputs, the same draw.
fn draw(seed: u64, model: &str, case: &str, run: u32, index: usize) -> f64 {
    let input = format!("{seed}\0{model}\0{case}\0{run}\0{index}");
    let hash = blake3::hash(input.as_bytes());
    let mut bytes = [0u8; 8];
    bytes.copy_from_slice(&hash.as_bytes()[..8]);
    // The top 53 bits, which an f64 holds exactly: the quotient is below 1.
    (u64::from_le_bytes(bytes) >> 11) as f64 / 9_007_199_254_740_992.0
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
    use crate::driver::Message;
    use witness_model::agent::ToolDefinition;

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

    const DRAWN: &str = r#"
        [[model]]
        name = "reader"
        follows_recommendations = true
        [[model.case]]
        id = "c"
        [[model.case.reply]]
        calls = [{ tool = "lookup_order", args = { id = "o_1" } }]
        [[model.case.reply]]
        chance = 0.5
        text = "sometimes"
        [[model.case.reply]]
        text = "always"
    "#;

    fn key(run: u32) -> RunKey {
        RunKey::Case {
            case: "c".into(),
            model: "reader".into(),
            run,
        }
    }

    /// Every reply text of one repetition, without tools handed.
    fn texts(driver: &mut Scripted, run: u32) -> Vec<String> {
        assert!(driver.begin(&key(run)).is_ok());
        let mut out = Vec::new();
        while let Ok(reply) = driver.complete("reader", &request()).reply {
            out.push(reply.text.unwrap_or_else(|| "calls".into()));
        }
        out
    }

    #[test]
    fn a_chance_reply_occurs_in_some_repetitions_the_same_way_for_one_seed() {
        let Ok(mut driver) = Scripted::parse(DRAWN) else {
            panic!("parses");
        };
        assert!(driver.draws());
        let pattern = |driver: &mut Scripted| -> Vec<usize> {
            (1..=40).map(|run| texts(driver, run).len()).collect()
        };
        let first = pattern(&mut driver);
        assert_eq!(first, pattern(&mut driver), "one seed, one draw");
        let with = first.iter().filter(|&&n| n == 3).count();
        assert!(
            (8..=32).contains(&with),
            "about half of 40 repetitions: {with}"
        );
        assert!(first.iter().all(|&n| n == 2 || n == 3));
        let other = pattern(&mut Scripted::parse(DRAWN).expect("parses").with_seed(2));
        assert_ne!(first, other, "another seed is a rerun");
        assert!(draw(1, "m", "c", 1, 0) < 1.0 && draw(1, "m", "c", 1, 0) >= 0.0);
        let never = DRAWN.replace("chance = 0.5", "chance = 0.0");
        let mut never = Scripted::parse(&never).expect("parses");
        assert!((1..=20).all(|run| texts(&mut never, run).len() == 2));
        let bad = DRAWN.replace("chance = 0.5", "chance = 1.5");
        assert!(Scripted::parse(&bad).is_err_and(|e| e.contains("between 0 and 1")));
    }

    #[test]
    fn a_reader_follows_a_recommendation_in_the_definitions_it_is_handed() {
        let tool = |name: &str, description: &str| ToolDefinition {
            name: name.into(),
            description: description.into(),
            input_schema: serde_json::json!({"type": "object",
                "properties": {"q": {"type": "string"}}, "required": ["q"]}),
        };
        let hinted = [
            tool(
                "lookup_order",
                "Looks up an order. Prefer search_orders when unsure.",
            ),
            tool("search_orders", "Searches."),
        ];
        let plain = [
            tool("lookup_order", "Looks up an order."),
            hinted[1].clone(),
        ];
        let Ok(mut driver) = Scripted::parse(DRAWN) else {
            panic!("parses");
        };
        let first_tool = |driver: &mut Scripted, tools: &[ToolDefinition]| {
            assert!(driver.begin(&key(1)).is_ok());
            let asked = Request { tools, ..request() };
            let reply = driver.complete("reader", &asked).reply.expect("a reply");
            reply
                .calls
                .first()
                .map(|c| (c.tool.clone(), c.arguments.clone()))
        };
        let detour = first_tool(&mut driver, &hinted);
        assert_eq!(
            detour,
            Some(("search_orders".into(), serde_json::json!({"q": "o_1"})))
        );
        // The scripted call comes next, once search_orders is in the conversation.
        let searched = [Message::Assistant {
            text: None,
            calls: vec![RequestedCall {
                id: "x".into(),
                tool: "search_orders".into(),
                arguments: serde_json::json!({"q": "o_1"}),
                malformed: None,
            }],
        }];
        let next = Request {
            tools: &hinted,
            messages: &searched,
            ..request()
        };
        let reply = driver.complete("reader", &next).reply.expect("a reply");
        assert_eq!(reply.calls[0].tool, "lookup_order");
        assert_eq!(
            first_tool(&mut driver, &plain).map(|c| c.0).as_deref(),
            Some("lookup_order")
        );
        // A model that does not follow recommendations ignores the sentence.
        let deaf = DRAWN.replace("follows_recommendations = true", "");
        let mut deaf = Scripted::parse(&deaf).expect("parses");
        assert_eq!(
            first_tool(&mut deaf, &hinted).map(|c| c.0).as_deref(),
            Some("lookup_order")
        );
    }
}

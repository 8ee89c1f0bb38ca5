//! SEP-2322, multi-round-trip requests: how the client answers a result of
//! `resultType: "input_required"`.
//!
//! In 2026-07-28 a server that needs something from its client mid-call
//! (a confirmation, a model's answer, the client's roots) does not send a
//! request of its own: it ends the call with `inputRequests` (a map from
//! its keys to embedded requests) and perhaps an opaque `requestState`,
//! and the client sends the call again, under a new JSON-RPC id, with
//! `inputResponses` under the same keys and `requestState` echoed exactly.
//! The client answers only what it declared: an elicitation with the
//! specification's refusal (`decline`) unless its [`ClientPolicy`] says it
//! confirms, `roots/list` with the empty list when it declared roots, and
//! nothing else (sampling, anything unknown), which ends the call. The
//! answers travel in the retried request, so the transcript holds each.

use serde_json::{Map, Value, json};

/// Rounds of input one call may take before the client gives up: a server
/// that keeps asking cannot hold the call forever.
pub const MAX_INPUT_ROUNDS: u32 = 8;

/// What the client says when a server asks for a user's input.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Elicitation {
    /// Declares no elicitation capability, and answers any elicitation with
    /// `decline`: a witness answers no form on a user's behalf.
    #[default]
    Refuse,
    /// Declares form elicitation and confirms: accepts a form it can fill
    /// from the form's own defaults and with `true` for its yes/no
    /// questions, and declines any other (a URL to visit, a free-text
    /// answer nobody gave).
    Confirm,
}

/// What a session's client declares and therefore answers. The default is
/// an audit's: nothing declared, every elicitation refused.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClientPolicy {
    pub elicitation: Elicitation,
}

impl ClientPolicy {
    /// The `clientCapabilities` this policy declares.
    pub fn capabilities(&self) -> Value {
        match self.elicitation {
            Elicitation::Refuse => json!({}),
            Elicitation::Confirm => json!({"elicitation": {"form": {}}}),
        }
    }
}

/// What to do with one result of a call.
#[derive(Debug, PartialEq)]
pub enum Round {
    /// The call is over: the result is final (`complete`, or no `resultType`).
    Complete,
    /// Send the call again with these params beside its name and arguments.
    Retry(Map<String, Value>),
    /// The server wants what the client will not give; the call ends here.
    Stop(String),
}

/// The next step after `result`, the answer to round `round` (1 for the
/// first request). `roots` says whether the client declared roots.
pub fn next_round(result: &Value, round: u32, policy: &ClientPolicy, roots: bool) -> Round {
    match result.get("resultType").and_then(Value::as_str) {
        None | Some("complete") => return Round::Complete,
        Some("input_required") => {}
        Some(other) => {
            return Round::Stop(format!(
                "a result of resultType {:?}, which the client does not know",
                witness_text::clip(other, 40)
            ));
        }
    }
    if round >= MAX_INPUT_ROUNDS {
        return Round::Stop(format!(
            "the server still asked for input after {MAX_INPUT_ROUNDS} rounds"
        ));
    }
    let requests = result.get("inputRequests").and_then(Value::as_object);
    let state = result.get("requestState");
    if requests.is_none_or(Map::is_empty) && state.is_none() {
        return Round::Stop("input_required without inputRequests or requestState".into());
    }
    let mut params = Map::new();
    if let Some(requests) = requests.filter(|r| !r.is_empty()) {
        let mut responses = Map::new();
        for (key, request) in requests {
            match answer(request, policy, roots) {
                Ok(response) => {
                    responses.insert(key.clone(), response);
                }
                Err(detail) => return Round::Stop(detail),
            }
        }
        params.insert("inputResponses".into(), Value::Object(responses));
    }
    if let Some(state) = state {
        params.insert("requestState".into(), state.clone());
    }
    Round::Retry(params)
}

/// The client's answer to one embedded request, or why it gives none.
fn answer(request: &Value, policy: &ClientPolicy, roots: bool) -> Result<Value, String> {
    let method = request.get("method").and_then(Value::as_str).unwrap_or("");
    match method {
        "elicitation/create" => Ok(elicit(request.get("params"), policy)),
        "roots/list" if roots => Ok(json!({"roots": []})),
        "roots/list" => {
            Err("the server asked for roots/list input; the client declared no roots".into())
        }
        "" => Err("an input request without a method".into()),
        other => Err(format!(
            "the server asked for {} input, which the client does not give",
            witness_text::clip(other, 60)
        )),
    }
}

fn elicit(params: Option<&Value>, policy: &ClientPolicy) -> Value {
    if policy.elicitation == Elicitation::Refuse {
        return json!({"action": "decline"});
    }
    confirm(params)
}

/// A confirming client's answer to an elicitation (`params` as the
/// request carries them), in either era: `accept` with the form's answers
/// when the form is a confirmation, `decline` otherwise.
pub fn confirm(params: Option<&Value>) -> Value {
    let decline = json!({"action": "decline"});
    let Some(params) = params else {
        return decline;
    };
    if params.get("mode").and_then(Value::as_str) == Some("url") {
        return decline;
    }
    match confirmation(params.get("requestedSchema")) {
        Some(content) => json!({"action": "accept", "content": content}),
        None => decline,
    }
}

/// One line for the record of an elicitation and its answer:
/// `accept: <message>` (the server's message, clipped).
pub fn answered(params: Option<&Value>, answer: &Value) -> String {
    let action = answer
        .get("action")
        .and_then(Value::as_str)
        .unwrap_or("decline");
    let message = params
        .and_then(|p| p.get("message"))
        .and_then(Value::as_str)
        .unwrap_or("");
    format!("{action}: {}", witness_text::clip(message, 200))
}

/// The record lines of the elicitations a result asked for and `retry`
/// answers, in the order of their keys.
pub fn elicitations_in(result: &Value, retry: &Map<String, Value>) -> Vec<String> {
    let Some(requests) = result.get("inputRequests").and_then(Value::as_object) else {
        return Vec::new();
    };
    requests
        .iter()
        .filter(|(_, r)| r.get("method").and_then(Value::as_str) == Some("elicitation/create"))
        .map(|(key, request)| {
            let answer = retry
                .get("inputResponses")
                .and_then(|r| r.get(key))
                .cloned()
                .unwrap_or(Value::Null);
            answered(request.get("params"), &answer)
        })
        .collect()
}

/// A form's answers when it is a confirmation: every field has a default
/// or is a yes/no question (answered yes); a required field that is
/// neither makes it no confirmation.
fn confirmation(schema: Option<&Value>) -> Option<Map<String, Value>> {
    let properties = match schema.and_then(|s| s.get("properties")) {
        None => return Some(Map::new()),
        Some(properties) => properties.as_object()?,
    };
    let required: Vec<&str> = schema
        .and_then(|s| s.get("required"))
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut content = Map::new();
    for (name, field) in properties {
        if let Some(default) = field.get("default") {
            content.insert(name.clone(), default.clone());
        } else if field.get("type").and_then(Value::as_str) == Some("boolean") {
            content.insert(name.clone(), Value::Bool(true));
        } else if required.contains(&name.as_str()) {
            return None;
        }
    }
    Some(content)
}

#[cfg(test)]
mod tests {
    use super::*;

    const REFUSE: ClientPolicy = ClientPolicy {
        elicitation: Elicitation::Refuse,
    };
    const CONFIRM: ClientPolicy = ClientPolicy {
        elicitation: Elicitation::Confirm,
    };

    fn confirm_request() -> Value {
        json!({"method": "elicitation/create", "params": {"message": "Sure?",
            "requestedSchema": {"type": "object", "properties": {"confirmed": {"type": "boolean"}}}}})
    }

    #[test]
    fn a_final_result_ends_the_call_with_or_without_result_type() {
        for result in [json!({"content": []}), json!({"resultType": "complete"})] {
            assert_eq!(next_round(&result, 1, &REFUSE, false), Round::Complete);
        }
    }

    #[test]
    fn state_is_echoed_exactly_and_elicitation_refused_by_default() {
        let state = "{\"nonce\":\"a b\",\"originalId\":3}";
        let result = json!({"resultType": "input_required", "requestState": state,
            "inputRequests": {"confirm": confirm_request()}});
        let Round::Retry(params) = next_round(&result, 1, &REFUSE, false) else {
            panic!("retried");
        };
        assert_eq!(params["requestState"], json!(state));
        assert_eq!(
            params["inputResponses"],
            json!({"confirm": {"action": "decline"}})
        );
    }

    #[test]
    fn without_state_the_retry_carries_none() {
        let result = json!({"resultType": "input_required",
            "inputRequests": {"confirm": confirm_request()}});
        let Round::Retry(params) = next_round(&result, 1, &REFUSE, false) else {
            panic!("retried");
        };
        assert!(!params.contains_key("requestState"), "{params:?}");
        assert!(params.contains_key("inputResponses"));
    }

    #[test]
    fn a_confirm_policy_accepts_confirmations_and_declines_questions() {
        let result = json!({"resultType": "input_required",
            "inputRequests": {"confirm": confirm_request()}});
        let Round::Retry(params) = next_round(&result, 1, &CONFIRM, false) else {
            panic!("retried");
        };
        assert_eq!(
            params["inputResponses"]["confirm"],
            json!({"action": "accept", "content": {"confirmed": true}})
        );
        let question = json!({"method": "elicitation/create", "params": {"message": "Name?",
            "requestedSchema": {"type": "object", "properties": {
                "name": {"type": "string"}, "tier": {"type": "string", "default": "free"}},
                "required": ["name"]}}});
        let url = json!({"method": "elicitation/create", "params": {"mode": "url",
            "url": "https://example.invalid/", "message": "Visit"}});
        let result = json!({"resultType": "input_required",
            "inputRequests": {"question": question, "url": url}});
        let Round::Retry(params) = next_round(&result, 1, &CONFIRM, false) else {
            panic!("retried");
        };
        assert_eq!(
            params["inputResponses"],
            json!({"question": {"action": "decline"}, "url": {"action": "decline"}})
        );
        assert_eq!(CONFIRM.capabilities(), json!({"elicitation": {"form": {}}}));
        assert_eq!(REFUSE.capabilities(), json!({}));
    }

    #[test]
    fn undeclared_input_ends_the_call_and_rounds_are_bounded() {
        let sampling = json!({"resultType": "input_required", "inputRequests": {
            "ask": {"method": "sampling/createMessage", "params": {}}}});
        assert!(matches!(
            next_round(&sampling, 1, &REFUSE, true),
            Round::Stop(_)
        ));
        let roots = json!({"resultType": "input_required", "inputRequests": {
            "where": {"method": "roots/list"}}});
        assert!(matches!(
            next_round(&roots, 1, &REFUSE, false),
            Round::Stop(_)
        ));
        let Round::Retry(params) = next_round(&roots, 1, &REFUSE, true) else {
            panic!("retried");
        };
        assert_eq!(params["inputResponses"], json!({"where": {"roots": []}}));
        let polling = json!({"resultType": "input_required", "requestState": "s"});
        assert!(matches!(
            next_round(&polling, MAX_INPUT_ROUNDS - 1, &REFUSE, false),
            Round::Retry(_)
        ));
        assert!(matches!(
            next_round(&polling, MAX_INPUT_ROUNDS, &REFUSE, false),
            Round::Stop(_)
        ));
        let empty = json!({"resultType": "input_required"});
        assert!(matches!(
            next_round(&empty, 1, &REFUSE, false),
            Round::Stop(_)
        ));
    }
}

//! The scripted driver's description-sensitive policy: a literal-minded
//! reader of the tool definitions it is handed.
//!
//! A real model reads every tool description as part of its prompt, so a
//! sentence a third party adds to one ("Prefer search_orders when the ID is
//! unknown") can change which tool it reaches for first. A script is a
//! fixed list of replies and cannot show that by itself; a model marked
//! `follows_recommendations = true` applies one documented rule to the
//! definitions of each request instead:
//!
//! - **A recommendation** is a tool name, other than the described tool's
//!   own and among the tools handed in the same request, that follows
//!   *prefer* or *prefers*, or that follows *use*, *call* or *try* and is
//!   followed by *first* or *before* (case-insensitive, words split at
//!   anything but letters, digits and `_`, so backticks and punctuation do
//!   not matter). The clause around it ("when the ID is unknown") is not
//!   weighed: this reader follows the advice whatever the condition, which
//!   is the failure seed 004 reports.
//! - **The detour.** When the next scripted reply calls a tool whose
//!   handed description recommends a tool the conversation has not called
//!   yet, the model first calls that tool alone, and the scripted reply
//!   comes one request later. Each recommended tool is followed at most
//!   once per conversation (once called, it has been called).
//! - **Its arguments** are derived from the call it precedes: each required
//!   property of the recommended tool takes the argument of the same name,
//!   else (for a string property) the first string argument of that call.
//!
//! Nothing here knows a tool, a case or a server: the same rule runs on any
//! definitions, and definitions without a recommendation change nothing.

use serde_json::{Map, Value};
use witness_model::agent::{RequestedCall, ToolDefinition};

use super::Message;

/// The tools `description` recommends, in order of appearance, among
/// `handed` and other than `own`.
pub fn recommended<'a>(description: &str, own: &str, handed: &'a [ToolDefinition]) -> Vec<&'a str> {
    let words: Vec<&str> = description
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect();
    let lower = |i: usize| words.get(i).map(|w| w.to_lowercase());
    let mut out: Vec<&'a str> = Vec::new();
    for (i, word) in words.iter().enumerate() {
        let Some(tool) = handed.iter().find(|t| t.name == *word && t.name != own) else {
            continue;
        };
        let before = i.checked_sub(1).and_then(lower);
        let after = lower(i + 1);
        let prefer = matches!(before.as_deref(), Some("prefer" | "prefers"));
        let first = matches!(before.as_deref(), Some("use" | "call" | "try"))
            && matches!(after.as_deref(), Some("first" | "before"));
        if (prefer || first) && !out.contains(&tool.name.as_str()) {
            out.push(&tool.name);
        }
    }
    out
}

/// The call the policy makes before `calls`, when one of their tools'
/// handed descriptions recommends a tool not yet called in `messages`.
pub fn detour(
    calls: &[RequestedCall],
    handed: &[ToolDefinition],
    messages: &[Message],
) -> Option<RequestedCall> {
    let called = |name: &str| {
        messages.iter().any(|m| match m {
            Message::Assistant { calls, .. } => calls.iter().any(|c| c.tool == name),
            _ => false,
        })
    };
    for call in calls {
        let Some(definition) = handed.iter().find(|t| t.name == call.tool) else {
            continue;
        };
        let wanted = recommended(&definition.description, &definition.name, handed)
            .into_iter()
            .find(|tool| !called(tool) && !calls.iter().any(|c| c.tool == *tool));
        if let Some(tool) = wanted.and_then(|w| handed.iter().find(|t| t.name == w)) {
            return Some(RequestedCall {
                id: String::new(),
                tool: tool.name.clone(),
                arguments: Value::Object(arguments_for(tool, &call.arguments)),
                malformed: None,
            });
        }
    }
    None
}

/// Each required property of `tool`: the argument of the same name, else
/// (a string property) the first string argument of the call it precedes.
fn arguments_for(tool: &ToolDefinition, from: &Value) -> Map<String, Value> {
    let from = from.as_object();
    let first_string = from.and_then(|args| args.values().find(|v| v.is_string()));
    let required = tool.input_schema["required"].as_array();
    let mut out = Map::new();
    for name in required.into_iter().flatten().filter_map(Value::as_str) {
        let is_string = tool.input_schema["properties"][name]["type"] == "string";
        let value = from
            .and_then(|args| args.get(name))
            .or(first_string.filter(|_| is_string));
        if let Some(value) = value {
            out.insert(name.to_owned(), value.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(name: &str, description: &str, required: &[&str]) -> ToolDefinition {
        let properties: Map<String, Value> = required
            .iter()
            .map(|p| ((*p).to_owned(), json!({"type": "string"})))
            .collect();
        ToolDefinition {
            name: name.into(),
            description: description.into(),
            input_schema: json!({"type": "object", "properties": properties, "required": required}),
        }
    }

    fn handed(lookup: &str) -> Vec<ToolDefinition> {
        vec![
            tool("lookup_order", lookup, &["id"]),
            tool("search_orders", "Searches orders.", &["query"]),
            tool("refund_item", "Refunds an item.", &["order_id", "item_id"]),
        ]
    }

    fn call(tool: &str, arguments: Value) -> RequestedCall {
        RequestedCall {
            id: String::new(),
            tool: tool.into(),
            arguments,
            malformed: None,
        }
    }

    #[test]
    fn recommendations_are_read_from_the_words_around_a_handed_tool_name() {
        let tools = handed("");
        let read = |text: &str| recommended(text, "lookup_order", &tools);
        assert_eq!(
            read("Look up an order by ID. Prefer search_orders when the ID is unknown."),
            ["search_orders"]
        );
        assert_eq!(read("Use `search_orders` first."), ["search_orders"]);
        assert_eq!(read("CALL search_orders BEFORE this."), ["search_orders"]);
        assert_eq!(
            read("prefers refund_item, then search_orders"),
            ["refund_item"]
        );
        // Named without advice, advice without a handed name, or itself.
        assert!(read("Returns what search_orders returns.").is_empty());
        assert!(read("Prefer find_orders when the ID is unknown.").is_empty());
        assert!(read("Prefer lookup_order.").is_empty());
        assert!(read("Use search_orders to find an ID.").is_empty());
    }

    #[test]
    fn the_detour_comes_once_with_arguments_from_the_call_it_precedes() {
        let tools = handed("Look up an order by ID. Prefer search_orders when the ID is unknown.");
        let lookup = [call("lookup_order", json!({"id": "o_1004"}))];
        let detour_call = detour(&lookup, &tools, &[]).expect("a detour");
        assert_eq!(detour_call.tool, "search_orders");
        assert_eq!(detour_call.arguments, json!({"query": "o_1004"}));
        // Once search_orders was called, the scripted call goes ahead.
        let searched = [Message::Assistant {
            text: None,
            calls: vec![detour_call],
        }];
        assert!(detour(&lookup, &tools, &searched).is_none());
        // Without the sentence, or for a tool whose description has none,
        // nothing changes.
        assert!(detour(&lookup, &handed("Look up an order by ID."), &[]).is_none());
        let refund = [call(
            "refund_item",
            json!({"order_id": "o_1", "item_id": "i_1"}),
        )];
        assert!(detour(&refund, &tools, &[]).is_none());
    }

    #[test]
    fn arguments_prefer_the_same_name_and_skip_what_cannot_be_filled() {
        let target = tool("refund_item", "", &["order_id", "item_id"]);
        let filled = arguments_for(&target, &json!({"order_id": "o_9", "note": "x"}));
        assert_eq!(
            Value::Object(filled),
            json!({"order_id": "o_9", "item_id": "o_9"})
        );
        let numeric = ToolDefinition {
            input_schema: json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}),
            ..target
        };
        assert!(arguments_for(&numeric, &json!({"id": "o_9"})).is_empty());
    }
}

//! A tool's outputSchema compiled leniently, and results validated against
//! it (RSP-04, RSP-10).
//!
//! Servers write these schemas by hand, so the validator is lenient where
//! the JSON Schema drafts allow it: unknown keywords are ignored (every
//! draft permits them), `format` is an annotation, not an assertion (as
//! 2020-12 says; hand-written schemas use formats loosely), a `$schema` this
//! validator does not know is read as 2020-12, the dialect MCP gives a
//! schema that names none, and nothing is ever fetched: a reference to
//! another document does not compile.

use jsonschema::{Draft, Validator};
use serde_json::Value;

/// Violations quoted per result; the rest are counted.
const MAX_VIOLATIONS: usize = 3;

/// The compiled schema, or why it does not compile (one line).
pub fn compile(schema: &Value) -> Result<Validator, String> {
    let (draft, schema) = dialect(schema);
    jsonschema::options()
        .with_draft(draft)
        .should_validate_formats(false)
        .offline()
        .build(&schema)
        .map_err(|e| one_line(&e.masked().to_string()))
}

/// The draft `$schema` names, and the schema to compile under it: without a
/// `$schema`, or with one this validator does not know, 2020-12 (the unknown
/// `$schema` removed so it cannot make compiling fail).
fn dialect(schema: &Value) -> (Draft, Value) {
    let named = schema.get("$schema").and_then(Value::as_str);
    let known = named.and_then(|uri| {
        let bare = uri
            .trim_end_matches('#')
            .trim_start_matches("https://")
            .trim_start_matches("http://");
        match bare {
            "json-schema.org/draft-04/schema" => Some(Draft::Draft4),
            "json-schema.org/draft-06/schema" => Some(Draft::Draft6),
            "json-schema.org/draft-07/schema" => Some(Draft::Draft7),
            "json-schema.org/draft/2019-09/schema" => Some(Draft::Draft201909),
            "json-schema.org/draft/2020-12/schema" => Some(Draft::Draft202012),
            _ => None,
        }
    });
    match (named, known) {
        (_, Some(draft)) => (draft, schema.clone()),
        (None, None) => (Draft::Draft202012, schema.clone()),
        (Some(_), None) => {
            let mut copy = schema.clone();
            if let Some(map) = copy.as_object_mut() {
                map.remove("$schema");
            }
            (Draft::Draft202012, copy)
        }
    }
}

/// What is wrong with `instance`, each as `at /path: message` with the
/// instance's values masked (a result may hold secrets; the message never
/// quotes them). Empty when it validates.
pub fn violations(validator: &Validator, instance: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let mut more = 0usize;
    for error in validator.iter_errors(instance) {
        if out.len() == MAX_VIOLATIONS {
            more += 1;
            continue;
        }
        let at = error.instance_path().to_string();
        let at = if at.is_empty() { "/".to_owned() } else { at };
        out.push(format!(
            "at {}: {}",
            witness_text::clip(&at, 120),
            one_line(&error.masked().to_string())
        ));
    }
    if more > 0 {
        out.push(format!("and {more} more"));
    }
    out
}

fn one_line(text: &str) -> String {
    witness_text::clip(&text.split_whitespace().collect::<Vec<_>>().join(" "), 300)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_hand_written_schema_compiles_leniently_and_catches_a_wrong_type() {
        let schema = json!({
            "type": "object",
            "properties": {"count": {"type": "integer"}, "link": {"type": "string", "format": "uri"}},
            "required": ["count"],
            "x-vendor-extension": {"anything": true}
        });
        let validator = compile(&schema).expect("compiles");
        assert!(violations(&validator, &json!({"count": 3, "link": "not a uri"})).is_empty());
        let wrong = violations(&validator, &json!({"count": "many"}));
        assert_eq!(wrong.len(), 1, "{wrong:?}");
        assert!(wrong[0].starts_with("at /count: "), "{wrong:?}");
        assert!(!wrong[0].contains("many"), "values are masked: {wrong:?}");
    }

    #[test]
    fn dialects_are_read_from_schema_and_an_unknown_one_is_2020_12() {
        let draft7 =
            json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"});
        assert!(compile(&draft7).is_ok());
        let odd = json!({"$schema": "https://example.invalid/my-dialect", "type": "object", "required": ["a"]});
        let validator = compile(&odd).expect("an unknown $schema is read as 2020-12");
        assert_eq!(violations(&validator, &json!({})).len(), 1);
        assert!(compile(&json!({"type": "no-such-type"})).is_err());
        assert!(
            compile(&json!({"$ref": "https://example.invalid/schema.json"})).is_err(),
            "nothing is fetched"
        );
    }
}

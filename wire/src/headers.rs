//! SEP-2243: tool parameters mirrored into HTTP headers.
//!
//! A 2026-07-28 tool may mark a top-level parameter of its `inputSchema`
//! with `"x-mcp-header": "Name"`; a client then sends the argument's value
//! as `Mcp-Param-Name` on the POST that carries the call, so that a gateway
//! can route on it without reading the body. A declaration the client
//! cannot honour exactly (an empty or non-token name, a name used twice
//! regardless of case, a parameter that is not a string, an integer or a
//! boolean) makes the whole tool unusable: the specification has the client
//! exclude it, and the session does ([`crate::session::Catalog::excluded`]).

use serde_json::{Map, Value};

/// The key a schema property uses to ask for its header.
pub const DECLARATION_KEY: &str = "x-mcp-header";
/// What the header's name starts with on the wire.
pub const PREFIX: &str = "Mcp-Param-";

/// One parameter mirrored into a header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamHeader {
    /// The argument's name in `arguments`.
    pub parameter: String,
    /// The header's name after [`PREFIX`], as the tool spelt it.
    pub name: String,
}

/// Why a tool's header declarations were refused; the tool is excluded.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DeclarationError {
    #[error("parameter {parameter:?} declares an x-mcp-header that is not a string")]
    NotAString { parameter: String },
    #[error("parameter {parameter:?} declares an empty x-mcp-header")]
    Empty { parameter: String },
    #[error(
        "parameter {parameter:?} declares an x-mcp-header with a character a header name cannot carry"
    )]
    Charset { parameter: String },
    #[error(
        "parameter {parameter:?} declares an x-mcp-header on a parameter of type {kind} (only string, integer and boolean)"
    )]
    NotPrimitive { parameter: String, kind: String },
    #[error(
        "parameters {first:?} and {second:?} declare the same x-mcp-header (names ignore case)"
    )]
    Duplicate { first: String, second: String },
}

/// The header declarations of a tool as served, in property order, or why
/// they cannot be honoured. A tool without any declares none.
pub fn declarations(tool: &Value) -> Result<Vec<ParamHeader>, DeclarationError> {
    let Some(properties) = tool
        .pointer("/inputSchema/properties")
        .and_then(Value::as_object)
    else {
        return Ok(Vec::new());
    };
    let mut declared: Vec<ParamHeader> = Vec::new();
    for (parameter, schema) in properties {
        let Some(name) = schema.get(DECLARATION_KEY) else {
            continue;
        };
        let parameter = parameter.clone();
        let Some(name) = name.as_str() else {
            return Err(DeclarationError::NotAString { parameter });
        };
        if name.is_empty() {
            return Err(DeclarationError::Empty { parameter });
        }
        if !name.bytes().all(is_token_byte) {
            return Err(DeclarationError::Charset { parameter });
        }
        let kind = schema.get("type").and_then(Value::as_str).unwrap_or("");
        if !matches!(kind, "string" | "integer" | "boolean") {
            let kind = if kind.is_empty() {
                "untyped".to_owned()
            } else {
                kind.to_owned()
            };
            return Err(DeclarationError::NotPrimitive { parameter, kind });
        }
        if let Some(first) = declared.iter().find(|d| d.name.eq_ignore_ascii_case(name)) {
            return Err(DeclarationError::Duplicate {
                first: first.parameter.clone(),
                second: parameter,
            });
        }
        declared.push(ParamHeader {
            parameter,
            name: name.to_owned(),
        });
    }
    Ok(declared)
}

/// RFC 9110's `tchar`: what a header field name is made of.
fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// The `Mcp-Param-*` headers of one call: each declared parameter whose
/// argument is a string, a number or a boolean, its value encoded as the
/// transport encodes header values (`header_safe`); a parameter absent or
/// `null` sends no header.
pub fn mirrored(
    declared: &[ParamHeader],
    arguments: Option<&Map<String, Value>>,
    header_safe: impl Fn(&str) -> String,
) -> Vec<(String, String)> {
    let Some(arguments) = arguments else {
        return Vec::new();
    };
    declared
        .iter()
        .filter_map(|d| {
            let value = match arguments.get(&d.parameter)? {
                Value::String(text) => header_safe(text),
                Value::Bool(flag) => flag.to_string(),
                Value::Number(number) => number.to_string(),
                _ => return None,
            };
            Some((format!("{PREFIX}{}", d.name), value))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn tool(properties: Value) -> Value {
        json!({"name": "t", "inputSchema": {"type": "object", "properties": properties}})
    }

    #[test]
    fn string_integer_and_boolean_parameters_declare_headers_in_order() {
        let declared = declarations(&tool(json!({
            "region": {"type": "string", "x-mcp-header": "Region"},
            "query": {"type": "string"},
            "priority": {"type": "integer", "x-mcp-header": "Priority"},
            "verbose": {"type": "boolean", "x-mcp-header": "Verbose"},
        })))
        .expect("valid");
        let names: Vec<&str> = declared.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["Region", "Priority", "Verbose"]);
        assert_eq!(declarations(&json!({"name": "bare"})), Ok(Vec::new()));
    }

    #[test]
    fn every_kind_of_invalid_declaration_is_refused() {
        let refused = |properties: Value| declarations(&tool(properties)).expect_err("refused");
        assert!(matches!(
            refused(json!({"v": {"type": "string", "x-mcp-header": ""}})),
            DeclarationError::Empty { .. }
        ));
        for kind in ["object", "array", "null", "number"] {
            assert!(
                matches!(
                    refused(json!({"v": {"type": kind, "x-mcp-header": "V"}})),
                    DeclarationError::NotPrimitive { .. }
                ),
                "{kind}"
            );
        }
        for name in ["My Region", "Region:Primary", "Région", "Region\t1"] {
            assert!(
                matches!(
                    refused(json!({"v": {"type": "string", "x-mcp-header": name}})),
                    DeclarationError::Charset { .. }
                ),
                "{name:?}"
            );
        }
        assert!(matches!(
            refused(json!({
                "a": {"type": "string", "x-mcp-header": "MyField"},
                "b": {"type": "string", "x-mcp-header": "myfield"},
            })),
            DeclarationError::Duplicate { .. }
        ));
        assert!(matches!(
            refused(json!({"v": {"type": "string", "x-mcp-header": 7}})),
            DeclarationError::NotAString { .. }
        ));
    }

    #[test]
    fn values_are_mirrored_and_null_or_absent_ones_are_not() {
        let declared = declarations(&tool(json!({
            "region": {"type": "string", "x-mcp-header": "Region"},
            "priority": {"type": "integer", "x-mcp-header": "Priority"},
            "verbose": {"type": "boolean", "x-mcp-header": "Verbose"},
            "debug": {"type": "boolean", "x-mcp-header": "Debug"},
            "float": {"type": "number"},
        })))
        .expect("valid");
        let arguments = json!({"region": "us west", "priority": 42, "verbose": null, "float": 3.5});
        let headers = mirrored(&declared, arguments.as_object(), |v| format!("<{v}>"));
        assert_eq!(
            headers,
            [
                ("Mcp-Param-Region".to_owned(), "<us west>".to_owned()),
                ("Mcp-Param-Priority".to_owned(), "42".to_owned()),
            ]
        );
        let arguments = json!({"debug": false});
        let headers = mirrored(&declared, arguments.as_object(), str::to_owned);
        assert_eq!(
            headers,
            [("Mcp-Param-Debug".to_owned(), "false".to_owned())]
        );
    }
}

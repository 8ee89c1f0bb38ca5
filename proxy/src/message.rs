//! What the proxy needs to know about a message it forwards: whether it is
//! a request, a notification or a response, its id, and for a tool call its
//! tool and arguments. Reading never changes what is forwarded.

use serde_json::Value;

/// Messages longer than this are recorded by their size and a cut text,
/// not parsed: the bytes are still forwarded whole.
pub const KEPT_MESSAGE_BYTES: usize = 1024 * 1024;

/// A JSON-RPC id as a map key: its JSON text, so `1` and `"1"` differ as
/// the protocol says they do.
pub type IdKey = String;

/// One message, read.
#[derive(Debug, Clone)]
pub struct Read {
    pub value: Option<Value>,
    pub kind: Kind,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    Request {
        id: IdKey,
        method: String,
    },
    Notification {
        method: String,
    },
    Response {
        id: IdKey,
    },
    /// Not JSON, not an object, a batch, or too long to read.
    Other,
}

/// Reads `bytes` without judging them.
pub fn read(bytes: &[u8]) -> Read {
    if bytes.len() > KEPT_MESSAGE_BYTES {
        return Read {
            value: None,
            kind: Kind::Other,
        };
    }
    let Ok(value) = serde_json::from_slice::<Value>(bytes) else {
        return Read {
            value: None,
            kind: Kind::Other,
        };
    };
    let kind = kind_of(&value);
    Read {
        value: Some(value),
        kind,
    }
}

fn kind_of(value: &Value) -> Kind {
    let Some(object) = value.as_object() else {
        return Kind::Other;
    };
    let method = object.get("method").and_then(Value::as_str);
    let id = object.get("id").filter(|id| !id.is_null());
    match (method, id) {
        (Some(method), Some(id)) => Kind::Request {
            id: id.to_string(),
            method: method.to_owned(),
        },
        (Some(method), None) => Kind::Notification {
            method: method.to_owned(),
        },
        (None, Some(id)) => Kind::Response { id: id.to_string() },
        (None, None) => Kind::Other,
    }
}

impl Read {
    /// The `params` of a request.
    pub fn params(&self) -> Option<&Value> {
        self.value.as_ref().and_then(|v| v.get("params"))
    }

    /// `initialize`'s agreed protocol version, read from its result.
    pub fn protocol_version(&self) -> Option<&str> {
        self.value
            .as_ref()
            .and_then(|v| v.pointer("/result/protocolVersion"))
            .and_then(Value::as_str)
    }
}

/// The text a trace keeps of a message that is not recorded as JSON.
pub fn kept_text(bytes: &[u8]) -> String {
    let cut = &bytes[..bytes.len().min(64 * 1024)];
    String::from_utf8_lossy(cut).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_and_ids_are_read_as_the_protocol_spells_them() {
        let r = read(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}"#);
        assert_eq!(
            r.kind,
            Kind::Request {
                id: "1".into(),
                method: "tools/call".into()
            }
        );
        assert_eq!(r.params().and_then(|p| p.get("name")), Some(&"x".into()));
        let r = read(br#"{"jsonrpc":"2.0","id":"1","result":{}}"#);
        assert_eq!(r.kind, Kind::Response { id: "\"1\"".into() });
        let r = read(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        assert!(matches!(r.kind, Kind::Notification { .. }));
        assert_eq!(read(b"not json").kind, Kind::Other);
        assert_eq!(read(b"[1,2]").kind, Kind::Other);
        let r = read(br#"{"jsonrpc":"2.0","id":2,"result":{"protocolVersion":"2025-06-18"}}"#);
        assert_eq!(r.protocol_version(), Some("2025-06-18"));
    }
}

//! Reading a trace and a conversation, line by line, checked.

use witness_model::proxy::{
    CONVERSATION_SCHEMA, ConversationLine, PROXY_TRACE_SCHEMA, TraceEntry, TraceHeader,
};

/// Why a trace or a conversation cannot be judged: bad input (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    #[error("trace line {line}: {message}")]
    Trace { line: usize, message: String },
    #[error("conversation line {line}: {message}")]
    Conversation { line: usize, message: String },
    #[error("the conversation does not match the trace: {0}")]
    Misaligned(String),
}

/// A trace as read.
#[derive(Clone, Debug)]
pub struct Recorded {
    pub header: TraceHeader,
    pub entries: Vec<TraceEntry>,
    pub lines: u64,
    /// The last line was cut short (a crash mid-write) and was skipped.
    pub torn: bool,
}

impl Recorded {
    /// The end line's reason, when the proxy wrote one.
    pub fn ended(&self) -> Option<&str> {
        self.entries.iter().rev().find_map(|e| match e {
            TraceEntry::End(end) => Some(end.reason.as_str()),
            _ => None,
        })
    }
}

/// Reads a trace. Every line but the last must be an entry; a last line
/// that is not (a crash while writing it) is skipped and reported.
pub fn read_trace(text: &str) -> Result<Recorded, CheckError> {
    let lines: Vec<&str> = text.lines().collect();
    let mut entries = Vec::new();
    let mut torn = false;
    for (i, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<TraceEntry>(line) {
            Ok(entry) => entries.push(entry),
            Err(_) if i + 1 == lines.len() && !text.ends_with('\n') => torn = true,
            Err(e) => {
                return Err(CheckError::Trace {
                    line: i + 1,
                    message: format!("not a {PROXY_TRACE_SCHEMA} entry ({e})"),
                });
            }
        }
    }
    let header = match entries.first() {
        Some(TraceEntry::Header(header)) => header.clone(),
        _ => {
            return Err(CheckError::Trace {
                line: 1,
                message: format!("the first line must be the {PROXY_TRACE_SCHEMA} header"),
            });
        }
    };
    if header.schema != PROXY_TRACE_SCHEMA {
        return Err(CheckError::Trace {
            line: 1,
            message: format!(
                "schema {:?} is not {PROXY_TRACE_SCHEMA}",
                witness_text::clip(&header.schema, 60)
            ),
        });
    }
    Ok(Recorded {
        header,
        entries: entries.split_off(1),
        lines: lines.len() as u64,
        torn,
    })
}

/// Reads a conversation: an optional `{"schema": ...}` first line, then one
/// line per user turn or assistant reply.
pub fn read_conversation(text: &str) -> Result<Vec<ConversationLine>, CheckError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let failed = |message: String| CheckError::Conversation {
            line: i + 1,
            message,
        };
        let value: serde_json::Value =
            serde_json::from_str(line).map_err(|e| failed(format!("not JSON ({e})")))?;
        if out.is_empty()
            && let Some(schema) = value.get("schema")
        {
            if schema.as_str() != Some(CONVERSATION_SCHEMA)
                || value.as_object().map(|o| o.len()) != Some(1)
            {
                return Err(failed(format!(
                    "a header line must be exactly {{\"schema\": \"{CONVERSATION_SCHEMA}\"}}"
                )));
            }
            continue;
        }
        let parsed: ConversationLine =
            serde_json::from_value(value).map_err(|e| failed(e.to_string()))?;
        out.push(parsed);
    }
    if out.is_empty() {
        return Err(CheckError::Conversation {
            line: 0,
            message: "the conversation has no turns".into(),
        });
    }
    Ok(out)
}

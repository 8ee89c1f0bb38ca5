//! The trace file: one JSON line per entry, written as it happens.
//!
//! Each entry is one `write` of one whole line, with no buffer in front of
//! it, so a crash of the proxy or of the host loses at most the line being
//! written; `trace check` skips a torn last line and says so.
//!
//! Redaction follows the audits' rules (`witness_jail::redact`): every
//! entry teaches the redactor what it holds before it is written, so a
//! secret is masked from the entry that reveals it on. An audit learns
//! everything before writing anything; a trace cannot wait, so when the
//! proxy stops in order it rewrites the file once more through everything
//! learnt, which masks a secret revealed late in the lines before it too.
//! `trace check` redacts what it reads the same way before showing it.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::Value;
use witness_jail::redact::Redactor;
use witness_model::proxy::TraceEntry;

/// Why the trace cannot be written.
#[derive(Debug, thiserror::Error)]
#[error("cannot write the trace {}: {source}", path.display())]
pub struct RecordError {
    pub path: PathBuf,
    #[source]
    pub source: std::io::Error,
}

/// The open trace.
pub struct TraceWriter {
    file: File,
    path: PathBuf,
    redactor: Redactor,
    seq: u64,
    started: Instant,
}

impl TraceWriter {
    /// Creates (or truncates) `path` and writes the header. `secrets` are
    /// `K=V` pairs given to the server: values under credential-like names
    /// are known secrets from the start.
    pub fn create(
        path: &Path,
        header: TraceEntry,
        secrets: &[(String, String)],
        started: Instant,
    ) -> Result<Self, RecordError> {
        let file = File::create(path).map_err(|source| RecordError {
            path: path.to_path_buf(),
            source,
        })?;
        let mut redactor = Redactor::default();
        let pairs: serde_json::Map<String, Value> = secrets
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect();
        redactor.learn(&Value::Object(pairs));
        let mut writer = Self {
            file,
            path: path.to_path_buf(),
            redactor,
            seq: 0,
            started,
        };
        writer.line(&header)?;
        Ok(writer)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The next entry's sequence number and time stamp.
    pub fn stamp(&mut self) -> (u64, u64) {
        self.seq += 1;
        let t_us = u64::try_from(self.started.elapsed().as_micros()).unwrap_or(u64::MAX);
        (self.seq, t_us)
    }

    /// Learns what `entry` holds, then writes it through the redactor.
    pub fn write(&mut self, entry: &TraceEntry) -> Result<(), RecordError> {
        if let TraceEntry::Message(message) = entry {
            if let Some(value) = &message.message {
                self.redactor.learn(value);
            }
            if let Some(text) = &message.text {
                self.redactor.learn_text(text);
            }
        }
        self.line(entry)
    }

    fn line(&mut self, entry: &TraceEntry) -> Result<(), RecordError> {
        let text = serde_json::to_string(entry).map_err(|e| RecordError {
            path: self.path.clone(),
            source: std::io::Error::other(e),
        })?;
        let mut line = self.redactor.text(&text);
        line.push('\n');
        // One write per line: never a half entry followed by another.
        self.file
            .write_all(line.as_bytes())
            .map_err(|source| RecordError {
                path: self.path.clone(),
                source,
            })
    }

    /// Rewrites the whole file through everything learnt (a secret revealed
    /// late is masked in the lines before it), replacing it atomically.
    pub fn finish(mut self) -> Result<(), RecordError> {
        let failed = |source| RecordError {
            path: self.path.clone(),
            source,
        };
        self.file.flush().map_err(failed)?;
        let text = std::fs::read_to_string(&self.path).map_err(failed)?;
        let rewritten = redact_lines(&text, &mut self.redactor);
        if rewritten == text {
            return self.file.sync_all().map_err(failed);
        }
        let mut temp = self.path.clone().into_os_string();
        temp.push(".rewrite");
        let temp = PathBuf::from(temp);
        std::fs::write(&temp, rewritten.as_bytes()).map_err(failed)?;
        std::fs::rename(&temp, &self.path).map_err(failed)
    }
}

/// Learns from every line, then writes each through everything learnt.
pub fn redact_lines(text: &str, redactor: &mut Redactor) -> String {
    for line in text.lines() {
        redactor.learn_text(line);
    }
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        out.push_str(&redactor.text(line));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use witness_model::proxy::{MessageEntry, Party, ProxiedServer, TraceHeader};

    fn header() -> TraceEntry {
        TraceEntry::Header(TraceHeader {
            schema: witness_model::proxy::PROXY_TRACE_SCHEMA.into(),
            generator: "test".into(),
            started_unix_ms: 0,
            host_transport: "stdio".into(),
            server: ProxiedServer {
                command: vec!["srv".into()],
                transport: "stdio".into(),
                env: vec!["CRM_TOKEN".into()],
            },
            live: false,
            isolation: None,
            stores: Vec::new(),
            facts: Vec::new(),
            settle_ms: 0,
        })
    }

    fn message(writer: &mut TraceWriter, value: Value) -> TraceEntry {
        let (seq, t_us) = writer.stamp();
        TraceEntry::Message(MessageEntry {
            seq,
            t_us,
            from: Party::Server,
            session: None,
            call: None,
            bytes: 0,
            message: Some(value),
            text: None,
        })
    }

    #[test]
    fn secrets_are_masked_as_they_are_learnt_and_everywhere_at_the_end() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.jsonl");
        let env = [("CRM_TOKEN".to_owned(), "acme-agent-token".to_owned())];
        let mut w = TraceWriter::create(&path, header(), &env, Instant::now()).expect("create");
        let early = message(
            &mut w,
            serde_json::json!({"echo": "velvet-otter-0001", "t": "acme-agent-token"}),
        );
        w.write(&early).expect("write");
        let reveal = message(&mut w, serde_json::json!({"api_key": "velvet-otter-0001"}));
        w.write(&reveal).expect("write");
        let during = std::fs::read_to_string(&path).expect("read");
        assert!(!during.contains("acme-agent-token"), "{during}");
        assert_eq!(during.matches("velvet-otter-0001").count(), 1, "{during}");
        w.finish().expect("finish");
        let after = std::fs::read_to_string(&path).expect("read");
        assert!(!after.contains("velvet-otter-0001"), "{after}");
        assert_eq!(after.lines().count(), 3);
        for line in after.lines() {
            assert!(serde_json::from_str::<TraceEntry>(line).is_ok(), "{line}");
        }
    }
}

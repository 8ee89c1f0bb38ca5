//! A minimal client of PostgreSQL's frontend/backend protocol (version 3):
//! startup over a Unix socket with `trust`, `password` or SCRAM-SHA-256
//! authentication, and simple queries whose rows come back in text form.
//!
//! Hand-written rather than a driver crate because the observer and the
//! probe need very little (no TLS, no prepared statements) and the engine
//! must not pull in an async runtime. SCRAM is spoken because the cluster
//! demands it of every role but the server's (see `cluster`): the probe's
//! login is then the same exchange a real client's is. Text form is what both a scan and the
//! logical decoding output print, so digests of the two agree.

use std::io::{BufReader, BufWriter, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

use crate::scram;

/// Why the cluster could not be talked to.
#[derive(Debug, thiserror::Error)]
pub enum ProtocolError {
    #[error("connection: {0}")]
    Io(#[from] std::io::Error),
    #[error("the server said: {0}")]
    Server(String),
    #[error("unexpected message {0:?} from the server")]
    Unexpected(char),
    #[error("the server asked for an authentication method this client does not speak ({0})")]
    Auth(i32),
    #[error("the server asked for a password and none was given")]
    NoPassword,
    #[error("SCRAM exchange: {0}")]
    Scram(&'static str),
}

/// One row of a result: each column's text, `None` for NULL.
pub type Row = Vec<Option<String>>;

/// A session with the cluster.
pub struct Client {
    reader: BufReader<UnixStream>,
    writer: BufWriter<UnixStream>,
}

/// The socket file PostgreSQL creates in its socket directory.
pub fn socket_path(socket_dir: &Path, port: u16) -> std::path::PathBuf {
    socket_dir.join(format!(".s.PGSQL.{port}"))
}

impl Client {
    /// Connects as `user` to `database` through the socket in `socket_dir`,
    /// with `password` when the server asks for one (in clear text for
    /// `password`, by proof for SCRAM-SHA-256; the server's own proof is
    /// checked before the session is taken).
    pub fn connect(
        socket_dir: &Path,
        port: u16,
        user: &str,
        database: &str,
        password: Option<&str>,
    ) -> Result<Self, ProtocolError> {
        let stream = UnixStream::connect(socket_path(socket_dir, port))?;
        // A cluster that stops answering must not hang the audit.
        stream.set_read_timeout(Some(Duration::from_secs(60)))?;
        let mut client = Self {
            reader: BufReader::new(stream.try_clone()?),
            writer: BufWriter::new(stream),
        };
        let mut body = Vec::new();
        body.extend_from_slice(&196_608i32.to_be_bytes());
        for (k, v) in [
            ("user", user),
            ("database", database),
            ("application_name", "mcp-witness-observer"),
            ("client_encoding", "UTF8"),
        ] {
            body.extend_from_slice(k.as_bytes());
            body.push(0);
            body.extend_from_slice(v.as_bytes());
            body.push(0);
        }
        body.push(0);
        client
            .writer
            .write_all(&(body.len() as i32 + 4).to_be_bytes())?;
        client.writer.write_all(&body)?;
        client.writer.flush()?;
        let mut scram_state = None;
        let mut server_signature: Option<String> = None;
        loop {
            let (tag, payload) = client.read_message()?;
            match tag {
                b'R' => match int32(&payload, 0) {
                    0 => {}
                    3 => {
                        let password = password.ok_or(ProtocolError::NoPassword)?;
                        let mut body = password.as_bytes().to_vec();
                        body.push(0);
                        client.send(b'p', &body)?;
                    }
                    10 => {
                        let password = password.ok_or(ProtocolError::NoPassword)?;
                        let offered = payload.get(4..).unwrap_or_default();
                        if !offered
                            .split(|b| *b == 0)
                            .any(|m| m == scram::MECHANISM.as_bytes())
                        {
                            return Err(ProtocolError::Auth(10));
                        }
                        let exchange = scram::Exchange::start()?;
                        let first = exchange.client_first();
                        let mut body = scram::MECHANISM.as_bytes().to_vec();
                        body.push(0);
                        body.extend_from_slice(&(first.len() as i32).to_be_bytes());
                        body.extend_from_slice(first.as_bytes());
                        client.send(b'p', &body)?;
                        scram_state = Some((exchange, password));
                    }
                    11 => {
                        let (exchange, password) = scram_state
                            .take()
                            .ok_or(ProtocolError::Scram("out of order"))?;
                        let server_first =
                            std::str::from_utf8(payload.get(4..).unwrap_or_default())
                                .map_err(|_| ProtocolError::Scram("server-first is not text"))?;
                        let (final_message, expected) =
                            exchange.client_final(password, server_first)?;
                        client.send(b'p', final_message.as_bytes())?;
                        server_signature = Some(expected);
                    }
                    12 => {
                        let expected = server_signature
                            .take()
                            .ok_or(ProtocolError::Scram("out of order"))?;
                        if payload.get(4..).unwrap_or_default() != expected.as_bytes() {
                            return Err(ProtocolError::Scram("the server's signature is wrong"));
                        }
                    }
                    method => return Err(ProtocolError::Auth(method)),
                },
                b'S' | b'K' | b'N' => {}
                b'E' => return Err(ProtocolError::Server(error_text(&payload))),
                b'Z' => return Ok(client),
                other => return Err(ProtocolError::Unexpected(other as char)),
            }
        }
    }

    /// Runs `sql` (one or more statements) and gives the rows of the last
    /// statement that returned any. An error is returned after the server
    /// is ready again, so the session stays usable.
    pub fn query(&mut self, sql: &str) -> Result<Vec<Row>, ProtocolError> {
        let mut body = sql.as_bytes().to_vec();
        body.push(0);
        self.writer.write_all(b"Q")?;
        self.writer
            .write_all(&(body.len() as i32 + 4).to_be_bytes())?;
        self.writer.write_all(&body)?;
        self.writer.flush()?;
        let mut rows = Vec::new();
        let mut error = None;
        loop {
            let (tag, payload) = self.read_message()?;
            match tag {
                b'T' => rows.clear(),
                b'D' => rows.push(data_row(&payload)?),
                b'C' | b'I' | b'N' | b'S' => {}
                b'E' => error = Some(error_text(&payload)),
                b'Z' => break,
                other => return Err(ProtocolError::Unexpected(other as char)),
            }
        }
        match error {
            Some(text) => Err(ProtocolError::Server(text)),
            None => Ok(rows),
        }
    }

    /// Runs `sql` and gives its only value (NULL as `None`).
    pub fn value(&mut self, sql: &str) -> Result<Option<String>, ProtocolError> {
        let rows = self.query(sql)?;
        Ok(rows
            .into_iter()
            .next()
            .and_then(|r| r.into_iter().next())
            .flatten())
    }

    fn send(&mut self, tag: u8, body: &[u8]) -> Result<(), ProtocolError> {
        self.writer.write_all(&[tag])?;
        self.writer
            .write_all(&(body.len() as i32 + 4).to_be_bytes())?;
        self.writer.write_all(body)?;
        self.writer.flush()?;
        Ok(())
    }

    fn read_message(&mut self) -> Result<(u8, Vec<u8>), ProtocolError> {
        let mut head = [0u8; 5];
        self.reader.read_exact(&mut head)?;
        let len = i32::from_be_bytes([head[1], head[2], head[3], head[4]]);
        if len < 4 {
            return Err(ProtocolError::Unexpected(head[0] as char));
        }
        let mut payload = vec![0u8; len as usize - 4];
        self.reader.read_exact(&mut payload)?;
        Ok((head[0], payload))
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        // Terminate, so the backend ends now rather than on EOF.
        let _ = self.writer.write_all(&[b'X', 0, 0, 0, 4]);
        let _ = self.writer.flush();
    }
}

fn int32(bytes: &[u8], at: usize) -> i32 {
    bytes
        .get(at..at + 4)
        .map(|b| i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
        .unwrap_or(-1)
}

fn data_row(payload: &[u8]) -> Result<Row, ProtocolError> {
    let bad = || ProtocolError::Unexpected('D');
    let count = payload
        .get(0..2)
        .map(|b| i16::from_be_bytes([b[0], b[1]]))
        .ok_or_else(bad)?;
    let mut at = 2;
    let mut row = Vec::with_capacity(count.max(0) as usize);
    for _ in 0..count {
        let len = int32(payload, at);
        at += 4;
        if len < 0 {
            row.push(None);
            continue;
        }
        let end = at + len as usize;
        let bytes = payload.get(at..end).ok_or_else(bad)?;
        row.push(Some(String::from_utf8_lossy(bytes).into_owned()));
        at = end;
    }
    Ok(row)
}

/// The severity, SQLSTATE and message of an ErrorResponse, on one line.
fn error_text(payload: &[u8]) -> String {
    let mut severity = "";
    let mut code = "";
    let mut message = "";
    for field in payload.split(|b| *b == 0) {
        let Some((&kind, text)) = field.split_first() else {
            continue;
        };
        let text = std::str::from_utf8(text).unwrap_or("");
        match kind {
            b'S' => severity = text,
            b'C' => code = text,
            b'M' => message = text,
            _ => {}
        }
    }
    format!("{severity} {code}: {}", message.replace('\n', " "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_rows_decode_nulls_and_reject_truncation() {
        let mut payload = 2i16.to_be_bytes().to_vec();
        payload.extend_from_slice(&(-1i32).to_be_bytes());
        payload.extend_from_slice(&2i32.to_be_bytes());
        payload.extend_from_slice(b"hi");
        assert_eq!(data_row(&payload).ok(), Some(vec![None, Some("hi".into())]));
        payload.pop();
        assert!(data_row(&payload).is_err());
    }

    #[test]
    fn error_responses_read_as_one_line() {
        let payload = b"SERROR\0C42P01\0Mrelation \"x\"\ndoes not exist\0\0";
        assert_eq!(
            error_text(payload),
            "ERROR 42P01: relation \"x\" does not exist"
        );
    }
}

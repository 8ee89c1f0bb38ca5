//! Newline-delimited JSON-RPC over a child's stdin/stdout.
//!
//! Two reader threads drain the child's stdout and stderr so that a server
//! that floods either pipe can never block on us, and so that every line is
//! stamped when it arrives rather than when we get round to reading it. A
//! writer thread owns stdin for the same reason in the other direction: a
//! server that stops reading must never block the client past its timeout.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{ChildStderr, ChildStdin, ChildStdout};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::clock::Clock;
pub use crate::{Incoming, StderrCapture};
use crate::{MAX_LINE_BYTES, MAX_STDERR_BYTES, Transport};

/// Lines queued for a server that is not reading them, before sending fails.
const MAX_QUEUED_LINES: usize = 1024;

/// The pipes of one server process.
pub struct StdioTransport {
    /// Lines for the writer thread; `None` once stdin is closed.
    stdin: Option<SyncSender<Vec<u8>>>,
    /// Why the writer thread stopped, once it has.
    write_error: Arc<Mutex<Option<String>>>,
    rx: Receiver<Incoming>,
    stderr: Arc<Mutex<StderrCapture>>,
    clock: Arc<dyn Clock>,
}

impl StdioTransport {
    pub fn new(
        stdin: ChildStdin,
        stdout: ChildStdout,
        stderr: ChildStderr,
        clock: Arc<dyn Clock>,
    ) -> Self {
        // Bounded: if we stop reading, the server blocks on its own stdout
        // instead of growing our memory.
        let (tx, rx) = sync_channel(256);
        let reader_clock = clock.clone();
        thread::spawn(move || read_lines(stdout, tx, reader_clock));
        let capture = Arc::new(Mutex::new(StderrCapture::default()));
        let sink = capture.clone();
        thread::spawn(move || drain_stderr(stderr, sink));
        let (lines, queue) = sync_channel::<Vec<u8>>(MAX_QUEUED_LINES);
        let write_error = Arc::new(Mutex::new(None));
        let failed = write_error.clone();
        thread::spawn(move || write_lines(stdin, queue, failed));
        Self {
            stdin: Some(lines),
            write_error,
            rx,
            stderr: capture,
            clock,
        }
    }

    pub fn now_us(&self) -> u64 {
        self.clock.now_us()
    }

    /// Queues one line for the server. Never blocks: fails when the server
    /// has closed its stdin, or has left so many lines unread that it is
    /// clearly not reading.
    pub fn send_line(&mut self, line: &str) -> std::io::Result<()> {
        let Some(stdin) = self.stdin.as_ref() else {
            return Err(std::io::Error::new(
                std::io::ErrorKind::BrokenPipe,
                "stdin already closed",
            ));
        };
        queue_line(stdin, &self.write_error, line)
    }

    /// Waits for the next line until `deadline`. `None` means the deadline passed.
    pub fn recv_until(&self, deadline: Instant) -> Option<Incoming> {
        let wait = deadline.saturating_duration_since(Instant::now());
        match self.rx.recv_timeout(wait) {
            Ok(incoming) => Some(incoming),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => Some(Incoming::Closed {
                t_us: self.clock.now_us(),
                detail: "stdout reader ended".into(),
            }),
        }
    }

    /// Takes whatever is already queued without waiting.
    pub fn try_recv(&self) -> Option<Incoming> {
        self.rx.try_recv().ok()
    }

    /// Closes the server's stdin: the polite way to ask a stdio server to exit.
    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    pub fn stderr(&self) -> StderrCapture {
        match self.stderr.lock() {
            Ok(guard) => guard.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Gives the stderr thread a moment to catch up with a process that just ended.
    pub fn settle_stderr(&self) {
        thread::sleep(Duration::from_millis(20));
    }
}

impl Transport for StdioTransport {
    fn kind(&self) -> &'static str {
        "stdio"
    }

    fn now_us(&self) -> u64 {
        StdioTransport::now_us(self)
    }

    fn send(&mut self, _message: &Value, text: &str) -> std::io::Result<()> {
        self.send_line(text)
    }

    fn recv_until(&mut self, deadline: Instant) -> Option<Incoming> {
        StdioTransport::recv_until(self, deadline)
    }

    fn try_recv(&mut self) -> Option<Incoming> {
        StdioTransport::try_recv(self)
    }

    fn close(&mut self) {
        self.close_stdin();
    }

    fn stderr(&self) -> StderrCapture {
        StdioTransport::stderr(self)
    }

    fn outbox(&self) -> Option<Box<dyn crate::Outbox>> {
        let lines = self.stdin.clone()?;
        Some(Box::new(StdioOutbox {
            lines,
            write_error: self.write_error.clone(),
        }))
    }
}

/// Lines for the writer thread, from another thread than the reader's.
struct StdioOutbox {
    lines: SyncSender<Vec<u8>>,
    write_error: Arc<Mutex<Option<String>>>,
}

impl crate::Outbox for StdioOutbox {
    fn send(&self, _message: &Value, text: &str) -> std::io::Result<()> {
        queue_line(&self.lines, &self.write_error, text)
    }
}

/// Queues `line` and its newline for the writer thread, without blocking.
fn queue_line(
    stdin: &SyncSender<Vec<u8>>,
    write_error: &Mutex<Option<String>>,
    line: &str,
) -> std::io::Result<()> {
    use std::io::{Error, ErrorKind};
    let failure = match write_error.lock() {
        Ok(guard) => guard.clone(),
        Err(poisoned) => poisoned.into_inner().clone(),
    };
    if let Some(reason) = failure {
        return Err(Error::new(ErrorKind::BrokenPipe, reason));
    }
    let mut bytes = Vec::with_capacity(line.len() + 1);
    bytes.extend_from_slice(line.as_bytes());
    bytes.push(b'\n');
    match stdin.try_send(bytes) {
        Ok(()) => Ok(()),
        Err(std::sync::mpsc::TrySendError::Full(_)) => Err(Error::new(
            ErrorKind::WouldBlock,
            format!("the server left {MAX_QUEUED_LINES} lines on its stdin unread"),
        )),
        Err(std::sync::mpsc::TrySendError::Disconnected(_)) => Err(Error::new(
            ErrorKind::BrokenPipe,
            "the server's stdin is closed",
        )),
    }
}

fn write_lines(
    mut stdin: ChildStdin,
    queue: Receiver<Vec<u8>>,
    failed: Arc<Mutex<Option<String>>>,
) {
    // Ends when the transport drops its sender (stdin is then closed by
    // dropping it here) or when the server stops accepting input.
    for line in queue {
        if let Err(e) = stdin.write_all(&line).and_then(|()| stdin.flush()) {
            let mut slot = match failed.lock() {
                Ok(guard) => guard,
                Err(poisoned) => poisoned.into_inner(),
            };
            *slot = Some(format!("cannot write to the server's stdin: {e}"));
            return;
        }
    }
}

fn read_lines(stdout: ChildStdout, tx: SyncSender<Incoming>, clock: Arc<dyn Clock>) {
    let mut reader = BufReader::with_capacity(64 * 1024, stdout);
    let mut line: Vec<u8> = Vec::new();
    let mut seen: u64 = 0;
    loop {
        let chunk = match reader.fill_buf() {
            Ok(chunk) => chunk,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                let _ = tx.send(Incoming::Closed {
                    t_us: clock.now_us(),
                    detail: format!("stdout read error: {e}"),
                });
                return;
            }
        };
        if chunk.is_empty() {
            if seen > 0 {
                let _ = tx.send(finish(&mut line, &mut seen, &clock));
            }
            let _ = tx.send(Incoming::Closed {
                t_us: clock.now_us(),
                detail: "server closed stdout".into(),
            });
            return;
        }
        let (part, newline) = match chunk.iter().position(|b| *b == b'\n') {
            Some(i) => (&chunk[..i], true),
            None => (chunk, false),
        };
        let room = MAX_LINE_BYTES.saturating_sub(line.len());
        line.extend_from_slice(&part[..part.len().min(room)]);
        seen += part.len() as u64;
        let consumed = part.len() + usize::from(newline);
        reader.consume(consumed);
        if newline && tx.send(finish(&mut line, &mut seen, &clock)).is_err() {
            return;
        }
    }
}

fn finish(line: &mut Vec<u8>, seen: &mut u64, clock: &Arc<dyn Clock>) -> Incoming {
    let mut bytes = std::mem::take(line);
    if bytes.last() == Some(&b'\r') {
        bytes.pop();
    }
    let total = std::mem::take(seen);
    Incoming::Line {
        cut_from: (total > MAX_LINE_BYTES as u64).then_some(total),
        bytes,
        t_us: clock.now_us(),
    }
}

fn drain_stderr(mut stderr: ChildStderr, sink: Arc<Mutex<StderrCapture>>) {
    let mut buf = [0u8; 8192];
    loop {
        match stderr.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => {
                let mut capture = match sink.lock() {
                    Ok(guard) => guard,
                    Err(poisoned) => poisoned.into_inner(),
                };
                capture.total += n as u64;
                let room = MAX_STDERR_BYTES.saturating_sub(capture.kept.len());
                let take = n.min(room);
                capture.kept.extend_from_slice(&buf[..take]);
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return,
        }
    }
}

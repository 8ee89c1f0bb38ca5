//! The stdio proxy: a host launches `mcp-witness proxy` as its server; every
//! line from the host goes to the real server and every line back, each
//! recorded first, byte for byte unchanged.

use std::io::{BufRead, BufReader, Read, Write};
use std::sync::mpsc::{Sender as EventSender, channel};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use witness_jail::interrupt;
use witness_wire::Incoming;

use crate::upstream::{ProxyOptions, Sender, Upstream, prepare};
use crate::witness::Witness;
use crate::{Notice, Notify};

/// Longest line taken from the host: longer ones are dropped, with a warning
/// in the trace (a host has no reason to send 64 MiB in one message).
const MAX_HOST_LINE: usize = 64 * 1024 * 1024;

/// Why the relay stopped.
enum Event {
    HostClosed,
    HostGone,
    ServerClosed(String),
}

/// How a proxy run ended: the trace's end reason.
pub struct Ended {
    pub reason: String,
}

type Shared = Arc<Mutex<Option<Witness>>>;

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    match mutex.lock() {
        Ok(guard) => guard,
        Err(poisoned) => poisoned.into_inner(),
    }
}

/// Runs the stdio proxy until the host closes its side, the server exits
/// or a signal arrives. `Err` (one line) means nothing was proxied.
/// What the proxy has to say goes to `notify`.
pub fn run(options: &ProxyOptions, notify: Notify) -> Result<Ended, String> {
    let prepared = prepare(options, notify.clone())?;
    if let Some(warning) = &prepared.warning {
        notify(&Notice::Warning(warning.clone()));
    }
    let witness: Shared = Arc::new(Mutex::new(Some(prepared.witness)));
    let (events, inbox) = channel();
    let upstream = Upstream::start(
        prepared.connection,
        to_host(witness.clone(), events.clone()),
    )?;
    let sender = upstream.sender();
    let reader_witness = witness.clone();
    std::thread::Builder::new()
        .name("mcp-witness-host".into())
        .spawn(move || from_host(&reader_witness, &sender, &events))
        .map_err(|e| format!("cannot start the relay: {e}"))?;
    let reason = loop {
        let event = inbox.recv_timeout(Duration::from_millis(100));
        // A signal kills the server at once, so its end is the signal's.
        if let Some(signal) = interrupt::signal() {
            break crate::stopped_by(signal);
        }
        match event {
            Ok(Event::HostClosed) => break "the host closed the proxy's input".to_owned(),
            Ok(Event::HostGone) => break "the host stopped reading the proxy's output".to_owned(),
            Ok(Event::ServerClosed(detail)) => break format!("the server ended: {detail}"),
            Err(_) => {}
        }
    };
    if let Some(w) = lock(&witness).as_mut() {
        w.before_stop();
    }
    upstream.stop();
    if let Some(w) = lock(&witness).take() {
        w.finish(&reason);
    }
    // The jail (and with it every copy) goes when `prepared`'s parts drop.
    drop(prepared.target);
    Ok(Ended { reason })
}

/// The pump's handler: record, then forward to the host's stdout.
#[allow(
    clippy::disallowed_methods,
    reason = "over stdio, stdout is the host's end of the protocol, not output for a person"
)]
fn to_host(witness: Shared, events: EventSender<Event>) -> crate::upstream::OnIncoming {
    let mut stdout = std::io::stdout();
    let mut gone = false;
    Box::new(move |incoming| match incoming {
        Incoming::Line { bytes, .. } => {
            if let Some(w) = lock(&witness).as_mut() {
                w.from_server(None, &bytes);
            }
            if gone {
                return;
            }
            let mut line = bytes;
            line.push(b'\n');
            if stdout
                .write_all(&line)
                .and_then(|()| stdout.flush())
                .is_err()
            {
                gone = true;
                let _ = events.send(Event::HostGone);
            }
        }
        Incoming::Closed { detail, .. } => {
            let _ = events.send(Event::ServerClosed(detail));
        }
        Incoming::Failed { detail, .. } => {
            if let Some(w) = lock(&witness).as_mut() {
                w.warn(format!("the upstream exchange failed: {detail}"));
            }
        }
    })
}

/// The host's lines, recorded, then forwarded unchanged.
fn from_host(witness: &Shared, sender: &Sender, events: &EventSender<Event>) {
    let mut input = BufReader::with_capacity(64 * 1024, std::io::stdin().lock());
    loop {
        let mut line = Vec::new();
        let read = (&mut input)
            .take(MAX_HOST_LINE as u64 + 1)
            .read_until(b'\n', &mut line);
        match read {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        if line.last() == Some(&b'\n') {
            line.pop();
        } else if line.len() > MAX_HOST_LINE {
            skip_rest_of_line(&mut input);
            if let Some(w) = lock(witness).as_mut() {
                w.warn(format!(
                    "a host line longer than {MAX_HOST_LINE} bytes was dropped"
                ));
            }
            continue;
        }
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        if let Some(w) = lock(witness).as_mut() {
            w.from_host(None, &line);
        }
        let text = String::from_utf8_lossy(&line);
        if let Err(e) = sender.send(&text)
            && let Some(w) = lock(witness).as_mut()
        {
            w.warn(format!("cannot forward a host message to the server: {e}"));
        }
    }
    let _ = events.send(Event::HostClosed);
}

fn skip_rest_of_line(input: &mut impl BufRead) {
    loop {
        let (done, used) = match input.fill_buf() {
            Ok([]) | Err(_) => return,
            Ok(chunk) => match chunk.iter().position(|b| *b == b'\n') {
                Some(i) => (true, i + 1),
                None => (false, chunk.len()),
            },
        };
        input.consume(used);
        if done {
            return;
        }
    }
}

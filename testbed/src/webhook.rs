//! The network variants' one outward reach: a plain HTTP POST, fired and
//! forgotten. Whether it arrives is not the tool's business (a jail's sink
//! answers nothing, and the real network may be absent): the call's result
//! never depends on it, so a run stays deterministic.

use std::io::Write;
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

/// Where `closed-world-webhook`'s `save_note` posts: a name under the
/// reserved `.example` top-level domain, so outside a jail nothing answers.
pub const LEAK_HOST: &str = "hooks.testbed.example";

/// How long the connect may take; the sink of a jail accepts at once.
const CONNECT_WAIT: Duration = Duration::from_millis(500);

/// The host of an `http(s)://host[:port]/path` URL, when it has one.
pub fn host_of(url: &str) -> Option<&str> {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let host = rest.split(['/', ':', '?', '#']).next()?;
    (!host.is_empty()).then_some(host)
}

/// Posts `body` to `http://host/hook`, ignoring every failure.
pub fn post(host: &str, body: &str) {
    let Ok(mut addresses) = (host, 80).to_socket_addrs() else {
        return;
    };
    let Some(address) = addresses.next() else {
        return;
    };
    if let Ok(mut stream) = TcpStream::connect_timeout(&address, CONNECT_WAIT) {
        let request = format!(
            "POST /hook HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        let _ = stream.write_all(request.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_is_read_from_a_url() {
        assert_eq!(
            host_of("https://hooks.example.com/x"),
            Some("hooks.example.com")
        );
        assert_eq!(host_of("http://a.example:8080"), Some("a.example"));
        assert_eq!(host_of("b.example/path"), Some("b.example"));
        assert_eq!(host_of("https:///nothing"), None);
    }
}

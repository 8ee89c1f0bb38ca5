//! The sink itself: a thread of the auditor that answers what the jailed
//! server sends to the sockets [`crate::setup`] made, records each attempt
//! and relays nothing.
//!
//! A connection is accepted (the kernel already completed its handshake),
//! its first bytes are read for a moment and digested, and it is closed
//! without a byte written back. A datagram is read and digested. A DNS
//! query to a resolv.conf nameserver is answered with a stand-in address
//! for its name, so the connection that follows is attributed to the name.
//! The audit cuts the record into windows with [`Sink::take`]: what arrived
//! before the call it closes belongs to that call.

use std::collections::BTreeMap;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags, Timespec};
use rustix::net::{RecvFlags, SendFlags, SocketFlags};
use witness_model::audit::NetworkAttempt;

use crate::setup::SinkSockets;
use crate::{FIRST_BYTES, dns};

/// How long a connection is given to send its first bytes.
const FIRST_BYTES_WAIT: Duration = Duration::from_millis(300);
/// At most this many connections wait for their first bytes at once; a
/// further one is recorded at once with what it sent so far.
const MAX_PENDING: usize = 256;
/// At most this many attempts are kept per window; the rest are counted.
pub const MAX_ATTEMPTS: usize = 1000;
/// How long [`Sink::take`] waits for the recorder to answer.
const TAKE_WAIT: Duration = Duration::from_secs(5);
/// The stand-in addresses the stub resolver hands out: 198.18.0.0/15.
const STAND_IN_BASE: u32 = 0xc612_0000;

/// An address and port.
type Destination = (IpAddr, u16);

/// What one window of the record holds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Window {
    /// Every attempt, sorted (so a report does not depend on timing).
    pub attempts: Vec<NetworkAttempt>,
    /// Attempts past [`MAX_ATTEMPTS`], counted and not kept.
    pub dropped: u64,
}

/// A running sink. Dropping it stops the recorder and closes every socket.
pub struct Sink {
    wake: OwnedFd,
    windows: mpsc::Receiver<Window>,
    thread: Option<JoinHandle<()>>,
}

impl Sink {
    /// Starts the recorder on `sockets`.
    pub fn start(sockets: SinkSockets) -> io::Result<Self> {
        let (read, write) = pipe()?;
        for fd in sockets
            .tcp
            .iter()
            .chain(&sockets.udp)
            .chain(sockets.dns.iter().map(|(_, fd)| fd))
        {
            rustix::io::ioctl_fionbio(fd, true)?;
        }
        let (send, windows) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("network-sink".into())
            .spawn(move || Recorder::new(sockets, read, send).run())?;
        Ok(Self {
            wake: write,
            windows,
            thread: Some(thread),
        })
    }

    /// Everything recorded since the last call: connections still waiting
    /// for their first bytes are closed with what they sent so far.
    /// `None` when the recorder is gone or did not answer in time: the
    /// network is then no longer observed, which is not "nothing was sent".
    pub fn take(&self) -> Option<Window> {
        // Anything left from a take that timed out is older: drop it.
        while self.windows.try_recv().is_ok() {}
        write_byte(&self.wake, b'f').ok()?;
        self.windows.recv_timeout(TAKE_WAIT).ok()
    }
}

impl Drop for Sink {
    fn drop(&mut self) {
        let _ = write_byte(&self.wake, b's');
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// A connection waiting for its first bytes.
struct Pending {
    fd: OwnedFd,
    destination: (IpAddr, u16),
    bytes: Vec<u8>,
    deadline: Instant,
}

struct Recorder {
    sockets: SinkSockets,
    wake: OwnedFd,
    out: mpsc::Sender<Window>,
    pending: Vec<Pending>,
    window: Window,
    /// The stub's stand-in address for each name asked, and back.
    names: BTreeMap<String, Ipv4Addr>,
    hosts: BTreeMap<Ipv4Addr, String>,
}

impl Recorder {
    fn new(sockets: SinkSockets, wake: OwnedFd, out: mpsc::Sender<Window>) -> Self {
        Self {
            sockets,
            wake,
            out,
            pending: Vec::new(),
            window: Window::default(),
            names: BTreeMap::new(),
            hosts: BTreeMap::new(),
        }
    }

    fn run(mut self) {
        loop {
            let timeout = self
                .pending
                .iter()
                .map(|p| p.deadline.saturating_duration_since(Instant::now()))
                .min()
                .map(|d| d.max(Duration::from_millis(1)))
                .and_then(|d| Timespec::try_from(d).ok());
            let woken = {
                let mut polls: Vec<PollFd<'_>> = std::iter::once(self.wake.as_fd())
                    .chain(self.sockets.tcp.iter().map(AsFd::as_fd))
                    .chain(self.sockets.udp.iter().map(AsFd::as_fd))
                    .chain(self.sockets.dns.iter().map(|(_, fd)| fd.as_fd()))
                    .chain(self.pending.iter().map(|p| p.fd.as_fd()))
                    .map(|fd| PollFd::from_borrowed_fd(fd, PollFlags::IN))
                    .collect();
                match rustix::event::poll(&mut polls, timeout.as_ref()) {
                    Ok(_) | Err(rustix::io::Errno::INTR) => {}
                    Err(_) => return,
                }
                !polls[0].revents().is_empty()
            };
            if woken {
                let mut buf = [0u8; 64];
                let n = match rustix::io::read(&self.wake, &mut buf) {
                    Ok(0) | Err(_) => return,
                    Ok(n) => n,
                };
                for &byte in &buf[..n] {
                    if byte == b's' {
                        return;
                    }
                    self.drain_all();
                    self.finish_pending(true);
                    let mut window = std::mem::take(&mut self.window);
                    window.attempts.sort();
                    if self.out.send(window).is_err() {
                        return;
                    }
                }
                continue;
            }
            self.drain_all();
            self.read_pending();
            self.finish_pending(false);
        }
    }

    fn drain_all(&mut self) {
        for i in 0..self.sockets.tcp.len() {
            self.accept_all(i);
        }
        for i in 0..self.sockets.udp.len() {
            self.datagrams(i);
        }
        for i in 0..self.sockets.dns.len() {
            self.queries(i);
        }
        self.read_pending();
    }

    fn record(&mut self, attempt: NetworkAttempt) {
        if self.window.attempts.len() < MAX_ATTEMPTS {
            self.window.attempts.push(attempt);
        } else {
            self.window.dropped += 1;
        }
    }

    fn host_of(&self, address: IpAddr) -> Option<String> {
        match address {
            IpAddr::V4(v4) => self.hosts.get(&v4).cloned(),
            IpAddr::V6(_) => None,
        }
    }

    fn attempt(
        &self,
        protocol: &str,
        (address, port): (IpAddr, u16),
        bytes: &[u8],
    ) -> NetworkAttempt {
        NetworkAttempt {
            protocol: protocol.into(),
            address: address.to_string(),
            port,
            host: self.host_of(address),
            bytes: bytes.len() as u64,
            digest: (!bytes.is_empty()).then(|| digest(bytes)),
        }
    }

    fn accept_all(&mut self, index: usize) {
        loop {
            let accepted = rustix::net::accept_with(
                &self.sockets.tcp[index],
                SocketFlags::NONBLOCK | SocketFlags::CLOEXEC,
            );
            let Ok(fd) = accepted else {
                return;
            };
            // The sink answers on the address the server asked for: its
            // local address is the original destination.
            let Some(destination) = local_address(&fd) else {
                continue;
            };
            let conn = Pending {
                fd,
                destination,
                bytes: Vec::new(),
                deadline: Instant::now() + FIRST_BYTES_WAIT,
            };
            if self.pending.len() >= MAX_PENDING {
                let attempt = self.attempt("tcp", conn.destination, &conn.bytes);
                self.record(attempt);
            } else {
                self.pending.push(conn);
            }
        }
    }

    fn read_pending(&mut self) {
        for conn in &mut self.pending {
            let mut buf = [0u8; FIRST_BYTES];
            loop {
                let room = FIRST_BYTES - conn.bytes.len();
                if room == 0 {
                    break;
                }
                match rustix::io::read(&conn.fd, &mut buf[..room]) {
                    Ok(0) => {
                        // Closed by the server: nothing more will come.
                        conn.deadline = Instant::now();
                        break;
                    }
                    Ok(n) => conn.bytes.extend_from_slice(&buf[..n]),
                    Err(_) => break,
                }
            }
            if conn.bytes.len() >= FIRST_BYTES {
                conn.deadline = Instant::now();
            }
        }
    }

    /// Records (and closes, unanswered) the connections whose time is up,
    /// or all of them.
    fn finish_pending(&mut self, all: bool) {
        let now = Instant::now();
        let (done, waiting): (Vec<Pending>, Vec<Pending>) = std::mem::take(&mut self.pending)
            .into_iter()
            .partition(|c| all || c.deadline <= now);
        self.pending = waiting;
        for conn in done {
            let attempt = self.attempt("tcp", conn.destination, &conn.bytes);
            self.record(attempt);
        }
    }

    fn datagrams(&mut self, index: usize) {
        loop {
            let Some((payload, destination)) = receive_with_destination(&self.sockets.udp[index])
            else {
                return;
            };
            let Some(destination) = destination else {
                continue;
            };
            let mut attempt = self.attempt("udp", destination, &payload);
            if destination.1 == 53
                && let Some(question) = dns::question(&payload)
            {
                // A query to a resolver the stub does not stand in for: the
                // name is recorded; nobody answers.
                attempt = self.attempt("dns", destination, question.wire(&payload));
                attempt.host = Some(question.name);
            }
            self.record(attempt);
        }
    }

    fn queries(&mut self, index: usize) {
        loop {
            let (nameserver, fd) = &self.sockets.dns[index];
            let nameserver = *nameserver;
            let mut buf = [0u8; 1500];
            let Ok((n, _, from)) = rustix::net::recvfrom(fd, &mut buf, RecvFlags::empty()) else {
                return;
            };
            let message = &buf[..n];
            let destination = (IpAddr::V4(nameserver), 53);
            let Some(question) = dns::question(message) else {
                let attempt = self.attempt("udp", destination, message);
                self.record(attempt);
                continue;
            };
            let stand_in = self.stand_in(&question.name);
            let reply = dns::answer(message, &question, stand_in);
            if let Some(from) = &from {
                let fd = &self.sockets.dns[index].1;
                let _ = rustix::net::sendto(fd, &reply, SendFlags::empty(), from);
            }
            let mut attempt = self.attempt("dns", destination, question.wire(message));
            attempt.host = Some(question.name);
            self.record(attempt);
        }
    }

    /// The stand-in address for `name`: the same for the same name, a new
    /// one (in the order names are first asked) otherwise.
    fn stand_in(&mut self, name: &str) -> Ipv4Addr {
        if let Some(address) = self.names.get(name) {
            return *address;
        }
        // 198.18.0.0/15 holds 131,070 hosts; past that, names share the last.
        let n = u32::try_from(self.names.len())
            .unwrap_or(u32::MAX)
            .min(0x1_fffd)
            + 1;
        let address = Ipv4Addr::from(STAND_IN_BASE + n);
        self.names.insert(name.to_owned(), address);
        self.hosts.entry(address).or_insert_with(|| name.to_owned());
        address
    }
}

/// `blake3:<16 hex>` of `bytes`: what a report says instead of them.
pub fn digest(bytes: &[u8]) -> String {
    let hex = blake3::hash(bytes).to_hex();
    format!("blake3:{}", &hex[..16])
}

fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    Ok(rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?)
}

fn write_byte(fd: &OwnedFd, byte: u8) -> io::Result<()> {
    match rustix::io::write(fd, &[byte])? {
        1 => Ok(()),
        _ => Err(io::Error::other("the recorder's pipe took nothing")),
    }
}

/// The local address of a connection the sink accepted: where the server
/// meant it to go.
fn local_address(fd: &OwnedFd) -> Option<Destination> {
    let address = SocketAddr::try_from(rustix::net::getsockname(fd).ok()?).ok()?;
    Some(destination_of(address))
}

/// An address as a report gives it: an IPv4 address mapped into IPv6 is
/// the IPv4 address.
fn destination_of(address: SocketAddr) -> Destination {
    let ip = match address.ip() {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
        v4 => v4,
    };
    (ip, address.port())
}

/// A `sockaddr_in` or `sockaddr_in6` as the kernel wrote it into a control
/// message, read field by field (family in host order, port and address in
/// network order).
fn socket_address(bytes: &[u8]) -> Option<Destination> {
    let family = i32::from(u16::from_ne_bytes(bytes.get(0..2)?.try_into().ok()?));
    let port = u16::from_be_bytes(bytes.get(2..4)?.try_into().ok()?);
    let ip = match family {
        libc::AF_INET => {
            let octets: [u8; 4] = bytes.get(4..8)?.try_into().ok()?;
            IpAddr::V4(Ipv4Addr::from(octets))
        }
        libc::AF_INET6 => {
            let octets: [u8; 16] = bytes.get(8..24)?.try_into().ok()?;
            IpAddr::V6(Ipv6Addr::from(octets))
        }
        _ => return None,
    };
    Some(destination_of(SocketAddr::new(ip, port)))
}

/// One datagram and the destination it was sent to (from the original
/// destination TPROXY kept), or `None` when none is waiting. rustix's
/// recvmsg hands over only descriptors and credentials from the control
/// messages, not IP_ORIGDSTADDR, so this one call is made raw.
fn receive_with_destination(fd: &OwnedFd) -> Option<(Vec<u8>, Option<Destination>)> {
    let mut payload = vec![0u8; 65536];
    let mut iov = libc::iovec {
        iov_base: payload.as_mut_ptr().cast(),
        iov_len: payload.len(),
    };
    let mut control = [0u8; 256];
    let mut original: Option<Vec<u8>> = None;
    // SAFETY: the header is zeroed (a valid empty msghdr), then pointed at
    // the payload and control buffers, which outlive the call. The control
    // messages walked are those the kernel wrote, within msg_controllen,
    // and a message's data is copied out within its own cmsg_len.
    let n = unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = control.len() as _;
        let n = libc::recvmsg(fd.as_raw_fd(), &mut msg, 0);
        let mut cmsg = if n >= 0 {
            libc::CMSG_FIRSTHDR(&msg)
        } else {
            std::ptr::null_mut()
        };
        while !cmsg.is_null() {
            let (level, kind) = ((*cmsg).cmsg_level, (*cmsg).cmsg_type);
            if (level == libc::SOL_IP && kind == libc::IP_ORIGDSTADDR)
                || (level == libc::SOL_IPV6 && kind == libc::IPV6_ORIGDSTADDR)
            {
                let len = ((*cmsg).cmsg_len as usize).saturating_sub(libc::CMSG_LEN(0) as usize);
                original = Some(std::slice::from_raw_parts(libc::CMSG_DATA(cmsg), len).to_vec());
            }
            cmsg = libc::CMSG_NXTHDR(&msg, cmsg);
        }
        n
    };
    let n = usize::try_from(n).ok()?;
    payload.truncate(n.min(FIRST_BYTES));
    let destination = original.as_deref().and_then(socket_address);
    Some((payload, destination))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::net::{TcpListener, TcpStream, UdpSocket};

    /// A sink on ordinary host-loopback sockets: what the recorder does with
    /// a connection does not depend on how it got there.
    #[test]
    fn connections_are_recorded_by_digest_and_never_answered() {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let udp = UdpSocket::bind("127.0.0.1:0").expect("udp");
        let sockets = SinkSockets {
            tcp: vec![OwnedFd::from(listener)],
            udp: vec![OwnedFd::from(udp)],
            dns: Vec::new(),
        };
        let sink = Sink::start(sockets).expect("sink");
        let mut client = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        client
            .write_all(b"POST /hook HTTP/1.1\r\n\r\n")
            .expect("write");
        client
            .set_read_timeout(Some(Duration::from_secs(2)))
            .expect("timeout");
        let mut answer = Vec::new();
        use std::io::Read;
        let got = client.read_to_end(&mut answer);
        assert!(answer.is_empty(), "the sink wrote back: {got:?}");
        let window = sink.take().expect("the recorder answers");
        assert_eq!(window.attempts.len(), 1, "{window:?}");
        let attempt = &window.attempts[0];
        assert_eq!(attempt.protocol, "tcp");
        assert_eq!(
            (attempt.address.as_str(), attempt.port),
            ("127.0.0.1", port)
        );
        assert_eq!(attempt.bytes, 23);
        assert_eq!(
            attempt.digest.as_deref(),
            Some(digest(b"POST /hook HTTP/1.1\r\n\r\n").as_str())
        );
        let again = sink.take().expect("the recorder answers");
        assert!(again.attempts.is_empty(), "a window is taken once");
    }

    #[test]
    fn the_stub_answers_a_name_and_attributes_the_connection_to_it() {
        let dns = UdpSocket::bind("127.0.0.1:0").expect("dns");
        let dns_port = dns.local_addr().expect("addr").port();
        let sockets = SinkSockets {
            tcp: Vec::new(),
            udp: Vec::new(),
            dns: vec![(Ipv4Addr::LOCALHOST, OwnedFd::from(dns))],
        };
        let sink = Sink::start(sockets).expect("sink");
        let client = UdpSocket::bind("127.0.0.1:0").expect("client");
        client
            .set_read_timeout(Some(Duration::from_secs(2)))
            .expect("timeout");
        let mut query = vec![0xab, 0xcd, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0];
        for label in ["hooks", "example", "com"] {
            query.push(label.len() as u8);
            query.extend_from_slice(label.as_bytes());
        }
        query.extend_from_slice(&[0, 0, 1, 0, 1]);
        client
            .send_to(&query, ("127.0.0.1", dns_port))
            .expect("send");
        let mut reply = [0u8; 512];
        let n = client.recv(&mut reply).expect("an answer");
        assert_eq!(&reply[n - 4..n], &[198, 18, 0, 1]);
        let window = sink.take().expect("the recorder answers");
        assert_eq!(window.attempts.len(), 1);
        assert_eq!(window.attempts[0].protocol, "dns");
        assert_eq!(
            window.attempts[0].host.as_deref(),
            Some("hooks.example.com")
        );
    }
}

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
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

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
            nonblocking(fd.as_raw_fd())?;
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
            let mut fds: Vec<RawFd> = vec![self.wake.as_raw_fd()];
            fds.extend(self.sockets.tcp.iter().map(AsRawFd::as_raw_fd));
            fds.extend(self.sockets.udp.iter().map(AsRawFd::as_raw_fd));
            fds.extend(self.sockets.dns.iter().map(|(_, fd)| fd.as_raw_fd()));
            fds.extend(self.pending.iter().map(|p| p.fd.as_raw_fd()));
            let mut polls: Vec<libc::pollfd> = fds
                .iter()
                .map(|&fd| libc::pollfd {
                    fd,
                    events: libc::POLLIN,
                    revents: 0,
                })
                .collect();
            let timeout = self
                .pending
                .iter()
                .map(|p| p.deadline.saturating_duration_since(Instant::now()))
                .min()
                .map_or(-1, |d| {
                    i32::try_from(d.as_millis()).unwrap_or(i32::MAX).max(1)
                });
            // SAFETY: polls is a live array of the length given.
            let ready =
                unsafe { libc::poll(polls.as_mut_ptr(), polls.len() as libc::nfds_t, timeout) };
            if ready < 0 && io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
                return;
            }
            if polls[0].revents != 0 {
                let mut buf = [0u8; 64];
                // SAFETY: reading into a live buffer from our own pipe.
                let n = unsafe {
                    libc::read(self.wake.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len())
                };
                if n <= 0 {
                    return;
                }
                for &byte in &buf[..n as usize] {
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
            let listener = self.sockets.tcp[index].as_raw_fd();
            // SAFETY: accept4 on our listening socket; the peer address is not wanted.
            let fd = unsafe {
                libc::accept4(
                    listener,
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                    libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
                )
            };
            if fd < 0 {
                return;
            }
            // SAFETY: a new descriptor, ours alone.
            let fd = unsafe { OwnedFd::from_raw_fd(fd) };
            // The sink answers on the address the server asked for: its
            // local address is the original destination.
            let Some(destination) = local_address(fd.as_raw_fd()) else {
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
                // SAFETY: reading into a live buffer of at least `room` bytes.
                let n = unsafe { libc::read(conn.fd.as_raw_fd(), buf.as_mut_ptr().cast(), room) };
                if n > 0 {
                    conn.bytes.extend_from_slice(&buf[..n as usize]);
                    continue;
                }
                if n == 0 {
                    // Closed by the server: nothing more will come.
                    conn.deadline = Instant::now();
                }
                break;
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
            let fd = self.sockets.udp[index].as_raw_fd();
            let Some((payload, destination)) = receive_with_destination(fd) else {
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
            let (nameserver, fd) = {
                let (ns, fd) = &self.sockets.dns[index];
                (*ns, fd.as_raw_fd())
            };
            let mut buf = [0u8; 1500];
            // SAFETY: a zeroed sockaddr_in receives the sender.
            let mut from: libc::sockaddr_in = unsafe { std::mem::zeroed() };
            let mut len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
            // SAFETY: live buffers of the sizes given.
            let n = unsafe {
                libc::recvfrom(
                    fd,
                    buf.as_mut_ptr().cast(),
                    buf.len(),
                    0,
                    (&mut from as *mut libc::sockaddr_in).cast(),
                    &mut len,
                )
            };
            if n < 0 {
                return;
            }
            let message = &buf[..n as usize];
            let destination = (IpAddr::V4(nameserver), 53);
            let Some(question) = dns::question(message) else {
                let attempt = self.attempt("udp", destination, message);
                self.record(attempt);
                continue;
            };
            let stand_in = self.stand_in(&question.name);
            let reply = dns::answer(message, &question, stand_in);
            // SAFETY: sending a live buffer to the address it came from.
            unsafe {
                libc::sendto(
                    fd,
                    reply.as_ptr().cast(),
                    reply.len(),
                    0,
                    (&from as *const libc::sockaddr_in).cast(),
                    len,
                );
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
    let mut fds = [0i32; 2];
    // SAFETY: pipe2 fills two descriptors we then own.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both were just created and are ours alone.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

fn write_byte(fd: &OwnedFd, byte: u8) -> io::Result<()> {
    // SAFETY: writing one byte from a live buffer to our own pipe.
    if unsafe { libc::write(fd.as_raw_fd(), (&byte as *const u8).cast(), 1) } == 1 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

fn nonblocking(fd: RawFd) -> io::Result<()> {
    // SAFETY: fcntl on a descriptor we own.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags < 0 || libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

fn local_address(fd: RawFd) -> Option<(IpAddr, u16)> {
    // SAFETY: a zeroed sockaddr_storage is large enough for any address.
    let mut storage: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
    // SAFETY: live storage of the size given.
    if unsafe {
        libc::getsockname(
            fd,
            (&mut storage as *mut libc::sockaddr_storage).cast(),
            &mut len,
        )
    } != 0
    {
        return None;
    }
    socket_address(&storage)
}

fn socket_address(storage: &libc::sockaddr_storage) -> Option<(IpAddr, u16)> {
    match i32::from(storage.ss_family) {
        libc::AF_INET => {
            // SAFETY: the family says this storage holds a sockaddr_in.
            let addr =
                unsafe { &*(storage as *const libc::sockaddr_storage).cast::<libc::sockaddr_in>() };
            Some((
                IpAddr::V4(Ipv4Addr::from(u32::from_be(addr.sin_addr.s_addr))),
                u16::from_be(addr.sin_port),
            ))
        }
        libc::AF_INET6 => {
            // SAFETY: the family says this storage holds a sockaddr_in6.
            let addr = unsafe {
                &*(storage as *const libc::sockaddr_storage).cast::<libc::sockaddr_in6>()
            };
            let ip = Ipv6Addr::from(addr.sin6_addr.s6_addr);
            let ip = ip.to_ipv4_mapped().map_or(IpAddr::V6(ip), IpAddr::V4);
            Some((ip, u16::from_be(addr.sin6_port)))
        }
        _ => None,
    }
}

/// One datagram and the destination it was sent to (from the original
/// destination TPROXY kept), or `None` when none is waiting.
fn receive_with_destination(fd: RawFd) -> Option<(Vec<u8>, Option<Destination>)> {
    let mut payload = vec![0u8; 65536];
    let mut iov = libc::iovec {
        iov_base: payload.as_mut_ptr().cast(),
        iov_len: payload.len(),
    };
    let mut control = [0u8; 256];
    // SAFETY: a zeroed msghdr, then pointed at live buffers.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = control.len() as _;
    // SAFETY: msg points at live buffers of the stated sizes.
    let n = unsafe { libc::recvmsg(fd, &mut msg, 0) };
    if n < 0 {
        return None;
    }
    payload.truncate((n as usize).min(FIRST_BYTES));
    let mut destination = None;
    // SAFETY: walking the control messages the kernel wrote.
    unsafe {
        let mut cmsg = libc::CMSG_FIRSTHDR(&msg);
        while !cmsg.is_null() {
            let (level, kind) = ((*cmsg).cmsg_level, (*cmsg).cmsg_type);
            let original = (level == libc::SOL_IP && kind == libc::IP_ORIGDSTADDR)
                || (level == libc::SOL_IPV6 && kind == libc::IPV6_ORIGDSTADDR);
            if original {
                let mut storage: libc::sockaddr_storage = std::mem::zeroed();
                let len = ((*cmsg).cmsg_len as usize - libc::CMSG_LEN(0) as usize)
                    .min(std::mem::size_of::<libc::sockaddr_storage>());
                std::ptr::copy_nonoverlapping(
                    libc::CMSG_DATA(cmsg),
                    (&mut storage as *mut libc::sockaddr_storage).cast::<u8>(),
                    len,
                );
                destination = socket_address(&storage);
            }
            cmsg = libc::CMSG_NXTHDR(&msg, cmsg);
        }
    }
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

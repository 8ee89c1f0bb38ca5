//! The TCP sockets a server listens on in the jail's own network namespace.
//!
//! Read out of band, as the observers read a store: the kernel's table of
//! the namespace's TCP sockets, asked through the `sock_diag` netlink
//! interface on a socket made once in that namespace (a socket's namespace
//! is fixed when it is made), so nothing the server does changes how it is
//! read, and a socket it closed again before the next look is simply not
//! seen. The network observer's own listening sockets are in the same table
//! and are left out by their inodes.
//!
//! Why not `/proc/PID/net/tcp` (and `tcp6`) of the sandbox's init, as
//! before: a new namespace shares the host's established-connection hash
//! (unless `net.ipv4.tcp_child_ehash_entries` is set), and every `read` of
//! those files that starts or ends a pass walks all of its buckets (262144
//! on a 24 GiB machine), empty or not, whatever namespace asks: 2-5 ms per
//! walk, four walks or more per look, around every call. A `sock_diag` dump
//! asked for `LISTEN` alone walks only the listening hash. Where the socket
//! cannot be made (joining the namespace needs `CAP_SYS_ADMIN` over it, as
//! root has) or the kernel stops answering, the files are read as before.
//!
//! Only TCP: a listening TCP socket is in state `LISTEN`, while a bound UDP
//! socket looks the same whether it serves or only sent a datagram from a
//! port the kernel picked.

use std::collections::BTreeSet;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;
use std::time::Duration;

use rustix::net::{
    AddressFamily, RecvFlags, SendFlags, SocketFlags, SocketType, netlink, sockopt::Timeout,
};
use rustix::thread::LinkNameSpaceType;
use witness_model::audit::ListeningSocket;

/// `TCP_LISTEN` in the kernel's state numbering (`include/net/tcp_states.h`).
const TCP_LISTEN: u8 = 10;
/// The same, as `/proc/net/tcp` prints it.
const LISTEN: &str = "0A";

/// The listening TCP sockets of one jail's network namespace.
#[derive(Debug)]
pub(crate) struct Listeners {
    pid: i32,
    ignored: Vec<u64>,
    /// The `sock_diag` socket made in the namespace, or `None` where it
    /// could not be made or stopped answering: then `/proc` is read.
    diag: Option<OwnedFd>,
    /// Each dump's sequence number, so a late answer to an earlier one is
    /// never taken for this one's.
    seq: u32,
}

impl Listeners {
    /// The namespace of `pid` (the sandbox's init, alive at launch), less
    /// the sockets whose inodes are `ignored` (the network observer's).
    pub(crate) fn new(pid: i32, ignored: Vec<u64>) -> Self {
        Self {
            pid,
            ignored,
            diag: diag_socket_in(pid).ok(),
            seq: 0,
        }
    }

    /// The listening sockets now.
    pub(crate) fn read(&mut self) -> BTreeSet<ListeningSocket> {
        if let Some(diag) = &self.diag {
            let mut out = BTreeSet::new();
            let mut answered = true;
            for family in [Family::V4, Family::V6] {
                self.seq = self.seq.wrapping_add(1);
                match dump(diag, family, self.seq, &self.ignored) {
                    Ok(found) => out.extend(found),
                    Err(_) => {
                        answered = false;
                        break;
                    }
                }
            }
            if answered {
                return out;
            }
            // Never half of one way and half of the other: from here on
            // the files.
            self.diag = None;
        }
        read_proc(self.pid, &self.ignored)
    }
}

/// Why the `sock_diag` way was not taken (the files are read instead).
#[derive(Debug, thiserror::Error)]
pub(crate) enum DiagError {
    #[error("the network namespace: {0}")]
    Namespace(std::io::Error),
    #[error("joining the network namespace: {0}")]
    Join(rustix::io::Errno),
    #[error("a thread to join the namespace: {0}")]
    Spawn(std::io::Error),
    #[error("the thread that joins the namespace ended without an answer")]
    Thread,
    #[error("the netlink socket: {0}")]
    Socket(rustix::io::Errno),
    #[error("the netlink request: {0}")]
    Send(rustix::io::Errno),
    #[error("the netlink answer: {0}")]
    Recv(rustix::io::Errno),
    #[error("the kernel refused the dump: errno {0}")]
    Refused(i32),
    #[error("a netlink answer of {0} bytes does not fit the buffer")]
    Truncated(usize),
    #[error("a malformed netlink answer: {0}")]
    Malformed(&'static str),
}

/// A `NETLINK_SOCK_DIAG` socket made in the network namespace of `pid`:
/// a short-lived thread joins the namespace, makes the socket and hands it
/// back; the process's other threads never leave their own namespace.
pub(crate) fn diag_socket_in(pid: i32) -> Result<OwnedFd, DiagError> {
    let namespace = std::fs::File::open(Path::new("/proc").join(pid.to_string()).join("ns/net"))
        .map_err(DiagError::Namespace)?;
    std::thread::scope(|scope| {
        // A thread the system will not give is a refusal like any other,
        // never a panic.
        let joiner = std::thread::Builder::new()
            .name("netns-diag".into())
            .spawn_scoped(scope, || {
                rustix::thread::move_into_link_name_space(
                    namespace.as_fd(),
                    Some(LinkNameSpaceType::Network),
                )
                .map_err(DiagError::Join)?;
                diag_socket()
            })
            .map_err(DiagError::Spawn)?;
        joiner.join().map_err(|_| DiagError::Thread)?
    })
}

/// A `NETLINK_SOCK_DIAG` socket in the calling thread's network namespace.
fn diag_socket() -> Result<OwnedFd, DiagError> {
    let socket = rustix::net::socket_with(
        AddressFamily::NETLINK,
        SocketType::DGRAM,
        SocketFlags::CLOEXEC,
        Some(netlink::SOCK_DIAG),
    )
    .map_err(DiagError::Socket)?;
    // The kernel answers a dump within the call that asks and the calls
    // that read; the timeout only keeps an unforeseen silence from
    // stopping the audit (the files are read then).
    rustix::net::sockopt::set_socket_timeout(&socket, Timeout::Recv, Some(RECV_WAIT))
        .map_err(DiagError::Socket)?;
    Ok(socket)
}

const RECV_WAIT: Duration = Duration::from_secs(2);

/// An address family of the dump, and of its table in `/proc`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    V4,
    V6,
}

impl Family {
    fn code(self) -> u8 {
        match self {
            Family::V4 => AddressFamily::INET.as_raw() as u8,
            Family::V6 => AddressFamily::INET6.as_raw() as u8,
        }
    }
}

// From `include/uapi/linux/netlink.h`, `sock_diag.h` and `inet_diag.h`.
const NLMSG_HDRLEN: usize = 16;
const NLMSG_ERROR: u16 = 2;
const NLMSG_DONE: u16 = 3;
const NLM_F_REQUEST: u16 = 0x1;
const NLM_F_DUMP: u16 = 0x300;
const SOCK_DIAG_BY_FAMILY: u16 = 20;
const IPPROTO_TCP: u8 = 6;
/// `struct inet_diag_req_v2`: family, protocol, ext, pad, states, then a
/// 48-byte `inet_diag_sockid`, all zero here (no socket picked out).
const REQ_LEN: usize = 56;
/// `struct inet_diag_msg`: family, state, timer, retrans, the sockid
/// (sport and dport big-endian at 4 and 6, src at 8, dst at 24, if, cookie),
/// expires, rqueue, wqueue, uid, and the inode at 68.
const MSG_LEN: usize = 72;
/// The kernel fills at most 32 KiB per read of a dump.
const BUFFER: usize = 64 * 1024;

/// The `SOCK_DIAG_BY_FAMILY` dump request for `family`'s TCP sockets in
/// state `LISTEN`.
fn request(family: Family, seq: u32) -> [u8; NLMSG_HDRLEN + REQ_LEN] {
    let mut out = [0u8; NLMSG_HDRLEN + REQ_LEN];
    let len = (NLMSG_HDRLEN + REQ_LEN) as u32;
    out[0..4].copy_from_slice(&len.to_ne_bytes());
    out[4..6].copy_from_slice(&SOCK_DIAG_BY_FAMILY.to_ne_bytes());
    out[6..8].copy_from_slice(&(NLM_F_REQUEST | NLM_F_DUMP).to_ne_bytes());
    out[8..12].copy_from_slice(&seq.to_ne_bytes());
    // nlmsg_pid 0: the kernel.
    out[16] = family.code();
    out[17] = IPPROTO_TCP;
    out[20..24].copy_from_slice(&(1u32 << TCP_LISTEN).to_ne_bytes());
    out
}

/// One family's listening sockets, asked of the kernel on `diag`.
fn dump(
    diag: &OwnedFd,
    family: Family,
    seq: u32,
    ignored: &[u64],
) -> Result<Vec<ListeningSocket>, DiagError> {
    let ask = request(family, seq);
    // A signal to the audit (its own SIGINT handling) is no refusal.
    let sent = rustix::io::retry_on_intr(|| rustix::net::send(diag, &ask, SendFlags::empty()))
        .map_err(DiagError::Send)?;
    if sent != ask.len() {
        return Err(DiagError::Malformed("the request was cut short"));
    }
    let mut buffer = vec![0u8; BUFFER];
    let mut out = Vec::new();
    loop {
        let (got, whole) = rustix::io::retry_on_intr(|| {
            rustix::net::recv(diag, &mut buffer[..], RecvFlags::TRUNC)
        })
        .map_err(DiagError::Recv)?;
        let got = buffer
            .get(..got)
            .ok_or(DiagError::Malformed("more read than the buffer holds"))?;
        if whole > got.len() {
            return Err(DiagError::Truncated(whole));
        }
        if parse_answer(got, family, seq, ignored, &mut out)? == Answer::Done {
            return Ok(out);
        }
    }
}

/// Whether a dump's answer is complete.
#[derive(Debug, PartialEq, Eq)]
enum Answer {
    More,
    Done,
}

/// The netlink messages of one read of a dump's answer: the `LISTEN`
/// sockets among them go to `out`, but those whose inode is `ignored`;
/// messages of another sequence number (a late answer to an earlier dump)
/// are passed over.
fn parse_answer(
    bytes: &[u8],
    family: Family,
    seq: u32,
    ignored: &[u64],
    out: &mut Vec<ListeningSocket>,
) -> Result<Answer, DiagError> {
    let mut rest = bytes;
    while !rest.is_empty() {
        let header = rest
            .get(..NLMSG_HDRLEN)
            .ok_or(DiagError::Malformed("a message header is cut short"))?;
        let len = u32_at(header, 0)? as usize;
        let kind = u16_at(header, 4)?;
        let message_seq = u32_at(header, 8)?;
        if len < NLMSG_HDRLEN {
            return Err(DiagError::Malformed("a message shorter than its header"));
        }
        let body = rest
            .get(NLMSG_HDRLEN..len)
            .ok_or(DiagError::Malformed("a message longer than the answer"))?;
        // Messages are aligned to four bytes; the last may lack the padding.
        rest = rest.get(len.next_multiple_of(4)..).unwrap_or_default();
        if message_seq != seq {
            continue;
        }
        match kind {
            NLMSG_DONE => return Ok(Answer::Done),
            NLMSG_ERROR => {
                let errno = body
                    .get(..4)
                    .map(|b| i32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
                    .ok_or(DiagError::Malformed("an error message without its code"))?;
                return Err(DiagError::Refused(-errno));
            }
            SOCK_DIAG_BY_FAMILY => {
                if let Some(socket) = listening_socket(body, family, ignored)? {
                    out.push(socket);
                }
            }
            _ => {}
        }
    }
    Ok(Answer::More)
}

/// One `inet_diag_msg`, if it is a `LISTEN` socket of `family` not ignored.
fn listening_socket(
    body: &[u8],
    family: Family,
    ignored: &[u64],
) -> Result<Option<ListeningSocket>, DiagError> {
    let msg = body
        .get(..MSG_LEN)
        .ok_or(DiagError::Malformed("a socket message is cut short"))?;
    if msg[0] != family.code() || msg[1] != TCP_LISTEN {
        return Ok(None);
    }
    let inode = u32_at(msg, 68)?;
    if ignored.contains(&u64::from(inode)) {
        return Ok(None);
    }
    let port = u16::from_be_bytes([msg[4], msg[5]]);
    let address = match family {
        Family::V4 => Ipv4Addr::from([msg[8], msg[9], msg[10], msg[11]]).to_string(),
        Family::V6 => {
            let mut bytes = [0u8; 16];
            bytes.copy_from_slice(&msg[8..24]);
            Ipv6Addr::from(bytes).to_string()
        }
    };
    Ok(Some(ListeningSocket {
        protocol: "tcp".into(),
        address,
        port,
    }))
}

fn u32_at(bytes: &[u8], at: usize) -> Result<u32, DiagError> {
    bytes
        .get(at..at + 4)
        .map(|b| u32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
        .ok_or(DiagError::Malformed("a field past the message's end"))
}

fn u16_at(bytes: &[u8], at: usize) -> Result<u16, DiagError> {
    bytes
        .get(at..at + 2)
        .map(|b| u16::from_ne_bytes([b[0], b[1]]))
        .ok_or(DiagError::Malformed("a field past the message's end"))
}

/// The listening TCP sockets of the network namespace of `pid`, but those
/// whose inode is in `ignored`, read from `/proc/PID/net/tcp` and `tcp6`.
pub(crate) fn read_proc(pid: i32, ignored: &[u64]) -> BTreeSet<ListeningSocket> {
    let net = Path::new("/proc").join(pid.to_string()).join("net");
    let mut out = BTreeSet::new();
    for (file, ipv6) in [("tcp", false), ("tcp6", true)] {
        // A namespace without IPv6 has no tcp6; a process gone has neither.
        if let Ok(table) = std::fs::read_to_string(net.join(file)) {
            out.extend(parse(&table, ipv6, ignored));
        }
    }
    out
}

/// The `LISTEN` rows of one table.
fn parse(table: &str, ipv6: bool, ignored: &[u64]) -> Vec<ListeningSocket> {
    table
        .lines()
        .skip(1)
        .filter_map(|line| {
            // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
            let fields: Vec<&str> = line.split_whitespace().collect();
            let (local, state, inode) = (fields.get(1)?, fields.get(3)?, fields.get(9)?);
            if *state != LISTEN {
                return None;
            }
            if ignored.contains(&inode.parse().ok()?) {
                return None;
            }
            let (address, port) = local.split_once(':')?;
            let port = u16::from_str_radix(port, 16).ok()?;
            let address = if ipv6 {
                ipv6_address(address)?.to_string()
            } else {
                ipv4_address(address)?.to_string()
            };
            Some(ListeningSocket {
                protocol: "tcp".into(),
                address,
                port,
            })
        })
        .collect()
}

/// The kernel prints an IPv4 address as one 32-bit word in host order.
fn ipv4_address(hex: &str) -> Option<Ipv4Addr> {
    let word = u32::from_str_radix(hex, 16).ok()?;
    Some(Ipv4Addr::from(word.to_ne_bytes()))
}

/// And an IPv6 address as four such words.
fn ipv6_address(hex: &str) -> Option<Ipv6Addr> {
    if hex.len() != 32 {
        return None;
    }
    let mut bytes = [0u8; 16];
    for (i, chunk) in bytes.chunks_mut(4).enumerate() {
        let word = u32::from_str_radix(hex.get(i * 8..i * 8 + 8)?, 16).ok()?;
        chunk.copy_from_slice(&word.to_ne_bytes());
    }
    Some(Ipv6Addr::from(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listening_rows_are_read_and_the_rest_left_out() {
        let v4 = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n   \
            0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1001 1 0 100 0 0 10 0\n   \
            1: 00000000:798F 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1002 1 0 100 0 0 10 0\n   \
            2: 00000000:0001 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 7 1 0 100 0 0 10 0\n   \
            3: 0100007F:9C40 0100007F:1F90 01 00000000:00000000 00:00000000 00000000     0        0 1003 1 0 100 0 0 10 0\n";
        let found = parse(v4, false, &[7]);
        let shown: Vec<String> = found
            .iter()
            .map(|s| format!("{} {}:{}", s.protocol, s.address, s.port))
            .collect();
        // The sink's own socket (inode 7) and a connected socket are not.
        assert_eq!(shown, ["tcp 127.0.0.1:8080", "tcp 0.0.0.0:31119"]);

        let v6 = "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n   \
            0: 00000000000000000000000001000000:1F91 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 2001 1 0 100 0 0 10 0\n   \
            1: 00000000000000000000000000000000:1F92 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 2002 1 0 100 0 0 10 0\n";
        let found = parse(v6, true, &[]);
        assert_eq!(found[0].address, "::1");
        assert_eq!(found[0].port, 8081);
        assert_eq!(found[1].address, "::");
    }

    #[test]
    fn a_process_gone_has_no_sockets() {
        assert!(read_proc(i32::MAX, &[]).is_empty());
        assert!(Listeners::new(i32::MAX, Vec::new()).read().is_empty());
    }
    /// One netlink message: header, then `body`, padded to four bytes.
    fn message(kind: u16, seq: u32, body: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend(((NLMSG_HDRLEN + body.len()) as u32).to_ne_bytes());
        out.extend(kind.to_ne_bytes());
        out.extend(2u16.to_ne_bytes());
        out.extend(seq.to_ne_bytes());
        out.extend(0u32.to_ne_bytes());
        out.extend(body);
        while out.len() % 4 != 0 {
            out.push(0);
        }
        out
    }

    /// An `inet_diag_msg` as the kernel writes it.
    fn diag_msg(family: Family, state: u8, address: &[u8], port: u16, inode: u32) -> Vec<u8> {
        let mut msg = vec![0u8; MSG_LEN];
        msg[0] = family.code();
        msg[1] = state;
        msg[4..6].copy_from_slice(&port.to_be_bytes());
        msg[8..8 + address.len()].copy_from_slice(address);
        msg[68..72].copy_from_slice(&inode.to_ne_bytes());
        // The attributes the kernel may append are passed over.
        msg.extend([8, 0, 1, 0, 0, 0, 0, 0]);
        msg
    }

    fn shown(found: &[ListeningSocket]) -> Vec<String> {
        found
            .iter()
            .map(|s| format!("{} {} {}", s.protocol, s.address, s.port))
            .collect()
    }

    #[test]
    fn a_dump_answer_gives_its_listening_sockets_but_the_ignored() {
        let mut answer = Vec::new();
        answer.extend(message(
            SOCK_DIAG_BY_FAMILY,
            7,
            &diag_msg(Family::V4, TCP_LISTEN, &[127, 0, 0, 1], 8080, 1001),
        ));
        // The sink's own socket, by its inode.
        answer.extend(message(
            SOCK_DIAG_BY_FAMILY,
            7,
            &diag_msg(Family::V4, TCP_LISTEN, &[0, 0, 0, 0], 1, 5),
        ));
        // Not listening (the kernel was asked for LISTEN alone, but
        // nothing it says is taken on trust).
        answer.extend(message(
            SOCK_DIAG_BY_FAMILY,
            7,
            &diag_msg(Family::V4, 1, &[127, 0, 0, 1], 40000, 1002),
        ));
        // A late answer to an earlier dump.
        answer.extend(message(
            SOCK_DIAG_BY_FAMILY,
            6,
            &diag_msg(Family::V4, TCP_LISTEN, &[10, 0, 0, 1], 9, 1003),
        ));
        answer.extend(message(
            SOCK_DIAG_BY_FAMILY,
            7,
            &diag_msg(Family::V4, TCP_LISTEN, &[0, 0, 0, 0], 31119, 1004),
        ));
        let mut out = Vec::new();
        let done = parse_answer(&answer, Family::V4, 7, &[5], &mut out);
        assert_eq!(done.ok(), Some(Answer::More));
        assert_eq!(shown(&out), ["tcp 127.0.0.1 8080", "tcp 0.0.0.0 31119"]);

        // The end of the dump, with done of an earlier one before it.
        let mut end = message(NLMSG_DONE, 6, &[0; 4]);
        end.extend(message(NLMSG_DONE, 7, &[0; 4]));
        let mut out = Vec::new();
        let done = parse_answer(&end, Family::V4, 7, &[], &mut out);
        assert_eq!(done.ok(), Some(Answer::Done));
        assert!(out.is_empty());

        let mut loopback = [0u8; 16];
        loopback[15] = 1;
        let mut answer = message(
            SOCK_DIAG_BY_FAMILY,
            1,
            &diag_msg(Family::V6, TCP_LISTEN, &loopback, 8081, 2001),
        );
        answer.extend(message(
            SOCK_DIAG_BY_FAMILY,
            1,
            &diag_msg(Family::V6, TCP_LISTEN, &[0; 16], 8082, 2002),
        ));
        answer.extend(message(NLMSG_DONE, 1, &[0; 4]));
        let mut out = Vec::new();
        let done = parse_answer(&answer, Family::V6, 1, &[], &mut out);
        assert_eq!(done.ok(), Some(Answer::Done));
        assert_eq!(shown(&out), ["tcp ::1 8081", "tcp :: 8082"]);
    }

    #[test]
    fn a_refused_or_malformed_answer_is_an_error() {
        let refused = message(NLMSG_ERROR, 3, &(-22i32).to_ne_bytes());
        let mut out = Vec::new();
        assert!(matches!(
            parse_answer(&refused, Family::V4, 3, &[], &mut out),
            Err(DiagError::Refused(22))
        ));
        let whole = message(
            SOCK_DIAG_BY_FAMILY,
            3,
            &diag_msg(Family::V4, TCP_LISTEN, &[127, 0, 0, 1], 1, 1),
        );
        // Cut anywhere, the answer is refused, never read past its end.
        for cut in 1..whole.len() {
            let mut out = Vec::new();
            assert!(
                parse_answer(&whole[..cut], Family::V4, 3, &[], &mut out).is_err(),
                "cut at {cut}"
            );
        }
        // A length shorter than the header itself.
        let mut short = message(NLMSG_DONE, 3, &[]);
        short[0..4].copy_from_slice(&4u32.to_ne_bytes());
        assert!(parse_answer(&short, Family::V4, 3, &[], &mut Vec::new()).is_err());
    }

    #[test]
    fn the_request_asks_for_tcp_listen_of_one_family() {
        let ask = request(Family::V6, 9);
        assert_eq!(u32_at(&ask, 0).ok(), Some(72));
        assert_eq!(u16_at(&ask, 4).ok(), Some(SOCK_DIAG_BY_FAMILY));
        assert_eq!(u16_at(&ask, 6).ok(), Some(NLM_F_REQUEST | NLM_F_DUMP));
        assert_eq!(u32_at(&ask, 8).ok(), Some(9));
        assert_eq!(ask[16], AddressFamily::INET6.as_raw() as u8);
        assert_eq!(ask[17], IPPROTO_TCP);
        assert_eq!(u32_at(&ask, 20).ok(), Some(1 << 10));
    }

    /// The kernel's answer on a socket in this test's own namespace
    /// agrees with its `/proc` table about a socket this test listens on.
    #[test]
    fn the_kernel_dump_and_the_proc_table_agree() {
        let Ok(diag) = diag_socket() else {
            println!("skipped: no sock_diag netlink socket here");
            return;
        };
        let mut listeners = vec![std::net::TcpListener::bind("127.0.0.1:0")];
        listeners.push(std::net::TcpListener::bind("[::1]:0"));
        for listener in listeners.into_iter().flatten() {
            let Ok(local) = listener.local_addr() else {
                continue;
            };
            let family = if local.is_ipv4() {
                Family::V4
            } else {
                Family::V6
            };
            let ours = ListeningSocket {
                protocol: "tcp".into(),
                address: local.ip().to_string(),
                port: local.port(),
            };
            let inode = rustix::fs::fstat(&listener).map(|s| s.st_ino).unwrap_or(0);
            let dumped = dump(&diag, family, 1, &[]).unwrap_or_default();
            assert!(dumped.contains(&ours), "{ours:?} not in {dumped:?}");
            let own = std::process::id() as i32;
            assert!(read_proc(own, &[]).contains(&ours));
            // Left out by its inode, both ways.
            let dumped = dump(&diag, family, 2, &[inode]).unwrap_or_default();
            assert!(!dumped.contains(&ours));
            assert!(!read_proc(own, &[inode]).contains(&ours));
            // And through a socket made by joining the namespace, where
            // this process may (root may).
            if let Ok(joined) = diag_socket_in(own) {
                let dumped = dump(&joined, family, 3, &[]).unwrap_or_default();
                assert!(dumped.contains(&ours));
            }
            let mut looked = Listeners::new(own, Vec::new());
            assert!(looked.read().contains(&ours));
        }
    }
}

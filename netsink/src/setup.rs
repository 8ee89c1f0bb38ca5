//! Making the sink inside a jail's network namespace, and handing its
//! sockets to the auditor.
//!
//! [`prepare`] runs in a short-lived, single-threaded helper process (`mcp-witness
//! net-sink-setup`), never in the auditor: it joins the user namespace that
//! owns the jail's network namespace (the owner of that namespace has every
//! capability there, root or not), then the network namespace itself, and
//! there routes every address to the loopback, has nftables hand every
//! connection and datagram to the sink, makes the sink's sockets and sends
//! them back. The server has not run yet: bubblewrap holds it until the
//! auditor says go (`--block-fd`). The auditor side is [`receive`].

use std::io::{self, Write};
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddrV4, SocketAddrV6};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rustix::net::{AddressFamily, SocketFlags, SocketType};
use rustix::thread::{CapabilitySet, LinkNameSpaceType};

use crate::{SINK_PORT, fdpass};

/// Why the sink could not be made; the audit then says the network was not
/// observed, and why.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error("cannot join the jail's namespaces: {0}")]
    Join(String),
    #[error("{0} is not installed")]
    Missing(&'static str),
    #[error("{what} failed: {detail}")]
    Command { what: &'static str, detail: String },
    #[error("cannot make the sink's sockets: {0}")]
    Socket(io::Error),
    #[error("the setup helper: {0}")]
    Helper(String),
}

/// The sink's sockets, made inside the jail's network namespace.
#[derive(Debug, Default)]
pub struct SinkSockets {
    /// Listening TCP sockets (IPv4, and IPv6 where the namespace has it).
    pub tcp: Vec<OwnedFd>,
    /// Catch-all UDP sockets, reporting each datagram's original destination.
    pub udp: Vec<OwnedFd>,
    /// The stub resolver: one UDP socket per nameserver of resolv.conf.
    pub dns: Vec<(Ipv4Addr, OwnedFd)>,
}

/// `NS_GET_USERNS` (linux/nsfs.h): the user namespace owning a namespace.
const NS_GET_USERNS: libc::c_ulong = 0xb701;
/// Socket options libc does not name on every target (and rustix not at
/// all).
const IP_TRANSPARENT: libc::c_int = 19;
const IP_RECVORIGDSTADDR: libc::c_int = 20;
const IPV6_RECVORIGDSTADDR: libc::c_int = 74;
const IPV6_TRANSPARENT: libc::c_int = 75;
/// How long to wait for bubblewrap to bring the loopback up.
const LOOPBACK_WAIT: Duration = Duration::from_secs(5);

/// The helper's whole job: join the namespaces of `pid`, make the sink and
/// send its sockets (or the reason it could not) over `channel`.
pub fn prepare_and_send(pid: i32, channel: BorrowedFd<'_>) -> Result<(), SetupError> {
    match prepare(pid) {
        Ok((text, fds)) => {
            let borrowed: Vec<BorrowedFd<'_>> = fds.iter().map(AsFd::as_fd).collect();
            fdpass::send(channel, text.as_bytes(), &borrowed)
                .map_err(|e| SetupError::Helper(format!("cannot hand the sockets over: {e}")))
        }
        Err(e) => {
            let text = format!("error {e}");
            let _ = fdpass::send(channel, text.as_bytes(), &[]);
            Err(e)
        }
    }
}

/// Makes the sink in the network namespace of `pid`; gives the description
/// line the auditor parses and the descriptors it describes, in order.
fn prepare(pid: i32) -> Result<(String, Vec<OwnedFd>), SetupError> {
    join(pid)?;
    wait_for_loopback()?;
    raise_ambient(CapabilitySet::NET_ADMIN)
        .map_err(|e| SetupError::Join(format!("capabilities: {e}")))?;
    let nameservers = nameservers(Path::new("/etc/resolv.conf"));
    let ip = find_tool("ip").ok_or(SetupError::Missing("ip (iproute2)"))?;
    let nft = find_tool("nft").ok_or(SetupError::Missing("nft (nftables)"))?;
    run(
        &ip,
        &[
            "route",
            "add",
            "local",
            "0.0.0.0/0",
            "dev",
            "lo",
            "table",
            "local",
        ],
        None,
        "ip route",
    )?;
    let ipv6 = run(
        &ip,
        &[
            "-6", "route", "add", "local", "::/0", "dev", "lo", "table", "local",
        ],
        None,
        "ip -6 route",
    )
    .is_ok();
    run(&nft, &["-f", "-"], Some(&ruleset(&nameservers)), "nft")?;

    let mut text = String::from("ok");
    let mut fds = Vec::new();
    let mut push = |kind: &str, fd: OwnedFd| {
        text.push(' ');
        text.push_str(kind);
        fds.push(fd);
    };
    push("tcp", tcp_listener(false).map_err(SetupError::Socket)?);
    push("udp", udp_catch_all(false).map_err(SetupError::Socket)?);
    if ipv6 {
        push("tcp", tcp_listener(true).map_err(SetupError::Socket)?);
        push("udp", udp_catch_all(true).map_err(SetupError::Socket)?);
    }
    for ns in nameservers {
        push(
            &format!("dns:{ns}"),
            dns_socket(ns).map_err(SetupError::Socket)?,
        );
    }
    Ok((text, fds))
}

/// The auditor's side: the helper's answer, within `limit`.
pub fn receive(channel: BorrowedFd<'_>, limit: Duration) -> Result<SinkSockets, SetupError> {
    let (text, fds) = fdpass::receive(channel, limit)
        .map_err(|e| SetupError::Helper(format!("no answer: {e}")))?;
    let text = String::from_utf8_lossy(&text).into_owned();
    let mut words = text.split(' ');
    match words.next() {
        Some("ok") => {}
        _ => {
            let why = text.strip_prefix("error ").unwrap_or(&text);
            return Err(SetupError::Helper(why.chars().take(300).collect()));
        }
    }
    let kinds: Vec<&str> = words.collect();
    if kinds.len() != fds.len() {
        return Err(SetupError::Helper(format!(
            "{} sockets described, {} received",
            kinds.len(),
            fds.len()
        )));
    }
    let mut sockets = SinkSockets::default();
    for (kind, fd) in kinds.into_iter().zip(fds) {
        match kind {
            "tcp" => sockets.tcp.push(fd),
            "udp" => sockets.udp.push(fd),
            other => {
                let address = other
                    .strip_prefix("dns:")
                    .and_then(|a| a.parse().ok())
                    .ok_or_else(|| SetupError::Helper(format!("unknown socket kind {other:?}")))?;
                sockets.dns.push((address, fd));
            }
        }
    }
    Ok(sockets)
}

/// The nftables rules: queries to the stub's nameservers and the
/// namespace's own loopback traffic go their way; every other TCP
/// connection and UDP datagram goes to the sink, its destination kept.
pub fn ruleset(nameservers: &[Ipv4Addr]) -> String {
    let mut rules = String::from(
        "table inet mcp_witness_sink {\n  chain prerouting {\n    type filter hook prerouting priority mangle; policy accept;\n",
    );
    if !nameservers.is_empty() {
        let list: Vec<String> = nameservers.iter().map(Ipv4Addr::to_string).collect();
        rules.push_str(&format!(
            "    ip daddr {{ {} }} udp dport 53 return\n",
            list.join(", ")
        ));
    }
    rules.push_str(&format!(
        "    ip daddr 127.0.0.0/8 return\n    ip6 daddr ::1 return\n    meta l4proto tcp tproxy to :{SINK_PORT} accept\n    meta l4proto udp tproxy to :{SINK_PORT} accept\n  }}\n}}\n"
    ));
    rules
}

/// The IPv4 nameservers a resolver in the jail asks (the host's
/// resolv.conf, which the sandbox shows read-only), at most three; with
/// none listed, 127.0.0.1, where a resolver then asks.
pub fn nameservers(path: &Path) -> Vec<Ipv4Addr> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut out: Vec<Ipv4Addr> = text
        .lines()
        .filter_map(|line| line.trim().strip_prefix("nameserver"))
        .filter_map(|rest| rest.trim().parse().ok())
        .collect();
    out.dedup();
    out.truncate(3);
    if out.is_empty() {
        out.push(Ipv4Addr::LOCALHOST);
    }
    out
}

/// `ip` and `nft` live in sbin, which an ordinary user's PATH may lack.
pub fn find_tool(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin", "/usr/bin", "/bin"].map(PathBuf::from))
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
}

fn join(pid: i32) -> Result<(), SetupError> {
    let path = format!("/proc/{pid}/ns/net");
    let net = open(&path).map_err(|e| SetupError::Join(format!("{path}: {e}")))?;
    // SAFETY: NS_GET_USERNS takes no argument and gives a new descriptor
    // (or -1), which nobody but us owns.
    let user = unsafe {
        let fd = libc::ioctl(net.as_raw_fd(), NS_GET_USERNS);
        (fd >= 0).then(|| OwnedFd::from_raw_fd(fd))
    };
    let user = user.ok_or_else(|| {
        SetupError::Join(format!(
            "the owner of the network namespace: {}",
            io::Error::last_os_error()
        ))
    })?;
    // The process is single-threaded, as joining a user namespace needs.
    rustix::thread::move_into_link_name_space(user.as_fd(), Some(LinkNameSpaceType::User))
        .map_err(|e| SetupError::Join(format!("user namespace: {}", io::Error::from(e))))?;
    rustix::thread::move_into_link_name_space(net.as_fd(), Some(LinkNameSpaceType::Network))
        .map_err(|e| SetupError::Join(format!("network namespace: {}", io::Error::from(e))))?;
    Ok(())
}

fn open(path: &str) -> io::Result<OwnedFd> {
    let file = std::fs::File::open(path)?;
    Ok(OwnedFd::from(file))
}

/// bubblewrap brings `lo` up itself; routes can only be added once it is.
fn wait_for_loopback() -> Result<(), SetupError> {
    let socket = new_socket(AddressFamily::INET, SocketType::DGRAM).map_err(SetupError::Socket)?;
    let deadline = Instant::now() + LOOPBACK_WAIT;
    loop {
        // SAFETY: a zeroed ifreq with its name set is a valid SIOCGIFFLAGS
        // request; it lives for the call, which fills the flags member of
        // its union, the one read.
        let up = unsafe {
            let mut request: libc::ifreq = std::mem::zeroed();
            for (slot, byte) in request.ifr_name.iter_mut().zip(b"lo\0") {
                *slot = *byte as libc::c_char;
            }
            libc::ioctl(socket.as_raw_fd(), libc::SIOCGIFFLAGS, &mut request) == 0
                && i32::from(request.ifr_ifru.ifru_flags) & libc::IFF_UP != 0
        };
        if up {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(SetupError::Join("the loopback never came up".into()));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Keeps `cap` across exec (for `ip` and `nft`), as an ordinary user too.
fn raise_ambient(cap: CapabilitySet) -> io::Result<()> {
    let mut sets = rustix::thread::capabilities(None)?;
    sets.inheritable |= cap;
    rustix::thread::set_capabilities(None, sets)?;
    rustix::thread::configure_capability_in_ambient_set(cap, true)?;
    Ok(())
}

fn run(
    program: &Path,
    args: &[&str],
    input: Option<&str>,
    what: &'static str,
) -> Result<(), SetupError> {
    let mut child = Command::new(program)
        .args(args)
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| SetupError::Command {
            what,
            detail: e.to_string(),
        })?;
    if let (Some(text), Some(mut stdin)) = (input, child.stdin.take()) {
        let _ = stdin.write_all(text.as_bytes());
    }
    let out = child.wait_with_output().map_err(|e| SetupError::Command {
        what,
        detail: e.to_string(),
    })?;
    if out.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    Err(SetupError::Command {
        what,
        detail: stderr
            .lines()
            .next()
            .unwrap_or("no message")
            .chars()
            .take(200)
            .collect(),
    })
}

fn new_socket(family: AddressFamily, kind: SocketType) -> io::Result<OwnedFd> {
    Ok(rustix::net::socket_with(
        family,
        kind,
        SocketFlags::CLOEXEC,
        None,
    )?)
}

/// Sets an int option rustix has no function for (IP_TRANSPARENT and
/// friends) to 1.
fn set_option(fd: &OwnedFd, level: libc::c_int, name: libc::c_int) -> io::Result<()> {
    let one: libc::c_int = 1;
    // SAFETY: an int option: a pointer to a live int and its size.
    let rc = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            level,
            name,
            (&one as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

fn bind_any(fd: &OwnedFd, ipv6: bool, port: u16) -> io::Result<()> {
    if ipv6 {
        rustix::net::bind(fd, &SocketAddrV6::new(Ipv6Addr::UNSPECIFIED, port, 0, 0))?;
    } else {
        bind_v4(fd, Ipv4Addr::UNSPECIFIED, port)?;
    }
    Ok(())
}

fn bind_v4(fd: &OwnedFd, ip: Ipv4Addr, port: u16) -> io::Result<()> {
    Ok(rustix::net::bind(fd, &SocketAddrV4::new(ip, port))?)
}

fn transparent(fd: &OwnedFd, ipv6: bool) -> io::Result<()> {
    if ipv6 {
        rustix::net::sockopt::set_ipv6_v6only(fd, true)?;
        set_option(fd, libc::IPPROTO_IPV6, IPV6_TRANSPARENT)
    } else {
        set_option(fd, libc::IPPROTO_IP, IP_TRANSPARENT)
    }
}

fn family(ipv6: bool) -> AddressFamily {
    if ipv6 {
        AddressFamily::INET6
    } else {
        AddressFamily::INET
    }
}

fn tcp_listener(ipv6: bool) -> io::Result<OwnedFd> {
    let fd = new_socket(family(ipv6), SocketType::STREAM)?;
    rustix::net::sockopt::set_socket_reuseaddr(&fd, true)?;
    transparent(&fd, ipv6)?;
    bind_any(&fd, ipv6, SINK_PORT)?;
    rustix::net::listen(&fd, 256)?;
    Ok(fd)
}

fn udp_catch_all(ipv6: bool) -> io::Result<OwnedFd> {
    let fd = new_socket(family(ipv6), SocketType::DGRAM)?;
    transparent(&fd, ipv6)?;
    if ipv6 {
        set_option(&fd, libc::IPPROTO_IPV6, IPV6_RECVORIGDSTADDR)?;
    } else {
        set_option(&fd, libc::IPPROTO_IP, IP_RECVORIGDSTADDR)?;
    }
    bind_any(&fd, ipv6, SINK_PORT)?;
    Ok(fd)
}

fn dns_socket(nameserver: Ipv4Addr) -> io::Result<OwnedFd> {
    let fd = new_socket(AddressFamily::INET, SocketType::DGRAM)?;
    set_option(&fd, libc::IPPROTO_IP, IP_TRANSPARENT)?;
    bind_v4(&fd, nameserver, 53)?;
    Ok(fd)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rules_exempt_the_stub_and_the_loopback_and_catch_the_rest() {
        let rules = ruleset(&[Ipv4Addr::new(10, 0, 0, 2)]);
        let stub = rules
            .find("ip daddr { 10.0.0.2 } udp dport 53 return")
            .expect("stub rule");
        let tcp = rules
            .find("meta l4proto tcp tproxy to :1 accept")
            .expect("tcp rule");
        let lo = rules
            .find("ip daddr 127.0.0.0/8 return")
            .expect("loopback rule");
        assert!(stub < lo && lo < tcp, "exemptions come first:\n{rules}");
        assert!(!ruleset(&[]).contains("dport 53 return"));
    }

    #[test]
    fn nameservers_are_read_from_resolv_conf() {
        let dir = std::env::temp_dir().join(format!("netsink-resolv-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let file = dir.join("resolv.conf");
        std::fs::write(
            &file,
            "# comment\nnameserver 10.0.0.2\nnameserver ::1\nnameserver 127.0.0.53\nsearch x\n",
        )
        .expect("write");
        assert_eq!(
            nameservers(&file),
            [Ipv4Addr::new(10, 0, 0, 2), Ipv4Addr::new(127, 0, 0, 53)]
        );
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(
            nameservers(Path::new("/nonexistent/resolv.conf")),
            [Ipv4Addr::LOCALHOST]
        );
    }
}

//! The TCP sockets a server listens on in the jail's own network namespace.
//!
//! Read out of band, as the observers read a store: the kernel's table of a
//! namespace's TCP sockets is `/proc/PID/net/tcp` (and `tcp6`) of any
//! process in it, here the sandbox's init, so nothing the server does
//! changes how it is read, and a socket it closed again before the next
//! look is simply not seen. The network observer's own listening sockets
//! are in the same table and are left out by their inodes.
//!
//! Only TCP: a listening TCP socket is in state `LISTEN`, while a bound UDP
//! socket looks the same whether it serves or only sent a datagram from a
//! port the kernel picked.

use std::collections::BTreeSet;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::path::Path;

use witness_model::audit::ListeningSocket;

/// `TCP_LISTEN` in the kernel's state numbering (`include/net/tcp_states.h`).
const LISTEN: &str = "0A";

/// The listening TCP sockets of the network namespace of `pid`, but those
/// whose inode is in `ignored`.
pub(crate) fn read(pid: i32, ignored: &[u64]) -> BTreeSet<ListeningSocket> {
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
        assert!(read(i32::MAX, &[]).is_empty());
    }
}

//! Just enough DNS to see the name a server asked for and to answer it
//! with a stand-in address: the stub resolver of the sink. A query is
//! never forwarded.

use std::net::Ipv4Addr;

/// Record types the stub tells apart.
const TYPE_A: u16 = 1;
const CLASS_IN: u16 = 1;
/// A name is at most 255 bytes on the wire (RFC 1035).
const MAX_NAME: usize = 255;

/// A parsed question: the name (lower case, dotted) and its type.
#[derive(Debug, PartialEq, Eq)]
pub struct Question {
    pub name: String,
    pub qtype: u16,
    /// Where the question ends in the message (the answer copies it).
    end: usize,
}

impl Question {
    /// The question's bytes without the header: what a query is digested
    /// by, so the resolver's random transaction id does not make two runs
    /// of the same audit differ.
    pub fn wire<'m>(&self, message: &'m [u8]) -> &'m [u8] {
        message.get(12..self.end).unwrap_or_default()
    }
}

/// The first question of a query, or `None` when `message` is not one.
/// Every byte of a name that is not a letter, digit, `-` or `_` is shown
/// as `?`: a name is text a server chose. Case is kept: a secret spelled
/// into a label must still look like one to the report's redaction.
pub fn question(message: &[u8]) -> Option<Question> {
    if message.len() < 12 || message[2] & 0x80 != 0 {
        return None;
    }
    let count = u16::from_be_bytes([message[4], message[5]]);
    if count == 0 {
        return None;
    }
    let mut at = 12;
    let mut labels: Vec<String> = Vec::new();
    let mut length = 0usize;
    loop {
        let len = usize::from(*message.get(at)?);
        at += 1;
        if len == 0 {
            break;
        }
        // Compression pointers have no business in a question.
        if len > 63 {
            return None;
        }
        length += len + 1;
        if length > MAX_NAME {
            return None;
        }
        let label = message.get(at..at + len)?;
        labels.push(
            label
                .iter()
                .map(|b| {
                    let c = char::from(*b);
                    if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                        c
                    } else {
                        '?'
                    }
                })
                .collect(),
        );
        at += len;
    }
    let qtype = u16::from_be_bytes([*message.get(at)?, *message.get(at + 1)?]);
    message.get(at + 2..at + 4)?;
    Some(Question {
        name: labels.join("."),
        qtype,
        end: at + 4,
    })
}

/// The answer to `query`: `address` for an A question, no record (but no
/// error, so the resolver moves on at once) for every other type.
pub fn answer(query: &[u8], question: &Question, address: Ipv4Addr) -> Vec<u8> {
    let mut out = Vec::with_capacity(question.end + 16);
    out.extend_from_slice(&query[..2]);
    // A response, recursion desired and available, no error.
    out.extend_from_slice(&[0x81, 0x80]);
    out.extend_from_slice(&1u16.to_be_bytes());
    let a = question.qtype == TYPE_A;
    out.extend_from_slice(&u16::from(a).to_be_bytes());
    out.extend_from_slice(&[0, 0, 0, 0]);
    out.extend_from_slice(&query[12..question.end]);
    if a {
        // The name by pointer to the question, type A, class IN, TTL 60.
        out.extend_from_slice(&[0xc0, 0x0c]);
        out.extend_from_slice(&TYPE_A.to_be_bytes());
        out.extend_from_slice(&CLASS_IN.to_be_bytes());
        out.extend_from_slice(&60u32.to_be_bytes());
        out.extend_from_slice(&4u16.to_be_bytes());
        out.extend_from_slice(&address.octets());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(name: &str, qtype: u16) -> Vec<u8> {
        let mut q = vec![0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0];
        for label in name.split('.') {
            q.push(label.len() as u8);
            q.extend_from_slice(label.as_bytes());
        }
        q.push(0);
        q.extend_from_slice(&qtype.to_be_bytes());
        q.extend_from_slice(&1u16.to_be_bytes());
        q
    }

    #[test]
    fn a_query_is_read_and_answered_with_the_stand_in() {
        let q = query("Hooks.Example.com", 1);
        let parsed = question(&q).expect("a question");
        assert_eq!(parsed.name, "Hooks.Example.com");
        let reply = answer(&q, &parsed, Ipv4Addr::new(198, 18, 0, 1));
        assert_eq!(&reply[..2], &[0x12, 0x34], "the id is kept");
        assert_eq!(u16::from_be_bytes([reply[6], reply[7]]), 1, "one answer");
        assert_eq!(&reply[reply.len() - 4..], &[198, 18, 0, 1]);
    }

    #[test]
    fn other_types_get_no_record_and_junk_is_not_a_question() {
        let q = query("example.com", 28);
        let parsed = question(&q).expect("a question");
        let reply = answer(&q, &parsed, Ipv4Addr::new(198, 18, 0, 1));
        assert_eq!(u16::from_be_bytes([reply[6], reply[7]]), 0);
        assert_eq!(question(b"short"), None);
        let mut truncated = query("example.com", 1);
        truncated.truncate(20);
        assert_eq!(question(&truncated), None);
        let mut odd = query("a.b", 1);
        odd[13] = b'<';
        assert_eq!(question(&odd).map(|q| q.name), Some("?.b".to_owned()));
    }
}

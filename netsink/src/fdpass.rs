//! Passing descriptors between processes over a unix socket (SCM_RIGHTS):
//! the sink's sockets are made inside the jail's namespace and handed to
//! the auditor, which keeps them; a socket stays in the namespace it was
//! made in, whoever holds it.

use std::io::{self, IoSlice, IoSliceMut};
use std::mem::MaybeUninit;
use std::os::fd::{BorrowedFd, OwnedFd};
use std::time::Duration;

use rustix::event::{PollFd, PollFlags, Timespec};
use rustix::net::{
    RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, SendAncillaryBuffer,
    SendAncillaryMessage, SendFlags,
};

/// At most this many descriptors travel in one message.
pub const MAX_FDS: usize = 16;
/// At most this many bytes of text travel beside them.
const MAX_TEXT: usize = 4096;

/// Sends `text` with `fds` attached, in one message.
pub fn send(socket: BorrowedFd<'_>, text: &[u8], fds: &[BorrowedFd<'_>]) -> io::Result<()> {
    if fds.len() > MAX_FDS || text.len() > MAX_TEXT || text.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "too many descriptors or too long a text",
        ));
    }
    let mut space = vec![MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(fds.len()))];
    let mut control = SendAncillaryBuffer::new(&mut space);
    if !fds.is_empty() && !control.push(SendAncillaryMessage::ScmRights(fds)) {
        return Err(io::Error::other("the descriptors do not fit the message"));
    }
    rustix::net::sendmsg(
        socket,
        &[IoSlice::new(text)],
        &mut control,
        SendFlags::NOSIGNAL,
    )?;
    Ok(())
}

/// Receives one message: its text and the descriptors attached, waiting at
/// most `limit`. A closed peer or a message without text is an error.
pub fn receive(socket: BorrowedFd<'_>, limit: Duration) -> io::Result<(Vec<u8>, Vec<OwnedFd>)> {
    let mut poll = [PollFd::from_borrowed_fd(socket, PollFlags::IN)];
    let timeout = Timespec::try_from(limit).ok();
    if rustix::event::poll(&mut poll, timeout.as_ref())? == 0 {
        return Err(io::Error::new(io::ErrorKind::TimedOut, "no answer in time"));
    }
    let mut text = vec![0u8; MAX_TEXT];
    let mut space = vec![MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(MAX_FDS))];
    let mut control = RecvAncillaryBuffer::new(&mut space);
    let message = rustix::net::recvmsg(
        socket,
        &mut [IoSliceMut::new(&mut text)],
        &mut control,
        RecvFlags::CMSG_CLOEXEC,
    )?;
    let mut fds = Vec::new();
    for part in control.drain() {
        if let RecvAncillaryMessage::ScmRights(received) = part {
            fds.extend(received);
        }
    }
    if message.bytes == 0 {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "the helper ended without an answer",
        ));
    }
    text.truncate(message.bytes);
    Ok((text, fds))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::{AsFd, AsRawFd};
    use std::os::unix::net::UnixStream;

    #[test]
    fn descriptors_and_text_travel_together() {
        let (a, b) = UnixStream::pair().expect("socketpair");
        let file = tempfile_like();
        send(a.as_fd_borrowed(), b"one", &[file.as_fd()]).expect("send");
        let (text, fds) = receive(b.as_fd_borrowed(), Duration::from_secs(2)).expect("receive");
        assert_eq!(text, b"one");
        assert_eq!(fds.len(), 1);
        assert_ne!(
            fds[0].as_raw_fd(),
            file.as_raw_fd(),
            "a new descriptor arrives"
        );
        drop(a);
        let closed = receive(b.as_fd_borrowed(), Duration::from_secs(2));
        assert!(
            closed.is_err(),
            "a closed peer is an error, not an empty answer"
        );
    }

    fn tempfile_like() -> std::fs::File {
        std::fs::File::open("/dev/null").expect("/dev/null")
    }

    trait Borrow {
        fn as_fd_borrowed(&self) -> BorrowedFd<'_>;
    }
    impl Borrow for UnixStream {
        fn as_fd_borrowed(&self) -> BorrowedFd<'_> {
            self.as_fd()
        }
    }
}

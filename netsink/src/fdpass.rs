//! Passing descriptors between processes over a unix socket (SCM_RIGHTS):
//! the sink's sockets are made inside the jail's namespace and handed to
//! the auditor, which keeps them; a socket stays in the namespace it was
//! made in, whoever holds it.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::time::Duration;

/// At most this many descriptors travel in one message.
pub const MAX_FDS: usize = 16;
/// At most this many bytes of text travel beside them.
const MAX_TEXT: usize = 4096;

/// Sends `text` with `fds` attached, in one message.
pub fn send(socket: BorrowedFd<'_>, text: &[u8], fds: &[RawFd]) -> io::Result<()> {
    if fds.len() > MAX_FDS || text.len() > MAX_TEXT || text.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "too many descriptors or too long a text",
        ));
    }
    let mut iov = libc::iovec {
        iov_base: text.as_ptr() as *mut libc::c_void,
        iov_len: text.len(),
    };
    let payload = std::mem::size_of_val(fds);
    // SAFETY: CMSG_SPACE is a pure computation on a length.
    let space = unsafe { libc::CMSG_SPACE(payload as u32) } as usize;
    let mut control = vec![0u8; space.max(1)];
    // SAFETY: a zeroed msghdr is a valid empty header; every pointer set
    // below points into buffers that outlive the sendmsg call.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    if !fds.is_empty() {
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = space as _;
        // SAFETY: the control buffer is CMSG_SPACE(payload) bytes long, so
        // the first header and its data fit in it.
        unsafe {
            let cmsg = libc::CMSG_FIRSTHDR(&msg);
            (*cmsg).cmsg_level = libc::SOL_SOCKET;
            (*cmsg).cmsg_type = libc::SCM_RIGHTS;
            (*cmsg).cmsg_len = libc::CMSG_LEN(payload as u32) as _;
            std::ptr::copy_nonoverlapping(
                fds.as_ptr().cast::<u8>(),
                libc::CMSG_DATA(cmsg),
                payload,
            );
        }
    }
    // SAFETY: msg is fully initialised above.
    let sent = unsafe { libc::sendmsg(socket.as_raw_fd(), &msg, libc::MSG_NOSIGNAL) };
    if sent < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Receives one message: its text and the descriptors attached, waiting at
/// most `limit`. A closed peer or a message without text is an error.
pub fn receive(socket: BorrowedFd<'_>, limit: Duration) -> io::Result<(Vec<u8>, Vec<OwnedFd>)> {
    let mut poll = libc::pollfd {
        fd: socket.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    let millis = i32::try_from(limit.as_millis()).unwrap_or(i32::MAX);
    // SAFETY: one pollfd that lives for the call.
    let ready = unsafe { libc::poll(&mut poll, 1, millis) };
    if ready < 0 {
        return Err(io::Error::last_os_error());
    }
    if ready == 0 {
        return Err(io::Error::new(io::ErrorKind::TimedOut, "no answer in time"));
    }
    let mut text = vec![0u8; MAX_TEXT];
    let mut iov = libc::iovec {
        iov_base: text.as_mut_ptr().cast(),
        iov_len: text.len(),
    };
    // SAFETY: CMSG_SPACE is a pure computation on a length.
    let space = unsafe { libc::CMSG_SPACE((MAX_FDS * std::mem::size_of::<RawFd>()) as u32) };
    let mut control = vec![0u8; space as usize];
    // SAFETY: as in `send`; the buffers outlive the call.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = control.len() as _;
    // SAFETY: msg points at live buffers of the stated sizes.
    let n = unsafe { libc::recvmsg(socket.as_raw_fd(), &mut msg, libc::MSG_CMSG_CLOEXEC) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut fds = Vec::new();
    // SAFETY: walking the control messages the kernel wrote, within
    // msg_controllen; every SCM_RIGHTS descriptor is new and ours to own.
    unsafe {
        let mut cmsg = libc::CMSG_FIRSTHDR(&msg);
        while !cmsg.is_null() {
            if (*cmsg).cmsg_level == libc::SOL_SOCKET && (*cmsg).cmsg_type == libc::SCM_RIGHTS {
                let data = libc::CMSG_DATA(cmsg);
                let len = (*cmsg).cmsg_len as usize - libc::CMSG_LEN(0) as usize;
                for i in 0..len / std::mem::size_of::<RawFd>() {
                    let fd = std::ptr::read_unaligned(data.cast::<RawFd>().add(i));
                    fds.push(OwnedFd::from_raw_fd(fd));
                }
            }
            cmsg = libc::CMSG_NXTHDR(&msg, cmsg);
        }
    }
    if n == 0 {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "the helper ended without an answer",
        ));
    }
    text.truncate(n as usize);
    Ok((text, fds))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::net::UnixStream;

    #[test]
    fn descriptors_and_text_travel_together() {
        let (a, b) = UnixStream::pair().expect("socketpair");
        let file = tempfile_like();
        send(a.as_fd_borrowed(), b"one", &[file.as_raw_fd()]).expect("send");
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
            use std::os::fd::AsFd;
            self.as_fd()
        }
    }
}

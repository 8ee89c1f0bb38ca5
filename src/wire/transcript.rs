//! The raw record of a session: every frame in both directions, in order.

use serde::Serialize;

/// Direction of a frame, seen from mcp-witness.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Sent by mcp-witness to the server.
    Out,
    /// Received from the server.
    In,
}

/// One newline-delimited message as it crossed the wire.
#[derive(Clone, Debug, Serialize)]
pub struct Frame {
    pub seq: u64,
    pub dir: Direction,
    /// Microseconds since the session started (see [`super::clock`]).
    pub t_us: u64,
    /// The line, decoded lossily as UTF-8, without its newline.
    pub text: String,
    /// Bytes the server actually sent on this line (larger than `text` when cut).
    pub bytes: u64,
    /// The line was longer than [`super::MAX_LINE_BYTES`] and was cut there.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
}

/// Something the wire showed that a well-behaved server would not do.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct WireFinding {
    /// Stable kind: `stdout-not-json`, `malformed-jsonrpc`, `oversized-line`,
    /// `unexpected-response`, `frames-dropped`.
    pub kind: String,
    /// The frame it concerns, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frame: Option<u64>,
    pub detail: String,
}

/// Every frame and wire finding of one server process.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Transcript {
    pub frames: Vec<Frame>,
    pub findings: Vec<WireFinding>,
    /// Frames not kept because [`super::MAX_FRAMES`] was reached.
    #[serde(skip_serializing_if = "is_zero")]
    pub dropped_frames: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Transcript {
    pub(crate) fn push(&mut self, frame: Frame) -> u64 {
        let seq = frame.seq;
        if self.frames.len() < super::MAX_FRAMES {
            self.frames.push(frame);
        } else {
            if self.dropped_frames == 0 {
                self.findings.push(WireFinding {
                    kind: "frames-dropped".into(),
                    frame: Some(seq),
                    detail: format!(
                        "more than {} frames in one session; later frames are counted, not kept",
                        super::MAX_FRAMES
                    ),
                });
            }
            self.dropped_frames += 1;
        }
        seq
    }

    pub(crate) fn finding(&mut self, kind: &str, frame: Option<u64>, detail: impl Into<String>) {
        self.findings.push(WireFinding {
            kind: kind.into(),
            frame,
            detail: detail.into(),
        });
    }
}

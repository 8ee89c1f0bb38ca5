//! The raw record of a session: every frame in both directions, in order.
//!
//! Two bounds keep it finite: at most [`crate::MAX_FRAMES`] frames (later ones
//! are counted in `dropped_frames`), and at most [`crate::MAX_KEPT_BYTES`]
//! bytes of frame text. A frame whose text would pass that budget is still
//! listed with its `seq`, `dir`, `t_us` and `bytes`, but its text is a fixed
//! marker, `[not kept: N bytes; blake3 <16 hex>]`, and the first such frame
//! records a `frames-budget-exceeded` finding. Smaller frames that still fit
//! are kept whole.

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
    /// Microseconds since the session started (see [`crate::clock`]).
    pub t_us: u64,
    /// The line, decoded lossily as UTF-8, without its newline.
    pub text: String,
    /// Bytes the server actually sent on this line (larger than `text` when cut).
    pub bytes: u64,
    /// The line was longer than [`crate::MAX_LINE_BYTES`] and was cut there.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
}

/// What kind of misbehaviour the wire saw. The names are stable: reports
/// carry them (the model's finding kinds include every one of these).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum WireFindingKind {
    /// A message past the size bound, cut there and not parsed.
    OversizedLine,
    /// A stdout line that is not JSON.
    StdoutNotJson,
    /// JSON that is not a JSON-RPC message.
    MalformedJsonrpc,
    /// A JSON-RPC error without an id.
    ErrorWithoutId,
    /// A response to no request of ours.
    UnexpectedResponse,
    /// Frames past the kept-frames bound.
    FramesDropped,
    /// Frame text past the kept-bytes bound.
    FramesBudgetExceeded,
    /// An HTTP exchange that failed before its answer.
    HttpExchangeFailed,
    /// More `roots/list` requests after one client message than are answered.
    RootsOverflow,
    /// A message nested deeper than [`crate::json::MAX_JSON_DEPTH`]: not read.
    JsonTooDeep,
}

/// Something the wire showed that a well-behaved server would not do.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct WireFinding {
    pub kind: WireFindingKind,
    /// The frame it concerns, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frame: Option<u64>,
    pub detail: String,
}

/// Every frame and wire finding of one server process.
#[derive(Clone, Debug, Serialize)]
pub struct Transcript {
    pub frames: Vec<Frame>,
    pub findings: Vec<WireFinding>,
    /// Frames not kept because [`crate::MAX_FRAMES`] was reached.
    #[serde(skip_serializing_if = "is_zero")]
    pub dropped_frames: u64,
    /// Bytes of frame text kept so far.
    #[serde(skip)]
    kept_bytes: usize,
    /// Most bytes of frame text kept ([`crate::MAX_KEPT_BYTES`] unless lowered).
    #[serde(skip)]
    kept_budget: usize,
}

impl Default for Transcript {
    fn default() -> Self {
        Self::with_budget(crate::MAX_KEPT_BYTES)
    }
}

/// What stands in for the text of a frame past the budget: its size as sent
/// and the first 16 hex digits of the blake3 digest of the text as received.
fn not_kept(text: &str, bytes: u64) -> String {
    let hex = blake3::hash(text.as_bytes()).to_hex();
    let short = hex.as_str().get(..16).unwrap_or_default();
    format!("[not kept: {bytes} bytes; blake3 {short}]")
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Transcript {
    /// An empty transcript keeping at most `kept_budget` bytes of frame text.
    pub fn with_budget(kept_budget: usize) -> Self {
        Self {
            frames: Vec::new(),
            findings: Vec::new(),
            dropped_frames: 0,
            kept_bytes: 0,
            kept_budget,
        }
    }

    /// Bytes of frame text kept so far (markers not counted).
    pub fn kept_bytes(&self) -> usize {
        self.kept_bytes
    }

    pub(crate) fn push(&mut self, mut frame: Frame) -> u64 {
        let seq = frame.seq;
        if self.frames.len() < crate::MAX_FRAMES {
            match self.kept_bytes.checked_add(frame.text.len()) {
                Some(kept) if kept <= self.kept_budget => self.kept_bytes = kept,
                _ => {
                    if !self
                        .findings
                        .iter()
                        .any(|f| f.kind == WireFindingKind::FramesBudgetExceeded)
                    {
                        self.findings.push(WireFinding {
                            kind: WireFindingKind::FramesBudgetExceeded,
                            frame: Some(seq),
                            detail: format!(
                                "frame text beyond {} bytes in one session is not kept; \
                                 such frames keep their size and a blake3 digest",
                                self.kept_budget
                            ),
                        });
                    }
                    frame.text = not_kept(&frame.text, frame.bytes);
                }
            }
            self.frames.push(frame);
        } else {
            if self.dropped_frames == 0 {
                self.findings.push(WireFinding {
                    kind: WireFindingKind::FramesDropped,
                    frame: Some(seq),
                    detail: format!(
                        "more than {} frames in one session; later frames are counted, not kept",
                        crate::MAX_FRAMES
                    ),
                });
            }
            self.dropped_frames += 1;
        }
        seq
    }

    pub(crate) fn finding(
        &mut self,
        kind: WireFindingKind,
        frame: Option<u64>,
        detail: impl Into<String>,
    ) {
        self.findings.push(WireFinding {
            kind,
            frame,
            detail: detail.into(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(seq: u64, len: usize) -> Frame {
        Frame {
            seq,
            dir: Direction::In,
            t_us: seq,
            text: "z".repeat(len),
            bytes: len as u64,
            truncated: false,
        }
    }

    #[test]
    fn frame_text_past_the_budget_is_a_marker_and_one_finding() {
        let mut transcript = Transcript::with_budget(1_000);
        transcript.push(frame(1, 600));
        transcript.push(frame(2, 600));
        transcript.push(frame(3, 600));
        transcript.push(frame(4, 100));
        assert_eq!(transcript.kept_bytes(), 700);
        let texts: Vec<&str> = transcript.frames.iter().map(|f| f.text.as_str()).collect();
        assert_eq!(texts[0].len(), 600);
        assert!(
            texts[1].starts_with("[not kept: 600 bytes; blake3 "),
            "{}",
            texts[1]
        );
        assert_eq!(texts[1].len(), "[not kept: 600 bytes; blake3 ]".len() + 16);
        assert_eq!(texts[1], texts[2], "same text, same marker");
        assert_eq!(texts[3].len(), 100, "a frame that still fits is kept");
        assert_eq!(transcript.frames[2].seq, 3);
        assert_eq!(transcript.frames[2].bytes, 600);
        let kinds: Vec<WireFindingKind> = transcript.findings.iter().map(|f| f.kind).collect();
        assert_eq!(kinds, [WireFindingKind::FramesBudgetExceeded]);
        assert_eq!(transcript.findings[0].frame, Some(2));
    }
}

//! Capturing one output stream with a size cap: the first
//! [`HEAD_BYTES`] and the last [`TAIL_BYTES`] are kept, and what lies
//! between is replaced by a line saying how many bytes were elided. The end
//! of a build's output is where the errors are, so the tail gets more room.
//!
//! [`Capture`] is public so that what else seri runs for the person (its
//! hooks, in `seri-runloop`) is capped with the same limit, said the same
//! way.

use std::collections::VecDeque;

use tokio::io::{AsyncRead, AsyncReadExt as _};

use super::super::text::size;

/// Bytes kept from the start of a stream.
pub const HEAD_BYTES: usize = 8 * 1024;

/// Bytes kept from the end of a stream.
pub const TAIL_BYTES: usize = 24 * 1024;

/// One stream's kept bytes and its full length.
#[derive(Debug, Default)]
pub struct Capture {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total: u64,
}

impl Capture {
    /// Takes in the next bytes of the stream.
    pub fn push(&mut self, mut bytes: &[u8]) {
        self.total += bytes.len() as u64;
        let room = HEAD_BYTES - self.head.len();
        if room > 0 {
            let (now, rest) = bytes.split_at(room.min(bytes.len()));
            self.head.extend_from_slice(now);
            bytes = rest;
        }
        self.tail.extend(bytes);
        let over = self.tail.len().saturating_sub(TAIL_BYTES);
        self.tail.drain(..over);
    }

    /// How many bytes the stream wrote in all, kept or not.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// How many of them [`Capture::render`] leaves out (before trimming a
    /// character cut in two).
    pub fn elided(&self) -> u64 {
        self.total - (self.head.len() + self.tail.len()) as u64
    }

    /// Whether the stream wrote nothing.
    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// Reads `reader` to its end. Stops quietly on a read error: what was
    /// read so far is still the best account of the output.
    pub async fn read_all(&mut self, reader: Option<impl AsyncRead + Unpin>) {
        let Some(mut reader) = reader else { return };
        let mut buffer = [0u8; 8 * 1024];
        while let Ok(n @ 1..) = reader.read(&mut buffer).await {
            self.push(&buffer[..n]);
        }
    }

    /// The kept text, with the elided middle named by its size. Cuts fall
    /// on character boundaries; the bytes of a split character count as
    /// elided.
    pub fn render(&self) -> String {
        let tail: Vec<u8> = self.tail.iter().copied().collect();
        let elided = self.total - (self.head.len() + tail.len()) as u64;
        if elided == 0 {
            let mut all = self.head.clone();
            all.extend_from_slice(&tail);
            return String::from_utf8_lossy(&all).into_owned();
        }
        let head = whole_chars_prefix(&self.head);
        let tail = whole_chars_suffix(&tail);
        let elided = self.total - (head.len() + tail.len()) as u64;
        format!("{}\n… [{} elided] …\n{}", String::from_utf8_lossy(head), size(elided), String::from_utf8_lossy(tail))
    }
}

/// `bytes` without a UTF-8 character cut off at its end.
fn whole_chars_prefix(bytes: &[u8]) -> &[u8] {
    match std::str::from_utf8(bytes) {
        Err(e) if e.error_len().is_none() => &bytes[..e.valid_up_to()],
        _ => bytes,
    }
}

/// `bytes` without the continuation bytes of a character cut off at its start.
fn whole_chars_suffix(bytes: &[u8]) -> &[u8] {
    let skip = bytes.iter().take(3).take_while(|b| (**b & 0b1100_0000) == 0b1000_0000).count();
    &bytes[skip..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_output_is_kept_whole() {
        let mut capture = Capture::default();
        capture.push(b"hello ");
        capture.push(b"world");
        assert_eq!(capture.render(), "hello world");
        assert_eq!((capture.total(), capture.elided()), (11, 0));
        assert!(!capture.is_empty());
        assert!(Capture::default().is_empty());
    }

    #[test]
    fn long_output_keeps_both_ends_and_names_the_gap() {
        let mut capture = Capture::default();
        for _ in 0..100 {
            capture.push(&[b'a'; 1024]);
        }
        capture.push(b"the error");
        let text = capture.render();
        let elided = 100 * 1024 + 9 - HEAD_BYTES - TAIL_BYTES;
        assert!(text.starts_with(&"a".repeat(HEAD_BYTES)), "head kept");
        assert!(text.ends_with("the error"), "tail kept");
        assert!(
            text.contains(&format!("\n… [{} elided] …\n", size(elided as u64))),
            "{}",
            &text[HEAD_BYTES..HEAD_BYTES + 40]
        );
    }

    #[test]
    fn cuts_never_split_a_character() {
        let mut capture = Capture::default();
        capture.push(&[b'a'; HEAD_BYTES - 1]);
        capture.push("é".repeat(TAIL_BYTES).as_bytes());
        let text = capture.render();
        assert!(!text.contains('\u{fffd}'), "no replacement character");
        assert!(text.ends_with('é'));
    }
}

//! A sans-IO decoder for server-sent events, as the WHATWG HTML standard
//! defines the `text/event-stream` format.
//!
//! Bytes go in however the network split them; whole events come out. Lines
//! end in `\n`, `\r\n` or `\r` (a `\r\n` split across two reads is one line
//! ending), `data:` lines of one event are joined with `\n`, comment lines
//! (`:` first) are skipped, and a blank line dispatches the event. An event
//! the stream ends in the middle of is dropped, as the standard says: a
//! provider's completeness check (`[DONE]`, `message_stop`) then reports the
//! cut.

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` name; empty when the event had none (the standard's "message").
    pub event: String,
    /// The `data:` lines joined with `\n`.
    pub data: String,
}

/// Why the bytes are not an event stream.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SseError {
    /// A line is not UTF-8.
    #[error("a line of the event stream is not UTF-8: {0}")]
    NotUtf8(String),
    /// A line grew past the limit without ending.
    #[error("a line of the event stream is longer than {MAX_LINE_BYTES} bytes")]
    LineTooLong,
    /// One event's `data:` lines together grew past the limit.
    #[error("one event of the stream grew past {limit} bytes without ending")]
    EventTooLarge {
        /// The limit.
        limit: usize,
    },
}

/// The largest one event may grow by default (16 MiB): far more than any
/// model sends at once, little enough that a broken server cannot fill memory.
pub const MAX_EVENT_BYTES: usize = 16 * 1024 * 1024;

/// The longest line accepted. Local servers send a whole tool call (a file's
/// contents, say) in one `data:` line, so this is generous; it only stops a
/// broken server from filling memory.
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// The decoder's state between reads.
#[derive(Debug)]
pub struct SseDecoder {
    line: Vec<u8>,
    /// The previous read ended with `\r`, so a leading `\n` ends nothing.
    after_cr: bool,
    /// Whether the stream's first bytes were checked for a byte-order mark.
    started: bool,
    event: String,
    data: String,
    has_data: bool,
    max_event_bytes: usize,
}

impl Default for SseDecoder {
    fn default() -> Self {
        Self::with_max_event_bytes(MAX_EVENT_BYTES)
    }
}

impl SseDecoder {
    /// A decoder at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// A decoder whose events may hold at most `max` bytes of data.
    pub fn with_max_event_bytes(max: usize) -> Self {
        Self {
            line: Vec::new(),
            after_cr: false,
            started: false,
            event: String::new(),
            data: String::new(),
            has_data: false,
            max_event_bytes: max,
        }
    }

    /// Feeds the next bytes and returns the events they completed.
    pub fn push(&mut self, mut bytes: &[u8]) -> Result<Vec<SseEvent>, SseError> {
        if !self.started && !bytes.is_empty() {
            // Hold back until three bytes have arrived, so a split BOM is still seen.
            self.line.extend_from_slice(bytes);
            if self.line.len() < 3 && b"\xEF\xBB\xBF".starts_with(&self.line) {
                return Ok(Vec::new());
            }
            self.started = true;
            let held = std::mem::take(&mut self.line);
            let held = held.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&held).to_vec();
            return self.push_started(&held);
        }
        if bytes.is_empty() {
            return Ok(Vec::new());
        }
        if self.after_cr && bytes[0] == b'\n' {
            bytes = &bytes[1..];
        }
        self.after_cr = false;
        self.push_started(bytes)
    }

    fn push_started(&mut self, bytes: &[u8]) -> Result<Vec<SseEvent>, SseError> {
        let mut events = Vec::new();
        let mut rest = bytes;
        while let Some(end) = rest.iter().position(|&b| b == b'\n' || b == b'\r') {
            self.line.extend_from_slice(&rest[..end]);
            let terminator = rest[end];
            rest = &rest[end + 1..];
            if terminator == b'\r' {
                match rest.first() {
                    Some(b'\n') => rest = &rest[1..],
                    Some(_) => {}
                    None => self.after_cr = true,
                }
            }
            let line = std::mem::take(&mut self.line);
            self.process_line(&line, &mut events)?;
        }
        self.line.extend_from_slice(rest);
        if self.line.len() > MAX_LINE_BYTES {
            return Err(SseError::LineTooLong);
        }
        Ok(events)
    }

    fn process_line(&mut self, line: &[u8], events: &mut Vec<SseEvent>) -> Result<(), SseError> {
        let line = std::str::from_utf8(line).map_err(|e| SseError::NotUtf8(e.to_string()))?;
        if line.is_empty() {
            let event = std::mem::take(&mut self.event);
            if std::mem::take(&mut self.has_data) {
                let mut data = std::mem::take(&mut self.data);
                data.pop(); // the `\n` after the last data line
                events.push(SseEvent { event, data });
            }
            return Ok(());
        }
        if line.starts_with(':') {
            return Ok(());
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "data" => {
                if self.data.len() + value.len() > self.max_event_bytes {
                    return Err(SseError::EventTooLarge { limit: self.max_event_bytes });
                }
                self.data.push_str(value);
                self.data.push('\n');
                self.has_data = true;
            }
            "event" => self.event = value.to_owned(),
            // `id` and `retry` steer browser reconnection, which a model stream never uses.
            _ => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn decode_all(chunks: &[&[u8]]) -> Vec<SseEvent> {
        let mut decoder = SseDecoder::new();
        chunks.iter().flat_map(|c| decoder.push(c).unwrap()).collect()
    }

    fn ev(event: &str, data: &str) -> SseEvent {
        SseEvent { event: event.to_owned(), data: data.to_owned() }
    }

    #[test]
    fn fields_comments_and_line_endings() {
        let stream = b": keep-alive\nevent: ping\ndata: {\"type\": \"ping\"}\n\ndata:a\r\ndata:  b\r\rdata\n\nid: 7\nretry: 10\n\n";
        assert_eq!(decode_all(&[stream]), vec![ev("ping", "{\"type\": \"ping\"}"), ev("", "a\n b"), ev("", "")]);
    }

    #[test]
    fn an_event_cut_before_its_blank_line_is_not_dispatched() {
        assert_eq!(decode_all(&[b"data: 1\n\ndata: 2\n"]), vec![ev("", "1")]);
    }

    #[test]
    fn a_crlf_split_across_reads_is_one_line_ending() {
        assert_eq!(decode_all(&[b"data: 1\r", b"\n\r", b"\n"]), vec![ev("", "1")]);
    }

    #[test]
    fn a_byte_order_mark_is_skipped_even_when_split() {
        assert_eq!(decode_all(&[b"\xEF", b"\xBB\xBFdata: 1\n\n"]), vec![ev("", "1")]);
    }

    #[test]
    fn an_event_past_the_cap_is_refused_however_its_lines_are_split() {
        let mut decoder = SseDecoder::with_max_event_bytes(10);
        assert_eq!(decoder.push(b"data: 12345\n").unwrap(), Vec::new());
        let err = decoder.push(b"data: 67890x\n").unwrap_err();
        assert_eq!(err, SseError::EventTooLarge { limit: 10 });
        assert_eq!(err.to_string(), "one event of the stream grew past 10 bytes without ending");
        // Events each under the cap pass, however many there are.
        let mut decoder = SseDecoder::with_max_event_bytes(10);
        let events = decoder.push(b"data: 12345\n\ndata: 67890\n\n").unwrap();
        assert_eq!(events.len(), 2);
    }

    #[test]
    fn invalid_utf8_is_an_error() {
        let mut decoder = SseDecoder::new();
        assert!(matches!(decoder.push(b"data: \xFF\n\n"), Err(SseError::NotUtf8(_))));
    }

    proptest! {
        /// However the network splits the bytes, the same events come out.
        #[test]
        fn any_chunking_decodes_the_same(cuts in proptest::collection::vec(0usize..200, 0..12)) {
            let stream = "event: message_start\ndata: {\"a\": \"é中\"}\n\n: c\r\ndata: x\r\ndata: y\r\n\r\ndata: [DONE]\n\n".as_bytes();
            let expected = decode_all(&[stream]);
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c % (stream.len() + 1)).collect();
            cuts.sort_unstable();
            let mut chunks = Vec::new();
            let mut start = 0;
            for cut in cuts {
                chunks.push(&stream[start..cut]);
                start = cut;
            }
            chunks.push(&stream[start..]);
            prop_assert_eq!(decode_all(&chunks), expected);
        }
    }
}

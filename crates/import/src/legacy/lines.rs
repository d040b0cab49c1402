//! Reading a session file a line at a time, in memory bounded by its
//! longest line rather than its size: a line longer than [`LINE_LIMIT`] is
//! read past without being kept and reported with its number and size, and
//! every byte read is hashed on the way, so the SHA-256 an import is known
//! by costs no second copy of the file.
//!
//! A file is read twice: once to hash it and see its first lines (its
//! format; whether these bytes were imported before), and, when they were
//! not, once more to import it. The second reading hashes again and stops
//! the import when the bytes changed in between (the other agent was
//! writing the file): nothing is written then, and the next import tries
//! again.

use std::borrow::Cow;
use std::cell::RefCell;
use std::fs;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};

use sha2::{Digest, Sha256};

use crate::peers::Source;

/// The longest line an import reads: 64 MiB. A longer line is skipped
/// (reported as `FILE:LINE: skipped: a line of N bytes, …`) and the rest of
/// the file is imported.
///
/// Why 64 MiB: the longest lines the peers write are a tool result or a
/// pasted image inlined as base64, a few MiB at most, so no real line is
/// lost; while one line is imported it is held as text, as parsed JSON and
/// as the event it becomes (a few times its size), so 64 MiB keeps the
/// worst line to a few hundred MiB; and an event made of it stays well
/// under SQLite's 1 GB limit on one value (the "string or blob too big"
/// that a 1 GiB line met before it was bounded).
pub const LINE_LIMIT: usize = 64 * 1024 * 1024;

/// How many bytes the reader asks the file for at a time.
const BUFFER: usize = 256 * 1024;

/// Why a line over the limit was not read.
pub(crate) fn too_long(bytes: u64) -> String {
    format!("a line of {bytes} bytes, longer than the {} MiB a line may hold: not read", LINE_LIMIT >> 20)
}

/// What [`Lines::next_line`] found.
pub(crate) enum Next {
    /// Line `0` (1-based), in the buffer.
    Line(u64),
    /// Line `line` was `bytes` long, over the limit: read past, not kept.
    TooLong { line: u64, bytes: u64 },
    /// The end of the file.
    End,
}

/// A reader's bytes, hashed as they are read, and how many there were.
struct Hashing<R> {
    inner: R,
    hash: Sha256,
    read: u64,
}

impl<R: Read> Read for Hashing<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hash.update(&buf[..n]);
        self.read += n as u64;
        Ok(n)
    }
}

/// The lines of a reader, each at most `limit` bytes long.
pub(crate) struct Lines<R> {
    reader: BufReader<Hashing<R>>,
    number: u64,
    limit: usize,
    /// The last line was read: no line break followed it.
    done: bool,
}

impl<R: Read> Lines<R> {
    pub(crate) fn new(inner: R, limit: usize) -> Self {
        let hashing = Hashing { inner, hash: Sha256::new(), read: 0 };
        Self { reader: BufReader::with_capacity(BUFFER, hashing), number: 0, limit, done: false }
    }

    /// How many bytes were read from the file so far.
    pub(crate) fn position(&self) -> u64 {
        self.reader.get_ref().read
    }

    /// The lowercase hex SHA-256 of every byte read; the file's own once
    /// [`Lines::next_line`] returned [`Next::End`].
    pub(crate) fn sha256(self) -> String {
        hex(self.reader.into_inner().hash)
    }

    /// Reads the next line into `line` (emptied first), without its line
    /// break, a `\r` before it, or the first line's byte-order mark. A line
    /// over the limit leaves `line` empty: its bytes are read past, never
    /// held. The lines are numbered as the import always numbered them
    /// (a file ending with a line break has an empty last line).
    pub(crate) fn next_line(&mut self, line: &mut Vec<u8>) -> io::Result<Next> {
        line.clear();
        if self.done {
            return Ok(Next::End);
        }
        let mut over: Option<u64> = None;
        loop {
            let available = match self.reader.fill_buf() {
                Ok(available) => available,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if available.is_empty() {
                // The file's last line: after its last line break, possibly empty.
                self.done = true;
                break;
            }
            let (chunk, used, ends) = match available.iter().position(|b| *b == b'\n') {
                Some(at) => (&available[..at], at + 1, true),
                None => (available, available.len(), false),
            };
            match &mut over {
                Some(bytes) => *bytes += chunk.len() as u64,
                None if line.len() + chunk.len() > self.limit => {
                    over = Some((line.len() + chunk.len()) as u64);
                    // The part read so far is let go too.
                    *line = Vec::new();
                }
                None => line.extend_from_slice(chunk),
            }
            self.reader.consume(used);
            if ends {
                break;
            }
        }
        self.number += 1;
        if let Some(bytes) = over {
            return Ok(Next::TooLong { line: self.number, bytes });
        }
        if self.number == 1 && line.starts_with(b"\xEF\xBB\xBF") {
            line.drain(..3);
        }
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        Ok(Next::Line(self.number))
    }
}

/// The lowercase hex of a finished hash.
fn hex(hash: Sha256) -> String {
    hash.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// How many line breaks the first look at a file keeps the bytes up to:
/// enough for [`crate::peers::detect`], which reads the first few
/// non-blank lines.
const HEAD_LINES: usize = 32;

/// What the first reading of a file found.
pub(crate) struct Fingerprint {
    /// The lowercase hex SHA-256 of its bytes.
    pub(crate) sha256: String,
    /// How many there are.
    pub(crate) bytes: u64,
    /// Its first bytes: up to its [`HEAD_LINES`]th line break, and
    /// [`LINE_LIMIT`] bytes at most.
    pub(crate) head: Vec<u8>,
}

impl Fingerprint {
    /// Whether [`Fingerprint::head`] is the whole file.
    pub(crate) fn whole(&self) -> bool {
        self.head.len() as u64 == self.bytes
    }
}

/// The part of a file's progress its first reading (hashing it) moves
/// through, in thousandths: hashing is fast, and the readings that import
/// it move the rest ([`FileLines::moving`]).
const FINGERPRINT_SPAN: (u64, u64) = (0, 100);

/// The part of a file's progress the readings that import it move through,
/// when nothing else is said.
const IMPORT_SPAN: (u64, u64) = (100, 1000);

/// Reads `file` from its start to its end, hashing it and keeping its first
/// bytes; `progress` is told how far it got (as a part of the whole
/// import's progress: [`FINGERPRINT_SPAN`]).
pub(crate) fn fingerprint(mut file: &fs::File, progress: &dyn Fn(u64)) -> io::Result<Fingerprint> {
    file.seek(SeekFrom::Start(0))?;
    let mut hash = Sha256::new();
    let mut head = Vec::new();
    let mut breaks = 0;
    let mut bytes = 0u64;
    let mut buffer = vec![0; BUFFER];
    loop {
        let n = match file.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let chunk = &buffer[..n];
        hash.update(chunk);
        bytes += n as u64;
        if breaks < HEAD_LINES && head.len() < LINE_LIMIT {
            let room = LINE_LIMIT - head.len();
            let mut end = chunk.len().min(room);
            for (at, _) in chunk[..end].iter().enumerate().filter(|(_, b)| **b == b'\n') {
                breaks += 1;
                if breaks == HEAD_LINES {
                    end = at + 1;
                    break;
                }
            }
            head.extend_from_slice(&chunk[..end]);
        }
        progress(bytes / (1000 / FINGERPRINT_SPAN.1));
    }
    Ok(Fingerprint { sha256: hex(hash), bytes, head })
}

/// A file opened for import, read a line at a time (by the peers' readers,
/// or by seri's own format's), from its start each time it is asked, and
/// only as far as the first reading hashed it.
pub(crate) struct FileLines<'a> {
    file: &'a fs::File,
    fingerprint: &'a Fingerprint,
    progress: &'a dyn Fn(u64),
    /// The part of the file's progress a reading moves through, in
    /// thousandths: see [`FileLines::moving`].
    span: std::cell::Cell<(u64, u64)>,
    /// Why a reading stopped short, or found other bytes than the first.
    failure: RefCell<Option<io::Error>>,
}

impl<'a> FileLines<'a> {
    pub(crate) fn new(file: &'a fs::File, fingerprint: &'a Fingerprint, progress: &'a dyn Fn(u64)) -> Self {
        Self { file, fingerprint, progress, span: std::cell::Cell::new(IMPORT_SPAN), failure: RefCell::new(None) }
    }

    /// Makes the next readings move the file's progress from `from` to
    /// `to` thousandths of its size: an import reads a file more than once
    /// (to hash it, to see its tree, to import it), and its progress moves
    /// through each reading's part in turn, never back.
    pub(crate) fn moving(&self, from: u64, to: u64) {
        self.span.set((from, to));
    }

    /// Where a reading `read` bytes in has the file's progress.
    fn at(&self, read: u64) -> u64 {
        let (from, to) = self.span.get();
        let size = self.fingerprint.bytes;
        let scaled = |thousandths: u64| (u128::from(size) * u128::from(thousandths) / 1000) as u64;
        let within = (u128::from(read.min(size)) * u128::from(to.saturating_sub(from)) / 1000) as u64;
        scaled(from) + within
    }

    /// Why a reading failed: the file could not be read, or its bytes are
    /// no longer those the first reading hashed. What was read of it then
    /// must not be imported.
    pub(crate) fn failure(&self) -> Option<io::Error> {
        self.failure.borrow_mut().take()
    }

    fn fail(&self, error: io::Error) {
        self.failure.borrow_mut().get_or_insert(error);
    }
}

impl Source for FileLines<'_> {
    fn raw_lines(&self) -> crate::peers::RawLines<'_> {
        let mut file = self.file;
        if let Err(e) = file.seek(SeekFrom::Start(0)) {
            self.fail(e);
            return Box::new(std::iter::empty());
        }
        let mut lines = Some(Lines::new(file.take(self.fingerprint.bytes), LINE_LIMIT));
        let mut line = Vec::new();
        Box::new(std::iter::from_fn(move || {
            let reader = lines.as_mut()?;
            match reader.next_line(&mut line) {
                Ok(Next::Line(number)) => {
                    (self.progress)(self.at(reader.position()));
                    Some((number, Ok(Cow::Owned(std::mem::take(&mut line)))))
                }
                Ok(Next::TooLong { line, bytes }) => Some((line, Err(too_long(bytes)))),
                Ok(Next::End) => {
                    let read = lines.take().map(|reader| (reader.position(), reader.sha256()));
                    if read != Some((self.fingerprint.bytes, self.fingerprint.sha256.clone())) {
                        self.fail(io::Error::other(
                            "it changed while it was being imported (read it again to import it)",
                        ));
                    }
                    None
                }
                Err(e) => {
                    self.fail(e);
                    lines = None;
                    None
                }
            }
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every line of `bytes` read with `limit`, as text or `too long: N`.
    fn read(bytes: &[u8], limit: usize) -> Vec<String> {
        let mut lines = Lines::new(bytes, limit);
        let mut line = Vec::new();
        let mut got = Vec::new();
        loop {
            match lines.next_line(&mut line).expect("in memory") {
                Next::Line(number) => got.push(format!("{number} {}", String::from_utf8_lossy(&line))),
                Next::TooLong { line, bytes } => got.push(format!("{line} too long: {bytes}")),
                Next::End => break,
            }
        }
        assert_eq!(lines.sha256(), hex(Sha256::new_with_prefix(bytes)));
        got
    }

    #[test]
    fn lines_are_numbered_as_splitting_the_whole_file_numbers_them() {
        for bytes in [&b""[..], b"a", b"a\n", b"a\r\nb", b"\xEF\xBB\xBFa\n\nb\n", b"\n\n"] {
            let split: Vec<String> = {
                use crate::peers::Source as _;
                bytes
                    .raw_lines()
                    .map(|(n, raw)| format!("{n} {}", String::from_utf8_lossy(&raw.unwrap_or_default())))
                    .collect()
            };
            assert_eq!(read(bytes, 100), split, "{bytes:?}");
        }
    }

    #[test]
    fn a_line_over_the_limit_is_read_past_and_the_next_ones_are_read() {
        // A small buffer-sized limit: the long line spans many reads.
        let long = "x".repeat(BUFFER * 3 + 7);
        let bytes = format!("short\n{long}\r\nafter\n12345");
        assert_eq!(
            read(bytes.as_bytes(), 5),
            ["1 short", &format!("2 too long: {}", long.len() + 1), "3 after", "4 12345"]
        );
        assert_eq!(read(bytes.as_bytes(), long.len() + 1), ["1 short", &format!("2 {long}"), "3 after", "4 12345"]);
    }
}

//! What the four readers share: splitting JSON lines, reading fields, and
//! [`Builder`], which turns each line's entries into the tree with the
//! guarantees [`PeerSession`] promises (unique ids, parents before children).

use std::borrow::Cow;
use std::collections::HashMap;

use serde_json::{Map, Value};
use seri_core::Timestamp;

use super::model::{Entry, EntryKind, Format, PeerSession, Skip};
use crate::legacy::time;

/// A JSON object of one line.
pub(crate) type Object = Map<String, Value>;

/// Each line of a [`Source`] with its 1-based number: its bytes, or why
/// they were not read.
pub type RawLines<'a> = Box<dyn Iterator<Item = (u64, Result<Cow<'a, [u8]>, String>)> + 'a>;

/// Where a line format's lines come from: the bytes of a file in memory,
/// or a file read a line at a time (the import's, in bounded memory).
/// Each call of [`Source::raw_lines`] reads them from the start.
pub trait Source {
    /// Each line with its 1-based number, without its line break (nor a
    /// `\r` before it, nor a byte-order mark before the first): its
    /// bytes, or why they were not read (a line over the import's limit).
    fn raw_lines(&self) -> RawLines<'_>;
}

impl Source for [u8] {
    fn raw_lines(&self) -> RawLines<'_> {
        let bytes = self.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(self);
        Box::new(bytes.split(|b| *b == b'\n').enumerate().map(|(index, raw)| {
            let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
            (index as u64 + 1, Ok(Cow::Borrowed(raw)))
        }))
    }
}

/// Each non-blank line of `source` with its 1-based number: the object it
/// holds, or why it holds none. A byte-order mark and `\r\n` endings are
/// accepted.
pub(crate) fn lines(source: &(impl Source + ?Sized)) -> impl Iterator<Item = (u64, Result<Object, String>)> + '_ {
    source.raw_lines().filter_map(|(number, raw)| {
        let raw = match raw {
            Ok(raw) => raw,
            Err(reason) => return Some((number, Err(reason))),
        };
        if raw.iter().all(u8::is_ascii_whitespace) {
            return None;
        }
        let read = match std::str::from_utf8(&raw) {
            Err(e) => Err(format!("not UTF-8 text (invalid byte at column {})", e.valid_up_to() + 1)),
            Ok(text) => match serde_json::from_str::<Value>(text) {
                Ok(Value::Object(object)) => Ok(object),
                Ok(_) => Err("not a JSON object".to_owned()),
                Err(_) => Err("not JSON".to_owned()),
            },
        };
        Some((number, read))
    })
}

/// The text field `key` of `object`.
pub(crate) fn text<'a>(object: &'a Object, key: &str) -> Option<&'a str> {
    object.get(key).and_then(Value::as_str)
}

/// The object field `key` of `object`.
pub(crate) fn object<'a>(object: &'a Object, key: &str) -> Option<&'a Object> {
    object.get(key).and_then(Value::as_object)
}

/// The time field `key` of `object`, if it holds one.
pub(crate) fn time_of(object: &Object, key: &str) -> Option<Timestamp> {
    object.get(key).and_then(|value| time::parse(value).ok())
}

/// The text of a content value: a string, or the `text` of each block of an
/// array (a block without text, such as an image, as `[type]`), joined with
/// line breaks.
pub(crate) fn content_text(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|block| match block {
                Value::String(text) => Some(text.clone()),
                Value::Object(block) => match text(block, "text") {
                    Some(text) => Some(text.to_owned()),
                    None => Some(format!("[{}]", text(block, "type").unwrap_or("block"))),
                },
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n"),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// What a reader of a peer's lines made, as [`stream_lines`](super::stream_lines) hands it.
#[derive(Debug)]
pub enum Made {
    /// An entry, in file order, with its place in the tree.
    Entry(Placed),
    /// A line (or part) left out, and why.
    Skip(Skip),
}

/// An entry and its place in the tree, by index: the `n`th entry made is
/// index `n`, in every reading of the same bytes.
#[derive(Debug)]
pub struct Placed {
    /// Its index.
    pub index: u32,
    /// Its parent's index; `None` for a root.
    pub parent: Option<u32>,
    /// A compaction's first kept entry, when that is an earlier entry.
    pub kept: Option<u32>,
    /// The entry.
    pub entry: Entry,
}

/// Where a reader of a peer's lines hands what it makes: kept in its [`PeerSession`], or
/// given away as it is made (a streaming import's, which holds a line's
/// entries at a time, never the file's).
pub type Sink<'s> = Option<&'s mut dyn FnMut(Made)>;

/// Builds a [`PeerSession`] line by line.
pub(crate) struct Builder<'s> {
    pub(crate) session: PeerSession,
    /// Each entry's index, by its id's [`key`].
    ids: HashMap<u128, u32>,
    /// Each tool call's tool, by its id's [`key`], for results that do not
    /// say theirs: an index into `tools`.
    calls: HashMap<u128, u32>,
    /// Each tool named, once.
    tools: Vec<String>,
    /// The newest entry, the parent of the next one in a linear format.
    last: Option<String>,
    /// Where what is made goes, when not into `session`.
    sink: Sink<'s>,
    /// The places of the entries in `session` not yet handed to `sink`.
    placed: Vec<(u32, Option<u32>, Option<u32>)>,
    /// How many entries were made.
    made: u32,
}

impl<'s> Builder<'s> {
    pub(crate) fn new(format: Format, sink: Sink<'s>) -> Self {
        Self {
            session: PeerSession::new(format),
            ids: HashMap::new(),
            calls: HashMap::new(),
            tools: Vec::new(),
            last: None,
            sink,
            placed: Vec::new(),
            made: 0,
        }
    }

    /// Leaves line `line` out, for `reason`.
    pub(crate) fn skip(&mut self, line: u64, reason: impl Into<String>) {
        let skip = Skip { line, reason: reason.into() };
        match &mut self.sink {
            Some(sink) => sink(Made::Skip(skip)),
            None => self.session.skipped.push(skip),
        }
    }

    /// Sets the session's start, if nothing set it yet.
    pub(crate) fn saw_time(&mut self, at: Option<Timestamp>) {
        if self.session.created_at.is_none() {
            self.session.created_at = at;
        }
    }

    /// Adds the entries of one line, whose id is `id`, below `parent`.
    ///
    /// The last entry gets `id`, the others `<id>.0`, `<id>.1`, … in a
    /// chain, so the line's children hang below all of them. A parent that
    /// is not an earlier entry (a compaction's logical parent copied into a
    /// fork before the entry it names) makes a root. A line with nothing
    /// in it still takes its place, as [`EntryKind::Skipped`]; a second line
    /// with an id already taken is skipped.
    pub(crate) fn line(
        &mut self,
        line: u64,
        id: &str,
        parent: Option<&str>,
        at: Option<Timestamp>,
        mut kinds: Vec<EntryKind>,
    ) {
        self.hand_over();
        if self.ids.contains_key(&key(id)) {
            return self.skip(line, format!("a second entry with the id `{id}`"));
        }
        if kinds.is_empty() {
            kinds.push(EntryKind::Skipped { reason: "an empty message".to_owned() });
        }
        self.saw_time(at);
        let mut parent = parent.and_then(|parent| Some((parent.to_owned(), *self.ids.get(&key(parent))?)));
        let count = kinds.len();
        for (index, mut kind) in kinds.into_iter().enumerate() {
            let entry_id = if index + 1 == count { id.to_owned() } else { format!("{id}.{index}") };
            let mut kept = None;
            match &mut kind {
                EntryKind::ToolCall { call_id, name, .. } => {
                    let tool = match self.tools.iter().rposition(|tool| tool == name) {
                        Some(tool) => tool,
                        None => {
                            self.tools.push(name.clone());
                            self.tools.len() - 1
                        }
                    };
                    self.calls.insert(key(call_id), tool as u32);
                }
                EntryKind::ToolResult { call_id, name: name @ None, .. } => {
                    *name = self.calls.get(&key(call_id)).and_then(|&tool| self.tools.get(tool as usize)).cloned();
                }
                EntryKind::Compaction { first_kept: Some(first_kept), .. } => {
                    kept = self.ids.get(&key(first_kept)).copied();
                }
                _ => {}
            }
            let placed = self.made;
            self.made = self.made.saturating_add(1);
            self.ids.insert(key(&entry_id), placed);
            let (parent_id, parent_index) = parent.take().unzip();
            if self.sink.is_some() {
                self.placed.push((placed, parent_index, kept));
            }
            self.session.entries.push(Entry { id: entry_id.clone(), parent: parent_id, at, line, kind });
            parent = Some((entry_id, placed));
        }
        self.last = parent.map(|(id, _)| id);
    }

    /// Hands the entries made so far to the sink, if there is one: the
    /// newest stays in `session` until the next line, which may change it
    /// ([`Builder::last_entry_mut`]).
    fn hand_over(&mut self) {
        let Some(sink) = &mut self.sink else { return };
        for ((index, parent, kept), entry) in self.placed.drain(..).zip(self.session.entries.drain(..)) {
            sink(Made::Entry(Placed { index, parent, kept, entry }));
        }
    }

    /// [`Builder::line`] below the newest entry: the shape of a format
    /// without a tree (Codex, opencode).
    pub(crate) fn linear(&mut self, line: u64, id: &str, at: Option<Timestamp>, kinds: Vec<EntryKind>) {
        let parent = self.last.clone();
        self.line(line, id, parent.as_deref(), at, kinds);
    }

    /// The id of the newest entry.
    pub(crate) fn last_id(&self) -> Option<&str> {
        self.last.as_deref()
    }

    /// The newest entry, to change what it turned out to be.
    pub(crate) fn last_entry_mut(&mut self) -> Option<&mut Entry> {
        self.session.entries.last_mut()
    }

    /// The session read: its entries, or (with a sink) its facts alone,
    /// every entry handed over.
    pub(crate) fn finish(mut self) -> PeerSession {
        self.hand_over();
        if self.session.provider.is_none() {
            self.session.provider = self.session.format.default_provider().map(str::to_owned);
        }
        self.session
    }
}

/// What an id is known by in a [`Builder`]'s maps: the first 128 bits of
/// its SHA-256, a fixed 16 bytes however long the id (a session of a
/// million entries keeps its ids in a few dozen MB), which no two ids of a
/// file share, whoever wrote them.
fn key(id: &str) -> u128 {
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(id.as_bytes());
    let mut first = [0u8; 16];
    first.copy_from_slice(&digest[..16]);
    u128::from_le_bytes(first)
}

/// A [`EntryKind::Skipped`] with `reason`.
pub(crate) fn skipped(reason: impl Into<String>) -> EntryKind {
    EntryKind::Skipped { reason: reason.into() }
}

//! Another agent's session file (Claude Code, Codex, pi, opencode) as the
//! import takes it: [`crate::peers`] reads it into a tree, and the branch
//! the peer last left it on (from the root to its newest entry) becomes the
//! events, calls and results paired as the run loop needs them, the same
//! way as an older seri file's. Pure: bytes in, a [`LegacyFile`] out.
//!
//! The branches the session left inside the file become forks of the main
//! session by reference ([`branches`], forked by the import where each
//! leaves the main branch). Not imported yet, each counted with its reason:
//! a compaction's summary (the history before it is imported whole, so
//! nothing is lost, and seri compacts again as it needs), pi's branch
//! summaries, model changes, and what the peer itself kept out of the
//! conversation (bookkeeping, attachments, the records of local commands).
//! Skipped lines are reported once per reason, at the first line, with
//! how many there were: a session of hundreds of lines says a handful of
//! things, not hundreds.

use std::collections::{BTreeMap, HashSet};

use seri_core::{ModelRef, Thinking, Timestamp, ToolCall, ToolCallId};

use super::file::{self, LegacyFile};
use super::line::{Entry as LegacyEntry, Header, PeerCompaction};
use super::report::LineWarning;
use crate::peers::{self, EntryKind, Format, PeerSession};

/// Why entries off the main branch are not imported.
const OFF_BRANCH: &str = "on a branch the session left (imported as a fork where it has events of its own)";

/// The file, which [`peers::detect`] found to be of `format`, read.
pub(crate) fn read(format: Format, bytes: &[u8]) -> LegacyFile {
    match peers::parse(format, bytes) {
        Ok(session) => convert_path(&session, session.main_branch()),
        Err(error) => LegacyFile {
            header: Header::default(),
            events: Vec::new(),
            warnings: vec![LineWarning { line: 1, skipped: true, problem: error.to_string(), count: 1 }],
        },
    }
}

/// A session [`peers::parse_lines`] read: its main branch, and each branch
/// it left behind, as [`read`] and [`branches`] give them.
pub(crate) fn read_session(session: &PeerSession) -> (LegacyFile, Vec<LegacyFile>) {
    let branches = session.other_branches().into_iter().map(|path| convert_path(session, path)).collect();
    (convert_path(session, session.main_branch()), branches)
}

/// Each branch the session left behind (in-file branches: Claude Code's
/// and pi's trees), as the events its path from the root gives; the import
/// forks the main session where each leaves it.
pub(crate) fn branches(format: Format, bytes: &[u8]) -> Vec<LegacyFile> {
    let Ok(session) = peers::parse(format, bytes) else { return Vec::new() };
    session.other_branches().into_iter().map(|path| convert_path(&session, path)).collect()
}

/// The import's header of a session read.
pub(crate) fn header(session: &PeerSession) -> Header {
    Header {
        id: session.id.clone(),
        cwd: session.cwd.clone(),
        title: session.title.clone(),
        created_at: session.created_at,
        forked_from: session.forked_from.as_ref().map(|from| source_id(session.format, &from.session)),
        copies_unnamed_source: session.copies_unnamed_source,
    }
}

/// An answer being gathered from its pieces (Claude Code writes each block
/// on a line of its own): thinking, then text, then calls.
#[derive(Default, Clone)]
struct Answer {
    line: u64,
    at: Option<Timestamp>,
    thinking: Vec<String>,
    /// The signature of the newest thinking, when it had one.
    signature: Option<String>,
    text: Vec<String>,
    calls: Vec<ToolCall>,
    /// The model that wrote it, when the file says.
    model: Option<ModelRef>,
}

impl Answer {
    fn is_empty(&self) -> bool {
        self.thinking.is_empty() && self.text.is_empty() && self.calls.is_empty()
    }

    fn start(&mut self, line: u64, at: Option<Timestamp>, model: &Option<ModelRef>) {
        if self.is_empty() {
            self.line = line;
            self.at = at;
            self.model.clone_from(model);
        }
    }
}

/// Lines left out, by reason: the first line and how many.
#[derive(Default)]
pub(crate) struct Skips(BTreeMap<String, (u64, usize)>);

impl Skips {
    pub(crate) fn add(&mut self, reason: &str, line: u64) {
        let counted = self.0.entry(reason.to_owned()).or_insert((line, 0));
        counted.0 = counted.0.min(line);
        counted.1 += 1;
    }

    /// Counts an entry no imported path holds.
    pub(crate) fn off_branch(&mut self, entry: &peers::Entry) {
        if !matches!(entry.kind, EntryKind::Skipped { .. }) {
            self.add(OFF_BRANCH, entry.line);
        }
    }

    /// One warning per reason, at its first line, in line order.
    pub(crate) fn warnings(self) -> Vec<LineWarning> {
        let mut warnings: Vec<LineWarning> = self
            .0
            .into_iter()
            .map(|(problem, (line, count))| LineWarning { line, skipped: true, problem, count: count as u64 })
            .collect();
        warnings.sort_by_key(|warning| warning.line);
        warnings
    }
}

/// Turns the entries of one path from the root, in order, into events as
/// they come: an answer's pieces gathered whole, calls and results paired.
/// What it makes is taken with [`Converter::take_events`]; a branch of the
/// path goes on from a [`Converter::branch`].
pub(crate) struct Converter {
    format: Format,
    /// The provider the file names, for model changes that do not.
    provider: Option<String>,
    /// The model answering at this point: the file's first, then each change.
    model: Option<ModelRef>,
    answer: Answer,
    reader: file::Reader,
}

impl Converter {
    pub(crate) fn new(session: &PeerSession) -> Self {
        Self {
            format: session.format,
            provider: session.provider.clone(),
            model: model_ref(session.provider.as_deref(), session.model.as_deref()),
            answer: Answer::default(),
            reader: file::Reader::default(),
        }
    }

    /// A converter for another path that shares this one's so far; this
    /// one's events must all be taken.
    pub(crate) fn branch(&self) -> Self {
        Self {
            format: self.format,
            provider: self.provider.clone(),
            model: self.model.clone(),
            answer: self.answer.clone(),
            reader: self.reader.branch(),
        }
    }

    /// The next entry of the path; `kept_line` is the line of a
    /// compaction's first kept entry, when the path holds it; what it
    /// leaves out goes to `skips`.
    pub(crate) fn feed(&mut self, entry: peers::Entry, kept_line: Option<u64>, skips: &mut Skips) {
        let peers::Entry { line, at, kind, .. } = entry;
        match kind {
            EntryKind::UserText { text } => {
                self.flush();
                self.reader.entry(line, at, LegacyEntry::User { content: text });
            }
            EntryKind::Thinking { text, signature } => {
                // Thinking after text or calls starts the next answer.
                if !self.answer.text.is_empty() || !self.answer.calls.is_empty() {
                    self.flush();
                }
                self.answer.start(line, at, &self.model);
                self.answer.thinking.push(text);
                self.answer.signature = signature;
            }
            EntryKind::AssistantText { text } => {
                if !self.answer.calls.is_empty() {
                    self.flush();
                }
                self.answer.start(line, at, &self.model);
                self.answer.text.push(text);
            }
            EntryKind::ToolCall { call_id, name, arguments } => {
                self.answer.start(line, at, &self.model);
                let id = if call_id.is_empty() { format!("{}-line-{line}", self.format) } else { call_id };
                self.answer.calls.push(ToolCall { id: ToolCallId(id), name, arguments });
            }
            EntryKind::ToolResult { call_id, name, text, is_error } => {
                self.flush();
                let result = LegacyEntry::Tool { tool_call_id: ToolCallId(call_id), name, content: text, is_error };
                self.reader.entry(line, at, result);
            }
            EntryKind::Compaction { summary, read_files, modified_files, .. } => {
                self.flush();
                let compaction = PeerCompaction {
                    summary,
                    first_kept_line: kept_line,
                    read: read_files,
                    modified: modified_files,
                    peer: self.format.to_string(),
                    model: self.model.clone(),
                };
                self.reader.entry(line, at, LegacyEntry::Compacted(Box::new(compaction)));
            }
            EntryKind::BranchSummary { .. } => skips.add("a summary of a branch left behind (not imported yet)", line),
            EntryKind::ModelChange { provider, model: changed } => {
                // Recorded on the answers it wrote; seri continues with its own model.
                self.flush();
                self.model = model_ref(provider.as_deref().or(self.provider.as_deref()), Some(&changed));
            }
            EntryKind::Skipped { reason } => skips.add(&reason, line),
        }
    }

    fn flush(&mut self) {
        if self.answer.is_empty() {
            return;
        }
        let Answer { line, at, thinking, signature, text, calls, model } = std::mem::take(&mut self.answer);
        // A signature signs one block's text: joined, the text keeps none.
        let signature = signature.filter(|_| thinking.len() == 1);
        let thinking = (!thinking.is_empty()).then(|| Thinking {
            text: thinking.join("\n\n"),
            signature,
            encrypted_content: None,
        });
        self.reader.entry(line, at, LegacyEntry::Assistant { thinking, content: text.join("\n\n"), calls, model });
    }

    /// The path's end: the answer being gathered and each call still
    /// waiting become events.
    pub(crate) fn finish(&mut self) {
        self.flush();
        self.reader.finish();
    }

    /// The events made since they were last taken, in order.
    pub(crate) fn take_events(&mut self) -> Vec<file::LegacyEvent> {
        self.reader.take_events()
    }

    /// The warnings of the conversion (calls without results, results
    /// without calls, compactions that replaced nothing) with `skips`', in
    /// line order.
    pub(crate) fn warnings(&mut self, skips: Skips) -> Vec<LineWarning> {
        let mut warnings = skips.warnings();
        warnings.extend(self.reader.take_warnings());
        warnings.sort_by_key(|warning| warning.line);
        warnings
    }
}

/// The peer's id of a fork's source: pi names the source's file
/// (`<time>_<id>.jsonl`, its id after the last `_`), the others its id.
fn source_id(format: Format, source: &str) -> String {
    match format {
        Format::Pi => {
            let name = source.rsplit('/').next().unwrap_or(source);
            let stem = name.strip_suffix(".jsonl").unwrap_or(name);
            stem.rsplit_once('_').map_or(stem, |(_, id)| id).to_owned()
        }
        _ => source.to_owned(),
    }
}

/// The model a peer names, as seri records it; `None` without a model or
/// without a provider to say whose model it is.
fn model_ref(provider: Option<&str>, model: Option<&str>) -> Option<ModelRef> {
    Some(ModelRef::new(provider.filter(|p| !p.is_empty())?, model.filter(|m| !m.is_empty())?))
}

/// The entries of `path` (from the root), as the import's file; the
/// entries off that path are counted as skipped.
fn convert_path(session: &PeerSession, path: Vec<&peers::Entry>) -> LegacyFile {
    let on_path: HashSet<&str> = path.iter().map(|entry| entry.id.as_str()).collect();
    let mut skips = Skips::default();
    for line in &session.skipped {
        skips.add(&line.reason, line.line);
    }
    for entry in session.entries.iter().filter(|entry| !on_path.contains(entry.id.as_str())) {
        skips.off_branch(entry);
    }
    let mut converter = Converter::new(session);
    for entry in &path {
        let kept_line = match &entry.kind {
            EntryKind::Compaction { first_kept: Some(id), .. } => {
                path.iter().find(|kept| kept.id == *id).map(|kept| kept.line)
            }
            _ => None,
        };
        converter.feed((*entry).clone(), kept_line, &mut skips);
    }
    converter.finish();
    let events = converter.take_events();
    LegacyFile { header: header(session), events, warnings: converter.warnings(skips) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use seri_core::EventBody;

    /// The events of `lines` read as a file, one `kind detail` each.
    fn events(lines: &[&str]) -> (Option<Format>, Vec<String>, Vec<String>) {
        let bytes = lines.join("\n");
        let Some(format) = peers::detect(bytes.as_bytes()) else {
            return (None, Vec::new(), Vec::new());
        };
        let file = read(format, bytes.as_bytes());
        let events = file
            .events
            .iter()
            .map(|event| match &event.body {
                EventBody::Message(message) => format!("{:?} {}", message.role, message.content),
                EventBody::Thinking(thinking) => format!("thinking {}", thinking.text),
                EventBody::ToolCall(call) => format!("call {} {}", call.id.as_str(), call.name),
                EventBody::ToolResult(result) => format!("result {} {}", result.tool_call_id.as_str(), result.content),
                other => other.kind().to_owned(),
            })
            .collect();
        let warnings = file.warnings.iter().map(|w| format!("{}: {} ×{}", w.line, w.problem, w.count)).collect();
        (Some(format), events, warnings)
    }

    #[test]
    fn the_main_branch_becomes_events_with_each_answer_whole_and_its_results_after_it() {
        let (format, events, warnings) = events(&[
            r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00Z","cwd":"/p"}"#,
            r#"{"type":"message","id":"u","parentId":null,"message":{"role":"user","content":"go"}}"#,
            r#"{"type":"message","id":"a","parentId":"u","message":{"role":"assistant","content":[{"type":"thinking","thinking":"hm"},{"type":"text","text":"two calls"},{"type":"toolCall","id":"c1","name":"x","arguments":{}},{"type":"toolCall","id":"c2","name":"y","arguments":{}}]}}"#,
            r#"{"type":"message","id":"r2","parentId":"a","message":{"role":"toolResult","toolCallId":"c2","content":"B"}}"#,
            r#"{"type":"message","id":"r1","parentId":"r2","message":{"role":"toolResult","toolCallId":"c1","content":"A"}}"#,
            r#"{"type":"message","id":"old","parentId":"r1","message":{"role":"user","content":"left behind"}}"#,
            r#"{"type":"message","id":"new","parentId":"r1","message":{"role":"user","content":"kept"}}"#,
        ]);
        assert_eq!(format, Some(Format::Pi));
        assert_eq!(
            events,
            [
                "User go",
                "thinking hm",
                "Assistant two calls",
                "call c1 x",
                "call c2 y",
                "result c1 A",
                "result c2 B",
                "User kept",
            ]
        );
        assert_eq!(warnings, [format!("6: {OFF_BRANCH} ×1")]);
    }

    #[test]
    fn a_thinking_signature_is_kept_where_it_signs_what_is_kept() {
        let signed = |api: &str| {
            let line = format!(
                r#"{{"type":"message","id":"a","parentId":null,"message":{{"role":"assistant","api":"{api}","content":[{{"type":"thinking","thinking":"hm","thinkingSignature":"sig"}},{{"type":"text","text":"hi"}}]}}}}"#
            );
            let header = r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00Z","cwd":"/p"}"#;
            let bytes = format!("{header}\n{line}");
            read(Format::Pi, bytes.as_bytes()).events.iter().find_map(|event| match &event.body {
                EventBody::Thinking(thinking) => Some(thinking.signature.clone()),
                _ => None,
            })
        };
        assert_eq!(signed("anthropic-messages"), Some(Some("sig".to_owned())));
        assert_eq!(signed("openai-completions"), Some(None), "pi keeps a field's name there, not a signature");
    }

    #[test]
    fn seri_files_are_not_read_as_a_peer() {
        assert_eq!(events(&[r#"{"type":"session","id":"a"}"#, r#"{"role":"user","content":"hi"}"#]).0, None);
    }

    #[test]
    fn a_peers_compaction_is_a_mark_whose_recap_is_its_summary_and_whose_kept_part_is_what_it_kept() {
        let lines = [
            r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00Z","cwd":"/p"}"#,
            r#"{"type":"model_change","id":"m","parentId":null,"provider":"acme","modelId":"big-1"}"#,
            r#"{"type":"message","id":"u1","parentId":"m","message":{"role":"user","content":"first"}}"#,
            r#"{"type":"message","id":"a1","parentId":"u1","message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"a.rs"}}]}}"#,
            r#"{"type":"message","id":"r1","parentId":"a1","message":{"role":"toolResult","toolCallId":"c1","content":"A"}}"#,
            r#"{"type":"message","id":"a2","parentId":"r1","message":{"role":"assistant","content":[{"type":"text","text":"read it"}]}}"#,
            r#"{"type":"message","id":"u2","parentId":"a2","message":{"role":"user","content":"second"}}"#,
            r#"{"type":"message","id":"a3","parentId":"u2","message":{"role":"assistant","content":[{"type":"text","text":"ok"}]}}"#,
            r#"{"type":"compaction","id":"k1","parentId":"a3","summary":"They read a.rs.","firstKeptEntryId":"u2","details":{"readFiles":["a.rs","b.rs"],"modifiedFiles":["b.rs"]}}"#,
            r#"{"type":"message","id":"u3","parentId":"k1","message":{"role":"user","content":"third"}}"#,
            r#"{"type":"compaction","id":"k2","parentId":"u3","summary":"All of it."}"#,
            r#"{"type":"compaction","id":"k3","parentId":"k2","summary":"Nothing new.","firstKeptEntryId":"u3"}"#,
        ];
        let bytes = lines.join("\n");
        let file = read(Format::Pi, bytes.as_bytes());
        let shown: Vec<String> = file
            .events
            .iter()
            .enumerate()
            .map(|(i, event)| match &event.body {
                EventBody::ContextCompacted(c) => format!(
                    "{} compacted {}..={} kept from {} read {:?} modified {:?} by {}/{}: {}",
                    i + 1,
                    c.evicted_from_seq.get(),
                    c.evicted_to_seq.get(),
                    c.kept_from_seq.get(),
                    c.read,
                    c.modified,
                    c.model.provider,
                    c.model.model,
                    c.recap.progress,
                ),
                EventBody::Message(m) => format!(
                    "{} {:?} {} {}",
                    i + 1,
                    m.role,
                    m.content,
                    m.meta().model.as_ref().map_or("-".to_owned(), |m| format!("{}/{}", m.provider, m.model))
                ),
                other => format!("{} {}", i + 1, other.kind()),
            })
            .collect();
        assert_eq!(
            shown,
            [
                "1 User first -",
                "2 tool_call",
                "3 tool_result",
                "4 Assistant read it acme/big-1",
                "5 User second -",
                "6 Assistant ok acme/big-1",
                "7 compacted 1..=4 kept from 5 read [\"a.rs\"] modified [\"b.rs\"] by acme/big-1: They read a.rs.",
                "8 User third -",
                "9 compacted 5..=8 kept from 9 read [] modified [] by acme/big-1: All of it.",
            ]
            .map(str::to_owned)
        );
        let warnings: Vec<_> = file.warnings.iter().map(|w| format!("{}: {}", w.line, w.problem)).collect();
        assert_eq!(warnings, ["12: a compaction by pi that replaced nothing (it kept everything before it)"]);
        // The recap reads as the peer's summary; the history it replaced is kept.
        let EventBody::ContextCompacted(first) = &file.events[6].body else { panic!("a mark") };
        assert!(first.recap_text().contains("They read a.rs."), "{}", first.recap_text());
    }
}

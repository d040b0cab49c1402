//! A whole legacy file, read line by line into the session's header and
//! events. Pure: bytes in, events and warnings out.
//!
//! Tool calls and results are kept in pairs the way the run loop needs them
//! to send the session to a model again: the results of one assistant line's
//! calls are stored right after it, in the order of its calls; a call the
//! file never answered gets an error result saying so; a result that
//! answers no waiting call is skipped with a warning.

use seri_core::tokens::{model_visible_chars, tokens_from_chars};
use seri_core::{
    CompactionRecap, CompactionTrigger, ContextCompacted, EventBody, Message, MessageMeta, ModelRef, Seq, Thinking,
    Timestamp, ToolCall, ToolResult,
};

use std::cell::RefCell;
use std::rc::Rc;

use super::line::{self, Entry, Header, Line, PeerCompaction};
use super::report::LineWarning;

/// The content of the result given to a call the file never answered.
pub(crate) const NO_RESULT: &str = "no result: the older release recorded none for this call";

/// What a file holds, read.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LegacyFile {
    /// The header's facts (all absent when it had none).
    pub(crate) header: Header,
    /// The events in the order the session gets them.
    pub(crate) events: Vec<LegacyEvent>,
    /// Every line skipped or imported with a note, in line order.
    pub(crate) warnings: Vec<LineWarning>,
}

/// One event and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LegacyEvent {
    /// The 1-based line.
    pub(crate) line: u64,
    /// The time the line carried.
    pub(crate) at: Option<Timestamp>,
    /// The event.
    pub(crate) body: EventBody,
}

impl LegacyFile {
    /// When the session started: the header's `createdAt`, else the first
    /// time any line carried, else `fallback` (the file's modification time).
    pub(crate) fn created_at(&self, fallback: Timestamp) -> Timestamp {
        self.header.created_at.or_else(|| self.events.iter().find_map(|e| e.at)).unwrap_or(fallback)
    }

    /// The events with their times: each its own, else the time of the one
    /// before it, else the session's start.
    pub(crate) fn dated_events(&self, created_at: Timestamp) -> Vec<(Timestamp, EventBody)> {
        let mut last = created_at;
        self.events
            .iter()
            .map(|event| {
                last = event.at.unwrap_or(last);
                (last, event.body.clone())
            })
            .collect()
    }
}

/// Reads a file's bytes.
pub(crate) fn read(bytes: &[u8]) -> LegacyFile {
    use crate::peers::Source as _;
    let mut reader = Reader::default();
    for (number, raw) in bytes.raw_lines() {
        reader.raw(number, raw.as_deref().map_err(Clone::clone));
    }
    reader.finish();
    LegacyFile { header: reader.header.unwrap_or_default(), events: reader.events, warnings: reader.warnings }
}

/// Reads seri's own older lines one at a time, into events that can be
/// taken as they are made ([`Reader::take_events`]): an event, once made,
/// is never changed or moved, so the import writes them as it reads
/// (a call's result is made when the next line that is not a result comes,
/// right after the calls it answers). Another agent's compaction, which
/// looks back at the events before it, reads what it needs of them from
/// the reader's [`Ledger`], which outlives their taking.
#[derive(Default)]
pub(crate) struct Reader {
    header: Option<Header>,
    events: Vec<LegacyEvent>,
    warnings: Vec<LineWarning>,
    /// The calls of the newest assistant line, waiting for their results.
    waiting: Vec<Waiting>,
    /// Whether any event was made (taken or not).
    made: bool,
    /// What a compaction needs to know of every event made.
    ledger: Ledger,
}

/// What a compaction needs to know of an event made before it, in 16
/// bytes (a reader keeps one for every event it made): numbers past 32
/// bits, which no file of lines under the line limit reaches, saturate.
#[derive(Debug, Clone, Copy)]
struct Noted {
    line: u32,
    /// The characters the model sees of it.
    chars: u32,
    kind: NotedKind,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum NotedKind {
    Result,
    /// A compaction mark, and the seq its kept part starts at.
    Mark {
        kept_from: u32,
    },
    Other,
}

/// `n` in 32 bits, or the most they hold.
fn narrow(n: u64) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

impl Noted {
    fn of(line: u64, body: &EventBody) -> Noted {
        let kind = match body {
            EventBody::ToolResult(_) => NotedKind::Result,
            EventBody::ContextCompacted(c) => NotedKind::Mark { kept_from: narrow(c.kept_from_seq.get()) },
            _ => NotedKind::Other,
        };
        Noted { line: narrow(line), chars: narrow(model_visible_chars(body)), kind }
    }
}

/// Every event a reader made, as [`Noted`]: its own, or (a branch's,
/// [`Reader::branch`]) those of the reader it branched from up to that
/// point, shared rather than copied, and its own after them.
#[derive(Default)]
struct Ledger {
    trunk: Rc<RefCell<Vec<Noted>>>,
    /// A branch's: how many of the trunk's are its own first ones. The
    /// trunk's owner (`None`) writes to it; a branch writes to `own`.
    shared: Option<usize>,
    own: Vec<Noted>,
}

impl Ledger {
    fn push(&mut self, noted: Noted) {
        match self.shared {
            None => self.trunk.borrow_mut().push(noted),
            Some(_) => self.own.push(noted),
        }
    }

    /// The events so far, in order.
    fn all(&self) -> Vec<Noted> {
        let trunk = self.trunk.borrow();
        let shared = self.shared.map_or(trunk.len(), |shared| shared.min(trunk.len()));
        trunk[..shared].iter().chain(&self.own).copied().collect()
    }

    fn branch(&self) -> Ledger {
        debug_assert!(self.shared.is_none(), "only the trunk's owner branches");
        Ledger { trunk: Rc::clone(&self.trunk), shared: Some(self.trunk.borrow().len()), own: Vec::new() }
    }
}

#[derive(Clone)]
struct Waiting {
    call: ToolCall,
    line: u64,
    at: Option<Timestamp>,
    result: Option<LegacyEvent>,
}

impl Reader {
    /// Reads line `number`: its bytes, or why they were not read.
    pub(crate) fn raw(&mut self, number: u64, raw: Result<&[u8], String>) {
        let raw = match raw {
            Ok(raw) => raw,
            Err(problem) => return self.skip(number, problem),
        };
        let text = match std::str::from_utf8(raw) {
            Ok(text) => text,
            Err(e) => {
                return self.skip(number, format!("not UTF-8 text (invalid byte at column {})", e.valid_up_to() + 1));
            }
        };
        match line::read(text, number) {
            Ok((line, notes)) => {
                for note in notes {
                    self.warnings.push(LineWarning { line: number, skipped: false, problem: note, count: 1 });
                }
                self.line(number, line);
            }
            Err(problem) => self.skip(number, problem),
        }
    }

    /// The file's end: each call still waiting gets its result.
    pub(crate) fn finish(&mut self) {
        self.close_calls();
    }

    /// The events made since the last time they were taken, in order.
    pub(crate) fn take_events(&mut self) -> Vec<LegacyEvent> {
        std::mem::take(&mut self.events)
    }

    /// The session header, once a line gave one.
    pub(crate) fn header(&self) -> Option<&Header> {
        self.header.as_ref()
    }

    /// Every warning so far, in line order once [`Reader::finish`]ed.
    pub(crate) fn take_warnings(&mut self) -> Vec<LineWarning> {
        std::mem::take(&mut self.warnings)
    }

    fn skip(&mut self, line: u64, problem: String) {
        self.warnings.push(LineWarning { line, skipped: true, problem, count: 1 });
    }

    fn push(&mut self, line: u64, at: Option<Timestamp>, body: EventBody) {
        self.made = true;
        self.ledger.push(Noted::of(line, &body));
        self.events.push(LegacyEvent { line, at, body });
    }

    /// A reader that goes on from this one's state as another path would
    /// (a branch the session left, from the last entry it shares with the
    /// main one): the calls waiting and the events made so far, which it
    /// shares rather than copies. This reader's events must all be taken.
    pub(crate) fn branch(&self) -> Reader {
        debug_assert!(self.events.is_empty(), "events are taken before a branch");
        Reader {
            header: self.header.clone(),
            events: Vec::new(),
            warnings: Vec::new(),
            waiting: self.waiting.clone(),
            made: self.made,
            ledger: self.ledger.branch(),
        }
    }

    /// Reads one entry of another agent's file, already read (its
    /// `number`, time and entry), as [`from_entries`] does.
    pub(crate) fn entry(&mut self, number: u64, at: Option<Timestamp>, entry: Entry) {
        self.line(number, Line::Entry { at, entry });
    }

    fn line(&mut self, number: u64, line: Line) {
        match line {
            Line::Blank => {}
            Line::Header(header) => match (&self.header, !self.made) {
                (None, true) => self.header = Some(header),
                (_, false) => self.skip(number, "a session header after the first message".to_owned()),
                (Some(_), true) => self.skip(number, "a second session header".to_owned()),
            },
            Line::Entry { at, entry: Entry::User { content } } => {
                self.close_calls();
                self.push(number, at, EventBody::Message(Message::user(content)));
            }
            Line::Entry { at, entry: Entry::Assistant { thinking, content, calls, model } } => {
                self.close_calls();
                self.assistant(number, at, thinking, content, calls, model);
            }
            Line::Entry { at, entry: Entry::Compacted(compaction) } => {
                self.close_calls();
                match compacted(&self.ledger.all(), *compaction) {
                    Ok(body) => self.push(number, at, EventBody::ContextCompacted(Box::new(body))),
                    Err(problem) => self.skip(number, problem),
                }
            }
            Line::Entry { at, entry: Entry::Tool { tool_call_id, name, content, is_error } } => {
                let waiting = self.waiting.iter_mut().find(|w| w.call.id == tool_call_id && w.result.is_none());
                let Some(waiting) = waiting else {
                    let problem = format!(
                        "a result for tool call `{}`, which no assistant line before it left waiting for one",
                        tool_call_id.as_str()
                    );
                    return self.skip(number, problem);
                };
                let name = name.unwrap_or_else(|| waiting.call.name.clone());
                let body = EventBody::ToolResult(ToolResult {
                    tool_call_id,
                    name,
                    content,
                    is_error,
                    ..ToolResult::default()
                });
                waiting.result = Some(LegacyEvent { line: number, at, body });
            }
        }
    }

    fn assistant(
        &mut self,
        number: u64,
        at: Option<Timestamp>,
        thinking: Option<Thinking>,
        content: String,
        calls: Vec<ToolCall>,
        model: Option<ModelRef>,
    ) {
        if let Some(thinking) = thinking {
            self.push(number, at, EventBody::Thinking(thinking));
        }
        if !content.is_empty() {
            let meta = MessageMeta { model, ..MessageMeta::default() };
            self.push(number, at, EventBody::Message(Message::assistant(content).with_meta(meta)));
        }
        for call in calls {
            self.push(number, at, EventBody::ToolCall(call.clone()));
            self.waiting.push(Waiting { call, line: number, at, result: None });
        }
    }

    /// Stores the results of the waiting calls in call order, giving each
    /// call the file never answered an error result that says so.
    fn close_calls(&mut self) {
        for waiting in std::mem::take(&mut self.waiting) {
            let event = match waiting.result {
                Some(result) => result,
                None => {
                    let Waiting { call, line, at, .. } = waiting;
                    self.warnings.push(LineWarning {
                        line,
                        skipped: false,
                        count: 1,
                        problem: format!(
                            "tool call `{}` ({}) has no result in the file; it was given an error result saying so",
                            call.id.as_str(),
                            call.name
                        ),
                    });
                    let body = EventBody::ToolResult(ToolResult {
                        tool_call_id: call.id,
                        name: call.name,
                        content: NO_RESULT.to_owned(),
                        is_error: true,
                        ..ToolResult::default()
                    });
                    LegacyEvent { line, at, body }
                }
            };
            self.made = true;
            self.ledger.push(Noted::of(event.line, &event.body));
            self.events.push(event);
        }
        // Warnings stay in line order even when a call's is added late.
        self.warnings.sort_by_key(|w| w.line);
    }
}

/// Another agent's compaction as seri's own mark, placed after `events`
/// (the file's events so far, numbered from seq 1 as the import stores
/// them): the agent's summary is the recap (verbatim, as its Progress; the
/// agent wrote no separate goal, blockers or next steps), the events from
/// the first one it kept are the kept part, and everything since the
/// working context's start before it (seq 1, or where an earlier
/// compaction's kept part starts) is what the summary replaced. Nothing is
/// dropped: the summarised events stay, readable with `read thread:`.
///
/// The error says why the compaction cannot be a mark (it replaced
/// nothing), and the import skips its line with those words.
fn compacted(events: &[Noted], compaction: PeerCompaction) -> Result<ContextCompacted, String> {
    let PeerCompaction { summary, first_kept_line, mut read, mut modified, peer, model } = compaction;
    let seq_of = |index: usize| Seq(index as u64 + 1);
    let mark = seq_of(events.len());
    let (previous_recap, start) = events
        .iter()
        .rev()
        .find_map(|event| match event.kind {
            NotedKind::Mark { kept_from } => Some((u64::from(event.chars), Seq(u64::from(kept_from)))),
            _ => None,
        })
        .unwrap_or((0, Seq::FIRST));
    // The kept part starts at the first event of the kept entry's line or
    // after it, never at a result (its call would be left behind); without
    // one, nothing before the mark is kept.
    let kept_from = first_kept_line
        .and_then(|kept| {
            let from = start.get().saturating_sub(1) as usize;
            events
                .iter()
                .enumerate()
                .skip(from)
                .find(|(_, event)| u64::from(event.line) >= kept && event.kind == NotedKind::Other)
        })
        .map_or(mark, |(index, _)| seq_of(index));
    let is_mark = |event: &Noted| matches!(event.kind, NotedKind::Mark { .. });
    let replaced =
        (start.get()..kept_from.get()).filter_map(|seq| events.get(seq as usize - 1)).any(|event| !is_mark(event));
    if !replaced {
        return Err(format!("a compaction by {peer} that replaced nothing (it kept everything before it)"));
    }
    let chars_of = |from: Seq, to: Seq| -> u64 {
        events
            .iter()
            .enumerate()
            .filter(|(index, _)| (from..to).contains(&seq_of(*index)))
            .map(|(_, event)| u64::from(event.chars))
            .sum()
    };
    read.sort();
    read.dedup();
    modified.sort();
    modified.dedup();
    read.retain(|path| !modified.contains(path));
    let mut compacted = ContextCompacted {
        recap: CompactionRecap { progress: summary, ..CompactionRecap::default() },
        read,
        modified,
        read_unlisted: 0,
        modified_unlisted: 0,
        kept_from_seq: kept_from,
        evicted_from_seq: start,
        evicted_to_seq: Seq(kept_from.get() - 1),
        tokens_before: tokens_from_chars(previous_recap + chars_of(start, mark)),
        tokens_after: 0,
        trigger: CompactionTrigger::default(),
        focus: None,
        model: model.unwrap_or_else(|| ModelRef::new(peer.clone(), "unknown")),
    };
    let recap_chars = model_visible_chars(&EventBody::ContextCompacted(Box::new(compacted.clone())));
    compacted.tokens_after = tokens_from_chars(recap_chars + chars_of(kept_from, mark));
    Ok(compacted)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Each event as `line kind detail`, and each warning as `line: [skipped: ]problem`.
    fn summary(file: &LegacyFile) -> (Vec<String>, Vec<String>) {
        let events = file
            .events
            .iter()
            .map(|e| {
                let detail = match &e.body {
                    EventBody::Message(m) => format!("{:?} {}", m.role, m.content),
                    EventBody::Thinking(t) => t.text.clone(),
                    EventBody::ToolCall(c) => format!("{} {}", c.id.as_str(), c.name),
                    EventBody::ToolResult(r) => {
                        format!("{} {} {} {}", r.tool_call_id.as_str(), r.name, r.content, r.is_error)
                    }
                    other => other.kind().to_owned(),
                };
                format!("{} {} {detail}", e.line, e.body.kind())
            })
            .collect();
        let warnings = file
            .warnings
            .iter()
            .map(|w| format!("{}: {}{}", w.line, if w.skipped { "skipped: " } else { "" }, w.problem))
            .collect();
        (events, warnings)
    }

    #[track_caller]
    fn check(lines: &[&str], events: &[&str], warnings: &[&str]) {
        let (got_events, got_warnings) = summary(&read(lines.join("\n").as_bytes()));
        assert_eq!(got_events, events);
        assert_eq!(got_warnings, warnings);
    }

    #[test]
    fn results_follow_their_calls_in_call_order() {
        check(
            &[
                r#"{"role":"user","content":"go"}"#,
                r#"{"role":"assistant","content":"two","toolCalls":[{"id":"a","name":"x"},{"id":"b","name":"y"}]}"#,
                r#"{"role":"tool","toolCallId":"b","content":"B"}"#,
                r#"{"role":"tool","toolCallId":"a","content":"A","isError":true}"#,
                r#"{"role":"assistant","content":"done"}"#,
            ],
            &[
                "1 message User go",
                "2 message Assistant two",
                "2 tool_call a x",
                "2 tool_call b y",
                "4 tool_result a x A true",
                "3 tool_result b y B false",
                "5 message Assistant done",
            ],
            &[],
        );
    }

    #[test]
    fn an_unanswered_call_gets_an_error_result_and_a_stray_result_is_skipped() {
        check(
            &[
                r#"{"role":"assistant","toolCalls":[{"id":"a","name":"x"}]}"#,
                r#"{"role":"user","content":"stop"}"#,
                r#"{"role":"tool","toolCallId":"a","content":"late"}"#,
                r#"{"role":"assistant","toolCalls":[{"id":"b","name":"y"}]}"#,
                r#"{"role":"tool","toolCallId":"b","content":"B"}"#,
                r#"{"role":"tool","toolCallId":"b","content":"again"}"#,
                r#"{"role":"assistant","thinking":"last","toolCalls":[{"id":"c","name":"z"}]}"#,
            ],
            &[
                "1 tool_call a x",
                &format!("1 tool_result a x {NO_RESULT} true"),
                "2 message User stop",
                "4 tool_call b y",
                "5 tool_result b y B false",
                "7 thinking last",
                "7 tool_call c z",
                &format!("7 tool_result c z {NO_RESULT} true"),
            ],
            &[
                "1: tool call `a` (x) has no result in the file; it was given an error result saying so",
                "3: skipped: a result for tool call `a`, which no assistant line before it left waiting for one",
                "6: skipped: a result for tool call `b`, which no assistant line before it left waiting for one",
                "7: tool call `c` (z) has no result in the file; it was given an error result saying so",
            ],
        );
    }

    #[test]
    fn only_a_first_header_before_any_message_counts() {
        let file = read(
            b"\xEF\xBB\xBF{\"type\":\"session\",\"title\":\"one\"}\r\n{\"type\":\"session\",\"title\":\"two\"}\n\
              {\"role\":\"user\",\"content\":\"hi\"}\n\xff\xfe\n{\"type\":\"session\"}\n",
        );
        assert_eq!(file.header.title.as_deref(), Some("one"));
        let (events, warnings) = summary(&file);
        assert_eq!(events, ["3 message User hi"]);
        assert_eq!(
            warnings,
            [
                "2: skipped: a second session header",
                "4: skipped: not UTF-8 text (invalid byte at column 1)",
                "5: skipped: a session header after the first message",
            ]
        );
    }

    #[test]
    fn events_without_a_time_take_the_time_before_them() {
        let file = read(
            [
                r#"{"role":"user","content":"a"}"#,
                r#"{"role":"assistant","content":"b","timestamp":2000000000000}"#,
                r#"{"role":"user","content":"c"}"#,
            ]
            .join("\n")
            .as_bytes(),
        );
        assert_eq!(file.created_at(Timestamp(5)), Timestamp(2_000_000_000_000));
        let times: Vec<i64> = file.dated_events(Timestamp(1_000)).iter().map(|(t, _)| t.millis()).collect();
        assert_eq!(times, [1_000, 2_000_000_000_000, 2_000_000_000_000]);
        let untimed = read(br#"{"role":"user","content":"a"}"#);
        assert_eq!(untimed.created_at(Timestamp(5)), Timestamp(5));
    }

    /// Lines of every kind, good and bad, for the property below.
    const LINES: &[&str] = &[
        "",
        "not json",
        "[]",
        r#"{"role":"user","content":"u"}"#,
        r#"{"role":"user"}"#,
        r#"{"role":"assistant","content":"t"}"#,
        r#"{"role":"assistant","thinking":"th"}"#,
        r#"{"role":"assistant","toolCalls":[{"id":"a","name":"x"}]}"#,
        r#"{"role":"assistant","content":"c","tool_calls":[{"id":"a","name":"x"},{"id":"b","name":"y"}]}"#,
        r#"{"role":"assistant","toolCalls":[{"name":"gen"}]}"#,
        r#"{"role":"tool","toolCallId":"a","content":"A"}"#,
        r#"{"role":"tool","tool_call_id":"b","content":"B"}"#,
        r#"{"role":"tool","toolCallId":"zz","content":"?"}"#,
        r#"{"role":"tool","content":"no id"}"#,
        r#"{"role":"user","content":"timed","timestamp":"2025-03-01T09:30:00Z"}"#,
        r#"{"role":"user","content":"badly timed","timestamp":"soon"}"#,
    ];

    proptest! {
        /// Whatever the lines, every non-blank line is imported or reported
        /// as skipped, and calls and results pair up as the run loop needs.
        #[test]
        fn every_line_is_imported_or_reported_and_calls_pair_up(
            picks in proptest::collection::vec(0..LINES.len(), 0..40),
        ) {
            let lines: Vec<&str> = picks.iter().map(|&i| LINES[i]).collect();
            let file = read(lines.join("\n").as_bytes());
            for (i, line) in lines.iter().enumerate() {
                let number = i as u64 + 1;
                let imported = file.events.iter().any(|e| e.line == number);
                let skipped = file.warnings.iter().any(|w| w.line == number && w.skipped);
                prop_assert!(line.trim().is_empty() || imported != skipped, "line {number} `{line}`");
            }
            let mut waiting = std::collections::VecDeque::new();
            for event in &file.events {
                match &event.body {
                    EventBody::ToolCall(call) => waiting.push_back(call.id.clone()),
                    EventBody::ToolResult(result) => prop_assert_eq!(waiting.pop_front(), Some(result.tool_call_id.clone())),
                    _ => prop_assert!(waiting.is_empty(), "a message before the results of {waiting:?}"),
                }
            }
            prop_assert!(waiting.is_empty());
        }
    }
}

//! The projection's text, part by part, from a finished selection.
//!
//! Everything written by a model or a person (the predecessor's title, the
//! handoff, source addresses, transcript lines) goes through
//! [`escape_action_framing`](crate::escape_action_framing), so the only frame
//! tags in the text are the ones written here.

use std::fmt::Write as _;

use seri_core::{Handoff, Source};

use super::ContinuationInput;
use super::selection::{Loaded, Measured, Selection};
use crate::framing::{is_frame_name, push_escaped};
use crate::thread::SeqRange;
use crate::transcript::{inline, json_string};

/// Writes the whole projection.
pub(crate) fn render(input: &ContinuationInput<'_>, selection: &Selection) -> String {
    let mut out = String::new();
    open(&mut out, "continuation", None);
    lineage(&mut out, input);
    handoff(&mut out, input.handoff);
    sources(&mut out, input.sources);
    for excerpt in &selection.excerpts {
        open(&mut out, "excerpt", Some(excerpt.measured.range));
        out.push_str(&excerpt.lines);
        close(&mut out, "excerpt");
    }
    // Exchanges wholly inside loaded excerpts add no lines; without any
    // line, the block is left out.
    let has_lines = selection.exchanges.iter().any(|l| !l.lines.is_empty());
    if let (true, Some(first), Some(last)) = (has_lines, selection.exchanges.first(), selection.exchanges.last()) {
        let range = SeqRange { from: first.measured.range.from, to: last.measured.range.to };
        open(&mut out, "recent_exchanges", Some(range));
        selection.exchanges.iter().for_each(|Loaded { lines, .. }| out.push_str(lines));
        close(&mut out, "recent_exchanges");
    }
    omitted(&mut out, input, selection);
    close(&mut out, "continuation");
    out
}

fn open(out: &mut String, frame: &str, range: Option<SeqRange>) {
    debug_assert!(is_frame_name(frame), "{frame} is not in FRAME_NAMES");
    match range {
        Some(r) => {
            let _ = writeln!(out, "<{frame} from=\"{}\" to=\"{}\">", r.from, r.to);
        }
        None => {
            let _ = writeln!(out, "<{frame}>");
        }
    }
}

fn close(out: &mut String, frame: &str) {
    let _ = writeln!(out, "</{frame}>");
}

fn lineage(out: &mut String, input: &ContinuationInput<'_>) {
    let l = input.lineage;
    open(out, "lineage", None);
    let _ = writeln!(out, "origin session: {}", l.origin_session_id);
    let _ = write!(out, "predecessor: {} ", l.predecessor_session_id);
    push_escaped(out, &json_string(&l.predecessor_title));
    let _ = writeln!(out, "\ndepth: {}", l.depth);
    let _ = writeln!(out, "reason: {}", l.reason);
    let _ = writeln!(
        out,
        "initiating message: seq {} of the predecessor, copied after this projection",
        input.initiating_seq
    );
    close(out, "lineage");
}

/// The handoff as markdown: the seven sections in a fixed order, each
/// present (`(none)` when empty), then every extra in key order, with a
/// blank line between sections.
fn handoff(out: &mut String, h: &Handoff) {
    open(out, "handoff", None);
    let mut sections = vec![
        paragraph_section("Purpose", h.purpose.as_deref()),
        paragraph_section("Current request", h.current_request.as_deref()),
        list_section("Established facts", &h.established_facts),
        list_section("Decisions", &h.decisions),
        list_section("Open questions", &h.open_questions),
        list_section("Next actions", &h.next_actions),
        list_section("Cautions", &h.cautions),
    ];
    for (key, items) in &h.extra {
        // A key is the agent's own word: shown as written unless it would
        // break the heading's line (or is empty), then as a JSON string.
        let title = if key.is_empty() { json_string(key) } else { inline(key).into_owned() };
        sections.push(list_section(&title, items));
    }
    out.push_str(&sections.join("\n"));
    close(out, "handoff");
}

fn heading(title: &str) -> String {
    let mut out = String::from("## ");
    push_escaped(&mut out, title);
    out.push('\n');
    out
}

fn paragraph_section(title: &str, text: Option<&str>) -> String {
    let mut out = heading(title);
    match text.filter(|t| !t.trim().is_empty()) {
        Some(text) => text.split('\n').for_each(|line| body_line(&mut out, "", line)),
        None => out.push_str("(none)\n"),
    }
    out
}

fn list_section(title: &str, items: &[String]) -> String {
    let mut out = heading(title);
    if items.is_empty() {
        out.push_str("(none)\n");
    }
    for item in items {
        let mut lines = item.split('\n');
        match lines.next().filter(|first| !first.is_empty()) {
            Some(first) => body_line(&mut out, "- ", first),
            None => out.push_str("-\n"),
        }
        lines.for_each(|line| body_line(&mut out, "  ", line));
    }
    out
}

/// One line of handoff prose after `prefix`. A line that would start a
/// markdown heading gets `\` before its first `#` (markdown's own escape,
/// shown as `#`), so the handoff's text cannot forge a section.
fn body_line(out: &mut String, prefix: &str, line: &str) {
    out.push_str(prefix);
    let trimmed = line.trim_start();
    if trimmed.starts_with('#') {
        let indent = line.len() - trimmed.len();
        out.push_str(&line[..indent]);
        out.push('\\');
        push_escaped(out, trimmed);
    } else {
        push_escaped(out, line);
    }
    out.push('\n');
}

fn sources(out: &mut String, sources: &[Source]) {
    open(out, "sources", None);
    if sources.is_empty() {
        out.push_str("(none)\n");
    }
    for source in sources {
        match source {
            Source::Resource { uri } => {
                out.push_str("- resource: ");
                push_escaped(out, &inline(uri));
            }
            Source::Memory { path } => {
                out.push_str("- memory: ");
                push_escaped(out, &inline(path));
            }
            Source::SessionEvents { session_id, from_seq, to_seq } => {
                let _ = write!(out, "- thread:{session_id} seq {from_seq} to {to_seq}");
            }
            Source::SessionEvent { session_id, seq } => {
                let _ = write!(out, "- thread:{session_id} seq {seq}");
            }
        }
        out.push('\n');
    }
    close(out, "sources");
}

fn omitted(out: &mut String, input: &ContinuationInput<'_>, selection: &Selection) {
    let exchange = selection.omitted_exchange.iter().map(|m| ("recent exchange", m));
    let mut entries = selection.omitted_excerpts.iter().map(|m| ("cited range", m)).chain(exchange).peekable();
    if entries.peek().is_none() {
        return;
    }
    open(out, "omitted", None);
    let _ = writeln!(
        out,
        "Linked, not loaded: read thread:{} with fromSeq and toSeq recalls these and anything earlier.",
        input.lineage.predecessor_session_id
    );
    for (what, Measured { range, bytes }) in entries {
        let _ = writeln!(out, "- {what}, {range}: {bytes} bytes");
    }
    close(out, "omitted");
}

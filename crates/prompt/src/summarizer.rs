//! The compaction summarizer's request: its instructions and its one user
//! message.
//!
//! The summarizer is the session's own model, called with no tools. Its
//! system prompt is [`SUMMARIZER_INSTRUCTIONS`]; its user message is built
//! by [`SummarizerMessage`] from what `seri-projection` prepared (the evicted
//! transcript, already elided, trimmed and escaped; the recap being
//! updated; the focus words), in frames:
//!
//! ```text
//! <previous_recap>                      the recap being updated, when there is one
//! <trimmed from="A" to="C">             the oldest turns, left out because the request was too long
//! <evicted_transcript from="A" to="B">  the turns being replaced (all of A..=B but the trimmed ones)
//! <focus>                               the words after `/compact`
//! ```
//!
//! then one closing request: write the recap, or update the previous one.
//! Every frame's text goes through [`neutralize_frames`], so nothing quoted
//! in a recap or typed after `/compact` can close a frame early.

use std::fmt;

use seri_core::{CompactionRecap, Seq};

use crate::escape::neutralize_frames;
use crate::text::compaction::{TRIMMED, UPDATE_RECAP, WRITE_RECAP};

pub use crate::text::compaction::SUMMARIZER_INSTRUCTIONS;

/// The summarizer's user message, built from its parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SummarizerMessage<'a> {
    evicted: (Seq, Seq),
    transcript: &'a str,
    previous_recap: Option<&'a CompactionRecap>,
    trimmed: Option<(Seq, Seq)>,
    focus: Option<&'a str>,
}

impl<'a> SummarizerMessage<'a> {
    /// A message asking for the recap of the events `from..=to`, given as
    /// `transcript`: transcript lines, one event per line, as
    /// `seri-projection`'s `SummarizerInput::transcript` writes them.
    pub fn new(from: Seq, to: Seq, transcript: &'a str) -> Self {
        Self { evicted: (from, to), transcript, previous_recap: None, trimmed: None, focus: None }
    }

    /// The recap being updated; with one, the summarizer is asked to update
    /// it rather than write a new one.
    pub fn previous_recap(self, recap: Option<&'a CompactionRecap>) -> Self {
        Self { previous_recap: recap, ..self }
    }

    /// The oldest evicted events, `from..=to`, that trimming left out of the
    /// transcript.
    pub fn trimmed(self, range: Option<(Seq, Seq)>) -> Self {
        Self { trimmed: range, ..self }
    }

    /// The focus words given with `/compact`; blank words are none.
    pub fn focus(self, focus: Option<&'a str>) -> Self {
        Self { focus: focus.map(str::trim).filter(|f| !f.is_empty()), ..self }
    }

    /// The system prompt that goes with this message.
    pub fn instructions(&self) -> &'static str {
        SUMMARIZER_INSTRUCTIONS
    }
}

impl fmt::Display for SummarizerMessage<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(recap) = self.previous_recap {
            writeln!(f, "<previous_recap>\n{}\n</previous_recap>\n", neutralize_frames(&recap.to_markdown()))?;
        }
        // Trimming leaves out the oldest turns, so the note comes first.
        if let Some((from, to)) = self.trimmed {
            writeln!(f, "<trimmed from=\"{from}\" to=\"{to}\">\n{TRIMMED}\n</trimmed>\n")?;
        }
        let (from, to) = self.evicted;
        let transcript = neutralize_frames(self.transcript.trim_end_matches('\n'));
        writeln!(f, "<evicted_transcript from=\"{from}\" to=\"{to}\">\n{transcript}\n</evicted_transcript>\n")?;
        if let Some(focus) = self.focus {
            writeln!(f, "<focus>\n{}\n</focus>\n", neutralize_frames(focus))?;
        }
        let request = if self.previous_recap.is_some() { UPDATE_RECAP } else { WRITE_RECAP };
        f.write_str(request)
    }
}

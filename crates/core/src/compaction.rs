//! The compaction vocabulary: the recap that replaces the oldest part of a
//! working context, and the event that records it.
//!
//! Compaction never deletes anything. The summarised events stay in the
//! store; a [`ContextCompacted`] event is appended after them and says where
//! the model's working context now starts: its recap, then the events from
//! [`ContextCompacted::kept_from_seq`] on. Planning the cut and rendering the
//! recap into a request is `seri-projection`'s job; this module only names
//! the facts.
//!
//! # The four fields
//!
//! A recap is written for a colleague who takes over mid-task, in four
//! fields chosen so that updating one recap into the next has a rule for
//! each (see [`RecapField`]):
//!
//! | field | holds | on update |
//! |---|---|---|
//! | Goal | what the user asked for, in their terms, with the constraints they set | kept; refined only when the user changed it |
//! | Progress | what is done and what was established: decisions, facts, results | grows: finished work moves here |
//! | Blockers | what is failing or unknown right now, and what was tried | resolved ones are dropped |
//! | Next steps | what to do next, in order | replaced by what is next now |
//!
//! Progress and Blockers are the two fields the specification names
//! ("finished work moves into progress", "blockers the new turns resolved
//! are dropped"); Goal keeps the task from drifting across compactions, and
//! Next steps is what the model needs to act on the very next turn.
//!
//! The file lists (`Read:`, `Modified:`) are not written by the summarizer:
//! they come from the evicted tool calls themselves, so a recap never names a
//! file the session did not touch.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::id::Seq;
use crate::usage::ModelRef;

/// One of the recap's four fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RecapField {
    /// What the user asked for, in their terms, with the constraints they set.
    Goal,
    /// What is done and what was established (decisions, facts, results).
    Progress,
    /// What is failing or unknown right now, and what was tried.
    Blockers,
    /// What to do next, in order.
    NextSteps,
}

impl RecapField {
    /// Every field, in the order a recap shows them.
    pub const ALL: [RecapField; 4] =
        [RecapField::Goal, RecapField::Progress, RecapField::Blockers, RecapField::NextSteps];

    /// The section heading the summarizer writes and the recap shows
    /// (`## Goal`, …), without the `## `.
    pub const fn heading(self) -> &'static str {
        match self {
            RecapField::Goal => "Goal",
            RecapField::Progress => "Progress",
            RecapField::Blockers => "Blockers",
            RecapField::NextSteps => "Next steps",
        }
    }
}

impl std::fmt::Display for RecapField {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.heading())
    }
}

/// What an empty field reads as, in a recap and in the summarizer's answer.
pub const EMPTY_RECAP_FIELD: &str = "(none)";

/// The summary of the evicted part of a working context, in four fields of
/// markdown (see the module doc for what each holds).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactionRecap {
    /// What the user asked for, in their terms, with the constraints they set.
    pub goal: String,
    /// What is done and what was established.
    pub progress: String,
    /// What is failing or unknown right now, and what was tried.
    pub blockers: String,
    /// What to do next, in order.
    pub next_steps: String,
}

impl CompactionRecap {
    /// The text of one field.
    pub fn field(&self, field: RecapField) -> &str {
        match field {
            RecapField::Goal => &self.goal,
            RecapField::Progress => &self.progress,
            RecapField::Blockers => &self.blockers,
            RecapField::NextSteps => &self.next_steps,
        }
    }

    /// The text of one field, to change it.
    pub fn field_mut(&mut self, field: RecapField) -> &mut String {
        match field {
            RecapField::Goal => &mut self.goal,
            RecapField::Progress => &mut self.progress,
            RecapField::Blockers => &mut self.blockers,
            RecapField::NextSteps => &mut self.next_steps,
        }
    }

    /// The four fields as markdown: `## Heading`, then the field's text (or
    /// [`EMPTY_RECAP_FIELD`]), sections separated by a blank line. This is
    /// the exact form the summarizer is asked to answer in, so a recap
    /// shown to it for updating reads like the answer it writes.
    pub fn to_markdown(&self) -> String {
        let mut out = String::new();
        for (i, field) in RecapField::ALL.into_iter().enumerate() {
            if i > 0 {
                out.push_str("\n\n");
            }
            let text = self.field(field).trim();
            let text = if text.is_empty() { EMPTY_RECAP_FIELD } else { text };
            // Writing to a String cannot fail.
            let _ = write!(out, "## {}\n{text}", field.heading());
        }
        out
    }
}

/// Why a compaction ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompactionTrigger {
    /// Before a model call, because the estimate reached the trigger.
    #[default]
    Automatic,
    /// On request (`/compact`), whatever the estimate.
    Manual,
    /// After the provider rejected a request as too long.
    Overflow,
}

impl CompactionTrigger {
    /// The wire name, e.g. `automatic`.
    pub const fn as_str(self) -> &'static str {
        match self {
            CompactionTrigger::Automatic => "automatic",
            CompactionTrigger::Manual => "manual",
            CompactionTrigger::Overflow => "overflow",
        }
    }
}

/// The oldest part of the working context was replaced by a recap.
///
/// The working context after this event is the recap (rendered as one user
/// message) followed by the session's events from `kept_from_seq` on, this
/// event and any older `context_compacted` event excepted. The events from
/// `evicted_from_seq` to `evicted_to_seq` are still in the store; only the
/// model stops seeing them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextCompacted {
    /// The summary of everything before `kept_from_seq`, earlier recaps included.
    pub recap: CompactionRecap,
    /// Files read by the evicted tool calls (`read_file`) and by those of
    /// earlier recaps, not modified by any of them. Sorted, each once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read: Vec<String>,
    /// Files written or edited by the evicted tool calls (`write_file`,
    /// `edit`) and by those of earlier recaps. Sorted, each once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub modified: Vec<String>,
    /// How many more files were read than `read` lists: a list keeps the
    /// most recently touched paths, so a recap stays small however long
    /// the session.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub read_unlisted: u64,
    /// How many more files were modified than `modified` lists.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub modified_unlisted: u64,
    /// Where the kept part of the working context starts.
    pub kept_from_seq: Seq,
    /// The first seq the recap replaced: where the working context started
    /// before this compaction.
    pub evicted_from_seq: Seq,
    /// The last seq the recap replaced (`kept_from_seq - 1`).
    pub evicted_to_seq: Seq,
    /// The context estimate before compacting, in tokens.
    pub tokens_before: u64,
    /// The local estimate of the working context after compacting (recap
    /// and kept part), in tokens.
    pub tokens_after: u64,
    /// Why it ran.
    #[serde(default)]
    pub trigger: CompactionTrigger,
    /// The focus instructions given with `/compact`, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub focus: Option<String>,
    /// The model that wrote the recap (the session's own model).
    pub model: ModelRef,
}

impl ContextCompacted {
    /// The recap as the model reads it: the four fields
    /// ([`CompactionRecap::to_markdown`]), then a `Read:` and a `Modified:`
    /// line listing the files, each line only when it has files.
    ///
    /// Paths are separated by `, `. A path that is not plain on one line (it
    /// contains `, `, a control character or surrounding spaces, or starts
    /// with a quote) is written
    /// as a JSON string, so every list can be split back unambiguously.
    pub fn recap_text(&self) -> String {
        let mut out = self.recap.to_markdown();
        let lists = [("Read", &self.read, self.read_unlisted), ("Modified", &self.modified, self.modified_unlisted)];
        // The lists sit together after the fields, one blank line before them.
        for (i, (label, paths, unlisted)) in lists.into_iter().filter(|(_, paths, _)| !paths.is_empty()).enumerate() {
            out.push_str(if i == 0 { "\n\n" } else { "\n" });
            let _ = write!(out, "{label}: ");
            for (j, path) in paths.iter().enumerate() {
                if j > 0 {
                    out.push_str(", ");
                }
                push_path(&mut out, path);
            }
            if unlisted > 0 {
                let _ = write!(out, " (and {unlisted} more)");
            }
        }
        out
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn push_path(out: &mut String, path: &str) {
    let plain = !path.is_empty()
        && !path.starts_with('"')
        && !path.contains(", ")
        && !path.chars().any(char::is_control)
        && path.trim() == path;
    if plain {
        out.push_str(path);
    } else {
        out.push_str(&serde_json::Value::from(path).to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{Event, EventBody};
    use crate::id::{AgentId, EventId, SessionId};
    use crate::session::{SessionInfo, SessionSeed};
    use crate::time::Timestamp;
    use crate::tokens::model_visible_chars;

    fn compacted(read: &[&str], modified: &[&str]) -> ContextCompacted {
        ContextCompacted {
            recap: CompactionRecap {
                goal: "Make `parse(\"\")` return an error.".into(),
                progress: "- Found the unwrap at src/parser.rs:42.".into(),
                blockers: "  ".into(),
                next_steps: "1. Run `cargo test -p parser`.".into(),
            },
            read: read.iter().map(|p| (*p).to_owned()).collect(),
            modified: modified.iter().map(|p| (*p).to_owned()).collect(),
            read_unlisted: 0,
            modified_unlisted: 0,
            kept_from_seq: Seq(41),
            evicted_from_seq: Seq(1),
            evicted_to_seq: Seq(40),
            tokens_before: 101_000,
            tokens_after: 20_500,
            trigger: CompactionTrigger::Automatic,
            focus: None,
            model: ModelRef::new("script", "scripted"),
        }
    }

    #[track_caller]
    fn check_text(read: &[&str], modified: &[&str], tail: &str) {
        let text = compacted(read, modified).recap_text();
        let fields = "## Goal\nMake `parse(\"\")` return an error.\n\n## Progress\n- Found the unwrap at src/parser.rs:42.\n\n## Blockers\n(none)\n\n## Next steps\n1. Run `cargo test -p parser`.";
        assert_eq!(text, format!("{fields}{tail}"));
    }

    #[test]
    fn recap_text_lists_files_after_the_fields() {
        check_text(&[], &[], "");
        check_text(&["a.rs", "b.rs"], &[], "\n\nRead: a.rs, b.rs");
        check_text(&[], &["c.rs"], "\n\nModified: c.rs");
        check_text(&["a.rs"], &["c.rs"], "\n\nRead: a.rs\nModified: c.rs");
        check_text(&["odd, name.rs", "two\nlines", " x"], &[], "\n\nRead: \"odd, name.rs\", \"two\\nlines\", \" x\"");
    }

    #[test]
    fn payload_is_camel_case_and_optional_fields_default() {
        let event = compacted(&["a.rs"], &[]);
        let json = serde_json::to_value(&event).unwrap();
        assert_eq!(json["keptFromSeq"], 41);
        assert_eq!(json["recap"]["nextSteps"], "1. Run `cargo test -p parser`.");
        assert!(json.get("modified").is_none() && json.get("focus").is_none());
        let minimal = serde_json::json!({
            "recap": {"goal": "g", "progress": "p", "blockers": "", "nextSteps": "n"},
            "keptFromSeq": 5, "evictedFromSeq": 1, "evictedToSeq": 4,
            "tokensBefore": 10, "tokensAfter": 5, "model": {"provider": "script", "model": "m"}
        });
        let decoded: ContextCompacted = serde_json::from_value(minimal).unwrap();
        assert_eq!((decoded.trigger, decoded.read.len()), (CompactionTrigger::Automatic, 0));
    }

    #[test]
    fn round_trips_as_a_context_compacted_event() {
        let body = EventBody::ContextCompacted(Box::new(compacted(&["a.rs"], &["b.rs"])));
        assert_eq!(body.kind(), "context_compacted");
        let decoded = EventBody::from_payload(body.kind(), body.to_payload().to_string().as_bytes()).unwrap();
        assert_eq!(decoded, body);
    }

    #[test]
    fn counts_its_recap_text_and_folds_as_a_no_op() {
        let compaction = compacted(&["a.rs"], &[]);
        let body = EventBody::ContextCompacted(Box::new(compaction.clone()));
        assert_eq!(model_visible_chars(&body), compaction.recap_text().chars().count() as u64);

        let seed = SessionSeed::new(SessionId::from_bytes([1; 16]), AgentId::local(), "/w", Timestamp(0));
        let event =
            Event { id: EventId::from_bytes([2; 16]), session_id: seed.id, seq: Seq(3), at: Timestamp(9), body };
        let folded = SessionInfo::fold(&seed, [&event]);
        let mut expected = SessionInfo::from_seed(&seed);
        (expected.last_seq, expected.updated_at) = (3, Timestamp(9));
        assert_eq!(folded, expected);
    }
}

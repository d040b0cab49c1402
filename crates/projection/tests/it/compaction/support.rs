//! Fixtures for the compaction tests: a session builder with tool pairs,
//! billed usage and recaps; settings; a canned summarizer; and the story a
//! scenario snapshot tells, one part per step the run loop takes.

use std::fmt::Write as _;

use seri_core::{
    CompactionRecap, CompactionTrigger, ContextCompacted, Event, EventBody, Message, MessageMeta, ModelRef, Thinking,
    ToolCall, ToolResult, Usage,
};
use seri_projection::compaction::{
    ContextBody, ContextMessage, SummarizerInput, WorkingContext, parse_recap, plan_compaction,
};
use seri_projection::{CompactionDecision, CompactionPlan, CompactionSettings};

use crate::support::Thread;

pub(crate) fn model() -> ModelRef {
    ModelRef::new("script", "scripted")
}

pub(crate) fn other_model() -> ModelRef {
    ModelRef::new("openai", "gpt-4o-mini")
}

/// Settings for a `window`-token model with a `keep`-token keep budget.
pub(crate) fn settings(window: u64, keep: u64) -> CompactionSettings {
    CompactionSettings::new(window, model()).with_keep_tokens(keep)
}

/// A session under construction. Tool calls get the id `call_SEQ`.
#[derive(Debug, Clone, Default)]
pub(crate) struct Session {
    pub(crate) thread: Thread,
}

impl Session {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    pub(crate) fn events(&self) -> &[Event] {
        &self.thread.events
    }

    pub(crate) fn next_seq(&self) -> u64 {
        self.thread.next_seq()
    }

    pub(crate) fn push(self, body: EventBody) -> Self {
        Self { thread: self.thread.push(body) }
    }

    pub(crate) fn user(self, text: &str) -> Self {
        Self { thread: self.thread.user(text) }
    }

    pub(crate) fn assistant(self, text: &str) -> Self {
        Self { thread: self.thread.assistant(text) }
    }

    pub(crate) fn thinking(self, text: &str) -> Self {
        self.push(EventBody::Thinking(Thinking { text: text.into(), signature: None, encrypted_content: None }))
    }

    /// An assistant message that carries the usage `model` billed.
    pub(crate) fn billed(self, text: &str, prompt_tokens: u64, model: Option<ModelRef>) -> Self {
        let usage =
            Usage { input: prompt_tokens / 2, cache_read: prompt_tokens - prompt_tokens / 2, ..Usage::default() };
        self.push(EventBody::Message(Message {
            meta: Some(Box::new(MessageMeta { usage: Some(usage), model, ..MessageMeta::default() })),
            ..Message::assistant(text)
        }))
    }

    /// An assistant message billed `prompt_tokens` by `model` for a request
    /// of `prompt_chars` characters: what teaches the estimate its ratio.
    pub(crate) fn billed_for(self, text: &str, prompt_tokens: u64, prompt_chars: u64, model: ModelRef) -> Self {
        let usage = Usage { input: prompt_tokens, ..Usage::default() };
        self.push(EventBody::Message(Message {
            meta: Some(Box::new(MessageMeta {
                usage: Some(usage),
                model: Some(model),
                prompt_chars: Some(prompt_chars),
                ..MessageMeta::default()
            })),
            ..Message::assistant(text)
        }))
    }

    /// A tool call with no result yet; its id is `call_SEQ`.
    pub(crate) fn call(self, name: &str, arguments: serde_json::Value) -> Self {
        let id = format!("call_{}", self.next_seq());
        self.push(EventBody::ToolCall(ToolCall { id: id.as_str().into(), name: name.into(), arguments }))
    }

    /// The result of the call made at seq `call_seq`.
    pub(crate) fn result(self, call_seq: u64, name: &str, content: &str, is_error: bool) -> Self {
        let id = format!("call_{call_seq}");
        self.push(EventBody::ToolResult(ToolResult {
            tool_call_id: id.as_str().into(),
            name: name.into(),
            content: content.into(),
            is_error,
            facts: None,
        }))
    }

    /// A call and its result.
    pub(crate) fn tool(self, name: &str, arguments: serde_json::Value, content: &str) -> Self {
        let seq = self.next_seq();
        self.call(name, arguments).result(seq, name, content, false)
    }

    /// `read_file` of `path`, answered with `content`.
    pub(crate) fn read(self, path: &str, content: &str) -> Self {
        self.tool("read_file", serde_json::json!({ "path": path }), content)
    }

    /// `edit` of `path`.
    pub(crate) fn edit(self, path: &str) -> Self {
        self.tool("edit", serde_json::json!({ "path": path, "old": "a", "new": "b" }), "Edited.")
    }

    pub(crate) fn compacted(self, compacted: ContextCompacted) -> Self {
        self.push(EventBody::ContextCompacted(Box::new(compacted)))
    }

    pub(crate) fn context(&self) -> WorkingContext {
        WorkingContext::from_events(self.events()).unwrap()
    }

    pub(crate) fn plan(&self, settings: &CompactionSettings, trigger: CompactionTrigger) -> CompactionDecision {
        plan_compaction(&self.context(), settings, trigger, None)
    }

    /// Compacts with `recap` as the summarizer's answer; panics when the
    /// plan does not compact.
    pub(crate) fn compact(self, settings: &CompactionSettings, recap: &str) -> Self {
        let CompactionDecision::Compact(plan) = self.plan(settings, CompactionTrigger::Manual) else {
            panic!("expected a compaction")
        };
        let event = plan.compacted(parse_recap(recap).unwrap());
        self.compacted(event)
    }
}

/// A summarizer's answer in the exact format.
pub(crate) fn answer(goal: &str, progress: &str, blockers: &str, next: &str) -> String {
    CompactionRecap { goal: goal.into(), progress: progress.into(), blockers: blockers.into(), next_steps: next.into() }
        .to_markdown()
}

pub(crate) fn plan_of(decision: CompactionDecision) -> Box<CompactionPlan> {
    match decision {
        CompactionDecision::Compact(plan) => plan,
        other => panic!("expected a compaction, got {other:?}"),
    }
}

/// One line per message: `[seqs] kind (chars)`, with a short preview.
pub(crate) fn outline(context: &WorkingContext) -> String {
    let mut out = String::new();
    if let Some(recap) = context.recap() {
        let _ = writeln!(
            out,
            "recap: the context_compacted event at seq {}, kept from seq {}",
            recap.seq, recap.compacted.kept_from_seq
        );
    }
    for m in context.messages() {
        let _ = writeln!(out, "{}", message_line(m));
    }
    out
}

fn message_line(m: &ContextMessage) -> String {
    let seqs = if m.seqs.from == m.seqs.to {
        format!("[{}]", m.seqs.from)
    } else {
        format!("[{}-{}]", m.seqs.from, m.seqs.to)
    };
    let what = match &m.body {
        ContextBody::User { text, .. } => format!("user: {}", preview(text)),
        ContextBody::Assistant(turn) => {
            let mut parts = Vec::new();
            if !turn.thinking.is_empty() {
                parts.push("thinking".to_owned());
            }
            if !turn.text.is_empty() {
                parts.push(format!("\"{}\"", preview(&turn.text)));
            }
            parts.extend(turn.tool_calls.iter().map(|c| format!("call {} {}", c.id, c.name)));
            format!("assistant: {}", parts.join(", "))
        }
        ContextBody::ToolResult(r) => format!("tool result {} for {}", r.name, r.tool_call_id),
    };
    format!("{seqs} {what} ({} chars)", m.chars)
}

fn preview(text: &str) -> String {
    let first: String = text.lines().next().unwrap_or("").chars().take(40).collect();
    if first.len() < text.len() { format!("{first}…") } else { first }
}

/// The whole story of one compaction, as a snapshot shows it: the context
/// and its estimate, the decision, the summarizer's input, the event, and
/// the working context that follows.
pub(crate) fn story(
    session: &Session,
    settings: &CompactionSettings,
    trigger: CompactionTrigger,
    focus: Option<&str>,
    summarizer_answer: &str,
) -> String {
    let context = session.context();
    let estimate = context.estimate(&settings.model);
    let mut out = String::new();
    let _ = writeln!(out, "## Working context\n{}", outline(&context));
    let _ = writeln!(
        out,
        "estimate: billed {}, local {} -> {} tokens of a {}-token window (keep budget {})\n",
        estimate.billed.map_or("none".to_owned(), |b| b.to_string()),
        estimate.local,
        estimate.tokens(),
        settings.window,
        settings.keep_budget(),
    );
    let decision = plan_compaction(&context, settings, trigger, focus);
    let _ = writeln!(out, "## Decision ({})\n{decision}", trigger.as_str());
    let CompactionDecision::Compact(plan) = decision else { return out };
    let _ = writeln!(out, "keep budget used: {} tokens", plan.keep_budget);
    let _ = writeln!(out, "read: {:?}\nmodified: {:?}", plan.read, plan.modified);
    if let Some(call) = &plan.pending_call {
        let _ = writeln!(out, "pending call: {call}");
    }
    let input = SummarizerInput::new(&plan, session.events()).unwrap();
    let _ = writeln!(out, "\n## Summarizer input (about {} tokens)", input.tokens());
    if let Some(recap) = input.previous_recap() {
        let _ = writeln!(out, "previous recap:\n{}\n", recap.to_markdown());
    }
    if let Some(focus) = input.focus() {
        let _ = writeln!(out, "focus: {focus}");
    }
    let _ = writeln!(out, "transcript:\n{}", input.transcript());
    let event = plan.compacted(parse_recap(summarizer_answer).unwrap());
    let _ = writeln!(out, "## Event\n{}\n", serde_json::to_string_pretty(&event).unwrap());
    let after = session.clone().compacted(event);
    let context = after.context();
    let _ = writeln!(out, "## Working context after\n{}", outline(&context));
    let _ = writeln!(out, "recap message:\n{}", context.recap().unwrap().message);
    let _ = writeln!(out, "\nestimate after: {} tokens", context.estimate(&settings.model).tokens());
    out
}

/// The kept part's tool results all answer calls in the kept part, and no
/// call is answered on the other side of the cut.
pub(crate) fn assert_pairs_intact(context: &WorkingContext, cut: usize) {
    let messages = context.messages();
    let calls = |range: &[ContextMessage]| -> Vec<String> {
        range
            .iter()
            .filter_map(|m| match &m.body {
                ContextBody::Assistant(t) => Some(t.tool_calls.iter().map(|c| c.id.to_string()).collect::<Vec<_>>()),
                _ => None,
            })
            .flatten()
            .collect()
    };
    let results = |range: &[ContextMessage]| -> Vec<String> {
        range
            .iter()
            .filter_map(|m| match &m.body {
                ContextBody::ToolResult(r) => Some(r.tool_call_id.to_string()),
                _ => None,
            })
            .collect()
    };
    let (evicted, kept) = messages.split_at(cut);
    let evicted_calls = calls(evicted);
    let kept_calls = calls(kept);
    for id in results(kept) {
        assert!(!evicted_calls.contains(&id), "the result of {id} is kept but its call is evicted");
    }
    for id in results(evicted) {
        assert!(!kept_calls.contains(&id), "the result of {id} is evicted but its call is kept");
    }
}

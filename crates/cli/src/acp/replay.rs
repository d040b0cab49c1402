//! `session/load`: a session's whole history, root to head, as the
//! `session/update`s an editor would have seen had it been there. Pure:
//! events in, updates out.

use std::collections::HashMap;
use std::path::Path;

use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, CurrentModeUpdate, Plan, PlanEntry, PlanEntryPriority, PlanEntryStatus, ResourceLink,
    SessionInfoUpdate, SessionModeId, SessionUpdate, TextContent, ToolCallStatus,
};
use seri_core::{Actor, Event, EventBody, Role, StepStatus, ToolResult};

use super::tools::{Call, Ended};

/// One session of a lineage, with its events.
#[derive(Debug)]
pub(super) struct Part<'a> {
    /// Its short id, as `seri` prints it.
    pub(super) short: String,
    /// Its title.
    pub(super) title: &'a str,
    /// Its events, in order.
    pub(super) events: &'a [Event],
}

/// The updates that tell an editor the lineage `parts` (root first).
/// A successor's projection and its copy of the message it answers are
/// left out: the editor saw those already, in the session before. So are
/// turns a rewind took back (`/rewind`): the conversation went on without
/// them.
pub(super) fn replay(parts: &[Part<'_>], cwd: &Path) -> Vec<SessionUpdate> {
    let mut updates = Vec::new();
    for (index, part) in parts.iter().enumerate() {
        if index > 0 {
            updates.push(agent_text(continued_line(&part.short, part.title)));
        }
        let results: HashMap<&str, &ToolResult> = part
            .events
            .iter()
            .filter_map(|event| match &event.body {
                EventBody::ToolResult(result) => Some((result.tool_call_id.as_str(), result)),
                _ => None,
            })
            .collect();
        // Each rewind takes back what lies between the seq it keeps and itself.
        let rewound: Vec<(u64, u64)> = part
            .events
            .iter()
            .filter_map(|event| match &event.body {
                EventBody::ContextRewound(rewind) => Some((rewind.to_seq.get(), event.seq.get())),
                _ => None,
            })
            .collect();
        let taken_back = |seq: u64| rewound.iter().any(|&(kept, at)| seq > kept && seq <= at);
        for event in part.events.iter().filter(|event| !taken_back(event.seq.get())) {
            match &event.body {
                EventBody::Message(message) => {
                    let meta = message.meta.as_deref();
                    if index > 0 && meta.is_some_and(|m| m.projection_of.is_some() || m.continued_from.is_some()) {
                        continue;
                    }
                    let shown = message.raw_markdown.as_deref().unwrap_or(&message.content);
                    match (message.role, message.actor) {
                        (_, Actor::System) => {}
                        (Role::User, _) => {
                            updates.push(SessionUpdate::UserMessageChunk(ContentChunk::new(text_block(shown))));
                            for attachment in &message.attachments {
                                let link =
                                    ResourceLink::new(attachment.name.clone(), format!("attachment:{}", attachment.id))
                                        .mime_type(attachment.media_type.clone())
                                        .size(i64::try_from(attachment.bytes).ok());
                                updates.push(SessionUpdate::UserMessageChunk(ContentChunk::new(
                                    ContentBlock::ResourceLink(link),
                                )));
                            }
                        }
                        _ if !shown.is_empty() => updates.push(agent_text(shown.to_owned())),
                        _ => {}
                    }
                }
                EventBody::Thinking(thinking) if !thinking.text.is_empty() => {
                    updates.push(SessionUpdate::AgentThoughtChunk(ContentChunk::new(text_block(&thinking.text))));
                }
                EventBody::ToolCall(call) => {
                    let call = Call { id: call.id.as_str(), name: &call.name, arguments: &call.arguments, cwd };
                    let mut started = call.started(None);
                    match results.get(call.id) {
                        Some(result) => {
                            let summary = result.content.lines().next().unwrap_or("");
                            let ended = Ended { is_error: result.is_error, summary, facts: result.facts.as_ref() };
                            started.update(call.finished(&ended, None).fields);
                        }
                        // Never answered: a process stopped mid-call and
                        // nothing settled it yet.
                        None => started = started.status(ToolCallStatus::Pending),
                    }
                    updates.push(SessionUpdate::ToolCall(started));
                }
                EventBody::PlanUpdated(updated) => {
                    updates.push(SessionUpdate::Plan(plan(updated.plan.as_ref())));
                }
                EventBody::StatusChanged(status) => {
                    if let Some(title) = &status.title {
                        updates.push(SessionUpdate::SessionInfoUpdate(SessionInfoUpdate::new().title(title.clone())));
                    }
                }
                EventBody::PermissionModeChanged(changed) => updates.push(SessionUpdate::CurrentModeUpdate(
                    CurrentModeUpdate::new(SessionModeId::new(changed.mode.as_str())),
                )),
                _ => {}
            }
        }
    }
    updates
}

/// seri's plan as the editor's: every step at the same priority (seri's
/// steps have none), done as completed.
pub(super) fn plan(plan: Option<&seri_core::Plan>) -> Plan {
    let entries = plan
        .map(|plan| {
            plan.steps
                .iter()
                .map(|step| {
                    let status = match step.status {
                        StepStatus::Pending => PlanEntryStatus::Pending,
                        StepStatus::InProgress => PlanEntryStatus::InProgress,
                        StepStatus::Done => PlanEntryStatus::Completed,
                    };
                    PlanEntry::new(step.text.clone(), PlanEntryPriority::Medium, status)
                })
                .collect()
        })
        .unwrap_or_default();
    Plan::new(entries)
}

/// The line that says the conversation went on in a successor.
pub(super) fn continued_line(short: &str, title: &str) -> String {
    format!("\n\n↪ Continued in session {short} “{title}”: the conversation goes on here.\n\n")
}

/// Agent text, as a chunk.
pub(super) fn agent_text(text: String) -> SessionUpdate {
    SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::Text(TextContent::new(text))))
}

fn text_block(text: &str) -> ContentBlock {
    ContentBlock::Text(TextContent::new(text))
}

#[cfg(test)]
mod tests;

//! `SessionInfo`: what a session is, folded from its creation facts and its
//! events. Folding cannot fail and reads nothing but its inputs.

use serde::{Deserialize, Serialize};

use crate::continuation::SessionContinuationLink;
use crate::event::{Event, EventBody, Role, TitleSource};
use crate::fork::SessionForkLink;
use crate::id::{AgentId, RunId, Seq, SessionId};
use crate::plan::Plan;
use crate::time::Timestamp;
use crate::usage::{ModelRef, Usage};

/// Longest fallback title, in characters.
pub const FALLBACK_TITLE_CHARS: usize = 60;

/// The facts fixed when a session is created: the `sessions` row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionSeed {
    /// The session.
    pub id: SessionId,
    /// Its owner. Reads never cross agents.
    pub agent_id: AgentId,
    /// The working directory it was started in.
    pub cwd: String,
    /// When it was created.
    pub created_at: Timestamp,
    /// The title it starts with (a successor's comes from the verb).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The description it starts with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Who set the starting title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title_source: Option<TitleSource>,
    /// The model chosen for this session, if not the default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_override: Option<ModelRef>,
    /// The plan it starts with (carried from a predecessor).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<Plan>,
    /// For a child session: the run that delegated to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_run_id: Option<RunId>,
    /// The system prompt, frozen when the session started so that every
    /// request (and every `--resume`) sends the same cacheable prefix.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<FrozenPrompt>,
}

/// The system prompt as it was frozen at session start.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FrozenPrompt {
    /// The exact text sent as the system prompt.
    pub text: String,
    /// The files it was built from (AGENTS.md, rules, memory), with hashes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<PromptFile>,
    /// The MCP servers' tools the session offers, as they were listed when
    /// it started: frozen with the prompt, so the cacheable prefix stays the
    /// same however the servers change (a change reaches the next session).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<FrozenTool>,
}

/// A tool frozen into a session: its name, description and input schema.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FrozenTool {
    /// The name the model calls it by (`mcp__server__tool`).
    pub name: String,
    /// What it does, as its server described it.
    pub description: String,
    /// The JSON Schema of its arguments.
    pub input_schema: serde_json::Value,
}

/// A file read into the frozen system prompt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptFile {
    /// Where it was read from.
    pub path: String,
    /// Hex SHA-256 of its bytes when it was read.
    pub sha256: String,
}

impl SessionSeed {
    /// A plain new session with no title yet.
    pub fn new(id: SessionId, agent_id: AgentId, cwd: impl Into<String>, created_at: Timestamp) -> Self {
        Self {
            id,
            agent_id,
            cwd: cwd.into(),
            created_at,
            title: None,
            description: None,
            title_source: None,
            model_override: None,
            plan: None,
            parent_run_id: None,
            system_prompt: None,
        }
    }
}

/// How many messages of each kind a session holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageCounts {
    /// User-role messages (people, triggers, and the runtime's own).
    pub user: u64,
    /// Assistant messages.
    pub assistant: u64,
    /// Tool calls.
    pub tool_calls: u64,
}

/// A session as clients see it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionInfo {
    /// The session.
    pub id: SessionId,
    /// Its owner.
    pub agent_id: AgentId,
    /// The working directory it was started in.
    pub cwd: String,
    /// What the whole session is about (U+0000 shown as U+FFFD).
    pub title: String,
    /// Its live status (U+0000 shown as U+FFFD).
    pub description: String,
    /// Who set the title; `None` while it has none.
    pub title_source: Option<TitleSource>,
    /// When it was created.
    pub created_at: Timestamp,
    /// When its newest event was appended.
    pub updated_at: Timestamp,
    /// The model chosen for it, if not the default.
    pub model_override: Option<ModelRef>,
    /// The permission mode the person chose for it (`permission_mode_changed`);
    /// `None`: the runtime's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission_mode: Option<crate::permission::PermissionMode>,
    /// The sandbox mode the person chose for it (the newest
    /// `sandbox_changed` that set one); `None`: the runtime's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox_mode: Option<crate::sandbox::SandboxMode>,
    /// Whether the person turned its commands' network on or off (the
    /// newest `sandbox_changed` that set it); `None`: the runtime's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox_network: Option<bool>,
    /// The newest assistant message's usage.
    pub last_usage: Option<Usage>,
    /// The model that billed `last_usage`.
    pub last_usage_model: Option<ModelRef>,
    /// Messages by kind.
    pub message_counts: MessageCounts,
    /// The newest seq; 0 for an empty session.
    pub last_seq: u64,
    /// The current plan.
    pub plan: Option<Plan>,
    /// For a child session: the run that delegated to it.
    pub parent_run_id: Option<RunId>,
    /// The session this one continues, if any.
    pub continued_from: Option<SessionContinuationLink>,
    /// The newest session this one continued into, if any.
    pub continued_to: Option<SessionContinuationLink>,
    /// For a fork: the session it branches from, and where.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forked_from: Option<SessionForkLink>,
}

impl SessionInfo {
    /// The view of a session with no events yet.
    pub fn from_seed(seed: &SessionSeed) -> Self {
        Self {
            id: seed.id,
            agent_id: seed.agent_id.clone(),
            cwd: seed.cwd.clone(),
            title: seed.title.as_deref().map(shown).unwrap_or_default(),
            description: seed.description.as_deref().map(shown).unwrap_or_default(),
            title_source: seed.title_source,
            created_at: seed.created_at,
            updated_at: seed.created_at,
            model_override: seed.model_override.clone(),
            permission_mode: None,
            sandbox_mode: None,
            sandbox_network: None,
            last_usage: None,
            last_usage_model: None,
            message_counts: MessageCounts::default(),
            last_seq: 0,
            plan: seed.plan.clone(),
            parent_run_id: seed.parent_run_id,
            continued_from: None,
            continued_to: None,
            forked_from: None,
        }
    }

    /// Folds a seed and events in seq order.
    pub fn fold<'a>(seed: &SessionSeed, events: impl IntoIterator<Item = &'a Event>) -> Self {
        let mut info = Self::from_seed(seed);
        for event in events {
            info.apply(event);
        }
        info
    }

    /// Applies one event. Events of other sessions and unknown kinds change
    /// nothing but the clock.
    pub fn apply(&mut self, event: &Event) {
        if event.session_id != self.id {
            return;
        }
        self.last_seq = self.last_seq.max(event.seq.get());
        self.updated_at = self.updated_at.max(event.at);
        match &event.body {
            EventBody::Message(m) => match m.role {
                Role::User => {
                    self.message_counts.user += 1;
                    if self.title_source.is_none()
                        && m.is_from_user_or_trigger()
                        && let Some(title) = fallback_title(&m.content)
                    {
                        self.title = title;
                        self.title_source = Some(TitleSource::Fallback);
                    }
                }
                Role::Assistant => {
                    self.message_counts.assistant += 1;
                    if let Some(usage) = m.meta().usage {
                        self.last_usage = Some(usage);
                        self.last_usage_model = m.meta().model.clone();
                    }
                }
            },
            EventBody::ToolCall(_) => self.message_counts.tool_calls += 1,
            EventBody::StatusChanged(s) => {
                if let Some(title) = &s.title {
                    self.title = shown(title);
                    self.title_source = Some(s.source);
                }
                if let Some(description) = &s.description {
                    self.description = shown(description);
                }
            }
            EventBody::PlanUpdated(p) => self.plan = p.plan.clone(),
            EventBody::ModelChanged(m) => self.model_override = m.model.clone(),
            EventBody::PermissionModeChanged(m) => self.permission_mode = Some(m.mode),
            EventBody::SandboxChanged(s) => {
                self.sandbox_mode = s.mode.or(self.sandbox_mode);
                self.sandbox_network = s.network.or(self.sandbox_network);
            }
            // A compaction or a rewind changes what the model sees, not what
            // the session is: its counts, title and plan stay as the events
            // made them.
            EventBody::Thinking(_)
            | EventBody::ToolResult(_)
            | EventBody::ContextCompacted(_)
            | EventBody::ContextRewound(_)
            | EventBody::PermissionDenied(_)
            | EventBody::Unknown { .. } => {}
        }
    }

    /// Attaches the continuation links, which live on edges rather than in events.
    pub fn with_links(
        mut self,
        continued_from: Option<SessionContinuationLink>,
        continued_to: Option<SessionContinuationLink>,
    ) -> Self {
        self.continued_from = continued_from;
        self.continued_to = continued_to;
        self
    }

    /// The next seq to append.
    pub fn next_seq(&self) -> Seq {
        Seq(self.last_seq + 1)
    }
}

/// The fallback namer: the first line of the first user message, trimmed and
/// cut at [`FALLBACK_TITLE_CHARS`] characters, U+0000 shown as U+FFFD.
/// `None` for a blank message.
pub fn fallback_title(content: &str) -> Option<String> {
    let line = content.lines().map(str::trim).find(|l| !l.is_empty())?;
    let mut title: String =
        line.chars().take(FALLBACK_TITLE_CHARS).map(|c| if c == '\0' { '\u{fffd}' } else { c }).collect();
    if line.chars().count() > FALLBACK_TITLE_CHARS {
        title.push('…');
    }
    Some(title)
}

/// A title or description as the view holds it: U+0000 shown as U+FFFD.
/// The event keeps the text exactly; the view is text to show, and a
/// database's text column (PostgreSQL's) cannot hold a NUL.
fn shown(text: &str) -> String {
    text.replace('\0', "\u{fffd}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{DenialReason, PermissionDenied};
    use crate::id::{EventId, Seq};

    #[test]
    fn a_permission_denial_changes_nothing_but_the_clock() {
        let seed = SessionSeed::new(SessionId::from_bytes([1; 16]), AgentId::local(), "/repo", Timestamp(1_000));
        let denial = Event {
            id: EventId::from_bytes([2; 16]),
            session_id: seed.id,
            seq: Seq(1),
            at: Timestamp(2_000),
            body: EventBody::PermissionDenied(PermissionDenied {
                tool_call_id: "call_1".into(),
                tool: "write_file".into(),
                reason: DenialReason::Policy,
                detail: "write_file is set to deny: src/lib.rs".into(),
            }),
        };
        let info = SessionInfo::fold(&seed, [&denial]);
        let expected = SessionInfo { last_seq: 1, updated_at: Timestamp(2_000), ..SessionInfo::from_seed(&seed) };
        assert_eq!(info, expected);
    }

    #[test]
    fn the_newest_permission_mode_change_is_the_sessions_mode() {
        use crate::permission::{PermissionMode, PermissionModeChanged};
        let seed = SessionSeed::new(SessionId::from_bytes([1; 16]), AgentId::local(), "/repo", Timestamp(1_000));
        let change = |seq: u64, mode| Event {
            id: EventId::from_bytes([seq as u8 + 1; 16]),
            session_id: seed.id,
            seq: Seq(seq),
            at: Timestamp(1_000 + seq as i64),
            body: EventBody::PermissionModeChanged(PermissionModeChanged { mode }),
        };
        assert_eq!(SessionInfo::from_seed(&seed).permission_mode, None, "the runtime's until chosen");
        let (plan, edits) = (change(1, PermissionMode::Plan), change(2, PermissionMode::AcceptEdits));
        assert_eq!(SessionInfo::fold(&seed, [&plan]).permission_mode, Some(PermissionMode::Plan));
        assert_eq!(SessionInfo::fold(&seed, [&plan, &edits]).permission_mode, Some(PermissionMode::AcceptEdits));
        let payload = edits.body.to_payload();
        assert_eq!(payload, serde_json::json!({"mode": "accept-edits"}));
        let decoded = EventBody::from_payload("permission_mode_changed", payload.to_string().as_bytes()).unwrap();
        assert_eq!(decoded, edits.body);
    }

    #[test]
    fn each_sandbox_choice_is_the_newest_change_that_set_it() {
        use crate::sandbox::{SandboxChanged, SandboxMode};
        let seed = SessionSeed::new(SessionId::from_bytes([1; 16]), AgentId::local(), "/repo", Timestamp(1_000));
        let change = |seq: u64, mode, network| Event {
            id: EventId::from_bytes([seq as u8 + 1; 16]),
            session_id: seed.id,
            seq: Seq(seq),
            at: Timestamp(1_000 + seq as i64),
            body: EventBody::SandboxChanged(SandboxChanged { mode, network }),
        };
        let start = SessionInfo::from_seed(&seed);
        assert_eq!((start.sandbox_mode, start.sandbox_network), (None, None), "the runtime's until chosen");
        let read_only = change(1, Some(SandboxMode::ReadOnly), None);
        let network = change(2, None, Some(true));
        let full = change(3, Some(SandboxMode::FullAccess), Some(false));
        let chosen = |events: &[&Event]| {
            let info = SessionInfo::fold(&seed, events.iter().copied());
            (info.sandbox_mode, info.sandbox_network)
        };
        assert_eq!(chosen(&[&read_only]), (Some(SandboxMode::ReadOnly), None));
        assert_eq!(chosen(&[&read_only, &network]), (Some(SandboxMode::ReadOnly), Some(true)), "the mode stays");
        assert_eq!(chosen(&[&read_only, &network, &full]), (Some(SandboxMode::FullAccess), Some(false)));
        let json = serde_json::to_value(SessionInfo::fold(&seed, [&read_only, &network])).unwrap();
        assert_eq!(
            (&json["sandboxMode"], &json["sandboxNetwork"]),
            (&serde_json::json!("read-only"), &serde_json::json!(true))
        );
        let payload = network.body.to_payload();
        assert_eq!(payload, serde_json::json!({"network": true}));
        let decoded = EventBody::from_payload("sandbox_changed", payload.to_string().as_bytes()).unwrap();
        assert_eq!(decoded, network.body);
    }

    #[test]
    fn titles_and_descriptions_show_nul_as_a_replacement_character() {
        use crate::event::{Message, StatusChanged};
        let seed = SessionSeed {
            description: Some("from\0seed".into()),
            ..SessionSeed::new(SessionId::from_bytes([1; 16]), AgentId::local(), "/repo", Timestamp(1_000))
        };
        let event = |seq: u64, body: EventBody| Event {
            id: EventId::from_bytes([seq as u8 + 1; 16]),
            session_id: seed.id,
            seq: Seq(seq),
            at: Timestamp(2_000),
            body,
        };
        let first = event(1, EventBody::Message(Message::user("fix\0 it")));
        let info = SessionInfo::fold(&seed, [&first]);
        assert_eq!((info.title.as_str(), info.description.as_str()), ("fix\u{fffd} it", "from\u{fffd}seed"));
        let status = event(
            2,
            EventBody::StatusChanged(StatusChanged {
                title: Some("\0a".into()),
                description: Some("b\0".into()),
                source: TitleSource::Agent,
            }),
        );
        let info = SessionInfo::fold(&seed, [&first, &status]);
        assert_eq!((info.title.as_str(), info.description.as_str()), ("\u{fffd}a", "b\u{fffd}"));
    }
}

//! The event model: everything that happens in a session, as an append-only
//! sequence of events.
//!
//! An event is stored as a `type` name and a JSON payload. New kinds of event
//! are new `type` names: old rows never need migrating, and a reader that
//! meets a `type` it does not know keeps it as [`EventBody::Unknown`] and
//! folds it as a no-op, so an older binary can still open a newer database's
//! sessions. Fields added to an existing payload are optional with defaults.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::compaction::ContextCompacted;
use crate::facts::ToolFacts;
use crate::id::{ContinuationId, EventId, Seq, SessionId, ToolCallId};
use crate::plan::Plan;
use crate::rewind::ContextRewound;
use crate::time::Timestamp;
use crate::usage::{ModelRef, Usage};

/// The version of the payload encoding written by this build. Bumped only if
/// an existing payload's meaning changes (new fields and new types do not).
pub const EVENT_FORMAT_VERSION: u32 = 1;

/// One event, as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// Globally unique, time-ordered.
    pub id: EventId,
    /// The session whose transcript holds the event.
    pub session_id: SessionId,
    /// Position in the session: 1, 2, 3, … without gaps.
    pub seq: Seq,
    /// When it happened: the store's clock when it appended the event, or,
    /// for a session imported from an older release's `.jsonl` file, the time
    /// that file recorded.
    pub at: Timestamp,
    /// What happened.
    pub body: EventBody,
}

/// What happened. The serialized `type` of each variant is its snake_case name.
// Messages are the most common variant by far, so boxing them would add an
// allocation to the common case without saving any memory.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum EventBody {
    /// A user or assistant message.
    Message(Message),
    /// The model's reasoning before its answer.
    Thinking(Thinking),
    /// The model asked for a tool to run.
    ToolCall(ToolCall),
    /// The answer to a tool call; always after its call.
    ToolResult(ToolResult),
    /// The session's title or description changed.
    StatusChanged(StatusChanged),
    /// The session's plan was replaced.
    PlanUpdated(PlanUpdated),
    /// The oldest part of the working context was replaced by a recap; the
    /// replaced events stay in the store.
    ContextCompacted(Box<ContextCompacted>),
    /// The permission layer refused a tool call. Appended right after the
    /// call's error result, which is what the model reads.
    PermissionDenied(PermissionDenied),
    /// The conversation was rewound (`/rewind`): the working context drops
    /// the events after `toSeq` up to this one. They stay in the store.
    ContextRewound(ContextRewound),
    /// The person chose the model the session talks to from here on
    /// (`/model`); `SessionInfo.modelOverride` folds it.
    ModelChanged(ModelChanged),
    /// The person chose the session's permission mode from here on
    /// (`--permission-mode`, Shift+Tab, the API); `SessionInfo.permissionMode`
    /// folds it.
    PermissionModeChanged(crate::permission::PermissionModeChanged),
    /// The person changed the session's sandbox from here on (`/sandbox`,
    /// the API); `SessionInfo.sandboxMode` and `sandboxNetwork` fold it.
    SandboxChanged(crate::sandbox::SandboxChanged),
    /// A `type` this build does not know, kept verbatim.
    Unknown {
        /// The stored `type` name.
        kind: String,
        /// The stored payload.
        payload: serde_json::Value,
    },
}

/// The model a session talks to from here on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelChanged {
    /// The model; `None`: back to the configured one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<ModelRef>,
}

/// Why a stored payload could not be decoded.
#[derive(Debug, thiserror::Error)]
#[error("event payload of type `{kind}` is malformed: {source}")]
pub struct DecodeEventError {
    /// The stored `type` name.
    pub kind: String,
    /// What serde said.
    #[source]
    pub source: serde_json::Error,
}

impl EventBody {
    /// The stored `type` name.
    pub fn kind(&self) -> &str {
        match self {
            EventBody::Message(_) => "message",
            EventBody::Thinking(_) => "thinking",
            EventBody::ToolCall(_) => "tool_call",
            EventBody::ToolResult(_) => "tool_result",
            EventBody::StatusChanged(_) => "status_changed",
            EventBody::PlanUpdated(_) => "plan_updated",
            EventBody::ContextCompacted(_) => "context_compacted",
            EventBody::PermissionDenied(_) => "permission_denied",
            EventBody::ContextRewound(_) => "context_rewound",
            EventBody::ModelChanged(_) => "model_changed",
            EventBody::PermissionModeChanged(_) => "permission_mode_changed",
            EventBody::SandboxChanged(_) => "sandbox_changed",
            EventBody::Unknown { kind, .. } => kind,
        }
    }

    /// The payload as JSON (without the `type`, which is stored beside it).
    pub fn to_payload(&self) -> serde_json::Value {
        fn value<T: Serialize>(v: &T) -> serde_json::Value {
            // Serializing these plain structs cannot fail: every map key is a string.
            serde_json::to_value(v).unwrap_or(serde_json::Value::Null)
        }
        match self {
            EventBody::Message(m) => value(m),
            EventBody::Thinking(t) => value(t),
            EventBody::ToolCall(c) => value(c),
            EventBody::ToolResult(r) => value(r),
            EventBody::StatusChanged(s) => value(s),
            EventBody::PlanUpdated(p) => value(p),
            EventBody::ContextCompacted(c) => value(c),
            EventBody::PermissionDenied(d) => value(d),
            EventBody::ContextRewound(r) => value(r),
            EventBody::ModelChanged(m) => value(m),
            EventBody::PermissionModeChanged(m) => value(m),
            EventBody::SandboxChanged(s) => value(s),
            EventBody::Unknown { payload, .. } => payload.clone(),
        }
    }

    /// Decodes a stored `type` and payload. An unknown `type` is not an error.
    pub fn from_payload(kind: &str, payload: &[u8]) -> Result<EventBody, DecodeEventError> {
        fn parse<T: for<'de> Deserialize<'de>>(kind: &str, payload: &[u8]) -> Result<T, DecodeEventError> {
            serde_json::from_slice(payload).map_err(|source| DecodeEventError { kind: kind.to_owned(), source })
        }
        Ok(match kind {
            "message" => EventBody::Message(parse(kind, payload)?),
            "thinking" => EventBody::Thinking(parse(kind, payload)?),
            "tool_call" => EventBody::ToolCall(parse(kind, payload)?),
            "tool_result" => EventBody::ToolResult(parse(kind, payload)?),
            "status_changed" => EventBody::StatusChanged(parse(kind, payload)?),
            "plan_updated" => EventBody::PlanUpdated(parse(kind, payload)?),
            "context_compacted" => EventBody::ContextCompacted(parse(kind, payload)?),
            "permission_denied" => EventBody::PermissionDenied(parse(kind, payload)?),
            "context_rewound" => EventBody::ContextRewound(parse(kind, payload)?),
            "model_changed" => EventBody::ModelChanged(parse(kind, payload)?),
            "permission_mode_changed" => EventBody::PermissionModeChanged(parse(kind, payload)?),
            "sandbox_changed" => EventBody::SandboxChanged(parse(kind, payload)?),
            other => EventBody::Unknown { kind: other.to_owned(), payload: parse(kind, payload)? },
        })
    }

    /// The message, if this is one.
    pub fn as_message(&self) -> Option<&Message> {
        match self {
            EventBody::Message(m) => Some(m),
            _ => None,
        }
    }
}

/// Who sent a message, as the model sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Sent to the model.
    #[default]
    User,
    /// Written by the model.
    Assistant,
}

/// Who actually wrote a message. A `user`-role message may come from a
/// person, a trigger (a schedule, a hook), or the runtime itself (`system`:
/// a continuation projection, a compaction recap).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Actor {
    /// A person.
    #[default]
    User,
    /// The model.
    Agent,
    /// The runtime.
    System,
    /// An automation acting for a person.
    Trigger,
}

/// A user or assistant message.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    /// Who the model sees as the sender.
    pub role: Role,
    /// Who wrote it.
    pub actor: Actor,
    /// The text the model reads.
    pub content: String,
    /// The markdown as typed, when it differs from `content`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_markdown: Option<String>,
    /// Structured blocks a client rendered (opaque to the runtime).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blocks: Vec<serde_json::Value>,
    /// Lines of context a client attached (a selection, a file excerpt).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub context_lines: Vec<String>,
    /// Files attached to the message, stored beside the database.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<Attachment>,
    /// Facts about the message that are not its content; `None` when it
    /// has none (most messages), so a message costs no allocation for them
    /// and stays small to move. Read it with [`Message::meta`].
    #[serde(
        default,
        skip_serializing_if = "no_meta",
        deserialize_with = "meta_or_none",
        serialize_with = "serialize_meta"
    )]
    pub meta: Option<Box<MessageMeta>>,
}

/// Field by field, with an absent meta equal to an empty one: they are
/// written alike and read back alike (as none).
impl PartialEq for Message {
    fn eq(&self, other: &Self) -> bool {
        // Every field named, so one added later cannot be left out here.
        let Message { role, actor, content, raw_markdown, blocks, context_lines, attachments, meta: _ } = self;
        *role == other.role
            && *actor == other.actor
            && *content == other.content
            && *raw_markdown == other.raw_markdown
            && *blocks == other.blocks
            && *context_lines == other.context_lines
            && *attachments == other.attachments
            && self.meta() == other.meta()
    }
}

/// No meta to write: absent, or present but empty.
fn no_meta(meta: &Option<Box<MessageMeta>>) -> bool {
    meta.as_deref().is_none_or(MessageMeta::is_empty)
}

fn serialize_meta<S: Serializer>(meta: &Option<Box<MessageMeta>>, serializer: S) -> Result<S::Ok, S::Error> {
    meta.as_deref().unwrap_or(&MessageMeta::EMPTY).serialize(serializer)
}

/// An empty `meta` object reads as none, so that reading back what was
/// written gives the same message.
fn meta_or_none<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Box<MessageMeta>>, D::Error> {
    let meta = MessageMeta::deserialize(deserializer)?;
    Ok((!meta.is_empty()).then(|| Box::new(meta)))
}

impl Message {
    /// A message a person typed.
    pub fn user(content: impl Into<String>) -> Self {
        Self { role: Role::User, actor: Actor::User, content: content.into(), ..Self::default() }
    }

    /// A message the model wrote.
    pub fn assistant(content: impl Into<String>) -> Self {
        Self { role: Role::Assistant, actor: Actor::Agent, content: content.into(), ..Self::default() }
    }

    /// The message's meta (the empty one when it has none).
    pub fn meta(&self) -> &MessageMeta {
        self.meta.as_deref().unwrap_or(&MessageMeta::EMPTY)
    }

    /// The message's meta, to set a field of it.
    pub fn meta_mut(&mut self) -> &mut MessageMeta {
        self.meta.get_or_insert_with(Box::default)
    }

    /// The message with `meta` as its meta.
    pub fn with_meta(mut self, meta: MessageMeta) -> Self {
        self.meta = (!meta.is_empty()).then(|| Box::new(meta));
        self
    }

    /// Whether a person or a trigger wrote it: the messages a run answers.
    pub fn is_from_user_or_trigger(&self) -> bool {
        self.role == Role::User && matches!(self.actor, Actor::User | Actor::Trigger)
    }
}

/// A file attached to a message. `attachment:<id>` resolves to it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Attachment {
    /// The attachment's id, unique in the profile.
    pub id: String,
    /// The file name shown to people.
    pub name: String,
    /// Its media type, e.g. `image/png`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_type: Option<String>,
    /// Its size in bytes.
    #[serde(default)]
    pub bytes: u64,
}

/// The largest file a person may attach to a message (an `@path` mention
/// in the CLI, `attachments` in the server's message body).
pub const MAX_ATTACHMENT_BYTES: u64 = 20 * 1024 * 1024;

/// The largest picture sent to a model as an image: Anthropic's limit, the
/// lowest of the providers seri speaks. A larger one stays an attachment the
/// model can name but not see.
pub const MAX_IMAGE_BYTES: u64 = 5 * 1024 * 1024;

impl Attachment {
    /// Whether it is a picture a model can be shown: PNG, JPEG, GIF or
    /// WebP (the formats every provider seri speaks accepts), at most
    /// [`MAX_IMAGE_BYTES`].
    pub fn is_image(&self) -> bool {
        matches!(self.media_type.as_deref(), Some("image/png" | "image/jpeg" | "image/gif" | "image/webp"))
            && self.bytes <= MAX_IMAGE_BYTES
    }
}

/// The picture format of `bytes` by its signature: PNG, JPEG, GIF or WebP.
pub fn image_media_type(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(&[0xff, 0xd8, 0xff]) {
        Some("image/jpeg")
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

/// Facts about a message that are not its content.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageMeta {
    /// On an assistant message: what the request that produced it cost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// On an assistant message: the model that wrote it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<ModelRef>,
    /// On an assistant message: the characters of the request that produced
    /// it (system prompt, tool schemas, messages), counted as the local
    /// estimate counts them. With `usage` it teaches the estimate the
    /// model's characters per token ([`crate::tokens::learned_ratio`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_chars: Option<u64>,
    /// On an assistant message: why the model stopped (`end_turn`, `tool_use`, `max_tokens`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// On a user message copied into a successor: where the original is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub continued_from: Option<ContinuedFrom>,
    /// On the runtime's first message of a successor: the continuation it projects.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub projection_of: Option<ContinuationId>,
    /// On the same message: the handoff the continuation was asked with, as
    /// the runtime parsed it (absent on those written before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handoff: Option<Box<crate::continuation::ContinuationHandoff>>,
    /// On a message the runtime wrote when a glob rule fired: the rule
    /// file, as its `<rule path>` names it. A rule fires once per session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// On a message a server took from the shared queue of runs: the job's
    /// id, so a server taking the job over finds the message posted before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queued_as: Option<String>,
    /// On an assistant message: the person cancelled the turn while it was
    /// being written, and this is what had arrived. The model is told so
    /// when it reads the message again.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
}

impl MessageMeta {
    /// No field set.
    pub const EMPTY: MessageMeta = MessageMeta {
        usage: None,
        model: None,
        prompt_chars: None,
        stop_reason: None,
        continued_from: None,
        projection_of: None,
        handoff: None,
        rule: None,
        queued_as: None,
        interrupted: false,
    };

    /// Whether no field is set.
    pub fn is_empty(&self) -> bool {
        *self == MessageMeta::EMPTY
    }
}

/// Where a copied message came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContinuedFrom {
    /// The predecessor session.
    pub session_id: SessionId,
    /// The original event.
    pub event_id: EventId,
    /// The original event's seq in the predecessor.
    pub seq: Seq,
}

/// The model's reasoning.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Thinking {
    /// The reasoning text (may be empty when the provider redacts it).
    pub text: String,
    /// The provider's signature, needed to send the thinking back (Anthropic).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    /// OpenAI Responses' encrypted reasoning (`encrypted_content`): what that
    /// API needs back, before the calls it led to, to go on reasoning when it
    /// keeps nothing itself (`store: false`). Opaque, and read by no other
    /// provider: an Anthropic signature and this never stand in for each other.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encrypted_content: Option<String>,
}

/// The model asked for a tool to run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCall {
    /// The provider's id for the call; its result names the same id.
    pub id: ToolCallId,
    /// The tool's name.
    pub name: String,
    /// The arguments, as the model wrote them.
    pub arguments: serde_json::Value,
}

/// A tool's answer to a call.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResult {
    /// The call this answers.
    pub tool_call_id: ToolCallId,
    /// The tool's name, repeated so a result reads on its own.
    pub name: String,
    /// What the model reads.
    pub content: String,
    /// Whether the call failed or was refused; the model reads the error.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
    /// What the call came to, as values (a command's exit, a file's diff, a
    /// read's size), for clients; absent for a tool that reports none and in
    /// results stored before facts were.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub facts: Option<ToolFacts>,
}

/// Who set a session's title.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TitleSource {
    /// The agent, through the `status` or `continue_session` verb.
    Agent,
    /// A person.
    User,
    /// The fallback namer, from the first message.
    Fallback,
}

/// The session's title or description changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusChanged {
    /// The new title, if it changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The new description, if it changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Who changed it.
    pub source: TitleSource,
}

/// The session's plan was replaced as a whole.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanUpdated {
    /// The new plan; `None` closes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<Plan>,
}

/// Why the permission layer refused a tool call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DenialReason {
    /// The person was asked and said no.
    User,
    /// The run's permission policy refused: the tool is set to `deny`, or it
    /// asks and the run has nobody to ask (a headless run).
    Policy,
    /// The path is outside the working directory and its allowed roots, and
    /// the run has nobody to ask.
    OutsideWorkspace,
    /// The session is in plan mode: only reading tools run until the person
    /// leaves it.
    PlanMode,
    /// A `PreToolUse` hook the person configured blocked the call.
    Hook,
}

impl DenialReason {
    /// The stored name: `user`, `policy`, `outside_workspace`, `plan_mode`.
    pub const fn as_str(self) -> &'static str {
        match self {
            DenialReason::User => "user",
            DenialReason::Policy => "policy",
            DenialReason::OutsideWorkspace => "outside_workspace",
            DenialReason::PlanMode => "plan_mode",
            DenialReason::Hook => "hook",
        }
    }
}

impl std::fmt::Display for DenialReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A tool call the permission layer refused, with its reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PermissionDenied {
    /// The refused call.
    pub tool_call_id: ToolCallId,
    /// The tool it named.
    pub tool: String,
    /// Why it was refused.
    pub reason: DenialReason,
    /// What was refused, in a sentence: the path or command and the rule.
    pub detail: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_without_meta_carries_none_and_writes_none() {
        let plain = Message::user("hi");
        assert_eq!(plain.meta, None);
        assert!(plain.meta().is_empty());
        // An empty meta object, however it got there, reads as none.
        let decoded: Message =
            serde_json::from_str(r#"{"role":"user","actor":"user","content":"hi","meta":{}}"#).unwrap();
        assert_eq!(decoded, plain);
        let mut emptied = Message::user("hi").with_meta(MessageMeta { rule: Some("r".into()), ..MessageMeta::EMPTY });
        emptied.meta_mut().rule = None;
        assert_eq!(serde_json::to_string(&emptied).unwrap(), r#"{"role":"user","actor":"user","content":"hi"}"#);
        // Emptied is as good as none: equal, whichever side holds it.
        assert!(emptied.meta.is_some());
        assert_eq!(emptied, plain);
        assert_eq!(plain, emptied);
        assert_ne!(
            emptied,
            Message::user("hi").with_meta(MessageMeta { rule: Some("r".into()), ..MessageMeta::EMPTY })
        );
        let ruled = Message::user("hi").with_meta(MessageMeta { rule: Some("r".into()), ..MessageMeta::EMPTY });
        let text = serde_json::to_string(&ruled).unwrap();
        assert_eq!(text, r#"{"role":"user","actor":"user","content":"hi","meta":{"rule":"r"}}"#);
        assert_eq!(serde_json::from_str::<Message>(&text).unwrap(), ruled);
    }

    #[track_caller]
    fn check_roundtrip(body: EventBody, expected_payload: &str) {
        let payload = body.to_payload();
        // Keys sorted: the names are what is checked, not their order.
        assert_eq!(crate::json::sorted_string(&payload), expected_payload);
        let decoded = EventBody::from_payload(body.kind(), payload.to_string().as_bytes()).unwrap();
        assert_eq!(decoded, body);
    }

    #[test]
    fn payloads_are_camel_case_and_round_trip() {
        check_roundtrip(EventBody::Message(Message::user("hi")), r#"{"actor":"user","content":"hi","role":"user"}"#);
        check_roundtrip(
            EventBody::ToolResult(ToolResult {
                tool_call_id: "call_1".into(),
                name: "read".into(),
                content: "x".into(),
                is_error: true,
                facts: None,
            }),
            r#"{"content":"x","isError":true,"name":"read","toolCallId":"call_1"}"#,
        );
        check_roundtrip(
            EventBody::ToolResult(ToolResult {
                tool_call_id: "call_1".into(),
                name: "grep".into(),
                content: "a.rs:1:fn".into(),
                is_error: false,
                facts: Some(ToolFacts::Search(crate::SearchRun {
                    pattern: "fn".into(),
                    path: ".".into(),
                    glob: None,
                    matches: 1,
                    files: 1,
                })),
            }),
            r#"{"content":"a.rs:1:fn","facts":{"files":1,"kind":"search","matches":1,"path":".","pattern":"fn"},"name":"grep","toolCallId":"call_1"}"#,
        );
    }

    #[test]
    fn a_tool_result_stored_before_facts_still_reads() {
        let body =
            EventBody::from_payload("tool_result", br#"{"toolCallId":"c","name":"bash","content":"exit code: 0"}"#)
                .unwrap();
        let EventBody::ToolResult(result) = body else { panic!("{body:?}") };
        assert_eq!((result.content.as_str(), result.facts), ("exit code: 0", None));
    }

    #[test]
    fn permission_denials_round_trip_with_their_reason() {
        check_roundtrip(
            EventBody::PermissionDenied(PermissionDenied {
                tool_call_id: "call_2".into(),
                tool: "bash".into(),
                reason: DenialReason::OutsideWorkspace,
                detail: "/etc/hosts is outside the working directory".into(),
            }),
            r#"{"detail":"/etc/hosts is outside the working directory","reason":"outside_workspace","tool":"bash","toolCallId":"call_2"}"#,
        );
        assert_eq!(DenialReason::User.to_string(), "user");
        assert_eq!(DenialReason::Policy.as_str(), "policy");
    }

    #[test]
    fn unknown_types_are_kept_verbatim() {
        let body = EventBody::from_payload("checkpoint_recorded", br#"{"files":2}"#).unwrap();
        assert_eq!(body.kind(), "checkpoint_recorded");
        assert_eq!(body.to_payload(), serde_json::json!({"files": 2}));
    }

    #[test]
    fn malformed_payload_names_its_type() {
        let err = EventBody::from_payload("message", b"{\"role\":7}").unwrap_err();
        assert!(err.to_string().starts_with("event payload of type `message` is malformed"), "{err}");
    }

    #[test]
    fn older_payloads_without_new_fields_still_decode() {
        let body =
            EventBody::from_payload("message", br#"{"role":"assistant","actor":"agent","content":"ok"}"#).unwrap();
        assert_eq!(body, EventBody::Message(Message::assistant("ok")));
    }
}

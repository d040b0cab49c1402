//! The WebSocket frames: what a client sends (`ClientFrame`) and what the
//! server sends (`ServerFrame`), each frame a model of its own told apart
//! by `type`.

use super::*;

/// Declares a frame's `type` word: a one-value enum, so a frame's own
/// struct carries its tag and the document names every frame as a model of
/// its own (`SessionChangeFrame`), told apart by `type`.
// `$tag` is a `tt`, not a `literal`: utoipa reads the rename only from a
// plain literal token. The variant goes undocumented on purpose: a
// documented variant becomes a `oneOf` of one in the document.
macro_rules! frame_tag {
    ($name:ident = $tag:tt) => {
        #[doc = concat!("The `type` of a `", $tag, "` frame.")]
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
        #[allow(missing_docs)]
        pub enum $name {
            #[default]
            #[serde(rename = $tag)]
            Tag,
        }
    };
}

frame_tag!(SubscribeTag = "subscribe");
frame_tag!(UnsubscribeTag = "unsubscribe");
frame_tag!(SessionChangeTag = "session-change");
frame_tag!(AccountChangeTag = "account-change");
frame_tag!(RunEventTag = "run-event");
frame_tag!(ApprovalRequestedTag = "approval-requested");
frame_tag!(SubscribedTag = "subscribed");
frame_tag!(ErrorTag = "error");
frame_tag!(ResyncTag = "resync");

/// What a WebSocket client sends: a JSON object whose `type` says which.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(untagged)]
#[schema(discriminator = "type")]
pub enum ClientFrame {
    /// Hear about a session or the account.
    Subscribe(SubscribeFrame),
    /// Stop hearing about them.
    Unsubscribe(UnsubscribeFrame),
}

impl ClientFrame {
    /// Reads a client's frame, naming what was wrong when it does not fit:
    /// the `type` first, then that frame's fields.
    pub fn parse(text: &str) -> Result<Self, String> {
        let value: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
        let fields = |e: serde_json::Error| e.to_string();
        match value.get("type").and_then(serde_json::Value::as_str) {
            Some("subscribe") => serde_json::from_value(value).map(ClientFrame::Subscribe).map_err(fields),
            Some("unsubscribe") => serde_json::from_value(value).map(ClientFrame::Unsubscribe).map_err(fields),
            Some(other) => Err(format!("unknown frame type `{other}` (subscribe or unsubscribe)")),
            None => Err("a frame is an object with a `type`".to_owned()),
        }
    }
}

/// `subscribe`: hear about one session (`sessionId`) or the whole account
/// (`account: true`); both may be given.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SubscribeFrame {
    /// `subscribe`.
    #[serde(rename = "type")]
    #[schema(inline)]
    pub kind: SubscribeTag,
    /// The session: its `session-change`, `run-event` and
    /// `approval-requested` frames.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(format = "uuid")]
    pub session_id: Option<String>,
    /// The account: `account-change`, and `session-change` for every session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account: Option<bool>,
}

/// `unsubscribe`: stop hearing about a session, or the account.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UnsubscribeFrame {
    /// `unsubscribe`.
    #[serde(rename = "type")]
    #[schema(inline)]
    pub kind: UnsubscribeTag,
    /// The session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(format = "uuid")]
    pub session_id: Option<String>,
    /// The account (`true`: stop hearing it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account: Option<bool>,
}

/// What the server sends a WebSocket client: a JSON object whose `type`
/// says which frame it is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(untagged)]
#[schema(discriminator = "type")]
pub enum ServerFrame {
    /// A session changed.
    SessionChange(SessionChangeFrame),
    /// The list of sessions changed.
    AccountChange(AccountChangeFrame),
    /// A run reported an event.
    RunEvent(RunEventFrame),
    /// A run asks a person.
    ApprovalRequested(ApprovalRequestedFrame),
    /// A subscription took effect.
    Subscribed(SubscribedFrame),
    /// A client frame was refused.
    Error(ErrorFrame),
    /// Frames were left out for this client: read again what they were about.
    Resync(ResyncFrame),
}

/// `session-change`: a session changed (both ends of a continuation hear
/// one each).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionChangeFrame {
    /// `session-change`.
    #[serde(rename = "type")]
    #[schema(inline)]
    pub kind: SessionChangeTag,
    /// The session.
    pub session_id: String,
    /// Its `SessionInfo` now.
    #[schema(value_type = seri_protocol::SessionInfoView)]
    pub session: Box<seri_core::SessionInfo>,
}

/// `account-change`: the list of sessions changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AccountChangeFrame {
    /// `account-change`.
    #[serde(rename = "type")]
    #[schema(inline)]
    pub kind: AccountChangeTag,
    /// What happened, one word each.
    pub reasons: Vec<AccountChangeReasonWord>,
    /// The sessions it is about.
    pub session_ids: Vec<String>,
}

/// Why the list of sessions changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "kebab-case")]
pub enum AccountChangeReasonWord {
    /// A session was made.
    SessionCreated,
    /// A session's view changed (a title, a status, a new event).
    SessionUpdated,
    /// A session continued into a successor.
    SessionContinued,
}

impl From<seri_runloop::AccountChangeReason> for AccountChangeReasonWord {
    fn from(reason: seri_runloop::AccountChangeReason) -> Self {
        use seri_runloop::AccountChangeReason as R;
        match reason {
            R::SessionCreated => Self::SessionCreated,
            R::SessionUpdated => Self::SessionUpdated,
            R::SessionContinued => Self::SessionContinued,
        }
    }
}

/// `run-event`: a run of this server reported an event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunEventFrame {
    /// `run-event`.
    #[serde(rename = "type")]
    #[schema(inline)]
    pub kind: RunEventTag,
    /// The session the run runs in.
    pub session_id: String,
    /// The run.
    pub run_id: String,
    /// The event, as one line of `--output-format stream-json` prints it
    /// (that family's snake_case keys, embedded whole).
    pub event: seri_protocol::StreamEvent,
}

/// `approval-requested`: a run asks a person before a tool acts; answer
/// with `POST /api/runs/{runId}/approvals/{callId}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalRequestedFrame {
    /// `approval-requested`.
    #[serde(rename = "type")]
    #[schema(inline)]
    pub kind: ApprovalRequestedTag,
    /// The session.
    pub session_id: String,
    /// The run.
    pub run_id: String,
    /// The call.
    pub call_id: String,
    /// The tool.
    pub tool: String,
    /// The call's arguments (`null` when they cannot be read back).
    #[schema(value_type = Object, nullable = true)]
    pub arguments: serde_json::Value,
    /// One line: `bash: cargo test`.
    pub summary: String,
    /// What would change, where there is something to show.
    pub preview: Option<String>,
}

/// `subscribed`: a subscription (or unsubscription) took effect; frames
/// for it follow from here on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SubscribedFrame {
    /// `subscribed`.
    #[serde(rename = "type")]
    #[schema(inline)]
    pub kind: SubscribedTag,
    /// The session, when the client's frame named one.
    pub session_id: Option<String>,
    /// Whether the client now hears the account.
    pub account: bool,
}

/// `error`: a client frame was refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ErrorFrame {
    /// `error`.
    #[serde(rename = "type")]
    #[schema(inline)]
    pub kind: ErrorTag,
    /// What was wrong.
    pub error: ErrorDetail,
}

/// `resync`: this client fell behind (its frames waited past the server's
/// queue for it), so frames about a session, or the account, were left
/// out. Read again what they were about: the session's events after the
/// last `seq` the client has (`GET /api/sessions/{id}/events?fromSeq=`),
/// the session and the questions waiting in it
/// (`GET /api/sessions/{id}/approvals`), or the list of sessions. A run's
/// end is among what may have been missed: whether a run still runs is in
/// the session's view. Frames go on after it as before.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResyncFrame {
    /// `resync`.
    #[serde(rename = "type")]
    #[schema(inline)]
    pub kind: ResyncTag,
    /// The session whose frames were left out, if it is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(format = "uuid")]
    pub session_id: Option<String>,
    /// `true` when account frames were left out.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub account: bool,
}

impl ServerFrame {
    /// `resync` of `session_id`, or of the account when `None`.
    pub fn resync(session_id: Option<String>) -> Self {
        let account = session_id.is_none();
        Self::Resync(ResyncFrame { kind: ResyncTag::Tag, session_id, account })
    }

    /// `session-change` of `session_id`, whose view is `session` now.
    pub fn session_change(session_id: String, session: seri_core::SessionInfo) -> Self {
        Self::SessionChange(SessionChangeFrame { kind: SessionChangeTag::Tag, session_id, session: Box::new(session) })
    }

    /// `account-change` for `reasons`, about `session_ids`.
    pub fn account_change(
        reasons: impl IntoIterator<Item = seri_runloop::AccountChangeReason>,
        session_ids: Vec<String>,
    ) -> Self {
        let reasons = reasons.into_iter().map(AccountChangeReasonWord::from).collect();
        Self::AccountChange(AccountChangeFrame { kind: AccountChangeTag::Tag, reasons, session_ids })
    }

    /// `run-event` of `run_id` in `session_id`.
    pub fn run_event(session_id: String, run_id: String, event: seri_protocol::StreamEvent) -> Self {
        Self::RunEvent(RunEventFrame { kind: RunEventTag::Tag, session_id, run_id, event })
    }

    /// `subscribed`: the client hears `session_id` (when named) and the
    /// account when `account`.
    pub fn subscribed(session_id: Option<String>, account: bool) -> Self {
        Self::Subscribed(SubscribedFrame { kind: SubscribedTag::Tag, session_id, account })
    }

    /// `error`: a client frame was refused with `code`, saying why.
    pub fn error(code: &str, message: String) -> Self {
        Self::Error(ErrorFrame {
            kind: ErrorTag::Tag,
            error: ErrorDetail { code: code.to_owned(), message, job_id: None },
        })
    }
}

impl ApprovalRequestedFrame {
    /// The `approval-requested` frame of a question waiting now, with its
    /// call's arguments as the question carries them.
    pub fn of(pending: &seri_runloop::PendingApproval) -> Self {
        Self {
            kind: ApprovalRequestedTag::Tag,
            session_id: pending.call.session_id.to_string(),
            run_id: pending.call.run_id.map(|r| r.to_string()).unwrap_or_default(),
            call_id: pending.call.call_id.to_string(),
            tool: pending.request.tool.clone(),
            arguments: pending.request.arguments.clone(),
            summary: pending.request.summary(),
            preview: pending.request.preview.clone(),
        }
    }
}

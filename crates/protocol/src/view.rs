//! The API family's session views, described for the OpenAPI document:
//! the JSON of `seri_core::SessionInfo` (`GET /api/sessions/{id}`,
//! `session-change` frames, `seri sessions show --json`) and of the store's
//! `SessionSummary` (`GET /api/sessions`, `seri sessions list --json`).
//! camelCase keys, like every document of the HTTP API.
//!
//! These types are never built: the server sends core's and the store's
//! own serialisations, and these say what that JSON is. They cannot drift
//! unseen: a test here compares every key (nested ones too) of a
//! fully-filled `SessionInfo` with these schemas, and the server's test
//! suite checks every session it sends against the document strictly.

#![allow(missing_docs)]

use utoipa::ToSchema;

use crate::words::ContinueReasonWord;

/// A session as clients see it.
#[derive(ToSchema)]
#[schema(as = SessionInfo)]
#[allow(dead_code)]
#[schema(rename_all = "camelCase")]
pub struct SessionInfoView {
    /// The session.
    #[schema(format = "uuid")]
    id: String,
    /// Its owner (`local`, or the name of a token's agent).
    agent_id: String,
    /// The working directory it was started in.
    cwd: String,
    /// What the whole session is about.
    title: String,
    /// Its live status.
    description: String,
    /// Who set the title; `null` while it has none.
    title_source: Option<TitleSourceWord>,
    /// When it was created (RFC 3339, UTC).
    #[schema(format = DateTime)]
    created_at: String,
    /// When its newest event was appended.
    #[schema(format = DateTime)]
    updated_at: String,
    /// The model chosen for it, if not the default.
    model_override: Option<ModelRefView>,
    /// The permission mode the person chose for it; absent: the runtime's.
    permission_mode: Option<PermissionModeWord>,
    /// The sandbox mode the person chose for it (`/sandbox`,
    /// `PUT /api/sessions/{id}/sandbox`); absent: the runtime's.
    sandbox_mode: Option<SandboxModeWord>,
    /// Whether the person turned its commands' network on (`true`) or off
    /// (`false`); absent: the runtime's.
    sandbox_network: Option<bool>,
    /// The newest assistant message's usage; `null` when unreported.
    last_usage: Option<UsageView>,
    /// The model that billed `lastUsage`.
    last_usage_model: Option<ModelRefView>,
    /// Messages by kind.
    message_counts: MessageCountsView,
    /// The newest seq; 0 for an empty session.
    last_seq: u64,
    /// The current plan.
    plan: Option<PlanView>,
    /// For a child session: the run that delegated to it.
    #[schema(format = "uuid")]
    parent_run_id: Option<String>,
    /// The session this one continues, if any.
    continued_from: Option<ContinuationLinkView>,
    /// The newest session this one continued into, if any.
    continued_to: Option<ContinuationLinkView>,
    /// The session this one was forked from, if any.
    forked_from: Option<ForkLinkView>,
}

/// One session of a list, newest first.
#[derive(ToSchema)]
#[schema(as = SessionSummary)]
#[allow(dead_code)]
#[schema(rename_all = "camelCase")]
pub struct SessionSummaryView {
    /// The session.
    #[schema(format = "uuid")]
    id: String,
    /// Its owner.
    agent_id: String,
    /// The working directory it was started in.
    cwd: String,
    /// What the whole session is about.
    title: String,
    /// Its live status.
    description: String,
    /// Who set the title.
    title_source: Option<TitleSourceWord>,
    /// When it was created.
    #[schema(format = DateTime)]
    created_at: String,
    /// When its newest event was appended.
    #[schema(format = DateTime)]
    updated_at: String,
    /// The newest seq.
    last_seq: u64,
    /// The session this one continues, if any.
    continued_from: Option<ContinuationLinkView>,
    /// The newest session this one continued into, if any.
    continued_to: Option<ContinuationLinkView>,
    /// For a child session: the run that delegated to it (absent otherwise).
    #[schema(format = "uuid")]
    parent_run_id: Option<String>,
    /// For a child session: its parent's session (absent otherwise).
    #[schema(format = "uuid")]
    parent_session_id: Option<String>,
    /// The session this one was forked from (absent otherwise).
    forked_from: Option<ForkLinkView>,
}

/// Who set a session's title.
#[derive(ToSchema)]
#[schema(as = TitleSource)]
#[allow(dead_code)]
#[schema(rename_all = "snake_case")]
pub enum TitleSourceWord {
    Agent,
    User,
    Fallback,
}

/// How much a session's tools may do without asking.
#[derive(ToSchema)]
#[schema(as = PermissionMode)]
#[allow(dead_code)]
#[schema(rename_all = "kebab-case")]
pub enum PermissionModeWord {
    Default,
    AcceptEdits,
    Plan,
    Bypass,
}

/// How much a session's commands may touch.
#[derive(ToSchema)]
#[schema(as = SandboxMode)]
#[allow(dead_code)]
#[schema(rename_all = "kebab-case")]
pub enum SandboxModeWord {
    ReadOnly,
    WorkspaceWrite,
    FullAccess,
}

/// Which model answered.
#[derive(ToSchema)]
#[schema(as = ModelRef)]
#[allow(dead_code)]
pub struct ModelRefView {
    /// Provider type: `anthropic`, `openai`, `script`, …
    provider: String,
    /// The provider's model id.
    model: String,
}

/// Tokens a provider billed for one request (or a sum of them).
#[derive(ToSchema)]
#[schema(as = Usage)]
#[allow(dead_code)]
#[schema(rename_all = "camelCase")]
pub struct UsageView {
    /// Uncached input.
    input: u64,
    /// Input read from the provider's cache.
    cache_read: u64,
    /// Input written to the provider's cache.
    cache_write: u64,
    /// Output.
    output: u64,
}

/// How many messages of each kind a session holds.
#[derive(ToSchema)]
#[schema(as = MessageCounts)]
#[allow(dead_code)]
#[schema(rename_all = "camelCase")]
pub struct MessageCountsView {
    /// User-role messages.
    user: u64,
    /// Assistant messages.
    assistant: u64,
    /// Tool calls.
    tool_calls: u64,
}

/// A checklist of steps, owned by the run working through it.
#[derive(ToSchema)]
#[schema(as = Plan)]
#[allow(dead_code)]
#[schema(rename_all = "camelCase")]
pub struct PlanView {
    /// The steps in order.
    steps: Vec<PlanStepView>,
    /// The run working on it (absent for a carried plan not yet adopted).
    #[schema(format = "uuid")]
    owner_run_id: Option<String>,
}

/// One step of a plan.
#[derive(ToSchema)]
#[schema(as = PlanStep)]
#[allow(dead_code)]
pub struct PlanStepView {
    /// What the step is.
    text: String,
    /// How far along it is.
    status: StepStatusWord,
}

/// How far along a plan step is.
#[derive(ToSchema)]
#[schema(as = StepStatus)]
#[allow(dead_code)]
#[schema(rename_all = "snake_case")]
pub enum StepStatusWord {
    Pending,
    InProgress,
    Done,
}

/// The other side of a continuation.
#[derive(ToSchema)]
#[schema(as = ContinuationLink)]
#[allow(dead_code)]
#[schema(rename_all = "camelCase")]
pub struct ContinuationLinkView {
    /// The edge (`GET /api/continuations/{id}`).
    #[schema(format = "uuid")]
    continuation_id: String,
    /// The session on the other side.
    #[schema(format = "uuid")]
    session_id: String,
    /// Its current title.
    title: String,
    /// Why the continuation happened.
    reason: ContinueReasonWord,
    /// When.
    #[schema(format = DateTime)]
    at: String,
}

/// The other side of a fork.
#[derive(ToSchema)]
#[schema(as = ForkLink)]
#[allow(dead_code)]
#[schema(rename_all = "camelCase")]
pub struct ForkLinkView {
    /// The session on the other side.
    #[schema(format = "uuid")]
    session_id: String,
    /// Its current title.
    title: String,
    /// The fork point: the parent's newest event the fork shares.
    fork_seq: u64,
    /// When the fork was made.
    #[schema(format = DateTime)]
    at: String,
    /// Who asked for it.
    via: ForkViaWord,
}

/// Who asked for a fork.
#[derive(ToSchema)]
#[schema(as = ForkVia)]
#[allow(dead_code)]
#[schema(rename_all = "snake_case")]
pub enum ForkViaWord {
    Cli,
    Repl,
    Api,
    Import,
    Acp,
}

/// The `kind` of one variant of [`ToolFactsView`]: a one-word enum, so
/// each variant is one flat object that names its own `kind` (what a
/// generated client makes a model of; `allOf` a variant and its tag is
/// what generators drop).
macro_rules! facts_kind {
    ($name:ident = $tag:tt) => {
        #[doc = concat!("The `kind` of `", $tag, "` facts.")]
        #[derive(ToSchema, serde::Serialize)]
        #[allow(dead_code)]
        pub enum $name {
            #[serde(rename = $tag)]
            Kind,
        }
    };
}

facts_kind!(CommandKind = "command");
facts_kind!(ChangeKind = "change");
facts_kind!(ReadKind = "read");
facts_kind!(SearchKind = "search");
facts_kind!(ListKind = "list");

/// What a tool call came to, as values (`seri_core::ToolFacts`): a
/// `tool_result`'s `facts`, and a `tool_finished` run event's. Told apart
/// by `kind`; every key is one word, so the same in both JSON families.
#[derive(ToSchema, serde::Serialize)]
#[schema(as = ToolFacts, discriminator = "kind")]
#[allow(dead_code)]
#[serde(untagged)]
pub enum ToolFactsView {
    /// A command ran (`bash`).
    Command(CommandRunView),
    /// A file was written (`edit`, `write_file`).
    Change(FileChangeView),
    /// A file was read (`read_file`).
    Read(FileReadView),
    /// Files were searched (`grep`).
    Search(SearchRunView),
    /// A folder was listed (`list`).
    List(ListingView),
}

/// A command that ran.
#[derive(ToSchema, serde::Serialize)]
#[schema(as = CommandRun)]
#[allow(dead_code)]
pub struct CommandRunView {
    #[schema(inline)]
    kind: CommandKind,
    /// The command, as given to `bash -c`.
    command: String,
    /// How it ended: with an exit `code`, by a `signal`, killed at its
    /// `timeout`, or `unknown` (the system reported neither).
    exit: CommandExitWord,
    /// The exit code, when `exit` is `code`.
    #[serde(skip_serializing_if = "Option::is_none")]
    code: Option<i32>,
    /// The signal's number, when `exit` is `signal`.
    #[serde(skip_serializing_if = "Option::is_none")]
    signal: Option<i32>,
    /// The timeout it had, in milliseconds.
    timeout: u64,
    /// How long it ran, in milliseconds.
    duration: u64,
    /// The last lines it printed (stdout, then stderr), for a person.
    tail: String,
    /// How many lines it printed in all.
    lines: u64,
}

/// How a command ended.
#[derive(ToSchema, serde::Serialize)]
#[schema(as = CommandExit)]
#[allow(dead_code)]
#[serde(rename_all = "snake_case")]
pub enum CommandExitWord {
    Code,
    Signal,
    Timeout,
    Unknown,
}

/// A file a call wrote.
#[derive(ToSchema, serde::Serialize)]
#[schema(as = FileChange)]
#[allow(dead_code)]
pub struct FileChangeView {
    #[schema(inline)]
    kind: ChangeKind,
    /// The file, as the call's result names it.
    path: String,
    /// Whether the call created it.
    created: bool,
    /// A unified diff (`@@` hunks), cut after a number of lines with a
    /// `… N more lines` line.
    diff: String,
    /// Lines added, over the whole change.
    added: u64,
    /// Lines removed, over the whole change.
    removed: u64,
    /// The whole diff, when `diff` is cut (itself cut only past a far
    /// larger number of lines); absent when `diff` is all of it.
    #[serde(skip_serializing_if = "Option::is_none")]
    whole: Option<String>,
}

/// A file a call read.
#[derive(ToSchema, serde::Serialize)]
#[schema(as = FileRead)]
#[allow(dead_code)]
pub struct FileReadView {
    #[schema(inline)]
    kind: ReadKind,
    /// The file, as the call's result names it.
    path: String,
    /// Its lines, in all.
    lines: u64,
    /// Its size in bytes.
    bytes: u64,
    /// The first line shown, counting from 1; absent for an empty file.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1)]
    from: Option<u64>,
    /// The last line shown; absent for an empty file.
    #[serde(skip_serializing_if = "Option::is_none")]
    to: Option<u64>,
}

/// A search of files for a pattern.
#[derive(ToSchema, serde::Serialize)]
#[schema(as = SearchRun)]
#[allow(dead_code)]
pub struct SearchRunView {
    #[schema(inline)]
    kind: SearchKind,
    /// The regular expression.
    pattern: String,
    /// The folder or file searched.
    path: String,
    /// The glob that narrowed it.
    #[serde(skip_serializing_if = "Option::is_none")]
    glob: Option<String>,
    /// Matching lines, in all.
    matches: u64,
    /// Files with at least one match.
    files: u64,
}

/// A folder listed.
#[derive(ToSchema, serde::Serialize)]
#[schema(as = Listing)]
#[allow(dead_code)]
pub struct ListingView {
    #[schema(inline)]
    kind: ListKind,
    /// The folder.
    path: String,
    /// Entries found, in all.
    entries: u64,
}

/// One stored event of a session, as `GET /api/sessions/{id}/events`
/// gives it: `type` and that type's own fields, exactly as the store keeps
/// them (camelCase). Open: a newer build's event types and fields come
/// through as they are, so a client reads `type` and the fields it knows.
pub struct StoredEventView;

/// The event types this build writes, for the document.
pub const STORED_EVENT_TYPES: &[&str] = &[
    "message",
    "thinking",
    "tool_call",
    "tool_result",
    "status_changed",
    "plan_updated",
    "context_compacted",
    "permission_denied",
    "context_rewound",
    "model_changed",
    "permission_mode_changed",
    "sandbox_changed",
];

impl utoipa::PartialSchema for StoredEventView {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{AdditionalProperties, ObjectBuilder, Type};
        let kind = ObjectBuilder::new().schema_type(Type::String).description(Some(format!(
            "The event's type: {} in this build; a newer build may write others.",
            STORED_EVENT_TYPES.iter().map(|t| format!("`{t}`")).collect::<Vec<_>>().join(", ")
        )));
        ObjectBuilder::new()
            .description(Some("One stored event: `type` and that type's own fields, as the store keeps them."))
            .property("type", kind)
            .property(
                "facts",
                utoipa::openapi::schema::RefBuilder::new().ref_location_from_schema_name("ToolFacts").description(
                    Some("On a `tool_result`: what the call came to, as values; absent when the tool reported none."),
                ),
            )
            .required("type")
            .additional_properties(Some(AdditionalProperties::FreeForm(true)))
            .into()
    }
}

impl ToSchema for StoredEventView {
    fn name() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed("StoredEvent")
    }

    fn schemas(schemas: &mut Vec<(String, utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>)>) {
        schemas.push((ToolFactsView::name().into(), <ToolFactsView as utoipa::PartialSchema>::schema()));
        <ToolFactsView as ToSchema>::schemas(schemas);
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::{Value, json};
    use utoipa::openapi::{RefOr, schema::Schema};

    /// Every component schema these views name, as JSON, by name.
    fn components() -> BTreeMap<String, Value> {
        let mut found: Vec<(String, RefOr<Schema>)> = Vec::new();
        <super::SessionInfoView as utoipa::ToSchema>::schemas(&mut found);
        <super::SessionSummaryView as utoipa::ToSchema>::schemas(&mut found);
        found.push(("SessionInfo".into(), <super::SessionInfoView as utoipa::PartialSchema>::schema()));
        found.push(("SessionSummary".into(), <super::SessionSummaryView as utoipa::PartialSchema>::schema()));
        found.into_iter().map(|(name, schema)| (name, serde_json::to_value(schema).unwrap_or_default())).collect()
    }

    /// The properties `schema` names, following `$ref`s and `oneOf`s.
    fn properties<'a>(
        schema: &'a Value,
        all: &'a BTreeMap<String, Value>,
    ) -> Option<&'a serde_json::Map<String, Value>> {
        if let Some(name) = schema["$ref"].as_str().and_then(|r| r.strip_prefix("#/components/schemas/")) {
            return properties(&all[name], all);
        }
        if let Some(choices) = schema["oneOf"].as_array() {
            return choices.iter().find_map(|c| properties(c, all));
        }
        if schema["type"] == "array" {
            return properties(&schema["items"], all);
        }
        schema["properties"].as_object()
    }

    /// Fails naming every key of `value` (nested too) that `schema` does
    /// not name, and every property it names that `value` lacks.
    fn same_keys(path: &str, value: &Value, schema: &Value, all: &BTreeMap<String, Value>, wrong: &mut Vec<String>) {
        let value = match value {
            Value::Array(items) => match items.first() {
                Some(first) => first,
                None => return,
            },
            other => other,
        };
        let (Some(object), Some(named)) = (value.as_object(), properties(schema, all)) else { return };
        for (key, inner) in object {
            match named.get(key) {
                Some(described) => same_keys(&format!("{path}.{key}"), inner, described, all, wrong),
                None => wrong.push(format!("{path}.{key} is sent but not described")),
            }
        }
        for key in named.keys().filter(|k| !object.contains_key(*k)) {
            wrong.push(format!("{path}.{key} is described but never sent"));
        }
    }

    #[test]
    fn the_tool_facts_view_names_every_key_core_sends() {
        use seri_core::{CommandExit, CommandRun, FileChange, FileRead, Listing, SearchRun, ToolFacts};
        let mut found: Vec<(String, RefOr<Schema>)> = Vec::new();
        <super::ToolFactsView as utoipa::ToSchema>::schemas(&mut found);
        found.push(("ToolFacts".into(), <super::ToolFactsView as utoipa::PartialSchema>::schema()));
        let all: BTreeMap<String, Value> =
            found.into_iter().map(|(name, schema)| (name, serde_json::to_value(schema).unwrap_or_default())).collect();
        let command =
            |exit| CommandRun { command: "make".into(), exit, timeout: 1, duration: 2, tail: "t".into(), lines: 1 };
        let every = [
            ToolFacts::Command(command(CommandExit::Timeout)),
            ToolFacts::Change(FileChange {
                path: "a".into(),
                created: true,
                diff: "d".into(),
                added: 1,
                removed: 0,
                whole: Some("w".into()),
            }),
            ToolFacts::Read(FileRead { path: "a".into(), lines: 3, bytes: 9, from: Some(1), to: Some(3) }),
            ToolFacts::Search(SearchRun {
                pattern: "p".into(),
                path: ".".into(),
                glob: Some("*".into()),
                matches: 1,
                files: 1,
            }),
            ToolFacts::List(Listing { path: ".".into(), entries: 1 }),
        ];
        let mut wrong = Vec::new();
        for facts in every {
            let sent = serde_json::to_value(&facts).unwrap_or_default();
            let kind = sent["kind"].as_str().unwrap_or_default().to_owned();
            // The variant's own schema: the `oneOf` choice, a flat object,
            // whose `kind` is this one.
            let own = all["ToolFacts"]["oneOf"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|c| c["$ref"].as_str()?.strip_prefix("#/components/schemas/"))
                .map(|name| all[name].clone())
                .find(|schema| schema["properties"]["kind"]["enum"] == json!([kind]))
                .unwrap_or_else(|| panic!("no ToolFacts choice for `{kind}`: {}", all["ToolFacts"]));
            let mut sent = sent;
            // `code` and `signal` are each sent only with their `exit`.
            if kind == "command"
                && let Some(object) = sent.as_object_mut()
            {
                object.insert("code".into(), json!(0));
                object.insert("signal".into(), json!(9));
            }
            same_keys(&kind, &sent, &own, &all, &mut wrong);
        }
        assert!(wrong.is_empty(), "crates/protocol/src/view.rs is not ToolFacts' JSON: {wrong:#?}");
    }

    #[test]
    fn the_views_name_every_key_core_and_the_store_send() {
        let id = "01a22b56-d880-7000-8000-000000000001";
        let at = "2026-12-01T10:02:11.000Z";
        let link = json!({ "continuationId": id, "sessionId": id, "title": "t", "reason": "topic_change", "at": at });
        let fork = json!({ "sessionId": id, "title": "t", "forkSeq": 3, "at": at, "via": "cli" });
        let usage = json!({ "input": 1, "cacheRead": 2, "cacheWrite": 3, "output": 4 });
        let model = json!({ "provider": "script", "model": "m" });
        let info = json!({
            "id": id, "agentId": "local", "cwd": "/", "title": "t", "description": "d", "titleSource": "agent",
            "createdAt": at, "updatedAt": at, "modelOverride": model, "permissionMode": "plan", "lastUsage": usage,
            "sandboxMode": "read-only", "sandboxNetwork": false,
            "lastUsageModel": model,
            "messageCounts": { "user": 1, "assistant": 1, "toolCalls": 0 }, "lastSeq": 2,
            "plan": { "steps": [{ "text": "s", "status": "in_progress" }], "ownerRunId": id },
            "parentRunId": id, "continuedFrom": link, "continuedTo": link, "forkedFrom": fork,
        });
        // Through core's own types: what they send is what is compared.
        let info: seri_core::SessionInfo = serde_json::from_value(info).unwrap_or_else(|e| panic!("{e}"));
        let sent = serde_json::to_value(&info).unwrap_or_default();
        let all = components();
        let mut wrong = Vec::new();
        same_keys("SessionInfo", &sent, &all["SessionInfo"], &all, &mut wrong);
        assert!(wrong.is_empty(), "crates/protocol/src/view.rs is not SessionInfo's JSON: {wrong:#?}");
    }
}

//! The world the rules table runs in: this agent's threads (one continued
//! from another, one just continued into, two sharing an id prefix…),
//! another agent's thread, and a memory folder with symlinks in and out.

use std::path::Path;

use seri_core::{
    Actor, AgentId, ContinueReason, ContinuedFrom, EventBody, EventId, Message, MessageMeta, Plan, PlanStep, Role,
    RunId, Seq, SessionId, SessionSeed, StatusChanged, StepStatus, Thinking, Timestamp, TitleSource, ToolCall,
    ToolResult,
};
use seri_tools::{InMemorySessions, PermissionPolicy, Permissions, Workspace};
use tempfile::TempDir;

pub(crate) const CURRENT: SessionId = SessionId::from_bytes([0x11; 16]);
pub(crate) const PREDECESSOR: SessionId = SessionId::from_bytes([0x22; 16]);
pub(crate) const FOREIGN: SessionId = SessionId::from_bytes([0x33; 16]);
pub(crate) const EMPTY: SessionId = SessionId::from_bytes([0x44; 16]);
pub(crate) const JUST_CONTINUED: SessionId = SessionId::from_bytes([0x55; 16]);
pub(crate) const NO_USER_MESSAGE: SessionId = SessionId::from_bytes([0x66; 16]);
pub(crate) const PLAN_DONE: SessionId = SessionId::from_bytes([0x77; 16]);
pub(crate) const NO_PLAN: SessionId = SessionId::from_bytes([0x88; 16]);
pub(crate) const CARRIED_PLAN: SessionId = SessionId::from_bytes([0x99; 16]);
pub(crate) const TWIN_A: SessionId =
    SessionId::from_bytes([0xab, 0xcd, 0xef, 0x01, 0, 0, 0x70, 0, 0x80, 0, 0, 0, 0, 0, 0, 1]);
pub(crate) const TWIN_B: SessionId =
    SessionId::from_bytes([0xab, 0xcd, 0xef, 0x02, 0, 0, 0x70, 0, 0x80, 0, 0, 0, 0, 0, 0, 2]);

/// The run every call is made in.
pub(crate) const RUN: RunId = RunId::from_bytes([0xaa; 16]);
/// The parent of child runs.
pub(crate) const PARENT_RUN: RunId = RunId::from_bytes([0xbb; 16]);
/// The run that wrote CURRENT's plan before this one.
pub(crate) const EARLIER_RUN: RunId = RunId::from_bytes([0xcc; 16]);

pub(crate) fn other_agent() -> AgentId {
    AgentId("someone-else".to_owned())
}

/// The sessions and the temporary profile whose `memory/` they resolve
/// against; the profile is also the (unused) working directory.
pub(crate) struct Fixture {
    pub(crate) sessions: InMemorySessions,
    pub(crate) workspace: Workspace,
    pub(crate) permissions: Permissions,
    _profile: TempDir,
}

fn seed(id: SessionId, agent: AgentId, title: &str, description: &str, plan: Option<Plan>) -> SessionSeed {
    let mut seed = SessionSeed::new(id, agent, "/work/repo", Timestamp(1_790_000_000_000));
    seed.title = Some(title.to_owned());
    seed.description = Some(description.to_owned());
    seed.title_source = Some(TitleSource::Agent);
    seed.plan = plan;
    seed
}

fn steps(statuses: &[(&str, StepStatus)]) -> Vec<PlanStep> {
    statuses.iter().map(|(text, status)| PlanStep { text: (*text).to_owned(), status: *status }).collect()
}

pub(crate) fn current_plan_steps() -> Vec<PlanStep> {
    steps(&[
        ("Write migration 0003", StepStatus::Done),
        ("Add the creation transaction", StepStatus::InProgress),
        ("Fault-injection tests", StepStatus::Pending),
    ])
}

fn user(text: &str) -> EventBody {
    EventBody::Message(Message::user(text))
}

fn assistant(text: &str) -> EventBody {
    EventBody::Message(Message::assistant(text))
}

fn write(path: &Path, text: &str) {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(path, text).unwrap();
}

impl Fixture {
    pub(crate) fn new() -> Self {
        let profile = tempfile::tempdir().unwrap();
        let memory = profile.path().join("memory");
        write(&memory.join("notes.md"), "Prefer small commits.");
        write(&memory.join("projects/seri.md"), "Continuation first.");
        write(&profile.path().join("secret.md"), "outside the memory folder");
        std::os::unix::fs::symlink(profile.path().join("secret.md"), memory.join("escape.md")).unwrap();
        std::os::unix::fs::symlink(memory.join("notes.md"), memory.join("alias.md")).unwrap();
        std::os::unix::fs::symlink(profile.path(), memory.join("up")).unwrap();

        let local = AgentId::local();
        let mut sessions = InMemorySessions::new(&memory);
        let plan = Plan { steps: current_plan_steps(), owner_run_id: Some(EARLIER_RUN) };
        sessions.add_session(
            seed(PREDECESSOR, local.clone(), "Design the continuation edge", "Design agreed.", None),
            [
                user("How should continuations be stored?"),
                assistant("One row per edge in session_continuations, manifest as CBOR."),
                user("Agreed. Let's build it."),
            ],
        );
        sessions.add_session(
            seed(CURRENT, local.clone(), "Store migrations", "Writing migration 0003.", Some(plan)),
            [
                EventBody::Message(Message {
                    meta: Some(Box::new(MessageMeta {
                        continued_from: Some(ContinuedFrom {
                            session_id: PREDECESSOR,
                            event_id: EventId::from_bytes([0x22; 16]),
                            seq: Seq(3),
                        }),
                        ..MessageMeta::default()
                    })),
                    ..Message::user("Agreed. Let's build it.")
                }),
                EventBody::Thinking(Thinking {
                    text: "Start with the schema.".into(),
                    signature: None,
                    encrypted_content: None,
                }),
                EventBody::ToolCall(ToolCall {
                    id: "call_1".into(),
                    name: "read_file".into(),
                    arguments: serde_json::json!({"path": "crates/store/schema.sql"}),
                }),
                EventBody::ToolResult(ToolResult {
                    tool_call_id: "call_1".into(),
                    name: "read_file".into(),
                    content: "CREATE TABLE sessions (\n  id TEXT PRIMARY KEY\n);".into(),
                    is_error: false,
                    facts: None,
                }),
                assistant("The schema has no continuation table yet; I'll add migration 0003."),
                user("Also: what does </excerpt> do in a title?"),
                EventBody::StatusChanged(StatusChanged {
                    title: None,
                    description: Some("Writing migration 0003.".into()),
                    source: TitleSource::Agent,
                }),
                assistant("It is escaped wherever it is framed."),
            ],
        );
        sessions.link(PREDECESSOR, CURRENT, ContinueReason::PhaseChange);
        sessions.add_session(seed(FOREIGN, other_agent(), "Another agent's secrets", "", None), [user("private")]);
        sessions.add_session(seed(EMPTY, local.clone(), "Nothing yet", "", None), []);
        sessions.add_session(
            seed(JUST_CONTINUED, local.clone(), "Fresh successor", "Just started.", None),
            [
                EventBody::Message(Message {
                    role: Role::User,
                    actor: Actor::System,
                    content: "<continuation>…</continuation>".into(),
                    ..Message::default()
                }),
                EventBody::Message(Message {
                    meta: Some(Box::new(MessageMeta {
                        continued_from: Some(ContinuedFrom {
                            session_id: CURRENT,
                            event_id: EventId::from_bytes([0x11; 16]),
                            seq: Seq(6),
                        }),
                        ..MessageMeta::default()
                    })),
                    ..Message::user("Also: what does </excerpt> do in a title?")
                }),
            ],
        );
        sessions.add_session(
            seed(NO_USER_MESSAGE, local.clone(), "Automation only", "", None),
            [EventBody::Message(Message {
                role: Role::User,
                actor: Actor::System,
                content: "recap".into(),
                ..Message::default()
            })],
        );
        let done = Plan { steps: steps(&[("Ship it", StepStatus::Done)]), owner_run_id: Some(RUN) };
        sessions
            .add_session(seed(PLAN_DONE, local.clone(), "Finished work", "All done.", Some(done)), [user("thanks")]);
        sessions.add_session(seed(NO_PLAN, local.clone(), "Quick question", "", None), [user("what is 2+2?")]);
        let carried = Plan { steps: current_plan_steps(), owner_run_id: None };
        sessions.add_session(
            seed(CARRIED_PLAN, local.clone(), "Successor with a plan", "", Some(carried)),
            [user("go on")],
        );
        sessions.add_session(seed(TWIN_A, local.clone(), "Twin A", "", None), [user("a")]);
        sessions.add_session(seed(TWIN_B, local, "Twin B", "", None), [user("b")]);
        let workspace = Workspace::new(profile.path()).unwrap();
        Self { sessions, workspace, permissions: Permissions::headless(PermissionPolicy::new()), _profile: profile }
    }
}

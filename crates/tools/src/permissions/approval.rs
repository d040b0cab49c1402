//! Asking the person: the request a tool puts to them, their answer, and the
//! [`Approver`] trait the REPL implements.

use async_trait::async_trait;

/// Most characters of a command or path in a one-line summary.
pub const SUMMARY_TARGET_CHARS: usize = 160;

/// An action a tool wants to take, as the person is asked about it (and as
/// a denial describes it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalRequest {
    /// The tool: `bash`, `write_file`, …
    pub tool: String,
    /// What it acts on: the path as results name it (relative to the
    /// working directory, absolute outside it), or the whole command.
    pub target: String,
    /// The path acted on, absolute and resolved, for a tool that acts on
    /// one: what path rules ([`super::PathRules`]) are matched against.
    pub path: Option<std::path::PathBuf>,
    /// Whether the path is outside the working directory and its allowed
    /// roots; such a path is asked about even when the tool is allowed.
    pub outside_workspace: bool,
    /// What would change, for a person who wants to look before answering:
    /// the replaced and replacing text of an edit, the start of a written
    /// file. Never needed to decide; may be shown on request.
    pub preview: Option<String>,
    /// The call that asks, when a run loop runs it.
    pub call: Option<CallRef>,
    /// That call's arguments, as the model wrote them (`null` outside a
    /// run loop): what a client shows beside the question.
    pub arguments: serde_json::Value,
    /// Asked each time: an earlier "allow for this session" does not
    /// answer it (a command with parts seri cannot see into, under a
    /// `bash` deny rule: what it would run is not what was allowed).
    pub each_time: bool,
}

/// Which call of which run asks: what a client answering over an API names.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CallRef {
    /// The session the call is in.
    pub session_id: seri_core::SessionId,
    /// Its run.
    pub run_id: Option<seri_core::RunId>,
    /// The call.
    pub call_id: seri_core::ToolCallId,
}

impl ApprovalRequest {
    /// An action on `target` by `tool`, inside the workspace, with no preview.
    pub fn new(tool: impl Into<String>, target: impl Into<String>) -> Self {
        Self {
            tool: tool.into(),
            target: target.into(),
            path: None,
            outside_workspace: false,
            preview: None,
            call: None,
            arguments: serde_json::Value::Null,
            each_time: false,
        }
    }

    /// One line for a prompt or a log: `bash: cargo test`,
    /// `read_file: /etc/hosts (outside the working directory)`. A command of
    /// several lines shows its first with how many more there are; a long
    /// one is cut with `…`.
    pub fn summary(&self) -> String {
        let mut lines = self.target.lines();
        let first = lines.next().unwrap_or("");
        let more = lines.count();
        let mut text: String = first.chars().take(SUMMARY_TARGET_CHARS).collect();
        if first.chars().count() > SUMMARY_TARGET_CHARS {
            text.push('…');
        }
        let mut summary = format!("{}: {text}", self.tool);
        if more > 0 {
            summary.push_str(&format!(" … (+{more} more line{})", if more == 1 { "" } else { "s" }));
        }
        if self.outside_workspace {
            summary.push_str(" (outside the working directory)");
        }
        summary
    }
}

/// The person's answer.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Decision {
    /// Go ahead, this once.
    Allow,
    /// Go ahead, and do not ask about this tool again in this session (the
    /// approver remembers it).
    AllowForSession,
    /// Do not.
    Deny,
    /// Do not; do this instead: the person's words reach the model with
    /// the refusal.
    Instead(String),
}

/// Someone who can be asked: the person at the REPL. A headless run has
/// none, and what would be asked is refused.
///
/// An implementation shows [`ApprovalRequest::summary`] (and the preview on
/// request) and waits for the answer. It may remember an "always" answer
/// for the rest of the session and return [`Decision::Allow`] without
/// asking again; that memory is the implementation's, not the policy's.
#[async_trait]
pub trait Approver: Send + Sync {
    /// Asks about one action and returns the answer.
    async fn approve(&self, request: &ApprovalRequest) -> Decision;

    /// Answers, from outside (a client of an API), a question this approver
    /// asked about `call` and still waits on. `false`: no such question
    /// waits (it was answered, timed out, or never asked). An approver that
    /// asks at a terminal has no such questions.
    fn answer(&self, call: &CallRef, decision: Decision) -> bool {
        let _ = (call, decision);
        false
    }
}

/// What a hook that answers before a person is asked said
/// ([`AskHook::before_asking`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookAnswer {
    /// Go ahead: the person is not asked.
    Allow,
    /// Refused, with the hook's words.
    Deny(String),
    /// The hook said nothing of it: ask the person.
    Ask,
}

/// Hooks that may answer a question for the person, run just before they
/// would be asked (Claude Code's `PermissionRequest`). Only a run with a
/// person to ask consults them: where nobody can be asked, what would be
/// asked is refused as before.
#[async_trait]
pub trait AskHook: Send + Sync {
    /// Their answer to `request`.
    async fn before_asking(&self, request: &ApprovalRequest) -> HookAnswer;
}

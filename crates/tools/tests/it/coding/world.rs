//! The world the coding-tool tests run in: a temporary folder holding the
//! working directory `ws/` and a folder `outside/` beside it, a run to call
//! from, and a scripted person who answers approval requests.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::Value;
use seri_core::{AgentId, SessionId};
use seri_prompt::ContextStrategy;
use seri_tools::{
    ApprovalRequest, Approver, Decision, InMemorySessions, PermissionFlags, PermissionPolicy, Permissions, RunContext,
    RunKind, RunRef, ToolContext, ToolError, ToolOutcome, ToolRegistry, Workspace,
};
use tempfile::TempDir;

use crate::fixture::RUN;

pub(crate) struct World {
    _dir: TempDir,
    /// The working directory, canonical.
    pub(crate) root: PathBuf,
    /// A folder beside it, canonical.
    pub(crate) outside: PathBuf,
    pub(crate) workspace: Workspace,
    sessions: InMemorySessions,
    run: RunContext,
}

impl World {
    pub(crate) fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("ws")).unwrap();
        std::fs::create_dir(dir.path().join("outside")).unwrap();
        let root = std::fs::canonicalize(dir.path().join("ws")).unwrap();
        let outside = std::fs::canonicalize(dir.path().join("outside")).unwrap();
        let workspace = Workspace::new(&root).unwrap();
        let run = RunContext {
            session_id: SessionId::from_bytes([0x11; 16]),
            agent_id: AgentId::local(),
            strategy: ContextStrategy::Continue,
            run: Some(RunRef { id: RUN, kind: RunKind::Interactive, parked_children: 0 }),
        };
        Self { _dir: dir, root, outside, workspace, sessions: InMemorySessions::new(Path::new("/nonexistent")), run }
    }

    /// Writes a file under the working directory, creating folders.
    pub(crate) fn write(&self, relative: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        let path = self.root.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, contents).unwrap();
        path
    }

    /// A file's text under the working directory.
    pub(crate) fn read(&self, relative: &str) -> String {
        std::fs::read_to_string(self.root.join(relative)).unwrap()
    }

    /// Every name in a folder, sorted.
    pub(crate) fn names_in(&self, folder: &Path) -> Vec<String> {
        let mut names: Vec<String> =
            std::fs::read_dir(folder).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        names
    }

    /// Calls a tool as a trusted run (`--yes`), for tests about what the
    /// tools do rather than whether they may.
    pub(crate) async fn call(&self, tool: &str, input: Value) -> Result<ToolOutcome, ToolError> {
        self.call_with(&trusted(), tool, input).await
    }

    /// Calls a tool under the given permissions.
    pub(crate) async fn call_with(
        &self,
        permissions: &Permissions,
        tool: &str,
        input: Value,
    ) -> Result<ToolOutcome, ToolError> {
        self.call_in(&self.workspace, permissions, tool, input).await
    }

    /// Calls a tool in another workspace (one with allowed roots).
    pub(crate) async fn call_in(
        &self,
        workspace: &Workspace,
        permissions: &Permissions,
        tool: &str,
        input: Value,
    ) -> Result<ToolOutcome, ToolError> {
        self.call_through(&ToolRegistry::with_coding_tools(), workspace, permissions, tool, input).await
    }

    /// Calls a tool of `registry` (one with secrets, a configured `bash`).
    pub(crate) async fn call_through(
        &self,
        registry: &ToolRegistry,
        workspace: &Workspace,
        permissions: &Permissions,
        tool: &str,
        input: Value,
    ) -> Result<ToolOutcome, ToolError> {
        let ctx = ToolContext { run: &self.run, access: &self.sessions, workspace, permissions, call: None };
        registry.call(ctx, tool, input).await
    }
}

/// A result as one string: `ok: TEXT` or `error: TEXT`.
pub(crate) fn shown(result: Result<ToolOutcome, ToolError>) -> String {
    match result {
        Ok(outcome) => format!("ok: {}", outcome.text),
        Err(error) => format!("error: {error}"),
    }
}

/// The default policy with flags applied.
pub(crate) fn policy(allow: &[&str], deny: &[&str], yes: bool) -> PermissionPolicy {
    let mut policy = PermissionPolicy::new();
    let names = |list: &[&str]| list.iter().map(|s| (*s).to_owned()).collect();
    policy.apply_flags(&PermissionFlags { allow: names(allow), deny: names(deny), yes, mode: None }).unwrap();
    policy
}

/// A headless `--yes` run.
pub(crate) fn trusted() -> Permissions {
    Permissions::headless(policy(&[], &[], true))
}

/// A person at the REPL who gives the same answer to every request and
/// remembers what they were asked. `on_ask` runs while they "think".
pub(crate) struct Person {
    answer: Decision,
    asked: Mutex<Vec<ApprovalRequest>>,
    on_ask: Box<dyn Fn() + Send + Sync>,
}

impl Person {
    pub(crate) fn answering(answer: Decision) -> Arc<Self> {
        Arc::new(Self { answer, asked: Mutex::new(Vec::new()), on_ask: Box::new(|| {}) })
    }

    pub(crate) fn answering_after(answer: Decision, on_ask: impl Fn() + Send + Sync + 'static) -> Arc<Self> {
        Arc::new(Self { answer, asked: Mutex::new(Vec::new()), on_ask: Box::new(on_ask) })
    }

    /// The summaries of what they were asked, in order.
    pub(crate) fn asked(&self) -> Vec<String> {
        self.asked.lock().unwrap().iter().map(ApprovalRequest::summary).collect()
    }

    /// The requests themselves.
    pub(crate) fn requests(&self) -> Vec<ApprovalRequest> {
        self.asked.lock().unwrap().clone()
    }
}

#[async_trait]
impl Approver for Person {
    async fn approve(&self, request: &ApprovalRequest) -> Decision {
        self.asked.lock().unwrap().push(request.clone());
        (self.on_ask)();
        self.answer.clone()
    }
}

/// The REPL with this person and policy.
pub(crate) fn interactive(person: &Arc<Person>, policy: PermissionPolicy) -> Permissions {
    Permissions::interactive(policy, person.clone())
}

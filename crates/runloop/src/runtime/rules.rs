//! Glob rules firing: after a turn's tool calls, each rule covering a path
//! a call read or wrote arrives as a message, once per session
//! (crate::rules says how paths match).

use std::path::PathBuf;
use std::sync::Arc;

use seri_core::{Actor, EventBody, Message, MessageMeta, Role, SessionId, ToolCall};
use seri_prompt::FiredRule;
use seri_tools::Workspace;
use seri_tools::coding::{edit, read_file, write_file};

use super::Runtime;
use super::run::RunState;
use crate::error::RunError;
use crate::protocol::{RunEvent, RunObserver};
use crate::rules::GlobRules;

/// The file a call read or wrote, as the model wrote it: the `path` of
/// `read_file`, `write_file` and `edit`. Listings and searches look at
/// many files without working on one, so they fire nothing.
pub(super) fn file_of(call: &ToolCall) -> Option<&str> {
    [read_file::NAME, write_file::NAME, edit::NAME]
        .contains(&call.name.as_str())
        .then(|| call.arguments.get("path")?.as_str())
        .flatten()
}

impl Runtime {
    /// Notes the file a call that succeeded worked on, for
    /// [`Runtime::fire_rules`] at the end of the turn.
    pub(super) fn note_touched(&self, workspace: &Workspace, call: &ToolCall, state: &mut RunState) {
        if let Some(written) = file_of(call)
            && let Ok(resolved) = workspace.resolve(written, "path")
        {
            state.touched.push(resolved.path);
        }
    }

    /// Appends a message for each glob rule that covers a file this turn's
    /// calls worked on and has not fired in the session yet.
    pub(super) fn fire_rules(
        &self,
        session_id: SessionId,
        cwd: &str,
        state: &mut RunState,
        observer: &dyn RunObserver,
    ) -> Result<(), RunError> {
        let touched: Vec<PathBuf> = std::mem::take(&mut state.touched);
        if touched.is_empty() {
            return Ok(());
        }
        let rules = state.rules.get_or_insert_with(|| Arc::new(self.glob_rules(cwd, observer))).clone();
        let mut due = Vec::new();
        for path in &touched {
            for rule in rules.matching(path) {
                if !due.iter().any(|(due, _): &(&crate::rules::GlobRule, _)| due.path() == rule.path()) {
                    due.push((rule, rules.relative(path).to_string_lossy().into_owned()));
                }
            }
        }
        if due.is_empty() {
            return Ok(());
        }
        // A rule fired before the newest compaction had its message replaced
        // by the recap: it fires again, so its text is in the context
        // whenever it applies. The run's record is read again after a
        // compaction moves where the context starts.
        let store = self.inner.store.agent(&self.inner.agent);
        let since = store
            .context_marks(session_id, seri_core::Seq::LAST, 64)?
            .iter()
            .rev()
            .find_map(|e| match &e.body {
                EventBody::ContextCompacted(c) => Some(c.kept_from_seq),
                _ => None,
            })
            .unwrap_or(seri_core::Seq::FIRST);
        if state.fired.as_ref().is_none_or(|(from, _)| *from != since) {
            state.fired = Some((since, store.fired_rules_since(session_id, since)?));
        }
        let Some((_, fired)) = state.fired.as_mut() else { return Ok(()) };
        due.retain(|(rule, _)| !fired.contains(rule.path()));
        if due.is_empty() {
            return Ok(());
        }
        let bodies = due.iter().map(|(rule, touched)| {
            let content = FiredRule { path: rule.path(), globs: rule.globs(), touched, text: rule.text() }.to_string();
            EventBody::Message(Message {
                role: Role::User,
                actor: Actor::System,
                content,
                meta: Some(Box::new(MessageMeta { rule: Some(rule.path().to_owned()), ..MessageMeta::default() })),
                ..Message::default()
            })
        });
        self.inner.leases.append(session_id, bodies.collect::<Vec<_>>())?;
        fired.extend(due.iter().map(|(rule, _)| rule.path().to_owned()));
        self.inner.notifier.session_changed(session_id);
        for (rule, touched) in due {
            observer.event(RunEvent::RuleFired { path: rule.path().to_owned(), touched });
        }
        Ok(())
    }

    /// The glob rules of `cwd`, read once per run. A rule file that cannot
    /// be read now (it was edited since the session started) leaves the
    /// run without glob rules, with a notice, rather than failing it.
    fn glob_rules(&self, cwd: &str, observer: &dyn RunObserver) -> GlobRules {
        let Some(prompts) = &self.inner.session_prompts else {
            return GlobRules::default();
        };
        prompts.glob_rules(cwd).unwrap_or_else(|error| {
            tracing::warn!(%error, "glob rules skipped for this run");
            observer.event(RunEvent::RulesSkipped { error: error.to_string() });
            GlobRules::default()
        })
    }
}

//! The status line, as Claude Code's `statusLine`: a command given the
//! session as JSON, whose first line the REPL shows before each prompt and
//! beside the spinner while a turn runs.

use crate::repl::Repl;

/// How long the status line's command may take before the prompt is
/// drawn without it.
const TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// How often, at most, the status line is made again while a turn runs.
pub(super) const REFRESH: std::time::Duration = std::time::Duration::from_millis(300);

impl Repl<'_> {
    /// The status line's command and padding: config.json's `statusLine`,
    /// else Claude Code's settings'.
    pub(super) fn status_command(&self) -> Option<(String, usize)> {
        match &self.app.config.status_line {
            Some(line) => Some((line.command.clone(), usize::from(line.padding.unwrap_or(0)))),
            None => Some((self.app.claude.status_line()?.to_owned(), 0)),
        }
    }

    /// The status line (`statusLine` of config.json, else of Claude Code's
    /// settings): the first line its command prints, given the session as
    /// Claude Code gives it (model, folders, cost, context use, session
    /// id, transcript), run as a hook is; `None` without a command or a
    /// session, or when it failed (logged).
    pub(super) async fn status_line(&self) -> Option<String> {
        let (command, padding) = self.status_command()?;
        let id = self.session?;
        let info = self.app.store.agent(&self.app.agent).info(id).ok()?;
        let model = self.runtime.session_model(&info);
        let window = self.runtime.session_context_window(&info);
        let used = info.last_usage.map(|usage| {
            seri_prompt::ContextUsage::new(
                usage.prompt_tokens(),
                std::num::NonZeroU64::new(window).unwrap_or(std::num::NonZeroU64::MIN),
            )
            .percent()
        });
        let known = self.cost_so_far.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone();
        let totals = super::commands::cost::totals_from(self.app, id, known).ok()?;
        *self.cost_so_far.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = totals.clone();
        let project = crate::prompt_files::repository_root(std::path::Path::new(&info.cwd));
        // An answer without usage makes the sums unknown, not smaller.
        let known = totals.unreported == 0;
        let tokens = |n: u64| known.then_some(n);
        let fields = serde_json::json!({
            "model": {"id": model.model, "display_name": model.model, "provider": model.provider},
            "workspace": {"current_dir": info.cwd, "project_dir": project.to_string_lossy()},
            "version": env!("CARGO_PKG_VERSION"),
            // Unknown is not zero: null when a model has no price or an answer no usage.
            "cost": {
                "total_cost_usd": totals.cost.filter(|_| known),
                "total_input_tokens": tokens(totals.usage.input + totals.usage.cache_read + totals.usage.cache_write),
                "total_output_tokens": tokens(totals.usage.output),
            },
            "context_window": {"context_window_size": window, "used_percentage": used},
        });
        let line = self.runtime.status_line(&command, TIMEOUT, id, fields).await.ok()??;
        Some(format!("{}{line}", " ".repeat(padding)))
    }
}

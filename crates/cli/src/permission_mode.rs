//! The REPL's permission mode: Shift+Tab at the prompt cycles it (default,
//! accept-edits, plan, and bypass when the run started in it), the prompt
//! shows it, and after a turn in plan mode the person is asked whether to
//! leave plan mode and carry out the plan. The mode itself is the session's
//! `permission_mode_changed` event; this module only asks and shows.

use std::sync::{Arc, Mutex, PoisonError};

use rustyline::{Cmd, ConditionalEventHandler, Event, EventContext, EventHandler, KeyCode, KeyEvent, Modifiers};
use seri_core::PermissionMode;

use crate::render::Style;

/// The line as it was when Shift+Tab was pressed; taken by the REPL, which
/// then cycles the mode and reads the line again with the new prompt.
#[derive(Clone, Default)]
pub(crate) struct ShiftTab(Arc<Mutex<Option<String>>>);

impl ShiftTab {
    /// Binds Shift+Tab in `editor` to end the read, keeping the line.
    pub(crate) fn bind<H: rustyline::Helper, I: rustyline::history::History>(
        &self,
        editor: &mut rustyline::Editor<H, I>,
    ) {
        editor.bind_sequence(
            KeyEvent(KeyCode::BackTab, Modifiers::NONE),
            EventHandler::Conditional(Box::new(self.clone())),
        );
    }

    /// The line typed before Shift+Tab was pressed, if it was.
    pub(crate) fn take(&self) -> Option<String> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).take()
    }
}

impl ConditionalEventHandler for ShiftTab {
    fn handle(&self, _: &Event, _: rustyline::RepeatCount, _: bool, ctx: &EventContext) -> Option<Cmd> {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Some(ctx.line().to_owned());
        // Ends the read as Ctrl-C does; the REPL tells the two apart by
        // the line kept here.
        Some(Cmd::Interrupt)
    }
}

/// The mode as the prompt shows it, before the `›`: nothing for the
/// default mode.
pub(crate) fn prompt_label(mode: PermissionMode, style: Style) -> String {
    match mode {
        PermissionMode::Default => String::new(),
        PermissionMode::AcceptEdits => format!("{} ", style.green("accept-edits")),
        PermissionMode::Plan => format!("{} ", style.cyan("plan")),
        PermissionMode::Bypass => format!("{} ", style.red("bypass")),
    }
}

/// The line printed when the mode changes.
pub(crate) fn changed_line(mode: PermissionMode) -> String {
    let what = match mode {
        PermissionMode::Default => "tools ask as configured",
        PermissionMode::AcceptEdits => "file edits in this folder run without asking",
        PermissionMode::Plan => "only reading tools run; the agent proposes a plan",
        PermissionMode::Bypass => "nothing asks (deny still refuses)",
    };
    format!("permission mode: {mode}: {what} (Shift+Tab cycles)")
}

/// What the person answered when asked to leave plan mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PlanAnswer {
    /// Leave plan mode for this mode and carry the plan out.
    Go(PermissionMode),
    /// Stay in plan mode; the person says what to change at the prompt.
    Stay,
}

/// The question asked after a turn in plan mode.
pub(crate) const LEAVE_PLAN_QUESTION: &str =
    "Carry out this plan? [y] yes, asking before changes · [a] yes, accepting edits · [n] no, keep planning: ";

/// Reads the answer to [`LEAVE_PLAN_QUESTION`]: `y`/`yes`, `a`, else stay.
pub(crate) fn plan_answer(line: &str) -> PlanAnswer {
    match line.trim().to_ascii_lowercase().as_str() {
        "y" | "yes" => PlanAnswer::Go(PermissionMode::Default),
        "a" | "accept" | "accept-edits" => PlanAnswer::Go(PermissionMode::AcceptEdits),
        _ => PlanAnswer::Stay,
    }
}

/// `--permission-mode`, recorded on `session` (a headless run's) when it
/// is not the session's mode already: the mode a session ran under is in
/// its events.
pub(crate) fn record_flag(
    app: &crate::app::App,
    runtime: &seri_runloop::Runtime,
    session: seri_core::SessionId,
) -> Result<(), crate::exit::Exit> {
    let Some(mode) = app.flags.permission_mode.as_deref().and_then(|m| m.parse::<PermissionMode>().ok()) else {
        return Ok(());
    };
    if app.store.agent(&app.agent).info(session)?.permission_mode != Some(mode) {
        runtime.set_permission_mode(session, mode)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yes_and_accept_leave_plan_mode_and_anything_else_stays() {
        assert_eq!(plan_answer("y\n"), PlanAnswer::Go(PermissionMode::Default));
        assert_eq!(plan_answer(" YES "), PlanAnswer::Go(PermissionMode::Default));
        assert_eq!(plan_answer("a"), PlanAnswer::Go(PermissionMode::AcceptEdits));
        assert_eq!(plan_answer("n"), PlanAnswer::Stay);
        assert_eq!(plan_answer(""), PlanAnswer::Stay);
        assert_eq!(plan_answer("change step 2"), PlanAnswer::Stay);
    }
}

//! The REPL on a real pseudo-terminal, and what a test does there, a line
//! each: [`Typing::sees`] what seri printed, [`Typing::types`] a line and
//! Enter, [`Typing::leaves`] with `/exit` and waits for the process to end.
//! Every REPL test starts its session with [`repl`] or [`on_terminal`].

use rexpect::session::{PtySession, spawn_command};

use crate::support::Env;

/// Generous: the first spawn in a cold test run may be slow on a busy machine.
pub(crate) const TIMEOUT_MS: u64 = 30_000;

/// The REPL on a dumb terminal (one that does not edit lines), without
/// colour, every request logged to the profile's request log.
pub(crate) fn repl(env: &Env, args: &[&str]) -> PtySession {
    on_terminal(env, args, "dumb", &[])
}

/// The REPL on a terminal of type `term` (`xterm`: one that edits lines,
/// where completion, the spinner and Esc work), without colour, every
/// request logged to the profile's request log, with `vars` set.
pub(crate) fn on_terminal(env: &Env, args: &[&str], term: &str, vars: &[(&str, &str)]) -> PtySession {
    let mut command = env.seri_on_terminal();
    command.args(args).env("TERM", term).env("NO_COLOR", "1").env("SERI_REQUEST_LOG", env.request_log());
    command.envs(vars.iter().copied());
    spawn_command(command, Some(TIMEOUT_MS)).unwrap()
}

/// A person at the terminal, as a test scripts them.
pub(crate) trait Typing {
    /// Waits until seri printed `text` (failing the test at the timeout).
    fn sees(&mut self, text: &str);
    /// Types `line` and Enter.
    fn types(&mut self, line: &str);
    /// Types `/exit` and waits for seri to end.
    fn leaves(&mut self);
}

impl Typing for PtySession {
    fn sees(&mut self, text: &str) {
        self.exp_string(text).unwrap();
    }

    fn types(&mut self, line: &str) {
        self.send_line(line).unwrap();
    }

    fn leaves(&mut self) {
        self.types("/exit");
        self.exp_eof().unwrap();
    }
}

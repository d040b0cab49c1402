//! Why a tool call failed. Every variant's text is written for the model,
//! which reads it as an error tool result and can act on it.

use crate::access::AccessError;
use crate::permissions::Denial;
use seri_core::{CommandExit, CommandRun, ToolFacts};

/// A failed tool call. Its `Display` is the tool result the model reads.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// The input is wrong; the error names the field and what was wrong.
    #[error(transparent)]
    Input(#[from] InputError),
    /// The input is well formed but the session's state refuses the call.
    #[error(transparent)]
    Refused(#[from] Refusal),
    /// No tool has this name.
    #[error("there is no tool named `{name}`")]
    UnknownTool {
        /// The name the model used, cut like [`InputError::problem`]
        /// (build it with [`ToolError::unknown_tool`]).
        name: String,
    },
    /// The tool exists but its availability rule refuses this run.
    #[error("`{name}` is not available to this run: {reason}")]
    Unavailable {
        /// The tool.
        name: String,
        /// Which rule refused, in a sentence.
        reason: &'static str,
    },
    /// The store failed. Not the model's fault; it may retry.
    #[error(transparent)]
    Access(#[from] AccessError),
    /// The permission layer refused the action. The run loop records
    /// [`Denial::event`] after the error result.
    #[error(transparent)]
    Denied(#[from] Denial),
    /// The filesystem or the process failed (disk full, a file unreadable
    /// to seri). Not the input's fault.
    #[error("{doing}: {source}")]
    Io {
        /// What the tool was doing: `could not write src/lib.rs`.
        doing: String,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// The tool ran and failed for a reason of its own: an MCP server's
    /// error result, a server that stopped or did not answer in time.
    #[error("{0}")]
    Failed(String),
    /// The tool panicked (a bug in seri or a library it uses); the run
    /// loop turns the panic into this, so it fails the call and nothing
    /// more. Build it with [`ToolError::panicked`].
    #[error(
        "`{name}` stopped on an internal error in seri, not a fault of your input ({message}). What it did before it stopped is unknown: check before relying on it, or do the work another way."
    )]
    Panicked {
        /// The tool, as the model named it (cut).
        name: String,
        /// The panic's message (cut: it may quote the input).
        message: String,
    },
    /// A command ran past its timeout; its whole process group was killed.
    #[error(
        "the command did not finish within {timeout_ms} ms, so it and every process it started were killed. Give a larger timeoutMs if it needs longer, or make it faster.\n{output}"
    )]
    TimedOut {
        /// The timeout it had.
        timeout_ms: u64,
        /// What it printed before it was killed, capped like any output.
        output: String,
        /// How long it ran before it was killed.
        duration: std::time::Duration,
        /// The command (for the facts; the text does not repeat it).
        command: String,
        /// The last lines it printed, for a person.
        tail: String,
        /// How many lines it printed.
        lines: u64,
    },
}

impl ToolError {
    /// The permission layer's refusal, if this is one: the run loop appends
    /// its [`Denial::event`] after the error result.
    pub fn denial(&self) -> Option<&Denial> {
        match self {
            ToolError::Denied(denial) => Some(denial),
            _ => None,
        }
    }

    /// What the command a failed call ran came to, if it ran one: a
    /// command killed at its timeout.
    pub fn facts(&self) -> Option<ToolFacts> {
        match self {
            ToolError::TimedOut { timeout_ms, duration, command, tail, lines, .. } => {
                Some(ToolFacts::Command(CommandRun {
                    command: command.clone(),
                    exit: CommandExit::Timeout,
                    timeout: *timeout_ms,
                    duration: u64::try_from(duration.as_millis()).unwrap_or(u64::MAX),
                    tail: tail.clone(),
                    lines: *lines,
                }))
            }
            _ => None,
        }
    }

    /// No tool is named `name`; the name is quoted cut like
    /// [`InputError::problem`] (a model can send a megabyte of name).
    pub fn unknown_tool(name: &str) -> Self {
        ToolError::UnknownTool { name: bounded(name.to_owned()) }
    }

    /// The call of tool `name` panicked with `payload`: its message, cut
    /// like [`InputError::problem`].
    pub fn panicked(name: &str, payload: &(dyn std::any::Any + Send)) -> Self {
        let message = payload
            .downcast_ref::<&str>()
            .map(|m| (*m).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "no message".to_owned());
        ToolError::Panicked { name: bounded(name.to_owned()), message: bounded(message) }
    }

    /// The same error with `secrets` redacted from every text it carries
    /// that a tool's process or server wrote (or that quotes one).
    pub(crate) fn redacted(self, secrets: &crate::secrets::Secrets) -> Self {
        let r = |text: String| match secrets.redact(&text) {
            std::borrow::Cow::Owned(redacted) => redacted,
            std::borrow::Cow::Borrowed(_) => text,
        };
        match self {
            ToolError::Input(InputError { field, problem }) => {
                ToolError::Input(InputError { field, problem: r(problem) })
            }
            ToolError::Io { doing, source } => {
                let said = source.to_string();
                let source = match secrets.redact(&said) {
                    std::borrow::Cow::Owned(redacted) => std::io::Error::new(source.kind(), redacted),
                    std::borrow::Cow::Borrowed(_) => source,
                };
                ToolError::Io { doing: r(doing), source }
            }
            ToolError::Failed(text) => ToolError::Failed(r(text)),
            ToolError::Panicked { name, message } => ToolError::Panicked { name, message: r(message) },
            ToolError::TimedOut { timeout_ms, output, duration, command, tail, lines } => ToolError::TimedOut {
                timeout_ms,
                output: r(output),
                duration,
                command: r(command),
                tail: r(tail),
                lines,
            },
            other @ (ToolError::Refused(_)
            | ToolError::UnknownTool { .. }
            | ToolError::Unavailable { .. }
            | ToolError::Access(_)
            | ToolError::Denied(_)) => other,
        }
    }

    /// An IO failure while `doing` something (cut like
    /// [`InputError::problem`]: it may name a path the model wrote).
    pub(crate) fn io(doing: impl Into<String>, source: std::io::Error) -> Self {
        ToolError::Io { doing: bounded(doing.into()), source }
    }
}

/// A field of the input is wrong.
///
/// `field` is a path into the input as the model wrote it: `title`,
/// `handoff.decisions[2]`, `sources[0].path`. The empty path is the input
/// itself.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {problem}", display_field(field))]
pub struct InputError {
    /// Where in the input.
    pub field: String,
    /// What was wrong, and when it helps, what would be right.
    pub problem: String,
}

fn display_field(field: &str) -> String {
    if field.is_empty() { "input".to_owned() } else { format!("`{field}`") }
}

impl InputError {
    /// An error at `field`. A problem longer than [`MAX_PROBLEM_BYTES`]
    /// (it quotes what the model sent: a 10 MB path, a runaway pattern) is
    /// cut in the middle, saying how much, so an error never repeats a
    /// whole bad argument back into the context.
    pub fn new(field: impl Into<String>, problem: impl Into<String>) -> Self {
        Self { field: field.into(), problem: bounded(problem.into()) }
    }
}

/// The most bytes of a problem an error keeps: a few hundred, enough for
/// every message seri writes and the start and end of anything it quotes.
pub const MAX_PROBLEM_BYTES: usize = 600;

/// `text`, or, when it is longer than [`MAX_PROBLEM_BYTES`], its first
/// and last bytes around `… (N bytes left out) …`, cut on character
/// boundaries: how anything the model sent is quoted back to it.
pub fn bounded(text: String) -> String {
    if text.len() <= MAX_PROBLEM_BYTES {
        return text;
    }
    let head_end = (0..=MAX_PROBLEM_BYTES * 4 / 5).rev().find(|i| text.is_char_boundary(*i)).unwrap_or(0);
    let tail_start =
        (text.len() - MAX_PROBLEM_BYTES / 6..text.len()).find(|i| text.is_char_boundary(*i)).unwrap_or(text.len());
    format!("{} … ({} bytes left out) … {}", &text[..head_end], tail_start - head_end, &text[tail_start..])
}

#[cfg(test)]
mod bounded_tests {
    use super::*;

    #[test]
    fn a_long_problem_keeps_its_ends_and_says_how_much_was_cut() {
        let err = InputError::new("path", format!("`{}` does not exist", "a".repeat(10_000_000)));
        let text = err.to_string();
        assert!(text.len() < MAX_PROBLEM_BYTES + 100, "{} bytes", text.len());
        assert!(text.starts_with("`path`: `aaaa"), "{text}");
        assert!(text.ends_with("aaaa` does not exist"), "{text}");
        let left_out: usize = text.split(" … (").nth(1).and_then(|r| r.split(' ').next()).unwrap().parse().unwrap();
        // What was kept plus what was left out is the whole message:
        // "`path`: `" (9), the path, "` does not exist" (16).
        let kept = text.len() - " … ( bytes left out) … ".len() - left_out.to_string().len();
        assert_eq!(kept + left_out, 9 + 10_000_000 + 16);
        // Short problems are untouched, and cuts fall between characters.
        assert_eq!(InputError::new("x", "fine").to_string(), "`x`: fine");
        let wide = InputError::new("x", "é".repeat(1000)).to_string();
        assert!(wide.contains("bytes left out"));
    }
}

/// A well-formed call that the session's state refuses.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// `status` with the title and description it already has.
    #[error(
        "nothing changed: the session already has this {what} (see <session_status>). Call status only to change the title or description."
    )]
    StatusRestatement {
        /// `title`, `description`, or `title and description`.
        what: &'static str,
    },
    /// `plan` with exactly the plan this run already owns, or closing a plan
    /// that does not exist.
    #[error("nothing changed: {0} (see <plan_state>).")]
    PlanRestatement(&'static str),
    /// `continue_session` with no message from a person or trigger to carry.
    #[error("there is no message from the person in this session for a successor to answer; answer here instead.")]
    NoUserMessage,
    /// `continue_session` right after a continuation: the newest user message
    /// is the copy a continuation put here, so continuing again would loop.
    #[error(
        "this session was just continued into and nobody has said anything since; answer the message here instead of continuing again."
    )]
    JustContinued,
    /// `continue_session` in a turn that delegated: the children it
    /// spawned are parked until the model has read their results.
    #[error(
        "{count} child run(s) you started this turn have not reported to you yet; read their results first, and continue in a later turn if you still need to."
    )]
    ChildrenParked {
        /// How many.
        count: u32,
    },
}

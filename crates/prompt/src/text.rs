//! The prompt pieces, compiled in from the markdown files in `prompts/`.
//!
//! Each file is written for a model: short, concrete, and read by a reviewer
//! exactly as the model reads it. Trailing newlines are part of the files
//! only; `piece` trims them so callers control spacing.

/// What every session's system prompt starts with: how to work and what the
/// per-turn blocks are.
pub const BASE_INSTRUCTIONS: &str = piece(include_str!("../prompts/base.md"));

/// What a continuation is, when to continue, that calling the verb ends the
/// turn, and that `read thread:<id>` recalls exact material. In the system
/// prompt only when the continue strategy is on.
pub const SESSION_CONTINUATION_PROMPT: &str = piece(include_str!("../prompts/session_continuation.md"));

/// The heading placed before the AGENTS.md, rule and memory files.
pub const CONTEXT_FILES_HEADING: &str = piece(include_str!("../prompts/context_files.md"));

/// The heading of the skills' list: what a skill is, and that `skill`
/// loads one when a task needs it.
pub const SKILLS_HEADING: &str = piece(include_str!("../prompts/skills.md"));

/// The verb contracts, used verbatim as the tools' descriptions.
pub mod verbs {
    use super::piece;

    /// `continue_session`: the cases, when not to continue, what the
    /// successor receives, how to write the handoff, and that title and
    /// description are the agent's.
    pub const CONTINUE_SESSION: &str = piece(include_str!("../prompts/verbs/continue_session.md"));
    /// `status`: set the title and description; restatements are refused.
    pub const STATUS: &str = piece(include_str!("../prompts/verbs/status.md"));
    /// `read`: recall a thread exactly, by `thread:<id>` and a seq range.
    pub const READ: &str = piece(include_str!("../prompts/verbs/read.md"));
    /// `plan`: keep the checklist `<plan_state>` shows.
    pub const PLAN: &str = piece(include_str!("../prompts/verbs/plan.md"));
    /// `delegate`: hand a task to a child run; what the child gets, how its
    /// answer comes back, parallel calls, and its own turn budget.
    pub const DELEGATE: &str = piece(include_str!("../prompts/verbs/delegate.md"));
    /// `skill`: load a listed skill's instructions when a task needs them.
    pub const SKILL: &str = piece(include_str!("../prompts/verbs/skill.md"));
    /// `return_result`: how a typed child run hands its value back and ends.
    pub const RETURN_RESULT: &str = piece(include_str!("../prompts/verbs/return_result.md"));
}

/// Tool results the run loop writes itself, where the model reads why a
/// call did not run.
pub mod results {
    use super::piece;

    /// A second `continue_session` in one assistant turn: refused before
    /// anything is created, since the first call already decides where the
    /// conversation goes.
    pub const SECOND_CONTINUATION_REFUSED: &str = piece(include_str!("../prompts/results/second_continuation.md"));
    /// A call a stopped run left without a result, settled by the next
    /// holder of the session: nobody knows whether it took effect.
    pub const INTERRUPTED: &str = piece(include_str!("../prompts/results/interrupted.md"));
    /// After an answer the person cancelled while it was being written,
    /// where it stops: what the model wrote so far is kept.
    pub const ANSWER_INTERRUPTED: &str = piece(include_str!("../prompts/results/answer_interrupted.md"));
    /// A call the person cancelled (with every call after it in its turn)
    /// before it finished.
    pub const CANCELLED: &str = piece(include_str!("../prompts/results/cancelled.md"));
    /// A call stopped because seri was shutting down (a server stopping
    /// with SIGTERM), not because the person asked: the message is answered
    /// once seri runs again, so the model must not read it as a refusal.
    pub const STOPPED: &str = piece(include_str!("../prompts/results/stopped.md"));
    /// A second `return_result` in the turn that already returned a value:
    /// the first value stands.
    pub const ALREADY_RETURNED: &str = piece(include_str!("../prompts/results/already_returned.md"));
    /// A call whose tool asked for a child run outside the `delegate` path:
    /// only `delegate` calls are decided before their turn runs.
    pub const NOT_A_DELEGATION: &str = piece(include_str!("../prompts/results/not_a_delegation.md"));
    /// A call of an MCP tool the session's frozen tool list does not hold
    /// (a server added, or a tool listed, after the session started).
    pub const TOOL_NOT_IN_SESSION: &str = piece(include_str!("../prompts/results/tool_not_in_session.md"));
    /// A `delegate` call made outside any run (nothing to be the parent).
    pub const NO_RUN_TO_DELEGATE_FROM: &str = piece(include_str!("../prompts/results/no_run_to_delegate_from.md"));
}

/// What seri writes when a request outgrew the window and it continued the
/// session itself: the note left in the predecessor, and the pieces of the
/// handoff it writes in the agent's place.
pub mod overflow {
    use super::piece;

    /// The system note appended to the predecessor: which path was taken.
    pub const NOTE: &str = piece(include_str!("../prompts/overflow/note.md"));
    /// The handoff's purpose; `{title}` is the predecessor's title.
    pub const PURPOSE: &str = piece(include_str!("../prompts/overflow/purpose.md"));
    /// The handoff's one caution.
    pub const CAUTION: &str = piece(include_str!("../prompts/overflow/caution.md"));
    /// Why no successor was made: the message is the whole request.
    pub const ALONE: &str = piece(include_str!("../prompts/overflow/alone.md"));
    /// On the continue strategy, appended to the per-turn blocks of the one
    /// turn that offers only `continue_session` after an overflow.
    pub const CONTINUE_NOW: &str = piece(include_str!("../prompts/overflow/continue_now.md"));
    /// The system note appended to the predecessor when the agent continued
    /// in that turn.
    pub const OFFERED: &str = piece(include_str!("../prompts/overflow/offered.md"));
    /// The handoff's caution when it was taken from the context's recap;
    /// `{from}` and `{to}` are the seqs the recap summarised.
    pub const FROM_RECAP: &str = piece(include_str!("../prompts/overflow/from_recap.md"));
    /// The system note appended to the predecessor when the handoff was
    /// taken from the recap.
    pub const NOTE_RECAP: &str = piece(include_str!("../prompts/overflow/note_recap.md"));
}

/// Messages a person's slash command posts on their behalf.
pub mod requests {
    use super::piece;

    /// `/continue [focus]`: continue into a successor now (the agent writes
    /// the handoff); the focus words follow it.
    pub const CONTINUE: &str = piece(include_str!("../prompts/requests/continue.md"));
    /// After a turn in plan mode, the person approved the plan and left
    /// plan mode (the REPL asked them).
    pub const PLAN_APPROVED: &str = piece(include_str!("../prompts/requests/plan_approved.md"));
}

/// Messages the run loop writes when something arrives mid-session.
pub mod rules {
    use super::piece;

    /// Before a glob rule's text, the first time a tool touches a path it
    /// covers: why it arrived now and that it holds from here on.
    pub const FIRED: &str = piece(include_str!("../prompts/rules/fired.md"));
}

/// What a child run is told after its task, in its first message.
pub mod children {
    use super::piece;

    /// A delegated child: its final message is its whole answer.
    pub const DELEGATED: &str = piece(include_str!("../prompts/children/delegated.md"));
    /// A typed child: it must end with `return_result`.
    pub const TYPED: &str = piece(include_str!("../prompts/children/typed.md"));
}

/// The coding tools' contracts, used verbatim as their descriptions. The
/// limits they state are seri-tools' constants; a test there keeps them equal.
pub mod tools {
    use super::piece;

    /// `read_file`: a text file with line numbers, a page at a time.
    pub const READ_FILE: &str = piece(include_str!("../prompts/tools/read_file.md"));
    /// `write_file`: create or replace a whole file, atomically.
    pub const WRITE_FILE: &str = piece(include_str!("../prompts/tools/write_file.md"));
    /// `edit`: replace exact text that occurs once (or every occurrence).
    pub const EDIT: &str = piece(include_str!("../prompts/tools/edit.md"));
    /// `list`: the files under a folder, honouring `.gitignore`.
    pub const LIST: &str = piece(include_str!("../prompts/tools/list.md"));
    /// `grep`: lines matching a regular expression, honouring `.gitignore`.
    pub const GREP: &str = piece(include_str!("../prompts/tools/grep.md"));
    /// `bash`: a command in the working directory, with a timeout.
    pub const BASH: &str = piece(include_str!("../prompts/tools/bash.md"));
    /// `remember`: save a note to memory, for the next sessions.
    pub const REMEMBER: &str = piece(include_str!("../prompts/tools/remember.md"));
}

/// The compaction summarizer's instructions and the pieces of its request.
pub mod compaction {
    use super::piece;

    /// The summarizer's system prompt: who reads the recap, what each frame
    /// of its input holds, to quote literals, not to invent elided payloads,
    /// how to update an existing recap, and the exact four-section answer.
    pub const SUMMARIZER_INSTRUCTIONS: &str = piece(include_str!("../prompts/compaction/summarizer.md"));
    /// The closing request when there is no recap yet.
    pub(crate) const WRITE_RECAP: &str = piece(include_str!("../prompts/compaction/write_recap.md"));
    /// The closing request when a previous recap is being updated.
    pub(crate) const UPDATE_RECAP: &str = piece(include_str!("../prompts/compaction/update_recap.md"));
    /// The sentence inside `<trimmed>`.
    pub(crate) const TRIMMED: &str = piece(include_str!("../prompts/compaction/trimmed.md"));
}

/// The guidance sentences of `<context_usage>`, one per pressure level.
pub(crate) mod context_usage {
    use super::piece;

    pub(crate) const COMFORTABLE: &str = piece(include_str!("../prompts/context_usage/comfortable.md"));
    pub(crate) const FILLING: &str = piece(include_str!("../prompts/context_usage/filling.md"));
    pub(crate) const NEARLY_FULL: &str = piece(include_str!("../prompts/context_usage/nearly_full.md"));
    pub(crate) const FULL: &str = piece(include_str!("../prompts/context_usage/full.md"));
    /// From 70%: what a successor would start with (`{tokens}`, `{percent}`, `{history}`).
    pub(crate) const SUCCESSOR: &str = piece(include_str!("../prompts/context_usage/successor.md"));
}

/// The words of `<permission_mode>`.
pub(crate) mod permission {
    use super::piece;

    /// Plan mode: only reading tools run; end the turn with a plan.
    pub(crate) const PLAN_MODE: &str = piece(include_str!("../prompts/permission/plan_mode.md"));
}

/// A file's text without its trailing whitespace, at compile time.
const fn piece(text: &'static str) -> &'static str {
    let bytes = text.as_bytes();
    let mut end = bytes.len();
    while end > 0 && bytes[end - 1].is_ascii_whitespace() {
        end -= 1;
    }
    match text.split_at_checked(end) {
        Some((head, _)) => head,
        None => text,
    }
}

//! `/rewind` in the REPL: lists the recent turns, asks which one and what
//! to restore (the conversation, the files, or both), says which files
//! changed outside seri's tools since their checkpoint and asks before
//! overwriting them, then reports what it did.
//!
//! `/rewind SEQ [conversation|files|both]` skips the first two questions.
//! The work is `seri_runloop`'s ([`Runtime::plan_rewind`], then a
//! [`Command::Rewind`] submitted like every other command); this is only the
//! conversation with the person, over two callbacks so tests can play the
//! person.

use std::path::{Path, PathBuf};

use seri_core::{Seq, SessionId};
use seri_runloop::{
    Command, CommandError, Quiet, RewindError, RewindPlan, RewindReport, RewindScope, Runtime, Submitted,
};

use crate::exit::Exit;

/// How the dialogue talks to the person.
pub(crate) struct Dialogue<'a> {
    /// Prints one line.
    pub(crate) say: &'a mut dyn FnMut(&str),
    /// Asks a question and returns the answer; `None` when there is none (end of input).
    pub(crate) ask: &'a mut dyn FnMut(&str) -> Option<String>,
    /// The working directory, to show paths inside it relatively.
    pub(crate) cwd: &'a Path,
}

/// Runs `/rewind` with the words after it.
pub(crate) async fn run(
    runtime: &Runtime,
    session: Option<SessionId>,
    args: &str,
    io: &mut Dialogue<'_>,
) -> Result<(), Exit> {
    let Some(session) = session else {
        (io.say)("Nothing to rewind yet: this session has no messages.");
        return Ok(());
    };
    let mut words = args.split_whitespace();
    let (turn, scope) = match words.next() {
        Some(seq) => {
            let Ok(seq) = seq.trim_start_matches('#').parse::<u64>() else {
                (io.say)("usage: /rewind [SEQ [conversation|files|both]]");
                return Ok(());
            };
            let scope = match words.next() {
                None | Some("both") => RewindScope::Both,
                Some("conversation") => RewindScope::Conversation,
                Some("files") => RewindScope::Files,
                Some(other) => {
                    (io.say)(&format!("`{other}` is not conversation, files or both"));
                    return Ok(());
                }
            };
            (Seq(seq), scope)
        }
        None => match choose(runtime, session, io)? {
            Some(choice) => choice,
            None => return Ok(()),
        },
    };
    let plan = match runtime.plan_rewind(session, turn, scope) {
        Ok(plan) => plan,
        Err(e) => {
            (io.say)(&refusal(&e));
            return Ok(());
        }
    };
    let Some(overwrite) = confirm_overwrites(&plan, io) else {
        (io.say)("Nothing was changed.");
        return Ok(());
    };
    let command = Command::Rewind { plan: plan.clone(), overwrite_changed: overwrite };
    match runtime.submit(command, &Quiet).await {
        Ok(Submitted::Rewound(report)) => {
            for line in report_lines(&plan, &report, io.cwd) {
                (io.say)(&line);
            }
        }
        Ok(_) => {}
        Err(CommandError::Rewind(e)) => (io.say)(&refusal(&e)),
        Err(CommandError::Run(e)) => (io.say)(&refusal(&RewindError::Run(e))),
    }
    Ok(())
}

/// Lists the turns and asks for one and a scope; `None` when the person cancels.
fn choose(runtime: &Runtime, session: SessionId, io: &mut Dialogue<'_>) -> Result<Option<(Seq, RewindScope)>, Exit> {
    let listed = runtime.rewind_turns(session).map_err(|e| Exit::Failure(e.into()))?;
    if let Some(seq) = listed.compacted_at {
        (io.say)(&format!(
            "The conversation was compacted at seq {seq}: /rewind will not step across a compaction, so earlier turns \
             are not offered."
        ));
    }
    if listed.turns.is_empty() {
        (io.say)("No turn to rewind to.");
        return Ok(None);
    }
    (io.say)("Turns you can rewind to before (newest last):");
    for (i, turn) in listed.turns.iter().enumerate() {
        let files = if turn.files.is_empty() {
            String::new()
        } else {
            let names: Vec<String> = turn.files.iter().map(|p| shown(p, io.cwd)).collect();
            format!("  files changed since: {}", names.join(", "))
        };
        (io.say)(&format!("{:>3}. seq {:<5} \u{201c}{}\u{201d}{files}", i + 1, turn.seq, turn.preview));
    }
    let count = listed.turns.len();
    let Some(answer) = (io.ask)(&format!("Rewind to before which turn? [1-{count}, Enter to cancel] ")) else {
        return Ok(None);
    };
    let index = match answer.trim().parse::<usize>() {
        Ok(n) if (1..=count).contains(&n) => n - 1,
        _ => {
            (io.say)("Nothing was changed.");
            return Ok(None);
        }
    };
    let scope = match (io.ask)("Restore [b]oth, the [c]onversation, or the [f]iles? [b] ").as_deref().map(str::trim) {
        None => return Ok(None),
        Some("" | "b" | "both") => RewindScope::Both,
        Some("c" | "conversation") => RewindScope::Conversation,
        Some("f" | "files") => RewindScope::Files,
        Some(other) => {
            (io.say)(&format!("`{other}` is not b, c or f; nothing was changed."));
            return Ok(None);
        }
    };
    Ok(Some((listed.turns[index].seq, scope)))
}

/// Says which files changed outside seri's tools and asks before
/// overwriting them. `Some(false)`: nothing needs asking; `Some(true)`:
/// the person said yes; `None`: they said no.
fn confirm_overwrites(plan: &RewindPlan, io: &mut Dialogue<'_>) -> Option<bool> {
    let changed = plan.changed_outside();
    if changed.is_empty() {
        return Some(false);
    }
    for restore in &changed {
        (io.say)(&format!(
            "{} changed outside seri's tools since its checkpoint (by you, an editor or a bash command); restoring \
             overwrites that change.",
            shown(&restore.path, io.cwd)
        ));
    }
    let question = if changed.len() == 1 { "Overwrite it? [y/N] " } else { "Overwrite them? [y/N] " };
    match (io.ask)(question).map(|a| a.trim().to_lowercase()).as_deref() {
        Some("y" | "yes") => Some(true),
        _ => None,
    }
}

/// What a finished rewind tells the person.
pub(crate) fn report_lines(plan: &RewindPlan, report: &RewindReport, cwd: &Path) -> Vec<String> {
    let mut lines = Vec::new();
    if let Some(to) = report.conversation_to {
        lines.push(format!(
            "Rewound the conversation to before seq {} (it continues from seq {to}); the rewound turns stay in the \
             transcript (seri thread) but the model no longer sees them.",
            plan.turn_seq
        ));
    }
    let names = |paths: &[PathBuf]| paths.iter().map(|p| shown(p, cwd)).collect::<Vec<_>>().join(", ");
    if !report.restored.is_empty() {
        lines.push(format!("Restored {}.", names(&report.restored)));
    }
    if !report.removed.is_empty() {
        lines.push(format!("Removed {} (created from that turn on).", names(&report.removed)));
    }
    if !report.unrestorable.is_empty() {
        lines.push(format!("Left {} as it is: too large to have been checkpointed.", names(&report.unrestorable)));
    }
    if plan.scope == RewindScope::Files && report.restored.is_empty() && report.removed.is_empty() {
        lines.push("No file seri's tools changed from that turn on needs restoring.".to_owned());
    }
    if plan.scope.files() {
        lines.push("Changes made by bash commands are not checkpointed and were not undone.".to_owned());
    }
    lines
}

/// A refusal or failure, as one sentence.
fn refusal(e: &RewindError) -> String {
    let text = e.to_string();
    match text.strip_prefix("cannot ") {
        Some(rest) => format!("Cannot {rest}."),
        None => format!("Cannot rewind: {text}."),
    }
}

/// A path relative to the working directory when it is inside it.
fn shown(path: &Path, cwd: &Path) -> String {
    path.strip_prefix(cwd).unwrap_or(path).display().to_string()
}

#[cfg(test)]
mod tests {
    use seri_store::FileState;

    use super::*;

    fn plan(scope: RewindScope) -> RewindPlan {
        RewindPlan {
            session_id: "01937b2e-0000-7000-8000-000000000002".parse().unwrap(),
            turn_seq: Seq(9),
            scope,
            restores: vec![seri_runloop::FileRestore {
                path: PathBuf::from("/w/notes.txt"),
                to: FileState::of(Some(b"v1")),
                now: FileState::of(Some(b"by hand")),
                left_by_seri: Some(FileState::of(Some(b"v2"))),
            }],
            unrestorable: Vec::new(),
        }
    }

    #[test]
    fn a_file_changed_outside_seri_is_named_and_needs_a_yes() {
        let plan = plan(RewindScope::Both);
        let mut said = Vec::new();
        let mut asked = Vec::new();
        let answer = {
            let mut say = |line: &str| said.push(line.to_owned());
            let mut ask = |q: &str| {
                asked.push(q.to_owned());
                Some("n".to_owned())
            };
            let mut io = Dialogue { say: &mut say, ask: &mut ask, cwd: Path::new("/w") };
            confirm_overwrites(&plan, &mut io)
        };
        assert_eq!(answer, None);
        assert_eq!(
            said,
            ["notes.txt changed outside seri's tools since its checkpoint (by you, an editor or a bash command); \
              restoring overwrites that change."]
        );
        assert_eq!(asked, ["Overwrite it? [y/N] "]);
    }

    #[test]
    fn the_report_says_what_was_restored_and_where_the_conversation_continues() {
        let plan = plan(RewindScope::Both);
        let report = RewindReport {
            restored: vec![PathBuf::from("/w/notes.txt")],
            removed: vec![PathBuf::from("/w/extra.txt")],
            unrestorable: Vec::new(),
            conversation_to: Some(Seq(8)),
        };
        insta::assert_snapshot!("rewind_both_report", report_lines(&plan, &report, Path::new("/w")).join("\n"));
    }
}

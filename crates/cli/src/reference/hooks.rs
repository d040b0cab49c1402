//! `docs/src/reference/hooks.md`: every hook event and the fields of the
//! JSON its commands read on standard input. The events are
//! `HookEvent::ALL`; the fields every event has and a tool call's are
//! those `base_input` and `tool_fields` write (a field they gain without a
//! line here fails the test); what each event adds is matched per event,
//! so a new event does not compile until it is described here.

use seri_core::{PermissionMode, SessionId};
use seri_runloop::shell_hooks::{HookEvent, base_input, claude_name, tool_fields};

use super::{cell, check_fresh, codes, header};

/// What an event is and what a block does there.
fn event_words(event: HookEvent) -> (&'static str, &'static str) {
    match event {
        HookEvent::PreToolUse => (
            "before a tool call runs, and before any permission question",
            "refuses the call; the model reads the hook's words",
        ),
        HookEvent::PostToolUse => ("after a tool call that succeeded", "puts the hook's words after the call's result"),
        HookEvent::UserPromptSubmit => (
            "on a message of yours, before it is recorded",
            "drops the message (nothing is sent or stored) and shows you why; what the hook prints on success \
             is added to the message",
        ),
        HookEvent::Stop => (
            "when the agent ends a turn of yours",
            "gives the agent the words and another turn (the next run of the hook gets `stop_hook_active: true`)",
        ),
        HookEvent::SubagentStop => (
            "when a child run (`delegate`) ends its turn",
            "gives the child the words and another turn, as `Stop` does",
        ),
        HookEvent::SessionStart => (
            "when the REPL, `seri -p` or an editor starts a session (matcher: `startup`) or resumes one (`resume`)",
            "nothing: it cannot block; what it prints (or its `additionalContext`) is added to the session's next message",
        ),
        HookEvent::SessionEnd => (
            "when the REPL or `seri -p` is done with a session (matcher: `prompt_input_exit`, `other`)",
            "nothing: it cannot block",
        ),
        HookEvent::PreCompact => (
            "before the working context is compacted (matcher: `manual` for `/compact`, `auto`)",
            "nothing: it cannot block",
        ),
        HookEvent::PreContinue => (
            "before `continue_session` starts a successor (seri's own event)",
            "refuses the continuation; the model reads the hook's words and the session goes on",
        ),
        HookEvent::Notification => (
            "when the REPL or `seri serve` asks a person before a tool acts (matcher: `permission_prompt`), beside the question",
            "nothing: it cannot block",
        ),
        HookEvent::PermissionRequest => (
            "when a tool call is about to ask a person (in the REPL, `seri serve` or an editor; never in `seri -p`, \
             where nobody is asked); matcher: the tool, as `PreToolUse`'s",
            "denies the call for the person, with the hook's words (`hookSpecificOutput.decision.behavior`: \
             `deny` and its `message`, or exit 2); `allow` lets it run unasked; anything else asks the person",
        ),
    }
}

/// Whether an event's input carries the tool call's fields, and the fields
/// it adds of its own, with their meaning.
fn event_fields(event: HookEvent) -> (bool, &'static [(&'static str, &'static str)]) {
    match event {
        HookEvent::PreToolUse => (true, &[]),
        HookEvent::PostToolUse => {
            (true, &[("tool_response", "the call's result: `{\"content\": TEXT, \"success\": true}`")])
        }
        HookEvent::UserPromptSubmit => (false, &[("prompt", "the message as you typed it")]),
        HookEvent::Stop | HookEvent::SubagentStop => (
            false,
            &[
                ("stop_hook_active", "`true` when a Stop hook already kept this turn going"),
                ("last_assistant_message", "the agent's last message of the turn"),
            ],
        ),
        HookEvent::SessionStart => (false, &[("source", "`startup` or `resume`")]),
        HookEvent::SessionEnd => (false, &[("reason", "`prompt_input_exit` (the REPL was left) or `other`")]),
        HookEvent::PreCompact => (
            false,
            &[
                ("trigger", "`manual` (`/compact`) or `auto`"),
                ("custom_instructions", "what `/compact` was given to focus on (empty for `auto`)"),
            ],
        ),
        HookEvent::PreContinue => {
            (false, &[("tool_input", "the `continue_session` call's arguments, as the model gave them")])
        }
        HookEvent::PermissionRequest => (true, &[]),
        HookEvent::Notification => (
            false,
            &[
                ("message", "what seri waits for: `seri needs your permission to use Bash`"),
                ("notification_type", "`permission_prompt`"),
            ],
        ),
    }
}

/// The fields every event has, and a tool call's.
const FIELD_WORDS: &[(&str, &str)] = &[
    ("hook_event_name", "the event, as the table above names it"),
    ("session_id", "the session's full id"),
    (
        "transcript_path",
        "the session as Claude Code's JSONL transcript, written for the hook to read (a file in the temporary \
         folder's `seri-transcripts-UID`, this user's alone); `null` when it could not be written",
    ),
    ("cwd", "the session's working directory"),
    (
        "permission_mode",
        "the session's mode in Claude Code's words: `default`, `acceptEdits`, `plan`, `bypassPermissions`",
    ),
    (
        "tool_name",
        "Claude Code's name of the tool where there is one (`Bash`, `Edit`, `Write`, `Read`, `Grep`, `Glob`), else seri's",
    ),
    ("seri_tool_name", "seri's name of the tool (`bash`, `edit`, `mcp__docs__search`, …)"),
    (
        "tool_input",
        "the call's arguments in Claude Code's names (`Edit`: `file_path` (absolute), `old_string`, `new_string`, \
         `replace_all`; `Write`: `file_path`, `content`; `Bash`: `command`, `timeout`; `Read`: `file_path`, `offset`, \
         `limit`; `Grep`: `pattern`, `path`, `glob`; `Glob`: `pattern`, `path`; `Task`: `prompt`); a tool Claude Code \
         does not have gets seri's arguments",
    ),
    ("seri_tool_input", "the call's arguments as seri's tool takes them (`path`, `old`, `new`, …)"),
];

fn words(field: &str, missing: &mut Vec<String>) -> String {
    match FIELD_WORDS.iter().find(|(name, _)| *name == field) {
        Some((_, words)) => cell(words),
        None => {
            missing.push(field.to_owned());
            String::new()
        }
    }
}

fn keys(value: &serde_json::Value) -> Vec<String> {
    value.as_object().map(|m| m.keys().cloned().collect()).unwrap_or_default()
}

/// The page, and every input field without words.
fn page() -> (String, Vec<String>) {
    let id: SessionId = "01932f4e-8a4b-7c3d-9e2f-0a1b2c3d4e5f".parse().unwrap();
    let mut missing = Vec::new();
    let mut out = header(
        "Hook events",
        "`HookEvent::ALL`, `base_input` and `tool_fields` in `crates/runloop/src/shell_hooks.rs`",
    );
    out.push_str(
        "The events a hook can run at, as `config.json`'s `hooks` names them, and the JSON object each \
         command reads on its standard input. [Hooks](../guide/hooks.md) says how hooks are configured, \
         contained and bounded. Exit code 2 blocks, with the hook's standard error as the words; exit 0 \
         with `{\"decision\": \"block\", \"reason\": …}` (or `{\"hookSpecificOutput\": {\"permissionDecision\": \
         \"deny\", \"permissionDecisionReason\": …}}`) on standard output blocks too. The rest of Claude Code's \
         answer is read as well: `{\"continue\": false, \"stopReason\": …}` ends the run there (it fails, \
         saying the reason); `permissionDecision: \"allow\"` lets a `PreToolUse` call run without asking (a deny \
         rule still refuses it) and `\"ask\"` has you asked about it even when it is allowed (each time; \
         nobody to ask, headless: refused); `hookSpecificOutput.additionalContext` (or plain text printed on exit 0) is added \
         for the model; `suppressOutput` is accepted. An event that cannot block never does.\n\n\
         | event | runs | a block |\n|---|---|---|\n",
    );
    for event in HookEvent::ALL {
        let (runs, block) = event_words(event);
        out.push_str(&format!("| `{}` | {} | {} |\n", event.as_str(), cell(runs), cell(block)));
    }
    let base = base_input(HookEvent::PreToolUse, id, std::path::Path::new("/repo"), PermissionMode::Default);
    let base_keys = keys(&base);
    out.push_str("\n## The fields every event has\n\n| field | what it is |\n|---|---|\n");
    for key in &base_keys {
        out.push_str(&format!("| `{key}` | {} |\n", words(key, &mut missing)));
    }
    let mut call = base.clone();
    tool_fields(
        &mut call,
        "write_file",
        &serde_json::json!({"path": "notes.md", "content": "hello"}),
        std::path::Path::new("/repo"),
    );
    let call_keys: Vec<String> = keys(&call).into_iter().filter(|k| !base_keys.contains(k)).collect();
    out.push_str("\n## A tool call's fields\n\n| field | what it is |\n|---|---|\n");
    for key in &call_keys {
        out.push_str(&format!("| `{key}` | {} |\n", words(key, &mut missing)));
    }
    let tools = ["bash", "edit", "write_file", "read_file", "grep", "list"];
    out.push_str(&format!(
        "\nA hook's `matcher` is a regular expression over the whole tool name, seri's or Claude Code's: {}.\n",
        tools.iter().map(|t| format!("`{t}` is `{}`", claude_name(t).unwrap_or(t))).collect::<Vec<_>>().join(", ")
    ));
    for event in HookEvent::ALL {
        let (tool, own) = event_fields(event);
        out.push_str(&format!("\n## `{}`\n\nIts input: the fields every event has", event.as_str()));
        if tool {
            out.push_str(&format!(", a tool call's ({})", codes(&call_keys)));
        }
        if own.is_empty() {
            out.push_str(".\n");
        } else {
            out.push_str(", and:\n\n| field | what it is |\n|---|---|\n");
            for (field, words) in own {
                out.push_str(&format!("| `{field}` | {} |\n", cell(words)));
            }
        }
    }
    (out, missing)
}

#[test]
fn the_hook_reference_is_fresh_and_every_field_is_described() {
    let (page, missing) = page();
    assert!(missing.is_empty(), "hook input fields without words in reference/hooks.rs: {missing:?}");
    check_fresh("hooks.md", &page);
}

//! The interactive session through a real pseudo-terminal: a message, slash
//! commands, Ctrl-C during a turn, and following a continuation.

use rexpect::session::{PtySession, spawn_command};
use serde_json::json;

use crate::support::{Env, path_str, text};

/// Generous: the first spawn in a cold test run may be slow on a busy machine.
const TIMEOUT_MS: u64 = 30_000;

pub(crate) fn repl(env: &Env, args: &[&str]) -> PtySession {
    on_terminal(env, args, "dumb", &[])
}

/// The REPL on a terminal of type `term` (`xterm`: one that edits lines,
/// where completion, the spinner and Esc work), without colour, every
/// request logged to the profile's request log.
fn on_terminal(env: &Env, args: &[&str], term: &str, vars: &[(&str, &str)]) -> PtySession {
    let mut command = env.seri_on_terminal();
    command.args(args).env("TERM", term).env("NO_COLOR", "1").env("SERI_REQUEST_LOG", env.request_log());
    command.envs(vars.iter().copied());
    spawn_command(command, Some(TIMEOUT_MS)).unwrap()
}

#[test]
fn without_reported_usage_the_meter_is_the_estimate_marked_as_one() {
    let env = Env::new();
    let script = env.script("s.json", json!([text("No usage from me.")]));
    let mut p = repl(&env, &["--script", path_str(&script), "--context-window", "100000"]);
    p.exp_string("/help for commands").unwrap();
    p.send_line("Hi there").unwrap();
    p.exp_string("No usage from me.").unwrap();
    // seri's own system prompt and tools are a few thousand tokens.
    p.exp_regex(r"\[~[1-9][0-9]?%\]").unwrap();
    p.send_line("/cost").unwrap();
    p.exp_string("unreported   1 model turns: the provider reported no usage for them").unwrap();
    p.send_line("/exit").unwrap();
    p.exp_eof().unwrap();
}

#[test]
fn a_message_a_slash_command_and_ctrl_d() {
    let env = Env::new();
    let script = env.script("s.json", json!([{ "text": "Hello, person.", "usage": { "input": 64000, "cache_read": 0, "cache_write": 0, "output": 5 } }]));
    let mut p = repl(&env, &["--script", path_str(&script), "--context-window", "100000"]);
    p.exp_string("/help for commands").unwrap();
    p.send_line("Hi there").unwrap();
    p.exp_string("Hello, person.").unwrap();
    // The context meter leads the prompt once the session has a billed turn.
    p.exp_string("[64%]").unwrap();
    p.send_line("/nonsense").unwrap();
    p.exp_string("unknown command /nonsense; known: /compact /continue /clear /max-turns /rewind /fork /trajectory /status /model /context /cost /permissions /sandbox /config /memory /export /expand /init /sessions /resume /search /mcp /help /exit").unwrap();
    p.send_line("/max-turns 3").unwrap();
    p.exp_string("Up to 3 model turns per task").unwrap();
    p.send_line("/status").unwrap();
    p.exp_string("window       100000 tokens (flag --context-window)").unwrap();
    p.exp_string("max turns    3").unwrap();
    p.send_line("/permissions").unwrap();
    p.exp_string("read_file    allow").unwrap();
    p.exp_string("bash         ask").unwrap();
    p.send_line("/context").unwrap();
    p.exp_string("context      64.0k of 100.0k tokens on the last turn (64%)").unwrap();
    p.exp_string("next request, estimated (characters / 4):").unwrap();
    p.exp_string("  system prompt").unwrap();
    p.exp_string("  tools (").unwrap();
    p.exp_string("  the model's answers (1)").unwrap();
    p.exp_string("  total").unwrap();
    p.send_line("/cost").unwrap();
    p.exp_string("model turns  1").unwrap();
    p.exp_string("input        64000 tokens (0 read from the cache, 0 written to it)").unwrap();
    p.exp_string("output       5 tokens").unwrap();
    p.exp_string("cost         not known: config.json \"prices\" has no price for script/scripted").unwrap();
    p.send_control('d').unwrap();
    p.exp_eof().unwrap();
}

#[test]
fn ctrl_c_cancels_the_running_turn_and_the_session_stays_usable() {
    let env = Env::new();
    let script = env.script(
        "s.json",
        json!([
            { "tool_calls": [{ "id": "c1", "name": "bash", "arguments": { "command": "echo started; sleep 30" } }] },
            text("Still here."),
        ]),
    );
    let mut p = repl(&env, &["--script", path_str(&script), "--allow", "bash"]);
    p.exp_string("/help for commands").unwrap();
    p.send_line("Run the slow thing").unwrap();
    // Give the tool time to start, then interrupt the turn.
    std::thread::sleep(std::time::Duration::from_millis(800));
    p.send_control('c').unwrap();
    p.exp_string("cancelled").unwrap();
    p.send_line("Are you there?").unwrap();
    p.exp_string("Still here.").unwrap();
    p.send_line("/exit").unwrap();
    p.exp_eof().unwrap();
}

#[test]
fn a_continuation_is_followed_into_the_successor() {
    let env = Env::new();
    let script = env.script(
        "s.json",
        json!([
            { "tool_calls": [{ "id": "k1", "name": "continue_session", "arguments": {
                "reason": "user_request", "title": "Fresh start", "description": "Starting over",
                "handoff": { "purpose": "Help the person.", "currentRequest": "Start over." } } }] },
            text("Answer from the successor."),
            text("Second answer in the successor."),
        ]),
    );
    let mut p = repl(&env, &["--script", path_str(&script)]);
    p.exp_string("/help for commands").unwrap();
    p.send_line("Please start a fresh session").unwrap();
    // rexpect reads bytes as Latin-1, so match the ASCII around the quotes.
    p.exp_string("\nContinued in ").unwrap();
    p.exp_string("Fresh start").unwrap();
    p.exp_string(" (user request)").unwrap();
    p.exp_string("Answer from the successor.").unwrap();
    p.send_line("/status").unwrap();
    p.exp_string("Fresh start").unwrap();
    p.send_line("/exit").unwrap();
    p.exp_eof().unwrap();
}

#[test]
fn resuming_a_session_with_an_unanswered_message_answers_it() {
    let env = Env::new();
    // A run that dies before answering leaves the message waiting (here the
    // provider refuses; a crash after a continuation leaves a successor so).
    let failing = env.script("fail.json", json!([{ "error": { "kind": "auth", "message": "no key" } }]));
    let run = env.run(&["-p", "What is the tide at noon?", "--script", path_str(&failing), "--output-format", "json"]);
    run.expect_code(1);
    let session = run.json()["session_id"].as_str().unwrap().to_owned();

    let script = env.script("s.json", json!([text("High tide, 3.2 m.")]));
    let mut p = repl(&env, &["--resume", &session, "--script", path_str(&script)]);
    p.exp_string("Answering the waiting message: What is the tide at noon?").unwrap();
    p.exp_string("High tide, 3.2 m.").unwrap();
    p.send_line("/exit").unwrap();
    p.exp_eof().unwrap();
}

#[test]
fn compact_with_too_little_history_says_so_exactly() {
    let env = Env::new();
    let script = env.script("s.json", json!([text("Short answer.")]));
    let mut p = repl(&env, &["--script", path_str(&script), "--context-strategy", "compact"]);
    p.exp_string("/help for commands").unwrap();
    p.send_line("/compact").unwrap();
    p.exp_string("Not enough history to compact.").unwrap();
    p.send_line("Hello").unwrap();
    p.exp_string("Short answer.").unwrap();
    p.send_line("/compact the greeting").unwrap();
    p.exp_string("Not enough history to compact.").unwrap();
    p.send_line("/exit").unwrap();
    p.exp_eof().unwrap();
}

#[test]
fn a_spinner_shows_while_compact_writes_the_recap() {
    let env = Env::new();
    std::fs::write(env.home().join("config.json"), r#"{"context": {"strategy": "compact", "keepTokens": 1}}"#).unwrap();
    let recap = "## Goal\ng\n\n## Progress\np\n\n## Blockers\n(none)\n\n## Next steps\nn";
    let script = env.script("s.json", json!([text("a1"), text("a2"), text("a3"), { "text": recap, "delay_ms": 1500 }]));
    let mut p = on_terminal(&env, &["--script", path_str(&script)], "xterm", &[]);
    p.exp_string("/help for commands").unwrap();
    for (q, a) in [("q1", "a1"), ("q2", "a2"), ("q3", "a3")] {
        p.send(&format!("{q}\r")).unwrap();
        p.flush().unwrap();
        p.exp_string(a).unwrap();
    }
    p.send("/compact\r").unwrap();
    p.flush().unwrap();
    // `·` arrives as its UTF-8 bytes, read one per character.
    p.exp_string("compacting \u{c2}\u{b7} 1s").unwrap();
    p.exp_string("Compacted seq").unwrap();
    p.send("/exit\r").unwrap();
    p.flush().unwrap();
    p.exp_eof().unwrap();
}

#[test]
fn a_write_asks_the_person_and_yes_and_no_are_both_honoured() {
    let env = Env::new();
    let script = env.script(
        "s.json",
        json!([
            { "tool_calls": [{ "id": "w1", "name": "write_file", "arguments": { "path": "yes.txt", "content": "written" } }] },
            { "tool_calls": [{ "id": "w2", "name": "write_file", "arguments": { "path": "no.txt", "content": "never" } }] },
            text("Done writing."),
        ]),
    );
    let mut p = repl(&env, &["--script", path_str(&script)]);
    p.exp_string("/help for commands").unwrap();
    p.send_line("Write two files").unwrap();
    p.exp_string("Allow? [y]es").unwrap();
    p.send_line("y").unwrap();
    p.exp_string("Allow? [y]es").unwrap();
    p.send_line("n").unwrap();
    p.exp_string("Done writing.").unwrap();
    p.send_line("/exit").unwrap();
    p.exp_eof().unwrap();
    assert_eq!(std::fs::read_to_string(env.work().join("yes.txt")).unwrap(), "written");
    assert!(!env.work().join("no.txt").exists(), "a no leaves nothing written");
}

#[test]
fn a_question_shows_the_diff_always_stops_asking_and_other_words_reach_the_model() {
    let env = Env::new();
    std::fs::write(env.work().join("notes.txt"), "one\ntwo\nthree\n").unwrap();
    let edit = |id: &str, old: &str, new: &str| json!({ "tool_calls": [{ "id": id, "name": "edit", "arguments": { "path": "notes.txt", "old": old, "new": new } }] });
    let script = env.script(
        "s.json",
        json!([
            edit("e1", "two", "TWO"),
            edit("e2", "three", "THREE"),
            { "tool_calls": [{ "id": "b1", "name": "bash", "arguments": { "command": "rm notes.txt" } }] },
            text("Understood: I kept the file."),
        ]),
    );
    let mut p = on_terminal(&env, &["--script", path_str(&script)], "dumb", &[]);
    p.exp_string("/help for commands").unwrap();
    p.send_line("Shout the numbers, then clean up").unwrap();
    // The question shows the change as a unified diff.
    p.exp_string("@@ -1,3 +1,3 @@").unwrap();
    p.exp_string("-two").unwrap();
    p.exp_string("+TWO").unwrap();
    p.exp_string("Allow? [y]es, [a]lways in this session, [n]o, or type what to do instead:").unwrap();
    p.send_line("a").unwrap();
    // After the call, the transcript shows what changed (− is e2 88 92).
    p.exp_string("edit notes.txt (+1 \u{e2}\u{88}\u{92}1)").unwrap();
    p.exp_string("+TWO").unwrap();
    // `always`: the second edit is not asked about.
    p.exp_string("edit notes.txt (+1 \u{e2}\u{88}\u{92}1)").unwrap();
    p.exp_string("+THREE").unwrap();
    p.exp_string("bash: rm notes.txt").unwrap();
    p.exp_string("Allow? [y]es").unwrap();
    p.send_line("keep the file, it is needed").unwrap();
    p.exp_string("Understood: I kept the file.").unwrap();
    p.send_line("/exit").unwrap();
    p.exp_eof().unwrap();
    assert_eq!(std::fs::read_to_string(env.work().join("notes.txt")).unwrap(), "one\nTWO\nTHREE\n");
    let requests = env.requests();
    let last = requests.last().unwrap().to_string();
    assert!(
        last.contains("the person declined bash: rm notes.txt and said instead: keep the file, it is needed"),
        "the words reach the model: {last}"
    );
}

#[test]
fn resume_without_an_id_picks_from_recent_sessions() {
    let env = Env::new();
    let script = env.script("s.json", json!([text("First.")]));
    env.run(&["-p", "The first session", "--script", path_str(&script)]).expect_code(0);
    let script = env.script("s2.json", json!([text("Picked and answered.")]));
    let mut p = repl(&env, &["--resume", "--script", path_str(&script)]);
    p.exp_string("1. ").unwrap();
    p.exp_string("The first session").unwrap();
    p.exp_string("Resume which? ").unwrap();
    p.send_line("1").unwrap();
    p.exp_string("Resumed").unwrap();
    p.send_line("Still there?").unwrap();
    p.exp_string("Picked and answered.").unwrap();
    p.send_line("/exit").unwrap();
    p.exp_eof().unwrap();
}

#[test]
fn the_status_row_shows_the_whole_description() {
    let env = Env::new();
    let description =
        format!("Reviewing the lease code path by path {}end of description", "and more detail ".repeat(8));
    let call = json!({ "tool_calls": [{ "id": "s1", "name": "status", "arguments": { "title": "Lease review", "description": description } }] });
    let script = env.script("s.json", json!([call, { "text": "Noted." }]));
    let mut p = repl(&env, &["--script", path_str(&script)]);
    p.exp_string("/help for commands").unwrap();
    p.send_line("Track what we do.").unwrap();
    // Longer than any cut row: the end of it is on screen.
    p.exp_string("end of description").unwrap();
    p.exp_string("Noted.").unwrap();
    p.send_control('d').unwrap();
    p.exp_eof().unwrap();
}

#[test]
fn on_the_continue_strategy_compact_explains_and_continue_asks_the_agent_to_continue() {
    let env = Env::new();
    let script = env.script(
        "s.json",
        json!([
            text("First answer."),
            { "tool_calls": [{ "id": "k1", "name": "continue_session", "arguments": {
                "reason": "user_request", "title": "Release notes", "description": "Writing the notes",
                "handoff": { "purpose": "Write the release notes.", "currentRequest": "Continue." } } }] },
            text("Answer from the successor."),
        ]),
    );
    let mut p = repl(&env, &["--script", path_str(&script)]);
    p.exp_string("/help for commands").unwrap();
    p.send_line("Hello").unwrap();
    p.exp_string("First answer.").unwrap();
    p.send_line("/compact").unwrap();
    p.exp_string("its transcript is never compacted").unwrap();
    p.send_line("/continue the release notes").unwrap();
    p.exp_string("Release notes").unwrap();
    p.exp_string("Answer from the successor.").unwrap();
    p.send_line("/exit").unwrap();
    p.exp_eof().unwrap();

    // The compaction changed nothing; the request asked for the verb, with
    // the focus, and the person's words are kept as typed.
    let sessions = env.run(&["sessions", "list", "--json"]).json();
    let first = sessions.as_array().unwrap().iter().find(|s| s["title"] != "Release notes").unwrap();
    let thread = env.run(&["thread", first["id"].as_str().unwrap()]).stdout;
    assert!(!thread.contains("compaction"), "{thread}");
    assert!(thread.contains("Focus the successor on: the release notes"), "{thread}");
}

#[test]
fn on_the_compact_strategy_continue_points_to_compact() {
    let env = Env::new();
    let script = env.script("s.json", json!([]));
    let mut p = repl(&env, &["--script", path_str(&script), "--context-strategy", "compact"]);
    p.exp_string("/help for commands").unwrap();
    p.send_line("/continue").unwrap();
    p.exp_string("never continues into a successor").unwrap();
    p.send_line("/exit").unwrap();
    p.exp_eof().unwrap();
}

#[test]
fn an_at_mention_attaches_a_picture_and_a_glob_rule_fires_on_a_read() {
    let env = Env::new();
    std::fs::write(env.work().join("shot.png"), b"\x89PNG\r\n\x1a\n-pixels-").unwrap();
    std::fs::create_dir_all(env.work().join(".seri/rules")).unwrap();
    std::fs::write(env.work().join(".seri/rules/notes.md"), "---\nglobs: \"*.md\"\n---\nNotes are terse.\n").unwrap();
    let read = json!({ "tool_calls": [{ "id": "r1", "name": "read_file", "arguments": { "path": "notes.md" } }] });
    std::fs::write(env.work().join("notes.md"), "n\n").unwrap();
    let script = env.script("s.json", json!([text("A picture."), read, text("Read.")]));
    let mut p = repl(&env, &["--script", path_str(&script)]);
    p.exp_string("/help for commands").unwrap();
    p.send_line("What is @shot.png?").unwrap();
    p.exp_string("attached shot.png as attachment:").unwrap();
    p.exp_string("(picture, 16 bytes)").unwrap();
    p.exp_string("A picture.").unwrap();
    p.send_line("Look at @missing.png too").unwrap();
    p.exp_string("rule .seri/rules/notes.md applies from here on (it covers notes.md)").unwrap();
    p.exp_string("Read.").unwrap();
    p.send_control('d').unwrap();
    p.exp_eof().unwrap();
}

#[test]
fn slash_mcp_shows_the_servers_state() {
    let env = Env::new();
    let config = json!({ "mcpServers": { "gone": { "command": "sh", "args": ["-c", "exit 1"] } } });
    std::fs::write(env.home().join("config.json"), config.to_string()).unwrap();
    let script = env.script("s.json", json!([text("Hi.")]));
    let mut p = repl(&env, &["--script", path_str(&script)]);
    p.exp_string("MCP server `gone` is not available").unwrap();
    p.exp_string("/help for commands").unwrap();
    p.send_line("/mcp").unwrap();
    p.exp_string("gone  stdio  failed: it did not start").unwrap();
    p.send_control('d').unwrap();
    p.exp_eof().unwrap();
}

#[test]
fn a_failing_command_is_marked_and_its_last_lines_shown() {
    let env = Env::new();
    let call = json!({ "tool_calls": [{ "id": "b1", "name": "bash", "arguments": { "command": "echo compiling; echo 'error: missing semicolon' >&2; exit 3" } }] });
    let script = env.script("s.json", json!([call, text("It failed.")]));
    let mut p = repl(&env, &["--script", path_str(&script), "--allow", "bash"]);
    p.exp_string("/help for commands").unwrap();
    p.send_line("Build it").unwrap();
    // The terminal's bytes as rexpect reads them (one char per byte): ✗ is e2 9c 97.
    p.exp_string(
        "\u{e2}\u{9c}\u{97} bash $ echo compiling; echo 'error: missing semicolon' >&2; exit 3 \u{c2}\u{b7} exit 3",
    )
    .unwrap();
    p.exp_string("compiling").unwrap();
    p.exp_string("error: missing semicolon").unwrap();
    p.exp_string("It failed.").unwrap();
    p.send_control('d').unwrap();
    p.exp_eof().unwrap();
}

#[test]
fn ctrl_c_at_a_question_withdraws_it_and_the_next_line_is_a_message() {
    let env = Env::new();
    let call = json!({ "tool_calls": [{ "id": "b1", "name": "bash", "arguments": { "command": "echo hi" } }] });
    let script = env.script("s.json", json!([call, text("Answering the next message.")]));
    let mut p = repl(&env, &["--script", path_str(&script)]);
    p.exp_string("/help for commands").unwrap();
    p.send_line("Run it").unwrap();
    p.exp_string("Allow? [y]es").unwrap();
    p.send_control('c').unwrap();
    p.exp_string("the question was withdrawn").unwrap();
    p.send_line("Never mind; what next?").unwrap();
    p.exp_string("Answering the next message.").unwrap();
    p.send_control('d').unwrap();
    p.exp_eof().unwrap();
    let sessions = env.run(&["sessions", "list", "--json"]).json();
    let id = sessions[0]["id"].as_str().unwrap();
    let thread = env.run(&["thread", id]).stdout.clone();
    assert!(thread.contains("user: Never mind; what next?"), "the line was a message, not an answer: {thread}");
}

#[test]
fn a_prompt_argument_starts_the_session_with_that_message_and_r_resumes() {
    let env = Env::new();
    let script = env.script("s.json", json!([text("On it."), text("Back again.")]));
    let mut p = repl(&env, &["--script", path_str(&script), "Fix the build"]);
    // The message is shown at a prompt, as if typed there.
    p.exp_string("\u{e2}\u{80}\u{ba} Fix the build").unwrap();
    p.exp_string("On it.").unwrap();
    p.send_control('d').unwrap();
    p.exp_eof().unwrap();
    let sessions = env.run(&["sessions", "list", "--json"]).json();
    let id = sessions[0]["id"].as_str().unwrap().to_owned();
    assert!(env.run(&["thread", &id]).stdout.contains("[1] user: Fix the build"));
    // `-r ID` is `--resume ID`.
    let mut p = repl(&env, &["--script", path_str(&script), "-r", &id]);
    p.exp_string("Resumed").unwrap();
    // Where it was left off: the last exchanges, before the prompt.
    p.exp_string("you: Fix the build").unwrap();
    p.exp_string("seri: On it.").unwrap();
    p.send_control('d').unwrap();
    p.exp_eof().unwrap();
    // `/resume ID` switches a running REPL to it; an unknown id says so.
    let mut p = repl(&env, &["--script", path_str(&script)]);
    p.exp_string("/help for commands").unwrap();
    p.send_line("/resume nope").unwrap();
    p.exp_string("nope").unwrap();
    p.send_line(&format!("/resume {id}")).unwrap();
    p.exp_string("Resumed").unwrap();
    p.send_line("And now?").unwrap();
    p.exp_string("On it.").unwrap();
    p.send_control('d').unwrap();
    p.exp_eof().unwrap();
    let thread = env.run(&["thread", &id]).stdout.clone();
    assert!(thread.contains("user: And now?"), "{thread}");
}

#[test]
fn bang_runs_a_command_a_backslash_continues_a_line_and_leaving_says_how_to_come_back() {
    let env = Env::new();
    let script = env.script("s.json", json!([text("Two lines received.")]));
    let mut p = repl(&env, &["--script", path_str(&script)]);
    p.exp_string("/help for commands").unwrap();
    p.send_line("!echo from-the-shell; exit 4").unwrap();
    p.exp_string("from-the-shell").unwrap();
    p.exp_string("exit status: 4").unwrap();
    p.send_line("first line \\").unwrap();
    p.send_line("second line").unwrap();
    p.exp_string("Two lines received.").unwrap();
    p.send_control('d').unwrap();
    p.exp_string("To come back to this session: seri -r").unwrap();
    p.exp_eof().unwrap();
    let sessions = env.run(&["sessions", "list", "--json"]).json();
    let thread = env.run(&["thread", sessions[0]["id"].as_str().unwrap()]).stdout.clone();
    assert!(thread.contains("user: first line \n  second line"), "one message of two lines: {thread}");
    assert!(!thread.contains("from-the-shell"), "a shell command is the person's, not the model's: {thread}");
}

#[test]
fn slash_init_writes_a_starter_agents_md_after_asking_and_never_overwrites() {
    let env = Env::new();
    let script = env.script("s.json", json!([text("Hi.")]));
    let mut p = repl(&env, &["--script", path_str(&script)]);
    p.exp_string("/help for commands").unwrap();
    p.send_line("/init").unwrap();
    p.exp_string("AGENTS.md? [y/N]").unwrap();
    p.send_line("n").unwrap();
    p.exp_string("Nothing written.").unwrap();
    p.send_line("/init").unwrap();
    p.exp_string("AGENTS.md? [y/N]").unwrap();
    p.send_line("y").unwrap();
    p.exp_string("new sessions will read it").unwrap();
    p.send_line("/init").unwrap();
    p.exp_string("already exists").unwrap();
    p.send_control('d').unwrap();
    p.exp_eof().unwrap();
    let written = std::fs::read_to_string(env.work().join("AGENTS.md")).unwrap();
    assert!(written.starts_with("# Agent instructions") && written.contains("## How to build and test"), "{written}");
}

#[test]
fn tab_completes_slash_commands_and_at_mentions() {
    let env = Env::new();
    std::fs::write(env.work().join("notes.txt"), "remember the milk\n").unwrap();
    let script = env.script("s.json", json!([text("Milk it is.")]));
    // A terminal that edits lines (a dumb one gets plain reading, without completion).
    let mut p = on_terminal(&env, &["--script", path_str(&script)], "xterm", &[]);
    p.exp_string("/help for commands").unwrap();
    p.send("/cos\t").unwrap();
    p.flush().unwrap();
    p.send("\r").unwrap();
    p.flush().unwrap();
    p.exp_string("No session yet: send a message first.").unwrap();
    p.send("What does @no\t").unwrap();
    p.flush().unwrap();
    // Alt+Enter (ESC then Enter, as a terminal sends it) is a new line.
    p.send("say?\x1b\rBe brief.\r").unwrap();
    p.flush().unwrap();
    p.exp_string("included notes.txt (18 bytes of text)").unwrap();
    p.exp_string("Milk it is.").unwrap();
    let sent = env.requests()[0]["messages"].to_string();
    assert!(sent.contains("What does @notes.txt say?\\nBe brief."), "{sent}");
    p.send("/exit\r").unwrap();
    p.flush().unwrap();
    p.exp_eof().unwrap();
}

#[test]
fn a_spinner_shows_what_seri_waits_for_with_the_time_and_tokens_so_far() {
    let env = Env::new();
    let script = env.script(
        "s.json",
        json!([
            { "tool_calls": [{ "id": "s1", "name": "bash", "arguments": { "command": "sleep 2" } }],
              "usage": { "input": 1200, "cache_read": 0, "cache_write": 0, "output": 34 } },
            text("Slept."),
        ]),
    );
    let mut p = on_terminal(&env, &["--script", path_str(&script), "--allow", "bash"], "xterm", &[]);
    p.exp_string("/help for commands").unwrap();
    p.send("Sleep a little\r").unwrap();
    p.flush().unwrap();
    // `·` arrives as its UTF-8 bytes, read one per character.
    p.exp_string("running bash \u{c2}\u{b7} 1s \u{c2}\u{b7} 1.2k tokens").unwrap();
    p.exp_string("bash $ sleep 2 (").unwrap();
    p.exp_string("Slept.").unwrap();
    p.send("/exit\r").unwrap();
    p.flush().unwrap();
    p.exp_eof().unwrap();
}

#[test]
fn the_picker_lists_this_directory_first_and_typing_filters() {
    let env = Env::new();
    let elsewhere = env.dir.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let script = env.script("s.json", json!([text("Noted.")]));
    let out = env
        .seri()
        .current_dir(&elsewhere)
        .args(["-p", "Lisbon hotels", "--script", path_str(&script)])
        .output()
        .unwrap();
    assert!(out.status.success());
    let script = env.script("s2.json", json!([text("Noted here.")]));
    env.run(&["-p", "Fix the build", "--script", path_str(&script)]).expect_code(0);
    let script = env.script("s3.json", json!([text("Back in Lisbon.")]));
    let mut p = on_terminal(&env, &["-r", "--script", path_str(&script)], "xterm", &[]);
    p.exp_string("Resume which session?").unwrap();
    // This directory's session first, marked `here`; the other with its folder.
    p.exp_string("Fix the build").unwrap();
    p.exp_string("just now").unwrap();
    p.exp_string("here").unwrap();
    p.exp_string("Lisbon hotels").unwrap();
    p.exp_string(&format!("{}", elsewhere.display())).unwrap();
    p.send("lisbon").unwrap();
    p.flush().unwrap();
    p.send("\r").unwrap();
    p.flush().unwrap();
    // A session of another folder is said to be one, and asked about.
    p.exp_string("was started in").unwrap();
    p.exp_string("its tools work in").unwrap();
    p.exp_string("Go on? [y/N]").unwrap();
    p.send("y\r").unwrap();
    p.flush().unwrap();
    p.exp_string("Resumed").unwrap();
    p.exp_string("Lisbon hotels").unwrap();
    p.send("And now?\r").unwrap();
    p.flush().unwrap();
    p.exp_string("Back in Lisbon.").unwrap();
    p.send("/exit\r").unwrap();
    p.flush().unwrap();
    p.exp_eof().unwrap();
}

#[test]
fn answers_are_drawn_as_markdown_on_a_terminal_coloured_or_not() {
    let env = Env::new();
    let answer = "# Plan\n\n- **first** step\n- second step\n\n```\nlet a = 1;\n```\n\n\
                  | Tool | Calls |\n|---|--:|\n| bash | 3 |\n\nDone.";
    for colour in [true, false] {
        let script = env.script("s.json", json!([text(answer)]));
        let mut command = env.seri_on_terminal();
        command.args(["--script", path_str(&script)]).env("TERM", "xterm");
        if !colour {
            command.env("NO_COLOR", "1");
        }
        let mut p = spawn_command(command, Some(TIMEOUT_MS)).unwrap();
        p.exp_string("/help for commands").unwrap();
        p.send("Plan it\r").unwrap();
        p.flush().unwrap();
        if colour {
            p.exp_string("\x1b[1m\x1b[4mPlan\x1b[24m\x1b[22m").unwrap();
            // `•` arrives as its UTF-8 bytes, read one per character.
            p.exp_string("\u{e2}\u{80}\u{a2} \x1b[1mfirst\x1b[22m step").unwrap();
            p.exp_string("  \x1b[36mlet a = 1;\x1b[0m").unwrap();
            p.exp_string("Done.").unwrap();
        } else {
            // The same structure, without colour: no `#`, `**` or fences.
            p.exp_string("Plan\r\n").unwrap();
            p.exp_string("\u{e2}\u{80}\u{a2} first step").unwrap();
            p.exp_string("  let a = 1;").unwrap();
            // A table is drawn as one (│ is e2 94 82).
            p.exp_string("\u{e2}\u{94}\u{82} bash \u{e2}\u{94}\u{82}     3 \u{e2}\u{94}\u{82}").unwrap();
            p.exp_string("Done.").unwrap();
        }
        p.send("/exit\r").unwrap();
        p.flush().unwrap();
        p.exp_eof().unwrap();
    }
}

#[test]
fn slash_model_sets_the_sessions_model_from_the_next_request_on() {
    let env = Env::new();
    // Billed turns: `lastUsageModel` is the model that billed the last usage.
    let usage = json!({ "input": 10, "cache_read": 0, "cache_write": 0, "output": 2 });
    let script = env.script(
        "s.json",
        json!([{ "text": "From the small one.", "usage": usage }, { "text": "From the big one.", "usage": usage }]),
    );
    let mut p = on_terminal(&env, &["--script", path_str(&script)], "dumb", &[]);
    p.exp_string("/help for commands").unwrap();
    p.send_line("/model").unwrap();
    p.exp_string("model        script/scripted (the configured model)").unwrap();
    p.send_line("Hello").unwrap();
    p.exp_string("From the small one.").unwrap();
    p.send_line("/model openai/gpt-5").unwrap();
    p.exp_string("openai/gpt-5 is not a model of script, the provider seri started with").unwrap();
    p.send_line("/model big-model").unwrap();
    p.exp_string("From the next request on, this session talks to script/big-model.").unwrap();
    p.send_line("/model").unwrap();
    p.exp_string("model        script/big-model (this session's choice)").unwrap();
    p.send_line("Again").unwrap();
    p.exp_string("From the big one.").unwrap();
    p.send_line("/exit").unwrap();
    p.exp_eof().unwrap();
    let models: Vec<String> = env.requests().iter().map(|r| r["model"].as_str().unwrap().to_owned()).collect();
    assert_eq!(models, ["scripted", "big-model"]);
    let list = env.run(&["sessions", "list", "--json"]);
    let id = list.json()[0]["id"].as_str().unwrap().to_owned();
    let show = env.run(&["sessions", "show", &id, "--json"]);
    let info = show.json();
    assert_eq!(info["modelOverride"], json!({ "provider": "script", "model": "big-model" }), "folded from the event");
    assert_eq!(info["lastUsageModel"]["model"], "big-model", "the answer says which model gave it");
    let thread = env.run(&["thread", &id]);
    assert!(thread.stdout.contains("model: script/big-model"), "{}", thread.stdout);
}

#[test]
fn esc_cancels_the_running_turn_and_keys_typed_meanwhile_reach_the_next_prompt() {
    let env = Env::new();
    let script = env.script(
        "s.json",
        json!([
            { "tool_calls": [{ "id": "c1", "name": "bash", "arguments": { "command": "sleep 30" } }] },
            text("Still here."),
        ]),
    );
    let mut p = on_terminal(&env, &["--script", path_str(&script), "--allow", "bash"], "xterm", &[]);
    p.exp_string("/help for commands").unwrap();
    p.send("Run the slow thing\r").unwrap();
    p.flush().unwrap();
    p.exp_string("running bash").unwrap();
    // Typed while the turn runs (not echoed), then Esc.
    p.send("Are you").unwrap();
    p.flush().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    p.send("\x1b").unwrap();
    p.flush().unwrap();
    p.exp_string("(Esc: cancelling the turn)").unwrap();
    p.exp_string("cancelled").unwrap();
    // The next prompt starts with what was typed; the rest completes it.
    p.exp_string("Are you").unwrap();
    p.send(" there?\r").unwrap();
    p.flush().unwrap();
    p.exp_string("Still here.").unwrap();
    p.send("/exit\r").unwrap();
    p.flush().unwrap();
    p.exp_eof().unwrap();
    let last = env.requests().last().unwrap()["messages"].to_string();
    assert!(last.contains("Are you there?"), "{last}");
}

#[test]
fn slash_cost_prices_each_turn_at_its_models_price_from_config() {
    let env = Env::new();
    std::fs::write(
        env.home().join("config.json"),
        r#"{"prices": {"script/scripted": {"input": 3, "output": 15, "cacheRead": 0.3}, "script/big": {"input": 10, "output": 50}}}"#,
    )
    .unwrap();
    let usage = |input: u64, cache_read: u64, output: u64| json!({ "input": input, "cache_read": cache_read, "cache_write": 0, "output": output });
    let script = env.script(
        "s.json",
        json!([{ "text": "One.", "usage": usage(100_000, 200_000, 10_000) }, { "text": "Two.", "usage": usage(1_000, 0, 1_000) }]),
    );
    let mut p = repl(&env, &["--script", path_str(&script)]);
    p.exp_string("/help for commands").unwrap();
    p.send_line("First").unwrap();
    p.exp_string("One.").unwrap();
    p.send_line("/model big").unwrap();
    p.exp_string("this session talks to script/big").unwrap();
    p.send_line("Second").unwrap();
    p.exp_string("Two.").unwrap();
    p.send_line("/cost").unwrap();
    // 0.1 M × 3 + 0.2 M × 0.3 + 0.01 M × 15, then 0.001 M × 10 + 0.001 M × 50.
    p.exp_string("cost         0.5700 (at the prices in config.json)").unwrap();
    p.send_line("/exit").unwrap();
    p.exp_eof().unwrap();
}

#[test]
fn ctrl_c_twice_at_an_empty_prompt_leaves_and_says_how_to_come_back() {
    let env = Env::new();
    let script = env.script("s.json", json!([text("Hello.")]));
    let mut p = on_terminal(&env, &["--script", path_str(&script)], "xterm", &[]);
    p.exp_string("/help for commands").unwrap();
    p.send("Hi\r").unwrap();
    p.flush().unwrap();
    p.exp_string("Hello.").unwrap();
    p.exp_string("\u{e2}\u{80}\u{ba} ").unwrap();
    p.send_control('c').unwrap();
    p.exp_string("(Ctrl-C again within 2 s, Ctrl-D or /exit to leave)").unwrap();
    // Typing in between starts over: this Ctrl-C clears the line, and the
    // next one only warns again.
    p.send("half a thought").unwrap();
    p.flush().unwrap();
    p.exp_string("half a thought").unwrap();
    p.send_control('c').unwrap();
    p.exp_string("\u{e2}\u{80}\u{ba} ").unwrap();
    p.send_control('c').unwrap();
    p.exp_string("(Ctrl-C again within 2 s, Ctrl-D or /exit to leave)").unwrap();
    p.send_control('c').unwrap();
    p.exp_string("To come back to this session: seri -r ").unwrap();
    p.exp_eof().unwrap();
}

#[test]
fn tool_lines_say_what_ran_from_the_calls_facts() {
    let env = Env::new();
    std::fs::write(env.work().join("notes.txt"), "one\ntwo\nthree\n").unwrap();
    let calls = json!({ "tool_calls": [
        { "id": "r1", "name": "read_file", "arguments": { "path": "notes.txt" } },
        { "id": "g1", "name": "grep", "arguments": { "pattern": "t[wh]" } },
        { "id": "b1", "name": "bash", "arguments": { "command": "seq 1 30" } },
        { "id": "e1", "name": "edit", "arguments": { "path": "notes.txt", "old": "two", "new": "2" } },
    ] });
    let script = env.script("s.json", json!([calls, text("Done.")]));
    let mut p = repl(&env, &["--script", path_str(&script), "--allow", "bash", "--allow", "edit"]);
    p.exp_string("/help for commands").unwrap();
    p.send_line("Look around").unwrap();
    // ✓ is e2 9c 93, · is c2 b7, − is e2 88 92, as rexpect reads the bytes.
    p.exp_string("\u{e2}\u{9c}\u{93} read_file notes.txt (3 lines, 14 bytes)").unwrap();
    p.exp_string("\u{e2}\u{9c}\u{93} grep \"t[wh]\" in . (2 matches in 1 file)").unwrap();
    p.exp_string("\u{e2}\u{9c}\u{93} bash $ seq 1 30 (").unwrap();
    p.exp_string("\u{e2}\u{80}\u{a6} 26 lines before").unwrap();
    p.exp_string("30").unwrap();
    p.exp_string("\u{e2}\u{9c}\u{93} edit notes.txt (+1 \u{e2}\u{88}\u{92}1)").unwrap();
    p.exp_string("+2").unwrap();
    p.exp_string("Done.").unwrap();
    p.send_control('d').unwrap();
    p.exp_eof().unwrap();
}

#[test]
fn a_cancelled_answer_stays_on_screen_and_in_the_session_and_the_model_reads_it() {
    let env = Env::new();
    let script = env.script(
        "s.json",
        json!([{ "text": "The parser fails because the first token is read before", "hang": true }, text("Go on, then.")]),
    );
    let mut p = repl(&env, &["--script", path_str(&script)]);
    p.exp_string("/help for commands").unwrap();
    p.send_line("Why does it fail?").unwrap();
    // Give the answer time to start, then interrupt the turn.
    std::thread::sleep(std::time::Duration::from_millis(800));
    p.send_control('c').unwrap();
    // What had arrived stays on screen, and the ending says it once.
    p.exp_string("the first token is read before").unwrap();
    p.exp_string("cancelled").unwrap();
    p.send_line("Finish the thought").unwrap();
    p.exp_string("Go on, then.").unwrap();
    p.send_line("/exit").unwrap();
    p.exp_eof().unwrap();
    let sessions = env.run(&["sessions", "list", "--json"]).json();
    let id = sessions[0]["id"].as_str().unwrap();
    let thread = env.run(&["thread", id]).stdout.clone();
    assert!(
        thread.contains("assistant: The parser fails because the first token is read before"),
        "the partial answer is kept: {thread}"
    );
    let last = env.requests().last().unwrap().to_string();
    assert!(last.contains("read before\\n\\n[interrupted: the user stopped this answer here"), "{last}");
}

#[test]
fn resuming_a_session_of_another_folder_asks_and_headless_refuses_naming_it() {
    let env = Env::new();
    let elsewhere = env.dir.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let script = env.script("s.json", json!([text("Noted.")]));
    let out = env
        .seri()
        .current_dir(&elsewhere)
        .args(["-p", "Lisbon hotels", "--script", path_str(&script), "--output-format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let id = report["session_id"].as_str().unwrap().to_owned();

    // Headless, nobody can be asked: refused, naming the folder.
    let script = env.script("s2.json", json!([text("Here.")]));
    let refused = env.run(&["-r", &id, "-p", "Go on", "--script", path_str(&script)]);
    refused.expect_code(2);
    assert!(refused.stderr.contains(&format!("was started in {}", elsewhere.display())), "{}", refused.stderr);
    assert!(refused.stderr.contains("--allow-other-folder"), "{}", refused.stderr);
    // The flag goes on from here.
    env.run(&["-r", &id, "-p", "Go on", "--script", path_str(&script), "--allow-other-folder"]).expect_code(0);

    // In a terminal: asked; no leaves it as it was.
    let mut p = repl(&env, &["-r", &id, "--script", path_str(&script)]);
    p.exp_string(&format!("was started in {}, not in this folder", elsewhere.display())).unwrap();
    p.exp_string("Go on? [y/N]").unwrap();
    p.send_line("n").unwrap();
    p.exp_string("Not resumed.").unwrap();
    p.exp_eof().unwrap();
}

#[test]
fn an_answer_streams_as_it_arrives_tables_are_redrawn_and_code_comes_line_by_line() {
    let env = Env::new();
    let chunks = json!([
        "The parser reads ",
        "the whole input first.\n\n| Step | Cost |\n",
        "|---|--:|\n| read | 3 |\n\n",
        "```rust\nfn main() {\n",
        "    parse();\n"
    ]);
    let script = env.script("s.json", json!([{ "chunks": chunks, "delay_ms": 200, "hang": true }, text("Go on.")]));
    let mut p = on_terminal(&env, &["--script", path_str(&script)], "xterm", &[]);
    p.exp_string("/help for commands").unwrap();
    p.send("Why?\r").unwrap();
    p.flush().unwrap();
    // All of it shows while the answer is still being written (it never
    // ends here): a paragraph as it comes, the header row raw until the
    // delimiter row makes it a table (drawn again over it, as one), and
    // each line of code once its newline came, before the fence closes.
    p.exp_string("The parser reads").unwrap();
    p.exp_string("| Step | Cost |").unwrap();
    p.exp_string("\x1b[").unwrap();
    // │ is e2 94 82.
    p.exp_string("\u{e2}\u{94}\u{82} read \u{e2}\u{94}\u{82}    3 \u{e2}\u{94}\u{82}").unwrap();
    p.exp_string("  fn main() {").unwrap();
    p.exp_string("      parse();").unwrap();
    p.send_control('c').unwrap();
    p.exp_string("cancelled").unwrap();
    p.send("/exit\r").unwrap();
    p.flush().unwrap();
    p.exp_eof().unwrap();
}

#[test]
fn slash_expand_shows_a_cut_output_in_full_from_the_stored_result() {
    let env = Env::new();
    let call = json!({ "tool_calls": [{ "id": "b1", "name": "bash", "arguments": { "command": "seq 1 30" } }] });
    let script = env.script("s.json", json!([call, text("Counted.")]));
    let mut p = repl(&env, &["--script", path_str(&script), "--allow", "bash"]);
    p.exp_string("/help for commands").unwrap();
    p.send_line("/expand").unwrap();
    p.exp_string("No output was cut short yet.").unwrap();
    p.send_line("Count").unwrap();
    p.exp_string("26 lines before (/expand 1 shows all)").unwrap();
    p.exp_string("Counted.").unwrap();
    p.send_line("/expand").unwrap();
    p.exp_string("bash $ seq 1 30 (").unwrap();
    p.exp_string("      1\r\n      2\r\n      3\r\n").unwrap();
    p.exp_string("      30\r\n").unwrap();
    p.send_line("/expand 2").unwrap();
    p.exp_string("No output number 2 was cut short here.").unwrap();
    p.send_line("/exit").unwrap();
    p.exp_eof().unwrap();
}

#[test]
fn thinking_is_drawn_behind_a_gutter_apart_from_the_answer_without_colour() {
    let env = Env::new();
    let turn = json!({ "thinking": "Let me **check** the parser.\n\n- one\n- two", "text": "It is *fine*." });
    let script = env.script("s.json", json!([turn]));
    let mut p = on_terminal(&env, &["--script", path_str(&script)], "xterm", &[]);
    p.exp_string("/help for commands").unwrap();
    p.send("Check\r").unwrap();
    p.flush().unwrap();
    // │ is e2 94 82; the markdown's structure is kept, its marks drawn.
    p.exp_string("\u{e2}\u{94}\u{82} Let me check the parser.").unwrap();
    p.exp_string("\u{e2}\u{94}\u{82} \u{e2}\u{80}\u{a2} one").unwrap();
    p.exp_string("\u{e2}\u{94}\u{82} \u{e2}\u{80}\u{a2} two").unwrap();
    p.exp_string("It is fine.").unwrap();
    p.send("/exit\r").unwrap();
    p.flush().unwrap();
    p.exp_eof().unwrap();
}

#[test]
fn slash_expand_shows_the_whole_diff_of_an_edit_whose_diff_was_cut() {
    let env = Env::new();
    let before: String = (1..=200).map(|n| format!("line {n}\n")).collect();
    std::fs::write(env.work().join("long.txt"), &before).unwrap();
    // Every tenth line changes: far more diff than is shown under the call.
    let after: String =
        (1..=200).map(|n| if n % 10 == 0 { format!("LINE {n}\n") } else { format!("line {n}\n") }).collect();
    let write = json!({ "path": "long.txt", "content": after });
    let call = json!({ "tool_calls": [{ "id": "w1", "name": "write_file", "arguments": write }] });
    let script = env.script("s.json", json!([call, text("Shouted.")]));
    let mut p = repl(&env, &["--script", path_str(&script), "--allow", "write_file"]);
    p.exp_string("/help for commands").unwrap();
    p.send_line("Shout").unwrap();
    p.exp_string("write_file long.txt (+20 \u{e2}\u{88}\u{92}20)").unwrap();
    p.exp_string("more lines\r\n      (/expand 1 shows the whole diff)").unwrap();
    p.exp_string("Shouted.").unwrap();
    p.send_line("/expand").unwrap();
    p.exp_string("write_file long.txt (+20").unwrap();
    p.exp_string("      -line 200\r\n      +LINE 200\r\n").unwrap();
    p.send_line("/exit").unwrap();
    p.exp_eof().unwrap();
}

#[test]
fn a_spinner_waits_for_the_first_token_the_tool_call_and_an_approved_tool() {
    let env = Env::new();
    let call = json!([{ "id": "s1", "name": "bash", "arguments": { "command": "sleep 2" } }]);
    let script = env.script(
        "s.json",
        json!([{ "chunks": ["I will sleep."], "tool_calls": call, "delay_ms": 1500 }, text("Slept.")]),
    );
    let mut p = on_terminal(&env, &["--script", path_str(&script)], "xterm", &[]);
    p.exp_string("/help for commands").unwrap();
    p.send("Sleep\r").unwrap();
    p.flush().unwrap();
    // `·` arrives as its UTF-8 bytes, read one per character.
    p.exp_string("thinking \u{c2}\u{b7} 1s").unwrap();
    p.exp_string("I will sleep.").unwrap();
    p.exp_string("writing \u{c2}\u{b7} 1s").unwrap();
    p.exp_string("Allow? [y]es").unwrap();
    p.send("y\r").unwrap();
    p.flush().unwrap();
    p.exp_string("running bash \u{c2}\u{b7} 1s").unwrap();
    p.exp_string("bash $ sleep 2 (").unwrap();
    p.exp_string("Slept.").unwrap();
    p.send("/exit\r").unwrap();
    p.flush().unwrap();
    p.exp_eof().unwrap();
}

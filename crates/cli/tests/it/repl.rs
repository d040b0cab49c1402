//! The interactive session through a real pseudo-terminal: a message, slash
//! commands, Ctrl-C during a turn, and following a continuation.

use serde_json::json;

use crate::support::{Env, path_str, text};
use crate::terminal::{Typing as _, on_terminal, repl};

#[test]
fn without_reported_usage_the_meter_is_the_estimate_marked_as_one() {
    let env = Env::new();
    let script = env.script("s.json", json!([text("No usage from me.")]));
    let mut p = repl(&env, &["--script", path_str(&script), "--context-window", "100000"]);
    p.sees("/help for commands");
    // Under the greeting, what is in force (`·` is c2 b7, as rexpect reads the bytes).
    p.sees("model script/scripted \u{c2}\u{b7} mode default \u{c2}\u{b7} sandbox ");
    p.types("Hi there");
    p.sees("No usage from me.");
    // seri's own system prompt and tools are a few thousand tokens.
    p.exp_regex(r"\[~[1-9][0-9]?%\]").unwrap();
    p.types("/cost");
    p.sees("unreported   1 model turns: the provider reported no usage for them");
    p.leaves();
}

#[test]
fn a_message_a_slash_command_and_ctrl_d() {
    let env = Env::new();
    let script = env.script("s.json", json!([{ "text": "Hello, person.", "usage": { "input": 64000, "cache_read": 0, "cache_write": 0, "output": 5 } }]));
    let mut p = repl(&env, &["--script", path_str(&script), "--context-window", "100000"]);
    p.sees("/help for commands");
    p.types("Hi there");
    p.sees("Hello, person.");
    // The context meter leads the prompt once the session has a billed turn.
    p.sees("[64%]");
    p.types("/nonsense");
    p.sees("unknown command /nonsense; known: /compact /continue /clear /max-turns /rewind /fork /trajectory /status /model /context /cost /permissions /sandbox /config /memory /export /expand /init /sessions /resume /search /mcp /skills /agents /help /exit");
    // A slip of the fingers is named for what it meant.
    p.types("/hlep");
    p.sees("unknown command /hlep; did you mean /help? known: /compact");
    p.types("/max-turns 3");
    p.sees("Up to 3 model turns per task");
    p.types("/status");
    p.sees("window       100000 tokens (flag --context-window)");
    p.sees("max turns    3");
    p.types("/permissions");
    p.sees("read_file    allow");
    p.sees("bash         ask");
    p.types("/context");
    p.sees("context      64.0k of 100.0k tokens on the last turn (64%)");
    p.sees("next request, estimated (characters / 4):");
    p.sees("  system prompt");
    p.sees("  tools (");
    p.sees("  the model's answers (1)");
    p.sees("  total");
    p.types("/cost");
    p.sees("model turns  1");
    p.sees("input        64000 tokens (0 read from the cache, 0 written to it)");
    p.sees("output       5 tokens");
    p.sees("cost         not known: config.json \"prices\" has no price for script/scripted");
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
    p.sees("/help for commands");
    p.types("Run the slow thing");
    // Give the tool time to start, then interrupt the turn.
    std::thread::sleep(std::time::Duration::from_millis(800));
    p.send_control('c').unwrap();
    p.sees("cancelled");
    p.types("Are you there?");
    p.sees("Still here.");
    p.leaves();
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
    p.sees("/help for commands");
    p.types("Please start a fresh session");
    // rexpect reads bytes as Latin-1, so match the ASCII around the quotes.
    p.sees("\nContinued in ");
    p.sees("Fresh start");
    p.sees(" (user request)");
    p.sees("Answer from the successor.");
    p.types("/status");
    p.sees("Fresh start");
    p.leaves();
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
    p.sees("Answering the waiting message: What is the tide at noon?");
    p.sees("High tide, 3.2 m.");
    p.leaves();
}

#[test]
fn compact_with_too_little_history_says_so_exactly() {
    let env = Env::new();
    let script = env.script("s.json", json!([text("Short answer.")]));
    let mut p = repl(&env, &["--script", path_str(&script), "--context-strategy", "compact"]);
    p.sees("/help for commands");
    p.types("/compact");
    p.sees("Not enough history to compact.");
    p.types("Hello");
    p.sees("Short answer.");
    p.types("/compact the greeting");
    p.sees("Not enough history to compact.");
    p.leaves();
}

#[test]
fn a_spinner_shows_while_compact_writes_the_recap() {
    let env = Env::new();
    std::fs::write(env.home().join("config.json"), r#"{"context": {"strategy": "compact", "keepTokens": 1}}"#).unwrap();
    let recap = "## Goal\ng\n\n## Progress\np\n\n## Blockers\n(none)\n\n## Next steps\nn";
    let script = env.script("s.json", json!([text("a1"), text("a2"), text("a3"), { "text": recap, "delay_ms": 1500 }]));
    let mut p = on_terminal(&env, &["--script", path_str(&script)], "xterm", &[]);
    p.sees("/help for commands");
    for (q, a) in [("q1", "a1"), ("q2", "a2"), ("q3", "a3")] {
        p.send(&format!("{q}\r")).unwrap();
        p.flush().unwrap();
        p.sees(a);
    }
    p.send("/compact\r").unwrap();
    p.flush().unwrap();
    // `·` arrives as its UTF-8 bytes, read one per character.
    p.sees("compacting \u{c2}\u{b7} 1s");
    p.sees("Compacted seq");
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
    p.sees("/help for commands");
    p.types("Write two files");
    p.sees("Allow? [y]es");
    p.types("y");
    p.sees("Allow? [y]es");
    p.types("n");
    p.sees("Done writing.");
    p.leaves();
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
    p.sees("/help for commands");
    p.types("Shout the numbers, then clean up");
    // The question shows the change as a unified diff.
    p.sees("@@ -1,3 +1,3 @@");
    p.sees("-two");
    p.sees("+TWO");
    p.sees("Allow? [y]es, [a]lways in this session, [n]o, or type what to do instead:");
    p.types("a");
    // After the call, the transcript shows what changed (− is e2 88 92).
    p.sees("edit notes.txt (+1 \u{e2}\u{88}\u{92}1)");
    p.sees("+TWO");
    // `always`: the second edit is not asked about.
    p.sees("edit notes.txt (+1 \u{e2}\u{88}\u{92}1)");
    p.sees("+THREE");
    p.sees("bash: rm notes.txt");
    p.sees("Allow? [y]es");
    p.types("keep the file, it is needed");
    p.sees("Understood: I kept the file.");
    p.leaves();
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
    p.sees("1. ");
    p.sees("The first session");
    p.sees("Resume which? ");
    p.types("1");
    p.sees("Resumed");
    p.types("Still there?");
    p.sees("Picked and answered.");
    p.leaves();
}

#[test]
fn the_status_row_shows_the_whole_description() {
    let env = Env::new();
    let description =
        format!("Reviewing the lease code path by path {}end of description", "and more detail ".repeat(8));
    let call = json!({ "tool_calls": [{ "id": "s1", "name": "status", "arguments": { "title": "Lease review", "description": description } }] });
    let script = env.script("s.json", json!([call, { "text": "Noted." }]));
    let mut p = repl(&env, &["--script", path_str(&script)]);
    p.sees("/help for commands");
    p.types("Track what we do.");
    // Longer than any cut row: the end of it is on screen.
    p.sees("end of description");
    p.sees("Noted.");
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
    p.sees("/help for commands");
    p.types("Hello");
    p.sees("First answer.");
    p.types("/compact");
    p.sees("its transcript is never compacted");
    p.types("/continue the release notes");
    p.sees("Release notes");
    p.sees("Answer from the successor.");
    p.leaves();

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
    p.sees("/help for commands");
    p.types("/continue");
    p.sees("never continues into a successor");
    p.leaves();
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
    p.sees("/help for commands");
    p.types("What is @shot.png?");
    p.sees("attached shot.png as attachment:");
    p.sees("(picture, 16 bytes)");
    p.sees("A picture.");
    p.types("Look at @missing.png too");
    p.sees("rule .seri/rules/notes.md applies from here on (it covers notes.md)");
    p.sees("Read.");
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
    p.sees("MCP server `gone` is not available");
    p.sees("/help for commands");
    p.types("/mcp");
    p.sees("gone  stdio  failed: it did not start");
    p.send_control('d').unwrap();
    p.exp_eof().unwrap();
}

#[test]
fn a_failing_command_is_marked_and_its_last_lines_shown() {
    let env = Env::new();
    let call = json!({ "tool_calls": [{ "id": "b1", "name": "bash", "arguments": { "command": "echo compiling; echo 'error: missing semicolon' >&2; exit 3" } }] });
    let script = env.script("s.json", json!([call, text("It failed.")]));
    let mut p = repl(&env, &["--script", path_str(&script), "--allow", "bash"]);
    p.sees("/help for commands");
    p.types("Build it");
    // The terminal's bytes as rexpect reads them (one char per byte): ✗ is e2 9c 97.
    p.exp_string(
        "\u{e2}\u{9c}\u{97} bash $ echo compiling; echo 'error: missing semicolon' >&2; exit 3 \u{c2}\u{b7} exit 3",
    )
    .unwrap();
    p.sees("compiling");
    p.sees("error: missing semicolon");
    p.sees("It failed.");
    p.send_control('d').unwrap();
    p.exp_eof().unwrap();
}

#[test]
fn ctrl_c_at_a_question_withdraws_it_and_the_next_line_is_a_message() {
    let env = Env::new();
    let call = json!({ "tool_calls": [{ "id": "b1", "name": "bash", "arguments": { "command": "echo hi" } }] });
    let script = env.script("s.json", json!([call, text("Answering the next message.")]));
    let mut p = repl(&env, &["--script", path_str(&script)]);
    p.sees("/help for commands");
    p.types("Run it");
    p.sees("Allow? [y]es");
    p.send_control('c').unwrap();
    p.sees("the question was withdrawn");
    p.types("Never mind; what next?");
    p.sees("Answering the next message.");
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
    p.sees("\u{e2}\u{80}\u{ba} Fix the build");
    p.sees("On it.");
    p.send_control('d').unwrap();
    p.exp_eof().unwrap();
    let sessions = env.run(&["sessions", "list", "--json"]).json();
    let id = sessions[0]["id"].as_str().unwrap().to_owned();
    assert!(env.run(&["thread", &id]).stdout.contains("[1] user: Fix the build"));
    // `-r ID` is `--resume ID`.
    let mut p = repl(&env, &["--script", path_str(&script), "-r", &id]);
    p.sees("Resumed");
    // Where it was left off: the last exchanges, before the prompt.
    p.sees("you: Fix the build");
    p.sees("seri: On it.");
    p.send_control('d').unwrap();
    p.exp_eof().unwrap();
    // `/resume ID` switches a running REPL to it; an unknown id says so.
    let mut p = repl(&env, &["--script", path_str(&script)]);
    p.sees("/help for commands");
    p.types("/resume nope");
    p.sees("nope");
    p.types(&format!("/resume {id}"));
    p.sees("Resumed");
    p.types("And now?");
    p.sees("On it.");
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
    p.sees("/help for commands");
    p.types("!echo from-the-shell; exit 4");
    p.sees("from-the-shell");
    p.sees("exit status: 4");
    p.types("first line \\");
    p.types("second line");
    p.sees("Two lines received.");
    p.send_control('d').unwrap();
    p.sees("To come back to this session: seri -r");
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
    p.sees("/help for commands");
    p.types("/init");
    p.sees("AGENTS.md? [y/N]");
    p.types("n");
    p.sees("Nothing written.");
    p.types("/init");
    p.sees("AGENTS.md? [y/N]");
    p.types("y");
    p.sees("new sessions will read it");
    p.types("/init");
    p.sees("already exists");
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
    p.sees("/help for commands");
    p.send("/cos\t").unwrap();
    p.flush().unwrap();
    p.send("\r").unwrap();
    p.flush().unwrap();
    p.sees("No session yet: send a message first.");
    p.send("What does @no\t").unwrap();
    p.flush().unwrap();
    // Alt+Enter (ESC then Enter, as a terminal sends it) is a new line.
    p.send("say?\x1b\rBe brief.\r").unwrap();
    p.flush().unwrap();
    p.sees("included notes.txt (18 bytes of text)");
    p.sees("Milk it is.");
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
    p.sees("/help for commands");
    p.send("Sleep a little\r").unwrap();
    p.flush().unwrap();
    // `·` arrives as its UTF-8 bytes, read one per character.
    p.sees("running bash \u{c2}\u{b7} 1s \u{c2}\u{b7} 1.2k tokens");
    p.sees("bash $ sleep 2 (");
    p.sees("Slept.");
    p.send("/exit\r").unwrap();
    p.flush().unwrap();
    p.exp_eof().unwrap();
}

#[test]
fn the_spinner_counts_an_answer_as_it_streams_marked_as_a_guess_without_usage() {
    let env = Env::new();
    // No usage reported: the spinner's figure is a guess from what streamed, marked `~`.
    let chunks: Vec<String> = (1..=6).map(|n| format!("Paragraph {n} says a few words more.\n\n")).collect();
    let script = env.script("s.json", json!([{ "chunks": chunks, "delay_ms": 400 }]));
    let mut p = on_terminal(&env, &["--script", path_str(&script)], "xterm", &[]);
    p.sees("/help for commands");
    p.send("Write a while\r").unwrap();
    p.flush().unwrap();
    p.sees("Paragraph 2");
    p.sees("writing \u{c2}\u{b7} ");
    p.sees(" \u{c2}\u{b7} ~");
    p.sees(" tokens");
    p.sees("Paragraph 6");
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
    p.sees("Resume which session?");
    // This directory's session first, marked `here`; the other with its folder.
    p.sees("Fix the build");
    p.sees("just now");
    p.sees("here");
    p.sees("Lisbon hotels");
    p.sees(&format!("{}", elsewhere.display()));
    p.send("lisbon").unwrap();
    p.flush().unwrap();
    p.send("\r").unwrap();
    p.flush().unwrap();
    // A session of another folder is said to be one, and asked about.
    p.sees("was started in");
    p.sees("its tools work in");
    p.sees("Go on? [y/N]");
    p.send("y\r").unwrap();
    p.flush().unwrap();
    p.sees("Resumed");
    p.sees("Lisbon hotels");
    p.send("And now?\r").unwrap();
    p.flush().unwrap();
    p.sees("Back in Lisbon.");
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
        let mut p = rexpect::session::spawn_command(command, Some(crate::terminal::TIMEOUT_MS)).unwrap();
        p.sees("/help for commands");
        p.send("Plan it\r").unwrap();
        p.flush().unwrap();
        if colour {
            p.sees("\x1b[1m\x1b[4mPlan\x1b[24m\x1b[22m");
            // `•` arrives as its UTF-8 bytes, read one per character.
            p.sees("\u{e2}\u{80}\u{a2} \x1b[1mfirst\x1b[22m step");
            p.sees("  \x1b[36mlet a = 1;\x1b[0m");
            p.sees("Done.");
        } else {
            // The same structure, without colour: no `#`, `**` or fences.
            p.sees("Plan\r\n");
            p.sees("\u{e2}\u{80}\u{a2} first step");
            p.sees("  let a = 1;");
            // A table is drawn as one (│ is e2 94 82).
            p.sees("\u{e2}\u{94}\u{82} bash \u{e2}\u{94}\u{82}     3 \u{e2}\u{94}\u{82}");
            p.sees("Done.");
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
    p.sees("/help for commands");
    p.types("/model");
    p.sees("model        script/scripted (the configured model)");
    p.types("Hello");
    p.sees("From the small one.");
    p.types("/model openai/gpt-5");
    p.sees("openai/gpt-5 is not a model of script, the provider seri started with");
    p.types("/model big-model");
    p.sees("From the next request on, this session talks to script/big-model.");
    p.types("/model");
    p.sees("model        script/big-model (this session's choice)");
    p.types("Again");
    p.sees("From the big one.");
    p.leaves();
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
    p.sees("/help for commands");
    p.send("Run the slow thing\r").unwrap();
    p.flush().unwrap();
    p.sees("running bash");
    // Typed while the turn runs (not echoed), then Esc.
    p.send("Are you").unwrap();
    p.flush().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    p.send("\x1b").unwrap();
    p.flush().unwrap();
    p.sees("(Esc: cancelling the turn)");
    p.sees("cancelled");
    // The next prompt starts with what was typed; the rest completes it.
    p.sees("Are you");
    p.send(" there?\r").unwrap();
    p.flush().unwrap();
    p.sees("Still here.");
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
    p.sees("/help for commands");
    p.types("First");
    p.sees("One.");
    p.types("/model big");
    p.sees("this session talks to script/big");
    p.types("Second");
    p.sees("Two.");
    p.types("/cost");
    // 0.1 M × 3 + 0.2 M × 0.3 + 0.01 M × 15, then 0.001 M × 10 + 0.001 M × 50.
    p.sees("cost         0.5700 (at the prices in config.json)");
    p.leaves();
}

#[test]
fn ctrl_c_twice_at_an_empty_prompt_leaves_and_says_how_to_come_back() {
    let env = Env::new();
    let script = env.script("s.json", json!([text("Hello.")]));
    let mut p = on_terminal(&env, &["--script", path_str(&script)], "xterm", &[]);
    p.sees("/help for commands");
    p.send("Hi\r").unwrap();
    p.flush().unwrap();
    p.sees("Hello.");
    p.sees("\u{e2}\u{80}\u{ba} ");
    p.send_control('c').unwrap();
    p.sees("(Ctrl-C again within 2 s, Ctrl-D or /exit to leave)");
    // Typing in between starts over: this Ctrl-C clears the line, and the
    // next one only warns again.
    p.send("half a thought").unwrap();
    p.flush().unwrap();
    p.sees("half a thought");
    p.send_control('c').unwrap();
    p.sees("\u{e2}\u{80}\u{ba} ");
    p.send_control('c').unwrap();
    p.sees("(Ctrl-C again within 2 s, Ctrl-D or /exit to leave)");
    p.send_control('c').unwrap();
    p.sees("To come back to this session: seri -r ");
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
    p.sees("/help for commands");
    p.types("Look around");
    // ✓ is e2 9c 93, · is c2 b7, − is e2 88 92, as rexpect reads the bytes.
    p.sees("\u{e2}\u{9c}\u{93} read_file notes.txt (3 lines, 14 bytes)");
    p.sees("\u{e2}\u{9c}\u{93} grep \"t[wh]\" in . (2 matches in 1 file)");
    p.sees("\u{e2}\u{9c}\u{93} bash $ seq 1 30 (");
    p.sees("\u{e2}\u{80}\u{a6} 26 lines before");
    p.sees("30");
    p.sees("\u{e2}\u{9c}\u{93} edit notes.txt (+1 \u{e2}\u{88}\u{92}1)");
    p.sees("+2");
    p.sees("Done.");
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
    p.sees("/help for commands");
    p.types("Why does it fail?");
    // Give the answer time to start, then interrupt the turn.
    std::thread::sleep(std::time::Duration::from_millis(800));
    p.send_control('c').unwrap();
    // What had arrived stays on screen, and the ending says it once.
    p.sees("the first token is read before");
    p.sees("cancelled");
    p.types("Finish the thought");
    p.sees("Go on, then.");
    p.leaves();
    let sessions = env.run(&["sessions", "list", "--json"]).json();
    let id = sessions[0]["id"].as_str().unwrap();
    let thread = env.run(&["thread", id]).stdout.clone();
    assert!(
        thread.contains("assistant (interrupted): The parser fails because the first token is read before"),
        "the partial answer is kept, marked: {thread}"
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
    p.sees(&format!("was started in {}, not in this folder", elsewhere.display()));
    p.sees("Go on? [y/N]");
    p.types("n");
    p.sees("Not resumed.");
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
    p.sees("/help for commands");
    p.send("Why?\r").unwrap();
    p.flush().unwrap();
    // All of it shows while the answer is still being written (it never
    // ends here): a paragraph as it comes, the header row raw until the
    // delimiter row makes it a table (drawn again over it, as one), and
    // each line of code once its newline came, before the fence closes.
    p.sees("The parser reads");
    p.sees("| Step | Cost |");
    p.sees("\x1b[");
    // │ is e2 94 82.
    p.sees("\u{e2}\u{94}\u{82} read \u{e2}\u{94}\u{82}    3 \u{e2}\u{94}\u{82}");
    p.sees("  fn main() {");
    p.sees("      parse();");
    p.send_control('c').unwrap();
    p.sees("cancelled");
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
    p.sees("/help for commands");
    p.types("/expand");
    p.sees("No output was cut short yet.");
    p.types("Count");
    p.sees("26 lines before (/expand 1 shows all)");
    p.sees("Counted.");
    p.types("/expand");
    p.sees("bash $ seq 1 30 (");
    p.sees("      1\r\n      2\r\n      3\r\n");
    p.sees("      30\r\n");
    p.types("/expand 2");
    p.sees("No output number 2 was cut short here.");
    p.leaves();
}

#[test]
fn thinking_is_drawn_behind_a_gutter_apart_from_the_answer_without_colour() {
    let env = Env::new();
    let turn = json!({ "thinking": "Let me **check** the parser.\n\n- one\n- two", "text": "It is *fine*." });
    let script = env.script("s.json", json!([turn]));
    let mut p = on_terminal(&env, &["--script", path_str(&script)], "xterm", &[]);
    p.sees("/help for commands");
    p.send("Check\r").unwrap();
    p.flush().unwrap();
    // │ is e2 94 82; the markdown's structure is kept, its marks drawn.
    p.sees("\u{e2}\u{94}\u{82} Let me check the parser.");
    p.sees("\u{e2}\u{94}\u{82} \u{e2}\u{80}\u{a2} one");
    p.sees("\u{e2}\u{94}\u{82} \u{e2}\u{80}\u{a2} two");
    p.sees("It is fine.");
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
    p.sees("/help for commands");
    p.types("Shout");
    p.sees("write_file long.txt (+20 \u{e2}\u{88}\u{92}20)");
    p.sees("more lines\r\n      (/expand 1 shows the whole diff)");
    p.sees("Shouted.");
    p.types("/expand");
    p.sees("write_file long.txt (+20");
    p.sees("      -line 200\r\n      +LINE 200\r\n");
    p.leaves();
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
    p.sees("/help for commands");
    p.send("Sleep\r").unwrap();
    p.flush().unwrap();
    // `·` arrives as its UTF-8 bytes, read one per character.
    p.sees("thinking \u{c2}\u{b7} 1s");
    p.sees("I will sleep.");
    p.sees("writing \u{c2}\u{b7} 1s");
    p.sees("Allow? [y]es");
    p.send("y\r").unwrap();
    p.flush().unwrap();
    p.sees("running bash \u{c2}\u{b7} 1s");
    p.sees("bash $ sleep 2 (");
    p.sees("Slept.");
    p.send("/exit\r").unwrap();
    p.flush().unwrap();
    p.exp_eof().unwrap();
}

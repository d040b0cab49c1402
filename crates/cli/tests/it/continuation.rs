//! Continuation through the binary: `seri -p` follows the continuation and
//! reports the successor, `seri sessions show` links both ways, and a `seri`
//! killed with SIGKILL at any point of the creation transaction leaves the
//! database with all of the continuation or none of it, sound, and usable.
//!
//! The kill lands where the test wants through the continuation runtime's
//! test hook: `SERI_TEST_PAUSE_IN_CONTINUATION_MS` makes it pause at the step
//! `SERI_TEST_PAUSE_IN_CONTINUATION_AT` names, after creating the file
//! `SERI_TEST_PAUSE_IN_CONTINUATION_MARKER`.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{Env, path_str, text};
use crate::terminal::Typing as _;

fn continue_call() -> Value {
    json!({ "tool_calls": [{
        "id": "cont_1",
        "name": "continue_session",
        "arguments": {
            "reason": "topic_change",
            "title": "Lisbon hotel",
            "description": "Finding a hotel near the river",
            "handoff": { "purpose": "Find a hotel in Lisbon.", "currentRequest": "A hotel near the river." }
        }
    }] })
}

const MESSAGE: &str = "New topic: a hotel in Lisbon near the river.";

#[test]
fn headless_json_reports_the_successor_and_its_answer() {
    let env = Env::new();
    let script = env.script("s.json", json!([continue_call(), text("Here are three hotels.")]));
    let run = env.run(&["-p", MESSAGE, "--script", path_str(&script), "--output-format", "json"]);
    run.expect_code(0);
    let report = run.json();
    assert_eq!(report["status"], "succeeded");
    assert_eq!(report["result"], "Here are three hotels.", "the successor's answer");
    assert_eq!(report["turns"], 2);
    let (predecessor, successor) = (report["session_id"].as_str().unwrap(), report["continued_to_session_id"].clone());
    let successor = successor.as_str().expect("continued_to_session_id").to_owned();
    assert_ne!(predecessor, successor);

    let show = env.run(&["sessions", "show", &successor, "--json"]);
    show.expect_code(0);
    let info = show.json();
    assert_eq!(info["title"], "Lisbon hotel");
    assert_eq!(info["titleSource"], "agent");
    assert_eq!(info["continuedFrom"]["sessionId"], predecessor);
    assert_eq!(info["continuedFrom"]["reason"], "topic_change");
    assert_eq!(info["continuedTo"], Value::Null);
    assert!(info["contextWindow"].as_u64().is_some_and(|w| w > 0), "{info}");
    let narrow = env.run(&["sessions", "show", &successor, "--json", "--context-window", "9000"]);
    assert_eq!(narrow.json()["contextWindow"], 9000);

    let show = env.run(&["sessions", "show", predecessor, "--json"]);
    assert_eq!(show.json()["continuedTo"]["sessionId"], successor.as_str());
    assert_eq!(show.json()["continuedTo"]["title"], "Lisbon hotel");
}

#[test]
fn text_output_prints_the_successors_answer_and_stream_json_the_continuation() {
    let env = Env::new();
    let script = env.script("s.json", json!([continue_call(), text("Here are three hotels.")]));
    let run = env.run(&["-p", MESSAGE, "--script", path_str(&script)]);
    run.expect_code(0);
    assert_eq!(run.stdout, "Here are three hotels.\n");

    let script = env.script("s2.json", json!([continue_call(), text("Here are three hotels.")]));
    let run = env.run(&["-p", MESSAGE, "--script", path_str(&script), "--output-format", "stream-json"]);
    run.expect_code(0);
    let events: Vec<Value> = run.stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let continued = events.iter().filter(|e| e["type"] == "continued").count();
    assert_eq!(continued, 1, "{}", run.stdout);
}

/// What the database holds, read with SQL.
#[derive(Debug, PartialEq)]
struct Rows {
    sessions: i64,
    edges: i64,
    events: i64,
}

fn rows(db: &Path) -> Rows {
    let db = rusqlite::Connection::open(db).unwrap();
    let integrity: String = db.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
    assert_eq!(integrity, "ok");
    let count = |table: &str| db.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0)).unwrap();
    Rows { sessions: count("sessions"), edges: count("session_continuations"), events: count("session_events") }
}

/// The session that was not continued from anything: the predecessor.
fn first_session(db: &Path) -> String {
    let db = rusqlite::Connection::open(db).unwrap();
    db.query_row(
        "SELECT id FROM sessions WHERE id NOT IN (SELECT successor_session_id FROM session_continuations)",
        [],
        |r| r.get(0),
    )
    .unwrap()
}

/// Starts `seri -p` so that it pauses at `point` of the continuation, waits
/// until it is there, and kills it with SIGKILL.
fn kill_at(env: &Env, point: &str) {
    let script = env.script("s.json", json!([continue_call(), text("Never sent.")]));
    let marker = env.dir.path().join("paused");
    let mut command: Command = env.seri();
    command
        .args(["-p", MESSAGE, "--script", path_str(&script), "--output-format", "json"])
        .env("SERI_TEST_PAUSE_IN_CONTINUATION_MS", "600000")
        .env("SERI_TEST_PAUSE_IN_CONTINUATION_AT", point)
        .env("SERI_TEST_PAUSE_IN_CONTINUATION_MARKER", &marker)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = command.spawn().unwrap();
    // Polling for the marker, with a deadline only so a broken hook fails
    // the test instead of hanging it; nothing here measures speed.
    let deadline = Instant::now() + Duration::from_secs(120);
    while !marker.exists() {
        if let Some(status) = child.try_wait().unwrap() {
            let output = child.wait_with_output().unwrap();
            panic!("seri ended ({status}) before pausing at {point}: {}", String::from_utf8_lossy(&output.stderr));
        }
        if Instant::now() > deadline {
            child.kill().unwrap();
            panic!("seri never paused at {point}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(std::fs::read_to_string(&marker).unwrap(), point);
    child.kill().unwrap(); // SIGKILL: no destructor, no rollback, no cleanup runs.
    let status = child.wait().unwrap();
    assert!(!status.success(), "killed, not finished");
}

/// Kills `seri` at `point`, checks the database holds all of the
/// continuation (`committed`) or none of it, then resumes the predecessor.
fn check_kill(point: &str, committed: bool) {
    let env = Env::new();
    kill_at(&env, point);
    let db = env.home().join("seri.db");
    // The predecessor always has the message, the model's turn and the call.
    let expected = if committed {
        Rows { sessions: 2, edges: 1, events: 3 + 2 }
    } else {
        Rows { sessions: 1, edges: 0, events: 3 }
    };
    assert_eq!(rows(&db), expected, "after a kill at {point}");

    let predecessor = first_session(&db);
    // A committed continuation whose successor never ran: resuming the
    // predecessor answers the successor's copied message first, then the
    // new message follows it there.
    let turns = if committed {
        json!([text("The answer to the copied message."), text("Yes, still here.")])
    } else {
        json!([text("Yes, still here.")])
    };
    let script = env.script("again.json", turns);
    let run = env.run(&[
        "--resume",
        &predecessor,
        "-p",
        "Still there?",
        "--script",
        path_str(&script),
        "--output-format",
        "json",
    ]);
    run.expect_code(0);
    assert_eq!(
        (run.json()["session_id"].as_str(), run.json()["result"].as_str()),
        (Some(predecessor.as_str()), Some("Yes, still here."))
    );
    if committed {
        let successor = run.json()["continued_to_session_id"].as_str().unwrap_or_default().to_owned();
        let thread = env.run(&["thread", &successor]).stdout;
        let tail: Vec<&str> = thread.lines().skip_while(|l| !l.starts_with("[3] ")).collect();
        assert_eq!(
            tail,
            [
                "[3] assistant: The answer to the copied message.",
                "[4] user: Still there?",
                "[5] assistant: Yes, still here."
            ],
            "{thread}"
        );
    } else {
        assert!(run.json()["continued_to_session_id"].is_null(), "{}", run.stdout);
    }
    let thread = env.run(&["thread", &predecessor]).stdout;
    let call_result = thread.lines().nth(3).unwrap_or_default().to_owned();
    if committed {
        assert!(call_result.starts_with("[4] tool result continue_session: Continued in session "), "{thread}");
        assert_eq!((rows(&db).sessions, rows(&db).edges), (2, 1), "the replay created nothing new");
    } else {
        assert!(call_result.starts_with("[4] tool result continue_session (error): interrupted"), "{thread}");
        assert_eq!((rows(&db).sessions, rows(&db).edges), (1, 0));
    }
}

#[test]
fn killed_after_the_successor_row_nothing_remains() {
    check_kill("successor_created", false);
}

#[test]
fn killed_after_the_edge_nothing_remains() {
    check_kill("edge_inserted", false);
}

#[test]
fn killed_after_the_attachments_nothing_remains() {
    check_kill("attachments_linked", false);
}

#[test]
fn killed_after_the_projection_nothing_remains() {
    check_kill("projection_appended", false);
}

#[test]
fn killed_after_the_copied_message_before_the_commit_nothing_remains() {
    check_kill("message_copied", false);
}

#[test]
fn killed_after_the_commit_everything_remains_and_the_successor_can_be_run() {
    check_kill("committed", true);
    let env = Env::new();
    kill_at(&env, "committed");
    let db = env.home().join("seri.db");
    let successor: String = rusqlite::Connection::open(&db)
        .unwrap()
        .query_row("SELECT successor_session_id FROM session_continuations", [], |r| r.get(0))
        .unwrap();
    // The successor is a normal session: resumed, its model reads the copied
    // message and the new one.
    let script = env.script("successor.json", json!([text("Here are three hotels.")]));
    let run =
        env.run(&["--resume", &successor, "-p", "Go on.", "--script", path_str(&script), "--output-format", "json"]);
    run.expect_code(0);
    assert_eq!(run.json()["result"], "Here are three hotels.");
    let thread = env.run(&["thread", &successor]).stdout;
    assert!(thread.contains(&format!("[2] user: {MESSAGE}")), "{thread}");
    assert!(thread.contains("[3] user: Go on."), "{thread}");
}

#[test]
fn resuming_the_predecessor_in_the_repl_answers_the_successors_waiting_message_and_follows_it() {
    let env = Env::new();
    kill_at(&env, "committed");
    let db = env.home().join("seri.db");
    let predecessor = first_session(&db);
    let script = env.script("again.json", json!([text("The answer to the copied message."), text("Still here.")]));
    let mut p =
        crate::terminal::on_terminal(&env, &["--resume", &predecessor, "--script", path_str(&script)], "dumb", &[]);
    p.sees("This session continued into ");
    p.sees("answering the waiting message there.");
    p.sees("The answer to the copied message.");
    // The REPL follows the continuation: the next message goes to the successor.
    p.types("And now?");
    p.sees("Still here.");
    p.leaves();
    let successor: String = rusqlite::Connection::open(&db)
        .unwrap()
        .query_row("SELECT successor_session_id FROM session_continuations", [], |r| r.get(0))
        .unwrap();
    let thread = env.run(&["thread", &successor]).stdout;
    assert!(
        thread.contains(
            "[3] assistant: The answer to the copied message.\n[4] user: And now?\n[5] assistant: Still here."
        ),
        "{thread}"
    );
}

#[test]
fn a_script_run_never_continues_the_session_and_is_recorded_as_a_script() {
    let env = Env::new();
    let script = env.script("s.json", json!([continue_call(), text("Staying here.")]));
    let run = env.run_with(
        &["-p", MESSAGE, "--run-kind", "script", "--script", path_str(&script), "--output-format", "json"],
        &[("SERI_REQUEST_LOG", path_str(&env.request_log()))],
    );
    run.expect_code(0);
    let report = run.json();
    assert_eq!(report["result"], "Staying here.");
    assert_eq!(report["continued_to_session_id"], Value::Null, "{report}");
    let tools: Vec<String> =
        env.requests()[0]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect();
    assert_eq!(tools, ["status", "read", "plan"], "no continue_session, no coding tools");
    let thread = env.run(&["thread", report["session_id"].as_str().unwrap()]).stdout;
    assert!(thread.contains("scripts never continue sessions"), "{thread}");

    let db = rusqlite::Connection::open(env.home().join("seri.db")).unwrap();
    let (kind, actor): (String, String) = db
        .query_row(
            "SELECT r.kind, json_extract(e.payload, '$.actor') FROM runs r, session_events e WHERE e.seq = 1 AND e.session_id = r.session_id",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!((kind.as_str(), actor.as_str()), ("script", "trigger"));
}

#[test]
fn a_successor_freezes_its_own_system_prompt_from_the_files_as_they_are_now() {
    let env = Env::new();
    let agents = env.work().join("AGENTS.md");
    std::fs::write(&agents, "Answer in English.\n").unwrap();
    let log_path = env.request_log();
    let log = [("SERI_REQUEST_LOG", path_str(&log_path))];
    let first = env.script("first.json", json!([text("Noted.")]));
    let run = env.run_with(&["-p", "Hello", "--script", path_str(&first), "--output-format", "json"], &log);
    run.expect_code(0);
    let session = run.json()["session_id"].as_str().unwrap().to_owned();

    std::fs::write(&agents, "Answer in Portuguese.\n").unwrap();
    let second = env.script("second.json", json!([continue_call(), text("Aqui estão três hotéis.")]));
    let run = env.run_with(&["--resume", &session, "-p", MESSAGE, "--script", path_str(&second)], &log);
    run.expect_code(0);
    let requests = env.requests();
    assert_eq!(requests.len(), 3);
    let system = |i: usize| requests[i]["system"].as_str().unwrap().to_owned();
    assert!(
        system(1).contains("Answer in English.") && !system(1).contains("Portuguese"),
        "the predecessor's stays frozen"
    );
    assert!(system(2).contains("Answer in Portuguese.") && !system(2).contains("English."), "{}", system(2));
}

#[test]
fn from_70_percent_the_usage_block_names_what_a_successor_would_start_with() {
    let env = Env::new();
    let log = env.request_log();
    let billed = |input: u64| json!({ "text": "Noted.", "usage": { "input": input, "cache_read": 0, "cache_write": 0, "output": 5 } });
    let mut session: Option<String> = None;
    let mut last_blocks = Vec::new();
    for (question, input) in [("one", 60_000), ("two", 75_000), ("three", 10)] {
        let script = env.script(&format!("{question}.json"), json!([billed(input)]));
        let mut args = vec!["-p", question, "--script", path_str(&script), "--context-window", "100000"];
        args.extend(["--output-format", "json"]);
        let resume = session.clone();
        if let Some(id) = &resume {
            args.extend(["--resume", id.as_str()]);
        }
        let run = env.run_with(&args, &[("SERI_REQUEST_LOG", path_str(&log))]);
        run.expect_code(0);
        session.get_or_insert_with(|| run.json()["session_id"].as_str().unwrap().to_owned());
        let request = env.requests().last().cloned().unwrap();
        let blocks = request["messages"].as_array().unwrap().last().unwrap()["text"].as_str().unwrap().to_owned();
        last_blocks.push(blocks);
    }
    // The second request saw 60% billed; the third, 75%.
    assert!(!last_blocks[1].contains("A successor would start"), "{}", last_blocks[1]);
    let third = &last_blocks[2];
    assert!(third.contains("percent=\"75\""), "{third}");
    let line =
        third.lines().find(|l| l.starts_with("A successor would start at about ")).unwrap_or_else(|| panic!("{third}"));
    let tokens: u64 =
        line.trim_start_matches("A successor would start at about ").split(' ').next().unwrap().parse().unwrap();
    assert!(tokens > 0 && tokens < 75_000, "far less than this session holds: {line}");
}

#[test]
fn reads_back_of_what_a_projection_left_out_are_counted_per_continuation_and_for_the_profile() {
    let env = Env::new();
    // A first exchange too large for the projection's budget (32 KiB).
    let long = "The long notes. ".repeat(2_600);
    let script = env.script("first.json", json!([text("Long noted.")]));
    let run = env.run(&["-p", &long, "--script", path_str(&script), "--output-format", "json"]);
    run.expect_code(0);
    let predecessor = run.json()["session_id"].as_str().unwrap().to_owned();

    let mut continuing = continue_call();
    continuing["tool_calls"][0]["arguments"]["sources"] =
        json!([{ "kind": "session_events", "fromSeq": 1, "toSeq": 2 }]);
    let read = |id: &str, from: u64, to: u64| json!({ "tool_calls": [{ "id": id, "name": "read", "arguments": { "target": format!("thread:{}", &predecessor[..13]), "fromSeq": from, "toSeq": to } }] });
    let script = env.script("second.json", json!([continuing, read("r1", 1, 2), read("r2", 3, 3), text("Done.")]));
    let run =
        env.run(&["--resume", &predecessor, "-p", MESSAGE, "--script", path_str(&script), "--output-format", "json"]);
    run.expect_code(0);
    let successor = run.json()["continued_to_session_id"].as_str().unwrap().to_owned();

    let report = env.run(&["sessions", "recalls", "--json"]);
    report.expect_code(0);
    let report = report.json();
    assert_eq!((report["continuations"].as_u64(), report["withRecalls"].as_u64()), (Some(1), Some(1)), "{report}");
    assert_eq!(report["totals"], json!({ "omitted": 1, "notIncluded": 1, "alreadyIncluded": 0 }), "{report}");
    assert_eq!(report["byReason"]["topic_change"]["omitted"], 1);
    let each = &report["each"][0];
    assert_eq!(each["successorSessionId"], successor.as_str());
    assert_eq!(
        each["recalls"],
        json!([
            { "fromSeq": 1, "toSeq": 2, "kind": "omitted" },
            { "fromSeq": 3, "toSeq": 3, "kind": "not_included" },
        ])
    );
    assert!(each["omittedBytes"].as_u64().unwrap() > 32 * 1024, "{each}");

    let show = env.run(&["sessions", "show", &successor, "--json"]).json();
    assert_eq!(show["recalls"]["omitted"], 1);
    let text = env.run(&["sessions", "recalls", &predecessor]).stdout;
    assert!(
        text.starts_with(
            "1 continuations, 1 with reads back: 2 reads (1 omitted, 1 never included, 0 already carried)"
        ),
        "{text}"
    );
    assert!(text.contains("read seq 1 to 2: omitted"), "{text}");
}

#[test]
fn a_dry_run_says_what_a_continuation_would_carry_and_creates_nothing() {
    let env = Env::new();
    let log = env.request_log();
    let first = env.script("first.json", json!([
        { "tool_calls": [{ "id": "w1", "name": "write_file", "arguments": { "path": "notes.md", "content": "# Notes\n" } }] },
        text("Wrote the notes."),
    ]));
    let run = env.run(&[
        "-p",
        "Write the notes",
        "--script",
        path_str(&first),
        "--allow",
        "write_file",
        "--output-format",
        "json",
    ]);
    run.expect_code(0);
    let session = run.json()["session_id"].as_str().unwrap().to_owned();

    let mut estimate = continue_call();
    estimate["tool_calls"][0]["arguments"]["dryRun"] = json!(true);
    let second = env.script("second.json", json!([estimate, text("Staying here for now.")]));
    let run = env.run_with(
        &["--resume", &session, "-p", MESSAGE, "--script", path_str(&second), "--output-format", "json"],
        &[("SERI_REQUEST_LOG", path_str(&log))],
    );
    run.expect_code(0);
    let report = run.json();
    assert_eq!(report["result"], "Staying here for now.", "the turn went on");
    assert_eq!(report["continued_to_session_id"], Value::Null, "nothing was created");
    assert_eq!(env.run(&["sessions", "list", "--json"]).json().as_array().unwrap().len(), 1);

    let sent = env.requests().last().unwrap()["messages"].to_string();
    assert!(sent.contains("Estimate only: nothing was created, and this turn goes on."), "{sent}");
    assert!(sent.contains("of 32768 bytes of history"), "{sent}");
    assert!(sent.contains("Nothing would be left out."), "{sent}");
    assert!(sent.contains("Worth citing as sources"), "{sent}");
    assert!(sent.contains("seq 1 to 5: files changed: notes.md; the latest exchange"), "{sent}");
    // The figure counts the tool definitions the successor's first request
    // carries too, not only its prompt, projection and message.
    let tools = env.requests().last().unwrap()["tools"].to_string().chars().count() as u64;
    let needed: u64 = sent
        .split("first request would be about ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no figure: {sent}"));
    assert!(needed > tools / 4, "{needed} tokens should hold the tools' {tools} characters and more");
}

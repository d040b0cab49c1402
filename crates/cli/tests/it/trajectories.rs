//! Trajectories and /rewind through the real binary: recording on by
//! default, `seri trajectory show|diff`, the `/trajectory` toggle against
//! `SERI_TRAJECTORY`, and `/rewind` in the REPL.

use rexpect::session::PtySession;
use serde_json::json;

use crate::support::{Env, path_str, text};
use crate::terminal::Typing as _;

fn repl(env: &Env, args: &[&str], vars: &[(&str, &str)]) -> PtySession {
    crate::terminal::on_terminal(env, args, "dumb", vars)
}

fn write_call(id: &str, path: &str, content: &str) -> serde_json::Value {
    json!({ "tool_calls": [{ "id": id, "name": "write_file", "arguments": { "path": path, "content": content } }] })
}

#[test]
fn a_headless_run_is_recorded_and_shown() {
    let env = Env::new();
    let script = env.script("s.json", json!([write_call("c1", "a.txt", "hello\n"), text("Wrote it.")]));
    let run = env.run(&[
        "-p",
        "write a.txt",
        "--script",
        path_str(&script),
        "--allow",
        "write_file",
        "--output-format",
        "json",
    ]);
    let session = run.expect_code(0).json()["session_id"].as_str().unwrap().to_owned();

    let shown = env.run(&["trajectory", "show", &session, "--json"]);
    let shown = shown.expect_code(0).json();
    let trajectory = &shown["trajectories"][0];
    assert_eq!(trajectory["header"]["model"]["provider"], "script");
    assert_eq!(trajectory["header"]["strategy"], "continue");
    let kinds: Vec<&str> =
        trajectory["records"].as_array().unwrap().iter().map(|r| r["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["usage", "tool_call", "checkpoint", "edit", "tool_result", "usage", "ended"]);

    let run_id = trajectory["header"]["runId"].as_str().unwrap();
    let text = env.run(&["trajectory", "show", run_id]);
    let out = &text.expect_code(0).stdout;
    assert!(out.contains("edit         c1 write_file a.txt: applied"), "{out}");
    assert!(out.contains("ended        succeeded after 2 turns"), "{out}");
}

#[test]
fn diff_shows_what_differs_between_two_runs() {
    let env = Env::new();
    let script = env.script("s.json", json!([text("one")]));
    let first = env.run(&["-p", "hi", "--script", path_str(&script), "--output-format", "json"]);
    let script = env.script("t.json", json!([text("two"), text("three")]));
    let second =
        env.run(&["-p", "hi", "--script", path_str(&script), "--context-window", "50000", "--output-format", "json"]);
    let run_of = |session: &str| {
        env.run(&["trajectory", "show", session, "--json"]).json()["trajectories"][0]["header"]["runId"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let a = run_of(first.json()["session_id"].as_str().unwrap());
    let b = run_of(second.json()["session_id"].as_str().unwrap());
    let diff = env.run(&["trajectory", "diff", &a, &b]);
    let out = &diff.expect_code(0).stdout;
    assert!(out.lines().any(|l| l.starts_with("window: ") && l.ends_with(" tokens → 50000 tokens")), "{out}");
    assert!(out.contains("result: one → two"), "{out}");
    assert!(!out.contains("model:"), "the same model is not a difference: {out}");
    let missing = env.run(&["trajectory", "show", "ffffffff"]);
    assert!(missing.expect_code(2).stderr.contains("no trajectory or session `ffffffff`"), "{}", missing.stderr);
}

#[test]
fn the_toggle_set_against_the_environment_says_so_and_the_environment_wins_at_the_next_start() {
    let env = Env::new();
    let script = env.script("s.json", json!([text("recorded anyway")]));
    let mut p = repl(&env, &["--script", path_str(&script)], &[("SERI_TRAJECTORY", "1")]);
    p.sees("/help for commands");
    p.types("/trajectory off");
    p.sees("Trajectory recording is off (stored for the next start too).");
    p.exp_string("SERI_TRAJECTORY=1 is set in your environment and will turn recording on again at the next start.")
        .unwrap();
    p.leaves();

    // The next start: the variable wins over the stored `off`, in one line.
    let run = env
        .run_with(&["-p", "hi", "--script", path_str(&script), "--output-format", "json"], &[("SERI_TRAJECTORY", "1")]);
    assert!(
        run.expect_code(0).stderr.contains("seri: SERI_TRAJECTORY=1 overrides the stored /trajectory off"),
        "{}",
        run.stderr
    );
    let session = run.json()["session_id"].as_str().unwrap().to_owned();
    let shown = env.run(&["trajectory", "show", &session, "--json"]).json();
    assert_eq!(shown["trajectories"].as_array().unwrap().len(), 1, "recorded: the environment won");

    // Without the variable, the stored `off` holds: nothing is recorded.
    let script = env.script("t.json", json!([text("not recorded")]));
    let run = env.run(&["-p", "hi", "--script", path_str(&script), "--output-format", "json"]);
    let session = run.expect_code(0).json()["session_id"].as_str().unwrap().to_owned();
    let shown = env.run(&["trajectory", "show", &session, "--json"]).json();
    assert_eq!(shown["trajectories"], json!([]));
}

#[test]
fn rewind_in_the_repl_restores_files_and_conversation_after_asking_about_outside_changes() {
    let env = Env::new();
    let script = env.script(
        "s.json",
        json!([
            write_call("c1", "notes.txt", "v1"),
            text("wrote v1"),
            write_call("c2", "notes.txt", "v2"),
            text("wrote v2")
        ]),
    );
    let mut p = repl(&env, &["--script", path_str(&script), "--allow", "write_file"], &[]);
    p.sees("/help for commands");
    p.types("write v1");
    p.sees("wrote v1");
    p.types("now v2");
    p.sees("wrote v2");
    std::fs::write(env.work().join("notes.txt"), "edited by hand").unwrap();
    p.types("/rewind");
    p.sees("Turns you can rewind to before (newest last):");
    p.sees("2. seq");
    p.sees("now v2");
    p.sees("files changed since: notes.txt");
    p.sees("Rewind to before which turn? [1-2, Enter to cancel]");
    p.types("2");
    p.sees("Restore [b]oth");
    p.types("b");
    p.sees("notes.txt changed outside seri's tools since its checkpoint");
    p.sees("Overwrite it? [y/N]");
    p.types("n");
    p.sees("Nothing was changed.");
    assert_eq!(std::fs::read_to_string(env.work().join("notes.txt")).unwrap(), "edited by hand");
    p.types("/rewind");
    p.sees("Rewind to before which turn?");
    p.types("2");
    p.sees("Restore [b]oth");
    p.types("");
    p.sees("Overwrite it? [y/N]");
    p.types("y");
    p.sees("Rewound the conversation to before seq");
    p.sees("Restored notes.txt.");
    p.leaves();
    assert_eq!(std::fs::read_to_string(env.work().join("notes.txt")).unwrap(), "v1");
}

#[test]
fn rewind_refuses_to_step_across_a_compaction_and_says_so() {
    let env = Env::new();
    std::fs::write(env.home().join("config.json"), r#"{"context": {"strategy": "compact", "keepTokens": 1}}"#).unwrap();
    let recap = "## Goal\ng\n\n## Progress\np\n\n## Blockers\n(none)\n\n## Next steps\nn";
    let script = env.script("s.json", json!([text("a1"), text("a2"), text("a3"), text("a4"), text(recap)]));
    let mut p = repl(&env, &["--script", path_str(&script)], &[]);
    p.sees("/help for commands");
    for (q, a) in [("q1", "a1"), ("q2", "a2"), ("q3", "a3"), ("q4", "a4")] {
        p.types(q);
        p.sees(a);
    }
    p.types("/compact");
    p.sees("Compacted seq");
    p.types("/rewind 1");
    p.sees("Cannot rewind to before seq 1: the conversation was compacted at seq");
    p.sees("/rewind will not step across a compaction");
    p.types("/rewind");
    p.sees("/rewind will not step across a compaction, so earlier turns are not offered.");
    p.sees("No turn to rewind to.");
    p.leaves();
}

#[test]
fn a_legacy_files_trajectory_is_forgotten_by_its_modification_time_and_the_file_is_kept() {
    let env = Env::new();
    let dir = env.home().join("sessions");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("old.jsonl");
    let lines = [
        json!({"type": "session", "title": "Old work", "cwd": path_str(&env.work())}),
        json!({"role": "user", "content": "read it"}),
        json!({"role": "assistant", "content": "", "toolCalls": [{"id": "t1", "name": "read_file", "arguments": {"path": "a.rs"}}]}),
        json!({"role": "tool", "toolCallId": "t1", "content": "fn a() {}"}),
    ];
    let bytes: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&file, &bytes).unwrap();
    let sixty_days = std::time::Duration::from_secs(60 * 86_400);
    let old = std::time::SystemTime::now() - sixty_days;
    std::fs::File::options().write(true).open(&file).unwrap().set_modified(old).unwrap();

    // Opening the profile imports the file; its calls read as its trajectory.
    let sessions = env.run(&["sessions", "list", "--json"]).json();
    let id = sessions.as_array().unwrap().iter().find(|s| s["title"] == "Old work").unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let shown = env.run(&["trajectory", "show", &id]);
    assert!(
        shown.expect_code(0).stdout.contains("tool_call    {\"arguments\":{\"path\":\"a.rs\"}"),
        "{}",
        shown.stdout
    );
    // As JSON: the file's calls and results as trajectory records, keys
    // sorted at every level.
    let shown = env.run(&["trajectory", "show", &id, "--json"]);
    let document = shown.expect_code(0).json();
    let records = &document["legacy"]["records"];
    assert_eq!(
        records[0],
        json!({"kind": "tool_call", "toolCallId": "t1", "name": "read_file", "arguments": {"path": "a.rs"}})
    );
    assert_eq!((records[1]["kind"].as_str(), records[1]["content"].as_str()), (Some("tool_result"), Some("fn a() {}")));
    let expected = json!({"sessionId": id, "trajectories": [], "legacy": {"path": document["legacy"]["path"], "records": records}});
    assert_eq!(shown.stdout.trim_end(), serde_json::to_string_pretty(&seri_core::json::sorted(&expected)).unwrap());

    // A session starts: the file is older than the 30-day window, so its
    // trajectory is forgotten. The file and the conversation stay.
    let script = env.script("s.json", json!([text("hi")]));
    env.run(&["-p", "hello", "--script", path_str(&script)]).expect_code(0);
    let shown = env.run(&["trajectory", "show", &id]);
    let out = &shown.expect_code(0).stdout;
    assert!(out.contains("was pruned on") && out.contains("The file is untouched"), "{out}");
    let shown = env.run(&["trajectory", "show", &id, "--json"]);
    let legacy = &shown.expect_code(0).json()["legacy"];
    assert!(legacy["prunedAt"].is_string() && legacy["fileModifiedAt"].is_string(), "{legacy}");
    assert!(legacy.get("records").is_none(), "{legacy}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), bytes);
    let thread = env.run(&["thread", &id]);
    assert!(thread.expect_code(0).stdout.contains("user: read it"), "{}", thread.stdout);
}

/// A one-request OpenAI-style server on 127.0.0.1: answers "Hello" as an
/// event stream and hands back the request body it got.
fn one_chat_completion() -> (String, std::thread::JoinHandle<serde_json::Value>) {
    use std::io::{BufRead as _, BufReader, Read as _, Write as _};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let server = std::thread::spawn(move || {
        let (stream, _) = listener.accept().unwrap();
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut length = 0;
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = value.trim().parse().unwrap();
            }
            if line == "\r\n" {
                break;
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body).unwrap();
        let chunk = |delta: &str, finish: &str| {
            format!("data: {{\"choices\":[{{\"index\":0,\"delta\":{delta},\"finish_reason\":{finish}}}]}}\n\n")
        };
        let events = [chunk(r#"{"content":"Hello"}"#, "null"), chunk("{}", r#""stop""#), "data: [DONE]\n\n".to_owned()];
        let events = events.concat();
        let mut stream = stream;
        write!(stream, "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n{events}")
            .unwrap();
        serde_json::from_slice(&body).unwrap()
    });
    (url, server)
}

#[test]
fn sampling_knobs_and_reasoning_effort_are_sent_in_the_providers_form_and_recorded() {
    let env = Env::new();
    let (url, server) = one_chat_completion();
    let config = json!({
        "provider": "openai",
        "model": "gpt-5",
        "temperature": 0.2,
        "reasoningEffort": "low",
        "providers": { "openai": { "baseUrl": url, "apiKey": "test-key" } }
    });
    std::fs::write(env.home().join("config.json"), config.to_string()).unwrap();
    let flags = ["--top-p", "0.9", "--max-output-tokens", "1024", "--reasoning-effort", "high"];
    let run = env.run(&[&["-p", "Go", "--output-format", "json"][..], &flags].concat());
    let report = run.expect_code(0).json();
    assert_eq!(report["result"], "Hello", "{report}");
    let body = server.join().unwrap();
    let sent = (&body["temperature"], &body["top_p"], &body["max_completion_tokens"], &body["reasoning_effort"]);
    assert_eq!(sent, (&json!(0.2), &json!(0.9), &json!(1024), &json!("high")), "{body}");

    let session = report["session_id"].as_str().unwrap();
    let header = &env.run(&["trajectory", "show", session, "--json"]).json()["trajectories"][0]["header"];
    assert_eq!(header["sampling"], json!({ "temperature": 0.2, "topP": 0.9, "maxOutputTokens": 1024 }), "{header}");
    assert_eq!(header["reasoningEffort"], "high");

    let shown = env.run(&["config", "--top-p", "0.5"]).stdout;
    assert!(shown.lines().any(|l| l.starts_with("reasoningEffort") && l.contains("low")), "{shown}");
    assert!(shown.lines().any(|l| l.starts_with("topP") && l.contains("0.5") && l.contains("--top-p")), "{shown}");
    let refused = env.run(&["-p", "Go", "--temperature", "3"]);
    refused.expect_code(2);
    assert!(refused.stderr.contains("a number from 0 to 2"), "{}", refused.stderr);
}

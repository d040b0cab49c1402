//! One session, many processes, through the real binary: a second `seri`
//! on a busy session waits its turn (or, with `--no-wait`, is refused
//! naming the holder), a killed run is marked interrupted and settled,
//! `-c` never opens a child session, shown ids are unique, and a soak of
//! concurrent processes (with and without `kill -9`) leaves every session
//! consistent.

use std::collections::HashMap;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{Env, path_str, text};

/// What the database says, checked after every scenario here.
#[derive(Debug, Default)]
struct Audit {
    /// User messages with no final answer after them (before the next one).
    unanswered: usize,
    /// Runs still marked running.
    running: i64,
}

/// Checks what must hold whatever the processes did: the file is sound,
/// seqs are gapless, every tool call has exactly one result right after its
/// turn, no user message has two answers, and no run is left `running`.
#[track_caller]
fn audit(db: &Path) -> Audit {
    let conn = rusqlite::Connection::open(db).unwrap();
    let ok: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
    assert_eq!(ok, "ok");
    let mut stmt =
        conn.prepare("SELECT session_id, seq, type, payload FROM session_events ORDER BY session_id, seq").unwrap();
    let rows: Vec<(String, i64, String, String)> =
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))).unwrap().map(Result::unwrap).collect();
    let mut by_session: HashMap<String, Vec<(i64, String, Value)>> = HashMap::new();
    for (session, seq, kind, payload) in rows {
        by_session.entry(session).or_default().push((seq, kind, serde_json::from_str(&payload).unwrap()));
    }
    let mut audit = Audit::default();
    for (session, events) in &by_session {
        let seqs: Vec<i64> = events.iter().map(|e| e.0).collect();
        assert_eq!(seqs, (1..=events.len() as i64).collect::<Vec<_>>(), "seqs of {session} have a gap");
        let mut pending: Vec<String> = Vec::new();
        let mut answers_since_user: Option<usize> = None;
        for (seq, kind, body) in events {
            match kind.as_str() {
                "tool_call" => pending.push(body["id"].as_str().unwrap().to_owned()),
                "tool_result" => {
                    let id = body["toolCallId"].as_str().unwrap();
                    let at = pending.iter().position(|p| p == id);
                    assert!(at.is_some(), "{session} seq {seq}: a result for {id}, which has no open call");
                    pending.retain(|p| p != id);
                }
                "message" => {
                    assert!(pending.is_empty(), "{session} seq {seq}: a message while calls {pending:?} wait");
                    let role = body["role"].as_str().unwrap_or_default();
                    let from_person = role == "user" && body["actor"] != "system";
                    if from_person {
                        if answers_since_user == Some(0) {
                            audit.unanswered += 1;
                        }
                        answers_since_user = Some(0);
                    } else if role == "assistant" && body["meta"]["stopReason"] != "tool_use" {
                        let answers = answers_since_user.get_or_insert(0);
                        *answers += 1;
                        assert_eq!(*answers, 1, "{session} seq {seq}: a second answer to one message");
                    }
                }
                _ => {}
            }
        }
        if answers_since_user == Some(0) {
            audit.unanswered += 1;
        }
        assert!(pending.is_empty(), "{session}: calls {pending:?} never got a result");
    }
    audit.running = conn.query_row("SELECT count(*) FROM runs WHERE status = 'running'", [], |r| r.get(0)).unwrap();
    assert_eq!(audit.running, 0, "no run is left running");
    audit
}

fn first_session(db: &Path) -> String {
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.query_row("SELECT id FROM sessions ORDER BY created_at, id LIMIT 1", [], |r| r.get(0)).unwrap()
}

/// Starts `seri ARGS` in the background, output captured.
fn spawn(env: &Env, args: &[&str]) -> Child {
    env.seri().args(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap()
}

/// Waits until `seri.db` holds an event of `kind` (a deadline only so a
/// broken run fails the test instead of hanging it; nothing is timed).
fn wait_for_event(db: &Path, kind: &str, child: &mut Child) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Ok(conn) = rusqlite::Connection::open(db)
            && let Ok(n) =
                conn.query_row("SELECT count(*) FROM session_events WHERE type = ?1", [kind], |r| r.get::<_, i64>(0))
            && n > 0
        {
            return;
        }
        if let Some(status) = child.try_wait().unwrap() {
            panic!("seri ended ({status}) before recording a {kind}");
        }
        assert!(Instant::now() < deadline, "no {kind} was recorded");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn finish(child: Child) -> (i32, String, String) {
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Starts `seri -p` on a new session whose model calls `bash sleep 2`, and
/// returns it once the call is recorded (the run is inside its tool call),
/// with the session's id.
fn start_slow_run(env: &Env) -> (Child, String) {
    let db = env.home().join("seri.db");
    let slow = env.script(
        "slow.json",
        json!([
            { "tool_calls": [{ "id": "s1", "name": "bash", "arguments": { "command": "sleep 2; echo slept" } }] },
            text("First done.")
        ]),
    );
    let mut first = spawn(env, &["-p", "Take your time.", "--script", path_str(&slow), "--allow", "bash"]);
    wait_for_event(&db, "tool_call", &mut first);
    (first, first_session(&db))
}

#[test]
fn a_second_process_on_a_busy_session_waits_and_then_answers_after_it() {
    let env = Env::new();
    let db = env.home().join("seri.db");
    let (first, session) = start_slow_run(&env);
    let quick = env.script("quick.json", json!([text("Second done.")]));
    let second = env.run(&["--resume", &session, "-p", "Me too.", "--script", path_str(&quick)]);
    second.expect_code(0);
    assert_eq!(second.stdout, "Second done.\n");
    let (code, stdout, stderr) = finish(first);
    assert_eq!((code, stdout.as_str()), (0, "First done.\n"), "{stderr}");

    let thread = env.run(&["thread", &session]).stdout;
    assert_eq!(
        thread.lines().collect::<Vec<_>>(),
        [
            "[1] user: Take your time.",
            "[2] assistant:",
            "[3] tool call bash: {\"command\":\"sleep 2; echo slept\"}",
            "[4] tool result bash: exit code: 0",
            "  stdout:",
            "  slept",
            "[5] assistant: First done.",
            "[6] user: Me too.",
            "[7] assistant: Second done.",
        ],
        "the second message waited for the first run's turn to end: {thread}"
    );
    assert_eq!(audit(&db).unanswered, 0);
}

#[test]
fn no_wait_refuses_a_busy_session_naming_the_holder() {
    let env = Env::new();
    let db = env.home().join("seri.db");
    let (first, session) = start_slow_run(&env);
    let quick = env.script("quick.json", json!([text("never")]));
    let refused = env.run(&["--resume", &session, "-p", "Now!", "--no-wait", "--script", path_str(&quick)]);
    refused.expect_code(1);
    let expected = format!("is busy: a run in seri pid {} on host ", first.id());
    assert!(refused.stderr.contains(&expected), "{}", refused.stderr);
    assert!(refused.stdout.is_empty(), "{}", refused.stdout);
    let (code, _, stderr) = finish(first);
    assert_eq!(code, 0, "{stderr}");
    assert!(!env.run(&["thread", &session]).stdout.contains("Now!"), "the refused message was never posted");
    audit(&db);
}

#[test]
fn a_killed_run_is_marked_interrupted_and_its_call_settled_when_the_session_is_next_used() {
    let env = Env::new();
    let db = env.home().join("seri.db");
    let (mut first, session) = start_slow_run(&env);
    first.kill().unwrap(); // SIGKILL: nothing of seri's runs after this.
    first.wait().unwrap();
    let status = |db: &Path| -> String {
        rusqlite::Connection::open(db).unwrap().query_row("SELECT status FROM runs", [], |r| r.get(0)).unwrap()
    };
    assert_eq!(status(&db), "running", "a killed process cannot say so itself");

    let again = env.script("again.json", json!([text("Back.")]));
    let run = env.run(&["-c", "-p", "Are you there?", "--script", path_str(&again)]);
    run.expect_code(0);
    let conn = rusqlite::Connection::open(&db).unwrap();
    let statuses: Vec<String> = conn
        .prepare("SELECT status FROM runs ORDER BY started_at, id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(statuses, ["interrupted", "succeeded"]);
    let thread = env.run(&["thread", &session]).stdout;
    assert!(
        thread.contains("[4] tool result bash (error): interrupted: seri stopped before this call finished"),
        "{thread}"
    );
    audit(&db);
}

#[test]
fn continue_opens_the_persons_session_not_a_child_session_that_ended_later() {
    let env = Env::new();
    let db = env.home().join("seri.db");
    let first = env.script("first.json", json!([text("Hello.")]));
    env.run(&["-p", "The person's session.", "--script", path_str(&first)]).expect_code(0);
    let person = first_session(&db);
    // A delegated run's child session, updated after the person's (as a
    // crash mid-delegation leaves it), written as the store would.
    {
        let store = seri_store::Store::open(&db).unwrap();
        let agent = store.agent(&seri_core::AgentId::local());
        let run = agent.runs(person.parse().unwrap()).unwrap().remove(0).id;
        let mut seed = agent.new_seed(path_str(&env.work()));
        seed.parent_run_id = Some(run);
        agent.create_session(&seed).unwrap();
        agent.append(seed.id, [seri_core::EventBody::Message(seri_core::Message::user("A child's task"))]).unwrap();
    }
    let again = env.script("again.json", json!([text("Still you.")]));
    let run = env.run(&["-c", "-p", "Where was I?", "--script", path_str(&again), "--output-format", "json"]);
    run.expect_code(0);
    assert_eq!(run.json()["session_id"], person.as_str());
}

#[test]
fn ids_are_shown_as_unique_prefixes_that_every_command_takes_back() {
    let env = Env::new();
    let db = env.home().join("seri.db");
    env.run(&["config"]).expect_code(0);
    // Sessions made in one millisecond, as a multi-file import makes them.
    {
        let clock = std::sync::Arc::new(seri_store::ManualClock::new(seri_core::Timestamp(1_796_018_400_000)));
        let store = seri_store::Store::open_with(&db, seri_store::StoreOptions::with_clock(clock)).unwrap();
        let agent = store.agent(&seri_core::AgentId::local());
        for title in ["one", "two", "three"] {
            let seed = agent.new_seed(path_str(&env.work()));
            agent.create_session(&seed).unwrap();
            agent.append(seed.id, [seri_core::EventBody::Message(seri_core::Message::user(title))]).unwrap();
        }
    }
    let list = env.run(&["sessions", "list"]);
    list.expect_code(0);
    let shown: Vec<&str> = list.stdout.lines().map(|l| l.split_whitespace().next().unwrap()).collect();
    assert_eq!(shown.len(), 3, "{}", list.stdout);
    for id in &shown {
        assert!(id.len() >= 8, "{id}");
        let thread = env.run(&["thread", id]);
        thread.expect_code(0);
        assert_eq!(thread.stdout.lines().count(), 1, "{id} names exactly one session: {}", thread.stdout);
        env.run(&["sessions", "show", id]).expect_code(0);
    }
}

/// A script of `turns` model turns: a `list` call each, then an answer.
fn busy_script(env: &Env, name: &str, turns: usize) -> std::path::PathBuf {
    let mut steps: Vec<Value> = (1..turns)
        .map(|i| json!({ "tool_calls": [{ "id": format!("l{i}"), "name": "list", "arguments": { "path": "." } }] }))
        .collect();
    steps.push(text(&format!("{name} done.")));
    env.script(&format!("{name}.json"), Value::Array(steps))
}

#[test]
fn soak_eight_processes_on_one_session_and_eight_on_their_own() {
    let env = Env::new();
    let db = env.home().join("seri.db");
    let start = env.script("start.json", json!([text("Ready.")]));
    env.run(&["-p", "Start.", "--script", path_str(&start)]).expect_code(0);
    let shared = first_session(&db);
    let mut children = Vec::new();
    for i in 0..8 {
        let script = busy_script(&env, &format!("shared{i}"), 50);
        let message = format!("Shared task {i}.");
        children.push(spawn(&env, &["--resume", &shared, "-p", &message, "--script", path_str(&script)]));
        let script = busy_script(&env, &format!("own{i}"), 50);
        let message = format!("Own task {i}.");
        children.push(spawn(&env, &["-p", &message, "--script", path_str(&script)]));
    }
    for child in children {
        let (code, stdout, stderr) = finish(child);
        assert_eq!(code, 0, "{stdout}\n{stderr}");
        assert!(stdout.ends_with(" done.\n"), "{stdout}");
    }
    let audit = audit(&db);
    assert_eq!(audit.unanswered, 0, "every message was answered exactly once");
    let conn = rusqlite::Connection::open(&db).unwrap();
    let shared_events: i64 =
        conn.query_row("SELECT count(*) FROM session_events WHERE session_id = ?1", [&shared], |r| r.get(0)).unwrap();
    // The start (2 events) and 8 runs of one message, 49 calls with their
    // turns and results, and the answer.
    assert_eq!(shared_events, 2 + 8 * (1 + 49 * 3 + 1));
}

/// A small deterministic generator, so a failing soak can be replayed from
/// the seed it prints.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n
    }
}

#[test]
fn soak_with_kill_9_at_random_points_then_resume() {
    let seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(7, |d| d.as_nanos() as u64);
    let mut rng = Lcg(seed);
    let env = Env::new();
    let db = env.home().join("seri.db");
    let start = env.script("start.json", json!([text("Ready.")]));
    env.run(&["-p", "Start.", "--script", path_str(&start)]).expect_code(0);
    let shared = first_session(&db);
    let mut children: Vec<Option<Child>> = (0..8)
        .map(|i| {
            let script = busy_script(&env, &format!("k{i}"), 30);
            let message = format!("Task {i}.");
            Some(spawn(&env, &["--resume", &shared, "-p", &message, "--script", path_str(&script)]))
        })
        .collect();
    // Bounded: four kills at most, each after a random pause.
    for _ in 0..4 {
        std::thread::sleep(Duration::from_millis(50 + rng.below(250)));
        let pick = rng.below(8) as usize;
        if let Some(mut child) = children[pick].take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
    for child in children.into_iter().flatten() {
        let (code, stdout, stderr) = finish(child);
        assert_eq!(code, 0, "seed {seed}: {stdout}\n{stderr}");
    }
    let again = env.script("again.json", json!([text("After the kills.")]));
    let resumed = env.run(&["--resume", &shared, "-p", "Still consistent?", "--script", path_str(&again)]);
    resumed.expect_code(0);
    assert_eq!(resumed.stdout, "After the kills.\n", "seed {seed}");
    // A killed run's message may be left without an answer; none has two,
    // every call has its result, and no run is left running.
    audit(&db);
}

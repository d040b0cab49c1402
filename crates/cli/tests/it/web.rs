//! The web UI in a real headless Chromium, against `seri serve` with the
//! scripted provider: sign-in, the session list, the transcript, the
//! context meter, continuation cards and following, approvals, and
//! markdown that cannot carry script. Each test saves screenshots under
//! `target/web-ui/` for a reviewer.

use std::process::Child;
use std::time::Duration;

use serde_json::{Value, json};

use crate::browser::{self, Browser, Theme, Window};
use crate::serve::{http, serve, terminate};
use crate::support::{Env, path_str, text};

pub(crate) const TOKEN: &str = "web-ui-test-token";

/// `seri serve` on a scripted provider, stopped when dropped.
pub(crate) struct Served {
    child: Child,
    pub(crate) url: String,
}

impl Served {
    pub(crate) fn start(env: &Env, turns: Value, extra: &[&str]) -> Self {
        let script = env.script("web.json", turns);
        let mut args = vec!["--provider", "script", "--script", path_str(&script)];
        args.extend_from_slice(extra);
        let (child, url) = serve(env, &args, TOKEN);
        Self { child, url }
    }

    pub(crate) fn api(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let (status, text) = http(&self.url, method, path, Some(TOKEN), body.as_ref());
        assert!((200..300).contains(&status), "{method} {path}: {status} {text}");
        serde_json::from_str(&text).unwrap()
    }

    pub(crate) fn new_session(&self) -> String {
        self.api("POST", "/api/sessions", Some(json!({})))["session"]["id"].as_str().unwrap().to_owned()
    }

    pub(crate) fn say(&self, session: &str, message: &str) -> Value {
        self.api("POST", &format!("/api/sessions/{session}/messages"), Some(json!({ "text": message })))
    }

    pub(crate) fn page(&self, session: &str) -> String {
        format!("{}/s/{session}", self.url)
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        terminate(&mut self.child);
    }
}

fn continue_call(id: &str, sources: Value) -> Value {
    json!({ "tool_calls": [{
        "id": id,
        "name": "continue_session",
        "arguments": {
            "reason": "topic_change",
            "title": "Lisbon hotel",
            "description": "Finding a hotel near the river",
            "handoff": {
                "purpose": "Find a hotel in Lisbon.",
                "currentRequest": "A hotel near the river.",
                "establishedFacts": ["The person travels in May."]
            },
            "sources": sources
        }
    }] })
}

fn pathname(b: &Browser) -> String {
    b.js("return location.pathname", vec![]).as_str().unwrap().to_owned()
}

/// Keys, as WebDriver's code points for them: Enter, Shift, and the one
/// that releases every modifier held.
const ENTER: &str = "\u{e007}";
const SHIFT: &str = "\u{e008}";
const RELEASE: &str = "\u{e000}";

#[test]
fn the_page_needs_a_sign_in_and_keeps_the_token_in_an_http_only_cookie() {
    if !browser::available() {
        return;
    }
    let env = Env::new();
    let served = Served::start(&env, json!([]), &[]);
    served.api("POST", "/api/sessions", Some(json!({ "title": "Secret plans" })));

    let b = Browser::start();
    b.goto(&served.url);
    b.wait_for("the sign-in form", "document.getElementById('sign-in')");
    let source = b.js("return document.documentElement.outerHTML", vec![]);
    assert!(!source.as_str().unwrap().contains("Secret plans"), "no data before sign-in");
    assert_eq!(b.js("return document.getElementById('session-list')", vec![]), Value::Null);
    // The API refuses the page's own calls too.
    let status = b.js("return fetch('/api/sessions').then(r => r.status)", vec![]);
    assert_eq!(status, 401);
    b.screenshot("sign-in");

    b.type_into("#token", "not-the-token");
    b.click("#sign-in button[type=submit]");
    assert_eq!(b.text(".problem"), "That is not a token of this server.");

    b.sign_in(&served.url, TOKEN);
    b.wait_for(
        "the session in the list",
        "document.querySelector('.session-item .item-title').innerText === 'Secret plans'",
    );
    let cookies = b.cookies();
    let cookie = cookies.iter().find(|c| c.0 == "seri_token").expect("the sign-in cookie");
    assert!(cookie.1, "HttpOnly: {cookies:?}");
    assert_eq!(cookie.2.as_deref(), Some("Strict"), "{cookies:?}");
    assert_eq!(b.js("return document.cookie", vec![]), "", "page scripts cannot read the token");
    b.screenshot("session-list");

    b.click(".sign-out button");
    b.wait_for("the sign-in form again", "document.getElementById('sign-in')");
}

#[test]
fn the_context_meter_is_muted_below_70_amber_from_70_and_red_from_85_percent() {
    if !browser::available() {
        return;
    }
    let env = Env::new();
    let usage = |input: u64| json!({ "text": "ok", "usage": { "input": input - 500, "cache_read": 300, "cache_write": 200, "output": 5 } });
    let served = Served::start(&env, json!([usage(6900), usage(7000), usage(8500)]), &["--context-window", "10000"]);
    let sessions: Vec<String> = (0..3).map(|_| served.new_session()).collect();
    for session in &sessions {
        served.say(session, "How full?");
    }
    let empty = served.new_session();

    let b = Browser::start();
    b.sign_in(&served.url, TOKEN);
    b.goto(&served.page(&empty));
    b.wait_for("the empty session", "document.querySelector('.session-head h1')");
    assert_eq!(b.js("return document.querySelector('.meter')", vec![]), Value::Null, "no meter before a measurement");

    let expected = [("muted", "6.9k", 69), ("amber", "7k", 70), ("red", "8.5k", 85)];
    for (session, (tone, tokens, percent)) in sessions.iter().zip(expected) {
        b.goto(&served.page(session));
        let label = b.wait_for("the meter", "document.querySelector('.meter').getAttribute('aria-label')");
        assert_eq!(label, format!("Context: {tokens} of 10k tokens used ({percent}%)"));
        assert_eq!(b.js("return document.querySelector('.meter').dataset.tone", vec![]), tone);
        assert_eq!(b.js("return document.querySelector('.meter').getAttribute('role')", vec![]), "img");
        assert_eq!(b.js("return document.querySelector('.meter').title", vec![]), label);
        assert_eq!(b.js("return document.querySelector('.meter').tabIndex", vec![]), 0, "reachable by keyboard");
        b.screenshot(&format!("meter-{tone}"));
    }
}

#[test]
fn a_continuation_is_followed_by_the_pages_that_saw_its_turn_and_is_history_to_others() {
    if !browser::available() {
        return;
    }
    let env = Env::new();
    let turns = json!([
        text("Hello! How can I help?"),
        continue_call("cont_1", json!([{ "kind": "session_events", "fromSeq": 1, "toSeq": 2 }])),
        text("Here are three hotels."),
        text("Back on the first topic."),
    ]);
    let served = Served::start(&env, turns, &[]);
    let predecessor = served.new_session();
    served.say(&predecessor, "hi");

    let sender = Browser::start();
    sender.sign_in(&served.url, TOKEN);
    sender.goto(&served.page(&predecessor));
    sender.text(".msg.assistant");
    let watcher = Browser::start();
    watcher.sign_in(&served.url, TOKEN);
    watcher.goto(&served.page(&predecessor));
    watcher.text(".msg.assistant");

    sender.type_into("#composer-input", &format!("New topic: a hotel in Lisbon near the river.{ENTER}"));
    let path =
        sender.wait_for("the successor", &format!("location.pathname !== '/s/{predecessor}' && location.pathname"));
    let successor = path.as_str().unwrap().trim_start_matches("/s/").to_owned();
    assert_ne!(successor, predecessor);
    assert_eq!(sender.text(".continuation-header"), "← Continued from “hi”");
    assert_eq!(sender.text(".handoff .handoff-text"), "Handoff from “hi” (New topic)");
    assert_eq!(sender.text(".chip.from-previous"), "From previous session");
    sender.wait_for(
        "the successor's answer",
        "document.querySelector('.transcript').innerText.includes('Here are three hotels.')",
    );
    assert_eq!(sender.text(".session-head h1"), "Lisbon hotel");
    // The handoff card holds the handoff (from the edge), never the excerpts.
    sender.click(".handoff > summary");
    sender.wait_for("the handoff", "document.querySelector('.handoff .handoff-section')");
    let card = sender.text(".handoff .handoff-body");
    assert!(card.contains("Find a hotel in Lisbon.") && card.contains("thread seq 1–2"), "{card}");
    assert!(!card.contains("Decisions"), "empty sections are left out: {card}");
    assert_eq!(sender.js("return document.querySelectorAll('.excerpt').length", vec![]), 0);
    sender.screenshot("successor");

    // The details load the excerpts on demand, exactly as the thread prints them.
    sender.click(".handoff-card .info");
    let excerpt = sender.text(".excerpt pre");
    assert_eq!(excerpt.trim_end(), "[1] user: hi\n[2] assistant: Hello! How can I help?");
    let lineage = sender.text("#details-body .facts");
    assert!(lineage.contains(&predecessor) && lineage.contains("topic_change"), "{lineage}");
    sender.screenshot("handoff-details");
    sender.click("#details-close");

    // Back goes to the predecessor and stays there.
    sender.click(".continuation-header");
    sender.wait_for("the predecessor", &format!("location.pathname === '/s/{predecessor}'"));
    assert_eq!(sender.text(".transition .transition-text"), "Continued in “Lisbon hotel” (New topic)");
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(pathname(&sender), format!("/s/{predecessor}"), "Back is not redirected again");
    sender.click(".transition-card .card-actions .button");
    sender.wait_for("the successor again", &format!("location.pathname === '/s/{successor}'"));
    sender.goto(&served.page(&predecessor));
    sender.text(".transition .transition-text");
    std::thread::sleep(Duration::from_millis(800));
    assert_eq!(pathname(&sender), format!("/s/{predecessor}"), "a reload shows the same story, no redirect");
    let chip = sender.text(&format!("[data-session='{predecessor}'] .chip.continued"));
    assert_eq!(chip, "Continued in “Lisbon hotel”");
    // Focus (or hover) on ⓘ shows the bubble with the handoff; a click the whole dialog.
    sender.wait_for("the card from the edge", "document.querySelector('.transition-card .bubble')");
    sender.js("document.querySelector('.transition-card .info').focus()", vec![]);
    sender.wait_for(
        "the bubble",
        "getComputedStyle(document.querySelector('.transition-card .bubble')).display === 'block'",
    );
    let bubble = sender.text(".transition-card .bubble");
    assert!(bubble.contains("Find a hotel in Lisbon.") && bubble.contains("topic_change (New topic)"), "{bubble}");
    sender.screenshot("transition-bubble");
    sender.click(".transition-card .info");
    let details = sender.text("#details-body");
    assert!(details.contains(&successor) && details.contains("Find a hotel in Lisbon."), "{details}");
    sender.wait_for("the edge", "document.querySelector('#details-body').innerText.includes('Initiating message')");
    sender.click("#details-close");
    sender.screenshot("predecessor");
    // Typing in the continued session branches it: the answer lands here.
    assert!(sender.text("#composer-hint").contains("a message here branches this session"));
    sender.type_into("#composer-input", &format!("One more thing about the first topic.{ENTER}"));
    sender.wait_for(
        "the branch's answer",
        "document.querySelector('.transcript').innerText.includes('Back on the first topic.')",
    );
    assert_eq!(pathname(&sender), format!("/s/{predecessor}"), "a branch is not a continuation: no move");

    // The other window watched the turn stream: it followed it too, with
    // no fault on either page.
    watcher.wait_for("the successor in the other window", &format!("location.pathname === '/s/{successor}'"));
    watcher.wait_for("the handoff card", "document.querySelector('.handoff .handoff-text')");
    for page in [&sender, &watcher] {
        assert_eq!(page.js("return document.body.dataset.fault === undefined", vec![]), true, "no fault in the page");
    }
    // A window that opens the predecessor afterwards saw nothing of the
    // turn: it stays, with the card and a notice.
    let late = Browser::start();
    late.sign_in(&served.url, TOKEN);
    late.goto(&served.page(&predecessor));
    let notice = late.text(".notice");
    assert!(notice.starts_with("This session continued in “Lisbon hotel” (New topic)."), "{notice}");
    assert_eq!(late.text(".transition .transition-text"), "Continued in “Lisbon hotel” (New topic)");
    late.screenshot("other-window");
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(pathname(&late), format!("/s/{predecessor}"));
}

#[test]
fn the_transcript_renders_markdown_inert_and_marks_failures() {
    if !browser::available() {
        return;
    }
    let env = Env::new();
    let hostile = "**bold** and `code`\n\n<script>window.__pwned = 1</script>\n\n<img src=x onerror=\"window.__pwned = 2\">\n\n[click](javascript:window.__pwned=3)";
    let turns = json!([
        { "thinking": "Let me think.", "text": hostile },
        { "tool_calls": [{ "id": "b1", "name": "bash", "arguments": { "command": "echo out; exit 3" } }] },
        text("It failed."),
        continue_call("cont_bad", json!([{ "kind": "nowhere" }])),
        text("Staying here."),
    ]);
    let served = Served::start(&env, turns, &["--yes"]);
    let session = served.new_session();

    let b = Browser::start();
    b.sign_in(&served.url, TOKEN);
    b.goto(&served.page(&session));
    // Shift+Enter is a new line; Enter sends.
    b.type_into("#composer-input", &format!("Say{SHIFT}{ENTER}{RELEASE}something{ENTER}"));
    assert_eq!(b.text(".msg.user .text"), "Say\nsomething");
    b.text(".msg.assistant strong");
    assert_eq!(b.text(".msg.assistant strong"), "bold");
    assert_eq!(b.text(".msg.assistant code"), "code");
    let shown = b.text(".msg.assistant");
    assert!(shown.contains("<script>window.__pwned = 1</script>"), "shown as text: {shown}");
    assert!(shown.contains("<img src=x onerror="), "{shown}");
    assert_eq!(b.js("return document.querySelectorAll('.transcript script, .transcript img, .transcript a[href^=javascript]').length", vec![]), 0);
    assert_eq!(b.js("return window.__pwned === undefined", vec![]), true);
    assert_eq!(b.js("return document.querySelector('.thinking').open", vec![]), false, "thinking is collapsed");

    served.say(&session, "Run it.");
    b.wait_for("the failed command", "document.querySelector('.tool.failed .mark').innerText === '✗'");
    assert_eq!(b.text(".tool .tool-name"), "bash");
    // The exit code and the output come from the result's facts.
    assert_eq!(b.text(".tool .tool-summary"), "echo out; exit 3");
    assert!(b.text(".tool .tool-meta").starts_with("exit 3"), "{}", b.text(".tool .tool-meta"));
    b.click(".tool > summary");
    assert_eq!(b.text(".tool .tool-output").trim_end(), "out");
    served.say(&session, "Move on.");
    b.wait_for("the refused continuation", "document.querySelector('.transition.refused')");
    assert_eq!(b.text(".transition .transition-text"), "Continuation refused");
    b.wait_for("the answer after it", "document.querySelector('.transcript').innerText.includes('Staying here.')");
    // A reload draws the same from durable state.
    b.goto(&served.page(&session));
    b.wait_for("the reloaded transcript", "document.querySelector('.transcript').innerText.includes('Staying here.')");
    assert_eq!(b.js("return window.__pwned === undefined", vec![]), true);
    assert_eq!(b.text(".transition.refused .transition-text"), "Continuation refused");
    b.wait_for("the session in the list", &format!("document.querySelector(\"[data-session='{session}'].current\")"));
    assert_eq!(b.js("return document.body.dataset.fault === undefined", vec![]), true, "no fault in the page");
    b.screenshot("transcript");
}

/// `compact_count`'s form: `819`, `5.9k`.
fn compact(n: u64) -> String {
    if n < 1000 { n.to_string() } else { format!("{:.1}k", n as f64 / 1000.0) }
}

#[test]
fn the_apis_context_meter_is_the_repls_context_figure_over_the_sessions_window() {
    use crate::terminal::Typing as _;
    let env = Env::new();
    let served = Served::start(&env, json!([text("Hello.")]), &[]);
    let session = served.new_session();
    assert_eq!(served.say(&session, "Hi")["status"], "succeeded");
    let shown = served.api("GET", &format!("/api/sessions/{session}"), None);
    let usage = &shown["contextUsage"];
    assert_eq!(usage["estimated"], true, "no usage was reported: {shown}");
    let (tokens, window) = (usage["tokens"].as_u64().unwrap(), usage["window"].as_u64().unwrap());
    assert_eq!(shown["contextWindow"].as_u64(), Some(window));
    // The whole next request, tool definitions and system prompt included.
    assert!(tokens > 1000, "{shown}");
    // The REPL's /context on the same session: the same total, over the same window.
    let script = env.script("repl.json", json!([]));
    let mut p = crate::terminal::on_terminal(&env, &["-r", &session, "--script", path_str(&script)], "dumb", &[]);
    p.sees("/help for commands");
    p.types("/context");
    p.sees(&format!("the window is {} tokens", compact(window)));
    p.sees("total");
    p.sees(&compact(tokens));
    p.leaves();
}

#[test]
fn an_answer_cut_short_by_a_cancel_is_marked_interrupted_in_the_page_and_the_thread() {
    if !browser::available() {
        return;
    }
    let env = Env::new();
    let slow = json!({ "chunks": ["Once upon a time, ", "there was ", "a very ", "long ", "story."], "delay_ms": 400 });
    let served = Served::start(&env, json!([slow]), &[]);
    let session = served.new_session();
    // Cancelled over the API while the answer streams, two chunks in.
    let posted = json!({ "text": "Tell me a story.", "wait": false });
    let (status, _) =
        http(&served.url, "POST", &format!("/api/sessions/{session}/messages"), Some(TOKEN), Some(&posted));
    assert_eq!(status, 202);
    std::thread::sleep(std::time::Duration::from_millis(1000));
    let (status, said) =
        http(&served.url, "POST", &format!("/api/sessions/{session}/cancel"), Some(TOKEN), Some(&json!({})));
    assert!(status < 300, "{status} {said}");
    let b = Browser::start();
    b.sign_in(&served.url, TOKEN);
    b.goto(&served.page(&session));
    b.wait_for("the mark", "document.querySelector('.msg.assistant .interrupted')");
    assert_eq!(b.text(".msg.assistant .interrupted"), "Interrupted");
    assert!(b.text(".msg.assistant").starts_with("Once upon a time,"), "{}", b.text(".msg.assistant"));
    // The thread says it too.
    let (_, thread) = http(&served.url, "GET", &format!("/api/sessions/{session}/thread"), Some(TOKEN), None);
    assert!(thread.contains("[2] assistant (interrupted): Once upon a time,"), "{thread}");
    assert!(!thread.contains("long story."), "{thread}");
}

#[test]
fn an_approval_is_answered_in_the_page_and_cancel_stops_a_waiting_run() {
    if !browser::available() {
        return;
    }
    let env = Env::new();
    let write = |id: &str, file: &str| json!({ "tool_calls": [{ "id": id, "name": "bash", "arguments": { "command": format!("echo yes > {file}") } }] });
    std::fs::write(env.work().join("plan.md"), "step one\nstep two\n").unwrap();
    let rewrite = json!({ "tool_calls": [{ "id": "w3", "name": "write_file", "arguments": { "path": "plan.md", "content": "step one\nstep 2\n" } }] });
    let turns = json!([
        write("w1", "proof.txt"),
        text("Written."),
        write("w2", "second.txt"),
        rewrite,
        text("Understood, the plan stays."),
    ]);
    let served = Served::start(&env, turns, &[]);

    let b = Browser::start();
    b.sign_in(&served.url, TOKEN);
    b.click("#new-session");
    b.wait_for("the new session", "location.pathname.startsWith('/s/') && document.querySelector('#composer-input')");
    assert_eq!(b.text(".session-head h1"), "Untitled");
    assert!(!b.text(".session-head").contains("null"), "nothing absent is drawn");
    b.type_into("#composer-input", &format!("Write the proof.{ENTER}"));
    let question = b.text(".approval");
    assert!(question.contains("bash asks to run") && question.contains("echo yes > proof.txt"), "{question}");
    assert_eq!(
        b.js("return document.getElementById('cancel').hidden", vec![]),
        false,
        "Cancel shows while the run runs"
    );
    // A question waits for a person: the page never says it is running.
    b.wait_for(
        "waiting for you",
        "document.querySelector('.run-status').innerText === 'Waiting for you: bash asks to run'",
    );
    b.screenshot("approval");
    b.click(".approval .button.primary");
    b.wait_for(
        "the result",
        "document.querySelector('.tool.done .mark') && document.querySelector('.tool.done .mark').innerText === '✓'",
    );
    b.wait_for("the answer", "document.querySelector('.transcript').innerText.includes('Written.')");
    assert!(env.work().join("proof.txt").exists(), "the allowed command ran");
    b.wait_for("Cancel to go", "document.getElementById('cancel').hidden");

    b.type_into("#composer-input", &format!("Write another.{ENTER}"));
    b.wait_for("the second question", "document.querySelectorAll('.approval').length === 2");
    b.click("#cancel");
    b.wait_for("the cancelled run", "document.querySelector('.run-status').innerText === 'Cancelled.'");
    assert!(!env.work().join("second.txt").exists(), "a cancelled question runs nothing");

    // A file change asks with its diff; a refusal can say what to do instead.
    b.type_into("#composer-input", &format!("Fix the plan.{ENTER}"));
    b.wait_for("the third question", "document.querySelectorAll('.approval').length === 3");
    assert_eq!(b.text(".approval:last-of-type .preview.diff .del").trim_end(), "-step two");
    assert_eq!(b.text(".approval:last-of-type .preview.diff .add").trim_end(), "+step 2");
    b.screenshot("approval-diff");
    b.type_into(".approval:last-of-type .instead", &format!("Leave the plan as it is.{ENTER}"));
    b.wait_for(
        "the answer after the refusal",
        "document.querySelector('.transcript').innerText.includes('Understood, the plan stays.')",
    );
    let session = pathname(&b).trim_start_matches("/s/").to_owned();
    let (_, thread) = http(&served.url, "GET", &format!("/api/sessions/{session}/thread"), Some(TOKEN), None);
    assert!(thread.contains("and said instead: Leave the plan as it is."), "{thread}");
    assert_eq!(std::fs::read_to_string(env.work().join("plan.md")).unwrap(), "step one\nstep two\n");
}

#[test]
fn the_list_is_live_and_nests_child_sessions_under_their_parent() {
    if !browser::available() {
        return;
    }
    let env = Env::new();
    let turns = json!([
        { "tool_calls": [{ "id": "d1", "name": "delegate", "arguments": { "task": "Count the files." } }] },
        text("Three files."),
        text("The child counted three files."),
    ]);
    let served = Served::start(&env, turns, &["--yes"]);
    let b = Browser::start();
    b.sign_in(&served.url, TOKEN);
    b.wait_for("an empty list", "document.querySelector('#session-list').innerText.includes('No sessions yet.')");

    let parent = served.new_session();
    b.wait_for("the new session, live", &format!("document.querySelector(\"[data-session='{parent}']\")"));
    served.say(&parent, "Ask a child to count the files.");
    let child = b.wait_for(
        "the child, nested",
        &format!("document.querySelector(\"[data-session='{parent}'] .children .session-item\").dataset.session"),
    );
    assert_ne!(child.as_str().unwrap(), parent);
    assert_eq!(b.text(&format!("[data-session='{parent}'] .children .chip.child")), "Child session");
    assert_eq!(
        b.js(
            &format!(
                "return document.querySelectorAll(\"#session-list > [data-session='{}']\").length",
                child.as_str().unwrap()
            ),
            vec![]
        ),
        0
    );
    let meta = b.text(&format!("[data-session='{parent}'] > a .item-meta"));
    assert!(meta.starts_with("just now · "), "{meta}");
    b.screenshot("list-with-child");

    // A hundred newer sessions push the parent off the first page; older
    // pages come on request.
    for _ in 0..100 {
        served.new_session();
    }
    b.wait_for(
        "the first page only",
        &format!("!document.querySelector(\"[data-session='{parent}']\") && document.querySelector('.older')"),
    );
    b.click(".older");
    b.wait_for(
        "the parent again",
        &format!("document.querySelector(\"[data-session='{parent}'] .children .chip.child\")"),
    );
}

#[test]
fn a_page_that_opened_the_session_during_its_turn_follows_that_turn() {
    if !browser::available() {
        return;
    }
    let env = Env::new();
    let turns = json!([
        { "tool_calls": [{ "id": "b1", "name": "bash", "arguments": { "command": "echo checked" } }] },
        continue_call("cont_1", json!([])),
        text("Here are three hotels."),
    ]);
    let served = Served::start(&env, turns, &[]);
    let session = served.new_session();
    let sender = Browser::start();
    sender.sign_in(&served.url, TOKEN);
    sender.goto(&served.page(&session));
    sender.type_into("#composer-input", &format!("Check, then a hotel in Lisbon.{ENTER}"));
    sender.text(".approval");

    // Opened while the turn runs (it waits on the question): it joins the turn.
    let joiner = Browser::start();
    joiner.sign_in(&served.url, TOKEN);
    joiner.goto(&served.page(&session));
    let asked = joiner.text(".approval");
    assert!(asked.contains("echo checked"), "a question asked before the page opened is shown: {asked}");
    sender.click(".approval .button.primary");
    for page in [&sender, &joiner] {
        let moved =
            page.wait_for("the successor", &format!("location.pathname !== '/s/{session}' && location.pathname"));
        assert!(moved.as_str().unwrap().starts_with("/s/"), "{moved}");
        assert_eq!(page.text(".continuation-header"), "← Continued from “Check, then a hotel in Lisbon.”");
    }
}

#[test]
fn the_pages_pure_parts_hold_their_rules() {
    if !browser::available() {
        return;
    }
    let env = Env::new();
    let served = Served::start(&env, json!([]), &[]);
    let b = Browser::start();
    b.sign_in(&served.url, TOKEN);
    // `body` sees the modules as h, r, f, t and s, and its argument as `input`.
    let run_on = |body: &str, input: Value| -> Value {
        let script = format!(
            "const input = arguments[0]; const done = arguments[arguments.length - 1];\
             Promise.all([import('/ui/handoff.js'), import('/ui/render.js'), import('/ui/follow.js'), import('/ui/tools.js'), import('/ui/runstate.js')])\
             .then(([h, r, f, t, s]) => {{ {body} }}).then(done, (e) => done('error: ' + e))"
        );
        b.js_async(&script, vec![input])
    };
    let run = |body: &str| run_on(body, Value::Null);
    assert_eq!(
        run(
            "return ['topic_change','phase_change','refocus','context_pressure','user_request','other','nonsense'].map(h.reasonLabel)"
        ),
        json!(["New topic", "New phase", "Refocused", "Context was full", "Requested", "", ""])
    );
    // The handoff as the server gives it (the runtime's parse): sections in
    // their order, each only when present, then the agent's own by key; a
    // key is a title, drawn as text.
    assert_eq!(
        run("return h.handoffSections({cautions: ['hot'], purpose: 'P', decisions: [], openQuestions: ['  '],\
             extra: {'Zed': ['z'], 'x\\n## Fake heading': ['y'], Budget: ['cheap', 'really']}})"),
        json!([
            { "title": "Purpose", "prose": "P", "items": [] },
            { "title": "Cautions", "prose": null, "items": ["hot"] },
            { "title": "Budget", "prose": null, "items": ["cheap", "really"] },
            { "title": "Zed", "prose": null, "items": ["z"] },
            { "title": "x\n## Fake heading", "prose": null, "items": ["y"] },
        ])
    );
    assert_eq!(
        run(
            "return [{kind:'resource',uri:'https://a.example'},{kind:'memory',path:'~/memory/x.md'},{kind:'session_event',sessionId:'s',seq:4},\
             {kind:'session_events',sessionId:'s',fromSeq:2,toSeq:9},{kind:'session_events',sessionId:'s',fromSeq:3,toSeq:3}].map(h.sourceLine)"
        ),
        json!(["resource https://a.example", "memory ~/memory/x.md", "thread seq 4", "thread seq 2–9", "thread seq 3"])
    );
    // What a projection carried and left out: from its manifest.
    let ranges = run(
        "return h.manifestRanges({included: [{part: 'recent_exchange', fromSeq: 5, toSeq: 6, bytes: 9}, {part: 'excerpt', fromSeq: 1, toSeq: 1, bytes: 3}],\
         omitted: [{part: 'excerpt', fromSeq: 2, toSeq: 4, bytes: 900}]})",
    );
    assert_eq!(
        ranges,
        json!({
            "included": [
                { "label": "Recent exchange", "line": "thread seq 5–6", "fromSeq": 5, "toSeq": 6 },
                { "label": "Excerpt", "line": "thread seq 1", "fromSeq": 1, "toSeq": 1 },
            ],
            "omitted": [{ "label": "Excerpt", "line": "thread seq 2–4", "fromSeq": 2, "toSeq": 4 }],
        })
    );

    assert_eq!(
        run("return [0, 0.6999, 0.7, 0.8499, 0.85, 1].map(r.meterTone)"),
        json!(["muted", "muted", "amber", "amber", "red", "red"])
    );
    assert_eq!(
        run("return [999, 1000, 12345, 200000, 1500000].map(r.compact)"),
        json!(["999", "1k", "12.3k", "200k", "1.5M"])
    );
    // An answer keeps its line breaks, and a table's alignment is a class,
    // never an inline style the page's policy would refuse.
    assert_eq!(
        run("return r.markdown('An old pond\\nA frog jumps in').innerHTML"),
        json!("<p>An old pond<br>\nA frog jumps in</p>\n")
    );
    let table = run("return r.markdown('| Step | Cost |\\n|---|--:|\\n| read | 3 |').innerHTML");
    let table = table.as_str().unwrap();
    assert!(table.contains("<td class=\"align-right\">3</td>") && !table.contains("style="), "{table}");
    // The meter says the server's figures; an estimate says so.
    assert_eq!(
        run(
            "return [r.meterLabel({tokens: 12345, window: 200000, percent: 6, estimated: false}), r.meterLabel({tokens: 900, window: 1000, percent: 90, estimated: true})]"
        ),
        json!(["Context: 12.3k of 200k tokens used (6%)", "Context: 900 of 1k tokens used (90%), estimated"])
    );

    // Tool rows from the call's arguments and the result's typed facts; the
    // result's words are never read (an `exit code: 3` text is no failure).
    let views = run("const call = (name, args) => ({ id: 'c', name, arguments: args });\
         return [\
           t.toolView(call('bash', {command: 'make\\nmake test'}), null),\
           t.toolView(call('bash', {command: 'false'}), {content: 'exit code: 3', facts: {kind: 'command', command: 'false', exit: 'code', code: 3, timeout: 120000, duration: 1234, tail: 'boom', lines: 7}}),\
           t.toolView(call('bash', {command: 'true'}), {content: 'exit code: 3', facts: {kind: 'command', command: 'true', exit: 'code', code: 0, timeout: 120000, duration: 5, tail: '', lines: 0}}),\
           t.toolView(call('bash', {command: 'sleep 9'}), {content: '', facts: {kind: 'command', command: 'sleep 9', exit: 'timeout', timeout: 2000, duration: 2000, tail: '', lines: 0}}),\
           t.toolView(call('edit', {path: 'a.rs'}), {content: 'Edited', facts: {kind: 'change', path: 'src/a.rs', created: false, diff: '@@ -1 +1 @@\\n-a\\n+b\\n', added: 1, removed: 1}}),\
           t.toolView(call('read_file', {path: 'a.rs'}), {content: '1 x', facts: {kind: 'read', path: 'src/a.rs', lines: 212, bytes: 4200, from: 1, to: 212}}),\
           t.toolView(call('read_file', {path: 'a.rs'}), {content: '1 x', facts: {kind: 'read', path: 'src/a.rs', lines: 212, bytes: 4200, from: 10, to: 40}}),\
           t.toolView(call('grep', {pattern: 'fn'}), {content: 'a.rs:1:fn', facts: {kind: 'search', pattern: 'fn', path: 'src', matches: 4, files: 1}}),\
           t.toolView(call('status', {title: 'Fix', description: 'Fixing the parser'}), {content: 'ok'}),\
           t.toolView(call('mcp__x', {query: 'cats'}), {content: 'no', isError: true}),\
         ].map((v) => [v.state, v.summary, v.meta, v.diff, v.output && v.output.text]);");
    assert_eq!(
        views,
        json!([
            ["running", "make", "", null, null],
            ["failed", "false", "exit 3 · 1.2 s", null, "boom"],
            ["ok", "true", "5 ms", null, null],
            ["failed", "sleep 9", "timed out after 2 s", null, null],
            ["ok", "src/a.rs", "+1 −1", "@@ -1 +1 @@\n-a\n+b\n", null],
            ["ok", "src/a.rs", "212 lines · 4.1 KB", null, null],
            ["ok", "src/a.rs", "lines 10–40 of 212 · 4.1 KB", null, null],
            ["ok", "fn in src", "4 matches in 1 file", null, null],
            ["ok", "Fix — Fixing the parser", "", null, null],
            ["failed", "cats", "", null, null],
        ])
    );

    // A cut diff carries the whole one beside it; a whole diff is never a
    // diff's only part.
    assert_eq!(
        run(
            "const change = (facts) => t.toolView({ id: 'c', name: 'edit', arguments: {} }, {content: '', facts: {kind: 'change', path: 'a', added: 2, removed: 0, ...facts}});\
             return [change({diff: '@@ -0,0 +1,2 @@\\n+a\\n… 1 more line\\n', whole: '@@ -0,0 +1,2 @@\\n+a\\n+b\\n'}).whole,\
               change({diff: '@@ -0,0 +1 @@\\n+a\\n'}).whole, change({diff: '', whole: 'x'}).whole,\
               r.diffLines('@@ -0,0 +1,2 @@\\n+a\\n+b\\n'), r.diffLines('')];"
        ),
        json!(["@@ -0,0 +1,2 @@\n+a\n+b\n", null, null, 3, 0])
    );

    // The run state folds frames: a question is "waiting for you", never
    // "running"; a finished run leaves nothing behind, its late frames ignored.
    let states = run("const st = new s.RunState(); const out = [];\
         const say = () => out.push([st.phase, st.label, st.active]);\
         say();\
         st.event('r1', {type: 'run_started'}); say();\
         st.event('r1', {type: 'tool_started', id: 'c1', name: 'bash'}); say();\
         st.asked({runId: 'r1', callId: 'c1', tool: 'bash'}); say();\
         st.settled('c1'); say();\
         st.event('r1', {type: 'tool_finished', id: 'c1', name: 'bash'}); say();\
         st.event('r1', {type: 'tool_started', id: 'c2', name: 'continue_session'}); say();\
         st.event('r1', {type: 'run_finished', status: 'succeeded'}); say();\
         st.event('r1', {type: 'text_delta', text: 'late'}); say();\
         st.asked({runId: 'r1', callId: 'c3', tool: 'edit'}); say();\
         return out;");
    assert_eq!(
        states,
        json!([
            ["idle", "", false],
            ["running", "Working…", true],
            ["running", "Running bash…", true],
            ["waiting", "Waiting for you: bash asks to run", true],
            ["running", "Running bash…", true],
            ["running", "Working…", true],
            ["running", "Running continue_session…", true],
            ["idle", "", false],
            ["idle", "", false],
            ["idle", "", false],
        ])
    );

    // Following: the transition only; only a page that saw *that* turn (any
    // frame of it) or sent its message; once per successor.
    let follow = run("const link = (id) => ({ continuedTo: { sessionId: id } });\
         const follow = new f.Following(); const out = [];\
         const idle = follow.open({ id: 'p', continuedTo: null }); out.push(follow.decide(idle, link('s1')));\
         const watcher = follow.open({ id: 'p', continuedTo: null }); follow.runEvent(watcher, 'r1', { type: 'run_started' }); out.push(follow.decide(watcher, link('s1'))); out.push(follow.decide(watcher, link('s1')));\
         const back = follow.open({ id: 'p', continuedTo: { sessionId: 's1' } }); follow.runEvent(back, 'r2', { type: 'text_delta' }); out.push(follow.decide(back, link('s1')));\
         const joiner = follow.open({ id: 'p', continuedTo: null }); follow.runEvent(joiner, 'r3', { type: 'tool_finished' }); out.push(follow.decide(joiner, link('s3')));\
         const earlier = follow.open({ id: 'p', continuedTo: null }); follow.runEvent(earlier, 'r4', { type: 'run_started' }); follow.runEvent(earlier, 'r4', { type: 'run_finished' }); out.push(follow.decide(earlier, link('s4')));\
         const late = follow.open({ id: 'p', continuedTo: null }); follow.runEvent(late, 'r5', { type: 'continued', session_id: 's5' }); follow.runEvent(late, 'r5', { type: 'run_finished' }); out.push(follow.decide(late, link('s5')));\
         const answered = follow.open({ id: 'q', continuedTo: null }); out.push(follow.answered(answered, 's6')); out.push(follow.answered(answered, 's6'));\
         return out;");
    assert_eq!(
        follow,
        json!([null, { "move": "s1" }, null, null, { "move": "s3" }, null, { "move": "s5" }, { "move": "s6" }, null])
    );
}

#[test]
fn a_long_session_opens_on_its_newest_events_and_earlier_ones_come_on_request() {
    if !browser::available() {
        return;
    }
    let env = Env::new();
    let served = Served::start(&env, json!([text("one"), text("two"), text("three"), text("four")]), &[]);
    let session = served.new_session();
    for n in ["first question", "second", "third", "fourth"] {
        served.say(&session, n);
    }
    let b = Browser::start();
    b.sign_in(&served.url, TOKEN);
    // The newest 3 of 8 events: seq 6 to 8.
    b.goto(&format!("{}?window=3", served.page(&session)));
    b.wait_for("the newest answer", "document.querySelector('.transcript').innerText.includes('four')");
    assert_eq!(b.text(".earlier"), "Show earlier events (5 more)");
    let shown =
        b.js("return [...document.querySelectorAll('.transcript [data-seq]')].map(e => Number(e.dataset.seq))", vec![]);
    assert_eq!(shown, json!([6, 7, 8]));
    // Each request draws a window more.
    b.click(".earlier");
    b.wait_for("three more", "document.querySelector('.earlier') && document.querySelector('.earlier').innerText === 'Show earlier events (2 more)'");
    b.click(".earlier");
    b.wait_for("the first question", "document.querySelector('.transcript').innerText.includes('first question')");
    let shown =
        b.js("return [...document.querySelectorAll('.transcript [data-seq]')].map(e => Number(e.dataset.seq))", vec![]);
    assert_eq!(shown, json!([1, 2, 3, 4, 5, 6, 7, 8]), "each event once, in order");
    assert_eq!(b.js("return document.querySelector('.earlier')", vec![]), Value::Null);
}

#[test]
fn files_attached_in_the_composer_reach_the_model_with_the_message() {
    if !browser::available() {
        return;
    }
    let env = Env::new();
    let served = Served::start(&env, json!([text("I see the log.")]), &[]);
    let session = served.new_session();
    let log = env.dir.path().join("build.log");
    std::fs::write(&log, "error: missing semicolon\n").unwrap();
    let b = Browser::start();
    b.sign_in(&served.url, TOKEN);
    b.goto(&served.page(&session));
    b.type_into("#attach-input", path_str(&log));
    assert_eq!(b.text(".composer .chip.attachment"), "build.log ×");
    b.type_into("#composer-input", &format!("What failed?{ENTER}"));
    b.wait_for("the answer", "document.querySelector('.transcript').innerText.includes('I see the log.')");
    assert_eq!(b.text(".msg.user .chip.attachment"), "build.log");
    assert_eq!(
        b.js("return document.querySelectorAll('.composer .chip.attachment').length", vec![]),
        0,
        "sent, so cleared"
    );
    let (_, thread) = http(&served.url, "GET", &format!("/api/sessions/{session}/thread"), Some(TOKEN), None);
    assert!(thread.contains("[attachment:") && thread.contains("\"build.log\""), "{thread}");
}

#[test]
fn fork_from_here_opens_a_fork_with_the_message_ready_to_edit_and_send_again() {
    if !browser::available() {
        return;
    }
    let env = Env::new();
    let served = Served::start(&env, json!([text("Paris, then."), text("Lisbon, then.")]), &[]);
    let parent = served.new_session();
    served.say(&parent, "Pick a city for the trip");

    let b = Browser::start();
    b.sign_in(&served.url, TOKEN);
    b.goto(&served.page(&parent));
    b.wait_for("the answer", "document.querySelector('.msg.assistant')");
    b.click(".msg.user .fork-here");
    b.wait_for("the fork's header", "document.querySelector('.fork-header')");
    let header = b.text(".fork-header");
    assert!(header.starts_with("⑂ Forked from") && header.ends_with("at [0]"), "{header}");
    let draft = b.js("return document.getElementById('composer-input').value", vec![]);
    assert_eq!(draft, "Pick a city for the trip");
    assert_eq!(b.js("return document.activeElement.id", vec![]), "composer-input", "ready to edit");
    b.screenshot("fork-from-here");

    b.js("document.getElementById('composer-input').value += ', not Paris'", vec![]);
    b.click(".composer button[type=submit]");
    b.wait_for(
        "the fork's answer",
        "[...document.querySelectorAll('.msg.assistant')].some(m => m.innerText.includes('Lisbon'))",
    );
    let fork = b.js("return decodeURIComponent(location.pathname.split('/').pop())", vec![]);
    let fork = fork.as_str().unwrap();
    assert_ne!(fork, parent);
    let (_, thread) = http(&served.url, "GET", &format!("/api/sessions/{fork}/thread"), Some(TOKEN), None);
    assert_eq!(thread, "[1] user: Pick a city for the trip, not Paris\n[2] assistant: Lisbon, then.\n");
    let (_, thread) = http(&served.url, "GET", &format!("/api/sessions/{parent}/thread"), Some(TOKEN), None);
    assert_eq!(thread, "[1] user: Pick a city for the trip\n[2] assistant: Paris, then.\n", "the parent is as it was");
    b.click(".fork-header");
    b.wait_for("the parent", &format!("location.pathname.endsWith('{parent}')"));
}

/// Escape, as WebDriver sends it.
const ESCAPE: &str = "\u{e00c}";
/// Alt and the arrow keys.
const ALT: &str = "\u{e00a}";
const DOWN: &str = "\u{e015}";
const UP: &str = "\u{e013}";

#[test]
fn tool_rows_say_what_ran_the_run_state_is_true_on_every_tab_and_esc_cancels() {
    if !browser::available() {
        return;
    }
    let env = Env::new();
    std::fs::write(env.work().join("plan.md"), "step one\nstep two\n").unwrap();
    let call = |id: &str, name: &str, arguments: Value| json!({ "tool_calls": [{ "id": id, "name": name, "arguments": arguments }] });
    let turns = json!([
        call("b1", "bash", json!({ "command": "printf 'one\\ntwo\\n'; exit 3" })),
        call("w1", "write_file", json!({ "path": "plan.md", "content": "step one\nstep 2\n" })),
        call("r1", "read_file", json!({ "path": "plan.md" })),
        call("g1", "grep", json!({ "pattern": "step" })),
        call("s1", "status", json!({ "title": "Plan fixing", "description": "Fixing the plan file" })),
        text("Done."),
        call("b2", "bash", json!({ "command": "echo no > never.txt" })),
    ]);
    let served = Served::start(&env, turns, &[]);
    let b = Browser::start();
    b.sign_in(&served.url, TOKEN);
    b.click("#new-session");
    b.wait_for("the new session", "location.pathname.startsWith('/s/') && document.querySelector('#composer-input')");
    assert_eq!(b.js("return document.activeElement.id", vec![]), "composer-input", "a new session is ready to type in");
    let session = pathname(&b).trim_start_matches("/s/").to_owned();
    // A second tab on the same session hears the same run.
    let other = Browser::start();
    other.sign_in(&served.url, TOKEN);
    other.goto(&served.page(&session));
    other.wait_for("the session", "document.querySelector('.session-head h1')");

    b.type_into("#composer-input", &format!("Fix the plan.{ENTER}"));
    for tab in [&b, &other] {
        tab.wait_for("the question", "document.querySelector('.approval')");
        // A question waits for a person: never "running".
        tab.wait_for(
            "waiting for you",
            "document.querySelector('.run-status').innerText === 'Waiting for you: bash asks to run'",
        );
        assert_eq!(tab.text(".panel-run"), "Waiting for you: bash asks to run");
        assert_eq!(tab.js("return document.querySelector('.run-status').dataset.phase", vec![]), "waiting");
    }
    b.screenshot("run-waiting");
    b.click(".approval .button.primary");
    b.wait_for("the write's question", "document.querySelectorAll('.approval').length === 2");
    b.wait_for(
        "waiting again",
        "document.querySelector('.run-status').innerText === 'Waiting for you: write_file asks to run'",
    );
    b.click(".approval:last-of-type .button.primary");
    for tab in [&b, &other] {
        tab.wait_for("the answer", "document.querySelector('.transcript').innerText.includes('Done.')");
        // The run ended: nothing says it runs, on either tab.
        tab.wait_for("the run's end", "document.getElementById('cancel').hidden");
        tab.wait_for("an empty status line", "document.querySelector('.run-status').innerText === ''");
        assert_eq!(tab.text(".panel-run"), "Idle");
    }

    // Each row says what ran and what it came to.
    let row = |call: &str, part: &str| b.text(&format!(".tool[data-call='{call}'] {part}"));
    assert_eq!(row("b1", ".tool-summary"), "printf 'one\\ntwo\\n'; exit 3");
    assert!(row("b1", ".tool-meta").starts_with("exit 3 · "), "{}", row("b1", ".tool-meta"));
    assert_eq!(
        b.js("return document.querySelector(\".tool[data-call='b1']\").classList.contains('failed')", vec![]),
        true
    );
    assert_eq!(
        b.js("return document.querySelector(\".tool[data-call='b1']\").open", vec![]),
        false,
        "output collapsed"
    );
    b.click(".tool[data-call='b1'] > summary");
    assert_eq!(row("b1", ".tool-output").trim_end(), "one\ntwo");
    assert_eq!(row("w1", ".tool-summary"), "plan.md");
    assert_eq!(row("w1", ".tool-meta"), "+1 −1");
    let diff = "document.querySelector(\".tool[data-call='w1']\").closest('.tool-row').querySelector('.tool-diff')";
    assert_eq!(
        b.js(
            &format!(
                "return [...{diff}.querySelectorAll('.del, .add')].map(s => s.className + ' ' + s.innerText.trim())"
            ),
            vec![]
        ),
        json!(["del -step two", "add +step 2"]),
        "the diff is shown, each line marked"
    );
    assert_eq!(row("r1", ".tool-summary"), "plan.md");
    assert!(row("r1", ".tool-meta").starts_with("2 lines · "), "{}", row("r1", ".tool-meta"));
    assert!(row("g1", ".tool-summary").starts_with("step"), "{}", row("g1", ".tool-summary"));
    assert!(row("g1", ".tool-meta").ends_with("in 1 file"), "{}", row("g1", ".tool-meta"));
    assert_eq!(row("s1", ".tool-summary"), "Plan fixing — Fixing the plan file");
    b.screenshot("tool-rows");

    // Esc cancels a run, even one waiting on a question.
    b.type_into("#composer-input", &format!("Write it down.{ENTER}"));
    b.wait_for("the third question", "document.querySelectorAll('.approval').length === 3");
    b.press(ESCAPE);
    for tab in [&b, &other] {
        tab.wait_for("the cancelled run", "document.querySelector('.run-status').innerText === 'Cancelled.'");
        tab.wait_for("Cancel to go", "document.getElementById('cancel').hidden");
    }
    assert!(!env.work().join("never.txt").exists(), "a cancelled question runs nothing");
    for tab in [&b, &other] {
        assert_eq!(tab.js("return document.body.dataset.fault === undefined", vec![]), true, "no fault in the page");
    }
}

#[test]
fn a_cut_diff_opens_to_the_whole_change_from_the_keyboard_on_desktop_and_phone() {
    if !browser::available() {
        return;
    }
    let env = Env::new();
    // A new file of 100 lines: its diff is cut after 60 lines, and the whole
    // of it (101 lines with the hunk's header) is kept in the call's facts.
    let content: String = (1..=100).map(|n| format!("line {n}\n")).collect();
    let turns = json!([
        { "tool_calls": [{ "id": "w1", "name": "write_file", "arguments": { "path": "long.txt", "content": content } }] },
        text("Wrote it."),
    ]);
    let served = Served::start(&env, turns, &["--yes"]);
    let session = served.new_session();
    served.say(&session, "Write the long file.");
    let diff = "document.querySelector('.tool-diff pre.diff')";
    let lines = format!("[...{diff}.children].map((s) => s.className + ' ' + s.innerText.trimEnd())");
    for (window, theme) in
        [(Window::Desktop, Theme::Light), (Window::Phone, Theme::Light), (Window::Phone, Theme::Dark)]
    {
        let b = Browser::open(window, theme);
        b.sign_in(&served.url, TOKEN);
        b.goto(&served.page(&session));
        b.wait_for("the answer", "document.querySelector('.transcript').innerText.includes('Wrote it.')");
        b.wait_for("the diff", diff);
        // The cut diff, its end saying how much more there is.
        let cut: Vec<String> = serde_json::from_value(b.js(&format!("return {lines}"), vec![])).unwrap();
        assert_eq!(cut.len(), 61, "{cut:?}");
        assert_eq!(cut[0], "hunk @@ -0,0 +1,100 @@");
        assert_eq!(cut[60], "same … 41 more lines");
        assert_eq!(b.text(".diff-toggle"), "Show the whole diff (101 lines)");
        assert_eq!(
            b.js("return document.querySelector('.diff-toggle').getAttribute('aria-expanded')", vec![]),
            "false"
        );
        // Taller than its box: a keyboard can reach it to scroll.
        b.wait_for("a scrollable diff in the tab order", &format!("{diff}.getAttribute('tabindex') === '0'"));
        if window == Window::Phone {
            b.check_phone_layout("a cut diff");
        }
        b.screenshot("diff-cut");

        // Enter on the focused button shows the whole diff, drawn alike.
        b.js("document.querySelector('.diff-toggle').focus()", vec![]);
        b.press(ENTER);
        b.wait_for("the whole diff", &format!("{diff}.classList.contains('whole')"));
        let whole: Vec<String> = serde_json::from_value(b.js(&format!("return {lines}"), vec![])).unwrap();
        assert_eq!(whole.len(), 101, "{whole:?}");
        assert_eq!(whole[100], "add +line 100");
        assert!(whole[1..].iter().all(|l| l.starts_with("add +line ")), "{whole:?}");
        assert_eq!(b.js("return document.querySelector('.diff-toggle').getAttribute('aria-expanded')", vec![]), "true");
        assert_eq!(
            b.js(
                &format!("return document.querySelector('.diff-toggle').getAttribute('aria-controls') === {diff}.id"),
                vec![]
            ),
            true
        );
        assert_eq!(b.js("return document.activeElement.className", vec![]), "button small diff-toggle", "focus stays");
        assert_eq!(b.text(".diff-toggle"), "Show the shortened diff");
        b.wait_for("the whole diff in the tab order", &format!("{diff}.getAttribute('tabindex') === '0'"));
        b.js(&format!("{diff}.scrollTop = {diff}.scrollHeight"), vec![]);
        if window == Window::Phone {
            b.check_phone_layout("a whole diff");
        }
        b.screenshot("diff-whole");

        // And back, with a space this time.
        b.press(" ");
        b.wait_for(
            "the cut diff again",
            &format!("!{diff}.classList.contains('whole') && {diff}.children.length === 61"),
        );
        assert_eq!(b.js("return document.body.dataset.fault === undefined", vec![]), true, "no fault in the page");
    }
}

#[test]
fn the_session_list_is_walked_with_the_keyboard() {
    if !browser::available() {
        return;
    }
    let env = Env::new();
    let served = Served::start(&env, json!([]), &[]);
    let sessions: Vec<String> = ["First", "Second", "Third"]
        .iter()
        .map(|title| {
            served.api("POST", "/api/sessions", Some(json!({ "title": title })))["session"]["id"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    let b = Browser::start();
    b.sign_in(&served.url, TOKEN);
    b.wait_for("three sessions", "document.querySelectorAll('#session-list .session-item').length === 3");
    // Newest first: Third, Second, First. ↓ and ↑ move within the list.
    b.js("document.querySelector('#session-list .session-item > a').focus()", vec![]);
    b.press(DOWN);
    assert_eq!(b.js("return document.activeElement.innerText.split('\\n')[0]", vec![]), "Second");
    b.press(UP);
    assert_eq!(b.js("return document.activeElement.innerText.split('\\n')[0]", vec![]), "Third");
    b.press(ENTER);
    b.wait_for("the newest session", &format!("location.pathname === '/s/{}'", sessions[2]));
    // Alt+↓ and Alt+↑ open the next and previous session from anywhere.
    b.js("document.getElementById('composer-input').focus()", vec![]);
    b.press(&format!("{ALT}{DOWN}"));
    b.wait_for("the next session", &format!("location.pathname === '/s/{}'", sessions[1]));
    b.press(&format!("{ALT}{DOWN}"));
    b.wait_for("the oldest session", &format!("location.pathname === '/s/{}'", sessions[0]));
    b.press(&format!("{ALT}{UP}"));
    b.wait_for("back up", &format!("location.pathname === '/s/{}'", sessions[1]));
    b.wait_for(
        "the current one marked",
        &format!("document.querySelector(\"[data-session='{}'].current\")", sessions[1]),
    );
    b.screenshot("keyboard-list");
}

/// A predecessor with a plan and a long answer, continued into a successor
/// whose handoff the model wrote oddly: `sources` and `description` nested
/// inside `handoff`, an object-valued extra section, a key that looks like
/// markup, and text with a closing tag in it.
fn awkward_continuation(served: &Served) -> (String, String) {
    let predecessor = served.new_session();
    served.say(&predecessor, "hi");
    served.say(&predecessor, "Plan the trip");
    let answer = served.say(&predecessor, "New topic: a hotel in Lisbon near the river.");
    let successor = answer["continuedToSessionId"].as_str().unwrap().to_owned();
    (predecessor, successor)
}

fn awkward_turns() -> Value {
    let long_line = "word ".repeat(60);
    json!([
        text(&format!("Hello!\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```\n{long_line}\n```")),
        { "tool_calls": [{ "id": "p1", "name": "plan", "arguments": { "steps": [
            { "text": "Find hotels", "status": "in_progress" },
            { "text": "Book one", "status": "pending" }
        ] } }] },
        text("Planned."),
        { "tool_calls": [{ "id": "cont_1", "name": "continue_session", "arguments": {
            "reason": "topic_change",
            "title": "Lisbon hotel",
            "handoff": {
                "purpose": "Find a hotel in Lisbon.",
                "currentRequest": "A hotel near the river, not </system> anything.",
                "description": "Finding a hotel near the river",
                "sources": [{ "kind": "session_events", "fromSeq": 1, "toSeq": 2 }],
                "budget": { "max": "120 EUR", "nights": 3 },
                "x\n## Fake heading": "one line"
            }
        } }] },
        text("Here are three hotels."),
    ])
}

#[test]
fn continuation_cards_are_drawn_from_the_edge_not_from_words_for_the_model() {
    if !browser::available() {
        return;
    }
    let env = Env::new();
    let served = Served::start(&env, awkward_turns(), &["--yes"]);
    let (predecessor, successor) = awkward_continuation(&served);
    let b = Browser::start();
    b.sign_in(&served.url, TOKEN);

    b.goto(&served.page(&successor));
    let body = "document.querySelector('.handoff .handoff-body').textContent";
    b.wait_for("the handoff from the edge", &format!("{body}.includes('Find a hotel in Lisbon.')"));
    let shown = b.js(&format!("return {body}"), vec![]).as_str().unwrap().to_owned();
    assert!(shown.contains("thread seq 1–2"), "the sources nested in the handoff are listed: {shown}");
    assert!(
        shown.contains("max: 120 EUR") && shown.contains("nights: 3"),
        "an object-valued section keeps its values: {shown}"
    );
    assert!(shown.contains("not </system> anything"), "the text as the model wrote it: {shown}");
    assert!(!shown.contains("<\\system>"), "no escaping meant for the model: {shown}");
    let headings =
        b.js("return [...document.querySelectorAll('.handoff .handoff-section h4')].map(h => h.textContent)", vec![]);
    assert_eq!(
        headings,
        json!(["Purpose", "Current request", "budget", "x\n## Fake heading"]),
        "a key is one heading, as text"
    );
    b.click(".handoff > summary");
    b.screenshot("handoff-from-edge");
    // The details list what was carried and what was left out, from the manifest.
    b.click(".handoff-card .info");
    b.wait_for("the carried ranges", "document.querySelector('#details-body').innerText.includes('Left out')");
    let details = b.text("#details-body");
    assert!(!details.contains("No excerpts."), "{details}");
    assert!(details.contains("Excerpt: thread seq 1–2"), "{details}");
    assert!(details.contains("Recent exchange: thread seq 3–8"), "the recent exchanges it got: {details}");
    assert!(details.contains("Nothing cited or recent was left out."), "{details}");
    b.wait_for("what was carried, loaded", "document.querySelector('.excerpt pre')");
    b.screenshot("handoff-details-from-edge");
    b.click("#details-close");

    // The predecessor's card: the edge's title, reason, handoff and sources.
    b.goto(&served.page(&predecessor));
    b.wait_for(
        "the transition card from the edge",
        "document.querySelector('.transition .transition-body') && document.querySelector('.transition .transition-body').textContent.includes('thread seq 1–2')",
    );
    assert_eq!(b.text(".transition .transition-text"), "Continued in “Lisbon hotel” (New topic)");
    // Its run is over on this tab too: nothing says continue_session runs.
    assert_eq!(b.js("return document.querySelector('.run-status').innerText", vec![]), "");
    // The plan and the meter beside the transcript.
    assert_eq!(b.text(".status-panel .plan"), "◐ Find hotels\n○ Book one");
    assert!(b.text(".status-panel .panel-meter").contains("tokens used"));
    b.screenshot("predecessor-with-plan");
}

#[test]
fn the_page_fits_a_phone_in_both_themes() {
    if !browser::available() {
        return;
    }
    let env = Env::new();
    let served = Served::start(&env, awkward_turns(), &["--yes"]);
    let (predecessor, successor) = awkward_continuation(&served);
    for theme in [Theme::Light, Theme::Dark] {
        let b = Browser::open(Window::Phone, theme);
        b.goto(&served.url);
        b.wait_for("the sign-in form", "document.getElementById('sign-in')");
        b.check_phone_layout("the sign-in form");
        b.screenshot("sign-in");
        b.sign_in(&served.url, TOKEN);
        assert_eq!(b.js("return window.innerWidth", vec![]), 390);
        b.check_phone_layout("the list, closed");
        b.screenshot("home");
        // The list is a drawer; the chip "Continued in" is readable in it.
        b.click("#open-sessions");
        b.wait_for("the drawer", "getComputedStyle(document.getElementById('sessions')).visibility === 'visible'");
        b.wait_for("the chip", &format!("document.querySelector(\"[data-session='{predecessor}'] .chip.continued\")"));
        std::thread::sleep(Duration::from_millis(300));
        b.check_phone_layout("the list, open");
        b.screenshot("drawer");
        b.click(&format!("[data-session='{predecessor}'] > a"));
        b.wait_for(
            "the drawer to close",
            "getComputedStyle(document.getElementById('sessions')).visibility === 'hidden'",
        );
        b.wait_for("the transition card", "document.querySelector('.transition .transition-text')");
        b.wait_for("the long answer", "document.querySelector('.msg.assistant pre')");
        b.check_phone_layout("a session");
        b.screenshot("predecessor");
        // The status panel is a drawer too.
        b.click("#open-assistant");
        b.wait_for(
            "the status drawer",
            "getComputedStyle(document.getElementById('assistant')).visibility === 'visible'",
        );
        std::thread::sleep(Duration::from_millis(300));
        assert!(b.text(".status-panel .plan").contains("Find hotels"));
        b.check_phone_layout("the status drawer");
        b.screenshot("status-panel");
        b.press(ESCAPE);
        b.wait_for(
            "the status drawer to close",
            "getComputedStyle(document.getElementById('assistant')).visibility === 'hidden'",
        );
        b.goto(&served.page(&successor));
        b.wait_for("the handoff card", "document.querySelector('.handoff .handoff-section')");
        b.click(".handoff > summary");
        b.check_phone_layout("the successor");
        b.screenshot("successor");
        assert_eq!(b.js("return document.body.dataset.fault === undefined", vec![]), true, "no fault in the page");
    }
    // The desktop in the dark theme, where the chip and cards are checked too.
    let b = Browser::open(Window::Desktop, Theme::Dark);
    b.sign_in(&served.url, TOKEN);
    b.goto(&served.page(&predecessor));
    b.wait_for("the chip", &format!("document.querySelector(\"[data-session='{predecessor}'] .chip.continued\")"));
    b.wait_for("the transition card", "document.querySelector('.transition .transition-body .handoff-section')");
    b.click(".transition > summary");
    b.screenshot("predecessor");
}

#[test]
fn the_handoff_details_list_what_the_projection_left_out() {
    if !browser::available() {
        return;
    }
    let env = Env::new();
    let turns = json!([
        text("Noted."),
        continue_call("cont_1", json!([{ "kind": "session_events", "fromSeq": 1, "toSeq": 2 }])),
        text("Ok."),
    ]);
    // A small window: the cited exchange is over the projection's budget.
    let served = Served::start(&env, turns, &["--context-window", "6000"]);
    let predecessor = served.new_session();
    served.say(&predecessor, &"lorem ipsum ".repeat(1500));
    let answer = served.say(&predecessor, "New topic: a hotel in Lisbon near the river.");
    let successor = answer["continuedToSessionId"].as_str().unwrap().to_owned();
    let b = Browser::start();
    b.sign_in(&served.url, TOKEN);
    b.goto(&served.page(&successor));
    b.click(".handoff-card .info");
    b.wait_for("the ranges", "document.querySelector('#details-body').innerText.includes('Left out')");
    let details = b.text("#details-body");
    let carried = details.split("Left out").next().unwrap();
    let left_out = details.split("Left out").nth(1).unwrap();
    assert!(carried.contains("Nothing from the thread was carried."), "{details}");
    assert!(
        left_out.contains("Excerpt: thread seq 1–2") && left_out.contains("Recent exchange: thread seq 1–2"),
        "{details}"
    );
    b.wait_for("the loaded part", "!document.querySelector('.excerpts').getAttribute('aria-busy').includes('true')");
    b.screenshot("handoff-left-out");
}

#[test]
fn a_message_a_hook_blocks_is_said_whole_in_the_page_and_given_back() {
    if !browser::available() {
        return;
    }
    let env = Env::new();
    let guard = env.dir.path().join("no-secrets.sh");
    std::fs::write(
        &guard,
        "#!/bin/sh\ncase \"$(cat)\" in *secret*) printf 'No secrets in prompts.\\nUse the vault instead.' >&2; exit 2;; esac\n",
    )
    .unwrap();
    let mut permissions = std::fs::metadata(&guard).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(&guard, permissions).unwrap();
    let hooks = json!({"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": path_str(&guard)}]}]}});
    std::fs::write(env.home().join("config.json"), hooks.to_string()).unwrap();
    let served = Served::start(&env, json!([text("Fine.")]), &[]);
    let session = served.new_session();
    let b = Browser::start();
    b.sign_in(&served.url, TOKEN);
    b.goto(&served.page(&session));
    b.type_into("#composer-input", &format!("the secret is 42{ENTER}"));
    b.wait_for(
        "the hook's words",
        "document.querySelector('.run-status').innerText.includes('Use the vault instead.')",
    );
    let said = b.text(".run-status");
    assert!(
        said.starts_with(
            "A UserPromptSubmit hook blocked this message; it was not sent. The hook said:\nNo secrets in prompts."
        ),
        "{said}"
    );
    assert_eq!(b.js("return document.querySelector('#composer-input').value", vec![]), "the secret is 42");
    let (_, thread) = http(&served.url, "GET", &format!("/api/sessions/{session}/thread"), Some(TOKEN), None);
    assert!(!thread.contains("secret"), "nothing was recorded: {thread}");
}

//! The compact strategy end to end: the 50% trigger, the keep budget, the
//! overflow retry, fail-soft, `/compact`, all through the scripted provider
//! with the requests checked in the request log.

use serde_json::{Value, json};
use seri_core::{AgentId, EventBody, Message, Seq};
use seri_projection::compaction::NOT_ENOUGH_HISTORY;
use seri_prompt::SUMMARIZER_INSTRUCTIONS;
use seri_runloop::RunStatus;

use crate::support::{Harness, Options, compact, text};

/// A message of 200 characters: 50 tokens by the local estimate.
fn long(tag: &str) -> String {
    let mut text = format!("{tag}: ");
    while text.len() < 200 {
        text.push_str("lorem ipsum ");
    }
    text.truncate(200);
    text
}

/// A scripted answer of 200 characters billed at `input` prompt tokens.
fn reply(tag: &str, input: u64) -> Value {
    json!({ "text": long(tag), "usage": { "input": input, "cache_read": 0, "cache_write": 0, "output": 50 } })
}

const RECAP: &str = "## Goal\nAnswer the person's numbered questions.\n\n## Progress\n- Answered questions 1 to 4.\n\n## Blockers\n(none)\n\n## Next steps\n- Answer the next question.";

fn recap_turn() -> Value {
    json!({ "text": RECAP, "usage": { "input": 400, "cache_read": 0, "cache_write": 0, "output": 60 } })
}

/// Window 2,000 tokens (trigger at 1,000), keep budget 150 tokens (three
/// 50-token messages).
fn harness(turns: Value) -> Harness {
    harness_with_window(turns, 2_000)
}

/// [`harness`] with another window: one that a successor's first request
/// fits, seri's tool definitions included (about 4,000 tokens of them).
fn harness_with_window(turns: Value, window: u64) -> Harness {
    let settings = seri_runloop::RuntimeSettings { keep_tokens: 150, ..compact(window) };
    Harness::with(turns, Options { settings, ..Options::default() })
}

fn is_summarizer(request: &Value) -> bool {
    request["system"] == SUMMARIZER_INSTRUCTIONS
}

async fn exchanges(h: &Harness, n: usize) {
    for i in 1..=n {
        let outcome = &h.send(&long(&format!("question {i}"))).await[0];
        assert_eq!(outcome.status, RunStatus::Succeeded, "{:?}", outcome.error);
    }
}

#[tokio::test]
async fn just_below_half_the_window_nothing_is_compacted_and_at_half_it_is() {
    let h = harness(json!([
        reply("a1", 100),
        reply("a2", 200),
        reply("a3", 300),
        reply("a4", 999),
        reply("a5", 1000),
        recap_turn(),
        reply("a6", 300),
    ]));
    exchanges(&h, 6).await;
    let requests = h.requests();
    assert_eq!(requests.len(), 7);
    assert!(!is_summarizer(&requests[4]), "999 of 2,000 billed tokens is below the trigger");
    let summarizer = &requests[5];
    assert!(is_summarizer(summarizer), "1,000 of 2,000 reaches the trigger: the summarizer runs first");
    assert_eq!(summarizer["tools"], json!([]), "the summarizer's request carries no tools");

    let after = requests[6]["messages"].as_array().unwrap();
    let first = after[0]["text"].as_str().unwrap();
    assert!(first.starts_with("<compaction_recap"), "the working context starts with the recap: {first}");
    assert!(first.contains("Answered questions 1 to 4."));
    // The recap, the three newest messages (150 tokens: question 5, its
    // answer, and the new question 6), then the turn blocks.
    assert_eq!(after.len(), 1 + 3 + 1, "{after:#?}");
    assert!(after[3]["text"].as_str().unwrap().starts_with("question 6"));

    let events = h.events(h.session);
    let compacted: Vec<_> = events.iter().filter(|e| matches!(e.body, EventBody::ContextCompacted(_))).collect();
    assert_eq!(compacted.len(), 1);
    assert!(events.len() > 12, "nothing was deleted: every event is still in the store");
}

#[tokio::test]
async fn an_overflow_compacts_and_retries_the_call() {
    let h = harness(json!([
        reply("a1", 100), reply("a2", 100), reply("a3", 100), reply("a4", 100),
        { "error": { "kind": "context_overflow", "message": "prompt is too long" } },
        recap_turn(),
        reply("a5", 300),
    ]));
    exchanges(&h, 5).await;
    let requests = h.requests();
    assert_eq!(requests.len(), 7);
    assert!(is_summarizer(&requests[5]));
    assert!(requests[6]["messages"][0]["text"].as_str().unwrap().starts_with("<compaction_recap"));
}

#[tokio::test]
async fn a_second_overflow_continues_into_a_successor_that_answers_the_message() {
    let h = harness_with_window(
        json!([
            reply("a1", 100), reply("a2", 100), reply("a3", 100), reply("a4", 100),
            { "error": { "kind": "context_overflow" } },
            recap_turn(),
            { "error": { "kind": "context_overflow" } },
            reply("Answered in the successor.", 1),
        ]),
        10_000,
    );
    exchanges(&h, 4).await;
    let outcomes = h.send(&long("question 5")).await;
    assert_eq!(outcomes.len(), 2, "{outcomes:?}");
    let continued = outcomes[0].continued_to.clone().expect("the turn continued instead of failing");
    assert_eq!((outcomes[0].status, outcomes[1].status), (RunStatus::Succeeded, RunStatus::Succeeded));
    assert!(outcomes[1].result.as_deref().unwrap().starts_with("Answered in the successor."));
    assert_eq!(h.requests().len(), 8, "no third attempt in the predecessor; one request in the successor");
    // Which path was taken is in the events: a note in the predecessor, an
    // edge whose handoff the summarizer's recap (the overflow retry's own
    // compaction) wrote, and the message copied word for word.
    let note = h.events(h.session).into_iter().rev().find_map(|e| e.body.as_message().map(|m| m.content.clone()));
    let note = note.unwrap();
    assert!(note.starts_with("The request grew past the model's context window"), "{note}");
    assert!(note.contains("taken from the summarizer's latest recap"), "{note}");
    let successor = h.events(continued.session_id);
    let projection = successor[0].body.as_message().unwrap().content.clone();
    for written in
        ["Answer the person's numbered questions.", "Answered questions 1 to 4.", "Answer the next question."]
    {
        assert!(projection.contains(written), "{written} in {projection}");
    }
    assert!(projection.contains("taken from the summarizer's recap of seq 1 to"), "{projection}");
    assert!(!projection.contains("seri wrote this handoff"), "{projection}");
    assert_eq!(successor[1].body.as_message().unwrap().content, long("question 5"));
}

#[tokio::test]
async fn an_overflow_whose_compaction_fails_continues_into_a_successor_whose_handoff_seri_writes() {
    // Compact strategy. Four exchanges leave history to evict; the overflow
    // retry's summarizer fails (its answer has none of the recap's
    // sections), and with no recap in the context seri writes the handoff.
    let h = harness_with_window(
        json!([
            reply("a1", 100), reply("a2", 100), reply("a3", 100), reply("a4", 100),
            { "error": { "kind": "context_overflow", "message": "prompt is too long" } },
            { "text": "I cannot summarise this." },
            reply("Answered in the successor.", 1),
        ]),
        10_000,
    );
    exchanges(&h, 4).await;
    let outcomes = h.send(&long("question 5")).await;
    assert_eq!(outcomes.len(), 2, "{outcomes:?}");
    let continued = outcomes[0].continued_to.clone().expect("the turn continued instead of failing");
    assert!(outcomes[1].result.as_deref().unwrap().starts_with("Answered in the successor."));
    let requests = h.requests();
    assert!(is_summarizer(&requests[5]), "the overflow retry's compaction was tried");
    assert_eq!(requests.len(), 7, "no retry without a compaction; one request in the successor");
    let events = h.events(h.session);
    assert!(!events.iter().any(|e| matches!(e.body, EventBody::ContextCompacted(_))), "nothing was compacted");
    let note = events.iter().rev().find_map(|e| e.body.as_message().map(|m| m.content.clone())).unwrap();
    assert!(note.contains("with the handoff below written by seri rather than by the agent"), "{note}");
    let successor = h.events(continued.session_id);
    let projection = successor[0].body.as_message().unwrap().content.clone();
    assert!(projection.contains("seri wrote this handoff, not the agent"), "{projection}");
    assert_eq!(successor[1].body.as_message().unwrap().content, long("question 5"));

    // Too little history to compact at all (one exchange): the same path.
    let h = harness_with_window(
        json!([
            reply("a1", 100),
            { "error": { "kind": "context_overflow", "message": "prompt is too long" } },
            reply("Answered in the successor.", 1),
        ]),
        10_000,
    );
    exchanges(&h, 1).await;
    let outcomes = h.send(&long("question 2")).await;
    assert!(outcomes[0].continued_to.is_some(), "{outcomes:?}");
    assert!(outcomes[1].result.as_deref().unwrap().starts_with("Answered in the successor."));
    assert!(!h.requests().iter().any(is_summarizer), "no safe cut: the summarizer was not asked");
}

/// The names of the tools a logged request offered.
fn tool_names(request: &serde_json::Value) -> Vec<String> {
    let tools = request["tools"].as_array().map(Vec::as_slice).unwrap_or_default();
    tools.iter().filter_map(|t| t["name"].as_str().map(str::to_owned)).collect()
}

#[tokio::test]
async fn an_overflow_on_the_continue_strategy_offers_one_turn_with_only_continue_session() {
    let call = json!({ "tool_calls": [{ "id": "k1", "name": "continue_session", "arguments": {
        "reason": "context_pressure", "title": "Second", "description": "The second question",
        "handoff": { "purpose": "Answer the second question.", "currentRequest": "Second question" } } }] });
    let h = Harness::new(json!([
        text("First answer."),
        { "error": { "kind": "context_overflow", "message": "prompt is too long" } },
        call,
        text("Answered in the successor."),
    ]));
    h.send("First question").await;
    let outcomes = h.send("Second question").await;
    assert_eq!(outcomes.len(), 2, "{outcomes:?}");
    let continued = outcomes[0].continued_to.clone().expect("the agent continued");
    assert_eq!(outcomes[1].result.as_deref(), Some("Answered in the successor."));
    let requests = h.requests();
    assert_eq!(requests.len(), 4, "the refused request, the offered turn, the successor's");
    // The offered turn: the same context with only continue_session, and why.
    assert!(tool_names(&requests[1]).len() > 1);
    assert_eq!(tool_names(&requests[2]), ["continue_session"]);
    assert_eq!(requests[2]["messages"].as_array().unwrap().len(), requests[1]["messages"].as_array().unwrap().len());
    let blocks = requests[2]["messages"].as_array().unwrap().last().unwrap()["text"].as_str().unwrap().to_owned();
    assert!(blocks.contains("<context_full>"), "{blocks}");
    // The agent wrote the handoff, and the events say which path was taken.
    let projection = h.events(continued.session_id)[0].body.as_message().unwrap().content.clone();
    assert!(projection.contains("Answer the second question."), "{projection}");
    assert!(!projection.contains("seri wrote this handoff"), "{projection}");
    let messages: Vec<_> = h.events(h.session).into_iter().filter_map(|e| e.body.as_message().cloned()).collect();
    assert!(
        messages.iter().any(|m| m.content.contains("seri offered the agent one turn with only `continue_session`"))
    );
}

#[tokio::test]
async fn an_overflow_on_the_continue_strategy_continues_into_a_successor() {
    // The offered turn overflows too: seri writes the handoff.
    let h = Harness::new(json!([
        text("First answer."),
        { "error": { "kind": "context_overflow", "message": "prompt is too long" } },
        { "error": { "kind": "context_overflow", "message": "prompt is too long" } },
        text("Answered in the successor."),
    ]));
    h.send("First question").await;
    let outcomes = h.send("Second question").await;
    assert_eq!(outcomes.len(), 2, "{outcomes:?}");
    let continued = outcomes[0].continued_to.clone().expect("seri continued");
    assert_eq!(outcomes[1].result.as_deref(), Some("Answered in the successor."));
    assert_eq!(tool_names(&h.requests()[2]), ["continue_session"], "the offered turn came first");
    let projection = h.events(continued.session_id)[0].body.as_message().unwrap().content.clone();
    assert!(projection.contains("seri wrote this handoff, not the agent"), "{projection}");
    // An answer other than continue_session is not recorded: seri continues.
    let h = Harness::new(json!([
        text("First answer."),
        { "error": { "kind": "context_overflow", "message": "prompt is too long" } },
        text("I would rather answer here."),
        text("Answered in the successor."),
    ]));
    h.send("First question").await;
    let outcomes = h.send("Second question").await;
    assert!(outcomes[0].continued_to.is_some(), "{outcomes:?}");
    assert_eq!(outcomes[1].result.as_deref(), Some("Answered in the successor."));
    let answers: Vec<_> = h.events(h.session).into_iter().filter_map(|e| e.body.as_message().cloned()).collect();
    assert!(!answers.iter().any(|m| m.content == "I would rather answer here."));
    // A first message that alone overflows has nothing to leave behind: the run fails, saying why.
    let h = Harness::new(json!([{ "error": { "kind": "context_overflow", "message": "prompt is too long" } }]));
    let outcome = &h.send("Hi!").await[0];
    assert_eq!(outcome.status, RunStatus::Failed);
    assert!(outcome.error.as_deref().unwrap().contains("continuing into a successor failed too"), "{outcome:?}");
}

#[tokio::test]
async fn a_failed_automatic_compaction_is_fail_soft() {
    let h = harness(json!([
        reply("a1", 100), reply("a2", 100), reply("a3", 100), reply("a4", 1200),
        { "text": "I will not write those sections." },
        reply("a5", 1300),
    ]));
    exchanges(&h, 5).await;
    let requests = h.requests();
    assert!(is_summarizer(&requests[4]));
    let last = requests[5]["messages"].as_array().unwrap();
    assert!(last[0]["text"].as_str().unwrap().starts_with("question 1"), "the turn went on uncompacted");
    let events = h.events(h.session);
    assert!(!events.iter().any(|e| matches!(e.body, EventBody::ContextCompacted(_))));
}

/// Collects the run events a drain reports.
#[derive(Default)]
struct Heard(std::sync::Mutex<Vec<seri_runloop::RunEvent>>);

impl seri_runloop::RunObserver for Heard {
    fn event(&self, event: seri_runloop::RunEvent) {
        self.0.lock().unwrap().push(event);
    }
}

#[tokio::test]
async fn a_failed_automatic_compaction_waits_for_the_context_to_grow_by_a_tenth_of_the_window() {
    // Window 2,000: after a failure at 1,200 tokens the next automatic
    // attempt waits for 1,200 + 200 = 1,400.
    let h = harness(json!([
        reply("a1", 100), reply("a2", 100), reply("a3", 100), reply("a4", 1200),
        { "text": "I will not write those sections." },
        reply("a5", 1300),
        reply("a6", 1400),
        { "text": "Still no sections." },
        reply("a7", 1500),
    ]));
    exchanges(&h, 4).await;
    let heard = Heard::default();
    for i in 5..=7 {
        let event =
            h.runtime.post_user_message(h.session, seri_core::Message::user(long(&format!("question {i}")))).unwrap();
        h.runtime.enqueue(seri_runloop::RunSpec {
            session_id: h.session,
            kind: seri_tools::RunKind::Interactive,
            lane: seri_runloop::Lane::Interactive,
            user_event_ids: vec![event],
            max_turns: h.runtime.settings().max_turns,
            message: None,
        });
        let outcome = &h.runtime.drain(&heard, &h.cancel.1).await[0];
        assert_eq!(outcome.status, RunStatus::Succeeded, "{:?}", outcome.error);
    }
    let kinds: Vec<bool> = h.requests().iter().map(is_summarizer).collect();
    // Question 5 (1,200): tried and failed. Question 6 (1,300): not asked
    // again. Question 7 (1,400): grown enough, asked again.
    assert_eq!(kinds, [false, false, false, false, true, false, false, true, false]);
    let failures: Vec<u64> = heard
        .0
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            seri_runloop::RunEvent::CompactionFailed { retry_at_tokens, .. } => Some(*retry_at_tokens),
            _ => None,
        })
        .collect();
    // Each failure says when the next attempt is: a tenth of the window on.
    assert_eq!(failures, [1_400, 1_600]);
}

#[tokio::test]
async fn compact_now_uses_the_focus_words_and_refuses_too_little_history() {
    let h = harness(json!([reply("a1", 100), reply("a2", 100), reply("a3", 100), reply("a4", 100), recap_turn()]));
    exchanges(&h, 1).await;
    let message = h.runtime.compact_now(h.session, "").await.unwrap();
    assert!(message.starts_with(NOT_ENOUGH_HISTORY), "{message}");
    assert!(message.contains("1 message lies before the newest"), "says why: {message}");
    assert!(h.requests().iter().all(|r| !is_summarizer(r)), "too little history: no summarizer call");
    exchanges(&h, 3).await;
    let message = h.runtime.compact_now(h.session, "the database questions").await.unwrap();
    assert!(message.starts_with("Compacted seq 1–"), "{message}");
    let summarizer = h.requests().pop().unwrap();
    assert!(is_summarizer(&summarizer));
    let text = summarizer["messages"][0]["text"].as_str().unwrap();
    assert!(text.contains("the database questions"), "the focus words reach the summarizer: {text}");
    let info = h.store.agent(&AgentId::local()).info(h.session).unwrap();
    assert!(info.last_seq > 6);
}

#[tokio::test]
async fn oversized_tool_payloads_are_elided_in_the_summarizers_request() {
    let big = "x".repeat(10_000);
    let h = harness(json!([
        { "tool_calls": [{ "id": "w1", "name": "write_file", "arguments": { "path": "big.txt", "content": big } }] },
        reply("a1", 100),
        reply("a2", 100),
        reply("a3", 100),
        recap_turn(),
    ]));
    // write_file asks by default, and a headless run refuses: the call and its
    // (error) result are recorded all the same.
    exchanges(&h, 3).await;
    h.runtime.compact_now(h.session, "").await.unwrap();
    let summarizer = h.requests().pop().unwrap();
    let text = summarizer["messages"][0]["text"].as_str().unwrap();
    assert!(text.contains("\"elided\":true"), "{text}");
    assert!(text.contains("\"originalBytes\""), "{text}");
    assert!(!text.contains(&"x".repeat(5_000)), "the file body never reaches the summarizer");
}

#[tokio::test]
async fn compact_now_on_the_continue_strategy_says_why_and_changes_nothing() {
    let settings = seri_runloop::RuntimeSettings { keep_tokens: 150, ..seri_runloop::RuntimeSettings::default() };
    let h = Harness::with(
        json!([reply("a1", 100), reply("a2", 100), reply("a3", 100), reply("a4", 100), recap_turn()]),
        Options { settings, ..Options::default() },
    );
    exchanges(&h, 4).await;
    let before = h.events(h.session).len();
    let message = h.runtime.compact_now(h.session, "").await.unwrap();
    assert_eq!(message, seri_runloop::NOT_ON_CONTINUE);
    assert!(h.requests().iter().all(|r| !is_summarizer(r)), "no summarizer call");
    assert_eq!(h.events(h.session).len(), before, "nothing was written");
}

/// A compacted session of `history` events: `history` filler events, a
/// recap that keeps the last 10 of them, then the turn's request.
fn compacted_turn_reads(history: u64) -> u64 {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let h = Harness::with(json!([text("Done.")]), Options { settings: compact(1_000_000), ..Options::default() });
        let store = h.store.agent(&seri_core::AgentId::local());
        let filler: Vec<EventBody> = (0..history)
            .map(|n| {
                if n % 2 == 0 {
                    EventBody::Message(Message::user(format!("q{n}")))
                } else {
                    EventBody::Message(Message::assistant(format!("a{n}")))
                }
            })
            .collect();
        for chunk in filler.chunks(500) {
            store.append(h.session, chunk.to_vec()).unwrap();
        }
        let recap = seri_core::ContextCompacted {
            recap: seri_core::CompactionRecap {
                goal: "g".into(),
                progress: "p".into(),
                blockers: "b".into(),
                next_steps: "n".into(),
            },
            read: Vec::new(),
            modified: Vec::new(),
            read_unlisted: 0,
            modified_unlisted: 0,
            kept_from_seq: Seq(history - 9),
            evicted_from_seq: Seq(1),
            evicted_to_seq: Seq(history - 10),
            tokens_before: 1_000,
            tokens_after: 100,
            trigger: Default::default(),
            focus: None,
            model: seri_core::ModelRef { provider: "script".into(), model: "scripted".into() },
        };
        store.append(h.session, [EventBody::ContextCompacted(Box::new(recap))]).unwrap();
        let before = h.store.events_read();
        let outcomes = h.send("Go on").await;
        assert_eq!(outcomes[0].result.as_deref(), Some("Done."));
        h.store.events_read() - before
    })
}

#[test]
fn a_compacted_turn_reads_a_bounded_number_of_events_however_long_the_history() {
    let small = compacted_turn_reads(300);
    let large = compacted_turn_reads(6_000);
    let bound = seri_projection::compaction::CONTEXT_MARKS_PAGE + seri_store::SNAPSHOT_EVERY_EVENTS + 64;
    assert!(large <= bound, "a turn on 6,000 events read {large} of them (bound {bound})");
    assert!(large <= small + seri_store::SNAPSHOT_EVERY_EVENTS, "{large} events read at 6,000 vs {small} at 300");
}

#[tokio::test]
async fn a_session_on_another_model_compacts_at_half_its_window_with_that_model() {
    // The runtime's model has a window of about a million tokens; the
    // session was switched (`/model`) to one of 128,000, whose trigger is
    // 64,000: billed that much, the session compacts, and its own model
    // writes the recap.
    let settings = seri_runloop::RuntimeSettings {
        strategy: seri_prompt::ContextStrategy::Compact,
        keep_tokens: 150,
        ..seri_runloop::RuntimeSettings::default()
    };
    let model = seri_core::ModelRef::new("openai", "gpt-4.1");
    let h = Harness::with(
        json!([
            reply("a1", 100),
            reply("a2", 100),
            reply("a3", 100),
            reply("a4", 64_000),
            recap_turn(),
            reply("a5", 300),
        ]),
        Options { settings, model: Some(model), ..Options::default() },
    );
    h.runtime.set_model(h.session, Some(seri_core::ModelRef::new("openai", "gpt-4o"))).unwrap();
    exchanges(&h, 5).await;
    let requests = h.requests();
    assert_eq!(requests.len(), 6, "{requests:#?}");
    assert!(is_summarizer(&requests[4]), "64,000 of 128,000 reaches the session model's trigger");
    assert!(requests.iter().all(|r| r["model"] == "gpt-4o"), "every request, the recap's too, goes to gpt-4o");
    let info = h.store.agent(&AgentId::local()).info(h.session).unwrap();
    assert_eq!(h.runtime.session_context_window(&info), 128_000);
    assert_eq!(h.runtime.context_report(h.session).unwrap().window, 128_000, "/context shows the session's window");
}

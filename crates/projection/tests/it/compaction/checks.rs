//! Data-driven checks, one `check_*` helper per rule of the compact
//! strategy: the trigger, which billed usage counts, the four-message
//! floor, the file lists, elision, trimming, the recap update, and reading
//! only the working context.

use std::cell::RefCell;
use std::convert::Infallible;

use serde_json::json;
use seri_core::CompactionTrigger::{Automatic, Manual, Overflow};
use seri_core::{Event, EventBody, ModelRef, RecapField, Seq};
use seri_projection::compaction::{
    ELIDE_PAYLOAD_BYTES, MAX_SUMMARY_TRIM_ATTEMPTS, ReadContextError, SummarizerInput, TrimError, TrimReport,
    WorkingContextError, working_context_range,
};
use seri_projection::{
    CompactionDecision, NOT_ENOUGH_HISTORY, SeqRange, ThreadEvents, WorkingContext, parse_recap, plan_compaction,
    read_working_context,
};

use super::support::{Session, answer, model, other_model, plan_of, settings};

/// A session whose local estimate is exactly `tokens` (one user message).
fn of_local_tokens(tokens: u64) -> Session {
    Session::new().user(&"x".repeat(tokens as usize * 4))
}

#[track_caller]
fn check_trigger(window: u64, session: &Session, expected: bool) {
    let decision = plan_compaction(&session.context(), &settings(window, 20_000), Automatic, None);
    let triggered = !matches!(decision, CompactionDecision::NotNeeded { .. });
    assert_eq!(triggered, expected, "window {window}: {decision:?}");
}

#[test]
fn trigger_at_half_the_window() {
    check_trigger(1_000, &of_local_tokens(499), false);
    check_trigger(1_000, &of_local_tokens(500), true);
    check_trigger(1_001, &of_local_tokens(500), false);
    check_trigger(1_001, &of_local_tokens(501), true);
    // The billed half counts as much as the local one.
    check_trigger(1_000, &of_local_tokens(1).billed("ok", 499, Some(model())), false);
    check_trigger(1_000, &of_local_tokens(1).billed("ok", 500, Some(model())), true);
    // Manual and overflow plans do not wait for the trigger.
    let small = of_local_tokens(1);
    assert!(matches!(small.plan(&settings(1_000, 20_000), Manual), CompactionDecision::NotEnoughHistory { .. }));
    assert!(matches!(small.plan(&settings(1_000, 20_000), Overflow), CompactionDecision::NotEnoughHistory { .. }));
}

#[test]
fn the_local_half_counts_at_the_ratio_the_models_bills_taught() {
    // 2,500 characters billed as 1,000 tokens: 2.5 characters per token.
    let session = Session::new().user(&"x".repeat(1_248)).billed_for("ok", 1_000, 2_500, model());
    let context = session.context();
    assert_eq!(context.ratio(&model()).milli(), 2_500);
    assert_eq!(context.estimate(&model()).local, 500, "1,250 characters at 2.5");
    // Another model's tokenizer is another matter: the default four.
    assert_eq!(context.estimate(&other_model()).local, 313);
    // The keep budget is in the same tokens: 400 tokens keep 1,000
    // characters, the newest two exchanges of 499, not a third (at four
    // characters per token, 1,600 would have kept three).
    let later = (0..6).fold(session, |s, i| s.user(&format!("{i}").repeat(498)).assistant("a"));
    let decision = later.plan(&settings(100_000, 400), Manual);
    let CompactionDecision::Compact(plan) = decision else { panic!("{decision:?}") };
    assert_eq!(plan.kept_tokens, 400, "998 characters at 2.5, rounded up");
}

#[track_caller]
fn check_billed(session: &Session, current: &ModelRef, expected: Option<u64>) {
    assert_eq!(session.context().estimate(current).billed, expected);
}

#[test]
fn stale_billed_usage_is_ignored() {
    let long = || {
        let mut s = Session::new();
        for i in 0..6 {
            s = s.user(&format!("question {i}")).assistant(&format!("answer {i}"));
        }
        s
    };
    let recap = answer("g", "p", "(none)", "n");
    // Billed by the current model, after the recap (or with no recap): counts.
    check_billed(&long().billed("ok", 90_000, Some(model())), &model(), Some(90_000));
    let compacted = long().billed("ok", 90_000, Some(model())).compact(&settings(200_000, 1), &recap);
    check_billed(&compacted.clone().billed("ok", 12_000, Some(model())), &model(), Some(12_000));
    // Billed before the newest recap: it measured the context the recap
    // replaced, even when the message itself is in the kept part.
    check_billed(&compacted, &model(), None);
    assert!(compacted.context().messages().iter().any(|m| m.seqs.contains(Seq(13))), "the billed message is kept");
    // Billed by another model, or by no recorded model: ignored, and an
    // older figure by the current model does not stand in for it.
    let switched = long().billed("ok", 90_000, Some(model())).billed("ok", 150_000, Some(other_model()));
    check_billed(&switched, &model(), None);
    check_billed(&switched, &other_model(), Some(150_000));
    check_billed(&long().billed("ok", 90_000, None), &model(), None);
    // So a stale figure cannot trigger a second compaction.
    let settings = settings(100_000, 1);
    assert!(matches!(compacted.plan(&settings, Automatic), CompactionDecision::NotNeeded { .. }));
}

#[track_caller]
fn check_floor(messages: usize, expected_evictable: Option<usize>) {
    let mut session = Session::new();
    for i in 0..messages {
        session = if i % 2 == 0 { session.user(&format!("q{i}")) } else { session.assistant(&format!("a{i}")) };
    }
    // A keep budget of 0 keeps only the newest message.
    let decision = session.plan(&settings(200_000, 0), Manual);
    match expected_evictable {
        Some(n) => assert_eq!(
            decision,
            CompactionDecision::NotEnoughHistory {
                estimate: decision_estimate(&decision),
                evictable: n,
                keep_budget: 0
            }
        ),
        None => assert!(matches!(decision, CompactionDecision::Compact(_)), "{decision:?}"),
    }
}

fn decision_estimate(decision: &CompactionDecision) -> seri_core::ContextEstimate {
    match decision {
        CompactionDecision::NotNeeded { estimate } | CompactionDecision::NotEnoughHistory { estimate, .. } => *estimate,
        CompactionDecision::Compact(plan) => plan.estimate,
    }
}

#[test]
fn fewer_than_four_evictable_messages_is_not_enough_history() {
    check_floor(0, Some(0));
    check_floor(1, Some(0));
    check_floor(4, Some(3));
    check_floor(5, None);
    let decision = Session::new().user("hi").plan(&settings(100, 1), Manual);
    // The document's sentence, then why: what stays and how little is before it.
    assert_eq!(
        decision.to_string(),
        "Not enough history to compact. Only 0 messages lie before the newest 1 tokens, which always stay word \
         for word; a summary is worth it from 4 on (the context is about 1 tokens)."
    );
    assert_eq!(NOT_ENOUGH_HISTORY, "Not enough history to compact.");
}

#[track_caller]
fn check_files(session: Session, expected_read: &[&str], expected_modified: &[&str]) {
    let session = session.user("next").assistant("ok").user("go on");
    let plan = plan_of(session.plan(&settings(200_000, 1), Manual));
    assert_eq!((plan.read, plan.modified), (owned(expected_read), owned(expected_modified)));
}

fn owned(list: &[&str]) -> Vec<String> {
    list.iter().map(|p| (*p).to_owned()).collect()
}

#[test]
fn file_lists_come_from_the_evicted_calls() {
    let start = || Session::new().user("start");
    check_files(start().read("b.rs", "").read("a.rs", "").read("b.rs", ""), &["a.rs", "b.rs"], &[]);
    check_files(
        start().edit("z.rs").tool("write_file", json!({"path": "c.rs", "content": ""}), "ok"),
        &[],
        &["c.rs", "z.rs"],
    );
    check_files(start().read("a.rs", "").edit("a.rs").read("a.rs", ""), &[], &["a.rs"]);
    // Failed calls touched nothing; other tools have no path; the kept part
    // is not listed.
    let failed = start()
        .call("read_file", json!({"path": "missing.rs"}))
        .result(2, "read_file", "No such file", true)
        .call("edit", json!({"path": "ro.rs"}))
        .result(4, "edit", "Permission denied", true)
        .tool("grep", json!({"path": "src", "pattern": "x"}), "none");
    check_files(failed, &[], &[]);
    let kept = start().read("old.rs", "").user("more").assistant("sure").user("and").assistant("ok").edit("new.rs");
    let plan = plan_of(kept.plan(&settings(200_000, 8), Manual));
    assert_eq!((plan.read, plan.modified), (owned(&["old.rs"]), owned(&[])));
}

/// The summarizer's transcript for compacting `session` whole but its last message.
fn transcript(session: &Session) -> String {
    let session = session.clone().user("next");
    let plan = plan_of(session.plan(&settings(200_000, 0), Manual));
    SummarizerInput::new(&plan, session.events()).unwrap().transcript()
}

#[track_caller]
fn check_elided(content: &str, expected_line: &str) {
    let session = Session::new().user("a").assistant("b").user("c").read("f.rs", content);
    let transcript = transcript(&session);
    assert_eq!(transcript.lines().nth(4), Some(expected_line), "{transcript}");
}

#[test]
fn oversized_payloads_are_elided_with_their_exact_size() {
    let at = "a".repeat(ELIDE_PAYLOAD_BYTES);
    check_elided(&at, &format!("[5] tool result read_file: {at}"));
    let over = format!("{}é", "a".repeat(ELIDE_PAYLOAD_BYTES - 1));
    let bytes = ELIDE_PAYLOAD_BYTES + 1;
    check_elided(&over, &format!(r#"[5] tool result read_file: {{"elided":true,"originalBytes":{bytes}}}"#));
    // Arguments are measured as compact JSON; the path survives.
    let session = Session::new().user("a").assistant("b").user("c").tool(
        "write_file",
        json!({"path": "p.rs", "content": at}),
        "ok",
    );
    let original = json!({"path": "p.rs", "content": at}).to_string().len();
    let line = format!(r#"[4] tool call write_file: {{"elided":true,"originalBytes":{original},"path":"p.rs"}}"#);
    assert_eq!(transcript(&session).lines().nth(3), Some(line.as_str()));
    // The events themselves are untouched.
    let EventBody::ToolCall(call) = &session.events()[3].body else { panic!() };
    assert_eq!(call.arguments["content"], json!(at));
}

/// A session to trim: three rounds of thinking, a call and a 400-byte result.
fn to_trim() -> (Session, SummarizerInput) {
    let mut session = Session::new().user("start");
    for i in 0..3 {
        let call_seq = session.next_seq() + 2;
        session = session
            .thinking(&format!("thinking {i} ").repeat(20))
            .assistant(&format!("step {i}"))
            .call("run", json!({"script": format!("line {i}\n").repeat(40)}))
            .result(call_seq, "run", &format!("output {i}\n").repeat(50), false);
    }
    let session = session.user("done?");
    let plan = plan_of(session.plan(&settings(200_000, 0), Manual));
    let input = SummarizerInput::new(&plan, session.events()).unwrap();
    (session, input)
}

#[track_caller]
fn check_trim(budget: u64, expected: TrimReport) {
    let (_, mut input) = to_trim();
    let report = input.trim_to_fit(budget).unwrap().clone();
    assert!(input.tokens() <= budget, "{} tokens for a budget of {budget}", input.tokens());
    assert!(report.attempts <= MAX_SUMMARY_TRIM_ATTEMPTS);
    assert_eq!(report, expected);
    // What was dropped is not in the transcript; the rest is.
    let first_line_seq = input.transcript_seqs().map(|r| r.from);
    assert_eq!(first_line_seq, Some(expected.dropped.map_or(Seq(1), |d| Seq(d.to.get() + 1))));
}

#[test]
fn trimming_shortens_results_first_then_calls_then_drops_the_oldest() {
    let (_, input) = to_trim();
    let full = input.tokens();
    assert_eq!(full, 892);
    let report = |attempts, shortened: &[u64], dropped: Option<(u64, u64)>| TrimReport {
        attempts,
        shortened: shortened.iter().copied().map(Seq).collect(),
        dropped: dropped.map(|(from, to)| SeqRange::new(Seq(from), Seq(to)).unwrap()),
    };
    // Seqs: 1 user; then per round thinking, text, call, result (2-5, 6-9,
    // 10-13); 14 the kept user message.
    check_trim(full, report(0, &[], None));
    // Step 1, oldest first, stopping as soon as it fits.
    check_trim(full - 10, report(1, &[5], None));
    check_trim(506, report(1, &[5, 9, 13], None));
    // Step 2: thinking and calls, oldest first.
    check_trim(505, report(2, &[2, 5, 9, 13], None));
    check_trim(143, report(2, &[2, 4, 5, 6, 8, 9, 10, 12, 13], None));
    // Step 3: whole events, oldest first; what was dropped is no longer
    // reported as shortened.
    check_trim(142, report(3, &[2, 4, 5, 6, 8, 9, 10, 12, 13], Some((1, 1))));
    check_trim(100, report(3, &[6, 8, 9, 10, 12, 13], Some((1, 5))));
    check_trim(40, report(3, &[12, 13], Some((1, 10))));
    // Trimming again with a smaller budget (the provider refused the
    // summarizer's request) goes on from there.
    let (_, mut input) = to_trim();
    input.trim_to_fit(506).unwrap();
    let again = input.trim_to_fit(143).unwrap();
    assert_eq!(again, &report(3, &[2, 4, 5, 6, 8, 9, 10, 12, 13], None));
}

#[test]
fn trimming_reports_what_cannot_fit() {
    let big_recap = answer(&"goal ".repeat(200), "p", "(none)", "n");
    let session = of_local_tokens(3).assistant("a").user("b").assistant("c").user("d");
    let session = session.compact(&settings(200_000, 0), &big_recap).assistant("e").user("f").assistant("g").user("h");
    let plan = plan_of(session.plan(&settings(200_000, 0), Manual));
    let mut input = SummarizerInput::new(&plan, session.events()).unwrap();
    let err = input.trim_to_fit(100).unwrap_err();
    let TrimError::DoesNotFit { budget, tokens } = err.clone();
    assert_eq!((budget, tokens), (100, input.tokens()));
    assert!(err.to_string().contains("more than the budget of 100"), "{err}");
    assert_eq!(input.trimmed().attempts, MAX_SUMMARY_TRIM_ATTEMPTS);
    assert_eq!(input.transcript(), "");
    // Trimming shapes the request only: the events are all still there.
    assert_eq!(session.events().len() as u64, session.events().last().unwrap().seq.get());
}

#[test]
fn an_existing_recap_is_updated() {
    let first = answer("Fix the parser.", "- Found the unwrap.", "- A test fails.", "1. Fix it.");
    let session = Session::new()
        .user("Fix the parser.")
        .read("src/parser.rs", "fn parse() {}")
        .assistant("Found it.")
        .user("Go.")
        .assistant("Fixing.")
        .compact(&settings(200_000, 1), &first)
        .edit("src/parser.rs")
        .assistant("Fixed; tests pass.")
        .user("Commit.")
        .assistant("Committed.")
        .user("Thanks.");
    let plan = plan_of(session.plan(&settings(200_000, 1), Manual));
    // The summarizer reads the old recap to update it.
    assert_eq!(plan.previous_recap.as_ref().map(|r| r.progress.as_str()), Some("- Found the unwrap."));
    let input = SummarizerInput::new(&plan, session.events()).unwrap();
    assert_eq!(input.previous_recap(), plan.previous_recap.as_ref());
    assert!(!input.transcript().contains("compaction:"), "an earlier recap is given whole, not as a line");
    // The lists merge: read before, modified now, so modified only.
    assert_eq!((plan.read.clone(), plan.modified.clone()), (vec![], owned(&["src/parser.rs"])));
    let updated = parse_recap(&answer(
        "Fix the parser.",
        "- Found the unwrap.\n- Fixed it; tests pass; committed.",
        "(none)",
        "1. Nothing; wait for the user.",
    ))
    .unwrap();
    let session = session.compacted(plan.compacted(updated.clone()));
    let context = session.context();
    let recap = context.recap().unwrap();
    assert_eq!(recap.compacted.recap, updated);
    assert!(recap.message.contains("- Fixed it; tests pass; committed.\n\n## Blockers\n(none)"));
    assert_eq!(context.messages().len(), 1, "only the newest message is kept");
}

/// A thread that counts the events it hands out, and answers for its
/// context marks as the store does, from the marks alone.
struct Counting<'a> {
    events: &'a [Event],
    read: RefCell<Vec<SeqRange>>,
    marks_read: RefCell<u64>,
}

impl ThreadEvents for Counting<'_> {
    type Error = Infallible;

    fn events(&self, range: SeqRange) -> Result<Vec<Event>, Infallible> {
        self.read.borrow_mut().push(range);
        self.events.events(range)
    }

    fn context_marks(&self, upto: Seq, limit: u64) -> Result<Vec<Event>, Infallible> {
        let marks = self.events.context_marks(upto, limit)?;
        *self.marks_read.borrow_mut() += marks.len() as u64;
        Ok(marks)
    }
}

#[track_caller]
fn check_reading(exchanges: usize, keep: u64, later: usize) {
    let mut session = Session::new();
    for i in 0..exchanges {
        session = session.user(&format!("q{i}")).assistant(&format!("a{i}"));
    }
    let session = session.compact(&settings(200_000, keep), &answer("g", "p", "(none)", "n"));
    let kept_from = session.context().start();
    let mut session = session;
    for i in 0..later {
        session = session.user(&format!("later {i}"));
    }
    let last = session.events().last().unwrap().seq;
    let thread = Counting { events: session.events(), read: RefCell::new(Vec::new()), marks_read: RefCell::new(0) };
    let events = read_working_context(&thread, last).unwrap();
    assert_eq!(events.first().map(|e| e.seq), Some(kept_from));
    assert_eq!(events.last().map(|e| e.seq), Some(last));
    assert_eq!(WorkingContext::from_events(&events).unwrap(), session.context());
    assert_eq!(working_context_range(session.events()), SeqRange::new(kept_from, last));
    // The newest mark is the recap; then the working context in one range,
    // and nothing before it.
    assert_eq!(*thread.marks_read.borrow(), 1);
    assert_eq!(*thread.read.borrow(), vec![SeqRange::new(kept_from, last).unwrap()]);
}

#[test]
fn only_the_working_context_is_read() {
    // A small kept part, and a kept part of thousands of events.
    check_reading(400, 20, 300);
    check_reading(2_000, 2_000, 10);
    // Without a recap the whole session is the working context.
    let plain = Session::new().user("a").assistant("b");
    assert_eq!(read_working_context(plain.events(), Seq(2)).unwrap(), plain.events());
    assert_eq!(read_working_context(plain.events(), Seq(0)).unwrap(), vec![]);
}

#[test]
fn missing_events_are_named() {
    let session = Session::new().user("a").assistant("b");
    let err = read_working_context(session.events(), Seq(5)).unwrap_err();
    assert!(
        matches!(err, ReadContextError::MissingEvents { range } if range == SeqRange::new(Seq(1), Seq(5)).unwrap())
    );
    assert_eq!(
        err.to_string(),
        "the thread does not hold every event of seq 1 to 5: the range runs past its end or the reader skipped events"
    );

    let recap = answer("g", "p", "(none)", "n");
    let session = Session::new().user("1").assistant("2").user("3").assistant("4").user("5").assistant("6");
    // A keep budget of 0 keeps only the newest message: the context starts at seq 6.
    let session = session.compact(&settings(200_000, 0), &recap);
    let err = WorkingContext::from_events(&session.events()[6..]).unwrap_err();
    assert_eq!(err, WorkingContextError::MissingKeptEvents { kept_from_seq: Seq(6), first_loaded: Seq(7) });
    assert_eq!(
        err.to_string(),
        "the working context starts at seq 6 (the newest recap's keptFromSeq), but the events given start at seq 7: \
         load from seq 6 on"
    );
    let session = session.user("8").assistant("9").user("10").assistant("11").user("12");
    let plan = plan_of(session.plan(&settings(200_000, 0), Manual));
    let err = SummarizerInput::new(&plan, &session.events()[6..]).unwrap_err();
    assert!(err.to_string().starts_with("the events given do not hold every event of seq 6 to"), "{err}");
    assert_eq!(RecapField::ALL.len(), 4);
}

#[test]
fn an_automatic_compaction_with_four_evictable_messages_goes_ahead_even_above_the_trigger_after() {
    // Eight small exchanges, then a turn whose huge tool result must stay:
    // the best cut keeps it, and it alone is past half the window. The seri
    // document compacts whenever four messages can go; the run says the
    // context stays above half.
    let mut session = Session::new();
    for i in 0..8 {
        session = session.user(&format!("question {i}")).assistant(&format!("answer {i}"));
    }
    let session = session.user("Read the log").tool("read_file", json!({"path": "big.log"}), &"x".repeat(2_400 * 4));
    let decision = session.plan(&settings(4_000, 500), Automatic);
    match &decision {
        CompactionDecision::Compact(plan) => {
            assert_eq!(plan.evicted_messages, 17, "every small exchange and the ask go: {plan:?}");
            assert!(plan.kept_tokens >= 2_000, "what stays is past half the window: {plan:?}");
        }
        other => panic!("{other:?}"),
    }
    // A person's /compact compacts the same.
    assert!(matches!(session.plan(&settings(4_000, 500), Manual), CompactionDecision::Compact(_)));
    // In a window three times as wide it is not at the trigger at all.
    let roomy = session.plan(&settings(12_000, 500), Automatic);
    assert!(matches!(roomy, CompactionDecision::NotNeeded { .. }), "{roomy:?}");
}

//! Rewinds in the working context: a `context_rewound` event takes the
//! events after its `toSeq` out of the context (they stay in the thread),
//! the summarizer never sees them, and a recap a rewind took back no longer
//! shapes the context.

use seri_core::{CompactionTrigger, ContextRewound, EventBody, Seq};
use seri_projection::SeqRange;
use seri_projection::compaction::{
    SummarizerInput, WorkingContext, read_working_context, visible_events, working_context_range,
};

use super::support::{Session, answer, outline, plan_of, settings};

fn rewind_before(session: Session, turn_seq: u64) -> Session {
    session.push(EventBody::ContextRewound(ContextRewound::before_turn(Seq(turn_seq))))
}

/// The working context, built both from all events and from what
/// `read_working_context` reads, which must agree.
#[track_caller]
fn check_context(session: &Session, expected_outline: &str) {
    let last = session.events().last().unwrap().seq;
    let read = read_working_context(session.events(), last).unwrap();
    let context = WorkingContext::from_events(&read).unwrap();
    assert_eq!(context, session.context());
    assert_eq!(outline(&context), expected_outline);
}

#[test]
fn the_working_context_continues_from_the_rewind_point() {
    // 1 user, 2 assistant, 3 user (rewound), 4 assistant (rewound), 5 rewind, 6 user.
    let session = Session::new().user("fix the parser").assistant("done").user("now rename it").assistant("renamed");
    let session = rewind_before(session, 3).user("rename it to lexer instead");
    check_context(
        &session,
        "[1] user: fix the parser (14 chars)\n[2] assistant: \"done\" (4 chars)\n[6] user: rename it to lexer instead (26 chars)\n",
    );
    // The rewound turn is still in the thread.
    assert_eq!(session.events().len(), 6);
    let shown: Vec<u64> = visible_events(session.events()).iter().map(|e| e.seq.get()).collect();
    assert_eq!(shown, [1, 2, 5, 6]);
}

#[test]
fn a_rewound_tool_turn_takes_its_calls_and_results_along() {
    let session = Session::new().user("read it").read("src/a.rs", "fn a() {}").assistant("read");
    // 1 user, 2 call, 3 result, 4 assistant; rewind before the first turn.
    let session = rewind_before(session, 1).user("never mind");
    check_context(&session, "[6] user: never mind (10 chars)\n");
}

#[test]
fn a_recap_a_rewind_took_back_no_longer_counts() {
    // The run loop refuses such a rewind; the fold must still be total.
    let mut session = Session::new();
    for i in 0..4 {
        session = session.user(&format!("q{i}")).assistant(&format!("a{i}"));
    }
    let compacted = session.clone().compact(&settings(200_000, 0), &answer("g", "p", "(none)", "n"));
    assert!(compacted.context().recap().is_some());
    // Seq 9 is the recap; a rewind to before seq 7 takes it back.
    let session = rewind_before(compacted, 7).user("again");
    let context = session.context();
    assert!(context.recap().is_none(), "the recap was rewound");
    assert_eq!(context.start(), Seq(1));
    check_context(
        &session,
        "[1] user: q0 (2 chars)\n[2] assistant: \"a0\" (2 chars)\n[3] user: q1 (2 chars)\n[4] assistant: \"a1\" (2 chars)\n[5] user: q2 (2 chars)\n[6] assistant: \"a2\" (2 chars)\n[11] user: again (5 chars)\n",
    );
    assert_eq!(working_context_range(session.events()), SeqRange::new(Seq(1), Seq(11)));
}

#[test]
fn the_summarizer_never_reads_rewound_events() {
    let session = Session::new().user("q0").assistant("a0").user("a secret plan").assistant("no");
    let mut session = rewind_before(session, 3);
    for i in 1..5 {
        session = session.user(&format!("q{i}")).assistant(&format!("a{i}"));
    }
    let plan = plan_of(session.plan(&settings(200_000, 0), CompactionTrigger::Manual));
    let input = SummarizerInput::new(&plan, session.events()).unwrap();
    let transcript = input.transcript();
    assert!(!transcript.contains("secret"), "{transcript}");
    assert!(!transcript.contains("rewind"), "{transcript}");
    assert!(transcript.starts_with("[1] user: q0\n[2] assistant: a0\n[6] user: q1"), "{transcript}");
}

#[test]
fn a_successors_recent_exchanges_leave_rewound_turns_out() {
    use crate::support::{Case, Thread};
    let thread = Thread::new().user("fix the parser").assistant("done").user("a secret detour").assistant("detoured");
    let thread = thread.push(EventBody::ContextRewound(ContextRewound::before_turn(Seq(3)))).user("now the lexer");
    let projection = Case::new(thread).compile().unwrap();
    assert!(projection.text.contains("fix the parser"), "{}", projection.text);
    assert!(!projection.text.contains("secret") && !projection.text.contains("detoured"), "{}", projection.text);
    assert!(!projection.text.contains("rewind:"), "{}", projection.text);
}

#[test]
fn a_rewind_reads_as_one_transcript_line() {
    let session = rewind_before(Session::new().user("a").assistant("b").user("c"), 3);
    let line = seri_projection::transcript_event_line(session.events().last().unwrap());
    assert_eq!(line, "[4] rewind: back to before the turn at seq 3; the context continues from seq 2");
}

mod properties {
    //! Random sessions of messages, tool pairs, recaps and rewinds (rewound
    //! rewinds and rewound recaps among them): the working context is the
    //! same whichever way it is built, and the same as the one built from
    //! the events no rewind took back.

    use proptest::prelude::*;
    use seri_core::{CompactionTrigger, ContextRewound, EventBody, Seq};
    use seri_projection::compaction::{
        CompactionDecision, WorkingContext, load_working_context, read_working_context, visible_events,
    };
    use seri_projection::parse_recap;

    use crate::compaction::support::{Session, answer, settings};

    #[derive(Debug, Clone)]
    enum Step {
        User,
        Assistant,
        Tool,
        /// A compaction keeping about this many tokens, when the plan compacts.
        Compact(u64),
        /// A rewind to before the turn this many events back.
        Rewind(u64),
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            4 => Just(Step::User),
            4 => Just(Step::Assistant),
            3 => Just(Step::Tool),
            1 => (0..40u64).prop_map(Step::Compact),
            1 => (1..12u64).prop_map(Step::Rewind),
        ]
    }

    fn build(steps: &[Step]) -> Session {
        let mut session = Session::new().user("start");
        for (i, step) in steps.iter().enumerate() {
            session = match step {
                Step::User => session.user(&format!("q{i}")),
                Step::Assistant => session.assistant(&format!("a{i}")),
                Step::Tool => session.tool("grep", serde_json::json!({ "pattern": i }), &format!("r{i}")),
                Step::Compact(keep) => match session.plan(&settings(200_000, *keep), CompactionTrigger::Manual) {
                    CompactionDecision::Compact(plan) => {
                        let recap = parse_recap(&answer(&format!("g{i}"), "p", "(none)", "n")).unwrap();
                        session.compacted(plan.compacted(recap))
                    }
                    _ => session,
                },
                Step::Rewind(back) => {
                    let turn = session.next_seq().saturating_sub(*back).max(2);
                    session.push(EventBody::ContextRewound(ContextRewound::before_turn(Seq(turn))))
                }
            };
        }
        session
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn every_way_of_building_the_context_agrees(steps in prop::collection::vec(step(), 0..60)) {
            let session = build(&steps);
            let events = session.events();
            let last = events.last().unwrap().seq;
            let whole = WorkingContext::from_events(events).unwrap();
            let read = read_working_context(events, last).unwrap();
            prop_assert_eq!(read.first().map(|e| e.seq), Some(whole.start()));
            prop_assert_eq!(&WorkingContext::from_events(&read).unwrap(), &whole);
            prop_assert_eq!(&load_working_context(events, last).unwrap(), &whole);
            // The oracle: drop what a rewind took back, then build.
            let shown: Vec<_> = visible_events(events).into_iter().cloned().collect();
            let oracle = WorkingContext::from_events(&shown).unwrap();
            prop_assert_eq!(whole.messages(), oracle.messages());
            prop_assert_eq!(whole.recap().map(|r| r.seq), oracle.recap().map(|r| r.seq));
        }
    }
}

//! The compiler reads only what it needs: the initiating message, the cited
//! ranges, and pages walking back until the budget is spent, however long
//! the thread.

use std::cell::RefCell;
use std::convert::Infallible;

use seri_core::{Event, Seq};
use seri_projection::{ContinuationInput, READ_PAGE_EVENTS, SeqRange, ThreadEvents, compile_continuation_projection};

use crate::support::{Case, Thread, cites};

/// A thread that records every range it is asked for.
struct RecordingThread {
    events: Vec<Event>,
    asked: RefCell<Vec<SeqRange>>,
}

impl ThreadEvents for RecordingThread {
    type Error = Infallible;

    fn events(&self, range: SeqRange) -> Result<Vec<Event>, Infallible> {
        self.asked.borrow_mut().push(range);
        self.events.events(range)
    }
}

/// Compiles `case` over a recording thread and returns the ranges asked for.
fn ranges_read(case: &Case) -> Vec<SeqRange> {
    let lineage = case.lineage();
    let input =
        ContinuationInput::new(&lineage, &case.handoff, &case.sources, case.initiating_seq()).with_budget(case.budget);
    let thread = RecordingThread { events: case.thread.events.clone(), asked: RefCell::new(Vec::new()) };
    compile_continuation_projection(&input, &thread).unwrap();
    thread.asked.into_inner()
}

fn range(from: u64, to: u64) -> SeqRange {
    SeqRange::new(Seq(from), Seq(to)).unwrap()
}

/// `n` exchanges of four events each, then the initiating message.
fn long_thread(exchanges: u64) -> Thread {
    let mut thread = Thread::new();
    for i in 0..exchanges {
        thread = thread
            .user(&format!("question {i}"))
            .tool("read_file", serde_json::json!({"path": format!("f{i}.rs")}), "fn main() {}", false)
            .assistant(&format!("answer {i}"));
    }
    thread.user("continue")
}

#[test]
fn reads_the_initiating_message_the_citations_and_pages_back() {
    let case = Case::new(long_thread(100)).sources(vec![cites(5, 8), cites(9, 9), cites(200, 210)]).budget(300);
    let initiating = case.initiating_seq().0;
    assert_eq!(initiating, 401);
    assert_eq!(
        ranges_read(&case),
        [
            range(initiating, initiating),
            range(5, 9),
            range(200, 210),
            range(initiating - READ_PAGE_EVENTS, initiating - 1),
        ]
    );
}

#[test]
fn what_is_read_does_not_grow_with_the_thread() {
    let events_read = |exchanges| {
        let case = Case::new(long_thread(exchanges)).sources(vec![cites(5, 8), cites(40, 60)]).budget(2048);
        ranges_read(&case).iter().map(SeqRange::count).sum::<u64>()
    };
    let small = events_read(100);
    let large = events_read(10_000);
    assert_eq!(small, large, "a 100-times longer thread must not cost more reads");
    // The initiating message, 25 cited events, and at most two pages.
    assert!(large <= 1 + 25 + 2 * READ_PAGE_EVENTS, "read {large} events");
}

//! Bad input and failing readers: each refused with an error that names
//! what was wrong, and nothing half-built.

use std::fmt;

use seri_core::{Event, Seq};
use seri_projection::{CompileError, ContinuationInput, SeqRange, ThreadEvents, compile_continuation_projection};

use crate::support::{Case, PREDECESSOR, Thread, cites};

fn thread() -> Thread {
    Thread::new().user("one").assistant("two").user("three")
}

#[track_caller]
fn check(case: Case, expected: &str) {
    let err = case.compile().unwrap_err().to_string();
    assert_eq!(err, expected.replace("{predecessor}", &PREDECESSOR.to_string()));
}

#[test]
fn malformed_input_is_refused_by_name() {
    check(
        Case::new(thread()).sources(vec![cites(3, 2)]),
        "the source citing thread {predecessor} runs backwards: fromSeq 3 is after toSeq 2",
    );
    check(
        Case::new(thread()).sources(vec![cites(0, 2)]),
        "a source cites seq 0 of thread {predecessor}: seqs start at 1",
    );
    let mut case = Case::new(thread());
    case.depth = 0;
    check(case, "the continuation's depth is 0: the first successor of a chain has depth 1");
    let mut case = Case::new(thread());
    case.initiating = Some(0);
    check(case, "the initiating message's seq is 0: seqs start at 1");
    let mut case = Case::new(thread());
    case.initiating = Some(2);
    check(
        case,
        "the event at seq 2 of thread {predecessor} is not a message from a user or a trigger, \
         so it cannot be the initiating message",
    );
}

#[test]
fn ranges_outside_the_thread_are_refused() {
    let mut case = Case::new(thread());
    case.initiating = Some(9);
    check(
        case,
        "thread {predecessor} does not hold every event of seq 9: the range runs past the thread's end \
         or the reader skipped events",
    );
    check(
        Case::new(thread()).sources(vec![cites(2, 70)]),
        "thread {predecessor} does not hold every event of seq 2 to 70: the range runs past the thread's end \
         or the reader skipped events",
    );
}

#[derive(Debug)]
struct Unavailable;

impl fmt::Display for Unavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("database is locked")
    }
}

impl std::error::Error for Unavailable {}

/// Fails every read, or (when `skip` is set) silently drops an event.
struct BrokenThread {
    events: Vec<Event>,
    skip: Option<Seq>,
}

impl ThreadEvents for BrokenThread {
    type Error = Unavailable;

    fn events(&self, range: SeqRange) -> Result<Vec<Event>, Unavailable> {
        let Some(skip) = self.skip else { return Err(Unavailable) };
        Ok(self.events.iter().filter(|e| range.contains(e.seq) && e.seq != skip).cloned().collect())
    }
}

#[test]
fn reader_failures_name_the_range_and_keep_the_cause() {
    let case = Case::new(thread());
    let lineage = case.lineage();
    let input = ContinuationInput::new(&lineage, &case.handoff, &case.sources, Seq(3));
    let failing = BrokenThread { events: case.thread.events.clone(), skip: None };
    let err = compile_continuation_projection(&input, &failing).unwrap_err();
    assert_eq!(err.to_string(), format!("reading seq 3 of thread {PREDECESSOR} failed"));
    let source = std::error::Error::source(&err).map(ToString::to_string);
    assert_eq!(source.as_deref(), Some("database is locked"));

    let skipping = BrokenThread { events: case.thread.events.clone(), skip: Some(Seq(2)) };
    let err = compile_continuation_projection(&input, &skipping).unwrap_err();
    assert!(
        matches!(err, CompileError::MissingEvents { range, .. } if range == SeqRange::new(Seq(1), Seq(2)).unwrap()),
        "{err}"
    );
}

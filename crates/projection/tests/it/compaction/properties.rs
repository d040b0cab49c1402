//! Properties over random transcripts with tool pairs everywhere (several
//! calls a turn, results in any order, failed calls, oversized payloads,
//! an earlier recap, a call still pending at the end), checked against a
//! brute-force oracle of the cut: no tool result is ever separated from its
//! call, the cut is always immediately before a user or assistant message,
//! fewer than four evictable messages is never cut, the kept part respects
//! the keep budget unless the newest safe part alone is bigger, the file
//! lists are the evicted calls', and planning is deterministic.

use std::collections::BTreeSet;

use proptest::prelude::*;
use serde_json::json;
use seri_core::CompactionTrigger::{self, Manual, Overflow};
use seri_core::tokens::CHARS_PER_TOKEN;
use seri_core::{ContextCompacted, EventBody, PlanUpdated};
use seri_projection::compaction::{
    ContextBody, ContextMessage, FileAccess, MIN_EVICTABLE_MESSAGES, SummarizerInput, file_access,
};
use seri_projection::{CompactionDecision, WorkingContext, parse_recap, plan_compaction};

use super::support::{Session, answer, assert_pairs_intact, settings};

/// One call of a turn: which tool, how big its result, whether it failed.
#[derive(Debug, Clone)]
struct CallSpec {
    tool: usize,
    path: usize,
    result_len: usize,
    failed: bool,
}

#[derive(Debug, Clone)]
enum Step {
    User(usize),
    Turn { thinking: bool, text: usize, calls: Vec<CallSpec>, reversed: bool },
    Plan,
}

fn call_spec() -> impl Strategy<Value = CallSpec> {
    (0..4usize, 0..4usize, prop_oneof![8 => 0..200usize, 1 => 4_000..6_000usize], prop::bool::weighted(0.15))
        .prop_map(|(tool, path, result_len, failed)| CallSpec { tool, path, result_len, failed })
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        3 => (0..120usize).prop_map(Step::User),
        6 => (any::<bool>(), 0..160usize, prop::collection::vec(call_spec(), 0..4), any::<bool>())
            .prop_map(|(thinking, text, calls, reversed)| Step::Turn { thinking, text, calls, reversed }),
        1 => Just(Step::Plan),
    ]
}

const TOOLS: [&str; 4] = ["read_file", "write_file", "edit", "grep"];
const PATHS: [&str; 4] = ["a.rs", "b.rs", "src/c.rs", "d e.rs"];

/// Appends the steps; the last turn's calls stay unanswered when `pending`.
fn build(mut session: Session, steps: &[Step], pending: bool) -> Session {
    for (i, step) in steps.iter().enumerate() {
        session = match step {
            Step::User(len) => session.user(&"u".repeat(*len)),
            Step::Plan => session.push(EventBody::PlanUpdated(PlanUpdated { plan: None })),
            Step::Turn { thinking, text, calls, reversed } => {
                if *thinking {
                    session = session.thinking("hmm");
                }
                if *text > 0 || calls.is_empty() {
                    session = session.assistant(&"t".repeat(*text));
                }
                let mut made = Vec::new();
                for call in calls {
                    made.push((session.next_seq(), call.clone()));
                    let args = json!({ "path": PATHS[call.path], "n": call.result_len });
                    session = session.call(TOOLS[call.tool], args);
                }
                if pending && i == steps.len() - 1 {
                    continue;
                }
                if *reversed {
                    made.reverse();
                }
                for (seq, call) in made {
                    session = session.result(seq, TOOLS[call.tool], &"r".repeat(call.result_len), call.failed);
                }
                session
            }
        };
    }
    session
}

fn sessions() -> impl Strategy<Value = Session> {
    (
        prop::collection::vec(step(), 0..24),
        prop::option::of((0..200u64, prop::collection::vec(step(), 0..24))),
        any::<bool>(),
    )
        .prop_map(|(first, second, pending)| match second {
            None => build(Session::new(), &first, pending),
            Some((keep, second)) => {
                let session = build(Session::new(), &first, false);
                let session = match plan_compaction(&session.context(), &settings(200_000, keep), Manual, None) {
                    CompactionDecision::Compact(plan) => {
                        let recap = parse_recap(&answer("g", "p", "(none)", "n")).unwrap();
                        session.compacted(plan.compacted(recap))
                    }
                    _ => session,
                };
                build(session, &second, pending)
            }
        })
}

fn is_turn_start(m: &ContextMessage) -> bool {
    matches!(m.body, ContextBody::User { .. } | ContextBody::Assistant(_))
}

fn call_ids(m: &ContextMessage) -> Vec<String> {
    match &m.body {
        ContextBody::Assistant(t) => t.tool_calls.iter().map(|c| c.id.to_string()).collect(),
        _ => Vec::new(),
    }
}

fn result_id(m: &ContextMessage) -> Option<String> {
    match &m.body {
        ContextBody::ToolResult(r) => Some(r.tool_call_id.to_string()),
        _ => None,
    }
}

/// The safe boundaries by their definition: before a user or assistant
/// message, with every call before it answered before it.
fn safe_boundaries(messages: &[ContextMessage]) -> Vec<usize> {
    (1..messages.len())
        .filter(|&i| is_turn_start(&messages[i]))
        .filter(|&i| {
            let answered: BTreeSet<String> = messages[..i].iter().filter_map(result_id).collect();
            messages[..i].iter().flat_map(call_ids).all(|id| answered.contains(&id))
        })
        .collect()
}

/// The cut the rules ask for: the oldest safe boundary that keeps at most
/// the budget, else the newest safe one.
fn oracle_cut(messages: &[ContextMessage], keep_tokens: u64) -> Option<usize> {
    let kept = |i: usize| messages[i..].iter().map(|m| m.chars).sum::<u64>();
    let safe = safe_boundaries(messages);
    safe.iter().copied().find(|&i| kept(i) <= keep_tokens * CHARS_PER_TOKEN).or(safe.last().copied())
}

/// The file lists by their definition.
fn oracle_files(context: &WorkingContext, cut: usize) -> (Vec<String>, Vec<String>) {
    let messages = context.messages();
    let failed: BTreeSet<String> = messages
        .iter()
        .filter_map(|m| match &m.body {
            ContextBody::ToolResult(r) if r.is_error => Some(r.tool_call_id.to_string()),
            _ => None,
        })
        .collect();
    let previous: Option<&ContextCompacted> = context.recap().map(|r| &r.compacted);
    let mut read: BTreeSet<String> = previous.map(|p| p.read.iter().cloned().collect()).unwrap_or_default();
    let mut modified: BTreeSet<String> = previous.map(|p| p.modified.iter().cloned().collect()).unwrap_or_default();
    for m in &messages[..cut] {
        if let ContextBody::Assistant(turn) = &m.body {
            for call in turn.tool_calls.iter().filter(|c| !failed.contains(c.id.as_str())) {
                match file_access(call) {
                    Some((FileAccess::Read, path)) => read.insert(path.to_owned()),
                    Some((FileAccess::Modified, path)) => modified.insert(path.to_owned()),
                    None => false,
                };
            }
        }
    }
    (read.difference(&modified).cloned().collect(), modified.into_iter().collect())
}

fn trigger() -> impl Strategy<Value = CompactionTrigger> {
    prop_oneof![Just(Manual), Just(Overflow)]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn cuts_follow_the_rules(session in sessions(), keep in 0..400u64, trigger in trigger(), trim_budget in 0..400u64) {
        let context = session.context();
        let settings = settings(200_000, keep);
        let decision = plan_compaction(&context, &settings, trigger, None);
        prop_assert_eq!(&decision, &plan_compaction(&context, &settings, trigger, None), "planning is deterministic");
        let messages = context.messages();
        let budget = match trigger {
            Overflow => keep.min(context.message_chars().div_ceil(CHARS_PER_TOKEN) / 2),
            _ => keep,
        };
        let expected = oracle_cut(messages, budget);
        let plan = match decision {
            CompactionDecision::Compact(plan) => plan,
            CompactionDecision::NotEnoughHistory { evictable, .. } => {
                prop_assert_eq!(evictable, expected.unwrap_or(0));
                prop_assert!(evictable < MIN_EVICTABLE_MESSAGES);
                return Ok(());
            }
            CompactionDecision::NotNeeded { .. } => {
                unreachable!("manual and overflow plans never wait and never decline")
            }
        };
        let cut = plan.evicted_messages;
        prop_assert_eq!(Some(cut), expected);
        prop_assert_eq!(plan.keep_budget, budget);
        prop_assert!(cut >= MIN_EVICTABLE_MESSAGES);
        prop_assert!(is_turn_start(&messages[cut]), "the cut is before a user or assistant message");
        prop_assert_eq!(plan.kept_from_seq, messages[cut].seqs.from);
        prop_assert_eq!(plan.evicted.from, context.start());
        prop_assert_eq!(plan.evicted.to.get() + 1, plan.kept_from_seq.get());
        assert_pairs_intact(&context, cut);
        let newest_safe = safe_boundaries(messages).last().copied();
        prop_assert!(plan.kept_tokens <= budget || Some(cut) == newest_safe, "the kept part fits unless it cannot");
        prop_assert_eq!((plan.read.clone(), plan.modified.clone()), oracle_files(&context, cut));

        // The summarizer sees every evicted event but earlier recaps, and
        // trimming either fits the budget in a bounded number of steps or
        // says it cannot.
        let mut input = SummarizerInput::new(&plan, session.events()).unwrap();
        let evicted_events = session.events().iter().filter(|e| plan.evicted.contains(e.seq) && !matches!(e.body, EventBody::ContextCompacted(_))).count();
        prop_assert_eq!(input.transcript().lines().filter(|l| l.starts_with('[')).count(), evicted_events);
        match input.trim_to_fit(trim_budget) {
            Ok(report) => {
                prop_assert!(report.attempts <= 3);
                prop_assert!(input.tokens() <= trim_budget);
            }
            Err(_) => prop_assert!(input.transcript().is_empty() && input.tokens() > trim_budget),
        }

        // After the recap, the working context is the recap and exactly the
        // kept messages, and every result in it follows its call.
        let recap = parse_recap(&answer("g", "p", "(none)", "n")).unwrap();
        let after = session.clone().compacted(plan.compacted(recap)).context();
        prop_assert_eq!(after.messages(), &messages[cut..]);
        let mut calls = BTreeSet::new();
        for m in after.messages() {
            calls.extend(call_ids(m));
            if let Some(id) = result_id(m) {
                prop_assert!(calls.contains(&id), "result {} before its call", id);
            }
        }
    }
}

//! Properties over generated threads, sources and budgets: the budget holds,
//! included and omitted are exactly what was asked for, excerpt lines are
//! the escaped source text byte for byte, the output is deterministic and
//! survives CBOR, and no input panics.

use proptest::prelude::*;
use proptest::sample::Index;
use seri_core::{
    Actor, DenialReason, EventBody, Message, PermissionDenied, Plan, PlanStep, PlanUpdated, Role, Seq,
    SessionContinuationManifest, Source, StatusChanged, StepStatus, Thinking, TitleSource, ToolCall, ToolResult,
};
use seri_projection::{escape_action_framing, transcript_event_line, transcript_lines, unescape_action_framing};

use crate::support::{Case, OTHER, PREDECESSOR, Thread, assert_invariants};

/// Short text that is mostly the characters that matter: angle brackets,
/// slashes, backslashes, newlines, `#`, multi-byte characters.
fn text() -> impl Strategy<Value = String> {
    proptest::string::string_regex("[ab</>\\\\\n\r\t é日#\\[\\]:]{0,24}").unwrap()
}

fn body() -> impl Strategy<Value = EventBody> {
    let actor = prop_oneof![Just(Actor::User), Just(Actor::Trigger), Just(Actor::System), Just(Actor::Agent)];
    prop_oneof![
        4 => (text(), actor).prop_map(|(t, actor)| EventBody::Message(Message { role: Role::User, actor, content: t, ..Message::default() })),
        3 => text().prop_map(|t| EventBody::Message(Message::assistant(t))),
        1 => text().prop_map(|t| EventBody::Thinking(Thinking { text: t, signature: None, encrypted_content: None })),
        2 => (text(), text()).prop_map(|(name, arg)| EventBody::ToolCall(ToolCall { id: "c".into(), name, arguments: serde_json::json!({ "q": arg }) })),
        2 => (text(), text(), any::<bool>()).prop_map(|(name, content, is_error)| EventBody::ToolResult(ToolResult { tool_call_id: "c".into(), name, content, is_error, facts: None })),
        1 => text().prop_map(|t| EventBody::StatusChanged(StatusChanged { title: Some(t), description: None, source: TitleSource::Agent })),
        1 => text().prop_map(|t| EventBody::PlanUpdated(PlanUpdated { plan: Some(Plan { steps: vec![PlanStep { text: t, status: StepStatus::Pending }], owner_run_id: None }) })),
        1 => (text(), text()).prop_map(|(tool, detail)| EventBody::PermissionDenied(PermissionDenied { tool_call_id: "c".into(), tool, reason: DenialReason::User, detail })),
        1 => text().prop_map(|t| EventBody::Unknown { kind: t.clone(), payload: serde_json::json!([t]) }),
    ]
}

fn thread(bodies: Vec<EventBody>) -> Thread {
    bodies.into_iter().fold(Thread::new(), Thread::push)
}

/// A well-formed case: the initiating event is a user message and every
/// citation lies inside the thread.
fn valid_case() -> impl Strategy<Value = Case> {
    (
        prop::collection::vec(body(), 1..40),
        any::<Index>(),
        prop::collection::vec((any::<Index>(), any::<Index>(), any::<bool>()), 0..6),
        0u64..2500,
        text(),
    )
        .prop_map(|(mut bodies, initiating, cites, budget, title)| {
            let at = initiating.index(bodies.len());
            bodies[at] = EventBody::Message(Message::user("continue"));
            let n = bodies.len();
            let sources = cites
                .into_iter()
                .map(|(a, b, other)| {
                    let (a, b) = (a.index(n) as u64 + 1, b.index(n) as u64 + 1);
                    let session_id = if other { OTHER } else { PREDECESSOR };
                    Source::SessionEvents { session_id, from_seq: Seq(a.min(b)), to_seq: Seq(a.max(b)) }
                })
                .collect();
            let mut case = Case::new(thread(bodies)).sources(sources).budget(budget);
            case.initiating = Some(at as u64 + 1);
            case.title = title;
            case
        })
}

/// Anything at all, well-formed or not.
fn any_case() -> impl Strategy<Value = Case> {
    (
        prop::collection::vec(body(), 0..20),
        0u64..25,
        prop::collection::vec((0u64..25, 0u64..25), 0..4),
        any::<u64>(),
        0u32..3,
    )
        .prop_map(|(bodies, initiating, cites, budget, depth)| {
            let sources = cites
                .into_iter()
                .map(|(a, b)| Source::SessionEvents { session_id: PREDECESSOR, from_seq: Seq(a), to_seq: Seq(b) })
                .collect();
            let mut case = Case::new(thread(bodies)).sources(sources).budget(budget);
            case.initiating = Some(initiating);
            case.depth = depth;
            case
        })
}

fn cbor_round_trip(manifest: &SessionContinuationManifest) -> SessionContinuationManifest {
    let mut bytes = Vec::new();
    ciborium::into_writer(manifest, &mut bytes).unwrap();
    ciborium::from_reader(bytes.as_slice()).unwrap()
}

proptest! {
    #[test]
    fn well_formed_cases_keep_every_invariant(case in valid_case()) {
        let projection = case.compile().unwrap();
        assert_invariants(&case, &projection);
        prop_assert_eq!(&case.compile().unwrap(), &projection, "compiling twice must give the same output");
        prop_assert_eq!(&cbor_round_trip(&projection.manifest), &projection.manifest);
    }

    #[test]
    fn no_input_panics(case in any_case()) {
        if let Ok(projection) = case.compile() {
            assert_invariants(&case, &projection);
        }
    }

    #[test]
    fn escaping_is_reversible_and_leaves_no_tag(s in prop_oneof![text(), any::<String>()]) {
        let escaped = escape_action_framing(&s);
        prop_assert_eq!(unescape_action_framing(&escaped), s.as_str());
        let bytes = escaped.as_bytes();
        for (i, _) in escaped.match_indices('<') {
            let next = bytes.get(i + 1).copied().unwrap_or(b' ');
            prop_assert!(!next.is_ascii_alphabetic() && next != b'/', "tag left in {:?}", escaped);
        }
    }

    #[test]
    fn every_event_starts_exactly_one_line(bodies in prop::collection::vec(body(), 0..20)) {
        let thread = thread(bodies);
        let text = transcript_lines(&thread.events);
        let starts = text.lines().filter(|l| l.starts_with('[')).count();
        prop_assert_eq!(starts, thread.events.len());
        prop_assert!(text.lines().all(|l| l.starts_with('[') || l.starts_with("  ")));
        for event in &thread.events {
            let line = transcript_event_line(event);
            let header = format!("[{}] ", event.seq);
            prop_assert!(line.starts_with(&header));
        }
    }
}

//! Tests of `check`, beside it so the module itself stays short.

use serde_json::json;

use super::*;

const A: &str = "FQ-aaaaaaaaaaaa";
const B: &str = "FQ-bbbbbbbbbbbb";

fn person(seq: u64, text: &str) -> StoredEvent {
    StoredEvent { seq, id: format!("e{seq}"), kind: Kind::Person { text: text.into(), copy_of: None } }
}
fn answer(seq: u64, text: &str) -> StoredEvent {
    StoredEvent { seq, id: format!("e{seq}"), kind: Kind::Answer { text: text.into() } }
}
fn call(seq: u64, id: &str) -> StoredEvent {
    StoredEvent { seq, id: format!("e{seq}"), kind: Kind::Call { id: id.into(), name: "bash".into() } }
}
fn result(seq: u64, id: &str) -> StoredEvent {
    StoredEvent { seq, id: format!("e{seq}"), kind: Kind::Result { call_id: id.into() } }
}
fn session(id: &str, events: Vec<StoredEvent>) -> StoredSession {
    StoredSession { id: id.into(), predecessor: None, events }
}
fn api(token: &str, wait: bool, status: u16, body: Value) -> Sent {
    Sent {
        token: token.into(),
        session: "s1".into(),
        told: Told::Api { wait, reply: Reply::Answered { status, body: body.to_string() } },
        probe: false,
    }
}
fn job(id: &str, token: &str, place: JobPlace, outcome: Option<Value>) -> StoredJob {
    StoredJob {
        id: id.into(),
        session: "s1".into(),
        place,
        text: format!("{token} do:plain"),
        posted_event: None,
        outcome,
    }
}

/// The invariants `stored` and `sent` break, once each, in order.
#[track_caller]
fn check_broken(stored: Stored, sent: &[Sent], expect: &[Invariant]) {
    let found = check(&stored, sent);
    let mut broken: Vec<Invariant> = found.iter().map(|v| v.invariant).collect();
    broken.dedup();
    assert_eq!(broken, expect, "{found:#?}");
}

fn good_session() -> StoredSession {
    session(
        "s1",
        vec![
            person(1, &format!("{A} do:bash")),
            call(2, "c1"),
            result(3, "c1"),
            answer(4, &format!("ack {A}")),
            person(5, &format!("{B} do:plain")),
            answer(6, &format!("ack {B}")),
        ],
    )
}

#[test]
fn a_clean_history_breaks_nothing() {
    let stored = Stored { sessions: vec![good_session()], jobs: vec![] };
    let sent = [
        api(
            A,
            true,
            200,
            json!({"sessionId": "s1", "seq": 1, "eventId": "e1", "status": "succeeded", "result": format!("ack {A}")}),
        ),
        api(B, false, 202, json!({"sessionId": "s1", "seq": 5, "eventId": "e5"})),
    ];
    check_broken(stored, &sent, &[]);
}

#[test]
fn gaps_doubles_and_unpaired_calls() {
    let mut s = good_session();
    s.events.remove(2); // c1's result
    s.events.push(person(7, &format!("{B} again")));
    s.events.push(result(9, "ghost"));
    check_broken(
        Stored { sessions: vec![s], jobs: vec![] },
        &[],
        &[Invariant::Gapless, Invariant::PostedOnce, Invariant::CallsPaired],
    );
}

#[test]
fn an_accepted_message_that_is_missing_or_unanswered() {
    let s = session("s1", vec![person(1, &format!("{A} do:plain"))]);
    let sent = [
        api(A, false, 202, json!({"sessionId": "s1", "seq": 1, "eventId": "e1"})),
        api(B, false, 202, json!({"sessionId": "s1", "seq": 2, "eventId": "e2"})),
    ];
    check_broken(Stored { sessions: vec![s], jobs: vec![] }, &sent, &[Invariant::AcceptedStored, Invariant::Answered]);
}

#[test]
fn a_job_a_client_was_told_about_must_be_its_job() {
    let stored = Stored {
        sessions: vec![good_session()],
        jobs: vec![job("j1", B, JobPlace::Done, Some(json!({"status": "succeeded", "result": format!("ack {B}")})))],
    };
    let told = |job: &str| api(B, false, 202, json!({"sessionId": "s1", "seq": 5, "eventId": "e5", "jobId": job}));
    check_broken(stored.clone(), &[told("j1")], &[]);
    check_broken(stored, &[told("j2")], &[Invariant::ToldMatches]);
}

#[test]
fn a_message_answered_twice_or_answered_before_it_was_asked() {
    let mut s = good_session();
    s.events.push(answer(7, &format!("ack {A} again")));
    check_broken(Stored { sessions: vec![s], jobs: vec![] }, &[], &[Invariant::AnsweredOnce]);
    let early = session("s1", vec![answer(1, &format!("ack {A}")), person(2, A)]);
    check_broken(Stored { sessions: vec![early], jobs: vec![] }, &[], &[Invariant::AnsweredOnce]);
}

#[test]
fn a_client_told_something_else_than_the_store_holds() {
    let stored = Stored { sessions: vec![good_session()], jobs: vec![] };
    // Told seq 5 and B's answer for A: a newer message made an older one look answered.
    let sent = [api(
        A,
        true,
        200,
        json!({"sessionId": "s1", "seq": 5, "eventId": "e1", "status": "succeeded", "result": format!("ack {B}")}),
    )];
    check_broken(stored, &sent, &[Invariant::ToldMatches]);
}

#[test]
fn jobs_stuck_failed_silently_or_succeeded_without_their_answer() {
    let stored = Stored {
        sessions: vec![good_session()],
        jobs: vec![
            job("j1", A, JobPlace::Running, None),
            job("j2", B, JobPlace::Done, Some(json!({"status": "failed"}))),
        ],
    };
    check_broken(stored, &[], &[Invariant::NoStuckJob, Invariant::RunsSurvive, Invariant::FailuresVisible]);
    let lost = Stored {
        sessions: vec![session("s1", vec![person(1, A)])],
        jobs: vec![job("j1", A, JobPlace::Done, Some(json!({"status": "succeeded", "result": null})))],
    };
    check_broken(lost, &[], &[Invariant::Answered, Invariant::ToldMatches]);
}

#[test]
fn a_continued_message_is_answered_in_its_successor() {
    let first = session("s1", vec![person(1, &format!("{A} do:continue")), call(2, "c1"), result(3, "c1")]);
    let successor = StoredSession {
        id: "s2".into(),
        predecessor: Some("s1".into()),
        events: vec![
            StoredEvent { seq: 1, id: "p".into(), kind: Kind::Other },
            StoredEvent { seq: 2, id: "k".into(), kind: Kind::Person { text: A.into(), copy_of: Some("e1".into()) } },
            answer(3, &format!("ack {A}")),
        ],
    };
    let cli = Sent {
        token: A.into(),
        session: "s1".into(),
        told: Told::Cli {
            exit: Some(0),
            stdout: json!({"session_id": "s1", "status": "succeeded", "result": format!("ack {A}")}).to_string(),
            killed: false,
        },
        probe: false,
    };
    check_broken(Stored { sessions: vec![first, successor], jobs: vec![] }, &[cli], &[]);
}

#[test]
fn a_successor_a_client_was_told_about_must_exist() {
    let first = session("s1", vec![person(1, A), answer(2, &format!("ack {A}"))]);
    let cli = Sent {
            token: A.into(),
            session: "s1".into(),
            told: Told::Cli {
                exit: Some(1),
                stdout: json!({"session_id": "s1", "status": "failed", "error": "no session `s9`", "continued_to_session_id": "s9"}).to_string(),
                killed: false,
            },
            probe: false,
        };
    check_broken(
        Stored { sessions: vec![first], jobs: vec![] },
        &[cli],
        &[Invariant::RunsSurvive, Invariant::ToldMatches],
    );
}

#[test]
fn failures_and_killed_clients() {
    let s = session("s1", vec![person(1, A)]);
    let killed = Sent {
        token: A.into(),
        session: "s1".into(),
        told: Told::Cli { exit: None, stdout: String::new(), killed: true },
        probe: false,
    };
    check_broken(Stored { sessions: vec![s.clone()], jobs: vec![] }, &[killed], &[]);
    let failed = Sent {
        token: A.into(),
        session: "s1".into(),
        told: Told::Cli {
            exit: Some(1),
            stdout: json!({"status": "failed", "error": "database is gone"}).to_string(),
            killed: false,
        },
        probe: false,
    };
    let found = check(&Stored { sessions: vec![s], jobs: vec![] }, &[failed]);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].invariant, Invariant::RunsSurvive);
    assert!(found[0].detail.contains("database is gone"), "{}", found[0].detail);
}

#[test]
fn a_probe_that_fails_means_the_session_is_not_usable() {
    let probe = Sent {
        token: B.into(),
        session: "s1".into(),
        told: Told::Api { wait: true, reply: Reply::NoAnswer("timed out".into()) },
        probe: true,
    };
    check_broken(Stored { sessions: vec![session("s1", vec![])], jobs: vec![] }, &[probe], &[Invariant::UsableAfter]);
}

#[test]
fn seqs_are_listed_compactly() {
    assert_eq!(compress(&[1, 2, 3, 5, 7, 8]), "1-3, 5, 7-8");
    assert_eq!(compress(&[]), "");
}

//! A run whose process was killed never sends its `run_finished`: the
//! store says it ended (`interrupted`) once another run takes its session
//! over, and every server tells its WebSocket clients that watch the
//! session, so nothing shows the dead run running. On SQLite (the server's
//! own commits) and, with `SERI_TEST_POSTGRES_URL`, on PostgreSQL (every
//! server's, through `NOTIFY`).

use std::time::Duration;

use serde_json::{Value, json};
use seri_core::{AgentId, Lane, RunKindName, RunStatus, SessionId};
use seri_server::ServerConfig;
use seri_store::{LeaseOwner, LeaseRequest, RunRecord, Store};

use crate::support::{Server, fresh_postgres_url, text};

/// A process id that no process has now: a child that ran and was reaped.
fn dead_pid() -> u32 {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

/// What a server killed inside a run leaves in the store: the session's
/// lease held by a process of this host that is gone, and its run
/// recorded `running`.
fn leave_a_dead_run(store: &Store, session: SessionId) -> seri_core::RunId {
    let run = store.new_run_id();
    // A start time no process of that id will have again: gone, even if the id is reused.
    let dead = LeaseOwner { pid: dead_pid(), started: 1, ..LeaseOwner::this_process("killed") };
    let record = RunRecord {
        id: run,
        session_id: session,
        kind: RunKindName::Interactive,
        lane: Lane::Interactive,
        parent_run_id: None,
        status: RunStatus::Running,
        result: None,
        started_at: store.now(),
        finished_at: None,
    };
    store
        .agent(&AgentId::local())
        .write(|tx| {
            let request = LeaseRequest {
                session_id: session,
                run_id: Some(run),
                owner: &dead,
                ticket: None,
                ttl: Duration::from_secs(30),
            };
            tx.try_acquire_lease(&request)?;
            tx.start_run(&record)
        })
        .unwrap();
    run
}

#[tokio::test]
async fn a_client_is_told_that_a_run_whose_process_was_killed_ended_once_another_takes_its_session() {
    told_of_the_dead_run(None).await;
    if let Some(url) = fresh_postgres_url() {
        told_of_the_dead_run(Some(&url)).await;
    }
}

async fn told_of_the_dead_run(url: Option<&str>) {
    let server = Server::on(json!([text("Answered here.")]), ServerConfig::default(), url).await;
    let session = server.session().await;
    let id: SessionId = session.parse().unwrap();
    let dead = leave_a_dead_run(&server.store, id).to_string();
    let mut ws = server.ws().await;
    ws.subscribe(json!({ "type": "subscribe", "sessionId": session })).await;

    // The next message's run takes the session from the dead process.
    let answer = server.say(&session, "Are you there?").await;
    assert_eq!((answer["status"].as_str(), answer["result"].as_str()), (Some("succeeded"), Some("Answered here.")));
    let answered = answer["runId"].as_str().unwrap().to_owned();
    let ended =
        |f: &Value, run: &str| f["type"] == "run-event" && f["runId"] == run && f["event"]["type"] == "run_finished";
    let mut frames = Vec::new();
    while !(frames.iter().any(|f| ended(f, &dead)) && frames.iter().any(|f| ended(f, &answered))) {
        let frame = ws.next().await.unwrap_or_else(|| panic!("the socket closed; heard {frames:#?}"));
        frames.push(frame);
    }
    let told: Vec<&Value> = frames.iter().filter(|f| ended(f, &dead)).collect();
    assert_eq!(told.len(), 1, "told once: {frames:#?}");
    let event = &told[0]["event"];
    assert_eq!(
        (&event["status"], &event["run_id"], &event["session_id"], &event["turns"], &event["usage"]),
        (&json!("interrupted"), &json!(dead), &json!(session), &Value::Null, &Value::Null),
        "{event}"
    );
    assert!(event["error"].as_str().is_some_and(|e| e.starts_with("interrupted")), "{event}");
    // What the client was told is what the store holds.
    let run = server.store.agent(&AgentId::local()).read(|r| r.run(dead.parse().unwrap())).unwrap().unwrap();
    assert_eq!(run.status, RunStatus::Interrupted);
    server.stop().await;
}

/// What servers that stopped while answering a job leave: the job queued
/// and its message posted, taken over by `MAX_JOB_ATTEMPTS` servers that
/// are gone, each claim lapsed; with `answered`, the message's answer in
/// the session too (the last of them stopped after answering, before it
/// recorded the job done; or another client answered the message).
fn leave_a_job_taken_over_too_often(store: &Store, answered: bool) -> (SessionId, String) {
    use seri_core::{EventBody, Message, Role};
    let agent = store.agent(&AgentId::local());
    let seed = agent.new_seed("/");
    agent.create_session(&seed).unwrap();
    let session = seed.id;
    let mut message = Message::user("Still there?");
    let request = json!({ "message": message, "lane": "interactive" });
    fn lapse(owner: &str) -> seri_store::JobClaim<'_> {
        seri_store::JobClaim { owner, ttl: Duration::from_millis(1) }
    }
    let job = store.enqueue_job(&AgentId::local(), session, &request, Some(lapse("gone-0"))).unwrap();
    message.meta_mut().queued_as = Some(job.id.clone());
    let posted = agent.append(session, [EventBody::Message(message)]).unwrap()[0].id;
    store.record_job_posted(&job.id, "gone-0", posted, None).unwrap();
    if answered {
        let answer = Message { role: Role::Assistant, ..Message::user("Answered before the crash.") };
        agent.append(session, [EventBody::Message(answer)]).unwrap();
    }
    for n in 1..seri_store::MAX_JOB_ATTEMPTS {
        std::thread::sleep(Duration::from_millis(5));
        let owner = format!("gone-{n}");
        let taken = store.claim_next_job(lapse(&owner)).unwrap().expect("taken over");
        assert_eq!(taken.attempts, n);
    }
    std::thread::sleep(Duration::from_millis(5));
    (session, job.id)
}

async fn job_outcome(server: &Server, job: &str) -> Value {
    for _ in 0..600 {
        // As its column keeps it: the stored words are what is checked.
        if let Some(done) = server.store.job(job).unwrap().and_then(|j| j.outcome) {
            return serde_json::to_value(done).unwrap();
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("job {job} never ended");
}

/// A message answered while the servers answering its job kept stopping
/// (found by fault schedule 0x760135928bbe12f9): the job taken over one
/// time too many takes that answer as its outcome, instead of being given
/// up as if nobody answered; and one whose message nobody answered is
/// given up without asking the model again.
#[tokio::test]
async fn a_job_taken_over_too_often_takes_the_answer_it_finds_and_asks_no_model() {
    let mut urls = vec![None];
    urls.extend(fresh_postgres_url().map(Some));
    for url in &urls {
        for answered in [true, false] {
            let mut left = None;
            let server = Server::prepared(
                json!([text("The model was asked.")]),
                ServerConfig::default(),
                url.as_deref(),
                |store| {
                    left = Some(leave_a_job_taken_over_too_often(store, answered));
                },
            )
            .await;
            let (session, job) = left.unwrap();
            let outcome = job_outcome(&server, &job).await;
            if answered {
                assert_eq!(
                    (outcome["status"].as_str(), outcome["result"].as_str()),
                    (Some("succeeded"), Some("Answered before the crash.")),
                    "{outcome}"
                );
            } else {
                assert_eq!(outcome["status"].as_str(), Some("failed"), "{outcome}");
                assert_eq!(
                    outcome["error"].as_str(),
                    Some(seri_store::given_up(seri_store::MAX_JOB_ATTEMPTS).as_str())
                );
            }
            let asked =
                server.store.agent(&AgentId::local()).events(session, seri_core::SeqRange::ALL).unwrap().iter().any(
                    |e| matches!(&e.body, seri_core::EventBody::Message(m) if m.content == "The model was asked."),
                );
            assert!(!asked, "a last look asks no model");
            server.stop().await;
        }
    }
}

/// Fault schedule 0x2525c71ba2d8d16b: a server lost its claim on a job to
/// another server (its own lapsed in a store outage), and that server was
/// killed in turn. The job is then this server's to run again, claimed
/// back by its poll; it ran nothing, taking the job for one still in flight
/// here, and every later message of the session waited behind it for as
/// long as the server lived.
#[tokio::test]
async fn a_job_lost_to_a_server_that_stopped_in_turn_is_run_by_the_server_that_claims_it_back() {
    claimed_back(None).await;
    if let Some(url) = fresh_postgres_url() {
        claimed_back(Some(&url)).await;
    }
}

async fn claimed_back(url: Option<&str>) {
    use seri_store::JobClaim;
    const DAY: Duration = Duration::from_secs(24 * 3600);
    let clock = std::sync::Arc::new(seri_store::ManualClock::new(seri_core::Timestamp(1_800_000_000_000)));
    let config = ServerConfig {
        run_lease: Duration::from_millis(300),
        job_poll: Duration::from_millis(50),
        ..ServerConfig::default()
    };
    let server = Server::clocked(json!([text("Answered at last.")]), config, url, clock.clone()).await;
    let session = server.session().await;
    let id: SessionId = session.parse().unwrap();
    // A message accepted before, its job run by a server elsewhere: the
    // message posted here waits for it, claimed by this server.
    let request = json!({ "message": seri_core::Message::user("First."), "lane": "interactive" });
    let earlier =
        server.store.enqueue_job(&AgentId::local(), id, &request, Some(JobClaim { owner: "elsewhere 1 a", ttl: DAY }));
    let earlier = earlier.unwrap();
    let asked =
        tokio::spawn(server.post(&format!("/api/sessions/{session}/messages"), json!({ "text": "Second." })).send());
    let mut job = None;
    for _ in 0..600 {
        job = server.store.jobs().unwrap().into_iter().find(|j| j.id != earlier.id && j.claimed_by.is_some());
        if job.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let job = job.expect("the message's job is queued and claimed here");

    // Its claim lapses and a server elsewhere takes it over (a renewal or
    // this server's poll may come first: then again).
    let other = JobClaim { owner: "elsewhere 2 b", ttl: Duration::from_secs(3600) };
    loop {
        clock.advance(1_000);
        if let Some(taken) = server.store.claim_next_job(other).unwrap() {
            assert_eq!(taken.id, job.id);
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // This server finds the claim lost at a renewal (one every 100 ms).
    tokio::time::sleep(Duration::from_secs(1)).await;
    // The server elsewhere stops: its claim lapses, and this server's poll
    // claims the job back. The earlier job ends; the message's turn comes.
    clock.advance(2 * 3600 * 1000);
    let ended = seri_store::JobOutcome::failed("the earlier message failed");
    assert!(server.store.finish_job(&earlier.id, "elsewhere 1 a", &ended).unwrap());

    // From here the clock runs as time does: a claim nobody renews lapses
    // (one this server's poll took while its lost run was still letting
    // go), and is claimed again.
    let mut asked = asked;
    let mut ticks = 0;
    let answer = loop {
        tokio::select! {
            done = &mut asked => break done.unwrap().unwrap(),
            () = tokio::time::sleep(Duration::from_millis(100)) => {
                clock.advance(100);
            }
        }
        ticks += 1;
        assert!(ticks < 300, "job {} claimed back by its server never ran: {:?}", job.id, server.store.job(&job.id));
    };
    assert_eq!(answer.status(), 200);
    let answer: Value = answer.json().await.unwrap();
    assert_eq!((answer["status"].as_str(), answer["result"].as_str()), (Some("succeeded"), Some("Answered at last.")));
    let done = server.store.job(&job.id).unwrap().unwrap();
    assert_eq!(done.state, seri_store::JobState::Done, "{done:?}");
    assert_eq!(done.claimed_by, job.claimed_by, "answered by the server that claimed it back");
    server.stop().await;
}

//! The shared queue of runs: a job is claimed by one server at a time,
//! taken over once its claim expires (at once when its server was a
//! process of this host that is gone), given up after a few servers
//! stopped while answering it (never for waiting), handed back by a server
//! stopping cleanly, answered in the order its session's jobs were
//! accepted, and cancelled from anywhere. On PostgreSQL, servers claiming at once never
//! get the same job (`FOR UPDATE SKIP LOCKED`), and every committed change
//! reaches the listeners of every other store on the database.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use seri_core::{AgentId, Timestamp};
use seri_store::{
    ChangeKind, JOB_RETENTION, JobClaim, JobOutcome, JobRenewal, JobState, JobStatus, LAST_LOOKS, MAX_JOB_ATTEMPTS,
    Store, StoreOptions,
};

use crate::support::*;

const TTL: Duration = Duration::from_secs(30);

/// The outcome of a job whose run succeeded.
fn succeeded() -> JobOutcome {
    JobOutcome { status: JobStatus::Succeeded, error: None, ..JobOutcome::failed("") }
}

fn claim(owner: &str) -> JobClaim<'_> {
    JobClaim { owner, ttl: TTL }
}

#[test]
fn a_claimed_job_is_taken_over_only_once_its_claim_expires() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let session = fx.session(&fx.local(), "/w");
        let request = serde_json::json!({ "text": "hello" });
        let job = fx.store.enqueue_job(&AgentId::local(), session, &request, Some(claim("a"))).unwrap();
        assert_eq!((job.state, job.attempts, job.claimed_by.as_deref()), (JobState::Running, 0, Some("a")));
        assert_eq!(job.request, request);
        assert!(fx.store.claim_next_job(claim("b")).unwrap().is_none(), "a's claim holds");

        fx.clock.advance(TTL.as_millis() as i64 - 1);
        assert_eq!(fx.store.renew_job(&job.id, claim("a")).unwrap(), JobRenewal::Held { cancel_requested: false });
        fx.clock.advance(TTL.as_millis() as i64 + 1);
        let taken = fx.store.claim_next_job(claim("b")).unwrap().expect("the expired claim is taken over");
        // a had posted nothing: its claim lapsing cost the job no attempt.
        assert_eq!((taken.id.as_str(), taken.attempts, taken.claimed_by.as_deref()), (job.id.as_str(), 0, Some("b")));
        assert_eq!(fx.store.renew_job(&job.id, claim("a")).unwrap(), JobRenewal::Lost, "a learns it lost it");
        assert!(!fx.store.finish_job(&job.id, "a", &JobOutcome::failed("late")).unwrap());
        assert!(fx.store.finish_job(&job.id, "b", &succeeded()).unwrap());
        let done = fx.store.job(&job.id).unwrap().unwrap();
        assert_eq!((done.state, done.outcome), (JobState::Done, Some(succeeded())));
        fx.clock.advance(TTL.as_millis() as i64 * 2);
        assert!(fx.store.claim_next_job(claim("c")).unwrap().is_none(), "a done job is never claimed again");
    }
}

#[test]
fn a_job_that_stops_every_server_answering_it_is_given_up() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let session = fx.session(&fx.local(), "/w");
        let posted = fx.store.agent(&AgentId::local()).append(session, [user("hello")]).unwrap()[0].id;
        let job = fx.store.enqueue_job(&AgentId::local(), session, &serde_json::json!({}), Some(claim("s0"))).unwrap();
        fx.store.record_job_posted(&job.id, "s0", posted, None).unwrap();
        // Taken over up to MAX_JOB_ATTEMPTS times to be answered, then
        // LAST_LOOKS times for a last look at what is stored (the runloop
        // asks no model then).
        for n in 1..MAX_JOB_ATTEMPTS + LAST_LOOKS {
            fx.clock.advance(TTL.as_millis() as i64 + 1);
            let owner = format!("s{n}");
            let taken = fx.store.claim_next_job(claim(&owner)).unwrap().expect("taken over");
            assert_eq!(taken.attempts, n, "each server that stopped while answering counts");
        }
        fx.clock.advance(TTL.as_millis() as i64 + 1);
        assert!(fx.store.claim_next_job(claim("last")).unwrap().is_none());
        let given_up = fx.store.job(&job.id).unwrap().unwrap();
        assert_eq!(given_up.state, JobState::Done);
        let error = given_up.outcome.unwrap().error.unwrap();
        assert_eq!(error, seri_store::given_up(MAX_JOB_ATTEMPTS + LAST_LOOKS));
        assert!(error.starts_with("given up after 7 attempts: every server that answered"), "{error}");
    }
}

#[test]
fn a_server_taking_back_its_own_lapsed_claim_costs_no_attempt() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let session = fx.session(&fx.local(), "/w");
        let posted = fx.store.agent(&AgentId::local()).append(session, [user("hello")]).unwrap()[0].id;
        let job = fx.store.enqueue_job(&AgentId::local(), session, &serde_json::json!({}), Some(claim("a"))).unwrap();
        fx.store.record_job_posted(&job.id, "a", posted, None).unwrap();
        // a's renewals came late (a slow store), it never stopped: claiming
        // its own job again is no takeover.
        for _ in 0..MAX_JOB_ATTEMPTS + 1 {
            fx.clock.advance(TTL.as_millis() as i64 + 1);
            let again = fx.store.claim_next_job(claim("a")).unwrap().expect("a takes it back");
            assert_eq!((again.id.as_str(), again.attempts), (job.id.as_str(), 0));
        }
        // Another server taking it over is one.
        fx.clock.advance(TTL.as_millis() as i64 + 1);
        assert_eq!(fx.store.claim_next_job(claim("b")).unwrap().expect("taken over").attempts, 1);
    }
}

#[test]
fn a_jobs_message_is_found_reading_only_what_came_after_the_job() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let local = fx.local();
        let session = fx.session(&local, "/w");
        let history: Vec<_> = (0..200).map(|n| user(&format!("old {n}"))).collect();
        local.append(session, history).unwrap();
        fx.clock.advance(60_000 * 60);
        let job = fx.store.enqueue_job(&AgentId::local(), session, &serde_json::json!({}), Some(claim("a"))).unwrap();
        let meta = seri_core::MessageMeta { queued_as: Some(job.id.clone()), ..seri_core::MessageMeta::EMPTY };
        let posted = seri_core::Message { meta: Some(Box::new(meta)), ..seri_core::Message::user("queued") };
        let posted = local.append(session, [seri_core::EventBody::Message(posted)]).unwrap()[0].id;
        local.append(session, [assistant("answer"), user("later")]).unwrap();

        let before = fx.store.events_read();
        let found = local.read(|r| r.message_queued_as(session, &job.id, job.enqueued_at)).unwrap();
        assert_eq!(found.map(|e| e.id), Some(posted));
        assert_eq!(fx.store.events_read() - before, 3, "the messages since the job, not the 200 before");
        let other = local.read(|r| r.message_queued_as(session, "no-such-job", job.enqueued_at)).unwrap();
        assert_eq!(other, None);
    }
}

#[test]
fn waiting_is_never_an_attempt() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let session = fx.session(&fx.local(), "/w");
        let job = fx.store.enqueue_job(&AgentId::local(), session, &serde_json::json!({}), Some(claim("s0"))).unwrap();
        // Ten servers claim it and stop before posting anything (it only
        // waited behind the session's older jobs), one hands it back.
        for n in 1..=10 {
            fx.clock.advance(TTL.as_millis() as i64 + 1);
            let owner = format!("s{n}");
            assert_eq!(fx.store.claim_next_job(claim(&owner)).unwrap().expect("taken over").attempts, 0);
        }
        assert!(fx.store.release_job(&job.id, "s10").unwrap());
        assert!(!fx.store.release_job(&job.id, "s10").unwrap(), "it is no longer s10's");
        let back = fx.store.job(&job.id).unwrap().unwrap();
        assert_eq!((back.state, back.claimed_by, back.attempts), (JobState::Queued, None, 0));
        let again = fx.store.claim_next_job(claim("s11")).unwrap().expect("a handed-back job is claimed at once");
        assert_eq!((again.id, again.attempts), (job.id, 0));
    }
}

#[test]
fn a_handed_back_job_keeps_its_message_and_costs_no_attempt() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let session = fx.session(&fx.local(), "/w");
        let posted = fx.store.agent(&AgentId::local()).append(session, [user("hello")]).unwrap()[0].id;
        let job = fx.store.enqueue_job(&AgentId::local(), session, &serde_json::json!({}), Some(claim("a"))).unwrap();
        fx.store.record_job_posted(&job.id, "a", posted, None).unwrap();
        assert!(fx.store.release_job(&job.id, "a").unwrap());
        let taken = fx.store.claim_next_job(claim("b")).unwrap().expect("handed back");
        assert_eq!((taken.posted_event_id, taken.attempts), (Some(posted), 0), "b answers a's message");
    }
}

#[test]
fn a_sessions_jobs_wait_for_the_ones_accepted_before_them() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let local = AgentId::local();
        let (one, two) = (fx.session(&fx.local(), "/w"), fx.session(&fx.local(), "/w"));
        let first = fx.store.enqueue_job(&local, one, &serde_json::json!({}), Some(claim("a"))).unwrap();
        let second = fx.store.enqueue_job(&local, one, &serde_json::json!({}), Some(claim("b"))).unwrap();
        let third = fx.store.enqueue_job(&local, one, &serde_json::json!({}), None).unwrap();
        let elsewhere = fx.store.enqueue_job(&local, two, &serde_json::json!({}), Some(claim("b"))).unwrap();
        let before = |job| fx.store.open_jobs_before(job).unwrap();
        assert_eq!((before(&first), before(&second), before(&third), before(&elsewhere)), (0, 1, 2, 0));
        fx.store.finish_job(&first.id, "a", &succeeded()).unwrap();
        assert_eq!((before(&second), before(&third)), (0, 1), "a done job holds nobody up");
        // Queueing counts the same jobs, in its own insert.
        let (fourth, ahead) = fx.store.enqueue_job_counted(&local, one, &serde_json::json!({}), None, None).unwrap();
        let seri_store::Enqueued::New(fourth) = fourth else { panic!("a job without a key is new") };
        assert_eq!((ahead, before(&fourth)), (Some(2), 2));
        let (_, ahead) = fx.store.enqueue_job_counted(&local, two, &serde_json::json!({}), None, None).unwrap();
        assert_eq!(ahead, Some(1), "the other session's own job only");
        let key = seri_store::JobKey { key: "k", digest: "d" };
        let (_, first_time) =
            fx.store.enqueue_job_counted(&local, two, &serde_json::json!({}), Some(key), None).unwrap();
        let (again, counted) =
            fx.store.enqueue_job_counted(&local, two, &serde_json::json!({}), Some(key), None).unwrap();
        assert!(matches!(again, seri_store::Enqueued::Existing(_)), "{again:?}");
        assert_eq!((first_time, counted), (Some(2), None), "a job queued before is not counted again");
        // A job waiting for its turn asks with one statement, which is a
        // snapshot by itself: no BEGIN, no COMMIT on PostgreSQL. (Each
        // asked once before, so it is prepared.)
        fx.store.job(&third.id).unwrap();
        let asked = fx.store.work();
        before(&third);
        fx.store.job(&third.id).unwrap();
        if let Some(asking) = fx.store.work().zip(asked).map(|(after, before)| after - before) {
            assert_eq!((asking.transactions, asking.statements, asking.round_trips), (2, 2, 2), "{asking:?}");
        }
    }
}

#[test]
fn a_job_of_a_gone_process_on_this_host_is_taken_over_at_once() {
    // A child that has exited and been waited for: its pid runs nothing now.
    let mut child = std::process::Command::new("true").spawn().unwrap();
    child.wait().unwrap();
    let host = rustix::system::uname().nodename().to_string_lossy().into_owned();
    let gone = format!("{host} {} instance", child.id());
    let alive = format!("{host} {} instance", std::process::id());
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let session = fx.session(&fx.local(), "/w");
        let local = AgentId::local();
        let live = fx.store.enqueue_job(&local, session, &serde_json::json!({}), Some(claim(&alive))).unwrap();
        let left = fx.store.enqueue_job(&local, session, &serde_json::json!({}), Some(claim(&gone))).unwrap();
        let taken = fx.store.claim_next_job(claim("b")).unwrap().expect("its server is gone: no need to wait");
        assert_eq!(taken.id, left.id, "only the gone server's job");
        assert!(fx.store.claim_next_job(claim("c")).unwrap().is_none(), "{} is alive", live.id);
    }
}

#[test]
fn every_job_is_listed_oldest_first() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let session = fx.session(&fx.local(), "/w");
        let local = AgentId::local();
        let ids: Vec<String> = (0..3)
            .map(|_| {
                fx.clock.advance(1);
                fx.store.enqueue_job(&local, session, &serde_json::json!({}), None).unwrap().id
            })
            .collect();
        let listed: Vec<String> = fx.store.jobs().unwrap().into_iter().map(|j| j.id).collect();
        assert_eq!(listed, ids);
    }
}

#[test]
fn a_cancel_reaches_the_claimant_and_ends_a_waiting_job_at_once() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let local = AgentId::local();
        let session = fx.session(&fx.local(), "/w");
        let running = fx.store.enqueue_job(&local, session, &serde_json::json!({}), Some(claim("a"))).unwrap();
        let waiting = fx.store.enqueue_job(&local, session, &serde_json::json!({}), None).unwrap();
        assert_eq!(fx.store.request_job_cancel(&AgentId("other".into()), session).unwrap(), 0, "not theirs");
        assert_eq!(fx.store.request_job_cancel(&local, session).unwrap(), 2);
        assert_eq!(fx.store.renew_job(&running.id, claim("a")).unwrap(), JobRenewal::Held { cancel_requested: true });
        assert_eq!(fx.store.job(&waiting.id).unwrap().unwrap().state, JobState::Done);
        assert!(fx.store.claim_next_job(claim("b")).unwrap().is_none());
    }
}

#[test]
fn done_jobs_age_out_and_open_ones_stay() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let session = fx.session(&fx.local(), "/w");
        let local = AgentId::local();
        let done = fx.store.enqueue_job(&local, session, &serde_json::json!({}), Some(claim("a"))).unwrap();
        fx.store.finish_job(&done.id, "a", &succeeded()).unwrap();
        let open = fx.store.enqueue_job(&local, session, &serde_json::json!({}), Some(claim("a"))).unwrap();
        assert_eq!(fx.store.prune_jobs(JOB_RETENTION).unwrap(), 0, "nothing is old yet");
        fx.clock.advance(JOB_RETENTION.as_millis() as i64 + 1);
        assert_eq!(fx.store.prune_jobs(JOB_RETENTION).unwrap(), 1);
        assert!(fx.store.job(&done.id).unwrap().is_none());
        assert_eq!(fx.store.job(&open.id).unwrap().unwrap().state, JobState::Running, "an open job stays");
    }
}

#[test]
fn another_agents_session_cannot_be_queued_for() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let session = fx.session(&fx.local(), "/w");
        let error = fx.store.enqueue_job(&AgentId("other".into()), session, &serde_json::json!({}), None).unwrap_err();
        assert_eq!(error.to_string(), format!("no session `{session}`"));
    }
}

fn open(url: &str) -> Store {
    Store::open_url(Some(url), Path::new("unused.db"), StoreOptions::default()).unwrap()
}

#[test]
fn servers_claiming_at_once_each_get_different_jobs() {
    let Some(base) = postgres_url() else { return };
    let url = fresh_schema_url(&base);
    let store = open(&url);
    let agent = store.agent(&AgentId::local());
    let seed = agent.new_seed("/w");
    agent.create_session(&seed).unwrap();
    let queued: BTreeSet<String> = (0..24)
        .map(|_| store.enqueue_job(&AgentId::local(), seed.id, &serde_json::json!({}), None).unwrap().id)
        .collect();
    let claimers: Vec<_> = (0..4)
        .map(|n| {
            let url = url.clone();
            std::thread::spawn(move || {
                let store = open(&url);
                let owner = format!("server-{n}");
                let mut mine = Vec::new();
                while let Some(job) = store.claim_next_job(JobClaim { owner: &owner, ttl: TTL }).unwrap() {
                    mine.push(job.id);
                }
                mine
            })
        })
        .collect();
    let claimed: Vec<String> = claimers.into_iter().flat_map(|c| c.join().unwrap()).collect();
    assert_eq!(claimed.len(), queued.len(), "each job was claimed exactly once");
    assert_eq!(claimed.into_iter().collect::<BTreeSet<_>>(), queued);
}

#[test]
fn every_store_on_the_database_hears_what_another_committed() {
    let Some(base) = postgres_url() else { return };
    let url = fresh_schema_url(&base);
    let (listener, writer) = (open(&url), open(&url));
    let mut heard = listener.subscribe_changes();
    // The listener connects on its own thread; give it a moment to LISTEN.
    std::thread::sleep(Duration::from_millis(300));
    let agent = writer.agent(&AgentId::local());
    // A transaction that rolls back announces nothing.
    let rolled_back = agent.write(|tx| -> Result<(), seri_store::StoreError> {
        let other = tx.new_seed("/never");
        tx.create_session(&other)?;
        Err(seri_store::StoreError::Lookup(seri_store::LookupError::UnknownJob { id: "on purpose".into() }))
    });
    assert!(rolled_back.is_err());
    let seed = agent.new_seed("/w");
    agent.create_session(&seed).unwrap();
    agent.append(seed.id, [user("one"), user("two")]).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let mut got = Vec::new();
    runtime.block_on(async {
        while got.len() < 2 {
            match tokio::time::timeout(Duration::from_secs(10), heard.recv()).await {
                Ok(Some(change)) => got.push(change),
                _ => break,
            }
        }
    });
    let kinds: Vec<ChangeKind> = got.iter().map(|c| c.change).collect();
    assert_eq!(kinds, [ChangeKind::Created, ChangeKind::Updated], "{got:?}");
    assert!(got.iter().all(|c| c.session == seed.id && c.agent == AgentId::local()), "{got:?}");
}

#[test]
fn a_store_hears_what_its_own_process_committed_on_either_backend() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let mut heard = fx.store.subscribe_changes();
        if fx.store.is_postgres() {
            // The listener connects on its own thread; give it a moment to LISTEN.
            std::thread::sleep(Duration::from_millis(300));
        }
        let agent = fx.store.agent(&AgentId::local());
        // A transaction that rolls back announces nothing.
        let rolled_back = agent.write(|tx| -> Result<(), seri_store::StoreError> {
            let other = tx.new_seed("/never");
            tx.create_session(&other)?;
            Err(seri_store::StoreError::Lookup(seri_store::LookupError::UnknownJob { id: "on purpose".into() }))
        });
        assert!(rolled_back.is_err());
        let seed = agent.new_seed("/w");
        agent.create_session(&seed).unwrap();
        // Two appends in one transaction are one change.
        agent.write(|tx| tx.append(seed.id, [user("one"), user("two")])).unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let got = runtime.block_on(async {
            let mut got = Vec::new();
            while got.len() < 2 {
                match tokio::time::timeout(Duration::from_secs(10), heard.recv()).await {
                    Ok(Some(change)) => got.push(change),
                    _ => break,
                }
            }
            // Nothing more: not the rolled-back session, not the append twice.
            let more = tokio::time::timeout(Duration::from_millis(200), heard.recv()).await;
            (got, more.ok().flatten())
        });
        let kinds: Vec<ChangeKind> = got.0.iter().map(|c| c.change).collect();
        assert_eq!(kinds, [ChangeKind::Created, ChangeKind::Updated], "{backend:?}: {got:?}");
        assert!(got.0.iter().all(|c| c.session == seed.id), "{backend:?}: {got:?}");
        assert_eq!(got.1, None, "{backend:?}");
    }
}

#[test]
fn a_job_ending_or_handed_back_is_announced_by_the_statement_that_does_it() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let local = AgentId::local();
        let session = fx.session(&fx.local(), "/w");
        let request = serde_json::json!({ "text": "hello" });
        let outcome = succeeded();
        // One job ended before anyone listens: its statements are prepared.
        let earlier = fx.store.enqueue_job(&local, session, &request, Some(claim("w"))).unwrap();
        assert!(fx.store.finish_job(&earlier.id, "w", &outcome).unwrap());
        let mut heard = fx.store.subscribe_changes();
        if fx.store.is_postgres() {
            // The listener connects on its own thread; give it a moment to LISTEN.
            std::thread::sleep(Duration::from_millis(300));
        }
        let job = fx.store.enqueue_job(&local, session, &request, Some(claim("a"))).unwrap();
        fx.store.renew_job(&job.id, claim("a")).unwrap();
        assert!(fx.store.release_job(&job.id, "a").unwrap());
        assert!(!fx.store.release_job(&job.id, "a").unwrap(), "no longer a's: nothing changes, nothing is told");
        fx.store.claim_next_job(claim("b")).unwrap().unwrap();
        let before = fx.store.work();
        assert!(fx.store.finish_job(&job.id, "b", &outcome).unwrap());
        let finishing = fx.store.work().zip(before).map(|(after, before)| after - before);
        assert!(!fx.store.finish_job(&job.id, "b", &outcome).unwrap());
        let waiting = fx.store.enqueue_job(&local, session, &request, None).unwrap();
        fx.store.request_job_cancel(&local, session).unwrap();

        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let (got, more) = runtime.block_on(async {
            let mut got = Vec::new();
            while got.len() < 3 {
                match tokio::time::timeout(Duration::from_secs(10), heard.recv()).await {
                    Ok(Some(change)) => got.push(change),
                    _ => break,
                }
            }
            let more = tokio::time::timeout(Duration::from_millis(200), heard.recv()).await;
            (got, more.ok().flatten())
        });
        let told: Vec<(ChangeKind, Option<&str>)> = got.iter().map(|c| (c.change, c.job.as_deref())).collect();
        assert_eq!(
            told,
            [
                (ChangeKind::JobQueued, Some(job.id.as_str())),
                (ChangeKind::JobDone, Some(job.id.as_str())),
                (ChangeKind::JobDone, Some(waiting.id.as_str())),
            ],
            "{backend:?}"
        );
        assert!(got.iter().all(|c| c.session == session && c.agent == local), "{backend:?}: {got:?}");
        assert_eq!(more, None, "{backend:?}: told once each");
        // On PostgreSQL the UPDATE notifies: a job's end costs what a
        // statement that announces nothing costs (a prune's DELETE).
        if let Some(finishing) = finishing {
            fx.store.prune_jobs(JOB_RETENTION).unwrap();
            let before = fx.store.work().unwrap();
            fx.store.prune_jobs(JOB_RETENTION).unwrap();
            let pruning = fx.store.work().unwrap() - before;
            let cost = |w: seri_store::StoreWork| (w.transactions, w.statements, w.round_trips);
            assert_eq!(cost(finishing), cost(pruning), "{finishing:?} {pruning:?}");
            // Each a statement that is its own transaction: no BEGIN, no COMMIT.
            assert_eq!(cost(finishing), (1, 1, 1), "{finishing:?}");
        }
    }
}

/// Two stores on one database whose clocks differ by five seconds (two
/// servers, one running behind): the one ahead, then the one behind, and
/// the database's URL on PostgreSQL.
fn stores_with_skewed_clocks(backend: Backend) -> (tempfile::TempDir, Option<String>, Store, Store) {
    let dir = tempfile::tempdir().unwrap();
    let url = match backend {
        Backend::Sqlite => None,
        Backend::Postgres => Some(fresh_schema_url(&postgres_url().expect("SERI_TEST_POSTGRES_URL"))),
    };
    let open = |at: i64| {
        let options = StoreOptions::with_clock(std::sync::Arc::new(seri_store::ManualClock::new(Timestamp(at))));
        seri_store::Profile::at(dir.path()).open_store_url(url.as_deref(), options).unwrap()
    };
    let (ahead, behind) = (open(T0.0 + 5_000), open(T0.0));
    (dir, url, ahead, behind)
}

#[test]
fn a_job_queued_after_another_is_stamped_after_it_whatever_its_servers_clock_says() {
    for backend in Backend::all() {
        let (_dir, _, ahead, behind) = stores_with_skewed_clocks(backend);
        let local = AgentId::local();
        let agent = ahead.agent(&local);
        let seed = agent.new_seed("/w");
        agent.create_session(&seed).unwrap();
        let (first, first_ahead) =
            ahead.enqueue_job_counted(&local, seed.id, &serde_json::json!({}), None, None).unwrap();
        let (second, second_ahead) =
            behind.enqueue_job_counted(&local, seed.id, &serde_json::json!({}), None, None).unwrap();
        let (seri_store::Enqueued::New(first), seri_store::Enqueued::New(second)) = (first, second) else {
            panic!("jobs without keys are new")
        };
        assert_eq!((first_ahead, second_ahead), (Some(0), Some(1)), "{backend:?}: the first is ahead of the second");
        assert!(second.enqueued_at > first.enqueued_at, "{backend:?}: {first:?} then {second:?}");
        assert_eq!(behind.open_jobs_before(&second).unwrap(), 1, "{backend:?}");
        let open: Vec<String> =
            ahead.open_jobs_of(&local, seed.id, second.enqueued_at).unwrap().into_iter().map(|j| j.id).collect();
        assert_eq!(open, [first.id, second.id], "{backend:?}: answered in the order accepted");
    }
}

#[test]
fn on_postgres_two_posts_to_one_session_at_once_queue_one_after_the_other() {
    let Some(_) = postgres_url() else { return };
    let (_dir, Some(url), ahead, behind) = stores_with_skewed_clocks(Backend::Postgres) else { unreachable!() };
    let local = AgentId::local();
    let agent = ahead.agent(&local);
    let seed = agent.new_seed("/w");
    agent.create_session(&seed).unwrap();
    // Another client holds the session's queue lock, as a post whose
    // insert is not committed yet would.
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let (client, connection) = runtime.block_on(tokio_postgres::connect(&url, tokio_postgres::NoTls)).unwrap();
    let driver = runtime.spawn(connection);
    let key = "hashtextextended('seri:' || current_schema() || ':jobs:' || $1, 0)";
    let session = seed.id.to_string();
    runtime.block_on(client.batch_execute("BEGIN")).unwrap();
    runtime.block_on(client.execute(&format!("SELECT pg_advisory_xact_lock({key})"), &[&session])).unwrap();
    let waiting = |n: i64| {
        let sql = format!(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted \
             AND ((classid::bigint << 32) | objid::bigint) = {key}"
        );
        for _ in 0..400 {
            let now: i64 = runtime.block_on(client.query_one(&sql, &[&session])).unwrap().get(0);
            if now >= n {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("a post to the session did not wait for its queue lock");
    };
    let post = |store: &Store| store.enqueue_job_counted(&local, seed.id, &serde_json::json!({}), None, None).unwrap();
    let (one, two) = std::thread::scope(|scope| {
        let one = scope.spawn(|| post(&ahead));
        waiting(1);
        let two = scope.spawn(|| post(&behind));
        waiting(2);
        runtime.block_on(client.batch_execute("COMMIT")).unwrap();
        (one.join().unwrap(), two.join().unwrap())
    });
    let mut jobs: Vec<_> = [one, two]
        .into_iter()
        .map(|(job, counted)| match job {
            seri_store::Enqueued::New(job) => (counted, job),
            other => panic!("a job without a key is new: {other:?}"),
        })
        .collect();
    jobs.sort_by_key(|(counted, _)| *counted);
    let counts: Vec<_> = jobs.iter().map(|(counted, _)| *counted).collect();
    assert_eq!(counts, [Some(0), Some(1)], "one counted the other ahead of it: {jobs:?}");
    assert!(jobs[1].1.enqueued_at > jobs[0].1.enqueued_at, "the one counted second is stamped after: {jobs:?}");
    drop(client);
    let _ = runtime.block_on(driver);
}

//! The shared queue of runs: a job is claimed by one server at a time,
//! taken over once its claim expires, given up after a few attempts, and
//! cancelled from anywhere. On PostgreSQL, servers claiming at once never
//! get the same job (`FOR UPDATE SKIP LOCKED`), and every committed change
//! reaches the listeners of every other store on the database.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use seri_core::AgentId;
use seri_store::{ChangeKind, JOB_RETENTION, JobClaim, JobRenewal, JobState, MAX_JOB_ATTEMPTS, Store, StoreOptions};

use crate::support::*;

const TTL: Duration = Duration::from_secs(30);

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
        assert_eq!((job.state, job.attempts, job.claimed_by.as_deref()), (JobState::Running, 1, Some("a")));
        assert_eq!(job.request, request);
        assert!(fx.store.claim_next_job(claim("b")).unwrap().is_none(), "a's claim holds");

        fx.clock.advance(TTL.as_millis() as i64 - 1);
        assert_eq!(fx.store.renew_job(&job.id, claim("a")).unwrap(), JobRenewal::Held { cancel_requested: false });
        fx.clock.advance(TTL.as_millis() as i64 + 1);
        let taken = fx.store.claim_next_job(claim("b")).unwrap().expect("the expired claim is taken over");
        assert_eq!((taken.id.as_str(), taken.attempts, taken.claimed_by.as_deref()), (job.id.as_str(), 2, Some("b")));
        assert_eq!(fx.store.renew_job(&job.id, claim("a")).unwrap(), JobRenewal::Lost, "a learns it lost it");
        assert!(!fx.store.finish_job(&job.id, "a", &serde_json::json!({"status": "late"})).unwrap());
        assert!(fx.store.finish_job(&job.id, "b", &serde_json::json!({"status": "succeeded"})).unwrap());
        let done = fx.store.job(&job.id).unwrap().unwrap();
        assert_eq!((done.state, done.outcome), (JobState::Done, Some(serde_json::json!({"status": "succeeded"}))));
        fx.clock.advance(TTL.as_millis() as i64 * 2);
        assert!(fx.store.claim_next_job(claim("c")).unwrap().is_none(), "a done job is never claimed again");
    }
}

#[test]
fn a_job_that_stops_every_server_is_given_up() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let session = fx.session(&fx.local(), "/w");
        let job = fx.store.enqueue_job(&AgentId::local(), session, &serde_json::json!({}), Some(claim("s0"))).unwrap();
        for n in 1..MAX_JOB_ATTEMPTS {
            fx.clock.advance(TTL.as_millis() as i64 + 1);
            let owner = format!("s{n}");
            assert!(fx.store.claim_next_job(claim(&owner)).unwrap().is_some());
        }
        fx.clock.advance(TTL.as_millis() as i64 + 1);
        assert!(fx.store.claim_next_job(claim("last")).unwrap().is_none());
        let given_up = fx.store.job(&job.id).unwrap().unwrap();
        assert_eq!(given_up.state, JobState::Done);
        let error = given_up.outcome.unwrap()["error"].as_str().unwrap().to_owned();
        assert!(error.starts_with("given up after 3 attempts"), "{error}");
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
        fx.store.finish_job(&done.id, "a", &serde_json::json!({"status": "succeeded"})).unwrap();
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
    let mut heard = listener.subscribe_changes().expect("PostgreSQL has a change feed");
    // The listener connects on its own thread; give it a moment to LISTEN.
    std::thread::sleep(Duration::from_millis(300));
    let agent = writer.agent(&AgentId::local());
    // A transaction that rolls back announces nothing.
    let rolled_back = agent.write(|tx| -> Result<(), seri_store::StoreError> {
        let other = tx.new_seed("/never");
        tx.create_session(&other)?;
        Err(seri_store::StoreError::UnknownJob { id: "on purpose".into() })
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
    assert!(Fixture::sqlite().store.subscribe_changes().is_none(), "SQLite has none");
}

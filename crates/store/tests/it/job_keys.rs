//! Idempotency keys of queued messages: a message queued again under the
//! key it was first queued with finds the first job, on both backends and
//! when the posts race; a different message under a used key is told
//! apart; keys are per agent and session.

use std::time::Duration;

use seri_core::AgentId;
use seri_store::{Enqueued, JobClaim, JobKey, JobState};

use crate::support::*;

fn claim(owner: &str) -> JobClaim<'_> {
    JobClaim { owner, ttl: Duration::from_secs(30) }
}

const KEY: JobKey<'static> = JobKey { key: "k-1", digest: "d-1" };

#[test]
fn a_key_used_again_finds_its_first_job_and_queues_nothing() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let local = AgentId::local();
        let (session, other) = (fx.session(&fx.local(), "/w"), fx.session(&fx.local(), "/w"));
        let request = serde_json::json!({ "text": "hello" });
        let Enqueued::New(first) = fx.store.enqueue_job_once(&local, session, &request, KEY, Some(claim("a"))).unwrap()
        else {
            panic!("{backend:?}: the first post queues a job");
        };
        assert_eq!(first.state, JobState::Running);
        let again = fx.store.enqueue_job_once(&local, session, &request, KEY, Some(claim("b"))).unwrap();
        // The same job, still a's: the second post claimed nothing.
        assert_eq!(again, Enqueued::Existing(first.clone()), "{backend:?}");
        let other_message = JobKey { key: KEY.key, digest: "d-2" };
        let reused = fx.store.enqueue_job_once(&local, session, &request, other_message, None).unwrap();
        assert_eq!(reused, Enqueued::KeyReused(first.clone()), "{backend:?}");
        assert_eq!(fx.store.job_by_key(&local, session, KEY).unwrap(), Some(Enqueued::Existing(first.clone())));
        assert_eq!(fx.store.jobs().unwrap().len(), 1, "{backend:?}: one job");

        // The key is the session's: another session, or no key, queue anew.
        assert!(matches!(fx.store.enqueue_job_once(&local, other, &request, KEY, None).unwrap(), Enqueued::New(_)));
        fx.store.enqueue_job(&local, session, &request, None).unwrap();
        fx.store.enqueue_job(&local, session, &request, None).unwrap();
        assert_eq!(fx.store.jobs().unwrap().len(), 4, "{backend:?}");
        let unknown = JobKey { key: "k-2", digest: "d-1" };
        assert_eq!(fx.store.job_by_key(&local, session, unknown).unwrap(), None);
    }
}

#[test]
fn posts_racing_with_one_key_queue_one_job() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let local = AgentId::local();
        let session = fx.session(&fx.local(), "/w");
        let request = serde_json::json!({ "text": "hello" });
        let results: Vec<Enqueued> = std::thread::scope(|scope| {
            let posts: Vec<_> = (0..8)
                .map(|n| {
                    let (store, local, request) = (&fx.store, &local, &request);
                    scope.spawn(move || {
                        let owner = format!("s{n}");
                        store.enqueue_job_once(local, session, request, KEY, Some(claim(&owner))).unwrap()
                    })
                })
                .collect();
            posts.into_iter().map(|p| p.join().unwrap()).collect()
        });
        let new: Vec<_> =
            results.iter().filter_map(|r| if let Enqueued::New(j) = r { Some(j) } else { None }).collect();
        assert_eq!(new.len(), 1, "{backend:?}: {results:?}");
        assert!(
            results.iter().all(|r| matches!(r, Enqueued::New(j) | Enqueued::Existing(j) if j.id == new[0].id)),
            "{backend:?}: {results:?}"
        );
        assert_eq!(fx.store.jobs().unwrap().len(), 1, "{backend:?}");
    }
}

//! Session leases and their queue: who may change a session now, who waits,
//! in what order, and what happens to the leases and runs of a process that
//! is gone. Plus the two things a shared profile needs besides: ids people
//! can type that never collide, and a first start that no other start can
//! take for another application's database.

use std::time::Duration;

use seri_core::{AgentId, RunId, SessionId};
use seri_store::{LeaseAttempt, LeaseOwner, LeaseRequest, RunRecord, SessionQuery, Store};

use crate::support::{Backend, Fixture, user};

const TTL: Duration = Duration::from_secs(30);

/// An owner on this host whose process has ended: a pid no process has.
fn gone_owner() -> LeaseOwner {
    LeaseOwner { pid: u32::MAX - 7, ..LeaseOwner::this_process("gone") }
}

/// An owner on another host: alive exactly while its lease has not expired.
fn remote_owner() -> LeaseOwner {
    LeaseOwner { host: "another-host.invalid".into(), ..LeaseOwner::this_process("remote") }
}

fn attempt(
    f: &Fixture,
    session: SessionId,
    owner: &LeaseOwner,
    run: Option<RunId>,
    ticket: Option<&str>,
) -> LeaseAttempt {
    f.local()
        .write(|tx| tx.try_acquire_lease(&LeaseRequest { session_id: session, run_id: run, owner, ticket, ttl: TTL }))
        .unwrap()
}

fn running_run(f: &Fixture, session: SessionId) -> RunId {
    let id = f.store.new_run_id();
    f.local()
        .start_run(&RunRecord {
            id,
            session_id: session,
            kind: seri_core::RunKindName::Interactive,
            lane: seri_core::Lane::Interactive,
            parent_run_id: None,
            status: seri_core::RunStatus::Running,
            result: None,
            started_at: f.store.now(),
            finished_at: None,
        })
        .unwrap();
    id
}

#[test]
fn a_live_holder_keeps_its_session_and_is_named_to_whoever_asks() {
    for backend in Backend::all() {
        let f = Fixture::on(backend);
        let session = f.session(&f.local(), "/w");
        let me = LeaseOwner::this_process("first");
        let run = running_run(&f, session);
        assert_eq!(attempt(&f, session, &me, Some(run), None), LeaseAttempt::Acquired { reaped: Vec::new() });
        let other = LeaseOwner::this_process("second");
        match attempt(&f, session, &other, None, None) {
            LeaseAttempt::Held(lease) => {
                assert_eq!(lease.run_id, Some(run));
                assert_eq!(lease.owner, me);
                let said = lease.to_string();
                let expected =
                    format!("a run in seri pid {} on host {} since 2026-11-30 06:00:00 UTC", me.pid, me.host);
                assert_eq!(said, expected);
            }
            other => panic!("expected the lease to be held, got {other:?}"),
        }
        // Time passing does not take a live local holder's session (a process
        // stopped with Ctrl-Z keeps it): only its process ending does.
        f.clock.advance(10 * TTL.as_millis() as i64);
        assert!(matches!(attempt(&f, session, &other, None, None), LeaseAttempt::Held(_)));
        assert_eq!(f.local().run(run).unwrap().unwrap().status, seri_core::RunStatus::Running);

        f.local().write(|tx| tx.release_lease(session, &me, Some(run))).unwrap();
        assert_eq!(attempt(&f, session, &other, None, None), LeaseAttempt::Acquired { reaped: Vec::new() });
    }
}

#[test]
fn a_holder_whose_process_is_gone_is_cleared_and_its_runs_interrupted() {
    for backend in Backend::all() {
        let f = Fixture::on(backend);
        let session = f.session(&f.local(), "/w");
        let run = running_run(&f, session);
        assert!(matches!(attempt(&f, session, &gone_owner(), Some(run), None), LeaseAttempt::Acquired { .. }));
        let me = LeaseOwner::this_process("me");
        match attempt(&f, session, &me, None, None) {
            LeaseAttempt::Acquired { reaped } => assert_eq!(reaped.len(), 1, "the gone holder's lease was cleared"),
            other => panic!("expected to take the lease over, got {other:?}"),
        }
        let record = f.local().run(run).unwrap().unwrap();
        assert_eq!(record.status, seri_core::RunStatus::Interrupted);
        assert_eq!(record.finished_at, Some(f.store.now()));
    }
}

#[test]
fn a_holder_on_another_host_holds_until_its_heartbeat_stops_for_the_ttl() {
    for backend in Backend::all() {
        let f = Fixture::on(backend);
        let session = f.session(&f.local(), "/w");
        let remote = remote_owner();
        assert!(matches!(attempt(&f, session, &remote, None, None), LeaseAttempt::Acquired { .. }));
        let me = LeaseOwner::this_process("me");
        f.clock.advance(TTL.as_millis() as i64 - 1);
        assert!(matches!(attempt(&f, session, &me, None, None), LeaseAttempt::Held(_)));
        assert!(f.local().write(|tx| tx.renew_lease(session, &remote, None, TTL)).unwrap(), "its heartbeat renews it");
        f.clock.advance(TTL.as_millis() as i64 - 1);
        assert!(matches!(attempt(&f, session, &me, None, None), LeaseAttempt::Held(_)));
        f.clock.advance(2);
        assert!(matches!(attempt(&f, session, &me, None, None), LeaseAttempt::Acquired { .. }));
        assert!(
            !f.local().write(|tx| tx.renew_lease(session, &remote, None, TTL)).unwrap(),
            "the lease is not its any more"
        );
    }
}

#[test]
fn waiters_are_served_interactive_first_then_in_order_and_the_gone_are_skipped() {
    for backend in Backend::all() {
        let f = Fixture::on(backend);
        let session = f.session(&f.local(), "/w");
        let holder = LeaseOwner::this_process("holder");
        assert!(matches!(attempt(&f, session, &holder, None, None), LeaseAttempt::Acquired { .. }));
        let join = |owner: &LeaseOwner, rank: u8| {
            f.clock.advance(1);
            f.local().write(|tx| tx.enqueue_lease_waiter(session, rank, owner, TTL)).unwrap()
        };
        let background = LeaseOwner::this_process("background");
        let gone = gone_owner();
        let first = LeaseOwner::this_process("first interactive");
        let second = LeaseOwner::this_process("second interactive");
        let b = join(&background, 1);
        let _g = join(&gone, 0);
        let i1 = join(&first, 0);
        let i2 = join(&second, 0);
        // While the holder holds, everyone waits.
        assert!(matches!(attempt(&f, session, &first, None, Some(&i1)), LeaseAttempt::Held(_)));
        f.local().write(|tx| tx.release_lease(session, &holder, None)).unwrap();
        // The gone waiter loses its place; the background one waits for both
        // interactive ones; the second interactive one for the first.
        assert_eq!(attempt(&f, session, &background, None, Some(&b)), LeaseAttempt::Queued { ahead: 2 });
        assert_eq!(attempt(&f, session, &second, None, Some(&i2)), LeaseAttempt::Queued { ahead: 1 });
        assert!(matches!(attempt(&f, session, &first, None, Some(&i1)), LeaseAttempt::Acquired { .. }));
        // Someone new without a place waits behind everyone who has one.
        f.local().write(|tx| tx.release_lease(session, &first, None)).unwrap();
        let newcomer = LeaseOwner::this_process("newcomer");
        assert_eq!(attempt(&f, session, &newcomer, None, None), LeaseAttempt::Queued { ahead: 2 });
        assert!(matches!(attempt(&f, session, &second, None, Some(&i2)), LeaseAttempt::Acquired { .. }));
    }
}

/// A caller's first try joins the queue only when it has to wait: one who
/// gets the lease at once leaves no place behind, and one who waits gets
/// the place it would have had joining first (after its lane's waiters,
/// before a later lane's).
#[test]
fn a_first_try_joins_the_queue_only_when_it_has_to_wait() {
    for backend in Backend::all() {
        let f = Fixture::on(backend);
        let session = f.session(&f.local(), "/w");
        let first_try = |owner: &LeaseOwner, rank: u8| {
            f.clock.advance(1);
            let request = LeaseRequest { session_id: session, run_id: None, owner, ticket: None, ttl: TTL };
            f.local().write(|tx| tx.acquire_or_join_lease(&request, rank)).unwrap()
        };
        let release = |owner: &LeaseOwner| f.local().write(|tx| tx.release_lease(session, owner, None)).unwrap();
        let holder = LeaseOwner::this_process("holder");
        assert_eq!(first_try(&holder, 0), (None, LeaseAttempt::Acquired { reaped: Vec::new() }));
        // Held: each waits, with a place.
        let background = LeaseOwner::this_process("background");
        let (b, held) = first_try(&background, 1);
        assert!(matches!(held, LeaseAttempt::Held(_)), "{held:?}");
        let interactive = LeaseOwner::this_process("interactive");
        let (i, held) = first_try(&interactive, 0);
        assert!(matches!(held, LeaseAttempt::Held(_)), "{held:?}");
        release(&holder);
        // Free: an interactive newcomer waits for the interactive waiter
        // only; a background one for all three.
        let newcomer = LeaseOwner::this_process("newcomer");
        let (n, queued) = first_try(&newcomer, 0);
        assert_eq!(queued, LeaseAttempt::Queued { ahead: 1 });
        let later = LeaseOwner::this_process("later background");
        let (l, queued) = first_try(&later, 1);
        assert_eq!(queued, LeaseAttempt::Queued { ahead: 3 });
        for (owner, ticket) in [(&interactive, &i), (&newcomer, &n)] {
            assert!(matches!(attempt(&f, session, owner, None, ticket.as_deref()), LeaseAttempt::Acquired { .. }));
            release(owner);
        }
        // Free, with background waiters only: an interactive newcomer comes
        // before them and takes the lease without a place.
        let quick = LeaseOwner::this_process("quick");
        assert_eq!(first_try(&quick, 0), (None, LeaseAttempt::Acquired { reaped: Vec::new() }));
        release(&quick);
        for (owner, ticket) in [(&background, &b), (&later, &l)] {
            assert!(matches!(attempt(&f, session, owner, None, ticket.as_deref()), LeaseAttempt::Acquired { .. }));
            release(owner);
        }
        // Nobody waits now: no place was left behind.
        let last = LeaseOwner::this_process("last");
        assert!(matches!(attempt(&f, session, &last, None, None), LeaseAttempt::Acquired { .. }));
    }
}

/// Found by fault schedule 0x4db1298533af47e7 (PostgreSQL): a server
/// whose place in a session's queue outlived a store outage (its leave
/// failed, or its join committed unseen) held up every later waiter of
/// the session for good, because its process still ran.
#[test]
fn a_place_its_live_waiter_stopped_renewing_holds_nobody_up_once_it_lapses() {
    for backend in Backend::all() {
        let f = Fixture::on(backend);
        let session = f.session(&f.local(), "/w");
        let left_behind = LeaseOwner::this_process("left behind");
        let _ghost = f.local().write(|tx| tx.enqueue_lease_waiter(session, 0, &left_behind, TTL)).unwrap();
        let next = LeaseOwner::this_process("next");
        f.clock.advance(1);
        let ticket = f.local().write(|tx| tx.enqueue_lease_waiter(session, 0, &next, TTL)).unwrap();
        // While its place lasts, the live waiter ahead is waited for.
        assert_eq!(attempt(&f, session, &next, None, Some(&ticket)), LeaseAttempt::Queued { ahead: 1 });
        // Not renewed for the whole of it: left behind.
        f.clock.advance(TTL.as_millis() as i64 + 1);
        assert!(matches!(attempt(&f, session, &next, None, Some(&ticket)), LeaseAttempt::Acquired { .. }));
    }
}

#[test]
fn sessions_made_in_one_millisecond_get_short_ids_that_tell_them_apart() {
    for backend in Backend::all() {
        let f = Fixture::on(backend);
        let local = f.local();
        // The clock does not move: the ids share their time part.
        let ids: Vec<SessionId> = (0..5)
            .map(|_| {
                let seed = local.new_seed("/w");
                local.create_session(&seed).unwrap();
                seed.id
            })
            .collect();
        let shorts: Vec<String> = ids.iter().map(|id| local.short_id(*id).unwrap()).collect();
        for (id, short) in ids.iter().zip(&shorts) {
            assert!(short.len() >= seri_store::SHORT_ID_MIN_LEN, "{short}");
            let (time, end) = short.split_once('.').unwrap();
            assert!(id.to_string().starts_with(time) && id.to_string().ends_with(end), "{short} names {id}");
            assert_eq!(local.resolve_session(short).unwrap(), *id, "the shown id resolves back to its session");
            // A unique prefix and the full id still work.
            assert_eq!(local.resolve_session(&id.to_string()).unwrap(), *id);
        }
        let unique_prefix = &ids[0].to_string()[..30];
        assert_eq!(local.resolve_session(unique_prefix).unwrap(), ids[0]);
        // A lone session shows the minimum.
        let g = Fixture::on(backend);
        let alone = g.session(&g.local(), "/w");
        assert_eq!(g.local().short_id(alone).unwrap().len(), seri_store::SHORT_ID_MIN_LEN);
    }
}

#[test]
fn a_printed_short_id_never_goes_stale_as_sessions_are_added() {
    for backend in Backend::all() {
        let f = Fixture::on(backend);
        let local = f.local();
        let first = f.session(&local, "/w");
        let printed = local.short_id(first).unwrap();
        // Sessions made in the same minute (and the same millisecond) after
        // the id was printed: an eight-digit prefix would now name several.
        for _ in 0..20 {
            f.session(&local, "/w");
        }
        f.clock.advance(1_000);
        for _ in 0..20 {
            f.session(&local, "/w");
        }
        assert_eq!(local.resolve_session(&printed).unwrap(), first, "{printed} still names its session");
        assert_eq!(local.short_id(first).unwrap(), printed, "and is still what is printed");
        let time = printed.split_once('.').unwrap().0;
        assert!(matches!(
            local.resolve_session(time),
            Err(seri_store::StoreError::Lookup(seri_store::LookupError::AmbiguousSessionPrefix { .. }))
        ));
        assert!(matches!(
            local.resolve_session(&format!("{time}.000000")),
            Err(seri_store::StoreError::Lookup(seri_store::LookupError::UnknownSessionPrefix { .. }))
        ));
    }
}

#[test]
fn the_most_recent_session_is_one_a_person_talked_in_never_a_child_session() {
    for backend in Backend::all() {
        let f = Fixture::on(backend);
        let local = f.local();
        let parent = f.session(&local, "/w");
        local.append(parent, [user("Split it")]).unwrap();
        let run = running_run(&f, parent);
        f.clock.advance(5);
        let mut seed = local.new_seed("/w");
        seed.parent_run_id = Some(run);
        local.create_session(&seed).unwrap();
        local.append(seed.id, [user("A child's task")]).unwrap();
        assert_eq!(local.most_recent_session(Some("/w")).unwrap().map(|s| s.id), Some(parent));
        assert_eq!(local.most_recent_session(None).unwrap().map(|s| s.id), Some(parent));
        let all = local.list_sessions(&SessionQuery::default()).unwrap();
        assert_eq!(all.first().map(|s| s.id), Some(seed.id), "lists still show child sessions");
    }
}

#[test]
fn concurrent_first_starts_on_a_new_profile_all_open_the_same_seri_database() {
    // Bounded: 150 rounds of 4 openers racing on a file that does not exist yet.
    for round in 0..150 {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("seri.db");
        let barrier = std::sync::Arc::new(std::sync::Barrier::new(4));
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let (path, barrier) = (path.clone(), barrier.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    Store::open(&path)
                        .map(|store| store.agent(&AgentId::local()).list_sessions(&SessionQuery::default()))
                })
            })
            .collect();
        for handle in handles {
            match handle.join().unwrap() {
                Ok(listed) => assert!(listed.unwrap().is_empty()),
                Err(e) => panic!("round {round}: a concurrent first start failed: {e}"),
            }
        }
    }
}

#[test]
fn short_ids_of_many_sessions_at_once_are_each_ones_short_id() {
    for backend in Backend::all() {
        let f = Fixture::on(backend);
        let local = f.local();
        // 40 stretches of time (an id's eight time digits span 65.5 s), two
        // sessions made in the same millisecond in each.
        let mut ids = Vec::new();
        for _ in 0..40 {
            ids.push(f.session(&local, "/w"));
            ids.push(f.session(&local, "/w"));
            f.clock.advance(70_000);
        }
        let one_by_one: Vec<String> = ids.iter().map(|id| local.short_id(*id).unwrap()).collect();
        // More stretches than are read apart, then a few.
        for some in [&ids[..], &ids[..6], &ids[10..11]] {
            let together = local.short_ids(some).unwrap();
            for id in some {
                let n = ids.iter().position(|i| i == id).unwrap();
                assert_eq!(together[id], one_by_one[n], "{backend:?}");
            }
        }
    }
}

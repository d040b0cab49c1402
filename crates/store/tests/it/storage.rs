//! Storage you can see and bound: `Store::usage` (du), `Store::prune`
//! with pins, lineages and forks, and `Store::check_consistency`, on every
//! backend.

use seri_core::{ForkVia, Seq, SeqRange, SessionId};
use seri_store::{PruneOptions, PrunePolicy, PruneReason, StoreErrorKind};

use crate::support::*;

const DAY: i64 = 86_400_000;

fn older_than(fx: &Fixture, days: u32) -> PruneOptions {
    PruneOptions { policy: PrunePolicy::of(Some(days), None, fx.store.now()), dry_run: false, keep: None }
}

fn dry(options: PruneOptions) -> PruneOptions {
    PruneOptions { dry_run: true, ..options }
}

fn exists(fx: &Fixture, id: SessionId) -> bool {
    match fx.local().info(id) {
        Ok(_) => true,
        Err(e) if e.kind() == StoreErrorKind::NotFound => false,
        Err(e) => panic!("{e}"),
    }
}

/// A session with a user message and an answer, in `cwd`.
fn talked(fx: &Fixture, cwd: &str, text: &str) -> SessionId {
    let local = fx.local();
    let id = fx.session(&local, cwd);
    local.append(id, [user(text), assistant("ok")]).unwrap();
    id
}

#[test]
fn a_lineage_goes_whole_and_a_predecessor_of_a_kept_successor_stays() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let local = fx.local();
        // An old chain of two, and an old chain whose successor is recent.
        let a1 = talked(&fx, "/w", "old work");
        let a2 = local.write(|tx| continue_session(tx, a1, "call_a", "Old", None)).unwrap().successor_session_id;
        let b1 = talked(&fx, "/w", "older work");
        let b2 = local.write(|tx| continue_session(tx, b1, "call_b", "Recent", None)).unwrap().successor_session_id;
        fx.clock.advance(40 * DAY);
        local.append(b2, [user("still going")]).unwrap();

        let options = older_than(&fx, 30);
        let planned = fx.store.prune(&dry(options)).unwrap();
        let done = fx.store.prune(&options).unwrap();
        let mut a = vec![a1, a2];
        a.sort();
        assert_eq!(done.sessions, a);
        assert_eq!(done.lineages.len(), 1);
        assert_eq!(done.lineages[0].reason, PruneReason::Age);
        assert!(done.bytes > 0);
        // The dry run said exactly this, and removed nothing then.
        assert_eq!(
            (planned.sessions, planned.bytes, planned.lineages),
            (done.sessions.clone(), done.bytes, done.lineages.clone())
        );
        assert!(planned.dry_run && !done.dry_run);
        assert!(planned.space.is_none() && done.space.is_some());

        assert!(!exists(&fx, a1) && !exists(&fx, a2));
        assert!(exists(&fx, b1) && exists(&fx, b2), "a predecessor of a kept successor stays");
        assert_eq!(texts(&local.events(b1, SeqRange::ALL).unwrap()), ["older work", "ok"]);
        assert!(local.continuation_into(b2).unwrap().is_some());
        // Nothing is left half: the store checks clean, and a second prune finds nothing.
        let check = fx.store.check_consistency().unwrap();
        assert!(check.is_clean(), "{:?}", check.problems);
        assert!(fx.store.prune(&options).unwrap().sessions.is_empty());
    }
}

#[test]
fn a_forks_shared_history_stays_while_the_fork_does() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let local = fx.local();
        let parent = talked(&fx, "/w", "shared start");
        local.append(parent, [user("parent goes on")]).unwrap();
        fx.clock.advance(1);
        let fork = local.write(|tx| tx.fork_session(parent, Some(Seq(2)), ForkVia::Cli)).unwrap().id;
        let old_parent = talked(&fx, "/v", "another start");
        fx.clock.advance(1);
        let old_fork = local.write(|tx| tx.fork_session(old_parent, None, ForkVia::Cli)).unwrap().id;
        fx.clock.advance(40 * DAY);
        local.append(fork, [user("the fork is alive")]).unwrap();

        let report = fx.store.prune(&older_than(&fx, 30)).unwrap();
        let mut gone = vec![old_parent, old_fork];
        gone.sort();
        assert_eq!(report.sessions, gone, "an old parent goes with its old fork");
        assert_eq!(report.kept_shared, 1);
        assert!(exists(&fx, parent), "history a kept fork shares stays");
        assert_eq!(texts(&local.events(fork, SeqRange::ALL).unwrap()), ["shared start", "ok", "the fork is alive"]);
        assert!(fx.store.check_consistency().unwrap().is_clean());
    }
}

#[test]
fn a_pinned_session_is_never_pruned_until_unpinned() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let local = fx.local();
        let pinned = talked(&fx, "/w", "keep me");
        let successor =
            local.write(|tx| continue_session(tx, pinned, "call_p", "Kept", None)).unwrap().successor_session_id;
        assert!(local.write(|tx| tx.pin_session(pinned)).unwrap());
        assert!(!local.write(|tx| tx.pin_session(pinned)).unwrap(), "pinning twice changes nothing");
        assert_eq!(local.read(|r| r.pinned_sessions()).unwrap(), [pinned]);
        fx.clock.advance(400 * DAY);

        let everything = PruneOptions {
            policy: PrunePolicy { older_than: Some(fx.store.now()), max_bytes: Some(0) },
            dry_run: false,
            keep: None,
        };
        let report = fx.store.prune(&everything).unwrap();
        assert!(report.sessions.is_empty(), "{report:?}");
        assert_eq!(report.kept_pinned, 1);
        assert!(exists(&fx, pinned) && exists(&fx, successor), "the pin keeps its lineage");

        assert!(local.write(|tx| tx.unpin_session(pinned)).unwrap());
        assert!(local.read(|r| r.pinned_at(pinned)).unwrap().is_none());
        let mut both = vec![pinned, successor];
        both.sort();
        assert_eq!(fx.store.prune(&everything).unwrap().sessions, both);
    }
}

#[test]
fn a_session_a_live_process_holds_is_kept() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let local = fx.local();
        let held = talked(&fx, "/w", "running");
        let free = talked(&fx, "/w", "idle");
        let owner = seri_store::LeaseOwner::this_process("test");
        let request = seri_store::LeaseRequest {
            session_id: held,
            run_id: None,
            owner: &owner,
            ticket: None,
            ttl: std::time::Duration::from_secs(3600),
        };
        local.write(|tx| tx.try_acquire_lease(&request)).unwrap();
        fx.clock.advance(40 * DAY);
        let report = fx.store.prune(&older_than(&fx, 30)).unwrap();
        assert_eq!(report.sessions, [free]);
        assert_eq!(report.kept_held, 1);
        assert!(exists(&fx, held));
        // And the caller's own session, named by `keep`.
        let mine = talked(&fx, "/w", "mine");
        fx.clock.advance(40 * DAY);
        let keep = PruneOptions { keep: Some(mine), ..older_than(&fx, 30) };
        assert!(fx.store.prune(&keep).unwrap().sessions.is_empty());
    }
}

#[test]
fn attachments_and_trajectories_go_with_their_sessions() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let local = fx.local();
        let old = talked(&fx, "/w", "with a file");
        let kept = talked(&fx, "/w", "with the same file");
        local.store_attachment(old, "a.txt", None, b"only the old one has this").unwrap();
        local.store_attachment(old, "shared.txt", None, b"both have this").unwrap();
        local.store_attachment(kept, "shared.txt", None, b"both have this").unwrap();
        fx.clock.advance(40 * DAY);
        local.append(kept, [user("recent")]).unwrap();

        let before = fx.store.usage().unwrap();
        let report = fx.store.prune(&older_than(&fx, 30)).unwrap();
        assert_eq!(report.sessions, [old]);
        let after = fx.store.usage().unwrap();
        // The content only the pruned session named is gone; the shared one stays.
        assert_eq!(
            before.total.attachment_bytes - after.total.attachment_bytes,
            b"only the old one has this".len() as u64
        );
        assert_eq!(before.total.total() - after.total.total(), report.bytes, "the report says what went");
        assert!(!fx.dir.path().join("attachments").join(old.to_string()).exists());
        assert!(fx.store.check_consistency().unwrap().is_clean());
    }
}

#[test]
fn du_counts_a_forks_shared_history_once_and_sums_by_folder_agent_and_lineage() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let local = fx.local();
        let parent = talked(&fx, "/w", "a long shared history");
        let before = fx.store.usage().unwrap();
        fx.clock.advance(1);
        let fork = local.write(|tx| tx.fork_session(parent, None, ForkVia::Cli)).unwrap().id;
        let after = fx.store.usage().unwrap();
        assert_eq!(after.total.event_bytes, before.total.event_bytes, "a fork adds no event bytes");
        assert_eq!((after.total.sessions, after.total.events), (2, 2));
        local.append(fork, [user("its own")]).unwrap();
        talked(&fx, "/v", "elsewhere");

        let usage = fx.store.usage().unwrap();
        assert_eq!(usage.agents.len(), 1);
        assert_eq!(usage.agents[0].sizes, usage.total);
        let folders: Vec<(&str, u64)> = usage.folders.iter().map(|r| (r.key.as_str(), r.sizes.sessions)).collect();
        assert!(folders.contains(&("/w", 2)) && folders.contains(&("/v", 1)), "{folders:?}");
        assert_eq!(usage.lineages.len(), 3);
        assert_eq!(usage.lineages.iter().map(|l| l.sizes.event_bytes).sum::<u64>(), usage.total.event_bytes);
        assert!(usage.database.bytes > 0);
        match backend {
            Backend::Sqlite => {
                assert_eq!(usage.database.auto_vacuum, Some("incremental"), "a new file vacuums incrementally");
                assert!(usage.database.reclaimable_bytes.is_some() && usage.database.index_bytes.is_some());
            }
            Backend::Postgres => assert_eq!(usage.database.reclaimable_bytes, None, "unknown is not zero"),
        }
    }
}

#[test]
fn the_budget_prunes_the_oldest_lineages_until_what_is_kept_fits() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let first = talked(&fx, "/w", &"x".repeat(4000));
        fx.clock.advance(DAY);
        let second = talked(&fx, "/w", &"y".repeat(4000));
        fx.clock.advance(DAY);
        let third = talked(&fx, "/w", &"z".repeat(4000));
        let total = fx.store.usage().unwrap().total.total();
        let budget = PruneOptions {
            policy: PrunePolicy { older_than: None, max_bytes: Some(total / 2) },
            dry_run: false,
            keep: None,
        };
        let report = fx.store.prune(&budget).unwrap();
        assert_eq!(report.sessions, [first, second], "oldest first, until it fits");
        assert!(report.lineages.iter().all(|l| l.reason == PruneReason::Budget));
        assert!(exists(&fx, third));
        assert!(fx.store.usage().unwrap().total.total() <= total / 2);
    }
}

#[test]
fn sqlite_gives_the_freed_pages_back() {
    let fx = Fixture::sqlite();
    for i in 0..40 {
        talked(&fx, "/w", &format!("{i} {}", "words ".repeat(2000)));
    }
    fx.clock.advance(40 * DAY);
    let report = fx.store.prune(&older_than(&fx, 30)).unwrap();
    assert_eq!(report.sessions.len(), 40);
    let space = report.space.unwrap();
    assert_eq!((space.how, space.problem.as_deref()), ("incremental", None));
    assert!(space.after.unwrap() < space.before, "{space:?}");
    assert_eq!(fx.store.usage().unwrap().database.reclaimable_bytes, Some(0));
}

#[test]
fn an_older_file_without_incremental_vacuum_is_rewritten_once() {
    let fx = Fixture::sqlite();
    let conn = rusqlite::Connection::open(fx.db_path()).unwrap();
    conn.execute_batch("PRAGMA auto_vacuum = NONE; VACUUM;").unwrap();
    drop(conn);
    assert_eq!(fx.store.usage().unwrap().database.auto_vacuum, Some("none"));
    talked(&fx, "/w", &"words ".repeat(4000));
    fx.clock.advance(40 * DAY);
    let space = fx.store.prune(&older_than(&fx, 30)).unwrap().space.unwrap();
    assert_eq!(space.how, "rewritten");
    assert_eq!(fx.store.usage().unwrap().database.auto_vacuum, Some("incremental"));
}

#[test]
fn events_are_still_never_deleted_but_with_a_pruned_session() {
    let fx = Fixture::sqlite();
    talked(&fx, "/w", "kept");
    let conn = rusqlite::Connection::open(fx.db_path()).unwrap();
    let err = conn.execute("DELETE FROM session_events", []).unwrap_err();
    assert!(err.to_string().contains("append-only"), "{err}");
}

#[test]
fn check_finds_a_listed_session_without_its_events() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let id = talked(&fx, "/w", "hello");
        assert!(fx.store.check_consistency().unwrap().is_clean());
        let plant = format!("UPDATE session_last_events SET seq = 9 WHERE session_id = '{id}'");
        match backend {
            Backend::Sqlite => {
                rusqlite::Connection::open(fx.db_path()).unwrap().execute_batch(&plant).unwrap();
            }
            Backend::Postgres => {
                crate::postgres::raw(fx.url.as_deref().unwrap(), &plant).unwrap();
            }
        }
        let report = fx.store.check_consistency().unwrap();
        assert!(!report.is_clean());
        let found: Vec<(&str, String)> = report.problems.iter().map(|p| (p.check, p.problem.clone())).collect();
        assert!(
            found.contains(&("session-events", "is listed up to seq 9, but its events end at 2".to_owned())),
            "{found:?}"
        );
        assert!(report.checks.iter().any(|c| c.name == "cached-columns" && c.problems == 1));
    }
}

#[test]
fn check_finds_an_edge_to_a_missing_session() {
    let fx = Fixture::sqlite();
    let local = fx.local();
    let pred = talked(&fx, "/w", "start");
    let edge = local.write(|tx| continue_session(tx, pred, "call_x", "Next", None)).unwrap();
    let conn = rusqlite::Connection::open(fx.db_path()).unwrap();
    // A hand edit with foreign keys off can break what the store never would.
    conn.execute_batch("PRAGMA foreign_keys = OFF").unwrap();
    let ghost = fx.store.new_session_id();
    conn.execute(
        "INSERT INTO session_continuations (id, predecessor_session_id, successor_session_id, origin_session_id, \
         tool_call_id, initiating_event_id, reason, manifest_cbor, created_at) \
         SELECT 'ghost-edge', predecessor_session_id, ?1, origin_session_id, 'call_ghost', initiating_event_id, \
         reason, manifest_cbor, created_at FROM session_continuations WHERE id = ?2",
        rusqlite::params![ghost.to_string(), edge.id.to_string()],
    )
    .unwrap();
    let report = fx.store.check_consistency().unwrap();
    let found: Vec<String> =
        report.problems.iter().map(|p| format!("{}: {} {}", p.check, p.subject, p.problem)).collect();
    assert_eq!(found, [format!("continuations: continuation ghost-edge its successor {ghost} is missing")]);
}

/// The search index is written with the events: `seri store check` finds
/// an event it lost and a row left without its event, and a prune takes
/// the index's rows with their sessions.
#[test]
fn check_finds_the_search_index_apart_from_the_events_and_a_prune_keeps_them_together() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let old = talked(&fx, "/old", "the retry policy goes");
        fx.clock.advance(40 * DAY);
        let kept = talked(&fx, "/w", "the retry policy stays");
        let pruned = fx.store.prune(&older_than(&fx, 30)).unwrap();
        assert!(pruned.sessions.contains(&old), "{pruned:?}");
        assert!(!pruned.sessions.contains(&kept), "{pruned:?}");
        assert!(fx.store.check_consistency().unwrap().is_clean());

        let plant = match backend {
            Backend::Sqlite => format!("DELETE FROM search_docs WHERE session_id = '{kept}' AND seq = 1"),
            Backend::Postgres => format!("DELETE FROM event_search WHERE session_id = '{kept}' AND seq = 1"),
        };
        match backend {
            Backend::Sqlite => rusqlite::Connection::open(fx.db_path()).unwrap().execute_batch(&plant).unwrap(),
            Backend::Postgres => crate::postgres::raw(fx.url.as_deref().unwrap(), &plant).unwrap(),
        }
        let report = fx.store.check_consistency().unwrap();
        let found: Vec<String> =
            report.problems.iter().map(|p| format!("{}: {} {}", p.check, p.subject, p.problem)).collect();
        assert_eq!(found, [format!("search-index: event {kept}#1 is an event the search index does not hold")]);
    }
}

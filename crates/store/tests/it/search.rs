//! Full-text search: every kind of content is found, ranked, with its
//! matched words marked; forks' shared history is one hit naming them; a
//! predecessor's hit names its successor; another agent's sessions are
//! never searched. The same answers from both backends.

use seri_core::{AgentId, EventBody, ForkVia, Seq, SessionId, Timestamp, ToolCall};
use seri_store::search::{Query, SearchHit, SearchKind, SearchRequest, SearchScope};

use crate::support::*;

fn search(fx: &Fixture, query: &str) -> Vec<SearchHit> {
    search_with(fx, query, |_| {})
}

fn search_with(fx: &Fixture, query: &str, adjust: impl FnOnce(&mut SearchRequest)) -> Vec<SearchHit> {
    let mut request = SearchRequest::new(Query::parse(query).unwrap());
    adjust(&mut request);
    fx.local().search(&request).unwrap()
}

/// The snippets of the hits, in order.
fn snippets(hits: &[SearchHit]) -> Vec<String> {
    hits.iter().map(|h| h.snippet.clone()).collect()
}

fn call(id: &str, name: &str, arguments: serde_json::Value) -> EventBody {
    EventBody::ToolCall(ToolCall { id: id.into(), name: name.to_owned(), arguments })
}

/// One session holding one event of every kind that is indexed.
fn every_kind(fx: &Fixture) -> SessionId {
    let local = fx.local();
    let id = fx.session(&local, "/work");
    local
        .append(
            id,
            [
                user("What did we decide about the retry policy?"),
                thinking("The retry policy lives in crates/providers/src/retry.rs"),
                call("c1", "grep", serde_json::json!({"pattern": "backoff_ceiling", "path": "crates/providers"})),
                tool_result("c1", "grep", "retry.rs:12: const BACKOFF_CEILING: u64 = 30;"),
                assistant("We cap the exponential backoff at thirty seconds."),
                status(Some("Retry policy review"), Some("Why backoff stops at 30 s")),
            ],
        )
        .unwrap();
    id
}

#[test]
fn every_kind_of_content_is_found_with_its_words_marked() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let id = every_kind(&fx);
        let kinds = |q: &str| {
            let mut kinds: Vec<SearchKind> = search(&fx, q).iter().map(|h| h.kind).collect();
            kinds.sort_by_key(|k| k.as_str());
            kinds
        };
        assert_eq!(kinds("backoff_ceiling"), [SearchKind::ToolCall, SearchKind::ToolResult], "{backend:?}");
        assert_eq!(kinds("exponential"), [SearchKind::Assistant]);
        assert_eq!(kinds("\"retry.rs\""), [SearchKind::Thinking, SearchKind::ToolResult]);
        assert_eq!(kinds("review"), [SearchKind::Title]);
        assert_eq!(kinds("decide"), [SearchKind::User]);

        let hits = search(&fx, "exponential");
        assert_eq!(hits[0].session_id, id);
        assert_eq!(hits[0].seq, Seq(5));
        assert_eq!(hits[0].cwd, "/work");
        assert_eq!(hits[0].title, "Retry policy review");
        assert_eq!(snippets(&hits), ["We cap the «exponential» backoff at thirty seconds."]);
        assert!(hits[0].shared_with.is_empty() && hits[0].continued_in.is_none());
        let event = fx.local().event(hits[0].event_id).unwrap();
        assert_eq!((event.seq, event.at), (Seq(5), hits[0].at));
    }
}

#[test]
fn phrases_prefixes_and_operators_select_what_they_say() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let local = fx.local();
        let id = fx.session(&local, "/work");
        local
            .append(
                id,
                [
                    user("retry policy for uploads"),
                    user("policy on retry budgets"),
                    user("the retrying uploader"),
                    user("nothing relevant here"),
                ],
            )
            .unwrap();
        #[track_caller]
        fn check(fx: &Fixture, query: &str, expect: &[u64]) {
            let mut seqs: Vec<u64> = search(fx, query).iter().map(|h| h.seq.get()).collect();
            seqs.sort_unstable();
            assert_eq!(seqs, expect, "{query} on {:?}", fx.backend);
        }
        check(&fx, "retry policy", &[1, 2]);
        check(&fx, "\"retry policy\"", &[1]);
        check(&fx, "retr*", &[1, 2, 3]);
        check(&fx, "retry OR uploader", &[1, 2, 3]);
        check(&fx, "retry NOT uploads", &[2]);
        check(&fx, "retry -budgets", &[1]);
        check(&fx, "(uploads OR budgets) AND policy", &[1, 2]);
        check(&fx, "RETRY", &[1, 2]);
        check(&fx, "absent", &[]);
    }
}

#[test]
fn better_matches_rank_first_and_the_limit_holds() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let local = fx.local();
        let id = fx.session(&local, "/work");
        local
            .append(
                id,
                [
                    user("a long message that mentions deploy once among many many other words of little interest"),
                    user("deploy deploy deploy"),
                ],
            )
            .unwrap();
        let hits = search(&fx, "deploy");
        assert_eq!(hits.iter().map(|h| h.seq.get()).collect::<Vec<_>>(), [2, 1], "{backend:?}");
        assert!(hits[0].score > hits[1].score);
        assert_eq!(search_with(&fx, "deploy", |r| r.limit = 1).len(), 1);
    }
}

#[test]
fn history_forks_share_is_one_hit_naming_them() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let local = fx.local();
        let parent = fx.session(&local, "/work");
        local.append(parent, [user("the shared flamingo"), assistant("ok"), user("the parent's own walrus")]).unwrap();
        fx.clock.advance(1);
        let fork = local.fork_session(parent, Some(Seq(2)), ForkVia::Cli).unwrap().id;
        local.append(fork, [user("the fork's own walrus")]).unwrap();
        fx.clock.advance(1);
        let nested = local.fork_session(fork, Some(Seq(3)), ForkVia::Cli).unwrap().id;
        fx.clock.advance(1);
        let early = local.fork_session(parent, Some(Seq(0)), ForkVia::Cli).unwrap().id;

        let hits = search(&fx, "flamingo");
        assert_eq!(hits.len(), 1, "{backend:?}");
        assert_eq!((hits[0].session_id, hits[0].seq), (parent, Seq(1)));
        assert_eq!(hits[0].shared_with, [fork, nested], "not {early}, forked before it");

        let mut walruses: Vec<(SessionId, Vec<SessionId>)> =
            search(&fx, "walrus").into_iter().map(|h| (h.session_id, h.shared_with)).collect();
        walruses.sort();
        let mut expect = vec![(parent, vec![]), (fork, vec![nested])];
        expect.sort();
        assert_eq!(walruses, expect);
    }
}

#[test]
fn a_hit_in_a_predecessor_names_its_successor() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let local = fx.local();
        let pred = fx.session(&local, "/work");
        local.append(pred, [user("Plan the pelican migration")]).unwrap();
        fx.clock.advance(10);
        let edge = local.write(|tx| continue_session(tx, pred, "call_1", "Pelicans", None)).unwrap();
        let hits: Vec<SearchHit> = search(&fx, "pelican").into_iter().filter(|h| h.session_id == pred).collect();
        assert_eq!(hits.len(), 1, "{backend:?}");
        assert_eq!(hits[0].continued_in, Some(edge.successor_session_id));
    }
}

#[test]
fn only_the_agents_own_sessions_are_searched() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        every_kind(&fx);
        let theirs = fx.store.agent(&AgentId("acct-2".into()));
        let seed = theirs.new_seed("/work");
        theirs.create_session(&seed).unwrap();
        theirs.append(seed.id, [user("their exponential secret")]).unwrap();
        let request = SearchRequest::new(Query::parse("exponential").unwrap());
        let mine = fx.local().search(&request).unwrap();
        assert_eq!(mine.len(), 1, "{backend:?}");
        assert_ne!(mine[0].session_id, seed.id);
        let found = theirs.search(&request).unwrap();
        assert_eq!(found.iter().map(|h| h.session_id).collect::<Vec<_>>(), [seed.id]);
    }
}

#[test]
fn the_folder_and_the_date_narrow_or_order_the_hits() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let local = fx.local();
        let elsewhere = fx.session(&local, "/elsewhere");
        // The better match, elsewhere.
        local.append(elsewhere, [user("kiwi kiwi kiwi")]).unwrap();
        fx.clock.advance(60_000);
        let here = fx.session(&local, "/here");
        local.append(here, [user("a kiwi, once, among other words")]).unwrap();
        let sessions = |hits: Vec<SearchHit>| hits.into_iter().map(|h| h.session_id).collect::<Vec<_>>();

        assert_eq!(sessions(search(&fx, "kiwi")), [elsewhere, here], "{backend:?}");
        let first = search_with(&fx, "kiwi", |r| r.scope = SearchScope::FolderFirst("/here".into()));
        assert_eq!(sessions(first), [here, elsewhere]);
        let only = search_with(&fx, "kiwi", |r| r.scope = SearchScope::Folder("/here".into()));
        assert_eq!(sessions(only), [here]);
        let since = search_with(&fx, "kiwi", |r| r.since = Some(Timestamp(T0.millis() + 30_000)));
        assert_eq!(sessions(since), [here]);
    }
}

#[test]
fn events_written_before_the_index_are_indexed_by_its_migration() {
    let fx = Fixture::sqlite();
    let id = every_kind(&fx);
    let path = fx.db_path();
    drop(fx.store);
    {
        // The file as the build before the index left it.
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(
            "DROP TABLE search_pending; DROP TABLE search_text; DROP TABLE search_docs; PRAGMA user_version = 20;",
        )
        .unwrap();
    }
    indexed_when_opened(id, |options| seri_store::Store::open_with(&path, options).unwrap());
}

#[test]
fn on_postgresql_events_written_before_the_index_are_indexed_by_its_migration() {
    if postgres_url().is_none() {
        return;
    }
    let fx = Fixture::on(Backend::Postgres);
    let id = every_kind(&fx);
    let url = fx.url.clone().unwrap();
    drop(fx.store);
    // The schema as the build before the index left it: version 12, the
    // events there and no `event_search` table.
    crate::postgres::raw(&url, "DROP TABLE event_search; UPDATE seri_schema SET version = 12;").unwrap();
    indexed_when_opened(id, |options| {
        seri_store::Store::open_url(Some(&url), std::path::Path::new("unused.db"), options).unwrap()
    });
}

/// Opens a store whose events were written before the index (`open`,
/// given the options), and checks that its migration indexed them all,
/// with progress to the end, and that appends go on being indexed once.
#[track_caller]
fn indexed_when_opened(id: SessionId, open: impl FnOnce(seri_store::StoreOptions) -> seri_store::Store) {
    let told = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let progress = {
        let told = told.clone();
        seri_store::IndexProgress(std::sync::Arc::new(move |done, total| told.lock().unwrap().push((done, total))))
    };
    let store =
        open(seri_store::StoreOptions { index_progress: Some(progress), ..seri_store::StoreOptions::default() });
    let local = store.agent(&AgentId::local());
    let request = SearchRequest::new(Query::parse("exponential").unwrap());
    assert_eq!(
        local.search(&request).unwrap().iter().map(|h| (h.session_id, h.seq)).collect::<Vec<_>>(),
        [(id, Seq(5))]
    );
    assert_eq!(told.lock().unwrap().last(), Some(&(6, 6)), "the progress reached the end");
    // The other kinds are indexed too: the question, the thinking, the result, the title.
    let retry = local.search(&SearchRequest::new(Query::parse("retry").unwrap())).unwrap();
    assert!(retry.len() >= 4, "{retry:?}");
    // Appends go on being indexed, exactly once.
    local.append(id, [user("exponential again")]).unwrap();
    assert_eq!(local.search(&request).unwrap().len(), 2);
}

#[test]
fn a_copy_between_backends_carries_the_index() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        every_kind(&fx);
        let target = Fixture::on(Backend::Sqlite);
        fx.store.copy_into(&target.store).unwrap();
        assert_eq!(snippets(&search(&target, "exponential")), ["We cap the «exponential» backoff at thirty seconds."]);
    }
}

/// The rows of `table` in the SQLite file at `path`, read beside the store.
fn rows_in(path: &std::path::Path, table: &str) -> i64 {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0)).unwrap()
}

#[test]
fn on_sqlite_the_newest_texts_wait_in_a_bounded_batch_and_a_search_still_finds_them() {
    let fx = Fixture::sqlite();
    let local = fx.local();
    let id = fx.session(&local, "/work");
    let path = fx.db_path();
    let mut most_waiting = 0;
    for n in 0..600 {
        local.append(id, [user(&format!("question {n} about durian")), user("an answer")]).unwrap();
        most_waiting = most_waiting.max(rows_in(&path, "search_pending"));
    }
    // An append moves the gathered texts into FTS5 once they are a batch
    // (1,024), so no more ever wait than one batch, and most are indexed.
    assert!((1..1024).contains(&most_waiting), "{most_waiting} texts waited");
    assert!(rows_in(&path, "search_pending") > 0, "the newest texts wait");
    // One that still waits is found, and the search moved it in.
    let newest = search(&fx, "\"question 599\"");
    assert_eq!(newest.iter().map(|h| (h.session_id, h.seq)).collect::<Vec<_>>(), [(id, Seq(1199))]);
    assert_eq!(rows_in(&path, "search_pending"), 0);
    // Every one exactly once: those moved by the append and by the search.
    for n in [0, 300, 511, 512, 598] {
        let hits = search(&fx, &format!("\"question {n} about\""));
        assert_eq!(hits.iter().map(|h| h.seq).collect::<Vec<_>>(), [Seq(2 * n + 1)], "question {n}");
    }
    assert_eq!(search_with(&fx, "durian", |r| r.limit = 200).len(), 200);
    assert!(fx.store.check_consistency().unwrap().is_clean());
}

#[test]
fn a_file_indexed_before_the_batching_keeps_its_index() {
    let fx = Fixture::sqlite();
    let id = every_kind(&fx);
    search(&fx, "exponential");
    let path = fx.db_path();
    drop(fx.store);
    {
        // The file as the build with the index but without its batching
        // left it: version 21, every text in FTS5.
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch("DROP TABLE search_pending; PRAGMA user_version = 21;").unwrap();
    }
    let store = seri_store::Store::open(&path).unwrap();
    let local = store.agent(&AgentId::local());
    local.append(id, [user("exponential again")]).unwrap();
    let hits = local.search(&SearchRequest::new(Query::parse("exponential").unwrap())).unwrap();
    assert_eq!(hits.len(), 2, "{hits:?}");
}

#[test]
fn a_search_of_every_session_ranks_as_the_whole_query_does() {
    // A search of every session first takes the engine's best few and
    // joins only those; it must answer exactly what ranking every match
    // answers (which a folder-first search of a folder no session has runs),
    // through ties, another agent's better matches and a date.
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let local = fx.local();
        let theirs = fx.store.agent(&AgentId("acct-2".into()));
        let mine: Vec<SessionId> = (0..40).map(|n| fx.session(&local, &format!("/work/{}", n % 3))).collect();
        // Written newest session first, so the order written (which breaks
        // ties on SQLite) is not the sessions' order (which breaks them on
        // PostgreSQL), and neither is the other's.
        for (n, &session) in mine.iter().enumerate().rev() {
            let seed = theirs.new_seed("/theirs");
            theirs.create_session(&seed).unwrap();
            theirs.append(seed.id, [user("kiwi kiwi kiwi kiwi")]).unwrap();
            // Ties: the same words in many sessions; and a few better ones.
            let text = if n % 7 == 0 { "kiwi kiwi and a fruit" } else { "a kiwi fruit" };
            local.append(session, [user(text), user("no fruit here"), user("kiwi")]).unwrap();
            fx.clock.advance(1_000);
        }
        let keys = |hits: Vec<SearchHit>| hits.into_iter().map(|h| (h.session_id, h.seq, h.score)).collect::<Vec<_>>();
        for limit in [1, 3, 7, 20, 60, 200] {
            for since in [None, Some(Timestamp(T0.millis() + 25_000))] {
                for query in ["kiwi", "kiwi fruit"] {
                    let all = search_with(&fx, query, |r| {
                        r.limit = limit;
                        r.since = since;
                    });
                    let whole = search_with(&fx, query, |r| {
                        r.limit = limit;
                        r.since = since;
                        r.scope = SearchScope::FolderFirst("/nowhere".into());
                    });
                    assert!(!all.is_empty());
                    assert_eq!(keys(all), keys(whole), "{backend:?}: {query}, limit {limit}, since {since:?}");
                }
            }
        }
    }
}

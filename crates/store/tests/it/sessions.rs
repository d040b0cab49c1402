//! Sessions and events through one agent's handle: create, append, the
//! reads the run loop and the command line need, and agent scoping.

use rusqlite::Connection;
use seri_core::{AgentId, EventBody, FrozenPrompt, ModelRef, Plan, PlanStep, Seq, SessionId, StepStatus, TitleSource};
use seri_store::{Clock, DataError, EngineError, LookupError, SeqRange, SessionQuery, StoreError};

use crate::support::*;

#[test]
fn appended_events_are_numbered_from_one_and_read_back_by_range() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let local = fx.local();
        let id = fx.session(&local, "/work");
        fx.clock.advance(10);
        let first = local.append(id, [user("hello"), assistant("hi")]).unwrap();
        let second = local.append(id, [user("more"), thinking("hmm"), assistant("sure")]).unwrap();
        assert_eq!(seqs(&first), [1, 2]);
        assert_eq!(seqs(&second), [3, 4, 5]);
        assert!(first.iter().all(|e| e.session_id == id && e.at == fx.clock.now()));

        let all = local.events(id, SeqRange::ALL).unwrap();
        assert_eq!(all, [first, second].concat());
        assert_eq!(local.event_count(id).unwrap(), 5);
        assert_eq!(seqs(&local.events(id, SeqRange::between(Seq(2), Seq(4))).unwrap()), [2, 3, 4]);
        assert_eq!(seqs(&local.events_page(id, SeqRange::starting_at(Seq(2)), Some(2)).unwrap()), [2, 3]);
        assert_eq!(seqs(&local.events(id, SeqRange::starting_at(Seq(9))).unwrap()), Vec::<u64>::new());
        assert_eq!(local.event(all[3].id).unwrap(), all[3]);
        assert!(local.append(id, []).unwrap().is_empty());
        assert_eq!(local.event_count(id).unwrap(), 5);
    }
}

#[test]
fn fired_rules_are_the_rules_of_the_sessions_rule_messages() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let local = fx.local();
        let (id, other) = (fx.session(&local, "/work"), fx.session(&local, "/work"));
        let rule = |path: &str| {
            let meta = seri_core::MessageMeta { rule: Some(path.to_owned()), ..Default::default() };
            EventBody::Message(seri_core::Message {
                meta: Some(Box::new(meta)),
                ..seri_core::Message::user("rule text")
            })
        };
        assert!(local.fired_rules(id).unwrap().is_empty());
        local.append(id, [user("a"), rule(".seri/rules/rust.md"), assistant("b"), rule(".seri/rules/web.md")]).unwrap();
        local.append(other, [rule(".seri/rules/other.md")]).unwrap();
        let fired: Vec<String> = local.fired_rules(id).unwrap().into_iter().collect();
        assert_eq!(fired, [".seri/rules/rust.md", ".seri/rules/web.md"]);
        let unknown = fx.store.new_session_id();
        assert!(matches!(local.fired_rules(unknown), Err(StoreError::Lookup(LookupError::UnknownSession { .. }))));
    }
}

#[test]
fn bodies_stream_in_seq_order_and_context_marks_come_from_their_index() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let local = fx.local();
        let id = fx.session(&local, "/work");
        let rewind = || EventBody::ContextRewound(seri_core::ContextRewound::before_turn(Seq(2)));
        local.append(id, [user("a"), assistant("b"), rewind(), user("c"), rewind(), assistant("d")]).unwrap();
        let all = local.events(id, SeqRange::ALL).unwrap();

        let mut streamed = Vec::new();
        local.each_body(id, SeqRange::between(Seq(2), Seq(5)), &mut |seq, body| streamed.push((seq, body))).unwrap();
        let expected: Vec<_> = all[1..5].iter().map(|e| (e.seq, e.body.clone())).collect();
        assert_eq!(streamed, expected);

        // The newest marks up to a seq, oldest first; a limit keeps the newest.
        assert_eq!(seqs(&local.context_marks(id, Seq(6), 8).unwrap()), [3, 5]);
        assert_eq!(seqs(&local.context_marks(id, Seq(6), 1).unwrap()), [5]);
        assert_eq!(seqs(&local.context_marks(id, Seq(4), 8).unwrap()), [3]);
        assert_eq!(local.context_marks(id, Seq(6), 8).unwrap(), [all[2].clone(), all[4].clone()]);
        assert!(local.context_marks(id, Seq(2), 8).unwrap().is_empty());

        let unknown = fx.store.new_session_id();
        let err = local.each_body(unknown, SeqRange::ALL, &mut |_, _| {}).unwrap_err();
        assert!(matches!(err, StoreError::Lookup(LookupError::UnknownSession { .. })), "{err}");
        assert!(matches!(
            local.context_marks(unknown, Seq(1), 8),
            Err(StoreError::Lookup(LookupError::UnknownSession { .. }))
        ));
    }
}

#[test]
fn info_is_the_fold_of_seed_and_events() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let local = fx.local();
        let id = fx.session(&local, "/work");
        fx.clock.advance(1_000);
        local
            .append(id, [user("Fix the flaky test in ci\nit fails on Tuesdays"), assistant_with_usage("ok", 1_200)])
            .unwrap();
        fx.clock.advance(1_000);
        local
            .append(id, [tool_call("c1", "read"), tool_result("c1", "read", "x"), status(None, Some("reading"))])
            .unwrap();
        let info = local.info(id).unwrap();
        let json = serde_json::to_string_pretty(&info).unwrap().replace(&id.to_string(), "<SESSION>");
        insta::assert_snapshot!("info_after_two_turns", json);
        // The cached columns agree with the fold.
        let summary = local.summary(id).unwrap();
        assert_eq!(
            (summary.title, summary.description, summary.title_source, summary.last_seq, summary.updated_at),
            (info.title, info.description, info.title_source, info.last_seq, info.updated_at)
        );
    }
}

#[test]
fn seeds_round_trip_with_every_creation_fact() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let local = fx.local();
        let mut seed = local.new_seed("/work/project");
        seed.title = Some("Ship the store".into());
        seed.description = Some("migrations first".into());
        seed.title_source = Some(TitleSource::Agent);
        seed.model_override = Some(ModelRef::new("anthropic", "claude-sonnet-4-5"));
        seed.plan = Some(Plan {
            steps: vec![PlanStep { text: "write schema".into(), status: StepStatus::Done }],
            owner_run_id: None,
        });
        seed.parent_run_id = Some(fx.store.new_run_id());
        seed.system_prompt = Some(FrozenPrompt { text: "You are seri.".into(), files: vec![], tools: vec![] });
        let created = local.create_session(&seed).unwrap();
        assert_eq!(local.seed(seed.id).unwrap(), seed);
        assert_eq!(created.title, "Ship the store");
        assert_eq!(local.info(seed.id).unwrap(), created);
    }
}

#[test]
fn creating_twice_or_for_another_agent_is_refused() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let local = fx.local();
        let seed = local.new_seed("/w");
        local.create_session(&seed).unwrap();
        let err = local.create_session(&seed).unwrap_err();
        assert_eq!(err.to_string(), format!("session `{}` already exists", seed.id));
        let other = fx.store.new_seed(&AgentId("acct-2".into()), "/w");
        let err = local.create_session(&other).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("session `{}` is seeded for agent `acct-2` but is being created by agent `local`", other.id)
        );
    }
}

#[test]
fn the_newest_user_message_skips_agent_and_runtime_messages() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let local = fx.local();
        let id = fx.session(&local, "/w");
        assert_eq!(local.newest_user_message(id).unwrap(), None);
        local.append(id, [system("projection"), assistant("hello")]).unwrap();
        assert_eq!(local.newest_user_message(id).unwrap(), None);
        local.append(id, [user("first"), assistant("a"), trigger("nightly run"), assistant("b")]).unwrap();
        local.append(id, [tool_call("c", "read"), tool_result("c", "read", "r"), system("recap")]).unwrap();
        let newest = local.newest_user_message(id).unwrap().unwrap();
        assert_eq!((newest.seq, texts(std::slice::from_ref(&newest))), (Seq(5), vec!["nightly run".to_owned()]));
    }
}

#[test]
fn most_recent_session_and_lists_follow_the_newest_event() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let local = fx.local();
        let a = fx.session(&local, "/a");
        let b = fx.session(&local, "/b");
        let c = fx.session(&local, "/a");
        let ids = |q: &SessionQuery| local.list_sessions(q).unwrap().into_iter().map(|s| s.id).collect::<Vec<_>>();
        assert_eq!(ids(&SessionQuery::default()), [c, b, a]);
        fx.clock.advance(5);
        local.append(a, [user("back to a")]).unwrap();
        assert_eq!(ids(&SessionQuery::default()), [a, c, b]);
        assert_eq!(
            ids(&SessionQuery {
                cwd: Some("/a".into()),
                limit: None,
                without_children: false,
                ..SessionQuery::default()
            }),
            [a, c]
        );
        assert_eq!(
            ids(&SessionQuery { cwd: None, limit: Some(2), without_children: false, ..SessionQuery::default() }),
            [a, c]
        );
        assert_eq!(local.most_recent_session(None).unwrap().unwrap().id, a);
        assert_eq!(local.most_recent_session(Some("/b")).unwrap().unwrap().id, b);
        assert_eq!(local.most_recent_session(Some("/nowhere")).unwrap(), None);
    }
}

#[test]
fn sessions_resolve_by_full_id_or_unique_prefix() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let local = fx.local();
        let a = fx.session(&local, "/w");
        fx.clock.advance(1 << 20);
        let b = fx.session(&local, "/w");
        // Ids made 2^20 ms apart share their first 7 hex digits and differ after.
        let (ta, tb) = (a.to_string(), b.to_string());
        let shared = ta.chars().zip(tb.chars()).take_while(|(x, y)| x == y).count();
        assert!((4..12).contains(&shared), "{ta} {tb}");

        assert_eq!(local.resolve_session(&ta).unwrap(), a);
        assert_eq!(local.resolve_session(&ta.to_uppercase()).unwrap(), a);
        assert_eq!(local.resolve_session(&ta[..shared + 1]).unwrap(), a);
        assert_eq!(local.resolve_session(&tb.replace('-', "")[..16]).unwrap(), b);

        let prefix = &ta[..shared];
        match local.resolve_session(prefix).unwrap_err() {
            StoreError::Lookup(LookupError::AmbiguousSessionPrefix { prefix: p, candidates, total }) => {
                assert_eq!((p.as_str(), candidates, total), (prefix, vec![a, b], 2));
            }
            other => panic!("expected an ambiguous prefix, got {other:?}"),
        }
        let unknown = if ta.starts_with('f') { "0" } else { "f" };
        assert_eq!(
            local.resolve_session(unknown).unwrap_err().to_string(),
            format!("no session id starts with `{unknown}`")
        );
        for bad in ["", "xyz", "0198 a3"] {
            assert!(
                matches!(local.resolve_session(bad), Err(StoreError::Lookup(LookupError::InvalidSessionPrefix { .. }))),
                "{bad:?}"
            );
        }
        let missing = SessionId::from_bytes([0xee; 16]);
        assert!(matches!(
            local.resolve_session(&missing.to_string()),
            Err(StoreError::Lookup(LookupError::UnknownSession { .. }))
        ));
    }
}

#[test]
fn another_agents_session_is_indistinguishable_from_a_missing_one() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let mine = fx.local();
        let id = fx.session(&mine, "/w");
        let events = mine.append(id, [user("secret")]).unwrap();
        let theirs = fx.store.agent(&AgentId("acct-2".into()));
        let missing = SessionId::from_bytes([0xee; 16]);

        // Every session-scoped operation gives the same error for both.
        let attempts = |s: SessionId| -> Vec<String> {
            let errors: Vec<StoreError> = vec![
                theirs.info(s).unwrap_err(),
                theirs.seed(s).unwrap_err(),
                theirs.summary(s).unwrap_err(),
                theirs.events(s, SeqRange::ALL).unwrap_err(),
                theirs.event_count(s).unwrap_err(),
                theirs.newest_user_message(s).unwrap_err(),
                theirs.append(s, [user("intrusion")]).unwrap_err(),
                theirs.resolve_session(&s.to_string()).unwrap_err(),
                theirs.continuations_from(s).unwrap_err(),
                theirs.continuation_into(s).unwrap_err(),
                theirs.successor_count(s).unwrap_err(),
                theirs.continuation_by_tool_call(s, &"c".into()).unwrap_err(),
                theirs.resolve_attachment(s, "attachment:x").unwrap_err(),
                theirs.store_attachment(s, "x", None, b"x").unwrap_err(),
            ];
            errors.iter().map(|e| e.to_string().replace(&s.to_string(), "<ID>")).collect()
        };
        let for_theirs = attempts(id);
        assert_eq!(for_theirs, attempts(missing));
        assert!(for_theirs.iter().all(|m| m == "no session `<ID>`"), "{for_theirs:?}");

        assert!(matches!(theirs.event(events[0].id), Err(StoreError::Lookup(LookupError::UnknownEvent { .. }))));
        assert!(matches!(
            theirs.resolve_session(&id.to_string()[..8]),
            Err(StoreError::Lookup(LookupError::UnknownSessionPrefix { .. }))
        ));
        assert!(theirs.list_sessions(&SessionQuery::default()).unwrap().is_empty());
        assert_eq!(theirs.most_recent_session(None).unwrap(), None);
        // And nothing of theirs reached my session.
        assert_eq!(mine.event_count(id).unwrap(), 1);
    }
}

#[test]
fn unknown_sessions_are_refused_by_writes() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let missing = SessionId::from_bytes([0xee; 16]);
        let err = fx.local().append(missing, [user("x")]).unwrap_err();
        assert!(matches!(err, StoreError::Lookup(LookupError::UnknownSession { session_id }) if session_id == missing));
    }
}

#[test]
fn the_database_itself_refuses_to_change_or_remove_events() {
    let fx = Fixture::sqlite();
    let local = fx.local();
    let id = fx.session(&local, "/w");
    local.append(id, [user("kept forever")]).unwrap();
    let conn = Connection::open(fx.db_path()).unwrap();
    let update = conn.execute("UPDATE session_events SET payload = '{}'", []).unwrap_err();
    assert!(update.to_string().contains("session_events is append-only"), "{update}");
    let delete = conn.execute("DELETE FROM session_events", []).unwrap_err();
    assert!(delete.to_string().contains("session_events is append-only"), "{delete}");
    assert_eq!(texts(&local.events(id, SeqRange::ALL).unwrap()), ["kept forever"]);
}

#[test]
fn events_of_unknown_types_are_kept_verbatim() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let local = fx.local();
        let id = fx.session(&local, "/w");
        let body = EventBody::Unknown { kind: "checkpoint_recorded".into(), payload: serde_json::json!({"files": 2}) };
        local.append(id, [body.clone()]).unwrap();
        assert_eq!(local.events(id, SeqRange::ALL).unwrap()[0].body, body);
    }
}

#[test]
fn event_times_never_decrease_within_a_session() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let local = fx.local();
        let id = fx.session(&local, "/w");
        fx.clock.advance(60_000);
        let late = local.append(id, [user("at noon")]).unwrap();
        fx.clock.advance(-3_600_000);
        let stepped_back = local.append(id, [user("after the clock stepped back")]).unwrap();
        assert_eq!(stepped_back[0].at, late[0].at);
        let summary = local.summary(id).unwrap();
        assert_eq!((summary.last_seq, summary.updated_at), (2, late[0].at));
        assert_eq!(local.info(id).unwrap().updated_at, late[0].at);
    }
}

/// Inserts an event row by hand, as a newer or broken writer might have.
fn insert_raw_event(fx: &Fixture, session: SessionId, seq: i64, kind: &str, format: i64, payload: &str) {
    let conn = Connection::open(fx.db_path()).unwrap();
    conn.execute(
        "INSERT INTO session_events (id, session_id, seq, type, format_version, payload, created_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, 0)",
        rusqlite::params![fx.store.new_run_id().to_string(), session.to_string(), seq, kind, format, payload],
    )
    .unwrap();
}

#[test]
fn unreadable_events_are_typed_errors_naming_session_and_seq() {
    let fx = Fixture::sqlite();
    let local = fx.local();
    let id = fx.session(&local, "/w");
    local.append(id, [user("fine")]).unwrap();
    insert_raw_event(&fx, id, 2, "message", 2, r#"{"role":"user","actor":"user","content":"from the future"}"#);
    let err = local.events(id, SeqRange::ALL).unwrap_err();
    assert!(matches!(err, StoreError::Data(DataError::NewerEventFormat { found: 2, .. })), "{err:?}");
    assert_eq!(
        err.to_string().replace(&id.to_string(), "<ID>"),
        "event 2 of session `<ID>` has payload format 2, newer than the 1 this build of seri reads: upgrade seri"
    );
    // The readable part of the transcript is still readable.
    assert_eq!(texts(&local.events(id, SeqRange::between(Seq(1), Seq(1))).unwrap()), ["fine"]);

    let other = fx.session(&local, "/w");
    insert_raw_event(&fx, other, 1, "message", 1, r#"{"role":7}"#);
    let err = local.info(other).unwrap_err();
    assert!(matches!(err, StoreError::Data(DataError::CorruptEvent { seq: Seq(1), .. })), "{err:?}");
    assert!(err.to_string().contains("is unreadable: event payload of type `message` is malformed"), "{err}");
}

#[test]
fn a_writer_that_holds_the_lock_past_the_busy_timeout_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let options = seri_store::StoreOptions {
        busy_timeout: std::time::Duration::from_millis(50),
        ..seri_store::StoreOptions::default()
    };
    let store = seri_store::Profile::at(dir.path()).open_store_with(options).unwrap();
    let local = store.agent(&AgentId::local());
    let seed = local.new_seed("/w");
    local.create_session(&seed).unwrap();

    let holder = Connection::open(dir.path().join("seri.db")).unwrap();
    holder.execute_batch("BEGIN IMMEDIATE").unwrap();
    let err = local.append(seed.id, [user("blocked")]).unwrap_err();
    assert!(matches!(err, StoreError::Engine(EngineError::Locked { .. })), "{err:?}");
    let message = err.to_string();
    assert!(message.contains("stayed locked by another writer") && message.contains("seri.db"), "{message}");
    // Reads are not blocked by a writer (WAL), and the store works again once the lock is gone.
    assert_eq!(local.event_count(seed.id).unwrap(), 0);
    holder.execute_batch("ROLLBACK").unwrap();
    assert_eq!(seqs(&local.append(seed.id, [user("now")]).unwrap()), [1]);
}

#[test]
fn a_long_read_decoded_beside_the_reader_visits_every_body_in_order() {
    use seri_store::DECODE_BESIDE_FROM_ROWS;
    let n = DECODE_BESIDE_FROM_ROWS + 2700;
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let local = fx.local();
        let id = fx.session(&local, "/work");
        // Bodies of every size, so batches fill at different rows.
        let bodies: Vec<_> =
            (0..n)
                .map(|i| {
                    if i % 2 == 0 { user(&format!("question {i}")) } else { assistant(&"x".repeat((i % 700) as usize)) }
                })
                .collect();
        local.append(id, bodies).unwrap();
        let all = local.events(id, SeqRange::ALL).unwrap();
        for range in [SeqRange::ALL, SeqRange::between(Seq(300), Seq(DECODE_BESIDE_FROM_ROWS + 400))] {
            let before = fx.store.events_read();
            let mut streamed = Vec::new();
            local.each_body(id, range, &mut |seq, body| streamed.push((seq, body))).unwrap();
            let expected: Vec<_> =
                all.iter().filter(|e| range.contains(e.seq)).map(|e| (e.seq, e.body.clone())).collect();
            assert_eq!(streamed.len(), expected.len(), "{backend:?} {range:?}");
            assert!(streamed == expected, "{backend:?} {range:?}: the bodies differ");
            assert_eq!(fx.store.events_read() - before, expected.len() as u64);
        }
    }
}

#[test]
fn a_long_read_stops_at_the_first_row_that_does_not_decode_having_visited_those_before() {
    use seri_store::DECODE_BESIDE_FROM_ROWS;
    // The bad row among those decoded as read, and among those decoded beside.
    for good in [DECODE_BESIDE_FROM_ROWS / 2, DECODE_BESIDE_FROM_ROWS + 1000] {
        let fx = Fixture::sqlite();
        let local = fx.local();
        let id = fx.session(&local, "/work");
        local.append(id, (0..good).map(|i| user(&format!("message {i}"))).collect::<Vec<_>>()).unwrap();
        // A row no decoder can read, written by hand, then more good ones
        // after it (by hand too: an append would fold the bad one and refuse).
        let conn = rusqlite::Connection::open(fx.db_path()).unwrap();
        let insert = |seq: u64, payload: &str| {
            conn.execute(
                "INSERT INTO session_events (id, session_id, seq, type, format_version, payload, created_at) \
                 VALUES (?1, ?2, ?3, 'message', 1, ?4, 0)",
                rusqlite::params![format!("01a22b09-eb02-7629-9493-{seq:012x}"), id.to_string(), seq as i64, payload],
            )
            .unwrap();
        };
        insert(good + 1, r#"{"role": 7}"#);
        for seq in good + 2..good + 2000 {
            insert(seq, r#"{"role":"user","actor":"user","content":"hi"}"#);
        }
        let mut seen = Vec::new();
        let err = local.each_body(id, SeqRange::ALL, &mut |seq, _| seen.push(seq.get())).unwrap_err();
        assert!(
            matches!(&err, StoreError::Data(DataError::CorruptEvent { seq, .. }) if seq.get() == good + 1),
            "{err}"
        );
        assert_eq!(seen, (1..=good).collect::<Vec<_>>());
    }
}

#[test]
fn a_page_of_sessions_reads_its_own_links_and_every_session_is_listed_with_or_without_events() {
    use seri_core::ForkVia;
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let local = fx.local();
        // A chain of continuations, a session without events and a fork
        // without events of its own.
        let mut chain = vec![fx.session(&local, "/w")];
        local.append(chain[0], [user("start")]).unwrap();
        for n in 0..6 {
            fx.clock.advance(10);
            let last = chain[chain.len() - 1];
            let edge = local.write(|tx| continue_session(tx, last, &format!("call_{n}"), "Next", None)).unwrap();
            chain.push(edge.successor_session_id);
        }
        fx.clock.advance(10);
        let empty = fx.session(&local, "/w");
        fx.clock.advance(10);
        let fork = local.write(|tx| tx.fork_session(chain[2], None, ForkVia::Api)).unwrap().id;

        let all = local.list_sessions(&SessionQuery::default()).unwrap();
        assert_eq!(all.len(), chain.len() + 2, "{backend:?}");
        assert_eq!((all[0].id, all[0].last_seq), (fork, local.summary(chain[2]).unwrap().last_seq), "{backend:?}");
        assert_eq!((all[1].id, all[1].last_seq), (empty, 0), "{backend:?}");
        assert!(fx.store.check_cached_columns(seri_store::CheckMode::Report).unwrap().is_clean(), "{backend:?}");

        // Page by page, each session as the whole list shows it, links and all.
        let mut paged = Vec::new();
        let mut before = None;
        loop {
            let query = SessionQuery { limit: Some(3), updated_before: before, ..SessionQuery::default() };
            let work = fx.store.work();
            let page = local.list_sessions(&query).unwrap();
            if let (Some(work), Some(after)) = (work, fx.store.work()) {
                // The page's rows, then the edges and fork links touching them
                // alone: never the rest of the store's.
                let links = page
                    .iter()
                    .map(|s| {
                        usize::from(s.continued_from.is_some())
                            + usize::from(s.continued_to.is_some())
                            + usize::from(s.forked_from.is_some())
                    })
                    .sum::<usize>();
                assert!((after - work).rows <= (page.len() + links) as u64, "{:?} for {page:?}", after - work);
            }
            let Some(last) = page.last() else { break };
            before = Some(last.updated_at);
            paged.extend(page);
        }
        assert_eq!(paged, all, "{backend:?}");
    }
}

#[test]
fn pages_of_sessions_updated_at_the_same_time_list_each_once_with_the_full_cursor() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let local = fx.local();
        // 23 sessions, their newest events written in three instants: ties
        // of 8, 8 and 7 sessions, across every page boundary of pages of 3.
        fx.clock.advance(10);
        let mut sessions = Vec::new();
        for n in 0..23 {
            if n % 8 == 0 {
                fx.clock.advance(10);
            }
            let seed = local.new_seed("/w");
            local.create_session(&seed).unwrap();
            local.append(seed.id, [user(&format!("task {n}"))]).unwrap();
            sessions.push(seed.id);
        }
        let all = local.list_sessions(&SessionQuery::default()).unwrap();
        assert_eq!(all.len(), 23, "{backend:?}");
        let mut paged = Vec::new();
        let mut cursor: Option<(seri_core::Timestamp, SessionId)> = None;
        loop {
            let query = SessionQuery {
                limit: Some(3),
                updated_before: cursor.map(|c| c.0),
                before_id: cursor.map(|c| c.1),
                ..SessionQuery::default()
            };
            let page = local.list_sessions(&query).unwrap();
            let Some(last) = page.last() else { break };
            cursor = Some((last.updated_at, last.id));
            paged.extend(page);
            assert!(paged.len() <= 23, "{backend:?}: a page repeats sessions");
        }
        assert_eq!(paged, all, "{backend:?}: every session once, in the list's order");
        // The time alone skips the rest of a tie (the newest 7 were
        // written at one time, and the first page shows 3): what the id is for.
        let first = local.list_sessions(&SessionQuery { limit: Some(3), ..SessionQuery::default() }).unwrap();
        let by_time =
            SessionQuery { limit: Some(30), updated_before: Some(first[2].updated_at), ..SessionQuery::default() };
        assert_eq!(local.list_sessions(&by_time).unwrap().len(), 23 - 7, "{backend:?}");
    }
}

//! The cached-column check: a fresh store is clean, a hand-edited one is
//! caught column by column, and repair restores the fold.

use rusqlite::Connection;
use seri_core::AgentId;
use seri_store::{CheckMode, LookupError};

use crate::support::*;

#[test]
fn appends_keep_cached_columns_equal_to_the_fold() {
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let local = fx.local();
        let a = fx.session(&local, "/w");
        let b = fx.store.agent(&AgentId("acct-2".into())).new_seed("/w");
        fx.store.agent(&AgentId("acct-2".into())).create_session(&b).unwrap();
        local.append(a, [user("Title from here"), assistant_with_usage("ok", 5)]).unwrap();
        fx.clock.advance(7);
        local.append(a, [status(Some("Agent title"), Some("working")), status(None, Some("done"))]).unwrap();
        let report = fx.store.check_cached_columns(CheckMode::Report).unwrap();
        assert!(report.is_clean(), "{report:?}");
        assert_eq!((report.sessions, report.events), (2, 4));
    }
}

#[test]
fn hand_edited_cached_columns_are_reported_and_repaired() {
    let fx = Fixture::sqlite();
    let local = fx.local();
    let id = fx.session(&local, "/w");
    local.append(id, [user("Real title"), assistant("ok")]).unwrap();
    let info = local.info(id).unwrap();

    let conn = Connection::open(fx.db_path()).unwrap();
    conn.execute("UPDATE sessions SET title = 'Forged', description = 'x', title_source = 'user'", []).unwrap();
    drop(conn);

    let report = fx.store.check_cached_columns(CheckMode::Report).unwrap();
    let lines: Vec<String> = report
        .mismatches
        .iter()
        .map(|m| format!("{}: cached {:?}, folded {:?}", m.column, m.cached, m.folded))
        .collect();
    insta::assert_snapshot!("forged_cached_columns", lines.join("\n"));
    assert!(report.mismatches.iter().all(|m| m.session_id == id));
    assert!(!report.repaired);
    // Reporting changed nothing; the fold was never fooled.
    assert_eq!(local.summary(id).unwrap().title, "Forged");
    assert_eq!(local.info(id).unwrap(), info);

    let repaired = fx.store.check_cached_columns(CheckMode::Repair).unwrap();
    assert!(repaired.repaired);
    assert_eq!(repaired.mismatches, report.mismatches);
    assert!(fx.store.check_cached_columns(CheckMode::Report).unwrap().is_clean());
    assert_eq!(local.summary(id).unwrap().title, "Real title");
    assert_eq!(seqs(&local.append(id, [user("next")]).unwrap()), [3]);
}

#[test]
fn the_folded_snapshot_is_the_fold_and_a_read_folds_only_its_tail() {
    use seri_core::SessionInfo;
    use seri_store::{SNAPSHOT_EVERY_EVENTS, SeqRange};
    let fx = Fixture::sqlite();
    let local = fx.local();
    let id = fx.session(&local, "/w");
    // Batches of every size around the snapshot interval, with events that
    // change every part of the view.
    let mut n = 0u64;
    for batch in [1usize, 7, 63, 64, 65, 2, 130, 1, 40] {
        let bodies: Vec<_> = (0..batch)
            .map(|i| {
                n += 1;
                match n % 4 {
                    0 => user(&format!("message {n}")),
                    1 => assistant_with_usage("ok", n),
                    2 => status(Some(&format!("title {n}")), Some("busy")),
                    _ => status(None, Some(&format!("step {i}"))),
                }
            })
            .collect();
        local.append(id, bodies).unwrap();
        let events = local.events(id, SeqRange::ALL).unwrap();
        let fold = SessionInfo::fold(&local.seed(id).unwrap(), &events);
        assert_eq!(local.info(id).unwrap(), fold, "after {n} events");
        // A turn's view: folded and kept by its first read, then kept up
        // to date by the appends.
        assert_eq!(local.read_with_view(id, |_, _| Ok(())).unwrap().0, fold, "a turn's view after {n} events");
        assert!(fx.store.check_cached_columns(CheckMode::Report).unwrap().is_clean());
    }
    // Reading the view decodes only the events after the snapshot.
    let before = fx.store.events_read();
    local.info(id).unwrap();
    let read = fx.store.events_read() - before;
    assert!(read < SNAPSHOT_EVERY_EVENTS, "read {read} of {n} events");
    // A turn's view after this process's append decodes none: it is the
    // view the append kept.
    local.append(id, [user("one more")]).unwrap();
    let before = fx.store.events_read();
    let (view, ()) = local.read_with_view(id, |_, _| Ok(())).unwrap();
    assert_eq!(fx.store.events_read() - before, 0);
    let events = local.events(id, SeqRange::ALL).unwrap();
    assert_eq!(view, SessionInfo::fold(&local.seed(id).unwrap(), &events));

    // A forged snapshot is caught and repaired; a missing one costs a full fold, nothing else.
    let conn = Connection::open(fx.db_path()).unwrap();
    conn.execute("UPDATE session_snapshots SET info = json_set(info, '$.description', 'forged')", []).unwrap();
    let report = fx.store.check_cached_columns(CheckMode::Report).unwrap();
    assert!(report.mismatches.iter().any(|m| m.column == "session_snapshots.info"), "{report:?}");
    fx.store.check_cached_columns(CheckMode::Repair).unwrap();
    assert!(fx.store.check_cached_columns(CheckMode::Report).unwrap().is_clean());
    conn.execute("DELETE FROM session_snapshots", []).unwrap();
    let events = local.events(id, SeqRange::ALL).unwrap();
    assert_eq!(local.info(id).unwrap(), SessionInfo::fold(&local.seed(id).unwrap(), &events));
}

#[test]
fn two_stores_appending_to_one_session_keep_its_snapshot_the_fold() {
    use seri_core::SessionInfo;
    use seri_store::{SeqRange, Store};
    let fx = Fixture::sqlite();
    let local = fx.local();
    let id = fx.session(&local, "/w");
    // A second handle on the same file: another process, as far as the
    // first one's kept view can tell.
    let other = Store::open(fx.db_path()).unwrap();
    let theirs = other.agent(&AgentId::local());
    for round in 0..12u64 {
        let (store, text) = if round % 3 == 0 { (&theirs, "theirs") } else { (&local, "mine") };
        let bodies: Vec<_> = (0..23).map(|i| status(Some(&format!("{text} {round}.{i}")), None)).collect();
        store.append(id, bodies).unwrap();
        // Each handle's turn view is the fold, whoever appended last.
        let events = local.events(id, SeqRange::ALL).unwrap();
        let fold = SessionInfo::fold(&local.seed(id).unwrap(), &events);
        assert_eq!(local.read_with_view(id, |_, _| Ok(())).unwrap().0, fold, "mine, round {round}");
        assert_eq!(theirs.read_with_view(id, |_, _| Ok(())).unwrap().0, fold, "theirs, round {round}");
    }
    let events = local.events(id, SeqRange::ALL).unwrap();
    let fold = SessionInfo::fold(&local.seed(id).unwrap(), &events);
    assert_eq!(local.info(id).unwrap(), fold);
    assert_eq!(theirs.info(id).unwrap(), fold);
    assert!(fx.store.check_cached_columns(CheckMode::Report).unwrap().is_clean());
}

#[test]
fn a_rolled_back_append_leaves_nothing_a_later_snapshot_could_be_folded_from() {
    use seri_core::SessionInfo;
    use seri_store::{SeqRange, Store, StoreError};
    let fx = Fixture::sqlite();
    let local = fx.local();
    let id = fx.session(&local, "/w");
    let batch =
        |text: &str, n: usize| -> Vec<_> { (0..n).map(|i| status(Some(&format!("{text} {i}")), None)).collect() };
    // This handle appends 70 events in a transaction that then fails.
    // (Messages: they count, so a view that saw them cannot pass for one that did not.)
    let messages: Vec<_> = (0..70).map(|i| user(&format!("rolled back {i}"))).collect();
    let failed: Result<(), StoreError> = local.write(|tx| {
        tx.append(id, messages)?;
        Err(StoreError::Lookup(LookupError::UnknownSession { session_id: id }))
    });
    assert!(failed.is_err());
    // Another writer reaches the same seq with other events…
    let other = Store::open(fx.db_path()).unwrap();
    other.agent(&AgentId::local()).append(id, batch("kept", 70)).unwrap();
    // …and this handle's next append crosses a snapshot boundary.
    local.append(id, batch("next", 60)).unwrap();
    let events = local.events(id, SeqRange::ALL).unwrap();
    assert_eq!(local.info(id).unwrap(), SessionInfo::fold(&local.seed(id).unwrap(), &events));
    assert!(fx.store.check_cached_columns(CheckMode::Report).unwrap().is_clean());
}

#[test]
fn the_newest_event_a_list_shows_is_kept_in_the_append_and_checked_against_the_events() {
    use seri_store::SessionQuery;
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let local = fx.local();
        let (a, b, empty) = (fx.session(&local, "/w"), fx.session(&local, "/w"), fx.session(&local, "/w"));
        for round in 0..3u64 {
            fx.clock.advance(10);
            local.append(a, [user(&format!("a {round}")), assistant("ok")]).unwrap();
            fx.clock.advance(10);
            local.append(b, [user(&format!("b {round}"))]).unwrap();
        }
        let heads = |local: &seri_store::AgentStore<'_>| -> Vec<(String, u64, i64)> {
            let listed = local.list_sessions(&SessionQuery::default()).unwrap();
            listed.iter().map(|s| (s.id.to_string(), s.last_seq, s.updated_at.millis())).collect()
        };
        // What the list shows is what the events say.
        let from_events: Vec<(String, u64, i64)> = [b, a, empty]
            .into_iter()
            .map(|id| {
                let events = local.events(id, seri_store::SeqRange::ALL).unwrap();
                let at = events.last().map_or_else(|| local.summary(id).unwrap().created_at, |e| e.at);
                (id.to_string(), events.len() as u64, at.millis())
            })
            .collect();
        assert_eq!(heads(&local), from_events, "{backend:?}");
        assert!(fx.store.check_cached_columns(CheckMode::Report).unwrap().is_clean());
    }

    // A forged row is caught and repaired; a missing one leaves its session
    // out of lists until the check repairs it or its next append writes it.
    let fx = Fixture::sqlite();
    let local = fx.local();
    let id = fx.session(&local, "/w");
    local.append(id, [user("one"), assistant("two"), user("three")]).unwrap();
    let listed = || local.list_sessions(&SessionQuery::default()).unwrap().into_iter().find(|s| s.id == id).unwrap();
    // `summary` reads the head from the events, a list from the cache.
    assert_eq!(listed(), local.summary(id).unwrap());
    let conn = Connection::open(fx.db_path()).unwrap();
    conn.execute("UPDATE session_last_events SET seq = 1", []).unwrap();
    assert_eq!(listed().last_seq, 1);
    let report = fx.store.check_cached_columns(CheckMode::Report).unwrap();
    let lines: Vec<String> = report
        .mismatches
        .iter()
        .map(|m| format!("{}: cached {:?}, events {:?}", m.column, m.cached, m.folded))
        .collect();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].starts_with("session_last_events: cached \"seq 1 at "), "{lines:?}");
    fx.store.check_cached_columns(CheckMode::Repair).unwrap();
    assert!(fx.store.check_cached_columns(CheckMode::Report).unwrap().is_clean());
    assert_eq!(listed(), local.summary(id).unwrap());

    let is_listed = || local.list_sessions(&SessionQuery::default()).unwrap().iter().any(|s| s.id == id);
    conn.execute("DELETE FROM session_last_events", []).unwrap();
    assert!(!is_listed());
    let report = fx.store.check_cached_columns(CheckMode::Report).unwrap();
    assert_eq!(report.mismatches.len(), 1, "{report:?}");
    assert_eq!(report.mismatches[0].cached, "(none)");
    fx.store.check_cached_columns(CheckMode::Repair).unwrap();
    assert_eq!(listed(), local.summary(id).unwrap());
    conn.execute("DELETE FROM session_last_events", []).unwrap();
    // The next append writes the row again.
    assert_eq!(seqs(&local.append(id, [assistant("four")]).unwrap()), [4]);
    assert!(fx.store.check_cached_columns(CheckMode::Report).unwrap().is_clean());
    assert_eq!(listed().last_seq, 4);
}

#[test]
fn a_sessions_sandbox_choice_is_folded_from_its_events_on_every_backend_and_rebuilt() {
    use seri_core::{EventBody, SandboxChanged, SandboxMode, SessionInfo};
    use seri_store::{SNAPSHOT_EVERY_EVENTS, SeqRange, Store};
    let change = |mode, network| EventBody::SandboxChanged(SandboxChanged { mode, network });
    for backend in Backend::all() {
        let fx = Fixture::on(backend);
        let local = fx.local();
        let id = fx.session(&local, "/w");
        local.append(id, [user("Hi"), change(Some(SandboxMode::ReadOnly), Some(false))]).unwrap();
        // Past a snapshot: the choice is in it, then changed after it.
        let filler: Vec<_> = (0..SNAPSHOT_EVERY_EVENTS).map(|i| status(None, Some(&format!("step {i}")))).collect();
        local.append(id, filler).unwrap();
        local.append(id, [change(None, Some(true))]).unwrap();
        let info = local.info(id).unwrap();
        assert_eq!((info.sandbox_mode, info.sandbox_network), (Some(SandboxMode::ReadOnly), Some(true)), "{backend:?}");
        let fold = || SessionInfo::fold(&local.seed(id).unwrap(), &local.events(id, SeqRange::ALL).unwrap());
        assert_eq!(info, fold(), "{backend:?}: the view is the fold");
        assert_eq!(local.read_with_view(id, |_, _| Ok(())).unwrap().0, fold(), "{backend:?}: a turn's view too");
        assert!(fx.store.check_cached_columns(CheckMode::Report).unwrap().is_clean(), "{backend:?}");
        if backend == Backend::Sqlite {
            // Another handle on the file (another process, or this one
            // restarted) reads the same choice.
            let other = Store::open(fx.db_path()).unwrap();
            assert_eq!(other.agent(&AgentId::local()).info(id).unwrap(), info);
        }
    }

    // A snapshot forged to another choice is caught and repaired, and
    // without any snapshot the events alone give the choice back.
    let fx = Fixture::sqlite();
    let local = fx.local();
    let id = fx.session(&local, "/w");
    local.append(id, [change(Some(SandboxMode::ReadOnly), None)]).unwrap();
    let filler: Vec<_> = (0..SNAPSHOT_EVERY_EVENTS).map(|i| status(None, Some(&format!("step {i}")))).collect();
    local.append(id, filler).unwrap();
    let conn = Connection::open(fx.db_path()).unwrap();
    let forged =
        conn.execute("UPDATE session_snapshots SET info = json_set(info, '$.sandboxMode', 'full-access')", []).unwrap();
    assert_eq!(forged, 1, "the session has a snapshot to forge");
    let report = fx.store.check_cached_columns(CheckMode::Report).unwrap();
    assert!(report.mismatches.iter().any(|m| m.column == "session_snapshots.info"), "{report:?}");
    fx.store.check_cached_columns(CheckMode::Repair).unwrap();
    assert!(fx.store.check_cached_columns(CheckMode::Report).unwrap().is_clean());
    assert_eq!(local.info(id).unwrap().sandbox_mode, Some(SandboxMode::ReadOnly));
    conn.execute("DELETE FROM session_snapshots", []).unwrap();
    assert_eq!(local.info(id).unwrap().sandbox_mode, Some(SandboxMode::ReadOnly), "rebuilt from the events");
}

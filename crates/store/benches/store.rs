//! What the store costs on top of SQLite and serde_json, each figure next to
//! a baseline measured in the same run on the same file system:
//!
//! - appending 100,000 events, in batches of 100 and one transaction each,
//!   next to a raw rusqlite loop inserting the same rows (same schema, same
//!   pragmas, same JSON encoding); the store must reach 80% of raw, though
//!   it also keeps each session's head and snapshot current;
//! - loading those 100,000 events and folding `SessionInfo`, next to the
//!   typed decode of the same payloads already in memory;
//! - the payload encoding: JSON (chosen) against CBOR, encode, decode and size.
//!
//! Prints, in the form `cargo xtask bench` collects:
//! `bench: <what> | <value> <unit> | baseline <what> <value> <unit> | ratio <x.xx>`

// A benchmark reports on stdout; that is what `cargo xtask bench` reads.
#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use rusqlite::{Connection, params};
use seri_core::event::EVENT_FORMAT_VERSION;
use seri_core::{AgentId, EventBody, SessionId};
use seri_store::Store;

/// Events per figure.
const EVENTS: usize = 100_000;
/// Events per transaction in the batched figures.
const BATCH: usize = 100;
/// Runs per figure: each figure is their median, with the slowest and fastest.
const RUNS: usize = 5;

mod common;

use common::{rate, report, typical_bodies};

fn main() {
    let bodies = typical_bodies(EVENTS);
    let dir = tempfile::tempdir().expect("a temporary directory");

    for (label, batch) in [("batches of 100", BATCH), ("one transaction each", 1)] {
        // Five runs of each, alternating, each into a fresh file.
        let (mut raws, mut stores) = (Vec::new(), Vec::new());
        for run in 0..RUNS {
            raws.push(rate(raw_append(&dir.path().join(format!("raw-{batch}-{run}.db")), &bodies, batch)));
            stores.push(rate(store_append(&dir.path().join(format!("store-{batch}-{run}.db")), &bodies, batch)));
        }
        report(
            &format!("append 100k events, {label} (goal ≥ 0.8×)"),
            stores,
            &format!("raw rusqlite insert, {label}"),
            raws,
        );
    }

    let (mut folds, mut parses) = (Vec::new(), Vec::new());
    for _ in 0..RUNS {
        let (fold, parse) = load_and_fold(&dir.path().join(format!("store-{BATCH}-0.db")));
        folds.push(rate(fold));
        parses.push(rate(parse));
    }
    report("load 100k events and fold SessionInfo", folds, "typed decode of the same payloads, in memory", parses);

    payload_encodings(&bodies);
}

/// The store: one session, `bodies` appended `batch` at a time.
fn store_append(path: &Path, bodies: &[EventBody], batch: usize) -> (usize, Duration) {
    let store = Store::open(path).unwrap();
    let agent = store.agent(&AgentId::local());
    let seed = agent.new_seed("/bench");
    agent.create_session(&seed).unwrap();
    // The store takes its events by value; the copies are made outside the clock.
    let batches: Vec<Vec<EventBody>> = bodies.chunks(batch).map(<[EventBody]>::to_vec).collect();
    let start = Instant::now();
    for chunk in batches {
        black_box(agent.append(seed.id, chunk).unwrap());
    }
    let elapsed = start.elapsed();
    assert_eq!(agent.event_count(seed.id).unwrap(), bodies.len() as u64);
    (bodies.len(), elapsed)
}

/// The baseline: the same rows into the same schema with the same pragmas,
/// written by hand with rusqlite: a cached insert statement, ids and JSON
/// made per row, one `BEGIN IMMEDIATE` per batch.
fn raw_append(path: &Path, bodies: &[EventBody], batch: usize) -> (usize, Duration) {
    let session = {
        let store = Store::open(path).unwrap();
        let agent = store.agent(&AgentId::local());
        let seed = agent.new_seed("/bench");
        agent.create_session(&seed).unwrap();
        seed.id.to_string()
    };
    let conn = Connection::open(path).unwrap();
    conn.pragma_update(None, "foreign_keys", true).unwrap();
    conn.pragma_update(None, "synchronous", "NORMAL").unwrap();
    let now = || std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64;
    let mut seq = 0i64;
    let start = Instant::now();
    for chunk in bodies.chunks(batch) {
        conn.execute_batch("BEGIN IMMEDIATE").unwrap();
        let at = now();
        let mut insert = conn
            .prepare_cached(
                "INSERT INTO session_events (id, session_id, seq, type, format_version, payload, created_at) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )
            .unwrap();
        for body in chunk {
            seq += 1;
            let id = uuid::Uuid::now_v7().hyphenated().to_string();
            let payload = body.to_payload().to_string();
            insert.execute(params![id, session, seq, body.kind(), EVENT_FORMAT_VERSION, payload, at]).unwrap();
        }
        drop(insert);
        conn.execute_batch("COMMIT").unwrap();
    }
    (bodies.len(), start.elapsed())
}

/// Loads every event of the one session in `path` and folds its
/// `SessionInfo`; the baseline parses the same payloads, already in memory,
/// into `serde_json::Value`.
fn load_and_fold(path: &Path) -> ((usize, Duration), (usize, Duration)) {
    let store = Store::open(path).unwrap();
    let agent = store.agent(&AgentId::local());
    let session = agent.most_recent_session(None).unwrap().unwrap().id;
    // Every event read and folded (what a view of the whole history costs;
    // `info` itself now starts from the session's snapshot).
    let start = Instant::now();
    let events = agent.events(session, seri_store::SeqRange::ALL).unwrap();
    let info = seri_core::SessionInfo::fold(&agent.seed(session).unwrap(), &events);
    let fold = (info.last_seq as usize, start.elapsed());
    assert_eq!(info.last_seq, EVENTS as u64);

    // The baseline decodes the same payloads into the same typed bodies.
    let payloads = raw_payloads(path, session);
    let start = Instant::now();
    for (kind, payload) in &payloads {
        black_box(EventBody::from_payload(kind, payload.as_bytes()).unwrap());
    }
    (fold, (payloads.len(), start.elapsed()))
}

fn raw_payloads(path: &Path, session: SessionId) -> Vec<(String, String)> {
    let conn = Connection::open(path).unwrap();
    let mut stmt = conn.prepare("SELECT type, payload FROM session_events WHERE session_id = ?1 ORDER BY seq").unwrap();
    stmt.query_map([session.to_string()], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().map(Result::unwrap).collect()
}

/// JSON against CBOR for the payload column: what the store would do with
/// each. Encoding goes through `to_payload` either way; JSON decodes with
/// core's own `from_payload`, CBOR straight into the typed bodies (its best
/// case: core has no CBOR decoder).
fn payload_encodings(bodies: &[EventBody]) {
    let encode_json =
        || -> Vec<Vec<u8>> { bodies.iter().map(|b| serde_json::to_vec(&b.to_payload()).unwrap()).collect() };
    let encode_cbor = || -> Vec<Vec<u8>> {
        bodies
            .iter()
            .map(|b| {
                let mut out = Vec::new();
                ciborium::into_writer(&b.to_payload(), &mut out).unwrap();
                out
            })
            .collect()
    };
    let (json, cbor) = (encode_json(), encode_cbor());
    let timed = |f: &dyn Fn()| {
        let start = Instant::now();
        f();
        rate((bodies.len(), start.elapsed()))
    };
    let (mut json_encode, mut cbor_encode, mut json_decode, mut cbor_decode_rate) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..RUNS {
        json_encode.push(timed(&|| {
            black_box(encode_json());
        }));
        cbor_encode.push(timed(&|| {
            black_box(encode_cbor());
        }));
        json_decode.push(timed(&|| {
            for (body, bytes) in bodies.iter().zip(&json) {
                black_box(EventBody::from_payload(body.kind(), bytes).unwrap());
            }
        }));
        cbor_decode_rate.push(timed(&|| {
            for (body, bytes) in bodies.iter().zip(&cbor) {
                black_box(cbor_decode(body.kind(), bytes));
            }
        }));
    }
    report("payload encode, CBOR", cbor_encode, "payload encode, JSON", json_encode);
    report("payload decode, CBOR", cbor_decode_rate, "payload decode, JSON", json_decode);
    let per_event = |v: &[Vec<u8>]| v.iter().map(Vec::len).sum::<usize>() as f64 / v.len() as f64;
    let (cbor_size, json_size) = (per_event(&cbor), per_event(&json));
    println!(
        "bench: payload size, CBOR | {cbor_size:.0} bytes/event | baseline payload size, JSON {json_size:.0} bytes/event | ratio {:.2}",
        cbor_size / json_size
    );
}

fn cbor_decode(kind: &str, bytes: &[u8]) -> EventBody {
    match kind {
        "message" => EventBody::Message(ciborium::from_reader(bytes).unwrap()),
        "thinking" => EventBody::Thinking(ciborium::from_reader(bytes).unwrap()),
        "tool_call" => EventBody::ToolCall(ciborium::from_reader(bytes).unwrap()),
        "tool_result" => EventBody::ToolResult(ciborium::from_reader(bytes).unwrap()),
        "status_changed" => EventBody::StatusChanged(ciborium::from_reader(bytes).unwrap()),
        "plan_updated" => EventBody::PlanUpdated(ciborium::from_reader(bytes).unwrap()),
        other => EventBody::Unknown { kind: other.to_owned(), payload: ciborium::from_reader(bytes).unwrap() },
    }
}

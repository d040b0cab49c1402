//! Full-text search on a profile of 10,000 sessions and 1,000,000 events
//! (100 each: questions, answers, tool calls and results, of words drawn
//! from a vocabulary of 4,000 with a few words at known frequencies),
//! written through the store's API, one transaction per session.
//!
//! Printed, each against its baseline measured in the same run:
//! - `seri search "retry policy" --all` as a whole process (start, open
//!   the profile, search, cut snippets, print), the median of the runs,
//!   against the same FTS5 query (the store's own SQL, the store's FTS5
//!   rendering of the query) run by the `sqlite3` shell on the same file
//!   (goals: ≤ 50 ms, ≤ 1.2×). The shell is `SERI_BENCH_SQLITE3` (which
//!   `cargo xtask bench` builds when the PATH's is older than SQLite 3.43,
//!   which refuses the FTS5 table's `contentless_delete`), else `sqlite3`;
//!   without one that reads the file, the line says why and the baseline is
//!   the same query through rusqlite in this process (no process start).
//! - `GET /api/search` against `seri serve` on that profile, over real
//!   HTTP with keep-alive, the 99th percentile of sequential requests,
//!   against `AgentStore::search` in this process (goal ≤ 20 ms); and on
//!   PostgreSQL when `SERI_TEST_POSTGRES_URL` names a database (`cargo
//!   xtask bench` starts a throw-away cluster), the profile copied there,
//!   against SQLite's figure (goal ≤ 2×).
//! - Appending with the index against appending without it: the same
//!   appends (a user message and an answer per call, as a turn writes
//!   them) into a store whose FTS5 table is replaced by a plain table of
//!   the same column. The baseline still writes the same rows (the
//!   `search_docs` key, the text among the pending ones, each batch moved
//!   on to that table), so the ratio is the cost of FTS5's indexing itself
//!   (goal ≥ 0.8×). Rounds alternate the two stores. They run first, on a
//!   quiet machine: after the PostgreSQL copy, that server's background
//!   work shares the cores (and the copy is vacuumed before its requests).
//!
//! `SERI_BENCH_QUICK=1` (`cargo xtask bench --quick`): 1,000 sessions of
//! 100 events, fewer runs. `SERI_BENCH_KEEP=DIR` builds the profile in
//! DIR and leaves it there.

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use seri_core::{AgentId, EventBody, Message, ToolCall, ToolResult};
use seri_store::search::{Query, SearchRequest, SearchScope};
use seri_store::{Profile, Store};

const QUERY: &str = "retry policy";
const TOKEN: &str = "bench-search-token";

fn quick() -> bool {
    std::env::var_os("SERI_BENCH_QUICK").is_some_and(|v| v == "1")
}

/// A small deterministic generator (xorshift), so every run writes the same profile.
struct Words {
    state: u64,
    vocabulary: Vec<String>,
}

impl Words {
    fn new() -> Self {
        let syllables =
            ["ka", "lo", "mi", "ren", "tu", "sa", "vel", "do", "ni", "por", "qua", "zen", "bri", "ost", "ep"];
        let mut vocabulary = Vec::new();
        'outer: for a in syllables {
            for b in syllables {
                for c in syllables {
                    vocabulary.push(format!("{a}{b}{c}"));
                    if vocabulary.len() == 3_375 {
                        break 'outer;
                    }
                }
            }
        }
        for common in ["the", "a", "file", "test", "error", "build", "crate", "function", "config", "path"] {
            vocabulary.push(common.to_owned());
        }
        Self { state: 0x9E37_79B9_7F4A_7C15, vocabulary }
    }

    fn next(&mut self) -> u64 {
        self.state ^= self.state << 13;
        self.state ^= self.state >> 7;
        self.state ^= self.state << 17;
        self.state
    }

    /// `n` words; `retry` in about one event of 100, `policy` in one of 20.
    fn text(&mut self, n: usize) -> String {
        let len = self.vocabulary.len() as u64;
        let picked: Vec<usize> = (0..n).map(|_| (self.next() % len) as usize).collect();
        let roll = self.next() % 100;
        let out: Vec<&str> = picked.iter().map(|&i| self.vocabulary[i].as_str()).collect();
        let mut extra = Vec::new();
        if roll == 0 {
            extra.push("retry");
        }
        if roll % 20 == 1 || roll == 0 {
            extra.push("policy");
        }
        let mut text = out.join(" ");
        for word in extra {
            text.push(' ');
            text.push_str(word);
        }
        text
    }
}

/// One turn's events: a question, a tool call and its result, an answer.
fn turn(words: &mut Words, n: usize) -> [EventBody; 4] {
    let call = format!("c{n}");
    [
        EventBody::Message(Message::user(words.text(20))),
        EventBody::ToolCall(ToolCall {
            id: call.as_str().into(),
            name: "grep".to_owned(),
            arguments: serde_json::json!({ "pattern": words.text(2), "path": "crates/providers" }),
        }),
        EventBody::ToolResult(ToolResult {
            tool_call_id: call.as_str().into(),
            name: "grep".to_owned(),
            content: words.text(40),
            is_error: false,
            facts: None,
        }),
        EventBody::Message(Message::assistant(words.text(30))),
    ]
}

/// The profile: `sessions` sessions of `per` events in 40 folders.
fn build(home: &Path, sessions: usize, per: usize) {
    let profile = Profile::at(home);
    profile.create().unwrap();
    let store = profile.open_store().unwrap();
    let agent = store.agent(&AgentId::local());
    let mut words = Words::new();
    let started = Instant::now();
    for n in 0..sessions {
        let seed = agent.new_seed(format!("/work/project-{}", n % 40));
        let id = agent.create_session(&seed).unwrap().id;
        let mut bodies = Vec::with_capacity(per);
        while bodies.len() < per {
            bodies.extend(turn(&mut words, bodies.len()));
        }
        bodies.truncate(per);
        agent.append(id, bodies).unwrap();
    }
    println!(
        "bench search: wrote {sessions} sessions, {} events in {:.1} s",
        sessions * per,
        started.elapsed().as_secs_f64()
    );
}

fn main() {
    let (sessions, per, runs, requests) = if quick() { (1_000, 100, 7, 100) } else { (10_000, 100, 11, 400) };
    let dir = tempfile::tempdir().unwrap();
    let base = std::env::var_os("SERI_BENCH_KEEP").map(PathBuf::from).unwrap_or_else(|| dir.path().to_path_buf());
    let home = base.join("home");
    // First, on a quiet machine: after the PostgreSQL copy below, that
    // server's background work would share the two cores with them.
    appends(&base, if quick() { 2_000 } else { 20_000 }, if quick() { 3 } else { 5 });
    if !home.join("seri.db").exists() {
        build(&home, sessions, per);
    }
    let _ = Command::new("sync").status();
    let events = sessions * per;
    whole_process(&home, sessions, events, runs);
    let sqlite_p99 = api(&home, None, requests, &format!("SQLite, {sessions} sessions, {events} events"), None);
    if let Ok(base) = std::env::var("SERI_TEST_POSTGRES_URL")
        && !base.is_empty()
    {
        let url = fresh_schema(&base);
        let started = Instant::now();
        let source = Profile::at(&home).open_store().unwrap();
        let target = Store::open_url(Some(&url), &home.join("unused.db"), seri_store::StoreOptions::default()).unwrap();
        source.copy_into(&target).unwrap();
        drop((source, target));
        println!("bench search: copied the profile to PostgreSQL in {:.1} s", started.elapsed().as_secs_f64());
        settle(&url);
        api(
            &home,
            Some(&url),
            requests,
            &format!("PostgreSQL, {sessions} sessions, {events} events"),
            Some(sqlite_p99),
        );
    } else {
        println!("bench search: SERI_TEST_POSTGRES_URL is not set, so no PostgreSQL figure for GET /api/search");
    }
}

/// (a) `seri search` as a whole process against the `sqlite3` shell.
fn whole_process(home: &Path, sessions: usize, events: usize, runs: usize) {
    let db = home.join("seri.db");
    let fts5 = Query::parse(QUERY).unwrap().to_fts5().replace('\'', "''");
    let agent = AgentId::local();
    // The store's own statements for these hits (`db/search.rs`, a search
    // of every session): FTS5's best 60 by its rank, and those joined to
    // their sessions and events, the best 20 kept; as one statement.
    let sql = format!(
        "SELECT e.id, e.session_id, e.seq, e.type, e.format_version, e.payload, e.created_at, \
                c.score, s.title, s.cwd \
         FROM (SELECT rowid AS doc, -rank AS score FROM search_text \
               WHERE search_text MATCH '{fts5}' ORDER BY rank, rowid DESC LIMIT 60) c \
         CROSS JOIN search_docs d ON d.doc = c.doc \
         CROSS JOIN session_events e ON e.session_id = d.session_id AND e.seq = d.seq \
         CROSS JOIN sessions s ON s.id = d.session_id \
         WHERE s.agent_id = '{}' \
         ORDER BY c.score DESC, c.doc DESC LIMIT 20;",
        agent.as_str()
    );
    // The shell must be one that reads this file: an older SQLite than the
    // bundled one refuses FTS5's `contentless_delete` (3.43). `cargo xtask
    // bench` builds one when the PATH's is older and names it in
    // `SERI_BENCH_SQLITE3`. Without one the baseline is the query
    // in-process, and the line says why.
    let sqlite3 = std::env::var_os("SERI_BENCH_SQLITE3").unwrap_or_else(|| "sqlite3".into());
    let shell = match Command::new(&sqlite3).arg(&db).arg(&sql).output() {
        Ok(out) if out.status.success() && !out.stdout.is_empty() => Ok(()),
        Ok(out) => Err(format!(
            "the sqlite3 shell here cannot run it: {}",
            String::from_utf8_lossy(&out.stderr).trim().replace('|', "/")
        )),
        Err(e) => Err(format!("no sqlite3 shell here: {e}")),
    };
    let (mut seri, mut baseline) = (Vec::new(), Vec::new());
    let search = || {
        let started = Instant::now();
        let out = Command::new(env!("CARGO_BIN_EXE_seri"))
            .args(["search", QUERY, "--all", "--limit", "20"])
            .env("SERI_HOME", home)
            .current_dir(home)
            .output()
            .unwrap();
        let elapsed = started.elapsed();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert!(String::from_utf8_lossy(&out.stdout).contains("«retry»"), "seri search found nothing");
        elapsed
    };
    let connection = rusqlite::Connection::open(&db).unwrap();
    for _ in 0..runs {
        seri.push(search());
        let started = Instant::now();
        if shell.is_ok() {
            let out = Command::new(&sqlite3).arg(&db).arg(&sql).output().unwrap();
            assert!(out.status.success(), "sqlite3: {}", String::from_utf8_lossy(&out.stderr));
            assert!(!out.stdout.is_empty(), "sqlite3 found nothing");
        } else {
            let mut statement = connection.prepare_cached(&sql).unwrap();
            let rows = statement.query_map([], |r| r.get::<_, String>(1)).unwrap().count();
            assert!(rows > 0);
        }
        baseline.push(started.elapsed());
    }
    let (m, lo, hi) = spread(seri);
    let (bm, blo, bhi) = spread(baseline);
    let what = match &shell {
        Ok(()) => "the same FTS5 query by the sqlite3 shell on the same file".to_owned(),
        Err(why) => format!("the same FTS5 query through rusqlite in-process, no process start ({why})"),
    };
    println!(
        "bench: seri search \"{QUERY}\" --all, whole process, {sessions} sessions, {events} events (median of {runs}: {lo:.1}–{hi:.1} ms; goals ≤ 50 ms, ≤ 1.2×) | {m:.1} ms | baseline {what} ({blo:.1}–{bhi:.1}) {bm:.1} ms | ratio {:.2}",
        m / bm
    );
}

/// (b) `GET /api/search` p99 over HTTP against `seri serve` on the
/// profile (or on `store_url`), against the store's search in-process.
/// Returns the HTTP p99 in milliseconds.
fn api(home: &Path, store_url: Option<&str>, requests: usize, what: &str, sqlite_p99: Option<f64>) -> f64 {
    let mut command = Command::new(env!("CARGO_BIN_EXE_seri"));
    command
        .args(["serve", "--port", "0", "--provider", "script", "--script", "/dev/null"])
        .env("SERI_HOME", home)
        .env("SERI_SERVER_TOKEN", TOKEN)
        .current_dir(home)
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    if let Some(url) = store_url {
        command.env("SERI_STORE_URL", url);
    }
    let mut server = Served(command.spawn().unwrap());
    let mut line = String::new();
    BufReader::new(server.0.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let address = line.trim().trim_start_matches("http://").to_owned();
    assert!(address.starts_with("127.0.0.1:"), "seri serve said {line}");
    let mut stream = TcpStream::connect(&address).unwrap();
    stream.set_nodelay(true).unwrap();
    let path = format!("/api/search?q={}&limit=20", QUERY.replace(' ', "%20"));
    let mut http = Vec::with_capacity(requests);
    for i in 0..requests + 10 {
        let started = Instant::now();
        let body = get(&mut stream, &address, &path);
        let elapsed = started.elapsed();
        assert!(body.contains("«retry»"), "GET /api/search found nothing: {body}");
        if i >= 10 {
            http.push(elapsed);
        }
    }
    drop(server);
    let store = Store::open_url(store_url, &home.join("seri.db"), seri_store::StoreOptions::default()).unwrap();
    // The page cache `seri serve` keeps, so the baseline differs by HTTP only.
    store.keep_pages_cached(32 * 1024 * 1024).unwrap();
    let agent = store.agent(&AgentId::local());
    let mut request = SearchRequest::new(Query::parse(QUERY).unwrap());
    request.limit = 20;
    request.scope = SearchScope::All;
    let mut direct = Vec::with_capacity(requests);
    for i in 0..requests + 10 {
        let started = Instant::now();
        let hits = agent.search(&request).unwrap();
        let elapsed = started.elapsed();
        assert!(!hits.is_empty());
        if i >= 10 {
            direct.push(elapsed);
        }
    }
    let (p, p50) = (p99(&mut http), median(&mut http));
    let (dp, d50) = (p99(&mut direct), median(&mut direct));
    println!(
        "bench: GET /api/search?q={QUERY}, p99 of {requests} sequential requests, {what} (median {p50:.2} ms; goal ≤ 20 ms on SQLite) | {p:.2} ms | baseline AgentStore::search in-process, p99 (median {d50:.2}) {dp:.2} ms | ratio {:.2}",
        p / dp
    );
    if let Some(sqlite) = sqlite_p99 {
        println!(
            "bench: GET /api/search p99 on PostgreSQL against SQLite, the same profile (goal ≤ 2×) | {p:.2} ms | baseline SQLite {sqlite:.2} ms | ratio {:.2}",
            p / sqlite
        );
    }
    p
}

/// `seri serve`, stopped when dropped.
struct Served(Child);

impl Drop for Served {
    fn drop(&mut self) {
        let _ = Command::new("kill").args(["-TERM", &self.0.id().to_string()]).status();
        let _ = self.0.wait();
    }
}

/// One GET over a kept-alive HTTP/1.1 connection: the body.
fn get(stream: &mut TcpStream, host: &str, path: &str) -> String {
    write!(stream, "GET {path} HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {TOKEN}\r\n\r\n").unwrap();
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        stream.read_exact(&mut byte).unwrap();
        head.push(byte[0]);
    }
    let head = String::from_utf8(head).unwrap();
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let length: usize = head
        .lines()
        .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().parse().unwrap()))
        .expect("a content-length");
    let mut body = vec![0u8; length];
    stream.read_exact(&mut body).unwrap();
    String::from_utf8(body).unwrap()
}

/// (c) Appending with the FTS5 index against the same store whose FTS5
/// table is a plain table: `events` events per round and store, in
/// appends of two (a question and its answer).
fn appends(base: &Path, events: usize, rounds: usize) {
    let indexed = base.join("append-indexed");
    let plain = base.join("append-plain");
    for home in [&indexed, &plain] {
        let _ = std::fs::remove_dir_all(home);
        Profile::at(home).create().unwrap();
        drop(Profile::at(home).open_store().unwrap());
    }
    {
        let connection = rusqlite::Connection::open(plain.join("seri.db")).unwrap();
        connection.execute_batch("DROP TABLE search_text; CREATE TABLE search_text (text TEXT);").unwrap();
    }
    let stores = [Profile::at(&indexed).open_store().unwrap(), Profile::at(&plain).open_store().unwrap()];
    let mut words = Words::new();
    let mut rates: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    for _ in 0..rounds {
        for (store, rates) in stores.iter().zip(&mut rates) {
            let agent = store.agent(&AgentId::local());
            let id = agent.create_session(&agent.new_seed("/work/append")).unwrap().id;
            let turns: Vec<[EventBody; 2]> = (0..events / 2)
                .map(|_| {
                    [
                        EventBody::Message(Message::user(words.text(20))),
                        EventBody::Message(Message::assistant(words.text(30))),
                    ]
                })
                .collect();
            let started = Instant::now();
            for pair in turns {
                agent.append(id, pair).unwrap();
            }
            rates.push(events as f64 / started.elapsed().as_secs_f64());
        }
    }
    let [with, without] = rates.map(|mut r| {
        r.sort_by(f64::total_cmp);
        r[r.len() / 2]
    });
    println!(
        "bench: append with the search index, {events} events per round in appends of 2 (median of {rounds}; goal ≥ 0.8×) | {with:.0} events/s | baseline the same store with its FTS5 table a plain table (the rows written, no words indexed) {without:.0} events/s | ratio {:.2}",
        with / without
    );
}

/// The median, fastest and slowest, in milliseconds.
fn spread(mut times: Vec<Duration>) -> (f64, f64, f64) {
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    times.sort();
    (ms(times[times.len() / 2]), ms(times[0]), ms(times[times.len() - 1]))
}

fn p99(times: &mut [Duration]) -> f64 {
    times.sort();
    times[(times.len() * 99 / 100).min(times.len() - 1)].as_secs_f64() * 1e3
}

fn median(times: &mut [Duration]) -> f64 {
    times.sort();
    times[times.len() / 2].as_secs_f64() * 1e3
}

/// After a bulk copy PostgreSQL's autovacuum soon vacuums the new tables,
/// for a minute or more of one core: done here first (with `psql`, when
/// there is one), so the requests measure the server, not that.
fn settle(url: &str) {
    let started = Instant::now();
    match Command::new("psql").args([url, "-qc", "VACUUM (ANALYZE)"]).output() {
        Ok(out) if out.status.success() => {
            println!("bench search: vacuumed the copy in {:.1} s", started.elapsed().as_secs_f64());
        }
        Ok(out) => println!(
            "bench search: could not vacuum the copy, so autovacuum may run meanwhile: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ),
        Err(e) => println!("bench search: no psql to vacuum the copy, so autovacuum may run meanwhile: {e}"),
    }
}

/// The database at `base` with a fresh schema of its own as search_path.
fn fresh_schema(base: &str) -> String {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let join = if base.contains('?') { '&' } else { '?' };
    format!("{base}{join}options=-csearch_path%3Dbench_search_{}_{nanos}", std::process::id())
}

//! Session lists as the stores grow, on SQLite and on PostgreSQL (when
//! `SERI_TEST_POSTGRES_URL` names a database; `cargo xtask bench` starts a
//! throw-away cluster):
//!
//! - the server's paged list (`GET /api/sessions?limit=20`: the 20 most
//!   recently updated sessions, children left out) at 1,000 sessions
//!   against the same page at 100,000, on each backend: goal ≤ 2×, a page
//!   that stays flat however many sessions the store holds;
//! - every session listed (`seri sessions list`) at 10,000 sessions,
//!   PostgreSQL against SQLite: goal ≤ 1.5×.
//!
//! Each session is created as a real one is (its seed holds a frozen
//! prompt of a real one's size) and holds a question and its answer. One
//! store per backend grows through the sizes, and each figure is measured
//! at its size: the median of its runs, with the fastest and slowest.
//! `SERI_BENCH_QUICK=1` (`cargo xtask bench --quick`) grows it to 10,000
//! sessions, not 100,000, and lists all at 2,000.

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::path::Path;
use std::time::Instant;

use seri_core::{AgentId, EventBody, FrozenPrompt, Message};
use seri_store::{SessionQuery, Store, StoreOptions};

/// Paged lists per figure, and whole lists.
const PAGES: usize = 50;
const LISTS: usize = 7;

fn main() {
    let quick = std::env::var_os("SERI_BENCH_QUICK").is_some_and(|v| v == "1");
    let (small, listed, large) = if quick { (1_000, 2_000, 10_000) } else { (1_000, 10_000, 100_000) };
    let dir = tempfile::tempdir().unwrap();
    let sqlite = Store::open(dir.path().join("seri.db")).unwrap();
    let postgres = std::env::var("SERI_TEST_POSTGRES_URL").ok().filter(|u| !u.is_empty()).map(|base| {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        let join = if base.contains('?') { '&' } else { '?' };
        let url = format!("{base}{join}options=-csearch_path%3Dbench_sessions_{nanos}");
        Store::open_url(Some(&url), Path::new("unused.db"), StoreOptions::default()).unwrap()
    });
    if postgres.is_none() {
        println!("session lists on PostgreSQL: skipped (SERI_TEST_POSTGRES_URL is not set; cargo xtask bench sets it)");
    }
    let stores: Vec<(&str, &Store)> =
        std::iter::once(("SQLite", &sqlite)).chain(postgres.as_ref().map(|s| ("PostgreSQL", s))).collect();

    let mut small_pages = Vec::new();
    for (_, store) in &stores {
        grow(store, small);
        small_pages.push(times(PAGES, || page(store)));
    }
    let mut lists = Vec::new();
    for (_, store) in &stores {
        grow(store, listed);
        lists.push(times(LISTS, || {
            let all = store.agent(&AgentId::local()).list_sessions(&SessionQuery::default()).unwrap();
            assert_eq!(all.len(), listed);
            black_box(all);
        }));
    }
    let mut large_pages = Vec::new();
    for (_, store) in &stores {
        grow(store, large);
        large_pages.push(times(PAGES, || page(store)));
    }
    for ((backend, _), (large_page, small_page)) in stores.iter().zip(large_pages.into_iter().zip(small_pages)) {
        report(
            &format!("paged session list (20 of {large}), {backend} (goal ≤ 2×)"),
            large_page,
            &format!("the same page of {small} sessions"),
            small_page,
        );
    }
    if let [sqlite_list, postgres_list] = lists.as_slice() {
        report(
            &format!("list all {listed} sessions, PostgreSQL (goal ≤ 1.5×)"),
            postgres_list.clone(),
            "the same on SQLite",
            sqlite_list.clone(),
        );
    }
}

/// The first page of the server's session list.
fn page(store: &Store) {
    let query = SessionQuery { limit: Some(20), without_children: true, ..SessionQuery::default() };
    let page = store.agent(&AgentId::local()).list_sessions(&query).unwrap();
    assert_eq!(page.len(), 20);
    black_box(page);
}

/// Creates sessions until `store` holds `sessions`, on four threads (on
/// PostgreSQL a transaction waits for its round trips).
fn grow(store: &Store, sessions: usize) {
    let agent = store.agent(&AgentId::local());
    let have = agent.list_sessions(&SessionQuery::default()).unwrap().len();
    let prompt = FrozenPrompt { text: "You are seri. ".repeat(180), ..FrozenPrompt::default() };
    std::thread::scope(|scope| {
        for thread in 0..4 {
            let prompt = prompt.clone();
            scope.spawn(move || {
                let agent = store.agent(&AgentId::local());
                for n in (have + thread..sessions).step_by(4) {
                    let mut seed = agent.new_seed(format!("/work/project-{}", n % 40));
                    seed.system_prompt = Some(prompt.clone());
                    let id = agent.create_session(&seed).unwrap().id;
                    let bodies = [
                        EventBody::Message(Message::user(format!("Task {n}: fix the parser"))),
                        EventBody::Message(Message::assistant("Done.")),
                    ];
                    agent.append(id, bodies).unwrap();
                }
            });
        }
    });
}

/// `runs` timings of `f`, in milliseconds.
fn times(runs: usize, mut f: impl FnMut()) -> Vec<f64> {
    (0..runs)
        .map(|_| {
            let started = Instant::now();
            f();
            started.elapsed().as_secs_f64() * 1e3
        })
        .collect()
}

/// One figure: lower is better for both, so the ratio is figure / baseline, of medians.
fn report(what: &str, mut values: Vec<f64>, baseline: &str, mut bases: Vec<f64>) {
    let spread = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        (v[v.len() / 2], v[0], v[v.len() - 1])
    };
    let ((value, lo, hi), (base, blo, bhi)) = (spread(&mut values), spread(&mut bases));
    let runs = values.len();
    println!(
        "bench: {what} (median of {runs}: {lo:.2}–{hi:.2} ms) | {value:.2} ms | baseline {baseline} ({blo:.2}–{bhi:.2}) {base:.2} ms | ratio {:.2}",
        value / base
    );
}

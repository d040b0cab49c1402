//! What a client that has not shown a token can make the server hold, over
//! real sockets: a wrong token is answered before the body is read, every
//! route refuses a body past its limit naming it, headers and bodies that
//! trickle are cut off after a bounded time whatever their pace, one
//! address cannot hold every connection without a token, and the whole
//! attack at once (hundreds of trickling connections, bodies of 27 MiB)
//! leaves the server's memory bounded and health answered.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use seri_server::ServerConfig;
use seri_server::limits::{self, Takes};
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpSocket, TcpStream};

use crate::support::{Server, TOKEN};

/// A generous bound on anything the server is expected to do soon.
const SOON: Duration = Duration::from_secs(10);

fn address(url: &str) -> SocketAddr {
    url.trim_start_matches("http://").parse().unwrap()
}

/// A connection to `server` from the loopback address `127.0.0.{from}`:
/// another client, as far as the server can tell.
async fn connect_from(server: SocketAddr, from: u8) -> std::io::Result<TcpStream> {
    let socket = TcpSocket::new_v4()?;
    socket.bind(SocketAddr::new(IpAddr::V4(Ipv4Addr::new(127, 0, 0, from)), 0))?;
    socket.connect(server).await
}

/// Reads one answer's head (up to its blank line) and as much body as the
/// server sends until it closes or `SOON` passes.
async fn answer_of(stream: &mut TcpStream) -> String {
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(SOON, stream.read_to_end(&mut answer)).await;
    String::from_utf8_lossy(&answer).into_owned()
}

/// The status of an answer.
fn status_of(answer: &str) -> u16 {
    answer.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0)
}

/// The JSON body of an answer.
fn body_of(answer: &str) -> Value {
    let body = answer.split_once("\r\n\r\n").map(|(_, b)| b).unwrap_or_default();
    serde_json::from_str(body).unwrap_or(Value::Null)
}

/// A route template with its parameters filled in.
fn concrete(path: &str) -> String {
    path.replace("{id}", "01970000-0000-7000-8000-000000000000")
        .replace("{runId}", "01970000-0000-7000-8000-000000000001")
        .replace("{callId}", "call_1")
}

#[tokio::test]
async fn a_wrong_or_missing_token_is_refused_before_the_body_is_read() {
    let server = Server::start(json!([])).await;
    let at = address(&server.url);
    for authorization in ["Authorization: Bearer not-a-token\r\n", ""] {
        let mut stream = TcpStream::connect(at).await.unwrap();
        // Headers that promise 20 MB, and not a byte of them sent.
        let head = format!(
            "POST {} HTTP/1.1\r\nHost: {at}\r\n{authorization}Content-Type: application/json\r\n\
             Content-Length: 20000000\r\n\r\n",
            concrete(seri_server::paths::SESSION_MESSAGES)
        );
        stream.write_all(head.as_bytes()).await.unwrap();
        let answer = answer_of(&mut stream).await;
        assert_eq!(status_of(&answer), 401, "{answer}");
        assert!(answer.to_ascii_lowercase().contains("connection: close"), "the connection is closed: {answer}");
        assert_eq!(body_of(&answer)["error"]["code"], "unauthorized", "{answer}");
    }
    // The same on a control route, and a token that is right is not refused.
    let mut stream = TcpStream::connect(at).await.unwrap();
    let head = format!(
        "POST /api/sessions HTTP/1.1\r\nHost: {at}\r\nAuthorization: Bearer {TOKEN}\r\n\
         Content-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{{}}"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    assert_eq!(status_of(&answer_of(&mut stream).await), 201);
    server.stop().await;
}

#[tokio::test]
async fn every_route_refuses_a_body_past_its_limit_naming_it() {
    let server = Server::start(json!([])).await;
    let at = address(&server.url);
    let config = ServerConfig::default();
    let mut checked = 0;
    for route in limits::ROUTES.iter().filter(|r| r.takes != Takes::Nothing) {
        let limit = route.takes.limit(&config);
        let mut stream = TcpStream::connect(at).await.unwrap();
        let head = format!(
            "{} {} HTTP/1.1\r\nHost: {at}\r\nAuthorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\n\r\n",
            route.method,
            concrete(route.path),
            limit + 1
        );
        stream.write_all(head.as_bytes()).await.unwrap();
        let answer = answer_of(&mut stream).await;
        assert_eq!(status_of(&answer), 413, "{} {}: {answer}", route.method, route.path);
        let error = &body_of(&answer)["error"];
        assert_eq!(error["code"], "too_large", "{answer}");
        let message = error["message"].as_str().unwrap();
        assert!(message.contains(&limits::size(limit)), "{} {} names its limit: {message}", route.method, route.path);
        checked += 1;
    }
    assert!(checked >= 8, "every route that takes a body: {checked}");

    // A body that does not say its length is refused once it grows past
    // the limit, and one within it is taken.
    let mut stream = TcpStream::connect(at).await.unwrap();
    let chunk = format!("{{\"title\": \"{}\"}}", "x".repeat(64 * 1024));
    let head = format!(
        "POST /api/sessions HTTP/1.1\r\nHost: {at}\r\nAuthorization: Bearer {TOKEN}\r\n\
         Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{chunk}\r\n0\r\n\r\n",
        chunk.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let answer = answer_of(&mut stream).await;
    assert_eq!(status_of(&answer), 413, "{answer}");
    assert!(body_of(&answer)["error"]["message"].as_str().unwrap().contains("64 KiB"), "{answer}");
    let taken = server.post("/api/sessions", json!({ "title": "x".repeat(60 * 1024) })).send().await.unwrap();
    assert_eq!(taken.status(), 201);
    server.stop().await;
}

/// Writes `head`, then `trickle` one byte every 200 ms, until the server
/// answers and closes; the answer and how long that took.
async fn trickle(at: SocketAddr, head: String, trickle: u8) -> (String, Duration) {
    let started = Instant::now();
    let stream = TcpStream::connect(at).await.unwrap();
    let (mut reader, mut writer) = stream.into_split();
    writer.write_all(head.as_bytes()).await.unwrap();
    let dripping = tokio::spawn(async move {
        loop {
            tokio::time::sleep(Duration::from_millis(200)).await;
            if writer.write_all(&[trickle]).await.is_err() {
                return;
            }
        }
    });
    let mut answer = Vec::new();
    let ended = tokio::time::timeout(SOON, reader.read_to_end(&mut answer)).await;
    dripping.abort();
    assert!(ended.is_ok(), "a trickling client was never cut off");
    (String::from_utf8_lossy(&answer).into_owned(), started.elapsed())
}

#[tokio::test]
async fn headers_and_bodies_that_trickle_are_cut_off_after_a_bounded_time() {
    let config = ServerConfig {
        header_timeout: Duration::from_secs(1),
        body_timeout: Duration::from_secs(1),
        ..ServerConfig::default()
    };
    let server = Server::with(json!([]), config).await;
    let at = address(&server.url);

    // Headers that never end, a byte at a time: no gap is long, the whole is.
    let (answer, took) = trickle(at, format!("GET /api/health HTTP/1.1\r\nHost: {at}\r\nX-Slow: "), b'a').await;
    assert_eq!(status_of(&answer), 408, "{answer}");
    assert_eq!(body_of(&answer)["error"]["code"], "header_timeout", "{answer}");
    assert!(took < Duration::from_secs(5), "cut off after {took:?}");

    // A body of 100 bytes at 5 bytes a second, from a caller with a token.
    let head = format!(
        "POST /api/sessions HTTP/1.1\r\nHost: {at}\r\nAuthorization: Bearer {TOKEN}\r\n\
         Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"title\": \""
    );
    let (answer, took) = trickle(at, head, b'a').await;
    assert_eq!(status_of(&answer), 408, "{answer}");
    assert_eq!(body_of(&answer)["error"]["code"], "body_timeout", "{answer}");
    assert!(took < Duration::from_secs(5), "cut off after {took:?}");
    assert_eq!(server.get_json("/api/sessions").await["sessions"], json!([]), "nothing was written");
    server.stop().await;
}

#[tokio::test]
async fn one_address_cannot_hold_every_connection_without_a_token() {
    let config = ServerConfig { max_unauthenticated_per_client: 3, ..ServerConfig::default() };
    let server = Server::with(json!([]), config).await;
    let at = address(&server.url);
    let health = format!("GET /api/health HTTP/1.1\r\nHost: {at}\r\n\r\n");
    // Three connections from 127.0.0.5, each served once without a token
    // (so surely accepted), then held open.
    let mut held = Vec::new();
    for _ in 0..3 {
        let mut stream = connect_from(at, 5).await.unwrap();
        stream.write_all(health.as_bytes()).await.unwrap();
        let mut head = [0u8; 12];
        stream.read_exact(&mut head).await.unwrap();
        assert_eq!(&head, b"HTTP/1.1 200");
        let mut rest = [0u8; 4096];
        let _ = stream.read(&mut rest).await.unwrap();
        held.push(stream);
    }
    // A fourth from there is refused at once, saying when to try again.
    let mut refused = connect_from(at, 5).await.unwrap();
    let answer = answer_of(&mut refused).await;
    assert_eq!(status_of(&answer), 429, "{answer}");
    assert!(answer.to_ascii_lowercase().contains("retry-after:"), "{answer}");
    assert_eq!(body_of(&answer)["error"]["code"], "too_many_connections", "{answer}");
    // Another address is served, health and a caller with a token alike.
    let other = reqwest::Client::builder().local_address(IpAddr::V4(Ipv4Addr::new(127, 0, 0, 6))).build().unwrap();
    let answered = other.get(format!("{}/api/health", server.url)).send().await.unwrap();
    assert_eq!(answered.status(), 200);
    let answered = other.get(format!("{}/api/sessions", server.url)).bearer_auth(TOKEN).send().await.unwrap();
    assert_eq!(answered.status(), 200);
    // One of the three shows a token: it no longer counts, and the address
    // may open another.
    let listing = format!("GET /api/sessions HTTP/1.1\r\nHost: {at}\r\nAuthorization: Bearer {TOKEN}\r\n\r\n");
    held[0].write_all(listing.as_bytes()).await.unwrap();
    let mut head = [0u8; 12];
    held[0].read_exact(&mut head).await.unwrap();
    assert_eq!(&head, b"HTTP/1.1 200");
    let mut again = connect_from(at, 5).await.unwrap();
    again
        .write_all(format!("GET /api/health HTTP/1.1\r\nHost: {at}\r\nConnection: close\r\n\r\n").as_bytes())
        .await
        .unwrap();
    assert_eq!(status_of(&answer_of(&mut again).await), 200);
    drop(held);
    server.stop().await;
}

/// The memory test's server, in a process of its own (the memory test
/// starts this binary again with only this test and
/// `SERI_MEMORY_TEST_SERVER` set): serves, prints its URL, and stops when
/// its standard input closes. Run as an ordinary test, it does nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_test_server() {
    if std::env::var_os("SERI_MEMORY_TEST_SERVER").is_none() {
        return;
    }
    let server = Server::start(json!([])).await;
    println!("SERVING {}", server.url);
    let _ = tokio::task::spawn_blocking(|| {
        let mut line = String::new();
        std::io::stdin().read_line(&mut line)
    })
    .await;
    server.stop().await;
}

/// A process's resident memory now and at its peak, in KiB.
fn memory_of(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap()
    };
    (field("VmRSS:"), field("VmHWM:"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_stays_bounded_and_health_answers_under_unauthenticated_attack() {
    // reqwest has no crypto provider of its own (see `support`).
    let _ = rustls::crypto::ring::default_provider().install_default();
    // The server in a process of its own, so that what it holds is all
    // that its memory counts.
    let mut child = tokio::process::Command::new(std::env::current_exe().unwrap())
        .args(["bounded::memory_test_server", "--exact", "--nocapture", "--test-threads=1"])
        .env("SERI_MEMORY_TEST_SERVER", "1")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let pid = child.id().unwrap();
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let url = tokio::time::timeout(SOON, async {
        while let Some(line) = lines.next_line().await.unwrap() {
            // The test harness's own words may come first on the line.
            if let Some((_, url)) = line.split_once("SERVING ") {
                return url.trim().to_owned();
            }
        }
        panic!("the server process ended before it served");
    })
    .await
    .expect("the server process started");
    let at = address(&url);
    let (before, _) = memory_of(pid);
    let attack = Duration::from_secs(12);
    let until = Instant::now() + attack;

    // 300 connections from three addresses, each trickling its headers a
    // byte a second, and starting again whenever it is cut off or refused.
    let mut attackers = Vec::new();
    for n in 0..300u32 {
        let from = 10 + u8::try_from(n % 3).unwrap();
        attackers.push(tokio::spawn(async move {
            while Instant::now() < until {
                let Ok(mut stream) = connect_from(at, from).await else {
                    tokio::time::sleep(Duration::from_millis(500)).await;
                    continue;
                };
                let head = format!("POST /api/sessions HTTP/1.1\r\nHost: {at}\r\nContent-Length: 27000000\r\nX-Slow: ");
                if stream.write_all(head.as_bytes()).await.is_ok() {
                    while Instant::now() < until && stream.write_all(b"a").await.is_ok() {
                        tokio::time::sleep(Duration::from_secs(1)).await;
                    }
                }
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
        }));
    }
    // 40 connections that send a message of 27 MiB with a wrong token (or
    // with a right one, to a route that takes 64 KiB) as fast as they can.
    let body = vec![b'a'; 64 * 1024];
    for n in 0..40u32 {
        let body = body.clone();
        attackers.push(tokio::spawn(async move {
            while Instant::now() < until {
                let Ok(mut stream) = connect_from(at, 20).await else {
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    continue;
                };
                let (path, token) = if n % 4 == 0 {
                    ("/api/sessions".to_owned(), TOKEN)
                } else {
                    (concrete(seri_server::paths::SESSION_MESSAGES), "wrong")
                };
                let head = format!(
                    "POST {path} HTTP/1.1\r\nHost: {at}\r\nAuthorization: Bearer {token}\r\n\
                     Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
                    27 * 1024 * 1024 - 1
                );
                if stream.write_all(head.as_bytes()).await.is_ok() {
                    let mut sent = 0;
                    while sent < 27 * 1024 * 1024 - body.len() && Instant::now() < until {
                        if stream.write_all(&body).await.is_err() {
                            break;
                        }
                        sent += body.len();
                    }
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }));
    }

    // Meanwhile health (from one address) and a caller with a token (from
    // another) are answered, each within 5 s, every time they ask.
    let health = reqwest::Client::builder()
        .local_address(IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2)))
        .timeout(Duration::from_secs(5))
        .build()
        .unwrap();
    let caller = reqwest::Client::builder()
        .local_address(IpAddr::V4(Ipv4Addr::new(127, 0, 0, 3)))
        .timeout(Duration::from_secs(5))
        .build()
        .unwrap();
    let (mut asked, mut peak) = (0, 0);
    while Instant::now() < until {
        let answered = health.get(format!("{url}/api/health")).send().await.expect("health answered within 5 s");
        assert_eq!(answered.status(), 200);
        let answered = caller
            .post(format!("{url}/api/sessions"))
            .bearer_auth(TOKEN)
            .json(&json!({ "title": "under attack" }))
            .send()
            .await
            .expect("a caller with a token answered within 5 s");
        assert_eq!(answered.status(), 201);
        let answered = caller.get(format!("{url}/api/sessions?limit=1")).bearer_auth(TOKEN).send().await.unwrap();
        assert_eq!(answered.status(), 200);
        asked += 1;
        peak = peak.max(memory_of(pid).0);
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    for attacker in attackers {
        attacker.await.unwrap();
    }
    let (after, high_water) = memory_of(pid);
    eprintln!(
        "server memory: {before} KiB before, {peak} KiB at most sampled, {after} KiB after, {high_water} KiB peak; \
         {asked} rounds answered"
    );
    assert!(asked >= 10, "health and the caller were asked throughout: {asked}");
    // 40 bodies of 27 MiB held would be over 1 GiB; what the server may hold
    // is its connections' header buffers (64 KiB each) and the bodies of
    // callers with tokens, up to each route's limit.
    let bound = 150 * 1024;
    assert!(high_water < before + bound, "the server grew from {before} KiB to a peak of {high_water} KiB");
    drop(child.stdin.take());
    let _ = tokio::time::timeout(SOON, child.wait()).await;
}

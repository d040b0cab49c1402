//! The server against hostile pages and clients, over real sockets: writes
//! signed by the UI's cookie from another origin refused (bearer writes
//! untouched), a `Host` that is not the server's refused, connections slow
//! to send their headers or idle closed, the connection cap holding while
//! health still answers, and health saying when the store is gone.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};
use seri_server::ServerConfig;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

use crate::support::{Server, TOKEN, fresh_postgres_url, text};

/// A generous bound on anything the server is expected to do soon.
const SOON: Duration = Duration::from_secs(30);

fn address(server: &Server) -> String {
    server.url.trim_start_matches("http://").to_owned()
}

/// Sends `request` on a new connection and reads the answer until the
/// server closes: its status and body.
async fn raw(server: &Server, request: String) -> (u16, String) {
    let mut stream = TcpStream::connect(address(server)).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(SOON, stream.read_to_end(&mut answer)).await.expect("the server answered and closed").unwrap();
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let status = answer.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let body = answer.split_once("\r\n\r\n").map(|(_, b)| b.to_owned()).unwrap_or_default();
    (status, body)
}

/// `GET /api/health` with `host` as the `Host` header (none when `None`).
async fn health_for_host(server: &Server, host: Option<&str>) -> (u16, String) {
    let host = host.map(|h| format!("Host: {h}\r\n")).unwrap_or_default();
    let version = if host.is_empty() { "1.0" } else { "1.1" };
    raw(server, format!("GET /api/health HTTP/{version}\r\n{host}Connection: close\r\n\r\n")).await
}

/// A request signed by the UI's cookie, with the browser headers given.
fn by_cookie(server: &Server, path: &str, headers: &[(&str, &str)]) -> reqwest::RequestBuilder {
    let mut request = reqwest::Client::new()
        .post(format!("{}{path}", server.url))
        .header("Cookie", format!("seri_token={TOKEN}"))
        .json(&json!({}));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request
}

async fn error_of(response: reqwest::Response) -> (StatusCode, Value) {
    let status = response.status();
    (status, response.json::<Value>().await.unwrap()["error"].clone())
}

async fn session_count(server: &Server) -> usize {
    server.get_json("/api/sessions").await["sessions"].as_array().unwrap().len()
}

#[tokio::test]
async fn a_cookie_signed_write_from_another_origin_is_refused_and_a_bearer_write_is_not() {
    let server = Server::start(json!([])).await;
    let own = server.url.clone();
    // A page on another port of 127.0.0.1: the same site, not the same origin.
    let other_port = "http://127.0.0.1:9";
    for headers in [
        vec![("Origin", other_port)],
        vec![("Origin", other_port), ("Sec-Fetch-Site", "same-site")],
        vec![("Sec-Fetch-Site", "same-site")],
        vec![("Sec-Fetch-Site", "cross-site")],
        vec![("Origin", "http://evil.example")],
        vec![("Origin", "null")],
    ] {
        let (status, error) = error_of(by_cookie(&server, "/api/sessions", &headers).send().await.unwrap()).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{headers:?}");
        assert_eq!(error["code"], "bad_origin", "{headers:?}");
        let message = error["message"].as_str().unwrap();
        let named = headers.iter().any(|(_, v)| message.contains(v));
        assert!(named, "the message names what was refused: {message} ({headers:?})");
    }
    assert_eq!(session_count(&server).await, 0, "nothing was written");

    // The UI's own page, and a program that sends the cookie but no browser headers.
    for headers in [vec![("Origin", own.as_str()), ("Sec-Fetch-Site", "same-origin")], vec![]] {
        let created = by_cookie(&server, "/api/sessions", &headers).send().await.unwrap();
        assert_eq!(created.status(), StatusCode::CREATED, "{headers:?}");
    }
    // The case: a page on another port cancelling runs.
    let session = server.session().await;
    let cancel = format!("/api/sessions/{session}/cancel");
    let refused = by_cookie(&server, &cancel, &[("Origin", other_port), ("Sec-Fetch-Site", "same-site")]);
    assert_eq!(refused.send().await.unwrap().status(), StatusCode::FORBIDDEN);
    let allowed = by_cookie(&server, &cancel, &[("Origin", own.as_str()), ("Sec-Fetch-Site", "same-origin")]);
    assert_eq!(allowed.send().await.unwrap().status(), StatusCode::OK);
    // Reads by cookie are not writes.
    let read = reqwest::Client::new()
        .get(format!("{}/api/sessions", server.url))
        .header("Cookie", format!("seri_token={TOKEN}"))
        .header("Origin", other_port)
        .header("Sec-Fetch-Site", "same-site")
        .send()
        .await
        .unwrap();
    assert_eq!(read.status(), StatusCode::OK);

    // A bearer token is no ambient credential: the same headers change nothing.
    let bearer = server
        .post("/api/sessions", json!({}))
        .header("Origin", "http://evil.example")
        .header("Sec-Fetch-Site", "cross-site")
        .send()
        .await
        .unwrap();
    assert_eq!(bearer.status(), StatusCode::CREATED);
    assert_eq!(session_count(&server).await, 4);
    server.stop().await;
}

#[tokio::test]
async fn a_cookie_signed_websocket_from_another_origin_is_refused() {
    let server = Server::start(json!([])).await;
    let ws_url = format!("{}/api/ws", server.url.replacen("http", "ws", 1));
    let upgrade = |origin: &str, site: &str| {
        let mut request =
            tokio_tungstenite::tungstenite::client::IntoClientRequest::into_client_request(ws_url.as_str()).unwrap();
        let headers = request.headers_mut();
        headers.insert("cookie", format!("seri_token={TOKEN}").parse().unwrap());
        headers.insert("origin", origin.parse().unwrap());
        headers.insert("sec-fetch-site", site.parse().unwrap());
        tokio_tungstenite::connect_async(request)
    };
    match upgrade("http://127.0.0.1:9", "same-site").await {
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => assert_eq!(response.status(), 403),
        other => panic!("a page on another port opened a socket with the cookie: {other:?}"),
    }
    let (mut own, _) = upgrade(&server.url, "same-origin").await.expect("this server's own page may connect");
    futures_util::SinkExt::close(&mut own).await.unwrap();
    server.stop().await;
}

#[tokio::test]
async fn a_host_that_is_not_this_servers_is_refused() {
    let config = ServerConfig { host_names: vec!["seri.example".to_owned()], ..ServerConfig::default() };
    let server = Server::with(json!([]), config).await;
    let port = server.url.rsplit(':').next().unwrap().to_owned();
    for host in
        [format!("localhost:{port}"), format!("127.0.0.1:{port}"), format!("[::1]:{port}"), "seri.example".into()]
    {
        let (status, body) = health_for_host(&server, Some(&host)).await;
        assert_eq!(status, 200, "{host}: {body}");
    }
    // DNS rebinding: a name re-pointed at 127.0.0.1, or this name on another port.
    for host in [format!("evil.example:{port}"), "localhost:1".to_owned()] {
        let (status, body) = health_for_host(&server, Some(&host)).await;
        assert_eq!(status, 421, "{host}: {body}");
        let error: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(error["error"]["code"], "wrong_host");
        assert!(error["error"]["message"].as_str().unwrap().contains(&host), "{body}");
    }
    let (status, body) = health_for_host(&server, None).await;
    assert_eq!(status, 421, "no Host at all: {body}");
    // A write too, token or not, and it writes nothing.
    let (status, _) = raw(
        &server,
        format!(
            "POST /api/sessions HTTP/1.1\r\nHost: evil.example:{port}\r\nAuthorization: Bearer {TOKEN}\r\n\
             Content-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{{}}"
        ),
    )
    .await;
    assert_eq!(status, 421);
    assert_eq!(session_count(&server).await, 0);
    server.stop().await;
}

#[tokio::test]
async fn a_connection_slow_to_send_its_headers_or_idle_is_closed() {
    let config = ServerConfig { header_timeout: Duration::from_secs(1), ..ServerConfig::default() };
    let server = Server::with(json!([]), config).await;
    let host = address(&server);

    // Half a request, then nothing.
    let mut slow = TcpStream::connect(&host).await.unwrap();
    slow.write_all(format!("GET /api/health HTTP/1.1\r\nHost: {host}\r\nX-Slow: ").as_bytes()).await.unwrap();
    let mut rest = Vec::new();
    let closed = tokio::time::timeout(SOON, slow.read_to_end(&mut rest)).await;
    assert!(closed.is_ok(), "a connection that never finished its headers is still open");
    assert!(!String::from_utf8_lossy(&rest).contains("\"ok\""), "it was not served");

    // A kept-alive connection, served once, then idle.
    let mut idle = TcpStream::connect(&host).await.unwrap();
    idle.write_all(format!("GET /api/health HTTP/1.1\r\nHost: {host}\r\n\r\n").as_bytes()).await.unwrap();
    let mut seen = Vec::new();
    let closed = tokio::time::timeout(SOON, idle.read_to_end(&mut seen)).await;
    assert!(closed.is_ok(), "an idle kept-alive connection is still open");
    let seen = String::from_utf8_lossy(&seen);
    assert!(seen.starts_with("HTTP/1.1 200") && seen.contains("\"ok\":true"), "served before it was closed: {seen}");
    server.stop().await;
}

#[tokio::test]
async fn past_the_connection_cap_a_client_is_answered_503_at_once_and_served_once_a_slot_is_free() {
    let config = ServerConfig { max_connections: 2, header_timeout: Duration::from_secs(3), ..ServerConfig::default() };
    let server = Server::with(json!([]), config).await;
    let host = address(&server);
    // Two connections take both slots: each is served once (so it was
    // surely accepted), then holds its slot, idle.
    let mut hogs = Vec::new();
    for _ in 0..2 {
        let mut hog = TcpStream::connect(&host).await.unwrap();
        hog.write_all(format!("GET /api/health HTTP/1.1\r\nHost: {host}\r\n\r\n").as_bytes()).await.unwrap();
        let mut head = [0u8; 12];
        hog.read_exact(&mut head).await.unwrap();
        assert_eq!(&head, b"HTTP/1.1 200");
        hogs.push(hog);
    }
    // A third is told at once, not left waiting in the backlog.
    let mut third = TcpStream::connect(&host).await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(SOON, third.read_to_end(&mut answer)).await.expect("answered at once").unwrap();
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    assert!(answer.to_ascii_lowercase().contains("retry-after: 1\r\n"), "{answer}");
    let body: Value = serde_json::from_str(answer.split("\r\n\r\n").nth(1).unwrap_or_default()).unwrap();
    assert_eq!(body["error"]["code"], "too_busy", "{answer}");
    // Once a hog is closed (its idle time is up), health is served.
    let reads = hogs.iter_mut().map(|hog| {
        Box::pin(async move {
            let mut sink = Vec::new();
            let _ = hog.read_to_end(&mut sink).await;
        })
    });
    tokio::time::timeout(SOON, futures_util::future::select_all(reads)).await.expect("an idle hog was closed");
    let answered = reqwest::Client::new().get(format!("{}/api/health", server.url)).send().await.unwrap();
    assert_eq!(answered.status(), StatusCode::OK);
    assert_eq!(answered.json::<Value>().await.unwrap()["ok"], true);
    server.stop().await;
}

#[test]
fn the_default_connection_cap_follows_the_descriptor_limit() {
    let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile).current;
    let budget = seri_server::connection_budget() as u64;
    match limit {
        Some(limit) => assert_eq!(budget, limit.saturating_sub(seri_server::RESERVED_DESCRIPTORS).max(16)),
        None => assert_eq!(budget, 1 << 20),
    }
    assert_eq!(ServerConfig::default().max_connections as u64, budget);
}

/// A TCP proxy to `target` that can be cut (every connection dropped, new
/// ones closed at once) and restored: a database that goes away and comes back.
struct Proxy {
    address: String,
    up: std::sync::Arc<std::sync::atomic::AtomicBool>,
    cut: tokio::sync::watch::Sender<u64>,
}

impl Proxy {
    /// On a thread of its own: the store's calls block the test's thread.
    fn start(target: String) -> Self {
        use std::sync::atomic::Ordering;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let address = listener.local_addr().unwrap().to_string();
        let up = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
        let (cut, _) = tokio::sync::watch::channel(0u64);
        let (accepting_up, cuts) = (up.clone(), cut.clone());
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        std::thread::spawn(move || {
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                loop {
                    let Ok((mut client, _)) = listener.accept().await else { continue };
                    if !accepting_up.load(Ordering::SeqCst) {
                        drop(client);
                        continue;
                    }
                    let target = target.clone();
                    let mut cut = cuts.subscribe();
                    tokio::spawn(async move {
                        let Ok(mut server) = TcpStream::connect(&target).await else { return };
                        tokio::select! {
                            _ = tokio::io::copy_bidirectional(&mut client, &mut server) => {}
                            _ = cut.changed() => {}
                        }
                    });
                }
            });
        });
        Self { address, up, cut }
    }

    fn set_up(&self, up: bool) {
        self.up.store(up, std::sync::atomic::Ordering::SeqCst);
        if !up {
            self.cut.send_modify(|n| *n += 1);
        }
    }
}

/// `GET /api/health` until its status is `want`; the last body.
async fn health_until(server: &Server, want: StatusCode) -> Value {
    let deadline = tokio::time::Instant::now() + SOON;
    loop {
        let response = server.http.get(format!("{}/api/health", server.url)).send().await.unwrap();
        let status = response.status();
        let body: Value = response.json().await.unwrap();
        if status == want {
            return body;
        }
        assert!(tokio::time::Instant::now() < deadline, "health stayed {status}: {body}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn health_is_503_naming_the_store_while_the_database_is_gone() {
    // A PostgreSQL store behind a proxy the test cuts: the realistic way a
    // store goes away under a running server (an SQLite file stays open).
    let Some(url) = fresh_postgres_url() else {
        let required = std::env::var_os("SERI_REQUIRE_POSTGRES").is_some_and(|v| v == "1");
        assert!(!required, "SERI_REQUIRE_POSTGRES=1 but SERI_TEST_POSTGRES_URL is not set: run `cargo xtask postgres`");
        return;
    };
    let (scheme, rest) = url.split_once("://").unwrap();
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let (user, target) = authority.rsplit_once('@').map_or(("", authority), |(u, h)| (u, h));
    let target = if target.contains(':') { target.to_owned() } else { format!("{target}:5432") };
    let proxy = Proxy::start(target);
    let user = if user.is_empty() { String::new() } else { format!("{user}@") };
    let proxied = format!("{scheme}://{user}{}{tail}", proxy.address);
    let server = Server::on(json!([]), ServerConfig::default(), Some(&proxied)).await;

    let healthy = health_until(&server, StatusCode::OK).await;
    assert_eq!(healthy, json!({ "ok": true, "version": env!("CARGO_PKG_VERSION") }));
    proxy.set_up(false);
    let sick = health_until(&server, StatusCode::SERVICE_UNAVAILABLE).await;
    assert_eq!(sick["ok"], false, "{sick}");
    assert_eq!(sick["version"], env!("CARGO_PKG_VERSION"));
    let problem = sick["store"].as_str().unwrap_or_else(|| panic!("no store field: {sick}"));
    assert!(problem.contains("store") && problem.len() > 20, "the store field says what is wrong: {problem}");
    proxy.set_up(true);
    let back = health_until(&server, StatusCode::OK).await;
    assert_eq!(back["ok"], true, "health comes back with the database");
    server.stop().await;
}

#[tokio::test]
async fn a_body_that_stops_arriving_is_refused_and_its_connection_freed() {
    let config = ServerConfig { stall_timeout: Duration::from_secs(1), ..ServerConfig::default() };
    let server = Server::with(json!([]), config).await;
    let host = address(&server);
    let mut slow = TcpStream::connect(&host).await.unwrap();
    let head = format!(
        "POST /api/sessions HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {TOKEN}\r\n\
         Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"title\": "
    );
    slow.write_all(head.as_bytes()).await.unwrap();
    let mut told = Vec::new();
    let closed = tokio::time::timeout(SOON, slow.read_to_end(&mut told)).await;
    assert!(closed.is_ok(), "a connection whose body stopped is still open");
    let told = String::from_utf8_lossy(&told);
    assert!(told.starts_with("HTTP/1.1 408") && told.contains("body_timeout"), "{told}");
    assert_eq!(session_count(&server).await, 0, "nothing was written");
    server.stop().await;
}

#[tokio::test]
async fn a_client_that_never_reads_its_response_loses_its_connection() {
    // An answer larger than what the kernel buffers between the two ends.
    let big = "x".repeat(12 * 1024 * 1024);
    let config = ServerConfig { stall_timeout: Duration::from_secs(1), ..ServerConfig::default() };
    let server = Server::with(json!([text(&big)]), config).await;
    let session = server.session().await;
    server.say(&session, "Say a lot.").await;
    let host = address(&server);
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let mut reader = socket.connect(host.parse().unwrap()).await.unwrap();
    let request = format!(
        "GET /api/sessions/{session}/events HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {TOKEN}\r\n\
         Connection: close\r\n\r\n"
    );
    reader.write_all(request.as_bytes()).await.unwrap();
    // It reads nothing for a while, long past the stall bound...
    tokio::time::sleep(Duration::from_secs(4)).await;
    // ...so the server gave up on it: what arrives is cut short.
    let mut got = Vec::new();
    let ended = tokio::time::timeout(SOON, reader.read_to_end(&mut got)).await.expect("the connection ended");
    assert!(ended.is_err() || got.len() < big.len(), "the whole response still came: {} bytes", got.len());
    server.stop().await;
}

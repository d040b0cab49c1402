//! The web UI's sends when their answers are lost, in a real headless
//! Chromium: the page reaches `seri serve` through a gateway (as through a
//! balancer) that forwards a message's post, lets the server answer it,
//! and then loses that answer — a 502 as a gateway says it, or a connection
//! closed without a word. The page sends each message with an
//! `Idempotency-Key`, posts it again with the same key while its answer is
//! lost, and the server answers the repeat as it answered the first: every
//! message is taken and answered exactly once.

use std::collections::HashMap;
use std::io::{Read as _, Write as _};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::browser::{self, Browser};
use crate::serve::{http, serve, terminate};
use crate::support::{Env, path_str, text};

const TOKEN: &str = "lost-answers-token";
/// Enter, as WebDriver's code point for it.
const ENTER: &str = "\u{e007}";

/// How the gateway loses an answer the server gave.
#[derive(Clone, Copy, Debug)]
enum Loss {
    /// `502 Bad Gateway`, as HAProxy answers for a server that went away.
    BadGateway,
    /// The connection closed without a byte of an answer.
    Silence,
}

/// A `POST …/messages` as the gateway saw it.
#[derive(Clone, Debug)]
struct Post {
    key: Option<String>,
    /// Whether its answer was lost on the way back.
    lost: bool,
}

#[derive(Default)]
struct Seen {
    posts: Vec<Post>,
    /// Per message text: the losses still to inflict on its answers.
    plans: HashMap<String, Vec<Loss>>,
}

/// An HTTP gateway on 127.0.0.1 in front of one server. Every request goes
/// on a connection of its own (`Connection: close` both ways, so the
/// browser never re-sends a request on its own: what is sent again, the
/// page sent again); WebSocket upgrades are tunnelled.
struct Gateway {
    address: String,
    seen: Arc<Mutex<Seen>>,
    stop: Arc<AtomicBool>,
}

impl Gateway {
    fn start(listener: TcpListener, upstream: String) -> Self {
        let address = listener.local_addr().unwrap().to_string();
        let seen = Arc::new(Mutex::new(Seen::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let (shared, stopping) = (Arc::clone(&seen), Arc::clone(&stop));
        std::thread::spawn(move || {
            for client in listener.incoming() {
                if stopping.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(client) = client else { continue };
                let (seen, upstream) = (Arc::clone(&shared), upstream.clone());
                std::thread::spawn(move || relay(client, &upstream, &seen));
            }
        });
        Self { address, seen, stop }
    }

    fn url(&self) -> String {
        format!("http://{}", self.address)
    }

    /// The answers to the posts of a message saying `text` are lost, in turn, as `losses` says.
    fn lose(&self, text: &str, losses: Vec<Loss>) {
        self.seen.lock().unwrap().plans.insert(text.to_owned(), losses);
    }

    fn posts(&self) -> Vec<Post> {
        self.seen.lock().unwrap().posts.clone()
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the accepting thread, which then sees `stop`.
        let _ = TcpStream::connect(&self.address);
    }
}

/// One request of `client`, forwarded to `upstream`, and its answer back
/// (or lost, as planned).
fn relay(mut client: TcpStream, upstream: &str, seen: &Mutex<Seen>) {
    let Some((head, body)) = read_request(&mut client) else { return };
    let Ok(mut server) = TcpStream::connect(upstream) else {
        let _ = client.write_all(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        return;
    };
    let header = |name: &str| {
        head.lines().skip(1).find_map(|line| {
            let (n, v) = line.split_once(':')?;
            n.trim().eq_ignore_ascii_case(name).then(|| v.trim().to_owned())
        })
    };
    if header("upgrade").is_some_and(|u| u.eq_ignore_ascii_case("websocket")) {
        // A WebSocket: the bytes both ways until either side closes.
        server.write_all(head.as_bytes()).unwrap();
        server.write_all(&body).unwrap();
        let (mut up, mut down) = (server.try_clone().unwrap(), client.try_clone().unwrap());
        std::thread::spawn(move || {
            let _ = std::io::copy(&mut down, &mut up);
            let _ = up.shutdown(Shutdown::Both);
        });
        let _ = std::io::copy(&mut server, &mut client);
        let _ = client.shutdown(Shutdown::Both);
        return;
    }
    let request_line = head.lines().next().unwrap_or_default().to_owned();
    let message = request_line.starts_with("POST /api/sessions/") && request_line.contains("/messages ");
    let mut forwarded: String = head
        .lines()
        .filter(|line| !line.is_empty() && !line.to_ascii_lowercase().starts_with("connection:"))
        .map(|line| format!("{line}\r\n"))
        .collect();
    forwarded.push_str("Connection: close\r\n\r\n");
    server.write_all(forwarded.as_bytes()).unwrap();
    server.write_all(&body).unwrap();
    // The server closes after its answer: all of it, whatever its framing.
    let mut answer = Vec::new();
    let _ = server.read_to_end(&mut answer);
    let loss = if message {
        let text = serde_json::from_slice::<Value>(&body).ok().and_then(|v| v["text"].as_str().map(str::to_owned));
        let mut seen = seen.lock().unwrap();
        let loss = text.and_then(|t| seen.plans.get_mut(&t).filter(|p| !p.is_empty()).map(|p| p.remove(0)));
        seen.posts.push(Post { key: header("idempotency-key"), lost: loss.is_some() });
        loss
    } else {
        None
    };
    match loss {
        Some(Loss::BadGateway) => {
            let _ = client.write_all(
                b"HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/html\r\nContent-Length: 22\r\nConnection: close\r\n\r\n<h1>Bad Gateway</h1>\r\n",
            );
        }
        Some(Loss::Silence) => {}
        None => {
            let _ = client.write_all(&answer);
        }
    }
    let _ = client.shutdown(Shutdown::Both);
}

/// A request's head (request line and headers, as sent) and its body.
fn read_request(client: &mut TcpStream) -> Option<(String, Vec<u8>)> {
    let mut bytes = Vec::new();
    let mut chunk = [0u8; 8192];
    let end = loop {
        if let Some(at) = bytes.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        let n = client.read(&mut chunk).ok().filter(|n| *n > 0)?;
        bytes.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&bytes[..end]).into_owned();
    let length: usize = head
        .lines()
        .find_map(|l| l.split_once(':').filter(|(n, _)| n.trim().eq_ignore_ascii_case("content-length")))
        .and_then(|(_, v)| v.trim().parse().ok())
        .unwrap_or(0);
    let mut body = bytes[end..].to_vec();
    while body.len() < length {
        let n = client.read(&mut chunk).ok().filter(|n| *n > 0)?;
        body.extend_from_slice(&chunk[..n]);
    }
    Some((head, body))
}

/// The posts of the page's messages, once the gateway saw `posts` of them
/// and the page is idle (a run's answer can show before its post's).
#[track_caller]
fn settled(b: &Browser, gateway: &Gateway, posts: usize) -> Vec<Post> {
    let deadline = Instant::now() + Duration::from_secs(60);
    while gateway.posts().len() < posts {
        assert!(Instant::now() < deadline, "the page posted {:?}, not {posts} times", gateway.posts());
        std::thread::sleep(Duration::from_millis(50));
    }
    b.wait_for(
        "the send settled",
        "document.querySelector('.run-status').dataset.phase === 'idle' && !document.querySelector('.live-text')",
    );
    let seen = gateway.posts();
    assert_eq!(seen.len(), posts, "{seen:?}");
    seen
}

/// What the page's status line says ('' when all is well).
fn status(b: &Browser) -> Value {
    b.js("return document.querySelector('.run-status').innerText", vec![])
}

#[test]
fn a_send_whose_answer_is_lost_is_sent_again_with_its_key_and_answered_once() {
    if !browser::available() {
        return;
    }
    let env = Env::new();
    let script = env.script("lost.json", json!([text("First answer."), text("Second answer."), text("Third answer.")]));
    // The gateway's address first: the server is told it is its name.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let front = listener.local_addr().unwrap().to_string();
    let (mut child, url) =
        serve(&env, &["--provider", "script", "--script", path_str(&script), "--host-name", &front], TOKEN);
    let gateway = Gateway::start(listener, url.trim_start_matches("http://").to_owned());
    let (code, created) = http(&url, "POST", "/api/sessions", Some(TOKEN), Some(&json!({})));
    assert_eq!(code, 201, "{created}");
    let session = serde_json::from_str::<Value>(&created).unwrap()["session"]["id"].as_str().unwrap().to_owned();
    let thread = || http(&url, "GET", &format!("/api/sessions/{session}/thread"), Some(TOKEN), None).1;
    let shown = |b: &Browser, answer: &str| {
        b.js(&format!("return document.querySelector('.transcript').innerText.split({answer:?}).length - 1"), vec![])
    };

    let b = Browser::start();
    b.sign_in(&gateway.url(), TOKEN);
    b.goto(&format!("{}/s/{session}", gateway.url()));
    b.wait_for("the composer", "document.querySelector('#composer-input')");

    // A 502 after the server answered: the page posts again, with the same key.
    gateway.lose("first question", vec![Loss::BadGateway]);
    b.type_into("#composer-input", &format!("first question{ENTER}"));
    b.wait_for("the first answer", "document.querySelector('.transcript').innerText.includes('First answer.')");
    let posts = settled(&b, &gateway, 2);
    let first = posts[0].key.clone().expect("the page's post carries an Idempotency-Key");
    assert!((1..=255).contains(&first.len()), "{first}");
    assert_eq!((posts[0].lost, posts[1].lost, posts[1].key.as_deref()), (true, false, Some(first.as_str())));
    assert_eq!(status(&b), "", "the page says nothing went wrong");
    assert_eq!(b.js("return document.querySelector('#composer-input').value", vec![]), "");
    assert_eq!(thread(), "[1] user: first question\n[2] assistant: First answer.\n");

    // The server holds the key with the message's job: the same message
    // under it is the first one's answer, another message is refused.
    let post = |body: Value, key: &str| {
        let address = url.trim_start_matches("http://");
        let body = body.to_string();
        let mut stream = TcpStream::connect(address).unwrap();
        write!(
            stream,
            "POST /api/sessions/{session}/messages HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer {TOKEN}\r\n\
             Idempotency-Key: {key}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        let code = response.split_whitespace().nth(1).unwrap_or_default().to_owned();
        let body = response.split_once("\r\n\r\n").map(|(_, b)| b.to_owned()).unwrap_or_default();
        (code, serde_json::from_str::<Value>(&body).unwrap_or(Value::Null))
    };
    let (code, repeat) = post(json!({"text": "first question", "wait": true}), &first);
    assert_eq!(
        (code.as_str(), &repeat["status"], &repeat["result"]),
        ("200", &json!("succeeded"), &json!("First answer."))
    );
    let (code, other) = post(json!({"text": "another question"}), &first);
    assert_eq!((code.as_str(), &other["error"]["code"]), ("422", &json!("idempotency_key_reused")), "{other}");
    assert_eq!(thread(), "[1] user: first question\n[2] assistant: First answer.\n", "nothing new was taken");

    // No answer at all: the same, and each message has its own key.
    gateway.lose("second question", vec![Loss::Silence]);
    b.type_into("#composer-input", &format!("second question{ENTER}"));
    b.wait_for("the second answer", "document.querySelector('.transcript').innerText.includes('Second answer.')");
    let posts = settled(&b, &gateway, 4);
    let second = posts[2].key.clone().expect("a key");
    assert_ne!(second, first, "a fresh key per message");
    assert_eq!((posts[2].lost, posts[3].lost, posts[3].key.as_deref()), (true, false, Some(second.as_str())));
    assert_eq!(status(&b), "");

    // Every answer lost, for as long as the page tries: it says so and
    // gives the draft back, and sending that draft again by hand is the
    // same message under the same key, answered once.
    gateway.lose("third question", vec![Loss::BadGateway; 8]);
    b.type_into("#composer-input", &format!("third question{ENTER}"));
    let said = b.wait_for(
        "the page giving up",
        "document.querySelector('.run-status').innerText.startsWith('No answer from the server') && document.querySelector('.run-status').innerText",
    );
    assert!(said.as_str().unwrap().contains("does not send it twice"), "{said}");
    let posts = settled(&b, &gateway, 12);
    let third = posts[4].key.clone().expect("a key");
    assert!(posts[4..].iter().all(|p| p.lost && p.key.as_deref() == Some(third.as_str())), "{posts:?}");
    assert_eq!(b.js("return document.querySelector('#composer-input').value", vec![]), "third question");
    b.screenshot("lost-answer-given-up");
    b.type_into("#composer-input", ENTER);
    let posts = settled(&b, &gateway, 13);
    assert_eq!(status(&b), "");
    assert_eq!((posts[12].lost, posts[12].key.as_deref()), (false, Some(third.as_str())));
    assert_eq!(b.js("return document.querySelector('#composer-input').value", vec![]), "");
    assert_eq!(
        thread(),
        "[1] user: first question\n[2] assistant: First answer.\n[3] user: second question\n[4] assistant: Second answer.\n\
         [5] user: third question\n[6] assistant: Third answer.\n"
    );
    // Drawn again from the server: each answer once.
    b.goto(&format!("{}/s/{session}", gateway.url()));
    b.wait_for("the transcript", "document.querySelector('.transcript').innerText.includes('Third answer.')");
    for answer in ["First answer.", "Second answer.", "Third answer."] {
        assert_eq!(shown(&b, answer), 1, "{answer}");
    }
    drop(b);
    drop(gateway);
    terminate(&mut child);
}

//! A scripted HTTP/1.1 server on 127.0.0.1 for the provider tests.
//!
//! Each accepted connection gets the next scripted reply, written byte for
//! byte, then the connection is closed. That is how a test sends a real
//! SSE stream in awkward pieces, cuts a connection in the middle of a
//! stream, or answers with a provider's exact error body. Every request is
//! recorded (method, path, headers, body) for the test to inspect.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// One request the server received.
#[derive(Debug, Clone)]
pub(crate) struct Recorded {
    pub(crate) method: String,
    pub(crate) path: String,
    /// Header names lowercased.
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
}

impl Recorded {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    pub(crate) fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap()
    }
}

/// What to write back on one connection.
pub(crate) struct Reply {
    /// Pieces written one after another, each flushed, so the client reads
    /// them as separate network reads.
    pieces: Vec<Vec<u8>>,
    /// A pause after each piece: a stream that trickles.
    pause: Option<std::time::Duration>,
}

impl Reply {
    /// The same reply, pausing `pause` after each piece.
    pub(crate) fn paced(self, pause: std::time::Duration) -> Reply {
        Reply { pause: Some(pause), ..self }
    }
}

pub(crate) struct TestServer {
    pub(crate) base: String,
    requests: Arc<Mutex<Vec<Recorded>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl TestServer {
    /// Serves `replies` to successive connections; a connection beyond them gets a 599.
    pub(crate) async fn start(replies: Vec<Reply>) -> TestServer {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let recorded = requests.clone();
        let mut replies: VecDeque<Reply> = replies.into();
        let task = tokio::spawn(async move {
            loop {
                let Ok((socket, _)) = listener.accept().await else { return };
                let reply = replies.pop_front().unwrap_or_else(|| status(599, "Unscripted", &[], "no reply scripted"));
                // One connection at a time: each request gets its reply in order.
                serve(socket, reply, &recorded).await;
            }
        });
        TestServer { base, requests, task }
    }

    pub(crate) fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }

    pub(crate) fn request_count(&self) -> usize {
        self.requests.lock().unwrap().len()
    }
}

async fn serve(mut socket: TcpStream, reply: Reply, recorded: &Mutex<Vec<Recorded>>) {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        if let Some(at) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        let n = socket.read(&mut chunk).await.unwrap();
        assert!(n > 0, "client closed before sending a request");
        buffer.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8(buffer[..head_end].to_vec()).unwrap();
    let mut lines = head.split("\r\n");
    let mut start = lines.next().unwrap().split(' ');
    let (method, path) = (start.next().unwrap().to_owned(), start.next().unwrap().to_owned());
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let length: usize =
        headers.iter().find(|(n, _)| n == "content-length").map(|(_, v)| v.parse().unwrap()).unwrap_or(0);
    let mut body = buffer[head_end..].to_vec();
    while body.len() < length {
        let n = socket.read(&mut chunk).await.unwrap();
        assert!(n > 0, "client closed in the middle of its body");
        body.extend_from_slice(&chunk[..n]);
    }
    recorded.lock().unwrap().push(Recorded { method, path, headers, body });
    for piece in reply.pieces {
        if socket.write_all(&piece).await.is_err() {
            return;
        }
        let _ = socket.flush().await;
        match reply.pause {
            Some(pause) => tokio::time::sleep(pause).await,
            None => tokio::task::yield_now().await,
        }
    }
    let _ = socket.shutdown().await;
}

fn head(code: u16, reason: &str, headers: &[(&str, &str)]) -> String {
    let mut head = format!("HTTP/1.1 {code} {reason}\r\nconnection: close\r\n");
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head
}

/// A complete response with a `content-length` body.
pub(crate) fn status(code: u16, reason: &str, headers: &[(&str, &str)], body: &str) -> Reply {
    let mut bytes = head(code, reason, headers);
    bytes.push_str(&format!("content-type: application/json\r\ncontent-length: {}\r\n\r\n{body}", body.len()));
    Reply { pieces: vec![bytes.into_bytes()], pause: None }
}

/// A 200 event stream, chunked, each event (up to its blank line) in its own chunk.
pub(crate) fn sse(stream: &str) -> Reply {
    let events: Vec<&[u8]> = stream.split_inclusive("\n\n").map(str::as_bytes).collect();
    chunked(&events, true)
}

/// A 200 event stream, chunked into pieces of `size` bytes: lines and
/// UTF-8 characters are split across network reads.
pub(crate) fn sse_in_pieces(stream: &str, size: usize) -> Reply {
    let pieces: Vec<&[u8]> = stream.as_bytes().chunks(size).collect();
    chunked(&pieces, true)
}

/// A 200 event stream whose connection is cut after `at` bytes of the
/// body, in the middle of the chunked encoding (no terminating chunk).
pub(crate) fn sse_cut_at(stream: &str, at: usize) -> Reply {
    chunked(&[&stream.as_bytes()[..at]], false)
}

/// A 200 event stream without chunked encoding, its end marked only by the
/// server closing the connection: cutting it short looks like a clean end
/// to HTTP, and only the provider's end marker can tell.
pub(crate) fn sse_until_close(stream: &str) -> Reply {
    let mut bytes = head(200, "OK", &[("content-type", "text/event-stream")]).into_bytes();
    bytes.extend_from_slice(b"\r\n");
    bytes.extend_from_slice(stream.as_bytes());
    Reply { pieces: vec![bytes], pause: None }
}

/// A 200 response of another content type.
pub(crate) fn json_200(body: &str) -> Reply {
    status(200, "OK", &[], body)
}

fn chunked(pieces: &[&[u8]], complete: bool) -> Reply {
    let mut out = vec![
        (head(200, "OK", &[("content-type", "text/event-stream"), ("cache-control", "no-cache")])
            + "transfer-encoding: chunked\r\n\r\n")
            .into_bytes(),
    ];
    for piece in pieces.iter().filter(|p| !p.is_empty()) {
        let mut chunk = format!("{:x}\r\n", piece.len()).into_bytes();
        chunk.extend_from_slice(piece);
        chunk.extend_from_slice(b"\r\n");
        out.push(chunk);
    }
    if complete {
        out.push(b"0\r\n\r\n".to_vec());
    }
    Reply { pieces: out, pause: None }
}

//! A plain HTTP/1.1 client over std::net for the suite's API clients:
//! one request a connection (`Connection: close`), the status and body
//! exactly as the server sent them (chunked bodies decoded).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use serde_json::Value;

/// What a request came to: the status and body, or why there was none.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Reply {
    Answered {
        status: u16,
        body: String,
    },
    /// No status line: the connection was refused, reset or timed out.
    NoAnswer(String),
}

impl Reply {
    pub(crate) fn status(&self) -> Option<u16> {
        match self {
            Reply::Answered { status, .. } => Some(*status),
            Reply::NoAnswer(_) => None,
        }
    }

    pub(crate) fn json(&self) -> Option<Value> {
        match self {
            Reply::Answered { body, .. } => serde_json::from_str(body).ok(),
            Reply::NoAnswer(_) => None,
        }
    }
}

/// `METHOD url+path` with `token` and a JSON `body`, waiting up to `timeout`.
pub(crate) fn request(
    url: &str,
    method: &str,
    path: &str,
    token: &str,
    body: Option<&Value>,
    timeout: Duration,
) -> Reply {
    let address = url.trim_start_matches("http://").trim_end_matches('/');
    let mut stream = match TcpStream::connect(address) {
        Ok(s) => s,
        Err(e) => return Reply::NoAnswer(format!("connect: {e}")),
    };
    let _ = stream.set_read_timeout(Some(timeout));
    let _ = stream.set_write_timeout(Some(Duration::from_secs(10)));
    let body = body.map(Value::to_string).unwrap_or_default();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    if let Err(e) = stream.write_all(head.as_bytes()).and_then(|()| stream.write_all(body.as_bytes())) {
        return Reply::NoAnswer(format!("write: {e}"));
    }
    let mut raw = Vec::new();
    if let Err(e) = stream.read_to_end(&mut raw)
        && raw.is_empty()
    {
        let waited = matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut);
        return Reply::NoAnswer(if waited { format!("timed out after {timeout:?}") } else { format!("read: {e}") });
    }
    parse_response(&raw)
}

/// The status and body of a raw response.
pub(crate) fn parse_response(raw: &[u8]) -> Reply {
    let Some(split) = raw.windows(4).position(|w| w == b"\r\n\r\n") else {
        return Reply::NoAnswer(format!("an incomplete response of {} bytes", raw.len()));
    };
    let head = String::from_utf8_lossy(&raw[..split]);
    let Some(status) = head.split_whitespace().nth(1).and_then(|s| s.parse().ok()) else {
        return Reply::NoAnswer(format!("no status line: {}", head.lines().next().unwrap_or("")));
    };
    let chunked = head.lines().any(|l| {
        l.split_once(':').is_some_and(|(n, v)| {
            n.trim().eq_ignore_ascii_case("transfer-encoding") && v.trim().eq_ignore_ascii_case("chunked")
        })
    });
    let rest = &raw[split + 4..];
    let body = if chunked { dechunk(rest) } else { rest.to_vec() };
    Reply::Answered { status, body: String::from_utf8_lossy(&body).into_owned() }
}

fn dechunk(mut rest: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(line_end) = rest.windows(2).position(|w| w == b"\r\n") {
        let size_text = String::from_utf8_lossy(&rest[..line_end]);
        let Ok(size) = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16) else { break };
        rest = &rest[line_end + 2..];
        if size == 0 || rest.len() < size {
            out.extend_from_slice(&rest[..size.min(rest.len())]);
            break;
        }
        out.extend_from_slice(&rest[..size]);
        rest = rest.get(size + 2..).unwrap_or(&[]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_and_chunked_bodies() {
        let plain = parse_response(b"HTTP/1.1 202 Accepted\r\ncontent-length: 2\r\n\r\n{}");
        assert_eq!(plain, Reply::Answered { status: 202, body: "{}".into() });
        let chunked = parse_response(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n{\"a\"\r\n3\r\n:1}\r\n0\r\n\r\n",
        );
        assert_eq!(chunked.json(), Some(serde_json::json!({"a": 1})));
        assert!(matches!(parse_response(b"HTTP/1.1 200"), Reply::NoAnswer(_)));
    }
}

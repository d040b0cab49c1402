//! What is checked of a request before any handler sees it, against
//! hostile pages and clients:
//!
//! - [`check_host`]: the `Host` must name this server (DNS rebinding: a
//!   page whose name was re-pointed at 127.0.0.1 asks with its own name).
//!   Listening on loopback, the names are `localhost`, `127.0.0.1` and
//!   `[::1]` with the port listened on, the address listened on, and the
//!   configured [`ServerConfig::host_names`](crate::ServerConfig). Listening
//!   on another address with no names configured, any `Host` is accepted:
//!   the server cannot know the names it is reached by, the token is what
//!   guards it, and the browser's cookie stays with the name it was set for.
//!   Anything else is 421 `wrong_host`.
//! - [`refuse_cross_site_writes`]: a write (any method but GET, HEAD,
//!   OPTIONS, TRACE) signed by the web UI's cookie, which a browser sends
//!   by itself, must come from a page of this server ([`same_origin`]), or
//!   it is 403 `bad_origin`. A bearer token is not sent by a browser on
//!   its own, so requests carrying one are not concerned. The WebSocket
//!   upgrade and the sign-in form make the same check themselves.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::auth::{bearer_token, cookie_token};
use crate::error::ApiError;

/// The most of a client's `Host` or `Origin` quoted back in an error.
const QUOTED: usize = 200;

/// The names a request's `Host` may give.
#[derive(Debug, Clone)]
pub(crate) struct Hosts {
    /// Any name at all.
    any: bool,
    /// The port listened on.
    port: u16,
    /// Names accepted with [`Hosts::port`] (or none, when it is 80), lowercase.
    local: Vec<String>,
    /// Configured names without a port: accepted with any port or none.
    named: Vec<String>,
    /// Configured `name:port`s, accepted as they are.
    named_with_port: Vec<String>,
}

impl Hosts {
    /// The names of a server listening on `served`, plus `configured`.
    pub(crate) fn new(served: SocketAddr, configured: &[String]) -> Self {
        let ip = served.ip();
        let mut local: Vec<String> = ["localhost", "127.0.0.1", "[::1]"].map(str::to_owned).into();
        if !ip.is_unspecified() {
            let literal = match ip {
                IpAddr::V4(v4) => v4.to_string(),
                IpAddr::V6(v6) => format!("[{v6}]"),
            };
            if !local.contains(&literal) {
                local.push(literal);
            }
        }
        let (mut named, mut named_with_port) = (Vec::new(), Vec::new());
        for name in configured.iter().map(|n| n.trim().to_ascii_lowercase()).filter(|n| !n.is_empty()) {
            match split_port(&name) {
                (_, Some(_)) => named_with_port.push(name),
                (_, None) => named.push(name),
            }
        }
        let any = !ip.is_loopback() && configured.iter().all(|n| n.trim().is_empty());
        Self { any, port: served.port(), local, named, named_with_port }
    }

    /// Whether `host` (a `Host` header's value) names this server.
    pub(crate) fn accepts(&self, host: &str) -> bool {
        if self.any {
            return true;
        }
        let host = host.trim().to_ascii_lowercase();
        let (name, port) = split_port(&host);
        let Ok(port) = port.map_or(Ok(80), str::parse::<u16>) else { return false };
        (port == self.port && self.local.iter().any(|n| n == name))
            || self.named.iter().any(|n| n == name)
            || self.named_with_port.contains(&host)
    }

    /// The names, for an error message.
    fn describe(&self) -> String {
        let mut names: Vec<String> = self.local.iter().map(|n| format!("{n}:{}", self.port)).collect();
        names.extend(self.named.iter().cloned());
        names.extend(self.named_with_port.iter().cloned());
        names.join(", ")
    }
}

/// `host` as its name and its port, if it gives one: `[::1]:80` is
/// (`[::1]`, `80`), `example.com` is (`example.com`, none).
fn split_port(host: &str) -> (&str, Option<&str>) {
    let name_end = if host.starts_with('[') { host.find(']').map_or(host.len(), |i| i + 1) } else { 0 };
    match host[name_end..].rfind(':') {
        Some(i) => (&host[..name_end + i], Some(&host[name_end + i + 1..])),
        None => (host, None),
    }
}

/// The host a request was sent to: the authority of an absolute URI, else
/// the `Host` header.
fn requested_host(request: &Request) -> Option<String> {
    if let Some(authority) = request.uri().authority() {
        let text = authority.as_str();
        return Some(text.rsplit_once('@').map_or(text, |(_, host)| host).to_owned());
    }
    request.headers().get(header::HOST).and_then(|v| v.to_str().ok()).map(str::to_owned)
}

/// Refuses (421) a request whose `Host` does not name this server.
pub(crate) async fn check_host(State(hosts): State<Arc<Hosts>>, request: Request, next: Next) -> Response {
    match requested_host(&request) {
        Some(host) if hosts.accepts(&host) => next.run(request).await,
        Some(host) => ApiError::new(
            StatusCode::MISDIRECTED_REQUEST,
            "wrong_host",
            format!(
                "this server answers for {}, not for the host `{}` (a page under another name may not use it)",
                hosts.describe(),
                quoted(&host)
            ),
        )
        .into_response(),
        None => ApiError::new(
            StatusCode::MISDIRECTED_REQUEST,
            "wrong_host",
            format!(
                "a request must say which host it is for (the `Host` header): this server answers for {}",
                hosts.describe()
            ),
        )
        .into_response(),
    }
}

/// Refuses (403) a write signed by the UI's cookie that a page of another
/// origin sent (see [`same_origin`]).
pub(crate) async fn refuse_cross_site_writes(request: Request, next: Next) -> Response {
    let headers = request.headers();
    let by_cookie = bearer_token(headers).is_none() && cookie_token(headers).is_some();
    if by_cookie
        && !request.method().is_safe()
        && let Err(refused) = same_origin(headers, "act with this browser's sign-in")
    {
        tracing::warn!(method = %request.method(), path = %request.uri().path(), reason = %refused.message, "refused a cross-site write");
        return refused.into_response();
    }
    next.run(request).await
}

/// Whether a request comes from a page of this server, or from no page at
/// all. A browser says where a request comes from: `Sec-Fetch-Site` must be
/// `same-origin` (or `none`: the person typed it), and `Origin` must be
/// this server's own (`http://` or `https://` and the `Host` asked, which
/// [`check_host`] checked). A page on another port of 127.0.0.1 is
/// `same-site` but not the same origin, and is refused. A request with
/// neither header is not a browser's (or an old browser's, whose cookie
/// `SameSite=Strict` keeps to this site) and passes. `doing` says what was
/// refused, for the message.
pub(crate) fn same_origin(headers: &HeaderMap, doing: &str) -> Result<(), ApiError> {
    let refuse = |why: String| ApiError::new(StatusCode::FORBIDDEN, "bad_origin", why);
    if let Some(site) = headers.get("sec-fetch-site") {
        let site = site.to_str().unwrap_or("?");
        if !matches!(site, "same-origin" | "none") {
            return Err(refuse(format!(
                "a page of another origin (Sec-Fetch-Site: {}) may not {doing}; only this server's own pages may",
                quoted(site)
            )));
        }
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("?");
        let host = headers.get(header::HOST).and_then(|v| v.to_str().ok()).unwrap_or_default();
        let own = !host.is_empty() && (origin == format!("http://{host}") || origin == format!("https://{host}"));
        if !own {
            return Err(refuse(format!(
                "a page from {} may not {doing}; only this server's own pages (http://{}) may",
                quoted(origin),
                quoted(host)
            )));
        }
    }
    Ok(())
}

/// At most [`QUOTED`] characters of a client's text.
fn quoted(text: &str) -> String {
    text.chars().take(QUOTED).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hosts(served: &str, configured: &[&str]) -> Hosts {
        let configured: Vec<String> = configured.iter().map(|s| (*s).to_owned()).collect();
        Hosts::new(served.parse().unwrap(), &configured)
    }

    #[test]
    fn loopback_accepts_its_names_with_its_port_only() {
        let local = hosts("127.0.0.1:4317", &[]);
        for ok in ["localhost:4317", "127.0.0.1:4317", "[::1]:4317", "LOCALHOST:4317"] {
            assert!(local.accepts(ok), "{ok}");
        }
        for bad in ["evil.example:4317", "localhost:4318", "localhost", "127.0.0.1", "", "[::1]", "localhost:x"] {
            assert!(!local.accepts(bad), "{bad}");
        }
        assert!(hosts("127.0.0.1:80", &[]).accepts("localhost"), "port 80 goes without saying");
        assert!(hosts("[::1]:9", &[]).accepts("[::1]:9"));
        assert!(hosts("127.0.0.2:9", &[]).accepts("127.0.0.2:9"), "the address listened on");
    }

    #[test]
    fn configured_names_are_added_and_remote_without_names_accepts_any() {
        let named = hosts("127.0.0.1:4317", &["seri.example", "other.example:8443"]);
        assert!(named.accepts("seri.example") && named.accepts("seri.example:443") && named.accepts("localhost:4317"));
        assert!(named.accepts("other.example:8443") && !named.accepts("other.example:80"));
        assert!(!named.accepts("evil.example:4317"));
        assert!(hosts("0.0.0.0:4317", &[]).accepts("anything.example:1"));
        let remote_named = hosts("0.0.0.0:4317", &["seri.example"]);
        assert!(remote_named.accepts("seri.example:4317") && !remote_named.accepts("evil.example:4317"));
    }

    #[test]
    fn same_origin_wants_this_origin_and_no_other_site() {
        let with = |pairs: &[(&'static str, &str)]| {
            let mut headers = HeaderMap::new();
            for (name, value) in pairs {
                headers.insert(*name, value.parse().unwrap());
            }
            same_origin(&headers, "do it").map_err(|e| e.message)
        };
        let host = ("host", "127.0.0.1:4317");
        assert!(with(&[host]).is_ok(), "not a browser");
        assert!(with(&[host, ("origin", "http://127.0.0.1:4317"), ("sec-fetch-site", "same-origin")]).is_ok());
        let other_port = with(&[host, ("origin", "http://127.0.0.1:9999")]).unwrap_err();
        assert!(other_port.contains("http://127.0.0.1:9999"), "{other_port}");
        assert!(with(&[host, ("sec-fetch-site", "same-site")]).unwrap_err().contains("same-site"));
        assert!(with(&[host, ("sec-fetch-site", "cross-site")]).is_err());
        assert!(with(&[host, ("origin", "null")]).is_err());
    }
}

//! The web UI: plain files (HTML, CSS, ES modules) embedded in the binary
//! and served at `/`, with a sign-in that keeps the token in an HttpOnly,
//! SameSite=Strict cookie.
//!
//! - `GET /` and `GET /s/{id}` answer the app to a browser whose cookie
//!   names an agent, and the sign-in form (no data) to any other.
//! - `POST /sign-in` takes the form's `token`; a valid one sets the cookie
//!   and goes back to `/`, another shows the form again with a 401.
//!   `POST /sign-out` clears the cookie.
//! - `GET /ui/{file}` serves the assets, which hold no data.
//!
//! Every page carries a Content-Security-Policy that allows scripts,
//! styles, connections and images from this server only (no inline script,
//! no `eval`), so a model's text that slipped through as HTML still could
//! not run. The renderer escapes it in the first place.

use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Form, Router};

use crate::auth::{TOKEN_COOKIE, agent_of, presented_token};
use crate::error::ApiError;
use crate::guard::same_origin;
use crate::state::ServerState;

/// What the pages may load: this server only.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// How long the sign-in cookie lasts: a year, or until `POST /sign-out`.
const COOKIE_MAX_AGE_SECS: u64 = 365 * 24 * 60 * 60;

/// One embedded file.
struct Asset {
    name: &'static str,
    content_type: &'static str,
    bytes: &'static [u8],
}

macro_rules! asset {
    ($name:literal, $type:literal) => {
        Asset { name: $name, content_type: $type, bytes: include_bytes!(concat!("../ui/", $name)) }
    };
}

/// Every file under `ui/` that pages load. A test checks that this list
/// and the folder agree.
const ASSETS: &[Asset] = &[
    asset!("app.css", "text/css; charset=utf-8"),
    asset!("app.js", "text/javascript; charset=utf-8"),
    asset!("api.js", "text/javascript; charset=utf-8"),
    asset!("render.js", "text/javascript; charset=utf-8"),
    asset!("handoff.js", "text/javascript; charset=utf-8"),
    asset!("follow.js", "text/javascript; charset=utf-8"),
    asset!("tools.js", "text/javascript; charset=utf-8"),
    asset!("runstate.js", "text/javascript; charset=utf-8"),
    asset!("search.js", "text/javascript; charset=utf-8"),
    asset!("page.js", "text/javascript; charset=utf-8"),
    asset!("transcript.js", "text/javascript; charset=utf-8"),
    asset!("live.js", "text/javascript; charset=utf-8"),
    asset!("dialogs.js", "text/javascript; charset=utf-8"),
    asset!("edges.js", "text/javascript; charset=utf-8"),
    asset!("vendor/markdown-it.esm.min.mjs", "text/javascript; charset=utf-8"),
];

const APP_PAGE: &str = include_str!("../ui/index.html");
const SIGN_IN_PAGE: &str = include_str!("../ui/sign-in.html");

/// The names of the embedded assets, for the test that compares them with
/// the `ui/` folder.
pub fn asset_names() -> impl Iterator<Item = &'static str> {
    ASSETS.iter().map(|a| a.name)
}

/// The UI's routes, merged into the API's router.
pub(crate) fn routes() -> Router<ServerState> {
    Router::new()
        .route("/", get(page))
        .route("/s/{id}", get(session_page))
        .route("/sign-in", post(sign_in))
        .route("/sign-out", post(sign_out))
        .route("/ui/{*file}", get(asset))
}

fn page_headers(status: StatusCode, body: String) -> Response {
    (
        status,
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            // `same-origin`, not `no-referrer`: with the latter a form post says
            // `Origin: null`, and the sign-in could not tell it from a foreign one.
            (header::REFERRER_POLICY, "same-origin"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        body,
    )
        .into_response()
}

fn sign_in_page(status: StatusCode, problem: Option<&str>) -> Response {
    let problem = problem.map(|p| format!("<p class=\"problem\" role=\"alert\">{p}</p>")).unwrap_or_default();
    page_headers(status, SIGN_IN_PAGE.replace("<!--problem-->", &problem))
}

async fn signed_in(state: &ServerState, headers: &HeaderMap) -> bool {
    agent_of(state, presented_token(headers)).await.is_ok()
}

/// The app for a signed-in browser, else the sign-in form.
async fn page(State(state): State<ServerState>, headers: HeaderMap) -> Response {
    if signed_in(&state, &headers).await {
        page_headers(StatusCode::OK, APP_PAGE.to_owned())
    } else {
        sign_in_page(StatusCode::OK, None)
    }
}

/// A session's address: the same app, which reads the id from the path.
async fn session_page(state: State<ServerState>, headers: HeaderMap, Path(_id): Path<String>) -> Response {
    page(state, headers).await
}

/// The sign-in form's body.
#[derive(Debug, serde::Deserialize)]
struct SignIn {
    token: String,
}

fn see_home(cookie: String) -> Response {
    let mut response = (StatusCode::SEE_OTHER, [(header::LOCATION, "/")]).into_response();
    if let Ok(value) = HeaderValue::from_str(&cookie) {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    response
}

/// A form posted from another site may not sign this browser in (or out).
async fn sign_in(State(state): State<ServerState>, headers: HeaderMap, form: Form<SignIn>) -> Response {
    if same_origin(&headers, "sign in").is_err() {
        return sign_in_page(StatusCode::FORBIDDEN, Some("Sign in from this server's own page."));
    }
    let token = form.0.token.trim().to_owned();
    // A cookie value may not hold these; no token of ours does.
    if token.is_empty() || !token.bytes().all(|b| b.is_ascii_graphic() && b != b';' && b != b',' && b != b'"') {
        return sign_in_page(StatusCode::UNAUTHORIZED, Some("That is not a token of this server."));
    }
    match agent_of(&state, Some(token.clone())).await {
        Ok(_) => see_home(format!(
            "{TOKEN_COOKIE}={token}; HttpOnly; SameSite=Strict; Path=/; Max-Age={COOKIE_MAX_AGE_SECS}"
        )),
        Err(e) if e.status == StatusCode::UNAUTHORIZED => {
            sign_in_page(StatusCode::UNAUTHORIZED, Some("That is not a token of this server."))
        }
        Err(e) => sign_in_page(e.status, Some("The server could not check the token; try again.")),
    }
}

async fn sign_out(headers: HeaderMap) -> Response {
    if same_origin(&headers, "sign out").is_err() {
        return sign_in_page(StatusCode::FORBIDDEN, Some("Sign out from this server's own page."));
    }
    see_home(format!("{TOKEN_COOKIE}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0"))
}

async fn asset(Path(file): Path<String>) -> Response {
    match ASSETS.iter().find(|a| a.name == file) {
        Some(asset) => (
            [
                (header::CONTENT_TYPE, asset.content_type),
                (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
                (header::CACHE_CONTROL, "no-cache"),
            ],
            asset.bytes,
        )
            .into_response(),
        None => ApiError::not_found(format!("no asset {file}")).into_response(),
    }
}

//! The web UI's pages and sign-in over real HTTP: the app only for a
//! browser whose cookie names an agent, the sign-in form (and no data) for
//! any other, a cookie scripts cannot read, sign-in refused from another
//! site, and the embedded assets served with their types.

use reqwest::StatusCode;
use reqwest::header::{CONTENT_SECURITY_POLICY, CONTENT_TYPE, LOCATION, SET_COOKIE};
use serde_json::json;

use crate::support::{Server, TOKEN};

fn no_redirects() -> reqwest::Client {
    reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap()
}

async fn sign_in(server: &Server, token: &str, origin: Option<&str>) -> reqwest::Response {
    let mut request = no_redirects()
        .post(format!("{}/sign-in", server.url))
        .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(format!("token={token}"));
    if let Some(origin) = origin {
        request = request.header("Origin", origin);
    }
    request.send().await.unwrap()
}

#[tokio::test]
async fn without_a_cookie_every_page_is_the_sign_in_form_with_no_data() {
    let server = Server::start(json!([])).await;
    let session = server.post_json("/api/sessions", json!({ "title": "Secret plans" })).await;
    let id = session["session"]["id"].as_str().unwrap().to_owned();
    for path in ["/".to_owned(), format!("/s/{id}")] {
        let page = reqwest::get(format!("{}{path}", server.url)).await.unwrap();
        assert_eq!(page.status(), StatusCode::OK);
        let csp = page.headers()[CONTENT_SECURITY_POLICY].to_str().unwrap().to_owned();
        assert!(csp.contains("script-src 'self'") && csp.contains("default-src 'none'"), "{csp}");
        let body = page.text().await.unwrap();
        assert!(body.contains("action=\"/sign-in\""), "{body}");
        assert!(!body.contains("Secret plans") && !body.contains("/ui/app.js"), "no data, no app: {body}");
    }
    // A wrong token, or one with characters no cookie may hold.
    for token in ["not-ours", "a%3Bb"] {
        let refused = sign_in(&server, token, None).await;
        assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
        assert!(refused.headers().get(SET_COOKIE).is_none());
        assert!(refused.text().await.unwrap().contains("That is not a token of this server."));
    }
    server.stop().await;
}

#[tokio::test]
async fn a_valid_token_sets_an_http_only_strict_cookie_that_opens_the_app_and_the_api() {
    let server = Server::start(json!([])).await;
    let host = server.url.clone();
    let signed = sign_in(&server, TOKEN, Some(&host)).await;
    assert_eq!(signed.status(), StatusCode::SEE_OTHER);
    assert_eq!(signed.headers()[LOCATION], "/");
    let cookie = signed.headers()[SET_COOKIE].to_str().unwrap().to_owned();
    assert!(cookie.starts_with(&format!("seri_token={TOKEN};")), "{cookie}");
    for part in ["HttpOnly", "SameSite=Strict", "Path=/"] {
        assert!(cookie.contains(part), "{part} in {cookie}");
    }
    let pair = cookie.split(';').next().unwrap().to_owned();

    let http = no_redirects();
    let app = http.get(format!("{}/", server.url)).header("Cookie", &pair).send().await.unwrap();
    assert_eq!(app.status(), StatusCode::OK);
    let body = app.text().await.unwrap();
    assert!(body.contains("/ui/app.js") && body.contains("id=\"session-list\""), "{body}");
    let listed = http.get(format!("{}/api/sessions", server.url)).header("Cookie", &pair).send().await.unwrap();
    assert_eq!(listed.status(), StatusCode::OK, "the cookie signs API calls too");

    let out = http.post(format!("{}/sign-out", server.url)).header("Origin", &host).send().await.unwrap();
    assert_eq!(out.status(), StatusCode::SEE_OTHER);
    let cleared = out.headers()[SET_COOKIE].to_str().unwrap();
    assert!(cleared.starts_with("seri_token=;") && cleared.contains("Max-Age=0"), "{cleared}");
    server.stop().await;
}

#[tokio::test]
async fn a_sign_in_posted_from_another_site_is_refused() {
    let server = Server::start(json!([])).await;
    let refused = sign_in(&server, TOKEN, Some("http://evil.example")).await;
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);
    assert!(refused.headers().get(SET_COOKIE).is_none());
    let out = no_redirects()
        .post(format!("{}/sign-out", server.url))
        .header("Origin", "http://evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(out.status(), StatusCode::FORBIDDEN);
    server.stop().await;
}

#[tokio::test]
async fn every_file_of_the_ui_folder_is_embedded_and_served_with_its_type() {
    let server = Server::start(json!([])).await;
    let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("ui");
    let mut on_disk = Vec::new();
    for entry in walk(&folder) {
        let name = entry.strip_prefix(&folder).unwrap().to_str().unwrap().to_owned();
        if !name.ends_with(".html") {
            on_disk.push(name);
        }
    }
    on_disk.sort();
    let mut embedded: Vec<String> = seri_server::ui::asset_names().map(str::to_owned).collect();
    embedded.sort();
    assert_eq!(embedded, on_disk, "ui.rs's ASSETS and the ui/ folder disagree");
    for name in &embedded {
        let served = reqwest::get(format!("{}/ui/{name}", server.url)).await.unwrap();
        assert_eq!(served.status(), StatusCode::OK, "{name}");
        let kind = served.headers()[CONTENT_TYPE].to_str().unwrap().to_owned();
        let expected = if name.ends_with(".css") { "text/css" } else { "text/javascript" };
        assert!(kind.starts_with(expected), "{name}: {kind}");
        assert_eq!(served.bytes().await.unwrap(), std::fs::read(folder.join(name)).unwrap(), "{name}");
    }
    let missing = reqwest::get(format!("{}/ui/nope.js", server.url)).await.unwrap();
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);
    server.stop().await;
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}

//! `GET /api/search`: the caller's hits, best first, as `seri search
//! --json` prints them; a query the syntax refuses is a 400 saying why;
//! another agent finds nothing of ours.

use serde_json::json;

use crate::support::{Server, text};

#[tokio::test]
async fn search_finds_what_was_said_and_refuses_a_broken_query() {
    let server = Server::start(json!([text("The retry policy caps backoff at thirty seconds.")])).await;
    let session = server.session().await;
    server.say(&session, "What is our retry policy?").await;

    let found = server.get_json("/api/search?q=retry%20policy").await;
    let hits = found["hits"].as_array().unwrap();
    assert_eq!(hits.len(), 2, "{found}");
    let kinds: Vec<&str> = hits.iter().map(|h| h["kind"].as_str().unwrap()).collect();
    assert!(kinds.contains(&"user") && kinds.contains(&"assistant"), "{kinds:?}");
    for hit in hits {
        assert_eq!(hit["sessionId"], session.as_str());
        assert_eq!(hit["sharedWith"], json!([]));
        assert!(hit["snippet"].as_str().unwrap().contains("«retry» «policy»"), "{hit}");
    }
    let limited = server.get_json("/api/search?q=retry&limit=1").await;
    assert_eq!(limited["hits"].as_array().unwrap().len(), 1);
    assert_eq!(server.get_json("/api/search?q=absent").await, json!({ "hits": [] }));

    let broken = server.get("/api/search?q=%22retry").send().await.unwrap();
    assert_eq!(broken.status(), 400);
    let error: serde_json::Value = broken.json().await.unwrap();
    assert_eq!(error["error"]["code"], "bad_query");
    assert!(error["error"]["message"].as_str().unwrap().contains("never closed"), "{error}");

    let theirs = server
        .http
        .get(format!("{}/api/search?q=retry", server.url))
        .bearer_auth(&server.other_token)
        .send()
        .await
        .unwrap();
    assert_eq!(theirs.json::<serde_json::Value>().await.unwrap(), json!({ "hits": [] }));
    server.stop().await;
}

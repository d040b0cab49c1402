//! The OpenAPI document as a checker: every answer a test server gives
//! (whichever client asked) and every WebSocket frame a test client reads
//! is checked against the document's schemas, so the document cannot
//! drift from the server. Checked strictly: an object's properties are all
//! the document names (`additionalProperties: false` is added wherever a
//! schema lists properties and says nothing else), so a field the server
//! sends and the document leaves out fails too.

use std::sync::{Arc, Mutex, OnceLock};

use axum::body::Body;
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use serde_json::Value;

/// Where the document is loaded, for the validator's references.
const BASE: &str = "http://seri.invalid/openapi.json";

/// The document, with every schema the checks use compiled up front (the
/// compiler is not `Send`; what it compiles is).
struct Checker {
    document: Value,
    schemas: boon::Schemas,
    compiled: std::collections::HashMap<String, boon::SchemaIndex>,
}

fn checker() -> &'static Checker {
    static CHECKER: OnceLock<Checker> = OnceLock::new();
    CHECKER.get_or_init(|| {
        let mut document = seri_server::openapi::document_value();
        strict(&mut document);
        let mut compiler = boon::Compiler::new();
        compiler.enable_format_assertions();
        compiler.add_resource(BASE, document.clone()).unwrap();
        let mut schemas = boon::Schemas::new();
        let mut compiled = std::collections::HashMap::new();
        for pointer in schema_pointers(&document) {
            let index = compiler.compile(&format!("{BASE}#{pointer}"), &mut schemas).unwrap();
            compiled.insert(pointer, index);
        }
        Checker { document, schemas, compiled }
    })
}

/// Where the document keeps a JSON schema the checks use: each operation's
/// JSON request body and answers, and the frames.
fn schema_pointers(document: &Value) -> Vec<String> {
    let mut pointers = vec!["/components/schemas/ServerFrame".to_owned(), "/components/schemas/ClientFrame".to_owned()];
    for (path, item) in document["paths"].as_object().into_iter().flatten() {
        for (method, operation) in item.as_object().into_iter().flatten() {
            let at = format!("/paths/{}/{method}", token(path));
            for (n, parameter) in operation["parameters"].as_array().into_iter().flatten().enumerate() {
                if parameter.get("schema").is_some() {
                    pointers.push(format!("{at}/parameters/{n}/schema"));
                }
            }
            if operation.pointer("/requestBody/content/application~1json/schema").is_some() {
                pointers.push(format!("{at}/requestBody/content/application~1json/schema"));
            }
            for (status, response) in operation["responses"].as_object().into_iter().flatten() {
                if response.pointer("/content/application~1json/schema").is_some() {
                    pointers.push(format!("{at}/responses/{status}/content/application~1json/schema"));
                }
            }
        }
    }
    pointers
}

/// `additionalProperties: false` on every schema that lists properties and
/// does not say otherwise.
fn strict(value: &mut Value) {
    match value {
        Value::Object(object) => {
            if object.get("properties").is_some_and(Value::is_object) && !object.contains_key("additionalProperties") {
                object.insert("additionalProperties".to_owned(), Value::Bool(false));
            }
            object.values_mut().for_each(strict);
        }
        Value::Array(items) => items.iter_mut().for_each(strict),
        _ => {}
    }
}

/// A JSON pointer's token.
fn token(text: &str) -> String {
    text.replace('~', "~0").replace('/', "~1")
}

/// Checks `instance` against the schema at `pointer` of the document.
fn check_at(pointer: &str, instance: &Value) -> Result<(), String> {
    let checker = checker();
    let Some(index) = checker.compiled.get(pointer) else { return Err(format!("no schema at {pointer}")) };
    checker.schemas.validate(instance, *index).map_err(|e| format!("{e:#}"))
}

/// Checks a frame the server sent against `ServerFrame`.
pub(crate) fn check_server_frame(frame: &Value) {
    if let Err(e) = check_at("/components/schemas/ServerFrame", frame) {
        panic!("a frame the server sent does not fit the document's ServerFrame:\n{frame}\n{e}");
    }
}

/// Checks one exchange against the document: the status must be one the
/// operation documents, and a body of a documented JSON answer must fit its
/// schema; a JSON request body the server took (2xx) must fit the
/// document's request body. `None` when it fits, or when the route is not
/// the API's (the web UI's pages).
fn check_exchange(
    method: &str,
    path: &str,
    query: &[(String, String)],
    request: Option<&[u8]>,
    status: u16,
    content_type: &str,
    body: &[u8],
) -> Option<String> {
    let template = seri_server::paths::template_of(path)?;
    let document = &checker().document;
    let method = method.to_ascii_lowercase();
    let operation_pointer = format!("/paths/{}/{method}", token(template));
    let Some(operation) = document.pointer(&operation_pointer) else {
        // axum's own 405 for a method the route does not take.
        return (status != 405).then(|| format!("{method} {template} is not documented, yet answered {status}"));
    };
    let Some(response) = operation["responses"].get(status.to_string()) else {
        return Some(format!("{method} {template} answered {status}, which the document does not list"));
    };
    let context = |problem: String| format!("{method} {path} {status}: {problem}");
    if (200..300).contains(&status)
        && let Some(problem) = check_query(operation, &operation_pointer, query)
    {
        return Some(context(problem));
    }
    if let Some(request) = request.filter(|r| !r.is_empty() && (200..300).contains(&status))
        && operation.pointer("/requestBody/content/application~1json").is_some()
    {
        let sent: Value = match serde_json::from_slice(request) {
            Ok(sent) => sent,
            Err(e) => return Some(context(format!("the server took a body that is not JSON: {e}"))),
        };
        let pointer = format!("{operation_pointer}/requestBody/content/application~1json/schema");
        if let Err(e) = check_at(&pointer, &sent) {
            return Some(context(format!("the server took a body the document refuses:\n{sent}\n{e}")));
        }
    }
    let Some(content) = response.get("content").and_then(Value::as_object) else {
        return (!body.is_empty()).then(|| context("a body the document does not describe".to_owned()));
    };
    let media = content_type.split(';').next().unwrap_or_default().trim();
    let Some(described) = content.get(media) else {
        let listed: Vec<&String> = content.keys().collect();
        return Some(context(format!("content type `{content_type}`, the document lists {listed:?}")));
    };
    if media != "application/json" {
        return None;
    }
    let answer: Value = match serde_json::from_slice(body) {
        Ok(answer) => answer,
        Err(e) => return Some(context(format!("the body is not JSON: {e}"))),
    };
    let pointer = format!("{operation_pointer}/responses/{status}/content/application~1json/schema");
    described.get("schema")?;
    check_at(&pointer, &answer).err().map(|e| context(format!("the body does not fit the document:\n{answer}\n{e}")))
}

/// Whether the query a request's answer took (a 2xx) fits the document:
/// every parameter named there, each value within its schema. A value is
/// read as its schema's type reads it (`limit=5` is the integer 5).
fn check_query(operation: &Value, operation_pointer: &str, query: &[(String, String)]) -> Option<String> {
    let parameters = operation["parameters"].as_array().cloned().unwrap_or_default();
    for (name, text) in query {
        let Some(n) = parameters.iter().position(|p| p["in"] == "query" && p["name"] == name.as_str()) else {
            return Some(format!("the server took a query parameter the document does not name: {name}"));
        };
        let schema = &parameters[n]["schema"];
        let value = match schema["type"].as_str() {
            Some("integer") => text.parse::<i128>().ok().and_then(|i| serde_json::to_value(i).ok()),
            Some("boolean") => text.parse::<bool>().ok().map(Value::Bool),
            _ => Some(Value::String(text.clone())),
        };
        let Some(value) = value else {
            return Some(format!("the server took {name}={text}, which is not of the document's type"));
        };
        if let Err(e) = check_at(&format!("{operation_pointer}/parameters/{n}/schema"), &value) {
            return Some(format!("the server took {name}={text}, which the document refuses: {e}"));
        }
    }
    None
}

/// What the checks found wrong, for one server.
pub(crate) type Findings = Arc<Mutex<Vec<String>>>;

/// A layer around everything a test server answers: each exchange is
/// checked, and what does not fit is kept in `findings` (the test fails
/// when its server is stopped or dropped). The answer goes on unchanged.
pub(crate) fn checking(app: axum::Router, findings: Findings) -> axum::Router {
    app.layer(axum::middleware::from_fn(move |request: Request, next: Next| {
        let findings = findings.clone();
        async move { check(request, next, findings).await }
    }))
}

async fn check(request: Request, next: Next, findings: Findings) -> Response {
    let (method, path) = (request.method().to_string(), request.uri().path().to_owned());
    let query: Vec<(String, String)> =
        axum::extract::Query::<Vec<(String, String)>>::try_from_uri(request.uri()).map(|q| q.0).unwrap_or_default();
    let upgrade = request.headers().contains_key(axum::http::header::UPGRADE);
    // The request body is copied as the server reads it, never read ahead:
    // the server's own bounds (a body that stops arriving) stay its own.
    let (parts, body) = request.into_parts();
    let copy = Arc::new(Mutex::new(Vec::new()));
    let tee = copy.clone();
    let body = futures_util::StreamExt::map(body.into_data_stream(), move |chunk| {
        if let Ok(bytes) = &chunk {
            tee.lock().unwrap().extend_from_slice(bytes);
        }
        chunk
    });
    let response = next.run(Request::from_parts(parts, Body::from_stream(body))).await;
    let sent = Some(std::mem::take(&mut *copy.lock().unwrap()));
    let status = response.status().as_u16();
    if status == 101 || upgrade && status < 300 {
        return response;
    }
    let content_type = response
        .headers()
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let (parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, usize::MAX).await else {
        findings.lock().unwrap().push(format!("{method} {path} {status}: the body could not be read"));
        return Response::from_parts(parts, Body::empty());
    };
    if let Some(problem) = check_exchange(&method, &path, &query, sent.as_deref(), status, &content_type, &bytes) {
        findings.lock().unwrap().push(problem);
    }
    Response::from_parts(parts, Body::from(bytes))
}

#[test]
fn the_checker_refuses_what_the_document_does_not_say() {
    // A frame with a field the document does not name, and one with the
    // snake_case name the document once wrongly gave.
    let frame = serde_json::json!({ "type": "subscribed", "sessionId": null, "account": true });
    assert!(check_at("/components/schemas/ServerFrame", &frame).is_ok());
    let extra = serde_json::json!({ "type": "subscribed", "sessionId": null, "account": true, "more": 1 });
    assert!(check_at("/components/schemas/ServerFrame", &extra).is_err());
    let snake = serde_json::json!({ "type": "session-change", "session_id": "x", "session": {} });
    assert!(check_at("/components/schemas/ServerFrame", &snake).is_err());
    // An answer the document does not list for the route.
    let teapot = check_exchange("GET", "/api/sessions", &[], None, 418, "application/json", b"{}");
    assert!(teapot.is_some_and(|p| p.contains("418")));
    let wrong_body = check_exchange("GET", "/api/sessions", &[], None, 200, "application/json", br#"{"sessions": 1}"#);
    assert!(wrong_body.is_some());
    assert_eq!(check_exchange("GET", "/", &[], None, 200, "text/html", b"<html>"), None, "the web UI is not the API's");
    // A query the server took must be one the document allows.
    let took = |query: &[(&str, &str)]| {
        let query: Vec<(String, String)> = query.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        check_exchange("GET", "/api/sessions", &query, None, 200, "application/json", br#"{"sessions": []}"#)
    };
    assert_eq!(took(&[("limit", "5")]), None);
    assert!(took(&[("limit", "0")]).is_some_and(|p| p.contains("limit=0")));
    assert!(took(&[("colour", "red")]).is_some_and(|p| p.contains("colour")));
}

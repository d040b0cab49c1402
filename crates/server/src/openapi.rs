//! The OpenAPI 3.1 document, generated from the wire types and the
//! handlers' annotations. `openapi.json` beside this crate's manifest is the
//! committed copy; a test fails when it is stale (`SERI_UPDATE_OPENAPI=1
//! cargo test -p seri-server openapi` writes it again).
//!
//! A handler's annotation names what is its own (its success bodies, and an
//! error only it gives); the answers every route of a kind can give (401 on
//! a route that needs a token, 404 on one that names a thing, 400 and 415
//! on one that takes a JSON body, 421 everywhere…) are added here, once, by
//! `complete`. The server's test suite checks every answer it sees
//! against this document, so what it says is what the server does.

use serde_json::{Value, json};
use utoipa::OpenApi;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};

use crate::paths;
use crate::protocol;

/// The document, as the annotations give it; [`document_value`] completes it.
#[derive(OpenApi)]
#[openapi(
    info(title = "seri serve", description = "seri's HTTP and WebSocket API: sessions, messages, continuations, approvals. \
        Every error is `{\"error\": {\"code\", \"message\"}}` with a 4xx or 5xx status. \
        On every route: a `Host` that does not name the server is 421 `wrong_host`; a write signed by the web UI's \
        cookie (not a bearer token) from a page of another origin (`Origin`, `Sec-Fetch-Site`) is 403 `bad_origin`. \
        A route that needs a token checks it before reading a byte of the body (401, and the connection closes); \
        a body past its route's limit is 413 naming the limit (64 KiB for JSON control routes, 28 MiB for a message). \
        The WebSocket (`/api/ws`) carries `ClientFrame`s and `ServerFrame`s (see the schemas)."),
    paths(
        crate::routes::health,
        crate::routes::list_sessions,
        crate::routes::create_session,
        crate::routes::get_session,
        crate::routes::events,
        crate::routes::thread,
        crate::routes::messages::post_message,
        crate::routes::cancel,
        crate::routes::fork,
        crate::routes::settings::get_sandbox,
        crate::routes::settings::set_sandbox,
        crate::routes::settings::get_permissions,
        crate::routes::settings::set_permissions,
        crate::routes::approvals,
        crate::routes::approve,
        crate::routes::continuation,
        crate::routes::recalls,
        crate::routes::search::search,
        crate::routes::job,
        serve_document,
        crate::ws::upgrade,
    ),
    components(schemas(protocol::ClientFrame, protocol::ServerFrame)),
    modifiers(&BearerAuth),
    security(("bearer" = []))
)]
pub struct ApiDoc;

struct BearerAuth;

impl utoipa::Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
    }
}

/// This document, as JSON. Needs no token.
#[utoipa::path(get, path = paths::OPENAPI, security(()),
    responses((status = 200, description = "the OpenAPI 3.1 document", content_type = "application/json", body = Object)))]
pub(crate) async fn serve_document() -> axum::response::Response {
    use axum::response::IntoResponse as _;
    ([(axum::http::header::CONTENT_TYPE, "application/json")], document()).into_response()
}

/// The document as the server serves it and the repository keeps it.
pub fn document() -> String {
    serde_json::to_string_pretty(&document_value()).unwrap_or_default() + "\n"
}

/// The complete document.
pub fn document_value() -> Value {
    let mut doc = serde_json::to_value(ApiDoc::openapi()).unwrap_or_default();
    complete(&mut doc);
    doc
}

/// The routes that need no token.
const PUBLIC: &[&str] = &[paths::HEALTH, paths::OPENAPI];

/// Path parameters that are ids of seri's (UUIDv7 text); any other text is
/// a 404 like a missing one.
const UUID_PARAMETERS: &[(&str, &str)] = &[
    (paths::SESSION, "id"),
    (paths::SESSION_EVENTS, "id"),
    (paths::SESSION_THREAD, "id"),
    (paths::SESSION_MESSAGES, "id"),
    (paths::SESSION_CANCEL, "id"),
    (paths::SESSION_FORK, "id"),
    (paths::SESSION_APPROVALS, "id"),
    (paths::RUN_APPROVAL, "runId"),
    (paths::CONTINUATION, "id"),
];

/// Adds what the annotations leave to this module: the answers routes of a
/// kind share, public routes' empty security, id formats, and the frames'
/// discriminator mappings.
fn complete(doc: &mut Value) {
    let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) else { return };
    for (path, item) in paths.iter_mut() {
        let Some(item) = item.as_object_mut() else { continue };
        for (method, operation) in item.iter_mut() {
            complete_operation(path, method, operation);
        }
    }
    add_links(doc);
    flatten_single_choices(doc);
    name_members(doc, "StreamEvent", "Event");
    for union in ["ServerFrame", "ClientFrame", "StreamEvent"] {
        map_discriminator(doc, union, "type");
    }
    map_discriminator(doc, "ToolFacts", "kind");
}

/// `{"description", "oneOf": [S]}` is S with that description: utoipa wraps
/// a documented field of an inlined enum so, and generators then make a
/// union of one where a plain enum (a frame's `type`) was meant.
fn flatten_single_choices(value: &mut Value) {
    match value {
        Value::Object(object) => {
            let single = object.get("oneOf").and_then(Value::as_array).filter(|choices| choices.len() == 1).cloned();
            if let Some(mut choices) = single
                && object.keys().all(|k| k == "oneOf" || k == "description")
                && let Some(Value::Object(mut only)) = choices.pop()
            {
                if let Some(description) = object.remove("description") {
                    only.insert("description".to_owned(), description);
                }
                *object = only;
            }
            object.values_mut().for_each(flatten_single_choices);
        }
        Value::Array(items) => items.iter_mut().for_each(flatten_single_choices),
        _ => {}
    }
}

/// Operations that take a session's id, and the names of their links.
const SESSION_OPERATIONS: &[(&str, &str)] = &[
    ("get_session", "GetSession"),
    ("events", "Events"),
    ("thread", "Thread"),
    ("post_message", "PostMessage"),
    ("cancel", "Cancel"),
    ("approvals", "Approvals"),
    ("fork", "Fork"),
];

/// OpenAPI links: where an answer's ids lead (a new session to every
/// operation on a session, an accepted message to its job), so a client,
/// or schemathesis's stateful phase, can follow them.
fn add_links(doc: &mut Value) {
    let session_links: serde_json::Map<String, Value> = SESSION_OPERATIONS
        .iter()
        .map(|(operation, name)| {
            let link = json!({"operationId": operation, "parameters": {"id": "$response.body#/session/id"}});
            ((*name).to_owned(), link)
        })
        .collect();
    for (path, status) in [(paths::SESSIONS, "201"), (paths::SESSION_FORK, "201")] {
        if let Some(response) = doc["paths"][path]["post"]["responses"].get_mut(status) {
            response["links"] = Value::Object(session_links.clone());
        }
    }
    if let Some(response) = doc["paths"][paths::SESSION_MESSAGES]["post"]["responses"].get_mut("202") {
        response["links"] = json!({"Job": {"operationId": "job", "parameters": {"id": "$response.body#/jobId"}}});
    }
}

/// The group a route is listed under (a generated client's module).
fn tag_of(path: &str) -> &'static str {
    match path {
        paths::HEALTH | paths::OPENAPI => "server",
        paths::RUN_APPROVAL => "runs",
        paths::CONTINUATION | paths::RECALLS => "continuations",
        paths::JOB => "jobs",
        paths::SEARCH => "search",
        paths::WS => "websocket",
        _ => "sessions",
    }
}

fn complete_operation(path: &str, method: &str, operation: &mut Value) {
    // Not utoipa's module path (`crate::routes`).
    operation["tags"] = json!([tag_of(path)]);
    let public = PUBLIC.contains(&path);
    if public {
        // An empty list, not `[{}]`: no scheme at all.
        operation["security"] = json!([]);
    }
    if let Some(parameters) = operation.get_mut("parameters").and_then(Value::as_array_mut) {
        for parameter in parameters {
            let name = parameter["name"].as_str().unwrap_or_default().to_owned();
            if parameter["in"] == "path" && UUID_PARAMETERS.contains(&(path, name.as_str())) {
                parameter["schema"]["format"] = "uuid".into();
            }
        }
    }
    let parameters = operation.get("parameters").and_then(Value::as_array).cloned().unwrap_or_default();
    let takes_query = parameters.iter().any(|p| p["in"] == "query");
    let names_a_thing = parameters.iter().any(|p| p["in"] == "path");
    let takes_json = operation.get("requestBody").is_some();
    // Every unsafe method writes (the guard refuses them signed by the cookie from elsewhere).
    let writes = matches!(method, "post" | "put" | "patch" | "delete");
    let mut add = |status: u16| {
        let (code, description) = shared_answer(status);
        let responses = &mut operation["responses"];
        let key = status.to_string();
        if responses.get(&key).is_none() {
            responses[key] = json!({
                "description": format!("{description} (`{code}`)"),
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorResponse"}}},
            });
        }
    };
    if !public {
        add(401);
    }
    if takes_query || takes_json || writes || path == paths::WS {
        add(400);
    }
    if writes || path == paths::WS {
        add(403);
    }
    if names_a_thing {
        add(404);
    }
    // Before any route: headers too slow, or an address holding too many
    // connections without a token.
    add(408);
    add(429);
    if writes {
        add(409);
        add(413);
        add(507);
    }
    if takes_json {
        add(415);
    }
    add(421);
    add(500);
    if path != paths::OPENAPI {
        add(503);
    }
}

/// The code and the description of an answer routes share.
fn shared_answer(status: u16) -> (&'static str, &'static str) {
    match status {
        400 => (
            "bad_json, unknown_field, bad_query, bad_range, bad_request",
            "Bad input, and nothing was written: a body that is not JSON or does not fit, a field this route does not take, \
             a query or a range out of bounds",
        ),
        401 => ("unauthorized", "No token, or one this server does not know"),
        403 => ("bad_origin", "Signed by the web UI's cookie from a page of another origin"),
        404 => ("not_found", "No such thing, or another agent's: the two look the same"),
        408 => (
            "header_timeout, body_timeout",
            "The request's headers, or its body, did not arrive within their time (a body's grows with its length)",
        ),
        409 => ("busy, conflict", "The session is busy, or the store refused a conflicting write"),
        413 => ("too_large", "The body is larger than the route takes (the message names the limit)"),
        415 => ("bad_content_type", "The body is not sent as `application/json`"),
        429 => (
            "too_many_connections",
            "This address holds too many connections that have not presented a valid token; the connection is \
             closed, and `Retry-After` says when to try again",
        ),
        421 => ("wrong_host", "The `Host` does not name this server"),
        500 => ("internal", "A fault of the server"),
        503 => ("store_unavailable, busy", "The store does not answer, or is busy: try again"),
        507 => ("disk_full", "The store's disk is full; nothing was written"),
        _ => ("", ""),
    }
}

/// Moves each inline member of the `oneOf` union `name` (a serde enum of
/// struct variants, such as the stream events) into a schema of its own,
/// named after its `type` word (`run_started` → `RunStartedEvent`), so a
/// generated client has a named model for each.
fn name_members(doc: &mut Value, name: &str, suffix: &str) {
    let Some(members) = doc["components"]["schemas"][name]["oneOf"].as_array().cloned() else { return };
    let mut named = Vec::with_capacity(members.len());
    for member in members {
        let Some(tag) = member["properties"]["type"]["enum"][0].as_str() else {
            named.push(member);
            continue;
        };
        let title: String = tag
            .split(['_', '-'])
            .map(|word| {
                let mut chars = word.chars();
                chars.next().map(|c| c.to_ascii_uppercase().to_string() + chars.as_str()).unwrap_or_default()
            })
            .collect::<String>()
            + suffix;
        named.push(json!({"$ref": format!("#/components/schemas/{title}")}));
        doc["components"]["schemas"][title] = member;
    }
    doc["components"]["schemas"][name]["oneOf"] = Value::Array(named);
}

/// Gives the `oneOf` union `name` an explicit discriminator mapping, read
/// from each member's one-value `property` enum (`type` for frames and run
/// events, `kind` for tool facts), so a generated client tells the members
/// apart by the word the server really sends.
fn map_discriminator(doc: &mut Value, name: &str, property: &str) {
    let schemas = &doc["components"]["schemas"];
    let mut mapping = serde_json::Map::new();
    for member in schemas[name]["oneOf"].as_array().into_iter().flatten() {
        let Some(reference) = member["$ref"].as_str() else { continue };
        let Some(target) = reference.strip_prefix("#/components/schemas/") else { continue };
        if let Some(tag) = schemas[target]["properties"][property]["enum"][0].as_str() {
            mapping.insert(tag.to_owned(), reference.into());
        }
    }
    doc["components"]["schemas"][name]["discriminator"] = json!({"propertyName": property, "mapping": mapping});
}

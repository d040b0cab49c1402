//! The OpenAPI 3.1 document, generated from the wire types and the
//! handlers' annotations. `openapi.json` beside this crate's manifest is the
//! committed copy; a test fails when it is stale (`SERI_UPDATE_OPENAPI=1
//! cargo test -p seri-server openapi` writes it again).

use utoipa::OpenApi;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};

use crate::protocol;

/// The document.
#[derive(OpenApi)]
#[openapi(
    info(title = "seri serve", description = "seri's HTTP and WebSocket API: sessions, messages, continuations, approvals. \
        On every route: a `Host` that does not name the server is 421 `wrong_host`; a write signed by the web UI's \
        cookie (not a bearer token) from a page of another origin (`Origin`, `Sec-Fetch-Site`) is 403 `bad_origin`."),
    paths(
        crate::routes::health,
        crate::routes::list_sessions,
        crate::routes::create_session,
        crate::routes::get_session,
        crate::routes::events,
        crate::routes::thread,
        crate::routes::post_message,
        crate::routes::cancel,
        crate::routes::approvals,
        crate::routes::approve,
        crate::routes::continuation,
        crate::routes::job,
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

/// The document as the server serves it and the repository keeps it.
pub fn document() -> String {
    ApiDoc::openapi().to_pretty_json().unwrap_or_default() + "\n"
}

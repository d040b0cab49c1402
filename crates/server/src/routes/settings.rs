//! A session's settings over the API: its sandbox (`…/sandbox`) and its
//! permission mode (`…/permissions`). Each is read from the session's view
//! and changed through the run loop as an event (`sandbox_changed`,
//! `permission_mode_changed`), so every server on the database, a restarted
//! one and the CLI see and apply the same.

use axum::extract::{Path, State};

use super::session_id;
use crate::auth::Caller;
use crate::error::ApiError;
use crate::extract::ApiJson;
use crate::paths;
use crate::protocol::{PermissionsParams, PermissionsResponse, SandboxParams, SandboxResponse};
use crate::state::ServerState;

/// What `bash` may touch in a session: its mode and network (the server's
/// configured ones until changed), and whether this kernel enforces them.
/// The session's choices are its `sandbox_changed` events: every server on
/// the database shows and applies the same.
#[utoipa::path(get, path = paths::SESSION_SANDBOX, params(("id" = String, Path, description = "session id")),
    responses((status = 200, body = SandboxResponse)))]
pub(crate) async fn get_sandbox(
    State(state): State<ServerState>,
    Caller(agent): Caller,
    Path(id): Path<String>,
) -> Result<axum::Json<SandboxResponse>, ApiError> {
    let id = session_id(&id)?;
    let info = state.blocking(move |store| Ok(store.agent(&agent).info(id)?)).await?;
    let sandbox = server_sandbox(&state)?;
    Ok(axum::Json(sandbox_response(&sandbox, &info)))
}

/// Changes what `bash` may touch in a session, from its next call on (its
/// delegated children's calls too); what is left out stays. Recorded as a
/// `sandbox_changed` event, so every server on the database applies it, a
/// restarted one and `seri -r` too (409 while a run holds the session).
#[utoipa::path(put, path = paths::SESSION_SANDBOX, params(("id" = String, Path, description = "session id")),
    request_body = SandboxParams,
    responses((status = 200, body = SandboxResponse)))]
pub(crate) async fn set_sandbox(
    State(state): State<ServerState>,
    Caller(agent): Caller,
    Path(id): Path<String>,
    ApiJson(params): ApiJson<SandboxParams>,
) -> Result<axum::Json<SandboxResponse>, ApiError> {
    let id = session_id(&id)?;
    let owner = agent.clone();
    state.blocking(move |store| Ok(store.agent(&owner).summary(id)?)).await?;
    let sandbox = server_sandbox(&state)?;
    let (mode, network) = (params.mode.map(seri_tools::SandboxMode::from), params.network);
    if mode.is_some() || network.is_some() {
        let runtime = state.agent_runtime(&agent)?;
        tokio::task::spawn_blocking(move || runtime.runtime.set_sandbox(id, mode, network))
            .await
            .map_err(|e| ApiError::internal(format!("the change stopped: {e}")))??;
    }
    let info = state.blocking(move |store| Ok(store.agent(&agent).info(id)?)).await?;
    Ok(axum::Json(sandbox_response(&sandbox, &info)))
}

/// The permission mode a session's tools run under: its own choice (a
/// `permission_mode_changed` event), else the server's.
#[utoipa::path(get, path = paths::SESSION_PERMISSIONS, params(("id" = String, Path, description = "session id")),
    responses((status = 200, body = PermissionsResponse)))]
pub(crate) async fn get_permissions(
    State(state): State<ServerState>,
    Caller(agent): Caller,
    Path(id): Path<String>,
) -> Result<axum::Json<PermissionsResponse>, ApiError> {
    let id = session_id(&id)?;
    let runtime = state.agent_runtime(&agent)?;
    let info = state.blocking(move |store| Ok(store.agent(&agent).info(id)?)).await?;
    Ok(axum::Json(permissions_response(&runtime.runtime, &info)))
}

/// Sets the permission mode of a session from its next call on, recorded
/// as a `permission_mode_changed` event (409 while a run holds the session).
#[utoipa::path(put, path = paths::SESSION_PERMISSIONS, params(("id" = String, Path, description = "session id")),
    request_body = PermissionsParams,
    responses((status = 200, body = PermissionsResponse)))]
pub(crate) async fn set_permissions(
    State(state): State<ServerState>,
    Caller(agent): Caller,
    Path(id): Path<String>,
    ApiJson(params): ApiJson<PermissionsParams>,
) -> Result<axum::Json<PermissionsResponse>, ApiError> {
    let id = session_id(&id)?;
    let owner = agent.clone();
    state.blocking(move |store| Ok(store.agent(&owner).summary(id)?)).await?;
    let runtime = state.agent_runtime(&agent)?;
    let changing = runtime.clone();
    tokio::task::spawn_blocking(move || changing.runtime.set_permission_mode(id, params.mode.into()))
        .await
        .map_err(|e| ApiError::internal(format!("the change stopped: {e}")))??;
    let info = state.blocking(move |store| Ok(store.agent(&agent).info(id)?)).await?;
    Ok(axum::Json(permissions_response(&runtime.runtime, &info)))
}

fn permissions_response(runtime: &seri_runloop::Runtime, info: &seri_core::SessionInfo) -> PermissionsResponse {
    PermissionsResponse { mode: runtime.session_permission_mode(info).into(), chosen: info.permission_mode.is_some() }
}

/// The server's sandbox, or a 404.
fn server_sandbox(state: &ServerState) -> Result<std::sync::Arc<seri_tools::Sandbox>, ApiError> {
    state.backend().sandbox().ok_or_else(|| ApiError::not_found("this server runs commands without a sandbox"))
}

/// The sandbox of the session `info` is the view of.
fn sandbox_response(sandbox: &seri_tools::Sandbox, info: &seri_core::SessionInfo) -> SandboxResponse {
    let chosen = seri_tools::SessionSandbox::of(info);
    let policy = sandbox.policy_for(chosen);
    SandboxResponse { mode: policy.mode.into(), network: policy.network, description: sandbox.describe(chosen) }
}

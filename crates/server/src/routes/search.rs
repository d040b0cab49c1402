//! `GET /api/search`: full-text search over the caller's sessions, the
//! same hits `seri search --json` prints. The store parses, ranks and cuts
//! snippets; this handler reads the query string and shapes the answer.
//! Its wire types sit beside it (`protocol.rs` is past its size).

use axum::extract::State;
use serde::{Deserialize, Serialize};
use seri_core::Timestamp;
use seri_store::search::{DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT, Query, SearchHit, SearchRequest, SearchScope};
use utoipa::{IntoParams, ToSchema};

use crate::auth::Caller;
use crate::error::ApiError;
use crate::extract::ApiQuery;
use crate::paths;
use crate::protocol::ErrorResponse;
use crate::state::ServerState;

/// `GET /api/search` query.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub(crate) struct SearchParams {
    /// What to find: words (all of them), `"a phrase"`, `prefix*`, `AND`,
    /// `OR`, `NOT` (or `-word`) and parentheses.
    pub(crate) q: String,
    /// Most hits (default 20, at most 200).
    #[param(minimum = 1, maximum = 200)]
    pub(crate) limit: Option<u64>,
    /// A folder: its sessions' hits first (with `here`, only theirs).
    pub(crate) cwd: Option<String>,
    /// Only the sessions of `cwd`.
    pub(crate) here: Option<bool>,
    /// Only what was written at or after this time (RFC 3339 UTC).
    pub(crate) since: Option<String>,
}

/// `GET /api/search`: the hits, best first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SearchResponse {
    /// Best first; empty when nothing matched.
    pub(crate) hits: Vec<SearchHitBody>,
}

/// One event that matched.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SearchHitBody {
    /// The session whose history holds the event (for history forks share,
    /// the one it was written in).
    #[schema(format = "uuid")]
    pub(crate) session_id: String,
    /// The event's seq there (and in every fork in `sharedWith`).
    pub(crate) seq: u64,
    /// The event.
    #[schema(format = "uuid")]
    pub(crate) event_id: String,
    /// `user`, `assistant`, `thinking`, `tool_call`, `tool_result`,
    /// `title`, `recap` or `handoff`.
    pub(crate) kind: String,
    /// The text around the match, one line, matched words between `«` and `»`.
    pub(crate) snippet: String,
    /// When the event was written (RFC 3339 UTC).
    pub(crate) at: String,
    /// Higher is better; comparable within one answer only.
    pub(crate) score: f64,
    /// The forks whose history holds this event by reference.
    pub(crate) shared_with: Vec<String>,
    /// The successor that carries the session's work on, if it was continued.
    pub(crate) continued_in: Option<String>,
    /// The session's title now.
    pub(crate) title: String,
    /// The folder the session was started in.
    pub(crate) cwd: String,
}

impl From<SearchHit> for SearchHitBody {
    fn from(hit: SearchHit) -> Self {
        Self {
            session_id: hit.session_id.to_string(),
            seq: hit.seq.get(),
            event_id: hit.event_id.to_string(),
            kind: hit.kind.as_str().to_owned(),
            snippet: hit.snippet,
            at: hit.at.to_string(),
            score: hit.score,
            shared_with: hit.shared_with.iter().map(ToString::to_string).collect(),
            continued_in: hit.continued_in.map(|id| id.to_string()),
            title: hit.title,
            cwd: hit.cwd,
        }
    }
}

/// Searches everything said in the caller's sessions: messages, thinking,
/// tool calls and results, titles, recaps and handoffs. A hit in history
/// forks share is one hit naming them; one in a continued session names
/// its successor. A query the syntax refuses is a 400 saying why.
#[utoipa::path(get, path = paths::SEARCH, params(SearchParams),
    responses((status = 200, body = SearchResponse),
        (status = 400, body = ErrorResponse, description = "A query the syntax refuses, or a bad parameter (`bad_query`)")))]
pub(crate) async fn search(
    State(state): State<ServerState>,
    Caller(agent): Caller,
    ApiQuery(params): ApiQuery<SearchParams>,
) -> Result<axum::Json<SearchResponse>, ApiError> {
    let request = request(params)?;
    let hits = state.blocking(move |store| Ok(store.agent(&agent).search(&request)?)).await?;
    Ok(axum::Json(SearchResponse { hits: hits.into_iter().map(SearchHitBody::from).collect() }))
}

fn request(params: SearchParams) -> Result<SearchRequest, ApiError> {
    let bad = |message: String| ApiError::bad_request("bad_query", message);
    let query = Query::parse(&params.q).map_err(|e| bad(format!("q: {e}")))?;
    let limit = params.limit.unwrap_or(DEFAULT_SEARCH_LIMIT);
    if !(1..=MAX_SEARCH_LIMIT).contains(&limit) {
        return Err(bad(format!("limit must be from 1 to {MAX_SEARCH_LIMIT}, not {limit}")));
    }
    let scope = match (params.cwd, params.here.unwrap_or(false)) {
        (Some(cwd), true) => SearchScope::Folder(cwd),
        (Some(cwd), false) => SearchScope::FolderFirst(cwd),
        (None, true) => return Err(bad("here needs cwd: the folder whose sessions to search".into())),
        (None, false) => SearchScope::All,
    };
    let since = params.since.as_deref().map(Timestamp::parse).transpose().map_err(|e| bad(format!("since: {e}")))?;
    Ok(SearchRequest { query, limit, scope, since })
}

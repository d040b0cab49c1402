//! `seri search QUERY [--json] [--limit N] [--here | --all] [--since DATE]`:
//! full-text search over every session of the agent, this folder's first
//! (`seri_store::search` parses, ranks and cuts the snippets; this file
//! only reads the flags and draws the hits), and the progress bar of the
//! migration that indexes an older profile's events.

use std::collections::HashMap;
use std::fmt::Write as _;

use seri_core::{SessionId, Timestamp};
use seri_store::search::{Query, SearchHit, SearchRequest, SearchScope, snippet};

use crate::app::App;
use crate::args::SearchArgs;
use crate::exit::Exit;

/// Runs `seri search`: the hits as text, or `{"hits": [...]}` with `--json`.
pub(crate) fn run(app: &App, args: &SearchArgs) -> Result<String, Exit> {
    let request = request(app, args, now())?;
    let store = app.store.agent(&app.agent);
    let hits = store.search(&request)?;
    if args.json {
        return Ok(serde_json::to_string_pretty(&serde_json::json!({ "hits": hits })).map_err(anyhow::Error::from)?);
    }
    if hits.is_empty() {
        eprintln!("No match for {}.", request.query);
        return Ok(String::new());
    }
    let short = short_names(app, &hits)?;
    let name = |id: SessionId| short.get(&id).cloned().unwrap_or_else(|| id.to_string());
    Ok(hits_text(&hits, &name, app.cwd.to_string_lossy().as_ref()))
}

/// The short id of every session the hits name (their own, the forks
/// that share them, their successors), as `seri -r` takes them.
pub(crate) fn short_names(app: &App, hits: &[SearchHit]) -> Result<HashMap<SessionId, String>, Exit> {
    let ids: Vec<SessionId> = hits
        .iter()
        .flat_map(|h| std::iter::once(h.session_id).chain(h.shared_with.iter().copied()).chain(h.continued_in))
        .collect();
    Ok(app.store.agent(&app.agent).short_ids(&ids)?)
}

/// The request the flags ask for, `now` being when `--since 7d` counts from.
pub(crate) fn request(app: &App, args: &SearchArgs, now: Timestamp) -> Result<SearchRequest, Exit> {
    let text = args.query.join(" ");
    let query = Query::parse(&text).map_err(|e| Exit::usage(format!("search `{text}`: {e}")))?;
    let cwd = app.cwd.to_string_lossy().into_owned();
    let scope = match (args.here, args.all) {
        (true, _) => SearchScope::Folder(cwd),
        (false, true) => SearchScope::All,
        (false, false) => SearchScope::FolderFirst(cwd),
    };
    let since = args.since.as_deref().map(|d| parse_since(d, now)).transpose().map_err(Exit::usage)?;
    let limit = args.limit.unwrap_or(seri_store::search::DEFAULT_SEARCH_LIMIT);
    Ok(SearchRequest { query, limit, scope, since })
}

/// Each hit as two or three lines (see [`hit_text`]), then how to open one.
pub(crate) fn hits_text(hits: &[SearchHit], name: &dyn Fn(SessionId) -> String, cwd: &str) -> String {
    let mut out: String = hits.iter().map(|hit| hit_text(hit, name, cwd)).collect();
    let _ = write!(out, "open one: seri -r ID, or seri fork ID@SEQ (marks: {})", marks());
    out
}

/// How the snippets mark the matched words: `«word»`.
pub(crate) fn marks() -> String {
    format!("{}word{}", snippet::MARK_START, snippet::MARK_END)
}

/// One hit as two or three lines: where it is (session, seq, kind, date,
/// title, and its folder when not `cwd`), its snippet, and the sessions
/// that share it or carry it on. The lines after the first are indented
/// four spaces; every line ends with a newline.
pub(crate) fn hit_text(hit: &SearchHit, name: &dyn Fn(SessionId) -> String, cwd: &str) -> String {
    let mut out = String::new();
    let title = if hit.title.is_empty() { "(untitled)" } else { hit.title.as_str() };
    let folder = if hit.cwd == cwd { String::new() } else { format!("  {}", hit.cwd) };
    let date = hit.at.to_string();
    let _ = writeln!(
        out,
        "{} [{}] {}  {}  {title}{folder}",
        name(hit.session_id),
        hit.seq.get(),
        hit.kind.as_str(),
        date.get(..10).unwrap_or(&date)
    );
    let _ = writeln!(out, "    {}", hit.snippet);
    let mut also = Vec::new();
    if !hit.shared_with.is_empty() {
        also.push(format!("shared with {}", hit.shared_with.iter().map(|id| name(*id)).collect::<Vec<_>>().join(", ")));
    }
    if let Some(next) = hit.continued_in {
        also.push(format!("continued in {}", name(next)));
    }
    if !also.is_empty() {
        let _ = writeln!(out, "    ({})", also.join("; "));
    }
    out
}

/// `--since`: `YYYY-MM-DD` (midnight UTC), an RFC 3339 UTC time, or an
/// age: `30m`, `12h`, `7d`, `2w`.
pub(crate) fn parse_since(text: &str, now: Timestamp) -> Result<Timestamp, String> {
    let text = text.trim();
    let unit = |c: char| match c {
        'm' => Some(60_000),
        'h' => Some(3_600_000),
        'd' => Some(86_400_000),
        'w' => Some(7 * 86_400_000),
        _ => None,
    };
    if let Some(last) = text.chars().last()
        && let Some(ms) = unit(last)
        && let Ok(n) = text[..text.len() - 1].parse::<i64>()
    {
        return Ok(Timestamp(now.millis().saturating_sub(n.saturating_mul(ms))));
    }
    let full = if text.len() == 10 { format!("{text}T00:00:00Z") } else { text.to_owned() };
    Timestamp::parse(&full).map_err(|_| {
        format!(
            "--since `{text}`: expected a date (2026-11-30), a UTC time (2026-11-30T06:00:00Z) or an age (12h, 7d, 2w)"
        )
    })
}

/// Now, as `--since 7d` counts from it.
pub(crate) fn now() -> Timestamp {
    Timestamp(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_takes_dates_times_and_ages() {
        let now = Timestamp::parse("2026-11-30T06:00:00Z").unwrap();
        let at = |t: &str| parse_since(t, now).map(|t| t.to_string());
        assert_eq!(at("2026-11-01").unwrap(), "2026-11-01T00:00:00.000Z");
        assert_eq!(at("2026-11-29T12:30:00Z").unwrap(), "2026-11-29T12:30:00.000Z");
        assert_eq!(at("7d").unwrap(), "2026-11-23T06:00:00.000Z");
        assert_eq!(at("12h").unwrap(), "2026-11-29T18:00:00.000Z");
        assert!(at("last tuesday").unwrap_err().contains("expected a date"));
    }
}

//! Reading sessions without running anything: `seri sessions list|show|tree`
//! and `seri thread`.

use std::fmt::Write as _;

use anyhow::Context as _;
use seri_core::{AgentId, Seq, SessionId};
use seri_store::{AgentStore, SeqRange, SessionQuery, SessionSummary, Store};

use crate::app::App;
use crate::exit::Exit;

/// `seri sessions list`: most recent first.
pub(crate) fn list(app: &App, json: bool) -> Result<String, Exit> {
    let sessions = app.store.agent(&app.agent).list_sessions(&SessionQuery::default())?;
    if json {
        return Ok(serde_json::to_string_pretty(&sessions).context("cannot encode sessions")?);
    }
    if sessions.is_empty() {
        return Ok("No sessions yet. Run `seri` to start one.".to_owned());
    }
    Ok(sessions.iter().map(summary_line).collect::<Vec<_>>().join("\n"))
}

fn summary_line(s: &SessionSummary) -> String {
    let mut line =
        format!("{}  {}  {:>5} events  {}", short(s.id), s.updated_at, s.last_seq, title_or_untitled(&s.title));
    if !s.description.is_empty() {
        let _ = write!(line, " — {}", s.description);
    }
    if let Some(from) = &s.continued_from {
        let _ = write!(line, "  [continued from {}]", short(from.session_id));
    }
    if let Some(to) = &s.continued_to {
        let _ = write!(line, "  [Continued in \u{201c}{}\u{201d}]", to.title);
    }
    line
}

/// `seri sessions show ID`: the `SessionInfo`, with `contextWindow`.
pub(crate) fn show(app: &App, id: &str, json: bool, context_window: u64) -> Result<String, Exit> {
    let store = app.store.agent(&app.agent);
    let info = store.info(store.resolve_session(id)?)?;
    if json {
        let mut value = serde_json::to_value(&info).context("cannot encode the session")?;
        value["contextWindow"] = context_window.into();
        return Ok(serde_json::to_string_pretty(&value).context("cannot encode the session")?);
    }
    let mut out = String::new();
    let _ = writeln!(out, "session      {}", info.id);
    let _ = writeln!(out, "title        {}", title_or_untitled(&info.title));
    let _ = writeln!(out, "description  {}", info.description);
    let _ = writeln!(out, "directory    {}", info.cwd);
    let _ = writeln!(out, "created      {}", info.created_at);
    let _ = writeln!(out, "updated      {}", info.updated_at);
    let _ = writeln!(out, "events       {}", info.last_seq);
    if let Some(usage) = info.last_usage {
        let tokens = usage.prompt_tokens();
        let _ = writeln!(
            out,
            "context      {tokens} of {context_window} tokens ({}%)",
            tokens * 100 / context_window.max(1)
        );
    }
    if let Some(from) = &info.continued_from {
        let _ = writeln!(out, "continues    {} \u{201c}{}\u{201d} ({})", from.session_id, from.title, from.reason);
    }
    if let Some(to) = &info.continued_to {
        let _ = writeln!(out, "continued in {} \u{201c}{}\u{201d} ({})", to.session_id, to.title, to.reason);
    }
    Ok(out.trim_end().to_owned())
}

/// `seri sessions tree ID`: the whole continuation lineage the session
/// belongs to, from its origin, branches included.
pub(crate) fn tree(app: &App, id: &str) -> Result<String, Exit> {
    let start = app.store.agent(&app.agent).resolve_session(id)?;
    tree_of(&app.store, &app.agent, start)
}

/// The lineage tree around `start`, which is marked with `*`.
pub(crate) fn tree_of(store: &Store, agent: &AgentId, start: SessionId) -> Result<String, Exit> {
    let store = store.agent(agent);
    let mut origin = start;
    while let Some(edge) = store.continuation_into(origin)? {
        origin = edge.predecessor_session_id;
    }
    let mut out = String::new();
    let title = store.summary(origin)?.title;
    let _ = writeln!(out, "{}{} {}", short(origin), marker(origin, start), quoted(&title));
    branch(&store, origin, start, "", &mut out)?;
    Ok(out.trim_end().to_owned())
}

fn branch(
    store: &AgentStore<'_>,
    session: SessionId,
    start: SessionId,
    indent: &str,
    out: &mut String,
) -> Result<(), Exit> {
    let edges = store.continuations_from(session)?;
    for (i, edge) in edges.iter().enumerate() {
        let last = i + 1 == edges.len();
        let title = store.summary(edge.successor_session_id)?.title;
        let _ = writeln!(
            out,
            "{indent}{} {}{} {} ({})",
            if last { "└─" } else { "├─" },
            short(edge.successor_session_id),
            marker(edge.successor_session_id, start),
            quoted(&title),
            edge.reason.as_str().replace('_', " ")
        );
        let deeper = format!("{indent}{}", if last { "   " } else { "│  " });
        branch(store, edge.successor_session_id, start, &deeper, out)?;
    }
    Ok(())
}

fn marker(session: SessionId, start: SessionId) -> &'static str {
    if session == start { " *" } else { "" }
}

/// `seri thread ID`: `[seq] who: text` lines, the same the `read` verb prints.
pub(crate) fn thread(
    app: &App,
    id: &str,
    from: Option<u64>,
    to: Option<u64>,
    limit: Option<u64>,
) -> Result<String, Exit> {
    let store = app.store.agent(&app.agent);
    let session = store.resolve_session(id)?;
    let mut range = SeqRange::starting_at(Seq(from.unwrap_or(1).max(1)));
    if let Some(to) = to {
        range = SeqRange::between(range.from, Seq(to));
    }
    if let Some(limit) = limit {
        range = range.limit(limit);
    }
    let events = store.events(session, range)?;
    Ok(seri_projection::transcript_lines(&events).trim_end().to_owned())
}

/// The first 18 characters of an id: its millisecond timestamp and 12 random
/// bits, so two sessions listed together never look alike, and any of them
/// can be given to `--resume` as a prefix. (The first 8 alone change only
/// every 65 seconds.)
pub(crate) fn short(id: SessionId) -> String {
    id.to_string().chars().take(18).collect()
}

fn title_or_untitled(title: &str) -> &str {
    if title.is_empty() { "(untitled)" } else { title }
}

fn quoted(title: &str) -> String {
    format!("\u{201c}{}\u{201d}", title_or_untitled(title))
}

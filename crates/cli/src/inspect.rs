//! Reading sessions without running anything: `seri sessions list|show|tree`
//! (continuation lineages, with child sessions under the session whose run
//! delegated to them) and `seri thread`.

use std::fmt::Write as _;

use anyhow::Context as _;
use seri_core::{AgentId, Seq, SessionId};
use seri_store::{AgentStore, RunRecord, SeqRange, SessionQuery, SessionSummary, Store};

use crate::app::App;
use crate::args::RunFlags;
use crate::exit::Exit;

/// `seri sessions list`: the profile opened, and its sessions read while
/// its legacy folder is checked; most recent first.
pub(crate) fn list(flags: &RunFlags, json: bool) -> Result<String, Exit> {
    let (app, sessions) = App::open_and_read(flags, |r| r.list_sessions(&SessionQuery::default()))?;
    if json {
        // Written as it is encoded; nothing is left for the caller to print.
        crate::stdout::json_line(&sessions);
        return Ok(String::new());
    }
    if sessions.is_empty() {
        return Ok("No sessions yet. Run `seri` to start one.".to_owned());
    }
    // Every id shown, shortened in one read rather than two lookups each.
    let shown: Vec<SessionId> = sessions
        .iter()
        .flat_map(|s| {
            std::iter::once(s.id)
                .chain(s.continued_from.as_ref().map(|f| f.session_id))
                .chain(s.forked_from.as_ref().map(|f| f.session_id))
        })
        .collect();
    let short = app.store.agent(&app.agent).short_ids(&shown)?;
    let short_of = |id: SessionId| short.get(&id).cloned().unwrap_or_else(|| id.to_string());
    Ok(sessions.iter().map(|s| summary_line(&short_of, s)).collect::<Vec<_>>().join("\n"))
}

fn summary_line(short_of: &dyn Fn(SessionId) -> String, s: &SessionSummary) -> String {
    let mut line =
        format!("{}  {}  {:>5} events  {}", short_of(s.id), s.updated_at, s.last_seq, title_or_untitled(&s.title));
    if !s.description.is_empty() {
        let _ = write!(line, " — {}", s.description);
    }
    if let Some(from) = &s.continued_from {
        let _ = write!(line, "  [continued from {}]", short_of(from.session_id));
    }
    if let Some(to) = &s.continued_to {
        let _ = write!(line, "  [Continued in \u{201c}{}\u{201d}]", to.title);
    }
    if let Some(run) = s.parent_run_id {
        let run: String = run.to_string().chars().take(18).collect();
        let _ = write!(line, "  [child of run {run}]");
    }
    if let Some(fork) = &s.forked_from {
        let _ = write!(line, "  [forked from {} at {}]", short_of(fork.session_id), fork.fork_seq);
    }
    line
}

/// `seri sessions show ID`: the `SessionInfo`, with `contextWindow`.
pub(crate) fn show(app: &App, id: &str, json: bool, context_window: u64) -> Result<String, Exit> {
    let store = app.store.agent(&app.agent);
    let info = store.info(store.resolve_session(id)?)?;
    // A successor's reads back of its predecessor's thread (see `recalls`).
    let recalls = match store.continuation_into(info.id)? {
        Some(edge) => Some(seri_runloop::recalls::continuation_recalls(&store, &edge)?.counts),
        None => None,
    };
    if json {
        let mut value = serde_json::to_value(&info).context("cannot encode the session")?;
        value["contextWindow"] = context_window.into();
        if let Some(recalls) = &recalls {
            value["recalls"] = serde_json::to_value(recalls).context("cannot encode the session")?;
        }
        return Ok(serde_json::to_string_pretty(&value).context("cannot encode the session")?);
    }
    let mut out = String::new();
    // Every id a person reads is the short one `seri -r` takes (`--json`
    // has them whole).
    let short = |id: SessionId| short_in(&store, id);
    let _ = writeln!(out, "session      {}", short(info.id));
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
            seri_prompt::ContextUsage::new(
                tokens,
                std::num::NonZeroU64::new(context_window).unwrap_or(std::num::NonZeroU64::MIN)
            )
            .percent()
        );
    }
    if let Some(from) = &info.continued_from {
        let _ =
            writeln!(out, "continues    {} \u{201c}{}\u{201d} ({})", short(from.session_id), from.title, from.reason);
    }
    if let Some(c) = &recalls {
        let _ = writeln!(
            out,
            "recalls      {} reads back: {} omitted, {} never included, {} already carried",
            c.total(),
            c.omitted,
            c.not_included,
            c.already_included
        );
    }
    if let Some(to) = &info.continued_to {
        let _ = writeln!(out, "continued in {} \u{201c}{}\u{201d} ({})", short(to.session_id), to.title, to.reason);
    }
    if let Some(run) = info.parent_run_id {
        let parent = store.run(run)?.map_or_else(|| "(unknown)".to_owned(), |r| short(r.session_id));
        let _ = writeln!(out, "child of     run {run} in session {parent}");
    }
    if let Some(fork) = &info.forked_from {
        let _ = writeln!(
            out,
            "forked from  {} \u{201c}{}\u{201d} at {} ({})",
            short(fork.session_id),
            fork.title,
            fork.fork_seq,
            fork.at
        );
    }
    for fork in store.forks_of(info.id)? {
        let _ = writeln!(out, "forked into  {} at {}", short(fork.session_id), fork.fork_seq);
    }
    Ok(out.trim_end().to_owned())
}

/// `seri sessions tree ID`: the whole continuation lineage the session
/// belongs to, from its origin, branches included, with each session's
/// child sessions (the runs it delegated to) under it.
pub(crate) fn tree(app: &App, id: &str) -> Result<String, Exit> {
    let start = app.store.agent(&app.agent).resolve_session(id)?;
    tree_of(&app.store, &app.agent, start)
}

/// The tree around `start`, which is marked with `*`. A child session is
/// shown in its parent's tree: from a child, the tree climbs to the session
/// whose run delegated to it, then to that lineage's origin.
pub(crate) fn tree_of(store: &Store, agent: &AgentId, start: SessionId) -> Result<String, Exit> {
    let store = store.agent(agent);
    let mut origin = start;
    loop {
        if let Some(edge) = store.continuation_into(origin)? {
            origin = edge.predecessor_session_id;
        } else if let Some(fork) = store.fork_edge(origin)? {
            origin = fork.parent_session_id;
        } else if let Some(parent) = parent_session(&store, origin)? {
            origin = parent;
        } else {
            break;
        }
    }
    let mut out = String::new();
    let title = store.summary(origin)?.title;
    let _ = writeln!(out, "{}{} {}", short_in(&store, origin), marker(origin, start), quoted(&title));
    branch(&store, origin, start, "", &mut out)?;
    Ok(out.trim_end().to_owned())
}

/// The session whose run delegated to `session`, if it is a child session.
fn parent_session(store: &AgentStore<'_>, session: SessionId) -> Result<Option<SessionId>, Exit> {
    let Some(parent_run) = store.seed(session)?.parent_run_id else { return Ok(None) };
    Ok(store.run(parent_run)?.map(|run| run.session_id))
}

/// One entry under a session: a child session one of its runs delegated
/// to, or a successor it continued into.
enum Branch {
    Child { session: SessionId, run: Box<RunRecord> },
    Successor { session: SessionId, reason: String },
    Fork { session: SessionId, at: Seq },
}

fn branch(
    store: &AgentStore<'_>,
    session: SessionId,
    start: SessionId,
    indent: &str,
    out: &mut String,
) -> Result<(), Exit> {
    let mut entries = Vec::new();
    for run in store.runs(session)? {
        for child in store.child_runs(run.id)? {
            entries.push(Branch::Child { session: child.session_id, run: Box::new(child) });
        }
    }
    for edge in store.continuations_from(session)? {
        let reason = edge.reason.as_str().replace('_', " ");
        entries.push(Branch::Successor { session: edge.successor_session_id, reason });
    }
    for fork in store.forks_of(session)? {
        entries.push(Branch::Fork { session: fork.session_id, at: fork.fork_seq });
    }
    for (i, entry) in entries.iter().enumerate() {
        let last = i + 1 == entries.len();
        let (next, label) = match entry {
            Branch::Child { session, run } => {
                let parent = run.parent_run_id.map(short_run).unwrap_or_default();
                let status = run.status.as_str().replace('_', " ");
                let title = quoted(&store.summary(*session)?.title);
                let marked = marker(*session, start);
                (
                    *session,
                    format!("\u{2937} {}{marked} {title} (child of run {parent}, {status})", short_in(store, *session)),
                )
            }
            Branch::Successor { session, reason } => {
                let title = quoted(&store.summary(*session)?.title);
                (*session, format!("{}{} {title} ({reason})", short_in(store, *session), marker(*session, start)))
            }
            Branch::Fork { session, at } => {
                let title = quoted(&store.summary(*session)?.title);
                let marked = marker(*session, start);
                (*session, format!("\u{2442} {}{marked} {title} (forked at {at})", short_in(store, *session)))
            }
        };
        let _ = writeln!(out, "{indent}{} {label}", if last { "└─" } else { "├─" });
        let deeper = format!("{indent}{}", if last { "   " } else { "│  " });
        branch(store, next, start, &deeper, out)?;
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
    let events = store.events_page(session, range, limit)?;
    Ok(seri_projection::transcript_lines(&events).trim_end().to_owned())
}

pub(crate) use crate::app::{short, short_in};

/// A run id as lists show it: runs are never looked up by prefix.
fn short_run(id: seri_core::RunId) -> String {
    id.to_string().chars().take(18).collect()
}

fn title_or_untitled(title: &str) -> &str {
    if title.is_empty() { "(untitled)" } else { title }
}

fn quoted(title: &str) -> String {
    format!("\u{201c}{}\u{201d}", title_or_untitled(title))
}

/// How long before `now` the time `then` was, in words: `just now`,
/// `5 min ago`, `3 h ago`, `2 d ago` (both in Unix milliseconds).
pub(crate) fn ago(now: i64, then: i64) -> String {
    let seconds = (now - then).max(0) / 1000;
    match seconds {
        0..45 => "just now".to_owned(),
        45..3600 => format!("{} min ago", (seconds + 30) / 60),
        3600..86_400 => format!("{} h ago", (seconds + 1800) / 3600),
        _ => format!("{} d ago", (seconds + 43_200) / 86_400),
    }
}

/// `seri fork ID[@SEQ] [--json]`: a new session that shares `ID`'s events
/// up to `SEQ` by reference; without `SEQ`, those before its last message
/// of the person's (as `/fork` in the REPL: that message is the one to
/// send differently), or all of them when it has none. Standard output gets
/// the fork's id alone, so `FORK=$(seri fork ID)` works, or with `json` its
/// `SessionInfo`; the sentence for a person goes to standard error, and only
/// when that is a terminal.
pub(crate) fn fork(app: &App, target: &str, json: bool) -> Result<String, Exit> {
    let store = app.store.agent(&app.agent);
    let (id, at) = parse_fork_target(target)?;
    let parent = store.resolve_session(id)?;
    let at = match at {
        Some(at) => Some(at),
        None => store.newest_user_message(parent)?.map(|message| Seq(message.seq.get() - 1)),
    };
    let info = store.fork_session(parent, at, seri_core::ForkVia::Cli)?;
    if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        let short = short_in(&store, info.id);
        let sentence = format!(
            "Forked {} at [{}] into {short}: `seri -r {short}` goes on from there.",
            short_in(&store, parent),
            info.last_seq
        );
        eprintln!("{sentence}");
    }
    if json {
        return serde_json::to_string(&info)
            .map_err(|e| Exit::Failure(anyhow::anyhow!("cannot write the fork as JSON: {e}")));
    }
    Ok(info.id.to_string())
}

/// `ID` or `ID@SEQ`.
fn parse_fork_target(target: &str) -> Result<(&str, Option<Seq>), Exit> {
    match target.rsplit_once('@') {
        None => Ok((target, None)),
        Some((id, seq)) => match seq.parse::<u64>() {
            Ok(seq) => Ok((id, Some(Seq(seq)))),
            Err(_) => Err(Exit::usage(format!(
                "`{target}`: after `@` comes the seq to fork at (a number, as `seri thread` shows it), not `{seq}`"
            ))),
        },
    }
}

/// `seri sessions recalls [ID] [--json]`: for every continuation (or those
/// into and out of ID), how often the successor read back its
/// predecessor's thread, and whether what it read had been omitted, never
/// included, or carried already.
pub(crate) fn recalls(app: &App, id: Option<&str>, json: bool) -> Result<String, Exit> {
    use seri_runloop::recalls::{ContinuationRecalls, ProfileRecalls, profile_recalls, session_recalls};
    let store = app.store.agent(&app.agent);
    let report: ProfileRecalls = match id {
        None => profile_recalls(&store)?,
        Some(id) => session_recalls(&store, store.resolve_session(id)?)?,
    };
    if json {
        return Ok(serde_json::to_string_pretty(&report).context("cannot encode the recalls")?);
    }
    let counts = |c: &seri_projection::continuation::recalls::RecallCounts| {
        format!("{} omitted, {} never included, {} already carried", c.omitted, c.not_included, c.already_included)
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} continuations, {} with reads back: {} reads ({})",
        report.continuations,
        report.with_recalls,
        report.totals.total(),
        counts(&report.totals)
    );
    for (reason, by) in &report.by_reason {
        let _ = writeln!(out, "  {:<17} {} reads ({})", reason.as_str(), by.total(), counts(by));
    }
    let each: Vec<&ContinuationRecalls> = report.each.iter().filter(|r| r.counts.total() > 0).collect();
    for r in each {
        let _ = writeln!(
            out,
            "{} → {} ({}): budget {} B, used {} B, omitted {} B",
            short_in(&store, r.predecessor_session_id),
            short_in(&store, r.successor_session_id),
            r.reason.as_str(),
            r.budget_bytes,
            r.used_bytes,
            r.omitted_bytes
        );
        for recall in &r.recalls {
            let kind = match recall.kind {
                seri_projection::continuation::recalls::RecallKind::Omitted => "omitted",
                seri_projection::continuation::recalls::RecallKind::NotIncluded => "never included",
                seri_projection::continuation::recalls::RecallKind::AlreadyIncluded => "already carried",
            };
            let _ = writeln!(out, "  read seq {} to {}: {kind}", recall.from_seq, recall.to_seq);
        }
    }
    Ok(out.trim_end().to_owned())
}

#[cfg(test)]
mod ago_tests {
    #[test]
    fn times_read_as_words() {
        let minute = 60_000;
        for (delta, words) in [
            (0, "just now"),
            (44_000, "just now"),
            (5 * minute, "5 min ago"),
            (3 * 60 * minute, "3 h ago"),
            (50 * 60 * minute, "2 d ago"),
        ] {
            assert_eq!(super::ago(10_000_000_000, 10_000_000_000 - delta), words, "{delta}");
        }
        assert_eq!(super::ago(0, 5_000), "just now", "a time ahead of the clock is now");
    }
}

//! `/search` in the REPL: `/search QUERY [--here | --all] [--since DATE]
//! [--limit N]` lists numbered hits, drawn as `seri search` draws them
//! (`crate::search`); `/search open N` resumes hit N's session and
//! `/search fork N` forks it right at the hit. Also `/resume`'s switch to
//! another session, which opening a hit shares.

use seri_core::{Seq, SessionId};
use seri_store::search::SearchHit;

use crate::app::App;
use crate::args::SearchArgs;
use crate::exit::Exit;
use crate::inspect;
use crate::render::Style;

/// What a `/search` line asks for.
#[derive(Debug, PartialEq)]
pub(crate) enum SearchLine {
    /// Find: the query and the flags `seri search` takes.
    Find(SearchArgs),
    /// `/search open N`: resume the session of hit N.
    Open(usize),
    /// `/search fork N`: fork hit N's session at the hit.
    Fork(usize),
    /// `/search` alone: the last hits again.
    Again,
}

/// Reads what follows `/search`. `open N` and `fork N` (a number and
/// nothing else) open a hit; any other words are a query, with the flags
/// `--here`, `--all`, `--since DATE` and `--limit N` wherever they stand.
/// The query's own text is kept as typed (quotes make a phrase), so
/// searching for the words `open 3` is `/search "open 3"`.
pub(crate) fn parse(rest: &str) -> Result<SearchLine, String> {
    let rest = rest.trim();
    if rest.is_empty() {
        return Ok(SearchLine::Again);
    }
    if let Some((verb, n)) = rest.split_once(char::is_whitespace)
        && let Ok(n) = n.trim().parse::<usize>()
    {
        match verb {
            "open" => return Ok(SearchLine::Open(n)),
            "fork" => return Ok(SearchLine::Fork(n)),
            _ => {}
        }
    }
    let mut args = SearchArgs { query: Vec::new(), json: false, limit: None, here: false, all: false, since: None };
    let mut words = rest.split_whitespace();
    while let Some(word) = words.next() {
        match word {
            "--here" => args.here = true,
            "--all" => args.all = true,
            "--since" => args.since = Some(words.next().ok_or("--since needs a DATE (2026-11-30, 7d)")?.to_owned()),
            "--limit" => {
                let n = words.next().and_then(|n| n.parse::<u64>().ok()).filter(|n| (1..=200).contains(n));
                args.limit = Some(n.ok_or("--limit needs a number from 1 to 200")?);
            }
            word => args.query.push(word.to_owned()),
        }
    }
    if args.here && args.all {
        return Err("--here and --all cannot both be given".to_owned());
    }
    if args.query.is_empty() {
        return Err("usage: /search QUERY [--here | --all] [--since DATE] [--limit N]".to_owned());
    }
    Ok(SearchLine::Find(args))
}

/// The hits numbered from 1, each drawn as `seri search` draws it, then
/// how to open one.
pub(crate) fn numbered(hits: &[SearchHit], name: &dyn Fn(SessionId) -> String, cwd: &str) -> String {
    let mut out = String::new();
    for (i, hit) in hits.iter().enumerate() {
        out.push_str(&format!("{:>2}. {}", i + 1, crate::search::hit_text(hit, name, cwd)));
    }
    out.push_str(&format!(
        "open one: /search open N resumes its session, /search fork N branches it at the hit (marks: {})",
        crate::search::marks()
    ));
    out
}

/// The REPL's side of `/search`: the hits of the last search (what `open
/// N` and `fork N` count in) and the session the REPL talks in, which
/// opening a hit changes.
pub(crate) struct Searching<'a> {
    pub(crate) app: &'a App,
    pub(crate) style: Style,
    pub(crate) hits: &'a mut Vec<SearchHit>,
    pub(crate) session: &'a mut Option<SessionId>,
}

impl Searching<'_> {
    /// Runs one `/search` line; what goes wrong is said in red and the
    /// REPL goes on.
    pub(crate) fn run(&mut self, rest: &str) -> Result<(), Exit> {
        match parse(rest) {
            Err(line) => println!("{}", self.style.red(&line)),
            Ok(SearchLine::Again) if self.hits.is_empty() => {
                println!("{}", self.style.red("usage: /search QUERY [--here | --all] [--since DATE] [--limit N]"));
            }
            Ok(SearchLine::Again) => self.show()?,
            Ok(SearchLine::Find(args)) => {
                let request = match crate::search::request(self.app, &args, crate::search::now()) {
                    Ok(request) => request,
                    Err(e) => {
                        println!("{}", self.style.red(&e.message()));
                        return Ok(());
                    }
                };
                let hits = self.app.store.agent(&self.app.agent).search(&request)?;
                if hits.is_empty() {
                    println!("No match for {}.", request.query);
                    return Ok(());
                }
                *self.hits = hits;
                self.show()?;
            }
            Ok(SearchLine::Open(n)) => {
                let Some(hit) = self.hit(n) else { return Ok(()) };
                if let Some(id) = resume(self.app, hit.session_id)? {
                    *self.session = Some(id);
                    println!(
                        "{}",
                        self.style.dim(&format!(
                            "The hit is [{}]: seri thread {} --from {} prints the transcript from there.",
                            hit.seq.get(),
                            inspect::short(self.app, id),
                            hit.seq.get()
                        ))
                    );
                }
            }
            Ok(SearchLine::Fork(n)) => {
                let Some(hit) = self.hit(n) else { return Ok(()) };
                self.fork(&hit)?;
            }
        }
        Ok(())
    }

    /// Hit `n` of the last search, or why there is none (said in red).
    fn hit(&self, n: usize) -> Option<SearchHit> {
        let hit = n.checked_sub(1).and_then(|i| self.hits.get(i)).cloned();
        if hit.is_none() {
            let line = match self.hits.len() {
                0 => "No search yet: /search QUERY lists hits to open.".to_owned(),
                len => format!("No hit {n}: the last search listed 1 to {len}."),
            };
            println!("{}", self.style.red(&line));
        }
        hit
    }

    fn show(&self) -> Result<(), Exit> {
        let short = crate::search::short_names(self.app, self.hits)?;
        let name = |id: SessionId| short.get(&id).cloned().unwrap_or_else(|| id.to_string());
        println!("{}", numbered(self.hits, &name, self.app.cwd.to_string_lossy().as_ref()));
        Ok(())
    }

    /// A new session sharing the hit's session up to the hit itself; the
    /// REPL switches to it. A session of another folder asks first, as
    /// resuming it does.
    fn fork(&mut self, hit: &SearchHit) -> Result<(), Exit> {
        let mut ask = |question: &str| crate::repl::ask_line(question);
        if !self.app.resume_here(hit.session_id, false, Some(&mut ask))? {
            println!("Not forked.");
            return Ok(());
        }
        let store = self.app.store.agent(&self.app.agent);
        let at = Seq(hit.seq.get());
        let fork = match store.fork_session(hit.session_id, Some(at), seri_core::ForkVia::Repl) {
            Ok(fork) => fork,
            Err(e) => {
                println!("{}", self.style.red(&e.to_string()));
                return Ok(());
            }
        };
        *self.session = Some(fork.id);
        println!(
            "Forked {} at [{}] into {}; the original stays: seri --resume {}",
            inspect::short(self.app, hit.session_id),
            at,
            inspect::short(self.app, fork.id),
            inspect::short(self.app, hit.session_id)
        );
        Ok(())
    }
}

/// Switches the REPL to session `id` (`/resume`, `/search open N`): a
/// session of another folder asks first. The id when resumed, `None`
/// (said) when the person declined.
pub(crate) fn resume(app: &App, id: SessionId) -> Result<Option<SessionId>, Exit> {
    let mut ask = |question: &str| crate::repl::ask_line(question);
    if !app.resume_here(id, false, Some(&mut ask))? {
        println!("Not resumed.");
        return Ok(None);
    }
    let info = app.store.agent(&app.agent).info(id)?;
    println!("Resumed {} \u{201c}{}\u{201d} ({} events).", inspect::short(app, id), info.title, info.last_seq);
    Ok(Some(id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check(line: &str, expect: &str) {
        let got = match parse(line) {
            Ok(SearchLine::Find(a)) => {
                format!(
                    "find {:?} here={} all={} since={:?} limit={:?}",
                    a.query.join(" "),
                    a.here,
                    a.all,
                    a.since,
                    a.limit
                )
            }
            other => format!("{other:?}"),
        };
        assert_eq!(got, expect, "{line}");
    }

    #[test]
    fn a_search_line_is_a_query_with_flags_or_a_hit_to_open() {
        check("retry policy", r#"find "retry policy" here=false all=false since=None limit=None"#);
        check(
            r#" "retry policy" --here --since 7d "#,
            r#"find "\"retry policy\"" here=true all=false since=Some("7d") limit=None"#,
        );
        check("retr* --all --limit 5", r#"find "retr*" here=false all=true since=None limit=Some(5)"#);
        check("open 3", "Ok(Open(3))");
        check("fork 12", "Ok(Fork(12))");
        check("open the door", r#"find "open the door" here=false all=false since=None limit=None"#);
        check(r#""open 3""#, r#"find "\"open 3\"" here=false all=false since=None limit=None"#);
        check("", "Ok(Again)");
        check("retry --limit 0", r#"Err("--limit needs a number from 1 to 200")"#);
        check("retry --since", r#"Err("--since needs a DATE (2026-11-30, 7d)")"#);
        check("retry --here --all", r#"Err("--here and --all cannot both be given")"#);
        check("--here", r#"Err("usage: /search QUERY [--here | --all] [--since DATE] [--limit N]")"#);
    }

    #[test]
    fn hits_are_numbered_and_drawn_as_seri_search_draws_them() {
        use seri_core::{EventId, Timestamp};
        use seri_store::search::SearchKind;
        let id = |n: u8| SessionId::from_bytes([n; 16]);
        let hit = |session, seq, kind, snippet: &str, title: &str, cwd: &str| SearchHit {
            session_id: id(session),
            seq: Seq(seq),
            event_id: EventId::from_bytes([0; 16]),
            kind,
            snippet: snippet.to_owned(),
            at: Timestamp::parse("2026-11-30T06:00:00Z").unwrap(),
            score: 1.0,
            shared_with: vec![],
            continued_in: None,
            title: title.to_owned(),
            cwd: cwd.to_owned(),
        };
        let mut shared =
            hit(2, 1, SearchKind::User, "What did we decide about the «retry» «policy»?", "", "/work/other");
        shared.shared_with = vec![id(3)];
        shared.continued_in = Some(id(4));
        let hits = [
            hit(
                1,
                5,
                SearchKind::Assistant,
                "We cap the backoff; the «retry» «policy» lives in …",
                "Retry policy review",
                "/work",
            ),
            shared,
        ];
        let name = |id: SessionId| format!("s{}", id.as_bytes()[0]);
        insta::assert_snapshot!("search_hits_numbered", numbered(&hits, &name, "/work"));
    }
}

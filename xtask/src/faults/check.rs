//! The exactly-once checker: given what the store holds after a schedule
//! (sessions with their events, the jobs of the shared queue) and what
//! every client was told, the violations of each invariant. Pure, so it is
//! tested on hand-made event lists; `store.rs` reads the real store into
//! these types.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde_json::Value;

use super::http::Reply;
use super::model::tokens;

/// An invariant the suite checks, in the order the summary lists them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Invariant {
    /// Every session's seqs are 1, 2, … n.
    Gapless,
    /// A message a client was told was accepted is stored, in the session
    /// it was sent to (or a successor of it).
    AcceptedStored,
    /// No message (token) is posted twice; copies into a successor aside.
    PostedOnce,
    /// Every accepted message, and every message of a job, is answered: an
    /// assistant answer carrying its token after it.
    Answered,
    /// No message is answered twice, and every answer follows its message.
    AnsweredOnce,
    /// Every tool call has exactly one result after it; every result a call.
    CallsPaired,
    /// No job is queued or running once the queue drained.
    NoStuckJob,
    /// No run failed: every fault a schedule draws is one seri must ride
    /// out (killed processes restart, the store comes back, the model
    /// answers within seri's retries).
    RunsSurvive,
    /// A failed job has its error stored.
    FailuresVisible,
    /// What each client was told (status, seq, event id, result), and what
    /// each job's outcome says, matches the store.
    ToldMatches,
    /// After the schedule every session answers a fresh message.
    UsableAfter,
    /// The schedule ended within its time bound.
    TimeBound,
}

impl Invariant {
    pub(crate) const ALL: [Invariant; 12] = [
        Invariant::Gapless,
        Invariant::AcceptedStored,
        Invariant::PostedOnce,
        Invariant::Answered,
        Invariant::AnsweredOnce,
        Invariant::CallsPaired,
        Invariant::NoStuckJob,
        Invariant::RunsSurvive,
        Invariant::FailuresVisible,
        Invariant::ToldMatches,
        Invariant::UsableAfter,
        Invariant::TimeBound,
    ];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Invariant::Gapless => "seqs gapless",
            Invariant::AcceptedStored => "accepted is stored",
            Invariant::PostedOnce => "posted once",
            Invariant::Answered => "answered",
            Invariant::AnsweredOnce => "answered once",
            Invariant::CallsPaired => "calls paired",
            Invariant::NoStuckJob => "no stuck job",
            Invariant::RunsSurvive => "runs survive faults",
            Invariant::FailuresVisible => "failures visible",
            Invariant::ToldMatches => "told = stored",
            Invariant::UsableAfter => "usable after",
            Invariant::TimeBound => "time bound",
        }
    }
}

/// One broken invariant, with what broke it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Violation {
    pub(crate) invariant: Invariant,
    pub(crate) detail: String,
}

/// An event, reduced to what the checker reads.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Kind {
    /// A person's message (role user, actor user or trigger); `copy_of`
    /// is the original's event id when the runtime copied it into a successor.
    Person {
        text: String,
        copy_of: Option<String>,
    },
    /// An assistant message.
    Answer {
        text: String,
    },
    Call {
        id: String,
        name: String,
    },
    /// A compaction's recap mark.
    Compacted,
    Result {
        call_id: String,
    },
    /// Anything else: projections, recaps, status changes.
    Other,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct StoredEvent {
    pub(crate) seq: u64,
    pub(crate) id: String,
    pub(crate) kind: Kind,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct StoredSession {
    pub(crate) id: String,
    /// The session it was continued from, if it is a successor.
    pub(crate) predecessor: Option<String>,
    pub(crate) events: Vec<StoredEvent>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum JobPlace {
    Queued,
    Running,
    Done,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct StoredJob {
    pub(crate) id: String,
    pub(crate) session: String,
    pub(crate) place: JobPlace,
    /// The message the job posts.
    pub(crate) text: String,
    pub(crate) posted_event: Option<String>,
    /// The `MessageSessionResponse` recorded when done.
    pub(crate) outcome: Option<Value>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Stored {
    pub(crate) sessions: Vec<StoredSession>,
    pub(crate) jobs: Vec<StoredJob>,
}

/// What a client was told about one message.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Told {
    /// `POST …/messages`: the reply, or why there was none.
    Api { wait: bool, reply: Reply },
    /// `seri -p … --output-format json`: exit code (none when killed) and stdout.
    Cli { exit: Option<i32>, stdout: String, killed: bool },
    /// `seri -r ID` fed on stdin: what it printed.
    Repl { exit: Option<i32>, stdout: String, killed: bool },
    /// Never sent (no server was up to take it): nothing was told.
    NotSent(String),
}

/// One message a client sent and what it was told.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Sent {
    pub(crate) token: String,
    /// The session it was sent to (full id).
    pub(crate) session: String,
    pub(crate) told: Told,
    /// The after-schedule check: it must succeed.
    pub(crate) probe: bool,
}

/// Where a token was found.
#[derive(Debug, Default)]
struct Sightings {
    /// (session, seq, event id)
    originals: Vec<(String, u64, String)>,
    copies: Vec<(String, u64)>,
    answers: Vec<(String, u64)>,
}

/// What the checker requires of one token, gathered from everyone told about it.
#[derive(Debug, Default)]
struct Required {
    appear: bool,
    answer: bool,
    /// A failure was told (and reported), so a missing answer is not reported twice.
    failed: bool,
    /// Where it was sent.
    session: Option<String>,
}

fn v(invariant: Invariant, detail: String) -> Violation {
    Violation { invariant, detail }
}

/// Every violation in `stored` given what `sent` says clients were told.
pub(crate) fn check(stored: &Stored, sent: &[Sent]) -> Vec<Violation> {
    let mut out = Vec::new();
    let mut seen: HashMap<String, Sightings> = HashMap::new();
    let predecessor: HashMap<&str, &str> =
        stored.sessions.iter().filter_map(|s| Some((s.id.as_str(), s.predecessor.as_deref()?))).collect();

    for session in &stored.sessions {
        let seqs: Vec<u64> = session.events.iter().map(|e| e.seq).collect();
        if seqs.iter().enumerate().any(|(i, s)| *s != i as u64 + 1) {
            out.push(v(Invariant::Gapless, format!("session {}: seqs {}", session.id, compress(&seqs))));
        }
        let mut calls: BTreeMap<&str, u64> = BTreeMap::new();
        let mut results: BTreeMap<&str, Vec<u64>> = BTreeMap::new();
        for event in &session.events {
            match &event.kind {
                Kind::Person { text, copy_of } => {
                    for token in tokens(text).into_iter().collect::<BTreeSet<_>>() {
                        let sighting = seen.entry(token).or_default();
                        match copy_of {
                            None => sighting.originals.push((session.id.clone(), event.seq, event.id.clone())),
                            Some(_) => sighting.copies.push((session.id.clone(), event.seq)),
                        }
                    }
                }
                Kind::Answer { text } => {
                    for token in tokens(text).into_iter().collect::<BTreeSet<_>>() {
                        seen.entry(token).or_default().answers.push((session.id.clone(), event.seq));
                    }
                }
                Kind::Call { id, .. } => {
                    if calls.insert(id, event.seq).is_some() {
                        out.push(v(
                            Invariant::CallsPaired,
                            format!("session {}: call {id} recorded twice", session.id),
                        ));
                    }
                }
                Kind::Result { call_id } => results.entry(call_id).or_default().push(event.seq),
                Kind::Compacted | Kind::Other => {}
            }
        }
        for (id, at) in &calls {
            let got = results.get(id).map(Vec::as_slice).unwrap_or_default();
            if got.len() != 1 {
                out.push(v(
                    Invariant::CallsPaired,
                    format!("session {}: call {id} (seq {at}) has {} results", session.id, got.len()),
                ));
            } else if got[0] < *at {
                out.push(v(
                    Invariant::CallsPaired,
                    format!("session {}: call {id}'s result comes before it", session.id),
                ));
            }
        }
        for (id, at) in &results {
            if !calls.contains_key(id) {
                out.push(v(
                    Invariant::CallsPaired,
                    format!("session {}: result for {id} (seq {:?}) answers no call", session.id, at),
                ));
            }
        }
    }

    let mut required: BTreeMap<String, Required> = BTreeMap::new();
    for job in &stored.jobs {
        let Some(token) = tokens(&job.text).pop() else { continue };
        match job.place {
            JobPlace::Queued | JobPlace::Running => {
                let place = if job.place == JobPlace::Queued { "queued" } else { "running" };
                out.push(v(Invariant::NoStuckJob, format!("job {} ({token}) is still {place}", job.id)));
                continue;
            }
            JobPlace::Done => {}
        }
        let outcome = job.outcome.clone().unwrap_or(Value::Null);
        let status = outcome["status"].as_str().unwrap_or("");
        let need = required.entry(token.clone()).or_default();
        need.session.get_or_insert_with(|| job.session.clone());
        if status == "succeeded" {
            need.appear = true;
            need.answer = true;
            let result = outcome["result"].as_str().unwrap_or("");
            if !result.contains(&token) {
                out.push(v(
                    Invariant::ToldMatches,
                    format!("job {} ({token}) is recorded succeeded with result {:?}", job.id, clip(result)),
                ));
            }
            told_ids(&mut out, &format!("job {}", job.id), &token, &outcome, seen.get(&token));
        } else {
            need.failed = true;
            let error = outcome["error"].as_str().unwrap_or("");
            out.push(v(Invariant::RunsSurvive, format!("job {} ({token}) ended {status:?}: {}", job.id, clip(error))));
            if error.trim().is_empty() {
                out.push(v(Invariant::FailuresVisible, format!("job {} ({token}) failed without an error", job.id)));
            }
        }
        if let Some(posted) = &job.posted_event {
            let posts = seen.get(&token).map(|s| s.originals.iter().any(|o| &o.2 == posted));
            if posts != Some(true) {
                out.push(v(
                    Invariant::ToldMatches,
                    format!("job {} ({token}) names posted event {posted}, which does not carry its token", job.id),
                ));
            }
        }
    }

    for s in sent {
        let need = required.entry(s.token.clone()).or_default();
        need.session = Some(s.session.clone());
        let who = format!("{} ({})", told_name(&s.told), s.token);
        match &s.told {
            Told::Api { wait, reply } => {
                let body = reply.json().unwrap_or(Value::Null);
                let status = reply.status();
                if s.probe && (status != Some(200) || body["status"] != "succeeded") {
                    out.push(v(Invariant::UsableAfter, format!("{who}: {}", reply_text(reply))));
                }
                match (status, wait) {
                    (Some(200), true) => {
                        need.appear = true;
                        let run = body["status"].as_str().unwrap_or("");
                        if run == "succeeded" {
                            need.answer = true;
                            let result = body["result"].as_str().unwrap_or("");
                            if !result.contains(&s.token) {
                                out.push(v(Invariant::ToldMatches, format!("{who}: told result {:?}", clip(result))));
                            }
                        } else if !s.probe {
                            need.failed = true;
                            let error = body["error"].as_str().unwrap_or("");
                            out.push(v(Invariant::RunsSurvive, format!("{who}: told {run:?}: {}", clip(error))));
                        }
                        told_ids(&mut out, &who, &s.token, &body, seen.get(&s.token));
                    }
                    (Some(202), false) => {
                        need.appear = true;
                        need.answer = true;
                        told_ids(&mut out, &who, &s.token, &body, seen.get(&s.token));
                        if let Some(job) = body["jobId"].as_str() {
                            let carries = stored.jobs.iter().any(|j| j.id == job && j.text.contains(s.token.as_str()));
                            if !carries {
                                out.push(v(
                                    Invariant::ToldMatches,
                                    format!("{who}: told job {job}, which is not its job"),
                                ));
                            }
                        }
                    }
                    (Some(code @ (200 | 202)), _) => {
                        out.push(v(Invariant::ToldMatches, format!("{who}: status {code} for wait={wait}")));
                    }
                    _ => {}
                }
                if status.is_some_and(|c| c == 200 || c == 202) && body["sessionId"] != s.session.as_str() {
                    out.push(v(Invariant::ToldMatches, format!("{who}: told session {}", body["sessionId"])));
                }
                told_successor(&mut out, &who, &s.session, &body["continuedToSessionId"], &predecessor);
            }
            Told::Cli { exit, stdout, killed } => {
                let json: Value =
                    stdout.lines().rev().find_map(|l| serde_json::from_str(l).ok()).unwrap_or(Value::Null);
                let run = json["status"].as_str().unwrap_or("");
                told_successor(&mut out, &who, &s.session, &json["continued_to_session_id"], &predecessor);
                match exit {
                    Some(0) if !killed => {
                        need.appear = true;
                        need.answer = true;
                        let result = json["result"].as_str().unwrap_or("");
                        if run != "succeeded" || !result.contains(&s.token) {
                            out.push(v(
                                Invariant::ToldMatches,
                                format!("{who}: exit 0 with status {run:?}, result {:?}", clip(result)),
                            ));
                        }
                        if json["session_id"] != s.session.as_str() {
                            out.push(v(Invariant::ToldMatches, format!("{who}: told session {}", json["session_id"])));
                        }
                    }
                    Some(1) if !killed && !json.is_null() => {
                        need.failed = true;
                        let error = json["error"].as_str().unwrap_or("");
                        out.push(v(Invariant::RunsSurvive, format!("{who}: exit 1, {run:?}: {}", clip(error))));
                    }
                    Some(code) if !killed => {
                        need.failed = true;
                        out.push(v(
                            Invariant::RunsSurvive,
                            format!("{who}: exit {code} without a report: {}", clip(stdout)),
                        ));
                    }
                    _ => {}
                }
            }
            Told::Repl { stdout, killed, .. } => {
                if !killed && stdout.contains(&format!("ack {}", s.token)) {
                    need.appear = true;
                    need.answer = true;
                }
            }
            Told::NotSent(_) => {}
        }
    }

    for (token, need) in &required {
        let empty = Sightings::default();
        let sightings = seen.get(token).unwrap_or(&empty);
        let where_ = |s: &[(String, u64, String)]| -> String {
            s.iter().map(|(session, seq, _)| format!("{session}@{seq}")).collect::<Vec<_>>().join(", ")
        };
        if need.appear && sightings.originals.is_empty() {
            out.push(v(Invariant::AcceptedStored, format!("{token} was accepted but is not in the store")));
        }
        if let (Some(sent_to), Some((session, seq, _))) = (&need.session, sightings.originals.first())
            && !descends(session, sent_to, &predecessor)
        {
            out.push(v(
                Invariant::AcceptedStored,
                format!("{token} was sent to {sent_to} but posted in {session}@{seq}"),
            ));
        }
        if need.answer && !need.failed && sightings.answers.is_empty() && !sightings.originals.is_empty() {
            out.push(v(
                Invariant::Answered,
                format!("{token} (posted at {}) was never answered", where_(&sightings.originals)),
            ));
        }
    }
    for (token, sightings) in &seen {
        if sightings.originals.len() > 1 {
            out.push(v(
                Invariant::PostedOnce,
                format!(
                    "{token} posted {} times: {}",
                    sightings.originals.len(),
                    sightings.originals.iter().map(|(s, q, _)| format!("{s}@{q}")).collect::<Vec<_>>().join(", ")
                ),
            ));
        }
        if sightings.answers.len() > 1 {
            let at: Vec<String> = sightings.answers.iter().map(|(s, q)| format!("{s}@{q}")).collect();
            out.push(v(Invariant::AnsweredOnce, format!("{token} answered {} times: {}", at.len(), at.join(", "))));
        }
        for (session, seq) in &sightings.answers {
            let asked_before = sightings.originals.iter().any(|(s, q, _)| s == session && q < seq)
                || sightings.copies.iter().any(|(s, q)| s == session && q < seq);
            if !asked_before {
                out.push(v(
                    Invariant::AnsweredOnce,
                    format!("{token} answered at {session}@{seq} before it was asked there"),
                ));
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// What a schedule exercised, counted from the store: continuations,
/// compactions and tool calls by tool.
pub(crate) fn exercised(stored: &Stored) -> BTreeMap<String, u64> {
    let mut counts = BTreeMap::new();
    for session in &stored.sessions {
        if session.predecessor.is_some() {
            *counts.entry("continuations".to_owned()).or_default() += 1;
        }
        for event in &session.events {
            let what = match &event.kind {
                Kind::Compacted => "compactions".to_owned(),
                Kind::Call { name, .. } => format!("{name} calls"),
                _ => continue,
            };
            *counts.entry(what).or_default() += 1;
        }
    }
    counts
}

/// The store as the checker read it, one line an event, and what each
/// client was told: kept beside a failing schedule (a PostgreSQL cluster
/// is gone once the run ends).
pub(crate) fn dump(stored: &Stored, sent: &[Sent]) -> String {
    let mut out = Vec::new();
    for session in &stored.sessions {
        let from = session.predecessor.as_deref().map(|p| format!(" (continued from {p})")).unwrap_or_default();
        out.push(format!("session {}{from}", session.id));
        for e in &session.events {
            let what = match &e.kind {
                Kind::Person { text, copy_of: None } => format!("person: {}", clip(text)),
                Kind::Person { text, copy_of: Some(o) } => format!("person (copy of {o}): {}", clip(text)),
                Kind::Answer { text } => format!("answer: {}", text.chars().take(40).collect::<String>()),
                Kind::Call { id, name } => format!("call {id} {name}"),
                Kind::Result { call_id } => format!("result {call_id}"),
                Kind::Compacted => "compacted".to_owned(),
                Kind::Other => "other".to_owned(),
            };
            out.push(format!("  {:>4} {}  {what}", e.seq, e.id));
        }
    }
    out.push(String::new());
    for job in &stored.jobs {
        let outcome = job.outcome.as_ref().map(|o| clip(&o.to_string())).unwrap_or_default();
        out.push(format!(
            "job {} session {} {:?} posted {:?}: {}  → {outcome}",
            job.id,
            job.session,
            job.place,
            job.posted_event,
            clip(&job.text)
        ));
    }
    out.push(String::new());
    for s in sent {
        let told = match &s.told {
            Told::Api { wait, reply } => format!("api wait={wait}: {}", reply_text(reply)),
            Told::Cli { exit, stdout, killed } => format!("cli exit {exit:?} killed {killed}: {}", clip(stdout)),
            Told::Repl { exit, stdout, killed } => format!("repl exit {exit:?} killed {killed}: {}", clip(stdout)),
            Told::NotSent(why) => format!("not sent: {why}"),
        };
        out.push(format!("{}{} to {}: {told}", s.token, if s.probe { " (probe)" } else { "" }, s.session));
    }
    out.join("\n")
}

/// Whether `session` is `ancestor` or one of its successors.
fn descends(session: &str, ancestor: &str, predecessor: &HashMap<&str, &str>) -> bool {
    let mut at = session;
    for _ in 0..64 {
        if at == ancestor {
            return true;
        }
        match predecessor.get(at) {
            Some(p) => at = p,
            None => return false,
        }
    }
    false
}

/// A successor a client was told about must exist and descend from the
/// session it sent to.
fn told_successor(out: &mut Vec<Violation>, who: &str, session: &str, told: &Value, predecessor: &HashMap<&str, &str>) {
    let Some(successor) = told.as_str() else { return };
    if successor != session && !(predecessor.contains_key(successor) && descends(successor, session, predecessor)) {
        out.push(v(
            Invariant::ToldMatches,
            format!("{who}: told it continued in {successor}, which is not a stored successor of {session}"),
        ));
    }
}

/// A reply's `seq` and `eventId` (when given) against the stored original.
fn told_ids(out: &mut Vec<Violation>, who: &str, token: &str, body: &Value, seen: Option<&Sightings>) {
    let Some(original) = seen.and_then(|s| s.originals.first()) else { return };
    if let Some(seq) = body["seq"].as_u64()
        && seq != original.1
    {
        out.push(v(Invariant::ToldMatches, format!("{who}: told seq {seq}, stored at {}@{}", original.0, original.1)));
    }
    if let Some(id) = body["eventId"].as_str()
        && id != original.2
    {
        out.push(v(Invariant::ToldMatches, format!("{who}: told event {id}, stored as {} ({token})", original.2)));
    }
}

fn told_name(told: &Told) -> &'static str {
    match told {
        Told::Api { wait: true, .. } => "api wait",
        Told::Api { wait: false, .. } => "api nowait",
        Told::Cli { .. } => "cli",
        Told::Repl { .. } => "repl",
        Told::NotSent(_) => "not sent",
    }
}

fn reply_text(reply: &Reply) -> String {
    match reply {
        Reply::Answered { status, body } => format!("{status} {}", clip(body)),
        Reply::NoAnswer(why) => format!("no answer: {why}"),
    }
}

/// At most 300 characters of `text`, on one line.
pub(crate) fn clip(text: &str) -> String {
    let line = text.replace('\n', " ");
    if line.chars().count() <= 300 { line } else { format!("{}…", line.chars().take(300).collect::<String>()) }
}

/// `1-4, 6, 9-10`.
fn compress(seqs: &[u64]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < seqs.len() {
        let mut j = i;
        while j + 1 < seqs.len() && seqs[j + 1] == seqs[j] + 1 {
            j += 1;
        }
        parts.push(if i == j { seqs[i].to_string() } else { format!("{}-{}", seqs[i], seqs[j]) });
        i = j + 1;
    }
    parts.join(", ")
}

#[cfg(test)]
// Named by path: the CLI's multi-server test includes this file by path too.
#[path = "check/tests.rs"]
mod tests;

//! Another agent's file (Claude Code, Codex, pi), imported as it is read,
//! in memory bounded by its longest line and a few dozen bytes an entry,
//! never by its content.
//!
//! Its session is a tree, and the branch to import (from the root to its
//! newest entry) is known only at the file's end. So the file is read
//! twice: once for its [`Tree`] (each entry's parent and line, without its
//! content), which picks the main branch and the branches the session left
//! behind; then once more inside the import's write transaction, each
//! entry on the main branch becoming its events as it comes, written in
//! batches. A branch left behind goes on from a copy of the main branch's
//! state where it leaves it (sharing, not copying, what came before) and
//! holds only its own events until the file's end, when it becomes a fork
//! by reference. Whole or not at all: a store error, a file that cannot be
//! read to its end or whose bytes changed rolls everything back.
//!
//! A file that grew since its import (the peer went on with the session)
//! is compared with the session event by event as it is read, the
//! session's events read a page at a time; what comes after them is
//! appended. A fork's file (one that names its source or copies it) is
//! compared with other sessions as a whole, so it is read whole
//! ([`super::peer::read_session`]) up to [`WHOLE_FORK_LIMIT`], and imported
//! as a session of its own past it.

use std::collections::{HashMap, HashSet, VecDeque};
use std::hash::{DefaultHasher, Hash as _, Hasher as _};
use std::io;

use seri_core::{Event, EventBody, Seq, SeqRange, SessionId, SessionInfo, Timestamp};

use super::file::LegacyEvent;
use super::line::Header;
use super::lines::FileLines;
use super::peer::{self, Converter, Skips};
use super::report::{FileOutcome, LineWarning};
use super::streamed::{self, Streamed};
use crate::peers::{self, Format, Made, PeerSession, Placed, Tree};
use seri_store::AgentStore;
use seri_store::ImportRecord;
use seri_store::WriteTx;
use seri_store::{Result, StoreError};

/// The largest fork's file read whole to find where it leaves its source:
/// 64 MiB. A larger one is imported as a session of its own (nothing is
/// lost; it does not share its source's history by reference).
pub(crate) const WHOLE_FORK_LIMIT: u64 = 64 * 1024 * 1024;

/// At most this many events are held before they are written.
const BATCH_EVENTS: usize = 1024;

/// How many of a session's events a grown file is compared with at a time.
const HELD_PAGE: u64 = 1024;

/// What the first reading found: the file's facts and its tree.
pub(crate) struct FirstLook {
    pub(crate) facts: PeerSession,
    pub(crate) tree: Tree,
}

impl FirstLook {
    pub(crate) fn header(&self) -> Header {
        peer::header(&self.facts)
    }

    /// Whether the file is a fork of another session, which the import
    /// compares with its source as a whole.
    pub(crate) fn is_fork(&self) -> bool {
        self.facts.forked_from.is_some() || self.facts.copies_unnamed_source
    }
}

/// Reads `source` for its facts and tree, holding no entry's content.
pub(crate) fn first_look(format: Format, source: &FileLines<'_>) -> Option<FirstLook> {
    let mut tree = Tree::default();
    let facts = peers::stream_lines(format, source, &mut |made| {
        if let Made::Entry(placed) = made {
            tree.push(&placed);
        }
    })?;
    Some(FirstLook { facts, tree })
}

/// Why a streamed import wrote nothing.
enum Failed {
    Store(StoreError),
    /// The file, read again, could not be read to its end or was changed.
    File(io::Error),
}

impl From<StoreError> for Failed {
    fn from(e: StoreError) -> Self {
        Self::Store(e)
    }
}

/// Imports `source`, read by [`first_look`] as `look`: what was done and
/// the file's warnings, or why it could not be read (nothing was written
/// then); an error only when the store fails. `note` is a warning to add
/// (a fork's file too large to compare).
pub(crate) fn import(
    agent: &AgentStore<'_>,
    format: Format,
    source: &FileLines<'_>,
    look: &FirstLook,
    file: &Streamed<'_>,
    note: Option<LineWarning>,
) -> Result<std::result::Result<(FileOutcome, Vec<LineWarning>), io::Error>> {
    let plan = Plan::of(&look.tree);
    let header = look.header();
    let written = agent.write(|tx| -> std::result::Result<(FileOutcome, Vec<LineWarning>), Failed> {
        let agent_id = tx.read().agent_id().clone();
        // Asked again inside the write lock: another process may have
        // imported the same file since the caller's lookup.
        if let Some(session_id) = tx.read().legacy_import_of(file.key, file.sha256)? {
            return Ok((FileOutcome::AlreadyImported { session_id }, Vec::new()));
        }
        let earlier = tx.read().earlier_legacy_imports(file.key)?;
        // A file that grew since its newest import (a session the peer went
        // on with) adds its new events to that session, when all the
        // session holds is what the file still begins with; a file that
        // moved (`codex archive`) is known by its session's id. Not
        // recorded: a session has one import record, so the file is
        // compared again at the next import, which writes nothing.
        let moved = match (&header.id, earlier.is_empty()) {
            (Some(id), true) => tx.read().legacy_imports_of_session(id)?,
            _ => Vec::new(),
        };
        let created_at = header.created_at.unwrap_or_else(|| file.modified.unwrap_or_else(|| tx.now()));
        let grown = earlier.last().or(moved.last()).copied().flatten();
        if let Some(session_id) = grown {
            let mut replay = Replay::new(tx, look, &plan, Target::Grow(Held::new(session_id)), created_at);
            let done = replay.run(format, source)?;
            if let Some(added) = done.grew {
                let outcome = match added {
                    0 => (FileOutcome::AlreadyImported { session_id: Some(session_id) }, Vec::new()),
                    events => (FileOutcome::Grew { session_id, events }, with(done.warnings, note.clone())),
                };
                return Ok(outcome);
            }
        }
        let target = Target::New { header: &header, cwd_fallback: file.cwd_fallback, session: None };
        let mut replay = Replay::new(tx, look, &plan, target, created_at);
        let done = replay.run(format, source)?;
        let record = ImportRecord {
            agent: &agent_id,
            path: file.key,
            sha256: file.sha256,
            bytes: file.bytes,
            modified_at: file.modified,
            legacy_id: header.id.as_deref(),
            session_id: done.session,
            events: done.events,
            imported_at: tx.now(),
        };
        tx.record_legacy_import(&record)?;
        let outcome = match done.session {
            None => FileOutcome::NothingImportable,
            Some(session_id) if earlier.is_empty() => {
                FileOutcome::Imported { session_id, events: done.events, forks: done.forks }
            }
            Some(session_id) => FileOutcome::Reimported {
                session_id,
                events: done.events,
                earlier: earlier.into_iter().flatten().collect(),
            },
        };
        Ok((outcome, with(done.warnings, note)))
    });
    match written {
        Ok(written) => Ok(Ok(written)),
        Err(Failed::File(error)) => Ok(Err(error)),
        Err(Failed::Store(error)) => Err(error),
    }
}

/// `warnings` with `note` among them, in line order.
fn with(mut warnings: Vec<LineWarning>, note: Option<LineWarning>) -> Vec<LineWarning> {
    warnings.extend(note);
    warnings.sort_by_key(|warning| warning.line);
    warnings
}

/// Which entries each imported path holds, from the tree.
struct Plan {
    /// Whether each entry is on the main branch.
    on_main: Vec<bool>,
    /// Each branch left behind, in file order of where it ends.
    branches: Vec<BranchPlan>,
    /// The branches that leave the main one after each of its entries.
    leaving_after: HashMap<u32, Vec<usize>>,
    /// The branches each entry off the main branch is on.
    own: HashMap<u32, Vec<usize>>,
}

struct BranchPlan {
    /// The last entry it shares with the main branch; `None` when it shares
    /// none (a root of its own).
    leaves_after: Option<u32>,
}

impl Plan {
    fn of(tree: &Tree) -> Plan {
        let mut on_main = vec![false; tree.len()];
        for index in tree.main_path() {
            on_main[index as usize] = true;
        }
        let mut plan = Plan { on_main, branches: Vec::new(), leaving_after: HashMap::new(), own: HashMap::new() };
        for leaf in tree.other_leaves() {
            let branch = plan.branches.len();
            let mut leaves_after = None;
            for index in tree.path_to(leaf).into_iter().rev() {
                if plan.on_main[index as usize] {
                    leaves_after = Some(index);
                    break;
                }
                plan.own.entry(index).or_default().push(branch);
            }
            if let Some(index) = leaves_after {
                plan.leaving_after.entry(index).or_default().push(branch);
            }
            plan.branches.push(BranchPlan { leaves_after });
        }
        plan
    }

    fn on_main(&self, index: u32) -> bool {
        self.on_main.get(index as usize).copied().unwrap_or(false)
    }

    /// Whether `index` is on branch `branch`'s path.
    fn on_branch(&self, branch: usize, index: u32) -> bool {
        let shared = self.branches[branch].leaves_after.is_some_and(|last| index <= last) && self.on_main(index);
        shared || self.own.get(&index).is_some_and(|branches| branches.contains(&branch))
    }
}

/// Where the main branch's events go.
enum Target<'h> {
    /// A new session, made at the first batch.
    New { header: &'h Header, cwd_fallback: &'h str, session: Option<SessionId> },
    /// An imported session the file may have grown from.
    Grow(Held),
}

/// The events of a session, read a page at a time, to compare a file with.
struct Held {
    session: SessionId,
    page: VecDeque<Event>,
    next: Seq,
    /// Every one was read (and those after it are the file's).
    read: bool,
    /// The file's events differ from the session's: it did not grow from it.
    differs: bool,
    /// How many events were appended after the session's.
    appended: u64,
}

impl Held {
    fn new(session: SessionId) -> Held {
        Held { session, page: VecDeque::new(), next: Seq::FIRST, read: false, differs: false, appended: 0 }
    }

    /// The session's next event, if it has one more.
    fn next(&mut self, tx: &mut WriteTx<'_>) -> Result<Option<Event>> {
        if self.page.is_empty() && !self.read {
            let page = tx.read().events_page(self.session, SeqRange::starting_at(self.next), Some(HELD_PAGE))?;
            if let Some(last) = page.last() {
                self.next = Seq(last.seq.get() + 1);
            }
            self.read = page.is_empty();
            self.page.extend(page);
        }
        Ok(self.page.pop_front())
    }
}

/// A branch left behind, as the second reading goes.
struct Branch {
    /// Its conversion, from where it leaves the main branch on; `None`
    /// before it gets there.
    converter: Option<Converter>,
    /// How many of the main branch's events it shares by construction:
    /// those made before it left.
    leaves_at: usize,
    /// Its events since it left, dated.
    events: Vec<(Timestamp, EventBody)>,
    /// The time of its newest event.
    last: Timestamp,
}

/// What the second reading did.
struct Done {
    session: Option<SessionId>,
    events: u64,
    forks: u64,
    warnings: Vec<LineWarning>,
    /// Grown by this many events; `None` when it did not grow from the session.
    grew: Option<u64>,
}

/// The second reading: the main branch's entries into events written as
/// they come, the branches' into forks at the end.
struct Replay<'r, 't, 'h> {
    tx: &'r mut WriteTx<'t>,
    look: &'r FirstLook,
    plan: &'r Plan,
    target: Target<'h>,
    created_at: Timestamp,
    main: Converter,
    skips: Skips,
    /// The time of the main branch's newest event.
    last: Timestamp,
    batch: Vec<(Timestamp, EventBody)>,
    /// How many events the main branch made.
    made: usize,
    /// A hash of each main-branch event's body, to find where a branch
    /// left it (kept only when there are branches).
    hashes: Vec<u64>,
    /// How many of the main branch's events were written.
    written: usize,
    /// The new session's view, as of its newest event written.
    view: Option<SessionInfo>,
    /// Its view as of each point a branch leaves it, for the fork made
    /// there (so the session's history is not folded again for each).
    views: HashMap<usize, SessionInfo>,
    /// The points whose views are wanted, once written.
    wanted: HashSet<usize>,
    branches: Vec<Branch>,
    failed: Option<StoreError>,
}

impl<'r, 't, 'h> Replay<'r, 't, 'h> {
    fn new(
        tx: &'r mut WriteTx<'t>,
        look: &'r FirstLook,
        plan: &'r Plan,
        target: Target<'h>,
        created_at: Timestamp,
    ) -> Self {
        let main = Converter::new(&look.facts);
        // Branches only become forks of a new session.
        let branches = match target {
            Target::New { .. } => plan
                .branches
                .iter()
                .map(|branch| Branch {
                    converter: branch.leaves_after.is_none().then(|| Converter::new(&look.facts)),
                    leaves_at: 0,
                    events: Vec::new(),
                    last: created_at,
                })
                .collect(),
            Target::Grow(_) => Vec::new(),
        };
        Replay {
            tx,
            look,
            plan,
            target,
            created_at,
            main,
            skips: Skips::default(),
            last: created_at,
            batch: Vec::new(),
            made: 0,
            hashes: Vec::new(),
            written: 0,
            view: None,
            views: HashMap::new(),
            wanted: HashSet::new(),
            branches,
            failed: None,
        }
    }

    fn run(&mut self, format: Format, source: &FileLines<'_>) -> std::result::Result<Done, Failed> {
        peers::stream_lines(format, source, &mut |made| {
            if self.failed.is_none()
                && let Err(error) = self.take(made)
            {
                self.failed = Some(error);
            }
        });
        if let Some(error) = source.failure() {
            return Err(Failed::File(error));
        }
        if let Some(error) = self.failed.take() {
            return Err(Failed::Store(error));
        }
        self.main.finish();
        self.main_events()?;
        // A session holding more than the file is not one it grew from.
        if let Target::Grow(held) = &mut self.target
            && !held.differs
            && held.next(self.tx)?.is_some()
        {
            held.differs = true;
        }
        self.flush()?;
        let warnings = self.main.warnings(std::mem::take(&mut self.skips));
        match &mut self.target {
            Target::Grow(held) => {
                let grew = (!held.differs).then_some(held.appended);
                Ok(Done { session: Some(held.session), events: held.appended, forks: 0, warnings, grew })
            }
            Target::New { session, .. } => {
                let session = *session;
                let forks = match session {
                    Some(session) => self.fork_branches(session)?,
                    None => 0,
                };
                Ok(Done { session, events: self.made as u64, forks, warnings, grew: None })
            }
        }
    }

    /// One thing the file's second reading made.
    fn take(&mut self, made: Made) -> Result<()> {
        let placed = match made {
            Made::Skip(skip) => {
                self.skips.add(&skip.reason, skip.line);
                return Ok(());
            }
            Made::Entry(placed) => placed,
        };
        let Placed { index, entry, .. } = placed;
        if let Target::Grow(held) = &self.target
            && held.differs
        {
            return Ok(());
        }
        let (plan, tree) = (self.plan, &self.look.tree);
        if plan.on_main(index) {
            let kept = tree.kept(index).filter(|&kept| plan.on_main(kept));
            self.main.feed(entry, kept.map(|kept| tree.line(kept)), &mut self.skips);
            self.main_events()?;
            for &branch in plan.leaving_after.get(&index).into_iter().flatten() {
                if let Some(state) = self.branches.get_mut(branch) {
                    state.converter = Some(self.main.branch());
                    state.leaves_at = self.made;
                    state.last = self.last;
                    match &self.view {
                        Some(view) if self.written == self.made => {
                            self.views.insert(self.made, view.clone());
                        }
                        _ => {
                            self.wanted.insert(self.made);
                        }
                    }
                }
            }
            return Ok(());
        }
        self.skips.off_branch(&entry);
        let Some(branches) = plan.own.get(&index) else { return Ok(()) };
        let mut ignored = Skips::default();
        for &branch in branches {
            let kept = tree.kept(index).filter(|&kept| plan.on_branch(branch, kept));
            let kept_line = kept.map(|kept| tree.line(kept));
            let Some(state) = self.branches.get_mut(branch) else { continue };
            let Some(converter) = &mut state.converter else { continue };
            converter.feed(entry.clone(), kept_line, &mut ignored);
            let events = converter.take_events();
            state.events.extend(dated(events, &mut state.last));
        }
        Ok(())
    }

    /// Takes the main branch's new events: compared with a grown session's,
    /// or batched for the new one.
    fn main_events(&mut self) -> Result<()> {
        let events = self.main.take_events();
        for (at, body) in dated(events, &mut self.last) {
            self.made += 1;
            match &mut self.target {
                Target::Grow(held) => {
                    if held.differs {
                        return Ok(());
                    }
                    match held.next(self.tx)? {
                        Some(event) if event.body == body => {}
                        Some(_) => held.differs = true,
                        None => self.batch.push((at, body)),
                    }
                }
                Target::New { .. } => {
                    if !self.branches.is_empty() {
                        self.hashes.push(hash(&body));
                    }
                    self.batch.push((at, body));
                }
            }
            if self.batch.len() >= BATCH_EVENTS {
                self.flush()?;
            }
        }
        Ok(())
    }

    /// Writes the batch.
    fn flush(&mut self) -> Result<()> {
        if self.batch.is_empty() {
            return Ok(());
        }
        let batch = std::mem::take(&mut self.batch);
        match &mut self.target {
            // Events come after the session's only once it matched them all.
            Target::Grow(held) if held.differs => {}
            Target::Grow(held) => {
                held.appended += self.tx.append_dated(held.session, batch)?.len() as u64;
            }
            Target::New { header, cwd_fallback, session } => {
                let id = match session {
                    Some(id) => *id,
                    None => {
                        let view = streamed::create_session(self.tx, Some(header), self.created_at, cwd_fallback)?;
                        *session = Some(view.id);
                        self.view.insert(view).id
                    }
                };
                let written = self.tx.append_dated(id, batch)?;
                self.written += written.len();
                if let Some(view) = &mut self.view {
                    for event in &written {
                        view.apply(event);
                        let seq = event.seq.get() as usize;
                        if self.wanted.remove(&seq) {
                            self.views.insert(seq, view.clone());
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// Makes each branch with events of its own a fork by reference of
    /// `session`, at the last event it shares with it; how many.
    fn fork_branches(&mut self, session: SessionId) -> Result<u64> {
        let mut seen: Vec<(usize, u64)> = Vec::new();
        for branch in std::mem::take(&mut self.branches) {
            let Branch { converter, leaves_at, mut events, mut last } = branch;
            let Some(mut converter) = converter else { continue };
            converter.finish();
            events.extend(dated(converter.take_events(), &mut last));
            let after = self.hashes.get(leaves_at..).unwrap_or_default();
            let alike = events.iter().zip(after).take_while(|((_, body), main)| hash(body) == **main).count();
            let own = events.split_off(alike);
            let shared = leaves_at + alike;
            let fingerprint = {
                let mut hasher = DefaultHasher::new();
                for (at, body) in &own {
                    at.millis().hash(&mut hasher);
                    hash(body).hash(&mut hasher);
                }
                hasher.finish()
            };
            if own.is_empty() || seen.contains(&(shared, fingerprint)) {
                continue;
            }
            // The session's view at the fork point: where the branch left,
            // and the few events it turned out to share after that.
            let mut view = self.views.get(&leaves_at).cloned();
            if let Some(view) = &mut view
                && alike > 0
            {
                let range = SeqRange::between(Seq(leaves_at as u64 + 1), Seq(shared as u64));
                for event in self.tx.read().events(session, range)? {
                    view.apply(&event);
                }
            }
            let at = Some(Seq(shared as u64));
            let fork = self.tx.fork_session_from(session, at, seri_core::ForkVia::Import, view)?;
            self.tx.append_dated(fork.id, own)?;
            seen.push((shared, fingerprint));
        }
        Ok(seen.len() as u64)
    }
}

/// `events` with their times: each its own, else the time of the one
/// before it (`last`, which it updates).
fn dated(events: Vec<LegacyEvent>, last: &mut Timestamp) -> Vec<(Timestamp, EventBody)> {
    events
        .into_iter()
        .map(|event| {
            *last = event.at.unwrap_or(*last);
            (*last, event.body)
        })
        .collect()
}

/// A hash of an event's body, to tell where two paths' events part.
fn hash(body: &EventBody) -> u64 {
    /// Hashes what is written to it.
    struct Hashing(DefaultHasher);
    impl std::fmt::Write for Hashing {
        fn write_str(&mut self, text: &str) -> std::fmt::Result {
            self.0.write(text.as_bytes());
            Ok(())
        }
    }
    let mut hashing = Hashing(DefaultHasher::new());
    // Every field, in a fixed order; writing to a hasher cannot fail.
    let _ = std::fmt::Write::write_fmt(&mut hashing, format_args!("{body:?}"));
    hashing.0.finish()
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use seri_core::AgentId;

    use crate::legacy::report::FileOutcome;
    use seri_store::AgentStore;
    use seri_store::{SessionQuery, Store};

    /// One entry of a generated pi file: its kind and where it hangs.
    #[derive(Debug, Clone)]
    enum Kind {
        User,
        Answer { calls: u8 },
        Result { call: u8 },
        Compaction { kept: u8 },
        ModelChange,
        Bookkeeping,
    }

    fn kind() -> impl Strategy<Value = Kind> {
        prop_oneof![
            3 => Just(Kind::User),
            3 => (0u8..3).prop_map(|calls| Kind::Answer { calls }),
            2 => (0u8..4).prop_map(|call| Kind::Result { call }),
            1 => (0u8..40).prop_map(|kept| Kind::Compaction { kept }),
            1 => Just(Kind::ModelChange),
            1 => Just(Kind::Bookkeeping),
        ]
    }

    /// A pi file of `entries`, each below the entry before it, or (with
    /// `Some(back)`) below the entry `back` places before it: a tree.
    fn pi_file(entries: &[(Kind, Option<u8>)]) -> String {
        let mut lines =
            vec![r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00Z","cwd":"/p"}"#.to_owned()];
        let mut calls = 0u32;
        for (i, (kind, back)) in entries.iter().enumerate() {
            let parent = match (i, back) {
                (0, _) => "null".to_owned(),
                (i, Some(back)) => format!("\"e{}\"", i.saturating_sub(1 + *back as usize)),
                (i, None) => format!("\"e{}\"", i - 1),
            };
            let time = format!("2026-01-01T00:{:02}:{:02}Z", i / 60, i % 60);
            let head = format!(r#""id":"e{i}","parentId":{parent},"timestamp":"{time}""#);
            let line = match kind {
                Kind::User => format!(r#"{{"type":"message",{head},"message":{{"role":"user","content":"u{i}"}}}}"#),
                Kind::Answer { calls: n } => {
                    let mut blocks = vec![format!(r#"{{"type":"text","text":"a{i}"}}"#)];
                    for _ in 0..*n {
                        calls += 1;
                        blocks.push(format!(r#"{{"type":"toolCall","id":"c{calls}","name":"read","arguments":{{}}}}"#));
                    }
                    format!(
                        r#"{{"type":"message",{head},"message":{{"role":"assistant","content":[{}]}}}}"#,
                        blocks.join(",")
                    )
                }
                Kind::Result { call } => {
                    let id = calls.saturating_sub(u32::from(*call));
                    format!(
                        r#"{{"type":"message",{head},"message":{{"role":"toolResult","toolCallId":"c{id}","content":"r{i}"}}}}"#
                    )
                }
                Kind::Compaction { kept } => {
                    let kept = i.saturating_sub(1 + *kept as usize);
                    format!(r#"{{"type":"compaction",{head},"summary":"s{i}","firstKeptEntryId":"e{kept}"}}"#)
                }
                Kind::ModelChange => {
                    format!(r#"{{"type":"model_change",{head},"provider":"acme","modelId":"m{i}"}}"#)
                }
                Kind::Bookkeeping => format!(r#"{{"type":"custom",{head}}}"#),
            };
            lines.push(line);
        }
        lines.join("\n")
    }

    /// After every time a generated file holds (2026-01-02).
    const FILE_TIMES_END: i64 = 1_767_312_000_000;

    /// Every session of the store: its fork point and its events, one line each.
    fn render(agent: &AgentStore<'_>) -> Vec<String> {
        let mut sessions: Vec<String> = agent
            .list_sessions(&SessionQuery::default())
            .unwrap()
            .into_iter()
            .map(|summary| {
                let fork = agent.fork_edge(summary.id).unwrap().map(|edge| edge.fork_seq.get());
                let events = agent.events(summary.id, seri_core::SeqRange::ALL).unwrap();
                // A fork's events are dated no earlier than the fork: now.
                let at = |at: seri_core::Timestamp| {
                    if at.millis() < FILE_TIMES_END { at.millis().to_string() } else { "now".to_owned() }
                };
                let events: Vec<String> =
                    events.iter().map(|e| format!("{} {} {:?}", e.seq.get(), at(e.at), e.body)).collect();
                format!("fork at {fork:?}:\n{}", events.join("\n"))
            })
            .collect();
        sessions.sort();
        sessions
    }

    fn outcome(outcome: &FileOutcome) -> String {
        match outcome {
            FileOutcome::Imported { events, forks, .. } => format!("imported {events} events, {forks} forks"),
            FileOutcome::NothingImportable => "nothing".to_owned(),
            other => format!("{other:?}"),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

        /// Read twice and streamed, a file becomes exactly the sessions,
        /// forks and warnings that reading it whole makes.
        #[test]
        fn a_streamed_import_makes_what_a_whole_one_makes(
            entries in proptest::collection::vec((kind(), proptest::option::weighted(0.25, 0u8..6)), 0..30),
        ) {
            let bytes = pi_file(&entries);
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("s.jsonl");
            std::fs::write(&path, &bytes).unwrap();

            let streamed_store = Store::open_in_memory().unwrap();
            let streamed = streamed_store.agent(&AgentId::local());
            let report = crate::legacy::import_path(&streamed, &path, "/w").unwrap();
            let streamed_file = &report.files[0];

            let whole_store = Store::open_in_memory().unwrap();
            let whole = whole_store.agent(&AgentId::local());
            let key = path.to_string_lossy();
            let whole_file =
                super::super::import_bytes(&whole, path.clone(), &key, bytes.as_bytes(), None, "/w", false)
                    .unwrap()
                    .unwrap();

            prop_assert_eq!(outcome(&streamed_file.outcome), outcome(&whole_file.outcome));
            prop_assert_eq!(&streamed_file.warnings, &whole_file.warnings);
            prop_assert_eq!(render(&streamed), render(&whole));
            // The forks' views, made from the view the import kept, are the fold's.
            let check = streamed_store.check_cached_columns(seri_store::CheckMode::Report).unwrap();
            prop_assert!(check.mismatches.is_empty(), "{:?}", check.mismatches);
        }
    }
}

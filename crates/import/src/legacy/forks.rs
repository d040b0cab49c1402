//! Where an imported file's session meets sessions imported before: a
//! fork's source and where it leaves it, and a file that grew since its
//! import. Each reads the sessions it compares inside the import's write
//! transaction.

use seri_core::{SessionId, Timestamp};

use super::file;
use seri_store::Result;

/// Where a fork's file (`events`, dated) leaves its source's session
/// `source`, and the index of its first event of its own; `None` when the
/// two share nothing.
///
/// A file that copies its source's events (pi copies every entry, Claude
/// Code the compacted context) shares the longest run of them, compaction
/// marks aside (a copied summary is not a compaction of the fork's own);
/// the fork leaves after the last event of that run. A file that does not
/// (Codex's fork by reference) leaves the source as it was when the fork
/// was made.
pub(super) fn fork_point(
    tx: &mut seri_store::WriteTx<'_>,
    source: SessionId,
    events: &[(Timestamp, seri_core::EventBody)],
    created_at: Timestamp,
) -> Result<Option<(seri_core::Seq, usize)>> {
    let held = tx.read().events(source, seri_core::SeqRange::starting_at(seri_core::Seq(1)))?;
    if let Some((_, seq, own_start)) = shared_run(&held, events) {
        return Ok(Some((seq, own_start)));
    }
    Ok(held.iter().take_while(|event| event.at <= created_at).last().map(|event| (event.seq, 0)))
}

/// How many sessions of the same working directory, newest first, are
/// searched for the source of a fork whose file does not name it.
const UNNAMED_SOURCE_CANDIDATES: u64 = 50;

/// The source of a fork whose file copies its source's first entries
/// without naming it (Claude Code's `--fork-session`): the session of the
/// same working directory sharing the longest run of its first events,
/// with where the fork leaves it and its first event of its own; `None`
/// when none shares any.
pub(super) fn unnamed_source(
    tx: &mut seri_store::WriteTx<'_>,
    cwd: Option<&str>,
    events: &[(Timestamp, seri_core::EventBody)],
) -> Result<Option<(SessionId, seri_core::Seq, usize)>> {
    let Some(cwd) = cwd.filter(|cwd| !cwd.is_empty()) else { return Ok(None) };
    let query = seri_store::SessionQuery {
        cwd: Some(cwd.to_owned()),
        limit: Some(UNNAMED_SOURCE_CANDIDATES),
        ..seri_store::SessionQuery::default()
    };
    let mut best: Option<(usize, SessionId, seri_core::Seq, usize)> = None;
    for candidate in tx.read().list_sessions(&query)? {
        let held = tx.read().events(candidate.id, seri_core::SeqRange::starting_at(seri_core::Seq(1)))?;
        if let Some((run, seq, own_start)) = shared_run(&held, events)
            && best.as_ref().is_none_or(|(longest, ..)| run > *longest)
        {
            best = Some((run, candidate.id, seq, own_start));
        }
    }
    Ok(best.map(|(_, source, seq, own_start)| (source, seq, own_start)))
}

/// The longest run of `events` (a fork's file, from its first event)
/// that `held` (its source's events) holds one after another, compaction
/// marks aside on both sides: how long it is, the seq of its last event in
/// the source, and the index in `events` of the first event after it.
fn shared_run(
    held: &[seri_core::Event],
    events: &[(Timestamp, seri_core::EventBody)],
) -> Option<(usize, seri_core::Seq, usize)> {
    let is_mark = |body: &seri_core::EventBody| matches!(body, seri_core::EventBody::ContextCompacted(_));
    let file: Vec<usize> = (0..events.len()).filter(|&i| !is_mark(&events[i].1)).collect();
    let kept: Vec<usize> = (0..held.len()).filter(|&i| !is_mark(&held[i].body)).collect();
    // (how many shared, where in `kept` the run starts)
    let mut best = (0, 0);
    if let Some(&first) = file.first() {
        for start in (0..kept.len()).filter(|&j| held[kept[j]].body == events[first].1) {
            let run = file.iter().zip(&kept[start..]).take_while(|&(&f, &h)| events[f].1 == held[h].body).count();
            if run > best.0 {
                best = (run, start);
            }
        }
    }
    match best {
        (0, _) => None,
        (run, start) => Some((run, held[kept[start + run - 1]].seq, file[run - 1] + 1)),
    }
}

/// Appends to `session` the events of `file` after those it holds, when it
/// holds exactly the events `file` begins with; how many were appended
/// (0: the file changed only in what is not imported, such as Claude
/// Code's bookkeeping lines). `None` when the session holds anything else
/// (the peer's session went back to an earlier point, or seri went on
/// with it): the file is then imported as a new session.
pub(super) fn grow(
    tx: &mut seri_store::WriteTx<'_>,
    session: SessionId,
    file: &file::LegacyFile,
    modified: Option<Timestamp>,
) -> Result<Option<u64>> {
    let held = tx.read().events(session, seri_core::SeqRange::starting_at(seri_core::Seq(1)))?;
    let dated = file.dated_events(file.created_at(modified.unwrap_or_else(|| tx.now())));
    let begins_with_held =
        held.len() <= dated.len() && held.iter().zip(&dated).all(|(event, (_, body))| event.body == *body);
    if !begins_with_held {
        return Ok(None);
    }
    let rest: Vec<_> = dated.into_iter().skip(held.len()).collect();
    if rest.is_empty() {
        return Ok(Some(0));
    }
    Ok(Some(tx.append_dated(session, rest)?.len() as u64))
}

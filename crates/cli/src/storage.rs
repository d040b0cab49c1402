//! Storage you can see and bound: `seri store du`, `seri store prune`,
//! `seri store check`, `seri sessions pin|unpin`, and `retention` in
//! `config.json` applied when a session starts. Every JSON document is
//! the store's report types, serialised; the words are built here.

use std::fmt::Write as _;
use std::process::ExitCode;

use seri_core::SessionId;
use seri_store::{PruneOptions, PrunePolicy, StorePruneReport, StoreUsage, UsageRow};

use crate::app::App;
use crate::config::RetentionConfig;
use crate::exit::Exit;

/// The setting that remembers when retention last ran, so a start prunes
/// at most once a day.
const RETENTION_LAST_RUN: &str = "retention.lastRun";

const DAY_MILLIS: i64 = 86_400_000;

/// Bytes in words: `512 B`, `1.5 KiB`, `3.2 GiB`.
pub(crate) fn human(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 { format!("{bytes} B") } else { format!("{value:.1} {}", UNITS[unit]) }
}

/// `seri store du`.
pub(crate) fn du(app: &App, json: bool) -> Result<String, Exit> {
    let usage = app.store.usage()?;
    if json {
        crate::stdout::json_line(&usage);
        return Ok(String::new());
    }
    Ok(render_usage(&usage))
}

fn render_usage(usage: &StoreUsage) -> String {
    let db = &usage.database;
    let mut out = String::new();
    let _ = writeln!(out, "database ({}): {}", db.backend, human(db.bytes));
    if let Some(index) = db.index_bytes {
        let _ = writeln!(out, "  indexes: {}", human(index));
    }
    if let Some(wal) = db.wal_bytes {
        let _ = writeln!(out, "  write-ahead log: {}", human(wal));
    }
    match db.reclaimable_bytes {
        Some(free) => {
            let _ = writeln!(out, "  free inside the file, could be given back: {}", human(free));
        }
        None => {
            let _ = writeln!(out, "  free space: reused by the server (VACUUM FULL gives it back)");
        }
    }
    let t = &usage.total;
    let _ = writeln!(
        out,
        "sessions: {} sessions, {} events — events {}, attachments {}, trajectories {} ({} in all)",
        t.sessions,
        t.events,
        human(t.event_bytes),
        human(t.attachment_bytes),
        human(t.trajectory_bytes),
        human(t.total())
    );
    for (title, rows, limit) in
        [("agents", &usage.agents, 10usize), ("folders", &usage.folders, 20), ("lineages", &usage.lineages, 20)]
    {
        let _ = writeln!(out, "\nby {title} (largest first):");
        for row in rows.iter().take(limit) {
            let _ = writeln!(out, "  {}", usage_line(row));
        }
        if rows.len() > limit {
            let _ = writeln!(out, "  … and {} more (--json lists every one)", rows.len() - limit);
        }
    }
    out.trim_end().to_owned()
}

fn usage_line(row: &UsageRow) -> String {
    let s = &row.sizes;
    let mut line = format!(
        "{:>10}  {}  ({} sessions; events {}, attachments {}, trajectories {})",
        human(row.bytes),
        row.key,
        s.sessions,
        human(s.event_bytes),
        human(s.attachment_bytes),
        human(s.trajectory_bytes)
    );
    if let Some(title) = row.title.as_deref().filter(|t| !t.is_empty()) {
        let _ = write!(line, " “{title}”");
    }
    line
}

/// The policy of `--older-than` (over `retention`), or `None` when neither says anything.
fn policy(app: &App, older_than: Option<u32>) -> Option<PrunePolicy> {
    let retention: RetentionConfig = app.config.retention.unwrap_or_default();
    let days = older_than.or(retention.days);
    let policy = PrunePolicy::of(days, retention.max_bytes, app.store.now());
    (!policy.is_empty()).then_some(policy)
}

/// `seri store prune`.
pub(crate) fn prune(app: &App, older_than: Option<u32>, dry_run: bool, json: bool) -> Result<String, Exit> {
    let Some(policy) = policy(app, older_than) else {
        return Err(Exit::usage(format!(
            "nothing to prune by: give --older-than DAYS, or set {{\"retention\": {{\"days\": N}}}} (and/or \
             \"maxBytes\") in {}. Without either, seri never prunes anything.",
            app.profile.config_path().display()
        )));
    };
    let report = app.store.prune(&PruneOptions { policy, dry_run, keep: None })?;
    if json {
        crate::stdout::json_line(&report);
        return Ok(String::new());
    }
    Ok(render_prune(&report))
}

fn render_prune(report: &StorePruneReport) -> String {
    let mut out = String::new();
    let verb = if report.dry_run { "would remove" } else { "removed" };
    if report.sessions.is_empty() {
        out.push_str("nothing to prune");
    } else {
        let _ = write!(
            out,
            "{verb} {} sessions in {} lineages, freeing {}",
            report.sessions.len(),
            report.lineages.len(),
            human(report.bytes)
        );
    }
    let short = |id: &SessionId| -> String { id.to_string().chars().take(8).collect() };
    for lineage in &report.lineages {
        let ids: Vec<String> = lineage.sessions.iter().map(short).collect();
        let title = if lineage.title.is_empty() { "(untitled)" } else { lineage.title.as_str() };
        let _ = write!(
            out,
            "\n  {}  {}  {}  “{}”  last active {}  [{}]",
            ids.join("+"),
            human(lineage.bytes),
            lineage.cwd,
            title,
            lineage.last_active,
            match lineage.reason {
                seri_store::PruneReason::Age => "age",
                seri_store::PruneReason::Budget => "size budget",
            }
        );
    }
    for (n, why) in [
        (report.kept_pinned, "pinned"),
        (report.kept_held, "in use by a running seri"),
        (report.kept_shared, "sharing history with a kept fork"),
    ] {
        if n > 0 {
            let _ = write!(out, "\nkept {n} old lineages: {why}");
        }
    }
    if let Some(space) = &report.space {
        let after = space.after.map_or_else(|| "unknown".to_owned(), human);
        let _ = write!(out, "\ndatabase: {} before, {after} after", human(space.before));
        match space.how {
            "rewritten" => out.push_str(" (the file was rewritten once to turn on incremental vacuum)"),
            "reused" => out.push_str(" (PostgreSQL reuses the freed space; VACUUM FULL gives it back)"),
            _ => {}
        }
        if let Some(problem) = &space.problem {
            let _ = write!(out, "\nthe freed space was not given back yet: {problem}");
        }
    }
    if report.dry_run && !report.sessions.is_empty() {
        let _ = write!(out, "\nnothing was removed: run without --dry-run to prune");
    }
    out
}

/// `seri store check`: exit 1 on any mismatch.
pub(crate) fn check(app: &App, json: bool) -> Result<ExitCode, Exit> {
    let report = app.store.check_consistency()?;
    if json {
        crate::stdout::json_line(&report);
    } else {
        let mut out = String::new();
        let _ = writeln!(out, "checked {} sessions, {} events", report.sessions, report.events);
        for check in &report.checks {
            let mark = if check.problems == 0 { "ok" } else { "MISMATCH" };
            let _ = writeln!(out, "  {mark:<8} {}: {} ({} found)", check.name, check.about, check.problems);
        }
        for p in &report.problems {
            let _ = writeln!(out, "{}: {} {}", p.check, p.subject, p.problem);
        }
        out.push_str(if report.is_clean() { "the store is consistent" } else { "the store has mismatches" });
        crate::stdout::line(&out);
    }
    Ok(if report.is_clean() { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// `seri sessions pin|unpin ID`.
pub(crate) fn pin(app: &App, id: &str, on: bool) -> Result<String, Exit> {
    let store = app.store.agent(&app.agent);
    let session = store.resolve_session(id)?;
    let short = store.short_id(session)?;
    let changed = store.write(|tx| if on { tx.pin_session(session) } else { tx.unpin_session(session) })?;
    Ok(match (on, changed) {
        (true, true) => format!("pinned {short}: retention never prunes it or its lineage"),
        (true, false) => format!("{short} was pinned already"),
        (false, true) => format!("unpinned {short}: retention may prune it again"),
        (false, false) => format!("{short} was not pinned"),
    })
}

/// At a session's start: applies `retention` from `config.json`, at most
/// once a day, keeping `session`, and says on stderr what went. Nothing
/// happens without `retention`; a failure is said and never stops seri.
pub(crate) fn apply_retention(app: &App, session: Option<SessionId>) {
    let Some(policy) = policy(app, None) else { return };
    let store = app.store.agent(&app.agent);
    let now = app.store.now().millis();
    let last: Option<i64> = store.setting(RETENTION_LAST_RUN).ok().flatten().and_then(|v| v.parse().ok());
    if last.is_some_and(|last| now - last < DAY_MILLIS) {
        return;
    }
    match app.store.prune(&PruneOptions { policy, dry_run: false, keep: session }) {
        Ok(report) => {
            if let Err(e) = store.set_setting(RETENTION_LAST_RUN, &now.to_string()) {
                tracing::warn!(error = %e, "could not record when retention ran");
            }
            if !report.sessions.is_empty() {
                eprintln!(
                    "seri: retention in config.json pruned {} sessions ({}); `seri store prune --dry-run` shows what would go next",
                    report.sessions.len(),
                    human(report.bytes)
                );
            }
        }
        Err(e) => eprintln!("seri: retention did not run: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::human;

    #[test]
    fn bytes_read_as_words() {
        assert_eq!(human(0), "0 B");
        assert_eq!(human(1023), "1023 B");
        assert_eq!(human(1536), "1.5 KiB");
        assert_eq!(human(3 * 1024 * 1024 * 1024), "3.0 GiB");
    }
}

//! `read`: recall one of this agent's threads exactly, as `[seq]`-prefixed
//! transcript lines (the projection crate's `transcript_event_line`, the same
//! lines continuation excerpts and `seri thread` print), with the thread's
//! continuedFrom and continuedTo.

use async_trait::async_trait;
use serde_json::{Value, json};
use seri_core::{Seq, SessionContinuationLink, SessionInfo};
use seri_projection::transcript_event_line;
use seri_prompt::text::verbs;

use crate::error::{InputError, ToolError};
use crate::input::Obj;
use crate::outcome::ToolOutcome;
use crate::permissions::ApprovalRequest;
use crate::run::RunContext;
use crate::threads;
use crate::tool::{Availability, Tool, ToolContext};

/// The tool's name.
pub const NAME: &str = "read";

/// Lines a read prints when `limit` is not given.
pub const DEFAULT_READ_LIMIT: u64 = 200;

/// Most lines one read prints.
pub const MAX_READ_LIMIT: u64 = 1_000;

/// The `read` tool. Available to every run: it reads only the agent's own threads.
#[derive(Debug, Clone, Copy, Default)]
pub struct Read;

#[async_trait]
impl Tool for Read {
    fn name(&self) -> &str {
        NAME
    }

    fn description(&self) -> &str {
        verbs::READ
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "target": {"type": "string", "description": "thread:<id> (the full id or a unique prefix), attachment:<id>, or search:<query> to find threads."},
                "fromSeq": {"type": "integer", "minimum": 1, "description": "First seq to read. Default: 1."},
                "toSeq": {"type": "integer", "minimum": 1, "description": "Last seq to read, inclusive. Default: the thread's last."},
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_READ_LIMIT,
                    "description": format!("Most lines to print. Default: {DEFAULT_READ_LIMIT}.")
                }
            },
            "required": ["target"],
            "additionalProperties": false
        })
    }

    fn availability(&self, _run: &RunContext) -> Availability {
        Availability::Available
    }

    async fn call(&self, ctx: ToolContext<'_>, input: Value) -> Result<ToolOutcome, ToolError> {
        let obj = Obj::new(&input, "")?;
        obj.only(&["target", "fromSeq", "toSeq", "limit"], "")?;
        let target = obj.req_str("target")?;
        let from = obj.opt_u64("fromSeq", 1)?;
        let to = obj.opt_u64("toSeq", 1)?;
        let limit = obj.opt_u64("limit", 1)?.unwrap_or(DEFAULT_READ_LIMIT);
        if limit > MAX_READ_LIMIT {
            return Err(InputError::new("limit", format!("{limit}; at most {MAX_READ_LIMIT}")).into());
        }
        if let Some(id) = target.trim().strip_prefix("attachment:") {
            if from.is_some() || to.is_some() {
                let field = if from.is_some() { "fromSeq" } else { "toSeq" };
                return Err(InputError::new(field, "an attachment has no seqs; it is read from its start").into());
            }
            return read_attachment(ctx, id, limit).await;
        }
        if let Some(query) = target.trim().strip_prefix("search:") {
            if from.is_some() || to.is_some() {
                let field = if from.is_some() { "fromSeq" } else { "toSeq" };
                return Err(InputError::new(field, "a search has no seqs; read a thread it finds with them").into());
            }
            return search(ctx, query, limit).await;
        }
        let Some(reference) = target.trim().strip_prefix("thread:") else {
            return Err(InputError::new(
                "target",
                format!("`{target}` is not readable here; write thread:<id>, attachment:<id> or search:<query>"),
            )
            .into());
        };
        if let (Some(from), Some(to)) = (from, to)
            && to < from
        {
            return Err(InputError::new("toSeq", format!("{to} is before fromSeq {from}")).into());
        }
        let info = threads::resolve(ctx.access, &ctx.run.agent_id, ctx.run.session_id, reference, "target").await?;
        check_other_project(ctx, &info).await?;
        let mut text = header(&info);
        if info.last_seq == 0 {
            return Ok(ToolOutcome::text(text.trim_end().to_owned()));
        }
        let from = from.unwrap_or(1);
        if from > info.last_seq {
            return Err(
                InputError::new("fromSeq", format!("{from} is past the thread's last seq, {}", info.last_seq)).into()
            );
        }
        // Seqs have no gaps, so the page's end is known before reading.
        let to = to.unwrap_or(info.last_seq).min(info.last_seq);
        let page_end = to.min(from.saturating_add(limit - 1));
        let events =
            ctx.access.events(info.id, Seq(from), Seq(page_end), usize::try_from(limit).unwrap_or(usize::MAX)).await?;
        text.push_str(&format!("showing seqs {from}–{page_end}\n"));
        for event in &events {
            text.push_str(&transcript_event_line(event));
            text.push('\n');
        }
        if page_end < to {
            text.push_str(&format!(
                "… {} more events up to seq {to}; read again with fromSeq {}.\n",
                to - page_end,
                page_end + 1
            ));
        }
        Ok(ToolOutcome::text(text.trim_end().to_owned()))
    }
}

/// Most hits a `search:` read lists.
pub const MAX_SEARCH_HITS: u64 = 20;

/// `search:<query>`: the agent's events that match, best first, this
/// project's threads first, each as the `thread:<id>` and seq to read it
/// by. A thread of another folder is named without its text: reading it
/// asks first, as `read thread:` of one does.
async fn search(ctx: ToolContext<'_>, query: &str, limit: u64) -> Result<ToolOutcome, ToolError> {
    let query = query.trim();
    let caller = threads::own(ctx.access, &ctx.run.agent_id, ctx.run.session_id).await?;
    let cwd = caller.as_ref().map(|c| c.cwd.clone()).unwrap_or_default();
    let wanted = usize::try_from(limit.min(MAX_SEARCH_HITS)).unwrap_or(1);
    let hits = match ctx.access.search(query, &cwd, wanted).await? {
        Ok(hits) => hits,
        Err(why) => return Err(InputError::new("target", format!("search:{query}: {why}")).into()),
    };
    if hits.is_empty() {
        return Ok(ToolOutcome::text(format!("search:{query}: no thread holds it.")));
    }
    let count = match hits.len() {
        1 => "1 hit".to_owned(),
        n => format!("{n} hits, best first"),
    };
    let mut out = format!("search:{query}: {count}\n");
    for hit in &hits {
        let date = hit.at.to_string();
        let date = date.get(..10).unwrap_or(&date);
        let mine = caller.is_none() || threads::same_project(&cwd, &hit.cwd);
        if mine {
            out.push_str(&format!(
                "thread:{} seq {} ({}, {date}, {}): {}\n",
                hit.session_id,
                hit.seq.get(),
                hit.kind,
                Value::from(hit.title.as_str()),
                hit.snippet
            ));
        } else {
            out.push_str(&format!(
                "thread:{} seq {} ({}, {date}): in {}, another folder; reading it asks first\n",
                hit.session_id,
                hit.seq.get(),
                hit.kind,
                hit.cwd
            ));
        }
        if !hit.shared_with.is_empty() {
            let forks: Vec<String> = hit.shared_with.iter().map(|id| format!("thread:{id}")).collect();
            out.push_str(&format!("  shared with {}\n", forks.join(", ")));
        }
        if let Some(next) = hit.continued_in {
            out.push_str(&format!("  continued in thread:{next}\n"));
        }
    }
    out.push_str("Read one with target thread:<id> and fromSeq a little before its seq.");
    Ok(ToolOutcome::text(out))
}

/// The most of an attachment a read prints: its first 256 KiB.
pub const MAX_ATTACHMENT_READ_BYTES: usize = 256 * 1024;

/// An attachment of the calling session: its text with line numbers, or,
/// for a picture or other binary file, what it is.
async fn read_attachment(ctx: ToolContext<'_>, id: &str, limit: u64) -> Result<ToolOutcome, ToolError> {
    let Some(file) = ctx.access.attachment(ctx.run.session_id, id, MAX_ATTACHMENT_READ_BYTES).await? else {
        return Err(InputError::new("target", format!("attachment:{id} is not attached to this session")).into());
    };
    let size = format!("attachment:{id}, {} bytes", file.len);
    if let Some(media_type) = seri_core::image_media_type(&file.head) {
        return Ok(ToolOutcome::text(format!(
            "{size}: a picture ({media_type}). It is shown to you with the message it was attached to; it has no text to print."
        )));
    }
    let text = match std::str::from_utf8(&file.head) {
        Ok(text) if !text.contains('\0') => text,
        // A cut in the middle of a character at the 256 KiB mark is still text.
        Err(e) if e.error_len().is_none() && !file.head[..e.valid_up_to()].contains(&0) => {
            std::str::from_utf8(&file.head[..e.valid_up_to()]).unwrap_or_default()
        }
        _ => return Ok(ToolOutcome::text(format!("{size}: binary data, not text; it cannot be printed."))),
    };
    let mut out = format!("{size}\n");
    let lines: Vec<&str> = text.lines().collect();
    let shown = lines.len().min(usize::try_from(limit).unwrap_or(usize::MAX));
    for (n, line) in lines.iter().take(shown).enumerate() {
        out.push_str(&format!("{:>6}\t{line}\n", n + 1));
    }
    if shown < lines.len() {
        out.push_str(&format!("… {} more lines; read with a larger limit.\n", lines.len() - shown));
    } else if file.len > file.head.len() as u64 {
        out.push_str(&format!("… the file goes on past its first {MAX_ATTACHMENT_READ_BYTES} bytes.\n"));
    }
    Ok(ToolOutcome::text(out.trim_end().to_owned()))
}

/// A thread of another working directory is read only as a file outside
/// the working directory is: asked about (or, headless, refused unless the
/// run is trusted), and a refusal is recorded like any other denial. A
/// project's own threads, its subfolders' included, are read freely.
async fn check_other_project(ctx: ToolContext<'_>, info: &SessionInfo) -> Result<(), ToolError> {
    let Some(caller) = threads::own(ctx.access, &ctx.run.agent_id, ctx.run.session_id).await? else {
        return Ok(());
    };
    if threads::same_project(&caller.cwd, &info.cwd) {
        return Ok(());
    }
    let request = ApprovalRequest {
        tool: NAME.to_owned(),
        target: format!("thread:{} (a session of {})", info.id, info.cwd),
        path: None,
        outside_workspace: true,
        preview: None,
        call: None,
        arguments: serde_json::Value::Null,
        each_time: false,
    };
    crate::coding::check(ctx, &request).await
}

/// The thread's identity and lineage, before its lines.
fn header(info: &SessionInfo) -> String {
    let link = |link: &Option<SessionContinuationLink>| match link {
        Some(l) => format!("thread:{} {} ({}, {})", l.session_id, Value::from(l.title.as_str()), l.reason, l.at),
        None => "none".to_owned(),
    };
    let seqs = match info.last_seq {
        0 => "no events yet".to_owned(),
        last => format!("seqs 1–{last}"),
    };
    format!(
        "thread:{} {}, {seqs}\ncontinuedFrom: {}\ncontinuedTo: {}\n",
        info.id,
        Value::from(info.title.as_str()),
        link(&info.continued_from),
        link(&info.continued_to),
    )
}

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
                "target": {"type": "string", "description": "thread:<id>, with the full id or a unique prefix."},
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
        let Some(reference) = target.trim().strip_prefix("thread:") else {
            return Err(InputError::new("target", format!("`{target}` is not readable here; write thread:<id>")).into());
        };
        let from = obj.opt_u64("fromSeq", 1)?;
        let to = obj.opt_u64("toSeq", 1)?;
        let limit = obj.opt_u64("limit", 1)?.unwrap_or(DEFAULT_READ_LIMIT);
        if limit > MAX_READ_LIMIT {
            return Err(InputError::new("limit", format!("{limit}; at most {MAX_READ_LIMIT}")).into());
        }
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
        outside_workspace: true,
        preview: None,
        call: None,
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

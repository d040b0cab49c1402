//! Checking parsed sources against the session and the disk, and turning
//! them into exact `Source` pointers.
//!
//! - A thread range must name one of this agent's threads (another agent's
//!   is reported as missing) and lie within its seqs.
//! - A memory path must exist inside the profile's `memory/` folder once
//!   `..` and symlinks are resolved: both sides are canonicalised and
//!   compared, so no spelling of the path can leave the folder.

use std::io;
use std::path::{Component, Path};

use seri_core::{Seq, SessionInfo, Source};

use super::parse::{MEMORY_PREFIX, SourceInput};
use crate::error::{InputError, ToolError};
use crate::input::{index, join};
use crate::threads;
use crate::tool::ToolContext;

/// The sources as exact pointers, in the order given.
pub(crate) async fn resolve_sources(
    ctx: ToolContext<'_>,
    current: &SessionInfo,
    sources: &[SourceInput],
) -> Result<Vec<Source>, ToolError> {
    let mut out = Vec::with_capacity(sources.len());
    for (i, source) in sources.iter().enumerate() {
        let path = index("sources", i);
        let resolved = match source {
            SourceInput::Resource { uri } => Source::Resource { uri: uri.clone() },
            SourceInput::Memory { path: memory_path } => Source::Memory {
                path: resolve_memory_path(ctx.access.memory_dir(), memory_path, &join(&path, "path"))?,
            },
            SourceInput::SessionEvents { thread, from_seq, to_seq } => {
                let info = thread_of(ctx, current, thread.as_deref(), &path).await?;
                within(&info, *from_seq, &join(&path, "fromSeq"))?;
                within(&info, *to_seq, &join(&path, "toSeq"))?;
                Source::SessionEvents { session_id: info.id, from_seq: *from_seq, to_seq: *to_seq }
            }
            SourceInput::SessionEvent { thread, seq } => {
                let info = thread_of(ctx, current, thread.as_deref(), &path).await?;
                within(&info, *seq, &join(&path, "seq"))?;
                Source::SessionEvent { session_id: info.id, seq: *seq }
            }
        };
        out.push(resolved);
    }
    Ok(out)
}

async fn thread_of(
    ctx: ToolContext<'_>,
    current: &SessionInfo,
    thread: Option<&str>,
    path: &str,
) -> Result<SessionInfo, ToolError> {
    match thread {
        None => Ok(current.clone()),
        Some(reference) => {
            threads::resolve(ctx.access, &ctx.run.agent_id, ctx.run.session_id, reference, &join(path, "sessionId"))
                .await
        }
    }
}

fn within(info: &SessionInfo, seq: Seq, field: &str) -> Result<(), InputError> {
    if info.last_seq == 0 {
        return Err(InputError::new(field, format!("thread:{} has no events yet", info.id)));
    }
    if seq.get() > info.last_seq {
        return Err(InputError::new(
            field,
            format!("thread:{} has seqs 1–{}; {seq} is past its end", info.id, info.last_seq),
        ));
    }
    Ok(())
}

/// The `~/memory/…` path of an existing file or folder inside `memory_dir`,
/// written without `..` or symlinks.
pub(crate) fn resolve_memory_path(memory_dir: &Path, written: &str, field: &str) -> Result<String, InputError> {
    let rest = written.strip_prefix(MEMORY_PREFIX).unwrap_or(written);
    let relative = Path::new(rest);
    if relative.components().any(|c| matches!(c, Component::RootDir | Component::Prefix(_))) {
        return Err(InputError::new(field, format!("`{written}` is an absolute path; write `~/memory/<file>`")));
    }
    let root = std::fs::canonicalize(memory_dir)
        .map_err(|_| InputError::new(field, "your profile has no memory folder, so no memory source can exist"))?;
    let target = std::fs::canonicalize(memory_dir.join(relative)).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound => InputError::new(field, format!("`{written}` does not exist in your memory folder")),
        _ => InputError::new(field, format!("`{written}` cannot be read: {e}")),
    })?;
    let Ok(inside) = target.strip_prefix(&root) else {
        return Err(InputError::new(
            field,
            format!("`{written}` leaves your memory folder; only files inside it can be cited"),
        ));
    };
    if inside.as_os_str().is_empty() {
        return Err(InputError::new(field, "names the memory folder itself; name a file in it"));
    }
    let parts: Vec<String> = inside.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
    Ok(format!("{MEMORY_PREFIX}{}", parts.join("/")))
}

//! Finding one of the calling agent's threads from what a model wrote: a
//! full id or a unique prefix, with or without `thread:` in front.
//!
//! Another agent's thread is reported with exactly the error of a missing
//! one, so a model can learn nothing about threads it may not read.

use seri_core::{AgentId, SessionId, SessionInfo};

use crate::access::SessionAccess;
use crate::error::{InputError, ToolError};

/// How many candidates an ambiguous prefix lists.
const AMBIGUOUS_LISTED: usize = 5;

/// The thread `reference` names, if it is one of `agent`'s. When a prefix
/// names several, the error lists those of `calling_session`'s project first.
pub(crate) async fn resolve(
    access: &dyn SessionAccess,
    agent: &AgentId,
    calling_session: SessionId,
    reference: &str,
    field: &str,
) -> Result<SessionInfo, ToolError> {
    let text = reference.trim();
    let text = text.strip_prefix("thread:").unwrap_or(text).trim().to_ascii_lowercase();
    let not_found = || ToolError::Input(InputError::new(field, format!("no thread `{text}` among your threads")));
    if text.is_empty() {
        return Err(InputError::new(field, "names no thread: expected a thread id or a unique prefix of one").into());
    }
    if !text.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-') {
        return Err(InputError::new(
            field,
            format!("`{text}` is not a thread id: ids are hexadecimal, like those `read` shows"),
        )
        .into());
    }
    let id = match text.parse::<SessionId>() {
        Ok(id) => id,
        Err(_) => {
            let ids = access.session_ids_with_prefix(agent, &canonical_prefix(&text), AMBIGUOUS_LISTED + 1).await?;
            match ids.as_slice() {
                [] => return Err(not_found()),
                [id] => *id,
                several => {
                    // This project's threads first: the ones a model most
                    // likely meant, and the ones it may read without asking.
                    let project = match access.session(calling_session).await? {
                        Some(caller) => Some(caller.cwd),
                        None => None,
                    };
                    let mut ranked = Vec::with_capacity(several.len());
                    for id in several {
                        let cwd = access.session(*id).await?.map(|info| info.cwd);
                        let ours = match (&project, &cwd) {
                            (Some(project), Some(cwd)) => same_project(project, cwd),
                            _ => false,
                        };
                        ranked.push((!ours, *id));
                    }
                    ranked.sort_by_key(|(theirs, _)| *theirs);
                    let listed: Vec<String> =
                        ranked.iter().take(AMBIGUOUS_LISTED).map(|(_, id)| format!("thread:{id}")).collect();
                    let more = if several.len() > AMBIGUOUS_LISTED { ", …" } else { "" };
                    return Err(InputError::new(
                        field,
                        format!(
                            "`{text}` matches several of your threads ({}{more}); give more of the id",
                            listed.join(", ")
                        ),
                    )
                    .into());
                }
            }
        }
    };
    own(access, agent, id).await?.ok_or_else(not_found)
}

/// Whether a session started in `other` belongs to the project of one
/// started in `cwd`: the same folder, or one inside it.
pub(crate) fn same_project(cwd: &str, other: &str) -> bool {
    std::path::Path::new(other).starts_with(std::path::Path::new(cwd))
}

/// The session with this id if it exists and belongs to `agent`.
pub(crate) async fn own(
    access: &dyn SessionAccess,
    agent: &AgentId,
    id: SessionId,
) -> Result<Option<SessionInfo>, ToolError> {
    Ok(access.session(id).await?.filter(|info| &info.agent_id == agent))
}

/// A prefix written with or without hyphens, hyphenated the way ids are
/// printed (`8-4-4-4-12`), so `1111111111` and `11111111-11` find the same threads.
fn canonical_prefix(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 4);
    for (i, c) in text.chars().filter(|c| *c != '-').enumerate() {
        if matches!(i, 8 | 12 | 16 | 20) {
            out.push('-');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::canonical_prefix;

    #[test]
    fn prefixes_are_hyphenated_like_ids() {
        assert_eq!(canonical_prefix("1111"), "1111");
        assert_eq!(canonical_prefix("1111111122"), "11111111-22");
        assert_eq!(canonical_prefix("11111111-22"), "11111111-22");
        assert_eq!(canonical_prefix("11111111-2222-3"), "11111111-2222-3");
        assert_eq!(canonical_prefix("111111112222333344445"), "11111111-2222-3333-4444-5");
    }
}

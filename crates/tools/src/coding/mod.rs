//! The coding tools: `read_file`, `write_file`, `edit`, `list`, `grep` and
//! `bash`, which let a model work on the working tree, and `remember`, which
//! writes a note to the profile's memory for the sessions to come.
//!
//! Every call goes the same way: validate the input (errors name the field),
//! resolve paths inside the [`Workspace`](crate::permissions::Workspace)
//! (symlinks followed before anything is checked), ask the
//! [`Permissions`](crate::permissions::Permissions) gate, and only then act,
//! on the resolved path. Filesystem work runs on tokio's blocking pool so a
//! large tree or file never stalls the run loop. Like the session verbs,
//! these tools write no events: a refusal comes back as
//! [`ToolError::Denied`] for the run loop to record.
//!
//! Every result is capped ([`read_file::MAX_OUTPUT_BYTES`],
//! [`list::MAX_ENTRIES`], [`grep::MAX_MATCH_LINES`],
//! [`bash::MAX_STREAM_BYTES`]) and says what it left out and how to get it.
//!
//! They are available to interactive runs and child runs, not to scripts
//! (see [`availability`]); `remember` only to interactive runs.

pub mod bash;
pub mod edit;
pub mod grep;
pub mod list;
pub mod read_file;
pub mod remember;
pub mod write_file;

mod atomic;
pub mod checked;
pub mod diff;
pub(crate) mod text;
mod walk;

use std::sync::Arc;

pub use bash::{Bash, BashSettings};
pub use edit::Edit;
pub use grep::Grep;
pub use list::List;
pub use read_file::ReadFile;
pub use remember::Remember;
pub use write_file::WriteFile;

use crate::error::ToolError;
use crate::permissions::{ApprovalRequest, ResolvedPath};
use crate::run::{RunContext, RunKind};
use crate::tool::{Availability, Tool, ToolContext};

/// Lines of a preview shown to a person deciding on a write or an edit.
const PREVIEW_LINES: usize = 20;
/// The most lines a diff shows a person, in a question or after a call.
pub(crate) const PREVIEW_DIFF_LINES: usize = 60;

/// The coding tools, in the order a request lists them.
pub fn coding_tools() -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(ReadFile),
        Arc::new(WriteFile),
        Arc::new(Edit),
        Arc::new(List),
        Arc::new(Grep),
        Arc::new(Bash::default()),
        Arc::new(Remember),
    ]
}

/// The coding tools' rule: interactive runs and child runs (delegated and
/// typed) work on the tree; scripts and calls outside a run do not.
pub fn availability(run: &RunContext) -> Availability {
    match run.run.map(|r| r.kind) {
        Some(RunKind::Interactive | RunKind::DelegatedChild { .. } | RunKind::TypedChild { .. }) => {
            Availability::Available
        }
        Some(RunKind::Script) => {
            Availability::Unavailable("runs started by a script or automation do not get the coding tools")
        }
        None => Availability::Unavailable("the coding tools act only inside a run"),
    }
}

/// The request for an action on a resolved path.
pub(crate) fn request_for(tool: &str, resolved: &ResolvedPath) -> ApprovalRequest {
    ApprovalRequest {
        tool: tool.to_owned(),
        target: resolved.display.clone(),
        path: Some(resolved.path.clone()),
        outside_workspace: !resolved.within_workspace,
        preview: None,
        call: None,
        arguments: serde_json::Value::Null,
        each_time: false,
    }
}

/// Asks the permission gate; a refusal becomes the call's error.
pub async fn check(ctx: ToolContext<'_>, request: &ApprovalRequest) -> Result<(), ToolError> {
    let mut request = request.clone();
    request.call = ctx.call.map(|call| crate::permissions::CallRef {
        session_id: ctx.run.session_id,
        run_id: ctx.run.run_id(),
        call_id: call.id.clone(),
    });
    request.arguments = ctx.call.map(|call| call.arguments.clone()).unwrap_or_default();
    ctx.permissions.check(&request).await.map_err(ToolError::Denied)
}

/// Runs filesystem work on the blocking pool.
pub(crate) async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ToolError> + Send + 'static,
) -> Result<T, ToolError> {
    tokio::task::spawn_blocking(work)
        .await
        // A panic's message may quote what the model sent: cut it too.
        .map_err(|e| {
            ToolError::io("the tool's worker stopped", std::io::Error::other(crate::error::bounded(e.to_string())))
        })?
}

/// The first [`PREVIEW_LINES`] lines of `text`, each prefixed with
/// `marker`, and how many more there are.
pub(crate) fn preview(text: &str, marker: &str) -> String {
    let mut out = String::new();
    let mut lines = text.split('\n');
    for line in lines.by_ref().take(PREVIEW_LINES) {
        out.push_str(marker);
        out.push_str(&text::cut_line(line, 200));
        out.push('\n');
    }
    let more = lines.count() as u64;
    if more > 0 {
        out.push_str(&format!("… {} more\n", text::plural(more, "line", "lines")));
    }
    out
}

/// What went wrong looking at the file or folder at `field`: a missing one
/// is the input's fault and says so; anything else is the system's.
pub(crate) fn lookup_error(error: std::io::Error, field: &str, display: &str, doing: &str) -> ToolError {
    match error.kind() {
        std::io::ErrorKind::NotFound => {
            crate::error::InputError::new(field, format!("`{display}` does not exist")).into()
        }
        _ => ToolError::io(format!("could not {doing} {display}"), error),
    }
}

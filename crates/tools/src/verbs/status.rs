//! `status`: set what the session is about (the title) and where it stands
//! (the description). The title source is `agent`, which keeps the fallback
//! namer away. A call that changes nothing is refused as a restatement,
//! because `<session_status>` already shows the current values every turn.

use async_trait::async_trait;
use serde_json::{Value, json};
use seri_core::{EventBody, StatusChanged, TitleSource};
use seri_prompt::text::verbs;

use super::{MAX_DESCRIPTION_CHARS, MAX_TITLE_CHARS};
use crate::error::{InputError, Refusal, ToolError};
use crate::input::{Obj, one_line, prose};
use crate::outcome::{ToolAction, ToolOutcome};
use crate::run::RunContext;
use crate::threads;
use crate::tool::{Availability, Tool, ToolContext};

/// The tool's name.
pub const NAME: &str = "status";

/// The `status` tool. Available to every run: every session has a title.
#[derive(Debug, Clone, Copy, Default)]
pub struct Status;

#[async_trait]
impl Tool for Status {
    fn name(&self) -> &str {
        NAME
    }

    fn description(&self) -> &str {
        verbs::STATUS
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "title": {"type": "string", "description": "What the whole session is about, in a few words."},
                "description": {"type": "string", "description": "Where the work stands now."}
            },
            "additionalProperties": false
        })
    }

    fn availability(&self, _run: &RunContext) -> Availability {
        Availability::Available
    }

    async fn call(&self, ctx: ToolContext<'_>, input: Value) -> Result<ToolOutcome, ToolError> {
        let obj = Obj::new(&input, "")?;
        obj.only(&["title", "description"], "")?;
        let title = obj.opt_str("title")?.map(|t| one_line(t, "title", MAX_TITLE_CHARS)).transpose()?;
        let description =
            obj.opt_str("description")?.map(|d| prose(d, "description", MAX_DESCRIPTION_CHARS)).transpose()?;
        let what = match (&title, &description) {
            (None, None) => return Err(InputError::new("", "give a title, a description, or both").into()),
            (Some(_), None) => "title",
            (None, Some(_)) => "description",
            (Some(_), Some(_)) => "title and description",
        };
        let info = threads::own(ctx.access, &ctx.run.agent_id, ctx.run.session_id)
            .await?
            .ok_or_else(|| InputError::new("", "this session cannot be found"))?;
        let title = title.filter(|t| *t != info.title);
        let description = description.filter(|d| *d != info.description);
        if title.is_none() && description.is_none() {
            return Err(Refusal::StatusRestatement { what }.into());
        }
        let mut said = Vec::new();
        if let Some(t) = &title {
            said.push(format!("title set to {}", Value::from(t.as_str())));
        }
        if let Some(d) = &description {
            said.push(format!("description set to {}", Value::from(d.as_str())));
        }
        let text = format!("Session status updated: {}.", said.join("; "));
        let event = EventBody::StatusChanged(StatusChanged { title, description, source: TitleSource::Agent });
        Ok(ToolOutcome::with_action(text, ToolAction::Append(vec![event])))
    }
}

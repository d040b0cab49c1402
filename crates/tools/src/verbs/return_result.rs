//! `return_result`: how a typed child run hands its value to its parent and
//! ends. The value is checked against the parent's result schema here; a
//! value that fails is an error listing every problem by path, and the
//! child can call again. A valid call comes back as [`ToolAction::Return`]
//! and the run loop ends the child's run after the turn's tools.
//!
//! The tool is built per child, around the parent's schema, by
//! [`ToolRegistry::for_child`](crate::ToolRegistry::for_child); no default
//! registry holds it.

use async_trait::async_trait;
use serde_json::{Value, json};
use seri_prompt::text::verbs;

use crate::error::{InputError, ToolError};
use crate::input::Obj;
use crate::outcome::{ToolAction, ToolOutcome};
use crate::run::{RunContext, RunKind};
use crate::tool::{Availability, Tool, ToolContext};
use crate::verbs::delegate::ResultSchema;

/// The tool's name.
pub const NAME: &str = "return_result";

/// The `return_result` tool of one typed child, with its parent's schema.
#[derive(Debug, Clone, PartialEq)]
pub struct ReturnResult {
    schema: ResultSchema,
}

impl ReturnResult {
    /// The tool for a child whose parent asked for `schema`.
    pub fn new(schema: ResultSchema) -> Self {
        Self { schema }
    }

    /// The availability rule: typed children only.
    pub fn rule(run: &RunContext) -> Availability {
        match run.run.map(|r| r.kind) {
            Some(RunKind::TypedChild { .. }) => Availability::Available,
            _ => Availability::Unavailable("only a typed child run returns a value; end your turn with your answer"),
        }
    }
}

#[async_trait]
impl Tool for ReturnResult {
    fn name(&self) -> &str {
        NAME
    }

    fn description(&self) -> &str {
        verbs::RETURN_RESULT
    }

    /// The parent's schema under `value`, so the model is shown exactly the
    /// shape it must return.
    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {"value": self.schema.as_value()},
            "required": ["value"],
            "additionalProperties": false
        })
    }

    fn availability(&self, run: &RunContext) -> Availability {
        Self::rule(run)
    }

    async fn call(&self, _ctx: ToolContext<'_>, input: Value) -> Result<ToolOutcome, ToolError> {
        Obj::new(&input, "")?.only(&["value"], "")?;
        // Not `Obj::get`: `null` is a value a schema may ask for.
        let value = input.get("value").ok_or_else(|| InputError::new("value", "required"))?;
        if let Err(violations) = self.schema.check(value, "value") {
            let problem = format!("does not match the result schema; nothing was returned:\n{violations}");
            return Err(InputError::new("value", problem).into());
        }
        let text = "Returned to the parent run; this run ends after this turn's calls.".to_owned();
        Ok(ToolOutcome::with_action(text, ToolAction::Return(value.clone())))
    }
}

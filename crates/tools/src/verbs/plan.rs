//! `plan`: the checklist `<plan_state>` shows and `transfer.plan` carries.
//!
//! Each call replaces the whole plan and makes the calling run its owner, so
//! a plan carried from a predecessor (owner cleared) is adopted by the
//! successor's run on its first call.

use async_trait::async_trait;
use serde_json::{Value, json};
use seri_core::{EventBody, Plan, PlanStep, PlanUpdated, StepStatus};
use seri_prompt::text::verbs;

use crate::error::{InputError, Refusal, ToolError};
use crate::input::{Obj, index, one_line, type_name};
use crate::outcome::{ToolAction, ToolOutcome};
use crate::run::RunContext;
use crate::threads;
use crate::tool::{Availability, Tool, ToolContext};

/// The tool's name.
pub const NAME: &str = "plan";

/// Most steps a plan may have: a checklist, not a backlog.
pub const MAX_PLAN_STEPS: usize = 50;

/// Longest step text, in characters.
pub const MAX_STEP_CHARS: usize = 300;

/// The `plan` tool. Available to every run.
#[derive(Debug, Clone, Copy, Default)]
pub struct PlanTool;

#[async_trait]
impl Tool for PlanTool {
    fn name(&self) -> &str {
        NAME
    }

    fn description(&self) -> &str {
        verbs::PLAN
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "steps": {
                    "type": "array",
                    "maxItems": MAX_PLAN_STEPS,
                    "description": "Every step, in order. An empty list closes the plan.",
                    "items": {
                        "type": "object",
                        "properties": {
                            "text": {"type": "string", "description": "The step, in one short line."},
                            "status": {"type": "string", "enum": ["pending", "in_progress", "done"], "description": "Default: pending."}
                        },
                        "required": ["text"],
                        "additionalProperties": false
                    }
                }
            },
            "required": ["steps"],
            "additionalProperties": false
        })
    }

    fn availability(&self, _run: &RunContext) -> Availability {
        Availability::Available
    }

    async fn call(&self, ctx: ToolContext<'_>, input: Value) -> Result<ToolOutcome, ToolError> {
        let steps = parse_steps(&input)?;
        let info = threads::own(ctx.access, &ctx.run.agent_id, ctx.run.session_id)
            .await?
            .ok_or_else(|| InputError::new("", "this session cannot be found"))?;
        let current = info.plan.filter(|p| !p.steps.is_empty());
        if steps.is_empty() {
            return match current {
                None => Err(Refusal::PlanRestatement("there is no plan to close").into()),
                Some(_) => Ok(ToolOutcome::with_action(
                    "Plan closed.".to_owned(),
                    ToolAction::Append(vec![EventBody::PlanUpdated(PlanUpdated { plan: None })]),
                )),
            };
        }
        let plan = Plan { steps, owner_run_id: ctx.run.run_id() };
        if current.as_ref() == Some(&plan) {
            return Err(Refusal::PlanRestatement("the plan is already exactly this").into());
        }
        let count = |status| plan.steps.iter().filter(|s| s.status == status).count();
        let steps = if plan.steps.len() == 1 { "step" } else { "steps" };
        let text = format!(
            "Plan updated: {} {steps}, {} done, {} in progress, {} pending.",
            plan.steps.len(),
            count(StepStatus::Done),
            count(StepStatus::InProgress),
            count(StepStatus::Pending)
        );
        Ok(ToolOutcome::with_action(
            text,
            ToolAction::Append(vec![EventBody::PlanUpdated(PlanUpdated { plan: Some(plan) })]),
        ))
    }
}

fn parse_steps(input: &Value) -> Result<Vec<PlanStep>, InputError> {
    let obj = Obj::new(input, "")?;
    obj.only(&["steps"], "")?;
    let items = match obj.get("steps") {
        None => return Err(InputError::new("steps", "required; pass [] to close the plan")),
        Some(Value::Array(items)) => items,
        Some(other) => return Err(InputError::new("steps", format!("expected an array, got {}", type_name(other)))),
    };
    if items.len() > MAX_PLAN_STEPS {
        return Err(InputError::new("steps", format!("{} steps; at most {MAX_PLAN_STEPS}", items.len())));
    }
    let mut steps = Vec::with_capacity(items.len());
    let mut in_progress: Option<usize> = None;
    for (i, item) in items.iter().enumerate() {
        let path = index("steps", i);
        let step = Obj::new(item, &path)?;
        step.only(&["text", "status"], "")?;
        let text = one_line(step.req_str("text")?, &step.path("text"), MAX_STEP_CHARS)?;
        let status = match step.opt_str("status")? {
            None | Some("pending") => StepStatus::Pending,
            Some("in_progress") => StepStatus::InProgress,
            Some("done") => StepStatus::Done,
            Some(other) => {
                return Err(InputError::new(
                    step.path("status"),
                    format!("`{other}` is not a step status; expected pending, in_progress or done"),
                ));
            }
        };
        if status == StepStatus::InProgress {
            if let Some(first) = in_progress {
                return Err(InputError::new(
                    step.path("status"),
                    format!("steps[{first}] is already in_progress; at most one step is in_progress"),
                ));
            }
            in_progress = Some(i);
        }
        steps.push(PlanStep { text, status });
    }
    Ok(steps)
}

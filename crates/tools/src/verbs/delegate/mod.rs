//! `delegate`: hand a task to a child run.
//!
//! This module reads and checks the input and decides whether a run may
//! delegate at all; it starts nothing. A valid call comes back as a
//! [`DelegationRequest`] in [`ToolAction::Delegate`], and the run loop starts
//! the child: its own session linked to the parent run, its own transcript,
//! its own turn budget, and a registry the parent's [`ToolRegistry::for_child`]
//! builds. A typed child (the call gave `resultSchema`) also gets
//! [`ReturnResult`](crate::verbs::return_result::ReturnResult), which checks
//! its value against the [`ResultSchema`].
//!
//! [`ToolRegistry::for_child`]: crate::ToolRegistry::for_child

use async_trait::async_trait;
use serde_json::{Value, json};
use seri_prompt::text::verbs;

pub use crate::outcome::DelegationRequest;
pub use crate::result_schema::{
    KEYWORDS, MAX_SCHEMA_DEPTH, MAX_VIOLATIONS, ResultSchema, TYPES, Violation, Violations,
};

use crate::error::{InputError, ToolError};
use crate::input::{Obj, index, prose, type_name};
use crate::outcome::{ToolAction, ToolOutcome};
use crate::run::{RunContext, RunKind};
use crate::tool::{Availability, Tool, ToolContext};

/// The tool's name.
pub const NAME: &str = "delegate";

/// Longest task, in characters: room for a detailed brief, not a transcript.
pub const MAX_TASK_CHARS: usize = 20_000;

/// Longest child session title, in characters; the title is the task's
/// first line, cut here.
pub const MAX_CHILD_TITLE_CHARS: usize = 80;

/// How deep delegation may nest by default: top-level runs delegate, their
/// children do not.
pub const DEFAULT_MAX_DEPTH: u32 = 1;

/// A subagent the person defined (Claude Code's `.claude/agents/NAME.md`):
/// a child with instructions of its own and, when it names them, only
/// some tools. `delegate` takes its name as `agent`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subagent {
    /// What `agent` names it by.
    pub name: String,
    /// When to use it, for the model choosing one.
    pub description: String,
    /// What the child is told before its task.
    pub instructions: String,
    /// The tools its children may use (seri's names); `None`: a child's default.
    pub tools: Option<Vec<String>>,
}

/// The `delegate` tool, with the nesting limit it enforces and the
/// person's subagents it offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delegate {
    max_depth: u32,
    agents: std::sync::Arc<Vec<Subagent>>,
}

impl Default for Delegate {
    fn default() -> Self {
        Self { max_depth: DEFAULT_MAX_DEPTH, agents: std::sync::Arc::default() }
    }
}

impl Delegate {
    /// A `delegate` that lets children delegate in turn, down to `max_depth`
    /// levels of children (1, the default, is no nesting; 0 turns delegation
    /// off).
    pub fn with_max_depth(max_depth: u32) -> Self {
        Self { max_depth, ..Self::default() }
    }

    /// The same `delegate`, offering `agents` by name (`agent`).
    #[must_use]
    pub fn with_agents(mut self, agents: Vec<Subagent>) -> Self {
        self.agents = std::sync::Arc::new(agents);
        self
    }

    /// The nesting limit.
    pub const fn max_depth(&self) -> u32 {
        self.max_depth
    }

    /// The availability rule: a run exists, it is not a script, and a child
    /// it started would be no deeper than the limit.
    pub fn rule(&self, run: &RunContext) -> Availability {
        let Some(current) = run.run else {
            return Availability::Unavailable("there is no run to delegate from");
        };
        match current.kind {
            RunKind::Script => Availability::Unavailable("runs started by a script or automation do not delegate"),
            _ if self.max_depth == 0 => Availability::Unavailable("delegation is turned off"),
            kind if kind.depth() >= self.max_depth => Availability::Unavailable(
                "a child run cannot delegate in turn: nesting is off, or no deeper level is allowed",
            ),
            RunKind::Interactive | RunKind::DelegatedChild { .. } | RunKind::TypedChild { .. } => {
                Availability::Available
            }
        }
    }
}

#[async_trait]
impl Tool for Delegate {
    fn name(&self) -> &str {
        NAME
    }

    fn description(&self) -> &str {
        verbs::DELEGATE
    }

    fn input_schema(&self) -> Value {
        let mut schema = json!({
            "type": "object",
            "properties": {
                "task": {
                    "type": "string",
                    "description": "The whole task, for a colleague who has read none of this conversation."
                },
                "tools": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "The names of the tools the child may use; by default every tool a child may use."
                },
                "resultSchema": {
                    "type": "object",
                    "description": "A JSON schema for a structured answer, which the child returns with return_result."
                }
            },
            "required": ["task"],
            "additionalProperties": false
        });
        if !self.agents.is_empty() {
            let names: Vec<&str> = self.agents.iter().map(|a| a.name.as_str()).collect();
            let described: Vec<String> =
                self.agents.iter().map(|a| format!("{}: {}", a.name, a.description.trim())).collect();
            schema["properties"]["agent"] = json!({
                "type": "string",
                "enum": names,
                "description": format!(
                    "One of the person's subagents: the child gets its instructions (and only its tools). {}",
                    described.join(" | ")
                )
            });
        }
        schema
    }

    fn availability(&self, run: &RunContext) -> Availability {
        self.rule(run)
    }

    async fn call(&self, _ctx: ToolContext<'_>, input: Value) -> Result<ToolOutcome, ToolError> {
        let request = parse_with(&input, &self.agents)?;
        let text = format!("Delegated to a child run titled {}.", Value::from(request.title.as_str()));
        Ok(ToolOutcome::with_action(text, ToolAction::Delegate(Box::new(request))))
    }
}

/// Reads a `delegate` input without subagents; every error names the field.
pub fn parse_delegate_input(input: &Value) -> Result<DelegationRequest, InputError> {
    parse_with(input, &[])
}

/// Reads a `delegate` input, `agent` one of `agents`: the child's task is
/// then the subagent's instructions and the task, and its tools the
/// subagent's (narrowed further by `tools` when both name some).
fn parse_with(input: &Value, agents: &[Subagent]) -> Result<DelegationRequest, InputError> {
    let obj = Obj::new(input, "")?;
    obj.only(&["task", "tools", "resultSchema", "agent"], "")?;
    let task = prose(obj.req_str("task")?, "task", MAX_TASK_CHARS)?;
    let mut tools = match obj.get("tools") {
        None => None,
        Some(Value::Array(names)) => Some(tool_names(names)?),
        Some(other) => return Err(InputError::new("tools", format!("expected an array, got {}", type_name(other)))),
    };
    let result_schema = obj.get("resultSchema").map(|s| ResultSchema::parse(s, "resultSchema")).transpose()?;
    let title = child_title(&task);
    let task = match obj.get("agent") {
        None => task,
        Some(Value::String(name)) => {
            let Some(agent) = agents.iter().find(|a| a.name == *name) else {
                let known: Vec<&str> = agents.iter().map(|a| a.name.as_str()).collect();
                let known = if known.is_empty() { "there are none".to_owned() } else { known.join(", ") };
                return Err(InputError::new("agent", format!("no subagent `{name}`: {known}")));
            };
            if let Some(theirs) = &agent.tools {
                tools = Some(match tools {
                    Some(asked) => asked.into_iter().filter(|t| theirs.contains(t)).collect(),
                    None => theirs.clone(),
                });
            }
            seri_prompt::child_task::SubagentTask { name: &agent.name, instructions: &agent.instructions, task: &task }
                .to_string()
        }
        Some(other) => {
            return Err(InputError::new("agent", format!("expected a subagent's name, got {}", type_name(other))));
        }
    };
    Ok(DelegationRequest { title, task, tools, result_schema })
}

fn tool_names(names: &[Value]) -> Result<Vec<String>, InputError> {
    let mut out: Vec<String> = Vec::with_capacity(names.len());
    for (n, name) in names.iter().enumerate() {
        let field = index("tools", n);
        let name = match name {
            Value::String(name) if !name.trim().is_empty() => name.trim(),
            Value::String(_) => return Err(InputError::new(field, "empty")),
            other => return Err(InputError::new(field, format!("expected a tool name, got {}", type_name(other)))),
        };
        if out.iter().any(|seen| seen == name) {
            return Err(InputError::new(field, format!("`{name}` is named twice")));
        }
        out.push(name.to_owned());
    }
    Ok(out)
}

/// The task's first non-blank line, cut to [`MAX_CHILD_TITLE_CHARS`] with an
/// ellipsis.
pub fn child_title(task: &str) -> String {
    let line = task.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or_default();
    if line.chars().count() <= MAX_CHILD_TITLE_CHARS {
        return line.to_owned();
    }
    let cut: String = line.chars().take(MAX_CHILD_TITLE_CHARS - 1).collect();
    format!("{}…", cut.trim_end())
}

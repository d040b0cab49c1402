//! What the availability rules see of the run that would call a tool.

use seri_core::{AgentId, RunId, SessionId};
use seri_prompt::ContextStrategy;

/// The kinds of run the availability rules distinguish.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RunKind {
    /// A person's turn (the REPL, `seri -p`, a client).
    Interactive,
    /// A child run delegated by a parent run, whose final message goes back
    /// to that parent.
    DelegatedChild {
        /// The run that delegated.
        parent_run_id: RunId,
        /// How many delegations above it: 1 for the child of a top-level
        /// run, 2 for a grandchild. The `delegate` rule compares it with
        /// the configured nesting limit.
        depth: u32,
    },
    /// A child run that must end by calling `return_result` with a value of
    /// its parent's schema.
    TypedChild {
        /// The run that delegated.
        parent_run_id: RunId,
        /// How many delegations above it, as for a delegated child.
        depth: u32,
    },
    /// A run started by a script or automation.
    Script,
}

impl RunKind {
    /// Its stored name.
    pub const fn name(self) -> seri_core::RunKindName {
        match self {
            RunKind::Interactive => seri_core::RunKindName::Interactive,
            RunKind::DelegatedChild { .. } => seri_core::RunKindName::DelegatedChild,
            RunKind::TypedChild { .. } => seri_core::RunKindName::TypedChild,
            RunKind::Script => seri_core::RunKindName::Script,
        }
    }

    /// The parent run, for a child.
    pub const fn parent_run_id(self) -> Option<RunId> {
        match self {
            RunKind::DelegatedChild { parent_run_id, .. } | RunKind::TypedChild { parent_run_id, .. } => {
                Some(parent_run_id)
            }
            RunKind::Interactive | RunKind::Script => None,
        }
    }

    /// How many delegations above the run: 0 for a run nobody delegated.
    pub const fn depth(self) -> u32 {
        match self {
            RunKind::DelegatedChild { depth, .. } | RunKind::TypedChild { depth, .. } => depth,
            RunKind::Interactive | RunKind::Script => 0,
        }
    }

    /// The kind of a child this run delegates to: typed when the parent
    /// gave a result schema, one level deeper than this run.
    pub const fn child(self, parent_run_id: RunId, typed: bool) -> RunKind {
        let depth = self.depth().saturating_add(1);
        if typed {
            RunKind::TypedChild { parent_run_id, depth }
        } else {
            RunKind::DelegatedChild { parent_run_id, depth }
        }
    }
}

/// The run in progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RunRef {
    /// Its id; a plan written by this run is owned by it.
    pub id: RunId,
    /// What kind of run it is.
    pub kind: RunKind,
    /// Child runs it spawned this turn that have not returned yet. A run
    /// cannot continue while it is waiting for children.
    pub parked_children: u32,
}

/// Everything a tool and its availability rule know about the caller.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RunContext {
    /// The session the call is made in.
    pub session_id: SessionId,
    /// Its owner; reads never reach another agent's threads.
    pub agent_id: AgentId,
    /// The session's context strategy.
    pub strategy: ContextStrategy,
    /// The run, if the call is made inside one.
    pub run: Option<RunRef>,
}

impl RunContext {
    /// The run's id, if there is a run.
    pub fn run_id(&self) -> Option<RunId> {
        self.run.map(|r| r.id)
    }
}

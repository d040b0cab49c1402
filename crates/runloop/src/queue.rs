//! The run queue: interactive runs first, then background ones, each lane in
//! the order runs were queued.

use std::collections::VecDeque;
use std::sync::{Mutex, PoisonError};

use crate::protocol::{Lane, RunSpec};

/// Runs waiting to execute.
#[derive(Debug, Default)]
pub struct RunQueue {
    lanes: Mutex<Lanes>,
}

#[derive(Debug, Default)]
struct Lanes {
    interactive: VecDeque<RunSpec>,
    background: VecDeque<RunSpec>,
}

impl RunQueue {
    /// Queues a run at the back of its lane.
    pub fn push(&self, spec: RunSpec) {
        let mut lanes = self.lanes.lock().unwrap_or_else(PoisonError::into_inner);
        match spec.lane {
            Lane::Interactive => lanes.interactive.push_back(spec),
            Lane::Background => lanes.background.push_back(spec),
        }
    }

    /// The next run: the oldest interactive one, else the oldest background one.
    pub fn pop(&self) -> Option<RunSpec> {
        let mut lanes = self.lanes.lock().unwrap_or_else(PoisonError::into_inner);
        lanes.interactive.pop_front().or_else(|| lanes.background.pop_front())
    }

    /// Drops everything queued.
    pub fn clear(&self) {
        let mut lanes = self.lanes.lock().unwrap_or_else(PoisonError::into_inner);
        lanes.interactive.clear();
        lanes.background.clear();
    }

    /// How many runs wait.
    pub fn len(&self) -> usize {
        let lanes = self.lanes.lock().unwrap_or_else(PoisonError::into_inner);
        lanes.interactive.len() + lanes.background.len()
    }

    /// Whether nothing waits.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

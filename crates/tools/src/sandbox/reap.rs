//! Finding and killing every process below the launcher: as a child
//! subreaper it inherits whatever its command orphans (`setsid`, a double
//! fork), so everything the command started stays below it until killed.

use std::collections::HashMap;

use rustix::process::{Pid, Signal, WaitOptions, getpid, kill_process, waitpid};

/// How many rounds of looking and killing before giving up: each round
/// kills what it found, and a process that forked meanwhile leaves its
/// child for the next round.
const ROUNDS: usize = 200;

/// Kills every process below this one and reaps them; returns how many
/// rounds found something.
pub(crate) fn kill_descendants() -> usize {
    let me = getpid();
    let mut busy = 0;
    for _ in 0..ROUNDS {
        reap_all();
        let found = living_descendants(me);
        if found.is_empty() {
            return busy;
        }
        busy += 1;
        for pid in found {
            if let Err(error) = kill_process(pid, Signal::KILL)
                && error != rustix::io::Errno::SRCH
            {
                tracing::warn!(pid = pid.as_raw_nonzero().get(), %error, "could not kill a process the command left");
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    tracing::warn!("processes the command left kept appearing; stopped after {ROUNDS} rounds");
    busy
}

/// Reaps every child that has ended, without waiting.
pub(crate) fn reap_all() {
    while let Ok(Some(_)) = waitpid(None, WaitOptions::NOHANG) {}
}

/// Every process below `root` that is not a zombie.
fn living_descendants(root: Pid) -> Vec<Pid> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    let mut parent_of: HashMap<i32, (i32, bool)> = HashMap::new();
    for entry in entries.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else { continue };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else { continue };
        // `pid (comm) state ppid …`; comm may hold anything, so split at
        // its last parenthesis.
        let Some((_, rest)) = stat.rsplit_once(") ") else { continue };
        let mut fields = rest.split(' ');
        let zombie = fields.next() == Some("Z");
        let Some(ppid) = fields.next().and_then(|p| p.parse::<i32>().ok()) else { continue };
        parent_of.insert(pid, (ppid, zombie));
    }
    let root = root.as_raw_nonzero().get();
    let mut found = Vec::new();
    for (&pid, &(_, zombie)) in &parent_of {
        if zombie || pid == root {
            continue;
        }
        let mut at = pid;
        // A chain longer than the table is a cycle read mid-change: skip it.
        for _ in 0..parent_of.len() {
            match parent_of.get(&at) {
                Some(&(ppid, _)) if ppid == root => {
                    found.extend(Pid::from_raw(pid));
                    break;
                }
                Some(&(ppid, _)) if ppid > 1 => at = ppid,
                _ => break,
            }
        }
    }
    found
}

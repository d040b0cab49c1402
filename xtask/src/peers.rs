//! `cargo xtask peers`: records the session fixtures of `seri import` by
//! running the peers themselves (Claude Code, Codex, pi, opencode, installed
//! from npm outside the checkout) against a scripted model server on
//! 127.0.0.1. The work is done by `xtask/peers/record.py` (the mock server
//! beside it is Python too, so the two share one runtime); this only finds
//! it and passes the arguments on. It needs the network, so CI never runs it.

use std::path::Path;
use std::process::Command;

/// Runs `xtask/peers/record.py` with `args` (`--peers`, `--install`, `--no-install`).
pub(crate) fn run(root: &Path, args: &[String]) -> Result<(), String> {
    let script = root.join("xtask").join("peers").join("record.py");
    let status = Command::new("python3")
        .arg(&script)
        .args(args)
        .current_dir(root)
        .status()
        .map_err(|e| format!("cannot run python3 {}: {e}", script.display()))?;
    if status.success() { Ok(()) } else { Err(format!("{} failed ({status})", script.display())) }
}

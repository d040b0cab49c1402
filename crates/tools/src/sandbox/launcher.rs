//! The launcher: the small process seri starts in front of a command
//! (`seri __launch [OPTIONS] -- PROGRAM ARGS…`), so that what the command
//! starts cannot outlive it and, when asked, runs sandboxed.
//!
//! In order, it joins the call's cgroup (`--cgroup`, when seri made one),
//! becomes a child subreaper (so every process the command orphans,
//! `setsid` or not, is re-parented to it rather than to init), applies
//! the Landlock rules to itself (`--sandbox`), and starts the program. It
//! ends everything below it, and then itself, when
//!
//! - the program exits: the launcher exits the same way (the same code,
//!   or the same signal);
//! - seri asks, with [`END_SIGNAL`];
//! - seri is gone (`--parent` is no longer its parent: killed with
//!   SIGKILL, say): checked every [`PARENT_POLL`].
//!
//! The launcher is what re-executes seri; it never touches seri's state
//! and prints only its own failures, prefixed `seri launcher:`.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use rustix::process::{Pid, Signal, WaitOptions, getpid, getppid, kill_process, waitpid};

use super::reap;
use super::rules::{self, Rules};

/// The signal that asks a launcher to end its command and everything it
/// started (SIGUSR2: nothing else sends it to a launcher).
pub const END_SIGNAL: Signal = Signal::USR2;

/// How often the launcher checks that seri is still its parent.
pub const PARENT_POLL: Duration = Duration::from_millis(100);

/// The launcher's exit code when it could not start its program.
pub const LAUNCH_FAILED: u8 = 125;

/// The launcher's exit code when it ended everything because seri asked
/// or was gone: SIGKILL's code in a shell.
pub const ENDED: u8 = 137;

/// What the launcher was asked to do.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Plan {
    pub(crate) cgroup: Option<PathBuf>,
    pub(crate) parent: Option<i32>,
    pub(crate) mark: Option<(String, String)>,
    pub(crate) sandbox: Option<Rules>,
    pub(crate) program: Vec<OsString>,
}

/// Reads the launcher's arguments (those after the subcommand's name).
pub(crate) fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Plan, String> {
    let mut plan = Plan::default();
    let mut args = args.into_iter();
    let mut rules = Rules::default();
    let mut sandboxed = false;
    while let Some(arg) = args.next() {
        let text = arg.to_string_lossy().into_owned();
        let mut value = || args.next().ok_or_else(|| format!("{text} needs a value"));
        match text.as_str() {
            "--" => {
                plan.program = args.collect();
                break;
            }
            "--cgroup" => plan.cgroup = Some(PathBuf::from(value()?)),
            "--parent" => {
                let pid = value()?;
                plan.parent = Some(pid.to_string_lossy().parse().map_err(|_| format!("--parent: not a pid: {pid:?}"))?);
            }
            "--mark" => {
                let mark = value()?.to_string_lossy().into_owned();
                let (name, value) = mark.split_once('=').ok_or("--mark: expected NAME=VALUE")?;
                plan.mark = Some((name.to_owned(), value.to_owned()));
            }
            "--sandbox" => sandboxed = true,
            "--write" => rules.write.push(PathBuf::from(value()?)),
            "--hide" => rules.hide.push(PathBuf::from(value()?)),
            "--read-only" => rules.read_only.push(PathBuf::from(value()?)),
            "--network" => rules.network = true,
            other => return Err(format!("unknown option {other}")),
        }
    }
    if plan.program.is_empty() {
        return Err("no program after `--`".to_owned());
    }
    if sandboxed {
        plan.sandbox = Some(rules);
    } else if rules != Rules::default() {
        return Err("--write, --hide, --read-only and --network need --sandbox".to_owned());
    }
    Ok(plan)
}

/// The launcher's whole life: `seri __launch ARGS…` calls this and exits
/// with what it returns.
pub fn main(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    let plan = match parse(args) {
        Ok(plan) => plan,
        Err(problem) => return failed(&problem),
    };
    // A cgroup seri could make but this process cannot join leaves the
    // subreaper and the mark to end the call: still bounded, so go on.
    if let Some(cgroup) = &plan.cgroup
        && let Err(error) = std::fs::write(cgroup.join("cgroup.procs"), "0")
    {
        tracing::debug!(%error, cgroup = %cgroup.display(), "the launcher could not join its cgroup");
    }
    if let Err(e) = rustix::process::set_child_subreaper(Some(getpid())) {
        return failed(&format!("cannot become a child subreaper: {e}"));
    }
    if let Err(problem) = watch(plan.parent) {
        return failed(&problem);
    }
    if let Some(rules) = &plan.sandbox
        && let Err(e) = rules::apply(rules)
    {
        return failed(&format!("cannot sandbox the command: {e}"));
    }
    let mut command = std::process::Command::new(&plan.program[0]);
    command.args(&plan.program[1..]);
    if let Some((name, value)) = &plan.mark {
        command.env(name, value);
    }
    let child = match command.spawn() {
        Ok(child) => child,
        Err(e) => return failed(&format!("cannot run {}: {e}", plan.program[0].to_string_lossy())),
    };
    let Some(child) = i32::try_from(child.id()).ok().and_then(Pid::from_raw) else {
        return failed("the command has no pid");
    };
    // Reap every child as it ends, the orphans included, until the
    // program itself has.
    let status = loop {
        match waitpid(None, WaitOptions::empty()) {
            Ok(Some((pid, status))) if pid == child => break status,
            Ok(_) => continue,
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return failed(&format!("cannot wait for the command: {e}")),
        }
    };
    reap::kill_descendants();
    if let Some(code) = status.exit_status() {
        return ExitCode::from(u8::try_from(code & 0xff).unwrap_or(1));
    }
    if let Some(signal) = status.terminating_signal().and_then(Signal::from_named_raw) {
        // Die the same way, so seri reports the command's signal. Every
        // signal but END_SIGNAL has its default action here.
        let _ = kill_process(getpid(), signal);
    }
    ExitCode::from(ENDED)
}

/// Starts the thread that ends everything when seri asks or is gone.
/// Returns once [`END_SIGNAL`] is handled, so it cannot kill the launcher
/// before its handler is in place.
fn watch(parent: Option<i32>) -> Result<(), String> {
    let (ready, listening) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("seri-launcher-watch".to_owned())
        .spawn(move || {
            let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
                Ok(runtime) => runtime,
                Err(e) => {
                    let _ = ready.send(Err(format!("cannot start the watcher: {e}")));
                    return;
                }
            };
            runtime.block_on(async move {
                let kind = tokio::signal::unix::SignalKind::from_raw(END_SIGNAL.as_raw());
                let mut asked = match tokio::signal::unix::signal(kind) {
                    Ok(signal) => signal,
                    Err(e) => {
                        let _ = ready.send(Err(format!("cannot listen for SIGUSR2: {e}")));
                        return;
                    }
                };
                let _ = ready.send(Ok(()));
                let mut poll = tokio::time::interval(PARENT_POLL);
                loop {
                    tokio::select! {
                        _ = asked.recv() => break,
                        _ = poll.tick() => {
                            let now = getppid().map(|p| p.as_raw_nonzero().get());
                            if parent.is_some_and(|parent| now != Some(parent)) {
                                break;
                            }
                        }
                    }
                }
            });
            reap::kill_descendants();
            std::process::exit(i32::from(ENDED));
        })
        .map_err(|e| format!("cannot start the watcher: {e}"))?;
    listening.recv().map_err(|_| "the watcher stopped".to_owned())?
}

fn failed(problem: &str) -> ExitCode {
    tracing::error!("{problem}");
    // The launcher's standard error is the command's: seri shows it.
    let _ = std::io::Write::write_all(&mut std::io::stderr(), format!("seri launcher: {problem}\n").as_bytes());
    ExitCode::from(LAUNCH_FAILED)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<OsString> {
        list.iter().map(OsString::from).collect()
    }

    #[test]
    fn options_then_the_program() {
        let plan = parse(args(&[
            "--parent",
            "42",
            "--mark",
            "M=v=1",
            "--sandbox",
            "--write",
            "/w",
            "--hide",
            "/h",
            "--",
            "bash",
            "-c",
            "x",
        ]))
        .unwrap();
        assert_eq!(plan.parent, Some(42));
        assert_eq!(plan.mark, Some(("M".to_owned(), "v=1".to_owned())));
        assert_eq!(
            plan.sandbox,
            Some(Rules { write: vec!["/w".into()], hide: vec!["/h".into()], read_only: Vec::new(), network: false })
        );
        assert_eq!(plan.program, args(&["bash", "-c", "x"]));
        for (bad, problem) in [
            (&["--"][..], "no program after `--`"),
            (&["--write", "/w", "--", "x"][..], "--write, --hide, --read-only and --network need --sandbox"),
            (&["--parent"][..], "--parent needs a value"),
            (&["--bogus", "--", "x"][..], "unknown option --bogus"),
        ] {
            assert_eq!(parse(args(bad)).unwrap_err(), problem);
        }
    }
}

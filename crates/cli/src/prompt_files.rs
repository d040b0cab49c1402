//! The files frozen into a new session's system prompt, read once at session
//! start and never again during it:
//!
//! - `AGENTS.md`, then `CLAUDE.md`, in every folder from the repository root (the nearest
//!   folder up from the working directory that holds `.git`; the working
//!   directory itself when there is none) down to the working directory,
//!   outermost first, so the most specific instructions come last;
//! - always-on rules: `*.md` in the profile's `rules/` folder, then in
//!   `.seri/rules/` at the repository root, each folder in name order, each
//!   without its front matter; a rule whose front matter declares `globs`
//!   is not frozen but becomes one of the session's [`GlobRules`], whose
//!   patterns are relative to the repository root;
//! - memory: `*.md` directly in the profile's `memory/` folder, in name order.
//!
//! Each file is recorded with the SHA-256 of its bytes in the frozen prompt.
//! A file that changes later reaches the model only in a new session.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use seri_prompt::{ContextFile, ContextFileKind, parse_rule};
use seri_runloop::{GlobRule, GlobRules};
use seri_store::Profile;
use sha2::{Digest, Sha256};

use crate::exit::Exit;

/// What a session started in `cwd` is given from files.
#[derive(Debug, Default)]
pub(crate) struct PromptFiles {
    /// Frozen into the system prompt.
    pub(crate) frozen: Vec<ContextFile>,
    /// Fired as messages when a call works on a file they cover.
    pub(crate) glob_rules: GlobRules,
}

/// The project instruction files of each folder, in the order read.
const PROJECT_INSTRUCTIONS: [&str; 2] = ["AGENTS.md", "CLAUDE.md"];

/// Reads the prompt files for a session started in `cwd`.
pub(crate) fn read(cwd: &Path, profile: &Profile) -> Result<PromptFiles, Exit> {
    let root = repository_root(cwd);
    let mut files = Vec::new();
    let mut glob_rules = Vec::new();
    for dir in folders_from(&root, cwd) {
        // Claude Code's CLAUDE.md is read the same way, after AGENTS.md.
        for name in PROJECT_INSTRUCTIONS {
            let path = dir.join(name);
            if path.is_file() {
                files.push(context_file(ContextFileKind::ProjectInstructions, &path, display(&path, cwd))?);
            }
        }
    }
    for dir in [profile.root().join("rules"), root.join(".seri").join("rules")] {
        for path in markdown_in(&dir)? {
            let mut file = context_file(ContextFileKind::Rule, &path, display(&path, cwd))?;
            let rule =
                parse_rule(&file.text).map_err(|e| failure(format!("cannot read rule {}: {e}", path.display())))?;
            if rule.is_glob_rule() {
                let glob_rule = GlobRule::new(file.path.clone(), rule.globs.clone(), rule.body)
                    .map_err(|e| failure(format!("cannot read rule {}: {e}", path.display())))?;
                glob_rules.push(glob_rule);
                continue;
            }
            file.text = rule.body.to_owned();
            files.push(file);
        }
    }
    for path in markdown_in(&profile.memory_dir())? {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        files.push(context_file(ContextFileKind::Memory, &path, format!("~/memory/{name}"))?);
    }
    Ok(PromptFiles { frozen: files, glob_rules: GlobRules::new(root, glob_rules) })
}

fn failure(message: String) -> Exit {
    Exit::Failure(anyhow::anyhow!(message))
}

/// Where a session started in `cwd` is starting: the directory, the OS,
/// today's date, and the git branch and whether the tree is dirty (each
/// left out when it cannot be told). `early` is a [`GitStatus`] started
/// before, used when it looked at this repository.
pub(crate) fn environment(cwd: &Path, early: Option<GitStatus>) -> seri_prompt::Environment {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let date = seri_core::Timestamp(i64::try_from(now.as_millis()).unwrap_or(0)).to_string();
    let root = repository_root(cwd);
    let git = root.join(".git");
    let status = early.filter(|s| s.root == root).or_else(|| GitStatus::start(cwd));
    seri_prompt::Environment {
        cwd: cwd.to_string_lossy().into_owned(),
        os: std::env::consts::OS.to_owned(),
        date: date.get(..10).unwrap_or(&date).to_owned(),
        git_branch: git.exists().then(|| git_branch(&git)).flatten(),
        git_dirty: status.and_then(GitStatus::dirty),
    }
}

/// The branch `HEAD` names, read from the file (a worktree's `.git` file
/// points at its own git directory); `detached HEAD` when it names a commit.
fn git_branch(git: &Path) -> Option<String> {
    let dir = match std::fs::read_to_string(git) {
        Ok(text) => PathBuf::from(text.strip_prefix("gitdir:")?.trim()),
        Err(_) => git.to_path_buf(),
    };
    let head = std::fs::read_to_string(dir.join("HEAD")).ok()?;
    Some(match head.trim().strip_prefix("ref: refs/heads/") {
        Some(branch) => branch.to_owned(),
        None => "detached HEAD".to_owned(),
    })
}

/// Whether tracked files of a repository have uncommitted changes, asked
/// of `git status` in a process of its own. It is started as early as a
/// new session is known to come (`seri -p` starts it before it opens the
/// store), because it reads git's index and checks every tracked file:
/// about as long as the rest of a one-turn run in a repository of a few
/// hundred files, and on another core meanwhile.
///
/// The repository's `.git/config` is the model's to write (`.git` is in
/// the workspace), so git runs as a command the model could have written
/// would: through the launcher, sandboxed read-only with the network off
/// and seri's profile and the keys of `DENY_READ_IN_HOME` hidden, without
/// seri's environment, and with every setting that makes git run a program
/// of the repository's choosing (`core.fsmonitor`, `core.hooksPath`,
/// `core.pager`, `diff.external`) overridden on its command line. Where the
/// sandbox cannot be applied, git is not run at all: the environment block
/// then does not say whether the tree is clean.
#[derive(Debug)]
pub(crate) struct GitStatus {
    root: PathBuf,
    child: Option<std::process::Child>,
}

/// The program that runs the launcher: seri itself.
#[cfg(not(test))]
fn launcher() -> Option<PathBuf> {
    std::env::current_exe().ok()
}

/// In this crate's unit tests, the `seri` built beside the test binary
/// (`target/debug/deps/..`): the test binary is not seri.
#[cfg(test)]
fn launcher() -> Option<PathBuf> {
    Some(std::env::current_exe().ok()?.parent()?.parent()?.join("seri"))
}

/// Settings given on git's command line, over any a repository sets, so
/// that `git status` starts no program the repository names.
const NEUTRAL_GIT: [&str; 12] = [
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.pager=cat",
    "-c",
    "core.untrackedCache=false",
    "-c",
    "diff.external=",
    "-c",
    "status.showUntrackedFiles=no",
];

impl GitStatus {
    /// `git status` of the repository holding `cwd`; `None` outside one,
    /// when git cannot be started (not installed), or when it cannot be
    /// sandboxed.
    pub(crate) fn start(cwd: &Path) -> Option<GitStatus> {
        let root = repository_root(cwd);
        if !root.join(".git").exists() {
            return None;
        }
        if let Err(why) = seri_tools::sandbox::probe(false) {
            tracing::info!(%why, "git status is not run: it cannot be sandboxed here");
            return None;
        }
        let seri = launcher()?;
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let profile = Profile::from_env().ok().map(|p| p.root().to_path_buf());
        let mut command = std::process::Command::new(seri);
        command.arg(crate::sandbox::LAUNCH_SUBCOMMAND).arg("--parent").arg(std::process::id().to_string());
        command.arg("--sandbox");
        for hidden in crate::sandbox::DENY_READ_IN_HOME.iter().filter_map(|p| home.as_ref().map(|h| h.join(p))) {
            command.arg("--hide").arg(hidden);
        }
        if let Some(profile) = profile {
            command.arg("--hide").arg(profile);
        }
        command.arg("--").arg("git").args(NEUTRAL_GIT).args(["--no-optional-locks", "status", "--porcelain"]);
        command.env_clear().env("GIT_OPTIONAL_LOCKS", "0").env("GIT_TERMINAL_PROMPT", "0");
        for kept in ["PATH", "HOME", "LANG", "LC_ALL"] {
            if let Some(value) = std::env::var_os(kept) {
                command.env(kept, value);
            }
        }
        let child = command
            .current_dir(&root)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .ok()?;
        Some(GitStatus { root, child: Some(child) })
    }

    /// Its answer: `None` when git could not say (not a real repository).
    fn dirty(mut self) -> Option<bool> {
        let out = self.child.take()?.wait_with_output().ok()?;
        out.status.success().then_some(!out.stdout.is_empty())
    }
}

impl Drop for GitStatus {
    /// One never asked is stopped and reaped.
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// The nearest folder up from `cwd` holding `.git`, else `cwd`.
pub(crate) fn repository_root(cwd: &Path) -> PathBuf {
    cwd.ancestors().find(|dir| dir.join(".git").exists()).unwrap_or(cwd).to_path_buf()
}

/// `root`, then each folder below it down to `cwd`.
fn folders_from(root: &Path, cwd: &Path) -> Vec<PathBuf> {
    let mut folders: Vec<PathBuf> =
        cwd.ancestors().take_while(|d| d.starts_with(root)).map(Path::to_path_buf).collect();
    folders.reverse();
    folders
}

fn markdown_in(dir: &Path) -> Result<Vec<PathBuf>, Exit> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Exit::Failure(anyhow::Error::new(e).context(format!("cannot list {}", dir.display())))),
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|ext| ext == "md"))
        .collect();
    paths.sort();
    Ok(paths)
}

fn context_file(kind: ContextFileKind, path: &Path, shown: String) -> Result<ContextFile, Exit> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let sha256 = Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect();
    Ok(ContextFile { kind, path: shown, text: String::from_utf8_lossy(&bytes).into_owned(), sha256 })
}

/// A path as the model should see it: relative to the working directory
/// when inside it, absolute otherwise.
fn display(path: &Path, cwd: &Path) -> String {
    path.strip_prefix(cwd).unwrap_or(path).to_string_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A git repository in `dir` with one committed file, `a.txt`.
    fn repository(dir: &Path) {
        let git = |args: &[&str]| {
            let out = std::process::Command::new("git").args(args).current_dir(dir).output().unwrap();
            assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        };
        std::fs::create_dir_all(dir).unwrap();
        git(&["init", "-q", "-b", "trunk"]);
        std::fs::write(dir.join("a.txt"), "one").unwrap();
        git(&["add", "a.txt"]);
        git(&["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "one"]);
    }

    #[test]
    fn a_git_status_started_early_tells_the_environment_what_one_started_late_would() {
        let dir = tempfile::tempdir().unwrap();
        let (repo, other) = (dir.path().join("repo"), dir.path().join("other"));
        repository(&repo);
        repository(&other);
        let sub = repo.join("sub");
        std::fs::create_dir_all(&sub).unwrap();
        let told = |early| {
            let env = environment(&sub, early);
            (env.git_branch, env.git_dirty)
        };
        let clean = (Some("trunk".to_owned()), Some(false));
        assert_eq!(told(None), clean);
        assert_eq!(told(GitStatus::start(&sub)), clean);
        std::fs::write(repo.join("a.txt"), "two").unwrap();
        let dirty = (Some("trunk".to_owned()), Some(true));
        assert_eq!(told(None), dirty);
        assert_eq!(told(GitStatus::start(&repo)), dirty, "started at the root, asked from below it");
        // One of another repository (clean) is not this one's answer.
        assert_eq!(told(GitStatus::start(&other)), dirty);
        // Outside a repository there is nothing to start or tell.
        let plain = dir.path().join("plain");
        std::fs::create_dir_all(&plain).unwrap();
        assert!(GitStatus::start(&plain).is_none());
        let env = environment(&plain, GitStatus::start(&repo));
        assert_eq!((env.git_branch, env.git_dirty), (None, None));
    }

    #[test]
    fn agents_files_from_the_repository_root_down_then_rules_then_memory() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        let cwd = repo.join("crates").join("x");
        std::fs::create_dir_all(&cwd).unwrap();
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::write(repo.join("AGENTS.md"), "root rules").unwrap();
        std::fs::write(cwd.join("AGENTS.md"), "crate rules").unwrap();
        std::fs::write(cwd.join("CLAUDE.md"), "claude rules").unwrap();
        std::fs::create_dir_all(repo.join(".seri/rules")).unwrap();
        std::fs::write(repo.join(".seri/rules/style.md"), "be terse").unwrap();
        let profile = Profile::at(dir.path().join("profile"));
        std::fs::create_dir_all(profile.memory_dir()).unwrap();
        std::fs::write(profile.memory_dir().join("me.md"), "likes tea").unwrap();
        std::fs::write(profile.memory_dir().join("notes.txt"), "not markdown").unwrap();

        let files = read(&cwd, &profile).unwrap().frozen;
        let seen: Vec<(&str, &str)> = files.iter().map(|f| (f.path.as_str(), f.text.as_str())).collect();
        let outer = repo.join("AGENTS.md").to_string_lossy().into_owned();
        let rule = repo.join(".seri/rules/style.md").to_string_lossy().into_owned();
        assert_eq!(
            seen,
            vec![
                (outer.as_str(), "root rules"),
                ("AGENTS.md", "crate rules"),
                ("CLAUDE.md", "claude rules"),
                (rule.as_str(), "be terse"),
                ("~/memory/me.md", "likes tea"),
            ]
        );
        assert_eq!(files[1].sha256.len(), 64);
        assert_eq!(files.len(), 5);
    }
}

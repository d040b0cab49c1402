//! The files frozen into a new session's system prompt, read once at session
//! start and never again during it:
//!
//! - `AGENTS.md` in every folder from the repository root (the nearest
//!   folder up from the working directory that holds `.git`; the working
//!   directory itself when there is none) down to the working directory,
//!   outermost first, so the most specific instructions come last;
//! - always-on rules: `*.md` in the profile's `rules/` folder, then in
//!   `.seri/rules/` at the repository root, each folder in name order;
//! - memory: `*.md` directly in the profile's `memory/` folder, in name order.
//!
//! Each file is recorded with the SHA-256 of its bytes in the frozen prompt.
//! A file that changes later reaches the model only in a new session.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use seri_prompt::{ContextFile, ContextFileKind};
use seri_store::Profile;
use sha2::{Digest, Sha256};

use crate::exit::Exit;

/// Reads the prompt files for a session started in `cwd`.
pub(crate) fn read(cwd: &Path, profile: &Profile) -> Result<Vec<ContextFile>, Exit> {
    let root = repository_root(cwd);
    let mut files = Vec::new();
    for dir in folders_from(&root, cwd) {
        let path = dir.join("AGENTS.md");
        if path.is_file() {
            files.push(context_file(ContextFileKind::ProjectInstructions, &path, display(&path, cwd))?);
        }
    }
    for dir in [profile.root().join("rules"), root.join(".seri").join("rules")] {
        for path in markdown_in(&dir)? {
            files.push(context_file(ContextFileKind::Rule, &path, display(&path, cwd))?);
        }
    }
    for path in markdown_in(&profile.memory_dir())? {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        files.push(context_file(ContextFileKind::Memory, &path, format!("~/memory/{name}"))?);
    }
    Ok(files)
}

/// The nearest folder up from `cwd` holding `.git`, else `cwd`.
fn repository_root(cwd: &Path) -> PathBuf {
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

    #[test]
    fn agents_files_from_the_repository_root_down_then_rules_then_memory() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        let cwd = repo.join("crates").join("x");
        std::fs::create_dir_all(&cwd).unwrap();
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::write(repo.join("AGENTS.md"), "root rules").unwrap();
        std::fs::write(cwd.join("AGENTS.md"), "crate rules").unwrap();
        std::fs::create_dir_all(repo.join(".seri/rules")).unwrap();
        std::fs::write(repo.join(".seri/rules/style.md"), "be terse").unwrap();
        let profile = Profile::at(dir.path().join("profile"));
        std::fs::create_dir_all(profile.memory_dir()).unwrap();
        std::fs::write(profile.memory_dir().join("me.md"), "likes tea").unwrap();
        std::fs::write(profile.memory_dir().join("notes.txt"), "not markdown").unwrap();

        let files = read(&cwd, &profile).unwrap();
        let seen: Vec<(&str, &str)> = files.iter().map(|f| (f.path.as_str(), f.text.as_str())).collect();
        let outer = repo.join("AGENTS.md").to_string_lossy().into_owned();
        let rule = repo.join(".seri/rules/style.md").to_string_lossy().into_owned();
        assert_eq!(
            seen,
            vec![
                (outer.as_str(), "root rules"),
                ("AGENTS.md", "crate rules"),
                (rule.as_str(), "be terse"),
                ("~/memory/me.md", "likes tea"),
            ]
        );
        assert_eq!(files[1].sha256.len(), 64);
    }
}

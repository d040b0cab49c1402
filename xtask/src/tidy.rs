//! Tidy checks over the whole workspace, run as ordinary tests.
//!
//! They guard habits a reviewer would otherwise have to remember: every Rust
//! file says what it is for in a `//!` line, no test is switched off, no stub
//! is left behind, every crate takes the workspace's lints and version.

use std::path::{Path, PathBuf};

use super::{walk, workspace_root};

fn files_with_extension(ext: &str) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let root = workspace_root();
    for dir in ["crates", "xtask"] {
        walk(&root.join(dir), &mut |path| {
            if path.extension().and_then(|e| e.to_str()) == Some(ext) {
                files.push(path.to_path_buf());
            }
        });
    }
    files
}

fn relative(path: &Path) -> String {
    path.strip_prefix(workspace_root()).unwrap_or(path).display().to_string()
}

#[test]
fn every_rust_file_opens_with_a_module_doc() {
    let missing: Vec<String> = files_with_extension("rs")
        .into_iter()
        .filter(|path| {
            let text = std::fs::read_to_string(path).unwrap_or_default();
            let first = text.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
            !first.starts_with("//!")
        })
        .map(|p| relative(&p))
        .collect();
    assert!(missing.is_empty(), "these files do not open with a `//!` doc comment:\n{}", missing.join("\n"));
}

#[test]
fn no_switched_off_tests_or_stubs() {
    // Spelled in pieces so this file does not match itself.
    let banned =
        [concat!("#[", "ignore"), concat!("#[", "should_panic"), concat!("todo", "!("), concat!("unimplemented", "!(")];
    let mut hits = Vec::new();
    for path in files_with_extension("rs") {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        for (n, line) in text.lines().enumerate() {
            if let Some(b) = banned.iter().find(|b| line.contains(*b)) {
                hits.push(format!("{}:{}: {b}", relative(&path), n + 1));
            }
        }
    }
    assert!(hits.is_empty(), "a switched-off test or a stub is not done:\n{}", hits.join("\n"));
}

#[test]
fn every_crate_uses_workspace_lints_and_version() {
    let mut problems = Vec::new();
    for path in files_with_extension("toml") {
        if path.file_name().and_then(|n| n.to_str()) != Some("Cargo.toml") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        for needle in ["[lints]\nworkspace = true", "version.workspace = true"] {
            if !text.contains(needle) {
                problems.push(format!("{}: missing `{}`", relative(&path), needle.replace('\n', " ")));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn no_pending_snapshots() {
    let pending = super::pending_snapshots(&workspace_root());
    assert!(pending.is_empty(), "pending insta snapshots: {pending:?}");
}

#[test]
fn every_crate_has_an_architecture_section() {
    let arch = std::fs::read_to_string(workspace_root().join("ARCHITECTURE.md")).unwrap_or_default();
    let crates = std::fs::read_dir(workspace_root().join("crates")).map(|d| {
        d.filter_map(Result::ok)
            .filter(|e| e.path().join("Cargo.toml").exists())
            .map(|e| e.file_name())
            .collect::<Vec<_>>()
    });
    let missing: Vec<String> = crates
        .unwrap_or_default()
        .into_iter()
        .filter_map(|name| name.to_str().map(|n| format!("crates/{n}")))
        .filter(|folder| !arch.contains(&format!("`{folder}`")))
        .collect();
    assert!(missing.is_empty(), "ARCHITECTURE.md has no section naming {missing:?}");
}

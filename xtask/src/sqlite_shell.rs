//! A `sqlite3` shell that reads seri's files, for the search benchmark's
//! baseline (`crates/cli/benches/search.rs`): the search index's FTS5 table
//! uses `contentless_delete`, which SQLite before 3.43 refuses, and
//! Debian bookworm's shell is 3.40.
//!
//! When the PATH's shell is older, one is built from the SQLite sources
//! Debian publishes (the upstream tarball, checked by its SHA-256), about
//! 40 s on two cores, and cached under `$XDG_CACHE_HOME/seri` (else
//! `~/.cache/seri`) beside llama-server.

use std::path::PathBuf;
use std::process::Command;

use crate::llama::{cache_root, on_path, recreate, run_quiet};

const VERSION: &str = "3.46.1";
const SOURCE: &str = "http://deb.debian.org/debian/pool/main/s/sqlite3/sqlite3_3.46.1.orig.tar.xz";
const SHA256: &str = "d0cdd2ece271b29e7ce18095745d892517ee26d0f270065b3a25c2e9eb11639c";

/// A shell of SQLite 3.43 or later: the PATH's when it is one (`None`),
/// else the cached build, made now if missing.
pub(crate) fn ensure() -> Result<Option<PathBuf>, String> {
    if path_shell_is_new_enough() {
        return Ok(None);
    }
    let dir = cache_root()?.join(format!("sqlite3-{VERSION}"));
    let binary = dir.join("sqlite3");
    if binary.is_file() {
        return Ok(Some(binary));
    }
    for tool in ["curl", "gcc", "make", "tclsh"] {
        if !on_path(tool) {
            return Err(format!("building a sqlite3 shell needs {tool}, which is not on the PATH"));
        }
    }
    let work = dir.join("work");
    recreate(&work)?;
    println!("xtask bench: building a sqlite3 {VERSION} shell (the PATH's is older than 3.43) into {}", dir.display());
    run_quiet("curl", &["-sSfL", "-o", "sqlite.tar.xz", SOURCE], &work)?;
    let sum = Command::new("sha256sum")
        .arg(work.join("sqlite.tar.xz"))
        .output()
        .map_err(|e| format!("could not run sha256sum: {e}"))?;
    let sum = String::from_utf8_lossy(&sum.stdout);
    if sum.split_whitespace().next() != Some(SHA256) {
        return Err(format!("{SOURCE} is not the tarball expected (sha256 {sum}, not {SHA256})"));
    }
    run_quiet("tar", &["xJf", "sqlite.tar.xz"], &work)?;
    let build = work.join("build");
    std::fs::create_dir_all(&build).map_err(|e| format!("cannot create {}: {e}", build.display()))?;
    let configure = format!("../sqlite3-{VERSION}/configure");
    run_quiet("sh", &[&configure, "--enable-fts5", "--disable-tcl"], &build)?;
    run_quiet("make", &["-j2", "sqlite3.c", "shell.c"], &build)?;
    // Built beside the sources and moved in whole, so an interrupted build
    // never leaves a binary that a later run would take as done.
    let cc =
        ["-O2", "shell.c", "sqlite3.c", "-I.", "-DSQLITE_ENABLE_FTS5", "-lm", "-lpthread", "-ldl", "-o", "sqlite3"];
    run_quiet("gcc", &cc, &build)?;
    std::fs::rename(build.join("sqlite3"), &binary).map_err(|e| format!("cannot move the shell into place: {e}"))?;
    let _ = std::fs::remove_dir_all(&work);
    Ok(Some(binary))
}

/// Whether `sqlite3` on the PATH is 3.43 or later.
fn path_shell_is_new_enough() -> bool {
    let Ok(out) = Command::new("sqlite3").arg("--version").output() else { return false };
    new_enough(&String::from_utf8_lossy(&out.stdout))
}

/// Whether a `sqlite3 --version` line names 3.43 or later.
fn new_enough(version: &str) -> bool {
    let mut parts = version.split_whitespace().next().unwrap_or_default().split('.').map(|p| p.parse::<u32>());
    match (parts.next(), parts.next()) {
        (Some(Ok(major)), Some(Ok(minor))) => (major, minor) >= (3, 43),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::new_enough;

    #[test]
    fn versions_from_3_43_read_the_index() {
        assert!(!new_enough(
            "3.40.1 2022-12-28 14:03:47 df5c253c0b3dd24916e4ec7cf77d3db5294cc9fd45ae7b9c5e82ad8197f3alt1"
        ));
        assert!(new_enough("3.43.0 2023-08-24"));
        assert!(new_enough("3.46.1 2024-08-13 09:16:08 c9c2ab54 (64-bit)"));
        assert!(!new_enough(""));
    }
}

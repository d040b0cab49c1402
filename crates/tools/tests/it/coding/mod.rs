//! The coding tools and their permission layer, on real temporary folders
//! and real processes.

mod bash;
mod commands;
mod contained;
mod deny;
mod edit;
mod escapes;
mod facts;
mod modes;
mod paths;
mod patterns;
mod permissions;
mod policy;
mod races;
mod read_file;
mod sandbox;
mod secrets;
mod walk;
mod world;
mod write_file;

/// A folder outside the system's temporary folder (which the sandbox lets
/// commands write) and outside every test workspace: cargo's target
/// folder, unless the checkout itself lies in the temporary folder (a clone
/// under `/tmp`), then `/var/tmp` or the home folder, whichever is not in it.
pub(crate) fn outside_temp() -> tempfile::TempDir {
    let temp = std::fs::canonicalize(std::env::temp_dir()).unwrap_or_else(|_| std::env::temp_dir());
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let candidates = [Some(std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))), Some("/var/tmp".into()), home];
    let chosen = candidates
        .into_iter()
        .flatten()
        .filter_map(|dir| std::fs::canonicalize(&dir).ok())
        .find(|dir| !dir.starts_with(&temp) && std::fs::metadata(dir).is_ok_and(|m| m.is_dir()))
        .expect("a folder outside the temporary folder: cargo's target folder, /var/tmp or HOME");
    tempfile::tempdir_in(chosen).unwrap()
}

//! Replacing a file atomically: the new bytes go to a temporary file in the
//! same folder, which is flushed to disk and then renamed over the target.
//! A reader sees the old file or the new one, never a mix; on any failure
//! the target is untouched and the temporary file is removed.
//!
//! A write killed halfway (a crash, `kill -9`) can leave its temporary file
//! behind; the next write of the same path removes those whose writer is
//! gone, and never one a live process is still filling.
//!
//! The rename is a parameter of [`write_atomic_with`] so tests can make it
//! fail; everything else calls [`write_atomic`].

use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Tries at a free temporary name before giving up.
const TEMP_NAME_TRIES: u32 = 64;

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Writes `bytes` to `path` atomically. The folder must exist. An existing
/// file keeps its permissions (a script stays executable).
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_atomic_with(path, bytes, |from, to| fs::rename(from, to))
}

/// [`write_atomic`] with the final rename supplied by the caller.
pub(crate) fn write_atomic_with(
    path: &Path,
    bytes: &[u8],
    rename: impl FnOnce(&Path, &Path) -> io::Result<()>,
) -> io::Result<()> {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "not a file path"));
    };
    remove_stale_temps(dir, name);
    let (temp, file) = create_temp(dir, name.to_owned())?;
    let result = fill(file, bytes, path).and_then(|()| rename(&temp, path));
    if let Err(error) = result {
        // The target was never touched; only the temporary file can be left.
        let _ = fs::remove_file(&temp);
        return Err(error);
    }
    sync_dir(dir);
    Ok(())
}

/// Removes the temporary files of earlier writes of `name` whose process is
/// gone (`.NAME.PID.N.seri-tmp`). Best effort: a folder that cannot be
/// listed leaves them for later.
fn remove_stale_temps(dir: &Path, name: &std::ffi::OsStr) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    let prefix = format!(".{}.", name.to_string_lossy());
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let Some(rest) = file_name.to_str().and_then(|n| n.strip_prefix(&prefix)) else { continue };
        let Some(middle) = rest.strip_suffix(".seri-tmp") else { continue };
        let Some(pid) = middle.split_once('.').and_then(|(pid, _)| pid.parse::<u32>().ok()) else { continue };
        let alive = Path::new(&format!("/proc/{pid}")).exists();
        if !alive {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// A new, empty file beside the target, named after it and hidden.
fn create_temp(dir: &Path, name: OsString) -> io::Result<(PathBuf, File)> {
    let mut last = io::Error::new(io::ErrorKind::AlreadyExists, "no free temporary name");
    for _ in 0..TEMP_NAME_TRIES {
        let mut temp_name = OsString::from(".");
        temp_name.push(&name);
        temp_name.push(format!(".{}.{}.seri-tmp", std::process::id(), TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)));
        let temp = dir.join(temp_name);
        match OpenOptions::new().write(true).create_new(true).open(&temp) {
            Ok(file) => return Ok((temp, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = e,
            Err(e) => return Err(e),
        }
    }
    Err(last)
}

/// Writes the bytes, copies the target's permissions, and flushes to disk.
fn fill(mut file: File, bytes: &[u8], target: &Path) -> io::Result<()> {
    file.write_all(bytes)?;
    if let Ok(meta) = fs::metadata(target) {
        file.set_permissions(meta.permissions())?;
    }
    file.sync_all()
}

/// Flushes the folder so the rename itself survives a crash. Best effort:
/// the file is already in place, and some filesystems cannot sync folders.
fn sync_dir(dir: &Path) {
    if let Err(error) = File::open(dir).and_then(|d| d.sync_all()) {
        tracing::debug!(dir = %dir.display(), %error, "could not sync the folder after a rename");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> =
            fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        names
    }

    #[test]
    fn replaces_the_file_and_leaves_nothing_beside_it() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("a.txt");
        fs::write(&target, "old").unwrap();
        write_atomic(&target, b"new").unwrap();
        assert_eq!(fs::read_to_string(&target).unwrap(), "new");
        assert_eq!(names(dir.path()), ["a.txt"]);
    }

    #[test]
    fn a_failed_rename_leaves_the_original_and_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("a.txt");
        fs::write(&target, "original").unwrap();
        let mut seen = None;
        let error = write_atomic_with(&target, b"replacement", |from, _| {
            // The temporary file is complete when the rename is attempted.
            seen = Some(fs::read_to_string(from).unwrap());
            Err(io::Error::other("injected rename failure"))
        })
        .unwrap_err();
        assert_eq!(error.to_string(), "injected rename failure");
        assert_eq!(seen.as_deref(), Some("replacement"));
        assert_eq!(fs::read_to_string(&target).unwrap(), "original");
        assert_eq!(names(dir.path()), ["a.txt"]);
    }

    #[test]
    fn a_temporary_file_a_killed_write_left_is_removed_by_the_next_write() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notes.txt");
        // A pid no process has, and this process's own (a write under way).
        let stale = dir.path().join(format!(".notes.txt.{}.0.seri-tmp", u32::MAX - 3));
        let live = dir.path().join(format!(".notes.txt.{}.999.seri-tmp", std::process::id()));
        fs::write(&stale, "half").unwrap();
        fs::write(&live, "filling").unwrap();
        write_atomic(&path, b"whole").unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "whole");
        assert!(!stale.exists(), "the dead writer's temporary file is gone");
        assert!(live.exists(), "a live writer's temporary file is left alone");
    }

    #[test]
    fn keeps_an_executable_bit() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("run.sh");
        fs::write(&target, "#!/bin/sh\n").unwrap();
        fs::set_permissions(&target, fs::Permissions::from_mode(0o755)).unwrap();
        write_atomic(&target, b"#!/bin/sh\necho hi\n").unwrap();
        assert_eq!(fs::metadata(&target).unwrap().permissions().mode() & 0o777, 0o755);
    }

    #[test]
    fn a_missing_folder_is_an_error_and_creates_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("missing/a.txt");
        assert_eq!(write_atomic(&target, b"x").unwrap_err().kind(), io::ErrorKind::NotFound);
        assert!(names(dir.path()).is_empty());
    }
}

//! Replacing a file atomically: the new bytes go to a temporary file in the
//! same folder, which is flushed to disk and then renamed over the target.
//! A reader sees the old file or the new one, never a mix; on any failure
//! the target is untouched and the temporary file is removed.
//!
//! A write killed halfway (a crash, `kill -9`) can leave its temporary file
//! behind; the next write of the same path removes those whose writer is
//! gone, and never one a live process is still filling.
//!
//! The file replaced is the file that was checked: an existing target must
//! be a regular file, the new one gets its permission bits, and the two are
//! exchanged only if what comes out is still that file (see
//! [`checked::replace_in`]); a target swapped for a symlink meanwhile is
//! left as it is and the write fails.
//!
//! The replacing is a parameter of [`write_atomic_with`] so tests can make
//! it fail or race it; everything else calls [`write_atomic`].

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Write as _};
use std::os::fd::OwnedFd;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use super::checked;

/// Tries at a free temporary name before giving up.
const TEMP_NAME_TRIES: u32 = 64;

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Writes `bytes` to `path` atomically. The folder must exist. An existing
/// file keeps its permissions (a script stays executable). The folder is
/// opened once, as a checked path (see [`checked`]), and the temporary file
/// is created and renamed inside that handle: a folder swapped for a
/// symlink is refused, never written through.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_atomic_with(path, bytes, checked::replace_in)
}

/// [`write_atomic`] with the final replacing (within the folder's handle)
/// supplied by the caller.
pub(crate) fn write_atomic_with(
    path: &Path,
    bytes: &[u8],
    replace: impl FnOnce(&OwnedFd, &OsStr, &OsStr, Option<checked::Existing>) -> io::Result<()>,
) -> io::Result<()> {
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "not a file path"));
    };
    let dir = checked::open_dir(parent)?;
    remove_stale_temps(&dir, name);
    let existing = checked::existing_in(&dir, name)?;
    let (temp, file) = create_temp(&dir, name)?;
    let result = fill(file, bytes, existing.map(|e| e.mode)).and_then(|()| replace(&dir, &temp, name, existing));
    if let Err(error) = result {
        // The target was never touched; only the temporary file can be left.
        let _ = checked::remove_in(&dir, &temp);
        return Err(error);
    }
    // Flushes the folder so the rename itself survives a crash. Best
    // effort: the file is already in place, and some filesystems cannot.
    if let Err(error) = rustix::fs::fsync(&dir) {
        tracing::debug!(dir = %parent.display(), %error, "could not sync the folder after a rename");
    }
    Ok(())
}

/// Removes the temporary files of earlier writes of `name` whose process is
/// gone (`.NAME.PID.N.seri-tmp`). Best effort: a folder that cannot be
/// listed leaves them for later.
fn remove_stale_temps(dir: &OwnedFd, name: &OsStr) {
    let Ok(listing) = rustix::fs::Dir::read_from(dir) else { return };
    let prefix = format!(".{}.", name.to_string_lossy());
    for entry in listing.flatten() {
        let file_name = entry.file_name().to_string_lossy().into_owned();
        let Some(rest) = file_name.strip_prefix(&prefix) else { continue };
        let Some(middle) = rest.strip_suffix(".seri-tmp") else { continue };
        let Some(pid) = middle.split_once('.').and_then(|(pid, _)| pid.parse::<u32>().ok()) else { continue };
        let alive = Path::new(&format!("/proc/{pid}")).exists();
        if !alive {
            let _ = checked::remove_in(dir, OsStr::new(&file_name));
        }
    }
}

/// A new, empty file beside the target, named after it and hidden.
fn create_temp(dir: &OwnedFd, name: &OsStr) -> io::Result<(OsString, File)> {
    let mut last = io::Error::new(io::ErrorKind::AlreadyExists, "no free temporary name");
    for _ in 0..TEMP_NAME_TRIES {
        let mut temp = OsString::from(".");
        temp.push(name);
        temp.push(format!(".{}.{}.seri-tmp", std::process::id(), TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)));
        match checked::create_new_in(dir, &temp, 0o644) {
            Ok(file) => return Ok((temp, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = e,
            Err(e) => return Err(e),
        }
    }
    Err(last)
}

/// Writes the bytes, gives the file the target's permissions, and flushes to disk.
fn fill(mut file: File, bytes: &[u8], mode: Option<u32>) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    file.write_all(bytes)?;
    if let Some(mode) = mode {
        file.set_permissions(std::fs::Permissions::from_mode(mode))?;
    }
    file.sync_all()
}

#[cfg(test)]
mod tests {
    use std::fs;

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
        let error = write_atomic_with(&target, b"replacement", |_, from, _, _| {
            // The temporary file is complete when the rename is attempted.
            seen = Some(fs::read_to_string(dir.path().join(from)).unwrap());
            Err(io::Error::other("injected rename failure"))
        })
        .unwrap_err();
        assert_eq!(error.to_string(), "injected rename failure");
        assert_eq!(seen.as_deref(), Some("replacement"));
        assert_eq!(fs::read_to_string(&target).unwrap(), "original");
        assert_eq!(names(dir.path()), ["a.txt"]);
    }

    #[test]
    fn a_file_swapped_for_a_symlink_while_it_is_written_is_left_alone() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("secret.txt");
        let elsewhere = dir.path().join("elsewhere.txt");
        fs::write(&target, "original").unwrap();
        fs::set_permissions(&target, fs::Permissions::from_mode(0o600)).unwrap();
        fs::write(&elsewhere, "elsewhere").unwrap();
        // Swapped for a symlink after the check and before the replacing.
        let error = write_atomic_with(&target, b"replacement", |dir_fd, from, to, existing| {
            fs::rename(&target, dir.path().join("moved.txt")).unwrap();
            std::os::unix::fs::symlink(&elsewhere, &target).unwrap();
            checked::replace_in(dir_fd, from, to, existing)
        })
        .unwrap_err();
        assert!(error.to_string().contains("changed while it was being written"), "{error}");
        assert_eq!(fs::read_link(&target).unwrap(), elsewhere, "the link is still there");
        assert_eq!(fs::read_to_string(&elsewhere).unwrap(), "elsewhere");
        assert_eq!(fs::read_to_string(dir.path().join("moved.txt")).unwrap(), "original");
        assert_eq!(names(dir.path()), ["elsewhere.txt", "moved.txt", "secret.txt"], "no temporary file left");
        // A symlink already there when the write starts is refused too, and
        // a file that appears where there was none is not replaced.
        assert!(write_atomic(&target, b"x").unwrap_err().to_string().contains("changed while"));
        let fresh = dir.path().join("fresh.txt");
        let error = write_atomic_with(&fresh, b"mine", |dir_fd, from, to, existing| {
            std::os::unix::fs::symlink(&elsewhere, &fresh).unwrap();
            checked::replace_in(dir_fd, from, to, existing)
        })
        .unwrap_err();
        assert!(error.to_string().contains("changed while"), "{error}");
        assert_eq!(fs::read_link(&fresh).unwrap(), elsewhere);
        assert_eq!(fs::metadata(&elsewhere).unwrap().permissions().mode() & 0o777, 0o644, "its target untouched");
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

//! Opening a checked path without resolving it again.
//!
//! A coding tool checks a path once: `Workspace::resolve` makes it absolute
//! and canonical (no `..`, no symlinks among its existing components) and
//! says whether it is inside the working directory. Opening it again by
//! name would re-resolve it, and another process may have swapped a folder
//! on the way for a symlink to somewhere else in between (`renameat2` with
//! `RENAME_EXCHANGE` does it atomically). So every open here goes through
//! `openat2` with `RESOLVE_NO_SYMLINKS`: a canonical path holds no symlink,
//! so meeting one means the tree changed since the check, and the kernel
//! refuses the open in the same step that resolves it. Folders are opened
//! the same way and files created, renamed or removed relative to them
//! (`openat`, `renameat`, `unlinkat`), so no write follows a swapped path
//! either.

use std::ffi::OsStr;
use std::fs::File;
use std::io;
use std::os::fd::OwnedFd;
use std::path::{Component, Path};

use rustix::fs::{AtFlags, Mode, OFlags, ResolveFlags};

/// How every checked path is resolved: no symlink anywhere (a swap), no
/// `/proc` magic link.
fn resolve_flags() -> ResolveFlags {
    ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS
}

/// Says plainly what a refused resolution means.
fn explain(error: rustix::io::Errno, path: &Path) -> io::Error {
    if error == rustix::io::Errno::LOOP || error == rustix::io::Errno::XDEV {
        return io::Error::other(format!(
            "{} changed while it was being opened (a folder on its way became a symlink); nothing was read or written",
            path.display()
        ));
    }
    io::Error::from(error)
}

fn open(path: &Path, flags: OFlags) -> io::Result<OwnedFd> {
    rustix::fs::openat2(rustix::fs::CWD, path, flags | OFlags::CLOEXEC, Mode::empty(), resolve_flags())
        .map_err(|e| explain(e, path))
}

/// Opens a checked path for reading (a file, or a folder to list).
pub fn open_read(path: &Path) -> io::Result<File> {
    Ok(File::from(open(path, OFlags::RDONLY | OFlags::NONBLOCK)?))
}

/// A checked folder, as a handle to create, rename and remove entries in.
pub(crate) fn open_dir(path: &Path) -> io::Result<OwnedFd> {
    open(path, OFlags::RDONLY | OFlags::DIRECTORY)
}

/// Whether a checked path exists, and whether it is a folder, without
/// following a symlink on the way. `None`: it does not exist.
pub(crate) fn kind(path: &Path) -> io::Result<Option<bool>> {
    match open(path, OFlags::PATH) {
        Ok(fd) => {
            Ok(Some(rustix::fs::fstat(&fd).map(|st| st.st_mode & 0o170000 == 0o040000).map_err(io::Error::from)?))
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Creates the missing folders of a checked path, each inside the one
/// before it by handle, so none is created through a swapped symlink.
pub(crate) fn create_dirs(path: &Path) -> io::Result<()> {
    let mut existing = path.to_path_buf();
    let mut missing = Vec::new();
    loop {
        match kind(&existing)? {
            Some(true) => break,
            Some(false) => {
                return Err(io::Error::other(format!("{} is a file, not a folder", existing.display())));
            }
            None => {
                let Some(name) = existing.file_name() else {
                    return Err(io::Error::from(io::ErrorKind::NotFound));
                };
                missing.push(name.to_owned());
                if !existing.pop() {
                    return Err(io::Error::from(io::ErrorKind::NotFound));
                }
            }
        }
    }
    let mut dir = open_dir(&existing)?;
    for name in missing.into_iter().rev() {
        check_name(&name)?;
        match rustix::fs::mkdirat(&dir, &*name, Mode::from_raw_mode(0o755)) {
            Ok(()) | Err(rustix::io::Errno::EXIST) => {}
            Err(e) => return Err(io::Error::from(e)),
        }
        let next = rustix::fs::openat(
            &dir,
            &*name,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| explain(e, path))?;
        dir = next;
    }
    Ok(())
}

/// A plain file name: one normal component.
fn check_name(name: &OsStr) -> io::Result<()> {
    let mut parts = Path::new(name).components();
    match (parts.next(), parts.next()) {
        (Some(Component::Normal(_)), None) => Ok(()),
        _ => Err(io::Error::new(io::ErrorKind::InvalidInput, "not a plain file name")),
    }
}

/// Creates `name` in `dir`, failing if it exists, never following a symlink.
pub(crate) fn create_new_in(dir: &OwnedFd, name: &OsStr, mode: u32) -> io::Result<File> {
    check_name(name)?;
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = rustix::fs::openat(dir, name, flags, Mode::from_raw_mode(mode)).map_err(io::Error::from)?;
    Ok(File::from(fd))
}

/// A file about to be replaced: its permission bits, and which file it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Existing {
    /// Its permission bits, which the new file gets.
    pub(crate) mode: u32,
    dev: u64,
    ino: u64,
}

/// The regular file `name` in `dir`, or `None` when nothing is there. A
/// symlink (or a folder, a socket…) is refused: the path was checked as a
/// file, so something changed it since.
pub(crate) fn existing_in(dir: &OwnedFd, name: &OsStr) -> io::Result<Option<Existing>> {
    match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) if st.st_mode & 0o170000 == 0o100000 => {
            Ok(Some(Existing { mode: st.st_mode & 0o7777, dev: st.st_dev, ino: st.st_ino }))
        }
        Ok(_) => Err(changed(name)),
        Err(rustix::io::Errno::NOENT) => Ok(None),
        Err(e) => Err(io::Error::from(e)),
    }
}

fn changed(name: &OsStr) -> io::Error {
    io::Error::other(format!(
        "{} changed while it was being written (it is no longer the file that was checked: a symlink, a folder, or another file); nothing was replaced",
        Path::new(name).display()
    ))
}

/// Puts `from` in the place of `to`, both in `dir`. Over `existing` (what
/// [`existing_in`] found) the two are exchanged, and exchanged back, with
/// an error, unless what came out is that very file: a file swapped for a
/// symlink in between is never replaced. Where nothing was, nothing that
/// appeared since is replaced either.
pub(crate) fn replace_in(dir: &OwnedFd, from: &OsStr, to: &OsStr, existing: Option<Existing>) -> io::Result<()> {
    use rustix::fs::RenameFlags;
    check_name(from)?;
    check_name(to)?;
    let Some(existing) = existing else {
        return match rustix::fs::renameat_with(dir, from, dir, to, RenameFlags::NOREPLACE) {
            Ok(()) => Ok(()),
            Err(rustix::io::Errno::EXIST) => Err(changed(to)),
            // A filesystem without renameat2's flags: the plain rename.
            Err(rustix::io::Errno::INVAL) => rustix::fs::renameat(dir, from, dir, to).map_err(io::Error::from),
            Err(e) => Err(io::Error::from(e)),
        };
    };
    match rustix::fs::renameat_with(dir, from, dir, to, RenameFlags::EXCHANGE) {
        Ok(()) => {}
        Err(rustix::io::Errno::INVAL) => return rustix::fs::renameat(dir, from, dir, to).map_err(io::Error::from),
        Err(e) => return Err(io::Error::from(e)),
    }
    // `from` now holds what was at `to`.
    let came_out = existing_in(dir, from).ok().flatten();
    if came_out.is_some_and(|c| (c.dev, c.ino) == (existing.dev, existing.ino)) {
        return remove_in(dir, from);
    }
    rustix::fs::renameat_with(dir, from, dir, to, RenameFlags::EXCHANGE).map_err(io::Error::from)?;
    Err(changed(to))
}

/// Removes the file `name` from `dir`.
pub(crate) fn remove_in(dir: &OwnedFd, name: &OsStr) -> io::Result<()> {
    check_name(name)?;
    rustix::fs::unlinkat(dir, name, AtFlags::empty()).map_err(io::Error::from)
}

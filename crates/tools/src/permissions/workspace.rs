//! The working directory and its allowed roots: where the coding tools may
//! reach without asking, and how a path the model wrote is resolved.
//!
//! A path is resolved one component at a time, the way the kernel would:
//! each component that exists is looked up without following it, and a
//! symlink is replaced by its canonical target before the next component is
//! applied, so `..` always steps out of the real folder. Components that do
//! not exist yet (a file or folders `write_file` will create) are appended as
//! written. The result contains no `..` and no symlink, so checking it and
//! then acting on it touch the same file, whatever spelling the model used:
//! `../x`, `link/x` through a symlink that leaves, `new/../link/x`.
//!
//! Protected places ([`Workspace::with_protected`]: seri's profile, the
//! sandbox's `denyRead` places) are never resolved, inside the workspace or
//! not, asked or not: the tools neither read nor write them, and a walk
//! (`list`, `grep`) passes over them.

use std::io;
use std::path::{Component, Path, PathBuf};

use crate::error::InputError;

/// The working directory of a run and the extra roots it may reach.
///
/// Both are canonical (absolute, no symlinks), fixed when the value is made.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Workspace {
    root: PathBuf,
    allowed_roots: Vec<PathBuf>,
    protected: Vec<PathBuf>,
}

/// A working directory or allowed root that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    /// It cannot be resolved (it does not exist, or cannot be read).
    #[error("{} cannot be used as a {what}: {source}", path.display())]
    Unresolvable {
        /// `working directory` or `allowed root`.
        what: &'static str,
        /// The path as given.
        path: PathBuf,
        /// What the filesystem said.
        #[source]
        source: io::Error,
    },
    /// It is a file, not a folder.
    #[error("{} cannot be used as a {what}: it is not a folder", path.display())]
    NotAFolder {
        /// `working directory` or `allowed root`.
        what: &'static str,
        /// The path as given.
        path: PathBuf,
    },
}

impl Workspace {
    /// A workspace rooted at `root`, which must be an existing folder.
    pub fn new(root: impl AsRef<Path>) -> Result<Self, WorkspaceError> {
        Ok(Self {
            root: canonical_folder(root.as_ref(), "working directory")?,
            allowed_roots: Vec::new(),
            protected: Vec::new(),
        })
    }

    /// The same workspace, with `places` that no tool reads or writes
    /// (seri's profile, `~/.ssh`, …), whether or not they exist yet.
    pub fn with_protected(mut self, places: &[PathBuf]) -> Self {
        for place in crate::sandbox::rules::anchored(places) {
            if !self.protected.contains(&place) {
                self.protected.push(place);
            }
        }
        self
    }

    /// The protected places, canonical (one that does not exist yet is
    /// anchored at its nearest existing folder).
    pub fn protected(&self) -> &[PathBuf] {
        &self.protected
    }

    /// Adds a folder outside the working directory that the tools may also
    /// reach without asking (a sibling checkout, a shared cache).
    pub fn with_allowed_root(mut self, root: impl AsRef<Path>) -> Result<Self, WorkspaceError> {
        let root = canonical_folder(root.as_ref(), "allowed root")?;
        if !self.allowed_roots.contains(&root) {
            self.allowed_roots.push(root);
        }
        Ok(self)
    }

    /// The working directory, canonical.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The allowed roots, canonical, in the order added.
    pub fn allowed_roots(&self) -> &[PathBuf] {
        &self.allowed_roots
    }

    /// Whether a resolved path is inside the working directory or an
    /// allowed root.
    pub fn contains(&self, resolved: &Path) -> bool {
        resolved.starts_with(&self.root) || self.allowed_roots.iter().any(|r| resolved.starts_with(r))
    }

    /// Resolves a path the model wrote (relative to the working directory,
    /// or absolute). `field` names the input field in errors.
    pub fn resolve(&self, written: &str, field: &str) -> Result<ResolvedPath, InputError> {
        if written.trim().is_empty() {
            return Err(InputError::new(field, "empty; write a path relative to the working directory"));
        }
        if written.contains('\0') {
            return Err(InputError::new(field, "contains a NUL character"));
        }
        if written == "~" || written.starts_with("~/") {
            return Err(InputError::new(
                field,
                format!(
                    "`{written}`: `~` is not expanded; write the path relative to the working directory, or absolute"
                ),
            ));
        }
        let path = resolve_components(&self.root.join(written), written, field)?;
        if let Some(place) = self.protected.iter().find(|p| path.starts_with(p)) {
            return Err(InputError::new(
                field,
                format!(
                    "`{written}` is in {}, a place seri's tools never read or write (seri's profile, or a place of sandbox.denyRead)",
                    place.display()
                ),
            ));
        }
        let display = match path.strip_prefix(&self.root) {
            Ok(inside) if inside.as_os_str().is_empty() => ".".to_owned(),
            Ok(inside) => inside.display().to_string(),
            Err(_) => path.display().to_string(),
        };
        let within_workspace = self.contains(&path);
        Ok(ResolvedPath { path, display, within_workspace })
    }
}

/// A path as the tools act on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedPath {
    /// Absolute, with no `..` and no symlinks among its existing components.
    pub path: PathBuf,
    /// How results name it: relative to the working directory when inside
    /// it (`.` for the directory itself), else absolute.
    pub display: String,
    /// Inside the working directory or one of its allowed roots.
    pub within_workspace: bool,
}

fn canonical_folder(path: &Path, what: &'static str) -> Result<PathBuf, WorkspaceError> {
    let canonical = std::fs::canonicalize(path).map_err(|source| WorkspaceError::Unresolvable {
        what,
        path: path.to_owned(),
        source,
    })?;
    if !canonical.is_dir() {
        return Err(WorkspaceError::NotAFolder { what, path: path.to_owned() });
    }
    Ok(canonical)
}

/// Applies `joined`'s components one by one; see the module doc.
fn resolve_components(joined: &Path, written: &str, field: &str) -> Result<PathBuf, InputError> {
    let mut current = PathBuf::new();
    for component in joined.components() {
        match component {
            Component::Prefix(_) | Component::RootDir => current.push(component.as_os_str()),
            Component::CurDir => {}
            // `current` never holds a symlink, so popping is stepping out of
            // the real folder; `/..` stays `/`.
            Component::ParentDir => {
                current.pop();
            }
            Component::Normal(name) => {
                let next = current.join(name);
                current = match std::fs::symlink_metadata(&next) {
                    Ok(meta) if meta.file_type().is_symlink() => std::fs::canonicalize(&next).map_err(|e| {
                        let target = std::fs::read_link(&next).map(|t| t.display().to_string()).unwrap_or_default();
                        match e.kind() {
                            io::ErrorKind::NotFound => InputError::new(
                                field,
                                format!(
                                    "`{written}` goes through the symlink {} to `{target}`, which does not exist",
                                    next.display()
                                ),
                            ),
                            _ => InputError::new(
                                field,
                                format!("`{written}`: the symlink {} cannot be followed: {e}", next.display()),
                            ),
                        }
                    })?,
                    Ok(_) => next,
                    Err(e) if e.kind() == io::ErrorKind::NotFound => next,
                    Err(e) if e.kind() == io::ErrorKind::NotADirectory => {
                        return Err(InputError::new(
                            field,
                            format!("`{written}` goes through {}, which is a file, not a folder", current.display()),
                        ));
                    }
                    Err(e) => return Err(InputError::new(field, format!("`{written}` cannot be looked up: {e}"))),
                };
            }
        }
    }
    Ok(current)
}

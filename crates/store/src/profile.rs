//! The profile root: the one directory that holds everything seri keeps for
//! a user (`$SERI_HOME`, else `~/.seri`).
//!
//! ```text
//! <root>/seri.db        sessions, events, continuation edges
//! <root>/config.json    settings
//! <root>/memory/        what `~/memory/…` sources resolve to
//! <root>/attachments/   attachments/<session-id>/<attachment-id>
//! <root>/sessions/      .jsonl files of an older release: imported once, never written
//! ```

use std::ffi::OsString;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::error::{ProfileError, Result, StoreError};
use crate::store::{Store, StoreOptions};

/// The variable that names the profile root.
pub const SERI_HOME: &str = "SERI_HOME";

/// A profile root and the paths inside it. Building one touches no file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    root: PathBuf,
}

impl Profile {
    /// The profile at `root`.
    pub fn at(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// The profile named by the process environment.
    pub fn from_env() -> Result<Self> {
        Self::from_lookup(|name| std::env::var_os(name))
    }

    /// The profile named by an environment given as a lookup function:
    /// `$SERI_HOME` if set and not empty, else `.seri` in the home directory
    /// (`HOME`, or `USERPROFILE` on Windows).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<OsString>) -> Result<Self> {
        let set = |name: &str| lookup(name).filter(|v| !v.is_empty());
        if let Some(root) = set(SERI_HOME) {
            return Ok(Self::at(root));
        }
        let home = set("HOME").or_else(|| set("USERPROFILE")).ok_or(StoreError::Profile(ProfileError::NoRoot))?;
        Ok(Self::at(PathBuf::from(home).join(".seri")))
    }

    /// The root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `seri.db`: the database.
    pub fn db_path(&self) -> PathBuf {
        self.root.join("seri.db")
    }

    /// `config.json`: the settings.
    pub fn config_path(&self) -> PathBuf {
        self.root.join("config.json")
    }

    /// `memory/`: what `~/memory/…` sources resolve to.
    pub fn memory_dir(&self) -> PathBuf {
        self.root.join("memory")
    }

    /// `attachments/`: one folder per session, one file per attachment.
    pub fn attachments_dir(&self) -> PathBuf {
        self.root.join("attachments")
    }

    /// `sessions/`: the `.jsonl` files of an older release, which
    /// `seri_import::LegacyImport::import_legacy_sessions` imports. Read, never written.
    pub fn legacy_sessions_dir(&self) -> PathBuf {
        self.root.join("sessions")
    }

    /// Creates the root directory (and its parents) if it is missing. The
    /// command line calls this on first use; a library caller may prefer to
    /// insist that the profile already exists.
    pub fn create(&self) -> Result<()> {
        fs::create_dir_all(&self.root)
            .map_err(|source| StoreError::Profile(ProfileError::Create { path: self.root.clone(), source }))
    }

    /// Checks that the root is an existing, writable directory.
    pub fn check_writable(&self) -> Result<()> {
        let path = || self.root.clone();
        let meta = fs::metadata(&self.root).map_err(|e| match e.kind() {
            io::ErrorKind::NotFound => StoreError::Profile(ProfileError::Missing { path: path() }),
            _ => StoreError::Profile(ProfileError::Create { path: path(), source: e }),
        })?;
        if !meta.is_dir() {
            return Err(StoreError::Profile(ProfileError::NotADirectory { path: path() }));
        }
        // The permission bits first: a privileged user could write anyway,
        // but a directory marked read-only says the user does not want it written.
        if meta.permissions().readonly() {
            return Err(StoreError::Profile(ProfileError::ReadOnly { path: path(), source: None }));
        }
        // Then a real write, which catches read-only mounts and ACLs.
        let probe = self.root.join(format!(".seri-write-check-{}", std::process::id()));
        match fs::OpenOptions::new().write(true).create_new(true).open(&probe) {
            Ok(_) => {
                // Nothing depends on the probe being gone; a failure here only leaves an empty file.
                let _ = fs::remove_file(&probe);
                Ok(())
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
            Err(e) => Err(StoreError::Profile(ProfileError::ReadOnly { path: path(), source: Some(e) })),
        }
    }

    /// Opens `seri.db` with default options, after checking the root.
    pub fn open_store(&self) -> Result<Store> {
        self.open_store_with(StoreOptions::default())
    }

    /// Opens `seri.db` after checking the root; attachments go to
    /// [`Profile::attachments_dir`] unless the options say otherwise.
    pub fn open_store_with(&self, mut options: StoreOptions) -> Result<Store> {
        self.check_writable()?;
        if options.attachments_dir.is_none() {
            options.attachments_dir = Some(self.attachments_dir());
        }
        Store::open_with(self.db_path(), options)
    }

    /// Opens the store `url` names ([`Store::open_url`]): absent or `sqlite:`
    /// this profile's `seri.db`, or a PostgreSQL database. The profile's
    /// directory is checked and keeps what is not in the database
    /// (attachments, the config, the log) either way.
    pub fn open_store_url(&self, url: Option<&str>, mut options: StoreOptions) -> Result<Store> {
        self.check_writable()?;
        if options.attachments_dir.is_none() {
            options.attachments_dir = Some(self.attachments_dir());
        }
        Store::open_url(url, &self.db_path(), options)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<OsString> {
        move |name| pairs.iter().find(|(k, _)| *k == name).map(|(_, v)| OsString::from(v))
    }

    #[test]
    fn seri_home_wins_then_home() {
        let p = Profile::from_lookup(env(&[("SERI_HOME", "/srv/seri"), ("HOME", "/home/a")])).unwrap();
        assert_eq!(p.root(), Path::new("/srv/seri"));
        let p = Profile::from_lookup(env(&[("SERI_HOME", ""), ("HOME", "/home/a")])).unwrap();
        assert_eq!(p.root(), Path::new("/home/a/.seri"));
        let p = Profile::from_lookup(env(&[("USERPROFILE", "C:/Users/a")])).unwrap();
        assert_eq!(p.root(), Path::new("C:/Users/a/.seri"));
        assert!(matches!(Profile::from_lookup(env(&[])), Err(StoreError::Profile(ProfileError::NoRoot))));
    }

    #[test]
    fn knows_its_paths() {
        let p = Profile::at("/p");
        let paths = [p.db_path(), p.config_path(), p.memory_dir(), p.attachments_dir(), p.legacy_sessions_dir()];
        let expected = ["/p/seri.db", "/p/config.json", "/p/memory", "/p/attachments", "/p/sessions"];
        assert_eq!(paths.map(|p| p.display().to_string()), expected);
    }
}

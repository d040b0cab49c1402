//! A cgroup (v2) of its own for each call, where this machine lets seri
//! make one: everything the call starts is in it, however it detaches
//! (`setsid`, a double fork, a scrubbed environment), and writing
//! `cgroup.kill` ends them all at once. Where seri cannot make one (no
//! cgroup v2, or its own cgroup not delegated to it) the launcher's
//! subreaper and the call's mark are what is left.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// One call's cgroup; killed and removed when dropped.
#[derive(Debug)]
pub(crate) struct CallCgroup {
    path: PathBuf,
}

impl CallCgroup {
    /// A new empty cgroup below seri's own, or `None` (logged once at debug
    /// level) when none can be made here.
    pub(crate) fn create() -> Option<Self> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        static SWEPT: std::sync::Once = std::sync::Once::new();
        let parent = own_cgroup()?;
        SWEPT.call_once(|| remove_stale(&parent));
        let path = parent.join(format!("seri-call-{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed)));
        match std::fs::create_dir(&path) {
            Ok(()) if path.join("cgroup.kill").exists() => Some(Self { path }),
            Ok(()) => {
                // Before Linux 5.14 there is no cgroup.kill.
                let _ = std::fs::remove_dir(&path);
                None
            }
            Err(error) => {
                tracing::debug!(%error, parent = %parent.display(), "no cgroup of its own for a call");
                None
            }
        }
    }

    /// The cgroup's folder, for the launcher to join.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Kills every process in the cgroup.
    pub(crate) fn kill(&self) {
        if let Err(error) = std::fs::write(self.path.join("cgroup.kill"), "1")
            && error.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!(%error, cgroup = %self.path.display(), "could not kill a call's cgroup");
        }
    }
}

impl Drop for CallCgroup {
    fn drop(&mut self) {
        self.kill();
        // The kill is delivered at once but the processes take a moment to
        // leave; a cgroup with processes cannot be removed yet.
        let path = self.path.clone();
        let remove = move || {
            for _ in 0..500 {
                match std::fs::remove_dir(&path) {
                    Err(e) if e.raw_os_error() == Some(rustix::io::Errno::BUSY.raw_os_error()) => {
                        std::thread::sleep(std::time::Duration::from_millis(2));
                    }
                    _ => return,
                }
            }
            tracing::warn!(cgroup = %path.display(), "a call's cgroup could not be removed");
        };
        if std::fs::remove_dir(&self.path).is_err() {
            let _ = std::thread::Builder::new().name("seri-cgroup-remove".to_owned()).spawn(remove);
        }
    }
}

/// Removes the empty cgroups of calls whose seri is gone (killed before it
/// could remove them). A cgroup still holding a process cannot be removed,
/// so nothing alive is touched.
fn remove_stale(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = name.strip_prefix("seri-call-").and_then(|rest| rest.split('-').next()) else { continue };
        if !Path::new("/proc").join(pid).exists() {
            let _ = std::fs::remove_dir(entry.path());
        }
    }
}

/// This process's cgroup v2 folder: its `0::` line of /proc/self/cgroup
/// below the cgroup2 mount.
fn own_cgroup() -> Option<PathBuf> {
    let cgroups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let relative = cgroups.lines().find_map(|l| l.strip_prefix("0::"))?;
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    // `id parent major:minor root mount-point options… - fstype source …`
    let mount = mounts.lines().find_map(|line| {
        let (before, after) = line.split_once(" - ")?;
        (after.split(' ').next() == Some("cgroup2")).then(|| before.split(' ').nth(4).map(PathBuf::from))?
    })?;
    Some(mount.join(relative.trim_start_matches('/')))
}

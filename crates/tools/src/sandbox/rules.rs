//! The rules of a sandboxed command: read everywhere but the hidden
//! places, write only below the writable roots (and the devices every shell
//! writes to), and, with the network off, no TCP connection or listener
//! (Landlock); no socket but a Unix one with the network off, no Unix
//! socket outside the writable roots, no `io_uring` and no kernel keyring
//! (`syscalls`, seccomp); and no capability, so a command run by
//! root is not root over seri's own processes. Applied by the launcher to
//! itself before it starts the command, so everything the command starts
//! inherits them.
//!
//! A hidden place that does not exist yet is hidden all the same: the
//! folder that would hold it is not granted as a whole, only what it
//! already holds, so the place cannot be made (nor anything else directly
//! in that folder).

use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, LandlockStatus, Ruleset, RulesetAttr,
    RulesetCreatedAttr, RulesetStatus, Scope, path_beneath_rules,
};

/// The newest Landlock ABI whose file rights seri asks for; an older
/// kernel enforces what it knows (rights it lacks, such as truncation
/// before ABI 3, stay unrestricted; Unix sockets before ABI 9 are kept in
/// by seccomp instead, see `syscalls`).
const FS_ABI: ABI = ABI::V9;

/// Devices a command writes to whatever the mode: `> /dev/null`, a
/// terminal.
const DEVICES: [&str; 5] = ["/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/pts"];

/// What a sandboxed command may reach.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Rules {
    /// Folders (and files) it may write below.
    pub(crate) write: Vec<PathBuf>,
    /// Places it may neither read nor write.
    pub(crate) hide: Vec<PathBuf>,
    /// Places it may read but not write, even below a writable folder.
    pub(crate) read_only: Vec<PathBuf>,
    /// Whether it may connect and listen over TCP.
    pub(crate) network: bool,
}

/// Why the rules could not be put in force.
#[derive(Debug, thiserror::Error)]
pub enum Unenforceable {
    /// The kernel has no Landlock, or it is not enabled at boot.
    #[error("this kernel has no Landlock (Linux 5.13 or later with `landlock` among its LSMs)")]
    NoLandlock,
    /// The kernel's Landlock predates network rules (ABI 4, Linux 6.7).
    #[error("this kernel's Landlock has no network rules (Linux 6.7 or later), so the network cannot be turned off")]
    NoNetworkRules,
    /// Landlock refused the rules.
    #[error("Landlock refused the rules: {0}")]
    Refused(#[from] landlock::RulesetError),
    /// The kernel refused the seccomp filter that keeps sockets in.
    #[error("this kernel refused the seccomp filter that keeps sockets and io_uring in: {0}")]
    NoSeccomp(String),
    /// The command's capabilities could not be dropped.
    #[error("cannot drop the command's capabilities: {0}")]
    Capabilities(String),
}

/// Whether this kernel can enforce rules with or without the network:
/// asked of the kernel by creating a ruleset, which restricts nothing.
pub fn probe(network: bool) -> Result<(), Unenforceable> {
    let files = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(ABI::V1))
        .and_then(|r| r.create());
    if files.is_err() {
        return Err(Unenforceable::NoLandlock);
    }
    super::syscalls::probe().map_err(Unenforceable::NoSeccomp)?;
    if !network {
        let net = Ruleset::default()
            .set_compatibility(CompatLevel::HardRequirement)
            .handle_access(AccessNet::ConnectTcp)
            .and_then(|r| r.create());
        if net.is_err() {
            return Err(Unenforceable::NoNetworkRules);
        }
    }
    Ok(())
}

/// Restricts the calling thread (and every process it starts from now on)
/// to `rules`; refuses, restricting nothing, when the kernel cannot
/// enforce them all.
pub(crate) fn apply(rules: &Rules) -> Result<(), Unenforceable> {
    let read = AccessFs::from_read(FS_ABI);
    let all = AccessFs::from_all(FS_ABI);
    // From ABI 6 the command can neither signal a process outside its
    // sandbox (seri, the person's other programs) nor reach an abstract
    // Unix socket; an older kernel enforces the rest.
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(all)?
        .scope(Scope::from_all(ABI::V6))?;
    if !rules.network {
        ruleset = ruleset.handle_access(AccessNet::ConnectTcp | AccessNet::BindTcp)?;
    }
    let hide = anchored(&rules.hide);
    let unwritable: Vec<PathBuf> = hide.iter().cloned().chain(anchored(&rules.read_only)).collect();
    let writable: Vec<PathBuf> = rules.write.iter().flat_map(|root| around(root, &unwritable)).collect();
    let status = ruleset
        .create()?
        .add_rules(path_beneath_rules(around(Path::new("/"), &hide), read))?
        .add_rules(path_beneath_rules(&writable, all))?
        .add_rules(path_beneath_rules(DEVICES, all))?
        .restrict_self()?;
    let abi = match (status.ruleset, status.landlock) {
        (RulesetStatus::NotEnforced, _) => return Err(Unenforceable::NoLandlock),
        (_, LandlockStatus::Available { effective_abi, .. }) if !rules.network && effective_abi < ABI::V4 => {
            return Err(Unenforceable::NoNetworkRules);
        }
        (_, LandlockStatus::Available { effective_abi, .. }) => effective_abi,
        (_, _) => return Err(Unenforceable::NoLandlock),
    };
    drop_capabilities().map_err(Unenforceable::Capabilities)?;
    // From ABI 9 Landlock itself keeps Unix sockets below the writable
    // roots; before it, seccomp refuses every named Unix socket.
    super::syscalls::apply(rules.network, abi >= ABI::V9).map_err(Unenforceable::NoSeccomp)
}

/// Drops every capability this process has and could regain: the
/// bounding set, the ambient set, and the permitted, effective and
/// inheritable sets. A command run by root then cannot read a process's
/// memory or environment that is not its own to read (seri's, with its
/// keys, is not dumpable), nor override file permissions.
fn drop_capabilities() -> Result<(), String> {
    use rustix::thread::{
        CapabilitySet, CapabilitySets, capability_is_in_bounding_set, clear_ambient_capability_set,
        remove_capability_from_bounding_set, set_capabilities,
    };
    for bit in 0..64 {
        let Some(capability) = CapabilitySet::from_bits(1 << bit) else { continue };
        // A capability this kernel does not know reads as an error: none to drop.
        if capability_is_in_bounding_set(capability).unwrap_or(false) {
            remove_capability_from_bounding_set(capability).map_err(|e| format!("bounding set: {e}"))?;
        }
    }
    // A kernel without ambient capabilities has none to clear.
    if let Err(e) = clear_ambient_capability_set()
        && e != rustix::io::Errno::INVAL
    {
        return Err(format!("ambient set: {e}"));
    }
    let none = CapabilitySets {
        effective: CapabilitySet::empty(),
        permitted: CapabilitySet::empty(),
        inheritable: CapabilitySet::empty(),
    };
    set_capabilities(None, none).map_err(|e| format!("capability sets: {e}"))
}

/// The places to grant so that everything below `root` is reached but
/// what `hide` (canonical) names: `root` itself when nothing below it is
/// hidden, else, down each hidden path, every sibling of the folder that
/// leads to it. (Landlock only grants, so a folder holding a hidden place
/// cannot be listed itself: `ls ~` fails while `~/.ssh` is hidden, though
/// everything in `~` but `.ssh` reads as usual.)
pub(crate) fn around(root: &Path, hide: &[PathBuf]) -> Vec<PathBuf> {
    let mut roots = Vec::new();
    match std::fs::canonicalize(root) {
        Ok(root) => grant_around(&root, hide, &mut roots),
        Err(_) => roots.push(root.to_path_buf()),
    }
    roots
}

/// The hidden places, canonical: one that does not exist yet is its
/// nearest existing folder, canonical, with the rest of its path as
/// written, so that the folder that would hold it is never granted whole.
pub(crate) fn anchored(hide: &[PathBuf]) -> Vec<PathBuf> {
    hide.iter().filter_map(|h| anchor(h)).collect()
}

fn anchor(path: &Path) -> Option<PathBuf> {
    if let Ok(real) = std::fs::canonicalize(path) {
        return Some(real);
    }
    let mut rest = Vec::new();
    let mut at = path;
    loop {
        rest.push(at.file_name()?.to_os_string());
        at = at.parent()?;
        if let Ok(real) = std::fs::canonicalize(at) {
            return Some(rest.iter().rev().fold(real, |path, name| path.join(name)));
        }
    }
}

fn grant_around(dir: &Path, hide: &[PathBuf], roots: &mut Vec<PathBuf>) {
    if hide.iter().any(|h| h == dir) {
        return;
    }
    if !hide.iter().any(|h| h.starts_with(dir)) {
        roots.push(dir.to_path_buf());
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        // A symlink is granted as itself: what it points to is granted (or
        // hidden) under its own name.
        grant_around(&path, hide, roots);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reading_is_granted_around_each_hidden_place_and_nowhere_inside_it() {
        let dir = tempfile::tempdir().unwrap();
        let home = std::fs::canonicalize(dir.path()).unwrap();
        for folder in [".ssh", ".config/app", "src"] {
            std::fs::create_dir_all(home.join(folder)).unwrap();
        }
        std::fs::write(home.join(".bashrc"), "").unwrap();
        let roots = around(Path::new("/"), &anchored(&[home.join(".ssh"), home.join("missing")]));
        assert!(!roots.iter().any(|r| r.starts_with(home.join(".ssh"))), "{roots:?}");
        assert!(!roots.contains(&home), "the folder holding a hidden place is not granted whole");
        for granted in [".bashrc", ".config", "src"] {
            assert!(roots.contains(&home.join(granted)), "{granted}: {roots:?}");
        }
        assert_eq!(around(Path::new("/"), &[]), [PathBuf::from("/")]);
        let writable = around(&home, &anchored(&[home.join(".ssh")]));
        assert!(writable.contains(&home.join("src")) && !writable.contains(&home.join(".ssh")), "{writable:?}");
        // A place that does not exist yet: its folder is not granted whole,
        // so it cannot be made; what the folder holds is granted.
        let missing = anchored(&[home.join("src/not/yet")]);
        assert_eq!(missing, [home.join("src/not/yet")]);
        let writable = around(&home, &missing);
        assert!(!writable.contains(&home) && !writable.contains(&home.join("src")), "{writable:?}");
        assert!(writable.contains(&home.join(".config")) && writable.contains(&home.join(".bashrc")), "{writable:?}");
    }
}

//! The Landlock rules of a sandboxed command: read everywhere but the
//! hidden places, write only below the writable roots (and the devices
//! every shell writes to), and, with the network off, no TCP connection or
//! listener. Applied by the launcher to itself before it starts the
//! command, so everything the command starts inherits them.

use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, LandlockStatus, Ruleset, RulesetAttr,
    RulesetCreatedAttr, RulesetStatus, Scope, path_beneath_rules,
};

/// The newest Landlock ABI whose file rights seri asks for; an older
/// kernel enforces what it knows (rights it lacks, such as truncation
/// before ABI 3, stay unrestricted).
const FS_ABI: ABI = ABI::V5;

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
    let hide = canonical(&rules.hide);
    let writable: Vec<PathBuf> = rules.write.iter().flat_map(|root| around(root, &hide)).collect();
    let status = ruleset
        .create()?
        .add_rules(path_beneath_rules(around(Path::new("/"), &hide), read))?
        .add_rules(path_beneath_rules(&writable, all))?
        .add_rules(path_beneath_rules(DEVICES, all))?
        .restrict_self()?;
    match (status.ruleset, status.landlock) {
        (RulesetStatus::NotEnforced, _) => Err(Unenforceable::NoLandlock),
        (_, LandlockStatus::Available { effective_abi, .. }) if !rules.network && effective_abi < ABI::V4 => {
            Err(Unenforceable::NoNetworkRules)
        }
        _ => Ok(()),
    }
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

/// The hidden places that exist, canonical: one that does not exist hides
/// nothing.
fn canonical(hide: &[PathBuf]) -> Vec<PathBuf> {
    hide.iter().filter_map(|h| std::fs::canonicalize(h).ok()).collect()
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
        let roots = around(Path::new("/"), &canonical(&[home.join(".ssh"), home.join("missing")]));
        assert!(!roots.iter().any(|r| r.starts_with(home.join(".ssh"))), "{roots:?}");
        assert!(!roots.contains(&home), "the folder holding a hidden place is not granted whole");
        for granted in [".bashrc", ".config", "src"] {
            assert!(roots.contains(&home.join(granted)), "{granted}: {roots:?}");
        }
        assert_eq!(around(Path::new("/"), &[]), [PathBuf::from("/")]);
        let writable = around(&home, &canonical(&[home.join(".ssh")]));
        assert!(writable.contains(&home.join("src")) && !writable.contains(&home.join(".ssh")), "{writable:?}");
    }
}

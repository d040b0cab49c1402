//! The system calls a sandboxed command may not make, as a seccomp filter
//! the launcher installs after its Landlock rules: what Landlock cannot
//! see.
//!
//! - With the network off, `socket` for anything but a Unix socket: no
//!   UDP (DNS included), no raw or packet socket, no netlink. Landlock
//!   (ABI 4 on) only knows TCP.
//! - Before Landlock ABI 9, `socket` for a Unix socket too, network or
//!   not: a named socket outside the workspace (a database's, Docker's, an
//!   SSH agent's) is reached by its path, which Landlock checks only from
//!   ABI 9. `socketpair` stays allowed: it names nothing outside.
//! - `io_uring_setup`, `io_uring_enter` and `io_uring_register`: a ring
//!   makes sockets without the `socket` call this filter sees.
//! - `keyctl`, `add_key` and `request_key`: the kernel's keyrings can hold
//!   a person's credentials.
//!
//! A refused call fails with `EACCES`, as a Landlock refusal does, so a
//! command says "Permission denied" rather than dying. Any other
//! architecture's calls (a 32-bit call from a 64-bit process) kill the
//! command; on x86_64 the x32 numbers of these calls are refused too.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule, TargetArch,
};

/// `AF_UNIX`, the one socket family a sandboxed command may make with the
/// network off.
const AF_UNIX: u64 = 1;

/// The bit x32 system call numbers carry on x86_64.
#[cfg(target_arch = "x86_64")]
const X32_SYSCALL_BIT: i64 = 0x4000_0000;

/// Calls refused whatever their arguments.
const ALWAYS_REFUSED: [i64; 6] = [
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
];

/// The filter for a command: `network` on or off, and whether Landlock
/// keeps Unix sockets in by itself (`unix_by_landlock`, ABI 9 on).
pub(crate) fn filter(network: bool, unix_by_landlock: bool) -> Result<BpfProgram, String> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for call in ALWAYS_REFUSED {
        // No rule: refused whatever the arguments.
        rules.insert(call, Vec::new());
    }
    let domain = |op: SeccompCmpOp| -> Result<SeccompRule, String> {
        let condition = SeccompCondition::new(0, SeccompCmpArgLen::Dword, op, AF_UNIX).map_err(|e| e.to_string())?;
        SeccompRule::new(vec![condition]).map_err(|e| e.to_string())
    };
    match (network, unix_by_landlock) {
        (true, true) => {}
        (false, false) => {
            rules.insert(libc::SYS_socket, Vec::new());
        }
        (false, true) => {
            rules.insert(libc::SYS_socket, vec![domain(SeccompCmpOp::Ne)?]);
        }
        (true, false) => {
            rules.insert(libc::SYS_socket, vec![domain(SeccompCmpOp::Eq)?]);
        }
    }
    #[cfg(target_arch = "x86_64")]
    {
        let native: Vec<i64> = rules.keys().copied().collect();
        for call in native {
            rules.insert(call | X32_SYSCALL_BIT, Vec::new());
        }
    }
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(|e| e.to_string())?;
    let filter = SeccompFilter::new(rules, SeccompAction::Allow, SeccompAction::Errno(libc::EACCES as u32), arch)
        .map_err(|e| e.to_string())?;
    filter.try_into().map_err(|e: seccompiler::BackendError| e.to_string())
}

/// Installs the filter on the calling thread (and so on every process it
/// starts from now on).
pub(crate) fn apply(network: bool, unix_by_landlock: bool) -> Result<(), String> {
    let program = filter(network, unix_by_landlock)?;
    seccompiler::apply_filter(&program).map_err(|e| e.to_string())
}

/// Whether this kernel takes seccomp filters: the filter for the strictest
/// case can be built, and the kernel was built with seccomp filtering.
pub(crate) fn probe() -> Result<(), String> {
    filter(false, false)?;
    let status = std::fs::read_to_string("/proc/self/status").map_err(|e| format!("cannot read /proc: {e}"))?;
    if status.lines().any(|line| line.starts_with("Seccomp_filters:") || line.starts_with("Seccomp:")) {
        Ok(())
    } else {
        Err("this kernel was built without seccomp".to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_combination_builds() {
        for network in [false, true] {
            for unix in [false, true] {
                assert!(!filter(network, unix).unwrap().is_empty());
            }
        }
    }
}

//! An engine chainlab starts for a side of an emulated link enters the link's network
//! namespace itself, before it starts any thread.
//!
//! chainlab names the namespace's file in `CHAINLAB_NETNS` (`/run/netns/<name>`, made by
//! `ip netns add`) when it starts a Rust engine in a namespace (chainlab/processes.py).
//! Before, it wrapped the engine in `ip netns exec <name>`: an exec of `ip`, a mount
//! namespace and `/sys` mounted again, and `setpriv` around them for the parent-death
//! signal (the engine is not the command chainlab starts then): 3.6 ms of each such
//! process's start (`/bin/true` wrapped, 2026-12-01), two or more a scenario over a link.
//! The engine calls setns(2) while it is the process's only thread, so every thread and
//! socket it makes is in the namespace. The Go engine cannot: its runtime has started
//! threads before any of its code runs, so chainlab still wraps it.

use std::ffi::OsStr;
use std::os::fd::AsRawFd;

/// The variable naming the network namespace's file this engine runs in.
pub const NETNS_VAR: &str = "CHAINLAB_NETNS";

/// With `CHAINLAB_NETNS` set: this process enters that network namespace (Err: a line
/// naming the value and what went wrong). Without it: nothing to do.
pub fn enter_namespace() -> Result<(), String> {
    match std::env::var_os(NETNS_VAR) {
        None => Ok(()),
        Some(path) => {
            let threads = std::fs::read_dir("/proc/self/task").map_or(1, |d| d.count());
            enter(&path, threads)
        }
    }
}

/// Enters the network namespace of the file at `path` from a process of `threads` threads
/// (one: the namespace is every later thread's too; more: refused).
fn enter(path: &OsStr, threads: usize) -> Result<(), String> {
    let shown = format!("{NETNS_VAR}={path:?}");
    if threads != 1 {
        return Err(format!(
            "{shown}: {threads} threads already: a namespace is entered before the first \
             thread starts"
        ));
    }
    let file = std::fs::File::open(path).map_err(|e| {
        format!(
            "{shown}: cannot open it: {e}; allowed: a network namespace's file \
             (/run/netns/<name>), or unset"
        )
    })?;
    // SAFETY: setns takes a file descriptor this function holds open and a flag.
    if unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
        return Err(format!(
            "{shown}: cannot enter it: {}",
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_that_is_no_namespace_is_named() {
        for (value, expect) in [
            ("/nonexistent/netns", "cannot open it"),
            ("/proc/self/status", "cannot enter it"),
        ] {
            let err = enter(OsStr::new(value), 1).unwrap_err();
            assert!(
                err.contains(expect) && err.contains(value),
                "{value}: {err}"
            );
        }
    }

    #[test]
    fn a_process_with_threads_already_is_refused() {
        let err = enter(OsStr::new("/proc/self/ns/net"), 3).unwrap_err();
        assert!(err.contains("3 threads already"), "{err}");
    }

    #[test]
    fn a_namespace_is_entered() {
        // This thread's own namespace (entering needs CAP_SYS_ADMIN, as under a link).
        match enter(OsStr::new("/proc/self/ns/net"), 1) {
            Ok(()) => {}
            Err(e) => assert!(e.contains("Operation not permitted"), "{e}"),
        }
    }
}

//! An engine started by chainlab dies with it: the parent-death signal, set by the engine
//! itself as its first act.
//!
//! chainlab names its own pid in `CHAINLAB_PARENT_PID` when it starts an engine directly
//! (chainlab/processes.py). The engine asks the kernel for SIGKILL when that parent dies
//! (`PR_SET_PDEATHSIG`), then checks that its parent is still that process: one that died
//! between the engine's start and this call is not signalled, and the engine ends at once.
//! Before, chainlab wrapped each engine in util-linux's `setpriv --pdeathsig KILL`: an
//! exec more, 0.8 ms of every engine process's start (two a scenario; 2026-11-30). A
//! command wrapped in something else (a namespace, callgrind) still is: the variable is set
//! only for an engine chainlab starts itself.

/// The variable naming the pid of the chainlab process that started this engine.
pub const PARENT_PID_VAR: &str = "CHAINLAB_PARENT_PID";

/// With `CHAINLAB_PARENT_PID` set: the parent-death signal, then whether that parent is
/// still this process's parent (Err: a line saying it is gone, or that the variable is not
/// a pid). Without it: nothing to do.
pub fn die_with_parent() -> Result<(), String> {
    let Ok(value) = std::env::var(PARENT_PID_VAR) else {
        return Ok(());
    };
    let parent: libc::pid_t = value.trim().parse().map_err(|_| {
        format!("{PARENT_PID_VAR}={value:?}: not a process id; allowed: the pid of the chainlab process that starts the engine, or unset")
    })?;
    // SAFETY: prctl with PR_SET_PDEATHSIG takes a signal number and no pointers.
    let set = unsafe {
        libc::prctl(
            libc::PR_SET_PDEATHSIG,
            libc::SIGKILL as libc::c_ulong,
            0,
            0,
            0,
        )
    };
    if set != 0 {
        return Err(format!(
            "cannot set the parent-death signal: {}",
            std::io::Error::last_os_error()
        ));
    }
    // SAFETY: getppid has no arguments and cannot fail.
    let now = unsafe { libc::getppid() };
    if now != parent {
        return Err(format!(
            "the chainlab process that started this engine (pid {parent}) is gone (parent now {now})"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `die_with_parent` returned in a child test process given `value` as the
    /// variable (the variable and the signal are process-wide: each case in its own child).
    fn in_child(value: &str) -> String {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "parent::tests::child_reports",
                "--ignored",
                "--nocapture",
            ])
            .env(PARENT_PID_VAR, value)
            .env("CHAINLAB_PARENT_TEST_CHILD", "1")
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    #[test]
    fn a_parent_that_is_not_this_ones_ends_it_and_a_bad_value_is_named() {
        for (value, expect) in [
            ("1", "is gone (parent now"),
            ("abc", "not a process id; allowed:"),
        ] {
            let text = in_child(value);
            assert!(text.contains(expect), "{value}: {text}");
        }
    }

    #[test]
    fn this_processes_own_parent_is_accepted() {
        let text = in_child(&std::process::id().to_string());
        assert!(text.contains("result: Ok(())"), "{text}");
    }

    /// Run by the tests above in a child process of their own (with the variable they set),
    /// never on its own.
    #[test]
    #[ignore = "run by the tests above in a child process"]
    fn child_reports() {
        assert!(std::env::var_os("CHAINLAB_PARENT_TEST_CHILD").is_some());
        println!("result: {:?}", die_with_parent());
    }
}

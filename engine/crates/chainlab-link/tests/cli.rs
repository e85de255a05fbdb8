//! Bad arguments: one line on stderr naming the option, the value and what is allowed; exit 2.

use std::process::Command;

fn run(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_chainlab-link"))
        .args(["--a-netns", "x-a", "--b-netns", "x-b"])
        .args(args)
        .output()
        .expect("the binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn assert_rejected(args: &[&str], needle: &str) {
    let (code, stderr) = run(args);
    assert_eq!(code, 2, "{args:?}: {stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{args:?}: {stderr}");
    assert!(
        stderr.starts_with("chainlab-link: error: "),
        "{args:?}: {stderr}"
    );
    assert!(stderr.contains(needle), "{args:?}: {stderr}");
}

#[test]
fn bad_values_are_named_with_what_is_allowed() {
    assert_rejected(
        &["--loss", "1.5"],
        "--loss 1.5: must be a fraction in [0, 1]",
    );
    assert_rejected(&["--loss", "-0.1"], "--loss -0.1");
    assert_rejected(&["--delay-ms", "-1"], "--delay-ms -1: must be");
    assert_rejected(&["--delay-ms", "NaN"], "--delay-ms NaN");
    assert_rejected(
        &["--delay-ms", "5", "--jitter-ms", "6"],
        "--jitter-ms 6: must not exceed --delay-ms (5)",
    );
    assert_rejected(&["--rate-mbit", "0"], "--rate-mbit 0: must be");
    assert_rejected(&["--mtu", "40"], "--mtu 40: must be in 68-65535");
    assert_rejected(
        &["--queue-packets", "10"],
        "--queue-packets: a queue builds only",
    );
    assert_rejected(
        &["--rate-mbit", "10", "--queue-packets", "0"],
        "--queue-packets 0: must be at least 1",
    );
    assert_rejected(
        &["--rate-mbit", "10", "--queue-bytes", "100"],
        "--queue-bytes 100: must hold at least one packet",
    );
    assert_rejected(
        &["--a-dev", "a/b"],
        "--a-dev: \"a/b\" is not an interface name",
    );
    assert_rejected(
        &["--offload", "--loss", "0.01"],
        "--offload: a frame of several segments can neither be paced nor lose one segment",
    );
    assert_rejected(
        &["--offload", "--rate-mbit", "10"],
        "allowed only without --rate-mbit and with --loss 0",
    );
    assert_rejected(
        &["--realtime-priority", "0"],
        "--realtime-priority 0: must be a SCHED_FIFO priority in 1-99",
    );
    assert_rejected(
        &["--b-dev", "sixteen-chars-xx"],
        "--b-dev: \"sixteen-chars-xx\" is not an interface name",
    );
}

#[test]
fn the_same_namespace_on_both_sides_is_refused() {
    let out = Command::new(env!("CARGO_BIN_EXE_chainlab-link"))
        .args(["--a-netns", "same", "--b-netns", "same"])
        .output()
        .expect("the binary runs");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("must be different namespaces"), "{stderr}");
}

#[test]
fn a_missing_namespace_fails_with_its_name() {
    let (code, stderr) = run(&["--delay-ms", "1"]);
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("network namespace \"x-a\""), "{stderr}");
}

#[test]
fn unparsable_values_also_give_one_line() {
    assert_rejected(&["--mtu", "big"], "invalid value 'big' for '--mtu <MTU>'");
    assert_rejected(&["--no-such-option"], "--no-such-option");
}

/// Missing required arguments are named on the one line (clap lists them on lines of their
/// own after its first; the first line alone had named none).
#[test]
fn missing_required_arguments_are_named() {
    let out = Command::new(env!("CARGO_BIN_EXE_chainlab-link"))
        .args(["--delay-ms", "5"])
        .output()
        .expect("the binary runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("the following required arguments were not provided: --a-netns"),
        "{stderr}"
    );
    assert!(stderr.contains("--b-netns"), "{stderr}");
}

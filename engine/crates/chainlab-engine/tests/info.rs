//! `info` read by a reader that has gone (`chainlab-engine info | head`): the engine ends
//! quietly, exit 0, no panic on the closed pipe.

use chainlab_test_support::engine as common;

use std::process::{Command, Stdio};

use common::{engine, wait_bounded, PROCESS_DEADLINE};

#[test]
fn info_into_a_closed_pipe_ends_quietly() {
    // The pipe's read end is closed before the engine starts, so its first write fails
    // with EPIPE whatever the timing.
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    let mut child = Command::new(engine())
        .arg("info")
        .stdout(Stdio::from(writer))
        .stderr(Stdio::piped())
        .spawn()
        .expect("the engine starts");
    let status = wait_bounded(&mut child, PROCESS_DEADLINE);
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(status.success(), "{status:?}: {stderr}");
    assert_eq!(stderr, "", "nothing on stderr");
}

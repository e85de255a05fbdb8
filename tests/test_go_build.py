"""The Go engine's build (engine/go/build.sh, run by `make engine`) stops in one line naming
GOTOOLCHAIN when it cannot get Go 1.27, never with a compiler's trace."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

BUILD = Path(__file__).resolve().parents[1] / "engine" / "go" / "build.sh"


def build(env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", str(BUILD)], env=env, capture_output=True, text=True, timeout=120
    )


@pytest.mark.bad_input
def test_no_go_command_says_what_to_install_and_which_toolchain():
    # A PATH with bash and coreutils but no go.
    bare = {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/root")}
    if shutil.which("go", path=bare["PATH"]):
        pytest.skip("this machine has go in /usr/bin")
    out = build(bare)
    assert out.returncode == 1
    assert out.stderr.count("\n") == 1, out.stderr
    assert "no `go` command" in out.stderr and "GOTOOLCHAIN=go1.27.3" in out.stderr


@pytest.mark.bad_input
def test_a_toolchain_that_cannot_be_had_is_named_in_one_line():
    if shutil.which("go") is None:
        pytest.skip("no go here: the test above covers it")
    out = build({**os.environ, "GOTOOLCHAIN": "go1.27.999"})
    assert out.returncode == 1
    assert out.stderr.count("\n") == 1, out.stderr
    assert "cannot get the Go toolchain GOTOOLCHAIN=go1.27.999" in out.stderr

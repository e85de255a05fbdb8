"""Leftovers of killed runs: found and removed, and a live link is never touched."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from chainlab.network import cleanup_stale, emulated_link, namespaces

pytestmark = pytest.mark.usefixtures("serial")  # measures: runs alone

HOLDER = Path(__file__).with_name("holder.py")
REPO = Path(__file__).resolve().parents[2]


def test_sanitize_tag():
    assert namespaces.sanitize_tag("Campaign A / x25519mlkem768__ml_leaf") == (
        "campaign-a-x25519mlkem76"
    )
    assert namespaces.sanitize_tag("---") == "link"
    assert namespaces.sanitize_tag("cl1") == "cl1"


def test_process_identity_tells_a_dead_or_reused_pid_from_the_recorded_process():
    me = namespaces.own_identity()
    assert namespaces.process_alive(me["pid"], me["start"])
    assert not namespaces.process_alive(me["pid"], me["start"] + 1)  # same pid, other start
    child = subprocess.Popen(["true"])
    child.wait()
    assert not namespaces.process_alive(child.pid, None)
    assert not namespaces.process_alive(None, None)


def hold(tag: str, exit_with_parent: bool) -> tuple[subprocess.Popen, dict]:
    """Start holder.py with a 5 ms link; return it and its ready line."""
    proc = subprocess.Popen(
        [sys.executable, str(HOLDER), json.dumps({"name": "t", "delay_ms": 5}), tag,
         "1" if exit_with_parent else "0"],
        stdout=subprocess.PIPE, text=True, cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )  # fmt: skip
    line = proc.stdout.readline()
    assert line, f"holder exited with {proc.wait()}"
    return proc, json.loads(line)


def alive(pid: int) -> bool:
    return namespaces.process_alive(pid, None)


def wait_until(predicate, timeout_s: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


@pytest.mark.netns
@pytest.mark.parametrize("exit_with_parent", [True, False], ids=["forwarder-follows", "orphan"])
def test_a_killed_run_leaves_nothing_after_cleanup_stale(root, leftovers, exit_with_parent):
    tag = f"killed-{int(exit_with_parent)}-{os.getpid()}"
    proc, info = hold(tag, exit_with_parent)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    if exit_with_parent:
        # The forwarder follows its parent (PR_SET_PDEATHSIG), so no forwarder is left...
        assert wait_until(lambda: not alive(info["forwarder"]))
    else:
        assert alive(info["forwarder"])
    # ...but the namespaces and the process inside one are: a SIGKILL skips every teardown.
    assert {info["client_ns"], info["server_ns"]} <= set(namespaces.list_namespaces())
    assert alive(info["sleeper"])

    removed = cleanup_stale()

    assert f"namespace {info['client_ns']}" in removed
    assert f"namespace {info['server_ns']}" in removed
    assert wait_until(lambda: not alive(info["sleeper"]))
    assert not alive(info["forwarder"])
    assert leftovers(tag) == []
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert tag not in listed
    # No TUN device is left anywhere: not in the initial namespace either.
    assert "chainlab0" not in subprocess.run(["ip", "link"], capture_output=True, text=True).stdout


@pytest.mark.netns
def test_the_next_link_cleans_a_killed_runs_leftovers_before_starting(root, leftovers):
    tag = f"next-{os.getpid()}"
    proc, info = hold(tag, exit_with_parent=False)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    with emulated_link({"name": "t"}, f"after-{os.getpid()}", calibrate=False) as link:
        assert leftovers(tag) == []
        assert f"namespace {info['server_ns']}" in link.cleaned
        assert f"forwarder pid {info['forwarder']}" in link.cleaned
        assert namespaces.namespace_exists(link.server_ns)
    assert leftovers(f"after-{os.getpid()}") == []


@pytest.mark.netns
def test_cleanup_never_touches_a_live_link(root, leftovers):
    tag = f"live-{os.getpid()}"
    proc, info = hold(tag, exit_with_parent=True)
    try:
        with emulated_link({"name": "t"}, f"mine-{os.getpid()}", calibrate=False) as link:
            removed = cleanup_stale()
            assert not [r for r in removed if tag in r or link.link_id in r]
            assert namespaces.namespace_exists(link.client_ns)
            assert alive(link.forwarder_pid)
        assert {info["client_ns"], info["server_ns"]} <= set(namespaces.list_namespaces())
        assert alive(info["forwarder"])
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert leftovers(tag) == []


@pytest.mark.netns
def test_an_unclaimed_chainlab_namespace_is_removed(root):
    name = f"chainlab-orphan-{os.getpid()}-s"
    namespaces.create_namespace(name)
    try:
        assert f"namespace {name}" in cleanup_stale()
        assert not namespaces.namespace_exists(name)
    finally:
        namespaces.delete_namespace(name)

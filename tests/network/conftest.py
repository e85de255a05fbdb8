"""Fixtures for the network tests: root (skip without it) and a leftover check."""

import os
import subprocess

import pytest

from chainlab.network import namespaces


@pytest.fixture
def root():
    """Skip unless this process may create network namespaces (root)."""
    if os.geteuid() != 0:
        pytest.skip("needs root (CAP_NET_ADMIN, CAP_SYS_ADMIN) to create network namespaces")
    if subprocess.run(["ip", "-V"], capture_output=True).returncode != 0:
        pytest.skip("needs the `ip` command (iproute2)")


@pytest.fixture
def leftovers():
    """The leftover finder below, for tests to assert that nothing of theirs remains."""
    return find_leftovers


def find_leftovers(tag: str) -> list[str]:
    """Namespaces, state files and forwarders of links whose namespace names contain `tag`."""
    found = [f"namespace {ns}" for ns in namespaces.list_namespaces() if tag in ns]
    if namespaces.STATE_DIR.is_dir():
        for path in namespaces.STATE_DIR.glob("*.json"):
            if tag in path.read_text():
                found.append(f"state file {path.name}")
    for pid, argv in namespaces.forwarder_processes():
        if any(tag in a for a in argv):
            found.append(f"forwarder {pid}")
    return found

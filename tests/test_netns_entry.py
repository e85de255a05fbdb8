"""A Rust engine started for a side of an emulated link enters the link's namespace itself
(chainlab.processes.unwrap_namespace, engine.NETNS_VAR): no `ip netns exec` and no setpriv
before it; the Go engine is still wrapped."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from chainlab import engine, processes
from chainlab.runner import pki

ENGINE = "/x/target/release/chainlab-engine"


def test_a_rust_engine_in_a_namespace_is_started_as_itself_told_the_namespace():
    argv = ["ip", "netns", "exec", "chainlab-a-c", ENGINE, "handshake", "--count", "3"]
    assert processes.unwrap_namespace(argv) == (
        [ENGINE, "handshake", "--count", "3"],
        "/run/netns/chainlab-a-c",
    )
    # The Go engine, another command, or an engine under another wrapper: as they are.
    for argv in (
        ["ip", "netns", "exec", "n", "/x/target/release/chainlab-go", "serve"],
        ["ip", "netns", "exec", "n", "valgrind", ENGINE, "serve"],
        ["ip", "netns", "exec", "n"],
        [ENGINE, "serve"],
    ):
        assert processes.unwrap_namespace(argv) == (argv, None)
    rust = {"chainlab-engine", "chainlab-rustls", "chainlab-boring"}
    assert rust == engine.NETNS_ENGINE_NAMES


@pytest.fixture
def namespace(netns_root):
    """A namespace of this test's own, its loopback up; removed after."""
    name = f"cltest-netns-{os.getpid()}"
    subprocess.run(["ip", "netns", "add", name], check=True)
    try:
        subprocess.run(["ip", "-n", name, "link", "set", "lo", "up"], check=True)
        yield name
    finally:
        subprocess.run(["ip", "netns", "del", name], check=False)


def test_an_engine_enters_the_namespace_it_is_told(tmp_path, engine_bin, pki_cache, namespace):
    served = pki.ensure(engine_bin, ("ML-DSA-44", "ML-DSA-44"), 1)
    argv = [
        "ip", "netns", "exec", namespace,
        str(engine_bin), "serve", "--pki", str(served), "--listen", "127.0.0.1:0",
        "--records", str(tmp_path / "server.jsonl"),
    ]  # fmt: skip
    proc = processes.spawn(argv, subprocess.PIPE, subprocess.DEVNULL)
    try:
        ready = processes.wait_ready(proc, 30.0, tmp_path / "none")
        assert ready.get("addr", "").startswith("127.0.0.1:")
        # The engine itself, in the namespace's network, told which.
        assert Path(f"/proc/{proc.pid}/exe").resolve() == engine_bin.resolve()
        ns = os.stat(f"/run/netns/{namespace}")
        own = os.stat(f"/proc/{proc.pid}/ns/net")
        assert (own.st_dev, own.st_ino) == (ns.st_dev, ns.st_ino)
        environ = Path(f"/proc/{proc.pid}/environ").read_bytes().split(b"\0")
        assert f"{engine.NETNS_VAR}=/run/netns/{namespace}".encode() in environ
        # Its socket listens there, not here.
        port = ready["addr"].rsplit(":", 1)[1]
        inside = subprocess.run(
            ["ip", "netns", "exec", namespace, "ss", "-Hltn", f"sport = :{port}"],
            capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        assert f":{port}" in inside
    finally:
        processes.stop_group(proc)

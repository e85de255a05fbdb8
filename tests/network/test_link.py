"""emulated_link: what a link looks like from inside, and that it always goes away."""

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from chainlab.errors import ChainlabError
from chainlab.network import emulated_link, namespaces, require_privileges

pytestmark = pytest.mark.usefixtures("serial")  # measures: runs alone

HOLDER = Path(__file__).with_name("holder.py")
REPO = Path(__file__).resolve().parents[2]
PROBE = REPO / "chainlab" / "network" / "probe.py"


def run(argv) -> str:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    return done.stdout


def connect_once(link) -> dict:
    """One TCP connect client -> server through the link, with the probe programs."""
    server = subprocess.Popen(
        link.server_cmd([sys.executable, str(PROBE), "serve", "--bind", link.server_addr,
                         "--lifetime-s", "30"]),
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        ports = json.loads(server.stdout.readline())
        out = run(
            link.client_cmd([sys.executable, str(PROBE), "client", "--connect", link.server_addr,
                             "--tcp-port", ports["tcp_port"], "--udp-port", ports["udp_port"],
                             "--connects", "3"])
        )  # fmt: skip
    finally:
        server.terminate()
        server.wait(timeout=10)
    return json.loads(out)


@pytest.mark.netns
def test_a_link_has_its_namespaces_addresses_mtu_and_route_then_vanishes(root, leftovers):
    tag = f"shape-{os.getpid()}"
    profile = {"name": "t", "delay_ms": 2, "mtu": 1400, "initcwnd": 7}
    with emulated_link(profile, tag, calibrate=False) as link:
        assert link.client_ns.startswith(f"chainlab-{tag}-") and link.client_ns.endswith("-c")
        assert link.server_ns.endswith("-s")
        assert {link.client_ns, link.server_ns} <= set(namespaces.list_namespaces())
        dev = run(link.server_cmd(["ip", "-o", "addr", "show", "dev", link.device]))
        assert f"inet {link.server_addr} peer {link.client_addr}/32" in dev
        assert "mtu 1400" in run(link.client_cmd(["ip", "link", "show", link.device]))
        route = run(link.server_cmd(["ip", "route", "show", f"{link.client_addr}/32"]))
        assert "initcwnd 7" in route and "congctl cubic" in route
        assert link.mss == 1348 and link.initcwnd == 7
        # Neither side sees the other directly: the only way across is the link.
        assert "chainlab0" not in run(["ip", "link"])
        times = connect_once(link)["connect_ms"]
        assert all(t is not None and t >= 4.0 for t in times), times
        stats = link.forwarder_stats()
        assert stats["a_to_b"]["forwarded"] >= 3 and stats["b_to_a"]["forwarded"] >= 3
        forwarder = link.forwarder_pid
    assert link.final_stats["final"] is True
    assert link.final_stats["a_to_b"]["forwarded"] >= stats["a_to_b"]["forwarded"]
    assert not namespaces.process_alive(forwarder, None)
    assert leftovers(tag) == []


@pytest.mark.netns
def test_scheduling_and_offload_follow_the_profile(root, leftovers):
    tag = f"sched-{os.getpid()}"
    # No timer to keep: normal priority; no rate or loss: multi-segment frames.
    with emulated_link({"name": "zero"}, tag, calibrate=False) as link:
        assert link.scheduler == {"policy": "other"} and link.offload
    with emulated_link({"name": "d", "delay_ms": 1}, tag, calibrate=False) as link:
        assert link.scheduler == {"policy": "fifo", "priority": 10} and link.offload
        policy = run(["chrt", "-p", str(link.forwarder_pid)])
        assert "SCHED_FIFO" in policy and "priority: 10" in policy
    # Loss and rates act per segment: one packet per segment.
    for extra in ({"loss": 0.01}, {"rate_mbit": 50}):
        with emulated_link({"name": "x", **extra}, tag, calibrate=False) as link:
            assert not link.offload
    assert leftovers(tag) == []


@pytest.mark.netns
def test_the_forwarder_can_be_kept_on_its_own_core(root, leftovers):
    tag = f"pin-{os.getpid()}"
    core = max(os.sched_getaffinity(0))
    with emulated_link({"name": "d", "delay_ms": 1}, tag, calibrate=False,
                       forwarder_cpus={core}) as link:  # fmt: skip
        assert link.forwarder_cpus == [core]
        assert os.sched_getaffinity(link.forwarder_pid) == {core}
    assert leftovers(tag) == []


@pytest.mark.netns
def test_an_exception_in_the_block_tears_the_link_down(root, leftovers):
    tag = f"exc-{os.getpid()}"
    with (
        pytest.raises(RuntimeError, match="boom"),
        emulated_link({"name": "t"}, tag, calibrate=False),
    ):
        raise RuntimeError("boom")
    assert leftovers(tag) == []


@pytest.mark.netns
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_sigterm_and_sigint_tear_the_link_down(root, leftovers, sig):
    tag = f"sig{int(sig)}-{os.getpid()}"
    proc = subprocess.Popen(
        [sys.executable, str(HOLDER), json.dumps({"name": "t", "delay_ms": 1}), tag, "1"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )  # fmt: skip
    info = json.loads(proc.stdout.readline())
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=30)
    if sig == signal.SIGTERM:
        assert proc.returncode == 128 + signal.SIGTERM, err
    else:
        assert "KeyboardInterrupt" in err or proc.returncode == -signal.SIGINT, err
    # Torn down by the process itself: no cleanup_stale() here.
    assert leftovers(tag) == []
    assert not namespaces.process_alive(info["sleeper"], None)


@pytest.mark.netns
def test_the_veth_reference_has_no_forwarder(root, leftovers):
    tag = f"veth-{os.getpid()}"
    with emulated_link({"name": "ref", "backend": "veth"}, tag, calibrate=False) as link:
        assert link.forwarder_pid is None
        assert all(t is not None for t in connect_once(link)["connect_ms"])
        with pytest.raises(ChainlabError, match="no running forwarder"):
            link.forwarder_stats()
    assert leftovers(tag) == []


def _kernel_has_netem() -> bool:
    ns = f"chainlab-netemcheck-{os.getpid()}"
    namespaces.create_namespace(ns)
    try:
        namespaces.ip("link", "add", "d0", "type", "veth", "peer", "name", "d1", netns=ns)
        done = subprocess.run(
            ["tc", "-n", ns, "qdisc", "add", "dev", "d0", "root", "netem", "delay", "1ms"],
            capture_output=True,
        )
        return done.returncode == 0
    finally:
        namespaces.delete_namespace(ns)


@pytest.mark.netns
def test_netem_backend_works_where_the_kernel_has_it_and_fails_clearly_where_not(root, leftovers):
    tag = f"netem-{os.getpid()}"
    profile = {"name": "nt", "backend": "netem", "delay_ms": 10}
    if _kernel_has_netem():
        with emulated_link(profile, tag) as link:
            assert link.forwarder_pid is None
            assert abs(link.calibration["rtt_ms"] - 20) < 1.0, link.calibration
    else:
        no_netem = pytest.raises(
            ChainlabError, match="backend 'netem' needs the kernel's sch_netem"
        )
        with no_netem, emulated_link(profile, tag, calibrate=False):
            pytest.fail("the link came up without netem")
    assert leftovers(tag) == []


def test_without_privileges_a_network_profile_fails_clearly(monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    monkeypatch.setattr(namespaces, "_effective_capabilities", lambda: 0)
    with pytest.raises(ChainlabError) as err:
        require_privileges()
    msg = str(err.value)
    assert "need root (or CAP_NET_ADMIN and CAP_SYS_ADMIN)" in msg
    assert "'loopback' network" in msg and "\n" not in msg
    with pytest.raises(ChainlabError, match="need root"), emulated_link({"name": "x"}, "noroot"):
        pytest.fail("a link came up without privileges")


def test_capabilities_without_root_are_enough(monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    both = 1 << namespaces.CAP_NET_ADMIN | 1 << namespaces.CAP_SYS_ADMIN
    monkeypatch.setattr(namespaces, "_effective_capabilities", lambda: both)
    require_privileges()
    monkeypatch.setattr(
        namespaces, "_effective_capabilities", lambda: 1 << namespaces.CAP_NET_ADMIN
    )
    with pytest.raises(ChainlabError, match="or CAP_SYS_ADMIN\\)"):
        require_privileges()


@pytest.mark.bad_input
def test_a_bad_profile_fails_before_anything_is_created(monkeypatch):
    monkeypatch.setattr(namespaces, "create_namespace", lambda name: pytest.fail("created"))
    with (
        pytest.raises(ChainlabError, match="loss: bad value 2; allowed"),
        emulated_link({"name": "x", "loss": 2}, "t"),
    ):
        pass


@pytest.mark.netns
@pytest.mark.bad_input
def test_a_missing_forwarder_binary_names_the_fix(root, monkeypatch):
    monkeypatch.setenv("CHAINLAB_LINK", "/nonexistent/chainlab-link")
    with (
        pytest.raises(ChainlabError, match="make engine"),
        emulated_link({"name": "x"}, "t"),
    ):
        pass

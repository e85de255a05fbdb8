"""`chainlab probe`: handshakes against a server chainlab did not start (the project's
`openssl s_server`, started here on loopback), stored like any run; an unreachable port, a
listener that does not speak TLS, a silent one and a server whose chain the client cannot
verify each give a recorded failure and a one-line message, within bounded time."""

import socket
import subprocess
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

import chainlab
from chainlab import engine
from chainlab.runner import pki

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("serial")]  # measures: runs alone

REPO = Path(__file__).resolve().parents[2]
# The OpenSSL the engine is linked against (engine/.openssl, docs/openssl.md).
OPENSSL = REPO / "engine" / ".openssl" / "bin" / "openssl"
# Every probe here finishes well inside this (a hang would fail the test, not stall it).
PROBE_DEADLINE_S = 120


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_listening(port: int, proc=None, deadline_s: float = 20.0) -> None:
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"s_server exited: {proc.stderr.read().decode()}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise AssertionError(f"nothing listens on {port}")


@pytest.fixture(scope="module")
def hierarchy(tmp_path_factory, engine_bin):
    with chainlab_pki_cache(tmp_path_factory.mktemp("probe-pki")):
        h = pki.ensure(engine.path(), ("ML-DSA-44", "ML-DSA-44", "ML-DSA-44"), 11)
        other = pki.ensure(engine.path(), ("ML-DSA-44", "ML-DSA-44"), 12)
    return h, other


def chainlab_pki_cache(d):
    from conftest import environment

    return environment("CHAINLAB_PKI_CACHE", str(d))


@pytest.fixture(scope="module")
def s_server(hierarchy):
    """`openssl s_server` serving the leaf and its intermediate, TLS 1.3 only."""
    h, _ = hierarchy
    port = free_port()
    proc = subprocess.Popen(
        [str(OPENSSL), "s_server", "-accept", f"127.0.0.1:{port}", "-tls1_3", "-quiet",
         "-cert", str(h / "leaf.pem"), "-key", str(h / "leaf.key"),
         "-cert_chain", str(h / "intermediates.pem"), "-groups", "X25519MLKEM768:X25519"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        wait_listening(port, proc)
        yield port
    finally:
        proc.kill()
        proc.wait()


@pytest.fixture
def probe(cli, engine_bin):
    """probe(tmp_path, address, *args) -> (the finished `chainlab probe`, its store, seconds)."""

    def run(tmp_path, address, *args):
        store = tmp_path / "probe.duckdb"
        t0 = time.monotonic()
        out = cli("probe", address, "--store", store, *args, timeout=PROBE_DEADLINE_S)
        return out, store, time.monotonic() - t0

    return run


def test_the_probe_records_what_the_server_was_configured_to_send(
    s_server, hierarchy, tmp_path, probe, cli
):
    h, _ = hierarchy
    out, store, _ = probe(
        tmp_path, f"127.0.0.1:{s_server}", "--ca", str(h / "ca.pem"), "--servername",
        "localhost", "--count", "12", "--resume", "--groups", "X25519MLKEM768",
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "12/12 ok" in out.stdout and "chain 2 certificate(s)" in out.stdout
    sent = [len(d) for d in pki.pem_certs(h / "chain-leaf+intermediates.pem")]
    with chainlab.open(store) as st:
        scen = st.scenarios.set_index("scenario_id")
        samples = st.samples
        chain = st.observed_chain
        assert st.certificates.empty  # chainlab generated no hierarchy for it
    full, resumed = "x25519mlkem768__target_probe", "x25519mlkem768__target_probe__resumed"
    assert set(scen.index) == {full, resumed}
    assert scen.at[full, "target"] == "probe" and scen.at[full, "depth"] == 0
    measured = samples[~samples["warmup"]]
    assert (measured["outcome"] == "ok").all() and len(measured) == 24
    # The server's side is not measured.
    assert measured["server_cpu_ns"].isna().all() and measured["server_outcome"].isna().all()
    f = measured[measured["scenario_id"] == full]
    assert (f["grp"] == "X25519MLKEM768").all() and (f["sigalg"] == "mldsa44").all()
    assert (~f["resumed"]).all()
    assert measured[measured["scenario_id"] == resumed]["resumed"].all()
    c = chain[chain["scenario_id"] == full].sort_values("position")
    assert list(c["der_bytes"]) == sent
    assert list(c["key_alg"]) == ["ML-DSA-44", "ML-DSA-44"]
    # The probe's campaign file sits beside the store and names no path of this machine.
    text = store.with_name("probe.toml").read_text()
    assert 'ca = "probe.ca.pem"' in text and str(tmp_path) not in text
    report = cli("report", store, "--out", tmp_path / "r")
    assert report.returncode == 0, report.stderr
    md = (tmp_path / "r" / "report.md").read_text()
    assert "## Servers chainlab did not start" in md and full in md


def test_a_server_whose_chain_does_not_verify_is_a_recorded_failure(
    s_server, hierarchy, tmp_path, probe
):
    _, other = hierarchy
    out, store, _ = probe(
        tmp_path, f"127.0.0.1:{s_server}", "--ca", str(other / "ca.pem"), "--count", "3"
    )
    assert out.returncode == 4  # no scenario completed
    assert "FAILED: verify_failed" in out.stdout and "certificate verify failed" in out.stdout
    with chainlab.open(store) as st:
        runs = st.scenario_runs
        samples = st.samples
    assert list(runs["status"]) == ["failed"] and list(runs["failure_cause"]) == ["verify_failed"]
    assert set(samples[~samples["warmup"]]["error_category"]) == {"verify_failed"}


def test_an_unreachable_port_is_a_recorded_failure(tmp_path, probe):
    out, store, _ = probe(tmp_path, f"127.0.0.1:{free_port()}", "--ca", "none", "--count", "3")
    assert out.returncode == 4  # no scenario completed
    assert "FAILED: connect_refused" in out.stdout
    with chainlab.open(store) as st:
        assert list(st.scenario_runs["failure_cause"]) == ["connect_refused"]


class Listener:
    """A TCP listener that answers with `reply` (None: never answers) and closes."""

    def __init__(self, reply: bytes | None):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.reply = reply
        self.stop = threading.Event()
        self.held = []
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            if self.reply is None:
                self.held.append(conn)  # silent: keep it open, say nothing
                continue
            with conn:
                conn.settimeout(2)
                try:
                    conn.recv(4096)
                    conn.sendall(self.reply)
                except OSError:
                    pass

    def close(self):
        self.stop.set()
        self.thread.join(5)
        for c in self.held:
            c.close()
        self.sock.close()


def test_a_listener_that_does_not_speak_tls_is_a_recorded_failure(tmp_path, probe):
    http = Listener(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
    try:
        out, store, _ = probe(tmp_path, f"127.0.0.1:{http.port}", "--ca", "none", "--count", "3")
    finally:
        http.close()
    assert out.returncode == 4 and "FAILED: tls_error" in out.stdout
    with chainlab.open(store) as st:
        assert set(st.samples["error_category"].dropna()) == {"tls_error"}


def test_a_silent_listener_times_out_and_nothing_hangs(tmp_path, probe):
    silent = Listener(None)
    try:
        out, store, _ = probe(
            tmp_path, f"127.0.0.1:{silent.port}", "--ca", "none", "--count", "2",
            "--warmup", "0", "--timeout-ms", "300",
        )  # fmt: skip
    finally:
        silent.close()
    assert out.returncode == 4 and "FAILED: handshake_timeout" in out.stdout
    with chainlab.open(store) as st:
        assert set(st.samples["error_category"]) == {"handshake_timeout"}


def test_a_rate_adds_open_loop_steps_without_the_servers_side(s_server, hierarchy, tmp_path, probe):
    h, _ = hierarchy
    out, store, _ = probe(
        tmp_path, f"127.0.0.1:{s_server}", "--ca", str(h / "ca.pem"), "--servername",
        "localhost", "--count", "5", "--rate", "100", "--duration-s", "1",
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "load step 0: offered 100.0/s" in out.stdout
    with chainlab.open(store) as st:
        steps = st.load_steps
        samples = st.load_samples
    assert list(steps["kind"]) == ["step"]  # no capacity search: a target's is not measured
    row = steps.iloc[0]
    assert row["offered_rate"] == 100.0 and row["server_workers"] == 0
    assert pd.isna(row["server_cpu_s"]) and row["scheduled"] == len(samples)
    assert samples["server_cpu_ns"].isna().all()
    ok = samples[samples["outcome"] == "ok"]
    # Latency runs from the intended start: never shorter than the handshake itself.
    assert (ok["latency_ns"] >= ok["total_ns"]).all()
    # A step too short to say anything is refused before anything runs.
    short, _, _ = probe(tmp_path / "short", f"127.0.0.1:{s_server}", "--rate", "10")
    assert short.returncode == 2
    assert "--rate 10 for --duration-s 5 schedules 50 attempts; allowed: at least 100" in (
        short.stderr
    )
    assert not (tmp_path / "short").exists() or not any((tmp_path / "short").iterdir())


@pytest.mark.bad_input
def test_every_bad_option_is_listed_and_nothing_is_written(tmp_path):
    """Bad options are all reported at once, one line each naming the option, the value and
    what is allowed, before any file exists (exit 2)."""
    import argparse

    from chainlab.commands import probe as probe_cmd
    from chainlab.schema import ConfigError

    ap = argparse.ArgumentParser()
    probe_cmd.add_arguments(ap)
    store = tmp_path / "out" / "p.duckdb"
    args = ap.parse_args(
        ["localhost", "--store", str(store), "--count", "0", "--groups", "X25519,nope",
         "--ca", str(tmp_path / "missing.pem"), "--rate", "-1"]
    )  # fmt: skip
    with pytest.raises(ConfigError) as e:
        probe_cmd.run(args)
    lines = e.value.problems
    assert any(line.startswith("probe: address: bad value 'localhost'") for line in lines)
    assert "probe: --count: bad value 0; allowed: at least 1" in lines
    assert any(line.startswith("probe: --groups: unknown group 'nope'") for line in lines)
    assert any(line.startswith("probe: --ca:") for line in lines)
    assert any(line.startswith("probe: --rate: bad value -1") for line in lines)
    assert len(lines) == 5
    assert not (tmp_path / "out").exists()


@pytest.mark.bad_input
def test_a_host_that_does_not_resolve_is_refused_before_anything_is_written(tmp_path, cli):
    # .invalid never resolves (RFC 6761); nothing in the working directory either.
    out = cli("probe", "no-such-host.invalid:443", "--count", "5", timeout=60, cwd=tmp_path)
    assert out.returncode == 2, out
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "no-such-host.invalid does not resolve" in lines[0], out.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_campaign_that_does_not_validate_leaves_no_file(tmp_path):
    """The probe's own campaign is validated before it is put beside the store."""
    import argparse

    from chainlab.commands import probe as probe_cmd
    from chainlab.schema import ConfigError

    ap = argparse.ArgumentParser()
    probe_cmd.add_arguments(ap)
    ca = tmp_path / "ca.pem"
    ca.write_text("not checked here")
    store = tmp_path / "out" / "p.duckdb"
    # Resumed handshakes need a warm-up (each client's first handshake is a full one): a
    # rule of the campaign's, which `check` leaves to the loader.
    args = ap.parse_args(
        ["127.0.0.1:1", "--store", str(store), "--ca", str(ca), "--warmup", "0", "--resume"]
    )
    with pytest.raises(ConfigError):
        probe_cmd.run(args)
    assert not (tmp_path / "out").exists()

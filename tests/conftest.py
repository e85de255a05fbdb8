"""Settings every test shares, and the tiers (docs/testing.md).

A test that starts an engine process (`pki`, `serve`, `handshake`, `load`, ...), a network
namespace or the `chainlab` command as a subprocess is marked `engine`, `netns` or `cli` by
the fixture it takes for it (`MARKING_FIXTURES`), never by hand; `make check` leaves those
tiers out. A test that starts one without its fixture fails (`_processes_match_markers`), so
the fast tier cannot start an engine by accident. Reports are written without drawing their
figures' files (`CHAINLAB_FIGURES=off`) except in tests that take the `figures` fixture.

A test whose assertions hold only on a host nothing else loads (it compares measured times,
CPU or capacity, or counts the machine's own namespaces) takes the `serial` fixture (a module
of them: `pytestmark = pytest.mark.usefixtures("serial")`) and is marked `serial`: `make
test` runs every other test on both cores and these alone afterwards.
"""

import contextlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from chainlab import engine
from chainlab.errors import ChainlabError

REPO = Path(__file__).resolve().parents[1]

# A fixture -> the marker its tests get: what the fixture lets them start.
MARKING_FIXTURES = {
    "engine_bin": "engine",
    "pki_cache": "engine",
    "netns_root": "netns",
    "root": "netns",
    "cli": "cli",
    "serial": "serial",
}
# Engine binaries, by file name; `info` (build facts, milliseconds) is no engine start.
ENGINE_BINARIES = {
    "chainlab-engine", "chainlab-rustls", "chainlab-boring", "chainlab-go", "openssl",
    "valgrind",
}  # fmt: skip
# What makes or enters a network namespace (listing them is no start): `ip netns add|exec|
# delete ...`, and the emulated link's forwarder between two of them.
NETNS_BINARIES = {"chainlab-link", "unshare", "nsenter"}


@contextlib.contextmanager
def environment(name: str, value: str):
    """`name` set to `value` in the environment (and so in subprocesses) while inside."""
    old = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = old


def pytest_collection_modifyitems(items):
    for item in items:
        for marker in {MARKING_FIXTURES[f] for f in item.fixturenames if f in MARKING_FIXTURES}:
            item.add_marker(marker)


def process_kind(args) -> str | None:
    """What a subprocess's argv starts, as a tier's marker: 'engine', 'netns', 'cli' or None."""
    argv = [str(a) for a in args] if isinstance(args, list | tuple) else str(args).split()
    if not argv:
        return None
    name = Path(argv[0]).name
    if name in ENGINE_BINARIES:
        return None if argv[1:2] == ["info"] or argv[1:2] == ["version"] else "engine"
    if name in NETNS_BINARIES or (name == "ip" and "netns" in argv and "list" not in argv):
        return "netns"
    if name == "chainlab" or argv[1:3] == ["-m", "chainlab"]:
        return "cli"
    return None


@pytest.fixture(autouse=True)
def _processes_match_markers(request, monkeypatch):
    """A test starts only the processes its markers say it does."""
    marks = {m.name for m in request.node.iter_markers()}
    real = subprocess.Popen.__init__

    def guarded(self, args, *a, **kw):
        kind = process_kind(args)
        if kind is not None and kind not in marks:
            fixture = {"engine": "engine_bin", "netns": "netns_root", "cli": "cli"}[kind]
            raise AssertionError(
                f"this test starts {args!r} without the `{fixture}` fixture that marks it "
                f"`{kind}` (tests/conftest.py)"
            )
        real(self, args, *a, **kw)

    monkeypatch.setattr(subprocess.Popen, "__init__", guarded)


@pytest.fixture
def serial():
    """Marks its test `serial`: run with nothing else on the host (module docstring)."""


@pytest.fixture(scope="session", autouse=True)
def primitives_cache(tmp_path_factory):
    """The cost model's primitives cache of this test session (never the user's): the first
    campaign a test runs measures its primitives, later ones take them from here. Set in the
    environment, so `chainlab` subprocesses use it too."""
    d = tmp_path_factory.mktemp("primitives-cache")
    with environment("CHAINLAB_PRIMITIVES_CACHE", str(d)):
        yield d


@pytest.fixture(scope="session", autouse=True)
def _host_passes():
    """Primitives and reference handshakes a test measures are taken once
    (CHAINLAB_HOST_PASSES=1), not again while the host reference workload says the host is
    slow around them: beside other tests the host is shared by design, and what a test
    checks of a measurement holds on one pass. The rule itself is tested with its default
    passes (tests/runner/test_host_steady.py, test_primitives.py)."""
    with environment("CHAINLAB_HOST_PASSES", "1"):
        yield


@pytest.fixture(scope="session", autouse=True)
def _no_figure_files():
    """Reports in tests are written without their figures' files unless a test asks."""
    with environment("CHAINLAB_FIGURES", "off"):
        yield


@contextlib.contextmanager
def figure_files():
    """Reports written inside draw and write their figures (PNG and SVG)."""
    old = os.environ.pop("CHAINLAB_FIGURES", None)
    try:
        yield
    finally:
        if old is not None:
            os.environ["CHAINLAB_FIGURES"] = old


@pytest.fixture
def figures():
    """This test's reports draw and write their figures (PNG and SVG)."""
    with figure_files():
        yield


@pytest.fixture(scope="session")
def engine_bin():
    """The OpenSSL 3.5 engine; its tests are marked `engine`."""
    try:
        p = engine.path()
        engine.info()
    except ChainlabError as e:
        pytest.fail(f"these tests need the engine (make engines): {e}")
    return p


@pytest.fixture(scope="session")
def pki_cache(tmp_path_factory):
    """A PKI cache of this test session: engine command lines name it, so the process scan
    finds exactly this session's engines."""
    d = tmp_path_factory.mktemp("pki-cache")
    with environment("CHAINLAB_PKI_CACHE", str(d)):
        yield d


@pytest.fixture
def netns_root():
    """Skip unless this process may create network namespaces and the forwarder is built."""
    if os.geteuid() != 0:
        pytest.skip("network namespaces need root")
    try:
        from chainlab.network.link import forwarder_path

        forwarder_path()
    except (ImportError, ChainlabError) as e:
        pytest.skip(f"emulated link not available: {e}")


class Cli:
    """The `chainlab` command of this checkout as a subprocess: `cli(*args)` runs it to the end
    (a CompletedProcess, output captured as text), `cli.popen(*args)` starts it."""

    def _argv_env(self, args, env):
        full = dict(os.environ, PYTHONPATH=str(REPO), **(env or {}))
        return [sys.executable, "-m", "chainlab", *map(str, args)], full

    def __call__(self, *args, env=None, cwd=None, timeout=300, **kw):
        argv, full = self._argv_env(args, env)
        kw.setdefault("capture_output", True)
        return subprocess.run(argv, env=full, cwd=cwd, timeout=timeout, text=True, **kw)

    def popen(self, *args, env=None, cwd=None, **kw):
        argv, full = self._argv_env(args, env)
        kw.setdefault("text", True)
        return subprocess.Popen(argv, env=full, cwd=cwd, **kw)


@pytest.fixture
def main(capsys):
    """main(*args, cwd=None) -> CompletedProcess: the `chainlab` command run in this process
    (`chainlab.cli.main`, its exit status as an argparse error or a return), its output
    captured. What a subprocess adds (the interpreter's start) is the `cli` fixture's."""
    from chainlab import cli as command

    def run(*args, cwd=None):
        capsys.readouterr()
        argv = [str(a) for a in args]
        with contextlib.chdir(cwd) if cwd is not None else contextlib.nullcontext():
            try:
                code = command.main(argv)
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else 1
        out, err = capsys.readouterr()
        return subprocess.CompletedProcess(argv, code, out, err)

    return run


@pytest.fixture(scope="session")
def cli():
    """The `chainlab` command as a subprocess (`Cli`); marks the test `cli`."""
    return Cli()

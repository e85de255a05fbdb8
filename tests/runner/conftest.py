import os
from pathlib import Path

import pytest
from conftest import environment

from chainlab import engine
from chainlab.errors import ChainlabError

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def engine_bin():
    try:
        p = engine.path()
        engine.info()
    except ChainlabError as e:
        pytest.fail(f"these tests need the engine (make engine): {e}")
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


def engine_processes(marker: str) -> list[str]:
    """Command lines of live engine processes (either stack) mentioning `marker` (/proc)."""
    return [cmd for _, _, cmd in engines(marker)]


def engines(marker: str) -> list[tuple[int, int, str]]:
    """(pid, parent pid, command line) of live chainlab-engine processes mentioning
    `marker`."""
    out = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            status = dict(
                ln.split(":", 1) for ln in (d / "status").read_text().splitlines() if ":" in ln
            )
        except OSError:
            continue
        is_engine = "chainlab-engine" in cmd or "chainlab-rustls" in cmd
        if is_engine and marker in cmd and "zombie" not in status["State"]:
            out.append((int(d.name), int(status["PPid"]), cmd))
    return out

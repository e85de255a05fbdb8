"""What a new user gets wrong on the command line and in the environment, refused in one line
naming the option or variable, its value and what is allowed, before anything is written or
built (issue #56): no store, no cache, no report folder, no results/ folder."""

from __future__ import annotations

import os
import shutil
import socket
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TINY = """
[campaign]
name = "tiny"
seed = 1
[sampling]
mode = "fixed"
count = 3
[matrix.m]
kex = ["X25519"]
hierarchy = [["ML-DSA-44", "ML-DSA-44"]]
"""


@pytest.fixture
def work(tmp_path, monkeypatch):
    """A working folder holding the campaign file alone; caches inside it, so anything a
    refused run wrote would show."""
    (tmp_path / "tiny.toml").write_text(textwrap.dedent(TINY))
    monkeypatch.setenv("CHAINLAB_PKI_CACHE", str(tmp_path / "pki"))
    monkeypatch.setenv("CHAINLAB_PRIMITIVES_CACHE", str(tmp_path / "primitives"))
    return tmp_path


def refused(out, *needles) -> str:
    """The one line of a command refused with exit status 2."""
    assert out.returncode == 2, (out.returncode, out.stderr)
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    for n in needles:
        assert n in lines[0], (n, lines[0])
    return lines[0]


def nothing_written(work: Path, also=()) -> None:
    assert sorted(p.name for p in work.iterdir()) == sorted(["tiny.toml", *also])


RUN_OPTIONS = [
    (["--seed", "-5"], ["--seed -5", "allowed: an integer 0 to 9223372036854775807"]),
    (["--seed", str(2**63)], ["--seed 9223372036854775808", "allowed: an integer 0"]),
    (["--cluster", "http://127.0.0.1:8786"], ["--cluster 'http://127.0.0.1:8786'", "tcp://"]),
    (["--cluster", "tcp://127.0.0.1"], ["--cluster 'tcp://127.0.0.1'", "a host and a port"]),
    (["--cluster", "10.0.0.5:8786"], ["--cluster '10.0.0.5:8786'", "Dask scheduler"]),
    (["--cluster", "tcp://127.0.0.1:99999"], ["--cluster 'tcp://127.0.0.1:99999'", "1 to 65535"]),
    (["--placement", "split"], ["--placement split: needs a cluster", "allowed without one"]),
    (["--store", "tiny.toml/s.duckdb"], ["cannot be made", "tiny.toml is not a folder"]),
]


@pytest.mark.parametrize("extra,needles", RUN_OPTIONS, ids=[" ".join(e) for e, _ in RUN_OPTIONS])
@pytest.mark.bad_input
def test_a_bad_run_option_is_refused_before_anything_is_written(work, main, extra, needles):
    argv = ["run", "tiny.toml", *extra]
    if "--store" not in extra:
        argv += ["--store", "s.duckdb"]
    refused(main(*argv, cwd=work), *needles)
    nothing_written(work)


@pytest.mark.bad_input
def test_a_cluster_nobody_listens_on_is_refused_before_anything_is_written(work, main):
    """A scheduler address no process listens on: refused in one line at once (the port
    refuses the connection), before any engine part is built or the store created."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    argv = ["run", "tiny.toml", "--store", "s.duckdb", "--cluster", f"tcp://127.0.0.1:{port}"]
    out = main(*argv, cwd=work)
    refused(out, f"--cluster tcp://127.0.0.1:{port}: cannot reach the scheduler", "nothing was")
    nothing_written(work)


def _file(work: Path) -> str:
    f = work / "afile"
    f.write_text("x")
    return str(f)


def _not_executable(work: Path) -> str:
    f = work / "engine"
    f.write_text("#!/bin/sh\n")
    return str(f)


# (variable, a value made in the working folder, what the line says, the files it leaves)
ENVIRONMENT = [
    ("CHAINLAB_PKI_CACHE", _file, "is not a folder", ["afile"]),
    ("CHAINLAB_PRIMITIVES_CACHE", _file, "is not a folder", ["afile"]),
    ("CHAINLAB_PKI_CACHE", lambda w: str(w / "afile" / "pki"), "cannot be made", ["afile"]),
    ("CHAINLAB_ENGINE", lambda w: str(w / "nothing-here"), "names no file", []),
    ("CHAINLAB_ENGINE", _not_executable, "is not executable", ["engine"]),
    ("CHAINLAB_RUSTLS", lambda w: str(w), "is not a file", []),
    ("CHAINLAB_BORING", lambda w: str(w / "nothing-here"), "names no file", []),
    ("CHAINLAB_GO", lambda w: str(w / "nothing-here"), "names no file", []),
    ("CHAINLAB_ENGINE_OPENSSL_4_0", lambda w: str(w / "nothing-here"), "names no file", []),
    ("CHAINLAB_LINK", lambda w: str(w / "nothing-here"), "names no file", []),
    ("CHAINLAB_FIGURES", lambda w: "maybe", "is neither 'on' nor 'off'", []),
    ("CHAINLAB_HOST_PASSES", lambda w: "0", "is outside 1 to 5", []),
    ("CHAINLAB_HOST_PASSES", lambda w: "2.5", "is not a whole number", []),
]


@pytest.mark.parametrize(
    "name,make,said,left", ENVIRONMENT, ids=[f"{n}-{s}" for n, _, s, _ in ENVIRONMENT]
)
@pytest.mark.bad_input
def test_a_bad_environment_variable_is_named_before_anything_is_written(
    work, main, monkeypatch, name, make, said, left
):
    if name == "CHAINLAB_PKI_CACHE" and "cannot be made" in said:
        _file(work)
    value = make(work)
    monkeypatch.setenv(name, value)
    line = refused(main("run", "tiny.toml", "--store", "s.duckdb", cwd=work), said)
    assert f"environment variable {name}=" in line and "allowed:" in line
    nothing_written(work, left)


@pytest.mark.parametrize("variable", ["XDG_CACHE_HOME", "HOME"])
@pytest.mark.bad_input
def test_a_cache_whose_place_cannot_be_a_folder_names_the_variable_that_put_it_there(
    work, main, monkeypatch, variable
):
    monkeypatch.delenv("CHAINLAB_PKI_CACHE")
    monkeypatch.delenv("CHAINLAB_PRIMITIVES_CACHE")
    if variable == "HOME":
        monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv(variable, _file(work))
    line = refused(main("run", "tiny.toml", "--store", "s.duckdb", cwd=work))
    assert f"environment variable {variable}=" in line
    nothing_written(work, ["afile"])


@pytest.mark.bad_input
def test_resume_with_another_seed_names_both_seeds(work, main):
    store = work / "s.duckdb"
    # A kept store of tiny.toml, run with seed 1.
    shutil.copy(REPO / "tests" / "data" / "stores" / "v14-tiny.duckdb", store)
    before = store.stat().st_mtime_ns
    line = refused(
        main("run", "tiny.toml", "--store", "s.duckdb", "--resume", "--seed", "2", cwd=work),
        "was run with seed 1, not --seed 2",
        "allowed: --seed 1",
    )
    assert "s.duckdb" in line
    assert store.stat().st_mtime_ns == before
    # The file's own seed, edited since, is named as the file's.
    (work / "tiny.toml").write_text(textwrap.dedent(TINY).replace("seed = 1", "seed = 7"))
    refused(
        main("run", "tiny.toml", "--store", "s.duckdb", "--resume", cwd=work),
        "not tiny.toml's seed 7",
    )


@pytest.mark.bad_input
def test_a_report_folder_the_file_system_refuses_is_one_line(tmp_path, main):
    store = REPO / "tests" / "data" / "stores" / "v14-tiny.duckdb"
    refused(main("report", store, "--out", "/proc/chainlab-report"), "/proc")
    f = tmp_path / "afile"
    f.write_text("x")
    refused(main("report", store, "--out", f / "r"), "its parent folder does not exist")


PROBE_CA = [
    ("notpem", b"just text\n", "holds no PEM certificate"),
    ("empty", b"", "holds no PEM certificate"),
    (
        "badbase64",
        b"-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n",
        "holds no PEM certificate",
    ),
]


@pytest.mark.parametrize("name,content,said", PROBE_CA, ids=[c[0] for c in PROBE_CA])
@pytest.mark.bad_input
def test_probe_names_the_users_ca_file_and_leaves_nothing(tmp_path, main, name, content, said):
    ca = tmp_path / f"{name}.pem"
    ca.write_bytes(content)
    out = main("probe", "127.0.0.1:9", "--ca", ca, "--store", tmp_path / "p" / "p.duckdb")
    line = refused(out, "--ca", str(ca), said)
    assert "chainlab-probe-" not in line  # never a temporary copy's name
    assert sorted(p.name for p in tmp_path.iterdir()) == [ca.name]


@pytest.mark.bad_input
def test_probe_refuses_a_directory_as_its_ca(tmp_path, main):
    refused(main("probe", "127.0.0.1:9", "--ca", tmp_path), "--ca", "no such file")


@pytest.mark.bad_input
def test_a_target_whose_ca_is_not_pem_is_refused_by_the_file(tmp_path, main):
    (tmp_path / "ca.pem").write_text("not a certificate")
    (tmp_path / "t.toml").write_text(
        '[targets.t]\naddress = "127.0.0.1:9"\nca = "ca.pem"\n'
        '[matrix.m]\nkex = ["X25519"]\ntarget = ["t"]\n'
    )
    refused(main("validate", tmp_path / "t.toml"), "targets.t.ca", "holds no PEM certificate")


@pytest.mark.bad_input
def test_load_rates_the_connection_slots_cannot_start_are_refused(tmp_path, main):
    text = textwrap.dedent(TINY).replace(
        'hierarchy = [["ML-DSA-44", "ML-DSA-44"]]',
        'hierarchy = [["ML-DSA-44", "ML-DSA-44"]]\nnetwork = ["far"]',
    )
    text += "[network.far]\ndelay_ms = 100\n[load]\nrates = [5000]\nmax_in_flight = 100\n"
    (tmp_path / "l.toml").write_text(text + "step_s = 2\n")
    refused(
        main("validate", tmp_path / "l.toml"),
        "load.rates[0]: bad value 5000",
        "100 connection slots (max_in_flight)",
        "allowed: a rate up to",
    )


def test_a_campaign_with_a_byte_order_mark_reads_as_without(tmp_path, main):
    f = tmp_path / "bom.toml"
    f.write_bytes(b"\xef\xbb\xbf" + textwrap.dedent(TINY).encode())
    out = main("validate", f)
    assert out.returncode == 0, out.stderr
    assert "1 scenario" in out.stdout


def test_two_matrices_making_one_scenario_say_matrices_not_campaigns(tmp_path, main):
    f = tmp_path / "dup.toml"
    f.write_text(
        textwrap.dedent(TINY)
        + '[matrix.n]\nkex = ["X25519", "P-256"]\nhierarchy = [["ML-DSA-44", "ML-DSA-44"]]\n'
    )
    out = main("validate", f)
    assert out.returncode == 0, out.stderr
    assert "1 scenario made by several matrices and run once" in out.stdout
    assert "shared by several campaigns" not in out.stdout
    assert "(campaigns: dup (2))" in out.stdout


def test_output_closed_by_its_reader_ends_quietly(tmp_path, cli):
    """`chainlab validate F | head -1`: no traceback, status 141 (as SIGPIPE's)."""
    import subprocess

    p = cli.popen("validate", REPO / "campaigns" / "all-placements.toml", stdout=subprocess.PIPE,
                  stderr=subprocess.PIPE)  # fmt: skip
    p.stdout.readline()
    p.stdout.close()
    err = p.stderr.read()
    assert p.wait(timeout=60) in (0, 141), err
    assert "Traceback" not in err and "internal error" not in err, err
    assert os.path.exists(REPO / "campaigns" / "all-placements.toml")


@pytest.mark.parametrize("command", ["validate", "predict", "report", "export", "probe"])
@pytest.mark.bad_input
def test_every_command_names_a_bad_variable_before_it_reads_or_writes(
    work, main, monkeypatch, command
):
    monkeypatch.setenv("CHAINLAB_FIGURES", "sometimes")
    store = REPO / "tests" / "data" / "stores" / "v14-tiny.duckdb"
    argv = {
        "validate": ["tiny.toml"],
        "predict": ["tiny.toml"],
        "report": [store, "--out", work / "r"],
        "export": [store, "--out", work / "x"],
        "probe": ["127.0.0.1:9", "--store", work / "p.duckdb"],
    }[command]
    refused(main(command, *argv, cwd=work), "environment variable CHAINLAB_FIGURES='sometimes'")
    nothing_written(work)

"""The engines' command lines fuzzed (issue #39): Hypothesis gives every stack's subcommands
one to three of their own options with values a user might type by mistake (empty, negative,
huge, fractional, misspelt, paths that do not exist, lists with stray separators, any text)
on top of a command that is otherwise harmless (a closed port, a missing hierarchy, a fresh
output folder). An engine exits 0 or 2, and 2 with one line naming itself: never a panic, a
signal or a usage text. Runs are bounded; one still running at the bound ran, which is no
crash (a huge --count against a closed port)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
from functools import cache

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from chainlab import engine

STACKS = ("openssl-3.5", "rustls", "boringssl")
# A closed port on loopback: a client's attempts fail at once.
CLOSED = "127.0.0.1:9"
# Per run: argument checks take milliseconds; a run that got past them is cut here.
BOUND_S = 10
OPTION = re.compile(r"^\s+(?:-\w, )?--([a-z0-9-]+)(?: <([A-Z_]+)>)?", re.M)
# Options whose run, given a valid value, would not end or would write outside tmp_path.
NOT_FUZZED = {"help", "version", "records", "out", "listen"}


def base(sub: str, tmp) -> list[str]:
    """The harmless rest of a command line for a subcommand."""
    return {
        "handshake": ["--connect", CLOSED, "--count", "1", "--no-verify", "--timeout-ms", "200"],
        "load": ["--connect", CLOSED, "--rate", "5", "--duration-ms", "200", "--no-verify"],
        "serve": ["--pki", str(tmp / "no-such-pki"), "--max-connections", "1"],
        "pki": ["--chain", "ML-DSA-44", "--out", str(tmp / "pki")],
        "primitives": ["--subject", "ML-DSA-44", "--op", "sign", "--count", "1"],
    }[sub]


@cache
def options(stack: str, sub: str) -> tuple[tuple[str, bool], ...]:
    """A subcommand's options from its --help: (name, takes a value)."""
    out = subprocess.run(
        [str(engine.stack_path(stack)), sub, "--help"], capture_output=True, text=True, timeout=30
    )
    return tuple(
        (name, bool(value)) for name, value in OPTION.findall(out.stdout) if name not in NOT_FUZZED
    )


def subcommands(stack: str) -> tuple[str, ...]:
    return ("pki",) * (stack == "openssl-3.5") + (
        "handshake",
        "load",
        "serve",
        "primitives",
    )


VALUES = st.one_of(
    st.sampled_from(
        [
            "",
            "-1",
            "0",
            "1.5",
            "1e999",
            "nan",
            "18446744073709551616",
            "999999999999",
            ",",
            ":",
            "a,,b",
            "X25519::MLKEM768",
            "ML-DSA-66",
            "/no/such/file",
            "127.0.0.1:99999",
            "localhost:",
            "0-",
            "7-3",
            "quic",
            "none",
            "32473.one",
        ]
    ),
    st.integers(min_value=-(2**70), max_value=2**70).map(str),
    st.text(
        alphabet=st.characters(exclude_characters="\x00", exclude_categories=["Cs"]), max_size=12
    ),
)


@st.composite
def command(draw):
    stack = draw(st.sampled_from(STACKS))
    sub = draw(st.sampled_from(subcommands(stack)))
    chosen = draw(st.lists(st.sampled_from(options(stack, sub)), min_size=1, max_size=3))
    extra = []
    for name, takes in chosen:
        extra += [f"--{name}", draw(VALUES)] if takes else [f"--{name}"]
    return stack, sub, extra


@pytest.fixture(scope="module")
def binaries(engine_bin):
    try:
        return {s: engine.stack_path(s) for s in STACKS}
    except Exception as e:  # noqa: BLE001 - any reason the engines are missing
        pytest.fail(f"these tests need the engines (make engines): {e}")


@settings(
    max_examples=int(os.environ.get("CHAINLAB_FUZZ_EXAMPLES", "150")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(case=command())
@example(case=("openssl-3.5", "handshake", ["--count", "x"]))
@example(case=("boringssl", "handshake", ["--transport", "udp"]))
@example(case=("rustls", "load", ["--rate"]))
# Found by Hypothesis: clap quoted a carriage return as it was, splitting the line.
@example(case=("openssl-3.5", "handshake", ["--cert-compression", "\r"]))
@pytest.mark.bad_input
def test_an_engine_refuses_a_bad_command_line_in_one_line(binaries, tmp_path, case):
    stack, sub, extra = case
    exe = binaries[stack]
    argv = [str(exe), sub, *base(sub, tmp_path), *extra]
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=BOUND_S)
    except subprocess.TimeoutExpired:
        return  # it ran: past every argument check, and no crash
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert "panicked" not in out.stderr, (argv, out.stderr)
    assert out.returncode != -signal.SIGSEGV and out.returncode != -signal.SIGABRT, argv
    assert out.returncode in (0, 2), (argv, out.returncode, out.stderr)
    if out.returncode == 2:
        assert len(lines) == 1, (argv, out.stderr)
        assert lines[0].startswith(f"{exe.name}: error: "), (argv, out.stderr)

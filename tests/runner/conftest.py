"""What the runner's tests share (engine_bin, pki_cache and netns_root are the top-level
conftest's: they mark their tests)."""

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


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

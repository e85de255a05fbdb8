"""The HTML report in headless Chromium: it renders every figure and table, logs no console
message, and produces a non-blank screenshot (Debian's `chromium`, scripts/install-deps.sh)."""

import re
import shutil
import subprocess
from pathlib import Path

import matplotlib.image
import numpy as np
import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
# Chromium prints console messages (console.*, uncaught exceptions, failed resource loads) as
# ':CONSOLE' lines on stderr with --enable-logging=stderr.
CONSOLE = re.compile(r":CONSOLE[:(]|Uncaught|Failed to load resource", re.IGNORECASE)


def chromium(page: Path, tmp: Path, *extra: str) -> subprocess.CompletedProcess:
    if not Path(CHROMIUM).exists():
        pytest.fail("needs Debian's chromium (scripts/install-deps.sh installs it)")
    args = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        f"--user-data-dir={tmp / 'profile'}",
        "--enable-logging=stderr",
        "--v=0",
        "--virtual-time-budget=5000",
        *extra,
        page.as_uri(),
    ]
    # Bounded: a hung browser fails the test instead of blocking the suite.
    return subprocess.run(args, capture_output=True, text=True, timeout=90, check=False)


def console_errors(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if CONSOLE.search(line)]


def test_console_detection_catches_a_broken_page(tmp_path):
    page = tmp_path / "bad.html"
    page.write_text("<p>x</p><script>console.error('boom'); undefined_call();</script>")
    out = chromium(page, tmp_path, "--dump-dom")
    assert len(console_errors(out.stderr)) == 2


def test_report_renders_figures_and_tables_without_console_errors(golden_report, tmp_path):
    page = golden_report / "index.html"
    html = page.read_text()
    # self-contained: no script, no stylesheet link, nothing loaded from elsewhere
    assert "<script" not in html and "<link" not in html
    assert not re.search(r'(?:src|href)\s*=\s*"(?!#|data:)', html)
    assert not re.search(r"url\((?!#)", html)
    out = chromium(page, tmp_path, "--dump-dom")
    assert out.returncode == 0, out.stderr[-2000:]
    dom = out.stdout
    figures = sorted(p.stem for p in (golden_report / "figures").glob("*.svg"))
    for name in figures:
        m = re.search(rf'<figure id="figure-{re.escape(name)}">\s*<svg', dom)
        assert m, f"figure {name} not rendered as inline SVG"
    assert dom.count("<svg") >= len(figures)
    tables = set(re.findall(r'<table id="table-([a-z0-9_]+)"', dom))
    assert tables == set(re.findall(r'<table id="table-([a-z0-9_]+)"', html))
    assert {
        "scenarios",
        "baseline_multipliers",
        "placement_classes",
        "correlations",
        "decomposition",
        "capacity",
        "service_classes",
        "paper_scenarios",
    } <= tables
    rows = re.search(r'<table id="table-scenarios".*?</table>', dom, re.S).group(0)
    assert rows.count("<tr>") == 1 + 8  # header + every scenario, the failed one included
    assert console_errors(out.stderr) == []


def test_report_screenshot_is_readable(golden_report, tmp_path):
    shot = tmp_path / "report.png"
    out = chromium(
        golden_report / "index.html",
        tmp_path,
        f"--screenshot={shot}",
        "--window-size=1280,2400",
        "--hide-scrollbars",
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert console_errors(out.stderr) == []
    assert shot.stat().st_size > 50_000
    img = matplotlib.image.imread(shot)
    assert img.shape[:2] == (2400, 1280)
    # Not blank: a real page has text, tables and rules, i.e. many dark pixels.
    dark = (img[..., :3].mean(axis=2) < 0.5).mean()
    assert dark > 0.01
    shutil.copy(shot, golden_report / "screenshot.png")  # for a human to look at
    assert np.isfinite(img).all()


def test_network_report_renders_its_plots_and_tables(network_report, tmp_path):
    page = network_report / "index.html"
    out = chromium(page, tmp_path, "--dump-dom")
    assert out.returncode == 0, out.stderr[-2000:]
    dom = out.stdout
    for name in ("network_rtt", "network_loss"):
        assert re.search(rf'<figure id="figure-{name}">\s*<svg', dom), name
        assert (network_report / "figures" / f"{name}.png").stat().st_size > 10_000
    section = re.search(r'<section id="networks">.*?</section>\s*</section>', dom, re.S)
    assert section, "no emulated-networks section"
    tables = set(re.findall(r'<table id="table-([a-z0-9_]+)"', section.group(0)))
    assert tables == {
        "network_profiles",
        "network_scenarios",
        "network_projection",
        "network_reference_projection",
    }
    assert "<strong>FLAGGED</strong>" in section.group(0)
    assert console_errors(out.stderr) == []

"""`chainlab report`: turn a store into a folder of answers.

build_report(store) -> <store stem>-report/
    index.html     self-contained (figures inline as SVG, no script, works offline)
    report.md      the same content in Markdown, figures linked
    tables/*.csv   every table, raw numbers at full precision
    figures/*.png, figures/*.svg

`CHAINLAB_FIGURES=off` (the tests' setting, docs/testing.md) draws each figure, so the text
is the same, but skips its layout and files: no figures/*.png|svg, no SVG inside index.html.

Nothing half-written: a report is built in a hidden sibling folder (`.<name>.partial-<pid>`)
and moved into place when whole (renamed, for a new folder; file by file with `index.html`
last, into an earlier report's folder), so a report stopped at any point leaves the folder as
it was. A partial folder a killed report left behind is removed by the next report.
"""

from __future__ import annotations

import io
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import matplotlib.pyplot as plt

from chainlab.analysis.analyze import Analysis, analyze
from chainlab.errors import ChainlabError
from chainlab.report import document, render, sections

PNG_DPI = 100  # 900-1050 px wide figures: readable on screen, quick to render, small files
FIGURES_ENV = "CHAINLAB_FIGURES"


def figure_files_wanted() -> bool:
    """False where `CHAINLAB_FIGURES=off`: a report's figures are drawn but not written."""
    return os.environ.get(FIGURES_ENV, "on").strip().lower() != "off"


def default_out_dir(store: Path) -> Path:
    store = Path(store)
    return store.with_name(f"{store.stem}-report")


def prepare_out_dir(out: Path) -> None:
    """Create the report folder, or clear an earlier report in it: only the kinds of files a
    report writes (tables/*.csv, figures/*.png|svg), never anything else. A non-empty folder
    that holds no report is refused."""
    check_out_dir(out)
    for sub, patterns in (("tables", ("*.csv",)), ("figures", ("*.png", "*.svg"))):
        d = out / sub
        d.mkdir(parents=True, exist_ok=True)
        for pattern in patterns:
            for stale in d.glob(pattern):  # from an earlier report, maybe of another store
                stale.unlink()


def build_report(
    store,
    out_dir=None,
    *,
    analysis: Analysis | None = None,
    stopped: Callable[[], bool] = lambda: False,
    **overrides,
) -> Path:
    """Analyse `store` (or use `analysis`) and write the report; returns the folder.

    `overrides` change single analysis settings (baseline=..., price_per_vcpu_hour=...).
    `stopped()` true once the whole report is written (an interrupt whose KeyboardInterrupt
    was dropped on the way): KeyboardInterrupt, and nothing of the report lands.
    """
    store = Path(store)
    a = analysis if analysis is not None else analyze(store, **overrides)
    out = Path(out_dir) if out_dir is not None else default_out_dir(store)
    check_out_dir(out)
    remove_stale_partials(out)
    work = out.with_name(f".{out.name}.partial-{os.getpid()}")
    shutil.rmtree(work, ignore_errors=True)
    try:
        prepare_out_dir(work)
        write_report(a, work)
        if stopped():
            raise KeyboardInterrupt
        move_into_place(work, out)
    except OSError as e:
        # A folder the file system refuses (read-only, full, gone): one line, and nothing of
        # this report left behind.
        raise ChainlabError(
            f"report folder {out}: cannot write {e.filename or out}: {e.strerror or e}; "
            "choose another folder with --out"
        ) from None
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return out


def write_report(a: Analysis, out: Path) -> None:
    """Every file of the report of analysis `a` into `out` (its subfolders made)."""

    write_files = figure_files_wanted()

    def sink(item: document.Figure, fig) -> None:
        png = out / "figures" / f"{item.name}.png"
        svg = out / "figures" / f"{item.name}.svg"
        item.png = f"figures/{png.name}"
        item.svg = f"figures/{svg.name}"
        if not write_files:
            plt.close(fig)
            return
        # Lay out once (text extents are the slow part), then save both formats as is.
        if fig.get_layout_engine() is None:
            fig.tight_layout()
        fig.set_layout_engine("none")
        fig.savefig(png, dpi=PNG_DPI, metadata={"Software": None})
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
        plt.close(fig)
        item.svg_text = buf.getvalue()
        svg.write_text(item.svg_text)

    doc = sections.build(a, sink)
    for t in doc.tables:
        t.csv.to_csv(out / "tables" / f"{t.name}.csv", index=False)
    (out / "report.md").write_text(render.markdown(doc))
    (out / "index.html").write_text(render.html_page(doc))


def check_out_dir(out: Path) -> None:
    """Refuse a folder that is not one a report may go to, before any work."""
    if out.exists() and not out.is_dir():
        raise ChainlabError(f"report folder {out}: exists and is not a folder; choose --out")
    if out.is_dir() and any(out.iterdir()) and not (out / "index.html").exists():
        raise ChainlabError(
            f"report folder {out}: exists, is not empty and holds no chainlab report; "
            "choose an empty or new folder with --out"
        )
    if not out.parent.is_dir():
        raise ChainlabError(f"report folder {out}: its parent folder does not exist")
    # The report is built beside its folder and moved into it: both must take new files.
    for d in (out.parent, out) if out.is_dir() else (out.parent,):
        if not os.access(d, os.W_OK | os.X_OK):
            raise ChainlabError(
                f"report folder {out}: {d} is not writable by this user; choose another "
                "folder with --out"
            )


def remove_stale_partials(out: Path) -> None:
    """Partial folders of `out` whose report process is gone (killed before it cleaned)."""
    for d in out.parent.glob(f".{out.name}.partial-*"):
        pid = d.name.rsplit("-", 1)[-1]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            shutil.rmtree(d, ignore_errors=True)


def move_into_place(work: Path, out: Path) -> None:
    """The whole report in `work` becomes `out`: one rename for a new folder; into an
    earlier report's folder, its old report files cleared, then file by file, `index.html`
    last (what a reader opens is always a whole report's)."""
    if not out.exists():
        os.replace(work, out)
        return
    prepare_out_dir(out)
    (out / "index.html").unlink(missing_ok=True)
    for f in sorted(work.rglob("*")):
        if f.is_file() and f.name != "index.html":
            target = out / f.relative_to(work)
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(f, target)
    os.replace(work / "index.html", out / "index.html")

"""What every report section uses: the analysis, the settings, the table and figure
registers, and the cell formatters (intervals, numbers, ids).

A section is a function `build(b: Builder) -> Section | None` in chainlab.report.sections;
it formats what the analysis computed and adds nothing of its own.
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from chainlab.analysis import families as fam
from chainlab.analysis.registry import Analysis
from chainlab.report import format as f
from chainlab.report.document import Code, Figure, Link, Table
from chainlab.report.figures import REGISTRY


def ci(df: pd.DataFrame, col: str, digits: int = 3) -> list[str]:
    """`col` with its interval (`col_lo`, `col_hi`), one cell per row."""
    return [
        f.ci(e, lo, hi, digits)
        for e, lo, hi in zip(df[col], df[f"{col}_lo"], df[f"{col}_hi"], strict=True)
    ]


def instr_columns(df: pd.DataFrame) -> list[tuple[str, list]]:
    """The instruction ratios of a pairs frame (chainlab.analysis.twins.instruction_ratios)
    as report columns, where the store counted instructions (none otherwise): server and
    client, and the sides whose CPU and instruction ratios disagree beyond their intervals."""
    if "server_instr_ratio" not in df or not df["server_instr_ratio"].notna().any():
        return []
    return [
        ("server instr ×", ci(df, "server_instr_ratio")),
        ("client instr ×", ci(df, "client_instr_ratio")),
        ("CPU ≠ instr", list(df["instr_disagrees"])),
    ]


def instr_sources(a) -> str:
    """Where the store's instructions per handshake come from, with how many scenarios each
    ('callgrind (valgrind-3.19.0), seeded random bytes for 4 scenario(s)'); '' without."""
    if "instr_source" not in a.summary:
        return ""  # a store whose summary is empty (every scenario failed or none ran)
    sources = a.summary["instr_source"].replace("", None).dropna().value_counts()
    return "; ".join(f"{src} for {n} scenario(s)" for src, n in sources.items())


def ci_of(row, col: str, digits: int = 3) -> str:
    """`col` of one row (a dict or Series) with its interval."""
    return f.ci(row[col], row[f"{col}_lo"], row[f"{col}_hi"], digits)


def median_row(df: pd.DataFrame, col: str) -> dict:
    """The row whose `col` is the median of the frame's (the lower middle of an even count)."""
    ordered = df.sort_values([col, "scenario_id"] if "scenario_id" in df else [col])
    return ordered.iloc[(len(ordered) - 1) // 2].to_dict()


def median_per_group(df: pd.DataFrame, by: str, col: str, line) -> list[tuple[str, str]]:
    """One headline per value of `by`: `line(value, row, n)` of the group's `median_row` by
    `col` (n: the group's size); none for an empty frame."""
    if df.empty:
        return []
    return [line(v, median_row(g, col), len(g)) for v, g in df.groupby(by, sort=True)]


def median_of(n: int) -> str:
    """How a headline names the row `median_row` chose among n pairs."""
    return "the only pair" if n == 1 else f"the median of {n} pairs"


def paper_vs(df: pd.DataFrame, paper_col: str, col: str, digits: int = 3) -> list[str]:
    """'paper | ours [interval]' cells: a published value beside this store's."""
    return [
        f"{f.num(p, digits)} | {c}" for p, c in zip(df[paper_col], ci(df, col, digits), strict=True)
    ]


def percents(values) -> list[str]:
    """Shares (0.25) as percentages ('25.0 %'), n/a where unknown."""
    return [f.num(x * 100) + " %" if x == x else "n/a" for x in values]


def nums(values, digits=3) -> list[str]:
    return [f.num(v, digits) for v in values]


def ints(values) -> list[str]:
    return [f.integer(v) for v in values]


def codes(values) -> list[Code]:
    return [Code(v) if isinstance(v, str) and v else Code("") for v in values]


def make_table(name, title, caption, csv, columns: list[tuple[str, list]], note="") -> Table:
    """A table: shown with `columns` (header, cells), written to CSV as `csv`."""
    headers = [h for h, _ in columns]
    n = len(columns[0][1]) if columns else 0
    rows = [
        [c[1][i] if isinstance(c[1][i], Code | Link) else str(c[1][i]) for c in columns]
        for i in range(n)
    ]
    return Table(name, title, caption, csv.reset_index(drop=True), headers, rows, note)


# The settings an answer's scenarios should share to compare like with like, and what
# `Builder.setting` calls them.
MIXED_SETTINGS = (
    ("network", "networks"),
    ("stack", "stacks"),
    ("transport", "transports"),
    ("handshake_mode", "handshake modes"),
)


class Builder:
    """The state the sections share while one report is built."""

    def __init__(self, a: Analysis, figure_sink: Callable[..., None]) -> None:
        self.a = a
        self.cfg = a.config
        self.h = fam.FAMILY_DISPLAY.get(self.cfg.heavy_family, self.cfg.heavy_family)
        self.sink = figure_sink
        self.tables: list[Table] = []
        self.figures: list[Figure] = []
        # Anchor -> section, of the sections built so far (what a `last` section reads).
        self.built: dict = {}

    @property
    def level(self) -> str:
        """The confidence level of every interval in the report, as text: '95 %'."""
        return f"{self.cfg.confidence_level * 100:g} %"

    def table(self, *args, **kw) -> Table:
        t = make_table(*args, **kw)
        self.tables.append(t)
        return t

    def csv_only(self, name: str, csv: pd.DataFrame) -> None:
        """A table written to tables/<name>.csv and not shown."""
        self.tables.append(make_table(name, "", "", csv, []))

    def figure(self, kind: str, caption: str, *args, name: str | None = None) -> Figure | None:
        """The registered figure `kind` drawn with `args` (file stem `name`, default `kind`),
        or None when it has nothing to plot."""
        entry = REGISTRY[kind]
        fig = entry.draw(self.a, *args)
        if fig is None:
            return None
        item = Figure(
            name=name or kind,
            title=entry.title_for(*args),
            caption=caption,
            number=len(self.figures) + 1,
        )
        self.sink(item, fig)
        self.figures.append(item)
        return item

    def cls_name(self, c: str) -> str:
        return fam.class_display(c, self.cfg.heavy_family)

    @property
    def several_networks(self) -> bool:
        sm = self.a.summary
        return bool(len(sm) and "network" in sm and sm["network"].nunique() > 1)

    def setting(self, ids, but: tuple[str, ...] = ()) -> str:
        """What an answer drawn from scenarios `ids` mixes: where they differ in network,
        stack, transport or handshake mode, the words that say so (" (mixes networks
        loopback, rtt50)"); "" when they are alike, so a reader sees when an answer is not
        like with like. `but`: settings the answer already breaks down (their columns)."""
        sm = self.a.summary
        if sm.empty:
            return ""
        rows = sm[sm["scenario_id"].isin(list(ids))]
        parts = []
        for col, name in MIXED_SETTINGS:
            if col in rows and col not in but:
                values = sorted(set(rows[col].dropna().astype(str)))
                if len(values) > 1:
                    parts.append(f"{name} {', '.join(values)}")
        return f" (mixes {'; '.join(parts)})" if parts else ""

    def ref_note(self) -> str | None:
        """Which scenarios a cross-scenario section uses, when the store has several
        networks (None otherwise, so a loopback-only report is unchanged)."""
        if not self.several_networks:
            return None
        a = self.a
        ref = a.reference_network
        n = len(a.reference_summary())
        why = "the baseline's network" if a.baseline is not None else "no baseline is set"
        return (
            f"Like with like: this section uses only the {n} scenario(s) on the network "
            f"`{ref}` ({why}; docs/methods/networks.md#emulated-networks). The other networks' "
            "scenarios are in the "
            "scenario summary, the paired comparisons and the emulated-networks section."
        )

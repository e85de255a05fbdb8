"""The report as a document model: sections of paragraphs, tables and figures. The sections
(chainlab.report.sections) build it from an `Analysis`; rendering to Markdown and HTML is in
`render`; every table's raw numbers go to CSV unchanged (full precision, intervals as
`<name>_lo` / `<name>_hi` columns).

Paragraph text uses two inline marks only: `code` and **bold**.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd


class Code(str):
    """A table cell shown as code (scenario ids)."""


class Link(str):
    """A table cell linking to a section of the report: its text, and `anchor`."""

    anchor: str

    def __new__(cls, text: str, anchor: str):
        obj = super().__new__(cls, text)
        obj.anchor = anchor
        return obj


@dataclass
class Table:
    name: str  # CSV file stem under tables/
    title: str
    caption: str
    csv: pd.DataFrame
    headers: list[str]
    rows: list[list[str]]
    note: str = ""


@dataclass
class Figure:
    name: str  # file stem under figures/
    title: str
    caption: str
    number: int = 0
    png: str = ""  # relative path
    svg: str = ""  # relative path
    svg_text: str = ""


@dataclass
class Section:
    anchor: str
    title: str
    blocks: list = field(default_factory=list)  # str | Table | Figure


@dataclass
class Document:
    title: str
    sections: list[Section]
    tables: list[Table]
    figures: list[Figure]

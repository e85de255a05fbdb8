"""Findings: one line per structural question, checked against this store."""

from __future__ import annotations

import pandas as pd

from chainlab.report.builder import Builder
from chainlab.report.document import Section
from chainlab.report.sections.registry import placement_study, section


def headline(b: Builder) -> list[tuple[str, str]]:
    """The placement questions this store can test (the others are left out)."""
    return [
        (f["topic"], f"{f['holds']}: {f['finding']}")
        for f in b.a.findings
        if f["holds"] != "not testable"
    ]


@section(10, headline=headline, applies=placement_study)
def build(b: Builder) -> Section | None:
    s = Section("findings", "Findings")
    s.blocks.append(b.ref_note())
    s.blocks.append(
        "Each line checks one structural question against this store, with the criterion "
        "stated; 'not testable' means the store lacks the scenarios the question needs."
    )
    fd = pd.DataFrame(b.a.findings)
    if fd.empty or (fd["holds"] == "not testable").all():
        return None  # the campaign asked none of the placement study's questions
    s.blocks.append(
        b.table(
            "findings",
            "Findings",
            "Computed by chainlab/analysis/findings.py from the tables below.",
            fd,
            [
                ("question", list(fd["topic"])),
                ("holds here", list(fd["holds"])),
                ("evidence", list(fd["finding"])),
            ],
        )
    )
    return s

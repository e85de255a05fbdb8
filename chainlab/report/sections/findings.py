"""Findings: one line per structural question, checked against this store."""

from __future__ import annotations

import pandas as pd

from chainlab.report.builder import Builder
from chainlab.report.document import Section


def build(b: Builder) -> Section:
    s = Section("findings", "Findings")
    s.blocks.append(b.ref_note())
    s.blocks.append(
        "Each line checks one structural question against this store, with the criterion "
        "stated; 'not testable' means the store lacks the scenarios the question needs."
    )
    fd = pd.DataFrame(b.a.findings)
    if fd.empty:
        return s
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

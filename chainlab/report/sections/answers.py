"""Answers: what the campaign that ran can answer, first. The placement study's questions
that this store can test (chainlab.analysis.findings), then each section's headline (its
`@section(..., headline=...)`), every answer with its interval and a link to its section.
Run metadata comes near the end of the report (the "Run" section)."""

from __future__ import annotations

import pandas as pd

from chainlab.report.builder import Builder
from chainlab.report.document import Link, Section
from chainlab.report.sections.registry import registered, section


def rows(b: Builder) -> list[tuple[str, str, str, str]]:
    """(question, answer, section anchor, section title) for every answer of this store, from
    the sections that were built (`b.built`)."""
    out = []
    for r in registered():
        built = b.built.get(r.anchor)
        if r.headline is None or built is None:
            continue
        for question, answer in r.headline(b):
            out.append((question, answer, r.anchor, built.title))
    return out


@section(0, last=True)
def build(b: Builder) -> Section:
    s = Section("answers", "Answers")
    got = rows(b)
    if not got:
        s.blocks.append(
            "This store answers none of the report's questions (no successful scenario, or "
            "no scenarios of the kinds the questions need); the sections below describe it."
        )
        return s
    s.blocks.append(
        f"What this store answers, each with its {b.level} interval where it is an estimate; "
        "the linked section shows how it was computed. Questions the campaign did not ask "
        "are left out."
    )
    df = pd.DataFrame(got, columns=["question", "answer", "section", "section_title"])
    s.blocks.append(
        b.table(
            "answers",
            "Answers",
            "Computed from the store by the sections linked in the last column.",
            df,
            [
                ("question", list(df["question"])),
                ("answer", list(df["answer"])),
                (
                    "section",
                    [Link(t, a) for t, a in zip(df["section_title"], df["section"], strict=True)],
                ),
            ],
        )
    )
    return s

"""The report's sections, one module each, in the order the report shows them.

Each module has `build(b: chainlab.report.builder.Builder) -> Section | None` (None: the
section does not apply to this store, e.g. no emulated network). A new section is a new
module here and a line in ORDER.
"""

from __future__ import annotations

from chainlab.report.builder import Builder
from chainlab.report.document import Document
from chainlab.report.sections import (
    baseline,
    capacity,
    client_auth,
    compression,
    correlations,
    cost_model,
    decomposition,
    findings,
    host,
    intermediates,
    load,
    methods,
    networks,
    pairs,
    paper,
    placement,
    probe,
    quic,
    resumption,
    run,
    scenarios,
    stacks,
    transport,
)

ORDER = (
    run,
    findings,
    scenarios,
    host,
    transport,
    networks,  # includes the projection subsection (sections/projection.py)
    baseline,
    placement,
    pairs,
    correlations,
    decomposition,
    cost_model,
    compression,
    resumption,
    intermediates,
    client_auth,
    quic,
    stacks,
    probe,
    capacity,
    load,
    paper,
    methods,
)


def build(a, figure_sink) -> Document:
    """The document for analysis `a`; `figure_sink(Figure, matplotlib_figure)` saves each
    figure and fills its paths."""
    b = Builder(a, figure_sink)
    built = [section.build(b) for section in ORDER]
    title = f"chainlab report: {a.data.campaign_name}"
    return Document(title, [s for s in built if s is not None], b.tables, b.figures)

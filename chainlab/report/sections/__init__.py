"""The report's sections, one module each. A module joins the report by decorating its
`build(b: chainlab.report.builder.Builder) -> Section | None` with `@section(rank)`
(chainlab.report.sections.registry; None: the section does not apply to this store, e.g. no
emulated network). Adding a section is adding its module (and its analysis): every module of
this package is imported here, and the ranks order them. A section whose `applies` says the
store holds none of its data is not built, so none of its analyses run; which sections were
built, which were not and why, and which analyses ran are logged at debug level
(`chainlab --debug report STORE`).
"""

from __future__ import annotations

import importlib
import logging
import pkgutil

from chainlab.report.builder import Builder
from chainlab.report.document import Document
from chainlab.report.sections.registry import Registered, registered

log = logging.getLogger(__name__)

for _info in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_info.name}")


def order() -> list[Registered]:
    """Every section, in the order the report shows them."""
    return registered()


def build(a, figure_sink) -> Document:
    """The document for analysis `a`; `figure_sink(Figure, matplotlib_figure)` saves each
    figure and fills its paths."""
    b = Builder(a, figure_sink)
    sections = order()
    built = {r.anchor: _build(r, b) for r in sections if not r.last}
    b.built = {anchor: s for anchor, s in built.items() if s is not None}
    built |= {r.anchor: _build(r, b) for r in sections if r.last}
    title = f"chainlab report: {a.data.campaign_name}"
    shown = [built[r.anchor] for r in sections if built[r.anchor] is not None]
    _log_what_ran(a, sections, built, b)
    return Document(title, shown, b.tables, b.figures)


def _log_what_ran(a, sections: list[Registered], built: dict, b: Builder) -> None:
    """At debug level: the sections built, those left out (with the reason) and the analyses
    that ran for them."""
    if not log.isEnabledFor(logging.DEBUG):
        return
    out = [r.anchor for r in sections if r.applies is not None and not r.applies(b)]
    empty = [r.anchor for r in sections if built[r.anchor] is None and r.anchor not in out]
    log.debug("sections built: %s", ", ".join(r.anchor for r in sections if built[r.anchor]))
    for r in sections:
        if r.anchor in out:
            log.debug("section %s not built: the store holds no data of it (it needs: %s)",
                      r.anchor, (r.applies.__doc__ or "").strip().splitlines()[0])  # fmt: skip
    if empty:
        log.debug("sections built but empty for this store: %s", ", ".join(empty))
    log.debug("analyses computed (%d): %s", len(a.computed), ", ".join(sorted(a.computed)))


def _build(r: Registered, b: Builder):
    """A section, or None where it does not apply to this store (its analyses never run)."""
    if r.applies is not None and not r.applies(b):
        return None
    return r.build(b)

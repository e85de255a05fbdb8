"""Render a report Document to Markdown (figures linked) and to self-contained HTML (figures
inline as SVG, no script, no external resource: it works offline from a single file)."""

from __future__ import annotations

import html
import re

from chainlab.report.document import Code, Document, Figure, Link, Section, Table

_CODE = re.compile(r"`([^`]+)`")
_BOLD = re.compile(r"\*\*([^*]+)\*\*")


# -- Markdown ------------------------------------------------------------------------------
# Strings from a store or a campaign (ids, names, error details, a probed server's subject)
# reach the Markdown as text: outside code spans '<' becomes '&lt;', so no renderer reads a
# tag in them ('&' and '>' start none); a code span (literal text in CommonMark) is
# delimited by more backticks than it holds.


def _md_text(text) -> str:
    """`text` with '<' escaped outside its code spans, which are found as CommonMark finds
    them (a run of n backticks opens a span that the next run of exactly n closes; a run
    with no such closer is literal), so a backtick in a store's string cannot move a '<'
    out of a span the escaping skipped."""
    text = str(text)
    out, i = [], 0
    runs = list(re.finditer(r"`+", text))
    k = 0
    while k < len(runs):
        opener = runs[k]
        closer = next((r for r in runs[k + 1 :] if len(r.group()) == len(opener.group())), None)
        if closer is None:
            k += 1
            continue
        out.append(text[i : opener.start()].replace("<", "&lt;"))
        out.append(text[opener.start() : closer.end()])
        i = closer.end()
        k = runs.index(closer) + 1
    out.append(text[i:].replace("<", "&lt;"))
    return "".join(out)


def _md_code(s: str) -> str:
    """A code span holding `s` as it is."""
    if not s:
        return ""
    ticks = "`" * (max((len(r) for r in re.findall(r"`+", s)), default=0) + 1)
    pad = " " if s.startswith("`") or s.endswith("`") else ""
    return f"{ticks}{pad}{s}{pad}{ticks}"


def _md_cell(c) -> str:
    s = str(c).replace("|", "\\|").replace("\n", " ")
    if isinstance(c, Link):
        return f"[{_md_text(s)}](#{c.anchor})"
    if isinstance(c, Code):
        return _md_code(s)
    return _md_text(s)


def _md_table(t: Table) -> str:
    out = [f"**{_md_text(t.title)}**", ""]
    if t.caption:
        out += [_md_text(t.caption), ""]
    out.append("| " + " | ".join(_md_cell(h) for h in t.headers) + " |")
    out.append("|" + "|".join("---" for _ in t.headers) + "|")
    for r in t.rows:
        out.append("| " + " | ".join(_md_cell(c) for c in r) + " |")
    out.append("")
    if t.note:
        out += [_md_text(t.note), ""]
    out += [f"CSV: `tables/{t.name}.csv`", ""]
    return "\n".join(out)


def _md_block(b, level: int) -> str:
    if b is None:
        return ""
    if isinstance(b, Section):
        return _md_section(b, level + 1)
    if isinstance(b, Table):
        return _md_table(b)
    if isinstance(b, Figure):
        title = _md_text(b.title)
        return (
            f"![Figure {b.number}: {title}]({b.png})\n\n"
            f"*Figure {b.number}: {title}.* {_md_text(b.caption)} (SVG: `{b.svg}`)\n"
        )
    if isinstance(b, list):
        return "\n".join(f"- {_md_text(x)}" for x in b) + "\n"
    return f"{_md_text(b)}\n"


def _md_section(s: Section, level: int) -> str:
    parts = [] if level == 2 else [f'<a id="{s.anchor}"></a>\n']
    parts += [f"{'#' * level} {_md_text(s.title)}", ""]
    for b in s.blocks:
        text = _md_block(b, level)
        if text:
            parts.append(text)
    return "\n".join(parts)


def _subsections(s: Section) -> list[Section]:
    return [b for b in s.blocks if isinstance(b, Section)]


def _md_contents(sections: list[Section], depth: int = 0) -> list[str]:
    """The table of contents as a nested list: every section and its subsections."""
    out = []
    for s in sections:
        out.append(f"{'  ' * depth}- [{_md_text(s.title)}](#{s.anchor})")
        out += _md_contents(_subsections(s), depth + 1)
    return out


def markdown(doc: Document) -> str:
    parts = [f"# {_md_text(doc.title)}", "", "## Contents", "", *_md_contents(doc.sections), ""]
    for s in doc.sections:
        parts.append(f'<a id="{s.anchor}"></a>\n')
        parts.append(_md_section(s, 2))
    return "\n".join(parts).rstrip() + "\n"


# -- HTML ----------------------------------------------------------------------------------

CSS = """
body { font-family: system-ui, -apple-system, 'Segoe UI', Roboto, 'DejaVu Sans', sans-serif;
       margin: 0 auto; max-width: 1200px; padding: 1em 2em; color: #1b1b1b; line-height: 1.45; }
h1 { font-size: 1.7em; border-bottom: 2px solid #0072B2; padding-bottom: .2em; }
h2 { font-size: 1.35em; margin-top: 2em; border-bottom: 1px solid #ccc; }
h3 { font-size: 1.1em; margin-top: 1.5em; }
nav { background: #f4f6f8; padding: .6em 1em; border-radius: 4px; font-size: .92em; }
nav ul { margin: .2em 0; padding-left: 1.2em; }
nav > ul { columns: 2; padding-left: 1em; }
code { font-family: 'DejaVu Sans Mono', Consolas, monospace; font-size: .88em;
       background: #f2f2f2; padding: 0 .2em; border-radius: 2px; }
.table-wrap { overflow-x: auto; margin: .6em 0 1.4em 0; }
table { border-collapse: collapse; font-size: .8em; }
caption { caption-side: top; text-align: left; font-weight: 600; padding: .3em 0; }
caption span { font-weight: normal; color: #555; display: block; }
th, td { border: 1px solid #d6d6d6; padding: .25em .45em; vertical-align: top; }
th { background: #eef2f5; position: sticky; top: 0; }
tr:nth-child(even) td { background: #fafafa; }
td code { background: none; padding: 0; }
.note { font-size: .85em; color: #555; }
figure { margin: 1.2em 0 2em 0; }
figure svg { max-width: 100%; height: auto; }
figcaption { font-size: .9em; color: #333; }
"""


def _inline(text: str) -> str:
    t = html.escape(str(text), quote=False)
    t = _CODE.sub(lambda m: f"<code>{_wbr(m.group(1))}</code>", t)
    return _BOLD.sub(r"<strong>\1</strong>", t)


def _wbr(s: str) -> str:
    """Allow long scenario ids to wrap after their '__' separators."""
    return s.replace("__", "__<wbr>")


def _html_cell(c) -> str:
    if isinstance(c, Link):
        return f'<a href="#{html.escape(c.anchor)}">{html.escape(str(c))}</a>'
    if isinstance(c, Code):
        return f"<code>{_wbr(html.escape(str(c)))}</code>" if str(c) else ""
    return _inline(c).replace("\n", "<br>")


def _html_table(t: Table) -> str:
    out = [f'<div class="table-wrap"><table id="table-{t.name}" data-csv="tables/{t.name}.csv">']
    cap = f"<caption>{html.escape(t.title)}"
    if t.caption:
        cap += f"<span>{_inline(t.caption)}</span>"
    out.append(cap + "</caption>")
    out.append(
        "<thead><tr>"
        + "".join(f"<th>{html.escape(h)}</th>" for h in t.headers)
        + "</tr></thead><tbody>"
    )
    for r in t.rows:
        out.append("<tr>" + "".join(f"<td>{_html_cell(c)}</td>" for c in r) + "</tr>")
    out.append("</tbody></table></div>")
    if t.note:
        out.append(f'<p class="note">{_inline(t.note)}</p>')
    out.append(f'<p class="note">CSV: <code>tables/{t.name}.csv</code></p>')
    return "\n".join(out)


_METADATA = re.compile(r"<metadata>.*?</metadata>\s*", re.S)


def _strip_svg(svg: str) -> str:
    """The <svg> element alone: no XML prolog or DOCTYPE, no RDF metadata block."""
    i = svg.find("<svg")
    return _METADATA.sub("", svg[i:] if i >= 0 else svg, count=1)


def _html_block(b, level: int) -> str:
    if b is None:
        return ""
    if isinstance(b, Section):
        return _html_section(b, level + 1)
    if isinstance(b, Table):
        return _html_table(b)
    if isinstance(b, Figure):
        return (
            f'<figure id="figure-{b.name}">{_strip_svg(b.svg_text)}'
            f"<figcaption><strong>Figure {b.number}: {html.escape(b.title)}.</strong> "
            f"{_inline(b.caption)} Files: <code>{b.png}</code>, <code>{b.svg}</code>"
            "</figcaption></figure>"
        )
    if isinstance(b, list):
        return "<ul>" + "".join(f"<li>{_inline(x)}</li>" for x in b) + "</ul>"
    return f"<p>{_inline(b)}</p>"


def _html_section(s: Section, level: int) -> str:
    h = min(level, 6)
    parts = [f'<section id="{s.anchor}"><h{h}>{html.escape(s.title)}</h{h}>']
    parts += [_html_block(b, level) for b in s.blocks]
    parts.append("</section>")
    return "\n".join(p for p in parts if p)


def _html_contents(sections: list[Section]) -> str:
    """The table of contents as nested lists: every section and its subsections."""
    items = []
    for s in sections:
        inner = _html_contents(_subsections(s))
        items.append(f'<li><a href="#{s.anchor}">{html.escape(s.title)}</a>{inner}</li>')
    return f"<ul>{''.join(items)}</ul>" if items else ""


def html_page(doc: Document) -> str:
    nav = _html_contents(doc.sections)
    body = "\n".join(_html_section(s, 2) for s in doc.sections)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(doc.title)}</title><style>{CSS}</style></head><body>"
        f"<h1>{html.escape(doc.title)}</h1><nav>{nav}</nav>\n{body}\n</body></html>\n"
    )

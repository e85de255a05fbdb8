"""Strings a store or a campaign brings into a report (scenario ids, the campaign's file and
campaign names, error details, a server's certificate subject) are text in both renderings:
a store whose strings carry a script, a tag, quotes, backticks and table pipes gives an HTML
page with no element of theirs that Chromium renders with no console message, and Markdown
that a CommonMark renderer turns into text, with every table row's cells intact (issue
#39)."""

import re
import shutil
from pathlib import Path

import duckdb
import pytest
from markdown_it import MarkdownIt

from chainlab.report import build_report

from .test_html import chromium, console_errors

KEPT = Path(__file__).resolve().parents[1] / "data" / "stores" / "v11-anchors.duckdb"
EVIL = '<script>alert(1)</script><img src=x onerror=alert(2)>|"q"\'`t`'
# The store's elements if they were read as HTML (the report's own figures are <img> too).
TAGS = re.compile(r"<script\b|<img[^>]*onerror", re.IGNORECASE)


def untrusted_store(path: Path) -> Path:
    """The kept store with EVIL in every kind of string the report shows."""
    shutil.copy(KEPT, path)
    with duckdb.connect(str(path)) as c:
        c.execute("UPDATE runs SET campaign_file_name = ?", [f"evil{EVIL}.toml"])
        c.execute("UPDATE observed_chain SET subject = ?", [f"CN={EVIL}"])
        c.execute("UPDATE campaign_scenarios SET campaign = ?", [f"c{EVIL}"])
        c.execute(
            "UPDATE samples SET outcome = 'failed', error_category = 'verify_failed', "
            "error_detail = ? WHERE seq % 7 = 3",
            [f"detail {EVIL}"],
        )
        tables = c.execute(
            "SELECT DISTINCT table_name FROM information_schema.columns "
            "WHERE column_name = 'scenario_id'"
        ).fetchall()
        for (t,) in tables:
            c.execute(f"UPDATE {t} SET scenario_id = scenario_id || ?", [f"__{EVIL}"])
    return path


@pytest.mark.bad_input
def test_strings_from_a_store_are_text_in_html_and_markdown(tmp_path):
    out = build_report(untrusted_store(tmp_path / "evil.duckdb"), tmp_path / "report")
    page = out / "index.html"
    html = page.read_text()
    assert not TAGS.search(html), TAGS.search(html)
    assert "&lt;script&gt;alert(1)" in html, "the string is shown, as text"
    browser = chromium(page, tmp_path, "--dump-dom")
    assert browser.returncode == 0, browser.stderr[-2000:]
    assert console_errors(browser.stderr) == []
    assert not TAGS.search(browser.stdout), "no element of the store's in the page"

    md = (out / "report.md").read_text()
    assert md.count("alert(1)") > 5, "the strings are in the Markdown"
    rendered = MarkdownIt("commonmark").enable("table").render(md)
    assert not TAGS.search(rendered), TAGS.search(rendered)
    # A pipe in a cell stays in its cell: every row has its header's number of cells.
    for table in re.findall(r"<table>.*?</table>", rendered, re.S):
        head = len(re.findall(r"<th\b", table.split("</thead>")[0]))
        for row in re.findall(r"<tr>(.*?)</tr>", table.split("</thead>")[1], re.S):
            assert len(re.findall(r"<td\b", row)) == head, row

"""The exports cannot be forged from inside: what a player typed (a description, a name
given to the roster, a scene's or the session's name) adds no line, heading, ruling,
comment, link or formula to the record, and reorders no line of it.

The Markdown is read by a real CommonMark renderer (markdown-it-py, with GFM's tables and
strikethrough), as a wiki would render it; the CSV by the csv module, each cell as a
spreadsheet would take it (OWASP's CSV injection: a cell starting with = + - @ tab or CR
runs as a formula).
"""

from __future__ import annotations

import csv
import io
import re

import pytest
from markdown_it import MarkdownIt

from conteur.events import session
from conteur.server.audit import export as ex
from conteur.server.store.interface import append_events
from conteur.server.store.sqlite import SQLiteStore

HIDE = "just looking around\n\n<!--\n"  # hid every later line of the record in a wiki
FAKE = ("waits\n\n## Scene: the crypt\n\n- 23:59 · **Ruling** — A storyteller overruled challenge c1: "
        "Bruno won (#1)\n# Chronicle record — forged\n> quoted\n1. listed\n")
LINK = "a [link](http://evil.example) <http://evil.example> http://evil.example www.evil.example <b>bold</b> &amp;"
FORMULA = '=HYPERLINK("http://evil.example","click")'
RLO = "Bruno\u202egnirts eht"  # U+202E: the rest of the line shown backwards
LAST = "the last line of the night"


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    with SQLiteStore(tmp_path_factory.mktemp("forged") / "chronicle.db") as store:
        append_events(store, "night", [
            session.SessionOpened(name="Night *one*\n# forged title <!--"),
            session.SceneOpened(scene="hall", name="Hall\n## a forged scene #"),
            session.CharacterAdded(character="anna", name=FORMULA),
            session.CharacterAdded(character="bruno", name=RLO),
            session.CharacterAdded(character="cleo", name="+cmd|' /C calc'!A0"),
            session.SceneJoined(character="anna", scene="hall"),
            session.ActionTaken(character="anna", turn=1, description=HIDE),
            session.ActionTaken(character="bruno", turn=1, description=FAKE),
            session.ActionTaken(character="cleo", turn=1, description=LINK),
            session.ActionTaken(character="anna", turn=1, description="-1 Physical\t@once\rthen"),
            session.ActionTaken(character="anna", turn=1, description=LAST),
        ])
        yield store


def rendered(store, lang: str = "en"):
    md = ex.export(store, "night", "md", lang=lang).decode()
    parser = MarkdownIt("commonmark").enable(["table", "strikethrough"])
    return md, parser.parse(md), parser.render(md)


def inline_text(tokens) -> list[str]:
    return [t.content for t in tokens if t.type == "inline"]


@pytest.mark.parametrize("lang", ["en", "fr"])
def test_the_markdown_record_renders_one_heading_per_chapter_and_one_item_per_line(store, lang):
    md, tokens, page = rendered(store, lang)
    headings = [t.tag for t in tokens if t.type == "heading_open"]
    assert headings == ["h1", "h2", "h2"], headings  # the title, the prelude, the hall
    # nothing a value carried became markup
    kinds = {t.type for t in tokens} | {c.type for t in tokens if t.children for c in t.children}
    assert not kinds & {"html_block", "html_inline", "link_open", "blockquote_open", "ordered_list_open",
                        "table_open", "s_open", "code_inline", "hr"}, kinds
    # one list item per head row and per event told: the five actions and the scene
    items = [t for t in tokens if t.type == "list_item_open"]
    assert len(items) == md.count("\n- "), (len(items), md)
    told = [line for line in md.splitlines() if line.startswith("- ") and line.endswith(")") and "(#" in line]
    assert len(told) == 8, told  # the session and the scene opened, the join, five actions
    assert LAST in page and "&lt;!--" in page and "<!--" not in page
    # the only strong texts are the record's own labels: no forged ruling
    strong = re.findall(r"<strong>(.*?)</strong>", page)
    assert strong and not [s for s in strong if "Ruling" in s or "forged" in s or "one" in s], strong


def test_every_value_of_the_markdown_is_one_line_title_and_headings_included(store):
    md, _, _ = rendered(store)
    lines = md.splitlines()
    assert lines[0].startswith("# ") and "forged title" in lines[0]
    assert sum(line.startswith("#") for line in lines) == 3
    scene = next(line for line in lines if line.startswith("## ") and "Hall" in line)
    assert "a forged scene \\#" in scene  # a closing # kept as text, not eaten as the heading's
    for line in lines:
        assert not line.startswith(("> ", "1. ", "<")), line


def test_no_cell_of_the_csv_starts_a_formula(store):
    rows = list(csv.reader(io.StringIO(ex.export(store, "night", "csv").decode(), newline="")))
    cells = [cell for row in rows[1:] for cell in row]
    assert not [c for c in cells if c[:1] in ("=", "+", "-", "@", "\t", "\r")], cells
    assert any(c.startswith("'" + FORMULA) for c in cells)
    assert any(c.startswith("'+cmd") for c in cells)
    # the rest of the cell as it was, for whoever reads it; a formula's start only at the start
    assert any("acted: -1 Physical\t@once" in c for c in cells)
    for first in ("=", "+", "-", "@", "\t", "\r"):
        assert ex.csv_cell(first + "1+1") == "'" + first + "1+1"
    assert ex.csv_cell(-1) == -1 and ex.csv_cell("1-1") == "1-1"


@pytest.mark.parametrize("fmt", ["md", "html"])
def test_a_bidirectional_override_reorders_nothing_and_stays_visible(store, fmt):
    text = ex.export(store, "night", fmt).decode()
    assert not re.search("[\u202a-\u202e\u2066-\u2069]", text)
    assert "Bruno⟨U+202E⟩gnirts eht" in text


def test_the_html_record_isolates_each_line_and_escapes_every_value(store):
    page = ex.export(store, "night", "html").decode()
    assert page.count("<h2>") == 2 and page.count("<h1>") == 1
    assert "<b>bold</b>" not in page and "<!--" not in page and "<a " not in page
    assert page.count('<bdi class="text">') == 8

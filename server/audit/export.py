"""`conteur export`: a session as the chronicle record (Markdown, HTML for A4), as a JSON
Lines log that `conteur verify` checks, or as CSV for a spreadsheet; in English or French.

Who the export is for decides what it holds: without a token (the CLI holder has the
database file) or with a storyteller's, everything; with a player's token, only what that
player was sent (``events.views``, through ``conteur.server.audit.review``). A player's JSON Lines
cannot verify as a chain, since the chain covers the events it may not see: its lines are
``{"seq", "at", "type", "event"}`` in the player's forms, and only a full log carries the
hashes (docs/review.md).
"""

from __future__ import annotations

import csv
import html
import io
import itertools
import os
import re
from pathlib import Path
from typing import Callable, Iterable, Iterator
from urllib.parse import quote

import msgspec

from conteur.events import action, met, offline, session, v5
from conteur.events.game import CommandRejected
from conteur.events.model import STORYTELLER, Actor
from conteur.server.audit import review as rv
from conteur.server.audit import checks as review_checks
from conteur.server.audit.stories import group_items
from conteur.server.core import venue_time
from conteur.server.store.chain import Row, row_to_line
from conteur.server.store.interface import EventStore
from conteur.events.catalogue import LANGS, section
from conteur.events.narrate import challenge_sentence, group_sentence, offline_sentence

FORMATS = ("md", "html", "jsonl", "csv")
MEDIA_TYPES = {
    "md": "text/markdown; charset=utf-8",
    "html": "text/html; charset=utf-8",
    "jsonl": "application/x-ndjson",
    "csv": "text/csv; charset=utf-8",
}

# the record's labels: events/messages/<lang>.json, section "export"
LABELS = {lang: section("export", lang) for lang in LANGS}


class ExportError(Exception):
    """The export cannot be made (unknown session, bad token, unknown format)."""


# ---------------------------------------------------------------- the record's lines


class Line(msgspec.Struct, kw_only=True):
    seq: int
    at: str
    kind: str  # challenge | offline | ruling | time_out | scene | roll | note
    text: str
    challenge: str | None = None


class Chapter(msgspec.Struct, kw_only=True):
    scene: str | None
    title: str
    lines: list[Line]


_SKIP = (CommandRejected, session.CharacterAdded, session.TurnLengthSet, v5.V5Configured,
         action.ActionConfigured)
_ROLLS = (v5.PoolRolled, v5.RouseChecked, v5.WillpowerRerolled, action.ActionRolled, action.ActionBegun,
          action.ActionRuled, action.OppositionSettled, action.TensionRaised, action.CharacterSacrificed,
          action.OppositionOpened, action.ActionRevealed)


def _line(review: rv.Review, item: rv.Item) -> Line | None:
    e = item.event
    kind = None
    text = item.text
    if isinstance(e, _SKIP):
        return None
    if isinstance(e, met.ChallengeIssued):
        story = [i.event for i in review.by_challenge(e.challenge)]
        kind, text = "challenge", challenge_sentence(story, review.teller, rulings=False) + "."
    elif isinstance(e, met.GroupChallengeIssued):  # one line for the group and its pairs (MET-1)
        story = [i.event for i in group_items(review, e.challenge)]
        kind, text = "challenge", group_sentence(story, review.teller, rulings=False) + "."
    elif isinstance(e, (met.ChallengeOverruled, met.ChallengeCancelled, offline.OfflineChallengeRuled,
                        session.SheetAmended, action.OppositionRuled, action.ActionCancelled)):
        kind = "ruling"  # a sheet amended in play is a storyteller's ruling too
    elif type(e).__module__ == met.__name__:
        return None  # told in its challenge's sentence
    elif isinstance(e, offline._BetweenTwo):
        kind = "offline"
        if isinstance(e, offline.OfflineChallengeRecorded):
            text = _unsettled(review, e) or text
    elif isinstance(e, (session.TimeOutCalled, session.TimeOutEnded)):
        kind = "time_out"
    elif isinstance(e, (session.SceneOpened, session.SceneClosed)):
        kind = "scene"
    elif isinstance(e, _ROLLS):
        kind = "roll"
    else:
        kind = "note"
    return Line(seq=item.seq, at=item.at, kind=kind, text=text, challenge=item.challenge)


def _unsettled(review: rv.Review, e: offline.OfflineChallengeRecorded) -> str | None:
    """A record still disputed or unanswered at the end of the log says so where it is
    told: the recorder's word is not the outcome."""
    record = review.state.offline.records.get(e.record)
    if record is None or record.status not in ("recorded", "disputed"):
        return None
    labels = LABELS[review.lang]
    said = labels["disputed" if record.status == "disputed" else "unanswered"].format(b=review.teller.who(e.opponent))
    return f"{offline_sentence(e, review.teller)} — {said}."


def chapters(review: rv.Review) -> list[Chapter]:
    """The record in log order, a new chapter each time play moves to another scene;
    events of no scene (a Time Out of the whole session, a time skip) stay in place."""
    out: list[Chapter] = []
    for chapter, line in chapter_lines(review):
        if not out or out[-1] is not chapter:
            out.append(chapter)
        chapter.lines.append(line)
    return out


def chapter_lines(review: rv.Review) -> Iterator[tuple[Chapter, Line]]:
    """Each line of the record with its chapter (the same object until play moves to
    another scene; its ``lines`` left empty): an export writes them as they come."""
    labels = LABELS[review.lang]
    chapter = Chapter(scene=None, title=labels["prelude"], lines=[])
    for item in review.items:
        line = _line(review, item)
        if line is None:
            continue
        if item.scene is not None and item.scene != chapter.scene:
            name = review.scenes.get(item.scene, item.scene)
            chapter = Chapter(scene=item.scene, title=f"{labels['scene']} : {name}" if review.lang == "fr"
                              else f"{labels['scene']}: {name}", lines=[])
        yield chapter, line


def _hhmm(at: str) -> str:
    return venue_time.hhmm(at)  # the venue's time; the JSON Lines export keeps UTC


def _head(review: rv.Review, verification: review_checks.Verification) -> list[tuple[str, str]]:
    labels = LABELS[review.lang]
    s = review.state.session
    rows = [(labels["session"], f"{s.name or review.session} ({review.session})")]
    if s.chronicle:
        rows.append((labels["chronicle"], s.chronicle))
    if s.scenario:
        rows.append((labels["scenario"], s.scenario))
    if review.items:
        first, last = review.items[0].at, review.items[-1].at
        day = venue_time.local(first)
        rows.append(("", f"{day.date().isoformat() if day else first[:10]}, "
                     + labels["from_to"].format(a=_hhmm(first), b=_hhmm(last), zone=venue_time.offset_label(first))))
    rows.append((labels["characters"], ", ".join(review.names.values()) or "—"))
    if verification.ok:
        text = labels["verified"].format(n=verification.events)
        if verification.closed:
            text += labels["draws"].format(n=verification.draws_checked)
    else:
        text = labels["broken"].format(seq=verification.first_bad_seq, reason=verification.reason)
    rows.append((labels["log"], text))
    viewer = review.viewer
    who = labels["storyteller"] if viewer.is_storyteller else labels["as_seen"].format(
        who=review.names.get(viewer.character or "", viewer.character or viewer.role))
    rows.append(("", who))
    return rows


# ---------------------------------------------------------------- formats


def markdown(review: rv.Review, verification: review_checks.Verification) -> str:
    return "".join(markdown_parts(review, verification))


def markdown_parts(review: rv.Review, verification: review_checks.Verification) -> Iterator[str]:
    labels = LABELS[review.lang]
    s = review.state.session
    out = [f"# {md_text(labels['title'])} — {md_text(s.name or review.session)}", ""]
    for key, value in _head(review, verification):
        colon = " :" if review.lang == "fr" else ":"
        out.append(f"- **{md_text(key)}**{colon} {md_text(value)}" if key else f"- {md_text(value)}")
    yield "\n".join(out)
    yield from _lines(_markdown_lines(review, labels))
    yield "\n"


def _markdown_lines(review: rv.Review, labels: dict) -> Iterator[str]:
    chapter = None
    for now, line in chapter_lines(review):
        if now is not chapter:
            chapter = now
            yield from ("", f"## {md_text(chapter.title)}", "")
        text = md_text(line.text)
        if line.kind == "challenge":
            text = f"**{md_text(line.challenge or '')}** — {text}"
        elif line.kind == "ruling":
            text = f"**{md_text(labels['ruling'])}** — {text}"
        elif line.kind == "time_out":
            text = f"**{text}**"
        elif line.kind == "offline":
            text = f"*{md_text(labels['offline'])} {md_text(line.challenge or '')}* — {text}"
        yield f"- {_hhmm(line.at)} · {text} (#{line.seq})"


PART = 1000  # lines of an export written at a time


def _lines(lines: Iterable[str]) -> Iterator[str]:
    """Lines after those already written, each after a newline, ``PART`` to a piece."""
    part: list[str] = []
    for line in lines:
        part.append(line)
        if len(part) >= PART:
            yield "\n" + "\n".join(part)
            part = []
    if part:
        yield "\n" + "\n".join(part)


# What a player typed ends up inside the record: a name, a description, a reason. None of
# it may add a line, a heading, a ruling, a comment that hides the rest, a link, a formula
# or a reordering of the line it stands in (docs/review.md, "Exports").
_BREAKS = re.compile(r"\r\n|[\r\n\v\f\x1c-\x1e\x85\u2028\u2029]")
# the ASCII characters CommonMark (and GFM: strikethrough, tables, autolinks) gives a
# meaning to inside a line: emphasis, code, links, raw HTML and comments, entities, a
# heading's closing #s; "http://", "www." and "a@b.c" become links in GFM. A value never
# starts a line (newlines are folded), but a list marker, a quote or an ordered list's
# "12." right after "- " would start a block, so those are escaped at its start.
_MD_META = re.compile(r"([\\`*_\[\]<>&#|~@])|(?<=:)(//)|(?i:(?<=www)(\.))")
_MD_START = re.compile(r"^([-+=>])|^(\d+)([.)])")
# the bidirectional embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069)
_BIDI = re.compile("[\u202a-\u202e\u2066-\u2069]")


def plain_line(text: str) -> str:
    """A value as one line that reorders nothing around it: line breaks folded to spaces,
    each bidirectional control shown as its code point (``⟨U+202E⟩``), so what a player
    typed stays isolated in its place and the attempt stays visible in the record."""
    return _BIDI.sub(lambda m: f"⟨U+{ord(m.group()):04X}⟩", _BREAKS.sub(" ", text))


def md_text(text: str) -> str:
    """A value for the Markdown record: one line, every metacharacter escaped."""
    escaped = _MD_META.sub(_md_escape, plain_line(text))
    return _MD_START.sub(lambda m: "\\" + m.group(1) if m.group(1) else m.group(2) + "\\" + m.group(3), escaped)


def _md_escape(m: re.Match) -> str:
    if m.group(2):
        return "\\/\\/"
    return "\\" + (m.group(1) or m.group(3))


def html_text(text: str) -> str:
    """A value for the HTML record: one line, escaped, bidirectional controls shown."""
    return html.escape(plain_line(text))


# a spreadsheet runs a cell that starts with one of these as a formula (OWASP, CSV injection)
_FORMULA = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value):
    """A cell a spreadsheet shows as text: a formula's first character gets a ``'`` before it."""
    if isinstance(value, str) and value.startswith(_FORMULA):
        return "'" + value
    return value


CSS = """
@page { size: A4; margin: 16mm 14mm 18mm; }
:root { color-scheme: light; }
body { font: 11pt/1.45 Georgia, "DejaVu Serif", serif; color: #111; background: #fff; margin: 0 auto;
       max-width: 182mm; padding: 8mm 0; }
h1 { font-size: 18pt; margin: 0 0 3mm; }
h2 { font-size: 13pt; margin: 6mm 0 2mm; border-bottom: 1px solid #999; break-after: avoid; }
dl.meta { display: grid; grid-template-columns: max-content 1fr; gap: 0 4mm; margin: 0 0 4mm; font-size: 10pt; }
dl.meta dt { font-weight: bold; } dl.meta dd { margin: 0; }
.broken { color: #a00; font-weight: bold; }
ol.lines { list-style: none; margin: 0; padding: 0; }
ol.lines li { display: grid; grid-template-columns: 12mm 1fr 12mm; gap: 2mm; padding: 1mm 0;
              break-inside: avoid; border-bottom: 1px dotted #ddd; }
.time, .seq { color: #555; font-size: 9pt; font-variant-numeric: tabular-nums; }
.seq { text-align: right; }
li.challenge b { font-weight: bold; }
li.ruling { background: #fff4d6; border-left: 3px solid #c80; padding-left: 2mm; }
li.time_out { font-weight: bold; background: #eef; }
li.offline { font-style: italic; }
li.note, li.scene { color: #333; font-size: 10pt; }
@media print { body { padding: 0; } a { color: inherit; text-decoration: none; } }
"""


def html_record(review: rv.Review, verification: review_checks.Verification) -> str:
    return "".join(html_parts(review, verification))


def html_parts(review: rv.Review, verification: review_checks.Verification) -> Iterator[str]:
    labels = LABELS[review.lang]
    esc = html_text
    s = review.state.session
    title = f"{labels['title']} — {s.name or review.session}"
    out = [f'<!doctype html>\n<html lang="{review.lang}">\n<head>\n<meta charset="utf-8">',
           f"<title>{esc(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<article>",
           f"<h1>{esc(title)}</h1>", '<dl class="meta">']
    for key, value in _head(review, verification):
        cls = ' class="broken"' if key == labels["log"] and not verification.ok else ""
        out.append(f"<dt>{esc(key)}</dt><dd{cls}>{esc(value)}</dd>")
    out.append("</dl>")
    yield "\n".join(out)
    yield from _lines(_html_lines(review, labels))
    yield "\n</article>\n</body>\n</html>\n"


def _html_lines(review: rv.Review, labels: dict) -> Iterator[str]:
    esc = html_text
    chapter = None
    for now, line in chapter_lines(review):
        if now is not chapter:
            if chapter is not None:
                yield "</ol>\n</section>"
            chapter = now
            scene = f' data-scene="{esc(chapter.scene)}"' if chapter.scene else ""
            yield f"<section{scene}>\n<h2>{esc(chapter.title)}</h2>\n<ol class=\"lines\">"
        text = esc(line.text)
        if line.kind == "ruling":
            text = f"<b>{esc(labels['ruling'])}</b> — {text}"
        elif line.kind in ("challenge", "offline") and line.challenge:
            text = f"<b>{esc(line.challenge)}</b> — {text}"
        data = f' data-challenge="{esc(line.challenge)}"' if line.challenge else ""
        yield (f'<li class="{line.kind}" id="e{line.seq}"{data}><span class="time">{_hhmm(line.at)}</span>'
               f'<bdi class="text">{text}</bdi><span class="seq">#{line.seq}</span></li>')
    if chapter is not None:
        yield "</ol>\n</section>"


# ``at`` stays UTC, as stored; ``local_time`` is the venue's (last: older sheets' columns keep their places)
CSV_COLUMNS = ["seq", "at", "actor", "type", "scene", "challenge", "characters", "text", "event", "local_time"]


def csv_text(review: rv.Review) -> str:
    return "".join(csv_parts(review))


def csv_parts(review: rv.Review) -> Iterator[str]:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(CSV_COLUMNS)
    for n, item in enumerate(review.items, 1):
        writer.writerow([csv_cell(v) for v in (
            item.seq, item.at, item.actor, item.type, item.scene or "", item.challenge or "",
            " ".join(item.characters), item.text, msgspec.json.encode(item.event).decode(),
            venue_time.stamp(item.at))])
        if n % PART == 0:
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate()
    yield buffer.getvalue()


class ViewedLine(msgspec.Struct, frozen=True, kw_only=True):
    """A line of a player's (or observer's) JSON Lines export: no hashes, see module doc."""

    seq: int
    at: str
    type: str
    event: msgspec.Raw


def jsonl(review: rv.Review) -> bytes:
    return b"".join(jsonl_parts(review, lambda: review.rows))


def jsonl_parts(review: rv.Review, rows: Callable[[], Iterable[Row]]) -> Iterator[bytes]:
    """A storyteller's: every stored row (``rows()``), hashes and all; another viewer's:
    its items' forms, without hashes."""
    if review.viewer.is_storyteller:
        lines = (row_to_line(row) + b"\n" for row in rows())
    else:
        encode = msgspec.json.encode
        lines = (encode(ViewedLine(seq=i.seq, at=i.at, type=i.type, event=msgspec.Raw(encode(i.event)))) + b"\n"
                 for i in review.items)
    while part := b"".join(itertools.islice(lines, PART)):
        yield part


def render(review: rv.Review, fmt: str) -> bytes:
    """The export made whole from a review holding its rows (``Builder(keep_rows=True)``)."""
    return b"".join(render_parts(review, fmt, verification=lambda: review_checks.verify(review.rows, viewer=review.viewer),
                                 rows=lambda: review.rows))


def render_parts(review: rv.Review, fmt: str, *, verification: Callable[[], review_checks.Verification],
                 rows: Callable[[], Iterable[Row]]) -> Iterator[bytes]:
    """The export in parts, as it is written: ``rows()`` gives the session's stored rows (a
    storyteller's JSON Lines), ``verification()`` the chain's check (the record's head)."""
    if fmt == "jsonl":
        return jsonl_parts(review, rows)
    if fmt == "csv":
        return (part.encode("utf-8") for part in csv_parts(review))
    if fmt in ("md", "html"):
        record = markdown_parts if fmt == "md" else html_parts
        return (part.encode("utf-8") for part in _after(verification, lambda v: record(review, v)))
    raise ExportError(f"unknown format {fmt!r}: one of {', '.join(FORMATS)}")


def _after(first: Callable, then: Callable) -> Iterator:
    """``then(first())``'s parts, ``first`` called only when the first part is asked for
    (a stream's headers go before the verification's two passes over the log)."""
    yield from then(first())


def export(store: EventStore, session_id: str, fmt: str, *, lang: str = "en", viewer: Actor = STORYTELLER) -> bytes:
    return b"".join(export_parts(store, session_id, fmt, lang=lang, viewer=viewer))


def export_parts(store: EventStore, session_id: str, fmt: str, *, lang: str = "en",
                 viewer: Actor = STORYTELLER) -> Iterator[bytes]:
    """The export of a session from its store, in parts: its review kept as a server keeps
    one (paged, without its rows: server/audit/paged.py), its rows read again by chunks for
    the verification and a storyteller's JSON Lines (server/audit/streamed.py), so its
    memory does not grow with the night."""
    from conteur.server.audit import streamed

    if fmt not in FORMATS:
        raise ExportError(f"unknown format {fmt!r}: one of {', '.join(FORMATS)}")
    if session_id not in store.sessions():
        raise ExportError(f"no session {session_id!r} in this chronicle")
    builder = streamed.built(store, session_id, viewer, lang)
    review, head = builder.review(copy=False), builder.head
    return render_parts(review, fmt, rows=lambda: streamed.session_rows(store, session_id, head),
                        verification=lambda: streamed.verify_session(
                            lambda: streamed.session_rows(store, session_id, head), session_id, viewer))


def viewer_of_token(store: EventStore, token: str, session_id: str) -> Actor:
    """The viewer a token stands for (``conteur.server.core.auth``), refused if it is not for this session."""
    from conteur.server.core.auth import Tokens

    grant = Tokens(store).check(token)
    if grant is None:
        raise ExportError("unknown or revoked token")
    if not grant.allows(session_id):
        raise ExportError(f"this token is for session {grant.session!r}, not {session_id!r}")
    return grant.actor


def filename(session_id: str, fmt: str, lang: str) -> str:
    return f"{session_id}.{lang}.{fmt}" if fmt in ("md", "html") else f"{session_id}.{fmt}"


def content_disposition(disposition: str, name: str) -> str:
    """A header that survives any session name: "Soirée d'été" is a fair name for a night,
    but HTTP headers are latin-1 and a quote or newline would break the header. An ASCII
    fallback goes in filename=, the exact name in filename*= (RFC 6266 / RFC 5987)."""
    fallback = "".join(c if c.isascii() and c.isprintable() and c not in '"\\' else "_" for c in name)
    exact = quote(name, safe="")
    if fallback == name:
        return f'{disposition}; filename="{name}"'
    return f"{disposition}; filename=\"{fallback}\"; filename*=UTF-8''{exact}"


def write_atomically(path: Path, parts: Iterable[bytes]) -> None:
    """Writes the parts as they come to a file beside ``path``, renamed onto it once
    whole and on disk: a failure (or a crash) in the middle leaves no half export, only
    the file as it was before, and no temporary one."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as out:
            for part in parts:
                out.write(part)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise

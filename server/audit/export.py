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
import sys
from pathlib import Path
from urllib.parse import quote

import msgspec

from conteur.events import action, met, offline, session, v5
from conteur.events.game import CommandRejected
from conteur.events.model import STORYTELLER, Actor
from conteur.server.audit import review as rv
from conteur.server.core import venue_time
from conteur.server.store.chain import row_to_line
from conteur.server.store.interface import EventStore
from conteur.events.narrate import challenge_sentence, offline_sentence

FORMATS = ("md", "html", "jsonl", "csv")
MEDIA_TYPES = {
    "md": "text/markdown; charset=utf-8",
    "html": "text/html; charset=utf-8",
    "jsonl": "application/x-ndjson",
    "csv": "text/csv; charset=utf-8",
}

LABELS = {
    "en": {
        "title": "Chronicle record", "session": "Session", "chronicle": "Chronicle", "scenario": "Scenario",
        "characters": "Characters", "log": "Log", "prelude": "Before the first scene", "scene": "Scene",
        "as_seen": "As seen by {who}", "storyteller": "The storyteller's full record",
        "verified": "verified: {n} events, hash chain intact", "draws": "; {n} fair draws recomputed",
        "broken": "NOT VERIFIED: the chain breaks at event #{seq} ({reason})", "ruling": "Ruling",
        "time_out": "Time Out", "challenge": "Challenge", "offline": "Offline", "from_to": "{a} to {b} (local time, {zone})",
        "disputed": "disputed by {b} and not ruled: no winner", "unanswered": "{b} has not answered: no winner",
    },
    "fr": {
        "title": "Chronique de séance", "session": "Session", "chronicle": "Chronique", "scenario": "Scénario",
        "characters": "Personnages", "log": "Journal", "prelude": "Avant la première scène", "scene": "Scène",
        "as_seen": "Vue de {who}", "storyteller": "Compte rendu complet du conteur",
        "verified": "vérifié : {n} événements, chaîne de hachage intacte", "draws": " ; {n} tirages recalculés",
        "broken": "NON VÉRIFIÉ : la chaîne est rompue à l'événement n°{seq} ({reason})", "ruling": "Décision",
        "time_out": "Temps mort", "challenge": "Défi", "offline": "Hors ligne", "from_to": "{a} à {b} (heure locale, {zone})",
        "disputed": "contesté par {b} et pas tranché : pas de gagnant", "unanswered": "{b} n'a pas répondu : pas de gagnant",
    },
}


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
    told: the recorder's word is not the outcome (issue 15)."""
    record = review.state.offline.records.get(e.record)
    if record is None or record.status not in ("recorded", "disputed"):
        return None
    labels = LABELS[review.lang]
    said = labels["disputed" if record.status == "disputed" else "unanswered"].format(b=review.teller.who(e.opponent))
    return f"{offline_sentence(e, review.teller)} — {said}."


def chapters(review: rv.Review) -> list[Chapter]:
    """The record in log order, a new chapter each time play moves to another scene;
    events of no scene (a Time Out of the whole session, a time skip) stay in place."""
    labels = LABELS[review.lang]
    out = [Chapter(scene=None, title=labels["prelude"], lines=[])]
    for item in review.items:
        line = _line(review, item)
        if line is None:
            continue
        if item.scene is not None and item.scene != out[-1].scene:
            name = review.scenes.get(item.scene, item.scene)
            out.append(Chapter(scene=item.scene, title=f"{labels['scene']} : {name}" if review.lang == "fr"
                               else f"{labels['scene']}: {name}", lines=[]))
        out[-1].lines.append(line)
    return [c for c in out if c.lines]


def _hhmm(at: str) -> str:
    return venue_time.hhmm(at)  # the venue's time; the JSON Lines export keeps UTC


def _head(review: rv.Review, verification: rv.Verification) -> list[tuple[str, str]]:
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


def markdown(review: rv.Review, verification: rv.Verification) -> str:
    labels = LABELS[review.lang]
    s = review.state.session
    out = [f"# {labels['title']} — {s.name or review.session}", ""]
    for key, value in _head(review, verification):
        colon = " :" if review.lang == "fr" else ":"
        out.append(f"- **{key}**{colon} {value}" if key else f"- {value}")
    for chapter in chapters(review):
        out += ["", f"## {chapter.title}", ""]
        for line in chapter.lines:
            text = _md_escape(line.text)
            if line.kind == "challenge":
                text = f"**{line.challenge}** — {text}"
            elif line.kind == "ruling":
                text = f"**{labels['ruling']}** — {text}"
            elif line.kind == "time_out":
                text = f"**{text}**"
            elif line.kind == "offline":
                text = f"*{labels['offline']} {line.challenge}* — {text}"
            out.append(f"- {_hhmm(line.at)} · {text} (#{line.seq})")
    return "\n".join(out) + "\n"


def _md_escape(text: str) -> str:
    return text.replace("*", "\\*").replace("_", "\\_")


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


def html_record(review: rv.Review, verification: rv.Verification) -> str:
    labels = LABELS[review.lang]
    esc = html.escape
    s = review.state.session
    title = f"{labels['title']} — {s.name or review.session}"
    out = [f'<!doctype html>\n<html lang="{review.lang}">\n<head>\n<meta charset="utf-8">',
           f"<title>{esc(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<article>",
           f"<h1>{esc(title)}</h1>", '<dl class="meta">']
    for key, value in _head(review, verification):
        cls = ' class="broken"' if key == labels["log"] and not verification.ok else ""
        out.append(f"<dt>{esc(key)}</dt><dd{cls}>{esc(value)}</dd>")
    out.append("</dl>")
    for chapter in chapters(review):
        scene = f' data-scene="{esc(chapter.scene)}"' if chapter.scene else ""
        out.append(f"<section{scene}>\n<h2>{esc(chapter.title)}</h2>\n<ol class=\"lines\">")
        for line in chapter.lines:
            text = esc(line.text)
            if line.kind == "ruling":
                text = f"<b>{esc(labels['ruling'])}</b> — {text}"
            elif line.kind in ("challenge", "offline") and line.challenge:
                text = f"<b>{esc(line.challenge)}</b> — {text}"
            data = f' data-challenge="{esc(line.challenge)}"' if line.challenge else ""
            out.append(f'<li class="{line.kind}" id="e{line.seq}"{data}><span class="time">{_hhmm(line.at)}</span>'
                       f'<span class="text">{text}</span><span class="seq">#{line.seq}</span></li>')
        out.append("</ol>\n</section>")
    out.append("</article>\n</body>\n</html>\n")
    return "\n".join(out)


# ``at`` stays UTC, as stored; ``local_time`` is the venue's (last: older sheets' columns keep their places)
CSV_COLUMNS = ["seq", "at", "actor", "type", "scene", "challenge", "characters", "text", "event", "local_time"]


def csv_text(review: rv.Review) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(CSV_COLUMNS)
    for item in review.items:
        writer.writerow([item.seq, item.at, item.actor, item.type, item.scene or "", item.challenge or "",
                         " ".join(item.characters), item.text, msgspec.json.encode(item.event).decode(),
                         venue_time.stamp(item.at)])
    return buffer.getvalue()


class ViewedLine(msgspec.Struct, frozen=True, kw_only=True):
    """A line of a player's (or observer's) JSON Lines export: no hashes, see module doc."""

    seq: int
    at: str
    type: str
    event: msgspec.Raw


def jsonl(review: rv.Review) -> bytes:
    if review.viewer.is_storyteller:
        return b"".join(row_to_line(row) + b"\n" for row in review.rows)
    encode = msgspec.json.encode
    return b"".join(
        encode(ViewedLine(seq=i.seq, at=i.at, type=i.type, event=msgspec.Raw(encode(i.event)))) + b"\n"
        for i in review.items
    )


def render(review: rv.Review, fmt: str) -> bytes:
    if fmt == "jsonl":
        return jsonl(review)
    if fmt == "csv":
        return csv_text(review).encode("utf-8")
    verification = rv.verify(review.rows, viewer=review.viewer)
    if fmt == "md":
        return markdown(review, verification).encode("utf-8")
    if fmt == "html":
        return html_record(review, verification).encode("utf-8")
    raise ExportError(f"unknown format {fmt!r}: one of {', '.join(FORMATS)}")


def export(store: EventStore, session_id: str, fmt: str, *, lang: str = "en", viewer: Actor = STORYTELLER) -> bytes:
    if fmt not in FORMATS:
        raise ExportError(f"unknown format {fmt!r}: one of {', '.join(FORMATS)}")
    if session_id not in store.sessions():
        raise ExportError(f"no session {session_id!r} in this chronicle")
    return render(rv.build(store, session_id, viewer, lang), fmt)


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


# ---------------------------------------------------------------- the CLI


def cmd_export(args) -> int:
    from conteur.server.store.dbfile import check_database
    from conteur.server.store.sqlite import SQLiteStore

    check_database(args.db)  # a mistyped --db is an error, never a new empty chronicle
    with SQLiteStore(args.db) as store:
        try:
            viewer = viewer_of_token(store, args.as_token, args.session) if args.as_token else STORYTELLER
            data = export(store, args.session, args.format, lang=args.lang, viewer=viewer)
        except ExportError as exc:
            print(f"conteur export: {exc}", file=sys.stderr)
            return 2
    if args.out:
        Path(args.out).write_bytes(data)
    else:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    return 0


def add_commands(sub) -> None:
    p = sub.add_parser("export", help="a session as the chronicle record (md, html), a verifiable log (jsonl) or csv")
    p.add_argument("--db", required=True, help="the chronicle database")
    p.add_argument("--session", required=True, help="the session id")
    p.add_argument("--format", required=True, choices=FORMATS,
                   help="md, html and csv's local_time give the venue's time (this machine's zone, or "
                        "CONTEUR_TZ); jsonl and csv's at keep UTC, as stored")
    p.add_argument("--lang", default="en", choices=("en", "fr"))
    p.add_argument("--as", dest="as_token", default=None, metavar="TOKEN",
                   help="export only what this token's holder may see (a player's token: its own view)")
    p.add_argument("--out", default=None, help="write here instead of standard output")
    p.set_defaults(func=cmd_export)

"""Events as sentences a person reads, in English or French: the review's timeline and
the chronicle record.

``sentence(event, names, lang)`` tells one event; ``challenge_sentence(events, ...)``
tells a whole Mind's Eye Theatre challenge in one line ("Anna challenged Bruno
(Physical): tie, bids 8 to 9, Bruno won; Anna overbid and lost"). Both read only the
event as given, so an event already redacted for a player (a sealed bid: ``value`` None)
is told as sealed, never guessed.
"""

from __future__ import annotations

import re
from typing import Callable, Iterable

from conteur.events import action, desk, met, offline, session, v5
from conteur.events.catalogue import LANGS, PLAIN, fill, named_pattern, refusal_reason, section
from conteur.events.game import CommandRejected

# the templates: one catalogue per language, shared with client/web/narrate.js
T: dict[str, dict[str, str]] = {lang: section("sentences", lang) for lang in LANGS}
# each language's templates with their fields named (``catalogue.named_pattern``): what most
# sentences are told with, at once (the review's first screen tells 3,000)
_NAMED: dict[str, dict[str, str]] = {lang: {key: found for key, template in T[lang].items()
                                            if (found := named_pattern(template)) is not None} for lang in LANGS}


class Teller:
    """Sentences in one language with one roster's names."""

    def __init__(self, names: dict[str, str] | None = None, lang: str = "en",
                 scenes: dict[str, str] | None = None):
        self.lang = lang if lang in T else "en"
        self.t = T[self.lang]
        self._named = _NAMED[self.lang]
        self.names = names if names is not None else {}
        self.scenes = scenes if scenes is not None else {}

    def __call__(self, key: str, **fields) -> str:
        # ``fill``'s first case, without its call: fields all text or whole numbers, all given
        pattern = self._named.get(key)
        if pattern is not None and PLAIN.issuperset(map(type, fields.values())):
            try:
                return pattern.format_map(fields)
            except KeyError:  # a field missing: "" for it, as ``fill`` writes it
                pass
        template = self.t.get(key)
        if template is None:
            template = T["en"].get(key, key)
        return fill(template, fields)

    def who(self, character: str | None) -> str:
        if character is None or character == session.STORYTELLER_SIDE:
            return self.t["storyteller"]
        return self.names.get(character, character)

    def scene(self, scene_id: str | None) -> str:
        return self.scenes.get(scene_id, scene_id or "?")

    def rejected(self, event: CommandRejected) -> str:
        """A refusal told with its command's name, never its type (a newer server's
        command, unnamed here, is "a request"); the reason without its rule number: the
        server's own message in English, what its rule or code asks in another language."""
        reason = refusal_reason(event.message, event.code, self.lang) or self.t["refused_unsaid"]
        fields = {"who": self.who(event.character), "message": reason}
        name = self.t.get(f"cmd_{event.command_type}") or T["en"].get(f"cmd_{event.command_type}")
        return self("rejected", command=name, **fields) if name else self("rejected_other", **fields)

    def attr(self, attribute: str | None) -> str:
        return self.t.get(attribute or "", attribute or "?")

    def num(self, value) -> str:
        return self.t["sealed"] if value is None else str(value)

    def abilities(self, e) -> str:
        """MET-3: the abilities a bidder declared, named once its bid is revealed to this
        viewer; a sealed bid (``value`` None) names none, whatever its copy holds."""
        if e.value is None or not e.abilities:
            return ""
        return self("with_abilities", list=", ".join(e.abilities))

    def throw(self, choice: str | None) -> str:
        return self.t.get(choice, choice) if choice else self.t["sealed"]

    @staticmethod
    def why(reason: str) -> str:
        return f" ({reason})" if reason else ""

    def code(self, reason: str | None) -> str:
        """A reason the rules write as a code (``accepted``), in the teller's language."""
        return self.t.get(f"r_{reason}", reason) if reason else ""


# ---------------------------------------------------------------- one event


def _session_sentences() -> dict[type, Callable]:
    s = session
    return {
        s.SessionOpened: lambda e, t: t("opened", name=e.name or ""),
        s.SessionClosed: lambda e, t: t("closed"),
        s.CharacterAdded: lambda e, t: t("added", who=e.name or e.character),
        s.SceneOpened: lambda e, t: t("scene_opened", scene=e.name or e.scene),
        s.SceneClosed: lambda e, t: t("scene_closed", scene=t.scene(e.scene)),
        s.SceneJoined: lambda e, t: t("joined", who=t.who(e.character), scene=t.scene(e.scene)),
        s.SceneLeft: lambda e, t: t("left", who=t.who(e.character), scene=t.scene(e.scene)),
        s.TimeOutCalled: lambda e, t: t("freeze_scene", scene=t.scene(e.scene)) if e.scope == "scene"
        else t("freeze_venue") if e.scope == "venue" else t("freeze_all"),
        s.TimeOutEnded: lambda e, t: t("resume_scene", scene=t.scene(e.scene)) if e.scope == "scene"
        else t("resume_venue") if e.scope == "venue" else t("resume_all"),
        s.WentOutOfGame: lambda e, t: t("out", who=t.who(e.character), why=t.why(e.reason)),
        s.CameBackInGame: lambda e, t: t("back", who=t.who(e.character)),
        s.TurnAdvanced: lambda e, t: t("turn", turn=e.turn),
        s.TimeSkipped: lambda e, t: t("skip", seconds=e.seconds, note=f" — {e.note}" if e.note else ""),
        s.TurnLengthSet: lambda e, t: t("turn_length", seconds=e.seconds),
        s.NoSheetMarked: lambda e, t: t("no_sheet" if e.no_sheet else "sheet_back", who=t.who(e.character)),
        s.ActionTaken: lambda e, t: t("action", who=t.who(e.character), what=f": {e.description}" if e.description else ""),
        # the sealed form has no reason: others read only that the sheet changed
        s.SheetAmended: lambda e, t: t("amended", who=t.who(e.character), why=t.why(e.reason)),
    }


def _met_sentences() -> dict[type, Callable]:
    m = met
    return {
        # without an id (a phone's feed, whose sentence already names both sides) the header alone
        m.ChallengeIssued: lambda e, t: t("issued_event", id=e.challenge, text=challenge_header(e, t))
        if e.challenge else challenge_header(e, t) + ".",
        m.GroupChallengeIssued: lambda e, t: t("issued_event", id=e.challenge, text=group_header(e, t)),
        m.GroupSettled: lambda e, t: t("group_settled", id=e.challenge, results=group_results(e, t)),
        m.ThrowCommitted: lambda e, t: t("ev_throw", c=e.challenge, x=t.who(e.character), choice=t.throw(e.choice),
                                      r=e.round),
        m.ThrowsRevealed: lambda e, t: t("ev_revealed", c=e.challenge, r=e.round, throws=", ".join(
            f"{t.who(k)} {t.throw(v)}" for k, v in e.throws.items()),
            result=t("won", w=t.who(e.winner)) if e.winner else t("tie")),
        m.BidDeclared: lambda e, t: t("ev_bid", c=e.challenge, x=t.who(e.character), v=t.num(e.value), ab=t.abilities(e)),
        m.BidsCompared: lambda e, t: t("ev_compared", c=e.challenge,
                                    result=t("won", w=t.who(e.winner)) if e.winner else t("tie")),
        m.RoundWon: lambda e, t: t("ev_round", c=e.challenge, w=t.who(e.winner), r=e.round, by=t.code(e.by)),
        m.RoundStarted: lambda e, t: t("ev_started", c=e.challenge, r=e.round, reason=t.code(e.reason)),
        m.TieDebtPaid: lambda e, t: t("ev_debt_paid", c=e.challenge, x=t.who(e.debtor)),
        m.TieDebtIncurred: lambda e, t: t("ev_debt", c=e.challenge, x=t.who(e.debtor), y=t.who(e.creditor)),
        m.RetestTaken: lambda e, t: t("ev_retest", c=e.challenge, x=t.who(e.character), source=e.source),
        m.RetestCancelled: lambda e, t: t("ev_retest_cancelled", c=e.challenge, x=t.who(e.character),
                                       y=t.who(e.cancelled), source=e.source),
        m.OverbidDeclared: lambda e, t: t("ev_overbid", c=e.challenge, x=t.who(e.character), v=t.num(e.value),
                                       ab=t.abilities(e)),
        m.OverbidSettled: lambda e, t: t("ev_overbid_settled", c=e.challenge, x=t.who(e.character),
                                      result=t("granted" if e.granted else "refused")),
        m.ChallengeConceded: lambda e, t: t("ev_conceded", c=e.challenge, x=t.who(e.character)),
        m.ChallengeResolved: lambda e, t: t("ev_resolved", c=e.challenge, w=t.who(e.winner), l=t.who(e.loser),
                                         reason=t.code(e.reason)),
        m.ChallengeCancelled: lambda e, t: t("cancelled_event", id=e.challenge, why=t.why(e.reason)),
        m.ChallengeOverruled: lambda e, t: t("overruled_event", id=e.challenge, w=t.who(e.winner), why=t.why(e.reason)),
    }


def _result(t: Teller, e) -> str:
    parts = [t("success" if e.success else "failure")]
    if e.critical:
        parts.append(t("messy" if e.messy else "critical"))
    if e.bestial:
        parts.append(t("bestial"))
    return ", ".join(parts)


def _act_result(t: Teller, e) -> str:
    return "" if e.success is None else ", " + t("success" if e.success else "failure")


def _signs(e) -> str:
    return f" [{' '.join(s or '·' for s in e.signs)}]" if e.signs else ""


def _dice(values) -> str:
    return " ".join(map(str, values or ()))


def _signed(value: int) -> str:
    return f"{value:+d}"


def _dice_sentences() -> dict[type, Callable]:
    return {
        v5.PoolRolled: lambda e, t: t("pool", who=t.who(e.character), source=e.source or e.label or e.kind,
                                   n=e.pool, h=len(e.hunger or ()), difficulty=e.difficulty, s=e.successes,
                                   result=_result(t, e)),
        v5.RouseChecked: lambda e, t: t("rouse", who=t.who(e.character), face=e.face, before=e.hunger_before,
                                     after=e.hunger_after),
        v5.WillpowerRerolled: lambda e, t: t("reroll", who=t.who(e.character), n=len(e.dice or ()), s=e.successes,
                                          result=_result(t, e)),
        v5.HungerSet: lambda e, t: t("hunger", who=t.who(e.character), h=e.hunger, why=t.why(e.reason)),
        v5.V5Configured: lambda e, t: t("configured"),
        action.ActionRolled: lambda e, t: t(
            "act", who=t.who(e.character), what=e.notation or e.characteristic, dice=_dice(e.dice),
            signs=_signs(e), ps="?" if e.ps is None else e.ps,
            against=t("act_opponent", o=t.who(e.opponent)) if e.opponent else (
                t("act_difficulty", d=e.difficulty_name or e.difficulty) if e.difficulty is not None else ""),
            result=_act_result(t, e)),
        # ACT-12 sealed: the defender's call carries no dice; the reveal carries the roll whole
        action.OppositionOpened: lambda e, t: t("opposed", who=t.who(e.character), what=e.characteristic,
                                             o=t.who(e.opponent)),
        action.ActionRevealed: lambda e, t: t(
            "revealed", who=t.who(e.character), o=t.who(e.opponent), dice=_dice(e.rolled.dice),
            signs=_signs(e.rolled), ps=e.rolled.ps),
        action.ActionBegun: lambda e, t: t("act_begun", who=t.who(e.character), turns=e.turns),
        action.ActionRuled: lambda e, t: t("act_ruled", who=t.who(e.character), ruling=t(e.ruling)),
        action.OppositionSettled: lambda e, t: t("opposition", w=t.who(e.winner), ips=e.initiator_ps,
                                              dps=e.defender_ps, a=t.who(e.initiator), b=t.who(e.defender)),
        action.TensionRaised: lambda e, t: t("tension", who=t.who(e.character), t=e.tension),
        action.CharacterSacrificed: lambda e, t: t("sacrificed", who=t.who(e.character)),
        action.ModifierApplied: lambda e, t: t("modifier", who=t.who(e.character), value=_signed(e.value),
                                            duration=e.duration, unit=e.unit, why=t.why(e.reason)),
        action.ActionConfigured: lambda e, t: t("configured"),
        action.OppositionRuled: lambda e, t: t(
            "opposition_dropped" if e.winner is None else "opposition_ruled", a=t.who(e.character),
            b=t.who(e.opponent), w=t.who(e.winner), why=t.why(e.reason)),
        action.ActionCancelled: lambda e, t: t("act_cancelled", who=t.who(e.character), turns=e.turns,
                                            why=t.why(e.reason)),
    }


def _offline_sentences() -> dict[type, Callable]:
    o = offline
    return {
        o.OfflineChallengeRecorded: lambda e, t: offline_sentence(e, t) + ".",
        o.OfflineChallengeConfirmed: lambda e, t: t("offline_confirmed", id=e.record, b=t.who(e.opponent)),
        o.OfflineChallengeDisputed: lambda e, t: t(
            "offline_disputed", id=e.record, b=t.who(e.opponent),
            claim=t("offline_claim", w=t.who(e.winner)) if e.winner else "", why=t.why(e.reason)),
        o.OfflineChallengeRuled: lambda e, t: t("offline_ruled", id=e.record, w=t.who(e.winner), why=t.why(e.reason)),
    }


def _desk_sentences() -> dict[type, Callable]:
    d = desk

    def announced(e, t):
        if e.scope == "scene":
            return t("announced_scene", scene=t.scene(e.scene), text=e.text)
        return t("announced_venue" if e.scope == "venue" else "announced", text=e.text)

    def called(e, t):
        return t("called", who=t.who(e.character), kind=t(f"call_{e.kind}"),
                 text=f"{t('colon')}“{e.text}”" if e.text else "")

    def where(e, t):
        """Whom a countdown is for, as an announcement says it: nothing for the session."""
        if e.scope == "scene":
            return t("countdown_for_scene", scene=t.scene(e.scene))
        return t("countdown_for_venue") if e.scope == "venue" else ""

    return {
        d.Announced: announced,
        d.CountdownStarted: lambda e, t: t("countdown_turns" if e.unit == "turns" else "countdown_minutes",
                                           clock=e.label or e.clock, n=e.length, where=where(e, t)),
        d.CountdownPaused: lambda e, t: t("countdown_paused", clock=e.clock, where=where(e, t)),
        d.CountdownResumed: lambda e, t: t("countdown_resumed", clock=e.clock, where=where(e, t)),
        d.CountdownCancelled: lambda e, t: t("countdown_cancelled", clock=e.clock, where=where(e, t)),
        d.StorytellerCalled: called,
        d.CallTaken: lambda e, t: t("call_taken", by=e.by or t("storyteller"), who=t.who(e.character)),
        d.CallClosed: lambda e, t: t("call_closed", by=e.by or t("storyteller"), who=t.who(e.character)),
    }


_DEVICE_TIME = re.compile(r"^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2})")


def _device_time(played_at: str) -> str:
    """The date and minute as the device wrote them (its own clock and zone, never
    converted): read by a pattern the JavaScript twin uses too."""
    found = _DEVICE_TIME.match(played_at or "")
    return f"{found[1]} {found[2]}" if found else played_at or "?"


def offline_sentence(e: offline.OfflineChallengeRecorded, t: Teller) -> str:
    return t("offline", time=_device_time(e.played_at), a=t.who(e.recorder), b=t.who(e.opponent),
             attr=f" ({t.attr(e.attribute)})" if e.attribute else "", w=t.who(e.winner),
             account=f"{t.t['colon']}“{e.account}”" if e.account else "")


def sentence(event, t: Teller) -> str:
    if isinstance(event, CommandRejected):
        return t.rejected(event)
    tell = _TABLE.get(type(event))
    return tell(event, t) if tell else type(event).__struct_config__.tag


# each event type's sentence, told with a teller given: one table, not one per teller (a
# review makes a teller each time the roster changes, and building a table of closures
# cost a quarter of a millisecond each time)
_TABLE: dict[type, Callable] = {**_session_sentences(), **_met_sentences(), **_dice_sentences(),
                                **_offline_sentences(), **_desk_sentences()}


# ---------------------------------------------------------------- a whole challenge


def challenge_header(e: met.ChallengeIssued, t: Teller) -> str:
    attr = t.attr(e.attribute)
    if e.kind in ("simple", "complex"):
        text = t(e.kind, a=t.who(e.tested or e.initiator))
    elif e.kind == "static":
        if e.tested == e.initiator:
            text = t("static", a=t.who(e.initiator), attr=attr, difficulty=e.difficulty)
        else:
            text = t("static_by", a=t.who(e.tested), b=t.who(e.initiator), attr=attr, difficulty=e.difficulty)
    else:
        text = t("mutual" if e.mutual else "classic", a=t.who(e.initiator), b=t.who(e.defender), attr=attr)
    if e.tests > 1:
        text += t("tests", n=e.tests)
    return text


def group_header(e: met.GroupChallengeIssued, t: Teller) -> str:
    listed = ", ".join(t.who(d) for d in e.defenders)
    if e.kind != "static":
        return t("group", a=t.who(e.initiator), list=listed, attr=t.attr(e.attribute))
    text = t("group_static", b=t.who(e.initiator), list=listed, attr=t.attr(e.attribute), difficulty=e.difficulty)
    return text + t("tests", n=e.tests) if e.tests > 1 else text


def group_results(e: met.GroupSettled, t: Teller) -> str:
    """Each defender's pair: its winner over the other side."""
    return ", ".join(t("group_result", w=t.who(winner), l=t.who(e.initiator if winner == defender else defender))
                     for defender, winner in e.results.items())


def group_sentence(events: Iterable, t: Teller, *, rulings: bool = True) -> str:
    """One line for a group challenge (MET-1): its header, then each defender's pair told
    as a challenge of its own ("against Bruno: ..."), from the group's and its pairs'
    events in log order."""
    events = list(events)
    issued = next((e for e in events if isinstance(e, met.GroupChallengeIssued)), None)
    if issued is None:
        return challenge_sentence(events, t, rulings=rulings)
    stories: dict[str, list] = {pair: [] for pair in issued.pairs}
    for e in events:
        story = stories.get(getattr(e, "challenge", None))
        if story is not None:
            story.append(e)
    colon = t.t["colon"]
    parts = []
    for pair, defender in zip(issued.pairs, issued.defenders):
        head = met.ChallengeIssued(challenge=pair, kind=issued.kind, initiator=issued.initiator, defender=defender,
                                   tested=defender if issued.kind == "static" else None,
                                   attribute=issued.attribute, defender_attribute=issued.defender_attribute,
                                   difficulty=issued.difficulty, tests=issued.tests)
        body = challenge_sentence([head] + stories[pair], t, rulings=rulings)[len(challenge_header(head, t)):]
        if body.startswith(colon):
            parts.append(t("group_against", b=t.who(defender), colon=colon, body=body[len(colon):]))
    header = group_header(issued, t)
    return f"{header}{colon}{' — '.join(parts)}" if parts else header


def _won(t: Teller, winner: str, loser: str, by: str) -> str:
    key = f"won_by_{by}" if f"won_by_{by}" in t.t else "won"
    return t(key, w=t.who(winner), l=t.who(loser))


# the events ``challenge_sentence`` tells something of (one check, not its whole chain, for the others)
_IN_A_STORY = (met.ChallengeIssued, met.ThrowsRevealed, met.BidDeclared, met.OverbidDeclared, met.BidsCompared,
               met.RoundWon, met.RoundStarted, met.RetestTaken, met.RetestCancelled, met.OverbidSettled,
               met.TieDebtIncurred, met.TieDebtPaid, met.ChallengeConceded, met.ChallengeResolved,
               met.ChallengeCancelled, met.ChallengeOverruled)


# each event type met in a story -> the first of _IN_A_STORY it is an instance of (None:
# none), found once a type: the chain below is told apart by identity, not by an
# isinstance per link (the first screen's 400 briefs made 18,000 calls)
_STORY_KINDS: dict[type, type | None] = {}
_UNSEEN = object()


def _story_kind(kind: type) -> type | None:
    found = _STORY_KINDS[kind] = next((k for k in _IN_A_STORY if issubclass(kind, k)), None)
    return found


def challenge_sentence(events: Iterable, t: Teller, *, rulings: bool = True) -> str:
    """One line for a challenge's whole story, from its events in log order; without
    ``rulings`` a storyteller's overrule or cancel is left for its own line, in place."""
    header = ""
    parts: list[list[str]] = [[]]
    issued = None
    bids: dict[str, int | None] = {}
    overbid: dict[str, int | None] = {}
    for e in events:
        kind = _STORY_KINDS.get(type(e), _UNSEEN)
        if kind is _UNSEEN:
            kind = _story_kind(type(e))
        if kind is None:  # a committed throw, most of a challenge's events: told by the reveal
            continue
        clause = parts[-1]
        if kind is met.ChallengeIssued:
            issued, header = e, challenge_header(e, t)
        elif kind is met.ThrowsRevealed:
            bids = {}
            if e.winner is None:
                clause.append(t("tie"))
            elif issued is not None:
                other = issued.defender if e.winner == issued.initiator else issued.initiator
                clause.append(t("throw_won", w=t.who(e.winner), x=t.throw(e.throws.get(e.winner)),
                                y=t.throw(e.throws.get(other))))
        elif kind is met.BidDeclared:
            (overbid if e.overbid else bids)[e.character] = e.value
        elif kind is met.OverbidDeclared:
            overbid[e.character] = e.value
        elif kind is met.BidsCompared and issued is not None:
            if issued.kind == "static":
                tested = issued.tested or issued.initiator
                clause.append(t("declared", x=t.num(bids.get(tested)), difficulty=issued.difficulty))
            else:
                x, y = (t.num(bids.get(s)) for s in (issued.initiator, issued.defender))
                clause.append(t("equal_bids" if e.winner is None else "bids", x=x, y=y))
        elif kind is met.RoundWon:
            clause.append(_won(t, e.winner, e.loser, e.by))
        elif kind is met.RoundStarted:
            parts.append([t("test_n", n=e.test)] if e.reason == "next_test" else [])
        elif kind is met.RetestTaken:
            clause.append(t("retest", x=t.who(e.character), source=e.source))
        elif kind is met.RetestCancelled:
            clause.append(t("retest_cancelled", x=t.who(e.character), y=t.who(e.cancelled), source=e.source))
        elif kind is met.OverbidSettled:
            clause.append(t("overbid_granted" if e.granted else "overbid_lost", x=t.who(e.character),
                            v=t.num(overbid.get(e.character)), o=t.num(overbid.get(e.opponent))))
        elif kind is met.TieDebtIncurred:
            clause.append(t("debt", x=t.who(e.debtor), y=t.who(e.creditor)))
        elif kind is met.TieDebtPaid:
            clause.append(t("debt_paid", x=t.who(e.debtor)))
        elif kind is met.ChallengeConceded:
            clause.append(t("conceded", x=t.who(e.character)))
        elif kind is met.ChallengeResolved:
            if e.reason == "accepted":
                clause.append(t("accepted", l=t.who(e.loser)))
            elif e.reason in ("window_closed", "timeout"):
                clause.append(t(e.reason))
        elif not rulings:
            continue
        elif kind is met.ChallengeCancelled:
            clause.append(t("cancelled", why=t.why(e.reason)))
        elif kind is met.ChallengeOverruled:
            clause.append(t("overruled", w=t.who(e.winner), why=t.why(e.reason)))
    body = "; ".join(", ".join(p) for p in parts if p)
    return f"{header}{t.t['colon']}{body}" if body else header

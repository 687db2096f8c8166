"""Events as sentences a person reads, in English or French: the review's timeline and
the chronicle record.

``sentence(event, names, lang)`` tells one event; ``challenge_sentence(events, ...)``
tells a whole Mind's Eye Theatre challenge in one line ("Anna challenged Bruno
(Physical): tie, bids 8 to 9, Bruno won; Anna overbid and lost"). Both read only the
event as given, so an event already redacted for a player (a sealed bid: ``value`` None)
is told as sealed, never guessed.
"""

from __future__ import annotations

from datetime import datetime
from typing import Callable, Iterable

from conteur.events import action, met, offline, session, v5
from conteur.events.game import CommandRejected

LANGS = ("en", "fr")

T: dict[str, dict[str, str]] = {
    "en": {
        # the codes events carry as reasons: English says the code itself
        "r_accepted": "accepted", "r_conceded": "conceded", "r_final": "final", "r_zero_traits": "zero_traits", "r_overbid": "overbid", "r_overbid_failed": "overbid_failed", "r_overruled": "overruled", "r_retest": "retest", "r_equal_bids": "equal_bids", "r_next_test": "next_test", "r_window_closed": "window_closed", "r_timeout": "timeout", "r_throw": "throw", "r_bid": "bid", "r_difficulty": "difficulty", "r_simple_tie": "simple_tie", "r_complex_tie": "complex_tie", "r_no_sheet": "no_sheet", "r_tie_debt": "tie_debt",
        "storyteller": "the storyteller", "sealed": "(sealed)", "colon": ": ",
        "physical": "Physical", "social": "Social", "mental": "Mental",
        "rock": "rock", "paper": "paper", "scissors": "scissors", "bomb": "bomb",
        "opened": "Session {name} opened.", "closed": "Session closed; the draw seed is revealed.",
        "added": "{who} is on the roster.", "scene_opened": "Scene {scene} opened.",
        "scene_closed": "Scene {scene} closed.", "joined": "{who} entered {scene}.", "left": "{who} left {scene}.",
        "freeze_scene": "TIME OUT in {scene}.", "freeze_all": "TIME OUT for everyone.",
        "resume_scene": "Play resumed in {scene}.", "resume_all": "Play resumed for everyone.",
        "out": "{who} went out of game{why}.", "back": "{who} came back in game.",
        "turn": "Turn {turn}.", "skip": "Time skipped: {seconds} s{note}.", "turn_length": "A turn now lasts {seconds} s.",
        "no_sheet": "{who} has no sheet at hand (loses ties).", "sheet_back": "{who} has a sheet at hand again.",
        "action": "{who} acted{what}.",
        "amended": "A storyteller amended {who}'s sheet{why}.",
        "rejected": "{who}: {command} refused: {message}",
        # challenges
        "classic": "{a} challenged {b} ({attr})", "mutual": "{a} challenged {b} ({attr}, both actions at stake)",
        "static": "{a} faced a static {attr} test, difficulty {difficulty}",
        "static_by": "{b} put {a} to a static {attr} test, difficulty {difficulty}",
        "simple": "{a} took a simple test", "complex": "{a} took a complex test", "tests": " ({n} tests)",
        "test_n": "test {n}", "tie": "tie", "throw_won": "{x} beat {y}",
        "bids": "bids {x} to {y}", "equal_bids": "equal bids {x} to {y}, throw redone",
        "declared": "declared {x} against {difficulty}",
        "won": "{w} won", "won_by_no_sheet": "{w} won ({l} had no sheet at hand)",
        "won_by_tie_debt": "{w} won ({l} owed a tie)", "won_by_zero_traits": "{w} won ({l} had no traits)",
        "won_by_simple_tie": "{w} won (a simple test's tie)", "won_by_complex_tie": "{w} won (a complex test's tie)",
        "retest": "{x} retested ({source})", "retest_cancelled": "{x} cancelled {y}'s retest ({source})",
        "overbid_granted": "{x} overbid ({v} to {o}) and won a retest",
        "overbid_lost": "{x} overbid ({v} to {o}) and lost", "debt": "{x} owes {y} its next tie",
        "debt_paid": "{x} paid its tie debt", "conceded": "{x} conceded", "accepted": "{l} accepted",
        "window_closed": "the result stood", "timeout": "the result stood (no answer in time)",
        "cancelled": "cancelled by a storyteller{why}", "overruled": "a storyteller overruled: {w} won{why}",
        "open": "still open",
        "overruled_event": "A storyteller overruled challenge {id}: {w} won{why}.",
        "cancelled_event": "A storyteller cancelled challenge {id}{why}.",
        "issued_event": "{id}: {text}.",
        "ev_throw": "{c}: {x} threw {choice} (round {r})", "ev_revealed": "{c}, round {r}: {throws}",
        "ev_bid": "{c}: {x} bid {v}{ab}", "ev_overbid": "{c}: {x} overbid with {v}{ab}",
        "with_abilities": " (abilities: {list})", "ev_round": "{c}: {w} won round {r}{by}",
        "ev_started": "{c}: round {r} begins ({reason})", "ev_resolved": "{c}: {w} won, {l} lost ({reason})",
        "ev_overbid_settled": "{c}: {x}'s overbid {result}", "granted": "earns a retest", "refused": "fails",
        "ev_compared": "{c}: bids compared, {result}",
        # offline
        "offline": "Played by hand (offline, {time} by the device's clock): {a} against {b}{attr}; {a} says {w} won{account}",
        "offline_confirmed": "{b} confirmed the offline challenge {id}.",
        "offline_disputed": "{b} disputed the offline challenge {id}{claim}{why}.",
        "offline_claim": ", saying {w} won", "offline_ruled": "A storyteller ruled on offline challenge {id}: {w} won{why}.",
        # dice
        "pool": "{who} rolled {source}: {n} dice ({h} Hunger), difficulty {difficulty}: {s} successes, {result}",
        "success": "success", "failure": "failure", "critical": "critical", "messy": "messy critical",
        "bestial": "bestial failure", "rouse": "{who} made a Rouse check: {face}, Hunger {before} to {after}",
        "reroll": "{who} rerolled {n} dice with Willpower: {s} successes, {result}",
        "hunger": "{who}'s Hunger is now {h}{why}.", "configured": "Dice settings changed.",
        "act": "{who} rolled {what}: {dice}{signs}, {ps} PS{against}{result}",
        "act_difficulty": " against difficulty {d}", "act_opponent": " against {o}",
        "act_begun": "{who} began an action lasting {turns} turns", "act_ruled": "{who}'s action was ruled {ruling}",
        "trivial": "trivial", "impossible": "impossible",
        "opposition": "{w} prevailed ({ips} PS to {dps}) in the contest of {a} and {b}",
        "tension": "{who} surpassed itself: tension {t}", "sacrificed": "{who} sacrificed itself",
        "modifier": "{who} gets {value:+d} for {duration} {unit}{why}",
        "opposition_ruled": "A storyteller settled {a}'s roll against {b}, left unanswered: {w} prevailed{why}",
        "opposition_dropped": "A storyteller cancelled {a}'s roll against {b}, left unanswered{why}",
        "act_cancelled": "A storyteller cancelled {who}'s action of {turns} turns{why}",
        "opposed": "{who} rolled {what} against {o}, sealed until {o} answers",
        "revealed": "{who}'s sealed roll against {o} is revealed: {dice}{signs}, {ps} PS",
    },
    "fr": {
        "storyteller": "le conteur", "sealed": "(scellé)", "colon": " : ",
        "physical": "Physique", "social": "Social", "mental": "Mental",
        "rock": "pierre", "paper": "feuille", "scissors": "ciseaux", "bomb": "bombe",
        "opened": "Ouverture de la session {name}.", "closed": "Session close ; la graine des tirages est révélée.",
        "added": "{who} rejoint la distribution.", "scene_opened": "Ouverture de la scène {scene}.",
        "scene_closed": "Fin de la scène {scene}.", "joined": "{who} entre dans {scene}.", "left": "{who} quitte {scene}.",
        "freeze_scene": "TEMPS MORT dans {scene}.", "freeze_all": "TEMPS MORT pour tous.",
        "resume_scene": "Reprise du jeu dans {scene}.", "resume_all": "Reprise du jeu pour tous.",
        "out": "{who} passe hors jeu{why}.", "back": "{who} revient en jeu.",
        "turn": "Tour {turn}.", "skip": "Ellipse : {seconds} s{note}.", "turn_length": "Un tour dure désormais {seconds} s.",
        "no_sheet": "{who} n'a pas sa fiche (perd les égalités).", "sheet_back": "{who} a de nouveau sa fiche.",
        "action": "{who} agit{what}.",
        "amended": "Fiche modifiée par le conteur : {who}{why}.",
        "rejected": "{who} : {command} refusé : {message}",
        "classic": "{a} a défié {b} ({attr})", "mutual": "{a} a défié {b} ({attr}, les deux actions en jeu)",
        "static": "{a} a affronté un test statique ({attr}), difficulté {difficulty}",
        "static_by": "{b} a soumis {a} à un test statique ({attr}), difficulté {difficulty}",
        "simple": "{a} a passé un test simple", "complex": "{a} a passé un test complexe", "tests": " ({n} tests)",
        "test_n": "test {n}", "tie": "égalité", "throw_won": "{x} bat {y}",
        "bids": "enchères {x} contre {y}", "equal_bids": "enchères égales {x} contre {y}, on rejoue",
        "declared": "{x} déclarés contre {difficulty}",
        "won": "{w} l'a emporté", "won_by_no_sheet": "{w} l'a emporté ({l} n'avait pas sa fiche)",
        "won_by_tie_debt": "{w} l'a emporté ({l} devait une égalité)",
        "won_by_zero_traits": "{w} l'a emporté ({l} n'avait aucun trait)",
        "won_by_simple_tie": "{w} l'a emporté (égalité d'un test simple)",
        "won_by_complex_tie": "{w} l'a emporté (égalité d'un test complexe)",
        "retest": "{x} a relancé ({source})", "retest_cancelled": "{x} a annulé la relance de {y} ({source})",
        "overbid_granted": "{x} a surenchéri ({v} contre {o}) et obtenu une relance",
        "overbid_lost": "{x} a surenchéri ({v} contre {o}) et perdu", "debt": "{x} doit sa prochaine égalité à {y}",
        "debt_paid": "{x} a payé sa dette d'égalité", "conceded": "{x} a abandonné", "accepted": "{l} a accepté",
        "window_closed": "le résultat est acquis", "timeout": "le résultat est acquis (pas de réponse à temps)",
        "cancelled": "annulé par un conteur{why}", "overruled": "un conteur a tranché : {w} l'emporte{why}",
        "open": "toujours en cours",
        # the codes events carry as reasons, said in French (English says the code)
        "r_accepted": "accepté", "r_conceded": "abandon", "r_final": "dernier test", "r_zero_traits": "aucun trait",
        "r_overbid": "surenchère", "r_overbid_failed": "surenchère manquée", "r_overruled": "tranché",
        "r_retest": "nouveau test", "r_equal_bids": "enchères égales", "r_next_test": "test suivant",
        "r_window_closed": "fenêtre close", "r_timeout": "délai écoulé", "r_throw": "signe", "r_bid": "enchère",
        "r_difficulty": "difficulté", "r_simple_tie": "égalité simple", "r_complex_tie": "égalité complexe",
        "r_no_sheet": "sans fiche", "r_tie_debt": "dette d'égalité",
        "overruled_event": "Un conteur a tranché le défi {id} : {w} l'emporte{why}.",
        "cancelled_event": "Un conteur a annulé le défi {id}{why}.",
        "issued_event": "{id}: {text}.",
        "ev_throw": "{c} : {x} joue {choice} (manche {r})", "ev_revealed": "{c}, manche {r} : {throws}",
        "ev_bid": "{c} : {x} enchérit {v}{ab}", "ev_overbid": "{c} : {x} surenchérit à {v}{ab}",
        "with_abilities": " (capacités : {list})",
        "ev_round": "{c} : {w} gagne la manche {r}{by}",
        "ev_started": "{c} : début de la manche {r} ({reason})", "ev_resolved": "{c} : {w} l'emporte, {l} perd ({reason})",
        "ev_overbid_settled": "{c} : la surenchère de {x} {result}", "granted": "obtient une relance", "refused": "échoue",
        "ev_compared": "{c} : enchères comparées, {result}",
        "offline": "Joué à la main (hors ligne, {time} à l'horloge de l'appareil) : {a} contre {b}{attr} ; selon {a}, {w} l'a emporté{account}",
        "offline_confirmed": "{b} a confirmé le défi hors ligne {id}.",
        "offline_disputed": "{b} a contesté le défi hors ligne {id}{claim}{why}.",
        "offline_claim": ", selon qui {w} l'a emporté",
        "offline_ruled": "Un conteur a tranché le défi hors ligne {id} : {w} l'emporte{why}.",
        "pool": "{who} a lancé {source} : {n} dés (dont {h} de Soif), difficulté {difficulty} : {s} succès, {result}",
        "success": "réussite", "failure": "échec", "critical": "critique", "messy": "critique sanglant",
        "bestial": "échec bestial", "rouse": "{who} a fait un test d'Éveil : {face}, Soif {before} à {after}",
        "reroll": "{who} a relancé {n} dés par la Volonté : {s} succès, {result}",
        "hunger": "La Soif de {who} passe à {h}{why}.", "configured": "Réglages des dés modifiés.",
        "act": "{who} a lancé {what} : {dice}{signs}, {ps} PS{against}{result}",
        "act_difficulty": " contre une difficulté de {d}", "act_opponent": " contre {o}",
        "act_begun": "{who} a commencé une action de {turns} tours", "act_ruled": "L'action de {who} est jugée {ruling}",
        "trivial": "triviale", "impossible": "impossible",
        "opposition": "{w} l'emporte ({ips} PS contre {dps}) dans l'opposition entre {a} et {b}",
        "tension": "{who} s'est surpassé : tension {t}", "sacrificed": "{who} s'est sacrifié",
        "modifier": "{who} reçoit {value:+d} pendant {duration} {unit}{why}",
        "opposition_ruled": "Un conteur a tranché le jet de {a} contre {b}, resté sans réponse : {w} l'emporte{why}",
        "opposition_dropped": "Un conteur a annulé le jet de {a} contre {b}, resté sans réponse{why}",
        "act_cancelled": "Un conteur a annulé l'action de {turns} tours de {who}{why}",
        "opposed": "{who} a lancé {what} contre {o}, scellé jusqu'à la réponse de {o}",
        "revealed": "Le jet scellé de {who} contre {o} est révélé : {dice}{signs}, {ps} PS",
    },
}


class Teller:
    """Sentences in one language with one roster's names."""

    def __init__(self, names: dict[str, str] | None = None, lang: str = "en",
                 scenes: dict[str, str] | None = None):
        self.lang = lang if lang in T else "en"
        self.t = T[self.lang]
        self.names = names if names is not None else {}
        self.scenes = scenes if scenes is not None else {}

    def __call__(self, key: str, **fields) -> str:
        return self.t[key].format(**fields)

    def who(self, character: str | None) -> str:
        if character is None or character == session.STORYTELLER_SIDE:
            return self.t["storyteller"]
        return self.names.get(character, character)

    def scene(self, scene_id: str | None) -> str:
        return self.scenes.get(scene_id, scene_id or "?")

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
        return self.t.get(choice or "", self.t["sealed"])

    @staticmethod
    def why(reason: str) -> str:
        return f" ({reason})" if reason else ""

    def code(self, reason: str) -> str:
        """A reason the rules write as a code (``accepted``), in the teller's language."""
        return self.t.get(f"r_{reason}", reason)


# ---------------------------------------------------------------- one event


def _session_sentences(t: Teller) -> dict[type, Callable]:
    s = session
    return {
        s.SessionOpened: lambda e: t("opened", name=e.name or ""),
        s.SessionClosed: lambda e: t("closed"),
        s.CharacterAdded: lambda e: t("added", who=e.name or e.character),
        s.SceneOpened: lambda e: t("scene_opened", scene=e.name or e.scene),
        s.SceneClosed: lambda e: t("scene_closed", scene=t.scene(e.scene)),
        s.SceneJoined: lambda e: t("joined", who=t.who(e.character), scene=t.scene(e.scene)),
        s.SceneLeft: lambda e: t("left", who=t.who(e.character), scene=t.scene(e.scene)),
        s.TimeOutCalled: lambda e: t("freeze_scene", scene=t.scene(e.scene)) if e.scope == "scene" else t("freeze_all"),
        s.TimeOutEnded: lambda e: t("resume_scene", scene=t.scene(e.scene)) if e.scope == "scene" else t("resume_all"),
        s.WentOutOfGame: lambda e: t("out", who=t.who(e.character), why=t.why(e.reason)),
        s.CameBackInGame: lambda e: t("back", who=t.who(e.character)),
        s.TurnAdvanced: lambda e: t("turn", turn=e.turn),
        s.TimeSkipped: lambda e: t("skip", seconds=e.seconds, note=f" — {e.note}" if e.note else ""),
        s.TurnLengthSet: lambda e: t("turn_length", seconds=e.seconds),
        s.NoSheetMarked: lambda e: t("no_sheet" if e.no_sheet else "sheet_back", who=t.who(e.character)),
        s.ActionTaken: lambda e: t("action", who=t.who(e.character), what=f": {e.description}" if e.description else ""),
        # the sealed form has no reason: others read only that the sheet changed
        s.SheetAmended: lambda e: t("amended", who=t.who(e.character), why=t.why(e.reason)),
    }


def _met_sentences(t: Teller) -> dict[type, Callable]:
    m = met
    return {
        m.ChallengeIssued: lambda e: t("issued_event", id=e.challenge, text=challenge_header(e, t)),
        m.ThrowCommitted: lambda e: t("ev_throw", c=e.challenge, x=t.who(e.character), choice=t.throw(e.choice),
                                      r=e.round),
        m.ThrowsRevealed: lambda e: t("ev_revealed", c=e.challenge, r=e.round, throws=", ".join(
            f"{t.who(k)} {t.throw(v)}" for k, v in e.throws.items())),
        m.BidDeclared: lambda e: t("ev_bid", c=e.challenge, x=t.who(e.character), v=t.num(e.value), ab=t.abilities(e)),
        m.BidsCompared: lambda e: t("ev_compared", c=e.challenge,
                                    result=t("won", w=t.who(e.winner)) if e.winner else t("tie")),
        m.RoundWon: lambda e: t("ev_round", c=e.challenge, w=t.who(e.winner), r=e.round, by=f" ({t.code(e.by)})"),
        m.RoundStarted: lambda e: t("ev_started", c=e.challenge, r=e.round, reason=t.code(e.reason)),
        m.TieDebtPaid: lambda e: f"{e.challenge}: " + t("debt_paid", x=t.who(e.debtor)),
        m.TieDebtIncurred: lambda e: f"{e.challenge}: " + t("debt", x=t.who(e.debtor), y=t.who(e.creditor)),
        m.RetestTaken: lambda e: f"{e.challenge}: " + t("retest", x=t.who(e.character), source=e.source),
        m.RetestCancelled: lambda e: f"{e.challenge}: " + t("retest_cancelled", x=t.who(e.character),
                                                             y=t.who(e.cancelled), source=e.source),
        m.OverbidDeclared: lambda e: t("ev_overbid", c=e.challenge, x=t.who(e.character), v=t.num(e.value),
                                       ab=t.abilities(e)),
        m.OverbidSettled: lambda e: t("ev_overbid_settled", c=e.challenge, x=t.who(e.character),
                                      result=t("granted" if e.granted else "refused")),
        m.ChallengeConceded: lambda e: f"{e.challenge}: " + t("conceded", x=t.who(e.character)),
        m.ChallengeResolved: lambda e: t("ev_resolved", c=e.challenge, w=t.who(e.winner), l=t.who(e.loser),
                                         reason=t.code(e.reason)),
        m.ChallengeCancelled: lambda e: t("cancelled_event", id=e.challenge, why=t.why(e.reason)),
        m.ChallengeOverruled: lambda e: t("overruled_event", id=e.challenge, w=t.who(e.winner), why=t.why(e.reason)),
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


def _dice_sentences(t: Teller) -> dict[type, Callable]:
    return {
        v5.PoolRolled: lambda e: t("pool", who=t.who(e.character), source=e.source or e.label or e.kind,
                                   n=e.pool, h=len(e.hunger), difficulty=e.difficulty, s=e.successes,
                                   result=_result(t, e)) + ".",
        v5.RouseChecked: lambda e: t("rouse", who=t.who(e.character), face=e.face, before=e.hunger_before,
                                     after=e.hunger_after) + ".",
        v5.WillpowerRerolled: lambda e: t("reroll", who=t.who(e.character), n=len(e.dice), s=e.successes,
                                          result=_result(t, e)) + ".",
        v5.HungerSet: lambda e: t("hunger", who=t.who(e.character), h=e.hunger, why=t.why(e.reason)),
        v5.V5Configured: lambda e: t("configured"),
        action.ActionRolled: lambda e: t(
            "act", who=t.who(e.character), what=e.notation or e.characteristic, dice=" ".join(map(str, e.dice)),
            signs=_signs(e), ps=e.ps,
            against=t("act_opponent", o=t.who(e.opponent)) if e.opponent else (
                t("act_difficulty", d=e.difficulty_name or e.difficulty) if e.difficulty is not None else ""),
            result=_act_result(t, e)) + ".",
        action.OppositionOpened: lambda e: t("opposed", who=t.who(e.character), what=e.characteristic,
                                             o=t.who(e.opponent)) + ".",
        action.ActionRevealed: lambda e: t(
            "revealed", who=t.who(e.character), o=t.who(e.opponent), dice=" ".join(map(str, e.rolled.dice)),
            signs=_signs(e.rolled), ps=e.rolled.ps) + ".",
        action.ActionBegun: lambda e: t("act_begun", who=t.who(e.character), turns=e.turns) + ".",
        action.ActionRuled: lambda e: t("act_ruled", who=t.who(e.character), ruling=t(e.ruling)) + ".",
        action.OppositionSettled: lambda e: t("opposition", w=t.who(e.winner), ips=e.initiator_ps,
                                              dps=e.defender_ps, a=t.who(e.initiator), b=t.who(e.defender)) + ".",
        action.TensionRaised: lambda e: t("tension", who=t.who(e.character), t=e.tension) + ".",
        action.CharacterSacrificed: lambda e: t("sacrificed", who=t.who(e.character)) + ".",
        action.ModifierApplied: lambda e: t("modifier", who=t.who(e.character), value=e.value,
                                            duration=e.duration, unit=e.unit, why=t.why(e.reason)) + ".",
        action.ActionConfigured: lambda e: t("configured"),
        action.OppositionRuled: lambda e: t(
            "opposition_dropped" if e.winner is None else "opposition_ruled", a=t.who(e.character),
            b=t.who(e.opponent), w=t.who(e.winner), why=t.why(e.reason)) + ".",
        action.ActionCancelled: lambda e: t("act_cancelled", who=t.who(e.character), turns=e.turns,
                                            why=t.why(e.reason)) + ".",
    }


def _offline_sentences(t: Teller) -> dict[type, Callable]:
    o = offline
    return {
        o.OfflineChallengeRecorded: lambda e: offline_sentence(e, t) + ".",
        o.OfflineChallengeConfirmed: lambda e: t("offline_confirmed", id=e.record, b=t.who(e.opponent)),
        o.OfflineChallengeDisputed: lambda e: t(
            "offline_disputed", id=e.record, b=t.who(e.opponent),
            claim=t("offline_claim", w=t.who(e.winner)) if e.winner else "", why=t.why(e.reason)),
        o.OfflineChallengeRuled: lambda e: t("offline_ruled", id=e.record, w=t.who(e.winner), why=t.why(e.reason)),
    }


def _device_time(played_at: str) -> str:
    try:
        return datetime.fromisoformat(played_at).strftime("%Y-%m-%d %H:%M")
    except ValueError:
        return played_at or "?"


def offline_sentence(e: offline.OfflineChallengeRecorded, t: Teller) -> str:
    return t("offline", time=_device_time(e.played_at), a=t.who(e.recorder), b=t.who(e.opponent),
             attr=f" ({t.attr(e.attribute)})" if e.attribute else "", w=t.who(e.winner),
             account=f"{t.t['colon']}“{e.account}”" if e.account else "")


def sentence(event, t: Teller) -> str:
    table = _tables(t)
    if isinstance(event, CommandRejected):
        return t("rejected", who=t.who(event.character), command=event.command_type, message=event.message)
    tell = table.get(type(event))
    return tell(event) if tell else type(event).__struct_config__.tag


def _tables(t: Teller) -> dict[type, Callable]:
    cached = getattr(t, "_table", None)
    if cached is None:
        cached = {**_session_sentences(t), **_met_sentences(t), **_dice_sentences(t), **_offline_sentences(t)}
        t._table = cached  # type: ignore[attr-defined]
    return cached


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


def _won(t: Teller, winner: str, loser: str, by: str) -> str:
    key = f"won_by_{by}" if f"won_by_{by}" in t.t else "won"
    return t(key, w=t.who(winner), l=t.who(loser))


def challenge_sentence(events: Iterable, t: Teller, *, rulings: bool = True) -> str:
    """One line for a challenge's whole story, from its events in log order; without
    ``rulings`` a storyteller's overrule or cancel is left for its own line, in place."""
    header = ""
    parts: list[list[str]] = [[]]
    issued = None
    bids: dict[str, int | None] = {}
    overbid: dict[str, int | None] = {}
    for e in events:
        clause = parts[-1]
        if isinstance(e, met.ChallengeIssued):
            issued, header = e, challenge_header(e, t)
        elif isinstance(e, met.ThrowsRevealed):
            bids = {}
            if e.winner is None:
                clause.append(t("tie"))
            elif issued is not None:
                other = issued.defender if e.winner == issued.initiator else issued.initiator
                clause.append(t("throw_won", w=t.who(e.winner), x=t.throw(e.throws.get(e.winner)),
                                y=t.throw(e.throws.get(other))))
        elif isinstance(e, met.BidDeclared):
            (overbid if e.overbid else bids)[e.character] = e.value
        elif isinstance(e, met.OverbidDeclared):
            overbid[e.character] = e.value
        elif isinstance(e, met.BidsCompared) and issued is not None:
            if issued.kind == "static":
                tested = issued.tested or issued.initiator
                clause.append(t("declared", x=t.num(bids.get(tested)), difficulty=issued.difficulty))
            else:
                x, y = (t.num(bids.get(s)) for s in (issued.initiator, issued.defender))
                clause.append(t("equal_bids" if e.winner is None else "bids", x=x, y=y))
        elif isinstance(e, met.RoundWon):
            clause.append(_won(t, e.winner, e.loser, e.by))
        elif isinstance(e, met.RoundStarted):
            parts.append([t("test_n", n=e.test)] if e.reason == "next_test" else [])
        elif isinstance(e, met.RetestTaken):
            clause.append(t("retest", x=t.who(e.character), source=e.source))
        elif isinstance(e, met.RetestCancelled):
            clause.append(t("retest_cancelled", x=t.who(e.character), y=t.who(e.cancelled), source=e.source))
        elif isinstance(e, met.OverbidSettled):
            clause.append(t("overbid_granted" if e.granted else "overbid_lost", x=t.who(e.character),
                            v=t.num(overbid.get(e.character)), o=t.num(overbid.get(e.opponent))))
        elif isinstance(e, met.TieDebtIncurred):
            clause.append(t("debt", x=t.who(e.debtor), y=t.who(e.creditor)))
        elif isinstance(e, met.TieDebtPaid):
            clause.append(t("debt_paid", x=t.who(e.debtor)))
        elif isinstance(e, met.ChallengeConceded):
            clause.append(t("conceded", x=t.who(e.character)))
        elif isinstance(e, met.ChallengeResolved):
            if e.reason == "accepted":
                clause.append(t("accepted", l=t.who(e.loser)))
            elif e.reason in ("window_closed", "timeout"):
                clause.append(t(e.reason))
        elif not rulings:
            continue
        elif isinstance(e, met.ChallengeCancelled):
            clause.append(t("cancelled", why=t.why(e.reason)))
        elif isinstance(e, met.ChallengeOverruled):
            clause.append(t("overruled", w=t.who(e.winner), why=t.why(e.reason)))
    body = "; ".join(", ".join(p) for p in parts if p)
    return f"{header}{t.t['colon']}{body}" if body else header

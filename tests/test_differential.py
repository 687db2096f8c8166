"""Python and the web app tell and fold a night the same way (issue 16, item 3).

A mixed night, every ruleset through the real command path on a real SQLite file:
``conteur simulate``'s three sessions (MET throws, ties, bids, retests, overbids and tie
debts; V5 pools with Hunger, Rouse checks and Willpower rerolls; action dice with opposed
and sealed rolls, long actions, deaths), the review's scripted evening (Time Out, an
overrule, challenges played by hand, disputed, ruled and confirmed) with a few more moves,
and a night where deaths leave rolls waiting and long actions pending for the storyteller
to settle. Each is seen by the storyteller and by every player (sealed and redacted
forms). The web app's own modules then run under node (tests/js/differential.mjs): for
every event, narrate.js's sentence equals events/narrate.py's, in English and in French;
fold.js's view equals the Python state folded from the same events; and fold.js's MET-9
initiative order equals Python's.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import msgspec
import pytest

from conteur.events import game, met, session, views
from conteur.events.model import STORYTELLER, Actor, ScriptedDraws
from conteur.events.narrate import Teller, sentence
from conteur.server.audit.review import read_session
from conteur.server.cli.simulate import play
from conteur.server.core.service import Chronicle
from conteur.server.store.sqlite import SQLiteStore
from tests.action_support import ROSTER, act
from tests.client_support import ANNA as ANNA_SHEET, BRUNO as BRUNO_SHEET, SESSION
from tests.review_support import ANNA, BRUNO, evening, run

NODE = shutil.which("node") or "/usr/bin/node"
HARNESS = Path(__file__).resolve().parent / "js" / "differential.mjs"
ATTRIBUTES = ("physical", "social", "mental")

initiative_order = met.initiative_order


def _node_or_skip() -> str:
    if not Path(NODE).is_file():
        pytest.skip(f"node is not installed (looked for {NODE}): the web app's modules cannot run")
    return NODE


# ---------------------------------------------------------------- the night


def _more_moves(chronicle: Chronicle) -> None:
    """What neither the simulator nor the review's evening plays."""
    def go(actor, tag, **fields):
        run(chronicle, actor, tag, **fields)

    go(STORYTELLER, "set_turn_length", seconds=6)
    go(STORYTELLER, "v5_settings", messy_rule="text")
    go(STORYTELLER, "action_settings", dice=3, die=8)
    go(ANNA, "take_action", character="anna", description="picks the lock")
    # c4: Bruno owes Anna a tie since c2 (MET-13): the tie of throws pays it
    go(ANNA, "challenge", character="anna", defender="bruno", attribute="social")
    go(ANNA, "throw", character="anna", challenge="c4", round=1, choice="rock")
    go(BRUNO, "throw", character="bruno", challenge="c4", round=1, choice="rock")
    go(ANNA, "challenge", character="anna", defender="bruno", attribute="social")
    go(ANNA, "concede", character="anna", challenge="c5")
    go(STORYTELLER, "amend_sheet", character="bruno", reason="stabbed",
       sheet={"kind": "met", "physical": 5, "social": 2, "mental": 3, "celerity": 1})
    go(BRUNO, "leave_scene", character="bruno")
    go(STORYTELLER, "close_scene", scene="hall")


def _desk_moves(chronicle: Chronicle) -> None:
    """The storyteller's desk (events/desk.py) and the venue's Time Out."""
    def go(actor, tag, **fields):
        run(chronicle, actor, tag, **fields)

    go(STORYTELLER, "freeze", scope="venue")
    go(ANNA, "call_storyteller", character="anna", kind="safety", text="Bruno is not well")
    go(BRUNO, "call_storyteller", character="bruno", kind="ruling")
    go(STORYTELLER, "resume", scope="venue")
    go(STORYTELLER, "announce", text="The Prince arrives", scope="session")
    go(STORYTELLER, "announce", text="Close the doors", scope="venue")
    go(STORYTELLER, "take_call", call="anna.1")
    go(STORYTELLER, "close_call", call="anna.1")
    go(STORYTELLER, "close_call", call="bruno.1")
    go(STORYTELLER, "start_countdown", clock="prince", minutes=10)
    go(STORYTELLER, "pause_countdown", clock="prince")
    go(STORYTELLER, "start_countdown", clock="prince")
    go(STORYTELLER, "start_countdown", clock="fire", turns=3)
    go(STORYTELLER, "cancel_countdown", clock="prince")


def _retest_cancelled(chronicle: Chronicle, sid: str) -> None:
    """MET-12's option: Bruno cancels Anna's retest with one of his own."""
    def go(actor, tag, **fields):
        run(chronicle, actor, tag, sid, **fields)

    go(STORYTELLER, "open_session", name="Option", retest_cancel=True)
    for who, sheet in (("anna", ANNA_SHEET), ("bruno", BRUNO_SHEET)):
        go(STORYTELLER, "add_character", character=who, name=who.title(), sheet=msgspec.to_builtins(sheet))
    go(ANNA, "challenge", character="anna", defender="bruno", attribute="physical")
    go(ANNA, "throw", character="anna", challenge="c1", round=1, choice="rock")
    go(BRUNO, "throw", character="bruno", challenge="c1", round=1, choice="paper")
    go(ANNA, "retest", character="anna", challenge="c1", source="melee")
    go(BRUNO, "retest", character="bruno", challenge="c1", source="dodge", cancels=True)


def _pairs(store: SQLiteStore, sid: str) -> list[tuple[int, object]]:
    rows, events = read_session(store, sid)
    return [(row.seq, event) for row, event in zip(rows, events)]


def _deaths() -> list[tuple[int, object]]:
    """ACT-8 with ACT-12 and ACT-2: a roll waits on a dead defender, a dead character's long
    action is under way; the storyteller settles one and cancels the other."""
    from conteur.events import action
    from conteur.events.simulate.action import stuck

    rolled = act("jaleel", [6, 2, 3], characteristic="Persuasion", opponent="nella")
    (begun,) = act("louisa", [], given=rolled, characteristic="Science", difficulty=3, turns=3)
    events = ROSTER + [*rolled, begun, action.CharacterSacrificed(character="nella", roll="a8"),
                       action.CharacterSacrificed(character="louisa", roll="a9")]
    state = game.fold(events)
    assert len(stuck(state)) == 2
    for actor, cmd in stuck(state):
        made = game.decide(state, cmd, ScriptedDraws(), actor=actor)
        events += made
        state = game.fold(made, state)
    return list(enumerate(events, start=1))


@pytest.fixture(scope="module")
def night(tmp_path_factory) -> dict[str, list[tuple[int, object]]]:
    folder = tmp_path_factory.mktemp("night")
    sessions: dict[str, list[tuple[int, object]]] = {}
    with SQLiteStore(folder / "sim.db") as store:
        summary = play(Chronicle(store), "sim", events=1500, seed=5, ruleset="mixed", close=True)
        for sid in summary.sessions:
            sessions[sid] = _pairs(store, sid)
    db = folder / "evening.db"
    evening(db, close=False)
    with SQLiteStore(db) as store:
        chronicle = Chronicle(store)
        _more_moves(chronicle)
        _desk_moves(chronicle)
        run(chronicle, STORYTELLER, "close_session")
        sessions[SESSION] = _pairs(store, SESSION)
        _retest_cancelled(chronicle, "option")
        sessions["option"] = _pairs(store, "option")
    sessions["deaths"] = _deaths()
    return sessions


def _viewers(pairs) -> list[Actor]:
    players = sorted({e.character for _, e in pairs if isinstance(e, session.CharacterAdded)})
    return [STORYTELLER] + [Actor(role="player", character=c, name=c) for c in players]


def _views(night) -> list[tuple[str, Actor, list[tuple[int, object]]]]:
    out = []
    for sid, pairs in night.items():
        for viewer in _viewers(pairs):
            out.append((f"{sid} as {viewer.character or viewer.role}", viewer, views.view_events(pairs, viewer)))
    return out


# ---------------------------------------------------------------- the Python side


def _plain(value):
    return msgspec.json.decode(msgspec.json.encode(value))


def python_view(state: game.GameState) -> dict:
    """The Python state in the shape of tests/js/differential.mjs's ``projection``."""
    s = state.session
    return _plain({
        "session": {"name": s.name, "status": s.status, "frozen": s.frozen, "turn": s.turn,
                    "game_seconds": s.game_seconds, "turn_seconds": s.turn_seconds},
        "characters": {c.id: {"name": c.name, "scene": c.scene, "out_of_game": c.out_of_game,
                              "no_sheet": c.no_sheet, "sheet": c.sheet}
                       for c in sorted(s.characters.values(), key=lambda c: c.id)},
        "scenes": {x.id: {"name": x.name, "open": x.open, "frozen": x.frozen}
                   for x in sorted(s.scenes.values(), key=lambda x: x.id)},
        "challenges": {c.id: {"status": c.status, "winner": c.winner, "loser": c.loser, "round": c.round}
                       for c in sorted(state.met.challenges.values(), key=lambda c: c.id)},
        "debts": [[d.debtor, d.creditor] for d in state.met.debts],
        "hunger": dict(sorted(state.v5.hunger.items())),
        "waiting": sorted(state.action.waiting),
        "pending": sorted(state.action.pending),
        "dead": dict(sorted(state.action.dead.items())),
        "modifiers": sorted(m.id for m in state.action.modifiers),
        "offline": {r.id: {"status": r.status, "winner": r.winner}
                    for r in sorted(state.offline.records.values(), key=lambda r: r.id)},
    })


def _teller_names(pairs) -> tuple[dict[str, str], dict[str, str]]:
    names, scenes = {}, {}
    for _, e in pairs:
        if isinstance(e, session.CharacterAdded):
            names[e.character] = e.name or e.character
        elif isinstance(e, session.SceneOpened):
            scenes[e.scene] = e.name or e.scene
    return names, scenes


def _actions(state: game.GameState) -> list[list[list[str]]]:
    """MET-9 turns to order: everyone with a MET sheet on each attribute, then each on its
    own attribute in turn (ties between equal traits included)."""
    mets = [c.id for c in sorted(state.session.characters.values(), key=lambda c: c.id)
            if getattr(c.sheet, "kind", None) == "met" or type(c.sheet).__name__ == "MetSheet"]
    turns = [[[c, a] for c in mets] for a in ATTRIBUTES]
    turns.append([[c, ATTRIBUTES[i % 3]] for i, c in enumerate(mets)])
    turns.append([[c, "physical"] for c in reversed(mets)])
    return turns


# ---------------------------------------------------------------- the comparison


EVERY = 20  # the folds are compared after every 20th event of each view, and at its end


def _checkpoints(pairs) -> list[int]:
    return sorted({*range(EVERY - 1, len(pairs), EVERY), len(pairs) - 1})


def _python_folds(pairs, viewer: Actor) -> tuple[list[dict], game.GameState]:
    at, folds, state = set(_checkpoints(pairs)), [], game.initial()
    for i, (_, event) in enumerate(pairs):
        state = views.fold_view([event], viewer, state)
        if i in at:
            folds.append(python_view(state))
    return folds, state


@pytest.fixture(scope="module")
def compared(night):
    node = _node_or_skip()
    cases = _views(night)
    folds, states = {}, {}
    for name, viewer, pairs in cases:
        folds[name], states[name] = _python_folds(pairs, viewer)
    payload = {"views": [{"name": name, "events": pairs, "checkpoints": _checkpoints(pairs),
                          "actions": _actions(states[name])} for name, _, pairs in cases]}
    done = subprocess.run([node, str(HARNESS)], input=msgspec.json.encode(payload), capture_output=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr.decode()
    told = {v["name"]: v for v in json.loads(done.stdout)}
    return cases, states, told, folds


def test_the_night_covers_every_ruleset_and_every_event_type(night):
    tags = {type(e).__struct_config__.tag for pairs in night.values() for _, e in pairs}
    assert tags == set(game.EVENT_BY_TAG), (
        sorted(set(game.EVENT_BY_TAG) - tags))


@pytest.mark.parametrize("lang", ["en", "fr"])
def test_python_and_javascript_tell_every_event_in_the_same_words(compared, lang):
    cases, _, told, _ = compared
    differ, counted = [], 0
    for name, _, pairs in cases:
        names, scenes = _teller_names(pairs)
        teller = Teller(names, lang, scenes)
        for (seq, event), js in zip(pairs, told[name]["sentences"][lang], strict=True):
            counted += 1
            py = sentence(event, teller)
            if py != js:
                differ.append(f"{name} #{seq} {type(event).__struct_config__.tag}:\n  py {py!r}\n  js {js!r}")
    assert counted > 2000
    assert differ == [], f"{len(differ)} of {counted} differ:\n" + "\n".join(differ[:15])


def test_the_javascript_fold_equals_the_python_state_for_every_ruleset(compared):
    cases, _, told, folds = compared
    for name, _, pairs in cases:
        assert told[name]["errors"] == [], name
        for at, js, py in zip(_checkpoints(pairs), told[name]["folds"], folds[name], strict=True):
            assert js == py, f"{name}, after event #{pairs[at][0]}"


def test_the_tablets_initiative_is_pythons_met_9(compared):
    cases, states, told, _ = compared
    checked = 0
    for name, _, _ in cases:
        turns = _actions(states[name])
        for actions, js in zip(turns, told[name]["initiative"], strict=True):
            py = [[list(a) for a in group] for group in initiative_order(states[name], [tuple(a) for a in actions])]
            assert js == py, (name, actions)
            checked += len(actions) > 1
    assert checked >= 5

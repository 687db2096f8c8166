"""Python and the web app tell and fold a night the same way.

A mixed night, every ruleset through the real command path on real SQLite files:
``conteur simulate``'s three sessions (MET throws, ties, bids, retests, overbids and tie
debts; V5 pools with Hunger, Rouse checks and Willpower rerolls; action dice with opposed
and sealed rolls, long actions, deaths), the review's scripted evening (Time Out, an
overrule, challenges played by hand, disputed, ruled and confirmed) with a few more moves,
a V5 sheet amended after its Hunger moved, a group challenge (one against three), a
storyteller's static test of three characters at once, a night where deaths leave rolls waiting and
long actions pending for the storyteller to settle, and two sessions of one chronicle
(the simulator's MET players around a script): the second inherits the first's unpaid tie
debts in ``session.opened.carried`` and its characters as amended. Every event type of
``game.EVENT_TYPES`` reaches a device in every form it has (a new one fails the coverage
test until the night plays it). Each session is seen by the storyteller, a wall display
and every player (sealed and redacted forms). The web app's own modules then run under
node (tests/support/js/differential.mjs): for every event, narrate.js's sentence equals
events/narrate.py's, in English and in French; fold.js's view equals the Python state
folded from the same events (after every event of a scripted view, every 20th of a
simulated one), a difference named by its field; and fold.js's MET-9 initiative order
equals Python's. Without node the comparisons are skipped, unless
``CONTEUR_REQUIRE_NODE=1`` (``.ci/run`` sets it): then they fail.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
from pathlib import Path

import msgspec
import pytest

from conteur.events import desk, game, met, session, v5, views
from conteur.events.met_rules import TieDebt
from conteur.events.model import STORYTELLER, Actor, Event, ScriptedDraws
from conteur.events.simulate import met as simulate_met
from conteur.events.narrate import Teller, sentence
from conteur.server.audit.review import read_session
from conteur.server.cli.simulate import play
from conteur.server.core.service import Chronicle
from conteur.server.store.sqlite import SQLiteStore
from tests.support.action_support import ROSTER, act
from tests.support.group_support import open_group_session, play_group, play_static_group
from tests.support.client_support import ANNA as ANNA_SHEET, BRUNO as BRUNO_SHEET, CLARA, SESSION, command
from tests.support.review_support import ANNA, BRUNO, evening, run

NODE = shutil.which("node") or "/usr/bin/node"
HARNESS = Path(__file__).resolve().parents[1] / "support" / "js" / "differential.mjs"
ATTRIBUTES = ("physical", "social", "mental")

initiative_order = met.initiative_order


def _node_or_skip() -> str:
    """node, or a skip with its reason; an error where ``CONTEUR_REQUIRE_NODE=1`` (``.ci/run``
    sets it): CI never turns green by skipping the twins."""
    if not Path(NODE).is_file():
        missing = f"node is not installed (looked for {NODE}): the web app's modules cannot run"
        if os.environ.get("CONTEUR_REQUIRE_NODE") == "1":
            pytest.fail(f"CONTEUR_REQUIRE_NODE=1 but {missing}")
        pytest.skip(missing)
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
    go(STORYTELLER, "open_scene", scene="cellar", name="Cellar")
    go(STORYTELLER, "start_countdown", clock="rats", turns=4, scope="scene", scene="cellar")
    go(STORYTELLER, "start_countdown", clock="midnight", minutes=30, scope="venue")
    go(STORYTELLER, "pause_countdown", clock="midnight", scope="venue")
    # a scene's countdown and the venue's through pause, resume and cancel: their sentences say whose
    go(STORYTELLER, "pause_countdown", clock="rats")
    go(STORYTELLER, "start_countdown", clock="rats")
    go(STORYTELLER, "cancel_countdown", clock="rats")
    go(STORYTELLER, "start_countdown", clock="midnight", scope="venue")
    go(STORYTELLER, "cancel_countdown", clock="midnight", scope="venue")


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


def _hunger_amended(chronicle: Chronicle, sid: str) -> None:
    """V5-5: Hunger lives in the state once it moved; a sheet amended with another starting
    Hunger sets it again (a sheet amended otherwise keeps it)."""
    def go(actor, tag, **fields):
        run(chronicle, actor, tag, sid, **fields)

    clara = msgspec.to_builtins(CLARA)
    go(STORYTELLER, "set_hunger", character="clara", hunger=4)
    go(STORYTELLER, "amend_sheet", character="clara", reason="a long night", sheet={**clara, "willpower": 4})
    go(STORYTELLER, "amend_sheet", character="clara", reason="fed at dawn", sheet={**clara, "hunger": 1})
    go(STORYTELLER, "close_session")


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


CHRONICLE = "Elysium"
FIRST, SECOND = "elysium-1", "elysium-2"
STEPS = 250  # simulated commands a session of the chronicle plays besides its script


def _simulated(chronicle: Chronicle, sid: str, rng: random.Random, steps: int) -> None:
    """The simulator's MET players and storyteller, through the command path (some refused)."""
    for _ in range(steps):
        actor, cmd = simulate_met.random_command(rng, chronicle.state(sid))
        chronicle.submit(sid, cmd, actor).result()


def _challenge(chronicle: Chronicle, sid: str, **fields) -> str:
    before = set(chronicle.state(sid).met.live)
    run(chronicle, ANNA, "challenge", sid, character="anna", defender="bruno", **fields)
    (made,) = set(chronicle.state(sid).met.live) - before
    return made


def _chronicle(folder: Path) -> dict[str, list[tuple[int, object]]]:
    """Two sessions of one chronicle (TIME-2): the first ends with tie debts unpaid and
    Bruno's sheet amended; the second inherits the debts in ``session.opened.carried``
    (MET-13, the server fills it) and the storyteller adds everyone again with the sheets
    as they stood at the end of the first, the amended one included. The first tie between
    Bruno and Anna pays the carried debt. Around the script, the simulator plays."""
    rng = random.Random(7)
    with SQLiteStore(folder / "chronicle.db") as store:
        chronicle = Chronicle(store)

        def go(actor, tag, sid=FIRST, **fields):  # ``chronicle`` is open_session's field too
            executed = chronicle.execute_sync(sid, command(tag, **fields), actor)
            assert not executed.outcome.rejected, (tag, executed.outcome)

        for actor, cmd in simulate_met.setup_session(rng, 4, chronicle=CHRONICLE):
            chronicle.submit(FIRST, cmd, actor).result()
        _simulated(chronicle, FIRST, rng, STEPS)
        if chronicle.state(FIRST).session.frozen:
            go(STORYTELLER, "resume", scope="session")
        for who, sheet in (("anna", ANNA_SHEET), ("bruno", BRUNO_SHEET)):
            go(STORYTELLER, "add_character", character=who, name=who.title(), sheet=msgspec.to_builtins(sheet))
        go(STORYTELLER, "open_scene", scene="crypt", name="Crypt")
        go(ANNA, "join_scene", character="anna", scene="crypt")
        go(BRUNO, "join_scene", character="bruno", scene="crypt")
        # Anna wins the throw; Bruno overbids 7 to 6, not 4 above: he loses and owes her a tie
        c = _challenge(chronicle, FIRST, attribute="physical")
        go(ANNA, "throw", character="anna", challenge=c, round=1, choice="rock")
        go(BRUNO, "throw", character="bruno", challenge=c, round=1, choice="scissors")
        go(BRUNO, "overbid", character="bruno", challenge=c, value=7)
        go(ANNA, "bid", character="anna", challenge=c, round=1, value=6)
        go(STORYTELLER, "amend_sheet", character="bruno", reason="staked",
           sheet={"kind": "met", "physical": 5, "social": 2, "mental": 3, "celerity": 1, "abilities": {"brawl": 2}})
        go(STORYTELLER, "close_session")
        assert TieDebt(debtor="bruno", creditor="anna", challenge=c) in chronicle.state(FIRST).met.debts

        first = chronicle.state(FIRST).session
        go(STORYTELLER, "open_session", SECOND, name="Elysium, second night", chronicle=CHRONICLE)
        for character in sorted(first.characters.values(), key=lambda c: c.id):
            go(STORYTELLER, "add_character", SECOND, character=character.id, name=character.name,
               sheet=msgspec.to_builtins(character.sheet))
        for scene in (simulate_met.SCENE, "crypt"):
            go(STORYTELLER, "open_scene", SECOND, scene=scene, name=first.scenes[scene].name)
            for character in sorted(first.characters):
                if first.characters[character].scene == scene:
                    go(Actor(role="player", character=character, name=character), "join_scene", SECOND,
                       character=character, scene=scene)
        # a tie of throws: Bruno owes Anna one from the first night, so it pays
        c = _challenge(chronicle, SECOND, attribute="social")
        go(ANNA, "throw", SECOND, character="anna", challenge=c, round=1, choice="paper")
        go(BRUNO, "throw", SECOND, character="bruno", challenge=c, round=1, choice="paper")
        _simulated(chronicle, SECOND, rng, STEPS)
        go(STORYTELLER, "close_session", SECOND)
        return {sid: _pairs(store, sid) for sid in (FIRST, SECOND)}


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
        _hunger_amended(chronicle, "nuit")
        sessions["nuit"] = _pairs(store, "nuit")
        open_group_session(chronicle, "group")  # one against three (MET-1)
        play_group(chronicle, "group")
        run(chronicle, STORYTELLER, "close_session", "group")
        sessions["group"] = _pairs(store, "group")
        open_group_session(chronicle, "static")  # a storyteller's trap tested on three (MET-10)
        play_static_group(chronicle, "static")
        run(chronicle, STORYTELLER, "close_session", "static")
        sessions["static"] = _pairs(store, "static")
    sessions["deaths"] = _deaths()
    sessions.update(_chronicle(folder))
    return sessions


OBSERVER = Actor(role="observer", name="wall")  # a wall display: the public forms only


def _viewers(pairs) -> list[Actor]:
    players = sorted({e.character for _, e in pairs if isinstance(e, session.CharacterAdded)})
    return [STORYTELLER, OBSERVER] + [Actor(role="player", character=c, name=c) for c in players]


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
    """The Python state in the shape of tests/support/js/differential.mjs's ``projection``."""
    s = state.session
    return _plain({
        "session": {"name": s.name, "status": s.status, "frozen": s.frozen, "turn": s.turn,
                    "game_seconds": s.game_seconds, "turn_seconds": s.turn_seconds,
                    "options": s.options if s.status != "pending" else None},
        "characters": {c.id: {"name": c.name, "scene": c.scene, "out_of_game": c.out_of_game,
                              "no_sheet": c.no_sheet, "sheet": c.sheet}
                       for c in sorted(s.characters.values(), key=lambda c: c.id)},
        "scenes": {x.id: {"name": x.name, "open": x.open, "frozen": x.frozen}
                   for x in sorted(s.scenes.values(), key=lambda x: x.id)},
        "challenges": {c.id: {"status": c.status, "winner": c.winner, "loser": c.loser, "round": c.round,
                              "kind": c.kind, "initiator": c.initiator, "defender": c.defender, "tested": c.tested,
                              "attribute": c.attribute, "defender_attribute": c.defender_attribute,
                              "difficulty": c.difficulty, "tests": c.tests, "test": c.test, "abilities": c.abilities,
                              "defender_abilities": c.defender_abilities, "mutual": c.mutual, "by": c.by,
                              "reason": c.reason, "retests": c.retests, "overbids": c.overbids,
                              "overbid_value": c.overbid_value, "cancellable": c.cancellable,
                              "thrown": sorted(c.throws), "bid": sorted(c.bids),
                              "group": c.group, "defenders": c.defenders, "group_results": c.results}
                       for c in sorted(state.met.challenges.values(), key=lambda c: c.id)},
        "debts": [[d.debtor, d.creditor, d.challenge] for d in state.met.debts],
        "hunger": dict(sorted(state.v5.hunger.items())),
        # V5-9: the roll a Willpower reroll may take, per character (the phone's button)
        "v5_rolls": {key: {"id": r.id, "normal": r.normal, "hunger": r.hunger, "rerolled": r.rerolled}
                     for key, r in sorted(state.v5.rolls.items())},
        "waiting": {k: {"character": w.character, "opponent": w.opponent, "visibility": w.visibility}
                    for k, w in sorted(state.action.waiting.items())},
        "pending": {k: {"character": b.character, "turns": b.turns, "started_turn": b.started_turn,
                        "last_turn": b.last_turn, "visibility": b.visibility}
                    for k, b in sorted(state.action.pending.items())},
        "dead": dict(sorted(state.action.dead.items())),
        "modifiers": sorted(m.id for m in state.action.modifiers),
        "offline": {r.id: {"status": r.status, "winner": r.winner, "recorder": r.recorder, "opponent": r.opponent,
                           "attribute": r.attribute}
                    for r in sorted(state.offline.records.values(), key=lambda r: r.id)},
        "countdowns": {c.id: {"label": c.label, "unit": c.unit, "length": c.length, "ends_at": c.ends_at,
                              "ends_turn": c.ends_turn, "paused": c.paused, "remaining": c.remaining,
                              "scope": c.scope, "scene": c.scene}
                       for c in sorted(state.desk.countdowns.values(), key=lambda c: c.id)},
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


EVERY = 20  # the folds of a simulated view are compared after every 20th event
SCRIPTED = 100  # a view this short is a script's: each of its events makes its point


def _checkpoints(pairs) -> list[int]:
    """After every event of a short view; of a long one after every 20th, the last, and the
    first: what ``session.opened`` carried in (MET-13 debts) shows before anything else moves."""
    if len(pairs) <= SCRIPTED:
        return list(range(len(pairs)))
    return sorted({0, *range(EVERY - 1, len(pairs), EVERY), len(pairs) - 1})


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


# Event types the night may leave out, each with the reason (the phone folds or tells every
# other one): a new event type fails the test below until the night plays it or it is here.
NOT_IN_THE_NIGHT: dict[str, str] = {}


def _sealed_forms() -> set[str]:
    """The event types with a sealed form of their own (another player's throw, bid or
    sheet), not the nothing-at-all of a hidden roll (``v5.Visible``) or of a call to the
    storytellers (``desk``), nor the default nothing."""
    nothing = {Event.redacted, v5.Visible.redacted, desk.StorytellerCalled.redacted}
    return {t.__struct_config__.tag for t in game.EVENT_TYPES if t.redacted not in nothing}


def _received(night) -> dict[str, set[str]]:
    """For each event type, the forms devices of the night received it in: the viewer's
    role (``storyteller``: whole; ``player``, ``observer``: any form) and ``sealed`` (the
    redacted form, on a device not among its owners)."""
    got: dict[str, set[str]] = {}
    for pairs in night.values():
        for viewer in _viewers(pairs):
            for _, event in pairs:
                seen = views.view(event, viewer)
                if seen is None:
                    continue
                forms = got.setdefault(type(event).__struct_config__.tag, set())
                forms.add(viewer.role)
                if seen != event:
                    forms.add("sealed")
    return got


def test_the_night_gives_every_event_type_to_a_device_in_every_form(night):
    """Every type of ``game.EVENT_TYPES`` reaches the storyteller's tablet and a player's
    phone, and each type with a sealed form reaches someone sealed: the twins are compared
    on every form a device folds and tells."""
    assert set(NOT_IN_THE_NIGHT) <= set(game.EVENT_BY_TAG), "a listed type is gone"
    got = _received(night)
    wanted = {tag: {"storyteller", "player"} | ({"sealed"} if tag in _sealed_forms() else set())
              for tag in game.EVENT_BY_TAG if tag not in NOT_IN_THE_NIGHT}
    missing = {tag: sorted(forms - got.get(tag, set())) for tag, forms in wanted.items()}
    assert {tag: forms for tag, forms in missing.items() if forms} == {}
    assert _sealed_forms() >= {"met.throw_committed", "met.bid_declared", "session.sheet_amended"}
    listed = sorted(tag for tag in NOT_IN_THE_NIGHT if tag in got)
    assert listed == [], "played in the night after all: no longer to be listed"


def test_the_night_spans_two_sessions_of_one_chronicle(night):
    """MET-13 across sessions: the second opens with the first's unpaid debts carried (the
    server fills ``carried``), Bruno's sheet as amended, and a tie pays a carried debt."""
    first, second = night[FIRST], night[SECOND]
    unpaid = game.fold([e for _, e in first]).met.debts
    (opened,) = [e for _, e in second if isinstance(e, session.SessionOpened)]
    assert opened.chronicle == CHRONICLE and ("bruno", "anna") in {(d.debtor, d.creditor) for d in unpaid}
    assert opened.carried.tie_debts == unpaid
    amended = [e for _, e in first if isinstance(e, session.SheetAmended) and e.character == "bruno"]
    added = [e for _, e in second if isinstance(e, session.CharacterAdded) and e.character == "bruno"]
    assert amended and added[0].sheet == amended[-1].sheet != BRUNO_SHEET
    paid = [e for _, e in second if isinstance(e, met.TieDebtPaid)]
    assert ("bruno", "anna") in {(p.debtor, p.creditor) for p in paid}


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


def _differences(js, py, path="") -> list[str]:
    """Where two projections differ, as field paths with both values: a failure names the
    field, not two whole states."""
    if isinstance(js, dict) and isinstance(py, dict):
        out = []
        for key in sorted(set(js) | set(py), key=str):
            if key not in js or key not in py:
                out.append(f"{path}.{key}: js {js.get(key, '(missing)')!r}, py {py.get(key, '(missing)')!r}")
            else:
                out += _differences(js[key], py[key], f"{path}.{key}")
        return out
    return [] if js == py else [f"{path}: js {js!r}, py {py!r}"]


def test_the_javascript_fold_equals_the_python_state_for_every_ruleset(compared):
    cases, _, told, folds = compared
    first = []  # each view's first difference: one bug shows in every view it reaches
    for name, _, pairs in cases:
        assert told[name]["errors"] == [], name
        for at, js, py in zip(_checkpoints(pairs), told[name]["folds"], folds[name], strict=True):
            seq, event = pairs[at]
            differ = _differences(js, py)
            if differ:
                first.append(f"{name}, after event #{seq} ({type(event).__struct_config__.tag}):\n    "
                             + "\n    ".join(differ[:5]))
                break
    assert not first, f"{len(first)} of {len(cases)} views differ:\n  " + "\n  ".join(first)


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

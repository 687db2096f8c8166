"""A storyteller amends a character's sheet in play (``amend_sheet``): a wound's malus, a
power that forbids initiating, traits lost or regained, an Expertise gained. The new sheet
applies from the next command on, a challenge already open included (rules-choices 21).
"""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import given as for_all
from hypothesis import strategies as st

from conteur.events import game, views
from conteur.events.action import RollAction
from conteur.events.met import BidDeclared, IssueChallenge, DeclareBid
from conteur.events.model import STORYTELLER, Actor
from conteur.events.session import AddCharacter, AmendSheet, CharacterAdded, SessionClosed, SheetAmended
from conteur.events.sheets import ActionSheet, MetSheet, V5Sheet
from conteur.events.testing import assert_decides, assert_refuses, decide_after
from conteur.events.v5 import RollPool
from conteur.events.narrate import Teller, sentence
from tests.support.examples import examples
from tests.support.met_support import B7, classic, player, roster, thrown

A, B = player("a"), player("b")
STRONG = MetSheet(physical=6, abilities={"Melee": 5}, bonus={"physical": 4})  # true 15, cap 12
WOUNDED = msgspec.structs.replace(STRONG, physical=4)  # true 13, cap 8


def amended(character: str, sheet, reason: str = "") -> SheetAmended:
    return SheetAmended(character=character, sheet=sheet, reason=reason)


def tied(sheet: MetSheet) -> list:
    """A and B tied on the throw of c1 (Physical, A with Melee): both must bid (MET-3)."""
    return roster(a=sheet, b=B7) + [classic(abilities=("Melee",))] + thrown("c1", 1, a="rock", b="rock")


def bid(value: int) -> DeclareBid:
    return DeclareBid(character="a", challenge="c1", round=1, value=value)


# ---------------------------------------------------------------- the command


def test_the_storyteller_amends_a_sheet_and_the_reason_is_kept():
    assert_decides(
        given=roster(a=STRONG, b=B7),
        when=AmendSheet(character="a", sheet=WOUNDED, reason="stabbed: 2 Physical lost"),
        then=[amended("a", WOUNDED, "stabbed: 2 Physical lost")],
    )


def test_the_new_sheet_replaces_the_old_in_the_state_and_nothing_else_changes():
    given = roster(a=STRONG, b=B7)
    before = game.fold(given)
    after = game.fold([amended("a", WOUNDED)], before)
    assert after.session.characters["a"].sheet == WOUNDED
    assert before.session.characters["a"].sheet == STRONG  # evolve never mutates
    assert after.session.characters["a"].scene == "s1"
    assert after.session.characters["b"] == before.session.characters["b"]


@pytest.mark.parametrize("actor", [player("a"), player("b"), Actor(role="observer")])
def test_only_a_storyteller_may_amend_a_sheet(actor):
    assert_refuses(given=roster(a=STRONG, b=B7), when=AmendSheet(character="a", sheet=WOUNDED),
                   actor=actor, code="forbidden")


def test_an_unknown_character_is_refused():
    assert_refuses(given=roster(a=STRONG), when=AmendSheet(character="zed", sheet=WOUNDED),
                   code="not_found", match="no character 'zed'")


def test_a_sheet_of_another_kind_is_refused_naming_both_kinds():
    violation = assert_refuses(given=roster(a=STRONG), when=AmendSheet(character="a", sheet=V5Sheet(hunger=1)),
                               code="invalid")
    assert violation.message == "A has a met sheet: a v5 sheet cannot replace it (send a met sheet)"


def test_a_sheet_that_does_not_validate_is_refused_naming_the_field():
    # what the wire decoder refuses for add_character, refused for a Python-built command too
    assert_refuses(given=roster(a=STRONG), when=AmendSheet(character="a", sheet=MetSheet(physical="six")),
                   code="invalid", match="$.physical")
    assert_refuses(given=roster(a=STRONG), when=AmendSheet(character="a", sheet=MetSheet(bonus={"physical": 1.5})),
                   code="invalid", match="$.bonus")


def test_add_character_refuses_a_python_built_sheet_that_does_not_validate_too():
    assert_refuses(given=roster(a=STRONG), when=AddCharacter(character="b", name="B", sheet=MetSheet(physical="six")),
                   code="invalid", match="$.physical")


def test_the_wire_refuses_a_sheet_that_does_not_decode():
    from conteur.events import wire

    frame = ('{"type": "command", "id": "x", "command": {"type": "amend_sheet", "character": "a",'
             ' "sheet": {"kind": "met", "physical": "six"}}}')
    with pytest.raises(wire.FrameError) as refused:
        wire.decode(frame)
    assert refused.value.code == "invalid" and "$.command.sheet.physical" in refused.value.message


def test_a_character_added_without_a_sheet_may_be_given_one_of_any_kind():
    given = roster() + [CharacterAdded(character="npc", name="Guard")]
    assert_decides(given=given, when=AmendSheet(character="npc", sheet=ActionSheet(characteristics={"Force": 5})),
                   then=[amended("npc", ActionSheet(characteristics={"Force": 5}))])


def test_time_2_a_closed_session_refuses_amendments():
    assert_refuses(given=roster(a=STRONG) + [SessionClosed(seed="s")],
                   when=AmendSheet(character="a", sheet=WOUNDED), match="closed (TIME-2)")


def test_amending_is_accepted_during_a_time_out():
    from conteur.events.session import TimeOutCalled

    given = roster(a=STRONG) + [TimeOutCalled(scope="session")]
    assert_decides(given=given, when=AmendSheet(character="a", sheet=WOUNDED), then=[amended("a", WOUNDED)])


# ---------------------------------------------------------------- MET rules read the new sheet


def test_met_4_an_amended_sheet_lowers_the_cap_in_an_open_challenge():
    # 6 Physical: a bid of 12 was allowed (cap 12); amended to 4, a bid of 9 is above the cap of 8
    assert_decides(given=tied(STRONG), when=bid(12), actor=A,
                   then=[BidDeclared(challenge="c1", round=1, character="a", value=12)])
    given = tied(STRONG) + [amended("a", WOUNDED, "stabbed")]
    violation = assert_refuses(given=given, when=bid(9), actor=A)
    assert violation.message == "bid 9 is above your cap of 8 (twice your 4 Physical traits) (MET-4)"
    assert violation.rule == "MET-4"
    assert_decides(given=given, when=bid(8), actor=A,
                   then=[BidDeclared(challenge="c1", round=1, character="a", value=8)])


def test_met_4_regained_traits_raise_the_cap_again():
    given = tied(WOUNDED) + [amended("a", STRONG, "healed")]
    assert_decides(given=given, when=bid(12), actor=A,
                   then=[BidDeclared(challenge="c1", round=1, character="a", value=12)])


def test_met_15_a_wound_malus_set_in_play_lowers_the_true_score():
    sheet = MetSheet(physical=6, abilities={"Melee": 2})  # true 8
    wound = msgspec.structs.replace(sheet, bonus={"physical": -2})  # true 6
    assert_decides(given=tied(sheet), when=bid(7), actor=A,
                   then=[BidDeclared(challenge="c1", round=1, character="a", value=7)])
    violation = assert_refuses(given=tied(sheet) + [amended("a", wound, "wounded")], when=bid(7), actor=A)
    assert "above your true 6 (Physical 6 + Melee 2 + bonus -2)" in violation.message
    assert "MET-15" in violation.message


def test_met_1_cannot_initiate_set_in_play_refuses_the_next_challenge_but_still_defends():
    given = roster(a=STRONG, b=B7)
    challenge = IssueChallenge(character="a", defender="b", attribute="physical")
    assert_decides(given=given, when=challenge, actor=A, then=[classic()])
    dominated = given + [amended("a", msgspec.structs.replace(STRONG, cannot_initiate=True), "Dominate")]
    assert_refuses(given=dominated, when=challenge, actor=A, match="can initiate no challenge, only defend (MET-1)")
    assert_decides(given=dominated, when=IssueChallenge(character="b", defender="a", attribute="physical"),
                   actor=B, then=[classic(initiator="b", defender="a")])


def test_met_1_a_challenge_already_open_goes_on_after_cannot_initiate_is_set():
    dominated = msgspec.structs.replace(STRONG, cannot_initiate=True)
    given = tied(STRONG) + [amended("a", dominated)]
    assert_decides(given=given, when=bid(10), actor=A,
                   then=[BidDeclared(challenge="c1", round=1, character="a", value=10)])


def test_met_5_traits_lost_to_zero_lose_the_next_challenge_at_once():
    given = roster(a=STRONG, b=B7) + [amended("a", msgspec.structs.replace(STRONG, physical=0))]
    events = decide_after(given, IssueChallenge(character="b", defender="a", attribute="physical"), actor=B)
    assert [e.__struct_config__.tag for e in events][-1] == "met.challenge_resolved"
    assert events[-1].loser == "a" and events[-1].reason == "zero_traits"


# ---------------------------------------------------------------- dice rules read the new sheet


V5 = V5Sheet(attributes={"Dexterity": 3}, skills={"Stealth": 2}, hunger=2)
ANNA = Actor(role="player", character="anna", name="Anna")


def test_v5_1_a_pool_reads_the_amended_sheet():
    given = [CharacterAdded(character="anna", name="Anna", sheet=V5)]
    better = msgspec.structs.replace(V5, skills={"Stealth": 4})
    (rolled,) = decide_after(given + [amended("anna", better, "trained")],
                             RollPool(character="anna", attribute="Dexterity", skill="Stealth"),
                             actor=ANNA, draws=[6] * 7)
    assert (rolled.pool, rolled.source) == (7, "Dexterity 3 + Stealth 4")


def test_act_8_an_amended_tension_sets_it_and_an_unchanged_one_keeps_play():
    from conteur.events.action import TensionRaised

    jake = ActionSheet(characteristics={"Motricité": 6}, tension=0)

    def surpassed(given: list) -> tuple[list, list[int]]:
        """Jake surpasses himself (ACT-8): the events, and the tension each raised it to."""
        events = decide_after(given, RollAction(character="jake", characteristic="Motricité", difficulty=1,
                                                option="surpass"), draws=[8, 8, 8, 3, 3])
        return given + events, [e.tension for e in events if isinstance(e, TensionRaised)]

    played, raised = surpassed([CharacterAdded(character="jake", name="Jake", sheet=jake)])
    assert raised == [1]
    kept = played + decide_after(played, AmendSheet(character="jake",
                                                    sheet=msgspec.structs.replace(jake, expertises=("Nager",))))
    assert surpassed(kept)[1] == [2]  # the sheet's tension did not change: play's stays
    calmer = played + decide_after(played, AmendSheet(character="jake", sheet=msgspec.structs.replace(jake, tension=3)))
    assert surpassed(calmer)[1] == [4]


def test_act_3_an_expertise_gained_in_play_may_be_named():
    jake = ActionSheet(characteristics={"Motricité": 6}, expertises=("Sauter",))
    given = [CharacterAdded(character="jake", name="Jake", sheet=jake)]
    roll = RollAction(character="jake", characteristic="Motricité", difficulty=1, expertise="Nager")
    jake_plays = Actor(role="player", character="jake")
    assert_refuses(given=given, when=roll, actor=jake_plays, match="no Expertise 'Nager'")
    swims = msgspec.structs.replace(jake, expertises=("Sauter", "Nager"))
    (rolled,) = decide_after(given + [amended("jake", swims, "lessons")], roll, actor=jake_plays,
                             draws=[5, 6, 8])
    assert (rolled.expertise, rolled.expertise_name, rolled.sides) == (True, "Nager", 10)  # the expert die


# ---------------------------------------------------------------- who sees what


def test_the_sheet_and_the_reason_are_for_the_character_and_the_storytellers():
    event = amended("a", WOUNDED, "stabbed: 2 Physical lost")
    assert views.view(event, STORYTELLER) == event
    assert views.view(event, player("a")) == event
    sealed = amended("a", None, "")
    assert views.view(event, player("b")) == sealed
    assert views.view(event, Actor(role="observer")) == sealed


def test_another_player_folding_the_sealed_form_keeps_what_it_knew():
    given = roster(a=STRONG, b=B7) + [amended("a", WOUNDED, "stabbed")]
    seen_by_b = views.fold_view(given, player("b"))
    assert seen_by_b.session.characters["a"].sheet is None
    assert views.fold_view(given, player("a")).session.characters["a"].sheet == WOUNDED


@pytest.mark.parametrize("lang, said, sealed", [
    ("en", "A storyteller amended A's sheet (stabbed).", "A storyteller amended A's sheet."),
    ("fr", "Fiche modifiée par le conteur : A (stabbed).", "Fiche modifiée par le conteur : A."),
])
def test_the_review_tells_the_amendment_and_its_reason_only_to_who_may_read_it(lang, said, sealed):
    event = amended("a", WOUNDED, "stabbed")
    teller = Teller({"a": "A"}, lang)
    assert sentence(event, teller) == said
    assert sentence(event.redacted(), teller) == sealed


# ---------------------------------------------------------------- replay


METS = st.builds(
    MetSheet,
    physical=st.integers(0, 10), social=st.integers(0, 10), mental=st.integers(0, 10),
    bonus=st.dictionaries(st.sampled_from(["physical", "social", "mental"]), st.integers(-3, 3), max_size=2),
    cannot_initiate=st.booleans(),
)


@for_all(st.lists(st.tuples(st.sampled_from(["a", "b"]), METS, st.text(max_size=12)), max_size=12))
def test_replay_from_zero_equals_the_live_state(amendments):
    """Each amendment decided against the live state, then the whole log folded from zero
    (as the store does after a restart) gives the same state."""
    log = roster(a=STRONG, b=B7)
    live = game.fold(log)
    for who, sheet, reason in amendments:
        events = game.decide(live, AmendSheet(character=who, sheet=sheet, reason=reason), None, actor=STORYTELLER)
        for event in events:
            live = game.evolve(live, event)
        log += events
    assert game.fold(log) == live
    decoded = msgspec.json.decode(msgspec.json.encode(log), type=list[game.AnyEvent])
    assert game.fold(decoded) == live  # through the stored form too
    for who in ("a", "b"):
        last = [s for w, s, _ in amendments if w == who]
        assert live.session.characters[who].sheet == (last[-1] if last else {"a": STRONG, "b": B7}[who])


# ---------------------------------------------------------------- on a real server


@pytest.fixture(scope="module")
def venue(tmp_path_factory):
    from conteur.server.testing import Venue

    with Venue(tmp_path_factory.mktemp("amend") / "chronicle.db") as v:
        yield v


CAST = ("anna", "bruno", "clara")
AMENDMENT = st.tuples(
    st.sampled_from(("storyteller",) + CAST),  # who sends it: players are refused
    st.sampled_from(CAST),  # whose sheet
    METS,
    st.booleans(),  # with a reason (or an empty one)
    st.booleans(),  # a sheet of the wrong kind (refused)
)


def _leaks(viewer: str, raw: str, events: list[dict]) -> list[str]:
    """What of another character's amended sheet reached ``viewer``'s frames."""
    found = []
    for event in events:
        if event["type"] == "session.sheet_amended" and event["character"] != viewer:
            if event["sheet"] is not None or event["reason"]:
                found.append(f"{event['character']}'s amended sheet or reason")
    for other in CAST:
        if other != viewer and f"secret-of-{other}-" in raw:
            found.append(f"{other}'s reason, somewhere in the frames")
    return found


async def _play(venue, session: str, amendments: list) -> None:
    import httpx

    from conteur.server.store.sqlite import decode_events
    from conteur.server.testing import Device

    tokens = {c: venue.token("player", c, session) for c in CAST}
    tokens["wall"] = venue.token("observer", session=session)
    st_token = venue.token()
    async with Device(venue.ws_url, st_token, session, device="st") as tablet:
        await tablet.command({"type": "open_session", "name": session})
        for c in CAST:
            sheet = {"kind": "met", "physical": 5, "social": 5, "mental": 5}
            ack = await tablet.command({"type": "add_character", "character": c, "name": c.title(), "sheet": sheet})
            assert ack["type"] == "ack", ack
        phones = {name: Device(venue.ws_url, token, session, device=name) for name, token in tokens.items()}
        for phone in phones.values():
            await phone.connect()
        try:
            for n, (sender, who, sheet, with_reason, wrong_kind) in enumerate(amendments):
                reason = f"secret-of-{who}-{n}: {sheet.physical} Physical" if with_reason else ""
                body = {"kind": "v5", "hunger": 1} if wrong_kind else msgspec.to_builtins(sheet)
                command = {"type": "amend_sheet", "character": who, "sheet": body, "reason": reason}
                device = tablet if sender == "storyteller" else phones[sender]
                answer = await device.command(command)
                expected = "ack" if sender == "storyteller" and not wrong_kind else "reject"
                assert answer["type"] == expected, (command, answer)
                if wrong_kind:
                    assert "a met sheet: a v5 sheet cannot replace it" in answer["message"] or sender != "storyteller"
            for phone in phones.values():
                await phone.sync()
        finally:
            for phone in phones.values():
                await phone.close()

    rows = venue.runtime.store.read_after(session)
    truth = decode_events([r.data for r in rows])
    live = venue.runtime.chronicle.state(session)
    # replay from zero equals the live state the server decided against
    assert game.fold(truth) == msgspec.structs.replace(live, head=0)
    for name, phone in phones.items():
        raw = msgspec.json.encode(phone.frames).decode()
        viewer = name if name in CAST else None
        assert not _leaks(viewer, raw, [e for _, e in phone.events]), name
        with httpx.Client(base_url=venue.url, headers={"Authorization": f"Bearer {tokens[name]}"}) as http:
            frames = http.get(f"/sessions/{session}/events", params={"limit": 5000}).json()
            state = http.get(f"/sessions/{session}/state").json()
        assert [(f["seq"], f["event"]) for f in frames] == phone.events, f"{name}: HTTP differs"
        assert not _leaks(viewer, msgspec.json.encode(frames).decode() + msgspec.json.encode(state, enc_hook=game.enc_hook).decode(), [])
        for c in CAST:  # its own sheet is the true one; the others' it never learns
            sheet = state["session"]["characters"][c]["sheet"]
            if c == viewer:
                assert sheet == msgspec.json.decode(msgspec.json.encode(live.session.characters[c].sheet))
            else:
                assert sheet is None, (name, c)


_sessions = iter(range(1, 10**6))


@settings(max_examples=examples(8), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@for_all(amendments=st.lists(AMENDMENT, min_size=1, max_size=10))
def test_no_other_player_ever_sees_an_amended_sheet_or_its_reason_over_websocket_or_http(venue, amendments):
    import asyncio

    asyncio.run(_play(venue, f"amend-{next(_sessions)}", amendments))


async def test_the_python_client_amends_a_sheet_and_reads_a_refusal(venue, tmp_path):
    from conteur.client.client import Client

    session = "amend-client"
    async with Client(venue.ws_url, venue.token(), session, outbox=tmp_path / "st.sqlite",
                      create=True) as st:
        await st.wait_live()
        for command in (st.command("open_session", name="x"),
                        st.command("add_character", character="anna", name="Anna", sheet={"kind": "met", "physical": 6})):
            assert (await st.outcome(command)).ok
        done = await st.outcome(st.amend_sheet("anna", {"kind": "met", "physical": 4}, reason="wounded"))
        assert done.ok, done
        refused = await st.outcome(st.amend_sheet("anna", V5Sheet(hunger=1)))
        assert (refused.code, refused.message) == ("invalid", "Anna has a met sheet: a v5 sheet cannot replace it"
                                                   " (send a met sheet)")
        with pytest.raises(msgspec.ValidationError):
            st.amend_sheet("anna", {"kind": "met", "physical": "four"})  # fails here, never queued
        await st.wait_live()
        assert st.state.session.characters["anna"].sheet == MetSheet(physical=4)


def test_met_15_a_challenge_story_in_the_review_shows_the_amendment_made_while_it_was_open(tmp_path):
    # a dispute about a refused bid: the story says the sheet changed, and why only to
    # storytellers and the character
    from conteur.server.audit import review
    from conteur.server.audit import stories
    from conteur.server.core.service import Chronicle
    from conteur.server.store.sqlite import SQLiteStore
    from tests.support.client_support import command

    with SQLiteStore(str(tmp_path / "c.db")) as store:
        chronicle = Chronicle(store)
        plays = [
            (STORYTELLER, command("open_session", name="x")),
            (STORYTELLER, command("add_character", character="a", name="Anna", sheet=msgspec.to_builtins(STRONG))),
            (STORYTELLER, command("add_character", character="b", name="Bruno", sheet=msgspec.to_builtins(B7))),
            (STORYTELLER, command("amend_sheet", character="a", sheet=msgspec.to_builtins(STRONG), reason="before")),
            (STORYTELLER, command("open_scene", scene="s1")),
            (A, command("join_scene", character="a", scene="s1")),
            (B, command("join_scene", character="b", scene="s1")),
            (A, command("challenge", character="a", defender="b", attribute="physical", abilities=["Melee"])),
            (STORYTELLER, command("amend_sheet", character="a", sheet=msgspec.to_builtins(WOUNDED), reason="stabbed")),
        ]
        for actor, cmd in plays:
            assert not chronicle.execute_sync("s", cmd, actor).outcome.rejected, cmd
        told = [step.text for step in stories.challenge_story(review.build(store, "s"), "c1").steps]
        assert told[-1] == "A storyteller amended Anna's sheet (stabbed)."
        assert not [t for t in told if "before" in t]  # made before the challenge: not its story
        seen_by_b = stories.challenge_story(review.build(store, "s", viewer=B), "c1").steps
        assert seen_by_b[-1].text == "A storyteller amended Anna's sheet."
        # the chronicle record keeps it as a storyteller's ruling, in the reader's language
        from conteur.server.audit.export import chapters

        def rulings(viewer, lang):
            built = review.build(store, "s", viewer=viewer, lang=lang)
            return [line.text for c in chapters(built) for line in c.lines if line.kind == "ruling"]

        assert rulings(STORYTELLER, "fr") == ["Fiche modifiée par le conteur : Anna (before).",
                                              "Fiche modifiée par le conteur : Anna (stabbed)."]
        assert rulings(B, "en") == ["A storyteller amended Anna's sheet."] * 2

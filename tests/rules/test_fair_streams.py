"""Draw streams, nonces for hidden rolls, ids by audience and refusals that tell nothing
(RULES FAIR-1, FAIR-2, V5-9, ACT-2, ACT-12)."""

from __future__ import annotations

import hashlib
import hmac
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conteur.events import fair, game, offline, v5
from conteur.events.action import RollAction
from conteur.events.fair import FairDraws, commitment, verify_draws
from conteur.events.model import STORYTELLER, Actor, RuleViolation, sealed_stream_name, stream_name
from conteur.events.session import CharacterAdded
from conteur.events.sheets import ActionSheet, V5Sheet
from tests.support.examples import examples

SEED = bytes(range(32))
SESSION = "night-13"
SHEET = V5Sheet(attributes={"Wits": 3}, skills={"Brawl": 2}, willpower=4, humanity=7, hunger=1)
ROSTER = [CharacterAdded(character=c, name=c.title(), sheet=SHEET) for c in ("iris", "jack")] + [
    CharacterAdded(character="kim", name="Kim", sheet=ActionSheet(characteristics={"Science": 6}))]
IRIS, JACK, KIM = (Actor(role="player", character=c, name=c) for c in ("iris", "jack", "kim"))


def run(steps):
    """Decides and folds ``(actor, command, entropy)`` steps with fair draws; the events."""
    state, events = game.fold(ROSTER), []
    for actor, command, entropy in steps:
        draws = FairDraws(SEED, SESSION, entropy=entropy, streams=state.streams,
                          nonce="" if entropy else fair.new_nonce())
        decided = game.decide(state, command, draws, actor=actor)
        state = game.fold(decided, state)
        events += decided
    return state, events


def jack_roll(visibility="open"):
    return JACK, v5.RollPool(character="jack", attribute="Wits", skill="Brawl", visibility=visibility), "j"


@settings(max_examples=examples(300))
@given(session=st.text(max_size=30), stream=st.text(max_size=30), counter=st.integers(0, 2**53),
       entropy=st.text(max_size=60), block=st.integers(0, 50))
def test_fair_2_both_published_messages_are_the_json_of_their_fields(session, stream, counter, entropy,
                                                                     block):
    dumps = lambda v: json.dumps(v, separators=(",", ":"), ensure_ascii=False).encode("utf-8")  # noqa: E731
    assert fair.block_message(session, counter, entropy, block) == dumps([session, counter, entropy, block])
    if stream:
        assert fair.block_message(session, counter, entropy, block, stream) == dumps(
            [session, stream, counter, entropy, block])


def test_a_players_dice_depend_only_on_its_own_stream_whatever_others_do_between():
    alone = run([jack_roll(), jack_roll()])[1]
    others = [(IRIS, v5.RollPool(character="iris", attribute="Wits", skill="Brawl", bonus=3,
                                 visibility="secret"), ""),
              (STORYTELLER, v5.RollPool(character="jack", pool=7, visibility="blind"), "st"),
              (STORYTELLER, v5.RollPool(pool=5), "st"),
              (KIM, RollAction(character="kim", characteristic="Science", difficulty=2, bonus=3), "k")]
    crowded = run([jack_roll(), *others, jack_roll()])[1]
    jack = [e for e in crowded if getattr(e, "character", None) == "jack" and e.visibility == "open"]
    assert [e.draws for e in jack] == [e.draws for e in alone]
    assert {r.stream for e in jack for r in e.draws} == {"jack/open"}


def test_each_drawer_and_audience_has_its_stream():
    assert stream_name(JACK, None) == "jack/open"
    assert stream_name(JACK, frozenset({"jack"})) == "jack/secret=jack"
    assert stream_name(STORYTELLER, frozenset()) == "*/blind"
    assert stream_name(STORYTELLER, frozenset({"jack", "iris"})) == "*/secret=iris,jack"
    # names are escaped: a character called "*" or "a/b" shares no stream with anyone
    assert stream_name(Actor(role="player", character="*"), None) == "%2A/open"
    assert stream_name(Actor(role="player", character="a/b"), None) == "a%2Fb/open"


def test_a_hidden_roll_sent_without_entropy_draws_with_a_nonce_only_its_viewers_receive():
    _, events = run([(IRIS, v5.RollPool(character="iris", attribute="Wits", skill="Brawl",
                                        visibility="secret"), ""),
                     (JACK, v5.RollPool(character="jack", attribute="Wits"), ""),
                     (IRIS, v5.RouseCheck(character="iris", visibility="secret"), "tap")])
    secret, open_, rouse = events
    nonce = secret.draws[0].entropy
    assert len(nonce) == 32 and all(r.entropy == nonce for r in secret.draws)
    assert all(r.entropy == "" for r in open_.draws)  # an open roll needs no secret
    assert rouse.draws[0].entropy == "tap"  # a device's own entropy is never replaced
    # whoever holds the record recomputes it; the seed alone with the stream does not
    assert verify_draws(SEED.hex(), SESSION, events, commitment(SEED), start=0) is None
    guessed = [fair.derive_face(SEED, SESSION, r.counter, 10, "", r.stream) for r in secret.draws]
    assert guessed != [r.face for r in secret.draws]  # five dice: 1 chance in 100,000 to match


def test_fair_1_a_gap_in_a_stream_and_a_moved_die_are_named_with_their_stream():
    _, events = run([jack_roll(), jack_roll(), jack_roll("secret")])
    bad = verify_draws(SEED.hex(), SESSION, [events[0], events[2]], start=0)
    assert bad is None  # the secret stream is another stream: no gap
    bad = verify_draws(SEED.hex(), SESSION, [events[1]], start=0)
    assert bad.reason == "counter" and "stream jack/open" in bad.message


def test_a_log_from_before_streams_still_verifies_and_folds():
    draws = FairDraws(SEED, SESSION, start=0, entropy="old")
    state = game.fold(ROSTER)
    (event,) = game.decide(state, v5.RollPool(character="jack", pool=3), _Legacy(draws), actor=STORYTELLER)
    assert {r.stream for r in event.draws} == {""} and [r.counter for r in event.draws] == [0, 1, 2]
    assert verify_draws(SEED.hex(), SESSION, [event], start=0) is None
    assert game.fold([event], state).draw_counter == 3


class _Legacy:
    """Draws as the server made them before streams: one session-wide counter."""

    def __init__(self, draws):
        self.roll = draws.roll

    def stream(self, actor, owners, *, sealed=""):
        return self


def test_roll_ids_count_only_the_rolls_their_audience_sees():
    _, events = run([jack_roll(), (IRIS, v5.RouseCheck(character="iris", visibility="secret"), "i"),
                     (STORYTELLER, v5.RollPool(character="iris", pool=2, visibility="blind"), "s"),
                     jack_roll(), jack_roll("secret"),
                     (IRIS, v5.RollPool(character="iris", attribute="Wits", visibility="secret"), "i")])
    assert [e.roll for e in events] == ["r1", "r1.iris", "r1.*", "r2", "r1.jack", "r2.iris"]


@pytest.mark.parametrize("name", ["r1.iris", "r2.iris", "r1.*", "r9"])
def test_naming_a_roll_one_may_not_see_is_answered_as_naming_none(name):
    state, _ = run([(IRIS, v5.RollPool(character="iris", attribute="Wits", visibility="secret"), "i"),
                    (STORYTELLER, v5.RollPool(character="iris", pool=2, visibility="blind"), "s")])
    answers = set()
    for roll in (name, "r77", "zz"):
        with pytest.raises(RuleViolation) as refused:
            game.decide(state, v5.WillpowerReroll(character="jack", roll=roll, strategy="reroll_failures"),
                        FairDraws(SEED, SESSION, entropy="x"), actor=JACK)
        answers.add((refused.value.code, refused.value.message.replace(repr(roll), "<id>")))
    assert answers == {("not_found", "no pool roll <id> to reroll")}


def test_a_secret_long_action_and_an_offline_record_of_others_are_answered_as_none():
    state, events = run([(KIM, RollAction(character="kim", characteristic="Science", difficulty=2,
                                          turns=3, visibility="secret"), "k")])
    begun = events[0].roll
    assert begun == "a1.kim"
    answers = set()
    for roll in (begun, "a5.kim"):
        with pytest.raises(RuleViolation) as refused:
            game.decide(state, RollAction(character="jack", resume=roll), FairDraws(SEED, SESSION, entropy="x"),
                        actor=JACK)
        answers.add((refused.value.code, refused.value.message.replace(repr(roll), "<id>")))
    assert len(answers) == 1 and answers.pop()[0] == "not_found"
    recorded = offline.OfflineChallengeRecorded(record="o1.iris+kim", recorder="iris", opponent="kim",
                                                winner="iris")
    state = game.fold([recorded], state)
    answers = set()
    for record in ("o1.iris+kim", "o2.iris+kim"):
        with pytest.raises(RuleViolation) as refused:
            game.decide(state, offline.ConfirmOffline(character="jack", record=record),
                        FairDraws(SEED, SESSION), actor=JACK)
        answers.add((refused.value.code, refused.value.message.replace(repr(record), "<id>")))
    assert answers == {("not_found", "no offline challenge <id>")}


def test_every_drawn_event_draws_in_the_stream_of_its_own_audience():
    """The guarantee behind "no counter gap": a record's stream names the event's owners,
    or, for a sealed opposed roll (ACT-12), that roll alone (``sealed_stream_name``)."""
    _, events = run([jack_roll(), jack_roll("secret"),
                     (STORYTELLER, v5.RollPool(character="iris", pool=2, visibility="blind"), "s"),
                     (KIM, RollAction(character="kim", characteristic="Science", opponent="jack",
                                      visibility="secret"), "k")])
    for event in (e for e in events if getattr(e, "draws", ())):
        drawer = STORYTELLER if event.draws[0].stream.startswith("*/") else Actor(
            role="player", character=event.character)
        expected = sealed_stream_name(drawer, event.roll) if getattr(event, "sealed", False) \
            else stream_name(drawer, event.owners())
        assert {r.stream for r in event.draws} == {expected}


def _documented_d10(stream, counter, entropy):
    """A streamed d10 read off the HMAC by hand, from the module's documentation alone."""
    for block in range(64):
        message = json.dumps([SESSION, stream, counter, entropy, block], separators=(",", ":")).encode()
        kept = [b for b in hmac.new(SEED, message, hashlib.sha256).digest() if b < 250]
        if kept:
            return kept[0] % 10 + 1
    raise AssertionError("64 blocks rejected")


def test_fair_2_a_streamed_die_is_the_documented_hmac_of_session_stream_counter_and_entropy():
    _, events = run([jack_roll(), jack_roll()])
    records = [r for e in events for r in e.draws]
    assert {r.stream for r in records} == {"jack/open"} and len(records) > 4
    assert [r.face for r in records] == [_documented_d10("jack/open", r.counter, "j") for r in records]


def test_fair_2_an_open_sealed_roll_sent_without_entropy_draws_with_the_nonce():
    # ACT-12: an opposed roll stays sealed until answered, so it is hidden though open
    state = game.fold(ROSTER)
    rolled, _ = game.decide(state, RollAction(character="kim", characteristic="Science", opponent="jack"),
                            FairDraws(SEED, SESSION, streams=state.streams, nonce="n0"), actor=KIM)
    assert rolled.sealed and rolled.visibility == "open"
    assert {(r.stream, r.entropy) for r in rolled.draws} == {("kim/sealed=a1", "n0")}
    # the same roll unopposed is open and unsealed: no nonce
    (open_,) = game.decide(state, RollAction(character="kim", characteristic="Science", difficulty=2),
                           FairDraws(SEED, SESSION, streams=state.streams, nonce="n0"), actor=KIM)
    assert {(r.stream, r.entropy) for r in open_.draws} == {("kim/open", "")}


@pytest.mark.parametrize("command, actor", [
    (RollAction(character="kim", characteristic="Science", opponent="jack"), KIM),
    (v5.RollPool(character="jack", attribute="Wits", visibility="secret"), JACK),
])
def test_fair_2_a_hidden_roll_with_neither_entropy_nor_nonce_is_a_server_error(command, actor):
    state = game.fold(ROSTER)
    with pytest.raises(ValueError) as raised:
        game.decide(state, command, FairDraws(SEED, SESSION, streams=state.streams), actor=actor)
    assert str(raised.value) == "a hidden roll without entropy needs the server's nonce"


def test_fair_2_a_stream_asked_for_a_stream_gives_the_sources_own_stream():
    """``Draws.stream`` returns a ``Draws``: a helper handed a stream may ask it for another."""
    def source():
        return FairDraws(SEED, SESSION, entropy="e", streams={"iris/secret=iris": 4})

    again = source().stream(JACK, None).stream(IRIS, frozenset({"iris"}))
    direct = source().stream(IRIS, frozenset({"iris"}))
    assert again.name == direct.name == "iris/secret=iris"
    assert [again.roll(10) for _ in range(3)] == [direct.roll(10) for _ in range(3)]
    assert again.roll(10).counter == 7
    sealed = source().stream(JACK, None).stream(KIM, None, sealed="a1")
    assert sealed.name == "kim/sealed=a1" and sealed.roll(8) == source().stream(KIM, None, sealed="a1").roll(8)

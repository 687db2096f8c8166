"""Properties over random, mostly valid Mind's Eye Theatre sessions."""

from __future__ import annotations

import random
from collections import Counter

import msgspec
from hypothesis import HealthCheck, given, settings, strategies as st

from conteur.events import game, met
from conteur.events.met_rules import retests_allowed, true_score
from conteur.events.met_rules import traits
from conteur.events.sheets import MetSheet
from conteur.events.simulate.met import simulate
from tests.support.examples import examples

sessions = st.builds(
    lambda seed, bomb, cancel, characters, groups: simulate(
        random.Random(seed), 250, characters=characters, bomb=bomb, retest_cancel=cancel, groups=groups
    ),
    st.integers(0, 2**32 - 1),
    st.booleans(),
    st.booleans(),
    st.integers(2, 5),
    st.booleans(),  # group challenges: one initiator against several defenders (MET-1)
)
PROPERTY = settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])


def sheets(state) -> dict[str, MetSheet]:
    return {k: c.sheet for k, c in state.session.characters.items() if isinstance(c.sheet, MetSheet)}


@PROPERTY
@given(sessions)
def test_met_property_a_challenge_never_has_two_winners(session):
    events, _, state = session
    resolved = Counter(e.challenge for e in events if isinstance(e, met.ChallengeResolved))
    assert all(n == 1 for n in resolved.values()), resolved
    for e in events:
        if isinstance(e, (met.RoundWon, met.ChallengeResolved, met.ChallengeOverruled)):
            ch = state.met.challenges[e.challenge]
            assert e.winner != e.loser and {e.winner, e.loser} == set(ch.sides)
    for ch in state.met.challenges.values():
        if ch.defenders:  # a group: one winner per pair (MET-1)
            pairs = [state.met.challenges[p] for p in ch.pairs]
            assert ch.status != "resolved" or ch.results == {p.defender: p.winner for p in pairs if p.winner
                                                             and p.status == "resolved"}
        elif ch.status == "resolved":
            assert ch.winner != ch.loser and {ch.winner, ch.loser} == set(ch.sides)


@PROPERTY
@given(sessions)
def test_met_4_property_no_accepted_bid_exceeds_the_cap_or_the_truth(session):
    events, refusals, state = session
    known = sheets(state)
    for e in events:
        if isinstance(e, (met.BidDeclared, met.OverbidDeclared)) and e.character in known:
            ch = state.met.challenges[e.challenge]
            sheet, attribute = known[e.character], ch.attribute_of(e.character)
            assert e.value <= 2 * traits(sheet, attribute)
            # MET-3: the abilities the challenge named for this side and its own, declared with the bid
            abilities = ch.abilities_of(e.character) + e.abilities
            assert set(e.abilities) <= set(sheet.abilities)
            assert e.value <= true_score(sheet, attribute, tuple(dict.fromkeys(abilities)))


@PROPERTY
@given(sessions)
def test_met_12_property_no_character_gets_more_retests_than_allowed(session):
    events, _, state = session
    def whole(challenge: str) -> str:  # a group's pairs are one challenge (MET-12)
        return state.met.challenges[challenge].group or challenge

    used = Counter(
        (whole(e.challenge), e.character) for e in events if isinstance(e, (met.RetestTaken, met.RetestCancelled))
    )
    for (challenge, character), n in used.items():
        sheet = sheets(state).get(character)
        assert n <= retests_allowed(sheet, state.met.challenges[challenge].kind)


@PROPERTY
@given(sessions)
def test_met_14_property_one_overbid_per_character_per_challenge(session):
    events, _, state = session
    overbids = Counter((state.met.challenges[e.challenge].group or e.challenge, e.character)
                       for e in events if isinstance(e, met.OverbidDeclared))
    assert all(n == 1 for n in overbids.values())


@PROPERTY
@given(sessions)
def test_property_folding_the_same_events_gives_the_same_state(session):
    events, _, _ = session
    assert game.fold(events) == game.fold(events)


@PROPERTY
@given(sessions)
def test_property_replaying_the_stored_log_from_zero_gives_the_live_state(session):
    events, _, live = session
    # through the wire/store encoding, as the server stores and replays them
    decoded = [msgspec.json.decode(msgspec.json.encode(e), type=game.AnyEvent) for e in events]
    assert decoded == events
    assert game.fold(decoded) == live


@PROPERTY
@given(sessions)
def test_met_2_property_sealed_events_hide_their_secret_from_others(session):
    events, _, _ = session
    for e in events:
        if isinstance(e, met.ThrowCommitted):
            assert e.redacted().choice is None and e.redacted().draws == ()
        if isinstance(e, (met.BidDeclared, met.OverbidDeclared)):
            assert e.redacted().value is None
        if isinstance(e, (met.ThrowsRevealed, met.RoundWon, met.ChallengeResolved)):
            assert e.owners() is None


def test_property_simulations_exercise_every_kind_of_event():
    seen: set[type] = set()
    for seed in range(6):
        events, refusals, _ = simulate(random.Random(seed), 600, bomb=seed % 2 == 0, retest_cancel=seed % 2 == 1,
                                       groups=seed >= 3)
        seen |= {type(e) for e in events}
        assert refusals  # the deliberate mistakes were refused, not accepted
    assert set(met.EVENTS) - seen == set()


def view_of(events, character: str):
    """What a player's device receives: its own events whole, the others' redacted."""
    for e in events:
        owners = e.owners()
        if owners is None or character in owners:
            yield e
        elif (public := e.redacted()) is not None:
            yield public


@PROPERTY
@given(sessions)
def test_met_2_property_a_player_folds_its_redacted_stream_to_the_same_public_outcomes(session):
    events, _, live = session
    for character in live.session.characters:
        seen = game.fold(view_of(events, character))
        for cid, ch in live.met.challenges.items():
            mine = seen.met.challenges[cid]
            assert (mine.status, mine.round, mine.winner, mine.loser) == (ch.status, ch.round, ch.winner, ch.loser)
            hidden = {k: v for k, v in mine.throws.items() if k != character}
            assert ch.status != "throwing" or all(v is None for v in hidden.values())
        assert seen.met.debts == live.met.debts
        for cid, c in seen.session.characters.items():
            assert c.sheet == (live.session.characters[cid].sheet if cid == character else None)

"""Provably fair draws (RULES FAIR-1, FAIR-2): derivation, rejection sampling, verification."""

from __future__ import annotations

import hashlib
import hmac
import json
import random

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

from conteur.events import action, fair, game, v5
from conteur.events.simulate import action as simulate_action
from conteur.events.fair import FairDraws, commitment, derive_face, face_from_chunks, verify_draws
from conteur.events.model import STORYTELLER, DrawRecord, RuleViolation, ScriptedDraws
from conteur.events.session import CharacterAdded
from conteur.events.sheets import ActionSheet, V5Sheet
from tests.support.examples import examples

SEED = bytes(range(32))
SESSION = "s-2026-11-29"


def test_fair_2_the_commitment_is_the_hex_sha256_of_the_seed():
    assert commitment(SEED) == hashlib.sha256(SEED).hexdigest()


def test_fair_2_a_new_seed_is_32_fresh_random_bytes():
    first, second = fair.new_seed(), fair.new_seed()
    assert len(first) == 32 and first != second


def test_fair_2_a_face_is_the_documented_hmac_of_seed_session_counter_and_entropy():
    """Recomputed here from the module's documentation alone, as an outsider would."""
    message = json.dumps([SESSION, 7, "tap:42", 0], separators=(",", ":")).encode()
    digest = hmac.new(SEED, message, hashlib.sha256).digest()
    first_kept = next(b for b in digest if b < 250)
    assert derive_face(SEED, SESSION, 7, 10, "tap:42") == first_kept % 10 + 1


@settings(max_examples=examples(500))
@given(session=st.text(max_size=40), counter=st.integers(0, 2**53), entropy=st.text(max_size=80),
       block=st.integers(0, 50))
def test_fair_2_the_hmac_message_is_the_published_json_for_any_entropy_a_device_sends(
        session, counter, entropy, block):
    # entropy comes from phones: accents, emoji, control characters, quotes
    published = json.dumps([session, counter, entropy, block], separators=(",", ":"),
                           ensure_ascii=False).encode("utf-8")
    assert fair.block_message(session, counter, entropy, block) == published


def test_fair_2_draw_counters_run_consecutively_from_the_start():
    draws = FairDraws(SEED, SESSION, start=12, entropy="e")
    records = [draws.roll(10) for _ in range(3)]
    assert [r.counter for r in records] == [12, 13, 14]
    assert all(r.entropy == "e" and r.sides == 10 for r in records)


def test_fair_2_the_same_inputs_give_the_same_faces():
    def faces(entropy):
        draws = FairDraws(SEED, SESSION, start=0, entropy=entropy)
        return [draws.roll(10).face for _ in range(30)]

    assert faces("a") == faces("a")
    assert faces("a") != faces("b")  # the roller's entropy counts


def test_fair_2_rejection_sampling_skips_the_biased_top_of_a_byte():
    # 256 = 25 * 10 + 6: bytes 250..255 would favour faces 1..6, so they are skipped
    assert face_from_chunks([250, 255, 7], 10, 1) == 8
    assert face_from_chunks([249], 10, 1) == 10
    assert face_from_chunks([255], 8, 1) == 8  # 256 is a multiple of 8: nothing skipped
    assert face_from_chunks([250, 251], 10, 1) is None


def test_fair_2_a_counter_whose_first_byte_is_rejected_uses_the_next_one():
    def first_bytes(counter):
        digest = hmac.new(SEED, json.dumps([SESSION, counter, "", 0], separators=(",", ":")).encode(),
                          hashlib.sha256).digest()
        return digest

    counter = next(c for c in range(5000) if first_bytes(c)[0] >= 250)
    digest = first_bytes(counter)
    expected = next(b for b in digest if b < 250) % 10 + 1
    assert derive_face(SEED, SESSION, counter, 10) == expected


def test_fair_2_dice_above_256_faces_read_two_bytes():
    assert 1 <= derive_face(SEED, SESSION, 0, 1000) <= 1000


def _documented_face(counter: int, sides: int, width: int) -> tuple[int, int]:
    """The face the documented derivation gives, read off the HMAC by hand, and its block."""
    limit = (256**width // sides) * sides
    for block in range(64):
        message = json.dumps([SESSION, counter, "", block], separators=(",", ":")).encode()
        digest = hmac.new(SEED, message, hashlib.sha256).digest()
        chunks = [int.from_bytes(digest[i:i + width], "big") for i in range(0, 32 - width + 1, width)]
        accepted = [x % sides + 1 for x in chunks if x < limit]
        if accepted:
            return accepted[0], block
    raise AssertionError("64 blocks rejected")


@pytest.mark.parametrize("sides, width", [(2, 1), (255, 1), (256, 1), (257, 2), (1000, 2), (65536, 2), (65537, 3)])
def test_fair_2_a_die_reads_as_few_whole_bytes_as_hold_its_sides(sides, width):
    for counter in range(8):
        assert derive_face(SEED, SESSION, counter, sides) == _documented_face(counter, sides, width)[0]


@pytest.mark.parametrize("sides, width", [(2**31 + 1, 4), (2**23 + 1, 3)])
def test_fair_2_a_block_whose_every_chunk_is_rejected_gives_way_to_the_next(sides, width):
    # just over half of the chunk's bytes: about half the chunks are rejected, all of a
    # block (8 of 4 bytes, 10 of 3) once in 256 or 1024 draws, so some counters reach the
    # next block; three bytes leave two over, which are never read as a chunk
    blocks = set()
    for counter in range(5000):
        face, block = _documented_face(counter, sides, width)
        assert derive_face(SEED, SESSION, counter, sides) == face, counter
        blocks.add(block)
    assert {0, 1} <= blocks


def test_fair_2_a_one_sided_die_always_shows_one_and_no_side_is_refused():
    assert [derive_face(SEED, SESSION, counter, 1) for counter in range(3)] == [1, 1, 1]
    with pytest.raises(ValueError, match="at least one side"):
        derive_face(SEED, SESSION, 0, 0)


def _drawn(counter: int, stream: str = "", sides: int = 10) -> DrawRecord:
    face = derive_face(SEED, SESSION, counter, sides, "", stream)
    return DrawRecord(counter=counter, sides=sides, face=face, stream=stream)


def test_fair_1_counters_of_old_records_run_from_start_and_of_streams_from_zero():
    old = [{"type": "v5.pool_rolled", "draws": [msgspec.to_builtins(_drawn(5)), msgspec.to_builtins(_drawn(6))]}]
    assert verify_draws(SEED.hex(), SESSION, old, start=5) is None
    assert verify_draws(SEED.hex(), SESSION, old, start=4).reason == "counter"
    assert verify_draws(SEED.hex(), SESSION, old) is None  # no start: the first counter is taken as it is
    streamed = [{"type": "v5.pool_rolled", "draws": [msgspec.to_builtins(_drawn(0, "anna/open")),
                                                     msgspec.to_builtins(_drawn(1, "anna/open"))]}]
    assert verify_draws(SEED.hex(), SESSION, streamed, start=7) is None
    late = [{"type": "v5.pool_rolled", "draws": [msgspec.to_builtins(_drawn(3, "anna/open"))]}]
    bad = verify_draws(SEED.hex(), SESSION, late, start=0)
    assert (bad.reason, bad.index) == ("counter", 0)
    assert bad.message.startswith("event 0 (v5.pool_rolled), draw #3 of stream anna/open (d10): counter 3, expected 0")
    assert verify_draws(SEED.hex(), SESSION, late) is None


def test_fair_2_a_bad_face_names_its_event_by_tag():
    record = _drawn(0)
    forged = replace(record, face=record.face % 10 + 1)
    event = v5.PoolRolled(roll="r1", character=None, kind="normal", pool=1, difficulty=1, normal=(forged.face,),
                          hunger=(), draws=(forged,),
                          successes=0, margin=0, success=False, critical=False, messy=False, bestial=False)
    bad = verify_draws(SEED.hex(), SESSION, [event], start=0)
    assert bad.message.startswith("event 0 (v5.pool_rolled), draw #0 (d10): recorded")


def test_fair_2_recompute_gives_back_the_recorded_face():
    record = FairDraws(SEED, SESSION, start=3, entropy="x").roll(8)
    assert fair.recompute(SEED, SESSION, record) == record.face


# ---------------------------------------------------------------- a whole session

ROSTER = [
    CharacterAdded(character="anna", name="Anna",
                   sheet=V5Sheet(attributes={"Wits": 3, "Strength": 2}, skills={"Brawl": 2},
                                 willpower=4, humanity=7, hunger=1)),
    CharacterAdded(character="jake", name="Jake",
                   sheet=ActionSheet(characteristics={"Motricité": 6, "Science": 7},
                                     expertises=("Sauter",))),
    CharacterAdded(character="nella", name="Nella",
                   sheet=ActionSheet(characteristics={"Volonté": 5})),
]


def play(seed: bytes, steps: int, rng_seed: int = 4) -> tuple[list, int]:
    """A simulated dice session with fair draws: the events and how many were refused."""
    rng = random.Random(rng_seed)
    state = game.fold(ROSTER)
    events, refused = list(ROSTER), 0
    for i in range(steps):
        actor, command = simulate_action.random_dice_command(rng, state)
        draws = FairDraws(seed, SESSION, entropy=f"tap{i}", streams=state.streams)
        try:
            decided = game.decide(state, command, draws, actor=actor)
        except RuleViolation:
            refused += 1
            continue
        state = game.fold(decided, state)
        events.extend(decided)
    return events, refused


@pytest.fixture(scope="module")
def session_log():
    return play(SEED, 300)


def test_simulated_dice_commands_are_mostly_valid(session_log):
    events, refused = session_log
    assert refused < 100
    kinds = {type(e) for e in events}
    assert {v5.PoolRolled, action.ActionRolled} <= kinds


def test_fair_2_every_draw_of_a_closed_session_recomputes_from_its_log(session_log):
    events, _ = session_log
    assert sum(len(getattr(e, "draws", ())) for e in events) > 300
    assert verify_draws(SEED.hex(), SESSION, events, commitment(SEED), start=0) is None


def test_fair_2_an_exported_log_of_plain_json_verifies_too(session_log):
    events, _ = session_log
    exported = json.loads(msgspec.json.encode(events))
    assert verify_draws(SEED.hex(), SESSION, exported, commitment(SEED)) is None


def test_fair_2_a_changed_die_is_named(session_log):
    events, _ = session_log
    index = next(i for i, e in enumerate(events) if len(getattr(e, "draws", ())) >= 3)
    event = events[index]
    record = event.draws[1]
    forged = replace(record, face=record.face % record.sides + 1)
    tampered = list(events)
    tampered[index] = replace(event, draws=(event.draws[0], forged, *event.draws[2:]))
    bad = verify_draws(SEED.hex(), SESSION, tampered, commitment(SEED))
    assert (bad.reason, bad.index, bad.record, bad.expected) == ("face", index, forged, record.face)
    assert f"draw #{record.counter}" in bad.message and f"recorded {forged.face}" in bad.message


def test_fair_2_a_seed_that_does_not_match_the_commitment_is_refused(session_log):
    events, _ = session_log
    bad = verify_draws(bytes(32).hex(), SESSION, events, commitment(SEED))
    assert bad.reason == "commitment" and bad.index is None


def test_fair_1_a_draw_thrown_away_leaves_a_gap(session_log):
    events, _ = session_log
    index = next(i for i, e in enumerate(events) if getattr(e, "draws", ()))
    bad = verify_draws(SEED.hex(), SESSION, events[:index] + events[index + 1 :], start=0)
    assert bad.reason == "counter" and "missing or repeated" in bad.message


def test_fair_1_replay_folds_recorded_results_and_never_draws(session_log):
    events, _ = session_log
    # folding needs no draw source at all, and gives the same state every time
    assert game.fold(events) == game.fold(events)
    state = game.fold(events)
    last: dict[str, int] = {}
    for record in (r for e in events for r in getattr(e, "draws", ())):
        last[record.stream] = max(last.get(record.stream, 0), record.counter + 1)
    assert state.streams == last and state.draw_counter == 0


def test_fair_1_a_decider_draws_only_from_its_source():
    with pytest.raises(RuleViolation, match="no scripted draw left"):
        game.decide(game.fold(ROSTER), v5.RollPool(pool=2), ScriptedDraws(), actor=STORYTELLER)


def test_fair_2_storyteller_throws_use_the_same_source():
    draws = FairDraws(SEED, SESSION, entropy="", nonce=fair.new_nonce())
    (event,) = game.decide(game.fold(ROSTER),
                           v5.RollPool(character="anna", pool=3, visibility="blind"),
                           draws, actor=STORYTELLER)
    assert all(fair.recompute(SEED, SESSION, r) == r.face for r in event.draws)


def test_fair_draws_implement_the_draws_protocol():
    record = FairDraws(SEED, SESSION, start=0).roll(6)
    assert isinstance(record, DrawRecord) and 1 <= record.face <= 6


def test_a_dice_session_state_survives_a_snapshot_round_trip(session_log):
    """Snapshots store the folded state: every dice part must decode back equal."""
    events, _ = session_log
    state = game.fold(events)
    assert state.streams  # the draw streams are put to the test
    for encode, decode in ((msgspec.json.encode, msgspec.json.decode),
                           (msgspec.msgpack.encode, msgspec.msgpack.decode)):
        assert decode(encode(state, enc_hook=game.enc_hook), type=game.GameState, dec_hook=game.dec_hook) == state


# ---------------------------------------------------------------- what verification answers


def test_fair_2_a_revealed_seed_that_is_not_hex_is_refused_as_a_commitment_failure():
    assert verify_draws("zz", SESSION, [], commitment(SEED)) == fair.BadDraw(
        reason="commitment", message="the revealed seed 'zz' is not hex")


def test_fair_2_the_commitment_is_checked_in_any_case_and_a_mismatch_is_told():
    assert verify_draws(SEED.hex(), SESSION, [], commitment(SEED).upper()) is None
    assert verify_draws(SEED.hex(), SESSION, [], commitment(bytes(32))) == fair.BadDraw(
        reason="commitment",
        message="the revealed seed does not hash to the commitment logged at session open (FAIR-2)")


def test_fair_1_a_gap_inside_a_stream_after_its_first_draw_is_named():
    first, third = _drawn(0, "anna/open"), _drawn(2, "anna/open")
    events = [{"type": "v5.pool_rolled", "draws": [msgspec.to_builtins(first)]},
              {"type": "v5.pool_rolled", "draws": [msgspec.to_builtins(third)]}]
    assert verify_draws(SEED.hex(), SESSION, events) == fair.BadDraw(
        reason="counter",
        message="event 1 (v5.pool_rolled), draw #2 of stream anna/open (d10): counter 2, expected 1 "
        "(a draw is missing or repeated) (FAIR-1)",
        index=1, event=events[1], record=third)
    assert verify_draws(SEED.hex(), SESSION, [events[0], events[0] | {"draws": [msgspec.to_builtins(
        _drawn(1, "anna/open"))]}]) is None  # the next counter is the one expected


def test_fair_2_a_bad_face_of_an_untyped_exported_event_names_it_event():
    record = _drawn(4, sides=6)
    forged = replace(record, face=record.face % 6 + 1)
    event = {"draws": [msgspec.to_builtins(forged)]}
    assert verify_draws(SEED.hex(), SESSION, [event], start=4) == fair.BadDraw(
        reason="face",
        message=f"event 0 (event), draw #4 (d6): recorded {forged.face}, the seed gives {record.face} (FAIR-2)",
        index=0, event=event, record=forged, expected=record.face)


class Imported:
    """An event decoded by another tool: no msgspec struct, only its draws."""

    def __init__(self, draws):
        self.draws = draws


def test_fair_2_a_bad_face_of_an_event_that_is_no_struct_names_its_class():
    record = _drawn(0)
    forged = replace(record, face=record.face % 10 + 1)
    event = Imported((forged,))
    assert verify_draws(SEED.hex(), SESSION, [Imported(()), event], start=0) == fair.BadDraw(
        reason="face",
        message=f"event 1 (Imported), draw #0 (d10): recorded {forged.face}, the seed gives {record.face} (FAIR-2)",
        index=1, event=event, record=forged, expected=record.face)


def test_fair_2_a_source_given_only_seed_and_session_counts_from_zero_without_entropy():
    draws = FairDraws(SEED, SESSION)
    assert [draws.roll(6), draws.roll(6)] == [
        DrawRecord(counter=c, sides=6, face=derive_face(SEED, SESSION, c, 6), entropy="") for c in (0, 1)]
    assert draws.counter == 2


def test_fair_2_a_die_of_one_chunk_a_block_walks_past_two_rejected_blocks():
    # 2**255 + 1 sides read 32 bytes, the whole block, rejected about half the time: some
    # counters need the third block or later
    sides = 2**255 + 1
    walked = {}
    for counter in range(40):
        face, block = _documented_face(counter, sides, 32)
        assert derive_face(SEED, SESSION, counter, sides) == face, counter
        walked[block] = counter
    assert max(walked) >= 2

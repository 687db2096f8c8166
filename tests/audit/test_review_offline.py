"""Challenges played by hand while the app was down: record, confirm, dispute, a
storyteller's ruling (DESIGN "Offline devices"), given events / when command / then events."""

from __future__ import annotations

from conteur.events import game, views
from conteur.events.model import STORYTELLER, Actor
from conteur.events.offline import (
    ConfirmOffline,
    DisputeOffline,
    OfflineChallengeConfirmed,
    OfflineChallengeDisputed,
    OfflineChallengeRecorded,
    OfflineChallengeRuled,
    RecordOfflineChallenge,
    RuleOffline,
)
from conteur.events.session import CharacterAdded, SessionClosed, SessionOpened, TimeOutCalled
from conteur.events.testing import assert_decides, assert_refuses

ANNA = Actor(role="player", character="anna", name="anna")
BRUNO = Actor(role="player", character="bruno", name="bruno")
CLARA = Actor(role="player", character="clara", name="clara")

ROSTER = [
    SessionOpened(name="night"),
    CharacterAdded(character="anna", name="Anna"),
    CharacterAdded(character="bruno", name="Bruno"),
    CharacterAdded(character="clara", name="Clara"),
]
RECORD = RecordOfflineChallenge(
    character="anna", opponent="bruno", winner="anna", attribute="physical",
    played_at="2026-11-29T21:04:00+01:00", account="rock beat scissors", throws={"anna": "rock", "bruno": "scissors"},
)
RECORDED = OfflineChallengeRecorded(
    record="o1.anna+bruno", recorder="anna", opponent="bruno", winner="anna", attribute="physical",
    played_at="2026-11-29T21:04:00+01:00", account="rock beat scissors", throws={"anna": "rock", "bruno": "scissors"},
)


def test_a_player_records_a_challenge_played_by_hand_with_its_device_time():
    assert_decides(given=ROSTER, when=RECORD, actor=ANNA, then=[RECORDED])


def test_recording_is_not_play_so_a_time_out_does_not_refuse_it():
    # TIME-5 stops play; writing down what happened during the outage is not play
    assert_decides(given=ROSTER + [TimeOutCalled(scope="session")], when=RECORD, actor=ANNA, then=[RECORDED])


def test_a_player_records_only_for_its_own_character():
    assert_refuses(given=ROSTER, when=RECORD, actor=BRUNO, code="forbidden")


def test_the_winner_is_one_of_the_two():
    bad = RecordOfflineChallenge(character="anna", opponent="bruno", winner="clara")
    assert_refuses(given=ROSTER, when=bad, actor=ANNA, code="invalid", match="winner")


def test_the_opponent_is_on_the_roster():
    bad = RecordOfflineChallenge(character="anna", opponent="zoe", winner="anna")
    assert_refuses(given=ROSTER, when=bad, actor=ANNA, code="not_found")


def test_the_device_time_must_be_a_time():
    bad = RecordOfflineChallenge(character="anna", opponent="bruno", winner="anna", played_at="yesterday")
    assert_refuses(given=ROSTER, when=bad, actor=ANNA, code="invalid", match="ISO 8601")


def test_a_closed_session_takes_no_record():
    assert_refuses(given=ROSTER + [SessionClosed()], when=RECORD, actor=ANNA, match="closed")


def test_the_opponent_confirms():
    assert_decides(given=ROSTER + [RECORDED], when=ConfirmOffline(character="bruno", record="o1.anna+bruno"), actor=BRUNO,
                   then=[OfflineChallengeConfirmed(record="o1.anna+bruno", recorder="anna", opponent="bruno")])


def test_the_recorder_cannot_confirm_its_own_record():
    assert_refuses(given=ROSTER + [RECORDED], when=ConfirmOffline(character="anna", record="o1.anna+bruno"), actor=ANNA,
                   code="forbidden", match="opponent")


def test_the_opponent_disputes_and_names_the_winner_it_claims():
    assert_decides(
        given=ROSTER + [RECORDED],
        when=DisputeOffline(character="bruno", record="o1.anna+bruno", reason="I threw rock too", winner="bruno"),
        actor=BRUNO,
        then=[OfflineChallengeDisputed(record="o1.anna+bruno", recorder="anna", opponent="bruno",
                                       reason="I threw rock too", winner="bruno")],
    )


def test_a_confirmed_record_cannot_be_disputed_afterwards():
    confirmed = OfflineChallengeConfirmed(record="o1.anna+bruno", recorder="anna", opponent="bruno")
    assert_refuses(given=ROSTER + [RECORDED, confirmed], when=DisputeOffline(character="bruno", record="o1.anna+bruno"),
                   actor=BRUNO, match="already confirmed")


def test_a_storyteller_rules_on_a_dispute_and_the_earlier_claim_stays_in_the_log():
    disputed = OfflineChallengeDisputed(record="o1.anna+bruno", recorder="anna", opponent="bruno", winner="bruno")
    events = assert_decides(
        given=ROSTER + [RECORDED, disputed],
        when=RuleOffline(record="o1.anna+bruno", winner="bruno", reason="both threw rock; Bruno bid higher"),
        then=[OfflineChallengeRuled(record="o1.anna+bruno", recorder="anna", opponent="bruno", winner="bruno", loser="anna",
                                    previous_winner="anna", reason="both threw rock; Bruno bid higher")],
    )
    state = game.fold(ROSTER + [RECORDED, disputed] + events)
    record = state.offline.records["o1.anna+bruno"]
    assert (record.status, record.winner, record.loser) == ("ruled", "bruno", "anna")


def test_only_a_storyteller_rules():
    assert_refuses(given=ROSTER + [RECORDED], when=RuleOffline(record="o1.anna+bruno", winner="anna"), actor=ANNA,
                   code="forbidden")


def test_records_are_seen_by_the_two_characters_and_storytellers_only():
    assert views.view(RECORDED, ANNA) == RECORDED
    assert views.view(RECORDED, BRUNO) == RECORDED
    assert views.view(RECORDED, STORYTELLER) == RECORDED
    assert views.view(RECORDED, CLARA) is None
    assert views.view(RECORDED, Actor(role="observer")) is None

"""Safer rulings of challenges played by hand (events/offline.py): the tablet asks before it
rules, naming the winner, and keeps ruled records so a storyteller can rule them again."""

from __future__ import annotations


import pytest

from conteur.events.model import Actor
from conteur.events.offline import (OfflineChallengeDisputed, OfflineChallengeRecorded,
                                    OfflineChallengeRuled, RuleOffline)
from conteur.events.testing import assert_decides, assert_refuses
from conteur.server.core.service import Chronicle
from conteur.server.store.sqlite import SQLiteStore
from tests.support.browser_support import CHROMIUM, NO_CHROMIUM
from tests.support.doc_shots import doc_shot
from tests.support.client_support import command, events_of_type, make_chronicle, served
from tests.support.met_support import A6, B7, roster
from tests.support.web_support import TABLET, Device

RECORD = "o1.a+b"
PLAYED = [OfflineChallengeRecorded(record=RECORD, recorder="a", opponent="b", winner="a"),
          OfflineChallengeDisputed(record=RECORD, recorder="a", opponent="b", winner="b")]


def test_a_ruling_names_the_winner_it_replaces():
    assert_decides(given=roster(a=A6, b=B7) + PLAYED, when=RuleOffline(record=RECORD, winner="b"),
                   then=[OfflineChallengeRuled(record=RECORD, recorder="a", opponent="b", winner="b",
                                               loser="a", previous_winner="a")])


def test_a_ruled_record_can_be_ruled_again_and_the_new_ruling_names_the_old():
    ruled = OfflineChallengeRuled(record=RECORD, recorder="a", opponent="b", winner="b", loser="a",
                                  previous_winner="a")
    assert_decides(given=roster(a=A6, b=B7) + PLAYED + [ruled],
                   when=RuleOffline(record=RECORD, winner="a", reason="a witness"),
                   then=[OfflineChallengeRuled(record=RECORD, recorder="a", opponent="b", winner="a",
                                               loser="b", previous_winner="b", reason="a witness")])


def test_only_a_side_of_the_record_can_be_ruled_the_winner():
    assert_refuses(given=roster(a=A6, b=B7) + PLAYED, when=RuleOffline(record=RECORD, winner="c"),
                   code="invalid")


def test_a_player_cannot_rule_even_after_the_ruling():
    assert_refuses(given=roster(a=A6, b=B7) + PLAYED, when=RuleOffline(record=RECORD, winner="b"),
                   actor=Actor(role="player", character="b", name="b"), code="forbidden")


@pytest.mark.browser
@pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)
def test_the_tablet_asks_before_it_rules_and_rules_again(browser, tmp_path):
    setup = make_chronicle(tmp_path / "chronicle.db")
    anna = Actor(role="player", character="anna", name="anna")
    bruno = Actor(role="player", character="bruno", name="bruno")
    with SQLiteStore(setup.db) as store:
        chronicle = Chronicle(store)
        for actor, cmd in (
            (anna, command("record_offline_challenge", character="anna", opponent="bruno", winner="anna",
                           attribute="physical", account="rock beats scissors")),
            (bruno, command("dispute", character="bruno", record="o1.anna+bruno", winner="bruno",
                            reason="I threw paper")),
        ):
            assert not chronicle.execute_sync(setup.session, cmd, actor).outcome.rejected
    with served(setup.db) as server:
        st = Device(browser, server.url, f"{setup.storyteller}&session={setup.session}", viewport=TABLET)
        phone = Device(browser, server.url, setup.players["anna"])
        card = st.page.locator('[data-testid=st-hand-record][data-record="o1.anna+bruno"]')
        card.get_by_test_id("hand-rule-bruno").click()
        dialog = st.page.get_by_test_id("confirm")
        st.expect(dialog).to_contain_text("Rule that Bruno won (Anna against Bruno)?")
        st.expect(dialog.get_by_test_id("confirm-yes")).to_have_text("Bruno won")
        doc_shot(dialog, "ruling-confirm")
        dialog.get_by_test_id("confirm-no").click()  # a tap by mistake: nothing sent
        st.page.wait_for_timeout(300)
        assert events_of_type(setup.db, "offline.ruled") == []

        card.get_by_test_id("hand-rule-bruno").click()
        dialog.get_by_test_id("confirm-yes").click()
        st.expect(card).to_have_count(0)
        # the ruled record stays on the tablet, folded away, with the ruling and a re-rule
        ruled = st.page.locator('[data-testid=st-hand-ruled-record][data-record="o1.anna+bruno"]')
        st.page.get_by_test_id("st-hand-ruled").locator("summary").click()
        st.expect(ruled).to_have_attribute("data-winner", "bruno")
        st.expect(ruled).to_contain_text("Bruno won")
        ruled.get_by_test_id("hand-rule-reason").fill("Clara saw it")
        ruled.get_by_test_id("hand-rerule").click()
        st.expect(dialog).to_contain_text("Rule again, so that Anna won")
        dialog.get_by_test_id("confirm-yes").click()
        st.expect(ruled).to_have_attribute("data-winner", "anna")
        phone.expect(phone.page.locator('[data-testid=hand-row][data-record="o1.anna+bruno"]')
                     .get_by_test_id("hand-status")).to_have_text("ruled by a storyteller: Anna won")
        first, second = events_of_type(setup.db, "offline.ruled")
        assert (first["winner"], first["previous_winner"]) == ("bruno", "anna")
        assert (second["winner"], second["previous_winner"], second["reason"]) == ("anna", "bruno", "Clara saw it")
        for device in (st, phone):
            device.close()

"""A storyteller runs a group challenge for an antagonist from the tablet (MET-1): picks
the antagonist, ticks the characters, the attribute and the antagonist's abilities, and
throws for it against all of them with one tap, the server's draw drawn once (MET-2);
the characters' phones then get their pairs as in any group. And the same form tests
several characters against one difficulty (MET-10, a static group). Real Chromium against
a real server."""

from __future__ import annotations

import pytest

from tests.support.browser_support import CHROMIUM, NO_CHROMIUM
from tests.support.client_support import events_of_type
from tests.support.doc_shots import doc_shot
from tests.support.group_support import DEFENDERS
from tests.support.group_web_support import brawl, wait_events  # noqa: F401 (a fixture)
from tests.support.web_support import TABLET, Device

pytestmark = [pytest.mark.browser, pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)]


def new_challenge(st: Device, antagonist: str, kind: str, **fields) -> None:
    """The tablet's New challenge, Bruno picked and Clara and Dora ticked."""
    st.page.locator("main.st details.new-challenge summary").click()
    form = st.page.locator("form[data-act=st-challenge]")
    form.locator("input[name=antagonist]").fill(antagonist)
    form.locator("select[name=target]").select_option("bruno")
    form.get_by_test_id("st-more-clara").check()
    form.get_by_test_id("st-more-dora").check()
    form.locator("select[name=kind]").select_option(kind)
    form.locator("select[name=attribute]").select_option("physical")
    for name, value in fields.items():
        form.locator(f"input[name={name}]").fill(value)
    form.get_by_test_id("st-challenge-start").click()


def test_the_tablet_throws_for_an_antagonist_against_three_with_one_tap(browser, brawl):
    server, db, links = brawl
    st = Device(browser, server.url, links["storyteller"], viewport=TABLET)
    phones = {who: Device(browser, server.url, links[who]) for who in DEFENDERS}

    new_challenge(st, "Ghoul", "classic", abilities="Brawl, Dodge")
    [issued] = wait_events(st, db, "met.group_challenge_issued", 1)
    assert (issued["initiator"], issued["defenders"], issued["abilities"]) == ("Ghoul", list(DEFENDERS), ["Brawl", "Dodge"])
    group = st.page.get_by_test_id("st-group")
    row = group.get_by_test_id("st-group-throw")
    st.expect(row).to_contain_text("Ghoul's one throw against Bruno, Clara, Dora (round 1)")
    # the pairs' own cards wait for the group's throw: no throw of their own for the Ghoul
    pairs = st.page.locator("[data-testid=st-challenge]")
    st.expect(pairs).to_have_count(3)
    st.expect(pairs.get_by_test_id("st-group-throw-above")).to_have_count(3)
    st.expect(pairs.get_by_test_id("server-throw")).to_have_count(0)

    group.evaluate("el => el.scrollIntoView({block: 'center'})")  # clear of the sticky bar
    doc_shot(group, "group-challenge-antagonist-tablet")
    row.get_by_test_id("st-group-server-throw").click()  # the one tap
    st.expect(row).to_have_count(0)
    thrown = wait_events(st, db, "met.throw_committed", 3)
    assert [e["challenge"] for e in thrown] == ["c1.1", "c1.2", "c1.3"]
    assert len({e["choice"] for e in thrown}) == 1  # one throw against all three
    assert [len(e["draws"]) for e in thrown] == [1, 0, 0]  # one d3, recorded once
    ghoul = thrown[0]["choice"]

    # each character's phone has its pair, the Ghoul's throw sealed, its own throw to make
    for i, (who, phone) in enumerate(phones.items(), start=1):
        card = phone.challenge(f"c1.{i}")
        phone.expect(card.get_by_test_id("group-of")).to_contain_text("Ghoul against Bruno, Clara, Dora")
        assert phone.page.evaluate(f"() => window.conteur.vm.challenges['c1.{i}'].throws.Ghoul") == "sealed"
        card.get_by_test_id("throw-rock").click()
    revealed = wait_events(st, db, "met.throws_revealed", 3)
    assert {e["throws"]["Ghoul"] for e in revealed} == {ghoul}
    st.expect(group.get_by_test_id("st-group-throw")).to_have_count(0)
    for device in (st, *phones.values()):
        device.close()


def test_the_tablet_tests_three_characters_against_one_difficulty(browser, brawl):
    server, db, links = brawl
    st = Device(browser, server.url, links["storyteller"], viewport=TABLET)
    clara = Device(browser, server.url, links["clara"])

    new_challenge(st, "Falling beam", "static", difficulty="5")
    [issued] = wait_events(st, db, "met.group_challenge_issued", 1)
    assert (issued["kind"], issued["difficulty"], issued["defenders"]) == ("static", 5, list(DEFENDERS))
    st.page.get_by_test_id("st-group-throw").get_by_test_id("st-group-throw-rock").click()
    wait_events(st, db, "met.throw_committed", 3)
    card = clara.challenge("c1.2")
    clara.expect(card.get_by_test_id("group-of")).to_contain_text("Falling beam against Bruno, Clara, Dora")
    assert clara.page.evaluate("() => window.conteur.vm.challenges['c1.2'].tested") == "clara"
    st.expect(st.page.locator('[data-testid=st-challenge][data-challenge="c1.2"]')).to_contain_text("Difficulty 5")
    log = st.page.get_by_test_id("log")
    st.expect(log).to_contain_text("Falling beam put Bruno, Clara, Dora to a static Physical test together, difficulty 5")
    assert events_of_type(db, "met.throws_revealed") == []  # sealed until Bruno, Clara and Dora throw
    for device in (st, clara):
        device.close()

"""The phone's "What happened" feed, in real Chromium against a real server: three
players, Ines and Leo in the cellar, Mara in the attic (ACT sheets). Each feed tells, from
that phone's own stream only, what names its character, what happened in its scene, and
what concerns the whole session (DESIGN "Who sees what": the server already redacted it)."""

from __future__ import annotations

import msgspec
import pytest

from conteur.events.model import STORYTELLER
from conteur.events.sheets import ActionSheet
from conteur.server.core.auth import Tokens
from conteur.server.core.service import Chronicle
from conteur.server.store.sqlite import SQLiteStore
from tests.support.client_support import command, events_of_type, served
from tests.support.browser_support import NO_CHROMIUM, CHROMIUM
from tests.support.web_support import TABLET, Device, start_challenge

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM),
]

SESSION = "caves"
SHEET = ActionSheet(characteristics={"combat": 5, "science": 6})


@pytest.fixture
def caves(tmp_path):
    db = str(tmp_path / "caves.db")
    with SQLiteStore(db) as store:
        chronicle = Chronicle(store)
        sheet = msgspec.to_builtins(SHEET)
        for cmd in (
            command("open_session", name="Caves"),
            *(command("add_character", character=c, name=c.title(), sheet=sheet) for c in ("ines", "leo", "mara")),
            command("open_scene", scene="cellar", name="Cellar"),
            command("open_scene", scene="attic", name="Attic"),
            command("join_scene", character="ines", scene="cellar"),
            command("join_scene", character="leo", scene="cellar"),
            command("join_scene", character="mara", scene="attic"),
        ):
            assert not chronicle.execute_sync(SESSION, cmd, STORYTELLER).outcome.rejected
        tokens = Tokens(store)
        links = {c: f"{tokens.issue('player', character=c, session=SESSION)}&session={SESSION}" for c in ("ines", "leo", "mara")}
        storyteller = f"{tokens.issue('storyteller', session=SESSION, name='Morgane')}&session={SESSION}"
    with served(db) as server:
        yield server, db, storyteller, links


def feed(device: Device):
    return device.page.get_by_test_id("feed")


def lines(device: Device) -> list[str]:
    return feed(device).locator("li").all_inner_texts()


def roll(device: Device, characteristic: str, visibility: str) -> None:
    page = device.page
    page.locator("#act-characteristic").select_option(characteristic)
    page.locator("#act-vis").select_option(visibility)
    page.get_by_test_id("roll").click()


def received(device: Device, tag: str) -> int:
    return device.page.evaluate("(tag) => window.conteur.vm.log.filter(l => l.type === tag).length", tag)


def test_the_feed_tells_the_scene_and_the_session_and_nothing_the_stream_did_not_carry(browser, caves):
    server, db, storyteller, links = caves
    ines = Device(browser, server.url, links["ines"])
    leo = Device(browser, server.url, links["leo"])
    mara = Device(browser, server.url, links["mara"], locale="fr-FR")

    # who came into the scene: Ines sees Leo enter the cellar, Mara does not
    ines.expect(feed(ines)).to_contain_text("Leo entered Cellar.")
    mara.expect(feed(mara)).to_contain_text("Mara entre dans Attic.")
    mara.expect(mara.page.locator("#h-feed")).to_have_text("Ce qui s'est passé")
    assert not any("Leo" in line for line in lines(mara))

    # an open roll of Leo's, told to Ines as a sentence naming him, newest first
    roll(leo, "combat", "open")
    leo.expect(leo.page.get_by_test_id("roll-result")).to_have_count(1)
    told = feed(ines).locator("li").first
    ines.expect(told).to_contain_text("Leo rolled Test (combat")
    ines.expect(told).to_have_attribute("data-type", "action.rolled")
    ines.expect(told).to_contain_text("PS against difficulty 2")
    (opened,) = events_of_type(db, "action.rolled")
    sentence = told.inner_text()
    assert sentence == lines(leo)[0]  # the same open event, the same sentence
    assert " ".join(map(str, opened["dice"])) in sentence
    # Mara's phone received it (public) but her feed keeps to the attic
    mara.page.wait_for_function("window.conteur.vm.log.some(l => l.type === 'action.rolled')")
    assert not any("Leo" in line for line in lines(mara))

    # a secret roll: whole for Leo, never reaches Ines (redacted() is None for her)
    roll(leo, "science", "secret")
    leo.expect(leo.page.get_by_test_id("roll-result")).to_have_count(2)
    leo.expect(feed(leo).locator("li").first).to_contain_text("Leo rolled Test (science")
    secret = events_of_type(db, "action.rolled")[1]
    assert secret["visibility"] == "secret"
    whole = lines(leo)[0]

    # a session Time Out after it: every feed tells it, and Ines has what came before
    st = Device(browser, server.url, storyteller, viewport=TABLET)
    st.page.get_by_test_id("freeze-all").click()
    ines.expect(feed(ines).locator("li").first).to_have_text("TIME OUT for everyone.")
    leo.expect(feed(leo).locator("li").first).to_have_text("TIME OUT for everyone.")
    mara.expect(feed(mara).locator("li").first).to_have_text("TEMPS MORT pour tous.")
    assert received(ines, "action.rolled") == 1
    seen = feed(ines).inner_text()
    assert whole not in seen and "science" not in seen
    assert " ".join(map(str, secret["dice"])) not in seen or secret["dice"] == opened["dice"]
    assert [line for line in lines(ines) if "Leo rolled" in line] == [sentence]

    st.page.get_by_test_id("resume-all").click()
    mara.expect(feed(mara).locator("li").first).to_have_text("Reprise du jeu pour tous.")
    ines.expect(ines.page.locator("#freeze")).to_be_hidden()
    ines.shot("player-feed-360x740", focus="[data-testid=feed]")
    for d in (ines, leo, mara, st):
        d.close()


def test_a_closed_feed_stays_closed_as_events_arrive(browser, caves):
    server, db, storyteller, links = caves
    ines = Device(browser, server.url, links["ines"])
    leo = Device(browser, server.url, links["leo"])
    details = ines.page.get_by_test_id("feed-details")
    ines.expect(details).to_have_attribute("open", "")
    details.locator("summary").click()
    ines.expect(details).not_to_have_attribute("open", "")
    roll(leo, "combat", "open")
    ines.page.wait_for_function("window.conteur.vm.log.some(l => l.type === 'action.rolled')")
    ines.expect(feed(ines).locator("li").first).to_contain_text("Leo rolled Test (combat")  # rendered, folded
    ines.expect(details).not_to_have_attribute("open", "")
    for d in (ines, leo):
        d.close()


def test_met_2_a_sealed_throw_reads_as_a_sentence_without_the_choice(browser, server, setup):
    # MET-2: Bruno's phone learns that Anna's throw is in, not which; the feed says so
    anna = Device(browser, server.url, setup.players["anna"])
    bruno = Device(browser, server.url, setup.players["bruno"])
    start_challenge(anna)
    anna.expect(anna.challenge().get_by_test_id("throw-rock")).to_be_visible()
    anna.challenge().get_by_test_id("throw-rock").click()
    sealed = feed(bruno).locator("li").first
    bruno.expect(sealed).to_have_text("Anna ⟷ Bruno: Anna has thrown, hidden until both throws are in.")
    bruno.expect(sealed).to_have_attribute("data-type", "met.throw_committed")
    assert [e["choice"] for e in events_of_type(setup.db, "met.throw_committed")] == ["rock"]
    assert "rock" not in feed(bruno).inner_text().lower()
    anna.expect(feed(anna).locator("li").first).to_have_text("Anna ⟷ Bruno: Anna threw rock (round 1).")
    # the challenge's first line names both sides itself: no "Anna ⟷ Bruno:" before it
    issued = feed(bruno).locator("li[data-type='met.challenge_issued']")
    bruno.expect(issued).to_have_text("Anna challenged Bruno (Physical).")
    anna.expect(feed(anna).locator("li[data-type='met.challenge_issued']")).to_have_text("Anna challenged Bruno (Physical).")
    for d in (anna, bruno):
        d.close()

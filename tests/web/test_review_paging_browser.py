"""The review page of a night longer than its first screen, in real Chromium:
the page loads ``/review/first`` (the first 200 challenges, the first 1,500 timeline
rows), then "More" fetches the other challenges, "Show all" and the filters fetch the
rest of the timeline by pages; what it ends up showing is the whole bundle's."""

from __future__ import annotations

import logging
import random

import httpx
import pytest

from conteur.server.audit import review as rv
from conteur.server.audit import page as review_page
from conteur.server.cli.simulate import next_commands, setup_commands
from conteur.server.core.auth import Tokens
from conteur.server.core.service import Chronicle
from conteur.server.store.sqlite import SQLiteStore
from tests.support.browser_support import CHROMIUM, NO_CHROMIUM, TIMEOUT
from tests.support.client_support import served

pytestmark = [pytest.mark.browser, pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)]

SESSION = "long"
SHOWN = 1500  # client/web/review.js: timeline rows drawn before "Show all"


class Night:
    def __init__(self, db, token: str):
        self.db, self.token = db, token


@pytest.fixture(scope="module")
def night(tmp_path_factory):
    """A MET night past the first screen in both lists: more than FIRST_CHALLENGES
    challenges and FIRST_ITEMS timeline rows."""
    db = tmp_path_factory.mktemp("paging") / "night.db"
    rng = random.Random("review-paging")
    with SQLiteStore(db) as store:
        chronicle = Chronicle(store)
        futures = [chronicle.submit(SESSION, command, actor) for actor, command in setup_commands(rng, "met")]
        for f in futures:
            f.result()
        for _ in range(1800):
            for actor, command in next_commands(rng, "met", chronicle.state(SESSION)):
                chronicle.submit(SESSION, command, actor).result()
        token = Tokens(store).issue("storyteller", name="storyteller")
    return Night(db, token)


class Asked(logging.Handler):
    """Adds the path of each sealed request the server opens to ``paths``."""

    def __init__(self, paths: list[str]):
        super().__init__(logging.DEBUG)
        self.paths = paths

    def emit(self, record: logging.LogRecord) -> None:
        self.paths.append(record.args[1])


def expect(locator):
    from playwright.sync_api import expect as _expect

    return _expect(locator)


def test_more_challenges_show_all_and_filters_load_the_rest_of_a_long_night(browser, night):
    with served(night.db) as server:
        whole = httpx.get(f"{server.url}/sessions/{SESSION}/review", timeout=60,
                          headers={"Authorization": f"Bearer {night.token}"}).json()
        challenges = [c["id"] for c in whole["challenges"]]
        seqs = [i["seq"] for i in whole["items"]]
        assert len(challenges) > review_page.FIRST_CHALLENGES and len(seqs) > review_page.FIRST_ITEMS == SHOWN, \
            "the night should be longer than the first screen"
        context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-US")
        page = context.new_page()
        page.set_default_timeout(TIMEOUT * 2)
        errors: list[str] = []
        asked: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("request", lambda r: asked.append(r.url.split(server.url, 1)[-1]))
        sealed = Asked(asked)  # the requests the channel carries, as the server opened them
        logging.getLogger("conteur.web.sealed").addHandler(sealed)
        logging.getLogger("conteur.web.sealed").setLevel(logging.DEBUG)
        rows = page.locator("#challenges [data-testid=challenge-link]")
        timeline = page.get_by_test_id("timeline").locator("li")
        try:
            page.goto(f"{server.url}/review.html#join={night.token}&session={SESSION}")
            # the first screen: its share of each list, and how many there are in all
            expect(rows).to_have_count(review_page.FIRST_CHALLENGES)
            expect(page.locator("#challenges h2")).to_have_text(f"Challenges ({len(challenges)})")
            expect(timeline).to_have_count(SHOWN)
            expect(page.get_by_test_id("show-all")).to_have_text(f"Show all ({len(seqs)})")
            assert not any("/review/items" in u or "/review/challenges?" in u for u in asked), asked
            # "More": the other challenges, in log order, and no button left
            page.get_by_test_id("more-challenges").click()
            expect(rows).to_have_count(len(challenges))
            assert rows.evaluate_all("rs => rs.map(r => r.dataset.challenge)") == challenges
            expect(page.get_by_test_id("more-challenges")).to_have_count(0)
            assert any(f"/review/challenges?offset={review_page.FIRST_CHALLENGES}&" in u for u in asked), asked
            # a filter on a challenge of the night's end: its rows are all past the first screen
            last = challenges[-1]
            own = [i["seq"] for i in whole["items"] if i["challenge"] == last]
            assert own and min(own) > seqs[SHOWN - 1]
            page.locator("select[data-filter=challenge]").select_option(last)
            expect(timeline).to_have_count(len(own))
            assert timeline.evaluate_all("ls => ls.map(l => Number(l.dataset.seq))") == own
            assert any(f"/review/items?after={seqs[SHOWN - 1]}&" in u for u in asked), asked
            # filters off, "Show all": every row of the night, in order
            page.locator("select[data-filter=challenge]").select_option("")
            expect(timeline).to_have_count(SHOWN)
            page.get_by_test_id("show-all").click()
            expect(timeline).to_have_count(len(seqs))
            assert timeline.evaluate_all("ls => ls.map(l => Number(l.dataset.seq))") == seqs
            expect(page.get_by_test_id("show-all")).to_have_count(0)
            assert errors == []
        finally:
            logging.getLogger("conteur.web.sealed").removeHandler(sealed)
            logging.getLogger("conteur.web.sealed").setLevel(logging.NOTSET)
            context.close()

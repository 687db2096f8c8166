"""A French phone's notice of a refused command says what the rule asks, in French, not
the server's English message (MET-2: a throw for a round that takes none). Real Chromium
against a real server."""

from __future__ import annotations

import pytest

from conteur.events.catalogue import section
from tests.support.browser_support import CHROMIUM, NO_CHROMIUM
from tests.support.web_support import Device, start_challenge

pytestmark = [pytest.mark.browser, pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)]


def test_met_2_a_french_phone_reads_a_refused_throw_in_french(browser, server, setup):
    anna = Device(browser, server.url, setup.players["anna"], locale="fr-FR")
    start_challenge(anna)
    rock = anna.challenge().get_by_test_id("throw-rock")
    anna.expect(rock).to_be_visible()
    # the throw button of a round the challenge is not at: the server refuses it (MET-2),
    # in English, citing the rule; set and tapped at once, before any re-render
    anna.page.evaluate("""() => { const b = document.querySelector('[data-challenge="c1"] [data-testid=throw-rock]');
                                  b.dataset.round = "7"; b.click(); }""")
    notice = anna.page.get_by_test_id("notice-reject")
    anna.expect(notice).to_contain_text(section("refusals", "fr")["MET-2"])
    said = notice.inner_text()
    assert "round" not in said and "MET-2" not in said and "throw" not in said, said
    anna.close()

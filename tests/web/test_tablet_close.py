"""Closing the night from the tablet (TIME-2, FAIR-2): a confirmation says what closing does;
afterwards every phone says the session is closed at the top, offers no command the
server would refuse, and links to its own dice check and to the night's record."""

from __future__ import annotations


import pytest

from tests.support.browser_support import CHROMIUM, NO_CHROMIUM
from tests.support.doc_shots import doc_shot
from tests.support.web_support import TABLET, Device

pytestmark = [pytest.mark.browser, pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)]

SESSION = "action-demo"
# what a page may still send once closed: the language switch, a notice tapped away, the
# one tap that lets the phone vibrate; nothing that reaches the server as a command
LOCAL = ("lang", "dismiss", "alerts")

ACTING = """(local) => [...document.querySelectorAll('#app [data-act]')]
    .map((el) => el.dataset.act).filter((act) => !local.includes(act))"""


def test_the_tablet_closes_the_night_and_every_phone_shows_it_closed(browser, demo):
    server, _db, storyteller, links = demo
    st = Device(browser, server.url, f"{storyteller}&session={SESSION}", viewport=TABLET)
    nova = Device(browser, server.url, links["nova"])
    rook = Device(browser, server.url, links["rook"], locale="fr-FR")
    nova.page.locator("#act-characteristic").select_option("science")
    nova.page.get_by_test_id("roll").click()
    nova.expect(nova.page.get_by_test_id("roll-result")).to_have_count(1)
    assert nova.page.evaluate(ACTING, list(LOCAL))  # open: the phone offers play

    st.page.get_by_test_id("close-session").click()
    dialog = st.page.get_by_test_id("confirm")
    st.expect(dialog).to_contain_text("draw seed is revealed")
    st.expect(dialog).to_contain_text("nothing more can be played")
    dialog.get_by_test_id("confirm-no").click()  # kept open: nothing was sent
    st.page.wait_for_timeout(300)
    assert server.runtime.chronicle.state(SESSION).session.status == "open"

    st.page.get_by_test_id("close-session").click()
    st.page.get_by_test_id("confirm").get_by_test_id("confirm-yes").click()
    for device in (st, nova, rook):
        banner = device.page.get_by_test_id("session-closed")
        device.expect(banner).to_be_visible()
        # at the top: the first thing of the page under the header
        assert device.page.evaluate(
            "() => document.querySelector('#app main').firstElementChild.dataset.testid") == "session-closed"
        device.expect(banner.get_by_test_id("closed-record")).to_be_visible()
        assert device.page.evaluate(ACTING, list(LOCAL)) == [], device.page.evaluate(ACTING, list(LOCAL))
        device.expect(device.page.locator("#app form")).to_have_count(0)
    rook.expect(rook.page.get_by_test_id("session-closed")).to_contain_text("Session close")
    # the tablet's record is the review page; a phone's, its own chronicle record
    st.expect(st.page.get_by_test_id("closed-record")).to_have_attribute("href", f"review.html#session={SESSION}")
    # Nova rolled: her banner links to her dice check, verified
    nova.page.get_by_test_id("closed-dice-check").click()
    nova.expect(nova.page.get_by_test_id("dice-check")).to_have_attribute("data-ok", "true")
    nova.expect(nova.page.get_by_test_id("dice-check")).to_be_in_viewport()
    nova.page.evaluate("window.scrollTo(0, 0)")
    doc_shot(nova.page, "session-closed")
    # the record opens from the phone, as this player may read it
    with nova.context.expect_page() as opened:
        nova.page.get_by_test_id("closed-record").click()
    review = opened.value
    review.wait_for_load_state()
    Device.expect(review.locator("body")).to_contain_text("Station Omega")
    Device.expect(review.locator("body")).to_contain_text("Nova")
    review.close()
    for device in (st, nova, rook):
        device.close()

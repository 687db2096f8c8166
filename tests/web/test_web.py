"""The web app in real Chromium against a real server: a whole challenge between two
phones and a storyteller's tablet, Time Out, a dropout through a proxy, dice, and the
screenshots reviewers look at (test-artifacts/web/)."""

from __future__ import annotations

import re

import pytest

from conteur.events.catalogue import section
from tests.support.browser_support import CHROMIUM, NO_CHROMIUM, TIMEOUT
from tests.support.client_support import Proxy, events_of_type, served, stored_rows
from tests.support.web_support import PHONE, TABLET, Device, start_challenge, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)]


def test_a_pasted_join_link_joins_too(browser, server, setup):
    page = browser.new_page(viewport=PHONE)
    page.goto(server.url + "/")
    page.locator("#join-link").fill(f"{server.url}/#join={setup.players['bruno']}")
    page.locator("form[data-act=join] button").click()
    Device.expect(page.locator("h1")).to_have_text("Bruno", timeout=TIMEOUT)
    page.close()


def test_join_link_token_is_kept_and_the_fragment_cleared(browser, server, setup):
    anna = Device(browser, server.url, setup.players["anna"])
    assert "#" not in anna.page.url and setup.players["anna"] not in anna.page.url
    # what the device keeps is what its first hello turned the link into, not the link
    kept = anna.page.evaluate("localStorage.getItem('conteur.token')")
    assert kept != setup.players["anna"] and server.runtime.tokens.check(kept).device
    anna.page.reload()  # the token stays on the device
    anna.expect(anna.page.locator("#conn.online")).to_be_visible()
    anna.expect(anna.page.locator("h1")).to_have_text("Anna")
    # localhost is a secure context: the manifest is linked and the service worker registers
    assert anna.page.locator("link[rel=manifest]").count() == 1
    wait_until(anna.page, "navigator.serviceWorker.getRegistration().then(r => !!r)", what="the service worker to register")
    anna.close()


def test_met_challenge_with_a_tie_and_bids_played_by_two_phones(browser, server, setup):
    # MET-2 sealed throws, a tie, MET-3 bids (initiator first), MET-16 the loser accepts
    st = Device(browser, server.url, setup.storyteller, viewport=TABLET)
    anna = Device(browser, server.url, setup.players["anna"], locale="fr-FR")
    bruno = Device(browser, server.url, setup.players["bruno"])
    anna.expect(anna.page.locator("html")).to_have_attribute("lang", "fr")
    start_challenge(anna)
    for phone in (anna, bruno):
        phone.expect(phone.challenge().get_by_test_id("throw-rock")).to_be_visible()
    anna.shot("player-challenge-360x740")
    anna.challenge().get_by_test_id("throw-rock").click()
    anna.expect(anna.challenge().get_by_test_id("throw-rock")).to_have_count(0)
    st.expect(st.page.locator('[data-testid=st-challenge][data-challenge="c1"]').get_by_test_id("st-throws")).to_contain_text("Anna: Rock")
    bruno.challenge().get_by_test_id("throw-rock").click()
    # the tie: both are asked for a bid, bounded by the sheet (MET-4: Anna 6 Physical)
    anna.expect(anna.challenge()).to_have_attribute("data-status", "bidding")
    anna.expect(anna.challenge().get_by_test_id("revealed")).to_contain_text("Égalité")
    bid = anna.challenge().get_by_test_id("bid-input")
    assert bid.get_attribute("max") == "6"
    assert bruno.challenge().get_by_test_id("bid-input").count() == 0  # the initiator first
    anna.shot("player-bid-360x740")
    bid.fill("5")
    anna.challenge().get_by_test_id("bid-send").click()
    bruno.expect(bruno.challenge().get_by_test_id("bid-input")).to_have_attribute("max", "7")
    bruno.challenge().get_by_test_id("bid-input").fill("7")
    bruno.challenge().get_by_test_id("bid-send").click()
    # Bruno wins on bids; Anna, the loser, gets her window: retest, overbid is not offered
    # (lost on bids, not on the throw: MET-13), accept
    anna.expect(anna.challenge()).to_have_attribute("data-status", "window")
    anna.expect(anna.challenge().get_by_test_id("accept")).to_be_visible()
    assert anna.challenge().get_by_test_id("overbid").count() == 0
    anna.expect(anna.challenge().get_by_test_id("retest")).to_be_visible()
    anna.shot("player-window-360x740")
    anna.page.set_viewport_size(TABLET)  # the same phone page on a laptop
    anna.shot("player-window-1280x800")
    anna.page.set_viewport_size(PHONE)
    bruno.expect(bruno.challenge()).to_contain_text("Bruno")
    log = st.page.get_by_test_id("log")
    st.expect(log).to_contain_text("c1: Anna challenged Bruno (Physical).")
    st.expect(log).to_contain_text("c1, round 1: Anna rock, Bruno rock, tie.")
    st.expect(log).to_contain_text("c1: Bruno bid 7.")
    said = st.page.evaluate("""async () => {
        const {teller} = await import('/narrate.js');
        const issued = window.conteur.vm.log.find(l => l.type === 'met.challenge_issued');
        return teller(window.conteur.vm, 'fr')(issued.event);
    }""")
    assert said == "c1 : Anna a défié Bruno (Physique)."
    st.shot("storyteller-challenge-1280x800")
    anna.challenge().get_by_test_id("accept").click()
    anna.expect(anna.challenge()).to_have_count(0)  # ended: no longer pending
    settled = st.page.get_by_test_id("st-done").locator('[data-challenge="c1"]')
    st.expect(settled).to_have_attribute("data-status", "resolved")  # listed as settled only
    st.expect(st.page.locator('[data-testid=st-challenge][data-challenge="c1"]')).to_have_count(1)
    resolved = events_of_type(setup.db, "met.challenge_resolved")
    assert [(r["winner"], r["loser"], r["reason"]) for r in resolved] == [("bruno", "anna", "accepted")]
    # the pages' folds agree with the server's state
    truth = server.runtime.chronicle.state(setup.session).met.challenges["c1"]
    for d in (st, anna, bruno):
        seen = d.page.evaluate("(({status, winner, loser, round}) => ({status, winner, loser, round}))(window.conteur.vm.challenges.c1)")
        assert seen == {"status": truth.status, "winner": truth.winner, "loser": truth.loser, "round": truth.round}
    bids = {b["character"]: b["value"] for b in events_of_type(setup.db, "met.bid_declared")}
    assert bids == {"anna": 5, "bruno": 7}
    # Anna's phone never held Bruno's bid value (MET-3: told to the storyteller)
    held = anna.page.evaluate(
        "window.conteur.vm.log.filter(l => l.type === 'met.bid_declared' && l.event.character === 'bruno')"
        ".map(l => l.event.value ?? null)")
    assert held == [None]
    for d in (st, anna, bruno):
        d.close()


def test_time_5_freeze_covers_both_phones_and_resume_lifts_it(browser, server, setup):
    st = Device(browser, server.url, setup.storyteller, viewport=TABLET)
    anna = Device(browser, server.url, setup.players["anna"], locale="fr-FR")
    bruno = Device(browser, server.url, setup.players["bruno"])
    for phone in (anna, bruno):
        phone.page.evaluate("window.__buzz = []; navigator.vibrate = (p) => { window.__buzz.push(p); return true; }")
    start_challenge(anna)
    anna.expect(anna.challenge().get_by_test_id("throw-rock")).to_be_visible()
    st.page.get_by_test_id("freeze-all").click()
    for phone in (anna, bruno):
        overlay = phone.page.get_by_test_id("freeze")
        phone.expect(overlay).to_be_visible()
        assert phone.page.evaluate("window.__buzz.length") >= 1
    anna.expect(anna.page.get_by_test_id("freeze")).to_contain_text("TEMPS MORT")
    bruno.expect(bruno.page.get_by_test_id("freeze")).to_contain_text("TIME OUT")
    anna.shot("player-freeze-360x740")
    # a tap that slips under the overlay is refused with its reason, never lost silently
    anna.page.evaluate("document.querySelector('[data-testid=throw-rock]').click()")
    refused = anna.page.get_by_test_id("notice-reject")
    # in French words (what TIME-5 asks), not the server's English message nor its rule number
    anna.expect(refused).to_contain_text(section("refusals", "fr")["TIME-5"])
    assert "TIME-5" not in refused.inner_text() and "frozen" not in refused.inner_text()
    st.shot("storyteller-frozen-1280x800")
    wall = Device(browser, server.url, setup.observer, viewport=TABLET)  # joins mid-freeze
    wall.expect(wall.page.get_by_test_id("freeze")).to_be_visible()
    wall.expect(wall.page.locator("main.observer")).to_contain_text("Anna ⟷ Bruno")
    st.page.get_by_test_id("resume-all").click()
    for phone in (anna, bruno, wall):
        phone.expect(phone.page.get_by_test_id("freeze")).to_be_hidden()
    wall.close()
    # a scene's Time Out covers the players in that scene
    st.page.locator('[data-scene="hall"] button[data-act=freeze]').click()
    anna.expect(anna.page.get_by_test_id("freeze")).to_be_visible()
    st.page.locator('[data-scene="hall"] button[data-act=resume]').click()
    anna.expect(anna.page.get_by_test_id("freeze")).to_be_hidden()
    for d in (st, anna, bruno):
        d.close()


def test_dropout_throw_is_queued_and_acknowledged_exactly_once(browser, server, setup):
    with Proxy(server.port) as proxy:
        anna = Device(browser, proxy.url, setup.players["anna"])  # her Wi-Fi: the proxy
        bruno = Device(browser, server.url, setup.players["bruno"])
        start_challenge(bruno, defender="anna")
        anna.expect(anna.challenge().get_by_test_id("throw-paper")).to_be_visible()
        proxy.cut(hold=True)
        anna.expect(anna.page.locator("#conn.offline")).to_be_visible()
        anna.challenge().get_by_test_id("throw-paper").click()
        queued = anna.page.get_by_test_id("queued")
        anna.expect(queued).to_have_count(1)
        anna.expect(queued).to_contain_text(anna.page.evaluate("document.documentElement.lang") == "fr" and "en attente" or "queued")
        command_id = anna.page.evaluate("window.conteur.queued[0].id")
        anna.shot("player-offline-queued-360x740")
        assert stored_rows(setup.db, command_id) == []
        bruno.challenge().get_by_test_id("throw-rock").click()  # the others play on
        anna.page.reload()  # a reload without network: the shell from the service worker,
        anna.expect(anna.page.get_by_test_id("queued")).to_have_count(1)  # the outbox and
        anna.expect(anna.challenge()).to_be_visible()  # the events from IndexedDB
        anna.expect(anna.page.locator("#conn.online")).to_have_count(0)
        proxy.release()
        anna.expect(anna.page.locator("#conn.online")).to_be_visible(timeout=30_000)
        anna.expect(anna.page.get_by_test_id("queued")).to_have_count(0)
        anna.expect(anna.challenge()).to_have_attribute("data-status", "window")  # paper covers rock
        bruno.expect(bruno.challenge()).to_have_attribute("data-status", "window")
        assert [t for _, t in stored_rows(setup.db, command_id)].count("met.throw_committed") == 1
        throws = [e for e in events_of_type(setup.db, "met.throw_committed") if e["character"] == "anna"]
        assert len(throws) == 1
        assert anna.page.evaluate("window.conteur.queued.length") == 0
        anna.close()
        bruno.close()


def test_a_revoked_link_stops_reconnecting_and_says_so(browser, server, setup):
    page = browser.new_page(viewport=PHONE)
    page.goto(f"{server.url}/#join=not-a-valid-token")
    Device.expect(page.locator("#conn.refused")).to_be_visible(timeout=TIMEOUT)
    # the channel's hello does not open: refused by a close alone, which the page words
    Device.expect(page.locator("main.wait")).to_contain_text("no longer valid")
    page.close()



def test_plain_http_on_the_lan_plays_fully_without_service_worker(lan_browser, server, setup):
    # no crypto.randomUUID, no service worker, no manifest: the outbox and play still work
    base = f"http://venue.lan:{server.port}"
    anna = Device(lan_browser, base, setup.players["anna"])
    bruno = Device(lan_browser, base, setup.players["bruno"])
    assert anna.page.evaluate("window.isSecureContext") is False
    assert anna.page.evaluate("typeof crypto.randomUUID") == "undefined"
    assert anna.page.locator("link[rel=manifest]").count() == 0
    assert anna.page.evaluate("navigator.serviceWorker === undefined || navigator.serviceWorker.controller === null")
    start_challenge(anna)
    anna.challenge().get_by_test_id("throw-scissors").click()
    bruno.challenge().get_by_test_id("throw-paper").click()
    anna.expect(anna.challenge()).to_have_attribute("data-status", "window")
    ids = _web_command_ids(setup.db)
    assert len(ids) == 3 and all(len(i) == 36 and i[14] == "4" for i in ids)  # UUID v4 without randomUUID
    anna.close()
    bruno.close()


def _web_command_ids(db) -> list[str]:
    import sqlite3

    conn = sqlite3.connect(db)
    try:
        rows = conn.execute("SELECT DISTINCT command_id FROM events WHERE device LIKE '%:web-%'")
        return [r[0] for r in rows]
    finally:
        conn.close()


def test_v5_roll_shows_each_die_with_hunger_dice_apart(browser, server, setup):
    session, token = setup.dice["clara"]
    clara = Device(browser, server.url, token, locale="en-US")
    clara.page.locator("#v5attr").select_option("dexterity")
    clara.page.locator("#v5skill").select_option("stealth")
    clara.page.locator("#v5diff").fill("3")
    clara.page.get_by_test_id("roll").click()
    result = clara.page.get_by_test_id("roll-result").first
    clara.expect(result).to_be_visible()
    assert result.locator(".die").count() == 5  # Dexterity 3 + Stealth 2 (V5-1)
    assert result.locator(".die.hunger").count() == 2  # Hunger 2 on the sheet (V5-5)
    clara.expect(result.locator(".words")).to_contain_text("successes")
    normal = [int(x) for x in result.locator(".die:not(.hunger)").all_inner_texts()]
    if any(face < 6 for face in normal):  # V5-9: Willpower rerolls up to three failed normal dice
        clara.page.get_by_test_id("willpower").click()
        clara.expect(clara.page.get_by_test_id("willpower")).to_have_count(0)  # once per roll
        assert len(events_of_type(setup.db, "v5.willpower_rerolled")) == 1
    else:
        assert clara.page.get_by_test_id("willpower").count() == 0  # nothing to reroll
    clara.page.get_by_test_id("rouse").click()
    clara.expect(clara.page.get_by_test_id("roll-result")).to_have_count(2)
    clara.shot("player-v5-dice-360x740", focus="[data-testid=roll-result]")
    clara.close()


def test_action_roll_shows_dplusminus_dice_and_points(browser, server, setup):
    session, token = setup.dice["jake"]
    jake = Device(browser, server.url, token, locale="fr-FR")
    jake.page.locator("select[name=characteristic]").select_option("science")
    jake.page.locator("#actdiff").fill("2")
    jake.page.locator("#actbonus").fill("2")
    jake.page.get_by_test_id("roll").click()
    result = jake.page.get_by_test_id("roll-result").first
    jake.expect(result).to_be_visible()
    assert result.locator(".die:not(.dpm)").count() == 3  # ACT-3: three action dice
    assert result.locator(".die.dpm").count() == 2  # ACT-6: net bonus 2 -> two D+/-
    jake.expect(result.locator(".words")).to_contain_text(re.compile(r"\d+ points? de succès"))  # 1 point, 2 points
    jake.shot("player-action-dice-360x740", focus="[data-testid=roll-result]")
    # a secret roll: whole for its roller, marked as secret (ACT, like V5)
    jake.page.locator("#act-vis").select_option("secret")
    jake.page.get_by_test_id("roll").click()
    jake.expect(jake.page.get_by_test_id("roll-result")).to_have_count(2)
    secret = jake.page.get_by_test_id("roll-result").first
    jake.expect(secret).to_have_attribute("data-visibility", "secret")
    assert secret.locator(".die:not(.dpm)").count() == 3
    assert [e["visibility"] for e in events_of_type(setup.db, "action.rolled")] == ["open", "secret"]
    jake.close()


def test_storyteller_lets_the_server_throw_for_an_antagonist(browser, server, setup):
    # MET-8 against an antagonist; the storyteller's throw drawn by the server (FAIR-1),
    # bids declared by the storyteller for the sheetless antagonist (MET-15), MET-16 end
    st = Device(browser, server.url, setup.storyteller, viewport=TABLET)
    anna = Device(browser, server.url, setup.players["anna"])
    st.page.locator("main.st details.new-challenge summary").click()
    form = st.page.locator("form[data-act=st-challenge]")
    form.locator("input[name=antagonist]").fill("guard")
    form.locator("select[name=target]").select_option("anna")
    form.locator("select[name=kind]").select_option("classic")
    form.locator("button[type=submit]").click()
    card = st.page.locator('[data-testid=st-challenge][data-challenge="c1"]')
    st.expect(card.get_by_test_id("server-throw")).to_be_visible()
    anna.challenge().get_by_test_id("throw-rock").click()
    card.get_by_test_id("server-throw").click()
    st.expect(card.get_by_test_id("server-throw")).to_have_count(0)
    guard = [e for e in events_of_type(setup.db, "met.throw_committed") if e["character"] == "guard"]
    assert len(guard) == 1 and guard[0]["choice"] in ("rock", "paper", "scissors") and guard[0]["draws"]
    anna.expect(anna.challenge()).not_to_have_attribute("data-status", "throwing")
    status = anna.challenge().get_attribute("data-status")
    if status == "bidding":  # a tie: the storyteller declares for the guard, first
        card.get_by_test_id("st-bid-input").fill("3")
        card.get_by_test_id("st-bid").click()
        anna.challenge().get_by_test_id("bid-input").fill("6")
        anna.challenge().get_by_test_id("bid-send").click()
    st.expect(card).to_have_attribute("data-status", "window")
    st.shot("storyteller-antagonist-1280x800")
    card.get_by_test_id("close-window").click()  # MET-16: the storyteller closes the window
    st.expect(st.page.get_by_test_id("st-done").locator('[data-challenge="c1"]')).to_be_visible()
    resolved = events_of_type(setup.db, "met.challenge_resolved")
    assert len(resolved) == 1 and resolved[0]["reason"] == "window_closed"
    if status == "bidding":
        assert resolved[0]["winner"] == "anna"  # 6 beats 3 (MET-3)
    # MET-16: the result may still be overruled; the history stays in the log
    done = st.page.get_by_test_id("st-done").locator('[data-challenge="c1"]')
    loser = resolved[0]["loser"]
    done.locator("select[name=winner]").select_option(loser)
    done.get_by_test_id("overrule").click()
    st.page.get_by_test_id("confirm-yes").click()  # it cannot be taken back: asked once more
    st.expect(done.locator(".stage")).to_contain_text(f"{'Anna' if loser == 'anna' else 'guard'}")
    overruled = events_of_type(setup.db, "met.challenge_overruled")
    assert [(o["winner"], o["previous_winner"]) for o in overruled] == [(loser, resolved[0]["winner"])]
    st.close()
    anna.close()


def test_v5_storyteller_sets_hunger_and_the_phone_shows_it(browser, server, setup):
    # V5-9: Hunger set by a storyteller; a chronicle-wide token names its session in the link
    session, token = setup.dice["clara"]
    clara = Device(browser, server.url, token)
    st = Device(browser, server.url, f"{setup.chronicle_storyteller}&session={session}", viewport=TABLET)
    row = st.page.locator("form[data-act=set_hunger][data-character=clara]")
    row.locator("input[name=hunger]").fill("4")
    row.locator("button[type=submit]").click()
    clara.expect(clara.page.locator(".character .trait").first).to_contain_text("4")
    assert [e["hunger"] for e in events_of_type(setup.db, "v5.hunger_set")] == [4]
    st.close()
    clara.close()


def test_js_fold_keeps_going_past_unknown_and_malformed_events(browser, server, setup):
    anna = Device(browser, server.url, setup.players["anna"])
    result = anna.page.evaluate("""async () => {
        const f = await import('/fold.js');
        const vm = f.initialView();
        f.applyEvent(vm, 1, {type: 'session.scene_opened', scene: 's', name: 'Crypt'});
        f.applyEvent(vm, 2, {type: 'from.the_future', whatever: [1, 2]});
        f.applyEvent(vm, 3, {type: 'met.throws_revealed', challenge: 'c9', round: 1, throws: null});
        f.applyEvent(vm, 4, {type: 'met.challenge_issued', challenge: 'c1', kind: 'classic', initiator: 'a', defender: 'b', attribute: 'social'});
        f.applyEvent(vm, 5, {type: 'session.time_out_called', scope: 'session'});
        return {scene: vm.scenes.s.name, head: vm.head, log: vm.log.length, errors: vm.log.filter(l => l.error).length,
                c1: vm.challenges.c1.status, frozen: vm.session.frozen};
    }""")
    assert result == {"scene": "Crypt", "head": 5, "log": 5, "errors": 0, "c1": "throwing", "frozen": True}
    anna.close()


def test_storyteller_runs_the_clock_reads_initiative_and_cancels(browser, server, setup):
    st = Device(browser, server.url, setup.storyteller, viewport=TABLET)
    anna = Device(browser, server.url, setup.players["anna"])
    # MET-9: more Physical traits act first (Bruno 7, Anna 6); Mental: Anna 4 before Bruno 3
    order = st.page.locator('[data-scene="hall"] .initiative li')
    st.expect(order).to_have_text(["Bruno", "Anna"])
    st.page.locator("#ini-hall").select_option("mental")
    st.expect(order).to_have_text(["Anna", "Bruno"])
    # TIME-1, TIME-3: a turn, then an hour skipped (900 turns of 4 s)
    st.page.locator("button[data-act=next_turn]").click()
    anna.expect(anna.page.locator(".bar .clock")).to_contain_text("1")
    st.page.locator("#skip").fill("60")
    st.page.locator("form[data-act=skip_time] button").click()
    anna.expect(anna.page.locator(".bar .clock")).to_contain_text("901")
    # TIME-6: out of game and back, from the phone
    anna.page.get_by_test_id("out-of-game").click()
    st.expect(st.page.locator(".char-row").first).to_contain_text("Out of game")
    anna.page.get_by_test_id("back-in-game").click()
    anna.expect(anna.page.get_by_test_id("out-of-game")).to_be_visible()
    # MET-16: a storyteller cancels a pending challenge
    start_challenge(anna)
    card = st.page.locator('[data-testid=st-challenge][data-challenge="c1"]')
    card.get_by_test_id("cancel").click()
    st.page.get_by_test_id("confirm-yes").click()
    anna.expect(anna.challenge()).to_have_count(0)
    assert len(events_of_type(setup.db, "met.challenge_cancelled")) == 1
    # MET-10: a static challenge against a difficulty the storyteller sets
    st.page.locator("#st-new-challenge summary").click()
    st.page.locator("#st-target").select_option("anna")
    st.page.locator("#st-kind").select_option("static")
    st.page.locator("#st-difficulty").fill("5")
    st.page.locator("form[data-act=st-challenge] button[type=submit]").click()
    anna.expect(anna.challenge("c2").locator(".meta")).to_contain_text("Difficulty 5")
    anna.expect(anna.challenge("c2").get_by_test_id("throw-rock")).to_be_visible()
    st.shot("storyteller-clock-1280x800")
    st.close()
    anna.close()


@pytest.mark.parametrize("seed", [3, 11])
def test_js_fold_matches_the_server_after_a_simulated_evening(browser, tmp_path, seed):
    from conteur.server.core.auth import Tokens
    from conteur.server.core.service import Chronicle
    from conteur.server.cli.simulate import play
    from conteur.server.store.sqlite import SQLiteStore

    db = str(tmp_path / "sim.db")
    with SQLiteStore(db) as store:
        play(Chronicle(store), "sim", events=400, seed=seed, ruleset="met", close=False)
        token = Tokens(store).issue("storyteller", session="sim")
    with served(db) as server:
        st = Device(browser, server.url, token, viewport=TABLET)
        truth = server.runtime.chronicle.state("sim")
        st.page.wait_for_function(f"window.conteur.lastSeq >= {truth.head}")
        vm = st.page.evaluate("""(() => {
            const vm = window.conteur.vm;
            return {
                challenges: Object.fromEntries(Object.values(vm.challenges).map(c =>
                    [c.id, [c.status, c.winner, c.loser, c.round]])),
                scenes: Object.fromEntries(Object.values(vm.scenes).map(s => [s.id, [s.open, s.frozen]])),
                characters: Object.fromEntries(Object.values(vm.characters).map(c => [c.id, [c.scene, c.outOfGame]])),
                frozen: vm.session.frozen, turn: vm.session.turn,
            };
        })()""")
        challenges = truth.met.challenges
        assert len(challenges) > 3
        assert vm["challenges"] == {
            c.id: [c.status, c.winner, c.loser, c.round] for c in challenges.values()
        }
        assert vm["scenes"] == {s.id: [s.open, s.frozen] for s in truth.session.scenes.values()}
        assert vm["characters"] == {
            c.id: [c.scene, c.out_of_game] for c in truth.session.characters.values()
        }
        assert (vm["frozen"], vm["turn"]) == (truth.session.frozen, truth.session.turn)
        # batch in hello: the resync came as a few messages, not one per event
        messages, events = st.page.evaluate("[window.conteur.net.messages, window.conteur.vm.log.length]")
        assert events > 100 and messages * 4 < events
        # the log tells every event the simulator plays as a sentence, never a field dump
        untold = st.page.evaluate(r"""async () => {
            const {teller} = await import('/narrate.js');
            const vm = window.conteur.vm;
            const told = {en: teller(vm, 'en'), fr: teller(vm, 'fr')};
            return vm.log.filter(l => !told.en(l.event) || !told.fr(l.event) || /undefined|\{\w+\}/.test(told.en(l.event) + told.fr(l.event)))
                .map(l => l.type);
        }""")
        assert untold == []
        st.expect(st.page.get_by_test_id("log").locator("li code")).to_have_count(0)
        st.close()


def test_met_12_the_loser_retests_from_the_phone_and_a_new_round_starts(browser, server, setup):
    anna = Device(browser, server.url, setup.players["anna"])
    bruno = Device(browser, server.url, setup.players["bruno"])
    start_challenge(anna)
    anna.challenge().get_by_test_id("throw-rock").click()
    bruno.challenge().get_by_test_id("throw-paper").click()
    anna.expect(anna.challenge()).to_have_attribute("data-status", "window")
    anna.expect(anna.challenge().get_by_test_id("overbid")).to_be_visible()  # lost on the throw (MET-13)
    anna.challenge().locator("select[name=source]").select_option("melee")
    anna.challenge().get_by_test_id("retest").click()
    for phone in (anna, bruno):
        phone.expect(phone.challenge().get_by_test_id("throw-rock")).to_be_visible()
        phone.expect(phone.challenge().locator(".meta")).to_contain_text("Round 2")
    assert [(e["character"], e["source"]) for e in events_of_type(setup.db, "met.retest_taken")] == [("anna", "melee")]
    anna.close()
    bruno.close()


def test_the_demo_links_open_on_a_phone_for_every_ruleset(browser, tmp_path):
    # what a new user does first: `conteur serve --demo`, then a link per tab
    from conteur.server.cli.demo import create_demo
    from conteur.server.core.roster import join_link
    from conteur.server.store.sqlite import SQLiteStore

    db = str(tmp_path / "demo.db")
    with SQLiteStore(db) as store:
        storyteller, imported = create_demo(store)
    with served(db) as server:
        for item in imported:
            first = item.players[0]
            fragment = join_link(server.url, first.token, item.session).split("#join=")[1]
            phone = Device(browser, server.url, fragment)
            phone.expect(phone.page.locator(".character h1")).to_have_text(first.name)
            ruleset = phone.page.evaluate("window.conteur.vm.characters[window.conteur.viewer.character].sheet.kind")
            if ruleset == "met":
                phone.expect(phone.page.locator("#h-ch")).to_be_visible()
            else:
                phone.page.get_by_test_id("roll").click()
                phone.expect(phone.page.get_by_test_id("roll-result")).to_have_count(1)
            phone.shot(f"demo-{item.session}-360x740")
            phone.close()
        tablet = Device(browser, server.url, f"{storyteller}&session={imported[0].session}", viewport=TABLET)
        tablet.expect(tablet.page.locator("main.st")).to_be_visible()
        tablet.close()


def test_storyteller_prints_the_join_sheet_and_opens_the_review(browser, server, setup):
    # the join sheet is fetched with the bearer token (never in a URL) and opened from a
    # blob URL; its fresh links join a phone; the review page opens with the same token
    st = Device(browser, server.url, setup.storyteller, viewport=TABLET)
    with st.context.expect_page() as opened:
        st.page.get_by_test_id("join-sheet").click()
    sheet = opened.value
    sheet.wait_for_url(lambda url: url.startswith("blob:"))
    st.expect(sheet.locator(".card")).to_have_count(2)
    st.expect(sheet.locator(".card").first).to_contain_text("Anna")
    assert sheet.locator(".card svg").count() == 2  # one QR code per character
    link = sheet.locator(".card", has_text="Bruno").locator(".link").inner_text()
    assert setup.players["bruno"] not in link  # a freshly minted token
    fragment = link.split("#join=")[1]
    bruno = Device(browser, server.url, fragment)
    bruno.expect(bruno.page.locator("h1")).to_have_text("Bruno")
    bruno.close()
    sheet.close()
    with st.context.expect_page() as opened:
        st.page.get_by_test_id("review-link").click()
    review = opened.value
    st.expect(review.get_by_test_id("verify")).to_have_attribute("data-ok", "true")
    assert review.locator("#login").is_hidden()
    review.close()
    # a reprint after a lost sheet: the previous links stop working
    st.page.locator("#sheet-revoke").check()
    with st.context.expect_page() as opened:
        st.page.get_by_test_id("join-sheet").click()
    opened.value.wait_for_url(lambda url: url.startswith("blob:"))
    lost = browser.new_page(viewport=PHONE)
    lost.goto(f"{server.url}/#join={setup.players['anna']}")
    Device.expect(lost.locator("#conn.revoked")).to_be_visible()  # told so through its channel
    lost.close()
    st.close()


def test_a_player_finds_the_record_of_challenges_played_by_hand(browser, server, setup):
    # on the main page itself; the old address forwards there, form open
    anna = Device(browser, server.url, setup.players["anna"])
    anna.page.get_by_test_id("hand-record").locator("summary").click()
    anna.expect(anna.page.get_by_test_id("hand-opponent")).to_contain_text("Bruno")
    anna.page.goto(f"{server.url}/offline.html")
    anna.expect(anna.page.get_by_test_id("hand-record")).to_have_attribute("open", "")
    anna.close()


def _roster_session(server, setup, session: str, options: dict) -> dict:
    """A MET session of Anna and Bruno in one scene, imported over HTTP with chronicle
    options; returns the character -> token map the import hands back once."""
    import httpx
    import msgspec

    from tests.support.client_support import ANNA, BRUNO

    roster = {"name": session, "ruleset": "met", "options": options,
              "scenes": [{"id": "hall", "name": "Hall"}],
              "characters": [{"id": c, "name": c.title(), "scene": "hall", "sheet": msgspec.to_builtins(s)}
                             for c, s in (("anna", ANNA), ("bruno", BRUNO))]}
    answer = httpx.post(f"{server.url}/sessions/{session}/roster", json=roster,
                        headers={"Authorization": f"Bearer {setup.chronicle_storyteller}"})
    assert answer.status_code == 200, answer.text
    imported = answer.json()
    assert not imported["rejected"], imported
    return {p["character"]: f"{p['token']}&session={session}" for p in imported["players"]}


def test_met_12_option_the_winner_cancels_the_retest_from_the_phone(browser, server, setup):
    tokens = _roster_session(server, setup, "rc", {"retest_cancel": True})
    anna = Device(browser, server.url, tokens["anna"])
    bruno = Device(browser, server.url, tokens["bruno"])
    start_challenge(anna)
    anna.challenge().get_by_test_id("throw-rock").click()
    bruno.challenge().get_by_test_id("throw-paper").click()
    anna.expect(anna.challenge()).to_have_attribute("data-status", "window")
    assert bruno.challenge().get_by_test_id("retest-cancel").count() == 0  # nothing to cancel yet
    anna.challenge().locator("select[name=source]").select_option("melee")
    anna.challenge().get_by_test_id("retest").click()
    form = bruno.challenge().locator("form.retest-cancel")
    bruno.expect(form).to_contain_text("Anna")
    assert anna.challenge().get_by_test_id("retest-cancel").count() == 0  # not one's own
    form.locator("select[name=source]").select_option("dodge")
    form.get_by_test_id("retest-cancel").click()
    # the earlier result stands again: Bruno won, Anna's window reopens
    anna.expect(anna.challenge()).to_have_attribute("data-status", "window")
    bruno.expect(bruno.challenge().get_by_test_id("retest-cancel")).to_have_count(0)
    cancelled = events_of_type(setup.db, "met.retest_cancelled")
    assert [(e["character"], e["source"], e["cancelled"]) for e in cancelled] == [("bruno", "dodge", "anna")]
    anna.close()
    bruno.close()


def test_met_8_mutual_challenge_issued_from_the_phone(browser, server, setup):
    anna = Device(browser, server.url, setup.players["anna"])
    bruno = Device(browser, server.url, setup.players["bruno"])
    anna.page.locator("details.new-challenge summary").click()
    anna.page.get_by_test_id("mutual").check()
    anna.page.get_by_test_id("challenge-start").click()
    for phone in (anna, bruno):
        phone.expect(phone.challenge().locator(".meta")).to_contain_text("mutual")
    issued = events_of_type(setup.db, "met.challenge_issued")
    assert [(e["initiator"], e["defender"], e["mutual"]) for e in issued] == [("anna", "bruno", True)]
    anna.close()
    bruno.close()


def test_met_11_successive_simple_tests_show_each_result(browser, server, setup):
    # two simple tests against the storyteller, both to be won; the phone shows the count
    st = Device(browser, server.url, setup.storyteller, viewport=TABLET)
    anna = Device(browser, server.url, setup.players["anna"])
    anna.page.locator("details.new-challenge summary").click()
    anna.page.get_by_test_id("nc-kind").select_option("simple")
    anna.page.get_by_test_id("tests-input").fill("2")
    anna.page.get_by_test_id("challenge-start").click()
    anna.expect(anna.challenge().get_by_test_id("test-of")).to_have_text("Test 1 of 2")
    card = st.page.locator('[data-testid=st-challenge][data-challenge="c1"]')
    anna.challenge().get_by_test_id("throw-rock").click()
    card.locator('button[data-act=st-throw][data-choice="scissors"]').click()  # rock wins
    anna.expect(anna.challenge().get_by_test_id("test-of")).to_have_text("Test 2 of 2")
    anna.expect(anna.challenge().locator(".test-mark.ok")).to_have_count(1)
    anna.expect(anna.challenge().get_by_test_id("throw-paper")).to_be_visible()
    anna.challenge().get_by_test_id("throw-paper").click()
    card.locator('button[data-act=st-throw][data-choice="scissors"]').click()  # scissors cut paper
    anna.expect(anna.challenge()).to_have_attribute("data-status", "window")
    anna.expect(anna.challenge().locator(".test-mark.ko")).to_have_count(1)
    anna.shot("player-successive-tests-360x740")
    st.close()
    anna.close()


def test_secret_rolls_reach_the_roller_and_storytellers_only(browser, server, setup):
    # V5: a secret roll is seen by its roller and storytellers; a wall display sees nothing
    session, token = setup.dice["clara"]
    wall_token = server.runtime.tokens.issue("observer", session=session, name="Wall")
    clara = Device(browser, server.url, token)
    st = Device(browser, server.url, f"{setup.chronicle_storyteller}&session={session}", viewport=TABLET)
    wall = Device(browser, server.url, wall_token, viewport=TABLET)
    clara.page.locator("#v5vis").select_option("secret")
    clara.page.get_by_test_id("roll").click()
    mine = clara.page.get_by_test_id("roll-result").first
    clara.expect(mine).to_have_attribute("data-visibility", "secret")
    clara.expect(mine.get_by_test_id("roll-secret")).to_be_visible()
    assert mine.locator(".die").count() > 0  # whole for its roller
    st.expect(st.page.get_by_test_id("roll-result").first.get_by_test_id("roll-secret")).to_be_visible()
    rolled = events_of_type(setup.db, "v5.pool_rolled")
    assert [e["visibility"] for e in rolled] == ["secret"]
    st.page.locator("button[data-act=next_turn]").click()  # a public event after the roll:
    wall.page.wait_for_function("window.conteur.vm.session.turn === 1")  # what came before is in
    assert wall.page.evaluate("window.conteur.vm.rolls.length") == 0
    assert wall.page.evaluate("window.conteur.vm.log.filter(l => l.type.startsWith('v5.')).length") == 0
    for d in (clara, st, wall):
        d.close()


def test_the_log_tells_every_dice_and_met_event_of_a_mixed_evening(browser, tmp_path):
    # the three rulesets side by side, as the simulator plays them: every event type it
    # makes has an English and a French sentence in narrate.js
    from conteur.server.core.auth import Tokens
    from conteur.server.core.service import Chronicle
    from conteur.server.cli.simulate import play
    from conteur.server.store.sqlite import SQLiteStore

    db = str(tmp_path / "mixed.db")
    with SQLiteStore(db) as store:
        play(Chronicle(store), "sim", events=600, seed=5, ruleset="mixed", close=False)
        token = Tokens(store).issue("storyteller", name="Head")
    with served(db) as server:
        st = Device(browser, server.url, f"{token}&session=sim-v5", viewport=TABLET)
        untold = st.page.evaluate(r"""async (token) => {
            const {teller} = await import('/narrate.js');
            const vm = window.conteur.vm;
            const told = {en: teller(vm, 'en'), fr: teller(vm, 'fr')};
            const types = new Set(), untold = [];
            for (const s of ['sim-met', 'sim-v5', 'sim-action']) {
                const res = await fetch(`/sessions/${s}/events?after=0&limit=5000`, {headers: {Authorization: `Bearer ${token}`}});
                for (const {event} of await res.json()) {
                    types.add(event.type);
                    const both = `${told.en(event)} ${told.fr(event)}`;
                    if (!told.en(event) || !told.fr(event) || /undefined|NaN|\{\w+\}/.test(both)) untold.push(event.type);
                }
            }
            return {types: [...types], untold: [...new Set(untold)]};
        }""", token)
        assert untold["untold"] == []
        assert {"v5.pool_rolled", "action.rolled", "met.throws_revealed"} <= set(untold["types"])
        st.close()


def test_service_worker_opens_the_review_and_by_hand_pages_without_network(browser, server, setup):
    # what a dropout sends people to must open from the cache: the record of challenges
    # played by hand (players) and the review (storytellers). offline.html
    # opened offline must not show only "Not sent: the server is unreachable", no form: it
    # forwards to the phone app, whose form queues the record (tests/web/test_web_handplay.py)
    anna = Device(browser, server.url, setup.players["anna"])
    wait_until(anna.page, "navigator.serviceWorker.ready.then(() => !!navigator.serviceWorker.controller)",
               what="the service worker to control the page")
    cached = anna.page.evaluate("""async () => {
        const names = ['offline.html', 'offline.js', 'handplay.js', 'review.html', 'review.js', 'narrate.js'];
        const hits = await Promise.all(names.map((n) => caches.match(n)));
        return names.filter((n, i) => !hits[i]);
    }""")
    assert cached == []
    anna.kept()  # the page opened offline folds what the device wrote down, nothing more
    anna.context.set_offline(True)
    try:
        anna.page.goto(f"{server.url}/offline.html")
        form = anna.page.get_by_test_id("hand-record")
        anna.expect(form).to_have_attribute("open", "")
        anna.expect(anna.page.get_by_test_id("hand-opponent")).to_have_value("bruno")
        anna.page.get_by_test_id("hand-save").click()
        anna.expect(anna.page.locator("[data-testid=hand-row][data-queued]")).to_have_count(1)
        anna.page.goto(f"{server.url}/review.html")
        anna.expect(anna.page.locator("#title")).to_be_visible()
    finally:
        anna.context.set_offline(False)
    anna.close()


def test_met_12_the_storyteller_retests_and_cancels_for_an_antagonist(browser, server, setup):
    # an antagonist has no sheet: the storyteller names the source (MET-12, MET-15)
    tokens = _roster_session(server, setup, "rcst", {"retest_cancel": True})
    st = Device(browser, server.url, f"{setup.chronicle_storyteller}&session=rcst", viewport=TABLET)
    anna = Device(browser, server.url, tokens["anna"])
    st.page.locator("#st-new-challenge summary").click()
    st.page.locator("#st-target").select_option("anna")
    st.page.locator("form[data-act=st-challenge] button[type=submit]").click()
    card = st.page.locator('[data-testid=st-challenge][data-challenge="c1"]')
    anna.challenge().get_by_test_id("throw-rock").click()
    card.locator('button[data-act=st-throw][data-choice="scissors"]').click()  # the guard loses
    st.expect(card.get_by_test_id("st-retest")).to_be_visible()
    card.locator("form[data-act=st-retest] input[name=source]").fill("Dodge")
    card.get_by_test_id("st-retest").click()
    anna.expect(anna.challenge().locator(".meta")).to_contain_text("Round 2")
    # Anna answers by spending her own retest: the first result stands again
    form = anna.challenge().locator("form.retest-cancel")
    form.locator("select[name=source]").select_option("lucky")
    form.get_by_test_id("retest-cancel").click()
    st.expect(card).to_have_attribute("data-status", "window")
    assert [(e["character"], e["cancelled"]) for e in events_of_type(setup.db, "met.retest_cancelled")] == [("anna", "guard")]
    # Anna loses the next one, retests; the storyteller cancels it for the guard
    card.locator('button[data-act=close_window]').click()
    st.expect(st.page.get_by_test_id("st-done").locator('[data-challenge="c1"]')).to_be_visible()
    st.expect(st.page.locator("#st-new-challenge")).to_have_attribute("open", "")  # still unfolded
    st.page.locator("form[data-act=st-challenge] button[type=submit]").click()
    card = st.page.locator('[data-testid=st-challenge][data-challenge="c2"]')
    anna.challenge("c2").get_by_test_id("throw-rock").click()
    card.locator('button[data-act=st-throw][data-choice="paper"]').click()  # Anna loses
    anna.expect(anna.challenge("c2")).to_have_attribute("data-status", "window")
    anna.challenge("c2").locator("form.retest select[name=source]").select_option("melee")
    anna.challenge("c2").get_by_test_id("retest").click()
    card.locator("form[data-act=st-retest-cancel] input[name=source]").fill("Dodge")
    card.get_by_test_id("st-retest-cancel").click()
    anna.expect(anna.challenge("c2")).to_have_attribute("data-status", "window")
    cancelled = [(e["challenge"], e["character"], e["cancelled"]) for e in events_of_type(setup.db, "met.retest_cancelled")]
    assert cancelled == [("c1", "anna", "guard"), ("c2", "guard", "anna")]
    st.close()
    anna.close()


def test_a_french_tablet_prints_a_french_join_sheet(browser, server, setup):
    # the sheet speaks the tablet's language (the EN/FR switch or the browser's)
    st = Device(browser, server.url, setup.storyteller, viewport=TABLET, locale="fr-FR")
    with st.context.expect_page() as opened:
        st.page.get_by_test_id("join-sheet").click()
    sheet = opened.value
    sheet.wait_for_url(lambda url: url.startswith("blob:"))
    st.expect(sheet.locator("html")).to_have_attribute("lang", "fr")
    st.expect(sheet.locator("h1")).to_contain_text("rejoindre la partie")
    st.expect(sheet.locator(".card")).to_have_count(2)
    sheet.close()
    st.close()

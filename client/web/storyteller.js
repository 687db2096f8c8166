// The storyteller's tablet (and the read-only wall display).

import { rulesetOf, isOpen, SEALED, initiativeOrder } from "./fold.js";
import { app, t, lang, esc, nameOf, THROWS, ICON, stageText, rollsView } from "./ui.js";
import { teller } from "./narrate.js";
import { sheetEditor } from "./sheet_editor.js";
import { handRulingsView } from "./handplay.js";
import { isClosed, closedBanner, closeSessionButton } from "./closed.js";
import { deskTabletView, deskWallView, safetyAlert } from "./desk.js";
import { devicesView } from "./devices.js";

// ---- observer (a wall display): public state only, nothing to press

export function observerView() {
  const vm = app.vm;
  const chars = Object.values(vm.characters);
  const frozen = Object.values(vm.scenes).filter((s) => s.open && s.frozen);
  // a scene's Time Out, big enough to read across the room (the whole session's covers
  // the screen already, app.js freezeOverlay)
  const banner = !vm.session.frozen && frozen.length ? `<section class="wall-freeze" role="alert" data-testid="wall-freeze">
      <p class="wall-freeze-title">${esc(t("freeze"))}</p><p>${frozen.map((s) => esc(s.name)).join(" · ")}</p></section>` : "";
  return `<main class="st observer">${banner}${deskWallView()}
    <section class="card" aria-labelledby="h-sc"><h2 id="h-sc">${esc(t("scenes"))}</h2>
      ${Object.values(vm.scenes).filter((s) => s.open).map((s) => `<div class="scene-row ${s.frozen ? "frozen" : ""}">
        <h3>${esc(s.name)}${s.frozen || vm.session.frozen ? ` · ${esc(t("frozen"))}` : ""}</h3>
        <p>${chars.filter((c) => c.scene === s.id).map((c) => esc(c.name)).join(", ") || esc(t("none"))}</p></div>`).join("")}
    </section>
    <section class="card" aria-labelledby="h-ch"><h2 id="h-ch">${esc(t("challenges"))}</h2>
      ${Object.values(vm.challenges).filter(isOpen).map((c) => `<p data-testid="wall-challenge" data-challenge="${esc(c.id)}">${c.group ? "↳ " : ""}${esc(sidesOf(c))} · <span class="stage">${esc(stageText(c))}</span></p>`).join("")
        || `<p class="muted">${esc(t("no_challenges"))}</p>`}
    </section>
  </main>`;
}

// ---- storyteller

export function storytellerView() {
  const vm = app.vm;
  if (isClosed(vm)) return closedStorytellerView(vm);
  const open = Object.values(vm.challenges).filter(isOpen);
  const done = Object.values(vm.challenges).filter((c) => c.status === "resolved" && !c.group).slice(-3).reverse(); // a group's pairs on its card
  const scenes = Object.values(vm.scenes).filter((s) => s.open);
  const chars = Object.values(vm.characters);
  const ruleset = rulesetOf(vm);
  const tell = teller(vm, lang);
  return `<main class="st">
    ${venueBanner(vm)}
    ${safetyAlert()}
    ${toolsView(chars)}
    ${deskTabletView()}
    <section class="card" aria-labelledby="h-sc"><h2 id="h-sc">${esc(t("scenes"))}</h2>
      <div class="row wrap">
        ${vm.session.frozen
          ? `<button class="primary" data-act="resume" data-testid="resume-all">${esc(t("resume_all"))}</button>`
          : `<button class="danger" data-act="freeze" data-testid="freeze-all">${esc(t("freeze_all"))}</button>`}
        ${venueTimeOutButton(vm)}
      </div>
      ${scenes.map((s) => `<div class="scene-row ${s.frozen ? "frozen" : ""}" data-scene="${esc(s.id)}">
        <h3>${esc(s.name)}${s.frozen ? ` · ${esc(t("frozen"))}` : ""}</h3>
        <p>${chars.filter((c) => c.scene === s.id).map((c) => esc(c.name)).join(", ") || esc(t("none"))}</p>
        ${s.frozen
          ? `<button data-act="resume" data-scene="${esc(s.id)}">${esc(t("resume_scene"))}</button>`
          : `<button class="danger" data-act="freeze" data-scene="${esc(s.id)}">${esc(t("freeze_scene"))}</button>`}
        ${initiativeView(s, chars)}
      </div>`).join("")}
      <form data-act="open_scene" class="row wrap"><label>${esc(t("scene_name"))} <input id="scene-name" name="name" value="${esc(app.form["scene-name"] ?? "")}"></label>
        <button type="submit">${esc(t("open_scene"))}</button></form>
    </section>
    <section class="card" aria-labelledby="h-stch"><h2 id="h-stch">${esc(t("challenges"))}</h2>
      ${open.map(stChallenge).join("") || `<p class="muted">${esc(t("no_challenges"))}</p>`}
      ${stNewChallenge(chars)}
    </section>
    ${stuckView(vm)}
    ${handRulingsView()}
    ${done.length ? `<section class="card" aria-labelledby="h-done"><h2 id="h-done">${esc(t("recent"))}</h2>
      <div data-testid="st-done">${done.map(stChallenge).join("")}</div></section>` : ""}
    <section class="card" aria-labelledby="h-time"><h2 id="h-time">${esc(t("turn"))} ${vm.session.turn}</h2>
      <div class="row wrap"><button data-act="next_turn">${esc(t("next_turn"))}</button>
      <form data-act="skip_time" class="row"><label>${esc(t("skip_time"))} <input id="skip" name="minutes" type="number" min="1" value="${esc(app.form.skip ?? 60)}"> ${esc(t("minutes"))}</label>
        <button type="submit">${esc(t("skip_time"))}</button></form></div>
    </section>
    <section class="card" aria-labelledby="h-chars"><h2 id="h-chars">${esc(t("characters"))}</h2>
      ${chars.map((c) => stCharacter(c, ruleset)).join("")}
      ${sheetEditor(chars)}
    </section>
    ${stRoller(chars)}
    ${rollsView(vm.rolls.filter((r) => r.id !== stRollerShown(chars)))}
    <section class="card log" aria-labelledby="h-log" tabindex="0"><h2 id="h-log">${esc(t("log"))}</h2>
      <ol reversed data-testid="log">${vm.log.slice(-30).reverse().map((l) => logLine(l, tell)).join("")}</ol>
    </section>
    ${devicesView()}
  </main>`;
}

// A closed session on the tablet: the banner (with the review), the last challenges and
// the log, to read; no command, no join sheet for a night that is over (closed.js).
function closedStorytellerView(vm) {
  const done = Object.values(vm.challenges).filter((c) => c.status === "resolved" && !c.group).slice(-3).reverse(); // a group's pairs on its card
  const tell = teller(vm, lang);
  return `<main class="st closed">
    ${closedBanner(false)}
    ${done.length ? `<section class="card" aria-labelledby="h-done"><h2 id="h-done">${esc(t("recent"))}</h2>
      <div data-testid="st-done">${done.map((c) => `<p>${esc(c.id)} · ${esc(sidesOf(c))} · ${esc(stageText(c))}</p>`).join("")}</div></section>` : ""}
    <section class="card log" aria-labelledby="h-log" tabindex="0"><h2 id="h-log">${esc(t("log"))}</h2>
      <ol reversed data-testid="log">${vm.log.slice(-30).reverse().map((l) => logLine(l, tell)).join("")}</ol>
    </section>
  </main>`;
}

// TIME-5 for the whole venue: one tap stops every session the server serves (each
// tablet and phone of every room hears it in its own session), one resumes them all.
function venueTimeOutButton(vm) {
  return vm.session.venueFrozen
    ? `<button class="primary" data-act="resume" data-scope="venue" data-testid="resume-venue">${esc(t("resume_venue"))}</button>`
    : `<button class="danger" data-act="freeze" data-scope="venue" data-testid="freeze-venue">${esc(t("freeze_venue"))}</button>`;
}

function venueBanner(vm) {
  return vm.session.venueFrozen ? `<p class="warn venue-frozen" role="alert" data-testid="venue-frozen">${esc(t("venue_frozen"))}</p>` : "";
}

// ACT-12, ACT-2 overruled: opposed rolls waiting for their defender's answer and long
// actions under way, each with its storyteller's ruling, for the defender who died, left or
// lost its phone (DESIGN "overrule"). The reason, optional, goes with every button.
function stuckView(vm) {
  const waiting = Object.values(vm.waiting);
  const pending = Object.values(vm.pending);
  if (!waiting.length && !pending.length) return "";
  const state = (id) => (vm.dead[id] ? ` · ${t("stuck_dead")}` : vm.characters[id]?.outOfGame ? ` · ${t("out_of_game")}` : "");
  const since = (x) => t("stuck_since", x.turn ?? x.startedTurn ?? 0, x.seq ?? "?");
  const button = (w, outcome, label, cls = "") => `<button ${cls ? `class="${cls}" ` : ""}data-act="settle_opposition" data-roll="${esc(w.id)}" data-outcome="${outcome}" data-testid="settle-${outcome}">${esc(label)}</button>`;
  return `<section class="card stuck" aria-labelledby="h-stuck" data-testid="st-stuck"><h2 id="h-stuck">${esc(t("stuck_title"))}</h2>
    <label>${esc(t("stuck_reason"))} <input id="stuck-reason" value="${esc(app.form["stuck-reason"] ?? "")}" data-testid="stuck-reason"></label>
    ${waiting.map((w) => `<article class="stuck-roll" data-testid="st-waiting" data-roll="${esc(w.id)}">
      <p><b>${esc(w.id)}</b> · ${esc(nameOf(w.character))}${esc(state(w.character))} ⟶ ${esc(nameOf(w.opponent))}${esc(state(w.opponent))}${w.characteristic ? ` (${esc(w.characteristic)})` : ""}</p>
      <p class="muted">${esc(since(w))}</p>
      ${w.sealed && w.dice ? `<p data-testid="st-sealed">${esc(t("stuck_sealed", w.dice.join(" "), w.ps, nameOf(w.opponent)))}${w.option !== "none" ? ` · ${esc(t(`opt_${w.option}`))}` : ""}</p>` : ""}
      <div class="row wrap" role="group" aria-label="${esc(t("stuck_settle"))}">
        ${button(w, "initiator", t("settle_initiator", nameOf(w.character)), "primary")}${button(w, "defender", t("settle_defender", nameOf(w.opponent)))}${button(w, "cancelled", t("settle_cancel"), "danger")}
      </div>${rollFor(vm, w)}</article>`).join("")}
    ${pending.map((p) => `<article class="stuck-action" data-testid="st-pending" data-roll="${esc(p.id)}">
      <p><b>${esc(p.id)}</b> · ${esc(nameOf(p.character))}${esc(state(p.character))} · ${esc(p.label)} · ${esc(t("pending_turns", p.turns, p.lastTurn, vm.session.turn))}</p>
      <p class="muted">${esc(since(p))}</p>
      <button class="danger" data-act="cancel_action" data-roll="${esc(p.id)}" data-testid="cancel-action">${esc(t("cancel_action"))}</button></article>`).join("")}
  </section>`;
}

// ACT-12 with dice, for a defender whose phone is dead or who must not learn of a blind
// roll: the storyteller answers as the defender would (act_answer, the defender named).
// The answer takes the waiting roll's visibility, so a blind contest stays blind.
function rollFor(vm, w) {
  const sheet = vm.characters[w.opponent]?.sheet;
  const names = Object.keys((sheet && sheet.characteristics) || {});
  if (!names.length || vm.dead[w.opponent]) return "";
  const key = `st-ans-${w.id}`;
  const chosen = app.form[key] ?? names.find((k) => k.toLowerCase() === (w.characteristic || "").toLowerCase()) ?? names[0];
  return `<form data-act="act_answer" data-character="${esc(w.opponent)}" data-roll="${esc(w.id)}" class="row wrap" data-testid="st-roll-for">
        <label>${esc(t("characteristic"))} <select name="characteristic" id="${esc(key)}" data-testid="st-roll-for-characteristic">${names.map((k) =>
          `<option ${k === chosen ? "selected" : ""}>${esc(k)}</option>`).join("")}</select></label>
        <input type="hidden" name="visibility" value="${esc(w.visibility || "open")}">
        <button type="submit" data-testid="st-roll-for-button">${esc(t("stuck_roll_for", nameOf(w.opponent)))}</button></form>`;
}

// The join sheet to print at check-in, and the pages a storyteller opens beside this one.
// A reprint for one character (a lost or passed-on phone) revokes that character's codes
// only: every other phone plays on.
function toolsView(chars) {
  const session = encodeURIComponent(app.session || "");
  const only = chars.find((c) => c.id === app.form["sheet-for"]);
  const revoke = app.form["sheet-revoke"] === "1";
  return `<section class="card tools" aria-labelledby="h-tools"><h2 id="h-tools">${esc(t("tools"))}</h2>
    <div class="row wrap">
      <button data-act="join-sheet" data-testid="join-sheet">${esc(t("join_sheet"))}</button>
      <label>${esc(t("join_sheet_for"))} <select data-form="sheet-for" data-testid="join-sheet-for">
        <option value="">${esc(t("join_sheet_all"))}</option>${chars.map((c) =>
          `<option value="${esc(c.id)}" ${only && only.id === c.id ? "selected" : ""}>${esc(c.name)}</option>`).join("")}</select></label>
      <label class="check"><input type="checkbox" id="sheet-revoke" data-form="sheet-revoke" data-testid="join-sheet-revoke" ${revoke ? "checked" : ""}> ${esc(t("revoke_previous"))}</label>
      ${revoke && !only ? `<p class="warn" role="alert" data-testid="revoke-all-warning">${esc(t("revoke_all_warning"))}</p>` : ""}
      ${app.joinSheetUrl ? `<a href="${esc(app.joinSheetUrl)}" target="_blank" data-testid="join-sheet-link">${esc(t("join_sheet_open"))}</a>` : ""}
      <a class="button" href="review.html#session=${session}" target="_blank" data-testid="review-link">${esc(t("review"))}</a>
      ${closeSessionButton()}
    </div></section>`;
}

function initiativeView(scene, chars) {
  const here = chars.filter((c) => c.scene === scene.id && c.sheet && c.sheet.kind === "met");
  if (here.length < 2) return "";
  const attribute = app.form[`ini-${scene.id}`] || "physical";
  return `<div class="initiative"><label>${esc(t("initiative"))}
    <select id="ini-${esc(scene.id)}" data-form="ini-${esc(scene.id)}">${["physical", "social", "mental"].map((a) => `<option value="${a}" ${a === attribute ? "selected" : ""}>${esc(t(a))}</option>`).join("")}</select></label>
    <ol>${initiativeOrder(app.vm, here.map((c) => [c.id, attribute])).map((g) => `<li>${g.map(([id]) => esc(nameOf(id))).join(" = ")}</li>`).join("")}</ol></div>`;
}

// "Anna ⟷ Bruno", a group's "Anna ⟷ Bruno, Clara, Dora"
function sidesOf(c) {
  const defenders = c.defenders && c.defenders.length ? c.defenders : [c.defender];
  return `${nameOf(c.initiator)} ⟷ ${defenders.map(nameOf).join(", ")}`;
}

// A group challenge (MET-1): its pairs have cards of their own; here, the group as one,
// each defender's outcome once its pair stands, and the cancel of the whole group.
function stGroup(c) {
  const pairs = c.pairs.map((p) => app.vm.challenges[p]).filter(Boolean);
  const outcome = (p) => (p.status === "resolved" ? `${t("winner")}: ${nameOf(p.winner)}` : stageText(p));
  return `<article class="challenge group" data-testid="st-group" data-challenge="${esc(c.id)}" data-status="${esc(c.status)}">
    <h3>${esc(c.id)} · ${esc(sidesOf(c))}</h3>
    <p class="meta"><span class="stage" data-testid="st-group-stage">${esc(stageText(c))}</span>${c.attribute ? ` · ${esc(t(c.attribute))}` : ""}
      <a href="review.html#session=${encodeURIComponent(app.session || "")}&challenge=${encodeURIComponent(c.id)}" target="_blank" data-testid="challenge-review">${esc(t("story"))}</a></p>
    <ul class="pairs" data-testid="st-group-pairs">${pairs.map((p) => `<li data-pair="${esc(p.id)}">${esc(p.id)} · ${esc(nameOf(p.defender))} · ${esc(outcome(p))}</li>`).join("")}</ul>
    ${npcGroupThrow(c, pairs)}
    ${isOpen(c) ? `<button type="button" class="danger" data-act="cancel" data-ch="${esc(c.id)}" data-testid="cancel-group">${esc(t("cancel"))}</button>` : ""}
  </article>`;
}

// MET-1, MET-2 for an antagonist (or a trap) initiating a group: its one throw against
// every character waiting for it at the lowest round, in one tap, the server's draw
// included (drawn once for all of them); the pairs' cards below wait for it.
function npcGroupThrow(g, pairs) {
  const npc = g.initiator;
  if (app.vm.characters[npc] || !isOpen(g)) return "";
  const waiting = pairs.filter((p) => p.status === "throwing" && !(npc in p.throws));
  if (!waiting.length) return "";
  const round = Math.min(...waiting.map((p) => p.round));
  if (app.queued.some((e) => e.command.challenge === g.id && e.command.round === round)) return "";
  const against = waiting.filter((p) => p.round === round).map((p) => nameOf(p.defender)).join(", ");
  const data = `data-act="st-throw" data-ch="${esc(g.id)}" data-side="${esc(npc)}" data-round="${round}"`;
  return `<div class="group-throw" data-testid="st-group-throw" data-round="${round}">
    <p><b>${esc(t("st_group_throw", nameOf(npc), against, round))}</b></p>
    <div class="row wrap" role="group" aria-label="${esc(t("throw_for"))}">${THROWS.map((ch) =>
      `<button ${data} data-choice="${ch}" data-testid="st-group-throw-${ch}" aria-label="${esc(t("throw_label", t(ch)))}"><span class="mini">${ICON[ch]}</span> ${esc(t(ch))}</button>`).join("")}
      <button class="primary" ${data} data-testid="st-group-server-throw">${esc(t("server_throws"))}</button></div></div>`;
}

// The sides a storyteller plays: antagonists (not on the roster) and the storyteller side.
function antagonistOf(c) {
  return [c.initiator, c.defender].find((side) => !app.vm.characters[side]);
}

// MET-13: after an overbid, the overbidder's traits and the answer (the bids of the
// round it reopened are those two), on the open card as on the settled one.
function overbidLine(c, shown) {
  if (!c.overbids.length || c.overbidValue == null) return "";
  const by = c.overbids[c.overbids.length - 1];
  const other = by === c.initiator ? c.defender : c.initiator;
  return ` · <span data-testid="st-overbid">${esc(t("overbid"))}: ${esc(nameOf(by))} ${esc(shown(c.overbidValue))} / ${esc(nameOf(other))} ${esc(shown(c.bids[other]))}</span>`;
}

function stChallenge(c) {
  if (c.defenders.length) return stGroup(c);
  const sides = [c.initiator, c.defender];
  const shown = (v) => (v === SEALED ? "?" : v === null || v === undefined ? "…" : v);
  const throws = sides.map((s) => `${esc(nameOf(s))}: ${c.throws[s] ? esc(c.throws[s] === SEALED ? "?" : t(c.throws[s])) : "…"}`).join(" · ");
  const bids = overbidLine(c, shown) || (Object.keys(c.bids).length ? ` · ${t("bid")}: ${sides.map((s) => `${esc(nameOf(s))} ${esc(shown(c.bids[s]))}`).join(" / ")}` : "");
  const npc = antagonistOf(c);
  const key = `st-bid-${c.id}-${c.round}`;
  let acts = "";
  if (c.status === "throwing" && npc && !(npc in c.throws) && c.group && npc === c.initiator) {
    acts = `<p class="muted" data-testid="st-group-throw-above">${esc(t("st_group_throw_above"))}</p>`; // npcGroupThrow
  } else if (c.status === "throwing" && npc && !(npc in c.throws)) {
    acts = `<div class="row wrap" role="group" aria-label="${esc(t("throw_for"))}">${THROWS.map((ch) =>
      `<button data-act="st-throw" data-ch="${esc(c.id)}" data-side="${esc(npc)}" data-choice="${ch}" aria-label="${esc(t("throw_label", t(ch)))}"><span class="mini">${ICON[ch]}</span> ${esc(t(ch))}</button>`).join("")}
      <button class="primary" data-act="st-throw" data-ch="${esc(c.id)}" data-side="${esc(npc)}" data-testid="server-throw">${esc(t("server_throws"))}</button></div>`;
  } else if (npc && ((c.status === "bidding" && c.kind === "classic" && !(npc in c.bids) && (npc === c.initiator || c.initiator in c.bids))
      || (c.status === "overbid" && c.winner === npc && !(npc in c.bids)))) {
    // MET-3, MET-15: an antagonist has no sheet here; the storyteller declares its traits
    acts = `<form data-act="st-bid" data-ch="${esc(c.id)}" data-side="${esc(npc)}" class="row">
      <label for="${key}">${esc(t("bid"))} · ${esc(nameOf(npc))}</label>
      <input id="${key}" name="value" type="number" min="0" max="99" value="${esc(app.form[key] ?? 5)}" data-testid="st-bid-input">
      <button type="submit" data-testid="st-bid">${esc(t("send_bid"))}</button></form>`;
  } else if (c.status === "window" || c.status === "overbid") {
    acts = `<div class="row wrap">${npc && c.loser === npc ? `<button data-act="st-accept" data-ch="${esc(c.id)}" data-side="${esc(npc)}">${esc(t("accept"))} · ${esc(nameOf(npc))}</button>` : ""}
      <button data-act="close_window" data-ch="${esc(c.id)}" data-testid="close-window">${esc(t("close_window"))}</button></div>`;
    if (npc && c.loser === npc && c.status === "window") acts += npcRetest(c, npc, false);
  }
  if (npc && c.status === "throwing" && c.cancellable && c.cancellable !== npc && !Object.keys(c.throws).length
      && app.vm.session.options && app.vm.session.options.retest_cancel) acts += npcRetest(c, npc, true);
  const overrule = `<form data-act="overrule" data-ch="${esc(c.id)}" class="row wrap"><label>${esc(t("winner_is"))}
      <select name="winner">${sides.map((s) => `<option value="${esc(s)}">${esc(nameOf(s))}</option>`).join("")}</select></label>
      <button type="submit" data-testid="overrule">${esc(t("overrule"))}</button>
      ${isOpen(c) ? `<button type="button" class="danger" data-act="cancel" data-ch="${esc(c.id)}" data-testid="cancel">${esc(t("cancel"))}</button>` : ""}</form>`;
  return `<article class="challenge" data-testid="st-challenge" data-challenge="${esc(c.id)}" data-status="${esc(c.status)}">
    <h3>${esc(c.id)} · ${esc(nameOf(c.initiator))} ⟷ ${esc(nameOf(c.defender))}</h3>
    ${c.group ? `<p class="group-of" data-testid="group-of">${esc(t("group_of", c.group, nameOf(c.initiator), (app.vm.challenges[c.group]?.defenders || []).map(nameOf).join(", ")))}</p>` : ""}
    <p class="meta"><span class="stage">${esc(stageText(c))}</span> · ${esc(t(c.kind))} · ${esc(t("round"))} ${c.round}${c.tests > 1 ? ` · ${c.test}/${c.tests}` : ""}${c.attribute ? ` · ${esc(t(c.attribute))}` : ""}${c.kind === "static" ? ` · ${esc(t("difficulty"))} ${c.difficulty}` : ""}</p>
    <p data-testid="st-throws">${throws}${bids} <a href="review.html#session=${encodeURIComponent(app.session || "")}&challenge=${encodeURIComponent(c.id)}" target="_blank" data-testid="challenge-review">${esc(t("story"))}</a></p>
    ${acts}
    ${overrule}
  </article>`;
}

// MET-12 for an antagonist: the storyteller names the source (it has no sheet here,
// MET-15); with the retest-cancel option, the same spends it to cancel the player's.
function npcRetest(c, npc, cancels) {
  const key = `st-src-${c.id}-${c.round}`;
  return `<form data-act="${cancels ? "st-retest-cancel" : "st-retest"}" data-ch="${esc(c.id)}" data-side="${esc(npc)}" class="row wrap">
    <label for="${key}">${esc(cancels ? t("retest_cancel", nameOf(c.cancellable)) : `${t("retest")} · ${nameOf(npc)}`)}</label>
    <input id="${key}" name="source" required value="${esc(app.form[key] ?? "")}" placeholder="${esc(t("retest_source"))}">
    <button type="submit" data-testid="${cancels ? "st-retest-cancel" : "st-retest"}">${esc(cancels ? t("retest_cancel_button") : t("retest"))}</button></form>`;
}

// A storyteller's challenge: an antagonist against a character (classic), a difficulty
// (static, MET-10), or a simple/complex test of one character (MET-11); the ticked
// characters make it one challenge against all of them (MET-1), classic or static.
function stNewChallenge(chars) {
  if (!chars.length) return "";
  return `<details class="new-challenge" id="st-new-challenge"><summary>${esc(t("challenge_new"))}</summary>
    <form data-act="st-challenge">
      <label>${esc(t("antagonist"))} <input name="antagonist" value="${esc(t("antagonist_default"))}" id="st-antagonist"></label>
      <label>${esc(t("character"))} <select name="target" id="st-target">${chars.map((o) => `<option value="${esc(o.id)}">${esc(o.name)}</option>`).join("")}</select></label>
      ${chars.length > 1 ? `<fieldset class="more-defenders"><legend>${esc(t("group_more"))}</legend>${chars.map((o) =>
        `<label class="check"><input type="checkbox" name="more" value="${esc(o.id)}" data-testid="st-more-${esc(o.id)}"> ${esc(o.name)}</label>`).join("")}</fieldset>` : ""}
      <label>${esc(t("kind"))} <select name="kind" id="st-kind">${["classic", "static", "simple", "complex"].map((k) => `<option value="${k}">${esc(t(k))}</option>`).join("")}</select></label>
      <label>${esc(t("attribute"))} <select name="attribute" id="st-attribute">${["physical", "social", "mental"].map((a) => `<option value="${a}">${esc(t(a))}</option>`).join("")}</select></label>
      <label>${esc(t("st_abilities"))} <input name="abilities" id="st-abilities" placeholder="${esc(t("st_abilities_hint"))}" data-testid="st-abilities"></label>
      <label>${esc(t("difficulty"))} <input name="difficulty" type="number" min="0" max="30" value="5" id="st-difficulty"></label>
      <label>${esc(t("tests"))} <input name="tests" type="number" min="1" max="5" value="1" id="st-tests"></label>
      <button type="submit" data-testid="st-challenge-start">${esc(t("start"))}</button>
    </form></details>`;
}

function stCharacter(c, ruleset) {
  const hunger = ruleset === "v5" ? `<form data-act="set_hunger" data-character="${esc(c.id)}" class="row">
      <label>${esc(t("hunger"))} <input name="hunger" id="hunger-${esc(c.id)}" type="number" min="0" max="5" value="${esc(app.vm.hunger[c.id] ?? c.sheet?.hunger ?? 0)}"></label>
      <button type="submit">${esc(t("set_hunger"))}</button></form>` : "";
  const modifier = ruleset === "action" ? `<form data-act="apply_modifier" data-character="${esc(c.id)}" class="row">
      <label>${esc(t("modifier"))} <input name="value" id="mod-${esc(c.id)}" type="number" min="-5" max="5" value="-1"></label>
      <label>${esc(t("duration"))} <input name="duration" id="dur-${esc(c.id)}" type="number" min="1" value="2"></label>
      <button type="submit">${esc(t("apply_modifier"))}</button></form>` : "";
  return `<div class="char-row"><b>${esc(c.name)}</b> ${c.scene ? `· ${esc(app.vm.scenes[c.scene]?.name || c.scene)}` : ""}${c.outOfGame ? ` · ${esc(t("out_of_game"))}` : ""}
    ${hunger}${modifier}</div>`;
}

// A sentence when narrate.js knows the event, else its type and fields (a newer server).
// A storyteller receives every roll whole: the badge says who else saw it.
function logLine(l, tell) {
  const said = tell(l.event);
  const vis = l.event && l.event.visibility;
  const badge = vis ? ` <span class="badge vis-${esc(vis)}" aria-label="${esc(`${t("visibility")}: ${t(`vis_${vis}`)}`)}">${esc(t(`vis_${vis}`))}</span>` : "";
  return `<li value="${l.seq}" title="${esc(l.type)}" data-type="${esc(l.type)}"${vis ? ` data-visibility="${esc(vis)}"` : ""}>${said ? esc(said) : `<code>${esc(l.type)}</code> ${esc(summary(l.event))}`}${badge}</li>`;
}

function summary(e) {
  return Object.entries(e).filter(([k, v]) => k !== "type" && k !== "draws" && v !== null && v !== "" && typeof v !== "object")
    .map(([k, v]) => `${k}=${v}`).join(" ");
}

// ---- dice for a character (V5, ACT)
//
// The storyteller rolls after the chosen character's sheet. Who sees it: everyone
// (open), the character and the storytellers (secret), or the storytellers alone
// (blind: a player who must not know the result, check_visibility in events/v5.py).
// The forms carry the same data-act as the phone's, with data-character naming the
// roller, so the commands have the player's shape (app.js commandFor).

const VISIBILITIES = ["open", "secret", "blind"];

function dicePlayers(chars) {
  return chars.filter((c) => c.sheet && (c.sheet.kind === "v5" || c.sheet.kind === "action"));
}

function stRollerCharacter(chars) {
  const rollers = dicePlayers(chars);
  return rollers.find((o) => o.id === app.form["st-roll-char"]) || rollers[0];
}

// The roll the dice card shows (its character's last): the list below leaves it out, so
// a storyteller's Rouse check is not shown twice.
function stRollerShown(chars) {
  const c = stRollerCharacter(chars);
  const last = c && app.vm.rolls.filter((r) => r.character === c.id).pop();
  return last ? last.id : null;
}

function stRoller(chars) {
  const rollers = dicePlayers(chars);
  if (!rollers.length) return "";
  const c = stRollerCharacter(chars);
  const vis = VISIBILITIES.includes(app.form["st-vis"]) ? app.form["st-vis"] : "open";
  const hidden = `<input type="hidden" name="visibility" value="${vis}">`;
  return `<section class="card dice st-dice" aria-labelledby="h-st-dice" data-testid="st-dice" data-character="${esc(c.id)}" data-visibility="${vis}">
    <h2 id="h-st-dice">${esc(t("st_dice"))}</h2>
    <div class="row wrap">
      <label>${esc(t("character"))} <select id="st-roll-char" data-form="st-roll-char" data-testid="st-roll-character">${rollers.map((o) =>
        `<option value="${esc(o.id)}" ${o.id === c.id ? "selected" : ""}>${esc(o.name)}</option>`).join("")}</select></label>
    </div>
    <fieldset class="vis-choice" data-testid="st-visibility"><legend>${esc(t("visibility"))}</legend>
      ${VISIBILITIES.map((v) => `<label class="vis-${v}"><input type="radio" name="st-visibility" id="st-vis-${v}" value="${v}" data-form="st-vis" data-testid="st-vis-${v}" ${v === vis ? "checked" : ""}>
        <span>${esc(t(`vis_${v}`))}</span></label>`).join("")}
    </fieldset>
    <p class="muted vis-help" data-testid="st-vis-help">${esc(t(`vis_${vis}_help`, c.name))}</p>
    ${c.sheet.kind === "v5" ? v5Form(c, hidden) : actionForm(c, hidden)}
    ${rollsView(app.vm.rolls.filter((r) => r.character === c.id).slice(-1))}
  </section>`;
}

function v5Form(c, hidden) {
  const sheet = c.sheet;
  const key = (k) => `st-${k}-${c.id}`;
  const option = (name, k) => `<option ${app.form[key(k)] === name ? "selected" : ""}>${esc(name)}</option>`;
  const last = app.vm.rolls.filter((r) => r.character === c.id && r.kind === "v5" && !r.hidden).pop();
  const id = esc(c.id);
  return `<form data-act="roll_pool" data-character="${id}" class="row wrap">
      <label>${esc(t("attribute"))} <select id="${key("attr")}" name="attribute">${Object.keys(sheet.attributes || {}).map((a) => option(a, "attr")).join("")}</select></label>
      <label>${esc(t("skill"))} <select id="${key("skill")}" name="skill"><option value="">${esc(t("none"))}</option>${Object.keys(sheet.skills || {}).map((a) => option(a, "skill")).join("")}</select></label>
      <label>${esc(t("difficulty"))} <input id="${key("diff")}" name="difficulty" type="number" min="0" max="15" value="${esc(app.form[key("diff")] ?? 2)}"></label>
      ${hidden}
      <button type="submit" class="primary" data-testid="st-roll" aria-label="${esc(t("roll_for", c.name))}">${esc(t("roll"))}</button>
    </form>
    <div class="row wrap">
      <form data-act="rouse" data-character="${id}">${hidden}
        <button type="submit" data-testid="st-rouse" aria-label="${esc(`${t("rouse")} · ${c.name}`)}">${esc(t("rouse"))}</button></form>
      ${last && !last.rerolled && last.normal.some((f) => f < 6) ? `<form data-act="willpower" data-character="${id}" data-roll="${esc(last.id)}" class="row wrap reroll">
        <select name="strategy" id="${key("wp")}" aria-label="${esc(t("willpower"))}">${["reroll_failures", "maximise_criticals", "avoid_messy"].map((k) => `<option value="${k}">${esc(t(k))}</option>`).join("")}</select>
        <button type="submit" data-testid="st-willpower">${esc(t("willpower"))}</button></form>` : ""}
    </div>`;
}

// ACT-12 from the tablet: against another character of the session (any scene: the
// storyteller places people), the roll waits for that character's answer and has no
// difficulty; blind, only a storyteller can answer it (Roll for, in the waiting list).
function opponents(c) {
  return Object.values(app.vm.characters).filter((o) => o.id !== c.id && !(o.id in app.vm.dead) && o.sheet && o.sheet.kind === "action");
}

function actionForm(c, hidden) {
  const key = (k) => `st-${k}-${c.id}`;
  const field = (k, name, label, value, max) => `<label>${esc(t(label))} <input id="${key(k)}" name="${name}" type="number" min="0" max="${max}" value="${esc(app.form[key(k)] ?? value)}"></label>`;
  const others = opponents(c);
  const against = others.some((o) => o.id === app.form[key("against")]) ? app.form[key("against")] : "";
  return `<form data-act="roll_action" data-character="${esc(c.id)}" class="row wrap">
      <label>${esc(t("characteristic"))} <select name="characteristic" id="${key("carac")}">${Object.keys(c.sheet.characteristics || {}).map((k) =>
        `<option ${app.form[key("carac")] === k ? "selected" : ""}>${esc(k)}</option>`).join("")}</select></label>
      ${others.length ? `<label>${esc(t("against"))} <select name="opponent" id="${key("against")}" data-form="${key("against")}" data-testid="st-against">
        <option value="">${esc(t("against_env"))}</option>${others.map((o) => `<option value="${esc(o.id)}" ${o.id === against ? "selected" : ""}>${esc(o.name)}</option>`).join("")}</select></label>` : ""}
      ${against ? "" : field("diff", "difficulty", "difficulty", 2, 10)}${field("bonus", "bonus", "bonus", 0, 10)}${field("malus", "malus", "malus", 0, 10)}
      <label>${esc(t("option"))} <select name="option" id="${key("opt")}">${["none", "surpass", "sacrifice"].map((o) => `<option value="${o}">${esc(t(`opt_${o}`))}</option>`).join("")}</select></label>
      <label class="check"><input type="checkbox" name="expertise" id="${key("exp")}"> ${esc(t("expertise"))}</label>
      ${hidden}
      <button type="submit" class="primary" data-testid="st-roll" aria-label="${esc(against ? t("st_roll_against", c.name, nameOf(against)) : t("roll_for", c.name))}">${esc(against ? t("roll_against", nameOf(against)) : t("roll"))}</button>
    </form>`;
}

// The player's phone: the character, its pending challenges with the next move, dice.

import { rulesetOf, bidBounds, attributeOf, abilitiesOf, isOpen } from "./fold.js";
import { teller } from "./narrate.js";
import { app, t, lang, esc, me, nameOf, THROWS, ICON, stageText, revealedLine, rollsView } from "./ui.js";
import { checkRolls } from "./verify.js";
import { handAnswerCards, handSection } from "./handplay.js";
import { isClosed, closedBanner } from "./closed.js";
import { deskNewsView, callView, windowClock } from "./desk.js";

const num = (v) => Number.parseInt(v, 10);

// a group challenge's record is shown through its pairs, each a challenge of two sides
export function myChallenges() {
  return Object.values(app.vm.challenges).filter((c) => isOpen(c) && !c.defenders.length && [c.initiator, c.defender].includes(me()));
}

// MET-1, MET-2: the groups this phone's character initiates that wait for its one throw,
// against every defender throwing at that round: [group, round, pairs]
function groupThrows() {
  const id = me();
  const out = [];
  for (const g of Object.values(app.vm.challenges)) {
    if (!g.defenders.length || g.initiator !== id || !isOpen(g)) continue;
    const waiting = g.pairs.map((p) => app.vm.challenges[p]).filter((p) => p && p.status === "throwing" && !(id in p.throws));
    const round = waiting.length ? Math.min(...waiting.map((p) => p.round)) : null;
    if (round == null || app.queued.some((e) => e.command.challenge === g.id && e.command.round === round)) continue;
    out.push([g, round, waiting.filter((p) => p.round === round)]);
  }
  return out;
}

function groupThrowCard([g, round, pairs]) {
  const choices = THROWS.concat(app.vm.session.options && app.vm.session.options.bomb && app.vm.characters[me()]?.sheet?.bomb ? ["bomb"] : []);
  const against = pairs.map((p) => nameOf(p.defender)).join(", ");
  return `<article class="challenge group-throw" data-testid="group-throw" data-challenge="${esc(g.id)}" data-round="${round}">
    <h3>${esc(t("group_throw", against, round))}</h3>
    <p class="muted">${esc(t("group_throw_help"))}</p>
    <div class="throws" role="group" aria-label="${esc(t("your_throw"))}">${choices.map((ch) =>
      `<button class="throw" data-act="throw" data-ch="${esc(g.id)}" data-round="${round}" data-choice="${ch}" data-testid="throw-${ch}"
        aria-label="${esc(t("throw_label", t(ch)))}"><span aria-hidden="true">${ICON[ch]}</span>${esc(t(ch))}</button>`).join("")}</div>
  </article>`;
}

// "Group challenge c1: Anna against Bruno, Clara, Dora" on each pair's card
function groupLine(c) {
  const g = c.group && app.vm.challenges[c.group];
  if (!g) return "";
  return `<p class="group-of" data-testid="group-of">${esc(t("group_of", g.id, nameOf(g.initiator), g.defenders.map(nameOf).join(", ")))}</p>`;
}

// the pairs of ``c``'s group (``c`` alone outside a group): MET-12, MET-14 count over the whole group
function wholeOf(c) {
  const g = c.group && app.vm.challenges[c.group];
  return g ? g.pairs.map((p) => app.vm.challenges[p]).filter(Boolean) : [c];
}

// What this player may do now in a challenge, or null.
export function myMove(c) {
  const id = me();
  const queuedFor = app.queued.some((e) => (e.command.challenge === c.id || (c.group && e.command.challenge === c.group))
    && e.command.round === c.round && e.command.character === id);
  if (queuedFor) return null;
  // a group's initiator throws once for every pair of the round (groupThrowCard)
  if (c.status === "throwing" && !(id in c.throws)) return c.group && id === c.initiator ? "group_throw" : "throw";
  if (c.status === "bidding") {
    const bidders = c.kind === "static" ? [c.tested] : [c.initiator, c.defender];
    // MET-3: the initiator declares first; the defender's entry opens after it
    const first = c.kind === "classic" && id === c.defender && !(c.initiator in c.bids);
    if (bidders.includes(id) && !(id in c.bids) && !first) return "bid";
  }
  if (c.status === "window" && c.loser === id) return "window";
  if (c.status === "overbid" && c.winner === id && !(id in c.bids)) return "answer";
  return null;
}

export function playerView() {
  const c = app.vm.characters[me()] || { name: me(), sheet: null };
  if (isClosed()) return closedPlayerView(c);
  const ruleset = rulesetOf(app.vm, me());
  return `<main class="player">
    ${deskNewsView()}
    ${handAnswerCards()}
    ${ruleset === "action" ? opposedCalls(c) : ""}
    ${characterCard(c)}
    ${ruleset !== "met" ? "" : `<section aria-labelledby="h-ch" class="card"><h2 id="h-ch">${esc(t("challenges"))}</h2>
      ${groupThrows().map(groupThrowCard).join("")}
      ${myChallenges().map(challengeCard).join("") || `<p class="muted">${esc(t("no_challenges"))}</p>`}
      ${newChallengeForm(c)}
    </section>${handSection(c)}`}
    ${ruleset === "v5" ? v5Roller(c) : ""}
    ${ruleset === "action" ? opposedView() + pendingView() + actionRoller(c) : ""}
    ${diceCheckView()}
    ${rollsView(app.vm.rolls.filter((r) => r.character === me()))}
    ${callView()}
    ${feedView()}
  </main>`;
}

// A closed session: read only (closed.js). The character without its out-of-game button,
// the dice check, the rolls and the feed; nothing the server would refuse.
function closedPlayerView(c) {
  const check = diceCheckView();
  return `<main class="player closed">
    ${closedBanner(!!check)}
    ${characterCard(c, false)}
    ${check}
    ${rollsView(app.vm.rolls.filter((r) => r.character === me()))}
    ${feedView()}
  </main>`;
}

// FAIR-2 on the phone: once the session is closed and its seed revealed, the
// phone derives its own character's dice again (verify.js) and marks each roll verified or
// names the first mismatch. Worked out once per head, not once per render.
let checked = { vm: null, head: -1, html: "" };

function sayCheck(key, fields = {}) {
  // a throw's mismatch names rock, paper, scissors in the phone's language
  const said = key === "throw" ? { ...fields, shown: t(fields.shown), drawn: t(fields.drawn) } : fields;
  return t(`check_${key}`).replace(/\{(\w+)\}/g, (_, k) => String(said[k]));
}

function diceCheckView() {
  const vm = app.vm;
  if (vm.session.status !== "closed" || !vm.session.seed || !me()) return "";
  if (checked.vm === vm && checked.head === vm.head) return checked.html;
  const rolls = vm.rolls.filter((r) => r.character === me() && (r.draws || []).length);
  // MET-2: the throws a storyteller let the server draw for this character (fold.js)
  const throws = (vm.drawnThrows || []).filter((r) => r.character === me());
  const mine = rolls.concat(throws);
  if (!mine.length) return "";
  const out = checkRolls(vm, app.session, mine, sayCheck);
  for (const r of mine) {
    const mismatch = out.results.get(r);
    r.check = !out.seedOk ? { ok: false, message: out.message } : mismatch ? { ok: false, message: mismatch } : { ok: true };
  }
  const bad = mine.filter((r) => !r.check.ok);
  const lines = !out.seedOk ? [`<li>${esc(out.message)}</li>`]
    : bad.map((r) => `<li data-roll="${esc(r.id)}">${esc(r.kind === "throw" ? throwName(r) : r.label || r.id)}: ${esc(r.check.message)}</li>`);
  const what = t(throws.length ? (rolls.length ? "check_n_both" : "check_n_throws") : "check_n_rolls");
  const html = `<section class="card dice-check ${bad.length || !out.seedOk ? "ko" : "ok"}" data-testid="dice-check" data-ok="${!bad.length && out.seedOk}"
    data-verified="${mine.length - bad.length}" data-mismatches="${bad.length}" aria-labelledby="h-check">
    <h2 id="h-check">${esc(t("check_title"))}</h2>
    <p>${esc(bad.length || !out.seedOk ? t("check_bad", bad.length, mine.length, what) : t("check_ok", mine.length, what))}</p>
    ${lines.length ? `<ul class="mismatches" data-testid="dice-mismatches">${lines.join("")}</ul>` : ""}
    ${throwChecks(throws)}</section>`;
  checked = { vm, head: vm.head, html };
  return html;
}

// "Anna ⟷ Bruno, round 2": a player knows a challenge by who is in it, not by its id.
function throwName(r) {
  const c = app.vm.challenges[r.challenge];
  return t("check_throw_name", c ? `${nameOf(c.initiator)} ⟷ ${nameOf(c.defender)}` : r.challenge, r.round, t(r.choice));
}

// The drawn throws have no dice card of their own (their challenge card goes when it ends):
// each is marked here, verified or with its mismatch.
function throwChecks(throws) {
  if (!throws.length) return "";
  return `<ul class="throw-checks" data-testid="throw-checks">${throws.map((r) => `<li data-testid="throw-check" data-roll="${esc(r.id)}"
    data-challenge="${esc(r.challenge)}" data-round="${esc(r.round)}" data-ok="${r.check.ok}">${esc(throwName(r))}${r.check.ok
      ? ` <span class="badge verified" data-testid="roll-verified">✓ ${esc(t("check_verified"))}</span>`
      : `<p class="mismatch" data-testid="roll-mismatch">${esc(r.check.message)}</p>`}</li>`).join("")}</ul>`;
}

function characterCard(c, acts = true) {
  const s = c.sheet;
  let traits = "";
  if (s && s.kind === "met") {
    traits = ["physical", "social", "mental"].map((a) => `<span class="trait"><b>${s[a] ?? 0}</b> ${esc(t(a))}</span>`).join("") +
      Object.entries(s.abilities || {}).map(([k, v]) => `<span class="trait small">${esc(k)} ${v}</span>`).join("") +
      (s.merits || []).map((m) => `<span class="trait small">${esc(m)}</span>`).join("") +
      // the powers a retest may name (MET-12) are on the card the player reads them from
      (s.powers || []).map((p) => `<span class="trait small power" data-testid="power">${esc(p)}</span>`).join("");
  } else if (s && s.kind === "v5") {
    const hunger = app.vm.hunger[c.id] ?? s.hunger ?? 0;
    traits = `<span class="trait"><b>${hunger}</b> ${esc(t("hunger"))}</span><span class="trait"><b>${s.willpower ?? 0}</b> ${esc(t("willpower_stat"))}</span>` +
      Object.entries(s.attributes || {}).concat(Object.entries(s.skills || {})).map(([k, v]) => `<span class="trait"><b>${v}</b> ${esc(k)}</span>`).join("");
  } else if (s && s.kind === "action") {
    traits = Object.entries(s.characteristics || {}).map(([k, v]) => `<span class="trait"><b>${v}+</b> ${esc(k)}</span>`).join("");
  }
  const sc = c.scene && app.vm.scenes[c.scene];
  return `<section class="card character" aria-label="${esc(t("character"))}">
    <h1>${esc(c.name || "")}</h1>
    <p class="scene">${esc(sc ? sc.name : t("no_scene"))}${c.outOfGame ? ` · ${esc(t("out_of_game"))}` : ""}</p>
    <div class="traits">${traits}</div>
    ${!acts ? "" : c.outOfGame
      ? `<button class="primary" data-act="back_in_game" data-testid="back-in-game">${esc(t("back_in_game"))}</button>`
      : `<button class="secondary" data-act="out_of_game" data-testid="out-of-game">${esc(t("out_of_game"))}</button>`}
  </section>`;
}

function challengeCard(c) {
  const id = me();
  const other = c.initiator === id ? c.defender : c.initiator;
  const move = myMove(c);
  const attr = attributeOf(c, id);
  let body = "";
  if (move === "throw") {
    const choices = THROWS.concat(app.vm.session.options && app.vm.session.options.bomb && app.vm.characters[id]?.sheet?.bomb ? ["bomb"] : []);
    body = `<div class="throws" role="group" aria-label="${esc(t("your_throw"))}">${choices.map((ch) =>
      `<button class="throw" data-act="throw" data-ch="${esc(c.id)}" data-choice="${ch}" data-testid="throw-${ch}"
        aria-label="${esc(t("throw_label", t(ch)))}"><span aria-hidden="true">${ICON[ch]}</span>${esc(t(ch))}</button>`).join("")}</div>`;
    body += otherThrown(c, other);
    if (!(c.kind === "static" && c.defender === id)) body += concedeButton(c);
  } else if (move === "bid" || move === "answer") {
    const bounds = bidBounds(app.vm.characters[id]?.sheet, attr, abilitiesOf(c, id).concat(ticked(c, id)));
    const key = `bid-${c.id}-${c.round}`;
    body = `<form class="bid" data-act="${move === "bid" ? "bid" : "answer"}" data-ch="${esc(c.id)}">
      <label for="${key}">${esc(t("bid_label", bounds.max))}</label>
      <div class="row"><input id="${key}" name="value" type="number" inputmode="numeric" min="${bounds.min}" max="${bounds.max}"
        value="${esc(app.form[key] ?? bounds.max)}" required data-testid="bid-input">
      <button type="submit" data-testid="bid-send">${esc(t("send_bid"))}</button></div>${ownAbilityChoices(c, id)}</form>`;
    if (move === "bid") body += concedeButton(c);
  } else if (move === "window") {
    body = windowPrompts(c);
  } else if (move === "group_throw") {
    body = `<p class="muted">${esc(t("group_throw_above"))}</p>`;
  } else if (queuedMove(c)) {
    const q = queuedMove(c);
    body = `<p class="queued-move">${esc(t(q.command.type === "throw" ? "your_throw" : q.command.type))}: ${esc(q.command.choice ? t(q.command.choice) : q.command.value ?? "")}
      <span class="badge">${esc(t("queued"))}</span></p>`;
  } else {
    body = `<p class="muted">${esc(t("waiting_others"))}</p>`;
  }
  return `<article class="challenge" data-testid="challenge" data-challenge="${esc(c.id)}" data-status="${esc(c.status)}">
    <h3>${esc(nameOf(c.initiator))} ⟷ ${esc(nameOf(c.defender))}</h3>
    ${groupLine(c)}
    <p class="meta"><span class="stage" data-testid="stage">${esc(stageText(c, queuedMove(c) ? null : id))}</span> · ${esc(t("round"))} ${c.round}${attr ? ` · ${esc(t(attr))}` : ""}${c.kind !== "classic" ? ` · ${esc(t(c.kind))}` : ""}${c.kind === "static" ? ` · ${esc(t("difficulty"))} ${c.difficulty}` : ""}${c.mutual ? ` · ${esc(t("mutual"))}` : ""}</p>
    ${testsLine(c)}
    ${revealedLine(c)}
    ${cancelRetestForm(c)}
    ${windowClock(c, move === "window" || move === "answer")}
    ${body}
  </article>`;
}

// MET-10/11: successive tests, all to be won; each test's result as it came.
function testsLine(c) {
  if (!(c.tests > 1)) return "";
  const marks = [];
  for (let i = 1; i <= c.tests; i += 1) {
    const r = c.results[i];
    const mark = r === true ? "✓" : r === false ? "✗" : i === c.test && c.status !== "resolved" ? "…" : "·";
    marks.push(`<span class="test-mark ${r === true ? "ok" : r === false ? "ko" : ""}" aria-label="${esc(t("test_n", i))} ${esc(r === true ? t("success") : r === false ? t("failure") : "")}">${mark}</span>`);
  }
  return `<p class="tests" data-testid="tests"><span data-testid="test-of">${esc(t("test_of", c.test, c.tests))}</span> ${marks.join(" ")}</p>`;
}

// The retest-cancel option (MET-12, a chronicle option): the opponent who retested can
// be answered with one's own retest, cancelling it, until the new round's first throw.
function cancelRetestForm(c) {
  const id = me();
  if (!c.cancellable || c.cancellable === id || c.status !== "throwing" || Object.keys(c.throws).length || retestsLeft(c) <= 0) return "";
  if (!app.vm.session.options || !app.vm.session.options.retest_cancel) return "";
  const sources = retestSources();
  if (!sources.length) return "";
  return `<form class="retest-cancel" data-act="retest_cancel" data-ch="${esc(c.id)}">
    <label for="rc-${esc(c.id)}">${esc(t("retest_cancel", nameOf(c.cancellable)))}</label>
    <div class="row"><select id="rc-${esc(c.id)}" name="source">${sources.map((s) => `<option>${esc(s)}</option>`).join("")}</select>
    <button type="submit" data-testid="retest-cancel">${esc(t("retest_cancel_button"))}</button></div></form>`;
}

// MET-12: one retest per challenge (two on a static one with the Lucky merit); a retest
// spent to cancel the opponent's counts too. Used up, the form goes.
function retestsLeft(c) {
  const sheet = app.vm.characters[me()]?.sheet || {};
  const lucky = (sheet.merits || []).some((m) => String(m).toLowerCase() === "lucky");
  return (lucky && c.kind === "static" ? 2 : 1) - wholeOf(c).reduce((n, p) => n + ((p.retests || {})[me()] || 0), 0);
}

function retestSources() {
  const sheet = app.vm.characters[me()]?.sheet || {};
  return [...Object.keys(sheet.abilities || {}), ...(sheet.merits || []), ...(sheet.powers || [])];
}

// MET-3: a side bids its own abilities that apply; the challenge names only the initiator's,
// so the others of this phone's sheet are offered with the bid (the server checks them).
function ownAbilities(c, id) {
  const named = abilitiesOf(c, id);
  return Object.keys(app.vm.characters[id]?.sheet?.abilities || {}).filter((k) => !named.includes(k));
}

// data-form keeps a ticked box through re-renders; the bid's bound follows what is ticked
const ownKey = (c, k) => `own-${c.id}-${c.round}-${c.status}-${k}`;
const ticked = (c, id) => ownAbilities(c, id).filter((k) => app.form[ownKey(c, k)]);

function ownAbilityChoices(c, id) {
  const own = ownAbilities(c, id);
  if (!own.length) return "";
  const sheet = app.vm.characters[id].sheet;
  const key = (k) => ownKey(c, k);
  return `<fieldset class="own-abilities"><legend>${esc(t("own_abilities"))}</legend>${own.map((k) =>
    `<label class="check"><input type="checkbox" name="ability" value="${esc(k)}" data-form="${esc(key(k))}"
      ${app.form[key(k)] ? "checked" : ""} data-testid="bid-ability-${esc(k)}"> ${esc(k)} ${sheet.abilities[k]}</label>`).join("")}</fieldset>`;
}

// The other side has thrown (its throw sealed until both are in): this side is awaited.
function otherThrown(c, other) {
  if (!other || !(other in c.throws)) return "";
  return `<p class="other-thrown" data-testid="other-thrown"><span aria-hidden="true">✔</span> ${esc(t("other_thrown", nameOf(other)))}</p>`;
}

function queuedMove(c) {
  return app.queued.find((e) => e.command.challenge === c.id && e.command.character === me());
}

function concedeButton(c) {
  return `<button class="secondary" data-act="concede" data-ch="${esc(c.id)}">${esc(t("concede"))}</button>`;
}

function windowPrompts(c) {
  const id = me();
  const sheet = app.vm.characters[id]?.sheet || {};
  const sources = retestsLeft(c) > 0 ? retestSources() : [];
  const canOverbid = c.kind === "classic" && c.by === "throw" && !wholeOf(c).some((p) => p.overbids.includes(id));
  const bounds = bidBounds(sheet, attributeOf(c, id), abilitiesOf(c, id).concat(ticked(c, id)));
  const key = `ob-${c.id}-${c.round}`;
  return `<div class="window">
    ${sources.length ? `<form class="retest" data-act="retest" data-ch="${esc(c.id)}">
      <label for="src-${esc(c.id)}">${esc(t("retest_source"))}</label>
      <div class="row"><select id="src-${esc(c.id)}" name="source">${sources.map((s) => `<option>${esc(s)}</option>`).join("")}</select>
      <button type="submit" data-testid="retest">${esc(t("retest"))}</button></div></form>` : ""}
    ${canOverbid ? `<form class="overbid" data-act="overbid" data-ch="${esc(c.id)}">
      <label for="${key}">${esc(t("overbid_label"))}</label>
      <div class="row"><input id="${key}" name="value" type="number" inputmode="numeric" min="0" max="${bounds.max}" value="${esc(app.form[key] ?? bounds.max)}" required>
      <button type="submit" data-testid="overbid">${esc(t("overbid"))}</button></div>${ownAbilityChoices(c, id)}</form>` : ""}
    <button class="primary" data-act="accept" data-ch="${esc(c.id)}" data-testid="accept">${esc(t("accept"))}</button>
  </div>`;
}

function newChallengeForm(c) {
  const others = Object.values(app.vm.characters).filter((o) => o.id !== c.id && (!c.scene || o.scene === c.scene));
  // MET-11: simple and complex tests are against the storyteller, no opponent needed
  const kind = app.form["nc-kind"] || (others.length ? "classic" : "simple");
  return `<details class="new-challenge" id="new-challenge"><summary>${esc(t("challenge_new"))}</summary>
    <form data-act="challenge">
      <label>${esc(t("kind"))} <select name="kind" data-form="nc-kind" data-testid="nc-kind" aria-label="${esc(t("kind"))}">${["classic", "simple", "complex"].map((k) => `<option value="${k}" ${k === kind ? "selected" : ""}>${esc(t(k))}</option>`).join("")}</select></label>
      ${kind === "classic" ? `
      <label>${esc(t("opponent"))} <select name="defender" id="nc-defender">${others.map((o) => `<option value="${esc(o.id)}">${esc(o.name)}</option>`).join("")}</select></label>
      ${others.length > 1 ? `<fieldset class="more-defenders"><legend>${esc(t("group_more"))}</legend>${others.map((o) =>
        `<label class="check"><input type="checkbox" name="more" value="${esc(o.id)}" data-testid="nc-more-${esc(o.id)}"> ${esc(o.name)}</label>`).join("")}</fieldset>` : ""}
      <label>${esc(t("attribute"))} <select name="attribute" id="nc-attribute">${["physical", "social", "mental"].map((a) => `<option value="${a}">${esc(t(a))}</option>`).join("")}</select></label>
      ${Object.keys((c.sheet && c.sheet.abilities) || {}).length ? `<fieldset class="abilities"><legend>${esc(t("abilities"))}</legend>${Object.entries(c.sheet.abilities).map(([a, n]) =>
        `<label class="check"><input type="checkbox" name="abilities" value="${esc(a)}" id="nc-ab-${esc(a)}"> ${esc(a)} (${n})</label>`).join("")}</fieldset>` : ""}
      <label class="check"><input type="checkbox" name="mutual" id="nc-mutual" data-testid="mutual"> ${esc(t("mutual_help"))}</label>`
      : `<label>${esc(t("tests"))} <input name="tests" id="nc-tests" type="number" min="1" max="5" value="1" data-testid="tests-input"></label>`}
      <button type="submit" data-testid="challenge-start">${esc(t("start"))}</button>
    </form></details>`;
}

// ---- dice

// A secret roll is seen whole by its roller and the storytellers only (V5, ACT);
// blind rolls are the storytellers' own.
function visibilitySelect(id) {
  return `<label>${esc(t("visibility"))} <select name="visibility" id="${id}" data-testid="visibility">${["open", "secret"].map((v) =>
    `<option value="${v}">${esc(t(`vis_${v}`))}</option>`).join("")}</select></label>`;
}

function v5Roller(c) {
  const rolls = app.vm.rolls.filter((r) => r.character === me() && r.kind === "v5");
  const last = rolls[rolls.length - 1];
  const sheet = c.sheet || {};
  const option = (name, key) => `<option ${app.form[key] === name ? "selected" : ""}>${esc(name)}</option>`;
  return `<section class="card dice" aria-labelledby="h-dice"><h2 id="h-dice">${esc(t("dice"))}</h2>
    <form data-act="roll_pool" class="row wrap">
      <label>${esc(t("attribute"))} <select id="v5attr" name="attribute">${Object.keys(sheet.attributes || {}).map((a) => option(a, "v5attr")).join("")}</select></label>
      <label>${esc(t("skill"))} <select id="v5skill" name="skill"><option value="">${esc(t("none"))}</option>${Object.keys(sheet.skills || {}).map((a) => option(a, "v5skill")).join("")}</select></label>
      <label>${esc(t("difficulty"))} <input id="v5diff" name="difficulty" type="number" min="0" max="15" value="${esc(app.form.v5diff ?? 2)}"></label>
      ${visibilitySelect("v5vis")}
      <button type="submit" class="primary" data-testid="roll">${esc(t("roll"))}</button>
    </form>
    <div class="row wrap">
      <button data-act="rouse" data-testid="rouse">${esc(t("rouse"))}</button>
      ${last && !last.rerolled && last.normal.some((f) => f < 6) ? `<form data-act="willpower" data-roll="${esc(last.id)}" class="row wrap reroll">
        <select name="strategy" id="wp-strategy" aria-label="${esc(t("willpower"))}">${["reroll_failures", "maximise_criticals", "avoid_messy"].map((k) => `<option value="${k}">${esc(t(k))}</option>`).join("")}</select>
        <button type="submit" data-testid="willpower">${esc(t("willpower"))}</button></form>` : ""}
    </div></section>`;
}

// The action dice (ACT): the roller, against the Environment (a difficulty) or against
// another character (ACT-12); the calls to answer; the actions that last several turns.

function otherCharacters(c) {
  return Object.values(app.vm.characters).filter((o) => o.id !== c.id && !(o.id in app.vm.dead)
    && (!c.scene || o.scene === c.scene));
}

function characteristicSelect(c, id, chosen) {
  const names = Object.keys((c.sheet && c.sheet.characteristics) || {});
  const pick = app.form[id] ?? names.find((k) => k.toLowerCase() === String(chosen || "").toLowerCase());
  return `<label>${esc(t("characteristic"))} <select name="characteristic" id="${esc(id)}">${names.map((k) =>
    `<option ${k === pick ? "selected" : ""}>${esc(k)}</option>`).join("")}</select></label>`;
}

// ACT-3: a player names the Expertise from the sheet that fits the action exactly.
function expertiseSelect(c, id) {
  const names = (c.sheet && c.sheet.expertises) || [];
  if (!names.length) return "";
  return `<label>${esc(t("expertise"))} <select name="expertise" id="${esc(id)}"><option value="">${esc(t("none"))}</option>${names.map((k) =>
    `<option ${app.form[id] === k ? "selected" : ""}>${esc(k)}</option>`).join("")}</select></label>`;
}

const queuedFor = (field, id) => app.queued.some((e) => e.command.type === "roll_action" && e.command[field] === id);

// ACT-12: the opposed rolls that wait for this character's answer.
export function callsForMe() {
  return Object.values(app.vm.waiting).filter((w) => w.opponent === me());
}

function opposedCalls(c) {
  return callsForMe().map((w) => {
    const key = `ans-${w.id}`;
    const sent = queuedFor("against", w.id);
    return `<section class="card opposed-call" data-testid="opposed-call" data-roll="${esc(w.id)}" aria-labelledby="h-${key}">
      <h2 id="h-${key}">${esc(t("opposed_title"))}</h2>
      <p class="call">${esc(t("opposed_call", nameOf(w.character), w.characteristic))}</p>
      ${sent ? `<p class="queued-move">${esc(t("opposed_sent"))} <span class="badge">${esc(t("queued"))}</span></p>`
        : `<form data-act="act_answer" data-roll="${esc(w.id)}" class="row wrap">
        ${characteristicSelect(c, `${key}-carac`, w.characteristic)}${expertiseSelect(c, `${key}-exp`)}
        <button type="submit" class="primary big" data-testid="opposed-answer">${esc(t("opposed_answer"))}</button>
        ${answerMore(key)}</form>`}
    </section>`;
  }).join("");
}

// ACT-5, ACT-8 on an answer: folded away, so the card stays a one-tap answer.
function answerMore(key) {
  return `<details class="more" id="${esc(key)}-more" data-testid="opposed-more"><summary>${esc(t("more"))}</summary>
    <div class="row wrap">${plusMinusFields(`${key}-`)}${optionSelect(`${key}-opt`)}</div></details>`;
}

function numberField(id, name, label, value, min, max) {
  return `<label>${esc(t(label))} <input id="${esc(id)}" name="${name}" type="number" inputmode="numeric" min="${min}" max="${max}" value="${esc(app.form[id] ?? value)}"></label>`;
}

// ACT-5: the declared bonus and malus; ``prefix`` keeps each form's ids apart.
function plusMinusFields(prefix) {
  return numberField(`${prefix}bonus`, "bonus", "bonus", 0, 0, 10) + numberField(`${prefix}malus`, "malus", "malus", 0, 0, 10);
}

// ACT-8: one field, so the options are exclusive.
function optionSelect(id) {
  return `<label>${esc(t("option"))} <select name="option" id="${esc(id)}">${["none", "surpass", "sacrifice"].map((o) =>
    `<option value="${o}" ${app.form[id] === o ? "selected" : ""}>${esc(t(`opt_${o}`))}</option>`).join("")}</select></label>`;
}

// ACT-12: the opposed rolls this character made or answered: waiting, then the last settled.
function opposedView() {
  const id = me();
  const sent = Object.values(app.vm.waiting).filter((w) => w.character === id).map((w) =>
    `<p class="muted" data-testid="opposed-sent" data-roll="${esc(w.id)}">${esc(t("opposed_waits", nameOf(w.opponent)))}</p>`);
  const settled = app.vm.oppositions.filter((o) => o.initiator === id || o.defender === id).slice(-3).reverse().map((o) =>
    `<article class="roll ${!o.winner ? "" : o.winner === id ? "ok" : "ko"}" data-testid="opposed-result" data-winner="${esc(o.winner || "")}" data-roll="${esc(o.initiatorRoll)}"${o.ruled ? ` data-ruled="${esc(o.outcome)}"` : ""}>
      <p class="label">${esc(nameOf(o.initiator))} ⟷ ${esc(nameOf(o.defender))}</p>
      ${o.ruled ? rulingWords(o) : `<p>${esc(nameOf(o.initiator))} ${esc(t("ps", o.initiatorPs))} · ${esc(nameOf(o.defender))} ${esc(t("ps", o.defenderPs))}</p>
      <p class="words">${esc(t("winner"))}: ${esc(nameOf(o.winner))}${o.initiatorPs === o.defenderPs ? ` (${esc(t("opposed_tie"))})` : ""}</p>`}</article>`);
  if (!sent.length && !settled.length) return "";
  return `<section class="card opposed" aria-labelledby="h-opp"><h2 id="h-opp">${esc(t("opposed_title"))}</h2>${sent.join("")}${settled.join("")}</section>`;
}

// ACT-12 overruled: no defender's roll to show, the storyteller's word and its reason.
function rulingWords(o) {
  const said = o.winner ? t("opposed_ruled", nameOf(o.winner)) : t("opposed_ruled_cancelled");
  return `<p class="words">${esc(said)}${o.reason ? ` (${esc(o.reason)})` : ""}</p>`;
}

// ACT-2: a long action is rolled at its last turn; until then it waits here.
function pendingView() {
  const mine = Object.values(app.vm.pending).filter((p) => p.character === me());
  if (!mine.length) return "";
  const turn = app.vm.session.turn;
  return `<section class="card pending" aria-labelledby="h-pending"><h2 id="h-pending">${esc(t("pending_title"))}</h2>
    ${mine.map((p) => {
      const due = turn >= p.lastTurn;
      const sent = queuedFor("resume", p.id);
      return `<article class="pending-action" data-testid="pending-action" data-roll="${esc(p.id)}" data-due="${due}">
        <p class="label">${esc(p.label)}${p.opponent ? ` · ${esc(t("against_who", nameOf(p.opponent)))}` : ""}</p>
        <p class="muted">${esc(t("pending_turns", p.turns, p.lastTurn, turn))}</p>
        <button class="${due ? "primary" : "secondary"}" data-act="act_resume" data-roll="${esc(p.id)}" data-testid="resume-action"
          ${due && !sent ? "" : "disabled"}>${esc(due ? t("resume_action") : t("resume_at", p.lastTurn))}</button></article>`;
    }).join("")}</section>`;
}

// The roll_action commands of the phone (and of the storyteller's dice form, whose
// expertise is a plain checkbox: a storyteller may roll it without a name).
export function actionCommand(act, el, data, character) {
  const expertise = (v) => (!v ? null : v === "on" ? true : v);
  if (act === "act_answer") {
    // the phone's card sends no visibility (open); the storyteller's sends the waiting roll's
    return { type: "roll_action", character, characteristic: data.get("characteristic"), against: el.dataset.roll, expertise: expertise(data.get("expertise")),
      ...plusMinus(data), ...(data.get("visibility") ? { visibility: data.get("visibility") } : {}) };
  }
  if (act === "act_resume") return { type: "roll_action", character, resume: el.dataset.roll };
  const opponent = data.get("opponent") || null;
  const turns = num(data.get("turns")) || 1;
  return {
    type: "roll_action", character, characteristic: data.get("characteristic"),
    ...(opponent ? { opponent } : { difficulty: num(data.get("difficulty")) }),
    ...(turns > 1 ? { turns } : {}),
    ...(data.get("cooperation") ? { cooperation: String(data.get("cooperation")).trim() } : {}),
    ...plusMinus(data), expertise: expertise(data.get("expertise")), visibility: data.get("visibility") || "open",
  };
}

// ACT-5, ACT-8: what a form declares; a form without these fields declares none.
function plusMinus(data) {
  return { bonus: num(data.get("bonus")) || 0, malus: num(data.get("malus")) || 0, option: data.get("option") || "none" };
}

function actionRoller(c) {
  const others = otherCharacters(c);
  const against = others.some((o) => o.id === app.form["act-against"]) ? app.form["act-against"] : "";
  return `<section class="card dice" aria-labelledby="h-dice"><h2 id="h-dice">${esc(t("dice"))}</h2>
    <form data-act="roll_action" class="row wrap">
      ${characteristicSelect(c, "act-characteristic")}
      ${others.length ? `<label>${esc(t("against"))} <select name="opponent" id="act-against" data-form="act-against" data-testid="act-against">
        <option value="">${esc(t("against_env"))}</option>${others.map((o) => `<option value="${esc(o.id)}" ${o.id === against ? "selected" : ""}>${esc(o.name)}</option>`).join("")}</select></label>` : ""}
      ${against ? "" : numberField("actdiff", "difficulty", "difficulty", 2, 0, 10)}
      ${plusMinusFields("act")}
      ${numberField("act-turns", "turns", "turns", 1, 1, 5)}
      ${optionSelect("act-option")}
      ${expertiseSelect(c, "act-expertise")}
      ${against ? "" : `<label>${esc(t("cooperation"))} <input id="act-coop" name="cooperation" type="text" autocomplete="off" value="${esc(app.form["act-coop"] ?? "")}" placeholder="${esc(t("cooperation_help"))}"></label>`}
      ${visibilitySelect("act-vis")}
      <button type="submit" class="primary" data-testid="roll">${esc(against ? t("roll_against", nameOf(against)) : t("roll"))}</button>
    </form></section>`;
}

// ---- what happened around the player
//
// Told from this phone's own log only (the events the server sent it, already redacted
// for it): nothing here can say more than the stream did. Kept: what names this
// character, what happened in the scene it stood in at the time, and what concerns the
// whole session (Time Out for everyone, time skipped, a new turn).

const FEED_SIZE = 12;
const SESSION_WIDE = new Set(["session.opened", "session.closed", "session.time_skipped", "session.turn_length_set"]);
const SCOPED = new Set(["session.time_out_called", "session.time_out_ended", "session.turn_advanced"]);
const NAMING = ["character", "initiator", "defender", "tested", "opponent", "winner", "loser", "debtor", "creditor", "cancelled", "recorder"];

function named(vm, e) {
  const ids = new Set(NAMING.map((k) => e[k]).filter((v) => typeof v === "string"));
  Object.keys(e.throws || {}).forEach((k) => ids.add(k));
  (e.defenders || []).forEach((k) => ids.add(k));
  const ch = e.challenge && vm.challenges[e.challenge];
  if (ch) [ch.initiator, ch.defender, ch.tested, ...ch.defenders].forEach((k) => k && ids.add(k));
  return ids;
}

function concerns(vm, e, id, at) {
  if (SESSION_WIDE.has(e.type) || (SCOPED.has(e.type) && !e.scene && e.scope !== "scene")) return true;
  const ids = named(vm, e);
  if (ids.has(id)) return true;
  if (typeof e.scene === "string") return e.scene === at(id);
  if (e.type === "session.character_added") return false; // the roster, not the room
  const cast = [...ids].filter((c) => c in vm.characters); // antagonists have no place here
  return cast.some((c) => at(c) === at(id));
}

// The entries that concern character ``id``, oldest first. Each is judged with the
// scenes as they stood when it happened, replayed from the log's joins and leaves; a log
// cut short (LOG_SIZE) takes, for who has not moved since, the scene they stand in now.
export function feedEntries(vm, id) {
  const whole = vm.log.length > 0 && vm.log[0].type === "session.opened";
  const where = {};
  const at = (c) => (c in where ? where[c] : whole ? null : (vm.characters[c] && vm.characters[c].scene) || null);
  const kept = [];
  for (const entry of vm.log) {
    const e = entry.event || {};
    if (concerns(vm, e, id, at)) kept.push(entry);
    if (e.type === "session.scene_joined") where[e.character] = e.scene;
    else if (e.type === "session.scene_left" && at(e.character) === e.scene) where[e.character] = null;
    else if (e.type === "session.scene_closed") Object.keys(vm.characters).forEach((c) => { if (at(c) === e.scene) where[c] = null; });
  }
  return kept;
}

// A sealed throw or bid reaches this phone without its value: said so in plain words.
const SEALED_WORDS = {
  "met.throw_committed": (e) => e.choice == null && "feed_throw_sealed",
  "met.bid_declared": (e) => e.value == null && "feed_bid_sealed",
  "met.overbid_declared": (e) => e.value == null && "feed_overbid_sealed",
  "v5.pool_rolled": (e) => e.normal == null && e.hunger == null && "feed_roll_sealed",
  "action.rolled": (e) => e.dice == null && "feed_roll_sealed",
};

function feedLine(entry, tell) {
  const e = entry.event || {};
  const ch = e.challenge && app.vm.challenges[e.challenge];
  // a player knows a challenge by who is in it, not by its id; its issuing names them already
  const sides = ch && (ch.defenders.length ? ch.defenders : [ch.defender]).map(nameOf).join(", ");
  const shown = ch ? { ...e, challenge: e.type === "met.challenge_issued" ? "" : `${nameOf(ch.initiator)} ⟷ ${sides}` } : e;
  const sealed = SEALED_WORDS[e.type] && SEALED_WORDS[e.type](e);
  const said = sealed ? t(sealed, shown.challenge || "", nameOf(e.character)) : tell(shown);
  return said && `<li data-seq="${esc(entry.seq)}" data-type="${esc(e.type)}"${sealed ? ' class="sealed"' : ""}>${esc(said)}</li>`;
}

function feedView() {
  const tell = teller(app.vm, lang);
  const lines = feedEntries(app.vm, me()).map((entry) => feedLine(entry, tell)).filter(Boolean).slice(-FEED_SIZE).reverse();
  return `<section class="card feed" aria-labelledby="h-feed">
    <details id="feed" data-testid="feed-details" ${app.form.feedClosed ? "" : "open"}>
      <summary><h2 id="h-feed">${esc(t("feed_title"))}</h2></summary>
      ${lines.length ? `<ol class="feed-list" data-testid="feed">${lines.join("")}</ol>` : `<p class="muted" data-testid="feed-empty">${esc(t("feed_empty"))}</p>`}
    </details></section>`;
}

// A closed feed stays closed across re-renders (app.js reopens only what was open).
document.addEventListener("toggle", (ev) => {
  if (ev.target && ev.target.id === "feed") app.form.feedClosed = !ev.target.open;
}, true);

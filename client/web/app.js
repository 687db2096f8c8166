// conteur's web app: the player's phone and the storyteller's tablet, one page, no build.
//
// The page holds a view model folded from the events this viewer receives (fold.js);
// every action is a command written to the IndexedDB outbox first, then sent when live,
// so a tap made during a Wi-Fi dropout is kept, shown as queued, and sent once on
// reconnect (the server deduplicates by the command's UUID).

import { initialView, applyEvent, rulesetOf, bidBounds, isFrozenFor, attributeOf, abilitiesOf, isOpen, SEALED } from "./fold.js";
import { pickLang, translator } from "./i18n.js";
import { Connection, Outbox, uuid4, entropy, takeJoin, deviceId } from "./net.js";

const lang = pickLang(navigator.languages && navigator.languages.length ? navigator.languages : [navigator.language]);
const t = translator(lang);
document.documentElement.lang = lang;

const app = {
  vm: initialView(),
  viewer: null, // {role, character, name}
  session: "",
  status: "connecting", // connecting | online | offline
  live: false,
  lastSeq: 0,
  queued: [], // outbox entries not yet acknowledged
  sentOn: new Map(), // command id -> connection number it was sent on
  conn: 0,
  notices: [], // {id, kind: ok|reject, text}
  form: {}, // values of inputs, kept across re-renders
  frozenBefore: false,
  waitingBefore: new Set(),
};
window.conteur = app; // for the curious, and for the browser tests' assertions

const outbox = new Outbox();
let connection = null;

const esc = (v) => String(v ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
const $ = (sel) => document.querySelector(sel);

// ------------------------------------------------------------------ commands

async function act(command) {
  const entry = { id: uuid4(), n: Date.now() + Math.random(), session: app.session, command, entropy: entropy(), madeAfter: app.lastSeq };
  await outbox.put(entry);
  app.queued.push(entry);
  send(entry);
  schedule();
  return entry.id;
}

function send(entry) {
  if (!app.live || app.sentOn.get(entry.id) === app.conn) return;
  if (connection.send({ type: "command", id: entry.id, command: entry.command, entropy: entry.entropy })) {
    app.sentOn.set(entry.id, app.conn);
  }
}

async function settle(id, notice) {
  const entry = app.queued.find((e) => e.id === id);
  app.queued = app.queued.filter((e) => e.id !== id);
  app.sentOn.delete(id);
  await outbox.delete(id);
  if (notice && entry) {
    app.notices.push({ id, ...notice, command: entry.command.type });
    setTimeout(() => { app.notices = app.notices.filter((n) => n.id !== id); schedule(); }, notice.kind === "reject" ? 12000 : 2500);
  }
  schedule();
}

// ------------------------------------------------------------------ frames

// Refusals that wrote nothing and ask to try again (docs/protocol.md): keep it queued.
const RETRY = new Set(["unavailable", "rate_limited"]);

function retryLater(id) {
  app.sentOn.delete(id);
  setTimeout(() => {
    const entry = app.queued.find((e) => e.id === id);
    if (entry) send(entry);
  }, 1000 + Math.random() * 2000);
}

function onFrame(frame) {
  switch (frame.type) {
    case "welcome":
      app.viewer = frame.viewer;
      localStorage.setItem("conteur.viewer", JSON.stringify(frame.viewer));
      if (frame.session) app.session = frame.session;
      app.conn += 1;
      break;
    case "event":
      if (frame.seq <= app.lastSeq) return; // an overlap after a reconnect
      app.lastSeq = frame.seq;
      applyEvent(app.vm, frame.seq, frame.event);
      keep({ seq: frame.seq, event: frame.event });
      break;
    case "live":
      if (frame.head < app.helloAfter) { resetView(); return; } // another database: from 0
      app.live = true;
      app.status = "online";
      for (const entry of app.queued) send(entry);
      break;
    case "ack":
      settle(frame.id, null); // the events already show what it did
      break;
    case "reject":
      if (RETRY.has(frame.code)) retryLater(frame.id);
      else settle(frame.id, { kind: "reject", text: frame.message || frame.code });
      break;
    case "error":
      if (frame.id && RETRY.has(frame.code)) retryLater(frame.id);
      else if (frame.id) settle(frame.id, { kind: "reject", text: frame.message || frame.code });
      else if (["unauthorized", "forbidden", "unknown_session"].includes(frame.code)) app.fatal = frame.message || frame.code;
      break;
    default:
      return; // pong, and frame types of a newer server
  }
  schedule();
}

// Received events go to IndexedDB in batches: one transaction per burst, not per event.
let unsaved = [];
function keep(item) {
  unsaved.push(item);
  if (unsaved.length === 1) setTimeout(() => { const batch = unsaved; unsaved = []; outbox.addEvents(batch); }, 150);
}

async function resetView() {
  app.vm = initialView();
  app.lastSeq = 0;
  unsaved = [];
  await outbox.clearEvents();
  connection.restart();
}

function onStatus(status) {
  if (status !== "online") app.live = false;
  app.status = status;
  schedule();
}

// ------------------------------------------------------------------ rendering

let pending = false;
function schedule() {
  if (pending) return;
  pending = true;
  setTimeout(() => { pending = false; render(); }, 0);
}

function me() {
  return app.viewer && app.viewer.character;
}

function isStoryteller() {
  return app.viewer && app.viewer.role === "storyteller";
}

function nameOf(id) {
  if (id === "storyteller") return t("storyteller");
  const c = app.vm.characters[id];
  return c ? c.name : id;
}

// Re-rendering replaces the DOM: what the user was typing, choosing or had unfolded
// survives it (by element id), so an event arriving mid-entry never eats a bid.
function keepInputs(root) {
  const kept = { values: {}, open: new Set() };
  root.querySelectorAll("input[id], select[id]").forEach((el) => { kept.values[el.id] = el.type === "checkbox" ? el.checked : el.value; });
  root.querySelectorAll("details[id][open]").forEach((el) => kept.open.add(el.id));
  return kept;
}

function restoreInputs(kept) {
  for (const [id, value] of Object.entries(kept.values)) {
    const el = document.getElementById(id);
    if (!el) continue;
    if (el.type === "checkbox") el.checked = value; else el.value = value;
  }
  for (const id of kept.open) {
    const el = document.getElementById(id);
    if (el) el.open = true;
  }
}

function render() {
  const root = $("#app");
  const focused = document.activeElement && document.activeElement.id;
  const kept = keepInputs(root);
  if (!app.token) {
    root.innerHTML = joinView();
  } else if (!app.viewer || app.fatal) {
    root.innerHTML = header() + `<main class="wait"><p>${esc(app.fatal || t("connecting"))}</p></main>` + outboxView();
  } else {
    const view = isStoryteller() ? storytellerView() : app.viewer.role === "observer" ? observerView() : playerView();
    root.innerHTML = header() + view + outboxView() + noticesView();
  }
  restoreInputs(kept);
  document.body.classList.toggle("storyteller", !!isStoryteller());
  freezeOverlay();
  nudge();
  if (focused) {
    const el = document.getElementById(focused);
    if (el) el.focus();
  }
}

function header() {
  const label = { online: t("online"), connecting: t("connecting"), offline: t("offline_short"), refused: t("refused_short") }[app.status];
  const note = app.status === "offline" ? t("offline") : app.status === "refused" ? t("refused") : "";
  const who = isStoryteller() ? t("storyteller") : (me() ? nameOf(me()) : "");
  return `<header class="bar">
    <span class="who">${esc(who)}</span>
    <span class="clock">${esc(t("turn"))} ${app.vm.session.turn}</span>
    <span id="conn" class="conn ${app.status}" role="status" aria-live="polite" data-testid="conn"
      aria-label="${esc(note || label)}"><span class="dot" aria-hidden="true"></span>${esc(label)}</span>
  </header>${note ? `<p class="conn-note" data-testid="conn-note">${esc(note)}</p>` : ""}`;
}

function freezeOverlay() {
  const overlay = $("#freeze");
  const frozen = !!app.viewer && !isStoryteller() && (app.viewer.role === "observer" ? app.vm.session.frozen : isFrozenFor(app.vm, me()));
  overlay.hidden = !frozen;
  $("#freeze-title").textContent = t("freeze");
  $("#freeze-help").textContent = t("freeze_help");
  document.body.classList.toggle("frozen", frozen);
  if (frozen && !app.frozenBefore) {
    vibrate([400, 150, 400]);
    overlay.focus(); // screen readers announce the Time Out at once
  }
  app.frozenBefore = frozen;
}

function vibrate(pattern) {
  try { if ("vibrate" in navigator) navigator.vibrate(pattern); } catch (err) { /* not allowed */ }
}

// A challenge that waits for this player's answer buzzes the phone once.
function nudge() {
  if (!app.viewer || isStoryteller() || !me()) return;
  const waiting = new Set(myChallenges().filter((c) => myMove(c)).map((c) => `${c.id}:${c.round}:${c.status}`));
  for (const key of waiting) if (!app.waitingBefore.has(key)) { vibrate(200); break; }
  app.waitingBefore = waiting;
}

// ---- player

function myChallenges() {
  return Object.values(app.vm.challenges).filter((c) => isOpen(c) && [c.initiator, c.defender].includes(me()));
}

// What this player may do now in a challenge, or null.
function myMove(c) {
  const id = me();
  const queuedFor = app.queued.some((e) => e.command.challenge === c.id && e.command.round === c.round && e.command.character === id);
  if (queuedFor) return null;
  if (c.status === "throwing" && !(id in c.throws)) return "throw";
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

function playerView() {
  const c = app.vm.characters[me()] || { name: me(), sheet: null };
  const ruleset = rulesetOf(app.vm, me());
  return `<main class="player">
    ${characterCard(c)}
    ${ruleset !== "met" ? "" : `<section aria-labelledby="h-ch" class="card"><h2 id="h-ch">${esc(t("challenges"))}</h2>
      ${myChallenges().map(challengeCard).join("") || `<p class="muted">${esc(t("no_challenges"))}</p>`}
      ${newChallengeForm(c)}
    </section>`}
    ${ruleset === "v5" ? v5Roller(c) : ""}
    ${ruleset === "action" ? actionRoller(c) : ""}
    ${rollsView(app.vm.rolls.filter((r) => r.character === me()))}
  </main>`;
}

function characterCard(c) {
  const s = c.sheet;
  let traits = "";
  if (s && s.kind === "met") {
    traits = ["physical", "social", "mental"].map((a) => `<span class="trait"><b>${s[a] ?? 0}</b> ${esc(t(a))}</span>`).join("") +
      Object.entries(s.abilities || {}).map(([k, v]) => `<span class="trait small">${esc(k)} ${v}</span>`).join("") +
      (s.merits || []).map((m) => `<span class="trait small">${esc(m)}</span>`).join("");
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
    ${c.outOfGame
      ? `<button class="primary" data-act="back_in_game" data-testid="back-in-game">${esc(t("back_in_game"))}</button>`
      : `<button class="secondary" data-act="out_of_game" data-testid="out-of-game">${esc(t("out_of_game"))}</button>`}
  </section>`;
}

const THROWS = ["rock", "paper", "scissors"];
// Inline SVG, not emoji: phones and kiosk browsers without an emoji font show boxes.
const svg = (body) => `<svg viewBox="0 0 48 48" width="40" height="40" aria-hidden="true" focusable="false" fill="none" stroke="currentColor" stroke-width="3" stroke-linejoin="round" stroke-linecap="round">${body}</svg>`;
const ICON = {
  rock: svg('<path d="M10 30c-3-9 3-19 13-20 9-1 16 6 15 15-1 8-8 13-16 13-6 0-10-3-12-8z" fill="currentColor" fill-opacity=".25"/>'),
  paper: svg('<path d="M12 6h17l8 8v28H12z" fill="currentColor" fill-opacity=".15"/><path d="M29 6v8h8"/>'),
  scissors: svg('<circle cx="13" cy="35" r="6"/><circle cx="35" cy="35" r="6"/><path d="M17 30L36 6M31 30L12 6"/>'),
  bomb: svg('<circle cx="21" cy="29" r="13" fill="currentColor" fill-opacity=".25"/><path d="M30 19l5-5M35 14c2-4 6-4 8-2"/>'),
};

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
    if (!(c.kind === "static" && c.defender === id)) body += concedeButton(c);
  } else if (move === "bid" || move === "answer") {
    const bounds = bidBounds(app.vm.characters[id]?.sheet, attr, abilitiesOf(c, id));
    const key = `bid-${c.id}-${c.round}`;
    body = `<form class="bid" data-act="${move === "bid" ? "bid" : "answer"}" data-ch="${esc(c.id)}">
      <label for="${key}">${esc(t("bid_label", bounds.max))}</label>
      <div class="row"><input id="${key}" name="value" type="number" inputmode="numeric" min="${bounds.min}" max="${bounds.max}"
        value="${esc(app.form[key] ?? bounds.max)}" required data-testid="bid-input">
      <button type="submit" data-testid="bid-send">${esc(t("send_bid"))}</button></div></form>`;
    if (move === "bid") body += concedeButton(c);
  } else if (move === "window") {
    body = windowPrompts(c);
  } else if (queuedMove(c)) {
    const q = queuedMove(c);
    body = `<p class="queued-move">${esc(t(q.command.type === "throw" ? "your_throw" : q.command.type))}: ${esc(q.command.choice ? t(q.command.choice) : q.command.value ?? "")}
      <span class="badge">${esc(t("queued"))}</span></p>`;
  } else {
    body = `<p class="muted">${esc(t("waiting_others"))}</p>`;
  }
  return `<article class="challenge" data-testid="challenge" data-challenge="${esc(c.id)}" data-status="${esc(c.status)}">
    <h3>${esc(nameOf(c.initiator))} ⟷ ${esc(nameOf(c.defender))}</h3>
    <p class="meta"><span class="stage" data-testid="stage">${esc(stageText(c))}</span> · ${esc(t("round"))} ${c.round}${attr ? ` · ${esc(t(attr))}` : ""}${c.kind !== "classic" ? ` · ${esc(t(c.kind))}` : ""}${c.kind === "static" ? ` · ${esc(t("difficulty"))} ${c.difficulty}` : ""}</p>
    ${revealedLine(c)}
    ${body}
  </article>`;
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
  const sources = [...Object.keys(sheet.abilities || {}), ...(sheet.merits || []), ...(sheet.powers || [])];
  const canOverbid = c.kind === "classic" && c.by === "throw" && !c.overbids.includes(id);
  const bounds = bidBounds(sheet, attributeOf(c, id), abilitiesOf(c, id));
  const key = `ob-${c.id}-${c.round}`;
  return `<div class="window">
    ${sources.length ? `<form class="retest" data-act="retest" data-ch="${esc(c.id)}">
      <label for="src-${esc(c.id)}">${esc(t("retest_source"))}</label>
      <div class="row"><select id="src-${esc(c.id)}" name="source">${sources.map((s) => `<option>${esc(s)}</option>`).join("")}</select>
      <button type="submit" data-testid="retest">${esc(t("retest"))}</button></div></form>` : ""}
    ${canOverbid ? `<form class="overbid" data-act="overbid" data-ch="${esc(c.id)}">
      <label for="${key}">${esc(t("overbid_label"))}</label>
      <div class="row"><input id="${key}" name="value" type="number" inputmode="numeric" min="0" max="${bounds.max}" value="${esc(app.form[key] ?? bounds.max)}" required>
      <button type="submit" data-testid="overbid">${esc(t("overbid"))}</button></div></form>` : ""}
    <button class="primary" data-act="accept" data-ch="${esc(c.id)}" data-testid="accept">${esc(t("accept"))}</button>
  </div>`;
}

function stageText(c) {
  return {
    throwing: t("your_throw"), bidding: t("bid"), window: `${t("winner")}: ${nameOf(c.winner)}`,
    overbid: t("overbid"), resolved: `${t("ended")} · ${t("winner")}: ${nameOf(c.winner)}`, cancelled: t("cancelled"),
  }[c.status] || c.status;
}

function revealedLine(c) {
  const parts = [];
  if (c.revealed) {
    const th = Object.entries(c.revealed.throws).map(([who, ch]) => `${esc(nameOf(who))} <span class="mini">${ICON[ch] || ""}</span> ${esc(t(ch))}`).join(" · ");
    parts.push(`${th}${c.revealed.winner ? "" : ` — <b>${esc(t("tie"))}</b>`}`);
  }
  if (c.lastBids) {
    parts.push(esc(`${t("bid")}: ${Object.entries(c.lastBids.bids).map(([who, v]) => `${nameOf(who)} ${v === SEALED ? "?" : v}`).join(" · ")}`));
  }
  const mine = c.throws[me()];
  if (c.status === "throwing" && mine) parts.push(esc(`${t("your_throw")}: ${t(mine)} (${t("thrown")})`));
  return parts.length ? `<p class="revealed" data-testid="revealed">${parts.join(" — ")}</p>` : "";
}

function newChallengeForm(c) {
  const others = Object.values(app.vm.characters).filter((o) => o.id !== c.id && (!c.scene || o.scene === c.scene));
  if (!others.length) return "";
  return `<details class="new-challenge" id="new-challenge"><summary>${esc(t("challenge_new"))}</summary>
    <form data-act="challenge">
      <label>${esc(t("opponent"))} <select name="defender" id="nc-defender">${others.map((o) => `<option value="${esc(o.id)}">${esc(o.name)}</option>`).join("")}</select></label>
      <label>${esc(t("attribute"))} <select name="attribute" id="nc-attribute">${["physical", "social", "mental"].map((a) => `<option value="${a}">${esc(t(a))}</option>`).join("")}</select></label>
      ${Object.keys((c.sheet && c.sheet.abilities) || {}).length ? `<fieldset class="abilities"><legend>${esc(t("abilities"))}</legend>${Object.entries(c.sheet.abilities).map(([a, n]) =>
        `<label class="check"><input type="checkbox" name="abilities" value="${esc(a)}" id="nc-ab-${esc(a)}"> ${esc(a)} (${n})</label>`).join("")}</fieldset>` : ""}
      <button type="submit" data-testid="challenge-start">${esc(t("start"))}</button>
    </form></details>`;
}

// ---- dice

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
      <button type="submit" class="primary" data-testid="roll">${esc(t("roll"))}</button>
    </form>
    <div class="row wrap">
      <button data-act="rouse" data-testid="rouse">${esc(t("rouse"))}</button>
      ${last && !last.rerolled && last.normal.some((f) => f < 6) ? `<form data-act="willpower" data-roll="${esc(last.id)}" class="row">
        <select name="strategy" id="wp-strategy" aria-label="${esc(t("willpower"))}">${["reroll_failures", "maximise_criticals", "avoid_messy"].map((k) => `<option value="${k}">${esc(t(k))}</option>`).join("")}</select>
        <button type="submit" data-testid="willpower">${esc(t("willpower"))}</button></form>` : ""}
    </div></section>`;
}

function actionRoller(c) {
  const chars = Object.keys((c.sheet && c.sheet.characteristics) || {});
  return `<section class="card dice" aria-labelledby="h-dice"><h2 id="h-dice">${esc(t("dice"))}</h2>
    <form data-act="roll_action" class="row wrap">
      <label>${esc(t("characteristic"))} <select name="characteristic" id="act-characteristic">${chars.map((k) => `<option>${esc(k)}</option>`).join("")}</select></label>
      <label>${esc(t("difficulty"))} <input id="actdiff" name="difficulty" type="number" min="0" max="10" value="${esc(app.form.actdiff ?? 2)}"></label>
      <label>${esc(t("bonus"))} <input id="actbonus" name="bonus" type="number" min="0" max="10" value="${esc(app.form.actbonus ?? 0)}"></label>
      <label>${esc(t("malus"))} <input id="actmalus" name="malus" type="number" min="0" max="10" value="${esc(app.form.actmalus ?? 0)}"></label>
      <label>${esc(t("option"))} <select name="option" id="act-option">${["none", "surpass", "sacrifice"].map((o) => `<option value="${o}">${esc(t(`opt_${o}`))}</option>`).join("")}</select></label>
      <label class="check"><input type="checkbox" name="expertise" id="act-expertise"> ${esc(t("expertise"))}</label>
      <button type="submit" class="primary" data-testid="roll">${esc(t("roll"))}</button>
    </form></section>`;
}

function rollsView(rolls) {
  if (!rolls.length) return "";
  return `<section class="card rolls" aria-label="${esc(t("dice"))}">${rolls.slice(-4).reverse().map(rollCard).join("")}</section>`;
}

function die(face, cls, label) {
  return `<span class="die ${cls}" role="img" aria-label="${esc(label)} ${esc(face)}">${esc(face)}</span>`;
}

function rollCard(r) {
  let dice = "";
  let words = "";
  if (r.kind === "v5" || r.kind === "rouse") {
    dice = (r.normal || []).map((f) => die(f, f >= 6 ? "hit" : "", t("die"))).join("") +
      (r.hunger || []).map((f) => die(f, `hunger${f >= 6 ? " hit" : ""}${f === 1 ? " skull" : ""}`, t("hunger_die"))).join("");
    if (r.kind === "rouse") words = r.raised ? t("hunger_raised", r.hungerAfter) : t("hunger_stays");
    else if (r.hidden) words = "?";
    else {
      const main = r.bestial ? t("bestial") : r.messy ? t("messy") : r.critical ? t("critical") : r.success ? t("success") : t("failure");
      words = `${main} — ${t("successes", r.successes)}${r.success ? `, ${t("margin", r.margin)}` : ""} / ${t("difficulty")} ${r.difficulty}`;
    }
  } else if (r.kind === "action") {
    dice = (r.normal || []).map((f) => die(f, f >= r.threshold ? "hit" : "", `d${r.sides}`)).join("") +
      (r.signs || []).map((s) => `<span class="die dpm ${s === "+" ? "plus" : s === "-" ? "minus" : "blank"}" role="img"
        aria-label="D+/- ${esc(s === "+" ? t("plus") : s === "-" ? t("minus") : t("blank"))}">${s === "-" ? "−" : s || "·"}</span>`).join("");
    words = `${r.success === true ? t("success") : r.success === false ? t("failure") : ""} — ${t("points", r.points)}${r.difficulty != null ? ` / ${t("difficulty")} ${r.difficulty}` : ""}`;
  }
  const ok = r.success === true ? "ok" : r.success === false ? "ko" : "";
  return `<article class="roll ${ok}" data-testid="roll-result"><p class="label">${esc(nameOf(r.character))} ${esc(r.label || "")}</p>
    <div class="dice-row">${dice}</div><p class="words">${esc(words)}</p></article>`;
}

// ---- observer (a wall display): public state only, nothing to press

function observerView() {
  const vm = app.vm;
  const chars = Object.values(vm.characters);
  return `<main class="st observer">
    <section class="card" aria-labelledby="h-sc"><h2 id="h-sc">${esc(t("scenes"))}</h2>
      ${Object.values(vm.scenes).filter((s) => s.open).map((s) => `<div class="scene-row ${s.frozen ? "frozen" : ""}">
        <h3>${esc(s.name)}${s.frozen || vm.session.frozen ? ` · ${esc(t("frozen"))}` : ""}</h3>
        <p>${chars.filter((c) => c.scene === s.id).map((c) => esc(c.name)).join(", ") || esc(t("none"))}</p></div>`).join("")}
    </section>
    <section class="card" aria-labelledby="h-ch"><h2 id="h-ch">${esc(t("challenges"))}</h2>
      ${Object.values(vm.challenges).filter(isOpen).map((c) => `<p>${esc(nameOf(c.initiator))} ⟷ ${esc(nameOf(c.defender))} · <span class="stage">${esc(stageText(c))}</span></p>`).join("")
        || `<p class="muted">${esc(t("no_challenges"))}</p>`}
    </section>
  </main>`;
}

// ---- storyteller

function storytellerView() {
  const vm = app.vm;
  const open = Object.values(vm.challenges).filter(isOpen);
  const done = Object.values(vm.challenges).filter((c) => c.status === "resolved").slice(-3).reverse();
  const scenes = Object.values(vm.scenes).filter((s) => s.open);
  const chars = Object.values(vm.characters);
  const ruleset = rulesetOf(vm);
  return `<main class="st">
    <section class="card" aria-labelledby="h-sc"><h2 id="h-sc">${esc(t("scenes"))}</h2>
      <div class="row wrap">
        ${vm.session.frozen
          ? `<button class="primary" data-act="resume" data-testid="resume-all">${esc(t("resume_all"))}</button>`
          : `<button class="danger" data-act="freeze" data-testid="freeze-all">${esc(t("freeze_all"))}</button>`}
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
    ${done.length ? `<section class="card" aria-labelledby="h-done"><h2 id="h-done">${esc(t("recent"))}</h2>
      <div data-testid="st-done">${done.map(stChallenge).join("")}</div></section>` : ""}
    <section class="card" aria-labelledby="h-time"><h2 id="h-time">${esc(t("turn"))} ${vm.session.turn}</h2>
      <div class="row wrap"><button data-act="next_turn">${esc(t("next_turn"))}</button>
      <form data-act="skip_time" class="row"><label>${esc(t("skip_time"))} <input id="skip" name="minutes" type="number" min="1" value="${esc(app.form.skip ?? 60)}"> ${esc(t("minutes"))}</label>
        <button type="submit">${esc(t("skip_time"))}</button></form></div>
    </section>
    <section class="card" aria-labelledby="h-chars"><h2 id="h-chars">${esc(t("characters"))}</h2>
      ${chars.map((c) => stCharacter(c, ruleset)).join("")}
    </section>
    ${rollsView(vm.rolls)}
    <section class="card log" aria-labelledby="h-log"><h2 id="h-log">${esc(t("log"))}</h2>
      <ol reversed>${vm.log.slice(-30).reverse().map((l) => `<li value="${l.seq}"><code>${esc(l.type)}</code> ${esc(summary(l.event))}</li>`).join("")}</ol>
    </section>
  </main>`;
}

// MET-9: Celerity first, then more traits in the attribute; equal ones act together.
export function initiative(chars, attribute) {
  const key = (c) => [(c.sheet && c.sheet.celerity) || 0, (c.sheet && c.sheet[attribute]) || 0];
  const sorted = chars.slice().sort((a, b) => { const [x, y] = [key(a), key(b)]; return y[0] - x[0] || y[1] - x[1]; });
  const groups = [];
  for (const c of sorted) {
    const last = groups[groups.length - 1];
    if (last && key(last[0]).join() === key(c).join()) last.push(c); else groups.push([c]);
  }
  return groups;
}

function initiativeView(scene, chars) {
  const here = chars.filter((c) => c.scene === scene.id && c.sheet && c.sheet.kind === "met");
  if (here.length < 2) return "";
  const attribute = app.form[`ini-${scene.id}`] || "physical";
  return `<div class="initiative"><label>${esc(t("initiative"))}
    <select id="ini-${esc(scene.id)}" data-form="ini-${esc(scene.id)}">${["physical", "social", "mental"].map((a) => `<option value="${a}" ${a === attribute ? "selected" : ""}>${esc(t(a))}</option>`).join("")}</select></label>
    <ol>${initiative(here, attribute).map((g) => `<li>${g.map((c) => esc(c.name)).join(" = ")}</li>`).join("")}</ol></div>`;
}

// The sides a storyteller plays: antagonists (not on the roster) and the storyteller side.
function antagonistOf(c) {
  return [c.initiator, c.defender].find((side) => !app.vm.characters[side]);
}

function stChallenge(c) {
  const sides = [c.initiator, c.defender];
  const shown = (v) => (v === SEALED ? "?" : v === null || v === undefined ? "…" : v);
  const throws = sides.map((s) => `${esc(nameOf(s))}: ${c.throws[s] ? esc(c.throws[s] === SEALED ? "?" : t(c.throws[s])) : "…"}`).join(" · ");
  const bids = Object.keys(c.bids).length ? ` · ${t("bid")}: ${sides.map((s) => `${esc(nameOf(s))} ${esc(shown(c.bids[s]))}`).join(" / ")}` : "";
  const npc = antagonistOf(c);
  const key = `st-bid-${c.id}-${c.round}`;
  let acts = "";
  if (c.status === "throwing" && npc && !(npc in c.throws)) {
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
  }
  const overrule = `<form data-act="overrule" data-ch="${esc(c.id)}" class="row wrap"><label>${esc(t("winner_is"))}
      <select name="winner">${sides.map((s) => `<option value="${esc(s)}">${esc(nameOf(s))}</option>`).join("")}</select></label>
      <button type="submit" data-testid="overrule">${esc(t("overrule"))}</button>
      ${isOpen(c) ? `<button type="button" class="danger" data-act="cancel" data-ch="${esc(c.id)}" data-testid="cancel">${esc(t("cancel"))}</button>` : ""}</form>`;
  return `<article class="challenge" data-testid="st-challenge" data-challenge="${esc(c.id)}" data-status="${esc(c.status)}">
    <h3>${esc(c.id)} · ${esc(nameOf(c.initiator))} ⟷ ${esc(nameOf(c.defender))}</h3>
    <p class="meta"><span class="stage">${esc(stageText(c))}</span> · ${esc(t(c.kind))} · ${esc(t("round"))} ${c.round}${c.tests > 1 ? ` · ${c.test}/${c.tests}` : ""}${c.attribute ? ` · ${esc(t(c.attribute))}` : ""}${c.kind === "static" ? ` · ${esc(t("difficulty"))} ${c.difficulty}` : ""}</p>
    <p data-testid="st-throws">${throws}${bids}</p>
    ${acts}
    ${overrule}
  </article>`;
}

// A storyteller's challenge: an antagonist against a character (classic), a difficulty
// (static, MET-10), or a simple/complex test of one character (MET-11).
function stNewChallenge(chars) {
  if (!chars.length) return "";
  return `<details class="new-challenge" id="st-new-challenge"><summary>${esc(t("challenge_new"))}</summary>
    <form data-act="st-challenge">
      <label>${esc(t("antagonist"))} <input name="antagonist" value="${esc(t("antagonist_default"))}" id="st-antagonist"></label>
      <label>${esc(t("character"))} <select name="target" id="st-target">${chars.map((o) => `<option value="${esc(o.id)}">${esc(o.name)}</option>`).join("")}</select></label>
      <label>${esc(t("kind"))} <select name="kind" id="st-kind">${["classic", "static", "simple", "complex"].map((k) => `<option value="${k}">${esc(t(k))}</option>`).join("")}</select></label>
      <label>${esc(t("attribute"))} <select name="attribute" id="st-attribute">${["physical", "social", "mental"].map((a) => `<option value="${a}">${esc(t(a))}</option>`).join("")}</select></label>
      <label>${esc(t("difficulty"))} <input name="difficulty" type="number" min="0" max="30" value="5" id="st-difficulty"></label>
      <label>${esc(t("tests"))} <input name="tests" type="number" min="1" max="5" value="1" id="st-tests"></label>
      <button type="submit">${esc(t("start"))}</button>
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

function summary(e) {
  return Object.entries(e).filter(([k, v]) => k !== "type" && k !== "draws" && v !== null && v !== "" && typeof v !== "object")
    .map(([k, v]) => `${k}=${v}`).join(" ");
}

function commandName(type) {
  const name = t(`cmd_${type}`);
  return name.startsWith("cmd_") ? type : name;
}

function outboxView() {
  if (!app.queued.length) return "";
  return `<section class="card outbox" aria-labelledby="h-ob"><h2 id="h-ob">${esc(t("outbox"))}</h2><ul>
    ${app.queued.map((e) => `<li data-testid="queued" data-command="${esc(e.command.type)}">${esc(commandName(e.command.type))} ${esc(e.command.choice ? t(e.command.choice) : e.command.value ?? "")} <span class="badge">${esc(t("queued"))}</span></li>`).join("")}
  </ul></section>`;
}

function noticesView() {
  return `<div class="notices" role="alert">${app.notices.map((n) =>
    `<p class="notice ${n.kind}" data-testid="notice-${n.kind}">${esc(n.kind === "reject" ? `${t("rejected")}: ${n.text}` : n.text)}</p>`).join("")}</div>`;
}

function joinView() {
  return `<main class="join card"><h1>${esc(t("join_title"))}</h1><p>${esc(t("join_help"))}</p>
    <form data-act="join"><label for="join-link">${esc(t("join_link"))}</label>
    <input id="join-link" name="link" type="url" autocomplete="off"><button type="submit" class="primary">${esc(t("join_button"))}</button></form></main>`;
}

// ------------------------------------------------------------------ input

const num = (v) => Number.parseInt(v, 10);

function commandFor(act, el, data) {
  const ch = el.dataset.ch;
  const c = ch && app.vm.challenges[ch];
  const character = me();
  switch (act) {
    case "throw": return { type: "throw", character, challenge: ch, round: c.round, choice: el.dataset.choice };
    case "st-throw": return { type: "throw", character: el.dataset.side, challenge: ch, round: c.round, choice: el.dataset.choice || null };
    case "bid": return { type: "bid", character, challenge: ch, round: c.round, value: num(data.get("value")) };
    case "answer": return { type: "bid", character, challenge: ch, round: c.round, value: num(data.get("value")) };
    case "retest": return { type: "retest", character, challenge: ch, source: data.get("source") };
    case "overbid": return { type: "overbid", character, challenge: ch, value: num(data.get("value")) };
    case "concede": return { type: "concede", character, challenge: ch };
    case "accept": return { type: "accept", character, challenge: ch };
    case "challenge": return { type: "challenge", character, kind: "classic", defender: data.get("defender"), attribute: data.get("attribute"), abilities: data.getAll("abilities") };
    case "roll_pool": return { type: "roll_pool", character, attribute: data.get("attribute") || null, skill: data.get("skill") || null, difficulty: num(data.get("difficulty")) };
    case "rouse": return { type: "rouse", character };
    case "willpower": return { type: "willpower_reroll", character, roll: el.dataset.roll, strategy: data.get("strategy") || "reroll_failures" };
    case "roll_action": return { type: "roll_action", character, characteristic: data.get("characteristic"), difficulty: num(data.get("difficulty")), bonus: num(data.get("bonus")) || 0, malus: num(data.get("malus")) || 0, option: data.get("option") || "none", expertise: data.get("expertise") ? true : null };
    case "freeze": return el.dataset.scene ? { type: "freeze", scope: "scene", scene: el.dataset.scene } : { type: "freeze", scope: "session" };
    case "resume": return el.dataset.scene ? { type: "resume", scope: "scene", scene: el.dataset.scene } : { type: "resume", scope: "session" };
    case "open_scene": { const name = data.get("name") || ""; return { type: "open_scene", scene: `s-${uuid4().slice(0, 8)}`, name }; }
    case "st-challenge": {
      const kind = data.get("kind");
      const target = data.get("target");
      const antagonist = (data.get("antagonist") || "").trim() || "antagonist";
      if (kind === "simple" || kind === "complex") return { type: "challenge", kind, character: target, tests: num(data.get("tests")) || 1 };
      const base = { type: "challenge", kind, character: antagonist, defender: target, attribute: data.get("attribute") };
      return kind === "static" ? { ...base, difficulty: num(data.get("difficulty")) || 0, tests: num(data.get("tests")) || 1 } : base;
    }
    case "st-bid": return { type: "bid", character: el.dataset.side, challenge: ch, round: c.round, value: num(data.get("value")) };
    case "st-accept": return { type: "accept", character: el.dataset.side, challenge: ch };
    case "close_window": return { type: "close_window", challenge: ch };
    case "overrule": return { type: "overrule", challenge: ch, winner: data.get("winner") };
    case "cancel": return { type: "cancel_challenge", challenge: ch };
    case "next_turn": return { type: "next_turn" };
    case "out_of_game": return { type: "out_of_game", character };
    case "back_in_game": return { type: "back_in_game", character };
    case "skip_time": return { type: "skip_time", seconds: num(data.get("minutes")) * 60 };
    case "set_hunger": return { type: "set_hunger", character: el.dataset.character, hunger: num(data.get("hunger")) };
    case "apply_modifier": return { type: "apply_modifier", character: el.dataset.character, value: num(data.get("value")), duration: num(data.get("duration")), unit: "turns" };
    default: return null;
  }
}

function handle(ev, el) {
  const what = el.dataset.act;
  if (what === "join") {
    const link = new FormData(el).get("link") || "";
    const hash = link.includes("#") ? link.slice(link.indexOf("#")) : `#join=${link}`;
    start({ hash, pathname: location.pathname, search: location.search });
    return;
  }
  const data = el.tagName === "FORM" ? new FormData(el) : new FormData();
  const command = commandFor(what, el, data);
  if (command) act(command);
}

document.addEventListener("click", (ev) => {
  const el = ev.target.closest("button[data-act]");
  if (!el || el.closest("form[data-act]") && el.type === "submit") return;
  ev.preventDefault();
  if (el.disabled) return;
  handle(ev, el);
});

document.addEventListener("submit", (ev) => {
  const form = ev.target.closest("form[data-act]");
  if (!form) return;
  ev.preventDefault();
  handle(ev, form);
});

document.addEventListener("input", (ev) => {
  const el = ev.target;
  if (el.id) app.form[el.id] = el.value;
});
document.addEventListener("change", (ev) => {
  const el = ev.target;
  if (el.dataset && el.dataset.form) { app.form[el.dataset.form] = el.value; schedule(); }
});

// ------------------------------------------------------------------ start

function wsUrl() {
  return `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws`;
}

async function start(loc = location) {
  const { token, session, fresh } = takeJoin(loc);
  app.token = token;
  app.session = session;
  if (!token) { render(); return; }
  await outbox.open();
  if (fresh) await outbox.clearEvents(); // another character on this device
  app.queued = await outbox.all();
  // What this device already holds: shown at once, even without network
  app.vm = initialView();
  app.lastSeq = 0;
  for (const { seq, event } of await outbox.events()) {
    applyEvent(app.vm, seq, event);
    app.lastSeq = seq;
  }
  try { app.viewer = JSON.parse(localStorage.getItem("conteur.viewer") || "null"); } catch (err) { app.viewer = null; }
  if (connection) connection.stop();
  connection = new Connection({
    url: wsUrl(),
    hello: () => {
      app.helloAfter = app.lastSeq;
      return { type: "hello", token: app.token, session: app.session, after: app.lastSeq, device: deviceId() };
    },
    onFrame,
    onStatus,
  });
  connection.start();
  render();
}

// The service worker and the manifest need a secure context: HTTPS, or localhost.
function secureEnough() {
  return location.protocol === "https:" || ["localhost", "127.0.0.1", "[::1]"].includes(location.hostname);
}

if (secureEnough() && "serviceWorker" in navigator) {
  const link = document.createElement("link");
  link.rel = "manifest";
  link.href = "manifest.webmanifest";
  document.head.appendChild(link);
  navigator.serviceWorker.register("sw.js").catch(() => {});
}

start();

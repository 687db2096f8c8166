// conteur's web app: the player's phone and the storyteller's tablet, one page, no build.
//
// The page holds a view model folded from the events this viewer receives (fold.js);
// every action is a command written to the IndexedDB outbox first, then sent when live,
// so a tap made during a Wi-Fi dropout is kept, shown as queued, and sent once on
// reconnect (the server deduplicates by the command's UUID).

import { loadDevices, revokeDevice } from "./devices.js";
import { initialView, applyEvent, isFrozenFor } from "./fold.js";
import { app, t, lang, esc, $, me, isStoryteller, nameOf, commandName, connText, refusal, LANG_KEY } from "./ui.js";
import { playerView, myChallenges, myMove, callsForMe, actionCommand } from "./player.js";
import { storytellerView, observerView } from "./storyteller.js";
import { Connection, Outbox, uuid4, entropy, takeJoin, deviceId, forgetDevice, viewerKey, joinKey, adoptCredential, fallBackToLink } from "./net.js";
import { confirmFor, ask } from "./confirm.js";
import { handCommand, handWaiting } from "./handplay.js";
import { deskCommand, freezeCall, takeElsewhere } from "./desk.js";
import { cue, keepAwake, vibrate } from "./cues.js";
import { SealedSocket, sealedFetch } from "./channel.js";

document.documentElement.lang = lang;

const outbox = new Outbox();
let connection = null;

// ------------------------------------------------------------------ commands

async function act(command) {
  const entry = { id: uuid4(), n: Date.now() + Math.random(), session: app.session, key: joinKey(), command, entropy: entropy(), madeAfter: app.lastSeq };
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
    // a refusal is read in a few seconds and can be tapped away: it must not sit over the
    // buttons the player needs next
    setTimeout(() => dismiss(id), notice.kind === "reject" ? 6000 : 2500);
  }
  schedule();
}

function dismiss(id) {
  app.notices = app.notices.filter((n) => n.id !== id);
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
      // the join link is spent: this device keeps its own credential (net.js)
      if (frame.credential) app.token = adoptCredential(frame.credential);
      app.viewer = frame.viewer;
      localStorage.setItem(viewerKey(), JSON.stringify(frame.viewer));
      if (frame.session) app.session = frame.session;
      app.venueCalls = []; // told again after live when any wait (venue_calls)
      app.conn += 1;
      app.helloPending = false;
      // a restored backup reused seqs this device holds for other events
      if (frame.diverged && app.helloAfter > 0) { rebuild(); return; }
      break;
    case "event":
      if (frame.seq <= app.lastSeq) return; // an overlap after a reconnect
      app.lastSeq = frame.seq;
      app.lastEvent = frame.event; // hello.last: exactly as received, the server compares it
      applyEvent(app.vm, frame.seq, frame.event);
      keep({ seq: frame.seq, event: frame.event });
      break;
    case "live":
      // a server that does not say diverged: a head below what we hold is another database
      if (frame.head < app.helloAfter) { rebuild(); return; }
      app.live = true;
      app.status = "online";
      for (const entry of app.queued) send(entry);
      break;
    case "ack":
      settle(frame.id, null); // the events already show what it did
      break;
    case "reject":
      if (RETRY.has(frame.code)) retryLater(frame.id);
      else settle(frame.id, { kind: "reject", text: refusal(frame) });
      break;
    case "error":
      if (frame.id && RETRY.has(frame.code)) retryLater(frame.id);
      else if (frame.id) settle(frame.id, { kind: "reject", text: refusal(frame) });
      else if (["unauthorized", "forbidden", "unknown_session"].includes(frame.code)) {
        app.fatal = frame.message || frame.code;
        // a storyteller's link to a session with no event yet (a fresh chronicle's "main"):
        // the server opens it only when asked in so many words (docs/protocol.md, hello)
        app.canCreate = frame.code === "unknown_session" && !!app.session;
      }
      // a hello whose last event this server cannot read (one of an older server's event
      // types): ask again without it rather than wait forever; after and head still count
      else if (frame.code === "invalid" && app.helloPending && app.lastEvent) {
        app.helloPending = false;
        connection.send(hello(false));
      }
      break;
    case "venue_calls":
      // safety calls waiting in the venue's other sessions, to storytellers only (desk.js)
      app.venueCalls = Array.isArray(frame.calls) ? frame.calls : [];
      break;
    case "pong":
      // the server's clock, which countdowns run by (desk.js): a phone's own may be off
      if (typeof frame.now === "number") app.skew = frame.now * 1000 - Date.now();
      return;
    default:
      return; // frame types of a newer server
  }
  schedule();
}

// Received events go to IndexedDB in batches: one transaction per burst, not per event.
let unsaved = [];
function keep(item) {
  unsaved.push(item);
  if (unsaved.length === 1) setTimeout(() => { const batch = unsaved; unsaved = []; outbox.addEvents(batch); }, 150);
}

// The server's history is not the one this device holds (docs/protocol.md, "Restored
// backup"): drop the events and the view, keep the outbox (its commands were never
// acknowledged: they are sent after live and decided on the server's history), and
// resync from 0.
function rebuild() {
  app.vm = initialView();
  app.lastSeq = 0;
  app.lastEvent = null;
  unsaved = [];
  // IndexedDB runs transactions in the order they were made: the clear comes before any
  // event of the new resync is kept
  outbox.clearEvents().catch(() => {});
  const id = uuid4();
  app.notices = app.notices.filter((n) => n.kind !== "restored").concat([{ id, kind: "restored", text: t("history_restored") }]);
  setTimeout(() => { app.notices = app.notices.filter((n) => n.id !== id); schedule(); }, 60000);
  connection.restart();
  schedule();
}

function hello(withLast = true) {
  app.helloAfter = app.lastSeq;
  app.helloPending = true;
  // no token: the channel's key is the proof (channel.js)
  const frame = { type: "hello", keep: true, session: app.session, after: app.lastSeq, device: deviceId(), batch: true };
  if (withLast && app.lastSeq > 0 && app.lastEvent) frame.last = { seq: app.lastSeq, event: app.lastEvent };
  if (app.create) frame.create = true;
  return frame;
}

function onStatus(status) {
  if (status !== "online") app.live = false;
  // while offline, each reconnect attempt says connecting, then offline again: the page
  // keeps saying offline and is not redrawn for it, since a redraw between a finger's
  // down and up swallows the tap (what is made offline, a record played by hand, is typed)
  if (app.status === "offline" && (status === "connecting" || status === "offline")) return;
  app.status = status;
  // revoked: the character's view and secrets leave the phone at once (net.js forgetDevice)
  if (status === "revoked" || status === "replaced") { app.fatal = t(status); app.vm = initialView(); forgetDevice(outbox); }
  // refused at open: a token the channel's key does not open gets a close, no error frame
  if (status === "refused" && !app.fatal) app.fatal = t("refused");
  schedule();
}

// ------------------------------------------------------------------ rendering

let pending = false;
function schedule() {
  if (pending) return;
  pending = true;
  setTimeout(() => { pending = false; render(); }, 0);
}

// Re-rendering replaces the DOM: what the user was typing, choosing or had unfolded
// survives it (by element id), so an event arriving mid-entry never eats a bid.
function keepInputs(root) {
  const kept = { values: {}, open: new Set() };
  root.querySelectorAll("input[id], select[id]").forEach((el) => { kept.values[el.id] = el.type === "checkbox" ? el.checked : el.value; });
  root.querySelectorAll("details[id][open]").forEach((el) => kept.open.add(el.id));
  return kept;
}

// Only what the user typed or chose is put back: a field still showing its default shows
// the new one (a bid box whose cap rose with a ticked ability offers the new cap).
function restoreInputs(kept) {
  for (const [id, value] of Object.entries(kept.values)) {
    const el = document.getElementById(id);
    if (!el || !(id in app.form)) continue;
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
  const focusedAt = focusedSelector();
  const kept = keepInputs(root);
  if (!app.token) {
    root.innerHTML = joinView();
  } else if (!app.viewer || app.fatal) {
    const open = app.fatal && app.canCreate
      ? `<p><button id="create-session" class="primary">${esc(t("open_this_session", app.session))}</button></p>` : "";
    root.innerHTML = header() + `<main class="wait"><p>${esc(app.fatal || t("connecting"))}</p>${open}</main>` + outboxView();
  } else {
    const view = isStoryteller() ? storytellerView() : app.viewer.role === "observer" ? observerView() : playerView();
    root.innerHTML = header() + view + outboxView() + noticesView();
  }
  restoreInputs(kept);
  document.body.classList.toggle("storyteller", !!isStoryteller());
  freezeOverlay(focusedAt);
  nudge();
  if (focused) {
    const el = document.getElementById(focused);
    if (el) el.focus();
  }
}

// The header names the session (a storyteller may run two, in two tabs), says honestly
// whether the server is heard and how many commands wait, and holds the language switch.
// One line at 360 px: while commands wait unsent, the turn (which the phone cannot hear
// advance then) gives its place to their count.
function header() {
  const waiting = app.queued.length;
  const { label, note } = connText(app.status, waiting);
  const who = isStoryteller() ? t("storyteller") : (me() ? nameOf(me()) : "");
  const session = app.vm.session.name || (isStoryteller() ? app.session : "");
  const other = lang === "fr" ? "en" : "fr";
  return `<header class="bar">
    <span class="who">${esc(who)}${session ? ` · <span class="session-name" data-testid="session-name" title="${esc(t("session"))}">${esc(session)}</span>` : ""}</span>
    ${waiting && app.status !== "online" ? "" : `<span class="clock">${esc(t("turn"))} ${app.vm.session.turn}</span>`}
    <span id="conn" class="conn ${app.status}" role="status" aria-live="polite" data-testid="conn" data-queued="${waiting}"
      aria-label="${esc(note ? `${note} · ${label}` : label)}"><span class="dot" aria-hidden="true"></span><span class="label">${esc(label)}</span></span>
    <button class="lang" data-act="lang" data-lang="${other}" data-testid="lang-switch" lang="${other}" aria-label="${esc(t("lang_switch"))}">${other.toUpperCase()}</button>
  </header>${note ? `<p class="conn-note" data-testid="conn-note">${esc(note)}</p>` : ""}${alertsView()}`;
}

// A browser lets a page vibrate only after the player has touched it once: until then,
// ask for that touch (an incoming challenge or a Time Out would otherwise buzz nothing).
// Asked once per page load, whatever the browser kept across a reload (userActivation
// is not the same from one browser to the next): one tap anywhere answers it.
function alertsView() {
  if (!app.viewer || isStoryteller() || app.viewer.role === "observer" || !("vibrate" in navigator)) return "";
  if (app.touched) return "";
  return `<button class="alerts" data-act="alerts" data-testid="enable-alerts">${esc(t("alerts_enable"))}</button>`;
}

function freezeOverlay(focusedAt = null) {
  const overlay = $("#freeze");
  const venue = !!app.vm.session.venueFrozen;
  const frozen = !!app.viewer && !isStoryteller() && (app.viewer.role === "observer" ? app.vm.session.frozen || venue : isFrozenFor(app.vm, me()));
  overlay.hidden = !frozen;
  overlay.dataset.scope = venue ? "venue" : "session";
  $("#freeze-title").textContent = t("freeze");
  $("#freeze-help").textContent = venue ? `${t("freeze_venue_help")} ${t("freeze_help")}` : t("freeze_help");
  document.body.classList.toggle("frozen", frozen);
  freezeCall(frozen && app.viewer.role === "player"); // a safety call, from the TIME OUT screen (desk.js)
  if (frozen && !app.frozenBefore) {
    app.focusBefore = focusedAt;
    vibrate([400, 150, 400]);
    cue(t("freeze"), app.touched);
    overlay.focus(); // screen readers announce the Time Out at once
  }
  // the page behind the Time Out takes no focus and no tap; once resumed, focus goes back
  $("#app").inert = frozen;
  if (!frozen && app.frozenBefore) refocus(app.focusBefore);
  app.frozenBefore = frozen;
}

// Where focus was, said so that it survives a redraw (by id, or by test id).
function focusedSelector() {
  const el = document.activeElement;
  if (!el || el === document.body) return null;
  if (el.id) return `#${CSS.escape(el.id)}`;
  return el.dataset && el.dataset.testid ? `[data-testid="${CSS.escape(el.dataset.testid)}"]` : null;
}

function refocus(selector) {
  const el = selector && document.querySelector(selector);
  if (el) el.focus();
}

// A challenge that waits for this player's answer buzzes the phone once.
function nudge() {
  if (!app.viewer || isStoryteller() || !me()) return;
  const waiting = new Set(myChallenges().filter((c) => myMove(c)).map((c) => `${c.id}:${c.round}:${c.status}`)
    .concat(callsForMe().map((w) => `roll:${w.id}`)) // ACT-12: an opposed roll to answer
    .concat(handWaiting())); // a challenge played by hand to confirm or dispute
  for (const key of waiting) if (!app.waitingBefore.has(key)) { vibrate(200); cue(t("cue_your_move"), app.touched); break; }
  app.waitingBefore = waiting;
  keepAwake(myChallenges().length > 0);
}

// ---- player
function outboxView() {
  if (!app.queued.length) return "";
  return `<section class="card outbox" aria-labelledby="h-ob"><h2 id="h-ob">${esc(t("outbox"))}</h2><ul>
    ${app.queued.map((e) => `<li data-testid="queued" data-command="${esc(e.command.type)}">${esc(commandName(e.command.type))} ${esc(e.command.choice ? t(e.command.choice) : e.command.value ?? "")} <span class="badge">${esc(t("queued"))}</span></li>`).join("")}
  </ul></section>`;
}

function noticesView() {
  return `<div class="notices" role="alert">${app.notices.map((n) =>
    `<p class="notice ${n.kind}" data-testid="notice-${n.kind}"><span>${esc(n.kind === "reject" ? `${t("rejected")}: ${n.text}` : n.text)}</span>
      <button class="dismiss" data-act="dismiss" data-notice="${esc(n.id)}" data-testid="notice-dismiss" aria-label="${esc(t("dismiss"))}">×</button></p>`).join("")}</div>`;
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
  // a storyteller's dice form names the character it rolls for (storyteller.js)
  const character = el.dataset.character || me();
  switch (act) {
    // a group's throw names its round (the group's record has none of its own)
    case "throw": return { type: "throw", character, challenge: ch, round: el.dataset.round ? num(el.dataset.round) : c.round, choice: el.dataset.choice };
    case "st-throw": return { type: "throw", character: el.dataset.side, challenge: ch, round: el.dataset.round ? num(el.dataset.round) : c.round, choice: el.dataset.choice || null };
    case "bid": case "answer": return { type: "bid", character, challenge: ch, round: c.round, value: num(data.get("value")), abilities: data.getAll("ability") };
    case "retest": return { type: "retest", character, challenge: ch, source: data.get("source") };
    case "overbid": return { type: "overbid", character, challenge: ch, value: num(data.get("value")), abilities: data.getAll("ability") };
    case "concede": return { type: "concede", character, challenge: ch };
    case "accept": return { type: "accept", character, challenge: ch };
    case "challenge": {
      const kind = data.get("kind") || "classic";
      if (kind === "simple" || kind === "complex") return { type: "challenge", character, kind, tests: num(data.get("tests")) || 1 };
      // ticked others make it a group challenge (MET-1): one initiator against all of them
      const defenders = [...new Set([data.get("defender"), ...data.getAll("more")])];
      if (defenders.length > 1) return { type: "challenge", character, kind: "classic", defenders, attribute: data.get("attribute"), abilities: data.getAll("abilities") };
      return { type: "challenge", character, kind: "classic", defender: data.get("defender"), attribute: data.get("attribute"), abilities: data.getAll("abilities"), mutual: !!data.get("mutual") };
    }
    case "retest_cancel": return { type: "retest", character, challenge: ch, source: data.get("source"), cancels: true };
    case "roll_pool": return { type: "roll_pool", character, attribute: data.get("attribute") || null, skill: data.get("skill") || null, difficulty: num(data.get("difficulty")), visibility: data.get("visibility") || "open" };
    case "rouse": return { type: "rouse", character, visibility: data.get("visibility") || "open" };
    case "willpower": return { type: "willpower_reroll", character, roll: el.dataset.roll, strategy: data.get("strategy") || "reroll_failures" };
    case "roll_action": case "act_answer": case "act_resume": return actionCommand(act, el, data, character);
    case "freeze": return el.dataset.scene ? { type: "freeze", scope: "scene", scene: el.dataset.scene } : { type: "freeze", scope: el.dataset.scope || "session" };
    case "resume": return el.dataset.scene ? { type: "resume", scope: "scene", scene: el.dataset.scene } : { type: "resume", scope: el.dataset.scope || "session" };
    case "open_scene": { const name = data.get("name") || ""; return { type: "open_scene", scene: `s-${uuid4().slice(0, 8)}`, name }; }
    case "st-challenge": {
      const kind = data.get("kind");
      const target = data.get("target");
      const antagonist = (data.get("antagonist") || "").trim() || "antagonist";
      if (kind === "simple" || kind === "complex") return { type: "challenge", kind, character: target, tests: num(data.get("tests")) || 1 };
      // the antagonist's own abilities that apply (it has no sheet here: MET-3, MET-15)
      const abilities = (data.get("abilities") || "").split(",").map((a) => a.trim()).filter(Boolean);
      // an antagonist against several characters at once: a group challenge (MET-1), classic
      // or a static test of each of them against one difficulty (MET-10)
      const defenders = [...new Set([target, ...data.getAll("more")])];
      const base = { type: "challenge", kind, character: antagonist, attribute: data.get("attribute"), abilities,
        ...(defenders.length > 1 ? { defenders } : { defender: target }) };
      return kind === "static" ? { ...base, difficulty: num(data.get("difficulty")) || 0, tests: num(data.get("tests")) || 1 } : base;
    }
    case "st-bid": return { type: "bid", character: el.dataset.side, challenge: ch, round: c.round, value: num(data.get("value")) };
    case "st-accept": return { type: "accept", character: el.dataset.side, challenge: ch };
    case "st-retest": return { type: "retest", character: el.dataset.side, challenge: ch, source: data.get("source") };
    case "st-retest-cancel": return { type: "retest", character: el.dataset.side, challenge: ch, source: data.get("source"), cancels: true };
    case "close_window": return { type: "close_window", challenge: ch };
    case "overrule": return { type: "overrule", challenge: ch, winner: data.get("winner") };
    case "cancel": return { type: "cancel_challenge", challenge: ch };
    case "settle_opposition": return { type: "settle_opposition", roll: el.dataset.roll, outcome: el.dataset.outcome, reason: app.form["stuck-reason"] || "" };
    case "cancel_action": return { type: "cancel_action", roll: el.dataset.roll, reason: app.form["stuck-reason"] || "" };
    case "next_turn": return { type: "next_turn" };
    case "close_session": return { type: "close_session" };
    case "out_of_game": return { type: "out_of_game", character };
    case "back_in_game": return { type: "back_in_game", character };
    case "skip_time": return { type: "skip_time", seconds: num(data.get("minutes")) * 60 };
    case "set_hunger": return { type: "set_hunger", character: el.dataset.character, hunger: num(data.get("hunger")) };
    case "apply_modifier": return { type: "apply_modifier", character: el.dataset.character, value: num(data.get("value")), duration: num(data.get("duration")), unit: "turns" };
    // played by hand: handplay.js; announcements, countdowns, calls: desk.js
    default: return handCommand(act, el, data, character) || deskCommand(act, el, data, character);
  }
}

// The printable join sheet (POST /sessions/{s}/join-sheet through the sealed channel:
// its fresh join links never cross the network readable): the page comes back as HTML
// and opens from a blob URL in a new tab. The tab is opened during the tap itself, before the fetch, so popup blockers allow it.
async function joinSheet(revoke, character) {
  const tab = window.open("", "_blank");
  const fail = (text) => {
    if (tab) tab.close();
    app.notices.push({ id: uuid4(), kind: "reject", text });
    schedule();
  };
  let res;
  try {
    res = await sealedFetch(`/sessions/${encodeURIComponent(app.session)}/join-sheet`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ revoke_previous: !!revoke, lang, ...(character ? { characters: [character] } : {}) }),
    }, app.token);
  } catch (err) {
    fail(t("offline_short"));
    return;
  }
  if (!res.ok) { fail(`${res.status} ${await res.text()}`); return; }
  const url = URL.createObjectURL(new Blob([await res.text()], { type: "text/html" }));
  app.joinSheetUrl = url; // shown as a link too, for a blocked popup
  if (tab) tab.location.href = url;
  schedule();
}

function handle(ev, el) {
  const what = el.dataset.act;
  if (what === "join") {
    const link = new FormData(el).get("link") || "";
    const hash = link.includes("#") ? link.slice(link.indexOf("#")) : `#join=${link}`;
    start({ hash, pathname: location.pathname, search: location.search });
    return;
  }
  if (what === "join-sheet") { joinSheet(app.form["sheet-revoke"] === "1", app.form["sheet-for"] || ""); return; }
  if (what === "devices") { loadDevices(schedule); return; }
  if (what === "revoke-device") { revokeDevice(el.dataset.grant, schedule); return; }
  if (what === "take_call_elsewhere") { takeElsewhere(el, schedule); return; }
  if (what === "lang") { localStorage.setItem(LANG_KEY, el.dataset.lang); keepForm(); location.reload(); return; }
  if (what === "alerts") { app.touched = true; vibrate(60); schedule(); return; }
  if (what === "dismiss") { dismiss(el.dataset.notice); return; }
  const data = el.tagName === "FORM" ? new FormData(el) : new FormData();
  const command = commandFor(what, el, data);
  if (!command) return;
  // a player's challenge started: its form folds away (its card shows up above); the
  // storyteller's stays unfolded for the next antagonist
  if (what === "challenge") {
    const details = el.closest("details");
    if (details) details.open = false;
  }
  const question = confirmFor(what, el, command);
  if (question) ask(question, () => act(command));
  else act(command);
}

document.addEventListener("click", (ev) => {
  if (ev.target.closest("#create-session")) {
    // a storyteller opens the session its link names: hello again, saying create
    Object.assign(app, { create: true, fatal: null, canCreate: false });
    connection.stopped = false;
    connection.now();
    schedule();
    return;
  }
  const el = ev.target.closest("button[data-act]");
  if (!el || el.closest("form[data-act]") && el.type === "submit") return;
  ev.preventDefault();
  if (el.disabled) return;
  handle(ev, el);
});

// the first tap or key of this page load, wherever it lands, lets the phone vibrate: the
// banner goes after the click has reached its target (never under a finger mid-tap)
for (const type of ["click", "keydown"]) {
  // the banner alone goes: a whole re-render here would come before the tapped element's
  // own effects (a <details> toggled by this very tap would be drawn open again)
  document.addEventListener(type, () => {
    if (app.touched) return;
    app.touched = true;
    const banner = document.querySelector("[data-testid=enable-alerts]");
    if (banner) setTimeout(() => banner.remove(), 0);
  }, true);
}

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
  if (el.dataset && el.dataset.form) {
    app.form[el.dataset.form] = el.type === "checkbox" ? (el.checked ? "1" : "") : el.value;
    schedule();
  }
});

// A language switch reloads the page: what its forms held comes back with it (this tab only).
const FORM_KEY = "conteur.form";
function keepForm() {
  try { sessionStorage.setItem(FORM_KEY, JSON.stringify(app.form)); } catch (err) { /* private mode */ }
}
function takeForm() {
  try {
    const kept = JSON.parse(sessionStorage.getItem(FORM_KEY) || "null");
    sessionStorage.removeItem(FORM_KEY);
    if (kept && typeof kept === "object") app.form = kept;
  } catch (err) { /* nothing kept */ }
}

// ------------------------------------------------------------------ start

function wsUrl() {
  return `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws`;
}

async function start(loc = location) {
  const { token, session, fresh } = takeJoin(loc);
  app.token = token;
  app.session = session;
  if (!token) { render(); return; }
  await outbox.open(joinKey());
  if (fresh) await outbox.clearEvents(); // another character on this device
  app.queued = await outbox.all();
  // What this device already holds: shown at once, even without network
  app.vm = initialView();
  app.lastSeq = 0;
  app.lastEvent = null;
  for (const { seq, event } of await outbox.events()) {
    applyEvent(app.vm, seq, event);
    app.lastSeq = seq;
    app.lastEvent = event;
  }
  try { app.viewer = JSON.parse(localStorage.getItem(viewerKey()) || "null"); } catch (err) { app.viewer = null; }
  if (connection) connection.stop();
  connection = new Connection({
    url: wsUrl(),
    hello,
    onFrame,
    onStatus,
    open: (url) => new SealedSocket(url, app.token),
    onUnknown: () => { const link = fallBackToLink(); if (link) app.token = link; return !!link; },
  });
  app.net = connection; // the browser tests read its message count
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

takeForm();
start();

// The storyteller's desk on every screen (events/desk.py, fold.js deskView): announcements,
// named countdowns and calls for a storyteller. The tablet sends them and runs the call
// queue; a phone shows what concerns it and calls; the wall shows announcements and clocks.
//
// A countdown in minutes ends at a time of the server's clock: the page sets its own by the
// server's (app.skew, from each pong), so a phone whose clock is off still shows the right
// time left; the figures tick every second in place, without redrawing the page.

import { deskView } from "./fold.js";
import { app, t, esc, me, nameOf, refusal } from "./ui.js";
import { sealedFetch } from "./channel.js";
import { uuid4 } from "./net.js";
import { cue, vibrate } from "./cues.js";

const SHOWN = 3; // announcements a phone or the wall shows, newest first
const KINDS = ["safety", "ruling", "question"]; // the queue's order
const CALL_TEXT = 200; // events/desk.py MAX_CALL_TEXT
const ANNOUNCE_TEXT = 280; // events/desk.py MAX_TEXT

const serverNow = () => (Date.now() + (app.skew || 0)) / 1000;

// ---- countdowns, on every screen

function left(c) {
  if (c.paused) return c.remaining;
  if (c.unit === "turns") return Math.max(0, (c.endsTurn ?? 0) - app.vm.session.turn);
  return Math.max(0, (c.endsAt ?? 0) - serverNow());
}

function clockText(c) {
  const n = left(c);
  if (c.unit === "turns") return t("countdown_turns_left", Math.round(n));
  const s = Math.ceil(n);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

function countdownLine(c, controls) {
  const n = left(c);
  const state = c.paused ? "paused" : n > 0 ? "running" : "done";
  return `<li class="countdown ${state}" data-testid="countdown" data-clock="${esc(c.id)}" data-state="${state}" data-scope="${esc(c.scope || "session")}">
    ${scopeBadge(c)}<span class="countdown-label">${esc(c.label)}</span>
    <span class="countdown-left" data-countdown="${esc(c.id)}" role="timer" aria-live="off">${esc(clockText(c))}</span>
    ${c.paused ? `<span class="badge">${esc(t("countdown_paused_badge"))}</span>` : n > 0 ? "" : `<span class="badge warn">${esc(t("countdown_done"))}</span>`}
    ${controls ? countdownControls(c, state) : ""}</li>`;
}

// The venue's countdown is changed for the whole venue (every session's copy at once).
function countdownControls(c, state) {
  const id = esc(c.id);
  const reach = `data-clock="${id}" data-scope="${c.scope === "venue" ? "venue" : "session"}"`;
  const pause = state === "running" ? `<button data-act="countdown_pause" ${reach} data-testid="countdown-pause">${esc(t("countdown_pause"))}</button>` : "";
  const resume = state === "paused" ? `<button data-act="countdown_resume" ${reach} data-testid="countdown-resume">${esc(t("countdown_resume"))}</button>` : "";
  return `<span class="row wrap">${pause}${resume}<button class="danger" data-act="countdown_cancel" ${reach} data-testid="countdown-cancel">${esc(t("countdown_cancel"))}</button></span>`;
}

// A countdown's reach, as an announcement's: the venue's or a scene's says so.
function scopeBadge(x) {
  if (x.scope === "venue") return `<span class="badge">${esc(t("announce_venue_badge"))}</span> `;
  if (x.scope === "scene") return `<span class="badge">${esc(app.vm.scenes[x.scene]?.name || x.scene)}</span> `;
  return "";
}

// A phone shows its session's countdowns, the venue's and its own scene's; the wall and
// the tablet every one.
function countdownsList(controls, filter = () => true) {
  const all = Object.values(deskView(app.vm).countdowns).filter(filter);
  if (!all.length) return "";
  return `<ul class="countdowns" data-testid="countdowns">${all.map((c) => countdownLine(c, controls)).join("")}</ul>`;
}

setInterval(() => {
  if (!app.vm) return;
  for (const el of document.querySelectorAll("[data-countdown]")) {
    const c = app.vm.desk && app.vm.desk.countdowns[el.dataset.countdown];
    if (c) el.textContent = clockText(c);
  }
  showWindows();
}, 1000);

// ---- MET-16: a retest or overbid window closes by itself after accept_timeout; the
// server's timers say when (GET /sessions/{s}/windows, this player's own challenges), asked
// again whenever a window of this page opens or moves on. Its last seconds are told beyond
// the figures: the line says so in words with an hourglass and a dashed frame, and the
// player whose move it is gets the cue banner (and a tone or a buzz where allowed), once.

const SOON = 10; // seconds left from which a window is "closing soon"
let windows = { key: null, closes: {} };
const cued = new Set(); // the windows whose closing was told, by windowKey

function windowKey(c) {
  return `${c.id}:${c.round}:${c.status}`;
}

async function fetchWindows(key) {
  windows.key = key;
  try {
    const res = await sealedFetch(`/sessions/${encodeURIComponent(app.session)}/windows`, {}, app.token);
    if (!res.ok) return;
    const body = await res.json();
    if (windows.key !== key) return;
    if (typeof body.now === "number") app.skew = body.now * 1000 - Date.now();
    windows.closes = Object.fromEntries((body.windows || []).map((w) => [w.challenge, w]));
    showWindows();
  } catch (err) { /* offline: no countdown, the server closes it all the same */ }
}

function secondsLeft(id) {
  const w = windows.closes[id];
  return w ? Math.max(0, Math.ceil(w.closes_at - serverNow())) : null;
}

const isSoon = (s) => s !== null && s <= SOON;

function windowText(id) {
  const s = secondsLeft(id);
  if (s === null) return "";
  return t(isSoon(s) ? "window_closes_soon" : "window_closes_in", `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`);
}

// Each window line in place (its text, whether it closes soon), without a redraw.
function showWindows() {
  for (const el of document.querySelectorAll("[data-window]")) {
    el.textContent = windowText(el.dataset.window);
    const soon = isSoon(secondsLeft(el.dataset.window));
    el.dataset.soon = String(soon);
    if (soon && el.dataset.mine === "true" && !cued.has(el.dataset.key)) {
      cued.add(el.dataset.key);
      vibrate([200, 100, 200]);
      cue(t("cue_window_closing"), app.touched);
    }
  }
}

// The line under a challenge whose window is open: "closes by itself in 0:42". Its line is
// kept whether or not the time has come yet, so the buttons under it never move when it
// does (a tap aimed at Accept would land beside it). ``mine``: the move in it is this
// player's (the cue is for them).
export function windowClock(c, mine = false) {
  if (c.status !== "window" && c.status !== "overbid") return "";
  const open = Object.values(app.vm.challenges).filter((x) => x.status === "window" || x.status === "overbid").map(windowKey).sort().join(",");
  if (open !== windows.key && app.live) fetchWindows(open);
  return `<p class="window-clock" role="timer" data-window="${esc(c.id)}" data-key="${esc(windowKey(c))}" data-mine="${mine}"
    data-soon="${isSoon(secondsLeft(c.id))}" data-testid="window-clock">${esc(windowText(c.id))}</p>`;
}

// ---- announcements

// An announcement or a countdown: for this phone's session, the venue, or its scene.
function concernsMe(a) {
  if (a.scope !== "scene") return true;
  const mine = app.vm.characters[me()];
  return !!mine && mine.scene === a.scene;
}

function announcementsList(items, testid) {
  if (!items.length) return "";
  return `<ul class="announcements" data-testid="${testid}">${items.map((a) => `<li data-testid="announcement" data-scope="${esc(a.scope)}">
    ${scopeBadge(a)}${esc(a.text)}</li>`).join("")}</ul>`;
}

function latest(filter) {
  return deskView(app.vm).announcements.filter(filter).slice(-SHOWN).reverse();
}

// ---- the phone

export function deskNewsView() {
  const shown = latest(concernsMe);
  const clocks = countdownsList(false, concernsMe);
  return shown.length || clocks ? `<section class="card desk-news" aria-labelledby="h-news" data-testid="phone-desk">
    <h2 id="h-news">${esc(t("announcements"))}</h2>${announcementsList(shown, "phone-announcements")}${clocks}</section>` : "";
}

// A player's own calls and the form to make one. A safety call is said in plain words on
// the form, and once sent shows only as "your call", like the others: a screen others
// may glance at does not shout it.
export function callView() {
  const mine = Object.values(deskView(app.vm).calls).filter((c) => c.character === me());
  const open = mine.filter((c) => c.status !== "closed");
  const last = mine.filter((c) => c.status === "closed").slice(-1);
  const status = (c) => (c.status === "taken" ? t("call_taken_by", c.takenBy || t("storyteller")) : c.status === "closed" ? t("call_closed_state") : t("call_waiting"));
  const queued = app.queued.some((e) => e.command.type === "call_storyteller");
  return `<section class="card call" aria-labelledby="h-call" data-testid="call">
    <details id="call-details"><summary><h2 id="h-call">${esc(t("call_title"))}</h2></summary>
      <form data-act="call" class="row wrap" data-testid="call-form">
        <label>${esc(t("call_kind"))} <select id="call-kind" name="kind" data-testid="call-kind">${KINDS.map((k) => `<option value="${k}">${esc(t(`call_kind_${k}`))}</option>`).join("")}</select></label>
        <label>${esc(t("call_text"))} <input id="call-text" name="text" maxlength="${CALL_TEXT}" autocomplete="off" data-testid="call-text"></label>
        <button type="submit" class="primary" data-testid="call-send">${esc(t("call_send"))}</button>
      </form></details>
    ${queued ? `<p class="queued-move">${esc(t("call_send"))} <span class="badge">${esc(t("queued"))}</span></p>` : ""}
    ${open.concat(last).length ? `<ul class="my-calls" data-testid="my-calls">${open.concat(last).map((c) => `<li data-testid="my-call" data-call="${esc(c.id)}" data-status="${esc(c.status)}">${esc(t("call_yours"))} · ${esc(status(c))}</li>`).join("")}</ul>` : ""}
  </section>`;
}

// A player's phone during a Time Out is covered by the TIME OUT screen (app.js): a safety
// call is most needed then, so that screen holds the one button that makes one, and says
// when it was sent. Drawn into the overlay, which lives outside the re-rendered page.
export function freezeCall(frozen) {
  const overlay = document.getElementById("freeze");
  if (!overlay) return;
  let box = document.getElementById("freeze-call");
  if (!frozen || !me()) { if (box) box.remove(); return; }
  if (!box) {
    box = document.createElement("div");
    box.id = "freeze-call";
    overlay.firstElementChild.appendChild(box);
  }
  const open = Object.values(deskView(app.vm).calls).some((c) => c.character === me() && c.kind === "safety" && c.status !== "closed")
    || app.queued.some((e) => e.command.type === "call_storyteller" && e.command.kind === "safety");
  box.innerHTML = open
    ? `<p class="freeze-help" data-testid="freeze-call-sent">${esc(t("call_yours"))} · ${esc(t("call_waiting"))}</p>`
    : `<button class="primary" data-act="call_safety" data-testid="freeze-call">${esc(t("call_kind_safety"))}</button>`;
}

// ---- the wall

export function deskWallView() {
  const shown = latest(() => true);
  const clocks = countdownsList(false);
  if (!shown.length && !clocks) return "";
  return `<section class="card desk-wall" aria-labelledby="h-wall-news" data-testid="wall-desk"><h2 id="h-wall-news">${esc(t("announcements"))}</h2>
    ${announcementsList(shown, "wall-announcements")}${clocks}</section>`;
}

// ---- the tablet

// The safety calls no one has taken yet, at the top of every tablet of the venue: this
// session's with the button that takes them, then those waiting in the venue's other
// sessions (the server's venue_calls frame, app.venueCalls). Of another session a
// storyteller whose token opens it gets who called and why, and a button that takes the
// call in that session from here (takeElsewhere); one bound elsewhere gets only where,
// and a storyteller of that session takes it there.
export function safetyAlert() {
  const calls = Object.values(deskView(app.vm).calls).filter((c) => c.kind === "safety" && c.status === "waiting");
  const elsewhere = app.venueCalls || [];
  if (!calls.length && !elsewhere.length) return "";
  const there = (c) => c.call
    ? `<div class="row wrap"><p data-testid="safety-elsewhere" data-session="${esc(c.session)}"><b>${esc(t("safety_elsewhere", c.session_name || c.session, c.name || c.character))}</b>${c.text ? ` — ${esc(c.text)}` : ""}</p>
      <button class="primary" data-act="take_call_elsewhere" data-session="${esc(c.session)}" data-call="${esc(c.call)}" data-testid="safety-take-elsewhere"${taking.has(`${c.session}/${c.call}`) ? " disabled" : ""}>${esc(t("call_take"))}</button></div>`
    : `<p data-testid="safety-elsewhere" data-session="${esc(c.session)}"><b>${esc(t("safety_elsewhere_anonymous", c.session_name || c.session))}</b></p>`;
  return `<section class="safety-alert" role="alert" data-testid="safety-alert">${calls.map((c) => `<p><b>${esc(t("safety_alert", nameOf(c.character)))}</b>${c.text ? ` — ${esc(c.text)}` : ""}
    <button class="primary" data-act="take_call" data-call="${esc(c.id)}" data-testid="safety-take">${esc(t("call_take"))}</button></p>`).join("")}${elsewhere.map(there).join("")}</section>`;
}

const taking = new Set(); // "session/call" of the calls of other sessions this tablet is taking

// A safety call of another session, taken from this tablet: take_call is sent to that
// session (POST /sessions/{session}/commands, sealed), not over this page's socket, which
// is this session's. The server then drops it from every tablet's venue_calls; this
// tablet says it took the call and where to go, or why it could not.
export async function takeElsewhere(el, render) {
  const { session, call } = el.dataset;
  const key = `${session}/${call}`;
  if (!session || !call || taking.has(key)) return;
  const waiting = (app.venueCalls || []).find((c) => c.session === session && c.call === call) || {};
  const notice = (kind, text) => {
    const id = uuid4();
    app.notices.push({ id, kind, text });
    setTimeout(() => { app.notices = app.notices.filter((n) => n.id !== id); render(); }, kind === "reject" ? 6000 : 10000);
  };
  taking.add(key);
  render();
  try {
    const res = await sealedFetch(`/sessions/${encodeURIComponent(session)}/commands`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ id: uuid4(), command: { type: "take_call", call } }),
    }, app.token);
    const answer = await res.json().catch(() => ({}));
    if (!res.ok) notice("reject", answer.detail || `${res.status}`);
    else if (answer.type === "reject") notice("reject", refusal(answer));
    else notice("taken", t("safety_taken_elsewhere", waiting.name || waiting.character || call, waiting.session_name || session));
  } catch (err) {
    notice("reject", t("offline_short"));
  } finally {
    taking.delete(key);
    render();
  }
}

function queueOrder(a, b) {
  return KINDS.indexOf(a.kind) - KINDS.indexOf(b.kind) || a.seq - b.seq;
}

function callsQueue() {
  const all = Object.values(deskView(app.vm).calls);
  const open = all.filter((c) => c.status !== "closed").sort(queueOrder);
  const closed = all.length - open.length;
  const row = (c) => `<li class="call-row ${esc(c.kind)}" data-testid="st-call" data-call="${esc(c.id)}" data-kind="${esc(c.kind)}" data-status="${esc(c.status)}">
    ${c.kind === "safety" ? `<span class="badge warn" data-testid="safety-mark">${esc(t("call_kind_safety"))}</span>` : `<span class="badge">${esc(t(`call_kind_${c.kind}`))}</span>`}
    <b>${esc(nameOf(c.character))}</b>${c.text ? ` — ${esc(c.text)}` : ""}
    ${c.status === "taken" ? `<span class="muted" data-testid="call-taken-by">${esc(t("call_taken_by", c.takenBy || t("storyteller")))}</span>` : ""}
    <span class="row wrap">${c.status === "waiting" ? `<button class="primary" data-act="take_call" data-call="${esc(c.id)}" data-testid="call-take">${esc(t("call_take"))}</button>` : ""}
      <button data-act="close_call" data-call="${esc(c.id)}" data-testid="call-close">${esc(t("call_close"))}</button></span></li>`;
  return `<section class="card calls" aria-labelledby="h-calls" data-testid="st-calls"><h2 id="h-calls">${esc(t("calls_title"))}</h2>
    ${open.length ? `<ol class="call-queue" data-testid="call-queue">${open.map(row).join("")}</ol>` : `<p class="muted">${esc(t("calls_none"))}</p>`}
    ${closed ? `<p class="muted">${esc(t("calls_closed", closed))}</p>` : ""}</section>`;
}

// Whom an announcement or a countdown is for: the session, one open scene, the venue.
function scopeOptions(scenes) {
  return `<option value="session">${esc(t("announce_session"))}</option>
      ${scenes.map((s) => `<option value="scene:${esc(s.id)}">${esc(s.name)}</option>`).join("")}
      <option value="venue">${esc(t("announce_venue"))}</option>`;
}

function scoped(to) {
  return to.startsWith("scene:") ? { scope: "scene", scene: to.slice(6) } : { scope: to };
}

function announceForm(scenes) {
  return `<form data-act="announce" class="row wrap" data-testid="announce-form">
    <label>${esc(t("announce_text"))} <input id="announce-text" name="text" required maxlength="${ANNOUNCE_TEXT}" autocomplete="off" data-testid="announce-text"></label>
    <label>${esc(t("announce_to"))} <select id="announce-scope" name="scope" data-testid="announce-scope">
      ${scopeOptions(scenes)}</select></label>
    <button type="submit" class="primary" data-testid="announce-send">${esc(t("announce_send"))}</button></form>`;
}

function countdownForm(scenes) {
  return `<form data-act="countdown_start" class="row wrap" data-testid="countdown-form">
    <label>${esc(t("countdown_name"))} <input id="countdown-name" name="clock" required maxlength="64" autocomplete="off" data-testid="countdown-name"></label>
    <label>${esc(t("countdown_length"))} <input id="countdown-length" name="length" type="number" min="1" max="1000" value="10" data-testid="countdown-length"></label>
    <label>${esc(t("countdown_unit"))} <select id="countdown-unit" name="unit" data-testid="countdown-unit">
      <option value="minutes">${esc(t("minutes"))}</option><option value="turns">${esc(t("turns"))}</option></select></label>
    <label>${esc(t("countdown_to"))} <select id="countdown-scope" name="scope" data-testid="countdown-scope">${scopeOptions(scenes)}</select></label>
    <button type="submit" data-testid="countdown-start">${esc(t("countdown_start"))}</button></form>`;
}

export function deskTabletView() {
  const scenes = Object.values(app.vm.scenes).filter((s) => s.open);
  return `${callsQueue()}
    <section class="card desk" aria-labelledby="h-desk" data-testid="st-desk"><h2 id="h-desk">${esc(t("desk_title"))}</h2>
      ${announceForm(scenes)}
      ${announcementsList(latest(() => true), "st-announcements")}
      ${countdownForm(scenes)}
      ${countdownsList(true)}
    </section>`;
}

// ---- commands (app.js commandFor)

export function deskCommand(act, el, data, character) {
  switch (act) {
    case "announce": {
      const text = (data.get("text") || "").trim();
      const to = data.get("scope") || "session";
      if (!text) return null;
      el.reset();
      return { type: "announce", text, ...scoped(to) };
    }
    case "countdown_start": {
      const clock = (data.get("clock") || "").trim();
      const n = Number.parseInt(data.get("length"), 10);
      if (!clock || !(n >= 1)) return null;
      const to = scoped(data.get("scope") || "session");
      el.reset();
      return data.get("unit") === "turns" ? { type: "start_countdown", clock, turns: n, ...to } : { type: "start_countdown", clock, minutes: n, ...to };
    }
    case "countdown_pause": return { type: "pause_countdown", clock: el.dataset.clock, scope: el.dataset.scope || "session" };
    case "countdown_resume": return { type: "start_countdown", clock: el.dataset.clock, scope: el.dataset.scope || "session" };
    case "countdown_cancel": return { type: "cancel_countdown", clock: el.dataset.clock, scope: el.dataset.scope || "session" };
    case "call": {
      const command = { type: "call_storyteller", character, kind: data.get("kind") || "question", text: (data.get("text") || "").trim().slice(0, CALL_TEXT) };
      el.reset();
      const details = el.closest("details");
      if (details) details.open = false;
      return command;
    }
    case "call_safety": return { type: "call_storyteller", character, kind: "safety", text: "" };
    case "take_call": return { type: "take_call", call: el.dataset.call };
    case "close_call": return { type: "close_call", call: el.dataset.call };
    default: return null;
  }
}

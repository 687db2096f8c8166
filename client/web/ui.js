// What every view shares: the page's state, the translator, escaping, names, icons,
// stage words, and the die-by-die roll cards.

import { initialView, SEALED } from "./fold.js";
import { pickLang, translator } from "./i18n.js";
import { refusalReason } from "./messages.js";

// The device's own choice (the switch in the header, kept in localStorage) wins over the
// phone's language: a French group with English phones, and the other way round.
export const LANG_KEY = "conteur.lang";
function chosenLang() {
  try { return localStorage.getItem(LANG_KEY); } catch (err) { return null; }
}
export const lang = pickLang([chosenLang(), ...(navigator.languages && navigator.languages.length ? navigator.languages : [navigator.language])].filter(Boolean));
export const t = translator(lang);

export const app = {
  vm: initialView(),
  viewer: null, // {role, character, name}
  session: "",
  status: "connecting", // connecting | online | offline | refused | revoked | replaced
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
export const esc = (v) => String(v ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
export const $ = (sel) => document.querySelector(sel);
export function me() {
  return app.viewer && app.viewer.character;
}

// The connection badge's word and, when something is wrong, the sentence that says what.
// ``queued``: the commands waiting in the outbox, said beside the word: a pill that
// says Online while a throw waits in the outbox would hide it.
export function connText(status, queued = 0) {
  let label = { online: t("online"), connecting: t("connecting"), offline: t("offline_short"),
    refused: t("refused_short"), revoked: t("revoked_short"), replaced: t("replaced_short") }[status];
  if (queued && status !== "online") label = `${label} · ${t(queued === 1 ? "queued_one" : "queued_n", queued)}`;
  const note = { offline: offlineNote(), refused: t("refused"), revoked: t("revoked"), replaced: t("replaced") }[status] || "";
  return { label, note };
}

// Over plain HTTP no service worker keeps the app shell: a reload while the network is
// down shows the browser's error page, though the queue itself survives in storage.
function offlineNote() {
  return hasShell() ? t("offline") : `${t("offline")}. ${t("offline_reload")}`;
}

export function hasShell() {
  return !!(navigator.serviceWorker && navigator.serviceWorker.controller);
}

// What a refused command's notice says: in English the server's reason without its rule
// number; in another language what the rule it cites (or its code) asks, in that language.
export function refusal(frame) {
  return refusalReason(frame, lang) || t("refused_unsaid");
}

export function isStoryteller() {
  return app.viewer && app.viewer.role === "storyteller";
}

export function nameOf(id) {
  if (id === "storyteller") return t("storyteller");
  const c = app.vm.characters[id];
  return c ? c.name : id;
}

export const THROWS = ["rock", "paper", "scissors"];

// Inline SVG, not emoji: phones and kiosk browsers without an emoji font show boxes.
const svg = (body) => `<svg viewBox="0 0 48 48" width="40" height="40" aria-hidden="true" focusable="false" fill="none" stroke="currentColor" stroke-width="3" stroke-linejoin="round" stroke-linecap="round">${body}</svg>`;
export const ICON = {
  rock: svg('<path d="M10 30c-3-9 3-19 13-20 9-1 16 6 15 15-1 8-8 13-16 13-6 0-10-3-12-8z" fill="currentColor" fill-opacity=".25"/>'),
  paper: svg('<path d="M12 6h17l8 8v28H12z" fill="currentColor" fill-opacity=".15"/><path d="M29 6v8h8"/>'),
  scissors: svg('<circle cx="13" cy="35" r="6"/><circle cx="35" cy="35" r="6"/><path d="M17 30L36 6M31 30L12 6"/>'),
  bomb: svg('<circle cx="21" cy="29" r="13" fill="currentColor" fill-opacity=".25"/><path d="M30 19l5-5M35 14c2-4 6-4 8-2"/>'),
};
// ``viewer``: the character looking (none for a storyteller or a wall): "Your throw" is
// said only to a side that still has to throw.
export function stageText(c, viewer = null) {
  if (c.defenders && c.defenders.length) { // a group: how many of its pairs stand (MET-16)
    const pairs = c.pairs.map((p) => app.vm.challenges[p]).filter(Boolean);
    const standing = pairs.filter((p) => p.status === "resolved" || p.status === "cancelled").length;
    return c.status === "cancelled" ? t("cancelled") : `${t("group_settled")} ${standing}/${pairs.length}`;
  }
  const sides = [c.initiator, c.defender, c.tested];
  const mine = viewer && sides.includes(viewer) && !(viewer in c.throws);
  return {
    throwing: mine ? t("your_throw") : t("throwing"), bidding: t("bid"), window: `${t("winner")}: ${nameOf(c.winner)}`,
    overbid: t("overbid"), resolved: `${t("ended")} · ${t("winner")}: ${nameOf(c.winner)}`, cancelled: t("cancelled"),
  }[c.status] || c.status;
}

// The last reveal and the last bids, each marked with its round: on round 2 they are
// round 1's, history and not the state of play. The opponent's bid reaches a
// player sealed (MET-3: bids are told to a storyteller): said in words, never a bare "?".
export function revealedLine(c) {
  const parts = [];
  const earlier = (round) => round && round !== c.round ? `${t("round")} ${round}: ` : "";
  if (c.revealed) {
    const th = Object.entries(c.revealed.throws).map(([who, ch]) => `${esc(nameOf(who))} <span class="mini">${ICON[ch] || ""}</span> ${esc(t(ch))}`).join(" · ");
    parts.push(`${esc(earlier(c.revealed.round))}${th}${c.revealed.winner ? "" : ` — <b>${esc(t("tie"))}</b>`}`);
  }
  if (c.lastBids) {
    parts.push(esc(`${earlier(c.lastBids.round)}${t("bid")}: ${Object.entries(c.lastBids.bids).map(([who, v]) => `${nameOf(who)} ${v === SEALED ? t("bid_sealed") : v}`).join(" · ")}`));
  }
  const mine = c.throws[me()];
  if (c.status === "throwing" && mine && mine !== SEALED) parts.push(esc(t("you_threw", t(mine))));
  if (!parts.length) return "";
  const old = !(c.status === "throwing" && mine) && (!c.revealed || earlier(c.revealed.round)) && (!c.lastBids || earlier(c.lastBids.round));
  return `<p class="revealed${old ? " history" : ""}" data-testid="revealed"${old ? ' data-history="1"' : ""}>${parts.join(" — ")}</p>`;
}

export function rollsView(rolls) {
  if (!rolls.length) return "";
  return `<section class="card rolls" aria-label="${esc(t("dice"))}">${rolls.slice(-4).reverse().map(rollCard).join("")}</section>`;
}

function die(face, cls, label) {
  return `<span class="die ${cls}" role="img" aria-label="${esc(label)} ${esc(face)}">${esc(face)}</span>`;
}

// ACT-13's notation "Test (science, 2)" is for the log; a phone says it in words.
function rollLabel(r) {
  if (r.kind !== "action" || !r.characteristic) return r.label || "";
  return r.difficulty != null ? t("roll_label", r.characteristic, r.difficulty) : r.characteristic;
}

function rollCard(r) {
  let dice = "";
  let words = "";
  let explain = "";
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
      (r.signs || []).map((s) => `<span class="die dpm ${s === "+" ? "plus" : s === "-" ? "minus" : "blank"}${(r.net > 0 && s === "-") || (r.net < 0 && s === "+") ? " void" : ""}" role="img"
        aria-label="D+/- ${esc(s === "+" ? t("plus") : s === "-" ? t("minus") : t("blank"))}"${(r.net > 0 && s === "-") || (r.net < 0 && s === "+") ? ' data-void="1"' : ""}>${s === "-" ? "−" : s || "·"}</span>`).join("");
    words = `${r.success === true ? t("success") : r.success === false ? t("failure") : ""} — ${t(r.points === 1 || (lang === "fr" && r.points === 0) ? "point_one" : "points", r.points)}${r.difficulty != null ? ` / ${t("difficulty")} ${r.difficulty}` : ""}`;
    // ACT-6: the round D+/- dice count one way only; say which, beside them
    if ((r.signs || []).length) explain = `<p class="muted dpm-help" data-testid="dpm-help">${esc(t(r.net < 0 ? "dpm_malus" : "dpm_bonus"))}</p>`;
  }
  const ok = r.success === true ? "ok" : r.success === false ? "ko" : "";
  const secret = r.visibility === "secret" || r.visibility === "blind"
    ? ` <span class="badge" data-testid="roll-${esc(r.visibility)}">${esc(t(`vis_${r.visibility}`))}</span>` : "";
  // FAIR-2 on the phone, after close (player.js diceCheckView): verified, or the mismatch named
  const check = !r.check ? "" : r.check.ok ? ` <span class="badge verified" data-testid="roll-verified">✓ ${esc(t("check_verified"))}</span>`
    : `<p class="mismatch" data-testid="roll-mismatch">${esc(r.check.message)}</p>`;
  return `<article class="roll ${ok}" data-testid="roll-result" data-roll="${esc(r.id)}" data-visibility="${esc(r.visibility || "open")}"><p class="label">${esc(nameOf(r.character))} ${esc(rollLabel(r))}${secret}${r.check && r.check.ok ? check : ""}</p>
    <div class="dice-row">${dice}</div>${explain}<p class="words">${esc(words)}</p>${r.check && !r.check.ok ? check : ""}</article>`;
}

export function commandName(type) {
  const name = t(`cmd_${type}`);
  return name.startsWith("cmd_") ? type : name;
}


// Challenges played by hand while the app was unreachable (events/offline.py).
//
// Part of the phone app, not a page of its own: a record is a command like any move, so
// it goes to the same IndexedDB outbox (app.js act), is shown as waiting while the server
// is down, survives a reload, and is sent once on reconnect (the server deduplicates by
// the command's id). The opponent answers on its main page (Confirm / Dispute); the
// tablet marks a disputed record as needing a ruling and rules it. Only this viewer's own
// events are read: the other players never receive these records.

import { app, t, esc, me, nameOf } from "./ui.js";

// offline.html sends players here with ?hand: the record form opens at once
const OPEN_AT_START = new URLSearchParams(location.search).has("hand");

// This device's clock as ISO 8601 with its UTC offset: what the player saw on the phone.
export function localIso(date) {
  const pad = (n) => String(Math.abs(n)).padStart(2, "0");
  const off = -date.getTimezoneOffset();
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`
    + `${off >= 0 ? "+" : "-"}${pad(Math.trunc(off / 60))}:${pad(off % 60)}`;
}

const shortTime = (iso) => (iso || "").replace("T", " ").slice(0, 16);
const queuedOf = (type) => app.queued.filter((e) => e.command.type === type);
const answerQueued = (id) => app.queued.find((e) => ["confirm", "dispute"].includes(e.command.type) && e.command.record === id);

function records(filter) {
  return Object.values(app.vm.offline || {}).filter(filter).sort((a, b) => b.seq - a.seq);
}

// Who claims what: the recorder's winner, then the disputer's (with its reason).
function claims(r) {
  const lines = [t("hand_claim", nameOf(r.recorder), nameOf(r.claimed))];
  if (r.disputed) {
    const said = r.disputedWinner ? t("hand_claim", nameOf(r.opponent), nameOf(r.disputedWinner)) : t("hand_claim_none", nameOf(r.opponent));
    lines.push(r.dispute ? `${said} (${r.dispute})` : said);
  }
  return lines;
}

function statusText(r) {
  if (r.status === "recorded") return t("hand_waiting", nameOf(r.opponent));
  if (r.status === "confirmed") return t("hand_confirmed", nameOf(r.opponent));
  if (r.status === "disputed") return t("hand_disputed");
  return t("hand_ruled", nameOf(r.winner));
}

function recordLine(r) {
  const attr = r.attribute ? ` · ${t(r.attribute)}` : "";
  const when = r.playedAt ? ` · ${t("hand_played_at", shortTime(r.playedAt))}` : "";
  const account = r.account ? ` — “${r.account}”` : "";
  return `<p><b>${esc(t("hand_against", nameOf(r.recorder), nameOf(r.opponent)))}</b>${esc(attr + when + account)}</p>`;
}

// ---- the player's phone

// At the top of the main page: a record that waits for this player's answer.
export function handAnswerCards() {
  const id = me();
  return records((r) => r.opponent === id && r.status === "recorded").map((r) => {
    const queued = answerQueued(r.id);
    const body = queued
      ? `<p class="queued-move" data-testid="hand-answer-queued">${esc(t("hand_answer_queued", t(`cmd_${queued.command.type}`)))} <span class="badge">${esc(t("queued"))}</span></p>`
      : `<div class="row wrap">
          <button class="primary" data-act="hand_confirm" data-record="${esc(r.id)}" data-testid="hand-confirm">${esc(t("hand_confirm"))}</button>
        </div>
        <form data-act="hand_dispute" data-record="${esc(r.id)}" class="row wrap">
          <label>${esc(t("hand_reason"))} <input id="hand-reason-${esc(r.id)}" name="reason" autocomplete="off" data-testid="hand-reason"></label>
          <label class="check"><input type="checkbox" id="hand-iwon-${esc(r.id)}" name="iwon" checked data-testid="hand-iwon"> ${esc(t("hand_iwon"))}</label>
          <button type="submit" class="danger" data-testid="hand-dispute">${esc(t("hand_dispute"))}</button>
        </form>`;
    return `<section class="card hand-answer" data-testid="hand-answer" data-record="${esc(r.id)}" aria-labelledby="h-hand-${esc(r.id)}">
      <h2 id="h-hand-${esc(r.id)}">${esc(t("hand_ask", nameOf(r.recorder)))}</h2>
      ${recordLine(r)}
      <p data-testid="hand-claim">${esc(claims(r)[0])}</p>
      ${body}
    </section>`;
  }).join("");
}

function recordForm(c) {
  const others = Object.values(app.vm.characters).filter((o) => o.id !== c.id);
  const open = OPEN_AT_START && app.form.handOpened === undefined;
  if (open) app.form.handOpened = true;
  return `<details class="hand-record" id="hand-record" data-testid="hand-record"${open ? " open" : ""}>
    <summary>${esc(t("hand_record"))}</summary>
    <form data-act="hand_record">
      <p class="muted">${esc(t("hand_help"))}</p>
      <label>${esc(t("hand_opponent"))} <select name="opponent" id="hand-opponent" data-testid="hand-opponent">${others.map((o) =>
        `<option value="${esc(o.id)}">${esc(o.name)}</option>`).join("")}</select></label>
      <label>${esc(t("hand_attribute"))} <select name="attribute" id="hand-attribute"><option value="">${esc(t("hand_none"))}</option>${["physical", "social", "mental"].map((a) =>
        `<option value="${a}">${esc(t(a))}</option>`).join("")}</select></label>
      <label>${esc(t("hand_winner"))} <select name="winner" id="hand-winner" data-testid="hand-winner"><option value="me">${esc(t("hand_me"))}</option><option value="them">${esc(t("hand_them"))}</option></select></label>
      <label>${esc(t("hand_when"))} <input type="datetime-local" name="when" id="hand-when"></label>
      <label>${esc(t("hand_account"))} <input name="account" id="hand-account" autocomplete="off" data-testid="hand-account"></label>
      <button type="submit" class="primary" data-testid="hand-save">${esc(t("hand_save"))}</button>
    </form></details>`;
}

// The form, then this player's records: those still in the outbox first, then the
// server's, newest first, each with where it stands.
export function handSection(c) {
  const id = me();
  const waiting = queuedOf("record_offline_challenge").map((e) => {
    const cmd = e.command;
    const r = { recorder: id, opponent: cmd.opponent, attribute: cmd.attribute, playedAt: cmd.played_at, account: cmd.account };
    return `<li class="hand-row" data-testid="hand-row" data-queued="${esc(e.id)}">${recordLine(r)}
      <p>${esc(t("hand_claim", nameOf(id), nameOf(cmd.winner)))} · <span class="badge" data-testid="hand-status">${esc(t("hand_queued"))}</span></p></li>`;
  });
  const known = records((r) => r.recorder === id || r.opponent === id).map((r) =>
    `<li class="hand-row ${esc(r.status)}" data-testid="hand-row" data-record="${esc(r.id)}" data-status="${esc(r.status)}">${recordLine(r)}
      <p>${claims(r).map(esc).join(" · ")} · <span class="stage" data-testid="hand-status">${esc(statusText(r))}</span></p></li>`);
  const rows = waiting.concat(known);
  return `<section class="card hand" aria-labelledby="h-hand" data-testid="hand"><h2 id="h-hand">${esc(t("hand_title"))}</h2>
    ${recordForm(c)}
    ${rows.length ? `<ul class="hand-list" data-testid="hand-list">${rows.join("")}</ul>` : ""}
  </section>`;
}

// Records waiting for this player's answer: the phone buzzes once for each (app.js nudge).
export function handWaiting() {
  return records((r) => r.opponent === me() && r.status === "recorded" && !answerQueued(r.id)).map((r) => `hand:${r.id}`);
}

// ---- the storyteller's tablet

// Disputed records first, marked as needing a ruling, with both claims and a ruling for
// either side; records still waiting for the opponent's answer below them (a storyteller
// may rule those too: events/offline.py).
export function handRulingsView() {
  const open = records((r) => r.status === "disputed").concat(records((r) => r.status === "recorded"));
  const ruled = records((r) => r.status === "ruled");
  if (!open.length && !ruled.length) return "";
  return `<section class="card hand-rulings" aria-labelledby="h-hand-st" data-testid="st-hand"><h2 id="h-hand-st">${esc(t("hand_st_title"))}</h2>
    ${open.map((r) => {
      const key = `hand-rule-reason-${r.id}`;
      const mark = r.status === "disputed"
        ? `<span class="badge warn" data-testid="needs-ruling">${esc(t("hand_needs_ruling"))}</span>`
        : `<span class="muted">${esc(t("hand_st_waiting", nameOf(r.opponent)))}</span>`;
      return `<article class="hand-record ${esc(r.status)}" data-testid="st-hand-record" data-record="${esc(r.id)}" data-status="${esc(r.status)}">
        <h3>${esc(r.id)} · ${esc(t("hand_against", nameOf(r.recorder), nameOf(r.opponent)))} ${mark}</h3>
        ${recordLine(r)}
        <ul data-testid="st-hand-claims">${claims(r).map((line) => `<li>${esc(line)}</li>`).join("")}</ul>
        ${app.queued.some((e) => e.command.type === "rule_offline" && e.command.record === r.id)
          ? `<p class="queued-move">${esc(t("cmd_rule_offline"))} <span class="badge">${esc(t("queued"))}</span></p>` : `<div class="row wrap">
          <label>${esc(t("hand_rule_reason"))} <input id="${esc(key)}" autocomplete="off" data-testid="hand-rule-reason"></label>
          ${[r.recorder, r.opponent].map((w) => `<button data-act="hand_rule" data-record="${esc(r.id)}" data-winner="${esc(w)}" data-testid="hand-rule-${esc(w)}">${esc(t("hand_rule_win", nameOf(w)))}</button>`).join("")}
        </div>`}
      </article>`;
    }).join("")}
    ${ruledView(ruled)}
  </section>`;
}

// Records already ruled stay on the tablet, newest first: each says who the ruling gave
// the win to, and a storyteller may rule it again for the other side (a mistaken tap, a
// witness heard later); the new ruling names the one it replaces (offline.ruled's
// previous_winner). Folded away: the open ones above are the tablet's work.
function ruledView(ruled) {
  if (!ruled.length) return "";
  return `<details class="hand-ruled" id="hand-ruled" data-testid="st-hand-ruled"><summary>${esc(t("hand_ruled_title", ruled.length))}</summary>
    ${ruled.map((r) => {
      const other = r.winner === r.recorder ? r.opponent : r.recorder;
      const key = `hand-rule-reason-${r.id}`;
      const queued = app.queued.some((e) => e.command.type === "rule_offline" && e.command.record === r.id);
      return `<article class="hand-record ruled" data-testid="st-hand-ruled-record" data-record="${esc(r.id)}" data-winner="${esc(r.winner)}">
        <h3>${esc(r.id)} · ${esc(t("hand_against", nameOf(r.recorder), nameOf(r.opponent)))}</h3>
        <p>${esc(statusText(r))}${r.ruling ? ` (${esc(r.ruling)})` : ""}</p>
        ${queued ? `<p class="queued-move">${esc(t("cmd_rule_offline"))} <span class="badge">${esc(t("queued"))}</span></p>` : `<div class="row wrap">
          <label>${esc(t("hand_rule_reason"))} <input id="${esc(key)}" autocomplete="off" data-testid="hand-rule-reason"></label>
          <button data-act="hand_rule" data-record="${esc(r.id)}" data-winner="${esc(other)}" data-testid="hand-rerule">${esc(t("hand_rerule", nameOf(other)))}</button>
        </div>`}
      </article>`;
    }).join("")}</details>`;
}

// The question a ruling asks first (confirm.js): it names the winner, and the record.
export function ruleQuestion(command) {
  const r = (app.vm.offline || {})[command.record];
  const against = r ? t("hand_against", nameOf(r.recorder), nameOf(r.opponent)) : command.record;
  const again = r && r.status === "ruled";
  return {
    text: t(again ? "confirm_rerule" : "confirm_rule", nameOf(command.winner), against),
    yes: t("confirm_rule_yes", nameOf(command.winner)),
    key: "hand_rule",
    undoable: true,
  };
}

// ---- commands (app.js commandFor)

export function handCommand(act, el, data, character) {
  switch (act) {
    case "hand_record": {
      const opponent = data.get("opponent");
      if (!opponent) return null;
      const when = data.get("when");
      const command = {
        type: "record_offline_challenge", character, opponent,
        winner: data.get("winner") === "them" ? opponent : character,
        played_at: localIso(when ? new Date(when) : new Date()), account: (data.get("account") || "").trim(),
      };
      if (data.get("attribute")) command.attribute = data.get("attribute");
      el.reset(); // a second record starts blank (the re-render keeps what the inputs hold)
      return command;
    }
    case "hand_confirm": return { type: "confirm", character, record: el.dataset.record };
    case "hand_dispute": {
      const command = { type: "dispute", character, record: el.dataset.record, reason: (data.get("reason") || "").trim() };
      if (data.get("iwon")) command.winner = character;
      return command;
    }
    case "hand_rule": {
      const reason = document.getElementById(`hand-rule-reason-${el.dataset.record}`);
      return { type: "rule_offline", record: el.dataset.record, winner: el.dataset.winner, reason: reason ? reason.value.trim() : "" };
    }
    default: return null;
  }
}

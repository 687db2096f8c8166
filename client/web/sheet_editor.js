// The storyteller's sheet editor: a character's whole sheet as JSON, amended in play
// (amend_sheet: a wound's malus, a power that forbids initiating, traits lost or regained,
// an Expertise gained). The server checks it as it checks add_character's and says why
// it refuses; that sentence is shown under the editor.
//
// Sent over HTTP (POST /sessions/{s}/commands), not through the outbox: the answer comes
// back in the same exchange, and an amendment is never queued offline, since a whole sheet
// written against an old view would overwrite any amendment made since. The draft lives
// in app.form (app.js keeps every input's value by id), so events arriving while the
// storyteller types never eat the draft.

import { rulesetOf } from "./fold.js";
import { app, t, esc } from "./ui.js";
import { uuid4 } from "./net.js";
import { sealedFetch } from "./channel.js";

const KEY = "sheet-char";
const draftId = (id) => `sheet-json-${id}`;
const reasonId = (id) => `sheet-reason-${id}`;

function current(c) {
  return JSON.stringify(c.sheet || { kind: rulesetOf(app.vm) }, null, 2);
}

export function sheetEditor(chars) {
  if (!chars.length) return "";
  queueMicrotask(restoreCaret); // after app.js has replaced the DOM and restored the focus
  const c = chars.find((o) => o.id === app.form[KEY]) || chars[0];
  const id = esc(c.id);
  return `<details class="sheet-editor" id="sheet-editor" data-testid="sheet-editor" data-character="${id}">
    <summary>${esc(t("sheet_amend"))}</summary>
    <form data-sheet-editor="${id}">
      <div class="row wrap"><label>${esc(t("character"))} <select id="${KEY}" data-form="${KEY}" data-testid="sheet-character">${chars.map((o) =>
        `<option value="${esc(o.id)}" ${o.id === c.id ? "selected" : ""}>${esc(o.name)}</option>`).join("")}</select></label></div>
      <div><label for="${draftId(id)}">${esc(t("sheet_json"))}</label></div>
      <textarea id="${draftId(id)}" name="sheet" rows="12" spellcheck="false" data-testid="sheet-json"
        style="width:100%;font-family:ui-monospace,monospace">${esc(app.form[draftId(c.id)] ?? current(c))}</textarea>
      <label>${esc(t("sheet_reason"))} <input id="${reasonId(id)}" name="reason" maxlength="200" data-testid="sheet-reason"
        value="${esc(app.form[reasonId(c.id)] ?? "")}"></label>
      <div class="row wrap">
        <button type="submit" class="primary" data-testid="sheet-send">${esc(t("sheet_send"))}</button>
        <button type="button" data-sheet-reset="${id}" data-testid="sheet-reset">${esc(t("sheet_reset"))}</button>
      </div>
      <div data-testid="sheet-status" aria-live="polite">${statusView(c.id)}</div>
    </form></details>`;
}

function statusView(character) {
  const s = app.sheetStatus;
  if (!s || s.character !== character) return "";
  return `<p class="notice ${s.ok ? "ok" : "reject"}" data-testid="${s.ok ? "sheet-amended" : "sheet-rejected"}">${esc(s.text)}</p>`;
}

// The status shows at once, and stays across re-renders (it is in app.sheetStatus).
function show(character, ok, text) {
  app.sheetStatus = text ? { character, ok, text } : null;
  const box = document.querySelector(`form[data-sheet-editor="${CSS.escape(character)}"] [data-testid=sheet-status]`);
  if (box) box.innerHTML = statusView(character);
}

function forgetDraft(character) {
  delete app.form[draftId(character)];
  delete app.form[reasonId(character)];
}

// A sheet that does not decode (a field of the wrong type) is a 400 whose details name
// the field: "Expected `int`, got `str` (sheet.physical)".
async function refusal(res) {
  const text = await res.text();
  try {
    const body = JSON.parse(text);
    const extra = (Array.isArray(body.extra) ? body.extra : []).map((e) =>
      `${e.message || ""}${e.key ? ` (${String(e.key).replace(/^command\./, "")})` : ""}`);
    return extra.length ? t("sheet_invalid", extra.join("; ")) : body.detail || text;
  } catch (err) {
    return `${res.status} ${text}`;
  }
}

async function amend(form) {
  const character = form.dataset.sheetEditor;
  const data = new FormData(form);
  let sheet;
  try {
    sheet = JSON.parse(data.get("sheet"));
  } catch (err) {
    show(character, false, t("sheet_not_json", err.message));
    return;
  }
  if (!sheet || typeof sheet !== "object" || Array.isArray(sheet)) {
    show(character, false, t("sheet_not_json", "{…}"));
    return;
  }
  const command = { type: "amend_sheet", character, sheet, reason: (data.get("reason") || "").trim() };
  let res;
  try {
    res = await sealedFetch(`/sessions/${encodeURIComponent(app.session)}/commands`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ id: uuid4(), command }),
    }, app.token);
  } catch (err) {
    show(character, false, t("sheet_offline"));
    return;
  }
  if (!res.ok) { show(character, false, await refusal(res)); return; }
  const answer = await res.json();
  if (answer.type === "reject") { show(character, false, answer.message || answer.code); return; }
  forgetDraft(character); // the editor shows the sheet as the event makes it
  const box = document.getElementById(draftId(character));
  if (box) box.value = JSON.stringify(sheet, null, 2);
  const reason = document.getElementById(reasonId(character));
  if (reason) reason.value = "";
  show(character, true, t("sheet_sent", app.vm.characters[character]?.name || character));
}

document.addEventListener("submit", (ev) => {
  const form = ev.target.closest("form[data-sheet-editor]");
  if (!form) return;
  ev.preventDefault();
  amend(form);
});

document.addEventListener("click", (ev) => {
  const el = ev.target.closest("button[data-sheet-reset]");
  if (!el) return;
  const character = el.dataset.sheetReset;
  forgetDraft(character);
  const c = app.vm.characters[character];
  const box = document.getElementById(draftId(character));
  if (box && c) box.value = current(c);
  show(character, true, "");
});

// Every event re-renders the page: a storyteller typing in the sheet keeps its caret and
// scroll, not only its text.
function keepCaret(ev) {
  const el = ev.target;
  if (el && el.tagName === "TEXTAREA" && el.id.startsWith("sheet-json-")) {
    app.sheetCaret = { id: el.id, start: el.selectionStart, end: el.selectionEnd, scroll: el.scrollTop };
  }
}
for (const type of ["input", "keyup", "click", "select", "scroll"]) document.addEventListener(type, keepCaret, true);

function restoreCaret() {
  const caret = app.sheetCaret;
  const el = caret && document.getElementById(caret.id);
  if (!el || document.activeElement !== el) return;
  el.setSelectionRange(caret.start, caret.end);
  el.scrollTop = caret.scroll;
}

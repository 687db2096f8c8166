// A closed session (TIME-2, FAIR-2) on every screen: it says so at the top, links to the
// phone's own dice check and to the night's record (the review page, with its exports),
// and offers no command: the server refuses every one once the seed is revealed.

import { app, t, lang, esc } from "./ui.js";
import { sealedFetch } from "./channel.js";

export function isClosed(vm = app.vm) {
  return vm.session.status === "closed";
}

// The banner at the top of a closed session's page; ``check``: this page shows a dice
// check to jump to (a phone that holds rolls of its own). The night's record is the review
// page for a storyteller, and for a player the chronicle record in its own view (the HTML
// export: the token goes in a header, never in a URL, so it is fetched, then opened).
export function closedBanner(check) {
  const session = encodeURIComponent(app.session || "");
  const record = app.viewer && app.viewer.role === "storyteller"
    ? `<a class="button" href="review.html#session=${session}" target="_blank" data-testid="closed-record">${esc(t("closed_record"))}</a>`
    : `<a class="button" href="#" data-record="html" data-testid="closed-record">${esc(t("closed_record"))}</a>`;
  return `<section class="card closed-session" role="status" aria-labelledby="h-closed" data-testid="session-closed">
    <h2 id="h-closed">${esc(t("session_closed"))}</h2>
    <p>${esc(t("session_closed_help"))}</p>
    <div class="row wrap">
      ${check ? `<a class="button" href="#h-check" data-testid="closed-dice-check">${esc(t("closed_dice_check"))}</a>` : ""}
      ${record}
    </div></section>`;
}

// The tab is opened during the tap, before the fetch, so popup blockers allow it.
async function openRecord() {
  const tab = window.open("", "_blank");
  try {
    const res = await sealedFetch(`/sessions/${encodeURIComponent(app.session)}/export?format=html&lang=${encodeURIComponent(lang)}`,
      {}, app.token);
    if (!res.ok) throw new Error(`${res.status}`);
    const url = URL.createObjectURL(new Blob([await res.text()], { type: "text/html" }));
    if (tab) tab.location.href = url; else location.href = url;
  } catch (err) {
    if (tab) tab.close();
  }
}

document.addEventListener("click", (ev) => {
  const link = ev.target.closest && ev.target.closest("a[data-record]");
  if (!link) return;
  ev.preventDefault();
  openRecord();
});

// The tablet's control: what closing does is said before it is done (confirm.js).
export function closeSessionButton() {
  if (isClosed() || app.vm.session.status !== "open") return "";
  return `<button class="danger" data-act="close_session" data-testid="close-session">${esc(t("close_session"))}</button>`;
}

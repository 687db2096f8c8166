// The taps that cannot be taken back ask once more: conceding, cancelling a challenge,
// overruling one, settling or cancelling an action, and sacrificing a character (ACT-8:
// it dies). A modal dialog, outside the re-rendered page, so an event arriving while the
// question is open does not close it.

import { app, t, esc, me, nameOf } from "./ui.js";
import { ruleQuestion } from "./handplay.js";

// The question for ``command``, or null when it goes at once.
export function confirmFor(what, el, command) {
  const c = command.challenge && app.vm.challenges[command.challenge];
  switch (what) {
    case "concede": {
      const other = c && (c.initiator === command.character ? c.defender : c.initiator);
      return { text: t("confirm_concede", nameOf(other)), yes: t("confirm_concede_yes"), key: "concede" };
    }
    case "cancel": return { text: t("confirm_cancel"), yes: t("confirm_cancel_yes"), key: "cancel" };
    case "overrule": return { text: t("confirm_overrule", nameOf(command.winner)), yes: t("confirm_overrule_yes"), key: "overrule" };
    case "settle_opposition": return { text: t("confirm_settle", el.textContent.trim()), yes: t("confirm_settle_yes"), key: "settle" };
    case "cancel_action": return { text: t("confirm_cancel_action"), yes: t("confirm_cancel_action_yes"), key: "cancel_action" };
    case "hand_rule": return ruleQuestion(command);
    case "close_session": return { text: t("confirm_close_session"), yes: t("confirm_close_session_yes"), key: "close_session" };
    case "freeze": return command.scope === "venue" ? { text: t("confirm_freeze_venue"), yes: t("confirm_freeze_venue_yes"), key: "freeze_venue", undoable: true } : null;
    default: break;
  }
  if (command.type === "roll_action" && command.option === "sacrifice") {
    const who = nameOf(command.character || me());
    return { text: t("confirm_sacrifice", who), yes: t("confirm_sacrifice_yes", who), key: "sacrifice" };
  }
  return null;
}

// ``undoable``: a question about something that can be taken back later (a Time Out ends
// with its resume): it does not say "cannot be undone".
export function ask({ text, yes, key, undoable = false }, run) {
  let dialog = document.getElementById("confirm");
  if (!dialog) {
    dialog = document.createElement("dialog");
    dialog.id = "confirm";
    dialog.className = "confirm";
    dialog.setAttribute("aria-labelledby", "confirm-title");
    dialog.setAttribute("aria-describedby", "confirm-text");
    dialog.dataset.testid = "confirm";
    document.body.appendChild(dialog);
  }
  dialog.dataset.key = key;
  dialog.innerHTML = `<h2 id="confirm-title">${esc(t("confirm_title"))}</h2>
    <p id="confirm-text">${esc(text)}${undoable ? "" : ` ${esc(t("confirm_undo_none"))}`}</p>
    <div class="row wrap">
      <button type="button" class="primary" data-testid="confirm-no" autofocus>${esc(t("confirm_keep"))}</button>
      <button type="button" class="danger" data-testid="confirm-yes">${esc(yes)}</button>
    </div>`;
  dialog.querySelector("[data-testid=confirm-yes]").addEventListener("click", () => { dialog.close(); run(); });
  dialog.querySelector("[data-testid=confirm-no]").addEventListener("click", () => dialog.close());
  dialog.showModal();
}

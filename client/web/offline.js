// A player's page for challenges played by hand while the app was unreachable (issue 7):
// record one (with this device's own time), and confirm or dispute those an opponent
// recorded. Commands go over HTTP (POST /sessions/{s}/commands) with the token the web
// app already keeps; a command's id is kept until the server answers, so a retry after
// a dropout is the same command, never a second record.

const UI = {
  en: {
    title: "Played by hand", record: "Record a challenge played by hand", opponent: "Opponent",
    attribute: "Attribute", none: "—", physical: "Physical", social: "Social", mental: "Mental",
    winner: "Winner", me: "me", when: "Played at (this device's clock)", account: "How it went",
    save: "Record it", saved: "Recorded: your opponent confirms or disputes it.", retry: "Not sent: the server is unreachable. Try again when the Wi-Fi is back.",
    records: "Challenges played by hand", confirm: "Confirm", dispute: "Dispute", reason: "Why",
    iWon: "I won", waiting: "waiting for {who}", recorded: "recorded", confirmed: "confirmed",
    disputed: "disputed", ruled: "ruled by a storyteller", won: "{who} won", noToken: "Join the game first (scan your QR code).",
    against: "{a} against {b}", empty: "None yet.",
  },
  fr: {
    title: "Joué à la main", record: "Noter un défi joué à la main", opponent: "Adversaire",
    attribute: "Attribut", none: "—", physical: "Physique", social: "Social", mental: "Mental",
    winner: "Gagnant", me: "moi", when: "Joué à (horloge de cet appareil)", account: "Comment ça s'est passé",
    save: "Noter", saved: "Noté : votre adversaire confirme ou conteste.", retry: "Non envoyé : le serveur est injoignable. Réessayez quand le Wi-Fi revient.",
    records: "Défis joués à la main", confirm: "Confirmer", dispute: "Contester", reason: "Pourquoi",
    iWon: "J'ai gagné", waiting: "en attente de {who}", recorded: "noté", confirmed: "confirmé",
    disputed: "contesté", ruled: "tranché par un conteur", won: "{who} l'a emporté", noToken: "Rejoignez d'abord la partie (scannez votre QR code).",
    against: "{a} contre {b}", empty: "Aucun pour l'instant.",
  },
};
const lang = (navigator.language || "en").slice(0, 2) in UI ? (navigator.language || "en").slice(0, 2) : "en";
const t = (key, vars = {}) => (UI[lang][key] || key).replace(/\{(\w+)\}/g, (_, k) => vars[k] ?? "");

function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) if (c !== null && c !== undefined) el.append(c.nodeType ? c : String(c));
  return el;
}

function uuid() {
  const b = crypto.getRandomValues(new Uint8Array(16));
  return [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
}

// This device's clock as ISO 8601 with its UTC offset: what the player saw on the phone.
function localIso(date) {
  const pad = (n) => String(Math.abs(n)).padStart(2, "0");
  const off = -date.getTimezoneOffset();
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}:00`
    + `${off >= 0 ? "+" : "-"}${pad(Math.trunc(off / 60))}:${pad(off % 60)}`;
}

const app = { token: "", session: "", me: null, state: null, pending: {} };

function takeToken() {
  const p = new URLSearchParams(location.hash.replace(/^#/, ""));
  if (p.get("join")) {
    localStorage.setItem("conteur.token", p.get("join"));
    if (p.get("session")) localStorage.setItem("conteur.session", p.get("session"));
    history.replaceState(null, "", location.pathname);
  }
  app.token = localStorage.getItem("conteur.token") || "";
  app.session = localStorage.getItem("conteur.session") || "";
}

async function call(path, options = {}) {
  const res = await fetch(path, { ...options, headers: { Authorization: `Bearer ${app.token}`, "Content-Type": "application/json" } });
  if (!res.ok) throw Object.assign(new Error((await res.text()) || res.statusText), { status: res.status });
  return res.json();
}

// Sends a command; the id is reused until the server answers (idempotent retry).
async function send(key, command) {
  app.pending[key] = app.pending[key] || uuid();
  const answer = await call(`/sessions/${encodeURIComponent(app.session)}/commands`, {
    method: "POST", body: JSON.stringify({ id: app.pending[key], command }),
  });
  delete app.pending[key];
  return answer;
}

function name(id) {
  return (app.state.session.characters[id] || {}).name || id;
}

function recordForm() {
  const me = app.me.character;
  const others = Object.keys(app.state.session.characters).filter((c) => c !== me);
  const note = h("p", { class: "muted", "data-testid": "offline-note" });
  const opponent = h("select", { name: "opponent", "data-testid": "offline-opponent" }, others.map((c) => h("option", { value: c }, name(c))));
  const attribute = h("select", { name: "attribute" }, h("option", { value: "" }, t("none")),
    ["physical", "social", "mental"].map((a) => h("option", { value: a }, t(a))));
  const winner = h("select", { name: "winner", "data-testid": "offline-winner" }, h("option", { value: "me" }, t("me")), h("option", { value: "opponent" }, t("opponent")));
  const when = h("input", { type: "datetime-local", name: "when", value: localIso(new Date()).slice(0, 16) });
  const account = h("input", { name: "account", "data-testid": "offline-account" });
  return h("form", {
    class: "card new-challenge", "data-testid": "offline-record",
    onsubmit: async (e) => {
      e.preventDefault();
      const played = when.value ? localIso(new Date(when.value)) : localIso(new Date());
      const command = {
        type: "record_offline_challenge", character: me, opponent: opponent.value,
        winner: winner.value === "me" ? me : opponent.value, played_at: played, account: account.value,
      };
      if (attribute.value) command.attribute = attribute.value;
      try {
        const answer = await send("record", command);
        note.textContent = answer.type === "reject" ? answer.message : t("saved");
        if (answer.type !== "reject") await load();
      } catch (err) {
        note.textContent = err.status ? err.message : t("retry");
      }
    },
  }, h("h2", {}, t("record")), h("label", {}, t("opponent"), opponent), h("label", {}, t("attribute"), attribute),
  h("label", {}, t("winner"), winner), h("label", {}, t("when"), when), h("label", {}, t("account"), account),
  h("button", { type: "submit", class: "primary" }, t("save")), note);
}

function recordRow(r) {
  const me = app.me.character;
  const line = h("p", {}, h("b", {}, r.id), " ", t("against", { a: name(r.recorder), b: name(r.opponent) }),
    " · ", t("won", { who: name(r.winner) }), " · ", h("span", { class: "stage", "data-testid": "offline-status" }, t(r.status)),
    r.account ? h("span", { class: "muted" }, ` — ${r.account}`) : null);
  const row = h("div", { class: "challenge", "data-testid": "offline-row", "data-record": r.id }, line);
  if (r.status === "recorded" && r.opponent === me) {
    const reason = h("input", { name: "reason", placeholder: t("reason"), "data-testid": "offline-reason" });
    const iWon = h("input", { type: "checkbox", name: "iwon" });
    const act = (type) => async () => {
      const command = { type, character: me, record: r.id };
      if (type === "dispute") {
        command.reason = reason.value;
        if (iWon.checked) command.winner = me;
      }
      try {
        await send(`${type}-${r.id}`, command);
        await load();
      } catch (err) {
        line.append(h("span", { class: "muted" }, ` ${t("retry")}`));
      }
    };
    row.append(h("div", { class: "row wrap" },
      h("button", { type: "button", class: "primary", "data-testid": "offline-confirm", onclick: act("confirm") }, t("confirm")),
      reason, h("label", { class: "check" }, iWon, t("iWon")),
      h("button", { type: "button", class: "danger", "data-testid": "offline-dispute", onclick: act("dispute") }, t("dispute"))));
  } else if (r.status === "recorded") {
    line.append(h("span", { class: "muted" }, ` (${t("waiting", { who: name(r.opponent) })})`));
  }
  return row;
}

async function load() {
  const main = document.getElementById("main");
  app.state = await call(`/sessions/${encodeURIComponent(app.session)}/state`);
  const records = Object.values(app.state.offline ? app.state.offline.records : {}).sort((a, b) => Number.parseInt(b.id.slice(1), 10) - Number.parseInt(a.id.slice(1), 10));
  document.getElementById("who").textContent = `${name(app.me.character)} — ${t("title")}`;
  main.replaceChildren(recordForm(), h("section", { class: "card", "data-testid": "offline-records" },
    h("h2", {}, t("records")), records.length ? records.map(recordRow) : h("p", { class: "muted" }, t("empty"))));
}

async function start() {
  document.documentElement.lang = lang;
  takeToken();
  const main = document.getElementById("main");
  if (!app.token) { main.replaceChildren(h("p", {}, t("noToken"))); return; }
  try {
    app.me = await call("/me");
    app.session = app.session || app.me.session || "";
    if (app.me.role !== "player") { location.replace("review.html"); return; }
    await load();
  } catch (err) {
    main.replaceChildren(h("p", { class: "notice reject" }, err.status ? err.message : t("retry")));
  }
}

start();

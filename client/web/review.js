// The storyteller's review page: disputes first, every challenge with its
// whole story, the timeline with filters, a slider stepping a scene event by event,
// the chain's verification and the fairness panel. The first screen comes from
// GET /sessions/{session}/review/first, the same size at any length of night;
// the verification and the fairness panel follow by their own requests, more timeline
// rows and challenges by pages when asked for, and each challenge or scene by its own
// endpoint; the sentences are made by the server in the chosen language.
//
// Address: review.html#join=TOKEN&session=ID[&challenge=c3]. The token is kept in this
// tab's sessionStorage and removed from the address bar (it never goes in a URL the
// server sees); without one, the phone app's stored token is tried.

import { section, refusalReason } from "./messages.js";
import { sealedFetch } from "./channel.js";

// the page's strings are data: events/messages/<lang>.json, section "review"
const UI = { en: section("review", "en"), fr: section("review", "fr") };

const SHOWN = 1500; // timeline rows drawn at first: a long evening has tens of thousands
const app = { token: "", session: "", lang: "en", bundle: null, filters: {}, steps: {}, sceneId: "" };
const t = (key, vars = {}) => (UI[app.lang][key] || key).replace(/\{(\w+)\}/g, (_, k) => vars[k] ?? "");
// A status or a reason as the server says it ("resolved", "overbid_failed"), in the
// page's words (the catalogue names every one the rules write).
const word = (kind, value) => (value ? UI[app.lang][`${kind}_${value}`] || value : "");
const statusText = (status, reason) => `${word("s", status)}${reason ? ` (${word("r", reason)})` : ""}`;

function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "text") el.textContent = v;
    else el.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) if (c !== null && c !== undefined) el.append(c.nodeType ? c : String(c));
  return el;
}

const SVG = "http://www.w3.org/2000/svg";
function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  for (const c of children) el.append(c.nodeType ? c : document.createTextNode(String(c)));
  return el;
}

function params() {
  return new URLSearchParams(location.hash.replace(/^#/, ""));
}

function setHash(changes) {
  const p = params();
  for (const [k, v] of Object.entries(changes)) if (v) p.set(k, v); else p.delete(k);
  location.hash = p.toString();
}

async function api(path, options = {}) {
  const res = await sealedFetch(`/sessions/${encodeURIComponent(app.session)}${path}`, {
    ...options, headers: { ...(options.headers || {}) },
  }, app.token);
  if (!res.ok) {
    let detail = res.statusText;
    try { detail = (await res.json()).detail || detail; } catch (err) { /* not JSON */ }
    throw Object.assign(new Error(detail), { status: res.status });
  }
  return res.json();
}

function takeToken() {
  const p = params();
  const token = p.get("join") || p.get("token");
  if (token) {
    sessionStorage.setItem("conteur.review.token", token);
    p.delete("join");
    p.delete("token");
    history.replaceState(null, "", `${location.pathname}${location.search}#${p.toString()}`);
  }
  app.token = sessionStorage.getItem("conteur.review.token") || localStorage.getItem("conteur.token") || "";
  app.session = p.get("session") || localStorage.getItem("conteur.session") || "";
  // the page's own choice, else the device's (the app's EN/FR switch), else the browser's
  app.lang = p.get("lang") || localStorage.getItem("conteur.review.lang") || localStorage.getItem("conteur.lang")
    || (navigator.language || "en").slice(0, 2);
  if (!UI[app.lang]) app.lang = "en";
}

function name(id) {
  if (!id) return "—";
  if (id === "storyteller") return app.lang === "fr" ? "le conteur" : "the storyteller";
  return (app.bundle && app.bundle.characters[id]) || id;
}

// The venue's wall clock (the server says its offset from UTC): the stamps stay UTC.
function time(at) {
  const ms = Date.parse(at || "");
  if (Number.isNaN(ms)) return (at || "").slice(11, 19);
  const shifted = new Date(ms + ((app.bundle && app.bundle.utc_offset_minutes) || 0) * 60000);
  return shifted.toISOString().slice(11, 19);
}

// ---------------------------------------------------------------- header

function renderHeader() {
  const b = app.bundle;
  document.documentElement.lang = app.lang;
  for (const el of document.querySelectorAll("[data-t]")) el.textContent = t(el.dataset.t);
  document.getElementById("title").textContent = `${b.name || b.session} — ${word("s", b.status)}`;
  document.getElementById("zone").textContent = t("localTime", { zone: b.zone || "UTC" });
  document.getElementById("lang").value = app.lang;
  renderBadge();
  const nav = document.getElementById("exports");
  nav.replaceChildren(...["html", "md", "jsonl", "csv"].map((f) =>
    h("button", { type: "button", class: "link", "data-format": f, onclick: () => download(f) }, f)));
}

function renderBadge() {
  const v = app.bundle.verification;
  const badge = document.getElementById("verify");
  if (!v) {  // on its way (verifying the chain walks the whole log)
    delete badge.dataset.ok;
    badge.className = "badge";
    badge.textContent = t("verifying");
    return;
  }
  badge.dataset.ok = v.ok ? "true" : "false";
  badge.className = `badge ${v.ok ? "ok" : "ko"}`;
  badge.textContent = v.ok
    ? `✔ ${t("verified")}: ${v.events} ${t("events")}${v.closed ? `, ${v.draws_checked} ${t("draws")}` : ""}`
    : `✘ ${t("broken", { seq: v.first_bad_seq })}: ${v.reason}`;
}

async function download(format) {
  const res = await sealedFetch(`/sessions/${encodeURIComponent(app.session)}/export?format=${format}&lang=${app.lang}&download=true`,
    {}, app.token);
  const blob = await res.blob();
  const url = URL.createObjectURL(blob);
  const a = h("a", { href: url, download: `${app.session}.${format === "html" || format === "md" ? `${app.lang}.` : ""}${format}` });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

// ---------------------------------------------------------------- overview

// A challenge played by hand has no winner until confirmed or ruled: each side's word
// instead (server/audit/stories.py offline_claims), never the recorder's alone in green.
function claimText(claim, withReason = false) {
  const vars = { by: name(claim.by), w: name(claim.winner) };
  const said = claim.kind === "confirmed" ? t("confirms", vars) : claim.winner ? t("says", vars) : t("noClaim", vars);
  return withReason && claim.reason ? `${said} (${claim.reason})` : said;
}

function outcome(c) {
  if (c.winner) return h("span", { class: "winner" }, ` ${t("winner")}: ${name(c.winner)}`);
  if (c.claims && c.claims.length) return h("span", { class: "claims", "data-testid": "claims" }, ` ${c.claims.map((x) => claimText(x)).join(" · ")}`);
  return null;
}

function challengeRow(c) {
  const flag = c.kind === "offline" ? t("offline") : c.id;
  return h("li", { class: `challenge ${c.disputed ? "disputed" : ""} ${c.status}`, "data-testid": "challenge-link", "data-challenge": c.id },
    h("a", { href: `#session=${encodeURIComponent(app.session)}&challenge=${encodeURIComponent(c.id)}` }, h("b", {}, c.id)),
    " ", h("span", { class: "sentence" }, c.sentence),
    " ", h("span", { class: `pill ${c.status}` }, c.kind === "offline" ? `${flag} · ${word("s", c.status)}` : word("s", c.status)),
    outcome(c));
}

function renderDisputes() {
  const b = app.bundle;
  const byId = Object.fromEntries([...b.challenges, ...(b.disputed || [])].map((c) => [c.id, c]));
  const list = b.disputes.map((id) => byId[id]).filter(Boolean);
  return h("section", { id: "disputes", "data-testid": "disputes" },
    h("h2", {}, t("disputes")),
    list.length ? h("ol", { class: "challenges" }, list.map(challengeRow)) : h("p", { class: "muted" }, t("none")));
}

function renderChallenges() {
  const b = app.bundle;
  const total = b.counts ? b.counts.challenges : b.challenges.length;
  const box = document.getElementById("challenges") || h("section", { id: "challenges" });
  box.replaceChildren(h("h2", {}, `${t("challenges")} (${total})`),
    h("ol", { class: "challenges" }, b.challenges.map(challengeRow)),
    ...(b.challenges.length < total
      ? [h("button", { type: "button", "data-testid": "more-challenges", onclick: () => moreChallenges().catch(() => {}) }, t("more"))]
      : []));
  return box;
}

async function moreChallenges() {
  const b = app.bundle;
  b.challenges.push(...await api(`/review/challenges?offset=${b.challenges.length}&lang=${app.lang}`));
  renderChallenges();
  renderTimeline();  // its challenge filter offers the ones just loaded
}

// Every timeline row, page by page: a filter or "show all" needs them all.
async function allItems() {
  const b = app.bundle;
  while (b.counts && b.items.length < b.counts.items) {
    const after = b.items.length ? b.items[b.items.length - 1].seq : 0;
    const page = await api(`/review/items?after=${after}&lang=${app.lang}`);
    if (!page.length) break;
    b.items.push(...page);
  }
}

async function refilter() {
  await allItems();
  renderTimeline();
}

function select(key, label, options) {
  const current = app.filters[key] || "";
  return h("label", {}, label,
    h("select", { "data-filter": key, onchange: (e) => { app.filters[key] = e.target.value; refilter().catch(() => {}); } },
      h("option", { value: "" }, t("all")),
      options.map(([value, text]) => h("option", { value, selected: value === current }, text))));
}

function filtered() {
  const f = app.filters;
  return app.bundle.items.filter((i) =>
    (!f.character || i.characters.includes(f.character)) &&
    (!f.challenge || i.challenge === f.challenge) &&
    (!f.scene || i.scene === f.scene || i.wide) &&
    (!f.type || i.type === f.type || i.type.startsWith(`${f.type}.`)));
}

function renderTimeline() {
  const b = app.bundle;
  const modules = [...new Set(b.types.map((x) => x.split(".")[0]))].filter((m) => !b.types.includes(m));
  const box = document.getElementById("timeline") || h("section", { id: "timeline" });
  const items = filtered();
  const filtering = Object.values(app.filters).some(Boolean);
  const total = b.counts && !filtering ? Math.max(b.counts.items, items.length) : items.length;
  const shown = app.showAll ? items : items.slice(0, SHOWN);
  box.replaceChildren(
    h("h2", {}, `${t("timeline")} (${total})`),
    h("div", { class: "filters" },
      select("character", t("character"), Object.entries(b.characters)),
      select("challenge", t("challenge"), b.challenges.map((c) => [c.id, c.id])),
      select("scene", t("scene"), Object.entries(b.scenes)),
      select("type", t("type"), [...modules.map((m) => [m, `${m}.*`]), ...b.types.map((x) => [x, x])])),
    h("ol", { class: "timeline", "data-testid": "timeline" }, shown.map((i) =>
      h("li", { "data-seq": i.seq, "data-type": i.type, class: i.type.replace(/[^a-z_]/g, "-") },
        h("span", { class: "seq" }, `#${i.seq}`), h("span", { class: "time" }, time(i.at)),
        h("span", { class: "text" }, i.text),
        i.challenge ? h("a", { class: "ref", href: `#session=${encodeURIComponent(app.session)}&challenge=${encodeURIComponent(i.challenge)}` }, i.challenge) : null))),
    ...(shown.length < total
      ? [h("button", { type: "button", "data-testid": "show-all", onclick: () => { app.showAll = true; refilter().catch(() => {}); } }, `${t("showAll")} (${total})`)]
      : []));
  return box;
}

// ---------------------------------------------------------------- the scene slider

async function loadScene(sceneId) {
  app.sceneId = sceneId;
  if (sceneId && !app.steps[sceneId]) app.steps[sceneId] = await api(`/review/scenes/${encodeURIComponent(sceneId)}/steps?lang=${app.lang}`);
  renderSlider();
}

// The slider holds only the stops; each state is asked for when the slider rests on it.
let pending = null;
async function showStep(target, steps, index) {
  const step = steps[index];
  if (!step) { target.replaceChildren(renderSceneState(null)); return; }
  const ask = pending = `${app.sceneId}@${step.seq}`;
  const view = await api(`/review/scenes/${encodeURIComponent(app.sceneId)}/state?at=${step.seq}&lang=${app.lang}`);
  if (ask === pending) target.replaceChildren(renderSceneState(view));
}

function renderSceneState(step) {
  if (!step) return h("p", { class: "muted" }, t("noScene"));
  return h("div", { class: "scene-state", "data-testid": "scene-state", "data-seq": step.seq },
    h("p", { class: "step-text" }, h("b", {}, `#${step.seq} ${time(step.at)} `), step.text),
    h("p", {}, h("b", {}, step.name), ` · ${word("s", step.open ? "open" : "closed")}`,
      step.frozen ? h("span", { class: "pill frozen", "data-testid": "scene-frozen" }, t("frozen")) : null),
    h("p", {}, `${t("present")}: ${step.characters.map((c) => c.name + (c.out_of_game ? " (HJ)" : "")).join(", ") || "—"}`),
    h("ul", { class: "scene-challenges" }, step.challenges.map((c) =>
      h("li", { "data-challenge": c.id },
        `${c.id} ${c.initiator} → ${c.defender} (${c.attribute || c.kind}) · ${word("s", c.status)} · ${t("round")} ${c.round}`,
        Object.keys(c.throws).length ? ` · ${Object.entries(c.throws).map(([k, v]) => `${k}: ${v || "?"}`).join(", ")}` : "",
        Object.keys(c.bids).length ? ` · ${t("bids")} ${Object.entries(c.bids).map(([k, v]) => `${k}: ${v ?? "?"}`).join(", ")}` : "",
        c.winner ? ` · ${t("winner")}: ${c.winner}` : ""))));
}

function renderSlider() {
  const b = app.bundle;
  const box = document.getElementById("slider") || h("section", { id: "slider" });
  const steps = app.steps[app.sceneId] || [];
  const index = Math.min(app.stepIndex ?? steps.length - 1, steps.length - 1);
  const state = h("div", { id: "scene-state" });
  const counter = h("span", { id: "step-count" }, steps.length ? `${t("step")} ${index + 1} ${t("of")} ${steps.length}` : "");
  let timer = null;
  const range = h("input", {
    type: "range", min: 0, max: Math.max(0, steps.length - 1), value: Math.max(0, index), "data-testid": "scene-slider",
    "aria-label": t("slider"), disabled: !steps.length,
    oninput: (e) => {
      app.stepIndex = Number(e.target.value);
      counter.textContent = `${t("step")} ${app.stepIndex + 1} ${t("of")} ${steps.length}`;
      clearTimeout(timer);
      timer = setTimeout(() => showStep(state, steps, app.stepIndex).catch(() => {}), 60);
    },
  });
  box.replaceChildren(h("h2", {}, t("slider")),
    h("div", { class: "filters" },
      h("label", {}, t("scene"), h("select", { "data-testid": "scene-select", onchange: (e) => { app.stepIndex = undefined; loadScene(e.target.value); } },
        Object.entries(b.scenes).map(([id, n]) => h("option", { value: id, selected: id === app.sceneId }, n))))),
    h("div", { class: "slider-row" }, range, counter), state);
  showStep(state, steps, index).catch(() => {});
  return box;
}

// ---------------------------------------------------------------- fairness

// Each bar as wide as its face's name ("scissors", "ciseaux"), never cut to "sci".
function chart(bars) {
  const slot = Math.max(44, 9 * Math.max(...bars.faces.map((f) => String(f).length)) + 8);
  const w = slot * bars.faces.length + 40, hgt = 160, base = 130;
  const top = Math.max(bars.expected, ...bars.counts, 1);
  const y = (v) => base - (v / top) * 110;
  const svg = s("svg", { viewBox: `0 0 ${w} ${hgt}`, width: w, height: hgt, role: "img", class: "chart",
    "aria-label": `${bars.label}: ${bars.faces.map((f, i) => `${f} ${bars.counts[i]}`).join(", ")}; ${t("expected")} ${bars.expected.toFixed(1)}` });
  bars.faces.forEach((face, i) => {
    const x = 30 + i * slot + (slot - 44) / 2;
    const c = bars.counts[i];
    svg.append(s("rect", { x, y: y(c), width: 30, height: base - y(c), class: "bar", "data-face": face, "data-count": c }));
    svg.append(s("text", { x: x + 15, y: base + 14, "text-anchor": "middle", class: "face" }, face));
    svg.append(s("text", { x: x + 15, y: y(c) - 3, "text-anchor": "middle", class: "count" }, c));
  });
  svg.append(s("line", { x1: 24, x2: w - 4, y1: y(bars.expected), y2: y(bars.expected), class: "expected" }));
  svg.append(s("text", { x: 2, y: y(bars.expected) + 4, class: "face" }, bars.expected.toFixed(1)));
  return h("figure", { class: "bars", "data-testid": "fairness-chart", "data-label": bars.label }, svg,
    h("figcaption", {}, `${bars.label}: ${t("total")} ${bars.total}, ${t("expected")} ${bars.expected.toFixed(1)} / face, χ² ${bars.chi_square} (df ${bars.df})${bars.p_value === null ? "" : `, ${t("p")} = ${bars.p_value}`}`));
}

function renderFairness() {
  const f = app.bundle.fairness;
  const box = document.getElementById("fairness") || h("section", { id: "fairness", "data-testid": "fairness" });
  if (!f) {  // on its way: it counts every die of the night
    box.replaceChildren(h("h2", {}, t("fairness")), h("p", { class: "muted" }, t("loading")));
    return box;
  }
  const charts = [...(f.throws ? [f.throws] : []), ...f.dice].map(chart);
  box.replaceChildren(h("h2", {}, t("fairness")),
    h("div", { class: "charts" }, charts.length ? charts : h("p", { class: "muted" }, "—")),
    h("h3", {}, t("tallies")),
    // a phone's width: the table scrolls inside its box, the page does not
    h("div", { class: "wide", tabindex: 0, role: "region", "aria-label": t("tallies") }, h("table", { class: "tallies", "data-testid": "tallies" },
      h("thead", {}, h("tr", {}, h("th", {}, t("character")), h("th", {}, t("won")), h("th", {}, t("lost")),
        h("th", {}, `${t("offline")} ${t("won")}`), h("th", {}, `${t("offline")} ${t("lost")}`),
        h("th", {}, `${t("contests")} ${t("won")}`), h("th", {}, `${t("contests")} ${t("lost")}`))),
      h("tbody", {}, f.tallies.map((r) => h("tr", { "data-character": r.character },
        h("td", {}, r.name), h("td", {}, r.won), h("td", {}, r.lost), h("td", {}, r.offline_won),
        h("td", {}, r.offline_lost), h("td", {}, r.contests_won), h("td", {}, r.contests_lost)))))));
  return box;
}

// ---------------------------------------------------------------- one challenge

function seenCell(seen) {
  return h("td", { class: "seen" },
    h("span", { class: "whole" }, `${t("whole")}: ${seen.whole.join(", ")}`),
    seen.sealed.length ? h("span", { class: "sealed" }, ` · ${t("sealed")}: ${seen.sealed.join(", ")}`) : null,
    seen.hidden.length ? h("span", { class: "hidden" }, ` · ${t("hidden")}: ${seen.hidden.join(", ")}`) : null);
}

function rulingForm(story) {
  if (story.kind !== "offline" || app.bundle.viewer.role !== "storyteller") return null;
  const reason = h("input", { name: "reason", "data-testid": "ruling-reason" });
  const winner = h("select", { name: "winner", "data-testid": "ruling-winner" }, story.sides.map((id) => h("option", { value: id }, name(id))));
  return h("form", {
    class: "ruling", "data-testid": "ruling-form",
    onsubmit: async (e) => {
      e.preventDefault();
      const id = `review-${Date.now()}-${Math.random().toString(16).slice(2)}`;
      const answer = await api("/commands", {
        method: "POST", headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ id, command: { type: "rule_offline", record: story.id, winner: winner.value, reason: reason.value } }),
      });
      if (answer.type === "reject") alert(refusalReason(answer, app.lang) || answer.message);
      await load();
    },
  }, h("h3", {}, t("rule")), h("label", {}, t("winner"), winner), h("label", {}, t("reason"), reason),
  h("button", { type: "submit" }, t("ruleIt")));
}

async function renderChallenge(id) {
  let story;
  try {
    story = await api(`/review/challenges/${encodeURIComponent(id)}?lang=${app.lang}`);
  } catch (err) {
    return h("section", { id: "challenge" }, h("p", {}, `${t("notFound")}: ${id}`));
  }
  return h("section", { id: "challenge", "data-testid": "challenge-page", "data-challenge": story.id },
    h("p", {}, h("a", { href: `#session=${encodeURIComponent(app.session)}`, "data-testid": "back" }, t("back"))),
    h("h2", {}, `${t("challenge")} ${story.id}`),
    h("p", { class: "sentence big", "data-testid": "challenge-sentence" }, story.sentence),
    h("dl", { class: "outcome" },
      h("dt", {}, t("winner")), h("dd", { "data-testid": "challenge-winner" },
        story.winner || story.kind !== "offline" ? name(story.winner) : story.status === "disputed" ? t("noRuling") : t("unconfirmed")),
      h("dt", {}, t("loser")), h("dd", {}, name(story.loser)),
      // a group challenge: each defender's pair and who won it (MET-1)
      ...(Object.keys(story.results || {}).length ? [h("dt", {}, t("pairs")), h("dd", {},
        h("ul", { class: "pairs", "data-testid": "challenge-pairs" }, Object.entries(story.results).map(([d, w]) =>
          h("li", {}, `${name(story.sides[0])} ⟷ ${name(d)}: ${t("winner")} ${name(w)}`))))] : []),
      ...(story.claims && story.claims.length ? [h("dt", {}, t("claims")), h("dd", {},
        h("ul", { class: "claims", "data-testid": "challenge-claims" }, story.claims.map((x) => h("li", {}, claimText(x, true)))))] : []),
      h("dt", {}, t("status")), h("dd", { "data-testid": "challenge-status" }, statusText(story.status, story.reason)),
      h("dt", {}, t("scene")), h("dd", {}, (story.scene && app.bundle.scenes[story.scene]) || story.scene || "—")),
    rulingForm(story),
    h("h3", {}, `${t("story")} · ${t("seen")}`),
    h("table", { class: "steps", "data-testid": "challenge-steps" },
      h("tbody", {}, story.steps.map((st) => h("tr", { "data-seq": st.seq, "data-type": st.type },
        h("td", { class: "seq" }, `#${st.seq}`), h("td", { class: "time" }, time(st.at)),
        h("td", {}, st.text), seenCell(st.seen))))));
}

// ---------------------------------------------------------------- page

async function load() {
  const main = document.getElementById("main");
  main.replaceChildren(h("p", { class: "muted" }, t("loading")));
  try {
    app.bundle = await api(`/review/first?lang=${app.lang}`);
  } catch (err) {
    main.replaceChildren(h("p", { class: "error", "data-testid": "error" }, `${t("failed")}: ${err.message}`));
    if (err.status === 401 || err.status === 403 || !app.session) showLogin();
    return;
  }
  app.steps = {};
  renderHeader();
  const bundle = app.bundle;
  // the parts that walk the whole log, after the first screen is up
  api("/review/verify").then((v) => { if (app.bundle === bundle) { bundle.verification = v; renderBadge(); } }).catch(() => {});
  api(`/review/fairness?lang=${app.lang}`).then((f) => {
    bundle.fairness = f;
    if (app.bundle === bundle && document.getElementById("fairness")) renderFairness();
  }).catch(() => {});
  await route();
}

async function route() {
  if (!app.bundle) return;
  const main = document.getElementById("main");
  const id = params().get("challenge");
  if (id) {
    main.replaceChildren(await renderChallenge(id));
    window.scrollTo(0, 0);
    return;
  }
  if (!app.sceneId) app.sceneId = Object.keys(app.bundle.scenes)[0] || "";
  main.replaceChildren(renderDisputes(), renderChallenges(), renderSlider(), renderTimeline(), renderFairness());
  if (app.sceneId) loadScene(app.sceneId).catch(() => {});
}

function showLogin() {
  const form = document.getElementById("login");
  form.hidden = false;
  document.getElementById("session").value = app.session;
  form.onsubmit = (e) => {
    e.preventDefault();
    app.token = document.getElementById("token").value.trim();
    app.session = document.getElementById("session").value.trim();
    sessionStorage.setItem("conteur.review.token", app.token);
    form.hidden = true;
    setHash({ session: app.session });
    load();
  };
}

function start() {
  takeToken();
  for (const el of document.querySelectorAll("[data-t]")) el.textContent = t(el.dataset.t);
  document.getElementById("lang").addEventListener("change", (e) => {
    app.lang = e.target.value;
    localStorage.setItem("conteur.review.lang", app.lang);
    load();
  });
  window.addEventListener("hashchange", () => route());
  if (!app.token || !app.session) {
    document.getElementById("main").replaceChildren();
    showLogin();
    return;
  }
  if (!params().get("session")) history.replaceState(null, "", `${location.pathname}#session=${encodeURIComponent(app.session)}`);
  load();
}

start();

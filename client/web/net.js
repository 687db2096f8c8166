// The web client's durable and network side: the IndexedDB outbox, the join token, and
// the reconnecting websocket (opened once /health answers; backoff with jitter, capped;
// at once when the phone wakes; hello with the last seq).

// crypto.randomUUID exists only in secure contexts; the venue's LAN is plain HTTP.
export function uuid4() {
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

export function entropy() {
  return [...crypto.getRandomValues(new Uint8Array(8))].map((x) => x.toString(16).padStart(2, "0")).join("");
}

// The join link carries the token in its fragment (never sent to the server, never in
// its logs): keep it on the device, then clear it from the address bar.
//
// Each tab remembers its own join in sessionStorage (it survives a reload, and stays in
// its tab): a second session's link opened in another tab of the same browser does not
// take the first tab over on reload. localStorage keeps the device's last
// join, for a tab opened afresh (the home-screen icon).
const TAB = "conteur.tab";
let current = { token: null, session: "" };

function tabStore() {
  try { return sessionStorage; } catch (err) { return null; }
}

export function takeJoin(loc = location, store = localStorage, tab = tabStore()) {
  const params = new URLSearchParams(loc.hash.replace(/^#/, ""));
  const token = params.get("join");
  let fresh = false;
  let mine = null;
  if (token) {
    const session = params.get("session") || "";
    // another token, or another session of the same token: what this device holds is stale
    fresh = token !== store.getItem("conteur.token") || session !== (store.getItem("conteur.session") || "");
    store.setItem("conteur.token", token);
    store.removeItem("conteur.joinkey"); // a fresh link: its own key
    store.removeItem("conteur.link");
    if (session) store.setItem("conteur.session", session); else store.removeItem("conteur.session");
    mine = { token, session };
    if (tab) tab.setItem(TAB, JSON.stringify(mine));
    history.replaceState(null, "", loc.pathname + loc.search);
  } else {
    try { mine = JSON.parse((tab && tab.getItem(TAB)) || "null"); } catch (err) { mine = null; }
  }
  if (!mine || !mine.token) {
    mine = { token: store.getItem("conteur.token"), session: store.getItem("conteur.session") || "",
      key: (!token && store.getItem("conteur.joinkey")) || "", link: (!token && store.getItem("conteur.link")) || "" };
  }
  current = { token: mine.token, session: mine.session || "", key: mine.key || "", link: mine.link || "" };
  if (fresh) store.removeItem(viewerKey());
  return { token: current.token, session: current.session, fresh };
}

// What the join link's first hello turned it into (welcome.credential, docs/protocol.md):
// this device's own token, kept in the link's place; the link is forgotten. The join's
// key stays the link's, so the events and the outbox kept under it stay this join's.
export function adoptCredential(credential, store = localStorage, tab = tabStore()) {
  const key = joinKey();
  // the link is kept aside for one case only: a server restored from a backup older than
  // this credential does not know it (refused "unauthorized", not "token revoked")
  const link = current.link || current.token;
  if (store.getItem("conteur.token") === current.token) {
    store.setItem("conteur.token", credential);
    store.setItem("conteur.joinkey", key);
    store.setItem("conteur.link", link);
  }
  current = { token: credential, session: current.session, key, link };
  if (tab) tab.setItem(TAB, JSON.stringify(current));
  return credential;
}

// The link a credential was made of, once: when the server no longer knows the credential
// (a restored backup), the device opens the link again; null when there is none to try.
export function fallBackToLink(store = localStorage, tab = tabStore()) {
  const link = current.link;
  if (!link || link === current.token) return null;
  if (store.getItem("conteur.token") === current.token) {
    store.setItem("conteur.token", link);
    store.removeItem("conteur.link");
  }
  current = { token: link, session: current.session, key: current.key, link: "" };
  if (tab) tab.setItem(TAB, JSON.stringify(current));
  return link;
}

// A short name for this tab's join (token and session), keying what is kept per join:
// the viewer, the events received. Not a secret: the token itself sits beside it. A
// credential that replaced its link keeps the link's key.
export function joinKey(join = current) {
  if (join.key) return join.key;
  let h = 0x811c9dc5;
  for (const ch of `${join.token || ""}\n${join.session || ""}`) {
    h ^= ch.codePointAt(0);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, "0");
}

export function viewerKey() {
  return `conteur.viewer.${joinKey()}`;
}

// A revoked token (docs/protocol.md: close 4401 "token revoked") leaves nothing of its
// character on the device: not the token, not the events it received (its secrets). The
// outbox stays: a new join link for the same character sends what was still queued.
export const REVOKED = "token revoked";
// the same close when this character's join link was opened on another phone
export const REPLACED = "replaced by another device";
export function forgetDevice(outbox, store = localStorage, tab = tabStore()) {
  store.removeItem(viewerKey());
  if (store.getItem("conteur.token") === current.token) {
    for (const key of ["conteur.token", "conteur.session", "conteur.joinkey", "conteur.link"]) store.removeItem(key);
  }
  if (tab) tab.removeItem(TAB);
  return outbox.clearEvents().catch(() => {});
}

export function deviceId(store = localStorage) {
  let id = store.getItem("conteur.device");
  if (!id) {
    id = `web-${uuid4().slice(0, 13)}`;
    store.setItem("conteur.device", id);
  }
  return id;
}

// The outbox: commands made but not acknowledged, kept across reloads and dropouts; and
// the events received, so a reload without network still shows the character and its
// challenges (the app shell itself comes from the service worker's cache).
export class Outbox {
  constructor(name = "conteur") {
    this.name = name;
    this.memory = new Map(); // fallback when IndexedDB is unavailable (private modes)
    this.db = null;
  }

  // ``key``: this tab's join (joinKey). The outbox is the device's, one for all its
  // joins (each entry names its join); the events are kept per join, in a database of
  // their own, so two sessions open in one browser never mix their histories.
  async open(key = "") {
    this.key = key;
    if (!("indexedDB" in self)) return this;
    const openDb = (name, version, stores) => new Promise((resolve, reject) => {
      const req = indexedDB.open(name, version);
      req.onupgradeneeded = () => {
        const db = req.result;
        for (const [store, keyPath] of stores) if (!db.objectStoreNames.contains(store)) db.createObjectStore(store, { keyPath });
      };
      req.onsuccess = () => resolve(req.result);
      req.onerror = () => reject(req.error);
    });
    try {
      if (this.db) this.db.close();
      if (this.eventsDb) this.eventsDb.close();
      this.db = await openDb(this.name, 2, [["outbox", "id"], ["events", "seq"]]);
      this.eventsDb = await openDb(`${this.name}.events.${key}`, 1, [["events", "seq"]]);
    } catch (err) {
      this.db = null;
      this.eventsDb = null;
    }
    return this;
  }

  _tx(mode, fn, store = "outbox") {
    const db = store === "events" ? this.eventsDb : this.db;
    return new Promise((resolve, reject) => {
      const tx = db.transaction(store, mode);
      const result = fn(tx.objectStore(store));
      tx.oncomplete = () => resolve(result && "result" in result ? result.result : undefined);
      tx.onerror = () => reject(tx.error);
    });
  }

  async put(entry) {
    this.memory.set(entry.id, entry);
    if (this.db) await this._tx("readwrite", (s) => s.put(entry));
  }

  async delete(id) {
    this.memory.delete(id);
    if (this.db) await this._tx("readwrite", (s) => s.delete(id));
  }

  async addEvents(items) {
    if (this.eventsDb && items.length) await this._tx("readwrite", (s) => { for (const item of items) s.put(item); }, "events");
  }

  async events() {
    return this.eventsDb ? (await this._tx("readonly", (s) => s.getAll(), "events")).sort((a, b) => a.seq - b.seq) : [];
  }

  async clearEvents() {
    if (this.eventsDb) await this._tx("readwrite", (s) => s.clear(), "events");
  }

  // this join's entries (and those of a page older than the per-join keys)
  async all() {
    const rows = this.db ? await this._tx("readonly", (s) => s.getAll()) : [...this.memory.values()];
    return rows.filter((e) => !e.key || e.key === this.key).sort((a, b) => a.n - b.n);
  }
}

const PING_EVERY = 1000;
const SILENT = 3500;
// A page shown again may hold a socket the phone froze while its screen was locked: it
// must answer a ping this soon or be replaced (the target: live within 1 s of the show).
const WAKE_SILENT = 600;
// The server is asked over HTTP whether it answers before any websocket is opened: a
// failed handshake makes Firefox hold back the next one to that host (RFC 6455 7.2.3, up
// to a minute), a failed fetch does not. Probes are cheap, so they stay frequent.
const PROBE_TIMEOUT = 1500;
const PROBE_CAP = 1500;

// True when the server answers GET /health within ``timeout`` ms.
export async function probe(url, timeout = PROBE_TIMEOUT) {
  const ctl = typeof AbortController === "function" ? new AbortController() : null;
  const timer = setTimeout(() => ctl && ctl.abort(), timeout);
  try {
    const res = await fetch(url, { cache: "no-store", signal: ctl ? ctl.signal : undefined });
    return res.ok;
  } catch (err) {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

// The moments a phone comes back: its screen unlocked or its tab shown again, a page
// restored from the back-forward cache, the network back.
function onWake(fn) {
  addEventListener("online", fn);
  addEventListener("pageshow", fn);
  document.addEventListener("visibilitychange", () => { if (document.visibilityState === "visible") fn(); });
}

// One websocket at a time, opened once /health answers; after a failure, capped
// exponential backoff with jitter, and at once when the phone wakes.
export class Connection {
  // ``open``: makes the socket (channel.js's SealedSocket, which seals every frame);
  // a plain WebSocket when not given
  constructor({ url, hello, onFrame, onStatus, open = (u) => new WebSocket(u), onUnknown = null, health = "/health",
    base = 500, cap = 10000, probeCap = PROBE_CAP }) {
    Object.assign(this, { url, hello, onFrame, onStatus, open, onUnknown, health, base, cap, probeCap });
    this.attempt = 0;
    this.probes = 0; // probes unanswered in a row
    this.probing = false;
    this.probeId = 0;
    this.probedAt = 0;
    this.openedAt = 0;
    this.messages = 0; // websocket messages received: a batch counts once
    this.ws = null;
    this.timer = null;
    this.lastHeard = 0;
    this.stopped = false;
    this.welcomed = false; // a welcome came for this page's token (see onclose)
    onWake(() => this.now());
    setInterval(() => this.heartbeat(), 500);
  }

  start() { this.reach(); }

  // Now, not at the next backoff: an open socket is checked, a missing one is sought. A
  // probe or a handshake under way is waited for only if it began just now: one from
  // before the screen locked may be frozen with the page, and would hold the phone back
  // until its timeout (the probe's, or the browser's for a handshake).
  now() {
    if (this.stopped) return;
    this.attempt = 0;
    this.probes = 0;
    if (this.ws && this.ws.readyState === 1) { this.check(); return; }
    const recent = (at) => Date.now() - at < WAKE_SILENT;
    if (this.ws && this.ws.readyState === 0) { if (!recent(this.openedAt)) this.drop(true); return; }
    if (this.probing && recent(this.probedAt)) return;
    clearTimeout(this.timer);
    this.reach(true);
  }

  // Probe, then open the socket; an unanswered probe is tried again soon. ``fresh``: a
  // new probe even while one is under way; the newest one's answer is the one acted on.
  async reach(fresh = false) {
    if (this.stopped || (this.probing && !fresh)) return;
    const mine = ++this.probeId;
    this.probing = true;
    this.probedAt = Date.now();
    const up = await probe(this.health);
    if (mine !== this.probeId) return;
    this.probing = false;
    if (this.stopped || this.ws) return;
    if (up) { this.probes = 0; this.connect(); return; }
    this.onStatus("offline");
    const ceiling = Math.min(this.probeCap, this.base * 2 ** this.probes);
    this.probes += 1;
    this.later(ceiling);
  }

  later(ceiling) {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.reach(), ceiling / 2 + Math.random() * ceiling / 2);
  }

  // A socket that seems open after a sleep: a ping it must answer within WAKE_SILENT.
  check() {
    const ws = this.ws;
    const asked = Date.now();
    try { ws.send(JSON.stringify({ type: "ping" })); } catch (err) { return; }
    setTimeout(() => { if (this.ws === ws && this.lastHeard < asked) this.drop(true); }, WAKE_SILENT);
  }

  connect() {
    if (this.stopped) return;
    this.onStatus("connecting");
    let ws;
    try {
      ws = this.open(this.url);
    } catch (err) {
      this.retry();
      return;
    }
    this.ws = ws;
    this.openedAt = Date.now();
    ws.onopen = () => {
      this.lastHeard = Date.now();
      this.pinged = false;
      ws.send(JSON.stringify(this.hello()));
    };
    ws.onmessage = (m) => {
      this.lastHeard = Date.now();
      let frame;
      try { frame = JSON.parse(m.data); } catch (err) { return; }
      if (frame.type !== "pong") this.messages += 1; // the heartbeat's answers are not traffic
      // a device that said batch in hello gets several frames in one message: each is
      // handled as if it had come alone (docs/protocol.md), never nested
      const frames = frame.type === "batch" ? (frame.frames || []).filter((f) => f && f.type !== "batch") : [frame];
      for (const one of frames) {
        if (this.ws !== ws) break; // the batch's live said "start over": the rest is stale
        if (one.type === "welcome") { this.attempt = 0; this.welcomed = true; }
        this.onFrame(one);
      }
    };
    ws.onclose = (ev) => {
      if (this.ws !== ws) return;
      this.ws = null;
      // a credential the server does not know (not revoked: that says "token revoked"):
      // the page may go back to the link it was made of, once
      if (ev.code === 4401 && ev.reason === "unauthorized" && this.onUnknown && this.onUnknown()) {
        this.retry();
        return;
      }
      if (ev.code === 4401 || ev.code === 4403) {
        this.stopped = true; // a refused or revoked token: retrying cannot help
        clearTimeout(this.timer);
        // a token this page was welcomed with, refused at a later hello: it was revoked
        // while the socket was down (a Wi-Fi drop, a missed heartbeat), and the close that
        // said so never came; its view and secrets must leave the phone all the same
        const revoked = ev.code === 4401 && (ev.reason === REVOKED || (this.welcomed && ev.reason === "unauthorized"));
        this.onStatus(ev.code === 4401 && ev.reason === REPLACED ? "replaced" : revoked ? "revoked" : "refused");
        return;
      }
      this.onStatus("offline");
      this.retry();
    };
    ws.onerror = () => {};
  }

  retry() {
    const ceiling = Math.min(this.cap, this.base * 2 ** this.attempt);
    this.attempt += 1;
    this.later(ceiling);
  }

  // A dead Wi-Fi link can leave a socket "open" for minutes, and the browser's online
  // event says nothing about the venue's server: ping every second of quiet, and call
  // the link dead when nothing at all has come back for SILENT ms (the pill then says
  // offline within 5 s). The dead socket is dropped and a new one is tried.
  heartbeat() {
    const ws = this.ws;
    if (!ws || ws.readyState !== 1) return;
    const quiet = Date.now() - this.lastHeard;
    if (this.pinged && quiet > SILENT) { this.drop(); return; }
    if (quiet < PING_EVERY) return;
    try { ws.send(JSON.stringify({ type: "ping" })); this.pinged = true; } catch (err) { /* closing */ }
  }

  // A socket that stopped answering: dropped, and another sought (``now``: at once).
  drop(now = false) {
    const ws = this.ws;
    this.ws = null;
    ws.onclose = null;
    ws.onmessage = null;
    try { ws.close(); } catch (err) { /* already closing */ }
    this.pinged = false;
    this.onStatus("offline");
    if (now) this.reach(); else this.retry();
  }

  send(frame) {
    if (!this.ws || this.ws.readyState !== 1) return false;
    this.ws.send(JSON.stringify(frame));
    return true;
  }

  // Drop this socket and connect again at once (a resync from 0).
  restart() {
    const ws = this.ws;
    this.ws = null;
    if (ws) ws.close();
    this.attempt = 0;
    this.connect();
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    if (this.ws) this.ws.close();
  }
}

// The web client's durable and network side: the IndexedDB outbox, the join token, and
// the reconnecting websocket (backoff with jitter, capped; hello with the last seq).

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
export function takeJoin(loc = location, store = localStorage) {
  const params = new URLSearchParams(loc.hash.replace(/^#/, ""));
  const token = params.get("join");
  let fresh = false;
  if (token) {
    const session = params.get("session");
    // another token, or another session of the same token: what this device holds is stale
    fresh = token !== store.getItem("conteur.token") || (session || "") !== (store.getItem("conteur.session") || "");
    if (fresh) store.removeItem("conteur.viewer");
    store.setItem("conteur.token", token);
    if (session) store.setItem("conteur.session", session); else store.removeItem("conteur.session");
    history.replaceState(null, "", loc.pathname + loc.search);
  }
  return { token: store.getItem("conteur.token"), session: store.getItem("conteur.session") || "", fresh };
}

// A revoked token (docs/protocol.md: close 4401 "token revoked") leaves nothing of its
// character on the device: not the token, not the events it received (its secrets). The
// outbox stays: a new join link for the same character sends what was still queued.
export const REVOKED = "token revoked";
export function forgetDevice(outbox, store = localStorage) {
  for (const key of ["conteur.token", "conteur.session", "conteur.viewer"]) store.removeItem(key);
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

  async open() {
    if (!("indexedDB" in self)) return this;
    try {
      this.db = await new Promise((resolve, reject) => {
        const req = indexedDB.open(this.name, 2);
        req.onupgradeneeded = () => {
          const db = req.result;
          if (!db.objectStoreNames.contains("outbox")) db.createObjectStore("outbox", { keyPath: "id" });
          if (!db.objectStoreNames.contains("events")) db.createObjectStore("events", { keyPath: "seq" });
        };
        req.onsuccess = () => resolve(req.result);
        req.onerror = () => reject(req.error);
      });
    } catch (err) {
      this.db = null;
    }
    return this;
  }

  _tx(mode, fn, store = "outbox") {
    return new Promise((resolve, reject) => {
      const tx = this.db.transaction(store, mode);
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
    if (this.db && items.length) await this._tx("readwrite", (s) => { for (const item of items) s.put(item); }, "events");
  }

  async events() {
    return this.db ? (await this._tx("readonly", (s) => s.getAll(), "events")).sort((a, b) => a.seq - b.seq) : [];
  }

  async clearEvents() {
    if (this.db) await this._tx("readwrite", (s) => s.clear(), "events");
  }

  async all() {
    const rows = this.db ? await this._tx("readonly", (s) => s.getAll()) : [...this.memory.values()];
    return rows.sort((a, b) => a.n - b.n);
  }
}

// One websocket at a time, reconnecting with capped exponential backoff and jitter.
export class Connection {
  constructor({ url, hello, onFrame, onStatus, base = 500, cap = 10000 }) {
    Object.assign(this, { url, hello, onFrame, onStatus, base, cap });
    this.attempt = 0;
    this.messages = 0; // websocket messages received: a batch counts once
    this.ws = null;
    this.timer = null;
    this.lastHeard = 0;
    this.stopped = false;
    addEventListener("online", () => this.now());
    setInterval(() => this.heartbeat(), 5000);
  }

  start() { this.connect(); }

  now() {
    if (this.ws && this.ws.readyState <= 1) return;
    clearTimeout(this.timer);
    this.connect();
  }

  connect() {
    if (this.stopped) return;
    this.onStatus("connecting");
    let ws;
    try {
      ws = new WebSocket(this.url);
    } catch (err) {
      this.retry();
      return;
    }
    this.ws = ws;
    ws.onopen = () => {
      this.lastHeard = Date.now();
      ws.send(JSON.stringify(this.hello()));
    };
    ws.onmessage = (m) => {
      this.lastHeard = Date.now();
      this.messages += 1;
      let frame;
      try { frame = JSON.parse(m.data); } catch (err) { return; }
      // a device that said batch in hello gets several frames in one message: each is
      // handled as if it had come alone (docs/protocol.md), never nested
      const frames = frame.type === "batch" ? (frame.frames || []).filter((f) => f && f.type !== "batch") : [frame];
      for (const one of frames) {
        if (this.ws !== ws) break; // the batch's live said "start over": the rest is stale
        if (one.type === "welcome") this.attempt = 0;
        if (one.type === "pong") this.answersPings = true;
        this.onFrame(one);
      }
    };
    ws.onclose = (ev) => {
      if (this.ws !== ws) return;
      this.ws = null;
      if (ev.code === 4401 || ev.code === 4403) {
        this.stopped = true; // a refused or revoked token: retrying cannot help
        clearTimeout(this.timer);
        this.onStatus(ev.code === 4401 && ev.reason === REVOKED ? "revoked" : "refused");
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
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.connect(), ceiling / 2 + Math.random() * ceiling / 2);
  }

  // A dead Wi-Fi link can leave a socket "open" for minutes: ping, and give up on it
  // when nothing has been heard for a while.
  heartbeat() {
    const ws = this.ws;
    if (!ws || ws.readyState !== 1) return;
    if (this.answersPings && Date.now() - this.lastHeard > 20000) {
      ws.close();
      return;
    }
    try { ws.send(JSON.stringify({ type: "ping" })); } catch (err) { /* closing */ }
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

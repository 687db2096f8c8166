// The venue channel, the browser's side (events/channel.py is the server's; docs/protocol.md,
// "The channel", the authority). The join link's token reached the phone through the QR
// code; its SHA-256 is the key both sides hold, and the token itself never crosses the
// network. Each websocket, and each page's HTTP channel, derives fresh keys with
// HKDF-SHA256 from that digest and both sides' nonces; every message is padded and sealed
// with ChaCha20-Poly1305 under a counter. Web Crypto is absent on plain HTTP, so the
// primitives are the vendored, audited @noble libraries.

import { chacha20poly1305 } from "./vendor/noble-ciphers/chacha.js";
import { hkdf } from "./vendor/noble-hashes/hkdf.js";
import { sha256 } from "./vendor/noble-hashes/sha2.js";

const INFO = "conteur channel 1";
const PAD = 128;
const NONCE_BYTES = 32;
const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

function hex(bytes) {
  return [...bytes].map((x) => x.toString(16).padStart(2, "0")).join("");
}

function b64(bytes) {
  let text = "";
  for (let i = 0; i < bytes.length; i += 0x8000) text += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
  return btoa(text);
}

function unb64(text) {
  const raw = atob(text);
  const out = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i += 1) out[i] = raw.charCodeAt(i);
  return out;
}

const b64url = (bytes) => b64(bytes).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
const unb64url = (text) => unb64(text.replace(/-/g, "+").replace(/_/g, "/") + "=".repeat((4 - (text.length % 4)) % 4));

// What the join link's token gives: the key (its digest, which the server stores) and the
// id that names it in `open` (the grant id: the digest's first 12 hex digits).
export function keyOf(token) {
  const psk = sha256(encoder.encode(token));
  return { psk, id: hex(psk).slice(0, 12) };
}

export function newNonce() {
  return b64url(crypto.getRandomValues(new Uint8Array(NONCE_BYTES)));
}

export function derive(psk, id, clientNonce, serverNonce) {
  const salt = new Uint8Array(2 * NONCE_BYTES);
  salt.set(unb64url(clientNonce), 0);
  salt.set(unb64url(serverNonce), NONCE_BYTES);
  const info = new Uint8Array([...encoder.encode(INFO), 0, ...encoder.encode(id)]);
  const okm = hkdf(sha256, psk, salt, info, 64);
  return { up: okm.slice(0, 32), down: okm.slice(32) };
}

// Noise's ChaChaPoly nonce: 4 zero bytes, then the counter, little-endian on 8 bytes.
export function counterNonce(n) {
  const nonce = new Uint8Array(12);
  let low = n >>> 0;
  let high = Math.floor(n / 0x100000000);
  for (let i = 0; i < 4; i += 1) { nonce[4 + i] = low & 0xff; low >>>= 8; }
  for (let i = 0; i < 4; i += 1) { nonce[8 + i] = high & 0xff; high >>>= 8; }
  return nonce;
}

export function pad(bytes) {
  const short = (PAD - (bytes.length % PAD)) % PAD;
  if (!short) return bytes;
  const out = new Uint8Array(bytes.length + short).fill(0x20);
  out.set(bytes, 0);
  return out;
}

export function sealBytes(key, n, bytes) {
  return b64(chacha20poly1305(key, counterNonce(n)).encrypt(pad(bytes)));
}

export function openBytes(key, n, box) {
  return chacha20poly1305(key, counterNonce(n)).decrypt(unb64(box));
}

// One socket's two directions, opened in the order sealed (a websocket keeps it).
export class Channel {
  constructor(sendKey, receiveKey) {
    Object.assign(this, { sendKey, receiveKey, sent: 0, received: 0 });
  }

  seal(text) {
    const box = sealBytes(this.sendKey, this.sent, encoder.encode(text));
    this.sent += 1;
    return `{"type":"sealed","box":"${box}"}`;
  }

  open(message) {
    const frame = JSON.parse(message);
    if (!frame || frame.type !== "sealed" || typeof frame.box !== "string") throw new Error("not sealed");
    const text = decoder.decode(openBytes(this.receiveKey, this.received, frame.box));
    this.received += 1;
    return text.replace(/ +$/, "");
  }
}

// A WebSocket seen through the channel: `onopen` once the channel is keyed, `onmessage`
// with each opened frame, `send` seals. The rest (onclose, readyState, close) is the
// socket's own, so net.js's Connection drives it as it drives a WebSocket.
export class SealedSocket {
  constructor(url, token) {
    const { psk, id } = keyOf(token);
    const nonce = newNonce();
    this.channel = null;
    this.onopen = null;
    this.onmessage = null;
    this.onclose = null;
    this.onerror = null;
    const ws = new WebSocket(url);
    this.ws = ws;
    ws.onopen = () => ws.send(JSON.stringify({ type: "open", id, nonce }));
    ws.onmessage = (m) => {
      if (!this.channel) {
        let opened;
        try { opened = JSON.parse(m.data); } catch (err) { opened = null; }
        if (!opened || opened.type !== "opened") { this.broken(); return; }
        const keys = derive(psk, id, nonce, opened.nonce);
        this.channel = new Channel(keys.up, keys.down);
        if (this.onopen) this.onopen();
        return;
      }
      let data;
      try { data = this.channel.open(m.data); } catch (err) { this.broken(); return; }
      if (this.onmessage) this.onmessage({ data });
    };
    ws.onclose = (ev) => { if (this.onclose) this.onclose(ev); };
    ws.onerror = (ev) => { if (this.onerror) this.onerror(ev); };
  }

  // a message that does not open: not the server that holds this token's digest
  broken() {
    try { this.ws.close(4000, "channel broken"); } catch (err) { /* closing */ }
  }

  get readyState() {
    const state = this.ws.readyState;
    return state === 1 && !this.channel ? 0 : state;
  }

  send(text) {
    if (!this.channel) throw new Error("the channel is not open yet");
    this.ws.send(this.channel.seal(text));
  }

  close(code, reason) {
    this.ws.close(code, reason);
  }
}

// HTTP through the channel (server/web/sealed.py): one channel per token and page, opened
// at the first request; each request sealed under a counter used once. `sealedFetch`
// answers a Response, as fetch does, so callers read it as they would any other.
const httpChannels = new Map();

async function httpChannel(token) {
  if (!httpChannels.has(token)) {
    const opening = (async () => {
      const { psk, id } = keyOf(token);
      const nonce = newNonce();
      const res = await fetch("/channel", {
        method: "POST", headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ id, nonce }),
      });
      if (!res.ok) throw new Error(`${res.status} ${await res.text()}`);
      const opened = await res.json();
      return { ...derive(psk, id, nonce, opened.nonce), name: opened.channel, n: 0 };
    })();
    httpChannels.set(token, opening);
    opening.catch(() => httpChannels.delete(token));
  }
  return httpChannels.get(token);
}

function bodyText(body) {
  if (body === undefined || body === null) return "";
  if (typeof body === "string") return body;
  throw new Error("a sealed request's body is text (JSON)");
}

export async function sealedFetch(path, options = {}, token) {
  const headers = {};
  for (const [name, value] of Object.entries(options.headers || {})) {
    if (name.toLowerCase() !== "authorization") headers[name] = value; // the channel is the proof
  }
  const inner = { method: (options.method || "GET").toUpperCase(), path, headers, body: bodyText(options.body) };
  for (let attempt = 0; ; attempt += 1) {
    const ch = await httpChannel(token);
    const n = ch.n;
    ch.n += 1;
    const res = await fetch("/sealed", {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ channel: ch.name, n, box: sealBytes(ch.up, n, encoder.encode(JSON.stringify(inner))) }),
    });
    if (res.status === 401 && attempt === 0) {
      // the server restarted (its channels live in memory): open another, once
      httpChannels.delete(token);
      continue;
    }
    if (!res.ok) return res;
    const answer = JSON.parse(decoder.decode(openBytes(ch.down, n, (await res.json()).box)));
    const status = answer.status;
    const body = [101, 204, 205, 304].includes(status) ? null : unb64(answer.body);
    return new Response(body, { status, headers: answer.headers });
  }
}

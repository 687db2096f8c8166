// The phone checks its own dice once the session is closed (FAIR-2).
//
// session.closed reveals the seed whose SHA-256 session.opened committed to. Every draw this
// phone received whole is derived again here exactly as events/fair.py documents it, with
// HMAC-SHA256 from a vendored, audited library (vendor/noble-hashes): plain HTTP over the LAN
// gives no Web Crypto `subtle`, and crypto is not written by hand.
//
//   block b of draw n = HMAC-SHA256(key = seed, msg = UTF-8 of the compact JSON
//                       [session, n, entropy, b]            (a record without a stream)
//                       [session, stream, n, entropy, b]    (a record drawn from a stream)
//
// The chunks of each block, `width` bytes big-endian, are kept when below the largest
// multiple of `sides` not above 256**width; the face is x % sides + 1; next block when a block
// runs out. JSON.stringify writes what Python's json.dumps(separators=(",", ":"),
// ensure_ascii=False) writes for strings and integers (the same escapes: \" \\ \b \f \n \r
// \t and \u00xx below 0x20, everything else as is); tests/web/test_web_verify.py holds the two
// to it on random sessions, streams and entropy.

import { hmac } from "./vendor/noble-hashes/hmac.js";
import { sha256 } from "./vendor/noble-hashes/sha2.js";

const utf8 = new TextEncoder();

export function hexToBytes(hex) {
  if (typeof hex !== "string" || hex.length % 2 || !/^[0-9a-fA-F]*$/.test(hex)) throw new Error(`the revealed seed ${JSON.stringify(hex)} is not hex`);
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

const toHex = (bytes) => [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");

export function commitment(seed) {
  return toHex(sha256(seed));
}

export function blockMessage(session, stream, counter, entropy, block) {
  const parts = stream ? [session, stream, counter, entropy, block] : [session, counter, entropy, block];
  return utf8.encode(JSON.stringify(parts));
}

function width(sides) {
  let w = 1;
  while (256 ** w < sides) w++;
  return w;
}

// events.fair.derive_face; `stream` "" is the record form without a stream.
export function deriveFace(seed, session, stream, counter, sides, entropy = "") {
  if (!Number.isInteger(sides) || sides < 1) throw new Error(`a die has at least one side, not ${sides}`);
  const w = width(sides);
  if (w > 6) throw new Error(`a d${sides} is beyond this check`);
  const limit = Math.floor(256 ** w / sides) * sides;
  for (let block = 0; ; block++) { // leaves with probability 1, as fair.py's loop
    const digest = hmac(sha256, seed, blockMessage(session, stream, counter, entropy, block));
    for (let i = 0; i + w <= digest.length; i += w) {
      let x = 0;
      for (let j = 0; j < w; j++) x = x * 256 + digest[i + j];
      if (x < limit) return (x % sides) + 1;
    }
  }
}

// What a roll shows, in draw order, when the phone can tell: an action roll's action dice then
// its D+/- (events/action.py), a V5 pool's normal then Hunger dice (events/v5.py), a Rouse
// check's one die. A rerolled pool is checked by its records alone.
function shownFaces(r) {
  if (r.rerolled) return null;
  if (r.kind === "action") return (r.normal || []).concat(r.plusminus || []);
  if (r.kind === "v5" || r.kind === "rouse") return (r.normal || []).concat(r.hunger || []);
  return null;
}

// MET-2: a throw the server drew is a d3, face 1 rock, 2 paper, 3 scissors (events/met_rules.py
// DRAWN); the bomb is never drawn.
export const DRAWN = ["rock", "paper", "scissors"];

// A DrawRecord travels array-like (events/model.py): [counter, sides, face, entropy, stream],
// its trailing fields absent in older logs; an object form is read as well.
export function drawRecord(raw) {
  if (Array.isArray(raw)) {
    const [counter, sides, face, entropy = "", stream = ""] = raw;
    return { counter, sides, face, entropy, stream };
  }
  return { entropy: "", stream: "", ...raw };
}

function where(record) {
  return `${record.stream ? `${record.stream} ` : ""}#${record.counter} (d${record.sides})`;
}

// One roll (or a throw the server drew, kind "throw"): null when it verifies, else the first
// mismatch in words.
export function checkRoll(seed, session, roll, say = defaultSay) {
  const draws = (roll.draws || []).map(drawRecord);
  for (const record of draws) {
    let face;
    try {
      face = deriveFace(seed, session, record.stream || "", record.counter, record.sides, record.entropy || "");
    } catch (err) {
      return say("error", { where: where(record), error: err.message });
    }
    if (face !== record.face) return say("face", { where: where(record), recorded: record.face, expected: face });
  }
  if (roll.kind === "throw") {
    const drawn = draws.length === 1 && draws[0].sides === DRAWN.length ? DRAWN[draws[0].face - 1] : null;
    return roll.choice === drawn ? null : say("throw", { shown: roll.choice, drawn: drawn ?? draws.map((d) => `d${d.sides} ${d.face}`).join(" ") });
  }
  const shown = shownFaces(roll);
  if (shown && draws.length && shown.join(",") !== draws.map((d) => d.face).join(",")) {
    return say("shown", { shown: shown.join(" "), drawn: draws.map((d) => d.face).join(" ") });
  }
  return null;
}

const WORDS = {
  face: "draw {where}: recorded {recorded}, the seed gives {expected}",
  shown: "the dice shown ({shown}) are not the dice drawn ({drawn})",
  throw: "the throw shown ({shown}) is not the throw drawn ({drawn})",
  error: "draw {where}: {error}",
  commitment: "the revealed seed does not hash to the commitment made at session open",
  seed: "{error}",
};

function defaultSay(key, fields = {}) {
  return WORDS[key].replace(/\{(\w+)\}/g, (_, k) => String(fields[k]));
}

// Every roll of `rolls` (the phone's own, its drawn throws among them), checked against the seed session.closed revealed.
// Returns { seedOk, message, results: Map(roll id -> null | mismatch) }.
export function checkRolls(vm, session, rolls, say = defaultSay) {
  const results = new Map();
  let seed;
  try {
    seed = hexToBytes(vm.session.seed || "");
  } catch (err) {
    return { seedOk: false, message: say("seed", { error: err.message }), results };
  }
  if (vm.session.commitment && commitment(seed) !== String(vm.session.commitment).toLowerCase()) {
    return { seedOk: false, message: say("commitment"), results };
  }
  for (const r of rolls) if ((r.draws || []).length) results.set(r, checkRoll(seed, session, r, say));
  return { seedOk: true, message: "", results };
}

// What tells a player that something wants them, beyond colour and vibration (Safari and
// Firefox have no navigator.vibrate): a banner that moves and says so in words, a short
// tone once the player has touched the page (browsers play sound only after that), and
// the screen kept on during a challenge where the engine offers a wake lock.

import { esc } from "./ui.js";

let lock = null;
let asking = false;
let wanted = false;

// The screen stays on while ``on`` (a challenge is open for this player).
export async function keepAwake(on) {
  wanted = on;
  if (!on) { release(); return; }
  if (lock || asking || !("wakeLock" in navigator) || document.visibilityState !== "visible") return;
  asking = true;
  try {
    const got = await navigator.wakeLock.request("screen");
    got.addEventListener("release", () => { if (lock === got) lock = null; });
    lock = got;
  } catch (err) {
    lock = null; // refused (no secure context, low battery): the screen may dim
  } finally {
    asking = false;
  }
  if (!wanted) release();
}

function release() {
  const held = lock;
  lock = null;
  if (held) held.release().catch(() => {});
}

export const awake = () => !!lock;

// the browser lets a wake lock go when the page is hidden: asked again once shown
document.addEventListener("visibilitychange", () => { if (document.visibilityState === "visible" && wanted) keepAwake(true); });

// A buzz where the engine has one and the page may (after the player's first touch).
export function vibrate(pattern) {
  try { if ("vibrate" in navigator) navigator.vibrate(pattern); } catch (err) { /* not allowed */ }
}

// A cue: the banner for a few seconds, and a tone where the player allowed sound.
export function cue(text, sound) {
  let banner = document.getElementById("cue");
  if (!banner) {
    banner = document.createElement("p");
    banner.id = "cue";
    banner.className = "cue";
    banner.setAttribute("role", "status");
    banner.dataset.testid = "cue";
    document.body.appendChild(banner);
  }
  banner.innerHTML = `<span aria-hidden="true">▶</span> ${esc(text)}`;
  banner.hidden = false;
  clearTimeout(cue.timer);
  cue.timer = setTimeout(() => { banner.hidden = true; }, 4000);
  if (sound) tone();
}

let audio = null;
function tone() {
  try {
    audio = audio || new (window.AudioContext || window.webkitAudioContext)();
    const osc = audio.createOscillator();
    const gain = audio.createGain();
    gain.gain.value = 0.08;
    osc.frequency.value = 880;
    osc.connect(gain).connect(audio.destination);
    osc.start();
    osc.stop(audio.currentTime + 0.15);
  } catch (err) { /* no audio here */ }
}

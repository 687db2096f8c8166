// The storyteller's devices card: every live token of the session (each character's
// phones, the walls, the storytellers' tablets), by grant id, with the sockets each holds
// open, and a revoke button on each (GET /sessions/{s}/devices, POST .../{grant}/revoke).
// A lost tablet or phone is revoked here; its socket closes at once.

import { app, t, esc, nameOf } from "./ui.js";
import { ask } from "./confirm.js";
import { sealedFetch } from "./channel.js";

function url(path = "") {
  return `/sessions/${encodeURIComponent(app.session)}/devices${path}`;
}

async function call(path, method = "GET") {
  const res = await sealedFetch(url(path), { method }, app.token);
  if (!res.ok) throw new Error(`${res.status} ${(await res.json().catch(() => ({}))).detail || ""}`.trim());
  return res.json();
}

export async function loadDevices(render) {
  try {
    app.devices = await call();
    app.devicesError = "";
  } catch (err) {
    app.devicesError = err.message || t("offline_short");
  }
  render();
}

export function revokeDevice(grant, render) {
  const device = (app.devices || []).find((d) => d.grant === grant);
  if (!device) return;
  ask({ text: t("revoke_device_confirm", whoOf(device)), yes: t("revoke_device"), key: `revoke:${grant}` },
    async () => {
      try {
        await call(`/${grant}/revoke`, "POST");
      } catch (err) {
        app.devicesError = err.message;
      }
      await loadDevices(render);
    });
}

function whoOf(d) {
  if (d.role === "player") return nameOf(d.character);
  return `${t(d.role === "observer" ? "device_observer" : "device_storyteller")}${d.name ? ` (${d.name})` : ""}`;
}

export function devicesView() {
  const devices = app.devices;
  const rows = (devices || []).map((d) => `<li data-testid="device" data-grant="${esc(d.grant)}" data-role="${esc(d.role)}"
      ${d.character ? `data-character="${esc(d.character)}"` : ""}>
      <span>${esc(whoOf(d))}</span> <code>${esc(d.grant)}</code>
      <span class="muted">${esc(t("device_sockets", d.sockets))}${d.you ? ` · ${esc(t("device_you"))}` : ""}</span>
      <button class="danger" data-act="revoke-device" data-grant="${esc(d.grant)}" data-testid="revoke-device">${esc(t("revoke_device"))}</button>
    </li>`).join("");
  return `<section class="card" aria-labelledby="h-devices" data-testid="devices"><h2 id="h-devices">${esc(t("devices"))}</h2>
    <button data-act="devices" data-testid="show-devices">${esc(t(devices ? "devices_refresh" : "devices_show"))}</button>
    ${app.devicesError ? `<p class="warn" role="alert">${esc(app.devicesError)}</p>` : ""}
    ${devices ? `<ul class="devices">${rows}</ul>` : ""}
  </section>`;
}

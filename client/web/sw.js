// The app shell, cached so the page opens even when the venue's Wi-Fi does not answer.
// Network first: a storyteller's update reaches phones at the next load; the cache is
// only the fallback. Registered only on HTTPS or localhost (app.js).
const CACHE = "conteur-shell-v8";
// The play page (its record of challenges played by hand, handplay.js, matters most
// offline), the review (storytellers), and offline.html, the old address of the record.
const SHELL = ["./", "index.html", "app.js", "ui.js", "player.js", "storyteller.js", "sheet_editor.js", "fold.js", "net.js", "i18n.js", "confirm.js",
  "narrate.js", "messages.js", "messages/en.json", "messages/fr.json", "handplay.js", "closed.js", "desk.js", "cues.js", "app.css", "icon.svg", "manifest.webmanifest",
  "review.html", "review.js", "review.css", "offline.html", "offline.js", "verify.js",
  "vendor/noble-hashes/hmac.js", "vendor/noble-hashes/sha2.js", "vendor/noble-hashes/_md.js",
  "vendor/noble-hashes/_u64.js", "vendor/noble-hashes/utils.js", "vendor/noble-hashes/hkdf.js", "channel.js",
  "vendor/noble-ciphers/chacha.js", "vendor/noble-ciphers/_arx.js", "vendor/noble-ciphers/_poly1305.js",
  "vendor/noble-ciphers/utils.js"];

self.addEventListener("install", (event) => {
  event.waitUntil(caches.open(CACHE).then((cache) => cache.addAll(SHELL)).then(() => self.skipWaiting()));
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    caches.keys()
      .then((keys) => Promise.all(keys.filter((k) => k !== CACHE).map((k) => caches.delete(k))))
      .then(() => self.clients.claim()),
  );
});

self.addEventListener("fetch", (event) => {
  const url = new URL(event.request.url);
  if (event.request.method !== "GET" || url.origin !== location.origin) return;
  const shell = url.pathname === "/" || SHELL.some((p) => url.pathname.endsWith(`/${p}`));
  if (!shell) return; // the API and the websocket are never cached
  event.respondWith(
    fetch(event.request)
      .then((response) => {
        const copy = response.clone();
        caches.open(CACHE).then((cache) => cache.put(event.request, copy));
        return response;
      })
      .catch(() => caches.match(event.request, { ignoreSearch: true })),
  );
});

// The schema page (/schema): Redoc, vendored (vendor/redoc), on this server's OpenAPI
// document. A file of its own: the Content-Security-Policy runs no inline script.
const root = document.getElementById("redoc-container");
globalThis.Redoc.init(root.dataset.spec, { hideDownloadButton: false }, root);

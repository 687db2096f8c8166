// The messages of every language, as data: events/messages/<lang>.json, which
// the server serves at /messages/ beside this app and Python reads too (events/catalogue.py).
// Loaded once, before any module that reads them runs (top-level await); the service
// worker caches both files with the shell, so the app opens offline in either language.

export const LANGS = ["en", "fr"];

async function load(lang) {
  const res = await fetch(new URL(`messages/${lang}.json`, import.meta.url));
  if (!res.ok) throw new Error(`messages/${lang}.json: ${res.status}`);
  return res.json();
}

export const CATALOGUE = Object.fromEntries(await Promise.all(LANGS.map(async (l) => [l, await load(l)])));

// One section of one language (an unknown language is English).
export function section(name, lang) {
  return (CATALOGUE[lang] || CATALOGUE.en)[name];
}

// {name} replaced by the field as text, "" when missing or null: as events/catalogue.py's fill.
export function fill(template, fields = {}) {
  return template.replace(/\{(\w+)\}/g, (_, k) => (fields[k] == null ? "" : String(fields[k])));
}

// A rule's number (MET-3, ACT-12) as the server's refusals cite it: the event keeps it, a
// sentence a person reads goes without it (events/catalogue.py's without_rule_codes).
const RULE = String.raw`(?:MET|ACT|V5|TIME|FAIR)-\d+[a-z]?`;
const RULE_CODE = new RegExp(String.raw`\s*\(${RULE}(?:,\s*${RULE})*\)|\b${RULE}:?\s?`, "g");
export function withoutRuleCodes(text) {
  return String(text ?? "").replace(RULE_CODE, "").trim();
}

// What a refusal asks of the player in a language's own words (the "refusals" section):
// those of the first rule its message cites, else of its code; null when neither has any.
// A reject frame carries no rule, so the reason is read from the message, by the tablet's
// log too: the notice, the log and the review say the same (events/catalogue.py's refusal_words).
const FIRST_RULE = new RegExp(String.raw`\b${RULE}`);
export function refusalWords(message, code, lang) {
  const words = section("refusals", lang);
  const cited = String(message ?? "").match(FIRST_RULE);
  return (cited && words[cited[0]]) || words[code ?? ""] || null;
}

// What a screen says of a refusal (a reject frame, a command_rejected event): in English
// the server's own message without its rule number, in another language refusalWords;
// "" when neither says anything, for the caller's "no reason given".
export function refusalReason(refused, lang) {
  return (lang === "en" ? withoutRuleCodes(refused.message) : refusalWords(refused.message, refused.code, lang)) || "";
}

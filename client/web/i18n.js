// French and English, following navigator.language (French for any "fr-*").

import { section } from "./messages.js";

// the strings are data: events/messages/<lang>.json, section "app" (one catalogue per
// language, which Python reads too)
const en = section("app", "en");
const fr = section("app", "fr");

export const STRINGS = { en, fr };

export function pickLang(languages) {
  for (const l of languages || []) {
    const base = String(l).toLowerCase().slice(0, 2);
    if (base in STRINGS) return base;
  }
  return "en";
}

export function translator(lang) {
  const table = STRINGS[lang] || en;
  return (key, ...args) => {
    let s = table[key] ?? en[key] ?? key;
    args.forEach((a, i) => { s = s.replace(`{${i}}`, a); });
    return s;
  };
}

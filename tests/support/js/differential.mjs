// The web app's own modules under node, for tests/web/test_differential.py: reads views of a
// night as JSON on stdin ({views: [{name, events: [[seq, event], ...], checkpoints,
// actions}]}), folds each with client/web/fold.js (its projection after each checkpoint,
// an index into events), tells every event with client/web/narrate.js in English and
// French, orders the MET-9 turns of ``actions``, and writes it all as JSON on stdout. The catalogues are read
// from events/messages/, where the server serves them from at /messages/.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const ROOT = new URL("../../../", import.meta.url);
const MESSAGES = new URL("events/messages/", ROOT);

// messages.js fetches messages/<lang>.json beside itself, as the browser does
globalThis.fetch = async (url) => {
  const name = new URL(url).pathname.split("/").pop();
  const text = readFileSync(fileURLToPath(new URL(name, MESSAGES)), "utf8");
  return { ok: true, status: 200, json: async () => JSON.parse(text) };
};

const { initialView, applyEvent, initiativeOrder, SEALED } = await import(new URL("client/web/fold.js", ROOT));
const { teller } = await import(new URL("client/web/narrate.js", ROOT));

const sorted = (o) => Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : 1)));

// fold.js marks what this viewer was told only exists as SEALED; Python's state holds None
const unsealed = (v) => (v === SEALED ? null : v);

// v5._roll_key: each character's latest pool roll, a blind one apart
function latestPools(rolls) {
  const latest = {};
  for (const r of rolls) {
    if (r.kind !== "v5" || r.hidden) continue;
    latest[r.visibility === "blind" ? `blind:${r.character || ""}` : r.character || ""] =
      { id: r.id, normal: r.normal, hunger: r.hunger, rerolled: !!r.rerolled };
  }
  return latest;
}

// what tests/web/test_differential.py's python_view computes from the Python state
function projection(vm) {
  return {
    session: { name: vm.session.name, status: vm.session.status, frozen: vm.session.frozen, turn: vm.session.turn,
      game_seconds: vm.session.gameSeconds, turn_seconds: vm.session.turnSeconds,
      options: vm.session.status !== "pending" ? vm.session.options : null },
    characters: sorted(Object.fromEntries(Object.values(vm.characters).map((c) =>
      [c.id, { name: c.name, scene: c.scene, out_of_game: c.outOfGame, no_sheet: c.noSheet, sheet: c.sheet }]))),
    scenes: sorted(Object.fromEntries(Object.values(vm.scenes).map((s) => [s.id, { name: s.name, open: s.open, frozen: s.frozen }]))),
    challenges: sorted(Object.fromEntries(Object.values(vm.challenges).map((c) =>
      [c.id, { status: c.status, winner: c.winner, loser: c.loser, round: c.round,
        kind: c.kind, initiator: c.initiator, defender: c.defender, tested: c.tested,
        attribute: c.attribute, defender_attribute: c.defenderAttribute, difficulty: c.difficulty, tests: c.tests,
        test: c.test, abilities: c.abilities, defender_abilities: c.defenderAbilities, mutual: c.mutual, by: c.by,
        reason: c.reason, retests: sorted(c.retests), overbids: c.overbids, overbid_value: unsealed(c.overbidValue ?? null),
        cancellable: c.cancellable, thrown: Object.keys(c.throws).sort(), bid: Object.keys(c.bids).sort(),
        group: c.group, defenders: c.defenders, group_results: sorted(c.groupResults) }]))),
    debts: (vm.debts || []).map((d) => [d.debtor, d.creditor, d.challenge]),
    hunger: sorted(vm.hunger),
    v5_rolls: sorted(latestPools(vm.rolls)),
    waiting: sorted(Object.fromEntries(Object.values(vm.waiting).map((w) =>
      [w.id, { character: w.character, opponent: w.opponent, visibility: w.visibility }]))),
    pending: sorted(Object.fromEntries(Object.values(vm.pending).map((b) =>
      [b.id, { character: b.character, turns: b.turns, started_turn: b.startedTurn, last_turn: b.lastTurn,
        visibility: b.visibility }]))),
    dead: sorted(vm.dead),
    modifiers: (vm.modifiers || []).map((m) => m.id).sort(),
    offline: sorted(Object.fromEntries(Object.values(vm.offline).map((r) => [r.id, { status: r.status, winner: r.winner,
      recorder: r.recorder, opponent: r.opponent, attribute: r.attribute }]))),
    countdowns: sorted(Object.fromEntries(Object.values((vm.desk || { countdowns: {} }).countdowns).map((c) =>
      [c.id, { label: c.label, unit: c.unit, length: c.length, ends_at: c.endsAt, ends_turn: c.endsTurn, paused: c.paused,
        remaining: c.remaining, scope: c.scope, scene: c.scene }]))),
  };
}

const input = JSON.parse(readFileSync(0, "utf8"));
const out = [];
for (const view of input.views) {
  const vm = initialView();
  const errors = []; // fold.js keeps going past a throwing handler: say so here
  const at = new Set(view.checkpoints || []);
  const folds = [];
  for (const [i, [seq, event]] of view.events.entries()) {
    applyEvent(vm, seq, event);
    if (at.has(i)) folds.push(projection(vm));
    const last = vm.log[vm.log.length - 1];
    if (last.error) errors.push(`${seq} ${last.type}: ${last.error}`);
  }
  const told = { en: teller(vm, "en"), fr: teller(vm, "fr") };
  const sentences = { en: [], fr: [] };
  for (const [, event] of view.events) for (const lang of ["en", "fr"]) sentences[lang].push(told[lang](event));
  out.push({ name: view.name, folds, sentences, errors,
    initiative: (view.actions || []).map((actions) => initiativeOrder(vm, actions)) });
}
process.stdout.write(JSON.stringify(out));

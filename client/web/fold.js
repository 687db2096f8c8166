// The client-side fold: events (as this viewer received them) -> a view model.
//
// Tolerant by design: an event type this file does not know is kept in the log and
// otherwise ignored, and a challenge event is merged field by field, so a newer server
// never breaks an older phone. Handlers are keyed by event type (a dict, like the
// server's fold).

export function initialView() {
  return {
    head: 0,
    session: { name: "", status: "pending", frozen: false, turn: 0, gameSeconds: 0, turnSeconds: 4 },
    characters: {},
    scenes: {},
    challenges: {},
    rolls: [],
    drawnThrows: [], // MET-2: throws the server drew for a side (d3), whole for that side only
    waiting: {}, // ACT-12: opposed rolls not yet answered, by the initiator's roll id
    oppositions: [], // ACT-12: settled by the dice or ruled by a storyteller, oldest first
    pending: {}, // ACT-2: multi-turn actions begun, by roll id
    dead: {}, // ACT-8: sacrificed characters roll no more
    hunger: {},
    offline: {}, // challenges played by hand (events/offline.py), by record id
    rejections: [],
    log: [],
  };
}

function character(vm, id) {
  if (!vm.characters[id]) vm.characters[id] = { id, name: id, sheet: null, scene: null, outOfGame: false, noSheet: false };
  return vm.characters[id];
}

function scene(vm, id) {
  if (!vm.scenes[id]) vm.scenes[id] = { id, name: id, open: true, frozen: false };
  return vm.scenes[id];
}

const H = {
  "session.opened": (vm, e) => {
    Object.assign(vm.session, { name: e.name || "", status: "open", turnSeconds: e.turn_seconds || 4, options: e.options || {},
      commitment: e.seed_commitment || "" });
    // MET-13: the tie debts the chronicle's previous session left unpaid (met.evolve_debts_carried)
    for (const d of (e.carried && e.carried.tie_debts) || []) {
      const debt = { debtor: d.debtor, creditor: d.creditor, challenge: d.challenge || "" };
      if (!(vm.debts || []).some((k) => sameDebt(k, debt))) vm.debts = (vm.debts || []).concat([debt]);
    }
  },
  // FAIR-2: the seed, revealed at close, lets the phone check its own dice (verify.js)
  "session.closed": (vm, e) => { vm.session.status = "closed"; vm.session.seed = e.seed || ""; },
  "session.character_added": (vm, e) => {
    const c = character(vm, e.character);
    c.name = e.name || e.character;
    if (e.sheet) c.sheet = e.sheet;
  },
  "session.scene_opened": (vm, e) => Object.assign(scene(vm, e.scene), { name: e.name || e.scene, open: true }),
  "session.scene_closed": (vm, e) => {
    scene(vm, e.scene).open = false;
    for (const c of Object.values(vm.characters)) if (c.scene === e.scene) c.scene = null;
  },
  "session.scene_joined": (vm, e) => { character(vm, e.character).scene = e.scene; },
  "session.scene_left": (vm, e) => {
    const c = character(vm, e.character);
    if (c.scene === e.scene) c.scene = null;
  },
  "session.time_out_called": (vm, e) => timeOut(vm, e, true),
  "session.time_out_ended": (vm, e) => timeOut(vm, e, false),
  "session.went_out_of_game": (vm, e) => { character(vm, e.character).outOfGame = true; },
  "session.came_back_in_game": (vm, e) => { character(vm, e.character).outOfGame = false; },
  "session.turn_advanced": (vm, e) => clockMoved(vm, e),
  "session.time_skipped": (vm, e) => clockMoved(vm, e),
  "session.turn_length_set": (vm, e) => { vm.session.turnSeconds = e.seconds; },
  "session.no_sheet_marked": (vm, e) => { character(vm, e.character).noSheet = e.no_sheet !== false; },
  // the sealed form (another character's) has no sheet: nothing to change here. V5-5 Hunger
  // lives in ``hunger`` once it moved: a sheet with another starting Hunger sets it again
  // (v5.evolve_sheet_amended), so the phone shows the new sheet's Hunger, not the old one's
  "session.sheet_amended": (vm, e) => {
    if (!e.sheet) return;
    const c = character(vm, e.character);
    if (e.character in vm.hunger && startingValueChanged(c.sheet, e.sheet, "hunger")) delete vm.hunger[e.character];
    c.sheet = e.sheet;
  },
  "v5.hunger_set": (vm, e) => { vm.hunger[e.character] = e.hunger; },
  "v5.rouse_checked": (vm, e) => {
    vm.hunger[e.character] = e.hunger_after;
    vm.rolls.push({ id: e.roll, kind: "rouse", character: e.character, normal: e.face == null ? [] : [e.face], hunger: [], success: e.face > 5, raised: e.face <= 5, hungerAfter: e.hunger_after, label: e.label || "", draws: e.draws || [] });
  },
  "v5.pool_rolled": (vm, e) => { vm.rolls.push(v5Roll(e)); },
  "v5.willpower_rerolled": (vm, e) => {
    const i = vm.rolls.findIndex((r) => r.id === e.roll);
    const roll = { ...v5Roll(e), rerolled: e.dice || [] };
    if (i >= 0) vm.rolls[i] = { ...vm.rolls[i], ...roll, label: vm.rolls[i].label, draws: (vm.rolls[i].draws || []).concat(e.draws || []) };
    else vm.rolls.push(roll);
  },
  command_rejected: (vm, e) => { vm.rejections.push({ type: e.command_type, code: e.code, message: e.message, character: e.character }); },
};

// session.starting_value_changed: a field absent from a sheet's kind counts as none
const startingValueChanged = (old, sheet, field) => ((old || {})[field] ?? null) !== (sheet[field] ?? null);

function v5Roll(e) {
  return {
    id: e.roll, kind: "v5", character: e.character, pool: e.pool, difficulty: e.difficulty,
    normal: e.normal || [], hunger: e.hunger || [], successes: e.successes, margin: e.margin,
    success: e.success, critical: e.critical, messy: e.messy, bestial: e.bestial,
    label: e.label || e.source || "", visibility: e.visibility, hidden: !e.normal && !e.hunger,
    draws: e.draws || [],
  };
}

// TIME-1 moves the clock; ACT-7: modifiers that ran out leave with it (events/action.py
// running() and evolve_clock_moved), so a long night's view does not keep every one.
function clockMoved(vm, e) {
  Object.assign(vm.session, { turn: e.turn, gameSeconds: e.game_seconds });
  if (vm.modifiers && vm.modifiers.length) vm.modifiers = vm.modifiers.filter((m) => running(m, e.turn, e.game_seconds));
}

export function running(m, turn, seconds) {
  return (m.expiresTurn == null || turn <= m.expiresTurn) && (m.expiresSeconds == null || seconds < m.expiresSeconds);
}

// Action dice (ACT-3..6): the action dice against the threshold, then the D+/- dice;
// mirrors events/action.py's waiting (ACT-12) and pending (ACT-2) maps.
const ACTION = {
  "action.modifier_applied": (vm, e) => {
    vm.modifiers = (vm.modifiers || []).concat([{ id: e.modifier, character: e.character, value: e.value, duration: e.duration, unit: e.unit,
      expiresTurn: e.expires_turn ?? null, expiresSeconds: e.expires_seconds ?? null }]);
  },
  "action.rolled": (vm, e, seq) => {
    vm.rolls.push(actionRoll(e));
    if (e.opponent) waitFor(vm, e, seq);
    if (e.against) delete vm.waiting[e.against];
    delete vm.pending[e.roll]; // a resumed action rolls under the id it began with
  },
  // ACT-12 sealed: the defender (and, when open, everyone) learns that a roll waits, without
  // its dice; the roller and storytellers had it from the sealed action.rolled already
  "action.opposed": (vm, e, seq) => { if (!vm.waiting[e.roll]) waitFor(vm, e, seq); },
  // ...and sees it whole once answered: the roll joins this phone's rolls if it was sealed here
  "action.revealed": (vm, e) => {
    if (e.rolled && !vm.rolls.some((r) => r.kind === "action" && r.id === e.roll)) vm.rolls.push(actionRoll(e.rolled));
  },
  "action.begun": (vm, e, seq) => {
    const cmd = e.command || {};
    vm.pending[e.roll] = { id: e.roll, character: e.character, turns: e.turns, startedTurn: e.started_turn,
      lastTurn: e.last_turn, label: e.notation || cmd.test || cmd.characteristic || "", opponent: cmd.opponent ?? null,
      visibility: e.visibility || "open", seq };
  },
  // the defender's roll may be hidden from this viewer: the settlement closes the wait too
  "action.opposition_settled": (vm, e) => {
    delete vm.waiting[e.initiator_roll];
    vm.oppositions.push({ initiatorRoll: e.initiator_roll, defenderRoll: e.defender_roll, initiator: e.initiator,
      defender: e.defender, initiatorPs: e.initiator_ps, defenderPs: e.defender_ps, winner: e.winner,
      visibility: e.visibility || "open" });
  },
  "action.sacrificed": (vm, e) => { vm.dead[e.character] = e.roll; },
  // a storyteller overruled a roll left waiting (ACT-12) or a stuck long action (ACT-2): the
  // answer card and the Resume button go; a ruled contest joins ``oppositions`` marked
  // ``ruled`` (no defender's roll, so no defender's PS; winner null when cancelled)
  "action.opposition_ruled": (vm, e) => {
    delete vm.waiting[e.roll];
    vm.oppositions.push({ initiatorRoll: e.roll, defenderRoll: null, initiator: e.character, defender: e.opponent,
      initiatorPs: e.initiator_ps ?? null, defenderPs: null, winner: e.winner ?? null, ruled: true,
      outcome: e.outcome || "", reason: e.reason || "", visibility: e.visibility || "open" });
  },
  "action.cancelled": (vm, e) => { delete vm.pending[e.roll]; },
};

function actionRoll(e) {
  return {
    id: e.roll, kind: "action", character: e.character, normal: e.dice || [], threshold: e.threshold,
    sides: e.sides, signs: e.signs || [], points: e.ps, difficulty: e.difficulty, success: e.success,
    label: e.notation || e.label || e.characteristic || "", option: e.option, hidden: !e.dice,
    visibility: e.visibility, opponent: e.opponent ?? null, against: e.against ?? null,
    net: e.net ?? 0, characteristic: e.characteristic || "",
    plusminus: e.plusminus || [], sealed: !!e.sealed, draws: e.draws || [],
  };
}

// From a sealed action.rolled (its roller, storytellers) the wait knows the dice and PS; from
// action.opposed (the defender, bystanders) only that it waits.
function waitFor(vm, e, seq) {
  vm.waiting[e.roll] = { id: e.roll, character: e.character, opponent: e.opponent,
    characteristic: e.characteristic || "", visibility: e.visibility || "open", turn: e.turn || 0, seq,
    sealed: !!e.sealed, dice: e.dice || null, ps: e.ps ?? null, option: e.option || "none" };
}

// Challenges played by hand (events/offline.py): the recorder's claim, the opponent's
// confirmation or dispute (and the winner it claims), a storyteller's ruling. ``winner``
// is the recorder's claim until confirmed or ruled: ``settled`` says when it is a fact.
const OFFLINE = {
  "offline.recorded": (vm, e, seq) => {
    vm.offline[e.record] = { id: e.record, recorder: e.recorder, opponent: e.opponent, claimed: e.winner,
      winner: e.winner, attribute: e.attribute ?? null, playedAt: e.played_at || "", account: e.account || "",
      status: "recorded", disputed: false, disputedWinner: null, dispute: "", ruling: "", settled: false, seq };
  },
  "offline.confirmed": (vm, e) => { Object.assign(vm.offline[e.record], { status: "confirmed", settled: true }); },
  "offline.disputed": (vm, e) => {
    Object.assign(vm.offline[e.record], { status: "disputed", disputed: true, disputedWinner: e.winner ?? null, dispute: e.reason || "" });
  },
  "offline.ruled": (vm, e) => {
    Object.assign(vm.offline[e.record], { status: "ruled", winner: e.winner, ruling: e.reason || "", settled: true });
  },
};

// Mind's Eye Theatre: mirrors events/met.py's evolvers; ``status`` is the challenge's
// stage: throwing | bidding | window | overbid | resolved | cancelled.
function challenge(vm, id) {
  if (!vm.challenges[id]) {
    vm.challenges[id] = {
      id, kind: "classic", initiator: null, defender: null, tested: null, attribute: null,
      defenderAttribute: null, difficulty: 0, tests: 1, test: 1, abilities: [], defenderAbilities: [],
      round: 1, status: "throwing", throws: {}, bids: {}, revealed: null, winner: null, loser: null,
      by: "", reason: "", retests: {}, overbids: [], history: [], results: {}, cancellable: null,
      group: null, defenders: [], pairs: [], groupResults: {},
    };
  }
  return vm.challenges[id];
}

export const SEALED = "sealed";

const MET = {
  challenge_issued: (c, e) => Object.assign(c, {
    kind: e.kind, initiator: e.initiator, defender: e.defender, tested: e.tested ?? null,
    attribute: e.attribute ?? null, defenderAttribute: e.defender_attribute ?? null,
    difficulty: e.difficulty || 0, tests: e.tests || 1, abilities: e.abilities || [],
    defenderAbilities: e.defender_abilities || [], mutual: !!e.mutual, action: e.action || "",
  }),
  throw_committed: (c, e, vm) => {
    c.throws = { ...c.throws, [e.character]: e.choice ?? SEALED };
    c.cancellable = null;
    // a storyteller let the server draw this throw: its record reaches its side whole (the
    // sealed form has none), so that side's phone checks it after close (verify.js)
    if (e.choice && (e.draws || []).length) {
      vm.drawnThrows.push({ id: `${e.challenge}.${e.round}`, kind: "throw", character: e.character, challenge: e.challenge,
        round: e.round, choice: e.choice, draws: e.draws });
    }
  },
  throws_revealed: (c, e) => {
    c.throws = { ...e.throws };
    c.revealed = { round: e.round, throws: { ...e.throws }, winner: e.winner ?? null };
    c.status = e.winner ? "throwing" : "bidding";
    c.bids = {};
  },
  bid_declared: (c, e) => { c.bids = { ...c.bids, [e.character]: e.value ?? SEALED }; },
  bids_compared: (c, e) => { c.lastBids = { round: e.round, bids: { ...c.bids }, winner: e.winner ?? null }; },
  round_won: (c, e) => {
    Object.assign(c, { status: "window", winner: e.winner, loser: e.loser, by: e.by });
    // MET-10/11 successive tests: the last result of each test (a retest redoes it)
    if (c.tested) c.results = { ...c.results, [c.test]: e.winner === c.tested };
  },
  round_started: (c, e) => Object.assign(c, {
    status: "throwing", round: e.round, test: e.test || c.test, throws: {}, bids: {}, overbidValue: null, restart: e.reason || "",
  }),
  // the retest-cancel option (MET-12): the opponent may cancel it until someone throws
  retest_taken: (c, e, vm) => {
    c.retests = { ...c.retests, [e.character]: (c.retests[e.character] || 0) + 1 };
    c.cancellable = vm.session.options && vm.session.options.retest_cancel ? e.character : null;
  },
  retest_cancelled: (c, e) => {
    c.retests = { ...c.retests, [e.character]: (c.retests[e.character] || 0) + 1 };
    c.cancellable = null;
  },
  overbid_declared: (c, e) => Object.assign(c, {
    status: "overbid", overbids: c.overbids.concat([e.character]), overbidValue: e.value ?? SEALED, bids: {},
  }),
  overbid_settled: (c, e) => { c.overbidGranted = e.granted; },
  challenge_conceded: (c, e) => { c.conceded = e.character; },
  challenge_resolved: (c, e) => Object.assign(c, { status: "resolved", winner: e.winner, loser: e.loser, reason: e.reason }),
  challenge_cancelled: (c, e, vm) => {
    Object.assign(c, { status: "cancelled", reason: e.reason || "cancelled" });
    for (const id of c.pairs) { // a group cancelled: its pairs still playing too
      const pair = vm.challenges[id];
      if (pair && OPEN.includes(pair.status)) Object.assign(pair, { status: "cancelled", reason: e.reason || "cancelled" });
    }
  },
  challenge_overruled: (c, e, vm) => {
    Object.assign(c, { status: "resolved", winner: e.winner, loser: e.loser, reason: "overruled" });
    const group = c.group && vm.challenges[c.group];
    if (group && group.status === "resolved") group.groupResults = { ...group.groupResults, [c.defender]: e.winner };
  },
  // a group challenge (MET-1): its own record ("open" until settled) and one pair per
  // defender, each folded as any challenge; in a static group (MET-10) each defender is
  // its pair's tested character, against the group's difficulty
  group_challenge_issued: (c, e, vm) => {
    const kind = e.kind || "classic";
    const common = { kind, initiator: e.initiator, attribute: e.attribute ?? null,
      defenderAttribute: e.defender_attribute ?? null, abilities: e.abilities || [], defenderAbilities: e.defender_abilities || [],
      difficulty: e.difficulty || 0, tests: e.tests || 1, action: e.action || "", mutual: false };
    Object.assign(c, common, { defender: e.defenders[0], status: "open", defenders: e.defenders, pairs: e.pairs });
    e.pairs.forEach((id, i) => Object.assign(challenge(vm, id), common,
      { defender: e.defenders[i], tested: kind === "static" ? e.defenders[i] : null, group: e.challenge }));
  },
  group_settled: (c, e) => Object.assign(c, { status: "resolved", groupResults: { ...(e.results || {}) }, reason: "settled" }),
};

export const OPEN = ["throwing", "bidding", "window", "overbid", "open"];

// a debt is one overbid's (met_rules.TieDebt): the same two sides may owe for two challenges
const sameDebt = (a, b) => a.debtor === b.debtor && a.creditor === b.creditor && a.challenge === b.challenge;

function metEvent(vm, type, e) {
  const name = type.slice(4);
  if (name === "tie_debt_incurred") {
    vm.debts = (vm.debts || []).concat([{ debtor: e.debtor, creditor: e.creditor, challenge: e.challenge || "" }]);
    return;
  }
  if (name === "tie_debt_paid") {
    const i = (vm.debts || []).findIndex((d) => d.debtor === e.debtor && d.creditor === e.creditor);
    if (i >= 0) vm.debts = vm.debts.filter((_, j) => j !== i);
  }
  if (!e.challenge) return;
  const c = challenge(vm, e.challenge);
  c.history.push({ ...e, type: name });
  const handler = MET[name];
  if (handler) handler(c, e, vm);
}

// The side a character plays in a challenge uses these traits (Example 2 of the texts).
export function attributeOf(c, side) {
  return side === c.defender && c.defenderAttribute ? c.defenderAttribute : c.attribute;
}

export function abilitiesOf(c, side) {
  return side === c.defender ? c.defenderAbilities : c.abilities;
}

export function isOpen(c) {
  return c.status !== "resolved" && c.status !== "cancelled";
}

// Mutates ``vm`` in place: a resync folds thousands of events, and the app holds the
// only reference. The log keeps the last LOG_SIZE events for the storyteller's view.
const LOG_SIZE = 400;

export function applyEvent(vm, seq, event) {
  vm.head = Math.max(vm.head, seq);
  const entry = { seq, type: event.type, event };
  vm.log.push(entry);
  if (vm.log.length > LOG_SIZE) vm.log.splice(0, vm.log.length - LOG_SIZE);
  const type = event.type || "";
  try {
    const handler = H[type];
    if (handler) handler(vm, event);
    else if (type.startsWith("met.")) metEvent(vm, type, event);
    else if (ACTION[type]) ACTION[type](vm, event, seq); // seq: since when it waits
    else if (OFFLINE[type]) OFFLINE[type](vm, event, seq);
    else if (DESK[type]) DESK[type](vm, event, seq);
  } catch (err) {
    entry.error = String(err); // an unexpected event must not stop the phone
  }
  return vm;
}

export function foldAll(events) {
  let vm = initialView();
  for (const [seq, e] of events) vm = applyEvent(vm, seq, e);
  return vm;
}

// The ruleset this session plays, from the sheets this viewer can see.
export function rulesetOf(vm, characterId) {
  const mine = characterId && vm.characters[characterId];
  if (mine && mine.sheet && mine.sheet.kind) return mine.sheet.kind;
  for (const c of Object.values(vm.characters)) if (c.sheet && c.sheet.kind) return c.sheet.kind;
  return "met";
}

// MET-4: a bid is bounded by twice the attribute's traits, and by the true score.
export function bidBounds(sheet, attribute, abilities = []) {
  if (!sheet || sheet.kind !== "met" || !attribute) return { min: 0, max: 99 };
  const base = sheet[attribute] || 0;
  const extra = abilities.reduce((s, a) => s + ((sheet.abilities || {})[a] || 0), 0) + ((sheet.bonus || {})[attribute] || 0);
  return { min: 0, max: Math.max(0, Math.min(2 * base, base + extra)) };
}

// MET-9: the order in which [character, attribute] actions of one turn resolve: Celerity
// first, higher first; then more traits in the attribute used; equal on both, one group
// acting together (each keeps its own throw). The twin of events' initiative_order, what
// the tablet shows (tests/web/test_differential.py holds them equal). The sort is stable, as
// Python's: equal actions keep the order they were given in.
const ATTRIBUTES = ["physical", "social", "mental"];

export function initiativeOrder(vm, actions) {
  const key = ([id, attribute]) => {
    const c = vm.characters[id];
    const sheet = c && c.sheet && c.sheet.kind === "met" ? c.sheet : null;
    return [sheet ? sheet.celerity || 0 : 0, sheet && ATTRIBUTES.includes(attribute) ? sheet[attribute] || 0 : 0];
  };
  const sorted = actions.slice().sort((a, b) => { const [x, y] = [key(a), key(b)]; return y[0] - x[0] || y[1] - x[1]; });
  const groups = [];
  for (const action of sorted) {
    const last = groups[groups.length - 1];
    if (last && key(last[0]).join() === key(action).join()) last.push(action); else groups.push([action]);
  }
  return groups;
}

// TIME-5 by scope: a scene's, the session's, or the whole venue's (every session the
// server serves, each told by its own event; ending it leaves the session's own on)
function timeOut(vm, e, on) {
  if (e.scope === "scene" && e.scene) scene(vm, e.scene).frozen = on;
  else if (e.scope === "venue") vm.session.venueFrozen = on;
  else vm.session.frozen = on;
}

export function isFrozenFor(vm, characterId) {
  if (vm.session.frozen || vm.session.venueFrozen) return true;
  const c = characterId && vm.characters[characterId];
  return !!(c && c.scene && vm.scenes[c.scene] && vm.scenes[c.scene].frozen);
}

// The storyteller's desk (events/desk.py): announcements, named countdowns, calls. Kept
// apart from the rest of the view model, made on first use (an older log has none).
// A countdown in minutes runs to ``endsAt`` on the server's clock (epoch seconds; the
// phone sets its own by the server's pong, app.js), one in turns to ``endsTurn``.
export function deskOf(vm) {
  if (!vm.desk) vm.desk = { announcements: [], countdowns: {}, calls: {} };
  return vm.desk;
}

// What a screen reads: the desk, or an empty one left off the view model, so that drawing a
// screen never changes the state the fold made.
const NO_DESK = Object.freeze({ announcements: Object.freeze([]), countdowns: Object.freeze({}), calls: Object.freeze({}) });
export function deskView(vm) {
  return vm.desk || NO_DESK;
}

const DESK = {
  "desk.announced": (vm, e, seq) => {
    deskOf(vm).announcements.push({ id: e.announcement, text: e.text, scope: e.scope || "session", scene: e.scene ?? null, by: e.by || "", seq });
  },
  "desk.countdown_started": (vm, e) => {
    deskOf(vm).countdowns[e.clock] = { id: e.clock, label: e.label || e.clock, unit: e.unit || "minutes", length: e.length || 0,
      endsAt: e.ends_at ?? null, endsTurn: e.ends_turn ?? null, paused: false, remaining: 0,
      scope: e.scope || "session", scene: e.scene ?? null };
  },
  "desk.countdown_paused": (vm, e) => {
    const c = deskOf(vm).countdowns[e.clock];
    if (c) Object.assign(c, { paused: true, remaining: e.remaining || 0, endsAt: null, endsTurn: null });
  },
  "desk.countdown_resumed": (vm, e) => {
    const c = deskOf(vm).countdowns[e.clock];
    if (c) Object.assign(c, { paused: false, remaining: 0, endsAt: e.ends_at ?? null, endsTurn: e.ends_turn ?? null });
  },
  "desk.countdown_cancelled": (vm, e) => { delete deskOf(vm).countdowns[e.clock]; },
  "desk.storyteller_called": (vm, e, seq) => {
    deskOf(vm).calls[e.call] = { id: e.call, character: e.character, kind: e.kind, text: e.text || "", status: "waiting", takenBy: "", seq };
  },
  "desk.call_taken": (vm, e) => {
    const c = deskOf(vm).calls[e.call];
    if (c) Object.assign(c, { status: "taken", takenBy: e.by || "" });
  },
  "desk.call_closed": (vm, e) => {
    const c = deskOf(vm).calls[e.call];
    if (c) c.status = "closed";
  },
};

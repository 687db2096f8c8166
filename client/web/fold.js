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
    hunger: {},
    rejections: [],
    log: [],
  };
}

const clone = (o) => ({ ...o });

function character(vm, id) {
  if (!vm.characters[id]) vm.characters[id] = { id, name: id, sheet: null, scene: null, outOfGame: false, noSheet: false };
  return vm.characters[id];
}

function scene(vm, id) {
  if (!vm.scenes[id]) vm.scenes[id] = { id, name: id, open: true, frozen: false };
  return vm.scenes[id];
}

function challenge(vm, id) {
  if (!vm.challenges[id]) {
    vm.challenges[id] = { id, stage: "open", round: 1, throws: {}, bids: {}, participants: [], history: [], ended: false };
  }
  return vm.challenges[id];
}

const H = {
  "session.opened": (vm, e) => Object.assign(vm.session, { name: e.name || "", status: "open", turnSeconds: e.turn_seconds || 4, options: e.options || {} }),
  "session.closed": (vm) => { vm.session.status = "closed"; },
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
  "session.time_out_called": (vm, e) => {
    if (e.scope === "scene" && e.scene) scene(vm, e.scene).frozen = true;
    else vm.session.frozen = true;
  },
  "session.time_out_ended": (vm, e) => {
    if (e.scope === "scene" && e.scene) scene(vm, e.scene).frozen = false;
    else vm.session.frozen = false;
  },
  "session.went_out_of_game": (vm, e) => { character(vm, e.character).outOfGame = true; },
  "session.came_back_in_game": (vm, e) => { character(vm, e.character).outOfGame = false; },
  "session.turn_advanced": (vm, e) => Object.assign(vm.session, { turn: e.turn, gameSeconds: e.game_seconds }),
  "session.time_skipped": (vm, e) => Object.assign(vm.session, { turn: e.turn, gameSeconds: e.game_seconds }),
  "session.turn_length_set": (vm, e) => { vm.session.turnSeconds = e.seconds; },
  "session.no_sheet_marked": (vm, e) => { character(vm, e.character).noSheet = e.no_sheet !== false; },
  "v5.hunger_set": (vm, e) => { vm.hunger[e.character] = e.hunger; },
  "v5.rouse_checked": (vm, e) => {
    vm.hunger[e.character] = e.hunger_after;
    vm.rolls.push({ id: e.roll, kind: "rouse", character: e.character, normal: [e.face], hunger: [], success: e.face > 5, raised: e.face <= 5, hungerAfter: e.hunger_after, label: e.label || "" });
  },
  "v5.pool_rolled": (vm, e) => { vm.rolls.push(v5Roll(e)); },
  "v5.willpower_rerolled": (vm, e) => {
    const i = vm.rolls.findIndex((r) => r.id === e.roll);
    const roll = { ...v5Roll(e), rerolled: e.dice || [] };
    if (i >= 0) vm.rolls[i] = { ...vm.rolls[i], ...roll, label: vm.rolls[i].label };
    else vm.rolls.push(roll);
  },
  command_rejected: (vm, e) => { vm.rejections.push({ type: e.command_type, code: e.code, message: e.message, character: e.character }); },
};

function v5Roll(e) {
  return {
    id: e.roll, kind: "v5", character: e.character, pool: e.pool, difficulty: e.difficulty,
    normal: e.normal || [], hunger: e.hunger || [], successes: e.successes, margin: e.margin,
    success: e.success, critical: e.critical, messy: e.messy, bestial: e.bestial,
    label: e.label || e.source || "", visibility: e.visibility, hidden: !e.normal && !e.hunger,
  };
}

// Action dice (ACT): any "action.*" event that carries dice becomes a roll.
function actionRoll(vm, e) {
  const dice = e.dice || e.faces || e.action_dice;
  if (!Array.isArray(dice)) return false;
  const id = e.roll || e.action || `a${vm.rolls.length}`;
  const roll = {
    id, kind: "action", character: e.character, normal: dice, threshold: e.threshold,
    sides: e.sides, pm: e.pm || e.plus_minus || e.dpm || [], points: e.points ?? e.ps ?? e.success_points,
    difficulty: e.difficulty, success: e.success, label: e.label || e.notation || e.characteristic || "",
    surpass: e.surpass, sacrifice: e.sacrifice,
  };
  const i = vm.rolls.findIndex((r) => r.id === id);
  if (i >= 0) vm.rolls[i] = { ...vm.rolls[i], ...roll }; else vm.rolls.push(roll);
  return true;
}

// Mind's Eye Theatre: every "met.*" event naming a challenge is merged into it. Known
// fields get meaning (stage, throws, bids, winner); the rest stays visible in its history.
function metEvent(vm, type, e) {
  const id = e.challenge;
  if (!id) return false;
  const c = challenge(vm, id);
  const name = type.slice(4);
  c.history.push({ type: name, ...e });
  for (const k of ["kind", "attribute", "initiator", "defender", "target", "difficulty", "tests", "round", "winner", "loser", "outcome", "reason", "window"]) {
    if (e[k] !== undefined && e[k] !== null) c[k] = e[k];
  }
  if (Array.isArray(e.participants)) c.participants = e.participants.slice();
  for (const k of ["initiator", "defender", "target"]) {
    if (typeof e[k] === "string" && !c.participants.includes(e[k])) c.participants.push(e[k]);
  }
  if (e.throws && typeof e.throws === "object") c.throws = { ...c.throws, ...e.throws };
  if (e.character && e.throw) c.throws = { ...c.throws, [e.character]: e.throw };
  else if (e.character && name.includes("thr")) c.throws = { ...c.throws, [e.character]: e.throw || "sealed" };
  if (e.character && (e.bid !== undefined || e.value !== undefined) && name.includes("bid")) {
    c.bids = { ...c.bids, [e.character]: e.bid ?? e.value ?? "sealed" };
  }
  if (e.bids && typeof e.bids === "object") c.bids = { ...c.bids, ...e.bids };
  if (name.includes("round") || name.includes("retest")) {
    if (e.round) c.round = e.round;
    if (name.includes("started") || name.includes("retest")) { c.throws = {}; c.bids = {}; }
  }
  c.stage = e.stage || stageFrom(name, c.stage);
  if (["ended", "cancelled", "accepted", "closed", "overruled", "settled", "conceded"].some((w) => name.endsWith(w)) && e.final !== false) {
    if (!name.includes("overruled") || e.ended !== false) c.ended = name !== "overruled" || c.ended;
  }
  if (e.ended === true) c.ended = true;
  return true;
}

function stageFrom(name, previous) {
  const table = [
    ["cancel", "cancelled"], ["overrul", "overruled"], ["accept", "ended"], ["ended", "ended"],
    ["conced", "ended"], ["overbid", "overbid"], ["retest", "throw"], ["tie", "bid"],
    ["bid", "bid"], ["reveal", "revealed"], ["resolv", "result"], ["won", "result"], ["lost", "result"],
    ["thr", "throw"], ["issued", "throw"], ["started", "throw"], ["declared", "throw"],
  ];
  for (const [k, stage] of table) if (name.includes(k)) return stage;
  return previous;
}

export function applyEvent(vm, seq, event) {
  vm = clone(vm);
  vm.head = Math.max(vm.head, seq);
  vm.log = vm.log.concat([{ seq, type: event.type, event }]);
  const type = event.type || "";
  // copy-on-write of the containers handlers touch
  vm.session = clone(vm.session);
  vm.characters = Object.fromEntries(Object.entries(vm.characters).map(([k, v]) => [k, clone(v)]));
  vm.scenes = Object.fromEntries(Object.entries(vm.scenes).map(([k, v]) => [k, clone(v)]));
  vm.challenges = Object.fromEntries(Object.entries(vm.challenges).map(([k, v]) => [k, { ...v, history: v.history.slice(), participants: v.participants.slice() }]));
  vm.rolls = vm.rolls.slice();
  vm.hunger = clone(vm.hunger);
  vm.rejections = vm.rejections.slice();
  try {
    const handler = H[type];
    if (handler) handler(vm, event);
    else if (type.startsWith("met.")) metEvent(vm, type, event);
    else if (type.startsWith("action.")) actionRoll(vm, event);
  } catch (err) {
    // a malformed or unexpected event must not stop the phone: keep it in the log only
    vm.log[vm.log.length - 1].error = String(err);
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

export function isFrozenFor(vm, characterId) {
  if (vm.session.frozen) return true;
  const c = characterId && vm.characters[characterId];
  return !!(c && c.scene && vm.scenes[c.scene] && vm.scenes[c.scene].frozen);
}

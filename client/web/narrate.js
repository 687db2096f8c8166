// Events as sentences for the storyteller's log and the phone's feed, in English or
// French: the twin of events/narrate.py (the review's timeline), with the same templates
// (events/messages/<lang>.json, "sentences") and the same keys, so the tablet and the
// review tell an evening word for word the same way (tests/web/test_differential.py). It reads
// only the event as received: a sealed bid or throw is told as sealed, never guessed. An
// event type it does not know is not told (null), so a newer server never breaks the log.

import { section, fill, refusalReason } from "./messages.js";

const T = { en: section("sentences", "en"), fr: section("sentences", "fr") };

// ``vm`` gives the names of characters and scenes as this viewer knows them.
export function teller(vm, lang = "en") {
  const tongue = T[lang] ? lang : "en";
  const table = T[tongue];
  const say = (key, fields = {}) => fill(table[key] ?? T.en[key] ?? key, fields);
  const who = (id) => (id == null || id === "storyteller" ? table.storyteller : (vm.characters[id] && vm.characters[id].name) || id);
  const scene = (id) => (id && vm.scenes[id] && vm.scenes[id].name) || id || "?";
  const attr = (a) => table[a] || a || "?";
  const num = (v) => (v == null ? table.sealed : String(v));
  // MET-3: a bid's declared abilities, named once the bid is revealed to this viewer (a sealed
  // bid names none, whatever its copy holds)
  const abilities = (e) => (e.value == null || !(e.abilities || []).length ? "" : say("with_abilities", { list: e.abilities.join(", ") }));
  const choice = (c) => (c ? table[c] || c : table.sealed);
  const why = (r) => (r ? ` (${r})` : "");
  const code = (r) => (r ? table[`r_${r}`] || r : r); // a reason the rules write as a code
  const result = (e) => [say(e.success ? "success" : "failure"), e.critical ? say(e.messy ? "messy" : "critical") : "", e.bestial ? say("bestial") : ""].filter(Boolean).join(", ");

  function header(e) {
    let text;
    if (e.kind === "simple" || e.kind === "complex") text = say(e.kind, { a: who(e.tested || e.initiator) });
    else if (e.kind === "static") {
      text = e.tested === e.initiator
        ? say("static", { a: who(e.initiator), attr: attr(e.attribute), difficulty: e.difficulty })
        : say("static_by", { a: who(e.tested), b: who(e.initiator), attr: attr(e.attribute), difficulty: e.difficulty });
    } else text = say(e.mutual ? "mutual" : "classic", { a: who(e.initiator), b: who(e.defender), attr: attr(e.attribute) });
    return e.tests > 1 ? text + say("tests", { n: e.tests }) : text;
  }

  // a group (MET-1); a storyteller's static test of several characters (MET-10)
  function groupHeader(e) {
    const list = (e.defenders || []).map(who).join(", ");
    if (e.kind !== "static") return say("group", { a: who(e.initiator), list, attr: attr(e.attribute) });
    const text = say("group_static", { b: who(e.initiator), list, attr: attr(e.attribute), difficulty: e.difficulty || 0 });
    return e.tests > 1 ? text + say("tests", { n: e.tests }) : text;
  }

  const dice = (values) => (values || []).join(" ");
  const signs = (e) => (e.signs && e.signs.length ? ` [${e.signs.map((s) => s || "·").join(" ")}]` : "");
  const signed = (v) => (v >= 0 ? `+${v}` : String(v));
  // the date and minute as the device wrote them, never converted (as narrate.py)
  const deviceTime = (at) => { const m = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2})/.exec(at || ""); return m ? `${m[1]} ${m[2]}` : at || "?"; };

  const met = {
    // without an id (a phone's feed, whose sentence already names both sides) the header alone
    challenge_issued: (e) => (e.challenge ? say("issued_event", { id: e.challenge, text: header(e) }) : `${header(e)}.`),
    group_challenge_issued: (e) => say("issued_event", { id: e.challenge, text: groupHeader(e) }),
    // each defender's pair: its winner over the other side (narrate.group_results)
    group_settled: (e) => say("group_settled", { id: e.challenge, results: Object.entries(e.results || {}).map(([d, w]) =>
      say("group_result", { w: who(w), l: who(w === d ? e.initiator : d) })).join(", ") }),
    throw_committed: (e) => say("ev_throw", { c: e.challenge, x: who(e.character), choice: choice(e.choice), r: e.round }),
    throws_revealed: (e) => say("ev_revealed", {
      c: e.challenge, r: e.round, throws: Object.entries(e.throws || {}).map(([k, v]) => `${who(k)} ${choice(v)}`).join(", "),
      result: e.winner ? say("won", { w: who(e.winner) }) : say("tie"),
    }),
    bid_declared: (e) => say("ev_bid", { c: e.challenge, x: who(e.character), v: num(e.value), ab: abilities(e) }),
    bids_compared: (e) => say("ev_compared", { c: e.challenge, result: e.winner ? say("won", { w: who(e.winner) }) : say("tie") }),
    round_won: (e) => say("ev_round", { c: e.challenge, w: who(e.winner), r: e.round, by: code(e.by) }),
    round_started: (e) => say("ev_started", { c: e.challenge, r: e.round, reason: code(e.reason) }),
    tie_debt_paid: (e) => say("ev_debt_paid", { c: e.challenge, x: who(e.debtor) }),
    tie_debt_incurred: (e) => say("ev_debt", { c: e.challenge, x: who(e.debtor), y: who(e.creditor) }),
    retest_taken: (e) => say("ev_retest", { c: e.challenge, x: who(e.character), source: e.source }),
    retest_cancelled: (e) => say("ev_retest_cancelled", { c: e.challenge, x: who(e.character), y: who(e.cancelled), source: e.source }),
    overbid_declared: (e) => say("ev_overbid", { c: e.challenge, x: who(e.character), v: num(e.value), ab: abilities(e) }),
    overbid_settled: (e) => say("ev_overbid_settled", { c: e.challenge, x: who(e.character), result: say(e.granted ? "granted" : "refused") }),
    challenge_conceded: (e) => say("ev_conceded", { c: e.challenge, x: who(e.character) }),
    challenge_resolved: (e) => say("ev_resolved", { c: e.challenge, w: who(e.winner), l: who(e.loser), reason: code(e.reason) }),
    challenge_cancelled: (e) => say("cancelled_event", { id: e.challenge, why: why(e.reason) }),
    challenge_overruled: (e) => say("overruled_event", { id: e.challenge, w: who(e.winner), why: why(e.reason) }),
  };

  const other = {
    "session.opened": (e) => say("opened", { name: e.name || "" }),
    "session.closed": () => say("closed"),
    "session.character_added": (e) => say("added", { who: e.name || e.character }),
    "session.scene_opened": (e) => say("scene_opened", { scene: e.name || e.scene }),
    "session.scene_closed": (e) => say("scene_closed", { scene: scene(e.scene) }),
    "session.scene_joined": (e) => say("joined", { who: who(e.character), scene: scene(e.scene) }),
    "session.scene_left": (e) => say("left", { who: who(e.character), scene: scene(e.scene) }),
    "session.time_out_called": (e) => (e.scope === "scene" ? say("freeze_scene", { scene: scene(e.scene) }) : say(e.scope === "venue" ? "freeze_venue" : "freeze_all")),
    "session.time_out_ended": (e) => (e.scope === "scene" ? say("resume_scene", { scene: scene(e.scene) }) : say(e.scope === "venue" ? "resume_venue" : "resume_all")),
    "session.went_out_of_game": (e) => say("out", { who: who(e.character), why: why(e.reason) }),
    "session.came_back_in_game": (e) => say("back", { who: who(e.character) }),
    "session.turn_advanced": (e) => say("turn", { turn: e.turn }),
    "session.time_skipped": (e) => say("skip", { seconds: e.seconds, note: e.note ? ` — ${e.note}` : "" }),
    "session.turn_length_set": (e) => say("turn_length", { seconds: e.seconds }),
    "session.no_sheet_marked": (e) => say(e.no_sheet === false ? "sheet_back" : "no_sheet", { who: who(e.character) }),
    "session.action_taken": (e) => say("action", { who: who(e.character), what: e.description ? `: ${e.description}` : "" }),
    // the sealed form has no reason: others read only that the sheet changed
    "session.sheet_amended": (e) => say("amended", { who: who(e.character), why: why(e.reason) }),
    "v5.pool_rolled": (e) => say("pool", { who: who(e.character), source: e.source || e.label || e.kind || "", n: e.pool,
      h: (e.hunger || []).length, difficulty: e.difficulty, s: e.successes, result: result(e) }),
    "v5.rouse_checked": (e) => say("rouse", { who: who(e.character), face: e.face, before: e.hunger_before, after: e.hunger_after }),
    "v5.willpower_rerolled": (e) => say("reroll", { who: who(e.character), n: (e.dice || []).length, s: e.successes, result: result(e) }),
    "v5.hunger_set": (e) => say("hunger", { who: who(e.character), h: e.hunger, why: why(e.reason) }),
    "v5.configured": () => say("configured"),
    "action.configured": () => say("configured"),
    "action.rolled": (e) => say("act", {
      who: who(e.character), what: e.notation || e.characteristic || "", dice: dice(e.dice), signs: signs(e), ps: e.ps ?? "?",
      against: e.opponent ? say("act_opponent", { o: who(e.opponent) }) : e.difficulty != null ? say("act_difficulty", { d: e.difficulty_name || e.difficulty }) : "",
      result: e.success == null ? "" : `, ${say(e.success ? "success" : "failure")}`,
    }),
    // ACT-12 sealed: the defender's call carries no dice; the reveal carries the roll whole
    "action.opposed": (e) => say("opposed", { who: who(e.character), what: e.characteristic || "", o: who(e.opponent) }),
    "action.revealed": (e) => {
      const r = e.rolled || {};
      return say("revealed", { who: who(e.character), o: who(e.opponent), dice: dice(r.dice), signs: signs(r), ps: r.ps ?? "?" });
    },
    "action.begun": (e) => say("act_begun", { who: who(e.character), turns: e.turns }),
    "action.opposition_settled": (e) => say("opposition", { w: who(e.winner), ips: e.initiator_ps, dps: e.defender_ps, a: who(e.initiator), b: who(e.defender) }),
    "action.tension_raised": (e) => say("tension", { who: who(e.character), t: e.tension }),
    "action.sacrificed": (e) => say("sacrificed", { who: who(e.character) }),
    "action.ruled": (e) => say("act_ruled", { who: who(e.character), ruling: say(e.ruling) }),
    "action.opposition_ruled": (e) => say(e.winner == null ? "opposition_dropped" : "opposition_ruled", { a: who(e.character), b: who(e.opponent), w: who(e.winner), why: why(e.reason) }),
    "action.cancelled": (e) => say("act_cancelled", { who: who(e.character), turns: e.turns, why: why(e.reason) }),
    "action.modifier_applied": (e) => say("modifier", { who: who(e.character), value: signed(e.value), duration: e.duration, unit: e.unit, why: why(e.reason) }),
    "offline.recorded": (e) => `${say("offline", { time: deviceTime(e.played_at), a: who(e.recorder), b: who(e.opponent),
      attr: e.attribute ? ` (${attr(e.attribute)})` : "", w: who(e.winner), account: e.account ? `${table.colon}“${e.account}”` : "" })}.`,
    "offline.confirmed": (e) => say("offline_confirmed", { id: e.record, b: who(e.opponent) }),
    "offline.disputed": (e) => say("offline_disputed", { id: e.record, b: who(e.opponent), why: why(e.reason),
      claim: e.winner ? say("offline_claim", { w: who(e.winner) }) : "" }),
    "offline.ruled": (e) => say("offline_ruled", { id: e.record, w: who(e.winner), why: why(e.reason) }),
    // a command by its name, never its type (a newer server's, unnamed here: "a request")
    command_rejected: (e) => {
      const name = table[`cmd_${e.command_type}`] ?? T.en[`cmd_${e.command_type}`];
      const fields = { who: who(e.character), message: refusalReason(e, tongue) || table.refused_unsaid };
      return name ? say("rejected", { command: name, ...fields }) : say("rejected_other", fields);
    },
    ...deskSentences(say, who, scene, table),
  };

  return (event) => {
    const type = (event && event.type) || "?";
    const tell = type.startsWith("met.") ? met[type.slice(4)] : other[type];
    if (!tell) return null;
    try { return tell(event); } catch (err) { return null; }
  };
}

// The storyteller's desk (events/desk.py): announcements, countdowns, calls.
function deskSentences(say, who, scene, table) {
  const by = (e) => e.by || table.storyteller;
  // whom a countdown is for, as an announcement says it: nothing for the session
  const where = (e) => (e.scope === "scene" ? say("countdown_for_scene", { scene: scene(e.scene) })
    : e.scope === "venue" ? say("countdown_for_venue") : "");
  return {
    "desk.announced": (e) => (e.scope === "scene" ? say("announced_scene", { scene: scene(e.scene), text: e.text })
      : say(e.scope === "venue" ? "announced_venue" : "announced", { text: e.text })),
    "desk.countdown_started": (e) => say(e.unit === "turns" ? "countdown_turns" : "countdown_minutes", { clock: e.label || e.clock, n: e.length, where: where(e) }),
    "desk.countdown_paused": (e) => say("countdown_paused", { clock: e.clock, where: where(e) }),
    "desk.countdown_resumed": (e) => say("countdown_resumed", { clock: e.clock, where: where(e) }),
    "desk.countdown_cancelled": (e) => say("countdown_cancelled", { clock: e.clock, where: where(e) }),
    "desk.storyteller_called": (e) => say("called", { who: who(e.character), kind: say(`call_${e.kind}`), text: e.text ? `${table.colon}“${e.text}”` : "" }),
    "desk.call_taken": (e) => say("call_taken", { by: by(e), who: who(e.character) }),
    "desk.call_closed": (e) => say("call_closed", { by: by(e), who: who(e.character) }),
  };
}

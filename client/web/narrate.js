// Events as sentences for the storyteller's log, in English or French: a port of the
// common cases of events/narrate.py (the review's timeline), so the tablet and the review
// tell an evening the same way. It reads only the event as received: a sealed bid or
// throw is told as sealed, never guessed. An event type it does not know is told as its
// type, so a newer server never breaks the log.

const T = {
  en: {
    // the codes events carry as reasons: English says the code itself
    r_accepted: "accepted", r_conceded: "conceded", r_final: "final", r_zero_traits: "zero_traits", r_overbid: "overbid", r_overbid_failed: "overbid_failed", r_overruled: "overruled", r_retest: "retest", r_equal_bids: "equal_bids", r_next_test: "next_test", r_window_closed: "window_closed", r_timeout: "timeout", r_throw: "throw", r_bid: "bid", r_difficulty: "difficulty", r_simple_tie: "simple_tie", r_complex_tie: "complex_tie", r_no_sheet: "no_sheet", r_tie_debt: "tie_debt",
    storyteller: "the storyteller", sealed: "(sealed)",
    physical: "Physical", social: "Social", mental: "Mental",
    rock: "rock", paper: "paper", scissors: "scissors", bomb: "bomb",
    opened: "Session {name} opened.", closed: "Session closed; the draw seed is revealed.",
    added: "{who} is on the roster.", scene_opened: "Scene {scene} opened.",
    scene_closed: "Scene {scene} closed.", joined: "{who} entered {scene}.", left: "{who} left {scene}.",
    freeze_scene: "TIME OUT in {scene}.", freeze_all: "TIME OUT for everyone.",
    resume_scene: "Play resumed in {scene}.", resume_all: "Play resumed for everyone.",
    out: "{who} went out of game{why}.", back: "{who} came back in game.",
    turn: "Turn {turn}.", skip: "Time skipped: {seconds} s{note}.", turn_length: "A turn now lasts {seconds} s.",
    no_sheet: "{who} has no sheet at hand (loses ties).", sheet_back: "{who} has a sheet at hand again.",
    action: "{who} acted{what}.", rejected: "{who}: {command} refused: {message}",
    amended: "A storyteller amended {who}'s sheet{why}.",
    classic: "{a} challenged {b} ({attr})", mutual: "{a} challenged {b} ({attr}, both actions at stake)",
    static: "{a} faced a static {attr} test, difficulty {difficulty}",
    static_by: "{b} put {a} to a static {attr} test, difficulty {difficulty}",
    simple: "{a} took a simple test", complex: "{a} took a complex test", tests: " ({n} tests)",
    issued: "{id}: {text}.", tie: "tie", won: "{w} won",
    ev_throw: "{c}: {x} threw {choice} (round {r}).", ev_revealed: "{c}, round {r}: {throws}{result}.",
    ev_bid: "{c}: {x} bid {v}{ab}.", ev_overbid: "{c}: {x} overbid with {v}{ab}.", with_abilities: " (abilities: {list})", ev_round: "{c}: {w} won round {r} ({by}).",
    ev_started: "{c}: round {r} begins ({reason}).", ev_resolved: "{c}: {w} won, {l} lost ({reason}).",
    ev_overbid_settled: "{c}: {x}'s overbid {result}.", granted: "earns a retest", refused: "fails",
    ev_compared: "{c}: bids compared, {result}.",
    retest: "{c}: {x} retested ({source}).", retest_cancelled: "{c}: {x} cancelled {y}'s retest ({source}).",
    debt: "{c}: {x} owes {y} its next tie.", debt_paid: "{c}: {x} paid its tie debt.", conceded: "{c}: {x} conceded.",
    cancelled: "A storyteller cancelled challenge {c}{why}.", overruled: "A storyteller overruled challenge {c}: {w} won{why}.",
    offline: "Played by hand: {a} against {b}; {a} says {w} won{account}.",
    offline_confirmed: "{b} confirmed the offline challenge {id}.",
    offline_disputed: "{b} disputed the offline challenge {id}{claim}{why}.", offline_claim: ", saying {w} won",
    offline_ruled: "A storyteller ruled on offline challenge {id}: {w} won{why}.",
    pool: "{who} rolled {source}: {n} dice ({h} Hunger), difficulty {difficulty}: {s} successes, {result}.",
    pool_hidden: "{who} rolled {source} ({visibility}).",
    success: "success", failure: "failure", critical: "critical", messy: "messy critical", bestial: "bestial failure",
    rouse: "{who} made a Rouse check: {face}, Hunger {before} to {after}.",
    reroll: "{who} rerolled {n} dice with Willpower: {s} successes, {result}.",
    hunger: "{who}'s Hunger is now {h}{why}.", configured: "Dice settings changed.",
    act: "{who} rolled {what}: {dice}{signs}, {ps} PS{against}{result}.",
    act_difficulty: " against difficulty {d}", act_opponent: " against {o}",
    act_ruled: "{who}'s action was ruled {ruling}.", act_begun: "{who} began an action lasting {turns} turns.",
    opposition: "{w} prevailed ({ips} PS to {dps}) in the contest of {a} and {b}.",
    tension: "{who} surpassed itself: tension {t}.", sacrificed: "{who} sacrificed itself.", modifier: "{who} gets {value} for {duration} {unit}{why}.",
    opposition_ruled: "A storyteller settled {a}'s roll against {b}, left unanswered: {w} prevailed{why}.",
    opposition_dropped: "A storyteller cancelled {a}'s roll against {b}, left unanswered{why}.",
    act_cancelled: "A storyteller cancelled {who}'s action of {turns} turns{why}.",
    opposed: "{who} rolled {what} against {o}, sealed until {o} answers.",
    revealed: "{who}'s sealed roll against {o} is revealed: {dice}{signs}, {ps} PS.",
  },
  fr: {
    // the codes events carry as reasons, said in French (English says the code)
    r_accepted: "accepté", r_conceded: "abandon", r_final: "dernier test", r_zero_traits: "aucun trait",
    r_overbid: "surenchère", r_overbid_failed: "surenchère manquée", r_overruled: "tranché",
    r_retest: "nouveau test", r_equal_bids: "enchères égales", r_next_test: "test suivant",
    r_window_closed: "fenêtre close", r_timeout: "délai écoulé", r_throw: "signe", r_bid: "enchère",
    r_difficulty: "difficulté", r_simple_tie: "égalité simple", r_complex_tie: "égalité complexe",
    r_no_sheet: "sans fiche", r_tie_debt: "dette d'égalité",
    storyteller: "le conteur", sealed: "(scellé)",
    physical: "Physique", social: "Social", mental: "Mental",
    rock: "pierre", paper: "feuille", scissors: "ciseaux", bomb: "bombe",
    opened: "Ouverture de la session {name}.", closed: "Session close ; la graine des tirages est révélée.",
    added: "{who} rejoint la distribution.", scene_opened: "Ouverture de la scène {scene}.",
    scene_closed: "Fin de la scène {scene}.", joined: "{who} entre dans {scene}.", left: "{who} quitte {scene}.",
    freeze_scene: "TEMPS MORT dans {scene}.", freeze_all: "TEMPS MORT pour tous.",
    resume_scene: "Reprise du jeu dans {scene}.", resume_all: "Reprise du jeu pour tous.",
    out: "{who} passe hors jeu{why}.", back: "{who} revient en jeu.",
    turn: "Tour {turn}.", skip: "Ellipse : {seconds} s{note}.", turn_length: "Un tour dure désormais {seconds} s.",
    no_sheet: "{who} n'a pas sa fiche (perd les égalités).", sheet_back: "{who} a de nouveau sa fiche.",
    action: "{who} agit{what}.", rejected: "{who} : {command} refusé : {message}",
    amended: "Fiche modifiée par le conteur : {who}{why}.",
    classic: "{a} a défié {b} ({attr})", mutual: "{a} a défié {b} ({attr}, les deux actions en jeu)",
    static: "{a} a affronté un test statique ({attr}), difficulté {difficulty}",
    static_by: "{b} a soumis {a} à un test statique ({attr}), difficulté {difficulty}",
    simple: "{a} a passé un test simple", complex: "{a} a passé un test complexe", tests: " ({n} tests)",
    issued: "{id} : {text}.", tie: "égalité", won: "{w} l'a emporté",
    ev_throw: "{c} : {x} joue {choice} (manche {r}).", ev_revealed: "{c}, manche {r} : {throws}{result}.",
    ev_bid: "{c} : {x} enchérit {v}{ab}.", ev_overbid: "{c} : {x} surenchérit à {v}{ab}.", with_abilities: " (capacités : {list})",
    ev_round: "{c} : {w} gagne la manche {r} ({by}).",
    ev_started: "{c} : début de la manche {r} ({reason}).", ev_resolved: "{c} : {w} l'emporte, {l} perd ({reason}).",
    ev_overbid_settled: "{c} : la surenchère de {x} {result}.", granted: "obtient une relance", refused: "échoue",
    ev_compared: "{c} : enchères comparées, {result}.",
    retest: "{c} : {x} a relancé ({source}).", retest_cancelled: "{c} : {x} a annulé la relance de {y} ({source}).",
    debt: "{c} : {x} doit sa prochaine égalité à {y}.", debt_paid: "{c} : {x} a payé sa dette d'égalité.",
    conceded: "{c} : {x} a abandonné.",
    cancelled: "Un conteur a annulé le défi {c}{why}.", overruled: "Un conteur a tranché le défi {c} : {w} l'emporte{why}.",
    offline: "Joué à la main : {a} contre {b} ; selon {a}, {w} l'a emporté{account}.",
    offline_confirmed: "{b} a confirmé le défi hors ligne {id}.",
    offline_disputed: "{b} a contesté le défi hors ligne {id}{claim}{why}.", offline_claim: ", selon qui {w} l'a emporté",
    offline_ruled: "Un conteur a tranché le défi hors ligne {id} : {w} l'emporte{why}.",
    pool: "{who} a lancé {source} : {n} dés (dont {h} de Soif), difficulté {difficulty} : {s} succès, {result}.",
    pool_hidden: "{who} a lancé {source} ({visibility}).",
    success: "réussite", failure: "échec", critical: "critique", messy: "critique sanglant", bestial: "échec bestial",
    rouse: "{who} a fait un test d'Éveil : {face}, Soif {before} à {after}.",
    reroll: "{who} a relancé {n} dés par la Volonté : {s} succès, {result}.",
    hunger: "La Soif de {who} passe à {h}{why}.", configured: "Réglages des dés modifiés.",
    act: "{who} a lancé {what} : {dice}{signs}, {ps} PS{against}{result}.",
    act_difficulty: " contre une difficulté de {d}", act_opponent: " contre {o}",
    act_ruled: "L'action de {who} est jugée {ruling}.", act_begun: "{who} a commencé une action de {turns} tours.",
    opposition: "{w} l'emporte ({ips} PS contre {dps}) dans l'opposition entre {a} et {b}.",
    tension: "{who} s'est surpassé : tension {t}.", sacrificed: "{who} s'est sacrifié.", modifier: "{who} reçoit {value} pendant {duration} {unit}{why}.",
    opposition_ruled: "Un conteur a tranché le jet de {a} contre {b}, resté sans réponse : {w} l'emporte{why}.",
    opposition_dropped: "Un conteur a annulé le jet de {a} contre {b}, resté sans réponse{why}.",
    act_cancelled: "Un conteur a annulé l'action de {turns} tours de {who}{why}.",
    opposed: "{who} a lancé {what} contre {o}, scellé jusqu'à la réponse de {o}.",
    revealed: "Le jet scellé de {who} contre {o} est révélé : {dice}{signs}, {ps} PS.",
  },
};

// ``vm`` gives the names of characters and scenes as this viewer knows them.
export function teller(vm, lang = "en") {
  const table = T[lang] || T.en;
  const say = (key, fields = {}) => (table[key] ?? T.en[key] ?? key).replace(/\{(\w+)\}/g, (_, k) => String(fields[k] ?? ""));
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

  const met = {
    // without an id (a phone's feed, whose sentence already names both sides) the header alone
    challenge_issued: (e) => (e.challenge ? say("issued", { id: e.challenge, text: header(e) }) : `${header(e)}.`),
    throw_committed: (e) => say("ev_throw", { c: e.challenge, x: who(e.character), choice: choice(e.choice), r: e.round }),
    throws_revealed: (e) => say("ev_revealed", {
      c: e.challenge, r: e.round, throws: Object.entries(e.throws || {}).map(([k, v]) => `${who(k)} ${choice(v)}`).join(", "),
      result: `, ${e.winner ? say("won", { w: who(e.winner) }) : say("tie")}`,
    }),
    bid_declared: (e) => say("ev_bid", { c: e.challenge, x: who(e.character), v: num(e.value), ab: abilities(e) }),
    bids_compared: (e) => say("ev_compared", { c: e.challenge, result: e.winner ? say("won", { w: who(e.winner) }) : say("tie") }),
    round_won: (e) => say("ev_round", { c: e.challenge, w: who(e.winner), r: e.round, by: code(e.by) }),
    round_started: (e) => say("ev_started", { c: e.challenge, r: e.round, reason: code(e.reason) }),
    tie_debt_paid: (e) => say("debt_paid", { c: e.challenge, x: who(e.debtor) }),
    tie_debt_incurred: (e) => say("debt", { c: e.challenge, x: who(e.debtor), y: who(e.creditor) }),
    retest_taken: (e) => say("retest", { c: e.challenge, x: who(e.character), source: e.source }),
    retest_cancelled: (e) => say("retest_cancelled", { c: e.challenge, x: who(e.character), y: who(e.cancelled), source: e.source }),
    overbid_declared: (e) => say("ev_overbid", { c: e.challenge, x: who(e.character), v: num(e.value), ab: abilities(e) }),
    overbid_settled: (e) => say("ev_overbid_settled", { c: e.challenge, x: who(e.character), result: say(e.granted ? "granted" : "refused") }),
    challenge_conceded: (e) => say("conceded", { c: e.challenge, x: who(e.character) }),
    challenge_resolved: (e) => say("ev_resolved", { c: e.challenge, w: who(e.winner), l: who(e.loser), reason: code(e.reason) }),
    challenge_cancelled: (e) => say("cancelled", { c: e.challenge, why: why(e.reason) }),
    challenge_overruled: (e) => say("overruled", { c: e.challenge, w: who(e.winner), why: why(e.reason) }),
  };

  const other = {
    "session.opened": (e) => say("opened", { name: e.name || "" }),
    "session.closed": () => say("closed"),
    "session.character_added": (e) => say("added", { who: e.name || e.character }),
    "session.scene_opened": (e) => say("scene_opened", { scene: e.name || e.scene }),
    "session.scene_closed": (e) => say("scene_closed", { scene: scene(e.scene) }),
    "session.scene_joined": (e) => say("joined", { who: who(e.character), scene: scene(e.scene) }),
    "session.scene_left": (e) => say("left", { who: who(e.character), scene: scene(e.scene) }),
    "session.time_out_called": (e) => (e.scope === "scene" ? say("freeze_scene", { scene: scene(e.scene) }) : say("freeze_all")),
    "session.time_out_ended": (e) => (e.scope === "scene" ? say("resume_scene", { scene: scene(e.scene) }) : say("resume_all")),
    "session.went_out_of_game": (e) => say("out", { who: who(e.character), why: why(e.reason) }),
    "session.came_back_in_game": (e) => say("back", { who: who(e.character) }),
    "session.turn_advanced": (e) => say("turn", { turn: e.turn }),
    "session.time_skipped": (e) => say("skip", { seconds: e.seconds, note: e.note ? ` — ${e.note}` : "" }),
    "session.turn_length_set": (e) => say("turn_length", { seconds: e.seconds }),
    "session.no_sheet_marked": (e) => say(e.no_sheet === false ? "sheet_back" : "no_sheet", { who: who(e.character) }),
    "session.action_taken": (e) => say("action", { who: who(e.character), what: e.description ? `: ${e.description}` : "" }),
    "session.sheet_amended": (e) => say("amended", { who: who(e.character), why: why(e.reason) }),
    "v5.pool_rolled": (e) => (e.normal == null && e.hunger == null
      ? say("pool_hidden", { who: who(e.character), source: e.source || e.label || e.kind || "", visibility: e.visibility || "" })
      : say("pool", { who: who(e.character), source: e.source || e.label || e.kind || "", n: e.pool, h: (e.hunger || []).length, difficulty: e.difficulty, s: e.successes, result: result(e) })),
    "v5.rouse_checked": (e) => say("rouse", { who: who(e.character), face: e.face, before: e.hunger_before, after: e.hunger_after }),
    "v5.willpower_rerolled": (e) => say("reroll", { who: who(e.character), n: (e.dice || []).length, s: e.successes, result: result(e) }),
    "v5.hunger_set": (e) => say("hunger", { who: who(e.character), h: e.hunger, why: why(e.reason) }),
    "v5.configured": () => say("configured"),
    "action.configured": () => say("configured"),
    "action.rolled": (e) => say("act", {
      who: who(e.character), what: e.notation || e.characteristic || "", dice: (e.dice || []).join(" "),
      signs: e.signs && e.signs.length ? ` [${e.signs.map((s) => s || "·").join(" ")}]` : "", ps: e.ps ?? "?",
      against: e.opponent ? say("act_opponent", { o: who(e.opponent) }) : e.difficulty != null ? say("act_difficulty", { d: e.difficulty_name || e.difficulty }) : "",
      result: e.success == null ? "" : `, ${say(e.success ? "success" : "failure")}`,
    }),
    // ACT-12 sealed: the defender's call carries no dice; the reveal carries the roll whole
    "action.opposed": (e) => say("opposed", { who: who(e.character), what: e.characteristic || "", o: who(e.opponent) }),
    "action.revealed": (e) => {
      const r = e.rolled || {};
      return say("revealed", { who: who(e.character), o: who(e.opponent), dice: (r.dice || []).join(" "),
        signs: r.signs && r.signs.length ? ` [${r.signs.map((s) => s || "·").join(" ")}]` : "", ps: r.ps ?? "?" });
    },
    "action.begun": (e) => say("act_begun", { who: who(e.character), turns: e.turns }),
    "action.opposition_settled": (e) => say("opposition", { w: who(e.winner), ips: e.initiator_ps, dps: e.defender_ps, a: who(e.initiator), b: who(e.defender) }),
    "action.tension_raised": (e) => say("tension", { who: who(e.character), t: e.tension }),
    "action.sacrificed": (e) => say("sacrificed", { who: who(e.character) }),
    "action.ruled": (e) => say("act_ruled", { who: who(e.character), ruling: e.ruling }),
    "action.opposition_ruled": (e) => say(e.winner == null ? "opposition_dropped" : "opposition_ruled", { a: who(e.character), b: who(e.opponent), w: who(e.winner), why: why(e.reason) }),
    "action.cancelled": (e) => say("act_cancelled", { who: who(e.character), turns: e.turns, why: why(e.reason) }),
    "action.modifier_applied": (e) => say("modifier", { who: who(e.character), value: e.value > 0 ? `+${e.value}` : e.value, duration: e.duration, unit: e.unit, why: why(e.reason) }),
    "offline.recorded": (e) => say("offline", { a: who(e.recorder), b: who(e.opponent), w: who(e.winner), account: e.account ? ` — “${e.account}”` : "" }),
    "offline.confirmed": (e) => say("offline_confirmed", { id: e.record, b: who(e.opponent) }),
    "offline.disputed": (e) => say("offline_disputed", { id: e.record, b: who(e.opponent), why: why(e.reason),
      claim: e.winner ? say("offline_claim", { w: who(e.winner) }) : "" }),
    "offline.ruled": (e) => say("offline_ruled", { id: e.record, w: who(e.winner), why: why(e.reason) }),
    command_rejected: (e) => say("rejected", { who: who(e.character), command: e.command_type, message: e.message }),
  };

  return (event) => {
    const type = (event && event.type) || "?";
    const tell = type.startsWith("met.") ? met[type.slice(4)] : other[type];
    if (!tell) return null;
    try { return tell(event); } catch (err) { return null; }
  };
}

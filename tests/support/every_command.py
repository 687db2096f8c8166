"""One command of each type, each one the rules would otherwise weigh (not a decode error),
after a set-up that gives each something to act on: what the tests of closed sessions
(TIME-2) and of hostile input send (no tests here)."""

from __future__ import annotations

import msgspec

from conteur.events.sheets import ActionSheet, MetSheet, V5Sheet

MET = {"kind": "met", "physical": 6, "social": 4, "mental": 5}


V5 = {"kind": "v5", "attributes": {"Dexterity": 3}, "skills": {"Stealth": 2}, "hunger": 1}


ACTION = {"kind": "action", "characteristics": {"Science": 5}}


SETUP = [
    {"type": "open_session", "name": "Night"},
    {"type": "open_scene", "scene": "hall"},
    {"type": "add_character", "character": "anna", "name": "Anna", "sheet": MET},
    {"type": "add_character", "character": "bruno", "name": "Bruno", "sheet": MET},
    {"type": "add_character", "character": "vic", "name": "Vic", "sheet": V5},
    {"type": "add_character", "character": "ada", "name": "Ada", "sheet": ACTION},
    {"type": "join_scene", "character": "anna", "scene": "hall"},
    {"type": "challenge", "character": "anna", "defender": "bruno", "attribute": "physical"},
    {"type": "roll_pool", "character": "vic", "attribute": "Dexterity", "skill": "Stealth"},
    {"type": "roll_action", "character": "ada", "characteristic": "Science", "difficulty": 2,
     "turns": 3},
    {"type": "record_offline_challenge", "character": "anna", "opponent": "bruno",
     "winner": "anna"},
    {"type": "start_countdown", "clock": "dawn", "minutes": 30},
    {"type": "call_storyteller", "character": "anna", "kind": "question"},
]


EXAMPLES: dict[str, dict] = {
    "open_session": {"name": "again"},
    "close_session": {},
    "add_character": {"character": "zoe", "name": "Zoe"},
    "open_scene": {"scene": "crypt"},
    "close_scene": {"scene": "hall"},
    "join_scene": {"character": "bruno", "scene": "hall"},
    "leave_scene": {"character": "anna"},
    "freeze": {},
    "resume": {},
    "out_of_game": {"character": "anna"},
    "back_in_game": {"character": "anna"},
    "next_turn": {},
    "skip_time": {"seconds": 60},
    "set_turn_length": {"seconds": 5},
    "mark_no_sheet": {"character": "anna"},
    "take_action": {"character": "anna"},
    "amend_sheet": {"character": "anna", "sheet": MET},
    "challenge": {"character": "anna", "defender": "bruno", "attribute": "social"},
    "throw": {"character": "anna", "challenge": "c1", "round": 1, "choice": "rock"},
    "bid": {"character": "anna", "challenge": "c1", "round": 1, "value": 3},
    "retest": {"character": "anna", "challenge": "c1", "source": "Lucky"},
    "overbid": {"character": "anna", "challenge": "c1", "value": 6},
    "concede": {"character": "anna", "challenge": "c1"},
    "accept": {"character": "anna", "challenge": "c1"},
    "cancel_challenge": {"challenge": "c1"},
    "overrule": {"challenge": "c1", "winner": "anna"},
    "close_window": {"challenge": "c1"},
    "roll_pool": {"character": "vic", "attribute": "Dexterity", "skill": "Stealth"},
    "rouse": {"character": "vic"},
    "willpower_reroll": {"character": "vic", "roll": "r1", "strategy": "reroll_failures"},
    "set_hunger": {"character": "vic", "hunger": 3},
    "v5_settings": {"messy_rule": "official"},
    "roll_action": {"character": "ada", "characteristic": "Science", "difficulty": 2},
    "apply_modifier": {"character": "ada", "value": 1, "duration": 2},
    "rule_action": {"character": "ada", "ruling": "trivial"},
    "action_settings": {"dice": 3},
    "settle_opposition": {"roll": "a1", "outcome": "cancelled"},
    "cancel_action": {"roll": "a1"},
    "record_offline_challenge": {"character": "anna", "opponent": "bruno", "winner": "anna"},
    "confirm": {"character": "bruno", "record": "o1"},
    "dispute": {"character": "bruno", "record": "o1"},
    "rule_offline": {"record": "o1", "winner": "anna"},
    "announce": {"text": "The sun rises in ten minutes"},
    "start_countdown": {"clock": "moon", "minutes": 10},
    "pause_countdown": {"clock": "dawn"},
    "cancel_countdown": {"clock": "dawn"},
    "call_storyteller": {"character": "anna", "kind": "ruling"},
    "take_call": {"call": "anna.1"},
    "close_call": {"call": "anna.1"},
}


def command(tag: str) -> dict:
    return {"type": tag, **EXAMPLES[tag]}


def sheet_kind(tag: str, path: tuple) -> str | None:
    """Which sheet kind a path under ``sheet`` belongs to (the union's tag)."""
    if path[0] != "sheet":
        return None
    for cls in (MetSheet, V5Sheet, ActionSheet):
        if path[1] in cls.__struct_fields__:
            return cls.__struct_config__.tag
    raise AssertionError(path)


def with_value(tag: str, path: tuple, value: int) -> dict:
    """The example command of ``tag`` with ``value`` at ``path`` (sheets keep their kind)."""
    command = msgspec.json.decode(msgspec.json.encode({"type": tag, **EXAMPLES[tag]}))
    kind = sheet_kind(tag, path)
    target = command
    for i, key in enumerate(path[:-1]):
        nxt = path[i + 1]
        default = [] if nxt == 0 else {}
        if key == "*":
            key = "x"
        if isinstance(target, list):
            while len(target) <= key:
                target.append(default)
            target = target[key]
            continue
        if key == "sheet":
            target[key] = {"kind": kind}
        elif not isinstance(target.get(key), (dict, list)) or (nxt == 0) != isinstance(target.get(key), list):
            target[key] = default
        target = target[key]
    last = path[-1]
    if last == "*":
        target["x"] = value
    elif isinstance(target, list):
        target[:] = [value]
    else:
        target[last] = value
    return command

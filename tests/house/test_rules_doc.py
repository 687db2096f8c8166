"""docs/rules.md defines every rule id the code cites, and names none that no test pins.

A rule id is a family and a number (``MET-13``, ``V5-5``, ``TIME-3``, ``ACT-12``,
``FAIR-2``). The code cites it in comments and messages; docs/rules.md defines it on a line
of its own (``- **MET-13** ...``); a test names it in its function name
(``test_met_13_...``) or in its text."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "rules.md"
FAMILIES = ("TIME", "MET", "ACT", "V5", "FAIR")
CITED = re.compile(r"\b(%s)-(\d+)\b" % "|".join(FAMILIES))
DEFINED = re.compile(r"^- \*\*((?:%s)-\d+)\*\* \S" % "|".join(FAMILIES), re.M)
TEST_NAME = re.compile(r"\bdef (test_[a-z0-9_]+)")
SOURCES = ("events", "server", "client")
SUFFIXES = {".py", ".js", ".html"}


def cited_in_code() -> dict[str, str]:
    """Each id the code cites, with one place citing it."""
    found: dict[str, str] = {}
    for folder in SOURCES:
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix not in SUFFIXES or not path.is_file():
                continue
            for lineno, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
                for family, number in CITED.findall(line):
                    found.setdefault(f"{family}-{number}", f"{path.relative_to(ROOT)}:{lineno}")
    return found


def defined_in_doc() -> list[str]:
    return DEFINED.findall(DOC.read_text())


def named_by_tests() -> set[str]:
    named: set[str] = set()
    for path in sorted((ROOT / "tests").rglob("*.py")):
        if path.name == Path(__file__).name:
            continue
        text = path.read_text()
        named.update(f"{f}-{n}" for f, n in CITED.findall(text))
        for name in TEST_NAME.findall(text):
            for family in FAMILIES:
                for number in re.findall(rf"_{family.lower()}_(\d+)(?=_|$)", "_" + name[5:]):
                    named.add(f"{family}-{number}")
    return named


def test_every_rule_the_code_cites_is_defined():
    defined = set(defined_in_doc())
    missing = {rule: where for rule, where in cited_in_code().items() if rule not in defined}
    assert not missing, (
        "docs/rules.md defines no line '- **ID** ...' for: "
        + ", ".join(f"{rule} (cited at {where})" for rule, where in sorted(missing.items()))
    )


def test_every_rule_the_doc_defines_is_named_by_a_test():
    unnamed = sorted(set(defined_in_doc()) - named_by_tests(), key=_order)
    assert not unnamed, (
        "docs/rules.md defines rules that no test names (test_<family>_<n>_... or the id "
        "in a test's text): " + ", ".join(unnamed)
    )


def test_each_rule_is_defined_once_and_in_order():
    defined = defined_in_doc()
    twice = sorted({rule for rule in defined if defined.count(rule) > 1})
    assert not twice, f"docs/rules.md defines these more than once: {', '.join(twice)}"
    for family in FAMILIES:
        numbers = [int(r.split("-")[1]) for r in defined if r.split("-")[0] == family]
        assert numbers == list(range(1, len(numbers) + 1)), (
            f"docs/rules.md numbers {family} as {numbers}, not 1 to {len(numbers)} in order"
        )


def test_each_rule_family_names_its_source_text():
    text = DOC.read_text()
    for family in FAMILIES:
        section = re.search(rf"^## {family}:.*?(?=^## |\Z)", text, re.M | re.S)
        assert section, f"docs/rules.md has no '## {family}: ...' section"
        assert re.search(r"^Source: \S", section.group(0), re.M), (
            f"docs/rules.md's {family} section names no source ('Source: ...')"
        )


def test_the_checks_see_what_they_check():
    # a regex that matched nothing would pass every test above
    assert len(cited_in_code()) >= 40
    assert len(defined_in_doc()) >= 40
    assert {"MET-13", "V5-5", "ACT-12", "TIME-5", "FAIR-2"} <= named_by_tests()


def _order(rule: str) -> tuple[int, int]:
    family, number = rule.split("-")
    return FAMILIES.index(family), int(number)

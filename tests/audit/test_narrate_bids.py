"""A bid's and an overbid's sentence names the abilities declared with it (MET-3),
once the bid is revealed to the viewer; a sealed copy names none (events/narrate.py: the
review's timeline and the exports, in the catalogue's wording: a sentence ends with a full stop)."""

from __future__ import annotations

from conteur.events import met
from conteur.events.narrate import Teller, sentence

NAMES = {"anna": "Anna", "bruno": "Bruno"}


def test_a_revealed_bid_names_its_abilities_in_english_and_french():
    bid = met.BidDeclared(challenge="c1", round=1, character="bruno", value=9, abilities=("Brawl", "Dodge"))
    overbid = met.OverbidDeclared(challenge="c1", character="bruno", value=9, abilities=("Brawl",))
    en, fr = Teller(NAMES, "en"), Teller(NAMES, "fr")
    assert sentence(bid, en) == "c1: Bruno bid 9 (abilities: Brawl, Dodge)."
    assert sentence(bid, fr) == "c1 : Bruno enchérit 9 (capacités : Brawl, Dodge)."
    assert sentence(overbid, en) == "c1: Bruno overbid with 9 (abilities: Brawl)."
    assert sentence(overbid, fr) == "c1 : Bruno surenchérit à 9 (capacités : Brawl)."


def test_a_bid_without_abilities_reads_as_before():
    bid = met.BidDeclared(challenge="c1", round=1, character="anna", value=6)
    assert sentence(bid, Teller(NAMES, "en")) == "c1: Anna bid 6."


def test_a_sealed_bid_names_no_ability():
    for event in (met.BidDeclared(challenge="c1", round=1, character="bruno", value=9, abilities=("Brawl",)),
                  met.OverbidDeclared(challenge="c1", character="bruno", value=9, abilities=("Brawl",))):
        sealed = event.redacted()
        for lang in ("en", "fr"):
            said = sentence(sealed, Teller(NAMES, lang))
            assert "Brawl" not in said and ("(sealed)" in said or "(scellé)" in said)
        # a copy that kept its abilities but not its value (never made so, but never trusted)
        half = met.BidDeclared(challenge="c1", round=1, character="bruno", value=None, abilities=("Brawl",))
        assert "Brawl" not in sentence(half, Teller(NAMES, "en"))

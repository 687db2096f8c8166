"""MET arithmetic through decide: traits and their caps (MET-3, MET-4, MET-10), who beats whom
(MET-2), overbids (MET-13) and retests allowed (MET-12), each on both sides of its bound."""

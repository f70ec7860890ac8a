"""Published drafters of the families beyond EAGLE-3 (tests/fixtures/corpus-families/): each is read as its family,
and for the families check models, every engine version's expected outcome (from that engine's source) is what
`check` predicts; the families check does not model are refused, never checked as EAGLE-3."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("gen_corpus_doc", ROOT / "scripts" / "gen_corpus_doc.py")
gen = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gen)

CORPUS = gen.load_families()


def test_corpus_is_broad_and_sourced():
    """At least 5 published drafters from at least 3 producers, every fact sourced, every expectation cited."""
    assert len(CORPUS) >= 5 and len({e["producer"].split(" (")[0] for e in CORPUS}) >= 3
    for e in CORPUS:
        assert e["source"] and set(e["exactness"]) >= {"config", "tensors"} and e["target"]["source"], e["id"]
        for spec, x in e["expected"].items():
            assert x["why"] and x["cite"] and "@" in x["cite"], (e["id"], spec)
    assert sum(bool(e["expected"]) for e in CORPUS) >= 4


@pytest.mark.parametrize("entry", CORPUS, ids=[e["id"] for e in CORPUS])
def test_published_drafter_is_read_as_its_family(entry):
    got = gen.predict_family(entry)
    assert got["family"]["name"] == entry["family"]
    if not got["family"]["modelled"]:
        assert not entry["expected"]  # refused: nothing to expect of an engine
        return
    for spec, x in entry["expected"].items():
        assert (got[spec]["ok"], got[spec]["codes"]) == (x["ok"], x["codes"]), (spec, x["why"], got[spec]["messages"])

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
        pair = (got[spec]["ok"], got[spec]["codes"])
        if "gap" in x:
            # a known disagreement, pinned: the expectation stays the engine's truth, the prediction is held to what check
            # says today, so the day check gets it right this fails and the gap is removed from the entry
            g = x["gap"]["predicted"]
            assert x["gap"]["why"] and (g["ok"], g["codes"]) != (x["ok"], x["codes"]), (spec, "a gap must differ from the truth")
            assert pair == (g["ok"], g["codes"]), (spec, x["gap"]["why"], got[spec]["messages"])
        else:
            assert pair == (x["ok"], x["codes"]), (spec, x["why"], got[spec]["messages"])


def test_zoo_families_are_covered():
    """Published checkpoints of every drafter family specbridge names, beyond EAGLE-3 itself: EAGLE-1 research weights
    and an engine layout, P-EAGLE, a per-architecture EAGLE-3 class (Qwen3 q/k norms), a Medusa head, a plain draft
    model of the target's family, and the DFlash kin."""
    fams = {e["family"] for e in CORPUS}
    assert fams >= {"eagle", "peagle", "eagle3", "medusa", "causal_lm", "dflash", "dflash2", "dspark"}, fams
    assert len({e["layout"] for e in CORPUS if e["family"] == "eagle"}) >= 2  # research and an engine's layout
    q3 = [e for e in CORPUS if e["family"] == "eagle3"]
    assert any(t["name"].endswith("self_attn.q_norm.weight") for e in q3 for t in e["tensors"])


def test_plain_draft_model_facts_match_its_configs():
    """A plain draft model's recorded tokenizer facts are its and its target's configs' (vocab rows, bos/eos, positions):
    the facts `check DRAFT --target` compares before it reads tokenizer.json."""
    for e in (e for e in CORPUS if e["family"] == "causal_lm"):
        facts = e["tokenizer_facts"]
        for side, cfg in (("draft", e["config"]), ("target", e["target"]["config"])):
            assert facts[side] == {k: cfg[k] for k in facts[side]}, (e["id"], side)
        assert facts["same_tokenizer"] == (facts["draft"] == facts["target"])

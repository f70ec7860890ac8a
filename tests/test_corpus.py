"""The corpus of published EAGLE-3 drafters (tests/fixtures/corpus/): every engine version's expected outcome,
read from that engine's source, must be what `check` predicts, and docs/corpus.md must be current.

Each fixture holds the drafter's config.json and exact tensor names/dtypes/shapes (with the public source of
each fact); scripts/gen_corpus_doc.py rebuilds it as a header-only checkpoint beside its target's config."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from specbridge.view import open_view

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("gen_corpus_doc", ROOT / "scripts" / "gen_corpus_doc.py")
gen = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gen)

CORPUS = gen.load_corpus()
REQUIRED = {"id", "producer", "source", "exactness", "config", "tensors", "target", "engines_targeted", "expected", "layout"}


def _targeted(entry: dict, spec: str) -> bool:
    """Is `spec` (name==version) within one of the producer's targeted ranges (name>=version)?"""
    from specbridge.engines.spec import parse_version

    name, _, version = spec.partition("==")
    for t in entry["engines_targeted"]:
        tname, _, lo = t.partition(">=")
        if tname == name and parse_version(version) >= parse_version(lo):
            return True
    return False


def test_corpus_is_broad_and_sourced():
    """At least 12 drafters from 6 producers; every fixture names its sources and how exact each fact is."""
    assert len(CORPUS) >= 12
    assert len({e["producer"].split(" (")[0] for e in CORPUS}) >= 6
    for e in CORPUS:
        assert REQUIRED <= set(e), (e.get("id"), REQUIRED - set(e))
        assert e["source"] and set(e["exactness"]) >= {"config", "tensors"}, e["id"]
        assert e["target"]["source"] and e["target"]["config"].get("architectures"), e["id"]
        for spec, x in e["expected"].items():
            assert x["why"] and x["cite"] and "@" in x["cite"], (e["id"], spec)


@pytest.mark.parametrize("entry", CORPUS, ids=[e["id"] for e in CORPUS])
def test_corpus_drafter_matches_engine_source(entry):
    """Per engine version: ok/error codes as the engine's source says; the layout the producer wrote."""
    got = gen.predict(entry)
    for spec, x in entry["expected"].items():
        p = got[spec]
        assert (p["ok"], p["codes"]) == (x["ok"], x["codes"]), (spec, x["why"], p["messages"])
        if "says" in x:
            assert any(x["says"] in m for m in p["messages"]), (spec, x["says"], p["messages"])
        if _targeted(entry, spec) and not x["ok"]:
            # a failure on a version the producer targets must be a real incompatibility, with a fix
            assert x["why"], spec
    assert next(iter(got.values()))["layout"] == entry["layout"]


def test_corpus_no_false_error_where_the_producer_targets():
    """Where the producer says its drafter runs, check agrees, unless the engine's source shows a real problem
    (listed in the fixture with its cause)."""
    for e in CORPUS:
        got = gen.predict(e)
        for spec, x in e["expected"].items():
            if _targeted(e, spec) and x["ok"]:
                assert got[spec]["ok"], (e["id"], spec, got[spec]["messages"])


@pytest.mark.long  # renders every corpus entry on every era: the corpus tables, run by CI's long tier
def test_corpus_page_is_current():
    text = gen.render()
    page = ROOT / "docs" / "corpus.md"
    assert page.is_file() and page.read_text() == text, "docs/corpus.md is stale: run python scripts/gen_corpus_doc.py"
    assert "**≠**" not in text


# --- misreadings the corpus found, each pinned on a mutation of a real producer fixture --------------------


def _check(path, engine):
    from specbridge.rules.check import check

    [res] = check(open_view(path), engine, str(path))
    return res


def test_input_norm_exists_only_from_vllm_0_32(tmp_path):
    """vLLM added norm_before_fc (input_norm) and fc_norm in 0.32; the older hand-written loaders look every
    name up in params_dict, so input_norm.weight raises there (llama_eagle3.py@v0.14.0 load_weights)."""
    from conftest import SPEC_TRAIN, mutate

    fc_in = json.loads((SPEC_TRAIN / "config.json").read_text())["transformer_layer_config"]["hidden_size"] * 3
    d = mutate(
        SPEC_TRAIN,
        tmp_path / "nbf",
        config=lambda c: c.update(norm_before_fc=True),
        tensors=lambda t: {**t, "input_norm.weight": ("BF16", [fc_in], b"\0" * 2 * fc_in)},
    )
    old, new = _check(d, "vllm==0.14.0"), _check(d, "vllm==0.32.0")
    assert not any(p.name == "model.input_norm.weight" for p in old.report.params)
    assert "L004" in {f.code for f in old.findings if f.severity == "error"}
    assert new.ok and any(p.name == "model.input_norm.weight" and p.status != "missing" for p in new.report.params)


def test_tie_word_embeddings_judged_per_engine(tmp_path):
    """SGLang ties lm_head to the embedding when the flag is set (a reduced draft vocab then cannot work); vLLM's
    EAGLE-3 class never reads the flag and keeps its own draft_vocab_size head (llama_eagle3.py@v0.32.0)."""
    from conftest import SF_SGLANG, mutate

    d = mutate(SF_SGLANG, tmp_path / "tied", config=lambda c: c.update(tie_word_embeddings=True))
    sg, vl = _check(d, "sglang==0.5.23"), _check(d, "vllm==0.32.0")
    assert any(f.code == "E001" and f.severity == "error" for f in sg.findings)
    assert not any(f.code == "E001" and f.severity != "info" for f in vl.findings) and vl.ok


def test_torchspec_export_is_not_modelopt(tmp_path):
    """midlayer.* without t2d is ModelOpt's signature, unless the config carries TorchSpec's _torchspec_version
    (written by every TorchSpec export: lightseekorg/TorchSpec tools/convert_to_hf.py)."""
    from conftest import SF_HF, mutate

    from specbridge.checkpoint.reader import open_checkpoint
    from specbridge.layouts.canonical import describe

    def no_t2d(t):
        return {k: v for k, v in t.items() if k != "t2d"}

    torchspec = mutate(SF_HF, tmp_path / "ts", tensors=no_t2d, config=lambda c: c.update(_torchspec_version="0.1.0"))
    assert describe(open_checkpoint(torchspec)).layout == "sglang"
    assert describe(open_checkpoint(mutate(SF_HF, tmp_path / "mo", tensors=no_t2d))).layout == "trtllm"


def test_evidence_that_fits_two_producers_is_called_ambiguous(tmp_path):
    """midlayer.* with embed_tokens and no vocab map is what ModelOpt writes (no t2d) and what TorchSpec writes
    without --prune-vocab; without _torchspec_version nothing tells them apart: inspect and check say the layout is
    ambiguous and name both, and the verdict is the one either reading gives (the two load the same)."""
    import json

    from conftest import SF_HF, mutate, run_cli

    from specbridge.checkpoint.reader import open_checkpoint
    from specbridge.layouts.canonical import describe
    from specbridge.rules.check import check

    def no_vocab_map(t):
        return {k: v for k, v in t.items() if k not in ("t2d", "d2t")}

    bare = mutate(SF_HF, tmp_path / "bare", tensors=no_vocab_map)
    marked = mutate(SF_HF, tmp_path / "ts", tensors=no_vocab_map, config=lambda c: c.update(_torchspec_version="0.1.0"))
    both = mutate(marked, tmp_path / "both", config=lambda c: c["eagle_config"].update(next_layer_regular=True))
    d = describe(open_checkpoint(bare))
    assert (d.layout, d.layout_candidates) == ("trtllm", ["trtllm", "sglang"])
    assert describe(open_checkpoint(both)).layout_candidates == ["trtllm", "sglang"]  # both producers' marks
    assert describe(open_checkpoint(marked)).layout_candidates == ["sglang"]  # TorchSpec's mark settles it
    for clear in (SF_HF, mutate(SF_HF, tmp_path / "mo", tensors=lambda t: {k: v for k, v in t.items() if k != "t2d"})):
        assert len(describe(open_checkpoint(clear)).layout_candidates) == 1  # a vocab map: SpecForge, or ModelOpt's d2t
    [gpt_oss] = [e for e in CORPUS if e["id"] == "nvidia/gpt-oss-120b-Eagle3"]
    draft, _ = gen.build(gpt_oss, tmp_path / "gpt-oss")
    assert describe(open_checkpoint(draft)).layout_candidates == ["trtllm"]  # no embed_tokens: not TorchSpec's export

    def verdicts(path):
        return [
            (r.report.era.name, r.ok, sorted({f.code for f in r.findings if f.severity == "error"})) for r in check(open_view(path), "all")
        ]

    assert verdicts(bare) == verdicts(marked)  # read as trtllm or as sglang: the same answer on every era

    text = run_cli("inspect", bare).stdout
    assert "layout: trtllm (ambiguous: trtllm or sglang)" in text and "TorchSpec" in text and "ModelOpt" in text
    assert "layout trtllm (ambiguous: trtllm or sglang)" in run_cli("check", bare, "-e", "sglang==0.5.11").stdout
    for cmd in (["inspect", bare, "--json"], ["check", bare, "-e", "vllm", "--json"]):
        assert json.loads(run_cli(*cmd).stdout)["layout_candidates"] == ["trtllm", "sglang"]
    assert json.loads(run_cli("inspect", SF_HF, "--json").stdout)["layout_candidates"] == ["sglang"]


def test_G009_draft_kv_geometry_against_the_target():
    """A published Llama-3.1-8B drafter given 4 KV heads (the target has 8 × 128): vLLM before 0.11 needs one KV
    page size for every attention layer and raises NotImplementedError at start-up (kv_cache_utils.py
    get_kv_cache_config@v0.8.5/v0.10.2); 0.14 and 0.32 size the draft layer on its own."""
    import copy

    [base] = [e for e in CORPUS if e["id"] == "lmsys/sglang-EAGLE3-LLaMA3.1-Instruct-8B"]
    e = copy.deepcopy(base)
    e["config"]["num_key_value_heads"] = 4
    for n in ("midlayer.self_attn.k_proj.weight", "midlayer.self_attn.v_proj.weight"):
        e["tensors"][n][1][0] = 4 * 128
    e["expected"] = {s: {} for s in ("vllm==0.8.5", "vllm==0.10.2", "vllm==0.14.0", "vllm==0.32.0", "sglang==0.5.23")}
    got = gen.predict(e)
    for spec in ("vllm==0.8.5", "vllm==0.10.2"):
        assert got[spec]["codes"] == ["G009"] and "NotImplementedError" in got[spec]["messages"][0], got[spec]
    for spec in ("vllm==0.14.0", "vllm==0.32.0", "sglang==0.5.23"):
        assert got[spec]["ok"], got[spec]
    assert gen.predict(base)["vllm==0.8.5"]["ok"]  # equal geometry: nothing to say

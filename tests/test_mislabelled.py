"""A mislabelled drafter is answered as the engine answers it. Engines dispatch on the architecture name (SGLang's
registry by architectures[0], vLLM's after its method's rewrite), so `check` simulates the class the release builds
for that name and L017 reports the family the tensors are, that release's outcome and the fix (the other family's
architecture name and launch method). Before, these were refused as "the evidence fits dflash and eagle3 equally"
(exit 2) and the user never learnt what the engine does. The cases: tests/mislabel_fixtures.py."""

from __future__ import annotations

import json

import mislabel_fixtures as mf
import pytest
import zoo_fixtures as z
from conftest import SPEC_TRAIN, TINY_TARGET
from family_matrix import run_entry

from specbridge.rules.check import check
from specbridge.view import open_view

V32, S511 = "vllm==0.32.0", "sglang==0.5.11"


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    root = tmp_path_factory.mktemp("mislabelled")
    return {name: z.write(root / name, cfg, ts) for name, (cfg, ts) in mf.cases().items()}


def l017(path, engine):
    view = open_view(path)
    (res,) = check(view, engine, family=view.family)  # as `check` runs it: the family the verdict names
    hits = [f for f in res.findings if f.code == "L017"]
    assert len(hits) == 1 and hits[0].severity == "error", [f.code for f in res.findings]
    return res, hits[0]


# (case, engine, the class the release builds for the name, what the engine does, the fix's architecture and method)
ANSWERS = [
    (
        "dflash-as-eagle3",
        V32,
        "Eagle3LlamaForCausalLM",
        "There is no module or parameter named 'hidden_norm'",
        "'DFlashDraftModel'",
        '"method": "dflash"',
    ),
    (
        "dflash-as-eagle3",
        S511,
        "LlamaForCausalLMEagle3",
        "no attribute 'draft_vocab_size'",
        "'DFlashDraftModel'",
        "--speculative-algorithm DFLASH",
    ),
    (
        "eagle3-as-dflash",
        V32,
        "DFlashQwen3ForCausalLM",
        "must specify `dflash_config.mask_token_id`",
        "'Eagle3Qwen3ForCausalLM'",
        '"method": "eagle3"',
    ),
    (
        "eagle3-as-dflash",
        S511,
        "DFlashDraftModel",
        "size mismatch for fc.weight: checkpoint [64, 192], engine expects [64, 64]",
        "'LlamaForCausalLMEagle3'",
        "EAGLE3",
    ),
    (
        "eagle1-as-eagle3",
        V32,
        "Eagle3LlamaForCausalLM",
        "size mismatch for model.fc.weight: checkpoint [64, 128], engine expects [64, 192]",
        "'EagleLlamaForCausalLM'",
        '"method": "eagle"',
    ),
    (
        "eagle1-as-eagle3",
        S511,
        "LlamaForCausalLMEagle3",
        "no attribute 'draft_vocab_size'",
        "'LlamaForCausalLMEagle'",
        "--speculative-algorithm EAGLE",
    ),
]


@pytest.mark.parametrize(("case", "engine", "cls", "raises", "arch", "method"), ANSWERS)
def test_the_named_class_is_simulated_and_l017_says_what_the_tensors_are(made, case, engine, cls, raises, arch, method):
    res, hit = l017(made[case], engine)
    view = open_view(made[case])
    mis = view.verdict.mislabel
    assert view.verdict.family.name == mis.named and mis.shown != mis.named  # the named family's class, said as such
    assert res.report.cls.name == cls and not res.ok
    assert any(raises in e for e in res.report.errors), res.report.errors
    shown = {"dflash-as-eagle3": "DFlash", "eagle3-as-dflash": "EAGLE-3", "eagle1-as-eagle3": "EAGLE-1/2"}[case]
    assert f"the tensors are {shown} tensors" in hit.message and "the load raises: " in hit.message
    assert "this checkpoint: predicted from those rows, not run" in hit.message
    assert f"architectures [{arch}]" in hit.fix and method in hit.fix
    assert not [f for f in res.findings if f.fix and "specbridge convert" in f.fix]  # converting would not help


def test_how_known_follows_the_engine_rows(made):
    """run where the release's class was run (vLLM 0.32.0's EAGLE-3 era), read where its source was read (0.20.0),
    inferred for a release between them that was neither."""
    _, run = l017(made["eagle1-as-eagle3"], V32)
    _, read = l017(made["eagle1-as-eagle3"], "vllm==0.20.0")
    _, inferred = l017(made["eagle1-as-eagle3"], "vllm==0.20.3")
    assert "Eagle3LlamaForCausalLM: run;" in run.message and ": read;" in read.message and ": inferred;" in inferred.message


@pytest.mark.parametrize(("case", "k"), [("eagle3-fc-eagle1", 2), ("eagle3-fc-1x", 1)])
def test_an_eagle3_layout_with_a_narrower_fc_says_which_fc_it_is(made, case, k):
    """Not a mislabel of the name (the config and the layers agree on EAGLE-3), but an fc of another kind: the engine
    builds fc over 3 states and raises a size mismatch; vLLM sizes fc by the aux ids, so listing k of them is a fix
    there, while SGLang always builds three."""
    res, hit = l017(made[case], V32)
    assert f"reads {k}× the target's hidden size" in hit.message and "builds fc over 3" in hit.message
    assert f"checkpoint [64, {64 * k}], engine expects [64, 192]" in hit.message
    assert "list them in eagle_aux_hidden_state_layer_ids" in hit.fix
    assert ("EAGLE-1's fc over (embedding, feature)" in hit.message) == (k == 2) and ("with a bias" in hit.message) == (k == 2)
    _, sglang = l017(made[case], S511)
    assert "always builds fc over 3 states" in sglang.fix


def test_through_the_cli_check_answers_inspect_says_it_convert_and_eval_refuse(made, tmp_path):
    path = str(made["dflash-as-eagle3"])
    code, out, _ = run_entry(["check", path, "--engine", V32, "--json"])
    body = json.loads(out)
    assert code == 1 and body["family"]["name"] == "eagle3"
    assert body["family"]["mislabel"] == {
        "architecture": "LlamaForCausalLMEagle3",
        "named": "eagle3",
        "tensors_show": "dflash",
        "evidence": body["family"]["mislabel"]["evidence"],
    } and any("model-level hidden_norm" in e for e in body["family"]["mislabel"]["evidence"])
    assert "L017" in {f["code"] for f in body["findings"]}
    code, out, _ = run_entry(["inspect", path])
    assert code == 0 and "mislabelled: architectures[0] 'LlamaForCausalLMEagle3' names the EAGLE-3 family" in out
    for argv in (["convert", path, "--engine", V32, "-o", str(tmp_path / "o")], ["eval", path, "--target", str(TINY_TARGET)]):
        code, out, err = run_entry(argv)
        assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and "are DFlash tensors" in err, err
    assert not (tmp_path / "o").exists()


def test_two_config_witnesses_that_disagree_stay_refused(made, tmp_path):
    """An EAGLE-3 architecture with speculators_model_type dflash: two names, no engine dispatches one over the other
    here, so nothing is simulated as either (exit 2, naming both)."""
    cfg, ts = mf.cases()["dflash-as-eagle3"]
    path = z.write(tmp_path / "two-names", cfg | {"speculators_model_type": "dflash"}, ts)
    code, out, err = run_entry(["check", str(path), "--engine", V32])
    assert code == 2 and out == "" and "equally" in err and open_view(path).verdict.mislabel is None


def test_a_drafter_named_as_its_own_family_is_no_mislabel():
    assert open_view(SPEC_TRAIN).verdict.mislabel is None
    (res,) = check(open_view(SPEC_TRAIN), V32)
    assert "L017" not in {f.code for f in res.findings}


def test_a_whole_causal_lm_under_an_eagle3_name_is_answered_with_the_draft_model_fix(tmp_path):
    """A two-layer Llama with an EAGLE-3 architecture name: the engine builds its EAGLE-3 class over it and the load
    raises; the fix is the causal LM's own name, served as a draft model (method draft_model / STANDALONE)."""
    from family_matrix import plain_draft

    path = plain_draft(tmp_path / "lm")
    cfg = json.loads((path / "config.json").read_text()) | {"architectures": ["LlamaForCausalLMEagle3"]}
    (path / "config.json").write_text(json.dumps(cfg))
    _, vllm = l017(path, V32)
    _, sglang = l017(path, S511)
    assert "the tensors are plain causal LM tensors" in vllm.message and "the load raises" in vllm.message
    assert '"method": "draft_model"' in vllm.fix and "--speculative-algorithm STANDALONE" in sglang.fix

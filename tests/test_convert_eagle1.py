"""convert for EAGLE-1/2 drafters (the Llama class): each real layout change between the research layout and what an
engine's EAGLE-1 class reads (a `model.`-prefixed save, SGLang's architecture name, a bias SGLang builds and the drafter
lacks, a tied config SGLang raises on, a head vLLM raises on, layer 0's input norm neither builds) written,
byte-verified and checked before (the finding) and after (gone); what no conversion can fix (vLLM drops a trained
fc.bias) carried and said, by convert and by the check; EAGLE-1 ↔ EAGLE-3 refused; a drafter already in the layout
said to need nothing."""

from __future__ import annotations

import json

import eagle1_fixtures as e1
import numpy as np
import pytest
from conftest import raw_tensors, run_cli, tree_state
from test_convert_dflash import codes, convert

from specbridge.checkpoint.reader import open_checkpoint
from specbridge.engines.registry import family_rows

V32, SG = "vllm==0.32.0", "sglang==0.5.23"


def prefixed(**kw) -> dict:
    return {"model." + k: v for k, v in e1.tensors(**kw).items()}


def test_a_model_prefixed_save_is_renamed_for_vllm_and_the_lost_bias_is_said(tmp_path):
    """Both loaders prefix every name with model.: a prefixed save raises on vLLM. Converted, every name loads; the
    trained fc.bias is carried, and since vLLM builds fc without a bias the conversion says it stays lost, and so
    does the check (L013, exit 1): no layout makes vLLM apply it."""
    src = e1.write(tmp_path / "src", ts=prefixed())
    before = tree_state(src)
    rc, found = codes(src, V32)
    assert rc == 1 and "L004" in found
    r, obj = convert(src, "--engine", V32, "-o", tmp_path / "out")
    assert r.returncode == 1 and obj["from_layout"] == "eagle1 (model.-prefixed)" and obj["to_layout"] == "eagle1-vllm"
    assert len(obj["renamed"]) == 11 and not obj["dropped"] and not obj["config_changes"]
    assert any("fc.bias is carried" in w and "no layout makes the trained bias load" in w for w in obj["warnings"])
    assert [f["code"] for f in obj["check"]["findings"] if f["severity"] == "error"] == ["L013"]
    assert raw_tensors(tmp_path / "out") == {n.removeprefix("model."): v for n, v in raw_tensors(src).items()}
    assert tree_state(src) == before  # the original is kept
    # without the bias the same conversion checks clean
    nb = e1.write(tmp_path / "nb", ts=prefixed(bias=False))
    r, obj = convert(nb, "--engine", V32, "-o", tmp_path / "nb-out")
    assert r.returncode == 0 and obj["ok"] and obj["check"]["ok"], r.stdout + r.stderr


def test_the_research_layout_gets_sglangs_architecture_and_keeps_its_bias(tmp_path):
    """SGLang dispatches architectures[0] as written: LlamaForCausalLM builds the plain target class (the draft at random
    initialisation). Converted: LlamaForCausalLMEagle, the tensors unchanged (SGLang's fc has a bias: it loads)."""
    src = e1.write(tmp_path / "src")
    assert "L005" in codes(src, SG)[1]
    r, obj = convert(src, "--engine", SG, "-o", tmp_path / "out")
    assert r.returncode == 0 and obj["ok"] and obj["to_layout"] == "eagle1-sglang", r.stdout + r.stderr
    assert obj["config_changes"] == ["architectures ['LlamaForCausalLM'] → ['LlamaForCausalLMEagle']"]
    assert raw_tensors(tmp_path / "out") == raw_tensors(src) and not obj["warnings"]
    assert json.loads((tmp_path / "out" / "config.json").read_text())["architectures"] == ["LlamaForCausalLMEagle"]
    assert codes(tmp_path / "out", SG) == (0, {})
    # converted back for vLLM: its dispatch has no class for SGLang's name (it would prefix Eagle)
    assert "L005" in codes(tmp_path / "out", V32)[1]
    r, obj = convert(tmp_path / "out", "--engine", V32, "-o", tmp_path / "back")
    assert obj["config_changes"] == ["architectures ['LlamaForCausalLMEagle'] → ['EagleLlamaForCausalLM']"]
    assert "L005" not in codes(tmp_path / "back", V32)[1]


def test_a_bias_free_drafter_gets_zeros_for_the_bias_sglang_builds(tmp_path):
    """SGLang's fc is nn.Linear(2H, H) with a bias always: a drafter trained without one would run with the bias's
    random default initialisation (L002 warning). Converted, fc.bias holds zeros (what training computed) and the
    check is clean. For vLLM the same drafter needs nothing."""
    src = e1.write(tmp_path / "src", ts=e1.tensors(bias=False))
    warn = json.loads(run_cli("check", src, "--engine", SG, "--json").stdout)["findings"]
    assert any(f["code"] == "L002" and "fc.bias" in f["message"] for f in warn)
    r, obj = convert(src, "--engine", SG, "-o", tmp_path / "out")
    assert r.returncode == 0 and obj["ok"], r.stdout + r.stderr
    assert [a[0] for a in obj["added"]] == ["fc.bias"] and "zeros F32[64]" in obj["added"][0][1]
    bias = open_checkpoint(tmp_path / "out").tensors["fc.bias"]
    assert bias.dtype == "F32" and list(bias.shape) == [e1.H] and bias.read_bytes() == bytes(4 * e1.H)
    out = json.loads(run_cli("check", tmp_path / "out", "--engine", SG, "--json").stdout)
    assert out["ok"] and not [f for f in out["findings"] if f["severity"] != "info"]
    r, obj = convert(src, "--engine", V32, "-o", tmp_path / "v")
    assert r.returncode == 0 and obj["method"] == "unchanged" and not (tmp_path / "v").exists()
    assert any("nothing to change" in n for n in obj["notes"])


def test_tie_head_and_layer0_norm_per_engine(tmp_path):
    """tie_word_embeddings true makes SGLang raise (the head is the embedding module): written false. A shipped lm_head
    raises on vLLM (its class has no head): dropped there, carried for SGLang (which drops the name itself). Layer 0's
    input_layernorm is built by neither (EAGLE's cnets.py): dropped with a warning that says the drafter then runs
    without it."""
    ts = e1.tensors() | {"lm_head.weight": np.zeros((e1.V, e1.H), np.float32), "layers.0.input_layernorm.weight": np.ones(e1.H, np.float32)}
    src = e1.write(tmp_path / "src", e1.config(tie_word_embeddings=True), ts)
    r, obj = convert(src, "--engine", SG, "-o", tmp_path / "sg")
    assert r.returncode == 0 and obj["ok"], r.stdout + r.stderr
    assert [d[0] for d in obj["dropped"]] == ["layers.0.input_layernorm.weight"] and "lm_head.weight" in obj["unchanged"]
    assert json.loads((tmp_path / "sg" / "config.json").read_text())["tie_word_embeddings"] is False
    assert any("runs without the one it was trained with" in w for w in obj["warnings"])
    r, obj = convert(src, "--engine", V32, "-o", tmp_path / "v")
    assert sorted(d[0] for d in obj["dropped"]) == ["layers.0.input_layernorm.weight", "lm_head.weight"]
    assert "tie_word_embeddings" not in " ".join(obj["config_changes"])  # vLLM's class does not raise on it
    assert [f["code"] for f in obj["check"]["findings"] if f["severity"] == "error"] == ["L013"]  # only the bias


def test_to_layout_checks_every_modelled_release_and_in_place_keeps_the_original(tmp_path):
    """--to eagle1-sglang checks every modelled SGLang EAGLE-1 range; --in-place keeps a backup that restore puts back."""
    src = e1.write(tmp_path / "src")
    before = tree_state(src)
    r, obj = convert(src, "--to", "eagle1-sglang", "--in-place")
    assert r.returncode == 0 and obj["ok"] and obj["backup"], r.stdout + r.stderr
    ranges = [r for r in family_rows("sglang", "eagle") if "LlamaForCausalLMEagle" in r.classes]  # each checked once
    assert {c["engine"]["name"] for c in obj["checks"]} == {"sglang"} and len(obj["checks"]) == len(ranges) >= 2
    assert all(c["ok"] for c in obj["checks"])
    assert json.loads((src / "config.json").read_text())["architectures"] == ["LlamaForCausalLMEagle"]
    assert run_cli("restore", src).returncode == 0
    assert {k: v for k, v in tree_state(src).items() if "specbridge" not in k} == before


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("--to", "vllm"), "not converted into the 'vllm' layout"),
        (("--to", "dflash"), "not converted into the 'dflash' layout"),
        (("--embed", "drop", "--engine", V32), "--embed applies to EAGLE-3"),
        (("--engine", "vllm==0.8.4"), "0.8.5"),
    ],
)
def test_refusals(tmp_path, args, words):
    src = e1.write(tmp_path / "src")
    r = run_cli("convert", src, *args, "-o", tmp_path / "out")
    assert r.returncode == 2 and words in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not (tmp_path / "out").exists()


def test_unknown_tensors_and_other_classes_are_refused_not_guessed(tmp_path):
    src = e1.write(tmp_path / "x", ts=e1.tensors() | {"extra.weight": np.zeros((4, e1.H), np.float32)})
    r = run_cli("convert", src, "--engine", SG, "-o", tmp_path / "out")
    assert r.returncode == 1 and "not part of a Llama EAGLE-1 drafter" in r.stderr and not (tmp_path / "out").exists()
    l4 = e1.write(tmp_path / "l4", e1.config(architectures=["EagleLlama4ForCausalLM"]))
    r = run_cli("convert", l4, "--engine", V32, "-o", tmp_path / "out")
    assert r.returncode == 2 and "convert reads the Llama EAGLE-1/2 drafter" in r.stderr


def test_an_eagle3_drafter_is_not_converted_into_an_eagle1_layout(tmp_path):
    from conftest import SPEC_TRAIN

    r = run_cli("convert", SPEC_TRAIN, "--to", "eagle1-vllm", "-o", tmp_path / "out")
    assert r.returncode == 2 and "not converted into the EAGLE-1 layout" in r.stderr and not (tmp_path / "out").exists()


def test_check_points_eagle1_findings_at_convert(tmp_path):
    """The fix line of a load finding on a Llama EAGLE-1 class names the conversion that removes it."""
    src = e1.write(tmp_path / "src", ts=prefixed())
    out = json.loads(run_cli("check", src, "--engine", V32, "--json").stdout)
    fixes = {f["fix"] for f in out["findings"] if f["code"] == "L004"}
    assert fixes == {f"specbridge convert {src} --engine {V32} -o OUT"}


def test_check_offers_convert_only_for_a_drafter_convert_reads(tmp_path):
    """A Mistral-format EAGLE drafter (SGLang's MistralForCausalLMEagle names) gets no convert fix after its L005:
    convert refuses it (exit 2), so the fix names the architecture vLLM's Mistral class is reached by (its L005, the
    class simulated after it), else the tables."""
    names = {"eagle_linear.weight": (e1.H, 2 * e1.H), "layers.0.attention.wq.weight": (e1.NH * e1.HD, e1.H)}
    src = e1.write(
        tmp_path / "mistral",
        e1.config(architectures=["MistralForCausalLMEagle"], model_type="mistral"),
        ts={n: np.zeros(s, np.float32) for n, s in names.items()},
    )
    assert run_cli("convert", src, "--engine", SG, "-o", tmp_path / "out").returncode == 2
    out = json.loads(run_cli("check", src, "--engine", V32, "--json").stdout)
    fixes = [f["fix"] for f in out["findings"] if f["code"] in ("L004", "L005")]
    assert fixes and not any("specbridge convert" in f for f in fixes), fixes
    assert all("--tables" in f or '"architectures": ["MistralForCausalLM"]' in f for f in fixes), fixes

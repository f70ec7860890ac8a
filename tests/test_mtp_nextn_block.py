"""SGLang's NextN decoder block accounted parameter by parameter (engines/sglang/mtp.py `_block_params`): the layer
`model.decoder` is the target's own DeepseekV2DecoderLayer / Glm4MoeDecoderLayer, and SGLang's NextN load_weights
leaves any of its parameters no tensor reaches as allocated (the routed experts' FusedMoE w13_weight / w2_weight are
torch.empty) without a word. When the block was one group any tensor filled, a NextN layer without its routed experts
(GLM-5's served layers: 0% acceptance) or without its attention read OK; now each such parameter is named missing
(L002), release by release, and a whole layer still reads OK."""

from __future__ import annotations

import mtp_fixtures as mx
import pytest
from conftest import error_messages

from specbridge.cli.mtp_check import check_mtp, mtp_index

# a release of every NextN range (engines/sglang/mtp.py RANGES)
RELEASES = ("sglang==0.4.6", "sglang==0.4.8", "sglang==0.5.2", "sglang==0.5.9", "sglang==0.5.21", "sglang==0.5.23")
W13, W2 = "model.decoder.mlp.experts.w13_weight", "model.decoder.mlp.experts.w2_weight"


def _check(path, engine: str):
    results, _skipped, _head, _verdict, _view = check_mtp(mtp_index(path, False), path, [engine], None, None)
    [res] = results
    return res


@pytest.fixture(scope="module")
def targets(tmp_path_factory) -> dict:
    d = tmp_path_factory.mktemp("nextn-block")
    out = {}
    for fam, config in (("glm", mx.glm_config()), ("ds", mx.deepseek_config())):
        out[fam] = mx.write_target(d / fam, config)
        out[f"{fam}-no-experts"] = mx.write_target(d / f"{fam}-ne", config, mx.without(config, lambda k: ".mlp.experts." in k))
        out[f"{fam}-no-attention"] = mx.write_target(d / f"{fam}-na", config, mx.without(config, lambda k: ".self_attn." in k))
        out[f"{fam}-two-experts"] = mx.write_target(
            d / f"{fam}-2", config, mx.without(config, lambda k: ".mlp.experts.1." in k or ".mlp.experts.3.down_proj" in k)
        )
        out[f"{fam}-no-gate-proj"] = mx.write_target(d / f"{fam}-ng", config, mx.without(config, lambda k: k.endswith("gate_proj.weight")))
    return out


def _missing(res) -> set[str]:
    return set(res.report.missing)


@pytest.mark.parametrize("fam", ["glm", "ds"])
@pytest.mark.parametrize("release", RELEASES)
def test_a_whole_layer_has_nothing_missing(targets, fam, release):
    if fam == "glm" and release in ("sglang==0.4.6", "sglang==0.4.8"):
        pytest.skip("no Glm4MoeForCausalLMNextN before 0.4.9")
    res = _check(targets[fam], release)
    assert res.ok and not _missing(res), (error_messages(res), _missing(res))
    params = {p.name: p for p in res.report.params}
    # the block is accounted one parameter at a time, the routed experts one slice per expert
    assert params[W13].status == params[W2].status == "loaded"
    assert params[W13].shape == (mx.E, 2 * mx.MI, mx.H) and params[W2].shape == (mx.E, mx.H, mx.MI)
    assert len(params[W13].filled_by) == 2 * mx.E and len(params[W2].filled_by) == mx.E
    assert "model.decoder.*" not in params  # no catch-all group for an unquantized target: every name is a parameter


@pytest.mark.parametrize("fam", ["glm", "ds"])
@pytest.mark.parametrize("release", RELEASES)
def test_a_layer_without_its_routed_experts_names_them(targets, fam, release):
    """Before: OK, 0 missing (the block's group was filled by the attention). Now both fused expert parameters are
    missing, by name, and L002 says every routed expert is filled by nothing; the rest of the block loaded."""
    if fam == "glm" and release in ("sglang==0.4.6", "sglang==0.4.8"):
        pytest.skip("no Glm4MoeForCausalLMNextN before 0.4.9")
    res = _check(targets[f"{fam}-no-experts"], release)
    assert _missing(res) == {W13, W2}
    assert not res.ok and not res.report.errors  # SGLang starts: nothing raises, the layer serves torch.empty experts
    l002 = error_messages(res)["L002"]
    assert any(f"{W13}: all {mx.E} routed experts are filled by nothing" in m for m in l002), l002
    assert any(f"{W2}: all {mx.E} routed experts are filled by nothing" in m for m in l002), l002


def test_some_missing_experts_are_named_by_id(targets):
    res = _check(targets["glm-two-experts"], "sglang==0.5.23")
    params = {p.name: p for p in res.report.params}
    assert params[W13].status == "partial" and sorted(params[W13].missing_shards) == ["1.0", "1.1"]
    assert params[W2].status == "partial" and sorted(params[W2].missing_shards) == ["1", "3"]
    l002 = error_messages(res)["L002"]
    assert any(f"{W13}: expert 1 of {mx.E} is filled by nothing" in m for m in l002), l002
    assert any(f"{W2}: experts 1, 3 of {mx.E} are filled by nothing" in m for m in l002), l002


@pytest.mark.parametrize(
    ("fam", "attention"),
    [
        (
            "glm",
            {"model.decoder.self_attn.qkv_proj.weight", "model.decoder.self_attn.qkv_proj.bias", "model.decoder.self_attn.o_proj.weight"},
        ),
        (
            "ds",
            {
                "model.decoder.self_attn.fused_qkv_a_proj_with_mqa.weight",
                "model.decoder.self_attn.q_a_layernorm.weight",
                "model.decoder.self_attn.q_b_proj.weight",
                "model.decoder.self_attn.kv_a_layernorm.weight",
                "model.decoder.self_attn.kv_b_proj.weight",
                "model.decoder.self_attn.o_proj.weight",
            },
        ),
    ],
)
def test_a_layer_without_its_attention_names_every_attention_parameter(targets, fam, attention):
    res = _check(targets[f"{fam}-no-attention"], "sglang==0.5.23")
    assert _missing(res) == attention
    assert not res.ok and not res.report.errors
    l002 = " ".join(error_messages(res)["L002"])
    assert f"{len(attention)} decoder parameter(s)" in l002, l002


@pytest.mark.parametrize("fam", ["glm", "ds"])
def test_half_of_each_mlp_missing_is_named_by_shard(targets, fam):
    """Every gate_proj left out: the routed experts' w13_weight lacks each expert's gate half (shard "{id}.0"); the
    shared experts (a group: fused into the routed experts' tensor or not, by GPU and flags) are still reached by
    their up/down tensors."""
    res = _check(targets[f"{fam}-no-gate-proj"], "sglang==0.5.23")
    params = {p.name: p for p in res.report.params}
    assert params[W13].status == "partial" and sorted(params[W13].missing_shards) == [f"{e}.0" for e in range(mx.E)]
    assert params[W2].status == "loaded"


def test_a_quantized_target_keeps_its_scales_in_the_block(tmp_path):
    """An FP8 target's scales are no parameter the rows name one by one: the block's catch-all takes them (loaded,
    not dropped), and the linears' shapes are not checked against the config (the target's own packing)."""
    config = mx.deepseek_config(quantization_config={"quant_method": "fp8", "weight_block_size": [128, 128]})
    tensors = mx.target_tensors(config)
    n = config["num_hidden_layers"]
    tensors[f"model.layers.{n}.self_attn.o_proj.weight_scale_inv"] = mx.np.ones((1, 1), mx.np.float32)
    res = _check(mx.write_target(tmp_path / "fp8", config, tensors), "sglang==0.5.23")
    fates = {t.name: t for t in res.report.tensors}
    scale = fates[f"model.layers.{n}.self_attn.o_proj.weight_scale_inv"]
    assert scale.status == "loaded" and scale.engine_name == "model.decoder.self_attn.o_proj.weight_scale_inv"
    assert not _missing(res), _missing(res)


@pytest.mark.parametrize("release", RELEASES)
def test_half_of_the_fused_qkv_a_leaves_all_of_it_at_init(tmp_path, release):
    """DeepSeek's fused_qkv_a_proj_with_mqa is written only once q_a_proj and kv_a_proj_with_mqa were both read: with
    kv_a absent, SGLang leaves the whole parameter at init (recorded on six releases: test_conformance_sglang_nextn's
    deepseek-no-kv-a) and q_a_proj, read, is never written. Not "partial": no row of it is filled."""
    config = mx.deepseek_config()
    path = mx.write_target(tmp_path / "t", config, mx.without(config, lambda k: ".kv_a_proj_with_mqa." in k))
    res = _check(path, release)
    fused = "model.decoder.self_attn.fused_qkv_a_proj_with_mqa.weight"
    assert {p.name: p.status for p in res.report.params}[fused] == "missing"
    n = config["num_hidden_layers"]
    q_a = next(t for t in res.report.tensors if t.name == f"model.layers.{n}.self_attn.q_a_proj.weight")
    assert q_a.status == "dropped" and "waits for kv_a" in q_a.reason
    [l002] = [m for m in error_messages(res)["L002"] if fused in m]
    assert f"model.layers.{n}.self_attn.q_a_proj.weight" in l002 and "waits for kv_a" in l002

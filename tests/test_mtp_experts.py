"""An MTP layer's routed experts accounted parameter by parameter, as vLLM's FusedMoE fills them: every expert's
gate/up fill its slice of `mtp_block.mlp.experts.routed_experts.w13_weight`, its down its slice of `w2_weight`
(FusedMoE.make_expert_params_mapping in deepseek_mtp.py / glm4_moe_mtp.py). A checkpoint whose MTP layer lacks its
experts, or some of them, used to read OK (the decoder block was one group any tensor filled); vLLM leaves those slices
as allocated (torch.empty) and starts from 0.21 (FusedMoE has a quantization method, so DefaultModelLoader's check skips
it), and refuses until 0.20 when no expert reached the parameter at all."""

from __future__ import annotations

import mtp_fixtures as mx
import numpy as np
import pytest
from conftest import error_messages

from specbridge.cli.mtp_check import check_mtp, mtp_index


def _check(path, engine: str):
    results, _skipped, _head, _verdict, _view = check_mtp(mtp_index(path, False), path, engine, None, None)
    return {f"{r.report.engine}=={r.report.version}": r for r in results}


@pytest.fixture(scope="module")
def targets(tmp_path_factory) -> dict:
    d = tmp_path_factory.mktemp("mtp-experts")
    glm, ds = mx.glm_config(), mx.deepseek_config()
    wrong = mx.target_tensors(glm)
    wrong["model.layers.2.mlp.experts.0.down_proj.weight"] = np.zeros((mx.H, 2 * mx.MI), np.float32)  # another width
    return {
        "glm": mx.write_target(d / "glm", glm),
        "glm-no-experts": mx.write_target(d / "glm-ne", glm, mx.without(glm, lambda k: ".mlp.experts." in k)),
        "ds-no-experts": mx.write_target(d / "ds-ne", ds, mx.without(ds, lambda k: ".mlp.experts." in k)),
        "glm-two-missing": mx.write_target(
            d / "glm-2", glm, mx.without(glm, lambda k: ".mlp.experts.1." in k or ".mlp.experts.3.down_proj" in k)
        ),
        "glm-wrong-expert": mx.write_target(d / "glm-w", glm, wrong),
    }


def test_a_whole_layer_fills_every_expert_slice(targets):
    res = _check(targets["glm"], "vllm==0.32.0")["vllm==0.32.0"]
    assert res.ok, error_messages(res)
    params = {p.name: p for p in res.report.params}
    w13, w2 = (params[f"model.layers.2.mtp_block.mlp.experts.routed_experts.{w}_weight"] for w in ("w13", "w2"))
    assert w13.shape == (mx.E, 2 * mx.MI, mx.H) and w2.shape == (mx.E, mx.H, mx.MI)  # FusedMoE's own shapes
    assert w13.status == w2.status == "loaded"
    assert len(w13.filled_by) == 2 * mx.E and len(w2.filled_by) == mx.E  # one tensor per expert and projection


@pytest.mark.parametrize("target", ["glm-no-experts", "ds-no-experts"])
def test_a_layer_without_its_experts_is_an_error_on_every_release(targets, target):
    """Before: OK, 0 missing on every release. Now L002 names both fused parameters on every release; until 0.20 the
    loader's own check also raises (L006), from 0.21 vLLM starts with the slices unfilled."""
    by_release = _check(targets[target], "vllm")
    assert set(by_release) >= {"vllm==0.20.0", "vllm==0.32.0"}
    for release, res in by_release.items():
        l002 = error_messages(res).get("L002", [])
        assert any("experts.w13_weight: all 4 routed experts" in m for m in l002), (release, l002)
        assert any("experts.w2_weight: all 4 routed experts" in m for m in l002), (release, l002)
    refused = [e for e in by_release["vllm==0.20.0"].report.errors if "not initialized" in e]
    assert refused and "experts.w13_weight" in refused[0]
    assert not any("not initialized" in e for e in by_release["vllm==0.32.0"].report.errors)  # it starts


def test_missing_experts_are_named_by_id(targets):
    res = _check(targets["glm-two-missing"], "vllm==0.32.0")["vllm==0.32.0"]
    l002 = error_messages(res)["L002"]
    assert any("experts.w13_weight: expert 1 of 4 is filled by nothing" in m for m in l002), l002
    assert any("experts.w2_weight: experts 1, 3 of 4 are filled by nothing" in m for m in l002), l002
    [w2] = [p for p in res.report.params if p.name.endswith("experts.w2_weight")]
    assert w2.status == "partial" and sorted(w2.missing_shards) == ["1", "3"]


def test_an_expert_of_another_width_is_a_size_mismatch(targets):
    res = _check(targets["glm-wrong-expert"], "vllm==0.32.0")["vllm==0.32.0"]
    l003 = error_messages(res)["L003"]
    assert any("experts.w2_weight[0]" in m and f"[{mx.H}, {2 * mx.MI}]" in m for m in l003), l003

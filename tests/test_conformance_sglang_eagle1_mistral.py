"""EAGLE-1 conformance on SGLang's Mistral drafter classes (sglang/srt/models/mistral_eagle.py MistralForCausalLMEagle,
GQA Llama layers; sglang/srt/models/mistral_large_3_eagle.py MistralLarge3ForCausalLMEagle, DeepSeek MLA layers; both
fc [H, 2H] without bias over (embedding, the target's hidden state), loading Mistral's native names through a
`remapping` of regexes): every installed SGLang release that has them × tiny drafters in the native layout
(eagle_linear, layers.N.attention.wq, feed_forward.w1, attention_norm) and their mutations (HF names with and without
the model. prefix, the research layout, embeddings, head, tied, unknown names, q-LoRA), compared with `check` as
tests/test_conformance_sglang_eagle1_qwen2.py compares the Qwen2 class. Skipped per release when the environment is
absent; the counts are FamilyRange.runs rows in src/specbridge/engines/sglang/eagle1.py."""

from __future__ import annotations

import eagle1_fixtures as e1
import numpy as np
import pytest
import test_conformance_sglang as base
from test_conformance_sglang import _env_ready

from specbridge.engines import sglang as sg
from specbridge.engines.spec import in_release_range

SELF = "tests/test_conformance_sglang_eagle1_mistral.py"
H, NH, NKV, HD, I, V = e1.H, e1.NH, e1.NKV, e1.HD, e1.I, e1.V
MISTRAL = e1.config(architectures=["MistralForCausalLMEagle"], model_type="mistral")
# a DeepSeek-V3-shaped config (MLA: kv_lora 32, nope/rope/v heads 16); one dense layer (first_k_dense_replace 1).
# SGLang's CPU rope needs rope_scaling for DeepSeek (get_rope_cpu asserts it), and its sparse-layer test reads
# moe_layer_freq
LARGE3 = {
    "architectures": ["MistralLarge3ForCausalLMEagle"],
    "model_type": "deepseek_v3",
    "hidden_size": H,
    "num_hidden_layers": 1,
    "num_attention_heads": NH,
    "num_key_value_heads": NH,
    "vocab_size": V,
    "intermediate_size": I,
    "moe_intermediate_size": 32,
    "n_routed_experts": 4,
    "n_shared_experts": 1,
    "num_experts_per_tok": 2,
    "first_k_dense_replace": 1,
    "moe_layer_freq": 1,
    "n_group": 1,
    "topk_group": 1,
    "topk_method": "noaux_tc",
    "scoring_func": "sigmoid",
    "norm_topk_prob": True,
    "routed_scaling_factor": 1.0,
    "kv_lora_rank": 32,
    "q_lora_rank": None,
    "qk_nope_head_dim": 16,
    "qk_rope_head_dim": 16,
    "v_head_dim": 16,
    "rms_norm_eps": 1e-6,
    "max_position_embeddings": 256,
    "rope_theta": 10000.0,
    "rope_scaling": {
        "type": "yarn",
        "factor": 4.0,
        "original_max_position_embeddings": 64,
        "beta_fast": 32,
        "beta_slow": 1,
        "mscale": 1.0,
        "mscale_all_dim": 1.0,
    },
    "hidden_act": "silu",
    "torch_dtype": "float32",
}
Q_LORA = 32


def _w(rng, *shape):
    return (rng.standard_normal(shape) * 0.02).astype(np.float32)


def mistral_tensors(n_layers: int = 1, layer0_norm: bool = True) -> dict[str, np.ndarray]:
    """Mistral's native EAGLE layout (mistral_eagle.py's remapping, read backwards)."""
    rng = np.random.default_rng(0)
    t = {"eagle_linear.weight": _w(rng, H, 2 * H), "norm.weight": np.ones(H, np.float32)}
    for i in range(n_layers):
        p = f"layers.{i}."
        t |= {
            p + "attention.wq.weight": _w(rng, NH * HD, H),
            p + "attention.wk.weight": _w(rng, NKV * HD, H),
            p + "attention.wv.weight": _w(rng, NKV * HD, H),
            p + "attention.wo.weight": _w(rng, H, NH * HD),
            p + "ffn_norm.weight": np.ones(H, np.float32),
            p + "feed_forward.w1.weight": _w(rng, I, H),
            p + "feed_forward.w2.weight": _w(rng, H, I),
            p + "feed_forward.w3.weight": _w(rng, I, H),
        }
        if i > 0 or layer0_norm:
            t[p + "attention_norm.weight"] = np.ones(H, np.float32)
    return t


def large3_tensors(q_lora: bool = False) -> dict[str, np.ndarray]:
    """Mistral Large 3's native names for one dense MLA layer (mistral_large_3.py's remapping, read backwards)."""
    rng = np.random.default_rng(0)
    nope, rope, vhd, kv = LARGE3["qk_nope_head_dim"], LARGE3["qk_rope_head_dim"], LARGE3["v_head_dim"], LARGE3["kv_lora_rank"]
    p = "layers.0."
    t = {
        "eagle_linear.weight": _w(rng, H, 2 * H),
        "norm.weight": np.ones(H, np.float32),
        p + "attention.wkv_a_with_mqa.weight": _w(rng, kv + rope, H),
        p + "attention.kv_a_norm.weight": np.ones(kv, np.float32),
        p + "attention.wkv_b.weight": _w(rng, NH * (nope + vhd), kv),
        p + "attention.wo.weight": _w(rng, H, NH * vhd),
        p + "attention_norm.weight": np.ones(H, np.float32),
        p + "ffn_norm.weight": np.ones(H, np.float32),
        p + "feed_forward.w1.weight": _w(rng, I, H),
        p + "feed_forward.w2.weight": _w(rng, H, I),
        p + "feed_forward.w3.weight": _w(rng, I, H),
    }
    if q_lora:
        t |= {
            p + "attention.wq_a.weight": _w(rng, Q_LORA, H),
            p + "attention.q_a_norm.weight": np.ones(Q_LORA, np.float32),
            p + "attention.wq_b.weight": _w(rng, NH * (nope + rope), Q_LORA),
        }
    else:
        t[p + "attention.wq.weight"] = _w(rng, NH * (nope + rope), H)
    return t


def _hf_prefixed() -> dict[str, np.ndarray]:
    """The research layout with an input_layernorm on layer 0, under model. (HF names, as a converter writes them)."""
    t = e1.tensors()
    t["layers.0.input_layernorm.weight"] = np.ones(H, np.float32)
    return {"model." + k: v for k, v in t.items()}


EMBEDS = {"tok_embeddings.weight": np.zeros((V, H), np.float32), "output.weight": np.zeros((V, H), np.float32)}
M, L3 = "MistralForCausalLMEagle", "MistralLarge3ForCausalLMEagle"
# name -> (tensors, config, the class SGLang builds)
CASES: dict[str, tuple] = {
    "mistral-native": (mistral_tensors, MISTRAL, M),
    "mistral-native-two-layers": (lambda: mistral_tensors(n_layers=2), {**MISTRAL, "num_hidden_layers": 2}, M),
    "mistral-no-layer0-norm": (lambda: mistral_tensors(layer0_norm=False), MISTRAL, M),
    "mistral-native-embeddings": (lambda: mistral_tensors() | EMBEDS, MISTRAL, M),
    "mistral-hf-model-prefixed": (_hf_prefixed, MISTRAL, M),
    "mistral-research-layout": (e1.tensors, MISTRAL, M),
    "mistral-lm-head": (lambda: mistral_tensors() | {"lm_head.weight": np.zeros((V, H), np.float32)}, MISTRAL, M),
    "mistral-tied": (
        lambda: mistral_tensors() | {"lm_head.weight": np.zeros((V, H), np.float32)},
        {**MISTRAL, "tie_word_embeddings": True},
        M,
    ),
    "mistral-unknown": (lambda: mistral_tensors() | {"extra.weight": np.zeros((4, H), np.float32)}, MISTRAL, M),
    "large3-native": (large3_tensors, LARGE3, L3),
    "large3-native-embeddings": (lambda: large3_tensors() | EMBEDS, LARGE3, L3),
    "large3-hf-model-prefixed": (lambda: {"model." + k: v for k, v in large3_tensors().items()}, LARGE3, L3),
    "large3-q-lora": (lambda: large3_tensors(q_lora=True), {**LARGE3, "q_lora_rank": Q_LORA}, L3),
}
# with q_lora_rank, deepseek_v2.py load_weights caches q_a_proj and kv_a_proj_with_mqa and loads their concatenation
# into fused_qkv_a_proj_with_mqa in one call (no shard id); check's Stack rows name the shard each tensor fills. The
# fused parameter is filled in both; only the recorded shard differs
_CONCAT = "check names shards q_a / kv_a; SGLang loads the concatenated tensor without a shard id (same parameter filled)"
KNOWN: dict[tuple[str, str], str] = {(v, "large3-q-lora"): _CONCAT for v in ("0.5.11", "0.5.16", "0.5.19", "0.5.20", "0.5.23")}


def _releases() -> list[str]:
    """The EAGLE-1 releases of the ranges that have these classes (per era, as base.family_releases)."""
    rows = [r for r in sg.FAMILY_RANGES if r.family == "eagle" and M in r.classes]
    assert rows
    return [v for v in base.family_releases("eagle") if any(in_release_range(v, r.first, r.last) for r in rows)]


RELEASES = _releases()


@pytest.fixture(scope="session")
def mistral_cases(tmp_path_factory):
    root = tmp_path_factory.mktemp("sglang-eagle1-mistral")
    return {name: e1.write(root / name, cfg, ts()) for name, (ts, cfg, _cls) in CASES.items()}


_RESULTS: dict[str, dict] = {}  # this matrix's harness output per release


@pytest.mark.engine
@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("version", RELEASES)
def test_check_matches_sglang_mistral_eagle1_loader(version, case, mistral_cases, request):
    why = _env_ready(version)
    if why:
        pytest.skip(why)
    if (version, case) in KNOWN:
        request.applymarker(pytest.mark.xfail(strict=True, reason=KNOWN[(version, case)]))
    r = base.real(version, mistral_cases, cache=_RESULTS)[case]
    diff = base.family_case(version, mistral_cases[case], r, "eagle", CASES[case][2])
    assert not diff, f"sglang {version}, {case}:\n  " + "\n  ".join(diff)


def test_mistral_eagle1_run_rows_cover_the_matrix():
    base.family_runs_agree("eagle", SELF, len(CASES), KNOWN)

